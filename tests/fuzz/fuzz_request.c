/* fuzz_request.c - libFuzzer target over primed's request path, short of the socket.
 *
 * Bytes in -> parse (http_feed, with the worker's read-buffer discipline: append
 * to a fixed buffer of max_header bytes, compact, 431 when it fills mid-head)
 * -> route (route_match, called by the parser) -> response bytes out
 * (resp_format), delivered in arbitrary splits chosen by the first input bytes.
 *
 * conn_feed() and conn_compact() below mirror conn_process() and conn_rearm()
 * in src/worker.c, including their uint32_t arithmetic: keep them in step.
 * The read buffer is malloc'd at exactly max_header bytes, so any read past it
 * (a stale URL offset, a bad compaction) is an ASan report here, where in the
 * server it would silently read the next slot's write buffer.
 *
 * Invariants asserted (abort() with a message, so libFuzzer saves the input):
 * - compaction never keeps more than was parsed (keep <= rpos <= rlen);
 * - each message http_feed reports consumed bytes (one request, one answer);
 * - a connection never stalls with a full buffer it can neither parse nor refuse;
 * - every response fits RESP_MAX (the worker's "cannot happen"), is a well-formed
 *   HTTP/1.1 head of known header names, printable ASCII only (nothing from the
 *   request is reflected), and its Content-Length equals the body it carries;
 * - routing yields a known status, route and bits in range;
 * - trace parsing yields either "no trace" or a valid id (32 lower-case hex,
 *   not all zero; parent "" or 16 lower-case hex); the traceparent primed sends
 *   back is a valid version-00 value.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http.h"
#include "prime.h"
#include "resp.h"
#include "route.h"
#include "trace.h"

#include "conn.h" /* RESP_MAX */

#define FAIL(...)                                      \
    do {                                               \
        fprintf(stderr, "fuzz_request: " __VA_ARGS__); \
        fputc('\n', stderr);                           \
        abort();                                       \
    } while (0)

struct fconn {
    struct http http;
    struct http_limits lim;
    char *rbuf;          /* exactly max_header bytes */
    uint32_t max_header;
    uint32_t rlen, rpos, msg_start;
    bool closing, stop;
    const char *revision; /* K-Revision header line or NULL */
    unsigned responses;
    uint64_t example_n;
    char date[RESP_DATE_LEN + 1];
};

static bool is_lhex(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

static bool lhex_run(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!is_lhex(s[i]))
            return false;
    return true;
}

static bool zero_run(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != '0')
            return false;
    return true;
}

static void check_trace(const struct trace *t, bool ok, const char *what)
{
    if (ok != t->valid)
        FAIL("%s: return value %d but valid=%d", what, ok, t->valid);
    if (!ok)
        return;
    if (strlen(t->trace_id) != 32 || !lhex_run(t->trace_id, 32) || zero_run(t->trace_id, 32))
        FAIL("%s: invalid trace id '%.33s'", what, t->trace_id);
    size_t pl = strnlen(t->parent_id, sizeof(t->parent_id));
    if (pl == sizeof(t->parent_id) || (pl != 0 && pl != 16) || !lhex_run(t->parent_id, pl))
        FAIL("%s: invalid parent id", what);
}

