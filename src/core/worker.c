/* worker.c - one pinned thread: set-up, its listener and accept control, its
 * clock, and the loop that hands each completion to its owner.
 *
 * A worker touches only its own connections (conn.c) and tasks (dispatch.c);
 * what it shares with other workers is dispatch's, as dispatch.h says, and
 * the draining flag. Connections past its limit are parked, never reset.
 * Nothing here knows HTTP or the app: the app's per-worker work runs through
 * the hooks in all->hooks, its completions through the owners it registers.
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

#include "clock.h"
#include "log.h"

#define MAX_EVENTS 256

static bool draining(const struct worker *w)
{
    return atomic_load_explicit(&w->all->draining, memory_order_relaxed) != 0;
}

/* ---- accepting ------------------------------------------------------------ */

/* Arms or cancels the accept to match what the worker wants: called after
 * anything that may change it (once per loop turn at least). */
static void accept_update(struct worker *w)
{
    struct conn_pool *p = &w->pool;
    bool want = w->want_accept && !p->drain_seen && !dispatch_throttled(&w->dispatch) &&
                p->nopen + w->npark < w->opts->max_open && p->now_ms >= w->accept_retry_ms;
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
    return w->pool.nopen < w->opts->max_open && conn_pool_has_slot(&w->pool);
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
    while (w->lfd >= 0) { /* listeners are non-blocking (app/process.c) */
        int fd = accept4(w->lfd, NULL, NULL, SOCK_CLOEXEC | (w->io.kind == IO_EPOLL ? SOCK_NONBLOCK : 0));
        if (fd < 0)
            break;
        take_connection(w, fd);
    }
    if (w->lfd >= 0 && (w->id == 0 || !w->opts->shared_listener))
        close(w->lfd); /* a shared listener is worker 0's to close */
    w->lfd = -1;
    admit_parked(w);
    conn_pool_drain(&w->pool);
    w->all->hooks->drain(w);
}

/* ---- time ----------------------------------------------------------------- */

/* Returns whether a new second began (the Date header changed). */
static bool update_clock(struct worker *w)
{
    struct conn_pool *p = &w->pool;
    p->now_ms = clock_mono_ns() / 1000000u;
    time_t now = clock_wall_s();
    if (now == w->date_sec)
        return false;
    w->date_sec = now;
    resp_date(p->date, now);
    return true;
}

static int next_timeout_ms(struct worker *w)
{
    uint64_t now = w->pool.now_ms;
    uint64_t next = now + 1000 - (now % 1000); /* the Date header's second */
    next = conn_pool_next_deadline(&w->pool, next);
    next = w->all->hooks->next_deadline(w, next);
    if (w->accept_retry_ms > now && w->accept_retry_ms < next)
        next = w->accept_retry_ms;
    return next > now ? (int)(next - now) : 0;
}

int worker_own(struct worker *w, worker_event_fn *fn, void *ctx)
{
    if (w->nowners == 0)
        w->nowners = SLOTS_OWNER_CONN + 1; /* the core's own connections */
    if (w->nowners >= SLOTS_OWNERS)
        return -ENOSPC;
    unsigned owner = w->nowners++;
    w->owners[owner].fn = fn;
    w->owners[owner].ctx = ctx;
    return (int)owner;
}

/* dispatch's resume hook: the throttle lifted. */
static void on_resume(void *ctx)
{
    conn_pool_resume(ctx);
}

/* ---- set-up and the loop --------------------------------------------------- */

static int setup_fail(struct worker *w, int err, const char *what)
{
    snprintf(w->init_why, sizeof(w->init_why), "%s", what);
    return err;
}

/* Names and pins the thread to its CPU. */
static int pin(struct worker *w)
{
    char name[16];
    snprintf(name, sizeof(name), "primed-w%u", w->id);
    pthread_setname_np(pthread_self(), name); /* top -H, /proc/PID/task/ * /comm */
    if (w->cpu < 0)
        return 0;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(w->cpu, &set);
    int r = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
    if (r) {
        snprintf(w->init_why, sizeof(w->init_why), "pin to CPU %d: %s", w->cpu, strerror(r));
        return -r;
    }
    return 0;
}

static int open_backend(struct worker *w)
{
    const struct worker_opts *o = w->opts;
    struct rlimit rl;
    int max_fd = 65536;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        max_fd = (int)rl.rlim_cur;
    char why[160];
    /* in flight at once: a receive and a send per slot, the app's
     * operations, the accept, the wake */
    int r = io_init(&w->io, o->io, 1024, 2 * o->max_open + o->app_ops + 8, max_fd, o->io_tune, why, sizeof(why));
    if (r) {
        snprintf(w->init_why, sizeof(w->init_why), "%s: %s%s", o->io == IO_EPOLL ? "epoll" : "io_uring_setup",
                 strerror(-r),
                 r == -ENOSYS || r == -EPERM || r == -EACCES
                     ? " (blocked by seccomp or sysctl; run with --io=epoll or the profile in container/seccomp.json)"
                     : "");
        return r;
    }
    if (why[0] && w->id == 0)
        log_msg("%s", why);
    return 0;
}

