/* spans.h - the span exporter: a worker's sampled SERVER and CLIENT spans,
 * batched and POSTed as Zipkin v2 JSON (zipkin.h) through the worker's own
 * upstream client (--zipkin-url).
 *
 * Never on a request's path: adding a span is a copy into a fixed array; a
 * batch leaves when SPANS_BATCH are pending or SPANS_FLUSH_MS after the first,
 * one export in flight per worker. A collector that is down or slow costs
 * spans, counted in metrics as dropped, never a request's latency.
 *
 * As a service (services.h, this file's one row): it adds the collector to
 * the resolver and its pool to the worker's upstream client, hands the app
 * its span function (app_worker.span), and writes primed_zipkin_spans_total.
 */
#ifndef PRIMED_SPANS_H
#define PRIMED_SPANS_H

#include <stdbool.h>
#include <stdint.h>

#include "app.h"
#include "stats.h"
#include "upstream.h"
#include "zipkin.h"

#define SPANS_BATCH    64          /* spans per POST at most */
#define SPANS_PENDING  512         /* spans held while an export is in flight; more are dropped */
#define SPANS_FLUSH_MS 1000        /* a span waits at most this long for its batch */
#define SPANS_JSON_MAX (96 * 1024) /* one batch's JSON */

struct spans {
    /* set by the owner before spans_init(); not owned */
    struct upstream_client *client;
    unsigned up; /* the collector's index in client */
    const uint64_t *now_ms;
    unsigned worker; /* for logs */

    struct zipkin_span *pending; /* owned, SPANS_PENDING; strings are static or outlive the worker */
    unsigned n;
    uint64_t first_ms;  /* when pending[0] was added */
    char *json;         /* owned: the batch in flight */
    unsigned in_flight; /* spans in the POST in flight, 0: none */
    uint64_t log_ms;    /* next time a failed export may be logged */
    struct upstream_call call;
    mcounter sent, dropped; /* spans: primed_zipkin_spans_total */
};

/* The worker's exporter (the spans service's, services.h), or NULL: no --zipkin-url. */
static inline struct spans *spans_of(struct app_worker *aw)
{
    return aw->service[SERVICE_SPANS];
}

/* Allocates the buffers. Returns 0 or -ENOMEM. */
int spans_init(struct spans *s);
void spans_fini(struct spans *s);
/* Queues a copy of span (its strings must outlive the batch: static, or the
 * worker's). Dropped and counted when SPANS_PENDING are waiting. */
void spans_add(struct spans *s, const struct zipkin_span *span);
/* Sends a batch when one is due (or, with now, whatever is pending). */
void spans_poll(struct spans *s, bool now);
/* When the next batch is due, or none. */
uint64_t spans_next_deadline(const struct spans *s, uint64_t none);
/* Whether an export is in flight. */
bool spans_busy(const struct spans *s);

#endif
