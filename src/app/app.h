/* app.h - what every route needs, and nothing more: the process's app
 * (struct app), one worker's app (struct app_worker), one request as the
 * app sees it (struct app_req), a route's module (struct app_route), the
 * app's ways to answer (answer.h's words, app_answer, app_serve); the hooks
 * the core calls (struct worker_hooks).
 *
 * The core knows no route: it hands each request head to the app (route
 * it), each complete request (answer, or wait) and each response (record
 * it): app.c. A route is a row of route.h's table and one file of routes/
 * with its struct app_route (docs/architecture.md, "Adding an asynchronous
 * route"). Each answers now, or waits through conn_wait() and answers
 * through conn_answer(), on the connection's own worker. What the routes
 * use beyond a request is a service (services.h): a route includes the
 * header of each service it uses (upstreams.h, events.h, gateway_service.h,
 * catalog_service.h, db.h); a route that uses none (the probes, /ping) sees
 * no upstream client, dispatch, store or config.
 *
 * owns: these types. never: a route's own types or state (its file's: lent
 * through app_req.state and app_worker.route_state), a service's (its
 * file's: app.service[], app_worker.service[]).
 */
#ifndef PRIMED_APP_H
#define PRIMED_APP_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "conn.h"
#include "answer.h"
#include "log.h"
#include "route.h"
#include "services.h"
#include "trace.h"

_Static_assert(ANSWER_BODY_MAX <= CONN_BODY_MAX, "an inline answer fits what the core copies");

struct config;
struct worker;
struct worker_hooks;
struct workers;
struct event_job;
struct metrics;
struct resolver;
struct zipkin_span;

/* The process: what every worker's app reads (set up by process.c before the
 * workers start; read-only afterwards, but for the atomics). */
struct app {
    const struct config *cfg;
    struct workers *workers;    /* the core's shared part: draining, peers */
    struct worker *w;           /* the workers, n = workers->n */
    double start_time;          /* unix seconds */
    _Atomic uint64_t example_n; /* Hello_N: process-wide, never repeats */
    _Atomic uint64_t ping_n;
    _Atomic uint64_t event_n;   /* event ids when there is no store (events.h) */
    const char *pod, *ns, *name; /* /ping: from POD_NAME, POD_NAMESPACE, APP_NAME */
    char revision_hdr[160];     /* "K-Revision: ...\r\n" or "" */
    struct resolver *resolver;  /* the upstreams' names, looked up off the workers (owned by process.c) */
    uint64_t prime_seed;        /* each worker's prime state: 0 random (tests give one: deterministic) */
    /* each service's process state (services.h): its start's, freed by its
     * stop; only the service's file reads its entry */
    void *service[SERVICE__COUNT];
};

struct app_worker;
struct app_req;

/* A route's own file gives the app one of these (route.h's table names it):
 * how it answers, and its part of the worker's hooks. Every member may be
 * NULL; the app calls the hooks of every route in the table's order. */
struct app_route {
    /* Answers the request now when that needs no work: pure, from env and
     * the request alone (an inline body into body, cap ANSWER_BODY_MAX).
     * Returns ANSWER_NOW or ANSWER_LASTING with r filled, or
     * ANSWER_LATER: serve answers. NULL: serve answers every request. */
    enum answer_action (*answer)(const struct answer_env *env, const struct http *h, const struct route_result *rt,
                                  struct resp *r, char *body, size_t cap);
    /* Reads the request's query (q: what follows the '?', len bytes; NULL
     * when there is none) into rt->arg, with cfg's defaults: 0, or -1 with
     * rt->reason (a static line) to answer 400. NULL: the query is ignored. */
    int (*query)(const struct config *cfg, const char *q, size_t len, struct route_result *rt);
    /* Answers q now, or conn_wait()s and answers later (docs/architecture.md,
     * "Adding an asynchronous route"). NULL: what answer leaves is 404. */
    void (*serve)(struct app_worker *aw, struct app_req *q);
    int (*init)(struct app_worker *aw);   /* 0, or -errno with aw->w->init_why set */
    void (*fini)(struct app_worker *aw);  /* also after a failed init */
    void (*poll)(struct app_worker *aw);  /* after each batch of completions */
    uint64_t (*next_deadline)(struct app_worker *aw, uint64_t next);
    bool (*busy)(struct app_worker *aw);  /* drained: still has work out */
    /* Off unless this says on (a route behind a flag): NULL, always on. An
     * off route is an unknown path (404). */
    bool (*enabled)(const struct config *cfg);
    /* A piece of the body of a request the route allows besides GET, HEAD
     * and OPTIONS (at: valid during the call only; --max-body checked):
     * keep it in q->state. 0, or -1 when it cannot (413). NULL: the body
     * is read and dropped. */
    int (*body)(struct app_worker *aw, struct app_req *q, const char *at, size_t len);
    /* q's request ends before its body does (refused, or its connection
     * closed): free what body kept. Needed with body. */
    void (*drop)(struct app_worker *aw, struct app_req *q);
};

