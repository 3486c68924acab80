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
 */
#include "app.h"

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>

#include "clock.h"

#define CALLS_PER_CHUNK 16

/* /caller/ping's call to callme, lent from aw->calls while it runs. */
struct chain_call {
    struct upstream_call call; /* first: the client hands it back */
    struct app_req *q;
    uint64_t event_id;     /* the caller's event */
    uint64_t client_span;  /* the CLIENT span's id */
    uint64_t call_wall_us; /* when the call began (spans) */
};

static void answer(struct app_worker *aw, struct app_req *q, uint64_t event_id, int res, int err, const char *why,
                   int status, const char *up_body, size_t up_len)
{
    struct resp r;
    char body[HANDLERS_BODY_MAX];
    handlers_caller(&aw->env, &q->conn->http, event_id, res, err, why, status, up_body, up_len, &r, body,
                    sizeof(body));
    app_answer(q, &r);
}

static void call_put(struct app_worker *aw, struct app_req *q)
{
    objpool_put(&aw->calls, q->state);
    q->state = NULL;
}

/* upstream_done_fn of the call. */
static void on_call_done(struct upstream_call *call, enum upstream_result res, int err, int status,
                         const char *up_body, size_t up_len)
{
    struct app_worker *aw = call->ctx;
    struct chain_call *cc = (struct chain_call *)call;
    struct app_req *q = cc->q;
    if (aw->spans && q->tr.valid && (q->tr.flags & 1)) {
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
        events_cancel(aw, q);
    } else if (q->state) {
        upstream_cancel(&aw->up, &((struct chain_call *)q->state)->call);
        call_put(aw, q);
    }
}

static void answer_store_error(struct app_worker *aw, struct app_req *q, int err)
{
    struct resp r;
    char body[HANDLERS_BODY_MAX];
    handlers_store_error(&aw->env, &q->conn->http, err, &r, body, sizeof(body));
    app_answer(q, &r);
}

/* The caller's event is committed: now call callme. */
static void caller_stored(struct app_worker *aw, struct app_req *q, uint64_t id, int err)
{
    if (err) {
        answer_store_error(aw, q, err);
        return;
    }
    if (!aw->calls.size)
        objpool_init(&aw->calls, sizeof(struct chain_call), CALLS_PER_CHUNK);
    struct chain_call *cc = objpool_get(&aw->calls);
    if (!cc) {
        answer(aw, q, id, UPSTREAM_ERROR, -ENOMEM, NULL, 0, NULL, 0);
        return;
    }
    q->state = cc;
    cc->q = q;
    cc->event_id = id;
    struct upstream_call *call = &cc->call;
    enum upstream_result res = UPSTREAM_ERROR;
    cc->client_span = handlers_rand(&aw->rng);
    call->method = "GET";
    call->path = NULL;
    call->deadline_ms = 0;
    call->ctype = NULL;
    call->body = NULL;
    call->body_len = 0;
    trace_format_outbound(&q->tr, q->span, cc->client_span, call->extra, sizeof(call->extra));
    call->done = on_call_done;
    call->ctx = aw;
    cc->call_wall_us = aw->spans ? clock_wall_us() : 0;
    if (upstream_start(&aw->up, (unsigned)aw->callme_up, call, &res))
        return; /* answered in on_call_done(), maybe already: cc is not ours any more */
    call_put(aw, q);
    answer(aw, q, id, res, 0, NULL, 0, NULL, 0);
}

/* /caller/ping: store the caller's event; once it is committed, call callme
 * with the trace continued (a CLIENT span whose parent is this request's
 * SERVER span); answer with callme's answer. Nothing is called when the
 * event cannot be stored. */
static void caller_serve(struct app_worker *aw, struct app_req *q)
{
    conn_wait(q->conn, on_cancel, q); /* before the start: the answer may come inside */
    int err = events_store(aw, q, caller_stored);
    if (err)
        answer_store_error(aw, q, err);
}

static void callme_stored(struct app_worker *aw, struct app_req *q, uint64_t id, int err)
{
    if (err) {
        answer_store_error(aw, q, err);
        return;
    }
    struct resp r;
    char body[HANDLERS_BODY_MAX];
    handlers_callme(&aw->env, &q->conn->http, id, &r, body, sizeof(body));
    app_answer(q, &r);
}

/* /callme/ping: store an event, answer its id once it is committed. */
static void callme_serve(struct app_worker *aw, struct app_req *q)
{
    conn_wait(q->conn, on_cancel, q);
    int err = events_store(aw, q, callme_stored);
    if (err)
        answer_store_error(aw, q, err);
}

/* after the upstream client's fini: no call is out */
static void chain_fini(struct app_worker *aw)
{
    objpool_fini(&aw->calls);
}

const struct app_route callme_route = {.serve = callme_serve};
const struct app_route caller_route = {.serve = caller_serve, .fini = chain_fini};