/* The checks respond() in worker.c relies on, then the traceparent it sends. */
static void trace_for(const struct http_req *rq, struct trace *tr, uint64_t span)
{
    memset(tr, 0, sizeof(*tr));
    if (rq->traceparent_len > sizeof(rq->traceparent) + 1 || rq->b3_len > sizeof(rq->b3) + 1 ||
        rq->xb3_trace_len > sizeof(rq->xb3_trace) + 1 || rq->xb3_span_len > sizeof(rq->xb3_span) + 1 ||
        rq->xb3_sampled_len > sizeof(rq->xb3_sampled) + 1 || rq->xb3_flags_len > sizeof(rq->xb3_flags) + 1)
        FAIL("trace header length over its cap + 1");
    if (rq->traceparent_len && rq->traceparent_len <= sizeof(rq->traceparent))
        check_trace(tr, trace_parse_traceparent(rq->traceparent, rq->traceparent_len, tr), "traceparent");
    if (!tr->valid && rq->b3_len && rq->b3_len <= sizeof(rq->b3))
        check_trace(tr, trace_parse_b3(rq->b3, rq->b3_len, tr), "b3");
    if (!tr->valid && rq->xb3_trace_len && rq->xb3_trace_len <= sizeof(rq->xb3_trace) &&
        rq->xb3_span_len <= sizeof(rq->xb3_span) && rq->xb3_sampled_len <= sizeof(rq->xb3_sampled) &&
        rq->xb3_flags_len <= sizeof(rq->xb3_flags))
        check_trace(tr,
                    trace_parse_b3_multi(rq->xb3_trace, rq->xb3_trace_len, rq->xb3_span, rq->xb3_span_len,
                                         rq->xb3_sampled, rq->xb3_sampled_len, rq->xb3_flags, rq->xb3_flags_len, tr),
                    "x-b3");
    if (tr->valid) {
        char tp[56];
        int n = trace_format_traceparent(tr, span, tp);
        if (n != 55 || strlen(tp) != 55 || memcmp(tp, "00-", 3) || tp[35] != '-' || tp[52] != '-' ||
            !lhex_run(tp + 3, 32) || !lhex_run(tp + 36, 16) || !lhex_run(tp + 53, 2) || zero_run(tp + 36, 16))
            FAIL("formatted traceparent invalid: '%s'", tp);
    }
}

static const char *const known_headers[] = {
    "Server", "Date", "Content-Type", "Allow", "traceparent", "Content-Length", "Connection", "K-Revision",
};

/* Parses one response primed would send and checks it; head_only: HEAD. */
static void check_response(const char *b, size_t n, const struct resp *r)
{
    if (n < 17 || memcmp(b, "HTTP/1.1 ", 9) || b[12] != ' ')
        FAIL("bad status line: '%.*s'", (int)(n < 40 ? n : 40), b);
    int code = (b[9] - '0') * 100 + (b[10] - '0') * 10 + (b[11] - '0');
    if (code != r->status)
        FAIL("status %d, wanted %d", code, r->status);
    const char *end = NULL;
    for (size_t i = 0; i + 3 < n; i++)
        if (!memcmp(b + i, "\r\n\r\n", 4)) {
            end = b + i;
            break;
        }
    if (!end)
        FAIL("response head not terminated");
    size_t head_len = (size_t)(end - b) + 4;
    /* header lines: printable ASCII, known names, one Content-Length */
    long clen = -1;
    const char *line = memchr(b, '\n', head_len) + 1;
    while (line < end + 2) {
        const char *eol = memchr(line, '\r', (size_t)(end + 2 - line));
        if (!eol || eol[1] != '\n')
            FAIL("header line without CRLF");
        for (const char *p = line; p < eol; p++)
            if (*p < 0x20 || *p > 0x7e)
                FAIL("byte 0x%02x in a response header", (unsigned char)*p);
        const char *colon = memchr(line, ':', (size_t)(eol - line));
        if (!colon || colon[1] != ' ')
            FAIL("header line without ': '");
        bool known = false;
        for (size_t k = 0; k < sizeof(known_headers) / sizeof(known_headers[0]); k++)
            if (strlen(known_headers[k]) == (size_t)(colon - line) &&
                !memcmp(line, known_headers[k], (size_t)(colon - line)))
                known = true;
        if (!known)
            FAIL("unknown response header '%.*s'", (int)(colon - line), line);
        if (colon - line == 14 && !memcmp(line, "Content-Length", 14)) {
            if (clen >= 0)
                FAIL("two Content-Length headers");
            clen = strtol(colon + 2, NULL, 10);
        }
        line = eol + 2;
    }
    if (clen < 0 || (size_t)clen != r->body_len)
        FAIL("Content-Length %ld, body is %zu bytes", clen, r->body_len);
    size_t want = head_len + (r->head ? 0 : r->body_len);
    if (n != want)
        FAIL("response is %zu bytes, head %zu + body %zu says %zu", n, head_len, r->head ? 0 : r->body_len, want);
    for (size_t i = head_len; i < n; i++)
        if ((b[i] < 0x20 || b[i] > 0x7e) && b[i] != '\n')
            FAIL("byte 0x%02x in a response body", (unsigned char)b[i]);
}

