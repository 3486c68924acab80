/* conn.c - the connection state machine (conn.h): slots, buffers, parse and
 * answer, flush, rearm, lingering close, timers.
 *
 * Invariants: a slot is released only when no receive, send or task of it is
 * in flight, so a completion or a task result always finds its connection (or
 * is dropped by its generation); responses leave in request order (the parser
 * stops at each message boundary while a request is served); no allocation on
 * the hot path (/metrics' body and /api/products' fan-out are the cold
 * mallocs). Never a direct syscall: everything goes through io.h.
 */
#include "conn.h"

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "route.h"

enum { TIMER_IDLE = 1, TIMER_HEADER, TIMER_LINGER, TIMER_HELD };

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t conn_tag(const struct conn *c)
{
    return (uint64_t)c->slot | ((uint64_t)(c->gen & 0xffffffu) << 32);
}

struct conn *conn_of(struct conn_pool *p, uint64_t tag)
{
    uint32_t slot = (uint32_t)tag;
    if (slot >= p->fresh)
        return NULL;
    struct conn *c = &p->conns[slot];
    if (c->fd < 0 || (c->gen & 0xffffffu) != (uint32_t)(tag >> 32))
        return NULL;
    return c;
}

static bool gone(const struct conn *c)
{
    return c->state == CONN_DEAD;
}

static void idle_timer(struct conn_pool *p, struct conn *c)
{
    timer_add(&p->idle, &c->timer, p->now_ms + p->cfg->idle_timeout_ms);
}

/* Removes c from the paused list. Cold: backpressure only. */
static void paused_unlink(struct conn_pool *p, struct conn *c)
{
    for (struct conn **pp = &p->paused; *pp; pp = &(*pp)->pnext) {
        if (*pp == c) {
            *pp = c->pnext;
            c->pnext = NULL;
            return;
        }
    }
}

/* Frees c's heap body (/metrics, /api/products), once sent or when c closes. */
static void ext_free(struct conn_pool *p, struct conn *c)
{
    if (!c->ext)
        return;
    if (c->ext_kind != CONN_EXT_LASTING)
        free(c->ext);
    if (c->ext_kind == CONN_EXT_SCRAPE)
        p->ext_live--;
    c->ext = NULL;
}

/* Gives the slot back once nothing of c is in flight (else: called again
 * when the last of them completes). c stays CONN_DEAD: a caller that checks
 * after a call that may have released the slot reads "dead", never a
 * cleared slot; only conn_start() (from the loop) reuses it. */
static void conn_release(struct conn_pool *p, struct conn *c)
{
    if ((c->flags & (CONN_F_RECV | CONN_F_SEND)) || c->job.where == DISPATCH_JOB_QUEUED)
        return;
    timer_remove(&c->timer);
    if (c->flags & CONN_F_PAUSED)
        paused_unlink(p, c);
    io_conn_close(p->io, c->fd);
    io_close(p->io, c->fd);
    ext_free(p, c);
    c->fd = -1;
    c->state = CONN_DEAD;
    c->flags = 0;
    c->gen++;
    c->free_next = p->free_conns;
    p->free_conns = c;
    p->nopen--;
    metrics_gauge_add(&p->metrics->conns_open, -1);
}

/* Closes now: in-flight operations are cut short by shutdown() and the slot
 * is released when they complete. */
static void conn_abort(struct conn_pool *p, struct conn *c)
{
    if (!gone(c)) {
        bool task = c->state == CONN_TASK;
        bool call = c->state == CONN_CALL;
        bool held = c->state == CONN_HELD;
        c->state = CONN_DEAD;
        if (task && dispatch_cancel(p->dispatch, &c->job))
            metrics_gauge_add(&p->metrics->in_flight, -1); /* never answered: the client went away */
        if (call) {
            if (c->fan)
                gateway_cancel(c->fan); /* clears c->fan */
            else
                upstream_cancel(p->up, &c->call);
            metrics_gauge_add(&p->metrics->in_flight, -1);
        }
        if (held) {
            timer_remove(&c->timer);
            metrics_gauge_add(&p->metrics->in_flight, -1);
        }
        if (c->flags & (CONN_F_RECV | CONN_F_SEND))
            io_shutdown(p->io, c->fd, SHUT_RDWR);
    }
    conn_release(p, c);
}

