/* gateway_service.c - the gateway service (gateway_service.h). */
#include "gateway_service.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "config.h"
#include "metrics.h"
#include "resolver.h"
#include "upstreams.h"

static bool configured(const struct config *cfg)
{
    return cfg->catalog_url.host[0] && cfg->inventory_url.host[0];
}

static void gateway_service_start(struct app *a)
{
    if (configured(a->cfg)) {
        resolver_add(a->resolver, &a->cfg->catalog_url);
        resolver_add(a->resolver, &a->cfg->inventory_url);
    }
}

static int gateway_service_init(struct app_worker *aw)
{
    const struct config *cfg = aw->cfg;
    if (!configured(cfg))
        return 0;
    struct gateway *g = calloc(1, sizeof(*g));
    if (!g) {
        snprintf(aw->w->init_why, sizeof(aw->w->init_why), "allocate the gateway: out of memory");
        return -ENOMEM;
    }
    aw->service[SERVICE_GATEWAY] = g;
    int cat = upstreams_add(aw, "catalog", &cfg->catalog_url);
    int inv = cat < 0 ? cat : upstreams_add(aw, "inventory", &cfg->inventory_url);
    if (inv < 0)
        return inv;
    g->up = &upstreams_of(aw)->client;
    g->catalog_up = (unsigned)cat;
    g->inventory_up = (unsigned)inv;
    snprintf(g->catalog_path, sizeof(g->catalog_path), "%s/api/catalog", cfg->catalog_url.path);
    snprintf(g->inventory_path, sizeof(g->inventory_path), "%s/api/inventory/", cfg->inventory_url.path);
    g->now_ms = &aw->w->pool.now_ms;
    g->timeout_ms = cfg->upstream_timeout_ms;
    return 0;
}

static const char JSON[] = "application/json";

void gateway_answer(const struct answer_env *env, const struct http *h, int status, const char *json, size_t len,
                    const char *why, struct resp *r, char *body, size_t cap)
{
    bool ka = answer_keep_alive(env, h);
    if (status == 200) {
        *r = (struct resp){.status = 200, .ctype = JSON, .body = json, .body_len = len, .keep_alive = ka};
        return;
    }
    snprintf(body, cap, "%.400s\n", why ? why : "upstream failed");
    answer_text(r, status, body, ka);
}

void gateway_metrics_put(struct metrics_out *o, uint64_t fallbacks)
{
    metrics_put(o,
                "# HELP primed_gateway_fallbacks_total Products /api/products answered with \"availability\": null "
                "(their inventory call failed, timed out or answered no object).\n"
                "# TYPE primed_gateway_fallbacks_total counter\n"
                "primed_gateway_fallbacks_total %" PRIu64 "\n",
                fallbacks);
}

/* Only where /api/products is served. */
static void gateway_service_metrics(const struct app *a, struct metrics_out *o)
{
    if (!configured(a->cfg))
        return;
    uint64_t fallbacks = 0;
    for (unsigned i = 0; i < a->workers->n; i++) {
        struct app_worker *aw = a->w[i].app;
        struct gateway *g = aw ? gateway_of(aw) : NULL;
        if (g)
            fallbacks += metrics_ld(&g->fallbacks);
    }
    gateway_metrics_put(o, fallbacks);
}

const struct app_service gateway_service = {
    .name = "gateway",
    .start = gateway_service_start,
    .init = gateway_service_init,
    .metrics = gateway_service_metrics,
};
