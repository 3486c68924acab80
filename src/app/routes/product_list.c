/* product_list.c - GET /api/products: the gateway's fan-out (gateway.h) on the
 * worker's ring, the trace continued into every call; the request waits on
 * it and is answered with the products, or 502/504 naming the upstream (404
 * without --catalog-url and --inventory-url).
 *
 * owns: the route's answers and its wait. never: the fan-out's calls or
 * their parsing (gateway.h), the upstream client (gateway_service.h).
 */
#include "app.h"

#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "gateway_service.h"
#include "trace_ids.h"

static void release_json(void *arg, char *data)
{
    free(data);
}

static void answer(struct app_worker *aw, struct app_req *q, int status, char *json, size_t len, const char *why)
{
    struct resp r;
    char body[ANSWER_BODY_MAX];
    gateway_answer(&aw->env, &q->conn->http, status, json, len, why, &r, body, sizeof(body));
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

/* fanout=parallel|sequential (its query hook): rt->arg an enum fanout_mode. */
static int products_query(const struct config *cfg, const char *q, size_t len, struct route_result *rt)
{
    const char *v;
    size_t vlen;
    rt->arg = FANOUT_DEFAULT;
    int r = q ? route_query_param(q, len, "fanout", &v, &vlen) : 0;
    if (r <= 0) {
        if (r < 0)
            rt->reason = "fanout: given more than once";
        return r;
    }
    if (vlen == 8 && memcmp(v, "parallel", 8) == 0) {
        rt->arg = FANOUT_PARALLEL;
    } else if (vlen == 10 && memcmp(v, "sequential", 10) == 0) {
        rt->arg = FANOUT_SEQUENTIAL;
    } else {
        rt->reason = "fanout: must be parallel or sequential";
        return -1;
    }
    return 0;
}

/* 404 without the gateway; else serve fans out. */
static enum answer_action products_answer(const struct answer_env *env, const struct http *h,
                                           const struct route_result *rt, struct resp *r, char *body, size_t cap)
{
    if (env->gateway)
        return ANSWER_LATER;
    answer_text(r, 404, "not found: /api/products needs --catalog-url and --inventory-url\n",
                  answer_keep_alive(env, h));
    return ANSWER_NOW;
}

static void products_serve(struct app_worker *aw, struct app_req *q)
{
    uint32_t mode = q->route.arg;
    bool sequential = mode == FANOUT_DEFAULT ? aw->cfg->fanout_sequential : mode == FANOUT_SEQUENTIAL;
    conn_wait(q->conn, on_cancel, q); /* before the start: done may run inside gateway_start() */
    if (gateway_start(gateway_of(aw), sequential, &q->tr, q->span, rng_next(&aw->rng), on_done, q, &q->state))
        return; /* answered in on_done(), maybe already */
    q->state = NULL;
    answer(aw, q, 503, NULL, 0, "out of memory for the fan-out; retry");
}

const struct app_route products_route = {.query = products_query, .answer = products_answer, .serve = products_serve};
