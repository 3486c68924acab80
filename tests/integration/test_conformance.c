/* test_conformance.c - the RFC 9110/9112 rules of docs/http.md on the wire,
 * from a raw socket against the built binary: the Host value, the
 * request-target's forms, versions, OPTIONS, the limits' defaults, and a body
 * read through a route (/echo with --echo-route: Content-Length, chunked,
 * trailers, Expect: 100-continue). Runs under every meson test setup (steal,
 * inline, epoll), so each I/O backend is checked.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "itest.h"

static const char *const echo_on[] = {"--echo-route", "on", "--max-body", "4096", NULL};

/* One request on a new connection: its response (the caller frees it). */
static void ask(const char *req, struct harness_resp *r)
{
    struct harness_conn c;
    conn(&c);
    send_str(&c, req);
    read_resp(&c, r, strncmp(req, "HEAD ", 5) == 0);
    harness_close(&c);
}

static void refused(const char *what, const char *req, int status)
{
    expect_refusal(what, req, strlen(req), status);
}

static int status_of(const char *req)
{
    struct harness_resp r;
    ask(req, &r);
    int s = r.status;
    harness_resp_free(&r);
    return s;
}

Test(conformance, an_invalid_host_value_is_400, .fini = fini, .timeout = 60)
{
    static const char *const bad[] = {"user@host", "host/path", "a, b", "", "h:8o", "[::1"};
    up(NULL);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char req[128];
        snprintf(req, sizeof(req), "GET /healthz HTTP/1.1\r\nHost: %s\r\n\r\n", bad[i]);
        expect_refusal(bad[i], req, strlen(req), 400);
    }
    cr_assert_eq(status_of("GET /healthz HTTP/1.1\r\nHost: [::1]:8080\r\n\r\n"), 200);
    down();
}

