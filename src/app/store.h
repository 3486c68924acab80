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
 */
#ifndef PRIMED_STORE_H
#define PRIMED_STORE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
    struct store_req *next;   /* a store's own queue while it is out (pgstore.c) */
    struct treiber_link back; /* on its inbox, once committed or failed */
    /* runs on the inbox's worker: err 0 (committed, id set) or -errno
     * (nothing was stored) */
    void (*done)(struct store_req *r);
    struct store_inbox *inbox;
    int64_t time_ms;
    const char *pod; /* lives as long as the process */
    uint64_t id;
    int err;
};

struct store;

/* Opens path (":memory:" for an in-memory database, else a file in WAL mode,
 * created if missing; sync: synchronous=NORMAL or FULL) and starts the store
 * thread; queue_cap events may wait at once (0: STORE_QUEUE_DEFAULT). Returns
 * 0, or -errno with a one-line reason in err. */
int store_open(struct store **out, const char *path, enum store_sync sync, unsigned queue_cap, char *err,
               size_t errlen);

/* Queues r (its inbox, done, time_ms and pod set); thread-safe, never blocks
 * on SQLite. Returns 0 (r->done will run on r->inbox's worker once r is
 * committed, or failed), or -EAGAIN when the queue is full (the store thread
 * is that far behind; r is the caller's again). */
int store_submit(struct store *s, struct store_req *r);

/* For an in-memory database only: when nothing is queued and no other
 * thread is inside SQLite, stores r on the calling thread, at once (one
 * autocommit INSERT, microseconds; never waits for a lock another thread
 * holds across SQLite). Returns 0 (committed: r->id set; done is not
 * called), -EIO (the insert failed: nothing stored, counted as dropped), or
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

/* Writes what is queued, stops the thread, closes the database. */
void store_close(struct store *s);

#endif
