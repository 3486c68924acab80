/* worker.c - one pinned thread: set-up, its listener and accept control, its
 * clock, and the loop that hands each completion to its owner.
 *
 * A worker touches only its own connections (conn.c), tasks (dispatch.c) and
 * metrics; what it shares with other workers is dispatch's, as dispatch.h
 * says. Connections past its limit are parked, never reset. Nothing here
 * knows HTTP.
 */
#define _GNU_SOURCE
#include "worker.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "build_info.h"
#include "prime.h"
#if PRIMED_HAVE_STORE
#include "store.h"
#endif

pthread_barrier_t worker_start_barrier;

#define MAX_EVENTS 256

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static bool draining(const struct worker *w)
{
    return atomic_load_explicit(&w->srv->draining, memory_order_relaxed) != 0;
}

/* ---- accepting ------------------------------------------------------------ */

/* Arms or cancels the accept to match what the worker wants: called after
 * anything that may change it (once per loop turn at least). */
static void accept_update(struct worker *w)
{
    struct conn_pool *p = &w->pool;
    bool want = w->want_accept && !p->drain_seen && !dispatch_throttled(&w->dispatch) &&
                p->nopen + w->npark < w->max_open && p->now_ms >= w->accept_retry_ms;
    if (want && !w->accept_armed) {
        if (io_accept(&w->io, w->lfd) == 0)
            w->accept_armed = true;
    } else if (!want && w->accept_armed && !w->accept_stop_sent) {
        if (io_accept_stop(&w->io, w->lfd) == 0)
            w->accept_stop_sent = true;
    }
}

/* A multishot accept is cancelled only when its cancel is submitted, at the
 * next io_wait(): meanwhile the kernel may hand us every connection of the
 * backlog (listen(SOMAXCONN)) at once. Those beyond --max-conns are parked:
 * held open and unread, as if still in the backlog, and started in arrival
 * order as slots free up (admit_parked(), from the loop). Closing them would
 * reset clients that did nothing wrong. */
#define PARK_MAX (SOMAXCONN + MAX_EVENTS)

/* Whether a connection can start now: under the limit, with a free slot. */
static bool room(struct worker *w)
{
    return w->pool.nopen < w->max_open && conn_pool_has_slot(&w->pool);
}

/* The oldest parked fd (npark > 0). */
static int park_pop(struct worker *w)
{
    int fd = w->park[w->park_head];
    w->park_head = (w->park_head + 1) % PARK_MAX;
    w->npark--;
    return fd;
}

static void take_connection(struct worker *w, int fd)
{
    struct conn_pool *p = &w->pool;
    if (w->npark == 0 && room(w)) {
        conn_start(p, fd);
        return;
    }
    if (w->npark < PARK_MAX) {
        w->park[(w->park_head + w->npark) % PARK_MAX] = fd;
        w->npark++;
        return;
    }
    /* more than a whole backlog beyond the limit in one go: nothing left to
     * hold it in; the client sees a reset */
    close(fd);
    if (p->now_ms >= w->accept_err_log_ms) {
        log_msg("worker %u: %u connections open and %u waiting: closing a new one", w->id, p->nopen, w->npark);
        w->accept_err_log_ms = p->now_ms + 1000;
    }
}

/* Starts parked connections while slots are free. From the loop only, never
 * from a path that may just have released a slot (its callers may still
 * look at it). */
static void admit_parked(struct worker *w)
{
    while (w->npark && room(w))
        conn_start(&w->pool, park_pop(w));
}

static void on_accept(struct worker *w, const struct io_event *ev)
{
    uint64_t now = w->pool.now_ms;
    if (!ev->more) {
        w->accept_armed = false;
        w->accept_stop_sent = false;
    }
    if (ev->res >= 0) {
        take_connection(w, ev->res);
        return;
    }
    bool resources = ev->res == -EMFILE || ev->res == -ENFILE || ev->res == -ENOBUFS || ev->res == -ENOMEM;
    if (!resources && (ev->res == -ECANCELED || ev->res == -ECONNABORTED || ev->res == -EINTR || ev->res == -EAGAIN))
        return;
    w->accept_retry_ms = now + 100;
    if (now >= w->accept_err_log_ms) {
        if (resources)
            log_msg("worker %u: accept: %s (%u connections open); pausing accept for 100 ms", w->id, strerror(-ev->res),
                    w->pool.nopen);
        else
            log_msg("worker %u: accept: %s", w->id, strerror(-ev->res));
        w->accept_err_log_ms = now + 1000;
    }
}

