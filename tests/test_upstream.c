/* test_upstream.c - the upstream client (src/upstream.c) on a real backend
 * (io_uring, then epoll) against a scripted upstream on 127.0.0.1: a thread
 * that accepts and answers each connection as the test says. Checks reuse of
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

enum mode { ANSWER, SILENT, HUGE_BODY };

static struct {
    int lfd, port;
    enum mode mode;
    _Atomic int accepts, requests;
    _Atomic bool stop;
    pthread_t thread;
} up;

static void *upstream_main(void *arg)
{
    (void)arg;
    while (!up.stop) {
        int fd = accept(up.lfd, NULL, NULL);
        if (fd < 0)
            continue; /* SO_RCVTIMEO: look at stop again */
        up.accepts++;
        struct timeval tv = {.tv_sec = 2};
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        char buf[4096];
        ssize_t n;
        while ((n = recv(fd, buf, sizeof(buf), 0)) > 0) {
            up.requests++;
            if (up.mode == SILENT)
                continue;
            if (up.mode == HUGE_BODY) {
                char h[96];
                int hl = snprintf(h, sizeof(h), "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n", UPSTREAM_BODY_MAX + 1);
                send(fd, h, (size_t)hl, MSG_NOSIGNAL);
                break;
            }
            char resp[128];
            int len =
                snprintf(resp, sizeof(resp), "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nreq%02d", (int)up.requests);
            send(fd, resp, (size_t)len, MSG_NOSIGNAL);
        }
        close(fd);
    }
    return NULL;
}

static void upstream_start_thread(enum mode m)
{
    up.mode = m;
    up.accepts = up.requests = 0;
    up.stop = false;
    up.lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    cr_assert_eq(bind(up.lfd, (struct sockaddr *)&a, sizeof(a)), 0);
    socklen_t l = sizeof(a);
    getsockname(up.lfd, (struct sockaddr *)&a, &l);
    up.port = ntohs(a.sin_port);
    listen(up.lfd, 16);
    struct timeval tv = {.tv_usec = 100000};
    setsockopt(up.lfd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    pthread_create(&up.thread, NULL, upstream_main, NULL);
}

static void upstream_stop_thread(void)
{
    up.stop = true;
    pthread_join(up.thread, NULL);
    close(up.lfd);
}

/* the client side */
static struct io io;
static struct upstream_client cl;
static struct metrics m;
static struct resolver res;
static struct url url;
static uint64_t now_ms;

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

static uint64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void client_up(enum io_kind kind, unsigned conns, unsigned timeout_ms)
{
    char why[160], err[128];
    int r = io_init(&io, kind, 64, 64, 4096, why, sizeof(why));
    if (r)
        cr_skip_test("backend %d unavailable: %s", kind, strerror(-r));
    char s[64];
    snprintf(s, sizeof(s), "http://127.0.0.1:%d/callme/ping", up.port);
    cr_assert_eq(url_parse(s, &url, err, sizeof(err)), 0);
    resolver_init(&res);
    struct resolver_target *t = resolver_add(&res, &url);
    memset(&cl, 0, sizeof(cl));
    memset(&m, 0, sizeof(m));
    cl.io = &io;
    cl.now_ms = &now_ms;
    cl.max_conns = conns;
    cl.timeout_ms = timeout_ms;
    cl.user_agent = "primed/test";
    now_ms = mono_ms();
    cr_assert_eq(upstream_add(&cl, &url, t, &m, METRICS_UP_CALLME), 0);
    cr_assert_eq(upstream_client_init(&cl), 0);
}

static void client_down(void)
{
    upstream_drain(&cl);
    for (uint64_t until = mono_ms() + 2000; upstream_busy(&cl) && mono_ms() < until;) {
        struct io_event evs[16];
        int n = io_wait(&io, evs, 16, 50);
        for (int i = 0; i < n; i++)
            if (evs[i].tag & UPSTREAM_TAG)
                upstream_on_event(&cl, &evs[i]);
    }
    cr_assert_eq(upstream_busy(&cl), 0, "every connection's ops completed");
    upstream_client_fini(&cl);
    io_fini(&io);
    io_close_wake(&io);
    resolver_fini(&res);
}

/* Runs the loop until every result is done or 3 s pass. */
static void run_until(struct result *rs, int n)
{
    for (uint64_t until = mono_ms() + 3000; mono_ms() < until;) {
        bool all = true;
        for (int i = 0; i < n; i++)
            all &= rs[i].done;
        if (all)
            return;
        struct io_event evs[16];
        int k = io_wait(&io, evs, 16, 20);
        now_ms = mono_ms();
        for (int i = 0; i < k; i++)
            if (evs[i].tag & UPSTREAM_TAG)
                upstream_on_event(&cl, &evs[i]);
        upstream_expire(&cl);
    }
    cr_assert_fail("calls not done within 3 s");
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
    cr_assert(upstream_start(&cl, 0, c, &r), "started");
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
    cr_assert_eq(cl.ups[0].nwait, 2, "one connection: the other two calls wait");
    run_until(r, 3);
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(r[i].res, UPSTREAM_OK, "call %d: %s", i, upstream_result_label(r[i].res));
        cr_assert_eq(r[i].status, 200);
        char want[8];
        snprintf(want, sizeof(want), "req%02d", i + 1);
        cr_assert_str_eq(r[i].body, want, "FIFO: call %d answered in order", i);
    }
    cr_assert_eq(up.accepts, 1, "one pooled keep-alive connection carried all three");
    cr_assert_eq(m.upstream_calls[METRICS_UP_CALLME][UPSTREAM_OK], 3);
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
    start(&c[0]);
    start(&c[1]);
    upstream_cancel(&cl, &c[1]);
    uint64_t t0 = mono_ms();
    run_until(r, 1);
    uint64_t took = mono_ms() - t0;
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
