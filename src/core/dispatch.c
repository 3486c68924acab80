/* dispatch.c - inline vs work-stealing execution of a worker's jobs (dispatch.h).
 *
 * Owns the task pool, the wait queue and the throttle; in steal mode also the
 * deque, the done list and the sleep/wake handshake, whose memory-ordering
 * protocol dispatch.h writes down. Knows no HTTP and no connection: a finished
 * task goes back through hooks.done. Everything under PRIMED_HAVE_STEAL is
 * left out of a -Ddispatch=inline build (tests/meson.build checks with nm).
 */
#include "dispatch.h"

#include <errno.h>
#include <stdlib.h>

#include "build_info.h"
#include "clock.h"

#if PRIMED_HAVE_STEAL
static void wake_helpers(struct dispatch *d);
static bool worth_sharing(struct dispatch *d, const struct dispatch *owner);
#endif

/* Runs a job here; owner: the peer whose job we took, or NULL for our own. */
static int run_job(struct dispatch *d, unsigned size, const struct dispatch *owner)
{
    uint64_t t0 = clock_thread_cpu_ns();
    int r;
#if PRIMED_HAVE_STEAL
    if (d->share && worth_sharing(d, owner)) {
        atomic_store_explicit(&d->sharing, true, memory_order_seq_cst); /* before the sleeping flags (Dekker) */
        wake_helpers(d);
        r = d->work->run_shared(d->state, d->share, size);
        atomic_store_explicit(&d->sharing, false, memory_order_release);
    } else
#endif
        r = d->work->run(d->state, size);
    stats_observe(&d->stats->job_seconds, clock_thread_cpu_ns() - t0);
    return r;
}

#if PRIMED_HAVE_STEAL
static bool steal_submit(struct dispatch *d, struct dispatch_job *job);
static bool steal_cancel(struct dispatch *d, struct dispatch_job *job);
static int steal_wait_timeout(struct dispatch *d, int timeout_ms);
static void steal_poll(struct dispatch *d);
static int steal_init(struct dispatch *d, unsigned queue_max);
static void steal_fini(struct dispatch *d);
#endif

int dispatch_init(struct dispatch *d, enum dispatch_mode mode, unsigned queue_max, bool split, unsigned id,
                  struct dispatch *const *peers, unsigned npeers)
{
    d->id = id;
    d->peers = peers;
    d->npeers = npeers;
    d->steal = mode == DISPATCH_STEAL;
    d->split = split && d->steal && npeers > 1; /* one worker has nobody to help it */
    if (!d->steal)
        return 0;
#if PRIMED_HAVE_STEAL
    return steal_init(d, queue_max);
#else
    (void)queue_max;
    return -ENOTSUP;
#endif
}

int dispatch_set_work(struct dispatch *d, const struct dispatch_work *work, void *state)
{
    d->work = work;
    d->state = state;
#if PRIMED_HAVE_STEAL
    if (d->split && work->share_create && work->run_shared && work->help && !d->share) {
        d->share = work->share_create();
        if (!d->share)
            return -ENOMEM;
    }
#endif
    return 0;
}

void dispatch_fini(struct dispatch *d)
{
#if PRIMED_HAVE_STEAL
    if (d->steal)
        steal_fini(d);
#else
    (void)d;
#endif
}

bool dispatch_submit(struct dispatch *d, struct dispatch_job *job, uint64_t tag, unsigned bits, int *result)
{
#if PRIMED_HAVE_STEAL
    if (d->share && d->tasks_out == 0 && worth_sharing(d, NULL)) {
        /* idle peers and nothing queued anywhere: run it here, shared, and
         * wake the peers to help. Queued, it would go to a woken thief and
         * its answer come back to us: two more wake-ups on the critical path
         * (docs/architecture.md) */
        *result = run_job(d, bits, NULL);
        atomic_store_explicit(&d->answered_ns, clock_mono_ns(), memory_order_relaxed);
        return true;
    }
    if (d->steal) {
        job->tag = tag;
        job->bits = bits;
        return steal_submit(d, job);
    }
#endif
    (void)job;
    (void)tag;
    *result = run_job(d, bits, NULL);
    return true;
}