static void arm_recv(struct conn_pool *p, struct conn *c, char *buf, size_t len, unsigned hints)
{
    if (io_recv(p->io, c->fd, conn_tag(c), buf, len, hints) == 0)
        c->flags |= CONN_F_RECV;
    else
        conn_abort(p, c);
}

/* After the last response of a connection: shut our side, then read and
 * drop what the client still sends until it closes (or CONN_LINGER_MS), so
 * that closing with unread data does not turn into a reset that destroys the
 * response in the client's receive queue. */
static void conn_linger(struct conn_pool *p, struct conn *c)
{
    c->state = CONN_LINGER;
    if (c->flags & CONN_F_EOF) {
        conn_abort(p, c);
        return;
    }
    io_shutdown(p->io, c->fd, SHUT_WR);
    timer_add(&p->linger, &c->timer, p->now_ms + CONN_LINGER_MS);
    if (!(c->flags & CONN_F_RECV))
        arm_recv(p, c, c->rbuf, p->cfg->max_header, 0);
}

static void conn_flush(struct conn_pool *p, struct conn *c)
{
    if ((c->flags & CONN_F_SEND) || gone(c))
        return;
    int n = 0;
    if (c->woff < c->wlen)
        c->iov[n++] = (struct iovec){c->wbuf + c->woff, c->wlen - c->woff};
    if (c->ext && c->ext_off < c->ext_len)
        c->iov[n++] = (struct iovec){c->ext + c->ext_off, c->ext_len - c->ext_off};
    if (n == 0)
        return;
    memset(&c->msg, 0, sizeof(c->msg));
    c->msg.msg_iov = c->iov;
    c->msg.msg_iovlen = (size_t)n;
    if (io_send(p->io, c->fd, conn_tag(c), &c->msg) == 0)
        c->flags |= CONN_F_SEND;
    else
        conn_abort(p, c);
}

static uint64_t wall_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* Hands one span of c's request to the exporter (strings: static or the
 * worker's, as spans.h asks). */
static void record_span(struct conn_pool *p, struct conn *c, enum zipkin_kind kind, uint64_t id, const char *parent,
                        uint64_t start_us, uint64_t dur_us, int status, const char *error)
{
    const struct http_req *rq = &c->http.req;
    struct zipkin_span z = {
        .kind = kind,
        .name = route_name((enum route_id)rq->route.id),
        .service = p->env->app,
        .remote = kind == ZIPKIN_CLIENT ? p->env->callme : NULL,
        .timestamp_us = start_us,
        .duration_us = dur_us ? dur_us : 1,
        .method = rq->has_method ? llhttp_method_name((llhttp_method_t)rq->method) : NULL,
        .path = route_name((enum route_id)rq->route.id),
        .status = status,
        .error = error,
    };
    snprintf(z.trace_id, sizeof(z.trace_id), "%s", c->tr.trace_id);
    snprintf(z.id, sizeof(z.id), "%016" PRIx64, id ? id : 1);
    snprintf(z.parent_id, sizeof(z.parent_id), "%s", parent);
    spans_add(p->spans, &z);
}

/* Queues one response in c's buffer (body from r, or from ext_body when not
 * NULL, of kind: c owns it unless CONN_EXT_LASTING), records metrics and the
 * access log line. */
