/* test_example.c - GET /example (src/app/routes/example.c) through the app's hooks
 * over the scripted backend (tests/lib/pool_fixture.c): a prime on the
 * dispatch answered "Hello_N" (N process-wide, never repeated); with steal
 * dispatch and one task a request queues behind the task out and the worker
 * throttles its reads until the tasks are back. Inline dispatch answers at
 * once.
 */
#include <criterion/criterion.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "build_info.h"
#include "route_fixture.h"

#define D (F.w.dispatch)

static void start(enum dispatch_mode mode, unsigned queue_max)
{
    route_fixture_init();
    F.cfg.idle_timeout_ms = 5000;
    F.cfg.queue_max = queue_max;
    F.cfg.dispatch = mode;
    route_fixture_start();
}

static void setup(void)
{
    start(DISPATCH_INLINE, 4);
}

/* A test's .init runs after the suite's: start again with steal dispatch and one task. */
static void setup_steal(void)
{
#if PRIMED_HAVE_STEAL
    route_fixture_stop();
    start(DISPATCH_STEAL, 1);
#endif
}

TestSuite(example, .init = setup, .fini = route_fixture_stop);

Test(example, answers_hello_n_counting_up)
{
#if PRIMED_HAVE_INLINE
    conn_start(&P, 5);
    for (int n = 1; n <= 3; n++) {
        size_t before = S.fd[5].out_len;
        route_feed(5, n == 2 ? GET("/example?bits=64") : GET("/example"));
        route_drain(5);
        const char *o = S.fd[5].out + before;
        char want[64];
        snprintf(want, sizeof(want), "\r\nContent-Type: text/plain\r\n");
        cr_assert(strncmp(o, "HTTP/1.1 200 OK\r\n", 17) == 0, "%s", o);
        cr_assert(strstr(o, want), "%s", o);
        snprintf(want, sizeof(want), "\r\n\r\nHello_%d", n);
        cr_assert(strstr(o, want) && strcmp(strstr(o, want), want) == 0, "the body is Hello_%d: %s", n, o);
        cr_assert(S.fd[5].recv_armed, "kept alive");
    }
    cr_assert_eq(atomic_load(&M.requests[ROUTE_EXAMPLE][STATUS_IDX_200]), 3);
    cr_assert_eq(atomic_load(&F.app.example_n), 3);
#else
    cr_skip_test("built without inline dispatch");
#endif
}

Test(example, head_runs_the_prime_and_sends_no_body)
{
#if PRIMED_HAVE_INLINE
    conn_start(&P, 5);
    route_feed(5, "HEAD /example HTTP/1.1\r\nHost: t\r\n\r\n");
    route_drain(5);
    const char *o = S.fd[5].out;
    cr_assert(strstr(o, "Content-Length: 7\r\n"), "Hello_1's length: %s", o);
    cr_assert_eq(strstr(o, "\r\n\r\n")[4], '\0', "no body: %s", o);
#else
    cr_skip_test("built without inline dispatch");
#endif
}

Test(example, a_bits_query_out_of_range_is_400)
{
    conn_start(&P, 5);
    route_feed(5, GET("/example?bits=5000"));
    route_drain(5);
    cr_assert(strncmp(S.fd[5].out, "HTTP/1.1 400 ", 13) == 0, "%s", S.fd[5].out);
    cr_assert_eq(atomic_load(&F.app.example_n), 0, "no prime run");
}

/* With steal dispatch and a pool of one task: a second /example waits, the
 * worker throttles, and a connection that would read is paused, with no
 * timer, until the tasks are answered. */
Test(example, queues_behind_the_tasks_out_and_throttles_the_worker, .init = setup_steal)
{
#if PRIMED_HAVE_STEAL
    conn_start(&P, 5);
    conn_start(&P, 6);
    conn_start(&P, 7);
    route_feed(5, GET("/example"));
    cr_assert(dispatch_throttled(&D), "the only task is out");
    route_feed(6, GET("/example"));
    struct conn *c6 = conn_expect_waiting(&P, &S, 6);
    struct dispatch_job *job6 = (struct dispatch_job *)app_req_of(c6)->state; /* example.c's job starts with it */
    cr_assert_eq(job6->where, DISPATCH_JOB_WAITING, "no task left: it waits in the queue");
    cr_assert_eq(c6->timer.list, 0, "no client timer while the server works");
    route_feed(7, GET("/healthz"));
    route_drain(7);
    cr_assert(strstr(S.fd[7].out, "200 OK"));
    conn_expect_paused(&P, &S, 7);
    pool_fixture_tick(&F, F.cfg.idle_timeout_ms * 2);
    cr_assert(!S.fd[7].shut_rd, "overload is latency, never an abort");
    dispatch_poll(&D); /* runs 5's task; 6's takes its place */
    pool_fixture_pump(&F);
    route_drain(5);
    cr_assert(strstr(S.fd[5].out, "Hello_"), "%s", S.fd[5].out);
    cr_assert(dispatch_throttled(&D), "6's task is out now");
    dispatch_poll(&D);
    pool_fixture_pump(&F);
    route_drain(6);
    cr_assert(strstr(S.fd[6].out, "Hello_"), "%s", S.fd[6].out);
    cr_assert(!dispatch_throttled(&D));
    cr_assert(S.fd[7].recv_armed, "resumed");
    cr_assert_eq(dispatch_out(&D), 0);
    cr_assert_eq(atomic_load(&M.conn.in_flight), 0, "every request answered once");
#else
    cr_skip_test("built without work stealing");
#endif
}
