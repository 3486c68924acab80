/* upstreams.h - the upstream client as a service (services.h): each
 * worker's one client (client/upstream.h) with a pool per upstream the
 * services and routes call, each pool counted under its role's name
 * (primed_upstream_*). callme's pool is added here (the chain's route calls
 * it); the span exporter and the gateway add their own at their init.
 *
 * owns: a worker's client, its pools' counters and role names, which
 * upstream is callme's. never: a call (its caller's), a name lookup (the
 * process's resolver, struct app).
 */
#ifndef PRIMED_UPSTREAMS_H
#define PRIMED_UPSTREAMS_H

#include "app.h"
#include "upstream.h"

/* One worker's: app_worker.service[SERVICE_UPSTREAMS]. */
struct upstreams {
    struct upstream_client client;
    struct upstream_stats stats[UPSTREAM_MAX]; /* by pool */
    const char *names[UPSTREAM_MAX];           /* each pool's role: a label */
    int callme;                                /* callme's pool, or -1 */
};

static inline struct upstreams *upstreams_of(struct app_worker *aw)
{
    return aw->service[SERVICE_UPSTREAMS];
}

/* At a service's init (before the client opens): a pool for url (a URL of
 * the config, which the process's resolver was given at its start) counted
 * as role. Returns its index, or -errno with aw->w->init_why set. */
int upstreams_add(struct app_worker *aw, const char *role, const struct url *url);

/* The primed_upstream_* series of n workers' clients (each the same pools in
 * the same order), summed, into o. results: UPSTREAM__RESULTS labels. */
void upstreams_metrics_put(struct metrics_out *o, struct upstreams *const *ups, unsigned n);

#endif
