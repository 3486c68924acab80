/* handlers.c - what the routes' answers share (handlers.h).
 *
 * Pure: reads the request, the environment and its counters (atomics, relaxed)
 * and fills a struct resp; never touches a connection, a buffer it was not
 * given, or the kernel. Every body is bounded (HANDLERS_BODY_MAX) and nothing
 * of the request is reflected in an answer. A route's own answers are in its
 * file (route.h's table names it).
 */
#include "handlers.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "route.h"
#include "strout.h"

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

void handlers_text(struct resp *r, int status, const char *body, bool keep_alive)
{
    *r = (struct resp){
        .status = status,
        .ctype = TEXT,
        .body = body,
        .body_len = strlen(body),
        .keep_alive = keep_alive,
    };
}

void handlers_refusal(const struct handler_env *env, const struct http *h, const struct route_result *rt,
                      struct resp *r, char *body, size_t cap)
{
    bool ka = handlers_keep_alive(env, h);
    if (rt->status == 400) {
        snprintf(body, cap, "%s\n", rt->reason ? rt->reason : "bad request");
        handlers_text(r, 400, body, ka);
        return;
    }
    handlers_text(r, rt->status, rt->status == 404 ? "not found\n" : "method not allowed\n", ka);
    if (rt->status == 405)
        r->allow = route_allow((enum route_id)rt->id);
}

void handlers_options(const struct handler_env *env, const struct http *h, const struct route_result *rt,
                      struct resp *r)
{
    handlers_text(r, 200, "", handlers_keep_alive(env, h));
    r->ctype = NULL;
    if (rt->id != ROUTE_OTHER)
        r->allow = route_allow((enum route_id)rt->id);
    else
        r->allow = env->echo ? "GET, HEAD, POST, PUT, OPTIONS" : "GET, HEAD, OPTIONS";
}

size_t handlers_who(const struct handler_env *env, uint64_t id, const char *tail, char *body, size_t cap)
{
    struct strout o = strout_init(body, cap);
    strout_strn(&o, env->app, 64);
    STROUT_LIT(&o, "(id=");
    strout_uint(&o, id);
    STROUT_LIT(&o, "): ");
    strout_strn(&o, env->pod, 128);
    STROUT_LIT(&o, " in ");
    strout_strn(&o, env->ns, 64);
    strout_str(&o, tail);
    return strout_end(&o);
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
    if (f == STORE_FAULT_TIMEOUT || f == STORE_FAULT_NOT_SENT)
        snprintf(what, sizeof(what), " (%u ms)", env->db_timeout_ms);
    snprintf(body, cap, "event store %.200s: %s%s; %s; retry\n", env->store_name, store_fault_words(f), what,
             store_fault_unconfirmed(f) ? "not confirmed: the event may still be stored" : "nothing was stored");
    handlers_text(r, 503, body, handlers_keep_alive(env, h));
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
    handlers_text(r, status, body, ka);
}

void handlers_fault_abort(const struct handler_env *env, const struct http *h, int status, struct resp *r)
{
    /* Envoy's body for an abort, so a client cannot tell primed's from Istio's */
    handlers_text(r, status, "fault filter abort", handlers_keep_alive(env, h));
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
