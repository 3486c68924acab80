/* chain.c - seed 000's chain: GET /callme/ping stores an event and answers
 * its id; GET /caller/ping stores the caller's event, then calls callme with
 * the trace continued and answers with callme's answer.
 *
 * Answered means stored: each waits (conn_wait) until its event's
 * transaction has committed (events.c), and says 503, nothing stored, when
 * it cannot be. The call runs on the worker's upstream client
 * (client/upstream.h) and is answered from its done callback, on the same
 * worker. The call's record (an upstream call is some 400 bytes) is lent
 * from the worker's pool for the call's life only, so that an idle
 * connection's request record stays small.
 *
 * owns: the two routes' answers, the caller's calls (a pool of the worker's:
 * app_worker.route_state[ROUTE_CALLER]). never: the store (events.h) or the
 * upstream client's connections (upstream.h).
 */
#include "app.h"

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "db.h"
#include "events.h"
#include "objpool.h"
#include "trace_ids.h"
#include "upstreams.h"
#include "zipkin.h"

#define CALLS_PER_CHUNK 16

/* /caller/ping's call to callme, lent from the worker's pool (calls_of) while it runs. */
struct chain_call {
    struct upstream_call call; /* first: the client hands it back */
    struct app_req *q;
    uint64_t event_id;     /* the caller's event */
    uint64_t client_span;  /* the CLIENT span's id */
    uint64_t call_wall_us; /* when the call began (spans) */
};

static struct objpool *calls_of(struct app_worker *aw)
{
    return aw->route_state[ROUTE_CALLER];
}

/* /caller/ping's answer once its call to callme is over: id is the event the
 * caller stored (committed before the call began); res (an enum
 * upstream_result), err (-errno or 0) and why (a static detail or NULL) say
 * how the call ended, status and up_body what callme answered. 200 with the
 * chain's body, else 502 or 504 naming the upstream; an answer too long to
 * forward is refused, never cut. Pure. */
