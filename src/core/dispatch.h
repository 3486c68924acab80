/* dispatch.h - where a worker's CPU-bound jobs run: inline on the ring
 * thread, or as a task on this worker's work-stealing deque (wsq.h) that any
 * worker may run.
 *
 * A dispatch knows no HTTP, no connection and no app: it runs the job
 * function its caller gives it (struct dispatch_work, dispatch_set_work); a
 * job is a tag (the caller's name for it) and a size (the work's argument);
 * a finished task comes back through the done hook its caller gives it, and the lifted throttle through resume. It owns the task pool, the wait queue (jobs
 * that found the pool empty), the throttle (backpressure: the pool is empty or
 * jobs wait) and, in steal mode, stealing and the sleep/wake handshake.
 * Built with -Ddispatch=inline, none of the stealing part is compiled in.
 *
 * Memory-ordering protocol (steal mode). Shared between workers: each one's
 * deque (wsq.h's own protocol), its done list and its sleeping flag.
 * - done list: a Treiber stack of finished tasks for their owner (treiber.h:
 *   a thief pushes with a seq_cst CAS after writing t->result; the owner
 *   takes the whole list, oldest first, with an acquire exchange, so it reads
 *   every result written before the push).
 * - sleeping (Dekker): an owner about to block stores sleeping = 1 (seq_cst),
 *   then looks for work once more (its done list with a seq_cst load, every
 *   deque's size); a producer pushes its task, issues a seq_cst fence, then
 *   reads the sleeping flags. Of the two, at least one sees the other: either
 *   the sleeper finds the task, or the producer finds the flag, exchanges it
 *   to 0 and io_wake()s that worker. The exchange makes one waker per sleep.
 *   After io_wait the worker clears its own flag (relaxed: only a spurious
 *   wake can follow).
 * - cancelled: relaxed; a late read costs one wasted job, never a wrong answer
 *   (the owner drops the result of a task whose connection is gone).
 * - share (a split job; the work's own protocol covers its pieces): with
 *   split on and a work that can be shared, a worker runs a job as a shared
 *   one when no other job waits anywhere and a peer is idle (dispatch.c's
 *   worth_sharing()). It sets its sharing flag (seq_cst) before it reads the
 *   sleeping flags and wakes every sleeper (Dekker, as above: a worker about
 *   to sleep looks at the sharing flags after announcing its sleep) and every
 *   worker waiting out a hand-off (its napping flag, set and re-checked the
 *   same way), and clears it after the job. A worker with nothing of its own
 *   to run (no completions, no task it can take) runs one piece of a sharing
 *   peer's job per pass of its loop, and does not sleep while a peer shares:
 *   its own connections wait at most one piece. At saturation every worker
 *   has tasks of its own, and nobody helps. The share outlives every
 *   worker's loop, like the deque.
 */
#ifndef PRIMED_DISPATCH_H
#define PRIMED_DISPATCH_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "fifo.h"
#include "io.h"
#include "stats.h"
#include "treiber.h"
#include "wsq.h"

enum dispatch_mode { DISPATCH_INLINE, DISPATCH_STEAL };

/* What a worker's dispatch counts (the app embeds and renders them). */
struct dispatch_stats {
    struct histo job_seconds; /* thread CPU time of each job run here */
    mcounter steals;          /* tasks this worker ran for another worker */
    mcounter pieces_helped;   /* pieces of another worker's shared job it ran */
};

/* The job a dispatch runs, given by its caller; every function is called on
 * the running worker's thread with that worker's own state (the state given
 * to dispatch_set_work), whoever owns the job. */
struct dispatch_work {
    /* Runs one job of this size; its result (>= 0, or -errno) goes back to
     * the job's owner as it is. */
    int (*run)(void *state, unsigned size);
    /* Optional (NULL: jobs are never split). share_create returns a closed
     * share (NULL: out of memory); run_shared runs a job as the share's
     * owner, offering its pieces; help runs one piece of a peer's open share,
     * returning whether there was one. A share is never destroyed while
     * workers run (peers may look at it until the process ends). */
    void *(*share_create)(void);
    int (*run_shared)(void *state, void *share, unsigned size);
    bool (*help)(void *state, void *share);
};

struct task {
    struct task *next;         /* free list */
    struct treiber_link done;  /* on the owner's done list (run by a thief) */
    _Atomic bool cancelled; /* its connection is gone: skip the job */
    uint64_t tag;           /* the job's tag at the owner */
    uint64_t queued_ns;
    unsigned owner; /* index of the owner in the peers array */
    unsigned bits;
    int result; /* the work's run()'s return, or -ECANCELED */
};

enum { DISPATCH_JOB_IDLE, DISPATCH_JOB_WAITING, DISPATCH_JOB_QUEUED };

