/* test_chain.c - GET /callme/ping (src/app/routes/chain.c) through the app's hooks
 * over the scripted backend (tests/lib/pool_fixture.c), built or run without
 * an event store: each request's event id is the answer ("APP(id=N): POD in
 * NS", N counting up), and a trace starts there when none came (the chain's
 * routes carry ROUTE_F_NEW_TRACE) or continues the one sent. /caller/ping
 * without --callme-url is a 404 that says so; with it, its call to callme
 * runs on a real backend (epoll) against a scripted callme on 127.0.0.1
 * (tests/lib/upstub.c), and callme's answer is forwarded, or 502 naming it.
 */
#include <criterion/criterion.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "route_fixture.h"

static void setup(void)
{
    route_fixture_init();
    F.app.name = "callme";
    F.app.pod = "pod-7";
    route_fixture_start();
}

TestSuite(chain, .init = setup, .fini = route_fixture_stop);

Test(chain, callme_answers_its_event_id)
{
    conn_start(&P, 5);
    for (int n = 1; n <= 2; n++) {
        size_t before = S.fd[5].out_len;
        route_feed(5, GET("/callme/ping"));
        route_drain(5);
        const char *o = S.fd[5].out + before;
        cr_assert(strncmp(o, "HTTP/1.1 200 OK\r\n", 17) == 0, "%s", o);
        char want[64];
        snprintf(want, sizeof(want), "\r\n\r\ncallme(id=%d): pod-7 in ns\n", n);
        cr_assert(strstr(o, want) && strcmp(strstr(o, want), want) == 0, "%s", o);
        cr_assert(strstr(o, "\r\ntraceparent: 00-"), "a trace starts here: %s", o);
        cr_assert(S.fd[5].recv_armed, "kept alive");
    }
    cr_assert_eq(atomic_load(&M.requests[ROUTE_CALLME][STATUS_IDX_200]), 2);
    cr_assert_eq(atomic_load(&F.app.event_n), 2);
}

Test(chain, callme_continues_the_trace_it_was_sent)
{
    conn_start(&P, 5);
    route_feed(5, "GET /callme/ping HTTP/1.1\r\nHost: t\r\n"
                  "traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\r\n\r\n");
    route_drain(5);
    const char *tp = strstr(S.fd[5].out, "\r\ntraceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-");
    cr_assert(tp, "%s", S.fd[5].out);
    cr_assert(strncmp(tp + 2 + 13 + 3 + 32 + 1, "00f067aa0ba902b7", 16) != 0, "with a span of its own: %s", tp);
}

Test(chain, caller_without_callme_is_404_saying_why)
{
    conn_start(&P, 5);
    route_feed(5, GET("/caller/ping"));
    route_drain(5);
    const char *o = S.fd[5].out;
    cr_assert(strncmp(o, "HTTP/1.1 404 ", 13) == 0, "%s", o);
    cr_assert(strstr(o, "needs --callme-url"), "%s", o);
    cr_assert_eq(atomic_load(&F.app.event_n), 0, "nothing stored");
}

/* ---- /caller/ping: the call to callme, on a real backend (epoll) ----------
 * callme is a scripted upstream on 127.0.0.1 (tests/lib/upstub.c). */

static struct upstub callme;
static int callme_what; /* UPSTUB_* */

static void callme_answer(struct upstub *s, const char *path, unsigned n, struct upstub_answer *a)
{
    a->what = callme_what;
    a->status = 200;
    a->body = "callme(id=9): pod-9 in ns\n";
    a->body_len = (size_t)-1;
}

static void caller_start(int what)
{
    callme_what = what;
    route_fixture_init();
    F.app.name = "caller";
    route_fixture_calls_out();
    route_fixture_upstub(&callme, callme_answer, &F.cfg.callme, "/callme/ping");
    route_fixture_start();
}

static void caller_teardown(void)
{
    route_fixture_stop();
    upstub_stop(&callme);
}

Test(caller, forwards_callme_s_answer, .init = NULL, .fini = caller_teardown)
{
    caller_start(UPSTUB_ANSWER);
    conn_start(&P, 5);
    route_feed(5, GET("/caller/ping"));
    cr_assert(!S.fd[5].send_armed, "it waits on its call");
    route_answer_of(5);
    const char *o = S.fd[5].out;
    cr_assert(strncmp(o, "HTTP/1.1 200 OK\r\n", 17) == 0, "%s", o);
    cr_assert_str_eq(strstr(o, "\r\n\r\n") + 4, "caller(id=1): pod in ns is calling callme(id=9): pod-9 in ns\n");
    cr_assert(S.fd[5].recv_armed, "kept alive");
    char path[96];
    cr_assert_str_eq(upstub_path(&callme, 0, path, sizeof(path)), "/callme/ping");
    cr_assert_eq(atomic_load(&M.requests[ROUTE_CALLER][STATUS_IDX_200]), 1);
}

Test(caller, a_callme_that_fails_is_502_naming_it, .init = NULL, .fini = caller_teardown)
{
    caller_start(UPSTUB_CLOSE);
    conn_start(&P, 5);
    route_feed(5, GET("/caller/ping"));
    route_answer_of(5);
    const char *o = S.fd[5].out;
    cr_assert(strncmp(o, "HTTP/1.1 502 ", 13) == 0, "%s", o);
    char want[64];
    snprintf(want, sizeof(want), "upstream 127.0.0.1:%d", callme.port);
    cr_assert(strstr(strstr(o, "\r\n\r\n"), want), "%s", o);
}
