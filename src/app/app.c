/* app.c - the app on the core (app.h): one worker's app state, the route
 * table, and the hooks the core calls for every request and response.
 *
 * Owns: a worker's upstream client, span exporter, gateway settings, events,
 * held requests, fault draws, access log and metrics, and the per-connection
 * request records. Runs on its worker's thread only. Never touches a socket
 * or a connection's buffers: it answers through conn_answer() and waits
 * through conn_wait(). Knows a route only by its row (route.h) and its module
 * (struct app_route): never its answers or its state.
 */
#include "app.h"

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "build_info.h"
#include "clock.h"
#include "gateway.h"
#include "spans.h"
#if PRIMED_HAVE_PG
#include "pg.h"
#endif

/* ---- the route table --------------------------------------------------- */

#define X_MODULE(id, path, allow, module, flags) [id] = &module,
static const struct app_route *const routes[ROUTE__COUNT] = {ROUTES(X_MODULE)};
#undef X_MODULE

#define each_route(rt) \
    for (const struct app_route *const *rt = routes; rt < routes + ROUTE__COUNT; rt++)

/* ---- answers ----------------------------------------------------------- */

void app_answer(struct app_req *q, struct resp *r)
{
    conn_answer(q->conn, r, NULL);
}

enum handler_action app_answer_now(const struct handler_env *env, const struct http *h, const struct route_result *rt,
                                   struct resp *r, char *body, size_t cap)
{
    if (rt->status) {
        handlers_refusal(env, h, rt, r, body, cap);
        return HANDLER_RESPOND;
    }
    if (h->req.method == HTTP_OPTIONS) {
        handlers_options(env, h, rt, r);
        return HANDLER_RESPOND;
    }
    const struct app_route *m = routes[rt->id];
    return m->answer ? m->answer(env, h, rt, r, body, cap) : HANDLER_ROUTE;
}

void app_serve(struct app_worker *aw, struct app_req *q)
{
    struct resp r;
    char body[HANDLERS_BODY_MAX];
    switch (app_answer_now(&aw->env, &q->conn->http, &q->route, &r, body, sizeof(body))) {
    case HANDLER_RESPOND:
        conn_answer(q->conn, &r, NULL);
        break;
    case HANDLER_LASTING:
        conn_answer(q->conn, &r, &(struct conn_body){.data = (char *)r.body});
        break;
    case HANDLER_ROUTE:
        if (routes[q->route.id]->serve) {
            routes[q->route.id]->serve(aw, q);
            break;
        }
        handlers_text(&r, 404, "not found\n", handlers_keep_alive(&aw->env, &q->conn->http));
        conn_answer(q->conn, &r, NULL);
        break;
    }
}

void app_span(struct app_worker *aw, struct app_req *q, enum zipkin_kind kind, uint64_t id, const char *parent,
              uint64_t start_us, uint64_t dur_us, int status, const char *error)
{
    const struct http_req *rq = &q->conn->http.req;
    struct zipkin_span z = {
        .kind = kind,
        .name = route_name((enum route_id)q->route.id),
        .service = aw->env.app,
        .remote = kind == ZIPKIN_CLIENT ? aw->env.callme : NULL,
        .timestamp_us = start_us,
        .duration_us = dur_us ? dur_us : 1,
        .method = rq->has_method ? llhttp_method_name((llhttp_method_t)rq->method) : NULL,
        .path = route_name((enum route_id)q->route.id),
        .status = status,
        .error = error,
    };
    snprintf(z.trace_id, sizeof(z.trace_id), "%s", q->tr.trace_id);
    snprintf(z.id, sizeof(z.id), "%016" PRIx64, id ? id : 1);
    snprintf(z.parent_id, sizeof(z.parent_id), "%s", parent);
    spans_add(aw->spans, &z);
}

/* ---- the core's hooks: a request's head, the request, its response ------ */

