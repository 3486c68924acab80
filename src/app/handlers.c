/* handlers.c - route -> response (handlers.h).
 *
 * Pure: reads the request, the environment and its counters (atomics, relaxed)
 * and fills a struct resp; never touches a connection, a buffer it was not
 * given, or the kernel. Every body is bounded (HANDLERS_BODY_MAX) and nothing
 * of the request is reflected in an answer.
 */
#include "handlers.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "build_info.h"
#include "catalog.h"
#include "route.h"
#include "strout.h"
#include "upstream.h"

static const char TEXT[] = "text/plain; charset=utf-8";
static const char JSON[] = "application/json";

static bool draining(const struct handler_env *env)
{
    return atomic_load_explicit(env->draining, memory_order_relaxed) != 0;
}

bool handlers_keep_alive(const struct handler_env *env, const struct http *h)
{
    /* the server-wide flag: an answer written after the signal but before
     * this worker's loop noticed it still says close */
    return h->req.keep_alive && !draining(env) && !h->upgrade;
}

static void text(struct resp *r, const struct route_result *rt, int status, const char *body, bool ka)
{
    *r = (struct resp){
        .status = status,
        .ctype = TEXT,
        .body = body,
        .body_len = strlen(body),
        .keep_alive = ka,
    };
    if (status == 405)
        r->allow = rt ? route_allow((enum route_id)rt->id) : NULL;
}

enum handler_action handlers_route(const struct handler_env *env, const struct http *h, const struct route_result *rt,
                                   struct resp *r, char *body, size_t cap)
{
    bool ka = handlers_keep_alive(env, h);
    if (rt->status == 400) {
        snprintf(body, cap, "%s\n", rt->reason ? rt->reason : "bad request");
        text(r, rt, 400, body, ka);
        return HANDLER_RESPOND;
    }
    if (rt->status) {
        text(r, rt, rt->status, rt->status == 404 ? "not found\n" : "method not allowed\n", ka);
        return HANDLER_RESPOND;
    }
    switch (rt->id) {
    case ROUTE_EXAMPLE:
        return HANDLER_ROUTE;
    case ROUTE_METRICS:
        return HANDLER_ROUTE;
    case ROUTE_HEALTHZ:
        text(r, rt, 200, "ok\n", ka);
        break;
    case ROUTE_READYZ:
        if (draining(env))
            text(r, rt, 503, "draining\n", false);
        else if (!handlers_store_ready(env)) {
            int e = env->store_health ? atomic_load_explicit(&env->store_health->last_err, memory_order_relaxed) : 0;
            snprintf(body, cap, "event store %.200s cannot commit: %s\n", env->store_name,
                     store_fault_words(store_fault_of(e ? e : -ENOTCONN)));
            text(r, rt, 503, body, ka);
        } else
            text(r, rt, 200, "ready\n", ka);
        break;
    case ROUTE_CALLME:
        return HANDLER_ROUTE; /* chain.c: stores its event, answers after the commit */
    case ROUTE_CALLER:
        if (!env->callme) {
            text(r, rt, 404, "not found: /caller/ping needs --callme-url (CALLME_URL)\n", ka);
            break;
        }
        return HANDLER_ROUTE;
    case ROUTE_CATALOG:
        if (!env->catalog) {
            text(r, rt, 404, "not found\n", ka);
            break;
        }
        *r = (struct resp){.status = 200, .ctype = JSON, .body = env->catalog->json,
                           .body_len = env->catalog->json_len, .keep_alive = ka};
        return HANDLER_LASTING;
    case ROUTE_INVENTORY: {
        const struct catalog_item *it = env->catalog && rt->item_len ? catalog_find(env->catalog, rt->item) : NULL;
        if (!it) {
            text(r, rt, 404, "no such item\n", ka);
            break;
        }
        *r = (struct resp){.status = 200, .ctype = JSON, .body = it->inventory, .body_len = it->inventory_len,
                           .keep_alive = ka};
        break;
    }
    case ROUTE_PRODUCTS:
        if (!env->gateway) {
            text(r, rt, 404, "not found: /api/products needs --catalog-url and --inventory-url\n", ka);
            break;
        }
        return HANDLER_ROUTE;
    case ROUTE_PING: {
        uint64_t n = atomic_fetch_add_explicit(env->ping_n, 1, memory_order_relaxed) + 1;
        /* values come from the pod spec, not the request: still bounded (at
         * most 64 + 4 + 20 + 3 + 128 + 4 + 64 + 1 = 288 bytes) */
        snprintf(body, cap, "%.64s(id=%" PRIu64 "): %.128s in %.64s\n", env->app, n, env->pod, env->ns);
        text(r, rt, 200, body, ka);
        break;
    }
    default:
        return HANDLER_ROUTE; /* a route of its own file (its module's serve) */
    }
    return HANDLER_RESPOND;
}