static void respond_ext(struct conn_pool *p, struct conn *c, struct resp *r, char *ext_body, enum conn_ext kind)
{
    struct http_req *rq = &c->http.req;
    char extra[RESP_EXTRA_MAX];
    handlers_headers(p->env, &c->tr, c->span, extra, sizeof(extra));
    r->extra = extra[0] ? extra : NULL;
    r->head = rq->head;

    bool inline_body = ext_body == NULL;
    size_t n = resp_format(c->wbuf + c->wlen, CONN_WBUF_SIZE - c->wlen, r, p->date, inline_body);
    if (n == 0) {
        /* cannot happen: conn_process() keeps RESP_MAX free; refuse loudly */
        if (kind != CONN_EXT_LASTING)
            free(ext_body);
        log_msg("worker %u: response for status %d does not fit; closing", p->id, r->status);
        metrics_gauge_add(&p->metrics->in_flight, -1); /* the request ends here, unanswered */
        conn_abort(p, c);
        return;
    }
    c->wlen += (uint32_t)n;
    if (ext_body && !r->head) {
        c->ext = ext_body;
        c->ext_kind = (uint8_t)kind;
        if (kind == CONN_EXT_SCRAPE)
            p->ext_live++;
        c->ext_len = r->body_len;
        c->ext_off = 0;
    } else if (kind != CONN_EXT_LASTING) {
        free(ext_body);
    }
    if (!r->keep_alive && !gone(c))
        c->state = CONN_FINAL; /* a dead connection stays dead (a 408 at its header deadline) */

    uint64_t dur = mono_ns() - c->req_start_ns;
    int si = metrics_status_index(r->status);
    uint8_t route = rq->route.id;
    if (si >= 0)
        metrics_add(&p->metrics->requests[route][si], 1);
    metrics_observe(&p->metrics->req_seconds[route], dur);
    metrics_gauge_add(&p->metrics->in_flight, -1);
    if (p->alog)
        handlers_access_log(p->alog, p->iso_time, p->id, rq, r->status, r->head ? 0 : r->body_len, dur, &c->tr);
    if (p->spans && (c->tr.flags & 1) && c->tr.valid && route != ROUTE_HEALTHZ && route != ROUTE_READYZ &&
        route != ROUTE_METRICS)
        record_span(p, c, ZIPKIN_SERVER, c->span, c->tr.parent_id, c->req_wall_us, dur / 1000, r->status, NULL);
}

static void respond(struct conn_pool *p, struct conn *c, struct resp *r, char *ext_body)
{
    respond_ext(p, c, r, ext_body, CONN_EXT_HEAP);
}

static void respond_example(struct conn_pool *p, struct conn *c, int result)
{
    struct resp r;
    char body[HANDLERS_BODY_MAX];
    handlers_example(p->env, &c->http, result, &r, body, sizeof(body));
    respond(p, c, &r, NULL);
}

static void respond_metrics(struct conn_pool *p, struct conn *c)
{
    struct resp r;
    char *body = NULL;
    int len = 0;
    bool busy = p->ext_live >= CONN_SCRAPES_MAX;
    if (!busy)
        len = p->scrape(p->scrape_ctx, &body); /* cold: a scrape, not a request */
    handlers_metrics(p->env, &c->http, body, len, busy, &r);
    respond_ext(p, c, &r, r.status == 200 ? body : NULL, CONN_EXT_SCRAPE);
    if (r.status != 200)
        free(body);
}

/* A request starts: its clock, its in-flight count, its trace context (a new
 * trace for the chain's routes, which call or are called). */
static void begin_request(struct conn_pool *p, struct conn *c, bool start_trace)
{
    c->req_start_ns = mono_ns();
    c->req_wall_us = p->spans ? wall_us() : 0;
    metrics_gauge_add(&p->metrics->in_flight, 1);
    handlers_trace(&c->http.req, &p->rng, start_trace, &c->tr, &c->span);
}

static void conn_process(struct conn_pool *p, struct conn *c);