bool dispatch_cancel(struct dispatch *d, struct dispatch_job *job)
{
#if PRIMED_HAVE_STEAL
    if (d->steal)
        return steal_cancel(d, job);
#endif
    (void)d;
    job->where = DISPATCH_JOB_IDLE;
    return true;
}

int dispatch_wait_timeout(struct dispatch *d, int timeout_ms)
{
#if PRIMED_HAVE_STEAL
    if (d->steal)
        return steal_wait_timeout(d, timeout_ms);
#else
    (void)d;
#endif
    return timeout_ms;
}

void dispatch_woke(struct dispatch *d)
{
    if (d->steal) {
        atomic_store_explicit(&d->sleeping, 0, memory_order_relaxed);
        atomic_store_explicit(&d->napping, 0, memory_order_relaxed);
    }
}

void dispatch_poll(struct dispatch *d)
{
#if PRIMED_HAVE_STEAL
    if (d->steal)
        steal_poll(d);
#else
    (void)d;
#endif
}

int64_t dispatch_queue_depth(const struct dispatch *d)
{
    if (!d->steal)
        return -1;
    int64_t depth = 0;
#if PRIMED_HAVE_STEAL
    for (unsigned i = 0; i < d->npeers; i++)
        depth += wsq_size(&d->peers[i]->q);
#endif
    return depth;
}

/* ---- work stealing (left out of -Ddispatch=inline builds) ---------------- */
#if PRIMED_HAVE_STEAL

#define HANDOFF_NS 1000000u /* 1 ms: a woken worker is running by then */

static int steal_init(struct dispatch *d, unsigned queue_max)
{
    d->tasks = calloc(queue_max, sizeof(*d->tasks));
    if (!d->tasks || wsq_init(&d->q, queue_max)) {
        free(d->tasks);
        d->tasks = NULL;
        return -ENOMEM;
    }
    for (unsigned i = queue_max; i-- > 0;) {
        d->tasks[i].next = d->task_free;
        d->task_free = &d->tasks[i];
    }
    return 0;
}

static void steal_fini(struct dispatch *d)
{
    /* the deque, pool and share stay: peers may still look at them until every
     * worker has exited (the process ends then) */
    (void)d;
}

/* Returns whether a sleeping worker was woken. */
/* Takes a peer's sleeping or napping flag from 1 to 0: true for the one
 * caller that may wake it. Callers issue a seq_cst fence (or store) first. */
static bool claim_flag(_Atomic int *flag)
{
    return atomic_load_explicit(flag, memory_order_relaxed) && atomic_exchange_explicit(flag, 0, memory_order_seq_cst);
}

static bool wake_one_thief(struct dispatch *d)
{
    atomic_thread_fence(memory_order_seq_cst); /* the push before the sleeping flags (Dekker) */
    for (unsigned i = 1; i < d->npeers; i++) {
        struct dispatch *o = d->peers[(d->id + i) % d->npeers];
        if (claim_flag(&o->sleeping)) {
            io_wake(o->io);
            return true;
        }
    }
    return false;
}

/* A peer that answered a request of its own less than this long ago is
 * likely to be sent its next one within a round trip (a client on a
 * keep-alive connection: -c2 and -c3 on two workers), asleep or not: sharing
 * with it would cost its next request a piece's wait and the job the
 * split's extra ladders for nothing (docs/architecture.md). */
#define QUIET_NS 1000000u /* 1 ms */

static bool quiet(const struct dispatch *o, uint64_t now)
{
    uint64_t a = atomic_load_explicit(&o->answered_ns, memory_order_relaxed);
    return a <= now && now - a >= QUIET_NS;
}

/* Whether to share the job about to run: only when no other job waits
 * anywhere (every deque empty, our wait queue too) and a quiet peer is idle
 * to help: asleep, waiting out a hand-off, or the owner of this very job
 * (it queued the job for us, so it has nothing of its own to run; it may
 * not have announced its nap yet). A loaded machine runs every job whole:
 * sharing costs the owner its sieve's hand-offs, and pays only when the
 * helpers had nothing else to do. Relaxed reads: a stale answer costs one
 * job run whole or shared, never a wrong one. */
