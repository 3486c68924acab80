/* spans.c - batching and export of spans (spans.h).
 *
 * Owns the pending array and the JSON of the batch in flight. The batch is
 * formatted when it leaves, so spans keep arriving while it is sent; a failed
 * or refused export drops its spans (counted), it is never retried: spans are
 * telemetry, and a retry would only pile up behind a collector that is down.
 */
#include "spans.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

static void on_export_done(struct upstream_call *call, enum upstream_result res, int err, int status, const char *body,
                           size_t len)
{
    (void)body;
    (void)len;
    struct spans *s = call->ctx;
    unsigned n = s->in_flight;
    s->in_flight = 0;
    if (res == UPSTREAM_OK && status >= 200 && status < 300) {
        stats_add(&s->metrics->spans_sent, n);
        return;
    }
    stats_add(&s->metrics->spans_dropped, n);
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
        stats_add(&s->metrics->spans_dropped, 1);
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
        stats_add(&s->metrics->spans_dropped, k); /* cannot happen: 64 spans are far below the buffer */
        return;
    }
    s->call.body = s->json;
    s->call.body_len = len;
    s->call.extra[0] = '\0';
    s->in_flight = k;
    enum upstream_result res;
    if (!upstream_start(s->client, s->up, &s->call, &res)) {
        s->in_flight = 0;
        stats_add(&s->metrics->spans_dropped, k);
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
