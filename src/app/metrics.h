/* metrics.h - per-worker counters and histograms, merged only when scraped.
 *
 * Each worker writes only its own struct metrics (one writer: a relaxed load
 * and store, no lock prefix, no shared cache line on the request path). A
 * scrape reads every worker's struct with relaxed loads and sums: counts may be
 * a few requests apart from each other mid-scrape, never torn.
 */
#ifndef PRIMED_METRICS_H
#define PRIMED_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"
#include "conn.h"
#include "dispatch.h"
#include "http.h"
#include "resp.h"
#include "route.h"
#include "stats.h"
#include "upstream.h"

#define X_ENUM(code, text) STATUS_IDX_##code,
enum status_idx { HTTP_STATUSES(X_ENUM) STATUS_IDX__COUNT };
#undef X_ENUM

/* Upstreams a worker calls, by role (labels of primed_upstream_*), and the
 * ways a call ends (upstream.h's UPSTREAM_RESULTS, which asserts the count). */
enum metrics_upstream {
    METRICS_UP_CALLME,
    METRICS_UP_ZIPKIN,
    METRICS_UP_CATALOG,
    METRICS_UP_INVENTORY,
    METRICS_UPSTREAMS
};

/* Faults injected (fault.h), by kind: labels of primed_faults_injected_total. */
enum metrics_fault { METRICS_FAULT_DELAY, METRICS_FAULT_ABORT, METRICS_FAULTS };
#define METRICS_UPSTREAM_RESULTS UPSTREAM__RESULTS

struct metrics {
    mcounter requests[ROUTE__COUNT][STATUS_IDX__COUNT];
    struct histo req_seconds[ROUTE__COUNT];
    struct conn_stats conn;                   /* the core's: accepts, open, in flight, refused */
    struct dispatch_stats dispatch;           /* prime CPU time, steals, pieces helped */
    struct upstream_stats upstream[METRICS_UPSTREAMS]; /* calls by result, start to end of each */
    mcounter spans_sent, spans_dropped;
    mcounter faults[METRICS_FAULTS];
    mcounter fallbacks; /* /api/products: products answered with "availability": null */
} __attribute__((aligned(64)));

/* Index of a status code in the table, or -1. */
int metrics_status_index(int status);

/* Sums of what all workers hold, for exposition and tests. */
struct metrics_view {
    uint64_t requests[ROUTE__COUNT][STATUS_IDX__COUNT];
    uint64_t req_bucket[ROUTE__COUNT][STATS_NBUCKETS + 1]; /* cumulative */
    uint64_t req_sum_ns[ROUTE__COUNT];
    uint64_t req_count[ROUTE__COUNT];
    uint64_t prime_bucket[STATS_NBUCKETS + 1]; /* cumulative */
    uint64_t prime_sum_ns;
    uint64_t prime_count;
    uint64_t bad[BAD__COUNT];
    uint64_t steals;
    uint64_t pieces_helped;
    uint64_t accepts;
    int64_t conns_open;
    int64_t in_flight;
    uint64_t upstream_calls[METRICS_UPSTREAMS][METRICS_UPSTREAM_RESULTS];
    uint64_t up_bucket[METRICS_UPSTREAMS][STATS_NBUCKETS + 1]; /* cumulative */
    uint64_t up_sum_ns[METRICS_UPSTREAMS];
    uint64_t up_count[METRICS_UPSTREAMS];
    uint64_t spans_sent, spans_dropped;
    uint64_t faults[METRICS_FAULTS];
    uint64_t fallbacks;
};

/* Merges n workers' metrics into v. */
void metrics_merge(struct metrics *const *ms, unsigned n, struct metrics_view *v);

/* What the exposition needs besides the counters. */
struct metrics_info {
    const char *version, *profile, *dispatch, *cc, *engine, *io;
    int64_t queue_depth; /* < 0: no queue (inline dispatch) */
    int steal;           /* expose steal metrics */
    double start_time;   /* unix seconds */
    /* the upstream series: written for the roles configured (names[i] != NULL) */
    const char *upstream_names[METRICS_UPSTREAMS];
    const char *const *upstream_results; /* METRICS_UPSTREAM_RESULTS labels */
    int store;                           /* 1: built with the event store (its series are written) */
    int gateway;                         /* 1: /api/products is served (its fallback series is written) */
    uint64_t store_dropped;              /* events refused (queue full) or that failed to insert */
    int store_health;                    /* 1: a store is configured (the two series below are written) */
    int store_ready;                     /* 1: it can commit (/readyz 200), 0: not */
    uint64_t store_failures[STORE_FAULT_N]; /* requests answered 503 for the store, by kind (store.h) */
};

/* Writes the Prometheus text format 0.0.4 for v into buf. Returns the length,
 * or -ENOSPC when cap is too small. */
int metrics_render(const struct metrics_view *v, const struct metrics_info *info, char *buf, size_t cap);

/* The cross-worker scrape: merges n workers' metrics and renders them into a
 * malloc'd buffer (cold: one scrape), *out owned by the caller. Returns the
 * length, or -errno. */
int metrics_scrape(struct metrics *const *ms, unsigned n, const struct metrics_info *info, char **out);

/* Appends a label value escaped per the text format (\\, \", \n). Returns the
 * bytes written (at most cap - 1, NUL-terminated). */
size_t metrics_escape(char *out, size_t cap, const char *s);

#endif
