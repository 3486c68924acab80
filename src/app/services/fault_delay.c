/* fault_delay.c - the fault delay service (fault_delay.h): the gate, the
 * held requests' deadlines on the worker's own timer list, and the
 * connection's wait while held. */
#include "fault_delay.h"

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "config.h"
#include "metrics.h"
#include "trace_ids.h"

static struct fault_delay *fault_delay_of(struct app_worker *aw)
{
    return aw->service[SERVICE_FAULT_DELAY];
}

void fault_abort_answer(const struct answer_env *env, const struct http *h, int status, struct resp *r)
{
    /* Envoy's body for an abort, so a client cannot tell primed's from Istio's */
    answer_text(r, status, "fault filter abort", answer_keep_alive(env, h));
}

/* q is answered with status instead of being served. */
static void abort_request(struct fault_delay *fd, struct app_req *q, int status)
{
    struct resp r;
    stats_add(&fd->aborted, 1);
    fault_abort_answer(&fd->aw->env, &q->conn->http, status, &r);
    app_answer(q, &r);
}

/* conn_cancel_fn: the client went away while held. */
static void on_cancel(struct conn *c, void *arg)
{
    struct app_req *q = arg;
    timer_remove(&q->gate_timer);
}

/* timer_fire_fn: a held request's delay is over. */
static void on_deadline(struct timer *t, void *ctx)
{
    struct fault_delay *fd = ctx;
    struct app_req *q = (struct app_req *)((char *)t - offsetof(struct app_req, gate_timer));
    int abort_status = q->gate_status;
    q->gate_status = 0;
    if (abort_status)
        abort_request(fd, q, abort_status);
    else
        app_serve(fd->aw, q);
}

/* app_gate_fn: draws q (the probes and /metrics never: ROUTE_F_QUIET); a
 * delay holds it, an abort answers it. */
static bool gate(void *ctx, struct app_req *q)
{
    struct fault_delay *fd = ctx;
    struct app_worker *aw = fd->aw;
    unsigned delay;
    int abort_status;
    uint64_t r1 = rng_next(&aw->rng), r2 = rng_next(&aw->rng);
    bool applies = q->gated && !(route_flags((enum route_id)q->route.id) & ROUTE_F_QUIET);
    fault_draw(&fd->fault, applies, r1, r2, &delay, &abort_status);
    if (delay) {
        stats_add(&fd->delayed, 1);
        q->gate_status = abort_status;
        timer_init(&q->gate_timer);
        /* + 1: the clock is in whole milliseconds, floored, so a deadline of
         * now + delay could fire up to 1 ms early; a held request is never
         * answered before its delay */
        timer_add(&fd->held, &q->gate_timer, aw->w->pool.now_ms + delay + 1);
        conn_wait(q->conn, on_cancel, q);
        return true;
    }
    if (abort_status) {
        abort_request(fd, q, abort_status);
        return true;
    }
    return false;
}

static int fault_delay_init(struct app_worker *aw)
{
    const struct config *cfg = aw->cfg;
    struct fault f;
    if (!fault_init(&f, cfg->fault_delay_ms, cfg->fault_delay_pct, cfg->fault_abort, cfg->fault_abort_pct))
        return 0; /* no gate: the request path does not branch on faults */
    struct fault_delay *fd = calloc(1, sizeof(*fd));
    if (!fd) {
        snprintf(aw->w->init_why, sizeof(aw->w->init_why), "allocate the fault delay: out of memory");
        return -ENOMEM;
    }
    aw->service[SERVICE_FAULT_DELAY] = fd;
    fd->aw = aw;
    fd->fault = f;
    timer_list_init(&fd->held, 1);
    aw->gate = gate;
    aw->gate_ctx = fd;
    aw->gate_path = cfg->fault_path;
    return 0;
}

static void fault_delay_poll(struct app_worker *aw, bool second)
{
    if (fault_delay_of(aw))
        timer_expire(&fault_delay_of(aw)->held, aw->w->pool.now_ms, on_deadline, fault_delay_of(aw));
}

static uint64_t fault_delay_next_deadline(struct app_worker *aw, uint64_t next)
{
    return fault_delay_of(aw) ? timer_next(&fault_delay_of(aw)->held, next) : next;
}

void fault_delay_metrics_put(struct metrics_out *o, uint64_t delayed, uint64_t aborted)
{
    metrics_put(o,
                "# HELP primed_faults_injected_total Requests held (--fault-delay) or answered (--fault-abort) by "
                "fault injection.\n"
                "# TYPE primed_faults_injected_total counter\n"
                "primed_faults_injected_total{kind=\"delay\"} %" PRIu64 "\n"
                "primed_faults_injected_total{kind=\"abort\"} %" PRIu64 "\n",
                delayed, aborted);
}

/* Written with or without faults configured. */
static void fault_delay_metrics(const struct app *a, struct metrics_out *o)
{
    uint64_t delayed = 0, aborted = 0;
    for (unsigned i = 0; i < a->workers->n; i++) {
        struct app_worker *aw = a->w[i].app;
        struct fault_delay *fd = aw ? fault_delay_of(aw) : NULL;
        if (fd) {
            delayed += metrics_ld(&fd->delayed);
            aborted += metrics_ld(&fd->aborted);
        }
    }
    fault_delay_metrics_put(o, delayed, aborted);
}

const struct app_service fault_delay_service = {
    .name = "fault delay",
    .init = fault_delay_init,
    .poll = fault_delay_poll,
    .next_deadline = fault_delay_next_deadline,
    .metrics = fault_delay_metrics,
};
