/* worker.h - one pinned thread: its backend, listener, connections (conn.h),
 * dispatch (dispatch.h), clock and Date cache; the app's per-worker side
 * runs through the hooks it registers (struct worker_hooks).
 */
#ifndef PRIMED_WORKER_H
#define PRIMED_WORKER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "conn.h"
#include "dispatch.h"
#include "io.h"
#include "slots.h"

/* Workers per process at most. */
#define WORKERS_MAX 1024

struct worker;

/* The app's side of every worker, called on the worker's own thread. */
struct worker_hooks {
    /* After the worker's backend and dispatch are up, before its pool: set
     * w->pool.app and .stats, w->dispatch.stats, hooks.done and its work
     * (dispatch_set_work), w->app and the owners of the tags it uses
     * (worker_own). 0, or -errno with w->init_why set. */
    int (*init)(struct worker *w);
    void (*fini)(struct worker *w);
    /* The earliest deadline of the app's timers, or next. */
    uint64_t (*next_deadline)(struct worker *w, uint64_t next);
    /* After each batch of completions: fire what is due (second: the clock
     * entered a new second since the last call). */
    void (*poll)(struct worker *w, bool second);
    /* SIGTERM seen: stop taking new work of the app's own. */
    void (*drain)(struct worker *w);
    /* Drained and no connection left: whether the app still has work out
     * (the worker keeps running until it has none). */
    bool (*busy)(struct worker *w);
};

/* What the workers of a process share; set up before their threads start. */
struct workers {
    _Atomic int draining; /* 0 serving, 1 draining, 2 start-up failed; set by the main thread */
    _Atomic int running;  /* workers that have not exited */
    unsigned n;
    struct dispatch *dispatch[WORKERS_MAX]; /* dispatch[i]: worker i's (dispatch.h's peers) */
    pthread_barrier_t start;
    const struct worker_hooks *hooks;
    void *app; /* the app's process-wide state, for its hooks */
};

/* A worker's settings: read-only once the threads start. */
struct worker_opts {
    enum io_kind io;
    unsigned io_tune;  /* IO_TUNE_* */
    unsigned app_ops;  /* operations the app may have in flight at once (its upstream connections) */
    unsigned max_open; /* connections at once; accepts past it are parked */
    struct conn_limits lim;
    enum dispatch_mode dispatch;
    unsigned queue_max;
    bool split; /* share a job with idle peers when the app's work can (dispatch.h) */
    bool shared_listener; /* worker 0 owns the one listener */
};

typedef void worker_event_fn(void *ctx, const struct io_event *ev);

struct worker {
    struct workers *all;           /* not owned */
    const struct worker_opts *opts; /* not owned */
    unsigned id;
    int cpu; /* pinned CPU, or -1 */
    pthread_t thread;
    int lfd; /* listening socket, owned (worker 0's when shared), or -1 */
    struct io io;
    struct conn_pool pool;     /* its connections */
    struct dispatch dispatch;  /* its jobs; shared with the others as dispatch.h says */
    void *app;                 /* the app's per-worker state (hooks->init), the app's */
    struct {
        worker_event_fn *fn;
        void *ctx;
    } owners[SLOTS_OWNERS]; /* who takes the completions of each tag owner */
    unsigned nowners;       /* owners handed out (worker_own), SLOTS_OWNER_CONN's included */

    int *park; /* owned ring of accepted fds waiting for a slot */
    unsigned park_head, npark;
    bool want_accept;         /* the worker has a listener */
    bool accept_armed;        /* an accept is in flight */
    bool accept_stop_sent;    /* its cancel is in flight */
    uint64_t accept_retry_ms; /* EMFILE and friends: retry then */
    uint64_t accept_err_log_ms;
    long date_sec;

    int init_err; /* set by the thread before the start barrier */
    char init_why[200];
};

/* Thread entry: sets up the worker, waits twice on all->start (set-up
 * reported; run or not), runs until drained. arg is the struct worker.
 * Returns NULL. */
void *worker_main(void *arg);

/* A new tag owner whose completions go to fn(ctx, ev): the owner to put in
 * the tags (slots_init's owner), or -ENOSPC when all SLOTS_OWNERS are out.
 * From hooks->init. */
int worker_own(struct worker *w, worker_event_fn *fn, void *ctx);

#endif
