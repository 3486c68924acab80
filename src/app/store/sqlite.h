/* sqlite.h - the SQLite backend of the event store (store.h): rows in
 * SQLite, a file in WAL mode or :memory: (the default).
 *
 * One store thread owns the SQLite connection and writes. A worker queues an
 * event (store_submit) and goes on serving; the store thread commits what
 * arrived while its previous commit ran as one transaction (group commit),
 * then hands each event back to its worker's inbox and wakes the worker,
 * which runs the event's done callback on its own thread (store_inbox_poll).
 * An in-memory database (nothing to wait for) lets a worker that finds the
 * store idle insert its event itself instead (store_insert_now), which saves
 * the two wake-ups of the hand-over. Ids are assigned under the queue's
 * lock, in queue order, and, with a file, seeded from max(id) across
 * restarts. While it is down and nothing is queued, the store thread's own
 * probe commit (schema_version's row rewritten) finds out when it is up.
 */
#ifndef PRIMED_SQLITE_H
#define PRIMED_SQLITE_H

#include "store.h"

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
