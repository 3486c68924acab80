/* server.h - the process: CPU discovery, one pinned worker per core, signals,
 * drain, join.
 */
#ifndef PRIMED_SERVER_H
#define PRIMED_SERVER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "resolver.h"

struct worker;
struct dispatch;

struct server {
    const struct config *cfg; /* not owned; lives for the whole run */
    unsigned nworkers;
    struct worker *workers;                        /* owned array of nworkers */
    struct dispatch *dispatch[CONFIG_WORKERS_MAX]; /* dispatch[i]: worker i's (dispatch.h's peers) */
    int cpus[CONFIG_WORKERS_MAX];                  /* cpus[i]: the CPU worker i is pinned to, -1 when unpinned */
    char cpu_list[256];                            /* for the ready line */
    int port;                                      /* the bound port */
    double start_time;                             /* unix seconds */
    _Atomic int draining;       /* 0 serving, 1 draining, 2 start-up failed; set by the main thread */
    _Atomic uint64_t example_n; /* Hello_N: process-wide, never repeats */
    _Atomic uint64_t ping_n;
    _Atomic int running;        /* workers that have not exited */
    const char *pod, *ns, *app; /* /ping: from POD_NAME, POD_NAMESPACE, APP_NAME */
    char revision_hdr[160];     /* "K-Revision: ...\r\n" or "" */
    _Atomic uint64_t event_n;   /* event ids when built without the store */
    struct store *store;        /* the event store, owned; NULL when built without it */
    struct resolver resolver;   /* upstream names, owned */
    struct resolver_target *callme_target, *zipkin_target; /* in resolver, or NULL */
    struct resolver_target *catalog_target, *inventory_target; /* in resolver, or NULL (no gateway) */
    struct catalog *catalog;    /* the products of /api/catalog and /api/inventory, owned */
};

/* Runs the server until SIGTERM/SIGINT and the drain. Returns the exit status
 * (0 after a clean drain). Dies with a clear message when it cannot start. */
int server_run(const struct config *cfg);

#endif