/* SIGTERM seen: stop accepting, take what is already in the backlog (those
 * clients connected before the signal; their requests will be answered), close
 * the listener (Knative stops routing to a pod before SIGTERM), then let the
 * connections wind down (conn_pool_drain). */
static void drain_begin(struct worker *w)
{
    w->pool.drain_seen = true;
    accept_update(w);     /* cancels the accept */
    while (w->lfd >= 0) { /* listeners are non-blocking (server.c) */
        int fd = accept4(w->lfd, NULL, NULL, SOCK_CLOEXEC | (w->io.kind == IO_EPOLL ? SOCK_NONBLOCK : 0));
        if (fd < 0)
            break;
        take_connection(w, fd);
    }
    if (w->lfd >= 0 && (w->id == 0 || !w->cfg->shared_listener))
        close(w->lfd); /* a shared listener is worker 0's to close */
    w->lfd = -1;
    admit_parked(w);
    conn_pool_drain(&w->pool);
    upstream_drain(&w->up);
}

/* ---- time ----------------------------------------------------------------- */

static void update_clock(struct worker *w)
{
    struct conn_pool *p = &w->pool;
    p->now_ms = mono_ns() / 1000000u;
    time_t now = time(NULL);
    if (now == w->date_sec)
        return;
    w->date_sec = now;
    resp_date(p->date, now);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(p->iso_time, sizeof(p->iso_time), "%Y-%m-%dT%H:%M:%SZ", &tm);
    if (w->cfg->access_log) {
        alog_flush(&w->alog);
        unsigned long lost = alog_report(&w->alog);
        if (lost)
            log_msg("worker %u: access log: %lu lines dropped (stdout is not being read fast enough)", w->id, lost);
    }
}

static int next_timeout_ms(struct worker *w)
{
    uint64_t now = w->pool.now_ms;
    uint64_t next = now + 1000 - (now % 1000); /* the Date header's second */
    next = conn_pool_next_deadline(&w->pool, next);
    next = upstream_next_deadline(&w->up, next);
    if (w->spans)
        next = spans_next_deadline(w->spans, next);
    if (w->accept_retry_ms > now && w->accept_retry_ms < next)
        next = w->accept_retry_ms;
    return next > now ? (int)(next - now) : 0;
}

/* ---- /metrics -------------------------------------------------------------- */

/* conn_scrape_fn: every worker's counters, merged (cold). */
static int scrape(void *ctx, char **out)
{
    struct worker *w = ctx;
    struct server *s = w->srv;
    struct metrics *ms[CONFIG_WORKERS_MAX];
    for (unsigned i = 0; i < s->nworkers; i++)
        ms[i] = &s->workers[i].metrics;
    struct metrics_info info = {
        .version = PRIMED_VERSION,
        .profile = PRIMED_PROFILE,
        .dispatch = config_dispatch_name(w->cfg->dispatch),
        .cc = PRIMED_CC,
        .engine = prime_engine_name(w->cfg->engine),
        .io = w->io.kind == IO_URING ? "io_uring" : "epoll",
        .queue_depth = dispatch_queue_depth(&w->dispatch),
        .steal = w->dispatch.steal,
        .start_time = s->start_time,
        .upstream_names = {[METRICS_UP_CALLME] = w->cfg->callme.host[0] ? "callme" : NULL,
                           [METRICS_UP_ZIPKIN] = w->cfg->zipkin.host[0] ? "zipkin" : NULL,
                           [METRICS_UP_CATALOG] = w->gateway ? "catalog" : NULL,
                           [METRICS_UP_INVENTORY] = w->gateway ? "inventory" : NULL},
        .upstream_results = upstream_result_labels(),
        .store = PRIMED_HAVE_STORE,
        .gateway = w->gateway != NULL,
    };
#if PRIMED_HAVE_STORE
    if (s->store)
        info.store_dropped = store_dropped(s->store);
#endif
    return metrics_scrape(ms, s->nworkers, &info, out);
}

/* ---- set-up and the loop --------------------------------------------------- */

static int setup_fail(struct worker *w, int err, const char *what)
{
    snprintf(w->init_why, sizeof(w->init_why), "%s", what);
    return err;
}

