/* scrape.c - GET /metrics: every worker's counters merged and rendered
 * (metrics.h) into a heap body, sent from there; at most APP_SCRAPES_MAX
 * bodies alive per worker while their clients read them (503 past it), so a
 * client that does not read its scrape cannot make memory grow.
 */
#include "app.h"

#include <stdlib.h>

#include "build_info.h"
#if PRIMED_HAVE_STORE
#include "store.h"
#endif

static void release_body(void *arg, char *data)
{
    struct app_worker *aw = arg;
    aw->scrapes_live--;
    free(data);
}

/* Every worker's counters, merged (cold: a scrape, not a request). */
static int render(struct app_worker *aw, char **out)
{
    struct app *a = aw->app;
    const struct config *cfg = aw->cfg;
    struct metrics *ms[CONFIG_WORKERS_MAX];
    for (unsigned i = 0; i < a->workers->n; i++)
        ms[i] = &((struct app_worker *)a->w[i].app)->metrics;
    struct metrics_info info = {
        .version = PRIMED_VERSION,
        .profile = PRIMED_PROFILE,
        .dispatch = config_dispatch_name(cfg->dispatch),
        .cc = PRIMED_CC,
        .engine = prime_engine_name(cfg->engine),
        .io = aw->w->io.kind == IO_URING ? "io_uring" : "epoll",
        .queue_depth = dispatch_queue_depth(&aw->w->dispatch),
        .steal = aw->w->dispatch.steal,
        .start_time = a->start_time,
        .upstream_names = {[METRICS_UP_CALLME] = cfg->callme.host[0] ? "callme" : NULL,
                           [METRICS_UP_ZIPKIN] = cfg->zipkin.host[0] ? "zipkin" : NULL,
                           [METRICS_UP_CATALOG] = aw->gateway ? "catalog" : NULL,
                           [METRICS_UP_INVENTORY] = aw->gateway ? "inventory" : NULL},
        .upstream_results = upstream_result_labels(),
        .store = PRIMED_HAVE_STORE,
        .gateway = aw->gateway != NULL,
    };
#if PRIMED_HAVE_STORE
    if (a->store)
        info.store_dropped = store_dropped(a->store);
#endif
    if (aw->env.store_health) {
        info.store_health = 1;
        info.store_ready = handlers_store_ready(&aw->env);
        for (unsigned k = 0; k < STORE_FAULT_N; k++)
            info.store_failures[k] =
                atomic_load_explicit(&aw->env.store_health->failures[k], memory_order_relaxed);
    }
    return metrics_scrape(ms, a->workers->n, &info, out);
}

static void scrape_serve(struct app_worker *aw, struct app_req *q)
{
    struct resp r;
    char *body = NULL;
    int len = 0;
    bool busy = aw->scrapes_live >= APP_SCRAPES_MAX;
    if (!busy)
        len = render(aw, &body);
    handlers_metrics(&aw->env, &q->conn->http, body, len, busy, &r);
    if (r.status != 200) {
        free(body);
        app_answer(q, &r);
        return;
    }
    aw->scrapes_live++;
    conn_answer(q->conn, &r, &(struct conn_body){.data = body, .release = release_body, .arg = aw});
}

const struct app_route scrape_route = {.serve = scrape_serve};
