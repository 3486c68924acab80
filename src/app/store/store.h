/* store.h - the event store: rows (id, time, pod) in SQLite, the embedded
 * database of the caller/callme chain (the seed's in-memory H2).
 *
 * One store thread owns the SQLite connection and writes. A worker queues an
 * event (store_submit) and goes on serving; the store thread commits what
 * arrived while its previous commit ran as one transaction (group commit),
 * then hands each event back to its worker's inbox and wakes the worker,
 * which runs the event's done callback on its own thread (store_inbox_poll):
 * a request that stores an event is answered only once the event is
 * committed. No worker ever waits on a lock held across SQLite, or on a
 * disk. An in-memory database (the default: nothing to wait for) lets a
 * worker that finds the store idle insert its event itself instead
 * (store_insert_now), which saves the two wake-ups of the hand-over. Ids are unique and increasing across workers (assigned under the
 * queue's lock, in queue order) and, with a file, across restarts (seeded
 * from max(id)).
 *
 * Failures have kinds (STORE_FAULTS: disk full, read-only, ...), carried as
 * -errno to the answer; struct store_health says whether the store can
 * commit now (/readyz, /metrics): down from a failed commit (or a wait past
 * --db-timeout) until one succeeds, which, while nothing is queued, the
 * store thread's own probe commit finds out.
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

struct store;

/* Opens path (":memory:" for an in-memory database, else a file in WAL mode,
 * created if missing; sync: synchronous=NORMAL or FULL) and starts the store
 * thread; queue_cap events may wait at once (0: STORE_QUEUE_DEFAULT); the
 * store thread waits up to busy_ms for a lock another connection holds
 * (sqlite3_busy_timeout; 0: a commit that meets one fails at once). Returns
 * 0, or -errno with a one-line reason in err. */
int store_open(struct store **out, const char *path, enum store_sync sync, unsigned queue_cap, unsigned busy_ms,
               char *err, size_t errlen);

/* Queues r (its inbox, done, time_ms and pod set); thread-safe, never blocks
 * on SQLite. Returns 0 (r->done will run on r->inbox's worker once r is
 * committed, or failed), or -EAGAIN when the queue is full (the store thread
 * is that far behind; r is the caller's again). */
int store_submit(struct store *s, struct store_req *r);

/* For an in-memory database only: when nothing is queued and no other
 * thread is inside SQLite, stores r on the calling thread, at once (one
 * autocommit INSERT, microseconds; never waits for a lock another thread
 * holds across SQLite). Returns 0 (committed: r->id set; done is not
 * called), -errno (the insert failed: nothing stored, counted as dropped), or
 * -EBUSY (not now, or a file: store_submit it). Saves the hand-over to the
 * store thread and back, two wake-ups, where there is no disk to wait for. */
int store_insert_now(struct store *s, struct store_req *r);

/* On the inbox's worker: runs done for every event handed back, in the order
 * they were committed. Returns how many. */
unsigned store_inbox_poll(struct store_inbox *in);

/* Rows in the database and their largest id, read by the store thread once
 * what was queued before is written. Returns 0 or -errno. Cold: tests and diagnostics. */
int store_stats(struct store *s, uint64_t *rows, uint64_t *max_id);

struct catalog;

/* Replaces the catalog and inventory tables with c's products (one
 * transaction, run by the store thread), then reads them back into c, in
 * their order: what /api/catalog serves is what the database holds. Cold:
 * start-up. Returns 0, or -EIO with a one-line reason in err. */
int store_catalog(struct store *s, struct catalog *c, char *err, size_t errlen);

/* Events refused because the queue was full, and events whose commit failed. */
uint64_t store_dropped(struct store *s);

/* A worker's wait for a commit ran out (--db-timeout): the store is down
 * (-ETIMEDOUT) until a commit succeeds, and the store thread is woken, so
 * that with nothing queued it probes instead of sleeping on. Thread-safe;
 * takes the queue's lock for a moment (never held across SQLite). */
void store_timed_out(struct store *s);

/* The store's health (its commits; events.c adds the waits that ran out).
 * Lives as long as s. */
struct store_health *store_health_of(struct store *s);

/* Writes what is queued, stops the thread, closes the database. */
void store_close(struct store *s);

#endif