static int open_dispatch(struct worker *w)
{
    const struct worker_opts *o = w->opts;
    w->dispatch.io = &w->io;
    if (dispatch_init(&w->dispatch, o->dispatch, o->queue_max, o->split, w->id, w->all->dispatch, w->all->n))
        return setup_fail(w, -ENOMEM, "allocate the task queue: out of memory");
    w->dispatch.hooks.resume = on_resume;
    w->dispatch.hooks.resume_ctx = &w->pool;
    return 0;
}

static int open_pool(struct worker *w)
{
    struct conn_pool *p = &w->pool;
    p->lim = w->opts->lim;
    p->io = &w->io;
    p->throttle = &w->dispatch.throttled;
    p->id = w->id;
    p->nslots = w->opts->max_open;
    w->park = malloc(PARK_MAX * sizeof(*w->park));
    if (conn_pool_init(p) || !w->park) {
        snprintf(w->init_why, sizeof(w->init_why), "allocate %u connection slots: out of memory", p->nslots);
        return -ENOMEM;
    }
    return 0;
}

static int worker_setup(struct worker *w)
{
    int r;
    if ((r = pin(w)) || (r = open_backend(w)) || (r = open_dispatch(w)))
        return r;
    update_clock(w);
    if ((r = w->all->hooks->init(w)))
        return r;
    if ((r = open_pool(w)))
        return r;
    w->want_accept = w->lfd >= 0;
    return 0;
}

static void worker_teardown(struct worker *w)
{
    conn_pool_fini(&w->pool);
    w->all->hooks->fini(w);
    while (w->npark) /* only after a drain timeout: nothing else is left */
        close(park_pop(w));
    free(w->park);
    w->park = NULL;
    dispatch_fini(&w->dispatch);
    io_fini(&w->io);
}

/* Hands each completion to its owner: the accept to the worker, a tag to
 * the table of its owner (the connections, or one the app registered). */
static void hand_out(struct worker *w, const struct io_event *evs, int n)
{
    for (int i = 0; i < n; i++) {
        const struct io_event *ev = &evs[i];
        if (ev->op == IO_OP_ACCEPT) {
            on_accept(w, ev);
        } else if (ev->op == IO_OP_WAKE) {
            /* wakes: the checks after the batch run anyway */
        } else {
            unsigned owner = slots_owner(ev->tag);
            if (owner == SLOTS_OWNER_CONN)
                conn_on_event(&w->pool, ev);
            else if (w->owners[owner].fn)
                w->owners[owner].fn(w->owners[owner].ctx, ev);
        }
    }
}

/* Drained, no connection, nothing parked, no task out, and the app idle. */
static bool finished(struct worker *w)
{
    struct conn_pool *p = &w->pool;
    return p->drain_seen && p->nopen == 0 && w->npark == 0 && dispatch_out(&w->dispatch) == 0 &&
           !w->all->hooks->busy(w);
}

void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct conn_pool *p = &w->pool;
    w->init_err = worker_setup(w);
    pthread_barrier_wait(&w->all->start); /* the server reports set-up errors */
    pthread_barrier_wait(&w->all->start); /* ... and lets us run, or not */
    if (w->init_err || atomic_load(&w->all->draining) == 2)
        return NULL;

    struct io_event evs[MAX_EVENTS];
    accept_update(w);
    for (;;) {
        int timeout = dispatch_wait_timeout(&w->dispatch, next_timeout_ms(w));
        if (timeout && !p->drain_seen && draining(w))
            timeout = 0;
        int n = io_wait(&w->io, evs, MAX_EVENTS, timeout);
        dispatch_woke(&w->dispatch);
        bool second = update_clock(w);
        if (n < 0 && n != -EINTR)
            log_msg("worker %u: wait: %s", w->id, strerror(-n));
        hand_out(w, evs, n);
        dispatch_poll(&w->dispatch);
        conn_pool_expire(p);
        w->all->hooks->poll(w, second);
        if (w->npark)
            admit_parked(w);
        if (w->accept_retry_ms && p->now_ms >= w->accept_retry_ms)
            w->accept_retry_ms = 0;
        if (!p->drain_seen && draining(w))
            drain_begin(w);
        accept_update(w);
        if (finished(w))
            break;
    }
    worker_teardown(w);
    return NULL;
}