static bool worth_sharing(struct dispatch *d, const struct dispatch *owner)
{
    if (!fifo_empty(&d->waitq))
        return false;
    uint64_t now = clock_mono_ns();
    bool idle = owner && quiet(owner, now);
    for (unsigned i = 0; i < d->npeers; i++) {
        struct dispatch *o = d->peers[i];
        if (wsq_size(&o->q) > 0)
            return false;
        if (o != d && (atomic_load_explicit(&o->sleeping, memory_order_relaxed) ||
                       atomic_load_explicit(&o->napping, memory_order_relaxed)) && quiet(o, now))
            idle = true;
    }
    return idle;
}

/* Before a shared job: wakes every sleeping peer, and every peer waiting out
 * a hand-off (napping), to help with it. */
static void wake_helpers(struct dispatch *d)
{
    atomic_thread_fence(memory_order_seq_cst); /* the sharing flag before the sleeping flags (Dekker) */
    for (unsigned i = 1; i < d->npeers; i++) {
        struct dispatch *o = d->peers[(d->id + i) % d->npeers];
        if (claim_flag(&o->sleeping) || claim_flag(&o->napping))
            io_wake(o->io);
    }
}

static void task_queue(struct dispatch *d, struct dispatch_job *job, struct task *t)
{
    t->tag = job->tag;
    t->owner = d->id;
    t->bits = job->bits;
    t->queued_ns = clock_mono_ns();
    atomic_store_explicit(&t->cancelled, false, memory_order_relaxed);
    job->task = t;
    job->where = DISPATCH_JOB_QUEUED;
    wsq_push(&d->q, t); /* cannot fail: capacity >= queue_max >= tasks_out */
    d->tasks_out++;
    /* Hand-off: if an idle worker was woken for this task, leave it to that
     * worker for a moment and go back to our ring, where the next request
     * may be waiting; otherwise the owner, already awake, always takes its
     * own task first and a few busy connections never leave its core. */
    if (wake_one_thief(d))
        d->handoff_until_ns = t->queued_ns + HANDOFF_NS;
}

static bool steal_submit(struct dispatch *d, struct dispatch_job *job)
{
    struct task *t = d->task_free;
    if (!t) {
        /* queue bound reached: this job waits its turn, reading pauses */
        job->where = DISPATCH_JOB_WAITING;
        fifo_push(&d->waitq, &job->wait);
        d->throttled = true;
        return false;
    }
    d->task_free = t->next;
    task_queue(d, job, t);
    if (!d->task_free)
        d->throttled = true;
    return false;
}

static bool steal_cancel(struct dispatch *d, struct dispatch_job *job)
{
    if (job->where == DISPATCH_JOB_QUEUED) {
        /* nobody will read the answer: do not compute it */
        atomic_store_explicit(&job->task->cancelled, true, memory_order_relaxed);
        return false;
    }
    if (job->where == DISPATCH_JOB_WAITING) /* cold: backpressure only */
        fifo_remove(&d->waitq, &job->wait);
    job->where = DISPATCH_JOB_IDLE;
    return true;
}

/* One of our tasks is back (run here or by a thief): free it, answer it. */
static void task_done(struct dispatch *d, struct task *t)
{
    atomic_store_explicit(&d->answered_ns, clock_mono_ns(), memory_order_relaxed);
    d->tasks_out--;
    t->next = d->task_free;
    d->task_free = t;
    d->hooks.done(d->hooks.done_ctx, t->tag, t->result);
}

static void unthrottle(struct dispatch *d)
{
    /* first the jobs that waited for a task, in arrival order */
    while (!fifo_empty(&d->waitq) && d->task_free) {
        struct dispatch_job *job = fifo_entry(fifo_pop(&d->waitq), struct dispatch_job, wait);
        struct task *t = d->task_free;
        d->task_free = t->next;
        task_queue(d, job, t);
    }
    if (!d->throttled || !fifo_empty(&d->waitq) || !d->task_free)
        return;
    d->throttled = false;
    d->hooks.resume(d->hooks.resume_ctx);
}

