/* echo.c - GET|HEAD|POST|PUT /echo (--echo-route): the one route that reads
 * a request's body, so that an HTTP conformance suite can check primed's
 * body framing (Content-Length, chunked, trailers) through a route, as it
 * does other servers'. Off by default: /echo is then an unknown path.
 *
 * GET and HEAD answer a short text; POST and PUT answer the request's body,
 * byte for byte, as application/octet-stream (OPTIONS is the app's: Allow).
 * The body is kept while it arrives in one allocation per request that
 * doubles as it grows, up to --max-body (the parser refuses past it with
 * 413); it is handed to the core as the answer's body and freed once sent,
 * or when the request ends without an answer (drop).
 *
 * owns: each waiting body (q->state), from its first byte to its answer.
 * never: a wait (the answer goes out when the request is complete).
 */
#include "app.h"

#include <stdlib.h>
#include <string.h>

#include "config.h"

struct echo_body {
    size_t len, cap;
    char data[];
};

static enum answer_action echo_answer(const struct answer_env *env, const struct http *h,
                                       const struct route_result *rt, struct resp *r, char *body, size_t cap)
{
    if (h->req.method != HTTP_GET && h->req.method != HTTP_HEAD)
        return ANSWER_LATER; /* POST, PUT: serve has the body */
    answer_text(r, 200, "echo: POST or PUT a body and it comes back\n", answer_keep_alive(env, h));
    return ANSWER_NOW;
}

static int echo_take(struct app_worker *aw, struct app_req *q, const char *at, size_t len)
{
    struct echo_body *b = q->state;
    size_t have = b ? b->len : 0;
    if (!b || b->cap - b->len < len) {
        size_t cap = b ? b->cap : 0;
        while (cap - have < len)
            cap = cap ? cap * 2 : 1024;
        struct echo_body *nb = realloc(b, sizeof(*nb) + cap);
        if (!nb)
            return -1; /* b stays in q->state: drop frees it */
        nb->len = have;
        nb->cap = cap;
        q->state = b = nb;
    }
    memcpy(b->data + b->len, at, len);
    b->len += len;
    return 0;
}

static void echo_drop(struct app_worker *aw, struct app_req *q)
{
    free(q->state);
    q->state = NULL;
}

static void release_body(void *arg, char *data)
{
    free(arg);
}

static void echo_serve(struct app_worker *aw, struct app_req *q)
{
    struct echo_body *b = q->state;
    q->state = NULL;
    struct resp r = {
        .status = 200,
        .ctype = "application/octet-stream",
        .body = "",
        .keep_alive = answer_keep_alive(&aw->env, &q->conn->http),
    };
    if (!b || b->len == 0) {
        free(b);
        conn_answer(q->conn, &r, NULL);
        return;
    }
    r.body = b->data;
    r.body_len = b->len;
    conn_answer(q->conn, &r, &(struct conn_body){.data = b->data, .release = release_body, .arg = b});
}

static void echo_fini(struct app_worker *aw)
{
    /* a body that was arriving when the worker stopped */
    for (unsigned i = 0; aw->reqs && i < aw->w->opts->max_open; i++) {
        if (aw->reqs[i].route.id == ROUTE_ECHO && aw->reqs[i].state) {
            free(aw->reqs[i].state);
            aw->reqs[i].state = NULL;
        }
    }
}

static bool echo_enabled(const struct config *cfg)
{
    return cfg->echo_route;
}

const struct app_route echo_route = {
    .answer = echo_answer,
    .serve = echo_serve,
    .fini = echo_fini,
    .enabled = echo_enabled,
    .body = echo_take,
    .drop = echo_drop,
};
