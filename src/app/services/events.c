/* events.c - a request's event stored before it is answered (events.h,
 * store.h): the event goes to the store, the caller's request waits, and its
 * done function runs once the event's transaction has committed, on the
 * request's own worker, through the worker's store inbox.
 *
 * An event outlives its request when the client goes away before the commit
 * (a queued event cannot be recalled): events come from a pool of the
 * worker's own (objpool.h), not from the caller's record, so that record is
 * reused at once; a late commit finds its event cancelled and frees it. The
 * worker does not exit while any event is out. An in-memory SQLite
 * store that is idle takes the event on the worker itself
 * (store_insert_now) and the answer is immediate, as it is without a store
 * built in, where ids come from a process-wide counter.
 *
 * Every wait is bounded, from the event's submit (--db-timeout): the event
 * carries its deadline to the store. SQLite's events also wait on the
 * worker's list; past it the done function runs with -ETIMEDOUT (the caller
 * answers 503, "not confirmed": its commit may still come), and the event
 * stays the store's until it comes back, as a cancelled one does. That timer
 * is the only work the bound adds to a request: a list insert and a
 * removal, no syscall. PostgreSQL's connection is on this worker and keeps
 * the bound itself (pg.h): an event not sent by then is dropped,
 * "nothing was stored", and a transaction past its oldest event's deadline
 * is dropped with its connection, "not confirmed"; a timer here would
 * answer "not confirmed" for the events it never sent.
 */
#include "events.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "clock.h"
#include "config.h"
#include "db.h"
#include "log.h"

#define CHUNK 64

struct event_job {
    struct store_req req;    /* first: the store hands it back */
    struct event_job **slot; /* its caller's hold on it, or NULL once cancelled or answered (its deadline passed) */
    events_done_fn *then;
    void *ctx;
    struct timer deadline; /* on ev->timers until the store hands it back */
};

void events_init(struct events *ev)
{
    timer_list_init(&ev->timers, 2);
}

static struct event_job *job_get(struct events *ev)
{
    if (!ev->jobs.size)
        objpool_init(&ev->jobs, sizeof(struct event_job), CHUNK);
    return objpool_get(&ev->jobs);
}

static void job_put(struct events *ev, struct event_job *j)
{
    objpool_put(&ev->jobs, j);
}

/* store_req.done, on this worker: the event is committed (or failed). */
static void on_committed(struct store_req *r)
{
    struct event_job *j = (struct event_job *)r;
    struct events *ev = (struct events *)((char *)r->inbox - offsetof(struct events, inbox));
    struct event_job **slot = j->slot;
    events_done_fn *then = j->then;
    void *ctx = j->ctx;
    uint64_t id = r->id;
    int err = r->err;
    timer_remove(&j->deadline);
    ev->out--;
    job_put(ev, j);
    if (!slot)
        return; /* its client went away, or it was answered at its deadline */
    *slot = NULL;
    if (err && ev->health)
        store_health_count(ev->health, err);
    then(ctx, id, err);
}

int events_store(struct events *ev, struct event_job **slot, events_done_fn *then, void *ctx)
{
    const struct store_ops *ops = ev->ops;
    if (!ops) {
        /* no store: the id is the answer, at once */
        uint64_t id = atomic_fetch_add_explicit(ev->next_id, 1, memory_order_relaxed) + 1;
        then(ctx, id, 0);
        return 0;
    }
    int64_t time_ms = (int64_t)(clock_wall_us() / 1000u);
    if (ops->insert_now) {
        struct store_req now = {.time_ms = time_ms, .pod = ev->pod};
        int r = ops->insert_now(ev->conn, &now);
        if (r != -EBUSY) {
            if (r) {
                store_health_count(ev->health, r);
                return r;
            }
            then(ctx, now.id, 0);
            return 0;
        }
    }
    struct event_job *j = job_get(ev);
    if (!j)
        return -ENOMEM;
    j->slot = slot;
    j->then = then;
    j->ctx = ctx;
    j->req.done = on_committed;
    j->req.inbox = &ev->inbox;
    j->req.time_ms = time_ms;
    j->req.deadline_ms = *ev->now_ms + ev->timeout_ms;
    j->req.pod = ev->pod;
    int r = ops->submit(ev->conn, &j->req);
    if (r) {
        job_put(ev, j);
        if (ev->health)
            store_health_count(ev->health, r);
        return r;
    }
    *slot = j;
    ev->out++;
    timer_init(&j->deadline);
    if (ops->timed_out)
        timer_add(&ev->timers, &j->deadline, j->req.deadline_ms);
    return 0;
}

