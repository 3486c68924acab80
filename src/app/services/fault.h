/* fault.h - fault injection with Istio's semantics (HTTPFaultInjection), on
 * the serving side: a share of the matching requests is held for a fixed
 * delay before it is served, a share is answered with a status instead.
 *
 * Pure: fault_draw() decides from two random numbers the caller draws; the
 * caller (fault_delay.c) holds the request on a timer of its worker, so no thread
 * blocks and the worker serves everything else meanwhile. As Envoy does,
 * delay and abort are drawn independently, and a request drawn for both is
 * delayed, then aborted. The probes (/healthz, /readyz) and /metrics are
 * never faulted: a fault rule is for traffic, not for the kubelet.
 */
#ifndef PRIMED_FAULT_H
#define PRIMED_FAULT_H

#include <stdbool.h>
#include <stdint.h>

struct fault {
    unsigned delay_ms;  /* 0: no delay */
    uint64_t delay_cut; /* a request is delayed when its draw is below, or always */
    bool delay_always;
    int abort_status; /* 0: no abort */
    uint64_t abort_cut;
    bool abort_always;
};

/* From the --fault-* values: --fault-delay (ms) and its percentage,
 * --fault-abort (a status, 0: none) and its percentage. Returns whether any
 * fault is configured. */
bool fault_init(struct fault *f, unsigned delay_ms, double delay_pct, unsigned abort_status, double abort_pct);

/* For a request the faults apply to (applies: its path matched --fault-path
 * and its route is not ROUTE_F_QUIET: probes and /metrics are never held),
 * with two uniform random numbers: the delay to hold it for (0: none) into
 * *delay_ms and the status to answer (0: serve it) into *abort_status. */
void fault_draw(const struct fault *f, bool applies, uint64_t r1, uint64_t r2, unsigned *delay_ms, int *abort_status);

#endif
