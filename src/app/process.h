/* process.h - the process: CPU discovery, one pinned worker per core (the
 * core's workers, with the app's hooks), the app's process-wide state,
 * listeners, signals, drain, join.
 */
#ifndef PRIMED_PROCESS_H
#define PRIMED_PROCESS_H

#include "app.h"
#include "config.h"
#include "resolver.h"
#include "worker.h"

struct server {
    const struct config *cfg; /* not owned; lives for the whole run */
    struct workers all;       /* what the workers share */
    struct worker_opts opts;  /* the workers' settings, from cfg */
    struct worker *workers;   /* owned array of all.n */
    struct app app;           /* the app's process-wide state */
    struct resolver resolver; /* the upstreams' names (app.resolver), looked up on its own thread */
    int cpus[WORKERS_MAX];    /* cpus[i]: the CPU worker i is pinned to, -1 when unpinned */
    unsigned quota;           /* the cgroup CPU quota, 0: none */
    char cpu_list[256];       /* for the ready line */
    int port;                 /* the bound port */
};

/* Runs the server until SIGTERM/SIGINT and the drain. Returns the exit status
 * (0 after a clean drain). Dies with a clear message when it cannot start. */
int server_run(const struct config *cfg);

#endif
