/* product_item.c - GET /api/products/{id}: one product as /api/products answers
 * it, with its "availability": the catalog, then one inventory call for that
 * product (with --catalog-url and --inventory-url).
 *
 * owns: the route's per-request state (struct product_req, lent through
 * app_req.state while its calls run) and its answers. never: the upstream
 * client or the gateway's settings (the app's services: upstreams.h, gateway_service.h),
 * a product list's parsing (json.h).
 *
 * The same contract as /api/products (docs/gateway.md): a catalog that fails
 * is 502 (504 on its timeout); an id the catalog does not list is 404; an
 * inventory call that fails, passes its deadline or answers no JSON object of
 * at most GATEWAY_AVAIL_MAX bytes gives "availability": null and still 200.
 * This file and its row in route.h are the whole route: it is the worked
 * example of docs/architecture.md's "Adding an asynchronous route".
 */
#include "app.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gateway_service.h"
#include "trace_ids.h"

struct product_req {
    struct upstream_call call; /* the catalog's, then the inventory's */
    struct app_worker *aw;
    struct app_req *q;
    bool inventory;        /* the call out is the inventory's */
    char *product;         /* the catalog's object of it, owned */
    uint32_t product_len;
    char path[URL_PATH_MAX + 64 + ROUTE_ITEM_MAX + 1];
};

static void release_json(void *arg, char *data)
{
    (void)arg;
    free(data);
}

static void done_with(struct product_req *p)
{
    p->q->state = NULL;
    free(p->product);
    free(p);
}

/* Answers with a text status (404, 502, 503, 504), and frees p. */
static void answer_failed(struct product_req *p, int status, const char *why)
{
    struct app_worker *aw = p->aw;
    struct app_req *q = p->q;
    struct resp r;
    char body[ANSWER_BODY_MAX];
    done_with(p);
    gateway_answer(&aw->env, &q->conn->http, status, NULL, 0, why, &r, body, sizeof(body));
    app_answer(q, &r);
}

/* 200: the product's object with "availability" appended (avail: an
 * inventory object's text, or NULL for null), and frees p. */
static void answer_product(struct product_req *p, const char *avail, size_t avail_len)
{
    struct app_worker *aw = p->aw;
    struct app_req *q = p->q;
    bool empty = p->product_len == 2; /* "{}" */
    size_t cap = p->product_len + sizeof(",\"availability\":") + (avail ? avail_len : 4) + 1;
    char *json = malloc(cap);
    if (!json) {
        answer_failed(p, 503, "out of memory for the answer; retry");
        return;
    }
    size_t n = p->product_len - 1; /* without its '}' */
    memcpy(json, p->product, n);
    n += (size_t)snprintf(json + n, cap - n, "%s\"availability\":", empty ? "" : ",");
    memcpy(json + n, avail ? avail : "null", avail ? avail_len : 4);
    n += avail ? avail_len : 4;
    json[n++] = '}';
    done_with(p);
    struct resp r;
    char body[ANSWER_BODY_MAX];
    gateway_answer(&aw->env, &q->conn->http, 200, json, n, NULL, &r, body, sizeof(body));
    conn_answer(q->conn, &r, &(struct conn_body){.data = json, .release = release_json});
}

static void on_inventory(struct product_req *p, enum upstream_result res, int status, const char *body, size_t len)
{
    uint32_t off, olen;
    if (gateway_availability(res, status, body, len, &off, &olen))
        answer_product(p, body + off, olen);
    else
        answer_product(p, NULL, 0); /* the seed's fallback */
}