/* Routes the head; true when the route reads the body (its body hook). */
static bool on_head(void *ctx, struct conn *c, const struct http_req *rq, const char *url, size_t len)
{
    struct app_worker *aw = ctx;
    struct app_req *q = &aw->reqs[conn_index(c)];
    q->conn = c;
    route_match(rq->method, url, len, aw->cfg->bits, &q->route);
    const struct app_route *m = routes[q->route.id];
    if (m->enabled && !m->enabled(aw->cfg)) {
        /* a route behind a flag that is off: an unknown path */
        q->route.id = ROUTE_OTHER;
        q->route.status = 404;
        m = routes[ROUTE_OTHER];
    }
    q->fault_path = aw->faults && route_has_prefix(url, len, aw->cfg->fault_path);
    return m->body && q->route.status == 0 && rq->method != HTTP_GET && rq->method != HTTP_HEAD &&
           rq->method != HTTP_OPTIONS;
}

static int on_body(void *ctx, struct conn *c, const char *at, size_t len)
{
    struct app_worker *aw = ctx;
    struct app_req *q = &aw->reqs[conn_index(c)];
    return routes[q->route.id]->body(aw, q, at, len);
}

static void on_dropped(void *ctx, struct conn *c)
{
    struct app_worker *aw = ctx;
    struct app_req *q = &aw->reqs[conn_index(c)];
    if (routes[q->route.id]->drop)
        routes[q->route.id]->drop(aw, q);
}

/* --fault-abort: q is answered with status instead of being served. */
static void fault_abort(struct app_worker *aw, struct app_req *q, int status)
{
    struct resp r;
    stats_add(&aw->metrics.faults[METRICS_FAULT_ABORT], 1);
    handlers_fault_abort(&aw->env, &q->conn->http, status, &r);
    app_answer(q, &r);
}

/* hold_fire_fn: a held request's delay is over. */
static void on_held(void *ctx, struct hold *h, int abort_status)
{
    struct app_worker *aw = ctx;
    struct app_req *q = (struct app_req *)((char *)h - offsetof(struct app_req, held));
    if (abort_status)
        fault_abort(aw, q, abort_status);
    else
        app_serve(aw, q);
}

static void on_request(void *ctx, struct conn *c)
{
    struct app_worker *aw = ctx;
    struct app_req *q = &aw->reqs[conn_index(c)];
    uint8_t route = q->route.id;
    unsigned flags = route_flags((enum route_id)route);
    /* a new trace for the chain's routes, which call or are called */
    bool start_trace = flags & ROUTE_F_NEW_TRACE;
    q->wall_us = aw->spans ? clock_wall_us() : 0;
    handlers_trace(&c->http.req, &aw->rng, start_trace, &q->tr, &q->span);
    if (q->route.status == 400)
        stats_add(&aw->metrics.conn.bad[BAD_QUERY], 1);
    if (aw->faults) {
        unsigned delay;
        int abort_status;
        uint64_t r1 = handlers_rand(&aw->rng), r2 = handlers_rand(&aw->rng);
        fault_draw(&aw->fault, q->fault_path && !(flags & ROUTE_F_QUIET), r1, r2, &delay, &abort_status);
        if (delay) {
            stats_add(&aw->metrics.faults[METRICS_FAULT_DELAY], 1);
            hold_start(&aw->held, &q->held, c, aw->w->pool.now_ms, delay, abort_status);
            return;
        }
        if (abort_status) {
            fault_abort(aw, q, abort_status);
            return;
        }
    }
    app_serve(aw, q);
}

