/* test_upstream.c - the upstream client (src/upstream.c) on a real backend
 * (io_uring, then epoll) against a scripted upstream on 127.0.0.1: a thread
 * (tests/upstub.c) that answers each request as the test says. Checks reuse of
 * pooled connections, the in-flight bound with FIFO waiting, the deadline,
 * cancel, and the bounds on an answer. Every wait is bounded.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "upstream.h"
#include "upstub.h"

enum mode { ANSWER, SILENT, HUGE_BODY };

/* the upstream: a scripted stub (upstub.c) */
static struct upstub up;
static char bodies[64][8];

static void answer(struct upstub *s, const char *path, unsigned n, struct upstub_answer *a)
{
    (void)path;
    switch (*(enum mode *)s->ctx) {
    case SILENT:
        a->what = UPSTUB_SILENT;
        break;
    case HUGE_BODY:
        a->content_length = UPSTREAM_BODY_MAX + 1;
        break;
    case ANSWER:
        snprintf(bodies[n % 64], sizeof(bodies[0]), "req%02u", n);
        a->body = bodies[n % 64];
        a->body_len = (size_t)-1;
        break;
    }
}

static enum mode mode;

static void upstream_start_thread(enum mode m)
{
    mode = m;
    cr_assert_eq(upstub_start(&up, answer, &mode), 0);
}

static void upstream_stop_thread(void)
{
    upstub_stop(&up);
}

/* the client side (upstub.c's loop) */
static struct uphost h;

struct result {
    bool done;
    enum upstream_result res;
    int status;
    char body[64];
};

static void on_done(struct upstream_call *call, enum upstream_result r, int err, int status, const char *body,
                    size_t len)
{
    (void)err;
    struct result *out = call->ctx;
    out->done = true;
    out->res = r;
    out->status = status;
    snprintf(out->body, sizeof(out->body), "%.*s", (int)len, body ? body : "");
}

static void client_up(enum io_kind kind, unsigned conns, unsigned timeout_ms)
{
    char why[160];
    int r = uphost_init(&h, kind, conns, timeout_ms, why, sizeof(why));
    if (r)
        cr_skip_test("backend %d unavailable: %s", kind, strerror(-r));
    cr_assert_eq(uphost_add(&h, up.port, "/callme/ping"), 0);
    cr_assert_eq(uphost_ready(&h), 0);
}

static void client_down(void)
{
    cr_assert_eq(uphost_fini(&h), 0, "every connection's ops completed");
}

struct results {
    struct result *rs;
    int n;
};

static bool all_done(void *ctx)
{
    struct results *r = ctx;
    for (int i = 0; i < r->n; i++)
        if (!r->rs[i].done)
            return false;
    return true;
}

/* Runs the loop until every result is done or 3 s pass. */
static void run_until(struct result *rs, int n)
{
    struct results r = {rs, n};
    cr_assert(uphost_run(&h, all_done, &r, 3000), "calls not done within 3 s");
}

static void call_init(struct upstream_call *c, struct result *r)
{
    memset(c, 0, sizeof(*c));
    memset(r, 0, sizeof(*r));
    c->method = "GET";
    c->done = on_done;
    c->ctx = r;
}

static void start(struct upstream_call *c)
{
    enum upstream_result r;
    /* the clock the client reads, fresh as a worker's at each request (set
     * at uphost_init() it could be tens of ms old here on a loaded machine,
     * and a deadline counted from it came that much early) */
    h.now_ms = upstub_mono_ms();
    cr_assert(upstream_start(&h.cl, 0, c, &r), "started");
}

static void reuses_and_bounds(enum io_kind kind)
{
    upstream_start_thread(ANSWER);
    client_up(kind, 1, 2000);
    struct upstream_call c[3];
    struct result r[3];
    for (int i = 0; i < 3; i++) {
        call_init(&c[i], &r[i]);
        start(&c[i]);
    }
    cr_assert_eq(h.cl.ups[0].nwait, 2, "one connection: the other two calls wait");
    run_until(r, 3);
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(r[i].res, UPSTREAM_OK, "call %d: %s", i, upstream_result_label(r[i].res));
        cr_assert_eq(r[i].status, 200);
        char want[8];
        snprintf(want, sizeof(want), "req%02d", i + 1);
        cr_assert_str_eq(r[i].body, want, "FIFO: call %d answered in order", i);
    }
    cr_assert_eq(up.accepts, 1, "one pooled keep-alive connection carried all three");
    cr_assert_eq(h.stats[0].calls[UPSTREAM_OK], 3);
    client_down();
    upstream_stop_thread();
}

Test(upstream, reuses_one_connection_in_fifo_order_uring)
{
    reuses_and_bounds(IO_URING);
}
Test(upstream, reuses_one_connection_in_fifo_order_epoll)
{
    reuses_and_bounds(IO_EPOLL);
}

static void deadline_and_cancel(enum io_kind kind)
{
    upstream_start_thread(SILENT);
    client_up(kind, 4, 150);
    struct upstream_call c[2];
    struct result r[2];
    call_init(&c[0], &r[0]);
    call_init(&c[1], &r[1]);
    uint64_t t0 = upstub_mono_ms();
    start(&c[0]);
    start(&c[1]);
    upstream_cancel(&h.cl, &c[1]);
    run_until(r, 1);
    uint64_t took = upstub_mono_ms() - t0;
    cr_assert_eq(r[0].res, UPSTREAM_TIMEOUT);
    cr_assert(took >= 140 && took < 1000, "504 at the deadline: %llu ms", (unsigned long long)took);
    cr_assert(!r[1].done, "a cancelled call never calls back");
    client_down();
    upstream_stop_thread();
}

Test(upstream, deadline_and_cancel_uring)
{
    deadline_and_cancel(IO_URING);
}
Test(upstream, deadline_and_cancel_epoll)
{
    deadline_and_cancel(IO_EPOLL);
}

static void refuses_oversized(enum io_kind kind)
{
    upstream_start_thread(HUGE_BODY);
    client_up(kind, 4, 2000);
    struct upstream_call c;
    struct result r;
    call_init(&c, &r);
    start(&c);
    run_until(&r, 1);
    cr_assert_eq(r.res, UPSTREAM_TOO_LARGE, "a Content-Length over UPSTREAM_BODY_MAX: %s",
                 upstream_result_label(r.res));
    cr_assert_str_eq(c.why, "response body too large");
    client_down();
    upstream_stop_thread();
}

Test(upstream, refuses_an_oversized_answer_uring)
{
    refuses_oversized(IO_URING);
}
Test(upstream, refuses_an_oversized_answer_epoll)
{
    refuses_oversized(IO_EPOLL);
}

Test(upstream, refused_connection_is_a_connect_error)
{
    upstream_start_thread(ANSWER);
    upstream_stop_thread(); /* the port is closed now */
    client_up(IO_AUTO, 4, 2000);
    struct upstream_call c;
    struct result r;
    call_init(&c, &r);
    start(&c);
    run_until(&r, 1);
    cr_assert_eq(r.res, UPSTREAM_CONNECT, "%s", upstream_result_label(r.res));
    client_down();
}
