/* test_echo.c - /echo (src/app/routes/echo.c) through the app's hooks over the
 * scripted backend: off by default (404, like an unknown path, for every
 * method); with --echo-route, GET's text, POST's and PUT's body back (from
 * Content-Length and chunked bodies across receives), OPTIONS' Allow, and a
 * body cut short by its client is let go (ASan's leak check holds it).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "route_fixture.h"

static void start(bool on)
{
    route_fixture_init();
    F.cfg.echo_route = on;
    route_fixture_start();
}

static void setup_on(void)
{
    start(true);
}

static const char *answer_of(int fd, size_t before)
{
    route_drain(fd);
    return S.fd[fd].out + before;
}

Test(echo, off_by_default_is_an_unknown_path, .fini = route_fixture_stop)
{
    start(false);
    conn_start(&P, 5);
    static const char *const reqs[] = {GET("/echo"), "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\n\r\nhi",
                                       "DELETE /echo HTTP/1.1\r\nHost: t\r\n\r\n",
                                       "OPTIONS /echo HTTP/1.1\r\nHost: t\r\n\r\n"};
    for (size_t i = 0; i < 4; i++) {
        size_t before = S.fd[5].out_len;
        route_feed(5, reqs[i]);
        const char *o = answer_of(5, before);
        cr_assert(strncmp(o, "HTTP/1.1 404 ", 13) == 0, "%s: %s", reqs[i], o);
    }
    cr_assert_eq(atomic_load(&M.requests[ROUTE_OTHER][metrics_status_index(404)]), 4, "counted as other");
}

TestSuite(echo_on, .init = setup_on, .fini = route_fixture_stop);

Test(echo_on, get_post_put_and_options)
{
    conn_start(&P, 5);
    route_feed(5, GET("/echo"));
    const char *o = answer_of(5, 0);
    cr_assert(strncmp(o, "HTTP/1.1 200 OK\r\n", 17) == 0, "%s", o);

    size_t before = S.fd[5].out_len;
    route_feed(5, "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 11\r\n\r\nhel");
    route_feed(5, "lo world");
    o = answer_of(5, before);
    cr_assert(strncmp(o, "HTTP/1.1 200 OK\r\n", 17) == 0, "%s", o);
    cr_assert(strstr(o, "Content-Type: application/octet-stream\r\n"), "%s", o);
    cr_assert(strstr(o, "Content-Length: 11\r\n"), "%s", o);
    cr_assert_str_eq(strstr(o, "\r\n\r\n") + 4, "hello world");

    before = S.fd[5].out_len;
    route_feed(5, "PUT /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n");
    route_feed(5, "2;x=y\r\nde\r\n0\r\nT: t\r\n\r\n");
    o = answer_of(5, before);
    cr_assert_str_eq(strstr(o, "\r\n\r\n") + 4, "abcde", "%s", o);

    before = S.fd[5].out_len;
    route_feed(5, "OPTIONS /echo HTTP/1.1\r\nHost: t\r\n\r\n");
    o = answer_of(5, before);
    cr_assert(strstr(o, "Allow: GET, HEAD, POST, PUT, OPTIONS\r\n"), "%s", o);
    cr_assert(strstr(o, "Content-Length: 0\r\n"), "%s", o);

    before = S.fd[5].out_len;
    route_feed(5, "PATCH /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 1\r\n\r\nx");
    o = answer_of(5, before);
    cr_assert(strncmp(o, "HTTP/1.1 405 ", 13) == 0, "%s", o);
    cr_assert(S.fd[5].recv_armed && !S.fd[5].closed, "kept alive throughout");
    cr_assert_eq(atomic_load(&M.requests[ROUTE_ECHO][metrics_status_index(200)]), 4);
}

/* A body larger than the first allocation grows, and comes back whole. */
Test(echo_on, a_body_grows_past_its_first_allocation)
{
    static char req[8192];
    int n = snprintf(req, sizeof(req), "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5000\r\n\r\n");
    for (int i = 0; i < 5000; i++)
        req[n + i] = (char)('a' + i % 26);
    req[n + 5000] = '\0';
    conn_start(&P, 5);
    for (int off = 0; off < n + 5000; off += 700) {
        char part[701];
        snprintf(part, sizeof(part), "%.700s", req + off);
        route_feed(5, part);
    }
    const char *o = answer_of(5, 0);
    cr_assert(strstr(o, "Content-Length: 5000\r\n"), "%s", o);
    cr_assert(memcmp(strstr(o, "\r\n\r\n") + 4, req + n, 5000) == 0);
}

/* Its client goes mid-body: the body kept so far is freed (the request's
 * state is gone), and the slot serves the next client. */
Test(echo_on, a_client_gone_mid_body_leaves_nothing)
{
    conn_start(&P, 5);
    route_feed(5, "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\npartial");
    struct conn *c = conn_of(&P, S.fd[5].recv_tag);
    cr_assert(c);
    struct app_req *q = app_req_of(c);
    cr_assert_not_null(q->state, "the body so far is kept");
    io_script_recv_res(&S, 5, -ECONNRESET);
    pool_fixture_pump(&F);
    cr_assert_null(q->state, "let go");
    conn_start(&P, 6);
    route_feed(6, GET("/echo"));
    cr_assert(strncmp(answer_of(6, 0), "HTTP/1.1 200 ", 13) == 0);
}
