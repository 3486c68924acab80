/* timer.c - deadline lists (timer.h).
 *
 * Owns the links of the nodes it holds, nothing else. Invariant: every list is
 * sorted by deadline_ms, ties in insertion order. Never calls anything but the
 * callback timer_expire() is given.
 */
#include "timer.h"

#include <stddef.h>

void timer_list_init(struct timer_list *l, uint8_t id)
{
    l->head.prev = l->head.next = &l->head;
    l->head.deadline_ms = 0;
    l->head.list = id;
}

void timer_init(struct timer *t)
{
    t->prev = t->next = NULL;
    t->deadline_ms = 0;
    t->list = 0;
}

void timer_remove(struct timer *t)
{
    if (t->list == 0)
        return;
    t->prev->next = t->next;
    t->next->prev = t->prev;
    t->prev = t->next = NULL;
    t->list = 0;
}

void timer_add(struct timer_list *l, struct timer *t, uint64_t deadline_ms)
{
    timer_remove(t);
    struct timer *s = &l->head;
    struct timer *after = s->prev;
    while (after != s && after->deadline_ms > deadline_ms)
        after = after->prev;
    t->prev = after;
    t->next = after->next;
    after->next->prev = t;
    after->next = t;
    t->list = s->list;
    t->deadline_ms = deadline_ms;
}

unsigned timer_expire(struct timer_list *l, uint64_t now_ms, timer_fire_fn *fn, void *ctx)
{
    unsigned n = 0;
    struct timer *s = &l->head, *t;
    while ((t = s->next) != s && t->deadline_ms <= now_ms) {
        timer_remove(t);
        fn(t, ctx);
        n++;
    }
    return n;
}

uint64_t timer_next(const struct timer_list *l, uint64_t none)
{
    return l->head.next != &l->head ? l->head.next->deadline_ms : none;
}
