/* app.c - the app on the core (app.h): one worker's app state, the loops
 * over the route table (route.h) and the services table (services.h), and
 * the hooks the core calls for every request and response.
 *
 * Owns: a worker's access log and counters, and the per-connection request
 * records. Runs on its worker's thread only. Never touches a socket or a
 * connection's buffers: it answers through conn_answer() and waits through
 * conn_wait(). Knows a route only by its row and its module (struct
 * app_route), a service only by its module (struct app_service): never
 * their answers or their state.
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

#include "clock.h"
#include "access_log.h"
#include "config.h"
#include "metrics.h"
#include "trace_ids.h"
#include "zipkin.h"

/* ---- the route table --------------------------------------------------- */

#define X_MODULE(id, path, allow, module, flags, help) [id] = &module,
static const struct app_route *const routes[ROUTE__COUNT] = {ROUTES(X_MODULE)};
#undef X_MODULE

#define each_route(rt) \
    for (const struct app_route *const *rt = routes; rt < routes + ROUTE__COUNT; rt++)

/* ---- a worker's app and its counters ----------------------------------- */

/* The counters beside the app: one allocation, and the request path reaches
 * them at a fixed offset (app.h keeps struct metrics to those who count). */
struct app_box {
    struct app_worker aw;
    struct metrics metrics;
};

static inline struct metrics *metrics_of(struct app_worker *aw)
{
    return &((struct app_box *)aw)->metrics;
}

void app_free(struct app_worker *aw)
{
    if (!aw)
        return;
    for (int i = 0; i < SERVICE__COUNT; i++)
        free(aw->service[i]);
    free((struct app_box *)aw);
}

struct metrics *app_metrics(struct app_worker *aw)
{
    return metrics_of(aw);
}

bool app_ready(const struct app *a, char *why, size_t cap)
{
    each_service(sv) {
        if ((*sv)->ready && !(*sv)->ready(a, why, cap))
            return false;
    }
    return true;
}

/* ---- answers ----------------------------------------------------------- */

void app_route_request(const struct config *cfg, int method, const char *url, size_t len, struct route_result *out)
{
    const char *query;
    size_t qlen;
    route_match(method, url, len, out, &query, &qlen);
    const struct app_route *m = routes[out->id];
    if (m->query && out->status == 0 && m->query(cfg, query, qlen, out))
        out->status = 400;
}

void app_answer(struct app_req *q, struct resp *r)
{
    conn_answer(q->conn, r, NULL);
}

enum answer_action app_answer_now(const struct answer_env *env, const struct http *h, const struct route_result *rt,
                                   struct resp *r, char *body, size_t cap)
{
    if (rt->status) {
        answer_refusal(env, h, rt, r, body, cap);
        return ANSWER_NOW;
    }
    if (h->req.method == HTTP_OPTIONS) {
        answer_options(env, h, rt, r);
        return ANSWER_NOW;
    }
    const struct app_route *m = routes[rt->id];
    return m->answer ? m->answer(env, h, rt, r, body, cap) : ANSWER_LATER;
}

void app_serve(struct app_worker *aw, struct app_req *q)
{
    struct resp r;
    char body[ANSWER_BODY_MAX];
    switch (app_answer_now(&aw->env, &q->conn->http, &q->route, &r, body, sizeof(body))) {
    case ANSWER_NOW:
        conn_answer(q->conn, &r, NULL);
        break;
    case ANSWER_LASTING:
        conn_answer(q->conn, &r, &(struct conn_body){.data = (char *)r.body});
        break;
    case ANSWER_LATER:
        if (routes[q->route.id]->serve) {
            routes[q->route.id]->serve(aw, q);
            break;
        }
        answer_text(&r, 404, "not found\n", answer_keep_alive(&aw->env, &q->conn->http));
        conn_answer(q->conn, &r, NULL);
        break;
    }
}

