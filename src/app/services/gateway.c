/* gateway.c - the fan-out of /api/products (gateway.h).
 *
 * A request is a catalog call, then one inventory call per product: all
 * started at once (parallel) or each from the previous one's done
 * (sequential). `starting` guards the loops that start calls: a call may
 * end inside upstream_start() (the ring refused it), and the request must
 * not be finished, and freed, under the loop that is still walking it.
 */
#include "gateway.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


enum { ITEM_WAIT, ITEM_CALLING, ITEM_DONE };

struct gw_item {
    struct upstream_call call;
    struct gateway_req *req;
    char *path;                    /* in req->paths */
    uint16_t avail_off, avail_len; /* its inventory object in avail (len 0: null) */
    uint8_t state;
    char avail[GATEWAY_AVAIL_MAX];
};

struct gateway_req {
    struct gateway *g;
    gateway_done_fn *done;
    void *ctx;
    void **owner; /* the owner's slot that points to this request */
    struct trace tr;
    uint64_t span, seed;
    bool sequential;
    bool starting; /* inside a loop that starts calls */
    struct upstream_call catalog;
    char *text;  /* the catalog's answer, owned */
    char *paths; /* the inventory calls' request targets, owned */
    size_t text_len;
    struct json_obj objs[GATEWAY_ITEMS_MAX];
    struct gw_item *items; /* owned, n of them */
    unsigned n, next, pending;
    uint64_t deadline_ms; /* of the inventory calls */
};

