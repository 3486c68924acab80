/* test_conn.c - the connection state machine (src/core/conn.c) over the
 * scripted backend (tests/lib/io_script.c) and a stub app of a few lines:
 * every completion, deadline and clock tick is the test's, so timers,
 * backpressure, waits and stale completions are exercised on purpose, not by
 * luck. No sockets, no sleeps, no src/app code: what the real app does with
 * a request (its routes, faults, catalog) is tests/app's.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conn.h"
#include "conn_expect.h"
#include "io_script.h"

/* ---- the stub app: conn.h's struct conn_app in a few lines ----------------
 * /healthz answers "ok\n", /readyz "ready\n", /big a body of BIG_LEN bytes
 * sent from outside the write buffer (released once), /wait waits until the
 * test answers it (stub_answer), /body takes a POST's body and answers with
 * it; anything else is 404. Each answer says which
 * x-tag the request carried (a kept header value). */
#define BIG_LEN 3000
#define TAG_MAX 64

static struct stub {
    char path[8][32];           /* each slot's request path, from the head hook */
    unsigned cancels[8];        /* the wait's cancel hook ran */
    unsigned finished, refused; /* finish hook calls, of them the core's refusals */
    enum bad_reason last_refused;
    unsigned released;          /* /big bodies given back */
    bool draining;              /* answers say Connection: close */
    char big[BIG_LEN];
    char body[8][64];           /* /body: each slot's body so far */
    size_t body_len[8];
    unsigned dropped[8];        /* the dropped hook ran */
} stub;

static struct http_keep stub_keep = {.n = 1, .h = {{"x-tag", TAG_MAX}}};

static bool stub_head(void *ctx, struct conn *c, const struct http_req *rq, const char *url, size_t len)
{
    unsigned i = conn_index(c);
    snprintf(stub.path[i], sizeof(stub.path[0]), "%.*s", (int)len, url);
    stub.body_len[i] = 0;
    return strcmp(stub.path[i], "/body") == 0 && rq->method == HTTP_POST;
}

static int stub_body(void *ctx, struct conn *c, const char *at, size_t len)
{
    unsigned i = conn_index(c);
    if (stub.body_len[i] + len > sizeof(stub.body[0]) - 1)
        return -1;
    memcpy(stub.body[i] + stub.body_len[i], at, len);
    stub.body_len[i] += len;
    stub.body[i][stub.body_len[i]] = '\0';
    return 0;
}

static void stub_dropped(void *ctx, struct conn *c)
{
    stub.dropped[conn_index(c)]++;
}

static void stub_cancel(struct conn *c, void *arg)
{
    stub.cancels[conn_index(c)]++;
}

static void stub_release(void *arg, char *data)
{
    cr_assert_eq(data, stub.big);
    stub.released++;
}

static void stub_reply(struct conn *c, int status, const char *body)
{
    struct resp r = {.status = status, .ctype = "text/plain", .body = body, .body_len = strlen(body),
                     .keep_alive = c->http.req.keep_alive && !stub.draining};
    conn_answer(c, &r, NULL);
}

static void stub_request(void *ctx, struct conn *c)
{
    const char *path = stub.path[conn_index(c)];
    if (strcmp(path, "/wait") == 0) {
        conn_wait(c, stub_cancel, NULL);
    } else if (strcmp(path, "/big") == 0) {
        struct resp r = {.status = 200, .ctype = "text/plain", .body = stub.big, .body_len = BIG_LEN,
                         .keep_alive = c->http.req.keep_alive && !stub.draining};
        conn_answer(c, &r, &(struct conn_body){.data = stub.big, .release = stub_release});
    } else if (strcmp(path, "/body") == 0) {
        stub_reply(c, 200, stub.body[conn_index(c)]);
    } else if (strcmp(path, "/healthz") == 0) {
        stub_reply(c, 200, "ok\n");
    } else if (strcmp(path, "/readyz") == 0) {
        stub_reply(c, 200, "ready\n");
    } else {
        stub_reply(c, 404, "not found\n");
    }
}

static void stub_finish(void *ctx, struct conn *c, struct resp *r, uint64_t dur_ns, enum bad_reason refused)
{
    static char extra[TAG_MAX + 16];
    stub.finished++;
    if (refused != BAD_NONE) {
        stub.refused++;
        stub.last_refused = refused;
    }
    size_t len;
    const char *tag = http_kept(&c->http.req, &stub_keep, 0, &len);
    if (tag)
        snprintf(extra, sizeof(extra), "X-Tag: %.*s\r\n", (int)len, tag);
    r->extra = tag ? extra : NULL;
}

