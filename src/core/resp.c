/* resp.c - response head + body formatting.
 *
 * The head is appended piece by piece (memcpy and a decimal writer), with
 * snprintf's contract: it fits only with a byte to spare, which gets a NUL.
 * One snprintf per head was 40 % of primed's user time per /healthz
 * (perf, docs/benchmarks.md "Plaintext").
 */
#include "resp.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

const char *resp_reason(int status)
{
    switch (status) {
#define X_CASE(code, text) \
    case code:             \
        return text;
        HTTP_STATUSES(X_CASE)
#undef X_CASE
    default:
        return "Unknown";
    }
}

/* An append-only view of buf: ok goes false, for good, at the first piece that
 * does not fit with one byte to spare. */
struct out {
    char *buf;
    size_t cap, len;
    bool ok;
};

static void put(struct out *o, const char *s, size_t n)
{
    if (!o->ok || n >= o->cap - o->len) {
        o->ok = false;
        return;
    }
    memcpy(o->buf + o->len, s, n);
    o->len += n;
}

#define PUT_LIT(o, lit) put((o), (lit), sizeof(lit) - 1)

static void put_str(struct out *o, const char *s)
{
    put(o, s, strlen(s));
}

static void put_uint(struct out *o, unsigned long long v)
{
    char d[24];
    size_t i = sizeof(d);
    do
        d[--i] = (char)('0' + v % 10);
    while (v /= 10);
    put(o, d + i, sizeof(d) - i);
}

size_t resp_format(char *buf, size_t cap, const struct resp *r, const char *date, bool with_body)
{
    if (cap == 0)
        return 0;
    struct out o = {.buf = buf, .cap = cap, .len = 0, .ok = true};
    PUT_LIT(&o, "HTTP/1.1 ");
    if (r->status < 0) {
        PUT_LIT(&o, "-");
        put_uint(&o, (unsigned long long)-(long long)r->status);
    } else {
        put_uint(&o, (unsigned long long)r->status);
    }
    PUT_LIT(&o, " ");
    put_str(&o, resp_reason(r->status));
    PUT_LIT(&o, "\r\nServer: primed\r\nDate: ");
    put(&o, date, strnlen(date, RESP_DATE_LEN));
    PUT_LIT(&o, "\r\n");
    if (r->ctype) {
        PUT_LIT(&o, "Content-Type: ");
        put_str(&o, r->ctype);
        PUT_LIT(&o, "\r\n");
    }
    if (r->allow) {
        PUT_LIT(&o, "Allow: ");
        put_str(&o, r->allow);
        PUT_LIT(&o, "\r\n");
    }
    if (r->extra)
        put_str(&o, r->extra);
    PUT_LIT(&o, "Content-Length: ");
    put_uint(&o, r->body_len);
    if (r->keep_alive)
        PUT_LIT(&o, "\r\nConnection: keep-alive\r\n\r\n");
    else
        PUT_LIT(&o, "\r\nConnection: close\r\n\r\n");
    if (!o.ok)
        return 0;
    size_t len = o.len;
    buf[len] = '\0'; /* as snprintf did: there is a byte to spare */
    if (with_body && !r->head && r->body_len) {
        if (r->body_len > cap - len)
            return 0;
        memcpy(buf + len, r->body, r->body_len);
        len += r->body_len;
    }
    return len;
}

void resp_date(char *out, long t)
{
    time_t tt = (time_t)t;
    struct tm tm;
    gmtime_r(&tt, &tm);
    strftime(out, RESP_DATE_LEN + 1, "%a, %d %b %Y %H:%M:%S GMT", &tm);
}
