/* db.c - the event store service (db.h): the one place that reads --db
 * and chooses the backend this binary has (PRIMED_HAVE_STORE: SQLite,
 * PRIMED_HAVE_PG: PostgreSQL). */
#include "db.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build_info.h"
#include "catalog_service.h"
#include "config.h"
#include "log.h"
#include "metrics.h"
#include "resolver.h"
#if PRIMED_HAVE_STORE
#include "sqlite.h"
#endif
#if PRIMED_HAVE_PG
#include "pg.h"
#endif

static struct db the_db; /* one process, one store */

/* PostgreSQL (each worker connects; a database down now is not fatal:
 * /readyz says 503 until it is up), or SQLite's thread. */
static void db_start(struct app *a)
{
    const struct config *cfg = a->cfg;
    struct db *d = &the_db;
    a->service[SERVICE_STORE] = d;
    d->timeout_ms = cfg->db_timeout_ms;
#if PRIMED_HAVE_PG
    if (pgstore_is_conninfo(cfg->db)) {
        pgstore_redact(cfg->db, d->name, sizeof(d->name));
        char perr[200];
        if (pgstore_load(perr, sizeof(perr)))
            die(1, "--db %s: %s", d->name, perr);
        d->pg = cfg->db;
        d->pg_need = (int)a->workers->n;
        d->health = &d->pg_health;
        /* its host's name is looked up on the resolver thread, never on a
         * worker (libpq would, in each connect); not at start-up either */
        if (pgstore_host(cfg->db, &d->pg_url) == 1 && !(d->pg_target = resolver_add_later(a->resolver, &d->pg_url)))
            die(1, "--db %s: no resolver slot left for its host", d->name);
        return;
    }
#else
    if (strncmp(cfg->db, "postgres", 8) == 0 || strchr(cfg->db, '='))
        die(2, "--db: this binary is built without PostgreSQL (-Dpostgres=disabled; the lto-static profile)");
#endif
    snprintf(d->name, sizeof(d->name), "%s", cfg->db);
#if PRIMED_HAVE_STORE
    char serr[200];
    /* a lock another process holds is waited for up to half of --db-timeout: below the requests' bound */
    if (store_open(&d->sqlite, cfg->db, cfg->db_sync == CONFIG_SYNC_FULL ? STORE_SYNC_FULL : STORE_SYNC_NORMAL, 0,
                   cfg->db_timeout_ms / 2, serr, sizeof(serr)))
        die(1, "--db: %s", serr); /* serr names the store and its path */
    d->health = store_health_of(d->sqlite);
#else
    if (strcmp(cfg->db, ":memory:") != 0)
        die(1, "--db %s: this binary is built without the event store (-Dstore=disabled)", cfg->db);
#endif
}

/* The catalog is loaded: SQLite's tables get it (what is served is what
 * they hold; PostgreSQL's first worker writes them when it connects). */
static void db_run(struct app *a)
{
#if PRIMED_HAVE_STORE
    struct db *d = db_of(a);
    char cerr[300];
    if (d->sqlite && store_catalog(d->sqlite, (struct catalog *)catalog_of(a), cerr, sizeof(cerr)))
        die(1, "event store --db %s: %s", d->name, cerr);
#else
    (void)a;
#endif
}

static void db_stop(struct app *a)
{
#if PRIMED_HAVE_STORE
    struct db *d = db_of(a);
    store_close(d->sqlite); /* writes what is queued */
    d->sqlite = NULL;
#else
    (void)a;
#endif
}

#if PRIMED_HAVE_PG
/* A completion of the PostgreSQL store's tags (its owner is handed out
 * before the store exists). */
static void on_store_event(void *ctx, const struct io_event *ev)
{
    struct app_worker *aw = ctx;
    pgstore_on_event(db_pg(aw), ev);
}

/* PostgreSQL: this worker's connection (the first worker writes the
 * catalog's tables; all share the schema). */
static int db_init(struct app_worker *aw)
{
    struct db *d = db_of(aw->app);
    struct worker *w = aw->w;
    if (!d || !d->pg)
        return 0;
    int owner = worker_own(w, on_store_event, aw);
    if (owner < 0) {
        snprintf(w->init_why, sizeof(w->init_why), "the PostgreSQL store: no tag owner left");
        return owner;
    }
    struct pgstore_opts po = {.conninfo = d->pg, .sync_off = aw->cfg->db_sync == CONFIG_SYNC_FAST,
                              .catalog = w->id == 0 ? catalog_of(aw->app) : NULL, .io = &w->io,
                              .now_ms = &w->pool.now_ms, .worker = w->id, .owner = (uint8_t)owner,
                              .up = &d->pg_up, .timeout_ms = d->timeout_ms, .health = &d->pg_health,
                              .pooler_tx = aw->cfg->db_pooler_tx, .host = d->pg_target};
    struct pgstore *pg = NULL;
    if (pgstore_create(&pg, &po, w->init_why, sizeof(w->init_why)))
        return -EINVAL;
    aw->service[SERVICE_STORE] = pg;
    return 0;
}