/* ---- the pool under test --------------------------------------------------- */

static struct io_script S;
static struct conn_pool P;
static struct conn_stats M;
static bool throttled;       /* the pool's throttle (backpressure) */
static unsigned select_len;  /* a test's select receives (0: CONN_SELECT from the environment, else none) */

static void setup(void)
{
    memset(&stub, 0, sizeof(stub));
    memset(stub.big, 'b', BIG_LEN);
    memcpy(stub.big, "big:", 4);
    memcpy(stub.big + BIG_LEN - 4, ":end", 4);
    memset(&M, 0, sizeof(M));
    throttled = false;
    cr_assert_eq(http_keep_init(&stub_keep), 0);
    io_script_init(&S);
    /* meson's conn-select runs this whole suite again with select receives */
    const char *env = getenv("CONN_SELECT");
    unsigned sel = select_len ? select_len : env ? (unsigned)atoi(env) : 0;
    if (sel)
        io_script_select(&S, sel);
    P = (struct conn_pool){
        .lim = {.max_header = 1024, .max_url = 512, .max_body = 1 << 20, .header_timeout_ms = 1000,
                .idle_timeout_ms = 5000},
        .io = &S.io,
        .app = {.head = stub_head,
                .body = stub_body,
                .dropped = stub_dropped,
                .request = stub_request,
                .finish = stub_finish},
        .keep = &stub_keep,
        .stats = &M,
        .throttle = &throttled,
        .nslots = 8,
        .now_ms = 1000000,
    };
    resp_date(P.date, 784111777);
    cr_assert_eq(conn_pool_init(&P), 0);
}

static void teardown(void)
{
    conn_pool_fini(&P);
}

static void pump(void)
{
    struct io_event evs[64];
    int n;
    while ((n = io_wait(&S.io, evs, 64, 0)) > 0) {
        for (int i = 0; i < n; i++)
            if (slots_owner(evs[i].tag) == SLOTS_OWNER_CONN)
                conn_on_event(&P, &evs[i]);
    }
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
    P.now_ms += ms;
    conn_pool_expire(&P);
    pump();
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
    cr_assert_eq(atomic_load(&M.bad[BAD_TIMEOUT]), 1);
    cr_assert_eq(stub.refused, 1, "the app records the core's refusal");
    cr_assert_eq(stub.last_refused, BAD_TIMEOUT);
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
    cr_assert_eq(io_script_count(S.fd[5].out, "HTTP/1.1 "), 1);
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
    cr_assert_eq(io_script_count(o, "HTTP/1.1 "), 3);
}