static void on_finish(void *ctx, struct conn *c, struct resp *r, uint64_t dur, enum bad_reason refused)
{
    struct app_worker *aw = ctx;
    struct app_req *q = &aw->reqs[conn_index(c)];
    const struct http_req *rq = &c->http.req;
    if (refused != BAD_NONE) {
        /* never routed: counted under "other"; its trace headers still
         * continue in the answer */
        q->conn = c;
        q->route.id = ROUTE_OTHER;
        handlers_trace(rq, &aw->rng, false, &q->tr, &q->span);
    }
    static __thread char extra[RESP_EXTRA_MAX];
    handlers_headers(&aw->env, &q->tr, q->span, extra, sizeof(extra));
    r->extra = extra[0] ? extra : NULL;

    uint8_t route = q->route.id;
    int si = metrics_status_index(r->status);
    if (si >= 0)
        stats_add(&aw->metrics.requests[route][si], 1);
    stats_observe(&aw->metrics.req_seconds[route], dur);
    if (aw->cfg->access_log)
        handlers_access_log(&aw->alog, aw->iso_time, aw->w->id, rq, (enum route_id)route, r->status,
                            r->head ? 0 : r->body_len, dur, &q->tr);
    if (aw->spans && (q->tr.flags & 1) && q->tr.valid && !(route_flags((enum route_id)route) & ROUTE_F_QUIET))
        app_span(aw, q, ZIPKIN_SERVER, q->span, q->tr.parent_id, q->wall_us, dur / 1000, r->status, NULL);
}

/* ---- the worker's hooks -------------------------------------------------- */

