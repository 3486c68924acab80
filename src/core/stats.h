/* stats.h - single-writer counters, gauges and latency histograms.
 *
 * Each is written by one thread only (its worker): a relaxed load and store,
 * no lock prefix, no shared cache line on the request path; any thread may
 * read them (relaxed) and sum. The layers below the app count into structs
 * of these that the app embeds in its metrics and renders (app/metrics.c).
 */
#ifndef PRIMED_STATS_H
#define PRIMED_STATS_H

#include <stdatomic.h>
#include <stdint.h>

/* Histogram bucket upper bounds in seconds; +Inf is implied after the last. */
#define STATS_BUCKETS_S 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0
#define STATS_NBUCKETS  15

typedef _Atomic uint64_t mcounter;
typedef _Atomic int64_t mgauge;

struct histo {
    mcounter bucket[STATS_NBUCKETS + 1]; /* not cumulative; the last is +Inf only */
    mcounter sum_ns;
    mcounter count;
};

/* Single-writer increment: only the owning thread calls these. */
static inline void stats_add(mcounter *c, uint64_t n)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n, memory_order_relaxed);
}

static inline void stats_gauge_add(mgauge *g, int64_t n)
{
    atomic_store_explicit(g, atomic_load_explicit(g, memory_order_relaxed) + n, memory_order_relaxed);
}

/* Records one observation (ns) in h. */
void stats_observe(struct histo *h, uint64_t ns);

#endif
