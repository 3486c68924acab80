/* app.h - the app on the core: primed's routes and what answers them, one
 * worker's app state, and the hooks the core calls (struct worker_hooks,
 * struct conn_app).
 *
 * The core knows no route: it hands each request head to app_head() (route
 * it), each complete request to app_request() (answer, or wait), and each
 * response to app_finish() (record it). A route is a row of route.h's table
 * and a file with its struct app_route (its serve function and worker hooks):
 * example.c (a prime on the dispatch), chain.c (/callme/ping, /caller/ping),
 * products.c (the gateway's fan-out), product.c (one product), scrape.c
 * (/metrics); the probes, /ping and the catalog are handlers.c's. hold.c holds
 * a request for --fault-delay first. Each waits through conn_wait() and
 * answers through conn_answer(), on the connection's own worker.
 */
#ifndef PRIMED_APP_H
#define PRIMED_APP_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "catalog.h"
#include "config.h"
#include "conn.h"
#include "fault.h"
#include "gateway.h"
#include "handlers.h"
#include "log.h"
#include "metrics.h"
#include "objpool.h"
#include "resolver.h"
#include "route.h"
#include "spans.h"
#include "store.h"
#include "timer.h"
#include "trace.h"
#include "upstream.h"
#include "worker.h"

_Static_assert(HANDLERS_BODY_MAX <= CONN_BODY_MAX, "an inline answer fits what the core copies");

/* /metrics bodies (64 KiB buffers) alive at once per worker, while their
 * clients read them; one more scrape on the worker gets a 503. */
#define APP_SCRAPES_MAX 4

/* The process: what every worker's app reads (set up by server.c before the
 * workers start; read-only afterwards, but for the atomics). */
struct app {
    const struct config *cfg;
    struct workers *workers;    /* the core's shared part: draining, peers */
    struct worker *w;           /* the workers, n = workers->n */
    double start_time;          /* unix seconds */
    _Atomic uint64_t example_n; /* Hello_N: process-wide, never repeats */
    _Atomic uint64_t ping_n;
    _Atomic uint64_t event_n;   /* event ids when built without the store */
    const char *pod, *ns, *name; /* /ping: from POD_NAME, POD_NAMESPACE, APP_NAME */
    char revision_hdr[160];     /* "K-Revision: ...\r\n" or "" */
    struct store *store;        /* the SQLite event store, owned; NULL without it (or with PostgreSQL) */
    const char *pg;             /* --db's PostgreSQL conninfo, or NULL: each worker connects (pgstore.h) */
    _Atomic int pg_up;          /* workers whose PostgreSQL connection is ready */
    struct store_health pg_health; /* PostgreSQL's failures (SQLite's: store_health_of) */
    char store_name[256];       /* --db without its password, for the ready line and error bodies */
    struct resolver resolver;   /* upstream names, owned */
    struct resolver_target *callme_target, *zipkin_target;     /* in resolver, or NULL */
    struct resolver_target *catalog_target, *inventory_target; /* in resolver, or NULL (no gateway) */
    struct catalog *catalog;    /* the products of /api/catalog and /api/inventory, owned */
    uint64_t prime_seed;        /* each worker's prime state: 0 random (tests give one: deterministic) */
};

struct event_job;
struct app_worker;
struct app_req;

/* A route's own file gives the app one of these (route.h's table names it):
 * how it answers, and its part of the worker's hooks. Every member but serve
 * may be NULL; the app calls the hooks of every route in the table's order. */
struct app_route {
    /* Answers q now, or conn_wait()s and answers later (docs/architecture.md,
     * "Adding an asynchronous route"). */
    void (*serve)(struct app_worker *aw, struct app_req *q);
    int (*init)(struct app_worker *aw);   /* 0, or -errno with aw->w->init_why set */
    void (*fini)(struct app_worker *aw);  /* also after a failed init */
    void (*poll)(struct app_worker *aw);  /* after each batch of completions */
    uint64_t (*next_deadline)(struct app_worker *aw, uint64_t next);
    bool (*busy)(struct app_worker *aw);  /* drained: still has work out */
};

#define X_DECL(id, path, allow, module, flags) extern const struct app_route module;
ROUTES(X_DECL)
#undef X_DECL

/* One connection's current request, as the app sees it: its route, its
 * trace, and the state of whatever it waits on. Indexed by conn_index(). */
