/* test_http.c - the llhttp glue: splits at every byte, pipelining, limits,
 * and each bad-input shape from a table. Pure: no sockets. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "http.h"

/* The owner's hook: the parser hands it each head with its target; the test
 * keeps the last target (as the app would route it) and counts heads. */
static char last_url[128];
static int heads;
/* When take_body is set, the owner reads the bodies: they land in got. */
static bool take_body;
static char got[256];
static size_t got_len;

static bool on_head(void *ctx, const struct http_req *rq, const char *url, size_t len)
{
    snprintf(last_url, sizeof(last_url), "%.*s", (int)len, url);
    heads++;
    got_len = 0;
    return take_body;
}

static int on_body(void *ctx, const char *at, size_t len)
{
    if (got_len + len > sizeof(got))
        return -1;
    memcpy(got + got_len, at, len);
    got_len += len;
    return 0;
}

/* The headers this test's owner keeps (an app gives its own list: the core
 * knows none): the trace headers' shapes, and one name of the longest length. */
enum { K_TP, K_B3, K_ID, K_SPAN, K_SAMPLED, K_LONG, K_N };
static struct http_keep keep = {.n = K_N,
                                .h = {{"traceparent", 64},
                                      {"b3", 72},
                                      {"x-b3-traceid", 32},
                                      {"x-b3-spanid", 32},
                                      {"x-b3-sampled", 8},
                                      {"x-sixteen-chars1", 8}}};
static const struct http_limits lim = {
    .max_url = 64, .max_body = 100, .max_header = 512, .on_head = on_head, .on_body = on_body, .keep = &keep};

static void lay_out(void)
{
    cr_assert_eq(http_keep_init(&keep), 0);
}

/* Feeds `in` in chunks of `chunk` bytes the way the worker does (appending to
 * one buffer, parsing from where it stopped), counting completed requests.
 * Returns the number of requests, or -status on refusal. */
static int feed_all(const char *in, size_t len, size_t chunk, struct http_req *last)
{
    static char buf[4096];
    static char kept[512]; /* lent as conn.c lends it with a buffer pair */
    struct http h;
    lay_out();
    http_init(&h, &lim);
    http_lend(&h, kept);
    size_t have = 0, pos = 0;
    int n = 0;
    while (have < len || pos < have) {
        size_t add = len - have < chunk ? len - have : chunk;
        memcpy(buf + have, in + have, add);
        have += add;
        for (;;) {
            enum http_status st = http_feed(&h, buf, &pos, have);
            if (st == HTTP_MSG) {
                n++;
                if (last)
                    *last = h.req;
                continue;
            }
            if (st == HTTP_ERROR)
                return -(int)h.err_status;
            break;
        }
        if (add == 0)
            break;
    }
    return n;
}

Test(http, simple_get_hands_its_target_over)
{
    const char *r = "GET /example?bits=128 HTTP/1.1\r\nHost: x\r\n\r\n";
    struct http_req q = {0};
    cr_assert_eq(feed_all(r, strlen(r), 4096, &q), 1);
    cr_assert_str_eq(last_url, "/example?bits=128");
    cr_assert(q.keep_alive);
    cr_assert_not(q.head);
}

Test(http, split_at_every_byte_boundary)
{
    const char *r = "GET /healthz HTTP/1.1\r\nHost: example\r\nX-Long-Header: aaaaaaaaaaaa\r\n\r\n"
                    "HEAD /example HTTP/1.1\r\nHost: x\r\n\r\n";
    for (size_t chunk = 1; chunk <= strlen(r); chunk++) {
        struct http_req q = {0};
        cr_assert_eq(feed_all(r, strlen(r), chunk, &q), 2, "chunk %zu", chunk);
        cr_assert_str_eq(last_url, "/example", "chunk %zu", chunk);
        cr_assert(q.head, "chunk %zu", chunk);
    }
}

Test(http, pauses_at_message_boundary)
{
    const char *r = "GET /healthz HTTP/1.1\r\nHost: h\r\n\r\nGET /readyz HTTP/1.1\r\nHost: h\r\n\r\n";
    struct http h;
    http_init(&h, &lim);
    size_t pos = 0;
    cr_assert_eq(http_feed(&h, r, &pos, strlen(r)), HTTP_MSG);
    cr_assert_eq(pos, strlen("GET /healthz HTTP/1.1\r\nHost: h\r\n\r\n"));
    cr_assert_str_eq(last_url, "/healthz");
    cr_assert_eq(http_feed(&h, r, &pos, strlen(r)), HTTP_MSG);
    cr_assert_str_eq(last_url, "/readyz");
    cr_assert_eq(pos, strlen(r));
    cr_assert_eq(http_feed(&h, r, &pos, strlen(r)), HTTP_MORE);
}

