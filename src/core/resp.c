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

#include "clock.h"
#include "strout.h"

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

size_t resp_format(char *buf, size_t cap, const struct resp *r, const char *date, bool with_body)
{
    if (cap == 0)
        return 0;
    struct strout o = strout_init(buf, cap);
    STROUT_LIT(&o, "HTTP/1.1 ");
    if (r->status < 0) {
        STROUT_LIT(&o, "-");
        strout_uint(&o, (unsigned long long)-(long long)r->status);
    } else {
        strout_uint(&o, (unsigned long long)r->status);
    }
    STROUT_LIT(&o, " ");
    strout_str(&o, resp_reason(r->status));
    STROUT_LIT(&o, "\r\nServer: primed\r\nDate: ");
    strout_put(&o, date, strnlen(date, RESP_DATE_LEN));
    STROUT_LIT(&o, "\r\n");
    if (r->ctype) {
        STROUT_LIT(&o, "Content-Type: ");
        strout_str(&o, r->ctype);
        STROUT_LIT(&o, "\r\n");
    }
    if (r->allow) {
        STROUT_LIT(&o, "Allow: ");
        strout_str(&o, r->allow);
        STROUT_LIT(&o, "\r\n");
    }
    if (r->extra)
        strout_str(&o, r->extra);
    STROUT_LIT(&o, "Content-Length: ");
    strout_uint(&o, r->body_len);
    if (r->keep_alive)
        STROUT_LIT(&o, "\r\nConnection: keep-alive\r\n\r\n");
    else
        STROUT_LIT(&o, "\r\nConnection: close\r\n\r\n");
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
    static const char day[] = "SunMonTueWedThuFriSat", mon[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
    struct clock_utc u = clock_utc_of(t);
    int year = u.year < 0 ? 0 : u.year > 9999 ? 9999 : (int)u.year; /* four digits, as the format has */
    snprintf(out, RESP_DATE_LEN + 1, "%.3s, %02d %.3s %04d %02d:%02d:%02d GMT", day + 3 * u.wday, u.mday,
             mon + 3 * (u.mon - 1), year, u.hour, u.min, u.sec);
}
