/* store.h - the event store: rows (id, time, pod) in SQLite, the embedded
 * database of the caller/callme chain (the seed's in-memory H2).
 *
 * One store thread owns the SQLite connection and writes; workers only queue
 * an event and get its id back at once, so no worker ever waits on SQLite, a
 * lock held by SQLite, or a disk (no fsync on a worker thread). Ids are
 * unique and increasing across workers (assigned under the queue's lock, in
 * queue order) and, with a file, across restarts (seeded from max(id)).
 */
#ifndef PRIMED_STORE_H
#define PRIMED_STORE_H

#include <stddef.h>
#include <stdint.h>

#define STORE_POD_MAX       128   /* pod names kept (Kubernetes allows 253; longer is cut) */
#define STORE_QUEUE_DEFAULT 65536 /* events queued before store_add() refuses */

struct store;

/* Opens path (":memory:" for an in-memory database, else a file in WAL mode,
 * created if missing) and starts the store thread; queue_cap events may wait
 * at once (0: STORE_QUEUE_DEFAULT). Returns 0, or -errno with a one-line
 * reason in err. */
int store_open(struct store **out, const char *path, unsigned queue_cap, char *err, size_t errlen);

/* Queues an event; thread-safe, never blocks on SQLite. Returns its id (> 0),
 * or 0 when the queue is full (the store thread is that far behind). */
uint64_t store_add(struct store *s, int64_t time_ms, const char *pod);

/* Waits until every event queued so far is committed, up to timeout_ms.
 * Returns 0 or -ETIMEDOUT. Cold: tests and shutdown. */
int store_sync(struct store *s, int timeout_ms);

/* Rows in the database and their largest id, read by the store thread after
 * a sync. Returns 0 or -errno. Cold: tests and diagnostics. */
int store_stats(struct store *s, uint64_t *rows, uint64_t *max_id);

struct catalog;

/* Replaces the catalog and inventory tables with c's products (one
 * transaction, run by the store thread), then reads them back into c, in
 * their order: what /api/catalog serves is what the database holds. Cold:
 * start-up. Returns 0, or -EIO with a one-line reason in err. */
int store_catalog(struct store *s, struct catalog *c, char *err, size_t errlen);

/* Events refused because the queue was full, and rows that failed to insert. */
uint64_t store_dropped(struct store *s);

/* Writes what is queued, stops the thread, closes the database. */
void store_close(struct store *s);

#endif
