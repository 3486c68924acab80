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

#include "conn.h"
#include "dispatch.h"
#include "http.h"
#include "resp.h"
#include "route.h"
#include "stats.h"

#define X_ENUM(code, text) STATUS_IDX_##code,
enum status_idx { HTTP_STATUSES(X_ENUM) STATUS_IDX__COUNT };
#undef X_ENUM

struct metrics {
    mcounter requests[ROUTE__COUNT][STATUS_IDX__COUNT];
    struct histo req_seconds[ROUTE__COUNT];
    struct conn_stats conn;                   /* the core's: accepts, open, in flight, refused */
    struct dispatch_stats dispatch;           /* prime CPU time, steals, pieces helped */
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
};

/* Merges n workers' metrics into v. */
void metrics_merge(struct metrics *const *ms, unsigned n, struct metrics_view *v);

/* A scrape being written: the text so far; once it does not fit, overflow
 * is set and nothing more is written. */
struct metrics_out {
    char *buf;
    size_t cap, len;
    int overflow;
};

/* Appends printf's fmt to o. */
void metrics_put(struct metrics_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* One histogram's series (name_bucket, _sum, _count) with labels ("" or
 * `k="v"`), from cumulative buckets. */
void metrics_put_histo(struct metrics_out *o, const char *name, const char *labels, const uint64_t *cum,
                       uint64_t sum_ns, uint64_t count);

/* A histogram summed over workers: histo_add each worker's, then histo_end
 * makes the buckets cumulative (+Inf then equals the count). */
struct metrics_histo {
    uint64_t cum[STATS_NBUCKETS + 1];
    uint64_t sum_ns, count;
};
void metrics_histo_add(struct metrics_histo *v, struct histo *h);
void metrics_histo_end(struct metrics_histo *v);

/* A counter's value (relaxed: another worker may be writing it). */
static inline uint64_t metrics_ld(mcounter *c)
{
    return atomic_load_explicit(c, memory_order_relaxed);
}

/* What the exposition needs besides the counters. */
struct metrics_info {
    const char *version, *profile, *dispatch, *cc, *engine, *io;
    int64_t queue_depth; /* < 0: no queue (inline dispatch) */
    int steal;           /* expose steal metrics */
    double start_time;   /* unix seconds */
    /* the series of the services (services.h), written between the
     * server's own and the process's: each service renders its own */
    void (*services)(const void *ctx, struct metrics_out *o);
    const void *services_ctx;
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
