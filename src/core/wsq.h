/* wsq.h - a Chase-Lev work-stealing deque of pointers (fixed capacity).
 *
 * One owner pushes at the bottom; anyone (owner included) steals from the top.
 * The owner may also pop LIFO from the bottom. Orderings follow Lê, Pop, Cohen
 * and Zappa Nardelli, "Correct and Efficient Work-Stealing for Weak Memory
 * Models" (PPoPP 2013). Indices are signed 64-bit and never wrap in practice.
 */
#ifndef PRIMED_WSQ_H
#define PRIMED_WSQ_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct wsq {
    _Alignas(64) _Atomic int64_t top;    /* next slot to steal; written by CAS */
    _Alignas(64) _Atomic int64_t bottom; /* next slot to push; written by the owner only */
    _Alignas(64) _Atomic(void *) *buf;   /* owned; capacity mask + 1 slots */
    int64_t mask;
};

#define WSQ_EMPTY ((void *)0)
#define WSQ_ABORT ((void *)1) /* lost a race: try again */

/* Makes a deque holding at least cap items (rounded up to a power of two).
 * Returns 0 or -ENOMEM. */
int wsq_init(struct wsq *q, size_t cap);
void wsq_fini(struct wsq *q);

/* Owner only. Returns 0, or -ENOSPC when full. item must not be NULL or WSQ_ABORT. */
int wsq_push(struct wsq *q, void *item);

/* Owner only: the newest item, or WSQ_EMPTY. */
void *wsq_pop(struct wsq *q);

/* Any thread: the oldest item, WSQ_EMPTY, or WSQ_ABORT when another thread won
 * the race for it. */
void *wsq_steal(struct wsq *q);

/* Approximate number of items (exact when no thread is changing q). */
int64_t wsq_size(struct wsq *q);

#endif