/* upstream_done_fn of /caller/ping's call. */
static void on_call_done(struct upstream_call *call, enum upstream_result res, int err, int status,
                         const char *up_body, size_t up_len)
{
    struct conn_pool *p = call->ctx;
    struct conn *c = (struct conn *)((char *)call - offsetof(struct conn, call));
    c->state = CONN_READING;
    if (p->spans && c->tr.valid && (c->tr.flags & 1)) {
        char parent[17];
        snprintf(parent, sizeof(parent), "%016" PRIx64, c->span ? c->span : 1);
        uint64_t dur = (mono_ns() - call->start_ns) / 1000;
        record_span(p, c, ZIPKIN_CLIENT, c->client_span, parent,
                    c->call_wall_us, dur, res == UPSTREAM_OK ? status : 0,
                    res == UPSTREAM_OK ? NULL : upstream_result_text(res));
    }
    struct resp r;
    char body[HANDLERS_BODY_MAX];
    handlers_caller(p->env, &c->http, c->event_id, res, err, call->why, status, up_body, up_len, &r, body,
                    sizeof(body));
    respond(p, c, &r, NULL);
    if (!c->calling)
        conn_process(p, c); /* else the conn_process() that started the call goes on */
}

/* /caller/ping: store the caller's event, then call callme with the trace
 * continued (a CLIENT span whose parent is this request's SERVER span). */
static void start_call(struct conn_pool *p, struct conn *c)
{
    c->event_id = handlers_event(p->env);
    struct upstream_call *call = &c->call;
    enum upstream_result res = UPSTREAM_ERROR;
    if (c->event_id) {
        c->client_span = handlers_rand(&p->rng);
        call->method = "GET";
        call->ctype = NULL;
        call->body = NULL;
        call->body_len = 0;
        trace_format_outbound(&c->tr, c->span, c->client_span, call->extra, sizeof(call->extra));
        call->done = on_call_done;
        call->ctx = p;
        c->call_wall_us = p->spans ? wall_us() : 0;
        c->state = CONN_CALL;
        c->calling = true;
        bool started = upstream_start(p->up, (unsigned)p->callme_up, call, &res);
        c->calling = false;
        if (started)
            return; /* answered in on_call_done(), maybe already */
        c->state = CONN_READING;
    }
    struct resp r;
    char body[HANDLERS_BODY_MAX];
    handlers_caller(p->env, &c->http, c->event_id, res, 0, NULL, 0, NULL, 0, &r, body, sizeof(body));
    respond(p, c, &r, NULL);
}

/* gateway_done_fn of /api/products' fan-out. */
static void on_fanout_done(void *ctx, int status, char *json, size_t len, const char *why)
{
    struct conn *c = ctx;
    struct conn_pool *p = c->call.ctx;
    c->fan = NULL;
    c->state = CONN_READING;
    struct resp r;
    char body[HANDLERS_BODY_MAX];
    handlers_products(p->env, &c->http, status, json, len, why, &r, body, sizeof(body));
    respond(p, c, &r, status == 200 ? json : NULL);
    if (!c->calling)
        conn_process(p, c);
}

/* /api/products: the fan-out on this worker's ring, the trace continued
 * into every call. */
static void start_fanout(struct conn_pool *p, struct conn *c)
{
    uint8_t mode = c->http.req.route.fanout;
    bool sequential = mode == ROUTE_FANOUT_DEFAULT ? p->cfg->fanout_sequential : mode == ROUTE_FANOUT_SEQUENTIAL;
    c->call.ctx = p; /* on_fanout_done's way back to the pool */
    c->state = CONN_CALL;
    c->calling = true;
    bool started =
        gateway_start(p->gw, sequential, &c->tr, c->span, handlers_rand(&p->rng), on_fanout_done, c, &c->fan);
    c->calling = false;
    if (started)
        return; /* answered in on_fanout_done(), maybe already */
    c->state = CONN_READING;
    c->fan = NULL;
    struct resp r;
    char body[HANDLERS_BODY_MAX];
    handlers_products(p->env, &c->http, 503, NULL, 0, "out of memory for the fan-out; retry", &r, body,
                      sizeof(body));
    respond(p, c, &r, NULL);
}

