/* test_conn.c - the connection state machine (src/conn.c) over the scripted
 * backend (tests/io_script.c): every completion, deadline and clock tick is
 * the test's, so timers, backpressure and stale completions are exercised on
 * purpose, not by luck. No sockets, no sleeps.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build_info.h"
#include "catalog.h"
#include "pool_fixture.h"

static struct pool_fixture F;
static void (*tweak)(void); /* a test's changes to the config and the app before the pool starts */
static unsigned select_len;  /* a test's select receives (0: CONN_SELECT from the environment, else none) */

/* The fixture's parts under the names the tests use. */
#define S (F.s)
#define C (F.cfg)
#define P (F.w.pool)
#define D (F.w.dispatch)
#define M (F.aw->metrics)

static void setup_mode(enum dispatch_mode mode, unsigned queue_max, unsigned max_header)
{
    pool_fixture_init(&F);
    C.bits = PRIME_BITS_MIN;
    C.max_header = max_header;
    C.header_timeout_ms = 1000;
    C.idle_timeout_ms = 5000;
    C.queue_max = queue_max;
    C.dispatch = mode;
    C.prime_split = false;
    if (tweak)
        tweak();
    /* meson's conn-select runs this whole suite again with select receives */
    const char *env = getenv("CONN_SELECT");
    unsigned sel = select_len ? select_len : env ? (unsigned)atoi(env) : 0;
    if (sel)
        io_script_select(&S, sel);
    cr_assert_eq(pool_fixture_start(&F), 0, "%s", F.w.init_why);
}

static void setup(void)
{
    setup_mode(DISPATCH_INLINE, 4, 1024);
}

static void teardown(void)
{
    pool_fixture_stop(&F);
}

static void pump(void)
{
    pool_fixture_pump(&F);
}

static void feed(int fd, const char *s)
{
    cr_assert_eq(io_script_data(&S, fd, s, strlen(s)), (int)strlen(s), "fd %d: no receive armed", fd);
    pump();
}

/* Lets every send of fd go through, in full. */
static void drain_sends(int fd)
{
    while (io_script_send(&S, fd, SIZE_MAX) >= 0)
        pump();
}

static void tick(uint64_t ms)
{
    pool_fixture_tick(&F, ms);
}

