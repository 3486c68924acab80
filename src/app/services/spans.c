/* spans.c - batching and export of spans (spans.h).
 *
 * Owns the pending array and the JSON of the batch in flight. The batch is
 * formatted when it leaves, so spans keep arriving while it is sent; a failed
 * or refused export drops its spans (counted), it is never retried: spans are
 * telemetry, and a retry would only pile up behind a collector that is down.
 */
#include "spans.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "log.h"
#include "metrics.h"
#include "resolver.h"
#include "upstreams.h"

static void on_export_done(struct upstream_call *call, enum upstream_result res, int err, int status, const char *body,
                           size_t len)
{
    (void)body;
    (void)len;
    struct spans *s = call->ctx;
    unsigned n = s->in_flight;
    s->in_flight = 0;
    if (res == UPSTREAM_OK && status >= 200 && status < 300) {
        stats_add(&s->sent, n);
        return;
    }
    stats_add(&s->dropped, n);
    if (*s->now_ms >= s->log_ms) {
        if (res == UPSTREAM_OK)
            log_msg("worker %u: zipkin: collector answered %d; %u spans dropped", s->worker, status, n);
        else
            log_msg("worker %u: zipkin: %s%s%s; %u spans dropped", s->worker, upstream_result_text(res),
                    err ? ": " : "", err ? strerror(-err) : "", n);
        s->log_ms = *s->now_ms + 60000; /* at most one line a minute */
    }
}

int spans_init(struct spans *s)
{
    s->pending = calloc(SPANS_PENDING, sizeof(*s->pending));
    s->json = malloc(SPANS_JSON_MAX);
    s->n = 0;
    s->in_flight = 0;
    memset(&s->call, 0, sizeof(s->call));
    s->call.method = "POST";
    s->call.ctype = "application/json";
    s->call.done = on_export_done;
    s->call.ctx = s;
    if (!s->pending || !s->json) {
        spans_fini(s);
        return -ENOMEM;
    }
    return 0;
}

void spans_fini(struct spans *s)
{
    free(s->pending);
    free(s->json);
    s->pending = NULL;
    s->json = NULL;
}

void spans_add(struct spans *s, const struct zipkin_span *span)
{
    if (s->n >= SPANS_PENDING) {
        stats_add(&s->dropped, 1);
        return;
    }
    if (s->n == 0)
        s->first_ms = *s->now_ms;
    s->pending[s->n++] = *span;
}

void spans_poll(struct spans *s, bool now)
{
    if (s->in_flight || s->n == 0)
        return;
    if (!now && s->n < SPANS_BATCH && *s->now_ms < s->first_ms + SPANS_FLUSH_MS)
        return;
    unsigned k = s->n < SPANS_BATCH ? s->n : SPANS_BATCH;
    size_t len = zipkin_format(s->json, SPANS_JSON_MAX, s->pending, k);
    s->n -= k;
    memmove(s->pending, s->pending + k, s->n * sizeof(*s->pending));
    s->first_ms = *s->now_ms;
    if (len == 0) {
        stats_add(&s->dropped, k); /* cannot happen: 64 spans are far below the buffer */
        return;
    }
    s->call.body = s->json;
    s->call.body_len = len;
    s->call.extra[0] = '\0';
    s->in_flight = k;
    enum upstream_result res;
    if (!upstream_start(s->client, s->up, &s->call, &res)) {
        s->in_flight = 0;
        stats_add(&s->dropped, k);
    }
}

uint64_t spans_next_deadline(const struct spans *s, uint64_t none)
{
    if (s->n == 0 || s->in_flight)
        return none;
    uint64_t due = s->first_ms + SPANS_FLUSH_MS;
    return due < none ? due : none;
}

bool spans_busy(const struct spans *s)
{
    return s->in_flight != 0;
}

/* ---- the span exporter as a service (services.h) ------------------------ */

static void spans_start(struct app *a)
{
    if (a->cfg->zipkin.host[0])
        resolver_add(a->resolver, &a->cfg->zipkin);
}

/* app_span_fn */
static void add_span(void *ctx, const struct zipkin_span *span)
{
    spans_add(ctx, span);
}

static int spans_service_init(struct app_worker *aw)
{
    if (!aw->cfg->zipkin.host[0])
        return 0;
    int up = upstreams_add(aw, "zipkin", &aw->cfg->zipkin);
    if (up < 0)
        return up;
    struct spans *s = calloc(1, sizeof(*s));
    if (s) {
        aw->service[SERVICE_SPANS] = s;
        s->client = &upstreams_of(aw)->client;
        s->up = (unsigned)up;
        s->now_ms = &aw->w->pool.now_ms;
        s->worker = aw->w->id;
    }
    if (!s || spans_init(s)) {
        snprintf(aw->w->init_why, sizeof(aw->w->init_why), "allocate the span exporter: out of memory");
        return -ENOMEM;
    }
    aw->span = add_span;
    aw->span_ctx = s;
    return 0;
}

/* after the upstream client's fini: its call is not out (s stays: its
 * counters, app_free()) */
static void spans_service_fini(struct app_worker *aw)
{
    struct spans *s = spans_of(aw);
    if (s)
        spans_fini(s);
    aw->span = NULL;
}

static void spans_service_poll(struct app_worker *aw, bool second)
{
    if (spans_of(aw))
        spans_poll(spans_of(aw), aw->w->pool.drain_seen);
}

static uint64_t spans_service_next_deadline(struct app_worker *aw, uint64_t next)
{
    return spans_of(aw) ? spans_next_deadline(spans_of(aw), next) : next;
}

/* the last spans have not left yet */
static bool spans_service_busy(struct app_worker *aw)
{
    struct spans *s = spans_of(aw);
    return s && (s->n || spans_busy(s));
}

/* Written with or without an exporter: a dashboard's query finds it. */
static void spans_metrics(const struct app *a, struct metrics_out *o)
{
    uint64_t sent = 0, dropped = 0;
    for (unsigned i = 0; i < a->workers->n; i++) {
        struct app_worker *aw = a->w[i].app;
        struct spans *s = aw ? spans_of(aw) : NULL;
        if (s) {
            sent += metrics_ld(&s->sent);
            dropped += metrics_ld(&s->dropped);
        }
    }
    metrics_put(o,
                "# HELP primed_zipkin_spans_total Spans handed to the Zipkin exporter: sent (a 2xx answer) or "
                "dropped.\n"
                "# TYPE primed_zipkin_spans_total counter\n"
                "primed_zipkin_spans_total{result=\"sent\"} %" PRIu64 "\n"
                "primed_zipkin_spans_total{result=\"dropped\"} %" PRIu64 "\n",
                sent, dropped);
}

const struct app_service spans_service = {
    .name = "span exporter",
    .start = spans_start,
    .init = spans_service_init,
    .fini = spans_service_fini,
    .poll = spans_service_poll,
    .next_deadline = spans_service_next_deadline,
    .busy = spans_service_busy,
    .metrics = spans_metrics,
};