Test(http, pipelined_batch_of_50)
{
    char buf[4096];
    size_t len = 0;
    for (int i = 0; i < 50; i++)
        len += (size_t)snprintf(buf + len, sizeof(buf) - len, "GET /example?bits=64 HTTP/1.1\r\nHost: h\r\n\r\n");
    heads = 0;
    cr_assert_eq(feed_all(buf, len, 4096, NULL), 50);
    cr_assert_eq(feed_all(buf, len, 7, NULL), 50);
    cr_assert_eq(heads, 100, "one head per request");
}

Test(http, body_is_read_and_dropped)
{
    const char *r =
        "POST /healthz HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhelloGET /readyz HTTP/1.1\r\nHost: h\r\n\r\n";
    struct http_req q;
    cr_assert_eq(feed_all(r, strlen(r), 3, &q), 2);
    cr_assert_str_eq(last_url, "/readyz");
}

Test(http, chunked_body_is_read_and_dropped)
{
    const char *r = "POST /healthz HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"
                    "GET /readyz HTTP/1.1\r\nHost: h\r\n\r\n";
    cr_assert_eq(feed_all(r, strlen(r), 2, NULL), 2);
}

Test(http, keep_alive_semantics)
{
    struct http_req q;
    const char *a = "GET /healthz HTTP/1.0\r\n\r\n";
    cr_assert_eq(feed_all(a, strlen(a), 100, &q), 1);
    cr_assert_not(q.keep_alive);
    const char *b = "GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\n";
    cr_assert_eq(feed_all(b, strlen(b), 100, &q), 1);
    cr_assert(q.keep_alive);
    const char *c = "GET /healthz HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n";
    cr_assert_eq(feed_all(c, strlen(c), 100, &q), 1);
    cr_assert_not(q.keep_alive);
}

Test(http, kept_headers_are_captured_case_insensitively)
{
    const char *r =
        "GET /healthz HTTP/1.1\r\nHost: h\r\nTRACEPARENT: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\r\n"
        "x-b3-traceid: 463ac35c9f6413ad\r\n\r\n";
    struct http_req q;
    size_t len;
    cr_assert_eq(feed_all(r, strlen(r), 5, &q), 1);
    cr_assert_eq(q.kept_len[K_TP], 55);
    cr_assert(memcmp(http_kept(&q, &keep, K_TP, &len), "00-4bf92f", 9) == 0);
    cr_assert_eq(len, 55);
    cr_assert_eq(q.kept_len[K_B3], 0, "X-B3-TraceId must not land in the b3 buffer");
    cr_assert_null(http_kept(&q, &keep, K_B3, &len), "absent");
    cr_assert_eq(q.kept_len[K_ID], 16);
}

/* A header name one longer than the longest kept name, with that name as its
 * prefix, is not that header; a name of exactly the longest length is. */
Test(http, a_longer_name_is_another_header)
{
    const char *r = "GET /a HTTP/1.1\r\nHost: h\r\nx-sixteen-chars12: no\r\n\r\n";
    struct http_req q;
    cr_assert_eq(feed_all(r, strlen(r), 4096, &q), 1);
    cr_assert_eq(q.kept_len[K_LONG], 0);
    r = "GET /a HTTP/1.1\r\nHost: h\r\nX-Sixteen-Chars1: yes\r\n\r\n";
    cr_assert_eq(feed_all(r, strlen(r), 2, &q), 1);
    cr_assert_eq(q.kept_len[K_LONG], 3);
}

/* The owner's list is checked: names lower-case, 1..HTTP_KEEP_NAME_MAX long,
 * capacities in range, at most HTTP_KEEP_MAX; offsets laid end to end. */