/* Serves a routed request (held first by --fault-delay, or not). */
static void serve_request(struct conn_pool *p, struct conn *c)
{
    struct resp r;
    char body[HANDLERS_BODY_MAX];
    int result;
    switch (handlers_route(p->env, &c->http, &r, body, sizeof(body))) {
    case HANDLER_RESPOND:
        respond(p, c, &r, NULL);
        break;
    case HANDLER_LASTING:
        respond_ext(p, c, &r, (char *)r.body, CONN_EXT_LASTING);
        break;
    case HANDLER_FANOUT:
        start_fanout(p, c);
        break;
    case HANDLER_METRICS:
        respond_metrics(p, c);
        break;
    case HANDLER_PRIME:
        if (dispatch_submit(p->dispatch, &c->job, conn_tag(c), c->http.req.route.bits, &result))
            respond_example(p, c, result);
        else
            c->state = CONN_TASK; /* answered in on_task_done() */
        break;
    case HANDLER_CALL:
        start_call(p, c);
        break;
    }
}

static void respond_fault_abort(struct conn_pool *p, struct conn *c, int status)
{
    struct resp r;
    metrics_add(&p->metrics->faults[METRICS_FAULT_ABORT], 1);
    handlers_fault_abort(p->env, &c->http, status, &r);
    respond(p, c, &r, NULL);
}

static void handle_request(struct conn_pool *p, struct conn *c)
{
    uint8_t route = c->http.req.route.id;
    begin_request(p, c, route == ROUTE_CALLER || route == ROUTE_CALLME || route == ROUTE_PRODUCTS);
    if (c->http.req.route.status == 400)
        metrics_add(&p->metrics->bad[BAD_QUERY], 1);
    if (p->fault) {
        unsigned delay;
        int abort_status;
        uint64_t r1 = handlers_rand(&p->rng), r2 = handlers_rand(&p->rng);
        fault_draw(p->fault, route, c->http.req.fault_path, r1, r2, &delay, &abort_status);
        if (delay) {
            /* held on a timer of this ring: the worker serves the others */
            metrics_add(&p->metrics->faults[METRICS_FAULT_DELAY], 1);
            c->fault_abort = abort_status;
            c->state = CONN_HELD;
            /* + 1: the clock is in whole milliseconds, floored, so a deadline
             * of now + delay could fire up to 1 ms early; a held request is
             * never answered before its delay */
            timer_add(&p->held, &c->timer, p->now_ms + delay + 1);
            return;
        }
        if (abort_status) {
            respond_fault_abort(p, c, abort_status);
            return;
        }
    }
    serve_request(p, c);
}

static void respond_refusal(struct conn_pool *p, struct conn *c, int status, enum bad_reason why)
{
    struct resp r;
    metrics_add(&p->metrics->bad[why], 1);
    begin_request(p, c, false);
    handlers_refusal(&c->http.req, status, why, &r);
    respond(p, c, &r, NULL);
}

static void conn_rearm(struct conn_pool *p, struct conn *c);

/* Parses and answers what is in the read buffer, as far as it can go. */
static void conn_process(struct conn_pool *p, struct conn *c)
{
    while (c->state == CONN_READING) {
        if (c->ext || CONN_WBUF_SIZE - c->wlen < RESP_MAX)
            break; /* resumes when the send completes */
        if (c->rpos >= c->rlen)
            break;
        size_t pos = c->rpos;
        enum http_status st = http_feed(&c->http, c->rbuf, &pos, c->rlen);
        c->rpos = (uint32_t)pos;
        if (st == HTTP_MSG) {
            timer_remove(&c->timer); /* the header timer was for this request */
            c->msg_start = c->rpos;
            handle_request(p, c);
            continue;
        }
        if (st == HTTP_ERROR)
            respond_refusal(p, c, c->http.err_status, c->http.bad);
        break;
    }
    if (gone(c)) {
        conn_release(p, c);
        return;
    }
    conn_flush(p, c);
    conn_rearm(p, c);
}

