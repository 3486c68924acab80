/* fault_delay.h - --fault-delay and --fault-abort as a service (services.h):
 * the app's gate (app_worker.gate) draws each request under --fault-path
 * (fault.h: Istio's semantics) and holds it on a timer list of its worker's
 * own (no thread blocks: the worker serves everything else meanwhile) until
 * its delay is over, then serves it or answers --fault-abort's status.
 *
 * owns: the worker's draws, its held requests' deadlines, the counts of
 * primed_faults_injected_total. never: a request's answer but the abort's
 * (app_serve() serves it).
 */
#ifndef PRIMED_FAULT_DELAY_H
#define PRIMED_FAULT_DELAY_H

#include <stdint.h>

#include "app.h"
#include "fault.h"
#include "stats.h"
#include "timer.h"

/* One worker's: app_worker.service[SERVICE_FAULT_DELAY], NULL without a fault. */
struct fault_delay {
    struct app_worker *aw;
    struct fault fault;
    struct timer_list held;
    mcounter delayed, aborted;
};

/* A request --fault-abort answers with status instead of serving it: Envoy's
 * answer. Pure. */
void fault_abort_answer(const struct answer_env *env, const struct http *h, int status, struct resp *r);

/* primed_faults_injected_total, by kind. */
void fault_delay_metrics_put(struct metrics_out *o, uint64_t delayed, uint64_t aborted);

#endif
