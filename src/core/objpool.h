/* objpool.h - a worker's pool of fixed-size objects lent for a while (an
 * event until its commit, an upstream call until its answer): one thread's,
 * no locks.
 *
 * The pool grows by a chunk of objects when empty (cold: up to the most
 * lent at once) and gives memory back only at objpool_fini, so that what is
 * lent per request costs nothing while a connection is idle and no
 * allocation while the pool is warm. The most recently returned object is
 * lent first (warm in the cache). A free object holds the pool's link in its
 * first bytes: the borrower finds garbage there, not zeros.
 */
#ifndef PRIMED_OBJPOOL_H
#define PRIMED_OBJPOOL_H

#include <stddef.h>

struct objpool {
    size_t size;       /* of one object, rounded up to the alignment of max_align_t */
    unsigned per_chunk;
    void *free;        /* free objects, linked through their first bytes */
    void *chunks;      /* owned: every chunk, linked */
    unsigned out;      /* objects lent and not returned */
};

/* Prepares p for objects of size bytes, per_chunk at a time. Allocates nothing. */
void objpool_init(struct objpool *p, size_t size, unsigned per_chunk);
/* An object (its contents undefined), or NULL when a new chunk cannot be had. */
void *objpool_get(struct objpool *p);
/* Returns obj (from objpool_get of p). */
void objpool_put(struct objpool *p, void *obj);
/* Frees every chunk; objects still lent become invalid. */
void objpool_fini(struct objpool *p);

#endif