/* Arms what c waits for next (a receive, unless paused or full) and the one
 * timer that applies to where it is. */
static void conn_rearm(struct conn_pool *p, struct conn *c)
{
    if (gone(c) || c->state == CONN_LINGER)
        return;
    bool unsent = (c->flags & CONN_F_SEND) || c->woff < c->wlen || c->ext;
    bool busy = c->state == CONN_TASK || c->state == CONN_CALL || c->state == CONN_HELD;

    if (c->state == CONN_FINAL) {
        if (!unsent)
            conn_linger(p, c);
        else
            idle_timer(p, c);
        return;
    }
    if (c->flags & CONN_F_EOF) {
        /* the client is done sending: answer what was complete, then close */
        if (!unsent && !busy)
            conn_abort(p, c);
        return;
    }

    if (!(c->flags & CONN_F_RECV)) {
        /* Compact: keep the current message's unparsed head (the URL is an
         * offset into it); everything before is answered or dropped body. */
        http_compact(&c->http, c->rbuf, &c->rlen, &c->rpos, &c->msg_start);
        bool throttled = dispatch_throttled(p->dispatch);
        if (c->rlen == p->cfg->max_header) {
            if (c->http.in_message && !c->http.head_done && c->rpos == c->rlen) {
                respond_refusal(p, c, 431, BAD_HEADER_TOO_LARGE);
                conn_flush(p, c);
                idle_timer(p, c);
                return;
            }
            /* full of pipelined requests: read on once they are answered */
        } else if (throttled && !(c->flags & CONN_F_PAUSED)) {
            c->flags |= CONN_F_PAUSED;
            c->pnext = p->paused;
            p->paused = c;
        } else if (!throttled) {
            /* behind a response (unsent), the client is rarely sending yet */
            arm_recv(p, c, c->rbuf + c->rlen, p->cfg->max_header - c->rlen, unsent ? IO_RECV_LATER : 0);
            if (gone(c))
                return;
        }
    }

    if (busy || (!unsent && (c->flags & CONN_F_PAUSED))) {
        /* the server is working, or holding the client back (backpressure):
         * no client timer runs; overload is latency, never an abort. A held
         * request's timer is its --fault-delay. */
        if (c->state != CONN_HELD)
            timer_remove(&c->timer);
    } else if (unsent) {
        idle_timer(p, c);
    } else if (c->http.in_message && c->http.head_done) {
        /* a body: it may take long, but must make progress; each receive
         * restarts the idle timer (the header timer is for the head alone) */
        idle_timer(p, c);
    } else if (c->http.in_message) {
        if (!timer_on(&c->timer, &p->header))
            timer_add(&p->header, &c->timer, p->now_ms + p->cfg->header_timeout_ms);
    } else {
        /* draining: a connection between requests gets a short grace to send
         * the request it may have in flight, then is closed */
        unsigned idle = p->cfg->idle_timeout_ms;
        if (p->drain_seen && idle > CONN_DRAIN_IDLE_MS)
            idle = CONN_DRAIN_IDLE_MS;
        timer_add(&p->idle, &c->timer, p->now_ms + idle);
    }
}

/* ---- the pool ------------------------------------------------------------ */

bool conn_pool_has_slot(const struct conn_pool *p)
{
    return p->free_conns || p->fresh < p->nslots;
}

/* A released slot, else a never-used one. Slots are set up on first use so
 * that start-up touches none of the table or the arena (start-up time and
 * idle RSS do not grow with --max-conns). */
static struct conn *slot_take(struct conn_pool *p)
{
    struct conn *c = p->free_conns;
    if (c) {
        p->free_conns = c->free_next;
        return c;
    }
    uint32_t i = p->fresh++;
    size_t per = (size_t)p->cfg->max_header + CONN_WBUF_SIZE;
    c = &p->conns[i];
    c->slot = i;
    c->rbuf = p->arena + (size_t)i * per;
    c->wbuf = c->rbuf + p->cfg->max_header;
    return c;
}