void app_span(struct app_worker *aw, struct app_req *q, int kind, uint64_t id, const char *parent,
              uint64_t start_us, uint64_t dur_us, int status, const char *error)
{
    const struct http_req *rq = &q->conn->http.req;
    struct zipkin_span z = {
        .kind = (enum zipkin_kind)kind,
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
    aw->span(aw->span_ctx, &z);
}

/* ---- the core's hooks: a request's head, the request, its response ------ */

/* Routes the head; true when the route reads the body (its body hook). */
static bool on_head(void *ctx, struct conn *c, const struct http_req *rq, const char *url, size_t len)
{
    struct app_worker *aw = ctx;
    struct app_req *q = &aw->reqs[conn_index(c)];
    q->conn = c;
    app_route_request(aw->cfg, rq->method, url, len, &q->route);
    const struct app_route *m = routes[q->route.id];
    if (m->enabled && !m->enabled(aw->cfg)) {
        /* a route behind a flag that is off: an unknown path */
        q->route.id = ROUTE_OTHER;
        q->route.status = 404;
        m = routes[ROUTE_OTHER];
    }
    q->gated = aw->gate && route_has_prefix(url, len, aw->gate_path);
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

static void on_request(void *ctx, struct conn *c)
{
    struct app_worker *aw = ctx;
    struct app_req *q = &aw->reqs[conn_index(c)];
    uint8_t route = q->route.id;
    unsigned flags = route_flags((enum route_id)route);
    /* a new trace for the chain's routes, which call or are called */
    bool start_trace = flags & ROUTE_F_NEW_TRACE;
    q->wall_us = aw->span ? clock_wall_us() : 0;
    trace_ids_begin(&c->http.req, &aw->rng, start_trace, &q->tr, &q->span);
    if (q->route.status == 400)
        stats_add(&metrics_of(aw)->conn.bad[BAD_QUERY], 1);
    if (aw->gate && aw->gate(aw->gate_ctx, q))
        return;
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
        trace_ids_begin(rq, &aw->rng, false, &q->tr, &q->span);
    }
    static __thread char extra[RESP_EXTRA_MAX];
    answer_headers(&aw->env, &q->tr, q->span, extra, sizeof(extra));
    r->extra = extra[0] ? extra : NULL;

    uint8_t route = q->route.id;
    int si = metrics_status_index(r->status);
    struct metrics *m = metrics_of(aw);
    if (si >= 0)
        stats_add(&m->requests[route][si], 1);
    stats_observe(&m->req_seconds[route], dur);
    if (aw->cfg->access_log)
        access_log_line(&aw->alog, aw->iso_time, aw->w->id, rq, (enum route_id)route, r->status,
                            r->head ? 0 : r->body_len, dur, &q->tr);
    if (aw->span && (q->tr.flags & 1) && q->tr.valid && !(route_flags((enum route_id)route) & ROUTE_F_QUIET))
        app_span(aw, q, ZIPKIN_SERVER, q->span, q->tr.parent_id, q->wall_us, dur / 1000, r->status, NULL);
}

/* ---- the worker's hooks -------------------------------------------------- */

static void set_iso_time(struct app_worker *aw)
{
    struct clock_utc u = clock_utc_of(clock_wall_s());
    char t[64]; /* room for any int, so the compiler sees no truncation; the time takes 20 */
    snprintf(t, sizeof(t), "%04d-%02d-%02dT%02d:%02d:%02dZ", (int)u.year, u.mon, u.mday, u.hour, u.min, u.sec);
    snprintf(aw->iso_time, sizeof(aw->iso_time), "%.20s", t);
}

static int fail(struct worker *w, int err, const char *what)
{
    snprintf(w->init_why, sizeof(w->init_why), "%s", what);
    return err;
}

/* A service's or a route's set-up failed: err, with its name when it said nothing. */
static int failed(struct worker *w, int err, const char *kind, const char *name)
{
    if (!w->init_why[0])
        snprintf(w->init_why, sizeof(w->init_why), "%s %s: set-up failed", kind, name);
    return err < 0 ? err : -ENOMEM;
}

static int app_init(struct worker *w)
{
    struct app *a = w->all->app;
    const struct config *cfg = a->cfg;
    struct app_box *box = calloc(1, sizeof(*box));
    if (!box)
        return fail(w, -ENOMEM, "allocate the app: out of memory");
    struct app_worker *aw = &box->aw;
    w->app = aw;
    aw->app = a;
    aw->w = w;
    aw->cfg = cfg;
    aw->env = (struct answer_env){
        .draining = &w->all->draining,
        .example_n = &a->example_n,
        .ping_n = &a->ping_n,
        .app = a->name,
        .pod = a->pod,
        .ns = a->ns,
        .revision_hdr = a->revision_hdr,
        .process = a,
        .callme = cfg->callme.host[0] ? cfg->callme.authority : NULL,
        .gateway = cfg->catalog_url.host[0] && cfg->inventory_url.host[0],
        .echo = cfg->echo_route,
    };
    w->pool.app = (struct conn_app){.head = on_head,
                                    .body = on_body,
                                    .dropped = on_dropped,
                                    .request = on_request,
                                    .finish = on_finish,
                                    .ctx = aw};
    w->pool.keep = &trace_keep; /* the parser keeps the trace headers, and no other */
    w->pool.stats = &box->metrics.conn;
    w->dispatch.stats = &box->metrics.dispatch;
    if (cfg->access_log && alog_init(&aw->alog, STDOUT_FILENO, 64 * 1024))
        return fail(w, -ENOMEM, "access log buffer: out of memory");
    set_iso_time(aw);
    if (getrandom(&aw->rng, sizeof(aw->rng), 0) != sizeof(aw->rng) || aw->rng == 0)
        aw->rng = clock_mono_ns() | 1;
    aw->reqs = calloc(w->opts->max_open, sizeof(*aw->reqs)); /* mmap'd: touched by the slots in use */
    if (!aw->reqs)
        return fail(w, -ENOMEM, "allocate the request records: out of memory");
    int r;
    each_service(sv) {
        if ((*sv)->init && (r = (*sv)->init(aw)))
            return failed(w, r, "service", (*sv)->name);
    }
    each_service(sv) {
        if ((*sv)->open && (r = (*sv)->open(aw)))
            return failed(w, r, "service", (*sv)->name);
    }
    each_route(rt) {
        if ((*rt)->init && (r = (*rt)->init(aw)))
            return failed(w, r, "route", route_name((enum route_id)(rt - routes)));
    }
    return 0;
}

static void app_fini(struct worker *w)
{
    struct app_worker *aw = w->app;
    if (!aw)
        return;
    /* in the table's order: the upstream client lets go of every call
     * before the services that made them let go of theirs */
    each_service(sv) {
        if ((*sv)->fini)
            (*sv)->fini(aw);
    }
    each_route(rt) {
        if ((*rt)->fini) /* after the services' fini: no call is out */
            (*rt)->fini(aw);
    }
    if (aw->cfg->access_log)
        alog_fini(&aw->alog);
    free(aw->reqs);
    /* aw stays: process.c reads its metrics after the join (drain report) */
}

static uint64_t app_next_deadline(struct worker *w, uint64_t next)
{
    struct app_worker *aw = w->app;
    each_service(sv) {
        if ((*sv)->next_deadline)
            next = (*sv)->next_deadline(aw, next);
    }
    each_route(rt) {
        if ((*rt)->next_deadline)
            next = (*rt)->next_deadline(aw, next);
    }
    return next;
}

static void app_poll(struct worker *w, bool second)
{
    struct app_worker *aw = w->app;
    each_service(sv) {
        if ((*sv)->poll)
            (*sv)->poll(aw, second);
    }
    each_route(rt) {
        if ((*rt)->poll)
            (*rt)->poll(aw);
    }
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
    each_service(sv) {
        if ((*sv)->drain)
            (*sv)->drain(aw);
    }
}

static bool app_busy(struct worker *w)
{
    struct app_worker *aw = w->app;
    each_route(rt) {
        if ((*rt)->busy && (*rt)->busy(aw))
            return true;
    }
    each_service(sv) {
        if ((*sv)->busy && (*sv)->busy(aw))
            return true;
    }
    return false;
}

const struct worker_hooks app_worker_hooks = {
    .init = app_init,
    .fini = app_fini,
    .next_deadline = app_next_deadline,
    .poll = app_poll,
    .drain = app_drain,
    .busy = app_busy,
};
