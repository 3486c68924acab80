/* store.h - the event store's seam: what every backend takes and gives back
 * (an event's request, a worker's inbox, the kinds of failure and the
 * store's health), one ops struct a backend fills (struct store_ops), and
 * the one schema every backend writes. Like core/io.h: one small interface,
 * a backend a file (sqlite.c: SQLite's file or :memory:, the embedded
 * database of the caller/callme chain; pg.c: PostgreSQL), chosen in one
 * place (db.c, from --db).
 *
 * An event is queued (submit) and the worker goes on serving; the backend
 * commits it (SQLite's thread, or the worker's PostgreSQL connection in
 * pipeline mode) and hands it back, and its done callback runs on the
 * worker: a request that stores an event is answered only once the event is
 * committed. No worker ever waits on a lock held across a database, or on a
 * disk. Ids are unique and increasing across workers and restarts.
 *
 * Failures have kinds (STORE_FAULTS: disk full, read-only, ...), carried as
 * -errno to the answer; struct store_health says whether the store can
 * commit now (/readyz, /metrics): down from a failed commit (or a wait past
 * --db-timeout) until one succeeds.
 *
 * The schema, the same in every backend: event (id, time_ms, pod); catalog
 * and inventory (the products, written at start-up); schema_version
 * (version, applied_at: STORE_SCHEMA, and a backend that finds a newer one
 * refuses to start; its row is also what a probe or a set-up rewrites when
 * it must write something).
 */
#ifndef PRIMED_STORE_H
#define PRIMED_STORE_H

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fifo.h"
#include "io.h"
#include "treiber.h"

#define STORE_POD_MAX       128   /* pod names kept (Kubernetes allows 253; longer is cut) */
#define STORE_QUEUE_DEFAULT 65536 /* events queued before store_submit() refuses */

/* --db-sync: what a commit survives. */
enum store_sync { STORE_SYNC_NORMAL, STORE_SYNC_FULL };

/* A worker's inbox: events committed (or failed) for it, pushed by the store
 * thread, taken by the worker (a Treiber stack, core/treiber.h: the store
 * thread writes an event's id and err, then pushes it; the worker takes the
 * whole list, oldest first, with an acquire exchange). */
struct store_inbox {
    struct treiber back;
    struct io *io; /* the worker's, woken after a push; not owned; NULL: its owner polls */
};

/* One event from store_submit() until its done runs; the submitter's object,
 * untouched by it meanwhile. */
struct store_req {
    struct fifo_link link;    /* on a store's own queue while it is out (store/pg.c) */
    struct treiber_link back; /* on its inbox, once committed or failed */
    /* runs on the inbox's worker: err 0 (committed, id set) or -errno
     * (nothing was stored; its kind: store_fault_of) */
    void (*done)(struct store_req *r);
    struct store_inbox *inbox;
    int64_t time_ms;
    /* the submitter's clock (ms) by which it is answered: --db-timeout from
     * its submit. PostgreSQL bounds its queue and its transaction by it;
     * 0: --db-timeout from the submit to the store */
    uint64_t deadline_ms;
    const char *pod; /* lives as long as the process */
    uint64_t id;
    int err;
};

/* The store's failures by kind, each carried as its -errno from the store to
 * the answer: X(NAME, errno, label on /metrics, what happened: words for the
 * 503 body, /readyz and the log). The words are the same for SQLite and
 * PostgreSQL. TIMEOUT and LOST are the kinds whose event may still commit
 * (store_fault_unconfirmed); every other kind stored nothing. */
#define STORE_FAULTS(X)                                                                                  \
    X(TIMEOUT, ETIMEDOUT, "timeout", "no answer within --db-timeout")                                    \
    X(NOT_SENT, ETIME, "timeout_not_sent", "not sent within --db-timeout")                               \
    X(LOST, ECONNRESET, "lost", "connection lost before the commit was confirmed")                       \
    X(DISK_FULL, ENOSPC, "disk_full", "disk full")                                                       \
    X(READ_ONLY, EROFS, "read_only", "the database is read-only")                                        \
    X(TOO_MANY, EUSERS, "too_many_connections", "too many connections (the server has no slot free)")   \
    X(AUTH, EACCES, "auth", "authentication failed")                                                     \
    X(UNREACHABLE, ENOTCONN, "unreachable", "unreachable")                                               \
    X(REFUSED, ECONNREFUSED, "refused", "connection refused")                                            \
    X(UNRESOLVED, ENXIO, "name_not_resolved", "name not resolved")                                       \
    X(NO_DATABASE, ENOENT, "database_missing", "the database does not exist")                            \
    X(BEHIND, EAGAIN, "behind", "behind (its queue is full)")                                            \
    X(OTHER, EIO, "other", "commit failed")

