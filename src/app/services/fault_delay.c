/* fault_delay.c - --fault-delay's wait (fault_delay.h): a held request's deadline on the
 * worker's own timer list, and its connection's wait.
 *
 * owns: the deadlines. never: the app (it knows a connection and a timer;
 * what a request held means is the list's fire function's).
 */
#include "fault_delay.h"

#include <stddef.h>

void hold_list_init(struct hold_list *l, hold_fire_fn *fire, void *ctx)
{
    timer_list_init(&l->timers, 1);
    l->fire = fire;
    l->ctx = ctx;
}

/* conn_cancel_fn: the client went away while held. */
static void on_cancel(struct conn *c, void *arg)
{
    struct hold *h = arg;
    timer_remove(&h->timer);
}

void hold_start(struct hold_list *l, struct hold *h, struct conn *c, uint64_t now_ms, unsigned delay_ms,
                int abort_status)
{
    h->abort_status = abort_status;
    timer_init(&h->timer);
    /* + 1: the clock is in whole milliseconds, floored, so a deadline of
     * now + delay could fire up to 1 ms early; a held request is never
     * answered before its delay */
    timer_add(&l->timers, &h->timer, now_ms + delay_ms + 1);
    conn_wait(c, on_cancel, h);
}

static void on_deadline(struct timer *t, void *ctx)
{
    struct hold_list *l = ctx;
    struct hold *h = (struct hold *)((char *)t - offsetof(struct hold, timer));
    int abort_status = h->abort_status;
    h->abort_status = 0;
    l->fire(l->ctx, h, abort_status);
}

void hold_expire(struct hold_list *l, uint64_t now_ms)
{
    timer_expire(&l->timers, now_ms, on_deadline, l);
}

uint64_t hold_next_deadline(const struct hold_list *l, uint64_t none)
{
    return timer_next(&l->timers, none);
}