Test(conn, short_sends_resume_where_they_stopped)
{
    conn_start(&P, 5);
    feed(5, GET("/healthz"));
    while (io_script_send(&S, 5, 7) >= 0)
        pump();
    cr_assert(strstr(S.fd[5].out, "\r\n\r\nok\n"), "%s", S.fd[5].out);
    cr_assert_eq(io_script_count(S.fd[5].out, "HTTP/1.1 "), 1);
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
    tick(P.lim.idle_timeout_ms - 1);
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
    stub.draining = true; /* the app's answers say close from now on */
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

/* A body the app takes arrives across receives; with Expect: 100-continue
 * the interim answer goes out first, and alone until the body came. */
Test(conn, a_body_the_app_takes_reaches_it_after_100_continue)
{
    conn_start(&P, 5);
    feed(5, "POST /body HTTP/1.1\r\nHost: t\r\nContent-Length: 11\r\nExpect: 100-continue\r\n\r\n");
    drain_sends(5);
    cr_assert_str_eq(S.fd[5].out, "HTTP/1.1 100 Continue\r\n\r\n");
    feed(5, "hello");
    feed(5, " world");
    drain_sends(5);
    const char *o = S.fd[5].out + strlen("HTTP/1.1 100 Continue\r\n\r\n");
    cr_assert(strncmp(o, "HTTP/1.1 200 OK\r\n", 17) == 0, "%s", S.fd[5].out);
    cr_assert(strstr(o, "\r\n\r\nhello world"), "%s", o);
    cr_assert_eq(stub.dropped[conn_index(conn_of(&P, S.fd[5].recv_tag))], 0, "answered: nothing dropped");
    cr_assert(S.fd[5].recv_armed && !S.fd[5].closed);
}

/* A request whose body the app took and that ends before its body does:
 * the app hears of it once, whether the client goes or the core refuses. */
Test(conn, a_body_cut_short_is_dropped_once)
{
    conn_start(&P, 5);
    unsigned i = conn_index(conn_of(&P, S.fd[5].recv_tag));
    feed(5, "POST /body HTTP/1.1\r\nHost: t\r\nContent-Length: 40\r\n\r\nabc");
    cr_assert_str_eq(stub.body[i], "abc");
    io_script_recv_res(&S, 5, -ECONNRESET);
    pump();
    cr_assert_eq(stub.dropped[i], 1, "the client went mid-body");

    conn_start(&P, 6); /* may reuse fd 5's slot: count from here */
    i = conn_index(conn_of(&P, S.fd[6].recv_tag));
    unsigned before = stub.dropped[i];
    feed(6, "POST /body HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\nzz\r\n");
    drain_sends(6);
    cr_assert(strstr(S.fd[6].out, "HTTP/1.1 400 "), "%s", S.fd[6].out);
    cr_assert_eq(stub.dropped[i], before + 1, "refused mid-body");
    io_script_recv_res(&S, 6, 0);
    pump();
    drain_sends(6);
    cr_assert_eq(stub.dropped[i], before + 1, "once, not again at the close");

    conn_start(&P, 7);
    i = conn_index(conn_of(&P, S.fd[7].recv_tag));
    before = stub.dropped[i];
    char big[128];
    snprintf(big, sizeof(big), "POST /body HTTP/1.1\r\nHost: t\r\nContent-Length: 70\r\n\r\n%070d", 0);
    feed(7, big);
    drain_sends(7);
    cr_assert(strstr(S.fd[7].out, "HTTP/1.1 413 "), "the app could not keep it: %s", S.fd[7].out);
    cr_assert_eq(stub.dropped[i], before + 1);
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
Test(conn, resumes_paused_connections_oldest_first)
{
    for (int fd = 5; fd <= 9; fd++)
        conn_start(&P, fd);
    throttled = true;
    static const int order[] = {8, 6, 9, 7}; /* the order they pause in */
    for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
        feed(order[i], GET("/healthz"));
        drain_sends(order[i]);
        cr_assert(!S.fd[order[i]].recv_armed, "fd %d paused", order[i]);
    }
    throttled = false;
    conn_pool_resume(&P);
    pump();
    for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
        cr_assert(S.fd[order[i]].recv_armed, "fd %d resumed", order[i]);
    for (size_t i = 1; i < sizeof(order) / sizeof(order[0]); i++)
        cr_assert_lt(S.fd[order[i - 1]].recv_nth, S.fd[order[i]].recv_nth, "fd %d paused before fd %d: re-armed first",
                     order[i - 1], order[i]);
}

/* A connection read while the throttle is on joins the paused list once its
 * answer is out, not when its request is read: its client sends the next
 * request only then, so one answered earlier (fd 6, whose client may have
 * sent long before) reads first. Paused at the read, fd 5 kept the place it
 * took while it waited, and under overload the request its client sent last
 * overtook older ones. */
Test(conn, a_connection_joins_the_paused_list_when_its_answer_is_out)
{
    conn_start(&P, 5);
    conn_start(&P, 6);
    throttled = true;
    feed(5, GET("/wait"));
    struct conn *c5 = conn_expect_waiting(&P, &S, 5);
    cr_assert(!S.fd[5].recv_armed, "no read while throttled");
    cr_assert(!(c5->flags & CONN_F_PAUSED), "busy: not on the paused list yet");
    feed(6, GET("/healthz"));
    drain_sends(6);
    conn_expect_paused(&P, &S, 6);
    stub_reply(c5, 200, "done\n");
    pump();
    drain_sends(5);
    cr_assert(strstr(S.fd[5].out, "\r\n\r\ndone\n"), "%s", S.fd[5].out);
    conn_expect_paused(&P, &S, 5);
    throttled = false;
    conn_pool_resume(&P);
    pump();
    cr_assert(S.fd[5].recv_armed && S.fd[6].recv_armed, "both resumed");
    cr_assert_lt(S.fd[6].recv_nth, S.fd[5].recv_nth, "fd 6's answer went out first: it reads first");
}

/* While the throttle is on (the owner's backpressure), a connection that
 * would read is paused, with no timer, until it lifts; a waiting request
 * runs no client timer either. */
Test(conn, pauses_and_resumes_under_backpressure)
{
    conn_start(&P, 6);
    conn_start(&P, 7);
    feed(6, GET("/wait"));
    struct conn *c6 = conn_expect_waiting(&P, &S, 6);
    cr_assert_eq(c6->timer.list, 0, "no client timer while the app works");
    throttled = true;
    feed(7, GET("/healthz"));
    drain_sends(7);
    cr_assert(strstr(S.fd[7].out, "200 OK"));
    conn_expect_paused(&P, &S, 7);
    tick(P.lim.idle_timeout_ms * 2);
    cr_assert(!S.fd[7].shut_rd, "overload is latency, never an abort");
    cr_assert(!S.fd[6].shut_rd);
    stub_reply(c6, 200, "done\n");
    pump();
    drain_sends(6);
    cr_assert(strstr(S.fd[6].out, "\r\n\r\ndone\n"), "%s", S.fd[6].out);
    throttled = false;
    conn_pool_resume(&P);
    pump();
    cr_assert(S.fd[7].recv_armed, "resumed");
    cr_assert_eq(atomic_load(&M.in_flight), 0, "every request answered once");
}

/* ---- waits: conn_wait(), then conn_answer() or the cancel hook ------------- */

Test(conn, a_wait_is_answered_later_and_the_others_go_on)
{
    conn_start(&P, 5);
    conn_start(&P, 6);
    feed(5, GET("/wait"));
    struct conn *c = conn_expect_waiting(&P, &S, 5);
    cr_assert(!S.fd[5].send_armed, "nothing goes out while it waits");
    cr_assert(S.fd[5].recv_armed, "a waiting connection still reads: it sees its client go");
    cr_assert_eq(atomic_load(&M.in_flight), 1);
    feed(6, GET("/healthz"));
    drain_sends(6);
    cr_assert(strstr(S.fd[6].out, "\r\n\r\nok\n"), "the worker serves the others meanwhile: %s", S.fd[6].out);
    feed(5, GET("/healthz")); /* pipelined behind the wait: answered after it, in order */
    cr_assert(!S.fd[5].send_armed);
    stub_reply(c, 200, "done\n");
    drain_sends(5);
    const char *o = S.fd[5].out;
    const char *a = strstr(o, "\r\n\r\ndone\n"), *b = strstr(o, "\r\n\r\nok\n");
    cr_assert(a && b && a < b, "the waited answer first, then the next: %s", o);
    cr_assert(S.fd[5].recv_armed && !S.fd[5].closed, "kept alive");
    cr_assert_eq(stub.cancels[conn_index(c)], 0u, "answered, never cancelled");
    cr_assert_eq(atomic_load(&M.in_flight), 0);
}

Test(conn, client_reset_while_waiting_cancels_and_releases_the_slot)
{
    conn_start(&P, 5);
    feed(5, GET("/wait"));
    struct conn *c = conn_of(&P, S.fd[5].recv_tag);
    uint32_t idx = conn_index(c);
    io_script_recv_res(&S, 5, -ECONNRESET);
    pump();
    cr_assert_eq(stub.cancels[idx], 1u, "the app's cancel hook ran once");
    cr_assert(S.fd[5].closed);
    cr_assert_eq(P.nopen, 0);
    cr_assert(conn_pool_has_slot(&P));
    cr_assert_eq(atomic_load(&M.in_flight), 0, "the request is no longer in flight");
    cr_assert_eq(conn_pool_next_deadline(&P, UINT64_MAX), UINT64_MAX, "and no client timer runs");
    tick(10000);
    cr_assert_eq(S.sends, 0, "nothing answered for it");
    /* the slot serves the next client */
    io_script_reset_fd(&S, 5);
    conn_start(&P, 5);
    feed(5, GET("/healthz"));
    drain_sends(5);
    cr_assert(strstr(S.fd[5].out, "HTTP/1.1 200 OK"));
}

Test(conn, client_eof_while_waiting_answers_then_closes)
{
    conn_start(&P, 5);
    feed(5, GET("/wait"));
    struct conn *c = conn_of(&P, S.fd[5].recv_tag);
    cr_assert_eq(io_script_recv_res(&S, 5, 0), 0, "the client shuts its side");
    pump();
    cr_assert(!S.fd[5].closed, "its request still waits");
    cr_assert_eq(stub.cancels[conn_index(c)], 0u);
    stub_reply(c, 200, "done\n");
    drain_sends(5);
    cr_assert(strstr(S.fd[5].out, "\r\n\r\ndone\n"), "%s", S.fd[5].out);
    cr_assert(S.fd[5].closed);
    cr_assert_eq(P.nopen, 0);
    cr_assert_eq(atomic_load(&M.in_flight), 0);
}

/* ---- a body from outside the write buffer (struct conn_body) -------------- */

Test(conn, a_lasting_body_goes_out_intact_across_short_sends)
{
    conn_start(&P, 5);
    for (int round = 0; round < 2; round++) {
        size_t before = S.fd[5].out_len;
        feed(5, GET("/big"));
        cr_assert_eq(stub.released, (unsigned)round, "not released before it is sent");
        while (io_script_send(&S, 5, 97) >= 0)
            pump();
        const char *o = S.fd[5].out + before;
        cr_assert(strncmp(o, "HTTP/1.1 200 OK\r\n", 17) == 0, "%s", o);
        char cl[48];
        snprintf(cl, sizeof(cl), "Content-Length: %d\r\n", BIG_LEN);
        cr_assert(strstr(o, cl), "%s", o);
        const char *body = strstr(o, "\r\n\r\n");
        cr_assert(body);
        body += 4;
        cr_assert_eq(strlen(body), BIG_LEN, "round %d: the whole body, once", round);
        cr_assert_eq(memcmp(body, stub.big, BIG_LEN), 0, "round %d: intact", round);
        cr_assert_eq(stub.released, (unsigned)round + 1, "released once it is sent");
        cr_assert(S.fd[5].recv_armed, "kept alive");
    }
    struct conn *c = conn_of(&P, S.fd[5].recv_tag);
    cr_assert(c && c->ext.data == NULL, "the body is not the connection's to keep");
}

Test(conn, a_lasting_body_is_released_when_its_client_goes)
{
    conn_start(&P, 5);
    feed(5, GET("/big"));
    cr_assert_eq(io_script_send(&S, 5, 100), 100);
    pump();
    cr_assert_eq(stub.released, 0u);
    io_script_recv_res(&S, 5, -ECONNRESET);
    pump();
    if (S.fd[5].send_armed) /* the send in flight ends too */
        io_script_push(&S, IO_OP_SEND, S.fd[5].send_tag, -EPIPE);
    pump();
    cr_assert_eq(stub.released, 1u, "given back once, with the connection");
    cr_assert_eq(P.nopen, 0);
}

Test(conn, head_answers_without_the_body)
{
    conn_start(&P, 5);
    feed(5, "HEAD /big HTTP/1.1\r\nHost: t\r\n\r\n");
    drain_sends(5);
    char cl[48];
    snprintf(cl, sizeof(cl), "Content-Length: %d\r\n", BIG_LEN);
    cr_assert(strstr(S.fd[5].out, cl), "the body's length: %s", S.fd[5].out);
    const char *end = strstr(S.fd[5].out, "\r\n\r\n");
    cr_assert(end && end[4] == '\0', "and no body: %s", S.fd[5].out);
    cr_assert_eq(stub.released, 1u, "the unsent body is released at once");
}

/* ---- select receives: an idle connection holds no buffer -------------------- */

static void setup_select(void)
{
    select_len = 64; /* smaller than most heads here: some run on into the connection's buffer */
    setup();
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
    cr_assert_eq(io_script_count(S.fd[5].out, "HTTP/1.1 "), 2, "%s", S.fd[5].out);
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

/* The values a request's head kept (the app's keep list) live in the pair it
 * was parsed into: each request of a connection answers with its own, also
 * when its pair was given back in between and another one lent. */
Test(conn_select, each_request_keeps_its_own_values_across_pairs)
{
    conn_start(&P, 5);
    feed_on(5, "GET /healthz HTTP/1.1\r\nHost: t\r\nX-Tag: first-of-five-0123456789abcdef0123456789abcdef\r\n\r\n");
    drain_sends(5);
    struct conn *c = conn_of(&P, S.fd[5].recv_tag);
    cr_assert_null(c->rbuf, "the pair went back between the requests");
    conn_start(&P, 6); /* takes the pair 5 gave back */
    feed_on(6, "GET /healthz HTTP/1.1\r\nHost: t\r\nX-Tag: only-of-six-0123456789abcdef0123456789abcdef\r\n\r\n");
    feed_on(5, "GET /healthz HTTP/1.1\r\nHost: t\r\nx-tag: second-of-five\r\n\r\n");
    drain_sends(5);
    feed_on(5, SHORT_GET);
    drain_sends(5);
    drain_sends(6);
    cr_assert_eq(io_script_count(S.fd[5].out, "HTTP/1.1 "), 3, "%s", S.fd[5].out);
    cr_assert(strstr(S.fd[5].out, "X-Tag: first-of-five-0123"), "%s", S.fd[5].out);
    cr_assert(strstr(S.fd[5].out, "X-Tag: second-of-five\r\n"), "%s", S.fd[5].out);
    cr_assert_eq(io_script_count(S.fd[5].out, "X-Tag: "), 2, "the third request carried none: %s", S.fd[5].out);
    cr_assert(strstr(S.fd[6].out, "X-Tag: only-of-six-0123"), "%s", S.fd[6].out);
    cr_assert_null(strstr(S.fd[6].out, "five"), "%s", S.fd[6].out);
}