void events_cancel(struct event_job **slot)
{
    if (*slot) {
        (*slot)->slot = NULL; /* freed when its commit comes back */
        *slot = NULL;
    }
}

unsigned events_poll(struct events *ev)
{
    return ev->ops && ev->ops->poll ? ev->ops->poll(&ev->inbox) : 0;
}

/* timer_fire_fn: an event is not committed after --db-timeout. */
static void on_deadline(struct timer *t, void *arg)
{
    struct events *ev = arg;
    struct event_job *j = (struct event_job *)((char *)t - offsetof(struct event_job, deadline));
    struct event_job **slot = j->slot;
    if (!slot)
        return; /* its client went away meanwhile */
    j->slot = NULL; /* the store still has it: on_committed frees it */
    *slot = NULL;
    struct store_health *h = ev->health;
    if (h) {
        store_health_count(h, -ETIMEDOUT);
        /* a backend that keeps no deadline of its own (SQLite's thread) did
         * not commit in time, so it cannot commit now, until one succeeds */
        if (!atomic_load_explicit(&h->down, memory_order_relaxed))
            log_msg("worker %u: event store %s: no commit within %u ms (--db-timeout); /readyz 503 until a "
                    "commit succeeds", ev->worker, ev->store_name, ev->timeout_ms);
        ev->ops->timed_out(ev->conn); /* SQLite's wakes its thread: it probes while down */
    }
    j->then(j->ctx, 0, -ETIMEDOUT);
}

void events_expire(struct events *ev)
{
    timer_expire(&ev->timers, *ev->now_ms, on_deadline, ev);
}

uint64_t events_next_deadline(const struct events *ev, uint64_t none)
{
    return timer_next(&ev->timers, none);
}

void events_fini(struct events *ev)
{
    objpool_fini(&ev->jobs);
}

/* ---- the events service (services.h) ------------------------------------ */

/* The worker's events, into the store the store service opened (db.h). */
static int events_service_init(struct app_worker *aw)
{
    struct app *a = aw->app;
    struct worker *w = aw->w;
    const struct db *d = db_of(a);
    struct events *ev = calloc(1, sizeof(*ev));
    if (!ev) {
        snprintf(w->init_why, sizeof(w->init_why), "allocate the events: out of memory");
        return -ENOMEM;
    }
    const struct store_ops *ops = NULL;
    void *conn = db_conn(aw, &ops);
    *ev = (struct events){.ops = ops, .conn = conn, .health = d ? d->health : NULL,
                          .next_id = &a->event_n, .pod = a->pod, .store_name = d ? d->name : "",
                          .now_ms = &w->pool.now_ms, .timeout_ms = aw->cfg->db_timeout_ms, .worker = w->id,
                          .inbox = {.io = &w->io}};
    events_init(ev);
    aw->service[SERVICE_EVENTS] = ev;
    return 0;
}

/* after the store's connection is gone: nothing is out */
static void events_service_fini(struct app_worker *aw)
{
    struct events *ev = events_of(aw);
    if (ev)
        events_fini(ev);
}

static void events_service_poll(struct app_worker *aw, bool second)
{
    events_poll(events_of(aw));
    events_expire(events_of(aw));
}

static uint64_t events_service_next_deadline(struct app_worker *aw, uint64_t next)
{
    return events_next_deadline(events_of(aw), next);
}

/* events of requests whose clients went away are not back yet */
static bool events_service_busy(struct app_worker *aw)
{
    return events_of(aw)->out != 0;
}

const struct app_service events_service = {
    .name = "events",
    .init = events_service_init,
    .fini = events_service_fini,
    .poll = events_service_poll,
    .next_deadline = events_service_next_deadline,
    .busy = events_service_busy,
};