static void caller_body(const struct answer_env *env, const struct http *h, uint64_t id, int res, int err,
                        const char *why, int status, const char *up_body, size_t up_len, struct resp *r, char *body,
                        size_t cap)
{
    bool ka = answer_keep_alive(env, h);
    if (res == UPSTREAM_OK && status >= 200 && status < 300) {
        size_t n = answer_who(env, id, " is calling ", body, cap);
        if (n > 0 && n + up_len < cap) {
            memcpy(body + n, up_body, up_len);
            body[n + up_len] = '\0';
            answer_text(r, 200, body, ka);
            r->body_len = n + up_len; /* callme's body may hold a NUL */
            return;
        }
        snprintf(body, cap, "upstream %s: answer too long to forward (%zu bytes)\n", env->callme, up_len);
        answer_text(r, 502, body, ka);
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
    answer_text(r, res == UPSTREAM_TIMEOUT ? 504 : 502, body, ka);
}

static void answer(struct app_worker *aw, struct app_req *q, uint64_t event_id, int res, int err, const char *why,
                   int status, const char *up_body, size_t up_len)
{
    struct resp r;
    char body[ANSWER_BODY_MAX];
    caller_body(&aw->env, &q->conn->http, event_id, res, err, why, status, up_body, up_len, &r, body, sizeof(body));
    app_answer(q, &r);
}

static void call_put(struct app_worker *aw, struct app_req *q)
{
    objpool_put(calls_of(aw), q->state);
    q->state = NULL;
}

/* upstream_done_fn of the call. */
static void on_call_done(struct upstream_call *call, enum upstream_result res, int err, int status,
                         const char *up_body, size_t up_len)
{
    struct app_worker *aw = call->ctx;
    struct chain_call *cc = (struct chain_call *)call;
    struct app_req *q = cc->q;
    if (aw->span && q->tr.valid && (q->tr.flags & 1)) {
        char parent[17];
        snprintf(parent, sizeof(parent), "%016" PRIx64, q->span ? q->span : 1);
        uint64_t dur = (clock_mono_ns() - call->start_ns) / 1000;
        app_span(aw, q, ZIPKIN_CLIENT, cc->client_span, parent, cc->call_wall_us, dur,
                 res == UPSTREAM_OK ? status : 0, res == UPSTREAM_OK ? NULL : upstream_result_text(res));
    }
    uint64_t event_id = cc->event_id;
    const char *why = call->why; /* static */
    call_put(aw, q);
    answer(aw, q, event_id, res, err, why, status, up_body, up_len);
}

/* conn_cancel_fn: the client went away; the call (or the event, until it
 * is committed) is forgotten. */
static void on_cancel(struct conn *c, void *arg)
{
    struct app_req *q = arg;
    struct app_worker *aw = app_of(c);
    if (q->event) {
        events_cancel(&q->event);
    } else if (q->state) {
        upstream_cancel(&upstreams_of(aw)->client, &((struct chain_call *)q->state)->call);
        call_put(aw, q);
    }
}

static void answer_store_error(struct app_worker *aw, struct app_req *q, int err)
{
    struct resp r;
    char body[ANSWER_BODY_MAX];
    db_refusal(&aw->env, &q->conn->http, err, &r, body, sizeof(body));
    app_answer(q, &r);
}

/* Both routes begin so: q waits (conn_wait), its event goes to the store,
 * and then runs once it is committed; a store that fails is answered 503,
 * and then never runs. */
static void store_event(struct app_worker *aw, struct app_req *q, events_done_fn *then)
{
    conn_wait(q->conn, on_cancel, q); /* before the start: the answer may come inside */
    int err = events_store(events_of(aw), &q->event, then, q);
    if (err)
        answer_store_error(aw, q, err);
}

/* The request of an events_done_fn's ctx whose event is committed, or NULL
 * once a failed one is answered (503). */
static struct app_req *stored(void *ctx, int err)
{
    struct app_req *q = ctx;
    if (!err)
        return q;
    answer_store_error(app_of(q->conn), q, err);
    return NULL;
}

/* The caller's event is committed: now call callme (events_done_fn). */
static void caller_stored(void *ctx, uint64_t id, int err)
{
    struct app_req *q = stored(ctx, err);
    if (!q)
        return;
    struct app_worker *aw = app_of(q->conn);
    struct chain_call *cc = objpool_get(calls_of(aw));
    if (!cc) {
        answer(aw, q, id, UPSTREAM_ERROR, -ENOMEM, NULL, 0, NULL, 0);
        return;
    }
    q->state = cc;
    cc->q = q;
    cc->event_id = id;
    struct upstream_call *call = &cc->call;
    enum upstream_result res = UPSTREAM_ERROR;
    cc->client_span = rng_next(&aw->rng);
    call->method = "GET";
    call->path = NULL;
    call->deadline_ms = 0;
    call->ctype = NULL;
    call->body = NULL;
    call->body_len = 0;
    trace_format_outbound(&q->tr, q->span, cc->client_span, call->extra, sizeof(call->extra));
    call->done = on_call_done;
    call->ctx = aw;
    cc->call_wall_us = aw->span ? clock_wall_us() : 0;
    struct upstreams *ups = upstreams_of(aw);
    if (upstream_start(&ups->client, (unsigned)ups->callme, call, &res))
        return; /* answered in on_call_done(), maybe already: cc is not ours any more */
    call_put(aw, q);
    answer(aw, q, id, res, 0, NULL, 0, NULL, 0);
}

/* 404 without --callme-url; else serve calls. */
static enum answer_action caller_answer(const struct answer_env *env, const struct http *h,
                                         const struct route_result *rt, struct resp *r, char *body, size_t cap)
{
    if (env->callme)
        return ANSWER_LATER;
    answer_text(r, 404, "not found: /caller/ping needs --callme-url (CALLME_URL)\n", answer_keep_alive(env, h));
    return ANSWER_NOW;
}

/* /caller/ping: store the caller's event; once it is committed, call callme
 * with the trace continued (a CLIENT span whose parent is this request's
 * SERVER span); answer with callme's answer. Nothing is called when the
 * event cannot be stored. */
static void caller_serve(struct app_worker *aw, struct app_req *q)
{
    store_event(aw, q, caller_stored);
}

/* /callme/ping's answer once its event id is committed: "APP(id=ID): POD in NS". Pure. */
static void callme_body(const struct answer_env *env, const struct http *h, uint64_t id, struct resp *r, char *body,
                        size_t cap)
{
    answer_who(env, id, "\n", body, cap);
    answer_text(r, 200, body, answer_keep_alive(env, h));
}

/* events_done_fn of /callme/ping. */
static void callme_stored(void *ctx, uint64_t id, int err)
{
    struct app_req *q = stored(ctx, err);
    if (!q)
        return;
    struct resp r;
    char body[ANSWER_BODY_MAX];
    callme_body(&app_of(q->conn)->env, &q->conn->http, id, &r, body, sizeof(body));
    app_answer(q, &r);
}

/* /callme/ping: store an event, answer its id once it is committed. */
static void callme_serve(struct app_worker *aw, struct app_req *q)
{
    store_event(aw, q, callme_stored);
}

/* The caller's calls' pool (it allocates nothing until the first call). */
static int chain_init(struct app_worker *aw)
{
    struct objpool *calls = calloc(1, sizeof(*calls));
    if (!calls)
        return -1;
    objpool_init(calls, sizeof(struct chain_call), CALLS_PER_CHUNK);
    aw->route_state[ROUTE_CALLER] = calls;
    return 0;
}

/* after the upstream client's fini: no call is out */
static void chain_fini(struct app_worker *aw)
{
    struct objpool *calls = calls_of(aw);
    if (calls) {
        objpool_fini(calls);
        free(calls);
        aw->route_state[ROUTE_CALLER] = NULL;
    }
}

const struct app_route callme_route = {.serve = callme_serve};
const struct app_route caller_route = {.answer = caller_answer, .serve = caller_serve, .init = chain_init,
                                       .fini = chain_fini};