/* Takes the tasks other workers finished for us. */
static void collect_finished(struct dispatch *d)
{
    struct treiber_link *l = treiber_take(&d->done);
    if (!l)
        return;
    while (l) { /* in completion order */
        struct treiber_link *next = l->next;
        task_done(d, treiber_entry(l, struct task, done));
        l = next;
    }
    unthrottle(d);
}

/* Our only queued task is being handed to the worker woken for it
 * (task_queue): leave it alone until HANDOFF_NS have passed. */
static bool handing_off(struct dispatch *d)
{
    return d->handoff_until_ns && wsq_size(&d->q) == 1 && clock_mono_ns() < d->handoff_until_ns;
}

static struct task *take_task(struct dispatch *d, bool *stolen)
{
    for (unsigned i = handing_off(d) ? 1 : 0; i < d->npeers; i++) {
        struct dispatch *o = d->peers[(d->id + i) % d->npeers];
        for (int tries = 0; tries < 4; tries++) {
            void *x = wsq_steal(&o->q);
            if (x == WSQ_EMPTY)
                break;
            if (x != WSQ_ABORT) {
                *stolen = i != 0;
                return x;
            }
        }
    }
    return NULL;
}

/* Runs one queued task (our own first, oldest first; else the oldest of
 * another worker) and sends the result to its owner. Returns whether there
 * was one. */
static bool run_one_task(struct dispatch *d)
{
    bool stolen = false;
    struct task *t = take_task(d, &stolen);
    if (!t)
        return false;
    if (atomic_load_explicit(&t->cancelled, memory_order_relaxed))
        t->result = -ECANCELED; /* the client reset while it waited */
    else
        t->result = run_job(d, t->bits, stolen ? d->peers[t->owner] : NULL);
    if (!stolen) {
        task_done(d, t);
        unthrottle(d);
        return true;
    }
    stats_add(&d->stats->steals, 1);
    struct dispatch *o = d->peers[t->owner];
    treiber_push(&o->done, &t->done);
    if (atomic_exchange_explicit(&o->sleeping, 0, memory_order_seq_cst))
        io_wake(o->io);
    return true;
}

/* A peer sharing its job, or NULL. */
static struct dispatch *sharing_peer(const struct dispatch *d)
{
    for (unsigned i = 1; i < d->npeers; i++) {
        struct dispatch *o = d->peers[(d->id + i) % d->npeers];
        if (atomic_load_explicit(&o->sharing, memory_order_seq_cst))
            return o;
    }
    return NULL;
}

static void steal_poll(struct dispatch *d)
{
    collect_finished(d);
    if (run_one_task(d))
        return;
    /* nothing of our own to run: one piece of a peer's job */
    struct dispatch *o = sharing_peer(d);
    if (o && d->work->help && d->work->help(d->state, o->share))
        stats_add(&d->stats->pieces_helped, 1);
}

static bool work_anywhere(struct dispatch *d)
{
    if (treiber_nonempty(&d->done, memory_order_seq_cst) || sharing_peer(d))
        return true;
    for (unsigned i = 0; i < d->npeers; i++)
        if (wsq_size(&d->peers[i]->q) > 0)
            return true;
    return false;
}

static int steal_wait_timeout(struct dispatch *d, int timeout_ms)
{
    bool handoff = false;
    if (treiber_nonempty(&d->done, memory_order_relaxed) || sharing_peer(d)) {
        timeout_ms = 0;
    } else if (wsq_size(&d->q) > 0) {
        /* during a hand-off, wait on the ring for at most 1 ms, without
         * announcing sleep */
        handoff = handing_off(d);
        timeout_ms = handoff ? 1 : 0;
    }
    if (handoff && d->share) {
        /* the worker the task went to wakes us to help once it shares
         * (wake_helpers), rather than leaving us out for the 1 ms */
        atomic_store_explicit(&d->napping, 1, memory_order_seq_cst);
        if (sharing_peer(d))
            timeout_ms = 0;
    }
    if (timeout_ms && !handoff) {
        /* announce sleep, then look once more (pairs with wake_one_thief) */
        atomic_store_explicit(&d->sleeping, 1, memory_order_seq_cst);
        if (work_anywhere(d))
            timeout_ms = 0;
    }
    return timeout_ms;
}

#endif /* PRIMED_HAVE_STEAL */