void conn_start(struct conn_pool *p, int fd)
{
    struct conn *c = slot_take(p);
    c->fd = fd;
    c->state = CONN_READING;
    c->flags = 0;
    timer_init(&c->timer);
    c->rlen = c->rpos = c->msg_start = 0;
    c->wlen = c->woff = 0;
    c->ext = NULL;
    c->ext_len = c->ext_off = 0;
    c->fan = NULL;
    c->fault_abort = 0;
    c->free_next = c->pnext = NULL;
    memset(&c->job, 0, sizeof(c->job));
    http_init(&c->http, &p->limits);
    p->nopen++;
    metrics_gauge_add(&p->metrics->conns_open, 1);
    metrics_add(&p->metrics->accepts, 1);
    if (io_conn_open(p->io, fd) < 0) {
        conn_abort(p, c);
        return;
    }
    conn_rearm(p, c);
}

void conn_on_recv(struct conn_pool *p, uint64_t tag, int res)
{
    struct conn *c = conn_of(p, tag);
    if (!c)
        return;
    c->flags &= (uint8_t)~CONN_F_RECV;
    if (gone(c)) {
        conn_release(p, c);
        return;
    }
    if (c->state == CONN_LINGER) {
        if (res <= 0)
            conn_abort(p, c);
        else
            arm_recv(p, c, c->rbuf, p->cfg->max_header, 0);
        return;
    }
    if (res == 0) {
        c->flags |= CONN_F_EOF;
    } else if (res < 0) {
        if (res == -EAGAIN || res == -EINTR) {
            conn_rearm(p, c);
            return;
        }
        conn_abort(p, c);
        return;
    } else {
        c->rlen += (uint32_t)res;
    }
    conn_process(p, c);
}

void conn_on_send(struct conn_pool *p, uint64_t tag, int res)
{
    struct conn *c = conn_of(p, tag);
    if (!c)
        return;
    c->flags &= (uint8_t)~CONN_F_SEND;
    if (gone(c)) {
        conn_release(p, c);
        return;
    }
    if (res < 0) {
        if (res == -EAGAIN || res == -EINTR) {
            conn_flush(p, c);
            return;
        }
        conn_abort(p, c);
        return;
    }
    size_t n = (size_t)res;
    size_t head = c->wlen - c->woff;
    if (n <= head) {
        c->woff += (uint32_t)n;
    } else {
        c->woff = c->wlen;
        c->ext_off += n - head;
    }
    if (c->woff == c->wlen) {
        c->woff = c->wlen = 0;
        if (c->ext && c->ext_off >= c->ext_len)
            ext_free(p, c);
    }
    conn_process(p, c);
}

/* dispatch's hooks.done: a queued /example task is back. */
static void on_task_done(void *ctx, uint64_t tag, int result)
{
    struct conn_pool *p = ctx;
    struct conn *c = conn_of(p, tag);
    if (!c)
        return; /* cannot happen: a slot with a task out is never released */
    c->job.where = DISPATCH_JOB_IDLE;
    c->job.task = NULL;
    if (gone(c)) {
        metrics_gauge_add(&p->metrics->in_flight, -1);
        conn_release(p, c);
        return;
    }
    c->state = CONN_READING;
    respond_example(p, c, result);
    conn_process(p, c);
}

/* dispatch's hooks.resume: the throttle lifted; paused receives go on. */
static void on_resume(void *ctx)
{
    struct conn_pool *p = ctx;
    struct conn *c = p->paused;
    p->paused = NULL;
    while (c) {
        struct conn *next = c->pnext;
        c->pnext = NULL;
        c->flags &= (uint8_t)~CONN_F_PAUSED;
        conn_rearm(p, c);
        c = next;
    }
}