/* what is queued fails: after the connections, nothing waits on it */
static void db_fini(struct app_worker *aw)
{
    pgstore_destroy(db_pg(aw));
    aw->service[SERVICE_STORE] = NULL;
}

static void db_poll(struct app_worker *aw, bool second)
{
    if (db_pg(aw))
        pgstore_poll(db_pg(aw));
}

static uint64_t db_next_deadline(struct app_worker *aw, uint64_t next)
{
    return db_pg(aw) ? pgstore_next_deadline(db_pg(aw), next) : next;
}
#else
#define db_init          NULL
#define db_fini          NULL
#define db_poll          NULL
#define db_next_deadline NULL
#endif

void *db_conn(struct app_worker *aw, const struct store_ops **ops)
{
    const struct db *d = db_of(aw->app);
    *ops = NULL;
#if PRIMED_HAVE_PG
    if (db_pg(aw)) {
        *ops = &store_pg_ops;
        return db_pg(aw);
    }
#endif
#if PRIMED_HAVE_STORE
    if (d && d->sqlite) {
        *ops = &store_sqlite_ops;
        return d->sqlite;
    }
#endif
    (void)d;
    return NULL;
}

bool db_ready(const struct db *d)
{
    if (!d)
        return true;
    if (d->pg && atomic_load_explicit(&d->pg_up, memory_order_relaxed) < d->pg_need)
        return false;
    return !d->health || !atomic_load_explicit(&d->health->down, memory_order_relaxed);
}

/* 503 while the store cannot commit, with the reason. */
static bool ready(const struct app *a, char *why, size_t cap)
{
    const struct db *d = db_of(a);
    if (db_ready(d))
        return true;
    int e = d->health ? atomic_load_explicit(&d->health->last_err, memory_order_relaxed) : 0;
    snprintf(why, cap, "event store %.200s cannot commit: %s\n", d->name,
             store_fault_words(store_fault_of(e ? e : -ENOTCONN)));
    return false;
}

void db_refusal(const struct answer_env *env, const struct http *h, int err, struct resp *r, char *body,
                size_t cap)
{
    const struct db *d = db_of(env->process);
    enum store_fault f = store_fault_of(err);
    char what[64] = "";
    if (f == STORE_FAULT_TIMEOUT || f == STORE_FAULT_NOT_SENT)
        snprintf(what, sizeof(what), " (%u ms)", d ? d->timeout_ms : 0);
    snprintf(body, cap, "event store %.200s: %s%s; %s; retry\n", d ? d->name : "", store_fault_words(f), what,
             store_fault_unconfirmed(f) ? "not confirmed: the event may still be stored" : "nothing was stored");
    answer_text(r, 503, body, answer_keep_alive(env, h));
}

void db_metrics_put(struct metrics_out *o, const struct db *d, bool built)
{
    if (built) {
        uint64_t dropped = 0;
#if PRIMED_HAVE_STORE
        if (d && d->sqlite)
            dropped = store_dropped(d->sqlite);
#endif
        metrics_put(o,
                    "# HELP primed_store_events_dropped_total Events the store refused (queue full) or failed to "
                    "insert.\n"
                    "# TYPE primed_store_events_dropped_total counter\n"
                    "primed_store_events_dropped_total %" PRIu64 "\n",
                    dropped);
    }
    if (d && d->health) {
        metrics_put(o,
                    "# HELP primed_store_ready Whether the event store can commit (1; /readyz 200) or not (0: "
                    "stalled, unreachable, full, read-only; /readyz 503 until a commit succeeds).\n"
                    "# TYPE primed_store_ready gauge\n"
                    "primed_store_ready %d\n"
                    "# HELP primed_store_failures_total Requests answered 503 because of the event store, by kind.\n"
                    "# TYPE primed_store_failures_total counter\n",
                    db_ready(d) ? 1 : 0);
        for (unsigned k = 0; k < STORE_FAULT_N; k++)
            metrics_put(o, "primed_store_failures_total{kind=\"%s\"} %" PRIu64 "\n", store_fault_label(k),
                        (uint64_t)atomic_load_explicit(&d->health->failures[k], memory_order_relaxed));
    }
}

static void db_metrics(const struct app *a, struct metrics_out *o)
{
    db_metrics_put(o, db_of(a), PRIMED_HAVE_STORE);
}

static size_t db_describe(const struct app *a, char *out, size_t cap)
{
    const struct db *d = db_of(a);
    int n = snprintf(out, cap, " db=%s", PRIMED_HAVE_STORE || d->pg ? d->name : "none");
    return n < 0 ? 0 : (size_t)n;
}

const struct app_service store_service = {
    .name = "event store",
    .start = db_start,
    .run = db_run,
    .stop = db_stop,
    .init = db_init,
    .fini = db_fini,
    .poll = db_poll,
    .next_deadline = db_next_deadline,
    .ready = ready,
    .metrics = db_metrics,
    .describe = db_describe,
};
