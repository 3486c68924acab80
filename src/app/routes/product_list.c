/* product_list.c - GET /api/products: the gateway's fan-out (gateway.h) on the
 * worker's ring, the trace continued into every call; the request waits on
 * it and is answered with the products, or 502/504 naming the upstream (404
 * without --catalog-url and --inventory-url).
 *
 * owns: the route's answers and its wait. never: the fan-out's calls or
 * their parsing (gateway.h), the upstream client (aw->up).
 */
#include "app.h"

#include <stdlib.h>

#include "gateway.h"

static void release_json(void *arg, char *data)
{
    free(data);
}

static void answer(struct app_worker *aw, struct app_req *q, int status, char *json, size_t len, const char *why)
{
    struct resp r;
    char body[HANDLERS_BODY_MAX];
    handlers_products(&aw->env, &q->conn->http, status, json, len, why, &r, body, sizeof(body));
    if (status == 200)
        conn_answer(q->conn, &r, &(struct conn_body){.data = json, .release = release_json});
    else
        app_answer(q, &r);
}

/* gateway_done_fn of the fan-out. */
static void on_done(void *ctx, int status, char *json, size_t len, const char *why)
{
    struct app_req *q = ctx;
    q->state = NULL;
    answer(app_of(q->conn), q, status, json, len, why);
}

/* conn_cancel_fn: the client went away; the fan-out's calls are cancelled. */
static void on_cancel(struct conn *c, void *arg)
{
    struct app_req *q = arg;
    if (q->state)
        gateway_cancel(q->state); /* clears q->state */
}

/* 404 without the gateway; else serve fans out. */
static enum handler_action products_answer(const struct handler_env *env, const struct http *h,
                                           const struct route_result *rt, struct resp *r, char *body, size_t cap)
{
    if (env->gateway)
        return HANDLER_ROUTE;
    handlers_text(r, 404, "not found: /api/products needs --catalog-url and --inventory-url\n",
                  handlers_keep_alive(env, h));
    return HANDLER_RESPOND;
}

static void products_serve(struct app_worker *aw, struct app_req *q)
{
    uint8_t mode = q->route.fanout;
    bool sequential = mode == ROUTE_FANOUT_DEFAULT ? aw->cfg->fanout_sequential : mode == ROUTE_FANOUT_SEQUENTIAL;
    conn_wait(q->conn, on_cancel, q); /* before the start: done may run inside gateway_start() */
    if (gateway_start(aw->gateway, sequential, &q->tr, q->span, handlers_rand(&aw->rng), on_done, q, &q->state))
        return; /* answered in on_done(), maybe already */
    q->state = NULL;
    answer(aw, q, 503, NULL, 0, "out of memory for the fan-out; retry");
}

const struct app_route products_route = {.answer = products_answer, .serve = products_serve};
