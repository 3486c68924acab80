/* slots.h - a table of preallocated slots with generations and a free list,
 * and the one encoding of an I/O tag.
 *
 * A slot is embedded in its owner's element (a server connection, an
 * upstream connection). A tag names a slot at one generation: a completion
 * that comes back after its slot was released (and maybe reused) finds
 * another generation and is dropped. Released slots are reused LIFO so the
 * hot set stays small; never-used slots are handed out in order, so that
 * start-up touches none of the table.
 *
 * Tag layout, within io.h's IO_TAG_BITS (56): bits 0-31 the slot index,
 * 32-51 its generation (mod 2^20), 52-55 the owner (which table: the worker
 * hands each completion to its owner's handler). io_uring.c puts the op in
 * the 8 bits above.
 */
#ifndef PRIMED_SLOTS_H
#define PRIMED_SLOTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SLOTS_GEN_BITS    20
#define SLOTS_GEN_MASK    ((UINT32_C(1) << SLOTS_GEN_BITS) - 1)
#define SLOTS_OWNER_SHIFT (32 + SLOTS_GEN_BITS)
#define SLOTS_OWNERS      16

/* Owners of tags. The core's connections are 0; the worker hands out the
 * others at run time (worker_own). */
enum { SLOTS_OWNER_CONN = 0 };

struct slot {
    struct slot *free_next; /* free list link while released */
    uint32_t index;
    uint32_t gen;  /* bumped at each release */
    bool used;     /* taken and not yet released */
};

struct slot_table {
    char *base;    /* the owner's array of n elements; not owned */
    size_t stride; /* sizeof one element */
    size_t off;    /* offset of its struct slot */
    uint32_t n, fresh; /* slots [fresh, n) never used */
    uint8_t owner;
    struct slot *free;
};

static inline void slots_init(struct slot_table *t, void *base, size_t stride, size_t off, uint32_t n, uint8_t owner)
{
    *t = (struct slot_table){.base = base, .stride = stride, .off = off, .n = n, .owner = owner};
}

static inline struct slot *slots_at(const struct slot_table *t, uint32_t i)
{
    return (struct slot *)(t->base + (size_t)i * t->stride + t->off);
}

/* The element that holds s. */
#define slots_elem(t, s, type) ((type *)((char *)(s) - (t)->off))

static inline bool slots_has_free(const struct slot_table *t)
{
    return t->free || t->fresh < t->n;
}

/* A released slot, else a never-used one (*fresh set: its element has never
 * been set up), or NULL when all are taken. */
static inline struct slot *slots_take(struct slot_table *t, bool *fresh)
{
    struct slot *s = t->free;
    *fresh = false;
    if (s) {
        t->free = s->free_next;
    } else if (t->fresh < t->n) {
        s = slots_at(t, t->fresh);
        s->index = t->fresh++;
        *fresh = true;
    } else {
        return NULL;
    }
    s->free_next = NULL;
    s->used = true;
    return s;
}

/* Gives s back: every tag of it issued so far goes stale. */
static inline void slots_put(struct slot_table *t, struct slot *s)
{
    s->used = false;
    s->gen++;
    s->free_next = t->free;
    t->free = s;
}

/* The one tag packer: index, generation (mod 2^20) and owner, as the layout
 * above says. An owner with a single operation of its own (a socket it
 * polls) packs index 0 and its own generation. */
static inline uint64_t slots_pack(uint32_t index, uint32_t gen, unsigned owner)
{
    return (uint64_t)index | ((uint64_t)(gen & SLOTS_GEN_MASK) << 32) |
           ((uint64_t)(owner & (SLOTS_OWNERS - 1)) << SLOTS_OWNER_SHIFT);
}

static inline uint64_t slots_tag(const struct slot_table *t, const struct slot *s)
{
    return slots_pack(s->index, s->gen, t->owner);
}

/* The owner a tag belongs to. */
static inline unsigned slots_owner(uint64_t tag)
{
    return (unsigned)(tag >> SLOTS_OWNER_SHIFT) & (SLOTS_OWNERS - 1);
}

/* The slot a tag names, or NULL when it was released (or reused) since. */
static inline struct slot *slots_of_tag(const struct slot_table *t, uint64_t tag)
{
    uint32_t i = (uint32_t)tag;
    if (i >= t->fresh)
        return NULL;
    struct slot *s = slots_at(t, i);
    if (!s->used || (s->gen & SLOTS_GEN_MASK) != ((uint32_t)(tag >> 32) & SLOTS_GEN_MASK))
        return NULL;
    return s;
}

#endif
