/* wsq.c - the Chase-Lev deque. Atomics live here (and in server/worker
 * wake-up code) only.
 *
 * Capacity is fixed: the worker never queues more than --queue-max tasks, so
 * growth (and the memory reclamation problem it brings) is not needed.
 * Slots are atomics so that a thief's read racing the owner's reuse of a slot
 * is a defined (and discarded, by the failed CAS) read, not a data race.
 */
#include "wsq.h"

#include <errno.h>
#include <stdlib.h>

int wsq_init(struct wsq *q, size_t cap)
{
    size_t n = 2;
    while (n < cap)
        n <<= 1;
    q->buf = calloc(n, sizeof(*q->buf));
    if (!q->buf)
        return -ENOMEM;
    q->mask = (int64_t)n - 1;
    atomic_init(&q->top, 0);
    atomic_init(&q->bottom, 0);
    return 0;
}

void wsq_fini(struct wsq *q)
{
    free((void *)q->buf);
    q->buf = NULL;
}

int wsq_push(struct wsq *q, void *item)
{
    int64_t b = atomic_load_explicit(&q->bottom, memory_order_relaxed);
    int64_t t = atomic_load_explicit(&q->top, memory_order_acquire);
    if (b - t > q->mask)
        return -ENOSPC;
    atomic_store_explicit(&q->buf[b & q->mask], item, memory_order_relaxed);
    /* Lê et al. write a release fence and a relaxed store; a release store
     * orders the same writes (the item, and what it points to, before the
     * new bottom) and ThreadSanitizer, which ignores fences, can see it. */
    atomic_store_explicit(&q->bottom, b + 1, memory_order_release);
    return 0;
}

void *wsq_pop(struct wsq *q)
{
    int64_t b = atomic_load_explicit(&q->bottom, memory_order_relaxed) - 1;
    atomic_store_explicit(&q->bottom, b, memory_order_relaxed);
    atomic_thread_fence(memory_order_seq_cst);
    int64_t t = atomic_load_explicit(&q->top, memory_order_relaxed);
    void *x = WSQ_EMPTY;
    if (t <= b) {
        x = atomic_load_explicit(&q->buf[b & q->mask], memory_order_relaxed);
        if (t == b) {
            /* the last item: race the thieves for it */
            if (!atomic_compare_exchange_strong_explicit(&q->top, &t, t + 1, memory_order_seq_cst,
                                                         memory_order_relaxed))
                x = WSQ_EMPTY;
            atomic_store_explicit(&q->bottom, b + 1, memory_order_relaxed);
        }
    } else {
        atomic_store_explicit(&q->bottom, b + 1, memory_order_relaxed);
    }
    return x;
}

void *wsq_steal(struct wsq *q)
{
    int64_t t = atomic_load_explicit(&q->top, memory_order_acquire);
    atomic_thread_fence(memory_order_seq_cst);
    int64_t b = atomic_load_explicit(&q->bottom, memory_order_acquire);
    if (t >= b)
        return WSQ_EMPTY;
    void *x = atomic_load_explicit(&q->buf[t & q->mask], memory_order_relaxed);
    if (!atomic_compare_exchange_strong_explicit(&q->top, &t, t + 1, memory_order_seq_cst, memory_order_relaxed))
        return WSQ_ABORT;
    return x;
}

int64_t wsq_size(struct wsq *q)
{
    int64_t b = atomic_load_explicit(&q->bottom, memory_order_relaxed);
    int64_t t = atomic_load_explicit(&q->top, memory_order_relaxed);
    return b > t ? b - t : 0;
}