static void on_catalog(struct product_req *p, enum upstream_result res, int status, const char *body, size_t len)
{
    struct gateway *g = gateway_of(p->aw);
    char why[200];
    struct json_obj objs[GATEWAY_ITEMS_MAX];
    int n = gateway_catalog(g, &p->call, res, status, body, len, objs, why, sizeof(why));
    if (n < 0) {
        answer_failed(p, -n, why);
        return;
    }
    const struct json_obj *o = NULL;
    for (int i = 0; i < n && !o; i++)
        if (objs[i].has_id && strcmp(objs[i].id, p->q->route.item) == 0)
            o = &objs[i];
    if (!o) {
        answer_failed(p, 404, "no such product");
        return;
    }
    p->product = malloc(o->len);
    if (!p->product) {
        answer_failed(p, 503, "out of memory for the product; retry");
        return;
    }
    memcpy(p->product, body + o->off, o->len);
    p->product_len = o->len;
    /* one inventory call, under the deadline /api/products gives all of them */
    snprintf(p->path, sizeof(p->path), "%s%s", g->inventory_path, o->id);
    p->inventory = true;
    p->call.path = p->path;
    p->call.deadline_ms = *g->now_ms + g->timeout_ms;
    p->call.extra[0] = '\0';
    struct app_req *q = p->q;
    if (q->tr.valid)
        trace_format_outbound(&q->tr, q->span, rng_next(&p->aw->rng) | 1, p->call.extra, sizeof(p->call.extra));
    enum upstream_result r2;
    if (!upstream_start(g->up, g->inventory_up, &p->call, &r2))
        answer_product(p, NULL, 0);
}

/* upstream_done_fn: the catalog's answer, then the inventory's. */
static void on_call_done(struct upstream_call *call, enum upstream_result res, int err, int status, const char *body,
                         size_t len)
{
    (void)err;
    struct product_req *p = call->ctx;
    if (p->inventory)
        on_inventory(p, res, status, body, len);
    else
        on_catalog(p, res, status, body, len);
}

/* conn_cancel_fn: the client went away; the call out is cancelled. */
static void on_cancel(struct conn *c, void *arg)
{
    (void)c;
    struct app_req *q = arg;
    struct product_req *p = q->state;
    if (!p)
        return;
    upstream_cancel(gateway_of(p->aw)->up, &p->call);
    done_with(p);
}

/* 404 without the gateway, or for an id no product can have; else serve
 * calls. */
static enum answer_action product_answer(const struct answer_env *env, const struct http *h,
                                          const struct route_result *rt, struct resp *r, char *body, size_t cap)
{
    if (env->gateway && rt->item_len)
        return ANSWER_LATER;
    answer_text(r, 404,
                  !env->gateway ? "not found: /api/products/{id} needs --catalog-url and --inventory-url\n"
                                : "no such product\n",
                  answer_keep_alive(env, h));
    return ANSWER_NOW;
}

static void product_serve(struct app_worker *aw, struct app_req *q)
{
    struct resp r;
    char body[ANSWER_BODY_MAX];
    struct product_req *p = calloc(1, sizeof(*p));
    if (!p) {
        gateway_answer(&aw->env, &q->conn->http, 503, NULL, 0, "out of memory for the request; retry", &r, body,
                          sizeof(body));
        app_answer(q, &r);
        return;
    }
    p->aw = aw;
    p->q = q;
    q->state = p;
    struct gateway *g = gateway_of(aw);
    p->call.method = "GET";
    p->call.path = g->catalog_path;
    if (q->tr.valid)
        trace_format_outbound(&q->tr, q->span, rng_next(&aw->rng) | 1, p->call.extra, sizeof(p->call.extra));
    p->call.done = on_call_done;
    p->call.ctx = p;
    conn_wait(q->conn, on_cancel, q); /* before the start: the answer may come inside */
    enum upstream_result res;
    if (!upstream_start(g->up, g->catalog_up, &p->call, &res)) {
        char why[200];
        snprintf(why, sizeof(why), "catalog %s: %s", g->up->ups[g->catalog_up].name, upstream_result_text(res));
        answer_failed(p, 502, why);
    }
}

const struct app_route product_route = {.answer = product_answer, .serve = product_serve};
