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
#include "store.h"
#include "log.h"
#include "resp.h"
#include "route.h"
#include "trace.h"

/* Longest inline body: /caller/ping's (its own 288-byte /ping-style prefix
 * plus " is calling " plus callme's answer, which must fit what is left);
 * the core copies up to CONN_BODY_MAX (conn.h, which asserts the two). */
#define HANDLERS_BODY_MAX 640

struct catalog;

/* What the handlers read besides the request; all pointers not owned. */
struct handler_env {
    _Atomic int *draining;       /* the server's flag: != 0 once SIGTERM came */
    _Atomic uint64_t *example_n; /* Hello_N: process-wide, never repeats */
    _Atomic uint64_t *ping_n;
    const char *app, *pod, *ns; /* /ping */
    const char *revision_hdr;   /* "K-Revision: ...\r\n" or "" */
    const char *store_name;     /* the event store, for messages (--db, no password) */
    _Atomic int *store_up;      /* workers whose store is connected (PostgreSQL), or NULL: always up */
    int store_need;             /* ... how many must be: /readyz says 503 until then */
    struct store_health *store_health; /* the store's (store.h), or NULL: no store */
    unsigned db_timeout_ms;     /* --db-timeout, for the words of a wait that ran out */
    const char *callme;         /* --callme-url's host:port, or NULL: /caller/ping is 404 */
    const struct catalog *catalog; /* /api/catalog's and /api/inventory's products, or NULL: 404 */
    bool gateway;               /* --catalog-url and --inventory-url: /api/products answers */
};

enum handler_action {
    HANDLER_RESPOND, /* r is filled: send it */
    HANDLER_LASTING, /* r is filled and its body outlives every connection (the catalog's): send it from there */
    HANDLER_ROUTE,   /* the route's own handler answers (the route table in app.c) */
};

/* Whether the answer to the request h just parsed may keep the connection. */
bool handlers_keep_alive(const struct handler_env *env, const struct http *h);

/* Answers a request routed to rt into r when the answer needs no work (an
 * inline body goes to body, cap >= HANDLERS_BODY_MAX): a refusal (400, 404,
 * 405), a probe, /ping, the catalog (and the 404 of a route whose flag is
 * unset); else HANDLER_ROUTE: the route's own module answers (app.h). */
enum handler_action handlers_route(const struct handler_env *env, const struct http *h, const struct route_result *rt,
                                   struct resp *r, char *body, size_t cap);
/* /example once its prime is done (result < 0: it failed). body as above. */
void handlers_example(const struct handler_env *env, const struct http *h, int result, struct resp *r, char *body,
                      size_t cap);
/* /metrics: the rendered scrape of len bytes (len < 0: -errno), or busy (too
 * many scrape bodies alive on this worker). */
void handlers_metrics(const struct handler_env *env, const struct http *h, const char *scrape, int len, bool busy,
                      struct resp *r);
/* Whether the store can commit now: every worker's connection set up
 * (PostgreSQL), and the last commit good (store_health). /readyz's answer. */
bool handlers_store_ready(const struct handler_env *env);

/* The answer of a route whose event could not be stored: 503 naming the
 * store, what happened (err's kind, store.h) and the event's fate: "not
 * confirmed" where its commit was sent and never answered, else "nothing
 * was stored". */
void handlers_store_error(const struct handler_env *env, const struct http *h, int err, struct resp *r, char *body,
                          size_t cap);

/* /callme/ping once its event id is committed. body as above. */
void handlers_callme(const struct handler_env *env, const struct http *h, uint64_t id, struct resp *r, char *body,
                     size_t cap);

/* /caller/ping's answer once its call to callme is over: id is the event the
 * caller stored (committed before the call began); res (an enum upstream_result), err (-errno or 0) and why (a
 * static detail or NULL) say how the call ended, status and body what callme
 * answered. 200 with the chain's body, else 502 or 504 naming the upstream.
 * body as above. */
void handlers_caller(const struct handler_env *env, const struct http *h, uint64_t id, int res, int err,
                     const char *why, int status, const char *up_body, size_t up_len, struct resp *r, char *body,
                     size_t cap);

/* /api/products once its fan-out is over: 200 with the JSON body (len
 * bytes; the caller sends it), else status (502, 504) with why into body. */
void handlers_products(const struct handler_env *env, const struct http *h, int status, const char *json, size_t len,
                       const char *why, struct resp *r, char *body, size_t cap);

/* A request --fault-abort answers with status instead of serving it. */
void handlers_fault_abort(const struct handler_env *env, const struct http *h, int status, struct resp *r);

/* The request's trace context into tr (a new sampled trace when it has none
 * and start is set) and a new span id for this server's span into *span,
 * from *rng. */
void handlers_trace(const struct http_req *rq, uint64_t *rng, bool start, struct trace *tr, uint64_t *span);
/* A random id from *rng (span ids: unique-ish, not secret). */
uint64_t handlers_rand(uint64_t *rng);

/* The extra header lines of an answer into extra (cap >= RESP_EXTRA_MAX):
 * traceparent with span when tr is valid, K-Revision when configured. */
void handlers_headers(const struct handler_env *env, const struct trace *tr, uint64_t span, char *extra, size_t cap);

/* Appends the access-log line of one answered request to a. */
void handlers_access_log(struct alog *a, const char *iso_time, unsigned worker, const struct http_req *rq,
                         enum route_id route, int status, size_t bytes, uint64_t dur_ns, const struct trace *tr);

#endif
