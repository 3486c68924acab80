/* answer.c - the words every route's answer shares (answer.h).
 *
 * Pure: reads the request, the environment and its counters (atomics, relaxed)
 * and fills a struct resp; never touches a connection, a buffer it was not
 * given, or the kernel. Every body is bounded (ANSWER_BODY_MAX) and nothing
 * of the request is reflected in an answer. A route's own answers are in its
 * file (route.h's table names it).
 */
#include "answer.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "route.h"
#include "strout.h"

static const char TEXT[] = "text/plain; charset=utf-8";

static bool draining(const struct answer_env *env)
{
    return atomic_load_explicit(env->draining, memory_order_relaxed) != 0;
}

bool answer_keep_alive(const struct answer_env *env, const struct http *h)
{
    /* the server-wide flag: an answer written after the signal but before
     * this worker's loop noticed it still says close */
    return h->req.keep_alive && !draining(env) && !h->upgrade;
}

void answer_text(struct resp *r, int status, const char *body, bool keep_alive)
{
    *r = (struct resp){
        .status = status,
        .ctype = TEXT,
        .body = body,
        .body_len = strlen(body),
        .keep_alive = keep_alive,
    };
}

void answer_refusal(const struct answer_env *env, const struct http *h, const struct route_result *rt,
                      struct resp *r, char *body, size_t cap)
{
    bool ka = answer_keep_alive(env, h);
    if (rt->status == 400) {
        snprintf(body, cap, "%s\n", rt->reason ? rt->reason : "bad request");
        answer_text(r, 400, body, ka);
        return;
    }
    answer_text(r, rt->status, rt->status == 404 ? "not found\n" : "method not allowed\n", ka);
    if (rt->status == 405)
        r->allow = route_allow((enum route_id)rt->id);
}

void answer_options(const struct answer_env *env, const struct http *h, const struct route_result *rt,
                      struct resp *r)
{
    answer_text(r, 200, "", answer_keep_alive(env, h));
    r->ctype = NULL;
    if (rt->id != ROUTE_OTHER)
        r->allow = route_allow((enum route_id)rt->id);
    else
        r->allow = env->echo ? "GET, HEAD, POST, PUT, OPTIONS" : "GET, HEAD, OPTIONS";
}

size_t answer_who(const struct answer_env *env, uint64_t id, const char *tail, char *body, size_t cap)
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

void answer_headers(const struct answer_env *env, const struct trace *tr, uint64_t span, char *extra, size_t cap)
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

