/* answer.h - the words every route's answer shares: what an answer function
 * reads (struct answer_env) and what it did (enum answer_action), the
 * keep-alive rule, a text answer, the refusals (400, 404, 405) and OPTIONS,
 * the "APP(id=N): POD in NS" line (/ping and the chain's routes), and the
 * extra headers around every answer (traceparent, K-Revision).
 *
 * Pure: each fills a struct resp (resp.h) whose body is a static string or
 * lives in the caller's buffer. owns: those words and their bounds. never: a
 * connection, a ring or the kernel (the caller sends), a route's own answers
 * (its file's: route.h's table names it).
 */
#ifndef PRIMED_ANSWER_H
#define PRIMED_ANSWER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "http.h"
#include "resp.h"
#include "route.h"
#include "trace.h"

/* Longest inline body: /caller/ping's (its own 288-byte /ping-style prefix
 * plus " is calling " plus callme's answer, which must fit what is left);
 * the core copies up to CONN_BODY_MAX (conn.h, which asserts the two). */
#define ANSWER_BODY_MAX 640

struct app;

/* What the answers read besides the request; all pointers not owned. */
struct answer_env {
    _Atomic int *draining;       /* the server's flag: != 0 once SIGTERM came */
    _Atomic uint64_t *example_n; /* Hello_N: process-wide, never repeats */
    _Atomic uint64_t *ping_n;
    const char *app, *pod, *ns; /* /ping */
    const char *revision_hdr;   /* "K-Revision: ...\r\n" or "" */
    const struct app *process;  /* the process's app: its services' state (readiness, the catalog) */
    const char *callme;         /* --callme-url's host:port, or NULL: /caller/ping is 404 */
    bool gateway;               /* --catalog-url and --inventory-url: /api/products answers */
    bool echo;                  /* --echo-route: /echo answers (the server's Allow names POST, PUT) */
};

/* What a route's answer function (struct app_route's answer, app.h) did. */
enum answer_action {
    ANSWER_NOW, /* r is filled: send it */
    ANSWER_LASTING, /* r is filled and its body outlives every connection (the catalog's): send it from there */
    ANSWER_LATER,   /* no answer yet: the route's serve answers (it waits for work) */
};

/* Whether the answer to the request h just parsed may keep the connection. */
bool answer_keep_alive(const struct answer_env *env, const struct http *h);

/* A text/plain answer of status with body (a string that outlives r). */
void answer_text(struct resp *r, int status, const char *body, bool keep_alive);

/* OPTIONS (RFC 9110 9.3.7): 200 with the route's Allow and no content; for
 * "*", the methods some route of the server serves. */
void answer_options(const struct answer_env *env, const struct http *h, const struct route_result *rt,
                      struct resp *r);

/* The answer of a request route_match() refused (rt->status: 400 with its
 * reason, 404, or 405 with the route's Allow). body as below. */
void answer_refusal(const struct answer_env *env, const struct http *h, const struct route_result *rt,
                      struct resp *r, char *body, size_t cap);

/* "APP(id=ID): POD in NS" and then tail (a string) into body (cap >=
 * ANSWER_BODY_MAX), each name cut as the seed's bounds say (at most 288
 * bytes before tail): /ping's and the chain's answers. Returns its length, or
 * 0 when it did not fit. */
size_t answer_who(const struct answer_env *env, uint64_t id, const char *tail, char *body, size_t cap);

/* The extra header lines of an answer into extra (cap >= RESP_EXTRA_MAX):
 * traceparent with span when tr is valid, K-Revision when configured. */
void answer_headers(const struct answer_env *env, const struct trace *tr, uint64_t span, char *extra, size_t cap);

#endif