static void set_iso_time(struct app_worker *aw)
{
    time_t now = clock_wall_s();
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(aw->iso_time, sizeof(aw->iso_time), "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static int fail(struct worker *w, int err, const char *what)
{
    snprintf(w->init_why, sizeof(w->init_why), "%s", what);
    return err;
}

/* The upstream client: callme's, the collector's, catalog's and inventory's pools. */
static int open_upstreams(struct app_worker *aw)
{
    struct app *a = aw->app;
    const struct config *cfg = aw->cfg;
    struct metrics *m = &aw->metrics;
    aw->up.io = &aw->w->io;
    aw->up.now_ms = &aw->w->pool.now_ms;
    aw->up.max_conns = cfg->upstream_conns;
    aw->up.timeout_ms = cfg->upstream_timeout_ms;
    aw->up.user_agent = "primed/" PRIMED_VERSION;
    aw->callme_up = -1;
    int zipkin_up = -1;
    if (a->callme_target)
        aw->callme_up = upstream_add(&aw->up, &cfg->callme, a->callme_target, &m->upstream[METRICS_UP_CALLME]);
    if (a->zipkin_target)
        zipkin_up = upstream_add(&aw->up, &cfg->zipkin, a->zipkin_target, &m->upstream[METRICS_UP_ZIPKIN]);
    if (a->catalog_target) {
        struct gateway *g = calloc(1, sizeof(*g));
        if (!g)
            return fail(aw->w, -ENOMEM, "allocate the gateway: out of memory");
        aw->gateway = g;
        g->up = &aw->up;
        g->catalog_up =
            (unsigned)upstream_add(&aw->up, &cfg->catalog_url, a->catalog_target, &m->upstream[METRICS_UP_CATALOG]);
        g->inventory_up = (unsigned)upstream_add(&aw->up, &cfg->inventory_url, a->inventory_target,
                                                 &m->upstream[METRICS_UP_INVENTORY]);
        snprintf(g->catalog_path, sizeof(g->catalog_path), "%s/api/catalog", cfg->catalog_url.path);
        snprintf(g->inventory_path, sizeof(g->inventory_path), "%s/api/inventory/", cfg->inventory_url.path);
        g->now_ms = &aw->w->pool.now_ms;
        g->timeout_ms = cfg->upstream_timeout_ms;
        g->metrics = m;
    }
    int owner = worker_own(aw->w, (worker_event_fn *)upstream_on_event, &aw->up);
    if (owner < 0)
        return fail(aw->w, owner, "the upstream client: no tag owner left");
    aw->up.owner = (uint8_t)owner;
    if (upstream_client_init(&aw->up))
        return fail(aw->w, -ENOMEM, "allocate the upstream connections: out of memory");
    if (zipkin_up >= 0) {
        aw->spans = calloc(1, sizeof(*aw->spans));
        if (aw->spans) {
            aw->spans->client = &aw->up;
            aw->spans->up = (unsigned)zipkin_up;
            aw->spans->metrics = m;
            aw->spans->now_ms = &aw->w->pool.now_ms;
            aw->spans->worker = aw->w->id;
        }
        if (!aw->spans || spans_init(aw->spans))
            return fail(aw->w, -ENOMEM, "allocate the span exporter: out of memory");
    }
    return 0;
}

#if PRIMED_HAVE_PG
/* A completion of the PostgreSQL store's tags (its owner is handed out
 * before the store exists). */
static void on_store_event(void *ctx, const struct io_event *ev)
{
    struct app_worker *aw = ctx;
    pgstore_on_event(aw->pg, ev);
}
#endif

static int app_init(struct worker *w)
{
    struct app *a = w->all->app;
    const struct config *cfg = a->cfg;
    struct app_worker *aw = calloc(1, sizeof(*aw));
    if (!aw)
        return fail(w, -ENOMEM, "allocate the app: out of memory");
    w->app = aw;
    aw->app = a;
    aw->w = w;
    aw->cfg = cfg;
    aw->env = (struct handler_env){
        .draining = &w->all->draining,
        .example_n = &a->example_n,
        .ping_n = &a->ping_n,
        .app = a->name,
        .pod = a->pod,
        .ns = a->ns,
        .revision_hdr = a->revision_hdr,
        .store_name = a->store_name,
        .db_timeout_ms = cfg->db_timeout_ms,
        .callme = cfg->callme.host[0] ? cfg->callme.authority : NULL,
        .catalog = a->catalog,
        .gateway = a->catalog_target != NULL,
        .echo = cfg->echo_route,
    };
    w->pool.app = (struct conn_app){.head = on_head,
                                    .body = on_body,
                                    .dropped = on_dropped,
                                    .request = on_request,
                                    .finish = on_finish,
                                    .ctx = aw};
    w->pool.keep = &trace_keep; /* the parser keeps the trace headers, and no other */
    w->pool.stats = &aw->metrics.conn;
    w->dispatch.stats = &aw->metrics.dispatch;
    if (cfg->access_log && alog_init(&aw->alog, STDOUT_FILENO, 64 * 1024))
        return fail(w, -ENOMEM, "access log buffer: out of memory");
    set_iso_time(aw);
    int r = open_upstreams(aw);
    if (r)
        return r;
    aw->faults = fault_init(&aw->fault, cfg);
#if PRIMED_HAVE_STORE
    if (a->store)
        aw->env.store_health = store_health_of(a->store);
#endif
#if PRIMED_HAVE_PG
    if (a->pg) {
        /* the first worker writes the catalog's tables; all share the schema */
        int owner = worker_own(w, on_store_event, aw);
        if (owner < 0)
            return fail(w, owner, "the PostgreSQL store: no tag owner left");
        struct pgstore_opts po = {.conninfo = a->pg, .sync_off = cfg->db_sync == CONFIG_SYNC_FAST,
                                  .catalog = w->id == 0 ? a->catalog : NULL, .io = &w->io,
                                  .now_ms = &w->pool.now_ms, .worker = w->id, .owner = (uint8_t)owner,
                                  .up = &a->pg_up, .timeout_ms = cfg->db_timeout_ms, .health = &a->pg_health,
                                  .pooler_tx = cfg->db_pooler_tx, .host = a->pg_target};
        if (pgstore_create(&aw->pg, &po, w->init_why, sizeof(w->init_why)))
            return -EINVAL;
        aw->env.store_up = &a->pg_up;
        aw->env.store_need = (int)w->all->n;
        aw->env.store_health = &a->pg_health;
    }
#endif
    aw->events = (struct events){.store = a->store, .pg = aw->pg, .health = aw->env.store_health,
                                 .next_id = &a->event_n, .pod = a->pod, .store_name = a->store_name,
                                 .now_ms = &w->pool.now_ms, .timeout_ms = cfg->db_timeout_ms, .worker = w->id,
                                 .inbox = {.io = &w->io}};
    events_init(&aw->events);
    hold_list_init(&aw->held, on_held, aw);
    if (getrandom(&aw->rng, sizeof(aw->rng), 0) != sizeof(aw->rng) || aw->rng == 0)
        aw->rng = clock_mono_ns() | 1;
    aw->reqs = calloc(w->opts->max_open, sizeof(*aw->reqs)); /* mmap'd: touched by the slots in use */
    if (!aw->reqs)
        return fail(w, -ENOMEM, "allocate the request records: out of memory");
    each_route(rt) {
        if ((*rt)->init && (*rt)->init(aw)) {
            if (!w->init_why[0])
                snprintf(w->init_why, sizeof(w->init_why), "route %s: set-up failed", route_name((enum route_id)(rt - routes)));
            return -ENOMEM;
        }
    }
    return 0;
}

static void app_fini(struct worker *w)
{
    struct app_worker *aw = w->app;
    if (!aw)
        return;
    upstream_client_fini(&aw->up);
    if (aw->spans) {
        spans_fini(aw->spans);
        free(aw->spans);
    }
    free(aw->gateway);
    if (aw->cfg->access_log)
        alog_fini(&aw->alog);
#if PRIMED_HAVE_PG
    pgstore_destroy(aw->pg); /* what is queued fails: after the connections, nothing waits on it */
    aw->pg = NULL;
#endif
    each_route(rt) {
        if ((*rt)->fini) /* after the client's fini: no call is out */
            (*rt)->fini(aw);
    }
    events_fini(&aw->events);
    free(aw->reqs);
    /* aw stays: process.c reads its metrics after the join (drain report) */
}

static uint64_t app_next_deadline(struct worker *w, uint64_t next)
{
    struct app_worker *aw = w->app;
    next = hold_next_deadline(&aw->held, next);
    next = events_next_deadline(&aw->events, next);
#if PRIMED_HAVE_PG
    if (aw->pg)
        next = pgstore_next_deadline(aw->pg, next);
#endif
    next = upstream_next_deadline(&aw->up, next);
    if (aw->spans)
        next = spans_next_deadline(aw->spans, next);
    each_route(rt) {
        if ((*rt)->next_deadline)
            next = (*rt)->next_deadline(aw, next);
    }
    return next;
}

static void app_poll(struct worker *w, bool second)
{
    struct app_worker *aw = w->app;
    events_poll(&aw->events);
    events_expire(&aw->events);
    each_route(rt) {
        if ((*rt)->poll)
            (*rt)->poll(aw);
    }
#if PRIMED_HAVE_PG
    if (aw->pg)
        pgstore_poll(aw->pg);
#endif
    hold_expire(&aw->held, w->pool.now_ms);
    upstream_expire(&aw->up);
    if (aw->spans)
        spans_poll(aw->spans, w->pool.drain_seen);
    if (second) {
        set_iso_time(aw);
        if (aw->cfg->access_log) {
            alog_flush(&aw->alog);
            unsigned long lost = alog_report(&aw->alog);
            if (lost)
                log_msg("worker %u: access log: %lu lines dropped (stdout is not being read fast enough)", w->id,
                        lost);
        }
    }
}

static void app_drain(struct worker *w)
{
    struct app_worker *aw = w->app;
    upstream_drain(&aw->up);
}

static bool app_busy(struct worker *w)
{
    struct app_worker *aw = w->app;
    if (aw->events.out)
        return true; /* events of requests whose clients went away are not back yet */
    if (aw->spans && (aw->spans->n || spans_busy(aw->spans)))
        return true; /* the last spans have not left yet */
    each_route(rt) {
        if ((*rt)->busy && (*rt)->busy(aw))
            return true;
    }
    upstream_drain(&aw->up); /* cut what the pool still holds */
    return upstream_busy(&aw->up) != 0;
}

const struct worker_hooks app_worker_hooks = {
    .init = app_init,
    .fini = app_fini,
    .next_deadline = app_next_deadline,
    .poll = app_poll,
    .drain = app_drain,
    .busy = app_busy,
};