bool handlers_store_ready(const struct handler_env *env)
{
    if (env->store_up && atomic_load_explicit(env->store_up, memory_order_relaxed) < env->store_need)
        return false;
    return !env->store_health || !atomic_load_explicit(&env->store_health->down, memory_order_relaxed);
}

void handlers_store_error(const struct handler_env *env, const struct http *h, int err, struct resp *r, char *body,
                          size_t cap)
{
    enum store_fault f = store_fault_of(err);
    char what[64] = "";
    if (f == STORE_FAULT_TIMEOUT)
        snprintf(what, sizeof(what), " (%u ms)", env->db_timeout_ms);
    snprintf(body, cap, "event store %.200s: %s%s; %s; retry\n", env->store_name, store_fault_words(f), what,
             store_fault_unconfirmed(f) ? "not confirmed: the event may still be stored" : "nothing was stored");
    text(r, NULL, 503, body, handlers_keep_alive(env, h));
}

/* "APP(id=ID): POD in NS", the chain's answers (each name cut as the seed's
 * bounds say). */
static void put_who(struct strout *o, const struct handler_env *env, uint64_t id)
{
    strout_strn(o, env->app, 64);
    STROUT_LIT(o, "(id=");
    strout_uint(o, id);
    STROUT_LIT(o, "): ");
    strout_strn(o, env->pod, 128);
    STROUT_LIT(o, " in ");
    strout_strn(o, env->ns, 64);
}

void handlers_callme(const struct handler_env *env, const struct http *h, uint64_t id, struct resp *r, char *body,
                     size_t cap)
{
    struct strout o = strout_init(body, cap);
    put_who(&o, env, id);
    STROUT_LIT(&o, "\n");
    strout_end(&o);
    text(r, NULL, 200, body, handlers_keep_alive(env, h));
}

void handlers_caller(const struct handler_env *env, const struct http *h, uint64_t id, int res, int err,
                     const char *why, int status, const char *up_body, size_t up_len, struct resp *r, char *body,
                     size_t cap)
{
    bool ka = handlers_keep_alive(env, h);
    if (res == UPSTREAM_OK && status >= 200 && status < 300) {
        struct strout o = strout_init(body, cap);
        put_who(&o, env, id);
        STROUT_LIT(&o, " is calling ");
        size_t n = strout_end(&o);
        if (n > 0 && n + up_len < cap) {
            memcpy(body + n, up_body, up_len);
            body[(size_t)n + up_len] = '\0';
            *r = (struct resp){.status = 200, .ctype = TEXT, .body = body, .body_len = (size_t)n + up_len, .keep_alive = ka};
            return;
        }
        snprintf(body, cap, "upstream %s: answer too long to forward (%zu bytes)\n", env->callme, up_len);
        text(r, NULL, 502, body, ka);
        return;
    }
    if (res == UPSTREAM_OK)
        snprintf(body, cap, "upstream %s: answered %d\n", env->callme, status);
    else if (res == UPSTREAM_TIMEOUT)
        snprintf(body, cap, "upstream %s: no answer within the timeout\n", env->callme);
    else if (err)
        snprintf(body, cap, "upstream %s: %s: %s\n", env->callme, upstream_result_text((enum upstream_result)res),
                 strerror(-err));
    else
        snprintf(body, cap, "upstream %s: %s\n", env->callme,
                 why ? why : upstream_result_text((enum upstream_result)res));
    text(r, NULL, res == UPSTREAM_TIMEOUT ? 504 : 502, body, ka);
}