static unsigned count(const char *hay, const char *needle)
{
    unsigned n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

#define GET(path) "GET " path " HTTP/1.1\r\nHost: t\r\n\r\n"

TestSuite(conn, .init = setup, .fini = teardown);

Test(conn, answers_and_keeps_alive)
{
    conn_start(&P, 5);
    cr_assert(S.fd[5].opened && S.fd[5].recv_armed);
    feed(5, GET("/healthz"));
    drain_sends(5);
    cr_assert(strstr(S.fd[5].out, "HTTP/1.1 200 OK\r\n"), "%s", S.fd[5].out);
    cr_assert(strstr(S.fd[5].out, "\r\n\r\nok\n"));
    cr_assert(S.fd[5].recv_armed, "reads the next request");
    cr_assert(!S.fd[5].closed);
    cr_assert_eq(P.nopen, 1);
}

Test(conn, hints_the_receive_behind_a_response)
{
    /* --uring-poll-first keys on IO_RECV_LATER: only a receive armed while a
     * response is on its way carries it (the next request is rarely there
     * yet); a fresh connection and a request still arriving read at once. */
    conn_start(&P, 5);
    cr_assert_eq(S.fd[5].recv_hints, 0u, "a new connection: its request may be there already");
    feed(5, "GET /healthz HTTP/1.1\r\nHo");
    cr_assert(S.fd[5].recv_armed && !S.fd[5].send_armed);
    cr_assert_eq(S.fd[5].recv_hints, 0u, "the rest of a request is coming: no hint");
    feed(5, "st: t\r\n\r\n");
    cr_assert(S.fd[5].send_armed && S.fd[5].recv_armed);
    cr_assert_eq(S.fd[5].recv_hints, IO_RECV_LATER, "armed behind the response");
    drain_sends(5);
    cr_assert(strstr(S.fd[5].out, "HTTP/1.1 200 OK\r\n"), "%s", S.fd[5].out);
}

Test(conn, answers_408_at_the_header_deadline)
{
    conn_start(&P, 5);
    feed(5, "GET /healthz HTTP/1.1\r\nHo");
    tick(999);
    cr_assert(!S.fd[5].send_armed, "not yet");
    tick(1);
    cr_assert(S.fd[5].shut_rd, "reading stops");
    drain_sends(5);
    cr_assert(strstr(S.fd[5].out, "HTTP/1.1 408 "), "%s", S.fd[5].out);
    cr_assert(strstr(S.fd[5].out, "Connection: close"));
    cr_assert_eq(atomic_load(&M.conn.bad[BAD_TIMEOUT]), 1);
}

Test(conn, header_deadline_is_for_the_head_not_each_receive)
{
    conn_start(&P, 5);
    feed(5, "GET /healthz HTTP/1.1\r\n");
    tick(600);
    feed(5, "Host: t\r\n");
    tick(400); /* 1000 ms since the head began, however often bytes came */
    drain_sends(5);
    cr_assert(strstr(S.fd[5].out, "HTTP/1.1 408 "), "%s", S.fd[5].out);
}

Test(conn, answers_431_when_the_head_fills_the_buffer)
{
    conn_start(&P, 5);
    char head[1100];
    int n = snprintf(head, sizeof(head), "GET /healthz HTTP/1.1\r\nX-Long: ");
    memset(head + n, 'a', sizeof(head) - (size_t)n - 1);
    head[sizeof(head) - 1] = '\0';
    cr_assert_eq(io_script_data(&S, 5, head, strlen(head)), 1024, "the receive asks for max_header");
    pump();
    drain_sends(5);
    cr_assert(strstr(S.fd[5].out, "HTTP/1.1 431 "), "%s", S.fd[5].out);
    cr_assert_eq(count(S.fd[5].out, "HTTP/1.1 "), 1);
}

Test(conn, pipelines_across_receives_in_order)
{
    conn_start(&P, 5);
    feed(5, GET("/healthz") "GET /rea");
    cr_assert(S.fd[5].send_armed);
    feed(5, "dyz HTTP/1.1\r\nHost: t\r\n\r\n" GET("/nope"));
    drain_sends(5);
    const char *o = S.fd[5].out;
    const char *a = strstr(o, "\r\n\r\nok\n"), *b = strstr(o, "\r\n\r\nready\n"), *c = strstr(o, "404 Not Found");
    cr_assert(a && b && c, "%s", o);
    cr_assert(a < b && b < c, "in request order");
    cr_assert_eq(count(o, "HTTP/1.1 "), 3);
}

Test(conn, short_sends_resume_where_they_stopped)
{
    conn_start(&P, 5);
    feed(5, GET("/healthz"));
    while (io_script_send(&S, 5, 7) >= 0)
        pump();
    cr_assert(strstr(S.fd[5].out, "\r\n\r\nok\n"), "%s", S.fd[5].out);
    cr_assert_eq(count(S.fd[5].out, "HTTP/1.1 "), 1);
}

Test(conn, lingers_after_the_last_response)
{
    conn_start(&P, 5);
    feed(5, "GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
    drain_sends(5);
    cr_assert(strstr(S.fd[5].out, "Connection: close"));
    cr_assert(S.fd[5].shut_wr, "our side is shut");
    cr_assert(!S.fd[5].closed, "but the socket stays open");
    cr_assert(S.fd[5].recv_armed, "reading what the client still sends");
    feed(5, "junk the client sent meanwhile");
    cr_assert(!S.fd[5].closed);
    cr_assert_eq(io_script_recv_res(&S, 5, 0), 0);
    pump();
    cr_assert(S.fd[5].closed, "closed at the client's EOF");
    cr_assert_eq(P.nopen, 0);
}

Test(conn, lingering_ends_at_its_deadline)
{
    conn_start(&P, 5);
    feed(5, "GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
    drain_sends(5);
    tick(CONN_LINGER_MS - 1);
    cr_assert(!S.fd[5].closed);
    tick(1);
    cr_assert(S.fd[5].shut_rd, "the receive is cut short");
    io_script_recv_res(&S, 5, -ECANCELED);
    pump();
    cr_assert(S.fd[5].closed);
}

Test(conn, idle_connection_closes_at_the_idle_deadline)
{
    conn_start(&P, 5);
    tick(C.idle_timeout_ms - 1);
    cr_assert(!S.fd[5].shut_rd);
    tick(1);
    cr_assert(S.fd[5].shut_rd && S.fd[5].shut_wr);
    io_script_recv_res(&S, 5, -ECANCELED);
    pump();
    cr_assert(S.fd[5].closed);
    cr_assert_eq(P.nopen, 0);
}

Test(conn, drain_gives_idle_connections_a_short_grace)
{
    P.lim.header_timeout_ms = 3 * CONN_DRAIN_IDLE_MS;
    conn_start(&P, 5);
    conn_start(&P, 6);
    feed(6, "GET /healthz HTTP/1.1\r\n"); /* mid-request: finishes first */
    atomic_store(&F.all.draining, 1);
    conn_pool_drain(&P);
    tick(CONN_DRAIN_IDLE_MS);
    cr_assert(S.fd[5].shut_rd, "between requests: closed after the grace");
    cr_assert(!S.fd[6].shut_wr);
    feed(6, "Host: t\r\n\r\n");
    drain_sends(6);
    cr_assert(strstr(S.fd[6].out, "HTTP/1.1 200 "), "%s", S.fd[6].out);
    cr_assert(strstr(S.fd[6].out, "Connection: close"), "draining: the answer closes");
}

Test(conn, reset_releases_the_slot)
{
    conn_start(&P, 5);
    io_script_recv_res(&S, 5, -ECONNRESET);
    pump();
    cr_assert(S.fd[5].closed);
    cr_assert_eq(P.nopen, 0);
    cr_assert(conn_pool_has_slot(&P));
}

Test(conn, stale_completions_are_dropped)
{
    conn_start(&P, 5);
    uint64_t old = S.fd[5].recv_tag;
    io_script_recv_res(&S, 5, -ECONNRESET);
    pump();
    cr_assert_null(conn_of(&P, old), "a released slot is nobody's");
    io_script_reset_fd(&S, 5);
    conn_start(&P, 5); /* same slot (LIFO), next generation */
    cr_assert_eq((uint32_t)S.fd[5].recv_tag, (uint32_t)old, "the slot is reused");
    cr_assert_neq(S.fd[5].recv_tag, old, "with a new generation");
    /* a late completion of the first connection: must not reach the second */
    static char late[] = GET("/healthz");
    if (S.fd[5].recv_buf) /* a select receive (conn-select) has none of the connection's */
        memcpy(S.fd[5].recv_buf, late, sizeof(late) - 1);
    io_script_push(&S, IO_OP_RECV, old, (int)sizeof(late) - 1);
    io_script_push(&S, IO_OP_SEND, old, 10);
    pump();
    cr_assert(!S.fd[5].send_armed, "nothing answered for the stale receive");
    cr_assert(S.fd[5].recv_armed, "the new receive is still the one in flight");
    cr_assert_eq(S.sends, 0);
}

Test(conn, eof_after_a_request_answers_then_closes)
{
    conn_start(&P, 5);
    feed(5, GET("/healthz"));
    cr_assert(S.fd[5].send_armed && S.fd[5].recv_armed);
    cr_assert_eq(io_script_recv_res(&S, 5, 0), 0, "the client shuts its side");
    pump();
    cr_assert(!S.fd[5].closed, "the answer is still on its way");
    drain_sends(5);
    cr_assert(strstr(S.fd[5].out, "\r\n\r\nok\n"), "%s", S.fd[5].out);
    cr_assert(S.fd[5].closed, "then the connection closes");
}

Test(conn, released_slots_stay_dead)
{
    conn_start(&P, 5);
    struct conn *c = conn_of(&P, S.fd[5].recv_tag);
    cr_assert(c);
    io_script_recv_res(&S, 5, -ECONNRESET);
    pump();
    cr_assert_eq(c->state, CONN_DEAD);
    cr_assert_eq(c->fd, -1);
}

/* Connections paused by the throttle read again in the order they paused:
 * the one that has waited longest first, so that under overload no
 * connection is passed over for ever by newer ones. */
Test(conn, resumes_paused_connections_oldest_first, .init = NULL)
{
#if PRIMED_HAVE_STEAL
    setup_mode(DISPATCH_STEAL, 1, 1024);
    for (int fd = 5; fd <= 9; fd++)
        conn_start(&P, fd);
    feed(5, GET("/example"));
    cr_assert(dispatch_throttled(&D), "the only task is out");
    static const int order[] = {8, 6, 9, 7}; /* the order they pause in */
    for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
        feed(order[i], GET("/healthz"));
        drain_sends(order[i]);
        cr_assert(!S.fd[order[i]].recv_armed, "fd %d paused", order[i]);
    }
    dispatch_poll(&D);
    pump();
    drain_sends(5);
    cr_assert(!dispatch_throttled(&D));
    for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
        cr_assert(S.fd[order[i]].recv_armed, "fd %d resumed", order[i]);
    for (size_t i = 1; i < sizeof(order) / sizeof(order[0]); i++)
        cr_assert_lt(S.fd[order[i - 1]].recv_nth, S.fd[order[i]].recv_nth, "fd %d paused before fd %d: re-armed first",
                     order[i - 1], order[i]);
#else
    cr_skip_test("built without work stealing");
#endif
}

/* With steal dispatch and a pool of one task: a second /example waits, the
 * worker throttles, and a connection that would read is paused, with no
 * timer, until the tasks are answered. */
Test(conn, pauses_and_resumes_under_backpressure, .init = NULL)
{
#if PRIMED_HAVE_STEAL
    setup_mode(DISPATCH_STEAL, 1, 1024);
    conn_start(&P, 5);
    conn_start(&P, 6);
    conn_start(&P, 7);
    feed(5, GET("/example"));
    cr_assert(dispatch_throttled(&D), "the only task is out");
    feed(6, GET("/example"));
    struct conn *c6 = conn_of(&P, S.fd[6].recv_tag);
    cr_assert(c6);
    cr_assert_eq(c6->state, CONN_WAITING);
    struct dispatch_job *job6 = (struct dispatch_job *)app_req_of(c6)->state; /* example.c's job starts with it */
    cr_assert_eq(job6->where, DISPATCH_JOB_WAITING, "no task left: it waits in the queue");
    cr_assert_eq(c6->timer.list, 0, "no client timer while the server works");
    feed(7, GET("/healthz"));
    drain_sends(7);
    cr_assert(strstr(S.fd[7].out, "200 OK"));
    struct conn *c7 = conn_of(&P, S.fd[7].send_tag);
    cr_assert(c7);
    cr_assert(!S.fd[7].recv_armed, "paused: no receive while throttled");
    cr_assert(c7->flags & CONN_F_PAUSED);
    cr_assert_eq(c7->timer.list, 0, "a paused connection runs no timer");
    tick(C.idle_timeout_ms * 2);
    cr_assert(!S.fd[7].shut_rd, "overload is latency, never an abort");
    dispatch_poll(&D); /* runs 5's task; 6's takes its place */
    pump();
    drain_sends(5);
    cr_assert(strstr(S.fd[5].out, "Hello_"), "%s", S.fd[5].out);
    cr_assert(dispatch_throttled(&D), "6's task is out now");
    dispatch_poll(&D);
    pump();
    drain_sends(6);
    cr_assert(strstr(S.fd[6].out, "Hello_"), "%s", S.fd[6].out);
    cr_assert(!dispatch_throttled(&D));
    cr_assert(S.fd[7].recv_armed, "resumed");
    cr_assert_eq(dispatch_out(&D), 0);
    cr_assert_eq(atomic_load(&M.conn.in_flight), 0, "every request answered once");
#else
    cr_skip_test("built without work stealing");
#endif
}

/* ---- fault injection (--fault-delay, --fault-abort) and /api/catalog ------ */

static unsigned tweak_delay_ms, tweak_abort;

static void with_faults(void)
{
    C.fault_delay_ms = tweak_delay_ms;
    C.fault_abort = tweak_abort;
}

/* A test's .init runs after the suite's: start the pool again with tweak. */
static void restart(void (*t)(void))
{
    teardown();
    tweak = t;
    setup();
    tweak = NULL;
}

static void setup_delay(void)
{
    tweak_delay_ms = 500;
    tweak_abort = 0;
    restart(with_faults);
}

static void setup_abort(void)
{
    tweak_delay_ms = 0;
    tweak_abort = 503;
    restart(with_faults);
}

static void setup_both(void)
{
    tweak_delay_ms = 500;
    tweak_abort = 503;
    restart(with_faults);
}

Test(conn, held_by_a_delay_is_answered_at_its_end, .init = setup_delay)
{
    conn_start(&P, 5);
    conn_start(&P, 6);
    feed(5, GET("/ping"));
    struct conn *c = conn_of(&P, S.fd[5].recv_tag);
    cr_assert(c);
    cr_assert_eq(c->state, CONN_WAITING);
    cr_assert(!S.fd[5].send_armed, "held: nothing goes out");
    cr_assert_eq(atomic_load(&M.faults[METRICS_FAULT_DELAY]), 1);
    cr_assert_eq(atomic_load(&M.conn.in_flight), 1);
    cr_assert_eq(app_worker_hooks.next_deadline(&F.w, UINT64_MAX), P.now_ms + 500 + 1,
                 "its timer is the delay (+ 1 ms: the clock is floored to whole ms)");
    /* the worker serves the others meanwhile; the probes are never faulted */
    feed(6, GET("/healthz"));
    drain_sends(6);
    cr_assert(strstr(S.fd[6].out, "HTTP/1.1 200 OK\r\n"), "%s", S.fd[6].out);
    tick(100);
    feed(6, GET("/ping"));
    cr_assert(!S.fd[6].send_armed, "a second held request, on its own timer");
    tick(500 - 100);
    cr_assert(!S.fd[5].send_armed, "not before now + delay");
    tick(1);
    cr_assert(S.fd[5].send_armed, "answered at now + delay");
    drain_sends(5);
    cr_assert(strstr(S.fd[5].out, "HTTP/1.1 200 OK\r\n"), "%s", S.fd[5].out);
    cr_assert(strstr(S.fd[5].out, "app(id="), "served, not aborted: %s", S.fd[5].out);
    cr_assert(S.fd[5].recv_armed && !S.fd[5].closed, "kept alive");
    tick(100);
    drain_sends(6);
    cr_assert_eq(count(S.fd[6].out, "HTTP/1.1 200 OK"), 2, "%s", S.fd[6].out);
    cr_assert_eq(atomic_load(&M.faults[METRICS_FAULT_DELAY]), 2);
    cr_assert_eq(atomic_load(&M.conn.in_flight), 0);
    cr_assert_eq(atomic_load(&M.requests[ROUTE_PING][STATUS_IDX_200]), 2);
}

Test(conn, client_reset_while_held_releases_the_slot, .init = setup_delay)
{
    conn_start(&P, 5);
    feed(5, GET("/ping"));
    cr_assert_eq(atomic_load(&M.conn.in_flight), 1);
    cr_assert(S.fd[5].recv_armed, "a held connection still reads: it sees its client go");
    io_script_recv_res(&S, 5, -ECONNRESET);
    pump();
    cr_assert(S.fd[5].closed);
    cr_assert_eq(P.nopen, 0);
    cr_assert(conn_pool_has_slot(&P));
    cr_assert_eq(atomic_load(&M.conn.in_flight), 0, "the held request is no longer in flight");
    cr_assert_eq(app_worker_hooks.next_deadline(&F.w, UINT64_MAX), UINT64_MAX, "its timer is gone");
    cr_assert_eq(conn_pool_next_deadline(&P, UINT64_MAX), UINT64_MAX, "and no client timer runs");
    tick(1000);
    cr_assert_eq(S.sends, 0, "nothing answered for it");
    /* the slot serves the next client */
    io_script_reset_fd(&S, 5);
    conn_start(&P, 5);
    feed(5, GET("/healthz"));
    drain_sends(5);
    cr_assert(strstr(S.fd[5].out, "HTTP/1.1 200 OK"));
}

Test(conn, client_eof_while_held_answers_then_closes, .init = setup_delay)
{
    conn_start(&P, 5);
    feed(5, GET("/ping"));
    cr_assert_eq(io_script_recv_res(&S, 5, 0), 0, "the client shuts its side");
    pump();
    cr_assert(!S.fd[5].closed, "its request is still held");
    tick(501);
    drain_sends(5);
    cr_assert(strstr(S.fd[5].out, "HTTP/1.1 200 OK"), "%s", S.fd[5].out);
    cr_assert(S.fd[5].closed);
    cr_assert_eq(P.nopen, 0);
    cr_assert_eq(atomic_load(&M.conn.in_flight), 0);
}

Test(conn, abort_answers_the_code, .init = setup_abort)
{
    conn_start(&P, 5);
    feed(5, GET("/ping") GET("/healthz") GET("/metrics"));
    drain_sends(5);
    const char *o = S.fd[5].out;
    cr_assert(strncmp(o, "HTTP/1.1 503 Service Unavailable\r\n", 34) == 0, "%s", o);
    cr_assert(strstr(o, "\r\n\r\nfault filter abort"), "Envoy's body: %s", o);
    cr_assert(strstr(o, "\r\n\r\nok\n"), "/healthz is never faulted: %s", o);
    cr_assert_eq(count(o, "fault filter abort"), 1, "/metrics is never faulted either");
    cr_assert_eq(atomic_load(&M.faults[METRICS_FAULT_ABORT]), 1);
    cr_assert_eq(atomic_load(&M.faults[METRICS_FAULT_DELAY]), 0);
    cr_assert_eq(atomic_load(&M.requests[ROUTE_PING][STATUS_IDX_503]), 1);
    cr_assert(S.fd[5].recv_armed && !S.fd[5].closed, "an abort keeps the connection");
    cr_assert_eq(atomic_load(&M.conn.in_flight), 0);
}

Test(conn, delay_then_abort, .init = setup_both)
{
    conn_start(&P, 5);
    feed(5, GET("/ping"));
    cr_assert(!S.fd[5].send_armed, "delayed first");
    tick(501);
    drain_sends(5);
    cr_assert(strstr(S.fd[5].out, "HTTP/1.1 503 "), "then aborted: %s", S.fd[5].out);
    cr_assert(strstr(S.fd[5].out, "fault filter abort"));
    cr_assert_eq(atomic_load(&M.faults[METRICS_FAULT_DELAY]), 1);
    cr_assert_eq(atomic_load(&M.faults[METRICS_FAULT_ABORT]), 1);
    cr_assert_eq(atomic_load(&M.conn.in_flight), 0);
}

static struct catalog cat;

static void with_catalog(void)
{
    catalog_builtin(&cat);
    cr_assert_eq(catalog_render(&cat), 0);
    F.app.catalog = &cat;
}

static void setup_catalog(void)
{
    restart(with_catalog);
}

Test(conn, catalog_body_goes_out_intact_across_short_sends, .init = setup_catalog)
{
    cr_assert_gt(cat.json_len, 200, "a body worth splitting");
    conn_start(&P, 5);
    for (int round = 0; round < 2; round++) {
        size_t before = S.fd[5].out_len;
        feed(5, GET("/api/catalog"));
        while (io_script_send(&S, 5, 97) >= 0)
            pump();
        const char *o = S.fd[5].out + before;
        cr_assert(strncmp(o, "HTTP/1.1 200 OK\r\n", 17) == 0, "%s", o);
        cr_assert(strstr(o, "Content-Type: application/json\r\n"), "%s", o);
        char cl[48];
        snprintf(cl, sizeof(cl), "Content-Length: %zu\r\n", cat.json_len);
        cr_assert(strstr(o, cl), "%s", o);
        const char *body = strstr(o, "\r\n\r\n");
        cr_assert(body);
        body += 4;
        cr_assert_eq(strlen(body), cat.json_len, "round %d: the whole body, once", round);
        cr_assert_eq(memcmp(body, cat.json, cat.json_len), 0, "round %d: intact", round);
        cr_assert(S.fd[5].recv_armed, "kept alive");
    }
    cr_assert_eq(atomic_load(&M.requests[ROUTE_CATALOG][STATUS_IDX_200]), 2);
    struct conn *c = conn_of(&P, S.fd[5].recv_tag);
    cr_assert(c && c->ext.data == NULL, "the catalog's body is not the connection's to keep");
    cr_assert_eq(cat.json[0], '[', "nor to free: still the catalog's");
    pool_fixture_stop(&F);
    catalog_free(&cat); /* after the pool: nothing points into it any more */
}

/* ---- select receives: an idle connection holds no buffer -------------------- */

static void setup_select(void)
{
    select_len = 64; /* smaller than most heads here: some run on into the connection's buffer */
    setup_mode(DISPATCH_INLINE, 4, 1024);
}

static void teardown_select(void)
{
    cr_assert_eq(S.lent, 0u, "every landing buffer was put back");
    teardown();
    select_len = 0;
}

TestSuite(conn_select, .init = setup_select, .fini = teardown_select);

#define SHORT_GET "GET / HTTP/1.1\r\nHost: t\r\n\r\n" /* 27 bytes: fits one landing */

Test(conn_select, idle_connection_holds_no_buffer)
{
    cr_assert(P.select);
    conn_start(&P, 5);
    struct conn *c = conn_of(&P, S.fd[5].recv_tag);
    cr_assert(S.fd[5].recv_armed && S.fd[5].recv_buf == NULL, "a select receive");
    cr_assert_null(c->rbuf, "nothing lent before a byte arrives");
    feed(5, SHORT_GET);
    cr_assert(S.fd[5].send_armed && c->rbuf, "lent while the answer goes out");
    drain_sends(5);
    cr_assert(strstr(S.fd[5].out, "HTTP/1.1 "), "%s", S.fd[5].out);
    cr_assert(S.fd[5].recv_armed && S.fd[5].recv_buf == NULL, "waits by select again");
    cr_assert_null(c->rbuf, "and gives its pair back");
    cr_assert_eq(P.nbuf_free, 1u);
}

Test(conn_select, a_head_longer_than_a_landing_reads_on_into_its_own_buffer)
{
    conn_start(&P, 5);
    const char *req = "GET /healthz HTTP/1.1\r\nHost: t\r\nX-Pad: 0123456789abcdef0123456789\r\n\r\n";
    size_t len = strlen(req);
    cr_assert_gt(len, 64u);
    cr_assert_eq(io_script_data(&S, 5, req, len), 64, "a landing holds 64 bytes");
    pump();
    cr_assert(S.fd[5].recv_armed && S.fd[5].recv_buf != NULL, "the rest goes after the first 64 bytes");
    feed(5, req + 64);
    drain_sends(5);
    cr_assert(strstr(S.fd[5].out, "HTTP/1.1 200 OK\r\n"), "%s", S.fd[5].out);
    cr_assert(strstr(S.fd[5].out, "\r\n\r\nok\n"));
}

Test(conn_select, no_buffer_free_is_asked_again_and_loses_nothing)
{
    conn_start(&P, 5);
    unsigned before = S.selects;
    cr_assert_eq(io_script_recv_res(&S, 5, -ENOBUFS), 0);
    pump();
    cr_assert(S.fd[5].recv_armed && !S.fd[5].closed, "armed again, open");
    cr_assert_eq(S.selects, before + 1);
    feed(5, SHORT_GET);
    drain_sends(5);
    cr_assert(strstr(S.fd[5].out, "HTTP/1.1 "), "%s", S.fd[5].out);
}

Test(conn_select, pairs_are_reused_most_recent_first)
{
    for (int round = 0; round < 3; round++) {
        int fd = 5 + round;
        conn_start(&P, fd);
        feed(fd, SHORT_GET);
        drain_sends(fd);
    }
    cr_assert_eq(P.buf_fresh, 1u, "three connections one after another used one pair");
    cr_assert_eq(P.nopen, 3u);
}

Test(conn_select, pipelined_requests_in_one_landing_all_answered)
{
    conn_start(&P, 5);
    feed(5, "GET / HTTP/1.1\r\nHost: t\r\n\r\nGET / HTTP/1.1\r\n"); /* 43 + the head of a second */
    feed(5, "Host: t\r\n\r\n");
    drain_sends(5);
    cr_assert_eq(count(S.fd[5].out, "HTTP/1.1 "), 2, "%s", S.fd[5].out);
    struct conn *c = conn_of(&P, S.fd[5].recv_tag);
    cr_assert_null(c->rbuf);
}

Test(conn_select, a_client_gone_mid_select_frees_everything)
{
    conn_start(&P, 5);
    feed(5, SHORT_GET);
    cr_assert_eq(io_script_recv_res(&S, 5, -ECONNRESET), 0);
    pump();
    drain_sends(5);
    cr_assert_eq(P.nopen, 0u);
    cr_assert(S.fd[5].closed);
    cr_assert_eq(P.nbuf_free, 1u, "its pair is back");
}

/* Feeds s whole, a landing (select_len) or a receive at a time. */
static void feed_on(int fd, const char *s)
{
    size_t len = strlen(s), off = 0;
    while (off < len) {
        int n = io_script_data(&S, fd, s + off, len - off);
        cr_assert_gt(n, 0, "fd %d: no receive armed", fd);
        off += (size_t)n;
        pump();
    }
}

/* The trace values a request carried live in the pair it was parsed into:
 * each request of a connection answers with its own context, also when its
 * pair was given back in between and another one lent. */
Test(conn_select, each_request_keeps_its_own_trace_across_pairs)
{
    conn_start(&P, 5);
    feed_on(5, "GET /healthz HTTP/1.1\r\nHost: t\r\n"
            "traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\r\n\r\n");
    drain_sends(5);
    struct conn *c = conn_of(&P, S.fd[5].recv_tag);
    cr_assert_null(c->rbuf, "the pair went back between the requests");
    conn_start(&P, 6); /* takes the pair 5 gave back */
    feed_on(6, "GET /healthz HTTP/1.1\r\nHost: t\r\n"
            "traceparent: 00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01\r\n\r\n");
    feed_on(5, "GET /healthz HTTP/1.1\r\nHost: t\r\nb3: 80f198ee56343ba864fe8b2a57d3eff7-e457b5a2e4d86bd1-1\r\n\r\n");
    drain_sends(5);
    feed_on(5, SHORT_GET);
    drain_sends(5);
    drain_sends(6);
    cr_assert_eq(count(S.fd[5].out, "HTTP/1.1 "), 3, "%s", S.fd[5].out);
    cr_assert(strstr(S.fd[5].out, "traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-"), "%s", S.fd[5].out);
    cr_assert(strstr(S.fd[5].out, "traceparent: 00-80f198ee56343ba864fe8b2a57d3eff7-"), "%s", S.fd[5].out);
    cr_assert_eq(count(S.fd[5].out, "traceparent: "), 2, "the third request carried none: %s", S.fd[5].out);
    cr_assert(strstr(S.fd[6].out, "traceparent: 00-0af7651916cd43dd8448eb211c80319c-"), "%s", S.fd[6].out);
    cr_assert_null(strstr(S.fd[6].out, "4bf92f35"), "%s", S.fd[6].out);
}