Test(http, keep_lists_are_checked_and_laid_out)
{
    struct http_keep k = {.n = 2, .h = {{"a", 3}, {"bb", 5}}};
    cr_assert_eq(http_keep_init(&k), 0);
    cr_assert_eq(k.off[0], 0);
    cr_assert_eq(k.off[1], 3);
    cr_assert_eq(k.size, 8);
    struct http_keep bad[] = {
        {.n = 1, .h = {{"Traceparent", 8}}},
        {.n = 1, .h = {{"", 8}}},
        {.n = 1, .h = {{NULL, 8}}},
        {.n = 1, .h = {{"x-seventeen-chars", 8}}},
        {.n = 1, .h = {{"a", 0}}},
        {.n = 1, .h = {{"a", 255}}},
        {.n = HTTP_KEEP_MAX + 1},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        cr_assert_eq(http_keep_init(&bad[i]), -EINVAL, "case %zu", i);
}

/* Each request of a keep-alive connection has its own kept headers: the
 * first's values neither carry over to a second that has none nor make a
 * second's own value overlong. */
Test(http, kept_headers_belong_to_their_own_request)
{
    const char *tp = "traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\r\n";
    char r[512];
    snprintf(r, sizeof(r), "GET /a HTTP/1.1\r\nHost: h\r\n%sb3: 463ac35c9f6413ad-e457b5a2e4d86bd1-1\r\n\r\n"
                           "GET /b HTTP/1.1\r\nHost: h\r\n\r\n", tp);
    struct http_req q;
    for (size_t chunk = 1; chunk <= strlen(r); chunk *= 3) {
        cr_assert_eq(feed_all(r, strlen(r), chunk, &q), 2);
        cr_assert_eq(q.kept_len[K_TP], 0, "chunk %zu: the first request's traceparent carried over", chunk);
        cr_assert_eq(q.kept_len[K_B3], 0, "chunk %zu: the first request's b3 carried over", chunk);
    }
    snprintf(r, sizeof(r), "GET /a HTTP/1.1\r\nHost: h\r\n%s\r\nGET /b HTTP/1.1\r\nHost: h\r\n%s\r\n", tp, tp);
    cr_assert_eq(feed_all(r, strlen(r), 4096, &q), 2);
    cr_assert_eq(q.kept_len[K_TP], 55, "the second traceparent was appended to the first");
}

/* Without storage lent the values are not kept (no length without its
 * bytes); lending clears the lengths kept. */
Test(http, kept_values_need_lent_storage)
{
    const char *r = "GET /a HTTP/1.1\r\nHost: h\r\nb3: 463ac35c9f6413ad-e457b5a2e4d86bd1-1\r\n\r\n";
    struct http h;
    lay_out();
    http_init(&h, &lim);
    size_t pos = 0, len;
    cr_assert_eq(http_feed(&h, r, &pos, strlen(r)), HTTP_MSG);
    cr_assert_eq(h.req.kept_len[K_B3], 0);
    char kept[512];
    http_lend(&h, kept);
    pos = 0;
    cr_assert_eq(http_feed(&h, r, &pos, strlen(r)), HTTP_MSG);
    cr_assert_eq(h.req.kept_len[K_B3], 35);
    http_lend(&h, NULL);
    cr_assert_eq(h.req.kept_len[K_B3], 0);
    cr_assert_null(h.req.kept);
    cr_assert_null(http_kept(&h.req, &keep, K_B3, &len));
}

Test(http, kept_headers_get_their_own_buffers)
{
    /* a 16-hex X-B3-TraceId beside a single b3 header: both kept apart */
    const char *r =
        "GET /healthz HTTP/1.1\r\nHost: h\r\nX-B3-TraceId: 463ac35c9f6413ad\r\nX-B3-SpanId: e457b5a2e4d86bd1\r\n"
        "X-B3-Sampled: 0\r\nb3: 80f198ee56343ba864fe8b2a57d3eff7-e457b5a2e4d86bd1-1-05e3ac9a4f6e3b90\r\n\r\n";
    struct http_req q;
    size_t len;
    cr_assert_eq(feed_all(r, strlen(r), 3, &q), 1);
    cr_assert_eq(q.kept_len[K_B3], 68);
    cr_assert(memcmp(http_kept(&q, &keep, K_B3, &len), "80f198ee", 8) == 0);
    cr_assert_eq(q.kept_len[K_ID], 16);
    cr_assert_eq(q.kept_len[K_SPAN], 16);
    cr_assert_eq(q.kept_len[K_SAMPLED], 1);
    cr_assert_eq(http_kept(&q, &keep, K_SAMPLED, &len)[0], '0');
    /* an overlong value is marked (cap + 1), never truncated */
    const char *o = "GET /healthz HTTP/1.1\r\nHost: h\r\nX-B3-TraceId: 463ac35c9f6413ad463ac35c9f6413ad00\r\n\r\n";
    cr_assert_eq(feed_all(o, strlen(o), 4096, &q), 1);
    cr_assert_eq(q.kept_len[K_ID], 32 + 1);
    cr_assert_null(http_kept(&q, &keep, K_ID, &len), "overlong: not handed out");
}

/* Every bare CR and every bare LF where RFC 9112 wants CRLF, and obs-fold:
 * 400 (BAD_FRAMING or llhttp's own refusal), whatever the receive splits. */
Test(http, refuses_bare_cr_and_bare_lf)
{
    static const char *const cases[] = {
        /* CVE-2023-30589's shape: a bare CR ends a header line and hides a TE */
        "POST /healthz HTTP/1.1\r\nHost: a\r\nX: \rxTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /readyz "
        "HTTP/1.1\r\nHost: a\r\n\r\n",
        "GET /healthz HTTP/1.1\r\nHost: a\r\n\rZ",
        "GET /healthz HTTP/1.1\r\nHost: a\r\n\n",                  /* bare LF as the empty line */
        "GET /healthz HTTP/1.1\nHost: a\r\n\r\n",                  /* bare LF after the request line */
        "GET /healthz HTTP/1.1\r\nHost: a\n\r\n",                  /* bare LF after a field */
        "GET /healthz HTTP/1.1\rHost: a\r\n\r\n",                  /* bare CR after the request line */
        "GET /healthz HTTP/1.1\r\nHost: a\rX: b\r\n\r\n",          /* bare CR inside the head */
        "GET /healthz HTTP/1.1\r\nHost: a\r\nX: a\r\n b\r\n\r\n",  /* obs-fold */
        "GET /healthz HTTP/1.1\r\nHost: a\r\nX: a\r\n\tb\r\n\r\n", /* obs-fold with a tab */
        "GET /healthz HTTP/1.1\r\n Host: a\r\n\r\n",               /* whitespace before the first field */
        "\nGET /healthz HTTP/1.1\r\nHost: a\r\n\r\n",              /* a bare LF as the leading empty line */
        "\r\rGET /healthz HTTP/1.1\r\nHost: a\r\n\r\n",            /* a bare CR before the request line */
        "POST /healthz HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n1\rx\r\n0\r\n\r\n", /* chunk size line */
        "POST /healthz HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n1\nx\r\n0\r\n\r\n", /* chunk size line, LF */
        "POST /healthz HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\rX0\r\n\r\n", /* after chunk data */
        "POST /healthz HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\n0\r\n\r\n", /* after chunk data, LF */
        "POST /healthz HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n\n", /* bare LF ends the trailers */
        "POST /healthz HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nT: t\n\r\n", /* in a trailer */
        "POST /healthz HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nT: t\r\n u\r\n\r\n", /* obs-fold in a trailer */
        "POST /healthz HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nT: t\r\n\rX", /* bare CR ends the trailers */
        "GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n\nGET /readyz HTTP/1.1\r\nHost: a\r\n\r\n", /* bare LF between messages */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        size_t len = strlen(cases[i]);
        for (size_t chunk = 1; chunk <= len; chunk++) {
            int r = feed_all(cases[i], len, chunk, NULL); /* the last answers one first */
            cr_assert_eq(r, -400, "case %zu (chunk %zu): got %d", i, chunk, r);
        }
    }
}

/* What stays lenient: empty lines (CRLF) before a request line, trailers,
 * whitespace around field values, obs-text in values. */
Test(http, tolerates_what_rfc_9112_allows)
{
    static const struct {
        const char *req;
        int msgs;
    } cases[] = {
        {"\r\n\r\nGET /healthz HTTP/1.1\r\nHost: a\r\n\r\n", 1},
        {"GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n\r\nGET /readyz HTTP/1.1\r\nHost: a\r\n\r\n", 2},
        {"GET /healthz HTTP/1.1\r\nHost:  a \t\r\nX:\tb\r\n\r\n", 1},
        {"GET /healthz HTTP/1.1\r\nHost: a\r\nX: \xff\x80\r\n\r\n", 1},
        {"POST /healthz HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n1;ext=1\r\nx\r\n0\r\nT: t\r\nU: "
         "u\r\n\r\n"
         "GET /readyz HTTP/1.1\r\nHost: a\r\n\r\n",
         2},
        {"GET /healthz HTTP/1.0\r\n\r\n", 1}, /* HTTP/1.0 needs no Host */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        size_t len = strlen(cases[i].req);
        for (size_t chunk = 1; chunk <= len; chunk++)
            cr_assert_eq(feed_all(cases[i].req, len, chunk, NULL), cases[i].msgs, "case %zu (chunk %zu)", i, chunk);
    }
}

Test(http, host_is_required_once_in_http_1_1)
{
    const char *none = "GET /healthz HTTP/1.1\r\n\r\n";
    const char *two = "GET /healthz HTTP/1.1\r\nHost: a\r\nHOST: b\r\n\r\n";
    const char *two10 = "GET /healthz HTTP/1.0\r\nHost: a\r\nHost: b\r\n\r\n";
    /* empty only where the target URI has no authority (RFC 9112 3.2): an
     * http URI always has one (RFC 9110 4.2.1) */
    const char *empty = "GET /healthz HTTP/1.1\r\nHost:\r\n\r\n";
    struct http h;
    size_t pos = 0;
    http_init(&h, &lim);
    cr_assert_eq(http_feed(&h, none, &pos, strlen(none)), HTTP_ERROR);
    cr_assert_eq(h.err_status, 400);
    cr_assert_eq(h.bad, BAD_HOST);
    cr_assert_eq(feed_all(two, strlen(two), 4096, NULL), -400);
    cr_assert_eq(feed_all(two10, strlen(two10), 4096, NULL), -400);
    cr_assert_eq(feed_all(empty, strlen(empty), 4096, NULL), -400);
}

Test(http, expect_100_continue_answers_at_the_head)
{
    const char *r = "POST /example HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nExpect: 100-Continue\r\n\r\n";
    struct http h;
    size_t pos = 0;
    http_init(&h, &lim);
    cr_assert_eq(http_feed(&h, r, &pos, strlen(r)), HTTP_MSG, "the head alone is enough to answer");
    cr_assert(h.req.early);
    cr_assert_not(h.req.keep_alive);
    cr_assert_str_eq(last_url, "/example", "the head was handed over before the answer");
    cr_assert_eq(pos, strlen(r));
    /* no body: the expectation is moot and the request an ordinary one */
    const char *nobody = "GET /healthz HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\n\r\n";
    struct http_req q;
    cr_assert_eq(feed_all(nobody, strlen(nobody), 4096, &q), 1);
    cr_assert_not(q.early);
    cr_assert(q.keep_alive);
    const char *other = "POST /example HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nExpect: 200-ok\r\n\r\nhello";
    cr_assert_eq(feed_all(other, strlen(other), 4096, NULL), -417);
    const char *twice = "GET /healthz HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nExpect: 100-continue\r\n\r\n";
    cr_assert_eq(feed_all(twice, strlen(twice), 4096, NULL), -417);
}

struct bad_case {
    const char *name;
    const char *req;
    int status;
};

Test(http, refuses_bad_input)
{
    static const struct bad_case cases[] = {
        {"garbage", "HELLO\r\n\r\n", 400},
        {"bad version", "GET / HTTP/9.9\r\n\r\n", 505},
        {"header without colon", "GET / HTTP/1.1\r\nHost: h\r\nBad Header\r\n\r\n", 400},
        {"cl and te", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", 400},
        {"bad cl", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: abc\r\n\r\n", 400},
        {"two cl", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", 400},
        {"negative cl", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: -1\r\n\r\n", 400},
        {"space in header name", "GET / HTTP/1.1\r\nHost: h\r\nHo st: x\r\n\r\n", 400},
        {"nul in url", "GET /a\0b HTTP/1.1\r\nHost: h\r\n\r\n", 400},
        {"bare lf in header", "GET / HTTP/1.1\r\nHost: a\nX: b\r\n\r\n", 400},
        {"bad chunk size", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400},
        {"url too long",
         "GET /aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa HTTP/1.1\r\nHost: "
         "h\r\n\r\n",
         414},
        {"body over limit by cl", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 101\r\n\r\n", 413},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        size_t len = strlen(cases[i].req);
        if (strcmp(cases[i].name, "nul in url") == 0)
            len = 31; /* strlen stops at the NUL */
        for (size_t chunk = 1; chunk <= len; chunk += (chunk < 4 ? 1 : 7)) {
            int r = feed_all(cases[i].req, len, chunk, NULL);
            cr_assert_eq(r, -cases[i].status, "%s (chunk %zu): got %d", cases[i].name, chunk, r);
        }
    }
}

Test(http, chunked_body_over_limit_is_413)
{
    char req[512];
    int n = snprintf(req, sizeof(req), "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n70\r\n");
    memset(req + n, 'x', 0x70);
    cr_assert_eq(feed_all(req, (size_t)n + 0x70, 4096, NULL), -413);
}

Test(http, url_offsets_survive_a_shift)
{
    /* the worker compacts its buffer between feeds: offsets must follow */
    char buf[128];
    struct http h;
    http_init(&h, &lim);
    const char *part1 = "GET /exa";
    const char *part2 = "mple HTTP/1.1\r\nHost: h\r\n\r\n";
    memcpy(buf, "XXXX", 4); /* 4 bytes of an earlier, answered message */
    memcpy(buf + 4, part1, strlen(part1));
    size_t pos = 4, len = 4 + strlen(part1);
    cr_assert_eq(http_feed(&h, buf, &pos, len), HTTP_MORE);
    memmove(buf, buf + 4, len - 4);
    len -= 4;
    pos -= 4;
    http_shift(&h, 4);
    memcpy(buf + len, part2, strlen(part2));
    len += strlen(part2);
    cr_assert_eq(http_feed(&h, buf, &pos, len), HTTP_MSG);
    cr_assert_str_eq(last_url, "/example");
}

Test(http, bad_reason_names)
{
    cr_assert_str_eq(http_bad_reason_name(BAD_HEADER_TOO_LARGE), "header_too_large");
    cr_assert_str_eq(http_bad_reason_name(BAD__COUNT), "other");
}

/* Found by the fuzzer: llhttp consumes empty lines between messages without
 * starting one, so the message start recorded after the last message lies
 * before the parse position; compaction must not trust it then. */
Test(http, compact_after_empty_lines_between_messages)
{
    char buf[256];
    uint32_t len = 0, pos = 0, start = 0;
    struct http h;
    http_init(&h, &lim);
    const char *steps[] = {"GET /healthz HTTP/1.1\r\nHost: h\r\n\r\n", "\r\n", "\r\nGET /exa",
                           "mple HTTP/1.1\r\nHost: h\r\n\r\n"};
    int msgs = 0;
    for (size_t i = 0; i < 4; i++) {
        memcpy(buf + len, steps[i], strlen(steps[i]));
        len += (uint32_t)strlen(steps[i]);
        for (;;) {
            size_t p = pos;
            enum http_status st = http_feed(&h, buf, &p, len);
            pos = (uint32_t)p;
            cr_assert_neq(st, HTTP_ERROR, "step %zu", i);
            if (st != HTTP_MSG)
                break;
            msgs++;
            start = pos;
        }
        http_compact(&h, buf, &len, &pos, &start);
        cr_assert_leq(start, pos, "step %zu: start %u pos %u", i, start, pos);
        cr_assert_leq(pos, len);
    }
    cr_assert_eq(msgs, 2);
    cr_assert_str_eq(last_url, "/example");
    cr_assert_eq(len, 0);
}

Test(http, bytes_after_an_upgrade_are_dropped)
{
    const char *r = "GET /healthz HTTP/1.1\r\nHost: h\r\nConnection: upgrade\r\nUpgrade: h2c\r\n\r\nGET /readyz "
                    "HTTP/1.1\r\nHost: h\r\n\r\n";
    struct http h;
    http_init(&h, &lim);
    size_t pos = 0;
    cr_assert_eq(http_feed(&h, r, &pos, strlen(r)), HTTP_MSG);
    cr_assert(h.upgrade);
    cr_assert_not(h.req.keep_alive);
    cr_assert_eq(http_feed(&h, r, &pos, strlen(r)), HTTP_MORE);
    cr_assert_eq(pos, strlen(r));
    cr_assert_eq(http_feed(&h, r, &pos, strlen(r)), HTTP_MORE);
}

/* ---- RFC 9112/9110 rules the parser adds to llhttp (docs/http.md) -------- */

/* Feeds req at every split size; returns the common result (asserted). */
static int feed_every_split(const char *req, size_t len)
{
    int first = feed_all(req, len, len, NULL);
    for (size_t chunk = 1; chunk < len; chunk += (chunk < 8 ? 1 : 5))
        cr_assert_eq(feed_all(req, len, chunk, NULL), first, "%s: chunk %zu differs", req, chunk);
    return first;
}

static int with_host(const char *host)
{
    char req[256];
    int n = snprintf(req, sizeof(req), "GET / HTTP/1.1\r\nHost: %s\r\n\r\n", host);
    return feed_every_split(req, (size_t)n);
}

/* RFC 9112 3.2: "a server MUST respond with a 400 ... to any request message
 * that contains ... a Host header field with an invalid field value". */
Test(http, host_value_must_be_a_host_and_port)
{
    static const char *const good[] = {"a", "localhost:8080", "a.b-c_d~e", "[::1]", "[::1]:80", "[v1.x]",
                                       "127.0.0.1:1", "h:", "%41b", "a!$&'()*+;=", "h \t"};
    static const char *const bad[] = {"user@host", "host/path", "a, b", "a,b", "h:8o", "[::1", "[]", "[::1]x",
                                      "%4", "%zz", "h h", ":80", "h?q", "h#f", "\"h\"", "h:80:81"};
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
        cr_assert_eq(with_host(good[i]), 1, "Host: %s", good[i]);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        cr_assert_eq(with_host(bad[i]), -400, "Host: %s", bad[i]);
}

/* RFC 9112 5: field-name = token, one tchar at least. */
Test(http, an_empty_field_name_is_400)
{
    const char *r = "GET / HTTP/1.1\r\nHost: a\r\n: empty-name\r\n\r\n";
    cr_assert_eq(feed_every_split(r, strlen(r)), -400);
}

/* A Transfer-Encoding that is not a final chunked, empty ones too (llhttp
 * frames that by Content-Length), and any Transfer-Encoding in HTTP/1.0
 * (RFC 9112 6.1: "MUST treat the message as if the framing is faulty"). */
Test(http, transfer_encoding_other_than_chunked_is_400)
{
    static const char *const cases[] = {
        "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding:\r\nContent-Length: 5\r\n\r\nhello",
        "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: \r\nContent-Length: 5\r\n\r\nhello",
        "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n",
        "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n\r\n",
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        cr_assert_eq(feed_every_split(cases[i], strlen(cases[i])), -400, "case %zu", i);
    const char *ok = "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n\r\n";
    cr_assert_eq(feed_every_split(ok, strlen(ok)), 1);
}

/* RFC 9112 3.2: each request-target form with the methods it belongs to. */
Test(http, request_target_forms)
{
    static const struct {
        const char *req;
        int want; /* requests, or -status */
    } cases[] = {
        {"GET /p#frag HTTP/1.1\r\nHost: a\r\n\r\n", -400},
        {"GET * HTTP/1.1\r\nHost: a\r\n\r\n", -400},
        {"HEAD * HTTP/1.1\r\nHost: a\r\n\r\n", -400},
        {"OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n", 1},
        {"CONNECT h:443 HTTP/1.1\r\nHost: h:443\r\n\r\n", -501},
        {"GET http://h/p HTTP/1.1\r\nHost: h\r\n\r\n", 1},
        {"GET HTTPS://h HTTP/1.1\r\nHost: h\r\n\r\n", 1},
        {"GET http:///p HTTP/1.1\r\nHost: h\r\n\r\n", -400},
        {"GET http://h/p#f HTTP/1.1\r\nHost: h\r\n\r\n", -400},
        /* one SP on each side (RFC 9112 3), RFC 3986's characters only */
        {"GET  /p HTTP/1.1\r\nHost: h\r\n\r\n", -400},
        {"GET /p  HTTP/1.1\r\nHost: h\r\n\r\n", -400},
        {"GET /path\\file HTTP/1.1\r\nHost: h\r\n\r\n", -400},
        {"GET /p?q={\"a\"} HTTP/1.1\r\nHost: h\r\n\r\n", -400},
        {"GET /p|x HTTP/1.1\r\nHost: h\r\n\r\n", -400},
        {"GET /p%zz HTTP/1.1\r\nHost: h\r\n\r\n", -400},
        {"GET /p%4 HTTP/1.1\r\nHost: h\r\n\r\n", -400},
        {"GET /a%2Fb?x=1&y=%20;z:@!$'()*+,=~ HTTP/1.1\r\nHost: h\r\n\r\n", 1},
        {"GET http://[::1]:80/p HTTP/1.1\r\nHost: h\r\n\r\n", 1},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        cr_assert_eq(feed_every_split(cases[i].req, strlen(cases[i].req)), cases[i].want, "%s", cases[i].req);
    struct http_req q;
    const char *star = "OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n";
    cr_assert_eq(feed_all(star, strlen(star), 4096, &q), 1);
    cr_assert(q.asterisk);
}

/* RFC 9110 2.5: a higher minor version of HTTP/1 is served as 1.1; another
 * major version is 505. */
Test(http, versions)
{
    struct http_req q;
    const char *r12 = "GET / HTTP/1.2\r\nHost: a\r\n\r\n";
    cr_assert_eq(feed_all(r12, strlen(r12), 4096, &q), 1);
    cr_assert(q.keep_alive, "as 1.1: persistent");
    const char *r19 = "GET / HTTP/1.9\r\n\r\n";
    cr_assert_eq(feed_all(r19, strlen(r19), 4096, NULL), -400, "as 1.1: Host required");
    static const char *const other[] = {"GET / HTTP/2.0\r\nHost: a\r\n\r\n", "GET / HTTP/0.9\r\n\r\n",
                                        "GET / HTTP/3.1\r\nHost: a\r\n\r\n"};
    for (size_t i = 0; i < 3; i++)
        cr_assert_eq(feed_every_split(other[i], strlen(other[i])), -505, "%s", other[i]);
    const char *junk = "GET / HTTP/1.x\r\nHost: a\r\n\r\n";
    cr_assert_eq(feed_all(junk, strlen(junk), 4096, NULL), -400);
}

/* Chunk extensions are bounded in bytes (HTTP_CHUNK_EXT_MAX a chunk), and so
 * is a trailer section (max_header), not only by the idle timeout. */
Test(http, chunk_extensions_and_trailers_are_bounded)
{
    char req[2048];
    int n = snprintf(req, sizeof(req), "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n1;");
    memset(req + n, 'e', HTTP_CHUNK_EXT_MAX + 1);
    n += HTTP_CHUNK_EXT_MAX + 1;
    n += snprintf(req + n, sizeof(req) - (size_t)n, "\r\nx\r\n0\r\n\r\n");
    cr_assert_eq(feed_all(req, (size_t)n, 4096, NULL), -400, "one byte over");
    n = snprintf(req, sizeof(req), "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n1;");
    memset(req + n, 'e', HTTP_CHUNK_EXT_MAX);
    n += HTTP_CHUNK_EXT_MAX;
    n += snprintf(req + n, sizeof(req) - (size_t)n, "\r\nx\r\n1;a=b\r\ny\r\n0\r\n\r\n");
    cr_assert_eq(feed_all(req, (size_t)n, 7, NULL), 1, "at the bound, and counted per chunk");

    n = snprintf(req, sizeof(req), "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nT: ");
    memset(req + n, 't', 600); /* lim.max_header is 512 */
    n += 600;
    n += snprintf(req + n, sizeof(req) - (size_t)n, "\r\n\r\n");
    cr_assert_eq(feed_all(req, (size_t)n, 64, NULL), -431);
}

/* A body the owner takes arrives whole, in order, at every split; with
 * Expect: 100-continue the owner is told to send 100 first, and the request
 * is not answered early. */
Test(http, a_body_the_owner_takes_arrives_whole)
{
    static const char *const cases[] = {
        "POST /e HTTP/1.1\r\nHost: a\r\nContent-Length: 11\r\n\r\nhello world",
        "POST /e HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nhello\r\n6\r\n world\r\n0\r\nT: v\r\n\r\n",
    };
    take_body = true;
    for (size_t i = 0; i < 2; i++) {
        size_t len = strlen(cases[i]);
        for (size_t chunk = 1; chunk <= len; chunk++) {
            got_len = 0;
            cr_assert_eq(feed_all(cases[i], len, chunk, NULL), 1);
            cr_assert_eq(got_len, 11, "case %zu chunk %zu: %zu bytes", i, chunk, got_len);
            cr_assert(memcmp(got, "hello world", 11) == 0);
        }
    }
    const char *r = "POST /e HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n";
    struct http h;
    size_t pos = 0;
    http_init(&h, &lim);
    cr_assert_eq(http_feed(&h, r, &pos, strlen(r)), HTTP_MORE, "waits for the body");
    cr_assert(h.send_continue);
    cr_assert_not(h.req.early);
    cr_assert(h.want_body);
    /* RFC 9110 10.1.1: "A server that receives a 100-continue expectation in
     * an HTTP/1.0 request MUST ignore that expectation." */
    const char *r10 = "POST /e HTTP/1.0\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n";
    pos = 0;
    http_init(&h, &lim);
    cr_assert_eq(http_feed(&h, r10, &pos, strlen(r10)), HTTP_MORE);
    cr_assert_not(h.send_continue);
    take_body = false;
    pos = 0;
    http_init(&h, &lim);
    cr_assert_eq(http_feed(&h, r10, &pos, strlen(r10)), HTTP_MORE, "not answered early either");
    cr_assert_not(h.req.early);
    got_len = 0;
    const char *dropped = "POST /e HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\nhi";
    cr_assert_eq(feed_all(dropped, strlen(dropped), 4096, NULL), 1);
    cr_assert_eq(got_len, 0, "not taken: dropped");
}