static uint64_t mix(uint64_t x)
{
    /* splitmix64: span ids, unique-ish, not secret */
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static void free_req(struct gateway_req *r)
{
    free(r->items);
    free(r->paths);
    free(r->text);
    free(r);
}

/* Hands the answer to the owner: r is freed first (done may start the next
 * request's fan-out), then done runs. */
static void finish(struct gateway_req *r, int status, char *body, size_t len, const char *why)
{
    *r->owner = NULL;
    gateway_done_fn *done = r->done;
    void *ctx = r->ctx;
    free_req(r);
    done(ctx, status, body, len, why);
}

/* Ends r with status (not 200) and why. */
static void finish_error(struct gateway_req *r, int status, const char *why)
{
    finish(r, status, NULL, 0, why);
}

/* Every product is answered (or given up on): the products, in catalog
 * order, each its object with "availability" added. */
static void finish_ok(struct gateway_req *r)
{
    size_t cap = 3;
    for (unsigned i = 0; i < r->n; i++)
        cap += r->objs[i].len + sizeof(",\"availability\":") + (r->items[i].avail_len ? r->items[i].avail_len : 4);
    char *body = malloc(cap);
    if (!body) {
        finish_error(r, 502, "out of memory for the answer");
        return;
    }
    size_t n = 0;
    body[n++] = '[';
    for (unsigned i = 0; i < r->n; i++) {
        const struct json_obj *o = &r->objs[i];
        const struct gw_item *it = &r->items[i];
        if (i)
            body[n++] = ',';
        memcpy(body + n, r->text + o->off, o->len - 1); /* without its '}' */
        n += o->len - 1;
        if (!o->empty)
            body[n++] = ',';
        memcpy(body + n, "\"availability\":", 15);
        n += 15;
        if (it->avail_len) {
            memcpy(body + n, it->avail + it->avail_off, it->avail_len);
            n += it->avail_len;
        } else {
            memcpy(body + n, "null", 4);
            n += 4;
            stats_add(&r->g->fallbacks, 1);
        }
        body[n++] = '}';
    }
    body[n++] = ']';
    finish(r, 200, body, n, NULL);
}

static void start_items(struct gateway_req *r);

static void on_item_done(struct upstream_call *call, enum upstream_result res, int err, int status, const char *body,
                         size_t len)
{
    (void)err;
    struct gw_item *it = call->ctx;
    struct gateway_req *r = it->req;
    it->state = ITEM_DONE;
    r->pending--;
    uint32_t off, olen;
    if (gateway_availability(res, status, body, len, &off, &olen)) { /* it fits it->avail */
        memcpy(it->avail, body, len);
        it->avail_off = (uint16_t)off;
        it->avail_len = (uint16_t)olen;
    }
    if (r->starting)
        return; /* the loop that started it goes on */
    start_items(r);
}

/* Starts what the mode allows; finishes r when nothing is left. */
static void start_items(struct gateway_req *r)
{
    struct gateway *g = r->g;
    r->starting = true;
    while (r->next < r->n && (!r->sequential || r->pending == 0)) {
        struct gw_item *it = &r->items[r->next++];
        if (!r->objs[r->next - 1].has_id || *g->now_ms >= r->deadline_ms) {
            it->state = ITEM_DONE; /* no usable id, or no time left: null */
            continue;
        }
        struct upstream_call *c = &it->call;
        c->method = "GET";
        c->path = it->path;
        c->deadline_ms = r->deadline_ms;
        c->ctype = NULL;
        c->body = NULL;
        c->body_len = 0;
        c->extra[0] = '\0';
        if (r->tr.valid)
            trace_format_outbound(&r->tr, r->span, mix(r->seed + r->next) | 1, c->extra, sizeof(c->extra));
        c->done = on_item_done;
        c->ctx = it;
        it->state = ITEM_CALLING;
        r->pending++;
        enum upstream_result res;
        if (!upstream_start(g->up, g->inventory_up, c, &res)) {
            it->state = ITEM_DONE;
            r->pending--;
        }
    }
    r->starting = false;
    if (r->next >= r->n && r->pending == 0)
        finish_ok(r);
}

int gateway_catalog(const struct gateway *g, const struct upstream_call *call, enum upstream_result res, int status,
                    const char *body, size_t len, struct json_obj *objs, char *why, size_t whylen)
{
    const char *name = g->up->ups[g->catalog_up].name;
    if (res != UPSTREAM_OK) {
        snprintf(why, whylen, "catalog %s: %s", name, call->why ? call->why : upstream_result_text(res));
        return res == UPSTREAM_TIMEOUT ? -504 : -502;
    }
    if (status != 200) {
        snprintf(why, whylen, "catalog %s answered %d", name, status);
        return -502;
    }
    int n = json_objects(body, len, objs, GATEWAY_ITEMS_MAX);
    if (n < 0) {
        snprintf(why, whylen, "catalog %s: %s", name,
                 n == -E2BIG ? "more than 64 products" : "not a JSON array of objects (UTF-8, RFC 8259)");
        return -502;
    }
    for (int i = 0; i < n; i++) {
        /* the contract (docs/gateway.md): a string id, and no "availability" of its own (the answer
         * would hold the name twice, and a reader that takes the first would take the catalog's) */
        const char *broken = objs[i].id_not_string      ? "itemId is not a string"
                             : objs[i].has_availability ? "has an availability of its own"
                                                        : NULL;
        if (broken) {
            snprintf(why, whylen, "catalog %s: product %d's %s", name, i + 1, broken);
            return -502;
        }
    }
    return n;
}

bool gateway_availability(enum upstream_result res, int status, const char *body, size_t len, uint32_t *off,
                          uint32_t *olen)
{
    return res == UPSTREAM_OK && status == 200 && len <= GATEWAY_AVAIL_MAX && json_object(body, len, off, olen);
}

static void on_catalog_done(struct upstream_call *call, enum upstream_result res, int err, int status, const char *body,
                            size_t len)
{
    (void)err;
    struct gateway_req *r = call->ctx;
    struct gateway *g = r->g;
    char why[160];
    int n = gateway_catalog(g, call, res, status, body, len, r->objs, why, sizeof(why));
    if (n < 0) {
        finish_error(r, -n, why);
        return;
    }
    size_t plen = strlen(g->inventory_path) + ITEM_ID_MAX + 1;
    r->text = malloc(len ? len : 1);
    r->items = calloc((size_t)n ? (size_t)n : 1, sizeof(*r->items));
    r->paths = malloc(((size_t)n ? (size_t)n : 1) * plen);
    if (!r->text || !r->items || !r->paths) {
        finish_error(r, 502, "out of memory for the fan-out");
        return;
    }
    memcpy(r->text, body, len);
    r->text_len = len;
    r->n = (unsigned)n;
    for (unsigned i = 0; i < r->n; i++) {
        struct gw_item *it = &r->items[i];
        it->req = r;
        it->state = ITEM_WAIT;
        it->path = r->paths + (size_t)i * plen;
        snprintf(it->path, plen, "%s%s", g->inventory_path, r->objs[i].has_id ? r->objs[i].id : "");
    }
    r->deadline_ms = *g->now_ms + g->timeout_ms;
    start_items(r);
}

bool gateway_start(struct gateway *g, bool sequential, const struct trace *tr, uint64_t span, uint64_t seed,
                   gateway_done_fn *done, void *ctx, void **out)
{
    struct gateway_req *r = calloc(1, sizeof(*r));
    if (!r)
        return false;
    r->g = g;
    r->done = done;
    r->ctx = ctx;
    r->owner = out;
    r->tr = *tr;
    r->span = span;
    r->seed = seed;
    r->sequential = sequential;
    *out = r;
    struct upstream_call *c = &r->catalog;
    c->method = "GET";
    c->path = g->catalog_path;
    c->extra[0] = '\0';
    if (tr->valid)
        trace_format_outbound(tr, span, mix(seed) | 1, c->extra, sizeof(c->extra));
    c->done = on_catalog_done;
    c->ctx = r;
    enum upstream_result res;
    if (!upstream_start(g->up, g->catalog_up, c, &res)) {
        char why[160];
        snprintf(why, sizeof(why), "catalog %s: %s", g->up->ups[g->catalog_up].name, upstream_result_text(res));
        finish_error(r, 502, why);
    }
    return true;
}

void gateway_cancel(struct gateway_req *r)
{
    if (r->catalog.where != UPCALL_IDLE)
        upstream_cancel(r->g->up, &r->catalog);
    for (unsigned i = 0; r->items && i < r->n; i++)
        if (r->items[i].state == ITEM_CALLING)
            upstream_cancel(r->g->up, &r->items[i].call);
    *r->owner = NULL;
    free_req(r);
}