static int worker_setup(struct worker *w)
{
    const struct config *cfg = w->cfg;
    struct server *s = w->srv;
    char name[16];
    snprintf(name, sizeof(name), "primed-w%u", w->id);
    pthread_setname_np(pthread_self(), name); /* top -H, /proc/PID/task/ * /comm */
    if (w->cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(w->cpu, &set);
        int r = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
        if (r) {
            snprintf(w->init_why, sizeof(w->init_why), "pin to CPU %d: %s", w->cpu, strerror(r));
            return -r;
        }
    }
    struct rlimit rl;
    int max_fd = 65536;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        max_fd = (int)rl.rlim_cur;
    char why[160];
    unsigned listening = cfg->listeners && cfg->listeners < s->nworkers ? cfg->listeners : s->nworkers;
    w->max_open = (cfg->max_conns + listening - 1) / listening; /* accepts past it are parked */
    /* in flight at once: a receive and a send per slot and per upstream
     * connection, the accept, the wake */
    unsigned up_ops = 2 * UPSTREAM_MAX * cfg->upstream_conns;
    unsigned tune =
        (cfg->uring_poll_first ? IO_TUNE_POLL_FIRST : 0) | (cfg->uring_single_send ? IO_TUNE_SINGLE_SEND : 0);
    int r = io_init(&w->io, cfg->io, 1024, 2 * w->max_open + up_ops + 8, max_fd, tune, why, sizeof(why));
    if (r) {
        snprintf(w->init_why, sizeof(w->init_why), "%s: %s%s", cfg->io == IO_EPOLL ? "epoll" : "io_uring_setup",
                 strerror(-r),
                 r == -ENOSYS || r == -EPERM || r == -EACCES
                     ? " (blocked by seccomp or sysctl; run with --io=epoll or the profile in container/seccomp.json)"
                     : "");
        return r;
    }
    if (why[0] && w->id == 0)
        log_msg("%s", why);

    w->prime = prime_state_create(0);
    if (!w->prime)
        return setup_fail(w, -ENOMEM, "prime state: getrandom or allocation failed");
    w->dispatch.engine = cfg->engine;
    w->dispatch.prime = w->prime;
    w->dispatch.io = &w->io;
    w->dispatch.metrics = &w->metrics;
    if (dispatch_init(&w->dispatch, cfg->dispatch, cfg->queue_max, cfg->prime_split, w->id, s->dispatch, s->nworkers))
        return setup_fail(w, -ENOMEM, "allocate the task queue: out of memory");
    if (cfg->access_log && alog_init(&w->alog, STDOUT_FILENO, 64 * 1024))
        return setup_fail(w, -ENOMEM, "access log buffer: out of memory");

    w->env = (struct handler_env){
        .draining = &s->draining,
        .example_n = &s->example_n,
        .ping_n = &s->ping_n,
        .app = s->app,
        .pod = s->pod,
        .ns = s->ns,
        .revision_hdr = s->revision_hdr,
        .store = s->store,
        .event_n = &s->event_n,
        .callme = cfg->callme.host[0] ? cfg->callme.authority : NULL,
        .catalog = s->catalog,
        .gateway = s->catalog_target != NULL,
    };
    /* the upstream client: callme's and the collector's pools */
    w->up.io = &w->io;
    w->up.now_ms = &w->pool.now_ms;
    w->up.max_conns = cfg->upstream_conns;
    w->up.timeout_ms = cfg->upstream_timeout_ms;
    w->up.user_agent = "primed/" PRIMED_VERSION;
    int callme_up = -1, zipkin_up = -1;
    if (s->callme_target)
        callme_up = upstream_add(&w->up, &cfg->callme, s->callme_target, &w->metrics, METRICS_UP_CALLME);
    if (s->zipkin_target)
        zipkin_up = upstream_add(&w->up, &cfg->zipkin, s->zipkin_target, &w->metrics, METRICS_UP_ZIPKIN);
    if (s->catalog_target) {
        struct gateway *g = calloc(1, sizeof(*g));
        if (!g)
            return setup_fail(w, -ENOMEM, "allocate the gateway: out of memory");
        w->gateway = g;
        g->up = &w->up;
        g->catalog_up =
            (unsigned)upstream_add(&w->up, &cfg->catalog_url, s->catalog_target, &w->metrics, METRICS_UP_CATALOG);
        g->inventory_up = (unsigned)upstream_add(&w->up, &cfg->inventory_url, s->inventory_target, &w->metrics,
                                                 METRICS_UP_INVENTORY);
        snprintf(g->catalog_path, sizeof(g->catalog_path), "%s/api/catalog", cfg->catalog_url.path);
        snprintf(g->inventory_path, sizeof(g->inventory_path), "%s/api/inventory/", cfg->inventory_url.path);
        g->now_ms = &w->pool.now_ms;
        g->timeout_ms = cfg->upstream_timeout_ms;
        g->metrics = &w->metrics;
    }
    if (upstream_client_init(&w->up))
        return setup_fail(w, -ENOMEM, "allocate the upstream connections: out of memory");
    if (zipkin_up >= 0) {
        w->spans = calloc(1, sizeof(*w->spans));
        if (w->spans) {
            w->spans->client = &w->up;
            w->spans->up = (unsigned)zipkin_up;
            w->spans->metrics = &w->metrics;
            w->spans->now_ms = &w->pool.now_ms;
            w->spans->worker = w->id;
        }
        if (!w->spans || spans_init(w->spans))
            return setup_fail(w, -ENOMEM, "allocate the span exporter: out of memory");
    }
    struct conn_pool *p = &w->pool;
    p->cfg = cfg;
    p->io = &w->io;
    p->dispatch = &w->dispatch;
    p->metrics = &w->metrics;
    p->alog = cfg->access_log ? &w->alog : NULL;
    p->env = &w->env;
    p->scrape = scrape;
    p->scrape_ctx = w;
    p->up = &w->up;
    p->callme_up = callme_up;
    p->spans = w->spans;
    p->gw = w->gateway;
    p->fault = fault_init(&w->fault, cfg) ? &w->fault : NULL;
    p->id = w->id;
    p->nslots = w->max_open;
    if (getrandom(&p->rng, sizeof(p->rng), 0) != sizeof(p->rng) || p->rng == 0)
        p->rng = mono_ns() | 1;
    w->park = malloc(PARK_MAX * sizeof(*w->park));
    if (conn_pool_init(p) || !w->park) {
        snprintf(w->init_why, sizeof(w->init_why), "allocate %u connection slots: out of memory", p->nslots);
        return -ENOMEM;
    }
    w->want_accept = w->lfd >= 0;
    update_clock(w);
    return 0;
}

