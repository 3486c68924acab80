/* worker.h - one pinned thread: its backend, listener, connections (conn.h),
 * dispatch (dispatch.h), clock and Date cache.
 */
#ifndef PRIMED_WORKER_H
#define PRIMED_WORKER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "conn.h"
#include "dispatch.h"
#include "handlers.h"
#include "io.h"
#include "log.h"
#include "metrics.h"
#include "server.h"
#include "spans.h"
#include "upstream.h"

struct worker {
    struct server *srv;       /* not owned */
    const struct config *cfg; /* not owned */
    unsigned id;
    int cpu; /* pinned CPU, or -1 */
    pthread_t thread;
    int lfd; /* listening socket, owned (worker 0's when shared) */
    struct io io;
    struct prime_state *prime; /* this thread's random state, owned */
    struct conn_pool pool;     /* its connections */
    struct dispatch dispatch;  /* its /example work; shared with the others as dispatch.h says */
    struct handler_env env;    /* the handlers' view of srv */
    struct upstream_client up; /* its calls to callme and the collector */
    struct spans *spans;       /* owned span exporter, or NULL (no --zipkin-url) */
    struct gateway *gateway;   /* owned /api/products fan-out state, or NULL (no --catalog-url) */
    struct fault fault;        /* --fault-*: what the pool draws from */

    unsigned max_open; /* connections at once (slots) */
    int *park;         /* owned ring of accepted fds waiting for a slot */
    unsigned park_head, npark;
    bool want_accept;         /* the worker has a listener */
    bool accept_armed;        /* an accept is in flight */
    bool accept_stop_sent;    /* its cancel is in flight */
    uint64_t accept_retry_ms; /* EMFILE and friends: retry then */
    uint64_t accept_err_log_ms;

    long date_sec;
    struct alog alog; /* access log, when enabled */

    int init_err; /* set by the thread before the start barrier */
    char init_why[200];

    struct metrics metrics; /* written by this worker only */
};

/* Thread entry: sets up the worker, waits on the start barrier, runs until
 * drained. arg is the struct worker. Returns NULL. */
void *worker_main(void *arg);

/* Start barrier shared by server.c and the workers. */
extern pthread_barrier_t worker_start_barrier;

#endif
