/* pg.h - PostgreSQL as the event store that many pods share: one
 * worker's connection, driven through libpq's non-blocking API on the
 * worker's own ring (io_poll), never blocking the worker.
 *
 * Each worker keeps one connection in pipeline mode. Events queue per worker;
 * while no transaction is in flight, every queued event (up to
 * PGSTORE_BATCH_MAX) goes out as one pipeline: the prepared INSERT ...
 * RETURNING id per event, then a Sync, which commits them as one implicit
 * transaction; each event's done runs once the Sync's result is back, the
 * commit done (ids come from the database's identity column, so
 * they are unique across every process that shares it). A lost connection
 * fails what was in flight (-ECONNRESET: its commit was not confirmed) and
 * everything queued, and reconnects with backoff (PGSTORE_RETRY_MIN_MS,
 * doubling to PGSTORE_RETRY_MAX_MS; back to the minimum once a batch of
 * events commits, not at a set-up); until it is back, submits fail at once
 * (-ENOTCONN, or the kind that brought it down: -EUSERS, -EACCES, -EROFS,
 * -ENOSPC) and /readyz says 503 until every worker's store is up. A connect
 * or a set-up still unanswered after --db-timeout drops the connection the
 * same way, and so does a batch unanswered at its oldest event's deadline
 * (store_req.deadline_ms: --db-timeout from that event's submit; the batch
 * -ETIMEDOUT: not confirmed; what queued behind it -ETIME: not sent, nothing
 * stored); an event still queued at its deadline fails -ETIME alone. A
 * batch whose transaction failed (its kind) drops it too, so that a connection is
 * ready only after a write transaction committed. An idle connection sends
 * a bare Sync every --db-timeout under the same deadline, so a stall is
 * found without a request. On connect the schema is
 * created if missing, under an advisory lock, versioned in schema_version
 * (docs/chain.md), and the first worker writes the catalog's tables.
 */
#ifndef PRIMED_PGSTORE_H
#define PRIMED_PGSTORE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "catalog.h"
#include "io.h"
#include "resolver.h"
#include "store.h"
#include "url.h"

#define PGSTORE_BATCH_MAX    512  /* events in one transaction */
#define PGSTORE_QUEUE_MAX    8192 /* events waiting per worker before submits refuse (-EAGAIN) */
#define PGSTORE_RETRY_MIN_MS 100
#define PGSTORE_RETRY_MAX_MS 2000

struct pgstore;

struct pgstore_opts {
    const char *conninfo;          /* a libpq URI or keyword string; its password, if any, stays in it */
    bool sync_off;                 /* synchronous_commit = off (--db-sync fast), else on */
    bool pooler_tx;                /* behind a transaction pooler: no prepared statement, no session SET */
    const struct catalog *catalog; /* written into the catalog tables on connect, or NULL */
    struct io *io;                 /* the worker's; not owned */
    const uint64_t *now_ms;        /* the worker's clock; not owned */
    unsigned worker;               /* for logs */
    uint8_t owner;                 /* the tag owner of its completions (slots.h) */
    _Atomic int *up;               /* counts the process's connected stores (not owned), or NULL */
    unsigned timeout_ms;           /* --db-timeout: a connect, set-up or batch in flight longer is dropped */
    struct store_health *health;   /* the process's (not owned; last_err written), or NULL */
    /* the database host's name, looked up by the resolver thread (pgstore_host): each connect
     * hands libpq the address (hostaddr), so no getaddrinfo runs on the worker; NULL: libpq
     * needs no lookup (a numeric address, a socket directory) or the conninfo names several hosts */
    struct resolver_target *host;
};

/* Whether conninfo names one database host by a DNS name, with no hostaddr:
 * then out->host and out->port (5432 unless given) are set and the caller
 * has the name resolved off the workers (pgstore_opts.host). Returns 1, 0
 * (nothing to resolve), or -EINVAL (it does not parse). After
 * pgstore_load(). */
int pgstore_host(const char *conninfo, struct url *out);

/* Loads libpq (libpq.so.5, with dlopen: primed does not link it). Once,
 * before the workers start. Returns 0, or -EINVAL with a one-line reason. */
int pgstore_load(char *err, size_t errlen);

/* Allocates and starts connecting (non-blocking). Returns 0, or -errno with
 * a one-line reason in err (the conninfo does not parse: no attempt made). */
int pgstore_create(struct pgstore **out, const struct pgstore_opts *o, char *err, size_t errlen);
/* Closes the connection; every queued event fails (-ECANCELED). */
void pgstore_destroy(struct pgstore *p);

/* Queues r (done, time_ms, pod set); r->done runs later on this worker, once
 * r's transaction committed (err 0, id set) or failed, never inside this
 * call (a failure runs it from pgstore_poll). Returns 0, or -ENOTCONN (not
 * connected: nothing queued) or -EAGAIN (queue full). */
int pgstore_submit(struct pgstore *p, struct store_req *r);

/* A completion of a tag of this store's owner. */
void pgstore_on_event(struct pgstore *p, const struct io_event *ev);
/* Reconnects when its backoff is over; drops the connection whose work in
 * flight passed --db-timeout; runs the done of the events failed since the
 * last call. From the worker's loop. */
void pgstore_poll(struct pgstore *p);
/* The next reconnect or deadline (now while a failed event's done waits), or none. */
uint64_t pgstore_next_deadline(const struct pgstore *p, uint64_t none);

/* A PostgreSQL error as one of store.h's kinds (-EROFS, -ENOSPC, -EUSERS,
 * -EACCES, -ENOENT, -ETIMEDOUT, -ECONNRESET): by its SQLSTATE, or NULL;
 * then by libpq's own message (-ECONNREFUSED, -ENXIO: no server spoke),
 * else dflt. */
int pgstore_error_kind(const char *sqlstate, const char *msg, int dflt);

/* The SQLSTATE in a connect's error message written with PQERRORS_VERBOSE
 * ("FATAL:  3D000: database ... does not exist"), copied into out; NULL
 * when it has none (libpq's own errors: refused, a name not resolved). */
const char *pgstore_connect_sqlstate(const char *msg, char out[6]);

/* Whether db names a PostgreSQL database (a postgres:// or postgresql://
 * URI, or a keyword string such as "host=... dbname=..."). */
bool pgstore_is_conninfo(const char *db);
/* db with any password blanked (URI userinfo, password=...), for the ready
 * line, logs and error bodies. */
void pgstore_redact(const char *db, char *out, size_t cap);

#endif