Test(conformance, field_names_and_transfer_encoding, .fini = fini, .timeout = 60)
{
    static const char *const bad[] = {
        "GET /healthz HTTP/1.1\r\nHost: a\r\n: empty-name\r\n\r\n",
        "POST /healthz HTTP/1.1\r\nHost: a\r\nTransfer-Encoding:\r\nContent-Length: 5\r\n\r\nhello",
        "POST /healthz HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    };
    up(NULL);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        expect_refusal(bad[i], bad[i], strlen(bad[i]), 400);
    down();
}

Test(conformance, request_target_forms_and_versions, .fini = fini, .timeout = 60)
{
    up(NULL);
    refused("a fragment", "GET /healthz#f HTTP/1.1\r\nHost: a\r\n\r\n", 400);
    refused("GET *", "GET * HTTP/1.1\r\nHost: a\r\n\r\n", 400);
    refused("CONNECT", "CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\n\r\nGET /healthz HTTP/1.1\r\nHost: a\r\n\r\n", 501);
    refused("HTTP/2.0", "GET /healthz HTTP/2.0\r\nHost: a\r\n\r\n", 505);
    cr_assert_eq(status_of("GET http://a/healthz HTTP/1.1\r\nHost: a\r\n\r\n"), 200);

    /* HTTP/1.2 is served as 1.1: persistent, answered in 1.1 */
    struct harness_conn c;
    conn(&c);
    struct harness_resp r;
    for (int i = 0; i < 2; i++) {
        send_str(&c, "GET /healthz HTTP/1.2\r\nHost: a\r\n\r\n");
        read_resp(&c, &r, false);
        cr_assert_eq(r.status, 200);
        cr_assert_eq(r.minor, 1);
        harness_resp_free(&r);
    }
    harness_close(&c);
    down();
}

Test(conformance, options_answers_allow, .fini = fini, .timeout = 60)
{
    up(NULL);
    struct harness_resp r;
    ask("OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n", &r);
    cr_assert_eq(r.status, 200);
    cr_assert_str_eq(header(&r, "Allow"), "GET, HEAD, OPTIONS");
    cr_assert_str_eq(header(&r, "Content-Length"), "0");
    harness_resp_free(&r);
    ask("OPTIONS /healthz HTTP/1.1\r\nHost: a\r\n\r\n", &r);
    cr_assert_eq(r.status, 200);
    cr_assert_str_eq(header(&r, "Allow"), "GET, HEAD, OPTIONS");
    harness_resp_free(&r);
    ask("DELETE /healthz HTTP/1.1\r\nHost: a\r\n\r\n", &r);
    cr_assert_eq(r.status, 405);
    cr_assert_str_eq(header(&r, "Allow"), "GET, HEAD, OPTIONS");
    harness_resp_free(&r);
    cr_assert_eq(status_of("OPTIONS /nope HTTP/1.1\r\nHost: a\r\n\r\n"), 404);
    cr_assert_eq(status_of("POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\nhi"), 404, "/echo is off");
    down();
}

/* RFC 9112 3: request lines of 8000 octets at least; past --max-url, 414. */
Test(conformance, an_8000_octet_request_line_is_served, .fini = fini, .timeout = 60)
{
    char *req = malloc(9000);
    up(NULL);
    int n = sprintf(req, "GET /healthz?");
    memset(req + n, 'q', 7986);
    n += 7986;
    n += sprintf(req + n, " HTTP/1.1\r\nHost: a\r\nUser-Agent: conformance\r\n\r\n");
    cr_assert_eq(status_of(req), 200, "a %d-byte request", n);
    n = sprintf(req, "GET /healthz?");
    memset(req + n, 'q', 8200);
    n += 8200;
    n += sprintf(req + n, " HTTP/1.1\r\nHost: a\r\n\r\n");
    expect_refusal("past --max-url", req, (size_t)n, 414);
    down();
    free(req);
}

Test(conformance, echo_returns_the_body, .fini = fini, .timeout = 60)
{
    up(echo_on);
    struct harness_resp r;
    ask("POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 11\r\n\r\nhello world", &r);
    cr_assert_eq(r.status, 200);
    cr_assert_eq(r.body_len, 11);
    cr_assert_str_eq(r.body, "hello world");
    harness_resp_free(&r);

    /* chunked, with extensions and a trailer; then the connection goes on */
    struct harness_conn c;
    conn(&c);
    send_str(&c, "PUT /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
                 "5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: t\r\n\r\n");
    read_resp(&c, &r, false);
    cr_assert_eq(r.status, 200);
    cr_assert_str_eq(r.body, "hello world");
    harness_resp_free(&r);
    send_str(&c, "GET /echo HTTP/1.1\r\nHost: a\r\n\r\n");
    read_resp(&c, &r, false);
    cr_assert_eq(r.status, 200);
    harness_resp_free(&r);
    send_str(&c, "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n");
    read_resp(&c, &r, false);
    cr_assert_eq(r.status, 200);
    cr_assert_eq(r.body_len, 0);
    harness_resp_free(&r);
    ask("OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n", &r);
    cr_assert_str_eq(header(&r, "Allow"), "GET, HEAD, POST, PUT, OPTIONS");
    harness_resp_free(&r);
    ask("OPTIONS /echo HTTP/1.1\r\nHost: a\r\n\r\n", &r);
    cr_assert_str_eq(header(&r, "Allow"), "GET, HEAD, POST, PUT, OPTIONS");
    harness_resp_free(&r);
    harness_close(&c);

    /* a body as large as --max-body comes back whole; one byte more is 413 */
    char *big = malloc(4096 + 128);
    int n = sprintf(big, "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 4096\r\n\r\n");
    for (int i = 0; i < 4096; i++)
        big[n + i] = (char)('a' + i % 26);
    conn(&c);
    cr_assert_eq(harness_send(&c, big, (size_t)n + 4096, T_IO), 0);
    read_resp(&c, &r, false);
    cr_assert_eq(r.status, 200);
    cr_assert_eq(r.body_len, 4096);
    cr_assert(memcmp(r.body, big + n, 4096) == 0);
    harness_resp_free(&r);
    harness_close(&c);
    refused("over --max-body", "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 4097\r\n\r\n", 413);
    free(big);
    down();
}

/* RFC 9110 10.1.1: a route that reads the body answers 100 Continue, then
 * the final answer once the body came. */
Test(conformance, echo_sends_100_continue, .fini = fini, .timeout = 60)
{
    up(echo_on);
    struct harness_conn c;
    conn(&c);
    send_str(&c, "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n");
    struct harness_resp r;
    int x = harness_read_response(&c, &r, true, T_IO);
    cr_assert_eq(x, 1, "no interim answer (%d)", x);
    cr_assert_eq(r.status, 100);
    harness_resp_free(&r);
    send_str(&c, "hello");
    read_resp(&c, &r, false);
    cr_assert_eq(r.status, 200);
    cr_assert_str_eq(r.body, "hello");
    harness_resp_free(&r);
    harness_close(&c);
    down();
}

/* A client that leaves in the middle of a body: the server lets it go and
 * serves on (under ASan, nothing of it leaks). */
Test(conformance, echo_survives_a_client_gone_mid_body, .fini = fini, .timeout = 60)
{
    up(echo_on);
    for (int i = 0; i < 20; i++) {
        struct harness_conn c;
        conn(&c);
        send_str(&c, "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 3000\r\n\r\nabcdefghij");
        harness_close(&c);
    }
    refused("a bad chunk mid-body",
            "POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\nzz\r\n", 400);
    expect_serving("clients gone mid-body");
    down();
}
