/* test_framing.c - strict HTTP/1.1 framing, from a raw socket against the
 * built binary: what a proxy in front of primed could read differently (bare
 * CR, bare LF, obs-fold, a missing Host) is one 400 and a close, never a
 * second request; Expect is answered without waiting for a body. Runs under
 * every meson test setup (steal, inline, epoll).
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "itest.h"

static void expect_one_then_close(const char *what, const char *req, int status)
{
    expect_refusal(what, req, strlen(req), status);
}

Test(framing, bare_cr_cannot_hide_a_request, .fini = fini, .timeout = 60)
{
    up(NULL);
    /* CVE-2023-30589's shape: loose llhttp ended the X line at the bare CR,
     * read the Transfer-Encoding, and served the hidden GET /readyz */
    expect_one_then_close("bare CR before Transfer-Encoding",
                          "POST /healthz HTTP/1.1\r\nHost: a\r\nX: \rxTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
                          "GET /readyz HTTP/1.1\r\nHost: a\r\n\r\n",
                          400);
    expect_one_then_close("bare CR as the empty line", "GET /healthz HTTP/1.1\r\nHost: a\r\n\rZ", 400);
    down();
}

Test(framing, every_bare_cr_and_lf_is_400, .fini = fini, .timeout = 60)
{
    static const char *const cases[] = {
        "GET /healthz HTTP/1.1\r\nHost: a\r\n\n",
        "GET /healthz HTTP/1.1\nHost: a\r\n\r\n",
        "GET /healthz HTTP/1.1\r\nHost: a\n\r\n",
        "GET /healthz HTTP/1.1\rHost: a\r\n\r\n",
        "GET /healthz HTTP/1.1\r\nHost: a\rX: b\r\n\r\n",
        "GET /healthz HTTP/1.1\r\nHost: a\r\nX: a\r\n b\r\n\r\n",
        "\nGET /healthz HTTP/1.1\r\nHost: a\r\n\r\n",
        "POST /healthz HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n1\rx\r\n0\r\n\r\n",
        "POST /healthz HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\n0\r\n\r\n",
        "POST /healthz HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n\n",
        "POST /healthz HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nT: t\n\r\n",
    };
    up(NULL);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char what[32];
        snprintf(what, sizeof(what), "case %zu", i);
        expect_one_then_close(what, cases[i], 400);
    }
    expect_serving("the refusals"); /* a well-framed request on a new connection */
    down();
}

Test(framing, http11_without_host_is_400, .fini = fini, .timeout = 30)
{
    up(NULL);
    expect_one_then_close("no Host", "GET /healthz HTTP/1.1\r\n\r\n", 400);
    expect_one_then_close("two Hosts", "GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400);
    /* HTTP/1.0 needs none */
    struct harness_conn c;
    conn(&c);
    send_str(&c, "GET /healthz HTTP/1.0\r\n\r\n");
    struct harness_resp r;
    read_resp(&c, &r, false);
    cr_assert_eq(r.status, 200);
    harness_resp_free(&r);
    harness_close(&c);
    down();
}

Test(framing, expect_100_continue_is_answered_at_once, .fini = fini, .timeout = 30)
{
    up(NULL);
    struct harness_conn c;
    conn(&c);
    /* the body is not sent: a client waits for 100 Continue or the answer */
    send_str(&c, "POST /example HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n");
    long long t0 = harness_now_ms();
    struct harness_resp r;
    int x = harness_read_response(&c, &r, false, 1000);
    long long took = harness_now_ms() - t0;
    cr_assert_eq(x, 1, "no answer within 1 s (%s): the client would wait out its own timer",
                 x == 0 ? "EOF" : strerror(-x));
    cr_assert_eq(r.status, 405, "status %d", r.status);
    cr_assert_str_eq(header(&r, "Connection"), "close");
    cr_assert_lt(took, 1000);
    harness_resp_free(&r);
    /* a client that sends the body anyway is read and dropped, then closed */
    send_str(&c, "hello");
    expect_eof(&c, "after the early answer");
    harness_close(&c);

    /* the same on a route that serves GET: answered, not delayed */
    conn(&c);
    send_str(&c, "GET /healthz HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\n");
    x = harness_read_response(&c, &r, false, 1000);
    cr_assert_eq(x, 1, "no answer within 1 s");
    cr_assert_eq(r.status, 200);
    harness_resp_free(&r);
    harness_close(&c);

    expect_one_then_close("other expectation",
                          "POST /example HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nExpect: 200-ok\r\n\r\nhello", 417);
    down();
}