static void worker_teardown(struct worker *w)
{
    upstream_client_fini(&w->up);
    if (w->spans) {
        spans_fini(w->spans);
        free(w->spans);
        w->spans = NULL;
    }
    if (w->gateway) {
        free(w->gateway);
        w->gateway = NULL;
    }
    while (w->npark) /* only after a drain timeout: nothing else is left */
        close(park_pop(w));
    free(w->park);
    w->park = NULL;
    if (w->cfg->access_log)
        alog_fini(&w->alog);
    dispatch_fini(&w->dispatch);
    prime_state_destroy(w->prime);
    w->prime = NULL;
    prime_thread_fini();
    io_fini(&w->io);
}

void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct conn_pool *p = &w->pool;
    w->init_err = worker_setup(w);
    pthread_barrier_wait(&worker_start_barrier); /* the server reports set-up errors */
    pthread_barrier_wait(&worker_start_barrier); /* ... and lets us run, or not */
    if (w->init_err || atomic_load(&w->srv->draining) == 2)
        return NULL;

    struct io_event evs[MAX_EVENTS];
    accept_update(w);
    for (;;) {
        int timeout = dispatch_wait_timeout(&w->dispatch, next_timeout_ms(w));
        if (timeout && !p->drain_seen && draining(w))
            timeout = 0;
        int n = io_wait(&w->io, evs, MAX_EVENTS, timeout);
        dispatch_woke(&w->dispatch);
        update_clock(w);
        if (n < 0 && n != -EINTR)
            log_msg("worker %u: wait: %s", w->id, strerror(-n));
        for (int i = 0; i < n; i++) {
            if (evs[i].op == IO_OP_ACCEPT)
                on_accept(w, &evs[i]);
            else if (evs[i].tag & UPSTREAM_TAG)
                upstream_on_event(&w->up, &evs[i]);
            else if (evs[i].op == IO_OP_RECV)
                conn_on_recv(p, evs[i].tag, evs[i].res);
            else if (evs[i].op == IO_OP_SEND)
                conn_on_send(p, evs[i].tag, evs[i].res);
            /* wakes: the checks below run anyway */
        }
        dispatch_poll(&w->dispatch);
        conn_pool_expire(p);
        upstream_expire(&w->up);
        if (w->spans)
            spans_poll(w->spans, p->drain_seen);
        if (w->npark)
            admit_parked(w);
        if (w->accept_retry_ms && p->now_ms >= w->accept_retry_ms)
            w->accept_retry_ms = 0;
        if (!p->drain_seen && draining(w))
            drain_begin(w);
        accept_update(w);
        if (p->drain_seen && p->nopen == 0 && w->npark == 0 && dispatch_out(&w->dispatch) == 0 &&
            (!w->spans || (w->spans->n == 0 && !spans_busy(w->spans)))) {
            /* the last spans have left; cut what the pool still holds */
            upstream_drain(&w->up);
            if (upstream_busy(&w->up) == 0)
                break;
        }
    }
    worker_teardown(w);
    return NULL;
}