#define X_DECL(id, path, allow, module, flags, help) extern const struct app_route module;
ROUTES(X_DECL)
#undef X_DECL

/* One connection's current request, as the app sees it: its route, its
 * trace, and the state of whatever it waits on. Indexed by conn_index(). */
struct app_req {
    struct conn *conn;
    struct route_result route;
    bool gated;        /* its path is under app_worker.gate_path: the gate may take it */
    struct trace tr;   /* its trace context */
    uint64_t span;     /* its SERVER span id */
    uint64_t wall_us;  /* when it began, epoch microseconds (spans) */
    /* the route's own state while the request waits on it (a job, a call, a
     * fan-out: its file's type), lent by the route; NULL otherwise */
    void *state;
    /* an event stored before the answer, while it waits for its commit (events.h) */
    struct event_job *event;
    /* while a gate (app_worker.gate: the fault delay) holds it: its timer
     * and the status to answer once it is over (0: serve it) */
    struct timer gate_timer;
    int gate_status;
};

/* One per connection slot: lent per request is what only some routes need. */
_Static_assert(sizeof(struct app_req) <= 256, "struct app_req grew past 256 bytes: lend the new part per request");

/* Hands a span to the exporter (its ctx): set by the service that exports
 * them (spans.h), else NULL: no span is made. */
typedef void app_span_fn(void *ctx, const struct zipkin_span *span);

/* Takes a request before it is served (its ctx): true when it did (it
 * serves or answers the request later, through app_serve() or
 * app_answer()). Set by the service that holds requests (fault_delay.h). */
typedef bool app_gate_fn(void *ctx, struct app_req *q);

/* One worker's app. Owned by its worker's thread. */
struct app_worker {
    struct app *app;
    struct worker *w;
    const struct config *cfg;
    struct answer_env env;    /* the answers' view of app */
    struct alog alog;          /* access log, when enabled */
    char iso_time[24];         /* access log timestamp, once a second */
    uint64_t rng;              /* trace and span ids; non-zero */
    struct app_req *reqs;      /* owned, one per connection slot */
    app_span_fn *span;         /* the span exporter, or NULL */
    void *span_ctx;
    app_gate_fn *gate;         /* what takes requests before they are served, or NULL */
    void *gate_ctx;
    const char *gate_path;     /* ... the requests under this path (route_has_prefix) */
    /* each route's own worker state: its init's, freed by its fini; NULL
     * otherwise. Only the route's file reads its entry. */
    void *route_state[ROUTE__COUNT];
    /* each service's worker state (services.h): its init's; only the
     * service's file reads its entry */
    void *service[SERVICE__COUNT];
};

/* Frees a worker's app after its fini: its services' blocks too (a
 * process never does: a scrape on another worker may read them). */
void app_free(struct app_worker *aw);

/* This worker's counters (metrics.h): written by it only. */
struct metrics *app_metrics(struct app_worker *aw);

/* The hooks process.c gives the core. */
extern const struct worker_hooks app_worker_hooks;

/* The app of c's worker, and c's request. */
static inline struct app_worker *app_of(const struct conn *c)
{
    return c->pool->app.ctx;
}

static inline struct app_req *app_req_of(const struct conn *c)
{
    return &app_of(c)->reqs[conn_index(c)];
}

/* Routes one request (route_match()) and reads its query with its route's
 * query hook: out as route_match() leaves it, 400 where the query is bad. */
void app_route_request(const struct config *cfg, int method, const char *url, size_t len, struct route_result *out);

/* What app_serve answers at once, pure: a refusal (rt->status: 400, 404,
 * 405), else what rt's route's answer says (ANSWER_LATER: its serve). */
enum answer_action app_answer_now(const struct answer_env *env, const struct http *h, const struct route_result *rt,
                                   struct resp *r, char *body, size_t cap);
/* Serves q's request now (after a hold, or at once): what app_answer_now
 * answers, else the route's serve. */
void app_serve(struct app_worker *aw, struct app_req *q);
/* Answers q with r (an inline body). */
void app_answer(struct app_req *q, struct resp *r);

/* Hands one span of q's request to the exporter (aw->span set): kind a
 * zipkin_kind (zipkin.h). */
void app_span(struct app_worker *aw, struct app_req *q, int kind, uint64_t id, const char *parent,
              uint64_t start_us, uint64_t dur_us, int status, const char *error);

/* Whether every service can serve now (/readyz): false with the first
 * one's why. */
bool app_ready(const struct app *a, char *why, size_t cap);

#endif
