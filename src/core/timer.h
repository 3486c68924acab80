/* timer.h - deadline lists: intrusive, no allocation, in deadline order by
 * construction.
 *
 * A list holds nodes embedded in their owners (a connection embeds one). An
 * insertion scans from the tail: most entries of a list share one timeout and
 * arrive in time order, so that is O(1) but for the few that do not (a drain's
 * short grace behind long idle deadlines). timer_expire() relies on the order:
 * it stops at the first node not yet due. The lists know nothing of what they
 * time: an expiry fires the caller's callback.
 */
#ifndef PRIMED_TIMER_H
#define PRIMED_TIMER_H

#include <stdbool.h>
#include <stdint.h>

struct timer {
    struct timer *prev, *next; /* links while on a list; not owned */
    uint64_t deadline_ms;
    uint8_t list; /* the id of the list holding it, 0: none */
};

struct timer_list {
    struct timer head; /* sentinel; head.list is the list's id */
};

/* Called for each node due; the node is already off its list. */
typedef void timer_fire_fn(struct timer *t, void *ctx);

/* An empty list with id (1..255). */
void timer_list_init(struct timer_list *l, uint8_t id);
/* A node on no list. */
void timer_init(struct timer *t);
/* Puts t on l (off any list it was on) at deadline_ms, in deadline order. */
void timer_add(struct timer_list *l, struct timer *t, uint64_t deadline_ms);
/* Takes t off its list; nothing when it is on none. */
void timer_remove(struct timer *t);
/* Fires fn for every node of l due at now_ms, earliest first, each taken off
 * first (fn may put it on a list again). Returns how many fired. */
unsigned timer_expire(struct timer_list *l, uint64_t now_ms, timer_fire_fn *fn, void *ctx);
/* The earliest deadline on l, or `none` when l is empty. */
uint64_t timer_next(const struct timer_list *l, uint64_t none);

static inline bool timer_on(const struct timer *t, const struct timer_list *l)
{
    return t->list == l->head.list;
}

#endif