/* respond() + respond_text()/respond_example() of worker.c, checked. */
static void respond(struct fconn *c, int status, const char *body, bool ka)
{
    const struct http_req *rq = &c->http.req;
    struct trace tr;
    char extra[256];
    size_t elen = 0;
    extra[0] = '\0';
    trace_for(rq, &tr, 0x1234u * (c->responses + 1));
    if (tr.valid) {
        char tp[56];
        trace_format_traceparent(&tr, 1, tp);
        elen = (size_t)snprintf(extra, sizeof(extra), "traceparent: %s\r\n", tp);
    }
    if (c->revision)
        snprintf(extra + elen, sizeof(extra) - elen, "%s", c->revision);
    char hello[32];
    if (!body) {
        snprintf(hello, sizeof(hello), "Hello_%llu", (unsigned long long)++c->example_n);
        body = hello;
    }
    struct resp r = {
        .status = status,
        .ctype = status == 200 && body == hello ? "text/plain" : "text/plain; charset=utf-8",
        .body = body,
        .body_len = strlen(body),
        .allow = status == 405 ? route_allow((enum route_id)rq->route.id) : NULL,
        .extra = extra[0] ? extra : NULL,
        .keep_alive = ka,
        .head = rq->head,
    };
    if (status == 405 && !r.allow)
        FAIL("405 for route %u without an Allow value", rq->route.id);
    /* the worker parses only while RESP_MAX bytes of its buffer are free */
    char wbuf[RESP_MAX];
    size_t n = resp_format(wbuf, sizeof(wbuf), &r, c->date, true);
    if (n == 0)
        FAIL("response for status %d does not fit RESP_MAX", status);
    check_response(wbuf, n, &r);
    c->responses++;
    if (!ka)
        c->closing = true;
}

static void handle_request(struct fconn *c)
{
    const struct http_req *rq = &c->http.req;
    const struct route_result *rt = &rq->route;
    bool ka = rq->keep_alive && !c->http.upgrade;
    if (rq->early && ka)
        FAIL("an early answer (Expect: 100-continue) must close the connection");
    if (rt->id >= ROUTE__COUNT)
        FAIL("route id %u", rt->id);
    switch (rt->status) {
    case 0:
        if (rt->id == ROUTE_OTHER)
            FAIL("route 'other' served");
        if (rt->bits < PRIME_BITS_MIN || rt->bits > PRIME_BITS_MAX)
            FAIL("bits %u out of range", rt->bits);
        break;
    case 400:
        if (!rt->reason || rt->id != ROUTE_EXAMPLE)
            FAIL("400 without a reason or off /example");
        break;
    case 404:
        if (rt->id != ROUTE_OTHER)
            FAIL("404 for a known route");
        break;
    case 405:
        if (rt->id == ROUTE_OTHER || rq->method == HTTP_GET || rq->method == HTTP_HEAD)
            FAIL("405 for GET/HEAD or an unknown route");
        break;
    default:
        FAIL("route status %u", rt->status);
    }
    if (rt->status == 400) {
        char body[128];
        snprintf(body, sizeof(body), "%s\n", rt->reason);
        respond(c, 400, body, ka);
    } else if (rt->status) {
        respond(c, rt->status, rt->status == 404 ? "not found\n" : "method not allowed\n", ka);
    } else if (rt->id == ROUTE_EXAMPLE) {
        respond(c, 200, NULL, ka);
    } else {
        respond(c, 200, rt->id == ROUTE_HEALTHZ ? "ok\n" : "ready\n", ka);
    }
}

static void refuse(struct fconn *c, int status)
{
    static const int allowed[] = {400, 413, 414, 417, 431};
    bool ok = false;
    for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++)
        ok |= status == allowed[i];
    if (!ok)
        FAIL("refusal with status %d", status);
    memset(&c->http.req, 0, offsetof(struct http_req, traceparent_len));
    c->http.req.route.id = ROUTE_OTHER;
    respond(c, status, "malformed request\n", false);
}

