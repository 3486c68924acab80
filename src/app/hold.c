/* hold.c - --fault-delay: a request held on a timer of the worker's own list
 * (no thread blocks; the worker serves everything else meanwhile), then
 * served, or answered with --fault-abort's status (Istio's semantics, as
 * fault.h draws them).
 */
#include "app.h"

#include <stddef.h>

void hold_abort(struct app_worker *aw, struct app_req *q, int status)
{
    struct resp r;
    stats_add(&aw->metrics.faults[METRICS_FAULT_ABORT], 1);
    handlers_fault_abort(&aw->env, &q->conn->http, status, &r);
    app_answer(q, &r);
}

static void on_cancel(struct conn *c, void *arg)
{
    struct app_req *q = arg;
    timer_remove(&q->held);
}

void hold_start(struct app_worker *aw, struct app_req *q, unsigned delay_ms, int abort_status)
{
    stats_add(&aw->metrics.faults[METRICS_FAULT_DELAY], 1);
    q->fault_abort = abort_status;
    timer_init(&q->held);
    /* + 1: the clock is in whole milliseconds, floored, so a deadline of
     * now + delay could fire up to 1 ms early; a held request is never
     * answered before its delay */
    timer_add(&aw->held, &q->held, aw->w->pool.now_ms + delay_ms + 1);
    conn_wait(q->conn, on_cancel, q);
}

static void on_deadline(struct timer *t, void *ctx)
{
    struct app_worker *aw = ctx;
    struct app_req *q = (struct app_req *)((char *)t - offsetof(struct app_req, held));
    int abort_status = q->fault_abort;
    q->fault_abort = 0;
    if (abort_status)
        hold_abort(aw, q, abort_status);
    else
        app_serve(aw, q);
}

void hold_expire(struct app_worker *aw)
{
    timer_expire(&aw->held, aw->w->pool.now_ms, on_deadline, aw);
}
