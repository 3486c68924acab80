/* scrape.c - GET /metrics: every worker's counters merged and rendered
 * (metrics.h) into a heap body, sent from there; at most SCRAPES_MAX bodies
 * alive per worker while their clients read them (503 past it), so a client
 * that does not read its scrape cannot make memory grow.
 *
 * owns: the route's answers and its count of bodies alive
 * (app_worker.route_state[ROUTE_METRICS]). never: the counters (each
 * worker's, metrics.h) or their names.
 */
#include "app.h"

#include <stdlib.h>

#include "build_info.h"
#include "config.h"
#include "metrics.h"

/* /metrics bodies (64 KiB buffers) alive at once per worker, while their
 * clients read them; one more scrape on the worker gets a 503. */
#define SCRAPES_MAX 4

/* One worker's: app_worker.route_state[ROUTE_METRICS]. */
struct scrapes {
    unsigned live; /* bodies not yet sent (<= SCRAPES_MAX) */
};

static void release_body(void *arg, char *data)
{
    struct scrapes *sc = arg;
    sc->live--;
    free(data);
}

/* The services' series, each service's own (services.h), in the table's order. */
static void services_series(const void *ctx, struct metrics_out *o)
{
    const struct app *a = ctx;
    each_service(sv) {
        if ((*sv)->metrics)
            (*sv)->metrics(a, o);
    }
}

/* Every worker's counters, merged (cold: a scrape, not a request). */
static int render(struct app_worker *aw, char **out)
{
    struct app *a = aw->app;
    const struct config *cfg = aw->cfg;
    struct metrics *ms[CONFIG_WORKERS_MAX];
    for (unsigned i = 0; i < a->workers->n; i++)
        ms[i] = app_metrics(a->w[i].app);
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
        .services = services_series,
        .services_ctx = a,
    };
    return metrics_scrape(ms, a->workers->n, &info, out);
}

/* The answer: the rendered scrape of len bytes (len < 0: -errno), or busy
 * (too many scrape bodies alive on this worker). Pure. */
static void scrape_answer(const struct answer_env *env, const struct http *h, const char *scrape, int len, bool busy,
                          struct resp *r)
{
    bool ka = answer_keep_alive(env, h);
    if (busy) {
        /* clients that do not read their scrape hold its body: a cap keeps
         * memory bounded (SCRAPES_MAX x 64 KiB a worker) */
        answer_text(r, 503, "too many /metrics responses in flight on this worker; retry\n", ka);
        return;
    }
    if (len < 0) {
        answer_text(r, 500, "metrics unavailable\n", ka);
        return;
    }
    *r = (struct resp){
        .status = 200,
        .ctype = "text/plain; version=0.0.4; charset=utf-8",
        .body = scrape,
        .body_len = (size_t)len,
        .keep_alive = ka,
    };
}

static void scrape_serve(struct app_worker *aw, struct app_req *q)
{
    struct scrapes *sc = aw->route_state[ROUTE_METRICS];
    struct resp r;
    char *body = NULL;
    int len = 0;
    bool busy = sc->live >= SCRAPES_MAX;
    if (!busy)
        len = render(aw, &body);
    scrape_answer(&aw->env, &q->conn->http, body, len, busy, &r);
    if (r.status != 200) {
        free(body);
        app_answer(q, &r);
        return;
    }
    sc->live++;
    conn_answer(q->conn, &r, &(struct conn_body){.data = body, .release = release_body, .arg = sc});
}

static int scrape_init(struct app_worker *aw)
{
    aw->route_state[ROUTE_METRICS] = calloc(1, sizeof(struct scrapes));
    return aw->route_state[ROUTE_METRICS] ? 0 : -1;
}

/* after the connections: no body is alive */
static void scrape_fini(struct app_worker *aw)
{
    free(aw->route_state[ROUTE_METRICS]);
    aw->route_state[ROUTE_METRICS] = NULL;
}

const struct app_route scrape_route = {.serve = scrape_serve, .init = scrape_init, .fini = scrape_fini};
