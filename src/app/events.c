/* events.c - a request's event stored before it is answered (store.h): the
 * event goes to the store, the request waits (conn_wait), and the answer
 * comes once the event's transaction has committed, on the request's own
 * worker, through the worker's store inbox.
 *
 * An event outlives its request when the client goes away before the commit
 * (a queued event cannot be recalled): events come from a pool of the
 * worker's own (objpool.h), not from the connection's record, so the slot is
 * reused at once; a late commit finds its event cancelled and frees it. The
 * worker does not exit while any event is out. An in-memory SQLite
 * store that is idle takes the event on the worker itself
 * (store_insert_now) and the answer is immediate, as it is without a store
 * built in, where ids come from a process-wide counter.
 *
 * Every wait is bounded: an event queued carries a deadline (--db-timeout)
 * on the worker's list; past it the request is answered 503, "not
 * confirmed" (its commit may still come), and the event stays the store's
 * until it comes back, as a cancelled one does. That timer is the only
 * work the bound adds to a request: a list insert and a removal, no syscall.
 */
#include "app.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <time.h>

#include "build_info.h"
#include "clock.h"
#if PRIMED_HAVE_PG
#include "pgstore.h"
#endif

#define CHUNK 64

struct event_job {
    struct store_req req; /* first: the store hands it back */
    struct app_req *q;    /* its request, or NULL once cancelled or answered (its deadline passed) */
    events_done_fn *then;
    struct timer deadline; /* on aw->event_timers until the store hands it back */
};

#if PRIMED_HAVE_STORE || PRIMED_HAVE_PG
static struct event_job *job_get(struct app_worker *aw)
{
    if (!aw->events.size)
        objpool_init(&aw->events, sizeof(struct event_job), CHUNK);
    return objpool_get(&aw->events);
}

static void job_put(struct app_worker *aw, struct event_job *j)
{
    objpool_put(&aw->events, j);
}

/* store_req.done, on this worker: the event is committed (or failed). */
static void on_committed(struct store_req *r)
{
    struct event_job *j = (struct event_job *)r;
    struct app_worker *aw = (struct app_worker *)((char *)r->inbox - offsetof(struct app_worker, inbox));
    struct app_req *q = j->q;
    events_done_fn *then = j->then;
    uint64_t id = r->id;
    int err = r->err;
    timer_remove(&j->deadline);
    aw->events_out--;
    job_put(aw, j);
    if (!q)
        return; /* its client went away, or it was answered at its deadline */
    q->event = NULL;
    if (err && aw->env.store_health)
        store_health_count(aw->env.store_health, err);
    then(aw, q, id, err);
}

/* Submits r to the worker's store: PostgreSQL's connection, else SQLite's
 * thread. Returns 0, or -errno (nothing queued). */
static int submit(struct app_worker *aw, struct store_req *r)
{
#if PRIMED_HAVE_PG
    if (aw->pg)
        return pgstore_submit(aw->pg, r);
#endif
#if PRIMED_HAVE_STORE
    if (aw->app->store)
        return store_submit(aw->app->store, r);
#endif
    return -ENOSYS;
}
#endif

int events_store(struct app_worker *aw, struct app_req *q, events_done_fn *then)
{
#if PRIMED_HAVE_STORE || PRIMED_HAVE_PG
    if (aw->app->store || aw->pg) {
        int64_t time_ms = (int64_t)(clock_wall_us() / 1000u);
#if PRIMED_HAVE_STORE
        if (!aw->pg) {
            struct store_req now = {.time_ms = time_ms, .pod = aw->env.pod};
            int r = store_insert_now(aw->app->store, &now);
            if (r != -EBUSY) {
                if (r) {
                    store_health_count(aw->env.store_health, r);
                    return r;
                }
                then(aw, q, now.id, 0);
                return 0;
            }
        }
#endif
        struct event_job *j = job_get(aw);
        if (!j)
            return -ENOMEM;
        j->q = q;
        j->then = then;
        j->req.done = on_committed;
        j->req.inbox = &aw->inbox;
        j->req.time_ms = time_ms;
        j->req.pod = aw->env.pod;
        int r = submit(aw, &j->req);
        if (r) {
            job_put(aw, j);
            if (aw->env.store_health)
                store_health_count(aw->env.store_health, r);
            return r;
        }
        q->event = j;
        aw->events_out++;
        timer_init(&j->deadline);
        timer_add(&aw->event_timers, &j->deadline, aw->w->pool.now_ms + aw->cfg->db_timeout_ms);
        return 0;
    }
#endif
    /* no store: the id is the answer, at once */
    uint64_t id = atomic_fetch_add_explicit(&aw->app->event_n, 1, memory_order_relaxed) + 1;
    then(aw, q, id, 0);
    return 0;
}

void events_cancel(struct app_worker *aw, struct app_req *q)
{
    if (q->event) {
        q->event->q = NULL; /* freed when its commit comes back */
        q->event = NULL;
    }
}

unsigned events_poll(struct app_worker *aw)
{
#if PRIMED_HAVE_STORE
    return store_inbox_poll(&aw->inbox);
#else
    return 0;
#endif
}

#if PRIMED_HAVE_STORE || PRIMED_HAVE_PG
/* timer_fire_fn: q's event is not committed after --db-timeout. */
static void on_deadline(struct timer *t, void *ctx)
{
    struct app_worker *aw = ctx;
    struct event_job *j = (struct event_job *)((char *)t - offsetof(struct event_job, deadline));
    struct app_req *q = j->q;
    if (!q)
        return; /* its client went away meanwhile */
    j->q = NULL; /* the store still has it: on_committed frees it */
    q->event = NULL;
    struct store_health *h = aw->env.store_health;
    if (h) {
        store_health_count(h, -ETIMEDOUT);
        /* SQLite: the store thread did not commit in time, so it cannot
         * commit now, until one succeeds. PostgreSQL's connection says so
         * itself (pgstore_poll drops it at the same bound). */
        if (!aw->pg) {
            if (!atomic_load_explicit(&h->down, memory_order_relaxed))
                log_msg("worker %u: event store %s: no commit within %u ms (--db-timeout); /readyz 503 until a "
                        "commit succeeds", aw->w->id, aw->env.store_name, aw->cfg->db_timeout_ms);
            store_health_down(h, -ETIMEDOUT);
        }
    }
    j->then(aw, q, 0, -ETIMEDOUT);
}
#endif

void events_expire(struct app_worker *aw)
{
#if PRIMED_HAVE_STORE || PRIMED_HAVE_PG
    timer_expire(&aw->event_timers, aw->w->pool.now_ms, on_deadline, aw);
#endif
}

uint64_t events_next_deadline(struct app_worker *aw, uint64_t none)
{
    return timer_next(&aw->event_timers, none);
}

void events_fini(struct app_worker *aw)
{
    objpool_fini(&aw->events);
}
