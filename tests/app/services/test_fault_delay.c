/* test_fault_delay.c - --fault-delay and --fault-abort (src/app/services/fault_delay.c, fault.c's
 * draws at 100 %) through the app's hooks over the scripted backend
 * (tests/lib/pool_fixture.c): a held request waits on the worker's own timer
 * while the others are served, is answered at its end (or aborted with
 * Envoy's body), and a client gone meanwhile releases everything. The probes
 * and /metrics are never faulted.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include "fault_delay.h"
#include "route_fixture.h"

/* the worker's fault delay service (faults configured) */
#define FD ((struct fault_delay *)F.aw->service[SERVICE_FAULT_DELAY])

static void start(unsigned delay_ms, int abort_status)
{
    route_fixture_init();
    F.cfg.max_header = 1024;
    F.cfg.header_timeout_ms = 1000;
    F.cfg.idle_timeout_ms = 5000;
    F.cfg.fault_delay_ms = delay_ms;
    F.cfg.fault_abort = abort_status;
    route_fixture_start();
}

static void setup_delay(void)
{
    start(500, 0);
}

static void setup_abort(void)
{
    start(0, 503);
}

static void setup_both(void)
{
    start(500, 503);
}

Test(hold, held_by_a_delay_is_answered_at_its_end, .init = setup_delay, .fini = route_fixture_stop)
{
    conn_start(&P, 5);
    conn_start(&P, 6);
    route_feed(5, GET("/ping"));
    conn_expect_waiting(&P, &S, 5);
    cr_assert(!S.fd[5].send_armed, "held: nothing goes out");
    cr_assert_eq(atomic_load(&FD->delayed), 1);
    cr_assert_eq(atomic_load(&M.conn.in_flight), 1);
    cr_assert_eq(app_worker_hooks.next_deadline(&F.w, UINT64_MAX), P.now_ms + 500 + 1,
                 "its timer is the delay (+ 1 ms: the clock is floored to whole ms)");
    /* the worker serves the others meanwhile; the probes are never faulted */
    route_feed(6, GET("/healthz"));
    route_drain(6);
    cr_assert(strstr(S.fd[6].out, "HTTP/1.1 200 OK\r\n"), "%s", S.fd[6].out);
    pool_fixture_tick(&F, 100);
    route_feed(6, GET("/ping"));
    cr_assert(!S.fd[6].send_armed, "a second held request, on its own timer");
    pool_fixture_tick(&F, 500 - 100);
    cr_assert(!S.fd[5].send_armed, "not before now + delay");
    pool_fixture_tick(&F, 1);
    cr_assert(S.fd[5].send_armed, "answered at now + delay");
    route_drain(5);
    cr_assert(strstr(S.fd[5].out, "HTTP/1.1 200 OK\r\n"), "%s", S.fd[5].out);
    cr_assert(strstr(S.fd[5].out, "app(id="), "served, not aborted: %s", S.fd[5].out);
    cr_assert(S.fd[5].recv_armed && !S.fd[5].closed, "kept alive");
    pool_fixture_tick(&F, 100);
    route_drain(6);
    cr_assert_eq(io_script_count(S.fd[6].out, "HTTP/1.1 200 OK"), 2, "%s", S.fd[6].out);
    cr_assert_eq(atomic_load(&FD->delayed), 2);
    cr_assert_eq(atomic_load(&M.conn.in_flight), 0);
    cr_assert_eq(atomic_load(&M.requests[ROUTE_PING][STATUS_IDX_200]), 2);
}

Test(hold, client_reset_while_held_releases_the_slot, .init = setup_delay, .fini = route_fixture_stop)
{
    conn_start(&P, 5);
    route_feed(5, GET("/ping"));
    cr_assert_eq(atomic_load(&M.conn.in_flight), 1);
    cr_assert(S.fd[5].recv_armed, "a held connection still reads: it sees its client go");
    io_script_recv_res(&S, 5, -ECONNRESET);
    pool_fixture_pump(&F);
    cr_assert(S.fd[5].closed);
    cr_assert_eq(P.nopen, 0);
    cr_assert(conn_pool_has_slot(&P));
    cr_assert_eq(atomic_load(&M.conn.in_flight), 0, "the held request is no longer in flight");
    cr_assert_eq(app_worker_hooks.next_deadline(&F.w, UINT64_MAX), UINT64_MAX, "its timer is gone");
    cr_assert_eq(conn_pool_next_deadline(&P, UINT64_MAX), UINT64_MAX, "and no client timer runs");
    pool_fixture_tick(&F, 1000);
    cr_assert_eq(S.sends, 0, "nothing answered for it");
    /* the slot serves the next client */
    io_script_reset_fd(&S, 5);
    conn_start(&P, 5);
    route_feed(5, GET("/healthz"));
    route_drain(5);
    cr_assert(strstr(S.fd[5].out, "HTTP/1.1 200 OK"));
}

Test(hold, client_eof_while_held_answers_then_closes, .init = setup_delay, .fini = route_fixture_stop)
{
    conn_start(&P, 5);
    route_feed(5, GET("/ping"));
    cr_assert_eq(io_script_recv_res(&S, 5, 0), 0, "the client shuts its side");
    pool_fixture_pump(&F);
    cr_assert(!S.fd[5].closed, "its request is still held");
    pool_fixture_tick(&F, 501);
    route_drain(5);
    cr_assert(strstr(S.fd[5].out, "HTTP/1.1 200 OK"), "%s", S.fd[5].out);
    cr_assert(S.fd[5].closed);
    cr_assert_eq(P.nopen, 0);
    cr_assert_eq(atomic_load(&M.conn.in_flight), 0);
}

Test(hold, abort_answers_the_code, .init = setup_abort, .fini = route_fixture_stop)
{
    conn_start(&P, 5);
    route_feed(5, GET("/ping") GET("/healthz") GET("/metrics"));
    route_drain(5);
    const char *o = S.fd[5].out;
    cr_assert(strncmp(o, "HTTP/1.1 503 Service Unavailable\r\n", 34) == 0, "%s", o);
    cr_assert(strstr(o, "\r\n\r\nfault filter abort"), "Envoy's body: %s", o);
    cr_assert(strstr(o, "\r\n\r\nok\n"), "/healthz is never faulted: %s", o);
    cr_assert_eq(io_script_count(o, "fault filter abort"), 1, "/metrics is never faulted either");
    cr_assert_eq(atomic_load(&FD->aborted), 1);
    cr_assert_eq(atomic_load(&FD->delayed), 0);
    cr_assert_eq(atomic_load(&M.requests[ROUTE_PING][STATUS_IDX_503]), 1);
    cr_assert(S.fd[5].recv_armed && !S.fd[5].closed, "an abort keeps the connection");
    cr_assert_eq(atomic_load(&M.conn.in_flight), 0);
}

Test(hold, delay_then_abort, .init = setup_both, .fini = route_fixture_stop)
{
    conn_start(&P, 5);
    route_feed(5, GET("/ping"));
    cr_assert(!S.fd[5].send_armed, "delayed first");
    pool_fixture_tick(&F, 501);
    route_drain(5);
    cr_assert(strstr(S.fd[5].out, "HTTP/1.1 503 "), "then aborted: %s", S.fd[5].out);
    cr_assert(strstr(S.fd[5].out, "fault filter abort"));
    cr_assert_eq(atomic_load(&FD->delayed), 1);
    cr_assert_eq(atomic_load(&FD->aborted), 1);
    cr_assert_eq(atomic_load(&M.conn.in_flight), 0);
}
