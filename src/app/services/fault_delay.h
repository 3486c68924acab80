/* fault_delay.h - --fault-delay's wait: a request held on a timer list of its
 * worker's own (no thread blocks: the worker serves everything else
 * meanwhile) until its delay is over, then handed to the list's fire
 * function, the app's, which serves it or answers --fault-abort's status
 * (Istio's semantics, as fault.h draws them).
 *
 * owns: the held requests' deadlines. never: what a held request means, its
 * answer or its counting (the fire function's and the app's), a fault's draw
 * (fault.h).
 */
#ifndef PRIMED_FAULT_DELAY_H
#define PRIMED_FAULT_DELAY_H

#include <stdint.h>

#include "conn.h"
#include "timer.h"

/* A held request's part, in its record. */
struct hold {
    struct timer timer;
    int abort_status; /* the status to answer once held, or 0: serve it */
};

/* Runs once h's delay is over, on its worker: h's request waits still. */
typedef void hold_fire_fn(void *ctx, struct hold *h, int abort_status);

/* One worker's held requests. */
struct hold_list {
    struct timer_list timers;
    hold_fire_fn *fire;
    void *ctx;
};

void hold_list_init(struct hold_list *l, hold_fire_fn *fire, void *ctx);

/* Holds c's request (h in its record) for delay_ms from now_ms: c waits
 * (conn_wait; the client going away drops the hold), then l's fire runs with
 * abort_status. Never fires before the delay is over. */
void hold_start(struct hold_list *l, struct hold *h, struct conn *c, uint64_t now_ms, unsigned delay_ms,
                int abort_status);

/* Fires the holds whose delay is over at now_ms. */
void hold_expire(struct hold_list *l, uint64_t now_ms);

/* The next hold's deadline, or none. */
uint64_t hold_next_deadline(const struct hold_list *l, uint64_t none);

#endif