#define STORE_FAULT_ENUM(name, e, label, words) STORE_FAULT_##name,
enum store_fault { STORE_FAULTS(STORE_FAULT_ENUM) STORE_FAULT_N };
#undef STORE_FAULT_ENUM

/* The kind of a store error (-errno); anything unnamed is OTHER. */
static inline enum store_fault store_fault_of(int err)
{
#define STORE_FAULT_CASE(name, e, label, words) \
    if (err == -(e))                           \
        return STORE_FAULT_##name;
    STORE_FAULTS(STORE_FAULT_CASE)
#undef STORE_FAULT_CASE
    return STORE_FAULT_OTHER;
}

/* Its label on /metrics ("disk_full"), and what happened, in words for a client and the log. */
static inline const char *store_fault_label(enum store_fault f)
{
#define STORE_FAULT_LABEL(name, e, label, words) label,
    static const char *const l[] = {STORE_FAULTS(STORE_FAULT_LABEL)};
#undef STORE_FAULT_LABEL
    return f < STORE_FAULT_N ? l[f] : "other";
}

static inline const char *store_fault_words(enum store_fault f)
{
#define STORE_FAULT_WORDS(name, e, label, words) words,
    static const char *const w[] = {STORE_FAULTS(STORE_FAULT_WORDS)};
#undef STORE_FAULT_WORDS
    return f < STORE_FAULT_N ? w[f] : w[STORE_FAULT_OTHER];
}

/* Whether an event that failed with f may still be stored (the commit was
 * sent and its answer never came): "not confirmed" rather than "nothing
 * was stored". */
static inline bool store_fault_unconfirmed(enum store_fault f)
{
    return f == STORE_FAULT_TIMEOUT || f == STORE_FAULT_LOST;
}

/* What /readyz and /metrics read of the store, process-wide: written by the
 * store (its commits) and by events.c (a wait that ran out, a request
 * refused), read by any worker; relaxed atomics, written only on a change
 * or a failure, so a healthy store's commits leave the line alone. */
struct store_health {
    _Atomic int down;                 /* 1: the last commit failed or a wait ran out; 0 after one succeeds */
    _Atomic int last_err;             /* the -errno of the latest failure (words for /readyz), 0: none yet */
    _Atomic uint64_t failures[STORE_FAULT_N]; /* requests answered 503 for the store, by kind */
};

/* The store cannot commit: err says why. */
static inline void store_health_down(struct store_health *h, int err)
{
    atomic_store_explicit(&h->last_err, err, memory_order_relaxed);
    if (!atomic_load_explicit(&h->down, memory_order_relaxed))
        atomic_store_explicit(&h->down, 1, memory_order_relaxed);
}

/* A commit succeeded. */
static inline void store_health_up(struct store_health *h)
{
    if (atomic_load_explicit(&h->down, memory_order_relaxed))
        atomic_store_explicit(&h->down, 0, memory_order_relaxed);
}

/* One request answered 503 because of the store (err: its -errno). */
static inline void store_health_count(struct store_health *h, int err)
{
    atomic_fetch_add_explicit(&h->failures[store_fault_of(err)], 1, memory_order_relaxed);
}

/* The schema version this binary writes and reads (schema_version). */
#define STORE_SCHEMA 1

/* One backend's operations on its connection (conn: SQLite's store, or one
 * worker's PostgreSQL connection). */
struct store_ops {
    const char *name;
    /* Queues r (its inbox, done, time_ms, deadline_ms and pod set). Returns
     * 0 (r->done runs on r->inbox's worker once r is committed, or failed),
     * or -errno (-EAGAIN: behind; r is the caller's again). */
    int (*submit)(void *conn, struct store_req *r);
    /* Stores r on the calling thread when that costs no wait (SQLite in
     * memory, idle): 0 (committed: r->id set; done is not called), -errno
     * (failed: nothing stored), -EBUSY (not now: submit it). NULL: never. */
    int (*insert_now)(void *conn, struct store_req *r);
    /* On the inbox's worker: runs done for the events handed back to it.
     * Returns how many. NULL: the backend runs done on the worker itself. */
    unsigned (*poll)(struct store_inbox *in);
    /* A worker's wait for a commit ran out (--db-timeout; the worker keeps
     * each event's deadline only where this is set). NULL: the backend
     * bounds its own waits (PostgreSQL answers each event by its deadline). */
    void (*timed_out)(void *conn);
};

/* The backends this binary has (PRIMED_HAVE_STORE: sqlite.c; PRIMED_HAVE_PG:
 * pg.c); db.c chooses. */
extern const struct store_ops store_sqlite_ops;
extern const struct store_ops store_pg_ops;

#endif
