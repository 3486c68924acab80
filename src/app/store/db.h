/* db.h - the event store as a service (services.h): which backend --db
 * names (SQLite's file or :memory:, or PostgreSQL's conninfo), chosen here
 * and nowhere else; its lifecycle on the process (SQLite's connection and
 * thread) and on each worker (PostgreSQL's connection); whether it can
 * commit (/readyz); its series; its words of the ready line. The backends
 * themselves are store.h's ops (sqlite.c, pg.c).
 *
 * owns: the process's store (its state below) and each worker's PostgreSQL
 * connection. never: an event (events.h), a request.
 */
#ifndef PRIMED_DB_H
#define PRIMED_DB_H

#include <stdatomic.h>
#include <stdbool.h>

#include "app.h"
#include "store.h"
#include "url.h"

struct pgstore;
struct resolver_target;

/* The process's: app.service[SERVICE_STORE]. */
struct db {
    char name[256];               /* --db without its password: the ready line, error bodies */
    struct store *sqlite;         /* the SQLite store, owned; NULL without it (or with PostgreSQL) */
    const char *pg;               /* --db's PostgreSQL conninfo, or NULL: each worker connects (pg.h) */
    struct url pg_url;            /* --db's host name, when one is looked up (pgstore_host) */
    struct resolver_target *pg_target; /* in the resolver, or NULL: libpq looks nothing up */
    _Atomic int pg_up;            /* workers whose PostgreSQL connection is ready */
    int pg_need;                  /* ... how many must be: /readyz says 503 until then */
    struct store_health pg_health; /* PostgreSQL's failures (SQLite's: store_health_of) */
    struct store_health *health;  /* the store's in use, or NULL: none */
    unsigned timeout_ms;          /* --db-timeout, for the words of a wait that ran out */
};

/* The process's store, or NULL (none started: a test's app). */
static inline struct db *db_of(const struct app *a)
{
    return a->service[SERVICE_STORE];
}

/* This worker's PostgreSQL connection, or NULL. */
static inline struct pgstore *db_pg(struct app_worker *aw)
{
    return aw->service[SERVICE_STORE];
}

/* This worker's connection to the store and its backend's ops into *ops
 * (the worker's PostgreSQL connection, or the process's SQLite store), or
 * NULL and *ops NULL: no store (a test's app: ids without one). */
void *db_conn(struct app_worker *aw, const struct store_ops **ops);

/* The answer of a request whose event could not be stored: 503 naming the
 * store, what happened (err's kind, store.h) and the event's fate: "not
 * confirmed" where its commit was sent and never answered, else "nothing
 * was stored". body: cap >= ANSWER_BODY_MAX. */
void db_refusal(const struct answer_env *env, const struct http *h, int err, struct resp *r, char *body,
                size_t cap);

/* Whether d can commit now: every worker's connection set up (PostgreSQL),
 * and the last commit good (store_health). NULL: no store, ready. */
bool db_ready(const struct db *d);

/* The primed_store_* series of d (NULL: no store configured) into o; built:
 * whether this binary has SQLite (its dropped events' series is written). */
void db_metrics_put(struct metrics_out *o, const struct db *d, bool built);

#endif
