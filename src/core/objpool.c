/* objpool.c - a worker's pool of fixed-size objects (objpool.h): chunks
 * from calloc, a LIFO free list through the objects themselves. */
#include "objpool.h"

#include <stdalign.h>
#include <stdlib.h>

/* A chunk: this header, then per_chunk objects. */
struct chunk {
    struct chunk *next;
    alignas(max_align_t) unsigned char objs[];
};

void objpool_init(struct objpool *p, size_t size, unsigned per_chunk)
{
    size_t a = alignof(max_align_t);
    if (size < sizeof(void *))
        size = sizeof(void *);
    p->size = (size + a - 1) / a * a;
    p->per_chunk = per_chunk ? per_chunk : 1;
    p->free = NULL;
    p->chunks = NULL;
    p->out = 0;
}

void *objpool_get(struct objpool *p)
{
    if (!p->free) {
        /* cold: grows to the most objects lent at once */
        struct chunk *ch = calloc(1, sizeof(*ch) + p->size * p->per_chunk);
        if (!ch)
            return NULL;
        ch->next = p->chunks;
        p->chunks = ch;
        for (unsigned i = p->per_chunk; i-- > 0;) {
            void *o = ch->objs + (size_t)i * p->size;
            *(void **)o = p->free;
            p->free = o;
        }
    }
    void *o = p->free;
    p->free = *(void **)o;
    p->out++;
    return o;
}

void objpool_put(struct objpool *p, void *obj)
{
    *(void **)obj = p->free;
    p->free = obj;
    p->out--;
}

void objpool_fini(struct objpool *p)
{
    struct chunk *ch = p->chunks;
    while (ch) {
        struct chunk *next = ch->next;
        free(ch);
        ch = next;
    }
    p->chunks = NULL;
    p->free = NULL;
}
