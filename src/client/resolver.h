/* resolver.h - names of upstreams to addresses, off the rings.
 *
 * The server resolves every upstream once at start-up (a failure is logged,
 * not fatal: Knative may create the callme Service after the caller) and a
 * resolver thread resolves again whatever a worker marks stale (a connect
 * failure), and every RESOLVER_REFRESH_MS in any case, so a Service whose
 * ClusterIP changed is followed. Workers only copy the current address under
 * a mutex held for that copy: never a getaddrinfo on a worker.
 */
#ifndef PRIMED_RESOLVER_H
#define PRIMED_RESOLVER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/socket.h>

#include "url.h"

#define RESOLVER_MAX        5 /* callme, the collector, catalog, inventory, the database */
#define RESOLVER_RETRY_MS   1000  /* an unresolved or stale name: tried again after this */
#define RESOLVER_REFRESH_MS 30000 /* a resolved one: looked up again after this */

struct resolver_target {
    const struct url *url; /* not owned */
    pthread_mutex_t mu;    /* guards addr, len, resolved, err */
    struct sockaddr_storage addr;
    socklen_t len;
    bool resolved;
    char err[128];      /* why the last lookup failed, "" when it did not */
    bool looked;        /* a lookup ran (resolver_add_later's: not yet) */
    _Atomic bool stale; /* set by a worker, cleared by the resolver thread */
};

struct resolver {
    struct resolver_target targets[RESOLVER_MAX];
    unsigned n;
    pthread_t thread;
    bool running;
    pthread_mutex_t mu; /* guards stop, with cv */
    pthread_cond_t cv;
    bool stop;
};

/* An empty resolver. */
void resolver_init(struct resolver *r);
/* Adds url and resolves it now (start-up). Returns the target (never NULL
 * while fewer than RESOLVER_MAX were added, else NULL); resolved or not,
 * its err says. */
struct resolver_target *resolver_add(struct resolver *r, const struct url *url);
/* Adds url without looking it up: the resolver thread does, on its first
 * pass (start-up never waits on this name's DNS). Same returns. */
struct resolver_target *resolver_add_later(struct resolver *r, const struct url *url);
/* Starts the thread that keeps the targets fresh. Returns 0 or -errno. */
int resolver_start(struct resolver *r);
/* Stops and joins it, destroys the targets. */
void resolver_fini(struct resolver *r);

/* Copies the target's address and port into *out. Returns false when the
 * name is not resolved (yet). */
bool resolver_get(struct resolver_target *t, struct sockaddr_storage *out, socklen_t *len);
/* Why the target is not resolved ("" once it is), into out (cap bytes). */
void resolver_why(struct resolver_target *t, char *out, size_t cap);
/* Asks for a new lookup soon (a connect to the address failed). */
void resolver_stale(struct resolver_target *t);

#endif