/* A caller's job, embedded in its record; valid while where != IDLE. */
struct dispatch_job {
    struct task *task;         /* the task out for it (QUEUED), owned by whoever runs it */
    struct fifo_link wait;     /* wait queue link (WAITING) */
    uint64_t tag;
    unsigned bits;
    uint8_t where; /* DISPATCH_JOB_* */
};

/* The callers' side, called on the owner's thread only. */
struct dispatch_hooks {
    /* A queued job's task finished (result) or was cancelled (-ECANCELED);
     * the job is IDLE again. */
    void (*done)(void *ctx, uint64_t tag, int result);
    void *done_ctx;
    /* The throttle lifted: receives paused for it may go on. */
    void (*resume)(void *ctx);
    void *resume_ctx;
};

struct dispatch {
    unsigned id; /* index in peers */
    bool steal;  /* DISPATCH_STEAL */
    bool split;  /* share jobs with idle peers, when the work can (dispatch_init) */
    const struct dispatch_work *work; /* not owned: dispatch_set_work */
    void *state;                      /* not owned: this worker's state for work */
    struct io *io;                 /* not owned: the worker's; peers io_wake() it */
    struct dispatch_stats *stats;  /* not owned: the worker's */
    struct dispatch *const *peers; /* not owned: every worker's dispatch, this one included */
    unsigned npeers;
    struct dispatch_hooks hooks;

    void *share; /* steal, split and a shareable work: owned, offered while we run a job */
    struct wsq q;            /* steal: owned */
    struct task *tasks;      /* steal: owned pool of queue_max */
    struct task *task_free;
    unsigned tasks_out; /* tasks of ours not yet answered */
    bool throttled;
    uint64_t handoff_until_ns;                    /* a woken thief gets first go at our newest task until then */
    struct fifo waitq;                            /* jobs waiting for a task, oldest first */
    _Alignas(64) struct treiber done;             /* finished tasks for us, pushed by any worker (treiber.h) */
    _Alignas(64) _Atomic int sleeping;            /* 1 while blocked in io_wait with nothing to do */
    _Atomic bool sharing;                         /* our job is split: peers, help */
    _Atomic int napping;                          /* 1 while waiting out a hand-off (split only) */
    _Atomic uint64_t answered_ns;                 /* steal: when we last answered a job of ours (worth_sharing()) */
};

/* Sets d up for mode with a pool of queue_max tasks (steal); split: offer
 * pieces of our jobs to idle peers (steal only, and only with a work that
 * can be shared). peers[id] == d. Returns 0, -ENOMEM, or -ENOTSUP for a
 * mode this binary was built without. */
int dispatch_init(struct dispatch *d, enum dispatch_mode mode, unsigned queue_max, bool split, unsigned id,
                  struct dispatch *const *peers, unsigned npeers);
/* The job function this worker runs, with its own state; before the first
 * submit (the app's worker init). Every worker of a process gives the same
 * work (a thief runs a peer's job with its own state). Returns 0, or
 * -ENOMEM when the share a split needs cannot be made. */
int dispatch_set_work(struct dispatch *d, const struct dispatch_work *work, void *state);
void dispatch_fini(struct dispatch *d);

/* Runs job (tag, bits): at once, returning true with *result set (inline; or,
 * in steal mode with a share, shared with idle peers when none of our tasks
 * is out and nothing waits anywhere); or queues it (or, with the pool empty,
 * makes it wait and throttles), returning false: the answer comes through
 * hooks.done. */
bool dispatch_submit(struct dispatch *d, struct dispatch_job *job, uint64_t tag, unsigned bits, int *result);
/* The job's connection is gone. Returns true when the job was only waiting
 * (it is IDLE now, never answered); false when a task is out (its done hook
 * still comes, with the job skipped if not yet started). */
bool dispatch_cancel(struct dispatch *d, struct dispatch_job *job);

/* Backpressure is on: the caller pauses receives and accepts. */
static inline bool dispatch_throttled(const struct dispatch *d)
{
    return d->throttled;
}
/* Tasks of ours not yet answered (the worker exits only at 0). */
static inline unsigned dispatch_out(const struct dispatch *d)
{
    return d->tasks_out;
}

/* Before io_wait: the timeout to use (0 when work is at hand); announces
 * sleep when it will block. */
int dispatch_wait_timeout(struct dispatch *d, int timeout_ms);
/* After io_wait: no longer asleep. */
void dispatch_woke(struct dispatch *d);
/* After a batch of completions: collects the tasks finished for us (answering
 * them in completion order through hooks.done), then runs one queued task. */
void dispatch_poll(struct dispatch *d);
/* Tasks queued on every deque, or -1 without a queue (inline). */
int64_t dispatch_queue_depth(const struct dispatch *d);

#endif