void handlers_products(const struct handler_env *env, const struct http *h, int status, const char *json, size_t len,
                       const char *why, struct resp *r, char *body, size_t cap)
{
    bool ka = handlers_keep_alive(env, h);
    if (status == 200) {
        *r = (struct resp){.status = 200, .ctype = JSON, .body = json, .body_len = len, .keep_alive = ka};
        return;
    }
    snprintf(body, cap, "%.400s\n", why ? why : "upstream failed");
    text(r, NULL, status, body, ka);
}

void handlers_fault_abort(const struct handler_env *env, const struct http *h, int status, struct resp *r)
{
    /* Envoy's body for an abort, so a client cannot tell primed's from Istio's */
    text(r, NULL, status, "fault filter abort", handlers_keep_alive(env, h));
}

void handlers_example(const struct handler_env *env, const struct http *h, int result, struct resp *r, char *body,
                      size_t cap)
{
    if (result < 0) {
        text(r, NULL, 500, "prime generation failed\n", false);
        return;
    }
    uint64_t n = atomic_fetch_add_explicit(env->example_n, 1, memory_order_relaxed) + 1;
    struct strout o = strout_init(body, cap);
    STROUT_LIT(&o, "Hello_");
    strout_uint(&o, n);
    size_t len = strout_end(&o);
    *r = (struct resp){
        .status = 200,
        .ctype = "text/plain",
        .body = body,
        .body_len = len,
        .keep_alive = handlers_keep_alive(env, h),
    };
}

void handlers_metrics(const struct handler_env *env, const struct http *h, const char *scrape, int len, bool busy,
                      struct resp *r)
{
    bool ka = handlers_keep_alive(env, h);
    if (busy) {
        /* clients that do not read their scrape hold its body: a cap keeps
         * memory bounded (conn.c: CONN_SCRAPES_MAX x 64 KiB a worker) */
        text(r, NULL, 503, "too many /metrics responses in flight on this worker; retry\n", ka);
        return;
    }
    if (len < 0) {
        text(r, NULL, 500, "metrics unavailable\n", ka);
        return;
    }
    *r = (struct resp){
        .status = 200,
        .ctype = "text/plain; version=0.0.4; charset=utf-8",
        .body = scrape,
        .body_len = (size_t)len,
        .keep_alive = ka,
    };
}

uint64_t handlers_rand(uint64_t *state)
{
    /* xorshift64*: span ids only need to be unique-ish, not secret */
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545F4914F6CDD1DULL;
}

void handlers_trace(const struct http_req *rq, uint64_t *rng, bool start, struct trace *tr, uint64_t *span)
{
    trace_from_request(rq, tr);
    if (!tr->valid && start) {
        uint64_t hi = handlers_rand(rng);
        trace_start(tr, hi, handlers_rand(rng));
    }
    *span = handlers_rand(rng);
}

void handlers_headers(const struct handler_env *env, const struct trace *tr, uint64_t span, char *extra, size_t cap)
{
    struct strout o = strout_init(extra, cap);
    if (tr->valid) {
        char tp[56];
        size_t n = (size_t)trace_format_traceparent(tr, span, tp);
        STROUT_LIT(&o, "traceparent: ");
        strout_put(&o, tp, n);
        STROUT_LIT(&o, "\r\n");
    }
    if (env->revision_hdr && env->revision_hdr[0])
        strout_str(&o, env->revision_hdr);
    strout_end(&o);
}

void handlers_access_log(struct alog *a, const char *iso_time, unsigned worker, const struct http_req *rq,
                         enum route_id route, int status, size_t bytes, uint64_t dur_ns, const struct trace *tr)
{
    alog_printf(a, "ts=%s worker=%u method=%s path=%s status=%d bytes=%zu dur_us=%" PRIu64 " trace_id=%s", iso_time,
                worker, rq->has_method ? llhttp_method_name((llhttp_method_t)rq->method) : "-",
                route_name(route), status, bytes, dur_ns / 1000,
                tr && tr->valid ? tr->trace_id : "-");
}