static struct conn *of_timer(struct timer *t)
{
    return (struct conn *)((char *)t - offsetof(struct conn, timer));
}

static void on_header_deadline(struct timer *t, void *ctx)
{
    struct conn_pool *p = ctx;
    struct conn *c = of_timer(t);
    if (c->flags & CONN_F_RECV)
        io_shutdown(p->io, c->fd, SHUT_RD); /* stop reading; the 408 still goes out */
    respond_refusal(p, c, 408, BAD_TIMEOUT);
    conn_flush(p, c);
    idle_timer(p, c);
}

static void on_close_deadline(struct timer *t, void *ctx)
{
    conn_abort(ctx, of_timer(t));
}

/* A held request's --fault-delay is over: abort it, or serve it now. */
static void on_held_deadline(struct timer *t, void *ctx)
{
    struct conn_pool *p = ctx;
    struct conn *c = of_timer(t);
    c->state = CONN_READING;
    if (c->fault_abort)
        respond_fault_abort(p, c, c->fault_abort);
    else
        serve_request(p, c);
    c->fault_abort = 0;
    conn_process(p, c);
}

void conn_pool_expire(struct conn_pool *p)
{
    timer_expire(&p->header, p->now_ms, on_header_deadline, p);
    timer_expire(&p->idle, p->now_ms, on_close_deadline, p);
    timer_expire(&p->linger, p->now_ms, on_close_deadline, p);
    timer_expire(&p->held, p->now_ms, on_held_deadline, p);
}

uint64_t conn_pool_next_deadline(const struct conn_pool *p, uint64_t none)
{
    uint64_t next = timer_next(&p->idle, none);
    uint64_t h = timer_next(&p->header, none), l = timer_next(&p->linger, none);
    if (h < next)
        next = h;
    if (l < next)
        next = l;
    uint64_t f = timer_next(&p->held, none);
    if (f < next)
        next = f;
    return next;
}

void conn_pool_drain(struct conn_pool *p)
{
    p->drain_seen = true;
    for (uint32_t i = 0; i < p->fresh; i++) {
        struct conn *c = &p->conns[i];
        if (c->fd < 0 || !timer_on(&c->timer, &p->idle) || (c->flags & CONN_F_SEND) || c->state == CONN_FINAL)
            continue;
        if (c->timer.deadline_ms > p->now_ms + CONN_DRAIN_IDLE_MS)
            timer_add(&p->idle, &c->timer, p->now_ms + CONN_DRAIN_IDLE_MS);
    }
}

int conn_pool_init(struct conn_pool *p)
{
    p->limits.max_url = p->cfg->max_url;
    p->limits.max_body = p->cfg->max_body;
    p->limits.default_bits = p->cfg->bits;
    p->limits.fault_path = p->fault ? p->cfg->fault_path : NULL;
    timer_list_init(&p->idle, TIMER_IDLE);
    timer_list_init(&p->header, TIMER_HEADER);
    timer_list_init(&p->linger, TIMER_LINGER);
    timer_list_init(&p->held, TIMER_HELD);
    p->dispatch->hooks = (struct dispatch_hooks){.done = on_task_done, .resume = on_resume, .ctx = p};
    if (!p->rng)
        p->rng = 0x9e3779b97f4a7c15ULL;
    p->conns = calloc(p->nslots, sizeof(*p->conns));
    /* calloc of this size is mmap'd: pages are touched only by connections in use */
    p->arena = calloc(p->nslots, (size_t)p->cfg->max_header + CONN_WBUF_SIZE);
    if (!p->conns || !p->arena) {
        conn_pool_fini(p);
        return -ENOMEM;
    }
    return 0;
}

void conn_pool_fini(struct conn_pool *p)
{
    for (uint32_t i = 0; p->conns && i < p->fresh; i++)
        ext_free(p, &p->conns[i]);
    free(p->conns);
    free(p->arena);
    p->conns = NULL;
    p->arena = NULL;
}
