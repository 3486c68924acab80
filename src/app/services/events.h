/* events.h - a request's event stored before it is answered (store.h): one
 * worker's events from submit to commit, each with its --db-timeout deadline.
 *
 * owns: the worker's events in flight (a pool of its own: an event outlives
 * its request when the client goes away before the commit), their deadlines,
 * the worker's store inbox. never: a request, a connection or an answer (the
 * caller hands a slot and a done function, and answers from there), the
 * store's connection (the store service's: db.h), which backend it is.
 */
#ifndef PRIMED_EVENTS_H
#define PRIMED_EVENTS_H

#include <stdatomic.h>
#include <stdint.h>

#include "app.h"
#include "objpool.h"
#include "store.h"
#include "timer.h"

struct event_job;

/* Runs once ctx's event is committed (err 0, id set) or failed (-errno:
 * nothing was stored; -ETIMEDOUT: not confirmed after --db-timeout, the
 * event stays the store's), on the worker, maybe inside events_store(). */
typedef void events_done_fn(void *ctx, uint64_t id, int err);

/* One worker's events. The owner sets the fields down to "its own" before
 * events_init(); none of those is owned. */
struct events {
    const struct store_ops *ops; /* the worker's backend (store.h, chosen by db.c), or NULL: ids from next_id */
    void *conn;                  /* its connection: SQLite's store, or the worker's PostgreSQL one */
    struct store_health *health; /* the store's, or NULL */
    _Atomic uint64_t *next_id;   /* process-wide ids without a store */
    const char *pod;             /* each event's pod; lives as long as the process */
    const char *store_name;      /* for the log */
    const uint64_t *now_ms;      /* the worker's clock */
    unsigned timeout_ms;         /* --db-timeout */
    unsigned worker;             /* for the log */
    /* its own */
    struct store_inbox inbox;  /* events committed for this worker (its io: the owner's, set before the first submit) */
    struct objpool jobs;       /* events until their commit */
    struct timer_list timers;  /* their --db-timeout deadlines, where the backend has timed_out */
    unsigned out;              /* events submitted and not yet back: the worker does not exit while any is out */
};

void events_init(struct events *ev);

/* The worker's events (the events service's, services.h). */
static inline struct events *events_of(struct app_worker *aw)
{
    return aw->service[SERVICE_EVENTS];
}

/* Stores an event (now, the pod); then(ctx, id, err) runs once it is
 * committed or failed. While it waits, *slot holds it (for events_cancel;
 * NULL otherwise). Returns 0, or -EAGAIN / -ENOMEM when it cannot be queued,
 * -EIO when an inline insert failed (then does not run; nothing was stored). */
int events_store(struct events *ev, struct event_job **slot, events_done_fn *then, void *ctx);
/* The request of *slot went away: its event is still stored, then does not run. */
void events_cancel(struct event_job **slot);
/* Runs then for the events committed for this worker. Returns how many. */
unsigned events_poll(struct events *ev);
/* Runs then with -ETIMEDOUT for the events not committed --db-timeout after
 * their submit, where the backend keeps no deadline of its own
 * (store_ops.timed_out set: SQLite's). */
void events_expire(struct events *ev);
/* The next such deadline, or none. */
uint64_t events_next_deadline(const struct events *ev, uint64_t none);
/* Frees the pool: after the store's connection is gone, nothing is out. */
void events_fini(struct events *ev);

#endif