/* conn_process(): parse and answer what is buffered. */
static void conn_feed(struct fconn *c)
{
    while (!c->closing && c->rpos < c->rlen) {
        size_t pos = c->rpos;
        enum http_status st = http_feed(&c->http, c->rbuf, &pos, c->rlen);
        if (pos < c->rpos || pos > c->rlen)
            FAIL("http_feed moved pos from %u to %zu (len %u)", c->rpos, pos, c->rlen);
        if (st == HTTP_MSG && pos == c->rpos) {
            /* no byte consumed, yet "a message": the previous one again
             * (llhttp's HPE_PAUSED_UPGRADE after an Upgrade/CONNECT request
             * followed by more bytes). The server answers it twice. */
            FAIL("http_feed returned a message without consuming a byte (pos %zu, upgrade=%d): "
                 "the previous request is answered twice",
                 pos, c->http.upgrade);
        }
        c->rpos = (uint32_t)pos;
        if (st == HTTP_MSG) {
            c->msg_start = c->rpos;
            handle_request(c);
            continue;
        }
        if (st == HTTP_ERROR)
            refuse(c, c->http.err_status);
        break;
    }
}

/* conn_rearm(): compact before the next receive; false when the connection ends. */
static bool conn_compact(struct fconn *c)
{
    if (c->closing)
        return false;
    if (c->msg_start > c->rpos || c->rpos > c->rlen)
        FAIL("offsets out of order before compaction: msg_start=%u rpos=%u rlen=%u", c->msg_start, c->rpos, c->rlen);
    /* the worker's own compaction (src/http.c), not a copy of it */
    http_compact(&c->http, c->rbuf, &c->rlen, &c->rpos, &c->msg_start);
    if (c->msg_start > c->rpos || c->rpos > c->rlen)
        FAIL("compaction left msg_start=%u rpos=%u rlen=%u (in_message=%d head_done=%d)",
             c->msg_start, c->rpos, c->rlen, c->http.in_message, c->http.head_done);
    if (c->rlen == c->max_header) {
        if (c->http.in_message && !c->http.head_done && c->rpos == c->rlen) {
            refuse(c, 431);
            return false;
        }
        FAIL("read buffer full (%u) with nothing to answer: the connection stalls", c->rlen);
    }
    return true;
}

static const uint32_t max_headers[] = {8192, 1024, 1500, 4096};
static const unsigned max_urls[] = {2048, 16, 100, 1000};
static const unsigned long max_bodies[] = {1UL << 20, 0, 10, 1000};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* byte 0: limits; byte 1: number of split sizes; then the sizes (1..256) */
    if (size < 2)
        return 0;
    uint8_t cfg = data[0];
    size_t nsplit = data[1] % 16;
    if (size < 2 + nsplit)
        return 0;
    const uint8_t *splits = data + 2;
    const char *in = (const char *)data + 2 + nsplit;
    size_t in_len = size - 2 - nsplit;

    /* the trace parsers on raw bytes too, not only through headers */
    struct trace t;
    size_t tl = in_len < 80 ? in_len : 80;
    check_trace(&t, trace_parse_traceparent(in, tl, &t), "raw traceparent");
    check_trace(&t, trace_parse_b3(in, tl, &t), "raw b3");

    static struct fconn c;
    memset(&c, 0, sizeof(c));
    c.max_header = max_headers[cfg & 3];
    c.lim.max_url = max_urls[(cfg >> 2) & 3];
    c.lim.max_body = max_bodies[(cfg >> 4) & 3];
    c.lim.default_bits = PRIME_BITS_DEFAULT;
    c.revision = (cfg & 0x40) ? "K-Revision: primed-00001\r\n" : NULL;
    resp_date(c.date, 784111777);
    c.rbuf = malloc(c.max_header);
    if (!c.rbuf)
        return 0;
    http_init(&c.http, &c.lim);

    size_t ip = 0, k = 0;
    while (ip < in_len) {
        size_t want = nsplit ? (size_t)splits[k++ % nsplit] + 1 : in_len;
        size_t space = c.max_header - c.rlen;
        size_t n = want < space ? want : space;
        if (n > in_len - ip)
            n = in_len - ip;
        memcpy(c.rbuf + c.rlen, in + ip, n);
        c.rlen += (uint32_t)n;
        ip += n;
        conn_feed(&c);
        if (!conn_compact(&c))
            break;
    }
    free(c.rbuf);
    return 0;
}