struct app_req {
    struct conn *conn;
    struct route_result route;
    bool fault_path;   /* its path is under --fault-path */
    struct trace tr;   /* its trace context */
    uint64_t span;     /* its SERVER span id */
    uint64_t wall_us;  /* when it began, epoch microseconds (spans) */
    /* the route's own state while the request waits on it (a job, a call, a
     * fan-out: its file's type), lent by the route; NULL otherwise */
    void *state;
    /* an event stored before the answer (events.c, the store's service) */
    struct event_job *event;
    /* --fault-delay (hold.c), any route's */
    struct timer held;
    int fault_abort; /* the status to answer once held, or 0: serve it */
};

/* One per connection slot: lent per request is what only some routes need. */
_Static_assert(sizeof(struct app_req) <= 256, "struct app_req grew past 256 bytes: lend the new part per request");

/* One worker's app. Owned by its worker's thread. */
struct app_worker {
    struct app *app;
    struct worker *w;
    const struct config *cfg;
    struct handler_env env;    /* the handlers' view of app */
    struct metrics metrics;    /* written by this worker only */
    struct upstream_client up; /* its calls to callme, the collector, catalog and inventory */
    int callme_up;             /* callme's index in up, or -1 */
    struct spans *spans;       /* owned span exporter, or NULL (no --zipkin-url) */
    struct gateway *gateway;   /* owned /api/products fan-out state, or NULL (no --catalog-url) */
    struct fault fault;        /* --fault-*: what requests draw from */
    bool faults;               /* any fault configured */
    struct alog alog;          /* access log, when enabled */
    char iso_time[24];         /* access log timestamp, once a second */
    uint64_t rng;              /* span ids; non-zero */
    unsigned scrapes_live;     /* /metrics bodies not yet sent (<= APP_SCRAPES_MAX) */
    struct app_req *reqs;      /* owned, one per connection slot */
    struct timer_list held;    /* requests held by --fault-delay */
    struct prime_state *prime; /* owned: this thread's prime state, the dispatch's work state (example.c) */
    struct example_job *jobs;  /* owned pool of /example jobs (example.c) */
    struct example_job *job_free;
    struct store_inbox inbox;  /* events committed for this worker (store.h) */
    struct pgstore *pg;        /* owned: this worker's PostgreSQL connection, or NULL */
    struct objpool events;     /* owned: events until their commit (events.c) */
    struct timer_list event_timers; /* their --db-timeout deadlines (events.c) */
    struct objpool calls;      /* owned: /caller/ping's calls until their answer (chain.c) */
    unsigned events_out; /* events submitted and not yet back */
};

/* The hooks server.c gives the core. */
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

/* Serves q's request now (after a hold, or at once): a plain answer, or the
 * route's own handler. */
void app_serve(struct app_worker *aw, struct app_req *q);
/* Answers q with r (an inline body). */
void app_answer(struct app_req *q, struct resp *r);

/* Whether /example runs the eight-lane tests with cfg on this CPU (the ready
 * line and --version say it). */
bool example_vector_on(const struct config *cfg);

/* events.c: stores q's event (now, the pod); then(aw, q, id, err) runs once
 * it is committed (err 0) or failed (-errno: nothing was stored), on this
 * worker, maybe before this returns. Returns 0, or -EAGAIN / -ENOMEM when it
 * cannot be queued, -EIO when an inline insert failed (then does not run;
 * nothing was stored). */
typedef void events_done_fn(struct app_worker *aw, struct app_req *q, uint64_t id, int err);
int events_store(struct app_worker *aw, struct app_req *q, events_done_fn *then);
/* q's client went away: its event is still stored, then does not run. */
void events_cancel(struct app_worker *aw, struct app_req *q);
/* Runs then for the events committed for this worker. Returns how many. */
unsigned events_poll(struct app_worker *aw);
/* Answers the requests whose event is not committed after --db-timeout:
 * then runs with -ETIMEDOUT (not confirmed), the event stays with the store. */
void events_expire(struct app_worker *aw);
/* The next such deadline, or none. */
uint64_t events_next_deadline(struct app_worker *aw, uint64_t none);
void events_fini(struct app_worker *aw);

/* hold.c: holds q for delay_ms (--fault-delay), then serves or aborts it. */
void hold_start(struct app_worker *aw, struct app_req *q, unsigned delay_ms, int abort_status);
void hold_expire(struct app_worker *aw);
/* Answers q with --fault-abort's status. */
void hold_abort(struct app_worker *aw, struct app_req *q, int status);

/* Hands one span of q's request to the exporter. */
void app_span(struct app_worker *aw, struct app_req *q, enum zipkin_kind kind, uint64_t id, const char *parent,
              uint64_t start_us, uint64_t dur_us, int status, const char *error);

#endif
