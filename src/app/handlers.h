/* handlers.h - what the routes' answers share: the keep-alive rule, a text
 * answer, the refusals (400, 404, 405), the "APP(id=N): POD in NS" line
 * (/ping and the chain's routes), the event store's 503 and /readyz's view of
 * the store, the gateway's answer (/api/products and /api/products/{id}),
 * --fault-abort's answer; and around every answer, the trace ids, the extra
 * headers (traceparent, K-Revision) and the access-log line.
 *
 * Pure: each fills a struct resp (resp.h) whose body is a static string or
 * lives in the caller's buffer. owns: those words and their bounds. never: a
 * connection, a ring or the kernel (the caller sends), a route's own answers
 * (its file's: route.h's table names it).
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

/* What the answers read besides the request; all pointers not owned. */
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
    bool echo;                  /* --echo-route: /echo answers (the server's Allow names POST, PUT) */
};

/* What a route's answer function (struct app_route's answer, app.h) did. */
enum handler_action {
    HANDLER_RESPOND, /* r is filled: send it */
    HANDLER_LASTING, /* r is filled and its body outlives every connection (the catalog's): send it from there */
    HANDLER_ROUTE,   /* no answer yet: the route's serve answers (it waits for work) */
};

/* Whether the answer to the request h just parsed may keep the connection. */
bool handlers_keep_alive(const struct handler_env *env, const struct http *h);

/* A text/plain answer of status with body (a string that outlives r). */
void handlers_text(struct resp *r, int status, const char *body, bool keep_alive);

/* OPTIONS (RFC 9110 9.3.7): 200 with the route's Allow and no content; for
 * "*", the methods some route of the server serves. */
void handlers_options(const struct handler_env *env, const struct http *h, const struct route_result *rt,
                      struct resp *r);

/* The answer of a request route_match() refused (rt->status: 400 with its
 * reason, 404, or 405 with the route's Allow). body as below. */
void handlers_refusal(const struct handler_env *env, const struct http *h, const struct route_result *rt,
                      struct resp *r, char *body, size_t cap);

/* "APP(id=ID): POD in NS" and then tail (a string) into body (cap >=
 * HANDLERS_BODY_MAX), each name cut as the seed's bounds say (at most 288
 * bytes before tail): /ping's and the chain's answers. Returns its length, or
 * 0 when it did not fit. */
size_t handlers_who(const struct handler_env *env, uint64_t id, const char *tail, char *body, size_t cap);

/* Whether the store can commit now: every worker's connection set up
 * (PostgreSQL), and the last commit good (store_health). /readyz's answer. */
bool handlers_store_ready(const struct handler_env *env);

/* The answer of a route whose event could not be stored: 503 naming the
 * store, what happened (err's kind, store.h) and the event's fate: "not
 * confirmed" where its commit was sent and never answered, else "nothing
 * was stored". body as above. */
void handlers_store_error(const struct handler_env *env, const struct http *h, int err, struct resp *r, char *body,
                          size_t cap);

/* The gateway's routes (product_list.c, product_item.c) once their calls are over:
 * 200 with the JSON body (len bytes; the caller sends it), else status (404,
 * 502, 503, 504) with why into body. */
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
