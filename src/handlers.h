/* handlers.h - route -> response, pure: the answers of /example, /ping,
 * /healthz, /readyz, /metrics and of refused requests, the extra headers
 * (traceparent, K-Revision) and the access-log line.
 *
 * A handler fills a struct resp (resp.h); its body is a static string or lives
 * in the caller's buffer. No ring, no syscalls, no connection: the caller
 * (conn.c) formats, sends and closes.
 */
#ifndef PRIMED_HANDLERS_H
#define PRIMED_HANDLERS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "http.h"
#include "log.h"
#include "resp.h"
#include "trace.h"

/* Longest inline body: /ping's (at most 288 bytes). */
#define HANDLERS_BODY_MAX 320

/* What the handlers read besides the request; all pointers not owned. */
struct handler_env {
    _Atomic int *draining;       /* the server's flag: != 0 once SIGTERM came */
    _Atomic uint64_t *example_n; /* Hello_N: process-wide, never repeats */
    _Atomic uint64_t *ping_n;
    const char *app, *pod, *ns; /* /ping */
    const char *revision_hdr;   /* "K-Revision: ...\r\n" or "" */
};

enum handler_action {
    HANDLER_RESPOND, /* r is filled: send it */
    HANDLER_PRIME,   /* /example: run a prime of rq->route.bits, then handlers_example() */
    HANDLER_METRICS, /* /metrics: render the scrape, then handlers_metrics() */
};

/* Whether the answer to the request h just parsed may keep the connection. */
bool handlers_keep_alive(const struct handler_env *env, const struct http *h);

/* Answers a routed request into r (an inline body goes to body, cap >=
 * HANDLERS_BODY_MAX), or says which work the caller must do first. */
enum handler_action handlers_route(const struct handler_env *env, const struct http *h, struct resp *r, char *body,
                                   size_t cap);
/* /example once its prime is done (result < 0: it failed). body as above. */
void handlers_example(const struct handler_env *env, const struct http *h, int result, struct resp *r, char *body,
                      size_t cap);
/* /metrics: the rendered scrape of len bytes (len < 0: -errno), or busy (too
 * many scrape bodies alive on this worker). */
void handlers_metrics(const struct handler_env *env, const struct http *h, const char *scrape, int len, bool busy,
                      struct resp *r);
/* A request refused before routing (status, why); resets rq's routing so the
 * request counts under "other", keeping its method for the access log. */
void handlers_refusal(struct http_req *rq, int status, enum bad_reason why, struct resp *r);

/* The request's trace context into tr, and the extra header lines of its
 * answer into extra (cap >= RESP_EXTRA_MAX): traceparent with a new span id
 * from *rng when traced, K-Revision when configured. */
void handlers_headers(const struct handler_env *env, const struct http_req *rq, uint64_t *rng, struct trace *tr,
                      char *extra, size_t cap);

/* Appends the access-log line of one answered request to a. */
void handlers_access_log(struct alog *a, const char *iso_time, unsigned worker, const struct http_req *rq, int status,
                         size_t bytes, uint64_t dur_ns, const struct trace *tr);

#endif
