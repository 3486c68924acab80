/* upstreams.c - the upstream client service (upstreams.h): one client a
 * worker, opened once every service has added its pools. */
#include "upstreams.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "build_info.h"
#include "config.h"
#include "metrics.h"
#include "resolver.h"

/* The process's resolver target of url: the one added for it at start-up. */
static struct resolver_target *target_of(struct resolver *r, const struct url *url)
{
    for (unsigned i = 0; r && i < r->n; i++)
        if (r->targets[i].url == url)
            return &r->targets[i];
    return NULL;
}

int upstreams_add(struct app_worker *aw, const char *role, const struct url *url)
{
    struct upstreams *u = upstreams_of(aw);
    struct resolver_target *t = target_of(aw->app->resolver, url);
    unsigned i = u->client.nups;
    int r = t && i < UPSTREAM_MAX ? upstream_add(&u->client, url, t, &u->stats[i]) : -ENOSPC;
    if (r < 0) {
        snprintf(aw->w->init_why, sizeof(aw->w->init_why), "upstream %s: %s", role,
                 t ? "no pool left" : "its name was not given to the resolver");
        return r;
    }
    u->names[r] = role;
    return r;
}

/* callme's name goes to the resolver (the chain's /caller/ping calls it). */
static void upstreams_start(struct app *a)
{
    if (a->cfg->callme.host[0])
        resolver_add(a->resolver, &a->cfg->callme);
}

static int upstreams_init(struct app_worker *aw)
{
    const struct config *cfg = aw->cfg;
    struct upstreams *u = calloc(1, sizeof(*u));
    if (!u) {
        snprintf(aw->w->init_why, sizeof(aw->w->init_why), "allocate the upstream client: out of memory");
        return -ENOMEM;
    }
    aw->service[SERVICE_UPSTREAMS] = u;
    u->client.io = &aw->w->io;
    u->client.now_ms = &aw->w->pool.now_ms;
    u->client.max_conns = cfg->upstream_conns;
    u->client.timeout_ms = cfg->upstream_timeout_ms;
    u->client.user_agent = "primed/" PRIMED_VERSION;
    u->callme = -1;
    if (cfg->callme.host[0] && (u->callme = upstreams_add(aw, "callme", &cfg->callme)) < 0)
        return u->callme;
    return 0;
}

/* Every pool is added: the client's connections and its tag owner. */
static int upstreams_open(struct app_worker *aw)
{
    struct upstreams *u = upstreams_of(aw);
    int owner = worker_own(aw->w, (worker_event_fn *)upstream_on_event, &u->client);
    if (owner < 0) {
        snprintf(aw->w->init_why, sizeof(aw->w->init_why), "the upstream client: no tag owner left");
        return owner;
    }
    u->client.owner = (uint8_t)owner;
    if (upstream_client_init(&u->client)) {
        snprintf(aw->w->init_why, sizeof(aw->w->init_why), "allocate the upstream connections: out of memory");
        return -ENOMEM;
    }
    return 0;
}

static void upstreams_fini(struct app_worker *aw)
{
    struct upstreams *u = upstreams_of(aw);
    if (u)
        upstream_client_fini(&u->client);
}

static void upstreams_poll(struct app_worker *aw, bool second)
{
    upstream_expire(&upstreams_of(aw)->client);
}

static uint64_t upstreams_next_deadline(struct app_worker *aw, uint64_t next)
{
    return upstream_next_deadline(&upstreams_of(aw)->client, next);
}

static void upstreams_drain(struct app_worker *aw)
{
    upstream_drain(&upstreams_of(aw)->client);
}

static bool upstreams_busy(struct app_worker *aw)
{
    struct upstreams *u = upstreams_of(aw);
    upstream_drain(&u->client); /* cut what the pool still holds */
    return upstream_busy(&u->client) != 0;
}

void upstreams_metrics_put(struct metrics_out *o, struct upstreams *const *ups, unsigned n)
{
    unsigned nups = n ? ups[0]->client.nups : 0;
    if (!nups)
        return;
    const char *const *results = upstream_result_labels();
    metrics_put(o, "# HELP primed_upstream_calls_total Calls to upstreams, by upstream role and how they ended.\n"
                   "# TYPE primed_upstream_calls_total counter\n");
    for (unsigned p = 0; p < nups; p++) {
        for (int r = 0; r < UPSTREAM__RESULTS; r++) {
            uint64_t calls = 0;
            for (unsigned w = 0; w < n; w++)
                calls += metrics_ld(&ups[w]->stats[p].calls[r]);
            metrics_put(o, "primed_upstream_calls_total{upstream=\"%s\",result=\"%s\"} %" PRIu64 "\n",
                        ups[0]->names[p], results[r], calls);
        }
    }
    metrics_put(o, "# HELP primed_upstream_call_duration_seconds Time from a call's start to its end, any result.\n"
                   "# TYPE primed_upstream_call_duration_seconds histogram\n");
    for (unsigned p = 0; p < nups; p++) {
        struct metrics_histo h = {0};
        for (unsigned w = 0; w < n; w++)
            metrics_histo_add(&h, &ups[w]->stats[p].seconds);
        metrics_histo_end(&h);
        char labels[64];
        snprintf(labels, sizeof(labels), "upstream=\"%s\"", ups[0]->names[p]);
        metrics_put_histo(o, "primed_upstream_call_duration_seconds", labels, h.cum, h.sum_ns, h.count);
    }
}

static void upstreams_metrics(const struct app *a, struct metrics_out *o)
{
    struct upstreams *ups[CONFIG_WORKERS_MAX];
    unsigned n = 0;
    for (unsigned i = 0; i < a->workers->n; i++) {
        struct app_worker *aw = a->w[i].app;
        if (aw && aw->service[SERVICE_UPSTREAMS])
            ups[n++] = aw->service[SERVICE_UPSTREAMS];
    }
    upstreams_metrics_put(o, ups, n);
}

const struct app_service upstreams_service = {
    .name = "upstream client",
    .start = upstreams_start,
    .init = upstreams_init,
    .open = upstreams_open,
    .fini = upstreams_fini,
    .poll = upstreams_poll,
    .next_deadline = upstreams_next_deadline,
    .drain = upstreams_drain,
    .busy = upstreams_busy,
    .metrics = upstreams_metrics,
};
