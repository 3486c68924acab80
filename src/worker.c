/* worker.c - one pinned thread: its ring, listener, connection table,
 * timers, Date cache, and the dispatch of each completion.
 *
 * Invariants:
 * - A worker touches only its own connections, tasks and metrics. The only
 *   state shared with other workers is its deque (wsq), its done list and its
 *   sleeping flag (work-stealing dispatch), all atomics.
 * - A connection slot is released only when no receive, send or task of it is
 *   in flight, so a completion or a task result always finds its connection.
 * - Responses leave in request order: the parser stops at each message
 *   boundary while a request is served.
 * - Nothing here allocates on the hot path; /metrics' body is the one cold
 *   malloc.
 */
#define _GNU_SOURCE
#include "worker.h"

#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "build_info.h"
#include "prime.h"
#include "trace.h"

pthread_barrier_t worker_start_barrier;

#define LINGER_MS 2000
#define DRAIN_IDLE_MS 1000
#define HANDOFF_NS 1000000u /* 1 ms: a woken worker is running by then */
#define MAX_EVENTS 256

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t rng_next(struct worker *w)
{
    /* xorshift64*: span ids only need to be unique-ish, not secret */
    uint64_t x = w->rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    w->rng = x;
    return x * 0x2545F4914F6CDD1DULL;
}

/* ---- tags, slots and timer lists ---------------------------------------- */

static uint64_t conn_tag(const struct conn *c)
{
    return (uint64_t)c->slot | ((uint64_t)(c->gen & 0xffffffu) << 32);
}

static struct conn *conn_of(struct worker *w, uint64_t tag)
{
    uint32_t slot = (uint32_t)tag;
    if (slot >= w->nslots)
        return NULL;
    struct conn *c = &w->conns[slot];
    if (!c->open || (c->gen & 0xffffffu) != (uint32_t)(tag >> 32))
        return NULL;
    return c;
}

static void list_remove(struct conn *c)
{
    if (c->list == LIST_NONE)
        return;
    c->prev->next = c->next;
    c->next->prev = c->prev;
    c->list = LIST_NONE;
}

/* Inserts c into a timer list in deadline order, scanning from the tail: most
 * entries of a list share one timeout and arrive in order, so this is O(1)
 * but for the few that do not (the drain's 1 s grace behind 60 s idle
 * deadlines). expire_timers() relies on the order: it stops at the first
 * entry not yet due. */
static void list_append(struct worker *w, struct conn *c, int list, uint64_t deadline)
{
    list_remove(c);
    struct conn *s = &w->lists[list];
    struct conn *after = s->prev;
    while (after != s && after->deadline_ms > deadline)
        after = after->prev;
    c->prev = after;
    c->next = after->next;
    after->next->prev = c;
    after->next = c;
    c->list = (uint8_t)list;
    c->deadline_ms = deadline;
}

/* Removes c from the wait queue. Cold: backpressure only. */
static void waitq_unlink(struct worker *w, struct conn *c)
{
    struct conn *prev = NULL;
    for (struct conn *p = w->waitq_head; p; prev = p, p = p->qnext) {
        if (p != c)
            continue;
        if (prev)
            prev->qnext = p->qnext;
        else
            w->waitq_head = p->qnext;
        if (w->waitq_tail == p)
            w->waitq_tail = prev;
        p->qnext = NULL;
        return;
    }
}

/* Removes c from the paused list. Cold: backpressure only. */
static void paused_unlink(struct worker *w, struct conn *c)
{
    for (struct conn **pp = &w->paused; *pp; pp = &(*pp)->pnext) {
        if (*pp == c) {
            *pp = c->pnext;
            c->pnext = NULL;
            return;
        }
    }
}

/* ---- accepting ---------------------------------------------------------- */

static void accept_update(struct worker *w)
{
    bool want = w->want_accept && !w->drain_seen && !w->throttled && w->open + w->npark < w->max_open &&
                w->now_ms >= w->accept_retry_ms;
    if (want && !w->accept_armed) {
        if (io_accept(&w->io, w->lfd) == 0)
            w->accept_armed = true;
    } else if (!want && w->accept_armed && !w->accept_stop_sent) {
        if (io_accept_stop(&w->io, w->lfd) == 0)
            w->accept_stop_sent = true;
    }
}

/* ---- closing ------------------------------------------------------------ */

/* Frees c's heap body (/metrics), once sent or when c closes. */
static void ext_free(struct worker *w, struct conn *c)
{
    if (!c->ext)
        return;
    free(c->ext);
    c->ext = NULL;
    w->ext_live--;
}

static void conn_release(struct worker *w, struct conn *c)
{
    if (c->flags & (CONN_F_RECV | CONN_F_SEND | CONN_F_TASK))
        return; /* called again when the last of them completes */
    list_remove(c);
    if (c->flags & CONN_F_WAITQ)
        waitq_unlink(w, c);
    if (c->flags & CONN_F_PAUSED)
        paused_unlink(w, c);
    if (c->flags & CONN_F_WAITQ)
        metrics_gauge_add(&w->metrics.in_flight, -1); /* never answered: the client went away */
    io_conn_close(&w->io, c->fd);
    close(c->fd);
    ext_free(w, c);
    c->open = false;
    /* DEAD stays set until the slot is reused (conn_start, from the loop only):
     * a caller that checks CONN_F_DEAD after a call that may have released
     * the slot reads "dead", never a cleared slot. */
    c->flags = CONN_F_DEAD;
    c->gen++;
    c->next = w->free_conns;
    w->free_conns = c;
    w->open--;
    metrics_gauge_add(&w->metrics.conns_open, -1);
    accept_update(w);
}

/* Closes now: in-flight operations are cut short by shutdown() and the slot
 * is released when they complete. */
static void conn_abort(struct worker *w, struct conn *c)
{
    if (!(c->flags & CONN_F_DEAD)) {
        c->flags |= CONN_F_DEAD;
        if (c->flags & CONN_F_TASK) /* nobody will read the answer: do not compute it */
            atomic_store_explicit(&c->task->cancelled, true, memory_order_relaxed);
        if (c->flags & (CONN_F_RECV | CONN_F_SEND))
            shutdown(c->fd, SHUT_RDWR);
    }
    conn_release(w, c);
}

static void arm_recv(struct worker *w, struct conn *c, char *buf, size_t len)
{
    if (io_recv(&w->io, c->fd, conn_tag(c), buf, len) == 0)
        c->flags |= CONN_F_RECV;
    else
        conn_abort(w, c);
}

/* After the last response of a connection: shut our side, then read and
 * drop what the client still sends until it closes (or LINGER_MS), so that
 * closing with unread data does not turn into a reset that destroys the
 * response in the client's receive queue. */
static void conn_linger(struct worker *w, struct conn *c)
{
    c->flags |= CONN_F_LINGER;
    if (c->flags & CONN_F_EOF) {
        conn_abort(w, c);
        return;
    }
    shutdown(c->fd, SHUT_WR);
    list_append(w, c, LIST_LINGER, w->now_ms + LINGER_MS);
    if (!(c->flags & CONN_F_RECV))
        arm_recv(w, c, c->rbuf, w->cfg->max_header);
}

/* ---- responses ---------------------------------------------------------- */

static void conn_flush(struct worker *w, struct conn *c)
{
    if (c->flags & (CONN_F_SEND | CONN_F_DEAD))
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
    if (io_send(&w->io, c->fd, conn_tag(c), &c->msg) == 0)
        c->flags |= CONN_F_SEND;
    else
        conn_abort(w, c);
}

static void access_log(struct worker *w, const struct conn *c, int status, size_t bytes, uint64_t dur_ns,
                       const struct trace *tr)
{
    const struct http_req *rq = &c->http.req;
    alog_printf(&w->alog, "ts=%s worker=%u method=%s path=%s status=%d bytes=%zu dur_us=%" PRIu64 " trace_id=%s",
                w->iso_time, w->id, rq->has_method ? llhttp_method_name((llhttp_method_t)rq->method) : "-",
                route_name((enum route_id)rq->route.id), status, bytes, dur_ns / 1000,
                tr && tr->valid ? tr->trace_id : "-");
}

/* The request's trace context: traceparent, else a single b3 header, else
 * the X-B3-* headers. An overlong value (length cap + 1) is no trace. */
static void request_trace(const struct http_req *rq, struct trace *tr)
{
    memset(tr, 0, sizeof(*tr));
    if (rq->traceparent_len && rq->traceparent_len <= sizeof(rq->traceparent))
        trace_parse_traceparent(rq->traceparent, rq->traceparent_len, tr);
    if (!tr->valid && rq->b3_len && rq->b3_len <= sizeof(rq->b3))
        trace_parse_b3(rq->b3, rq->b3_len, tr);
    if (!tr->valid && rq->xb3_trace_len && rq->xb3_trace_len <= sizeof(rq->xb3_trace) &&
        rq->xb3_span_len <= sizeof(rq->xb3_span) && rq->xb3_sampled_len <= sizeof(rq->xb3_sampled) &&
        rq->xb3_flags_len <= sizeof(rq->xb3_flags))
        trace_parse_b3_multi(rq->xb3_trace, rq->xb3_trace_len, rq->xb3_span, rq->xb3_span_len, rq->xb3_sampled,
                             rq->xb3_sampled_len, rq->xb3_flags, rq->xb3_flags_len, tr);
}

/* Queues one response in c's buffer (body from r, or from ext_body when not
 * NULL, which c then owns), records metrics and the access log line. */
static void respond(struct worker *w, struct conn *c, struct resp *r, char *ext_body)
{
    struct http_req *rq = &c->http.req;
    struct trace tr = {0};
    char extra[RESP_EXTRA_MAX];
    size_t elen = 0;
    extra[0] = '\0';
    request_trace(rq, &tr);
    if (tr.valid) {
        char tp[56];
        trace_format_traceparent(&tr, rng_next(w), tp);
        elen = (size_t)snprintf(extra, sizeof(extra), "traceparent: %s\r\n", tp);
    }
    if (w->srv->revision_hdr[0])
        snprintf(extra + elen, sizeof(extra) - elen, "%s", w->srv->revision_hdr);
    r->extra = extra[0] ? extra : NULL;
    r->head = rq->head;

    bool inline_body = ext_body == NULL;
    size_t n = resp_format(c->wbuf + c->wlen, WBUF_SIZE - c->wlen, r, w->date, inline_body);
    if (n == 0) {
        /* cannot happen: conn_process() keeps RESP_MAX free; refuse loudly */
        free(ext_body);
        log_msg("worker %u: response for status %d does not fit; closing", w->id, r->status);
        metrics_gauge_add(&w->metrics.in_flight, -1); /* the request ends here, unanswered */
        conn_abort(w, c);
        return;
    }
    c->wlen += (uint32_t)n;
    if (ext_body && !r->head) {
        c->ext = ext_body;
        w->ext_live++;
        c->ext_len = r->body_len;
        c->ext_off = 0;
    } else {
        free(ext_body);
    }
    if (!r->keep_alive)
        c->flags |= CONN_F_CLOSING;

    uint64_t dur = mono_ns() - c->req_start_ns;
    int si = metrics_status_index(r->status);
    uint8_t route = rq->route.id;
    if (si >= 0)
        metrics_add(&w->metrics.requests[route][si], 1);
    metrics_observe(&w->metrics.req_seconds[route], dur);
    metrics_gauge_add(&w->metrics.in_flight, -1);
    if (w->cfg->access_log)
        access_log(w, c, r->status, r->head ? 0 : r->body_len, dur, &tr);
}

/* The server-wide flag, not w->drain_seen: a response written after the
 * signal but before this worker's loop noticed it still says close. */
static bool draining(const struct worker *w)
{
    return atomic_load_explicit(&w->srv->draining, memory_order_relaxed) != 0;
}

static bool keep_alive(struct worker *w, struct conn *c)
{
    return c->http.req.keep_alive && !draining(w) && !c->http.upgrade;
}

static void respond_text(struct worker *w, struct conn *c, int status, const char *body, bool ka)
{
    struct resp r = {
        .status = status,
        .ctype = "text/plain; charset=utf-8",
        .body = body,
        .body_len = strlen(body),
        .keep_alive = ka,
    };
    if (status == 405)
        r.allow = route_allow((enum route_id)c->http.req.route.id);
    respond(w, c, &r, NULL);
}

static void respond_example(struct worker *w, struct conn *c, int result)
{
    if (result < 0) {
        respond_text(w, c, 500, "prime generation failed\n", false);
        return;
    }
    char body[32];
    uint64_t n = atomic_fetch_add_explicit(&w->srv->example_n, 1, memory_order_relaxed) + 1;
    int len = snprintf(body, sizeof(body), "Hello_%" PRIu64, n);
    struct resp r = {
        .status = 200,
        .ctype = "text/plain",
        .body = body,
        .body_len = (size_t)len,
        .keep_alive = keep_alive(w, c),
    };
    respond(w, c, &r, NULL);
}

static void respond_metrics(struct worker *w, struct conn *c)
{
    if (w->ext_live >= METRICS_BODIES_MAX) {
        /* clients that do not read their scrape hold its body: a cap keeps
         * memory bounded (METRICS_BODIES_MAX x 64 KiB a worker) */
        respond_text(w, c, 503, "too many /metrics responses in flight on this worker; retry\n", keep_alive(w, c));
        return;
    }
    char *body = NULL;
    int len = worker_render_metrics(w, &body); /* cold: a scrape, not a request */
    if (len < 0) {
        respond_text(w, c, 500, "metrics unavailable\n", keep_alive(w, c));
        return;
    }
    struct resp r = {
        .status = 200,
        .ctype = "text/plain; version=0.0.4; charset=utf-8",
        .body = body,
        .body_len = (size_t)len,
        .keep_alive = keep_alive(w, c),
    };
    respond(w, c, &r, body);
}

static void respond_ping(struct worker *w, struct conn *c)
{
    struct server *s = w->srv;
    char body[RESP_BODY_INLINE_MAX];
    uint64_t n = atomic_fetch_add_explicit(&s->ping_n, 1, memory_order_relaxed) + 1;
    /* values come from the pod spec, not the request: still bounded (at most
     * 64 + 4 + 20 + 3 + 128 + 4 + 64 + 1 = 288 bytes) */
    snprintf(body, sizeof(body), "%.64s(id=%" PRIu64 "): %.128s in %.64s\n", s->app, n, s->pod, s->ns);
    respond_text(w, c, 200, body, keep_alive(w, c));
}

/* ---- dispatch ------------------------------------------------------------ */

/* Returns whether a sleeping worker was woken. */
static bool wake_one_thief(struct worker *w)
{
    struct server *s = w->srv;
    atomic_thread_fence(memory_order_seq_cst); /* the push before the sleeping flags (Dekker) */
    for (unsigned i = 1; i < s->nworkers; i++) {
        struct worker *o = &s->workers[(w->id + i) % s->nworkers];
        if (atomic_load_explicit(&o->sleeping, memory_order_relaxed) &&
            atomic_exchange_explicit(&o->sleeping, 0, memory_order_seq_cst)) {
            io_wake(&o->io);
            return true;
        }
    }
    return false;
}

static void task_queue(struct worker *w, struct conn *c, struct task *t)
{
    t->tag = conn_tag(c);
    t->owner = w->id;
    t->bits = c->http.req.route.bits;
    t->queued_ns = mono_ns();
    atomic_store_explicit(&t->cancelled, false, memory_order_relaxed);
    c->task = t;
    wsq_push(&w->q, t); /* cannot fail: capacity >= queue_max >= tasks_out */
    c->flags |= CONN_F_TASK;
    w->tasks_out++;
    /* Hand-off: if an idle worker was woken for this task, leave it to that
     * worker for a moment and go back to our ring, where the next request
     * may be waiting; otherwise the owner, already awake, always takes its
     * own task first and a few busy connections never leave its core. */
    if (wake_one_thief(w))
        w->handoff_until_ns = t->queued_ns + HANDOFF_NS;
}

static void throttle(struct worker *w)
{
    if (w->throttled)
        return;
    w->throttled = true;
    accept_update(w);
}

static void handle_example(struct worker *w, struct conn *c)
{
    if (!w->steal) {
        uint64_t t0 = thread_cpu_ns();
        int r = prime_generate(w->prime, w->cfg->engine, c->http.req.route.bits, NULL, 0);
        metrics_observe(&w->metrics.prime_seconds, thread_cpu_ns() - t0);
        respond_example(w, c, r);
        return;
    }
    struct task *t = w->task_free;
    if (!t) {
        /* queue bound reached: this request waits its turn, reading pauses */
        c->flags |= CONN_F_WAITQ;
        c->qnext = NULL;
        if (w->waitq_tail)
            w->waitq_tail->qnext = c;
        else
            w->waitq_head = c;
        w->waitq_tail = c;
        throttle(w);
        return;
    }
    w->task_free = t->next;
    task_queue(w, c, t);
    if (!w->task_free)
        throttle(w);
}

static void handle_request(struct worker *w, struct conn *c)
{
    struct http_req *rq = &c->http.req;
    c->req_start_ns = mono_ns();
    metrics_gauge_add(&w->metrics.in_flight, 1);
    if (rq->route.status) {
        if (rq->route.status == 400) {
            metrics_add(&w->metrics.bad[BAD_QUERY], 1);
            char body[128];
            snprintf(body, sizeof(body), "%s\n", rq->route.reason ? rq->route.reason : "bad request");
            respond_text(w, c, 400, body, keep_alive(w, c));
        } else {
            respond_text(w, c, rq->route.status,
                         rq->route.status == 404 ? "not found\n" : "method not allowed\n", keep_alive(w, c));
        }
        return;
    }
    switch (rq->route.id) {
    case ROUTE_EXAMPLE:
        handle_example(w, c);
        break;
    case ROUTE_HEALTHZ:
        respond_text(w, c, 200, "ok\n", keep_alive(w, c));
        break;
    case ROUTE_READYZ:
        if (draining(w))
            respond_text(w, c, 503, "draining\n", false);
        else
            respond_text(w, c, 200, "ready\n", keep_alive(w, c));
        break;
    case ROUTE_METRICS:
        respond_metrics(w, c);
        break;
    case ROUTE_PING:
        respond_ping(w, c);
        break;
    default:
        respond_text(w, c, 404, "not found\n", keep_alive(w, c));
        break;
    }
}

static void respond_refusal(struct worker *w, struct conn *c, int status, enum bad_reason why)
{
    static const char *const bodies[BAD__COUNT] = {
        [BAD_PARSE] = "malformed request\n",
        [BAD_HEADER_TOO_LARGE] = "request head too large\n",
        [BAD_URL_TOO_LONG] = "URL too long\n",
        [BAD_BODY_TOO_LARGE] = "request body too large\n",
        [BAD_TIMEOUT] = "request not received in time\n",
        [BAD_QUERY] = "bad query\n",
        [BAD_FRAMING] = "malformed request: every line of a head must end in CRLF\n",
        [BAD_HOST] = "exactly one Host header is required (RFC 9112 3.2)\n",
        [BAD_EXPECT] = "expectation not supported (only 100-continue)\n",
    };
    metrics_add(&w->metrics.bad[why], 1);
    /* the request was never routed: account it under "other"; its method,
     * when the request line got that far, stays for the access log */
    struct http_req *rq = &c->http.req;
    uint8_t method = rq->method;
    bool has_method = rq->has_method;
    memset(rq, 0, offsetof(struct http_req, traceparent_len));
    rq->method = method;
    rq->has_method = has_method;
    rq->route.id = ROUTE_OTHER;
    c->req_start_ns = mono_ns();
    metrics_gauge_add(&w->metrics.in_flight, 1);
    respond_text(w, c, status, bodies[why] ? bodies[why] : "bad request\n", false);
}

/* ---- the connection state machine -------------------------------------- */

static void conn_rearm(struct worker *w, struct conn *c);

/* Parses and answers what is in the read buffer, as far as it can go. */
static void conn_process(struct worker *w, struct conn *c)
{
    for (;;) {
        if (c->flags & (CONN_F_TASK | CONN_F_WAITQ | CONN_F_CLOSING | CONN_F_DEAD | CONN_F_LINGER))
            break;
        if (c->ext || WBUF_SIZE - c->wlen < RESP_MAX)
            break; /* resumes when the send completes */
        if (c->rpos >= c->rlen)
            break;
        size_t pos = c->rpos;
        enum http_status st = http_feed(&c->http, c->rbuf, &pos, c->rlen);
        c->rpos = (uint32_t)pos;
        if (st == HTTP_MSG) {
            list_remove(c); /* the header timer was for this request */
            c->msg_start = c->rpos;
            handle_request(w, c);
            continue;
        }
        if (st == HTTP_ERROR)
            respond_refusal(w, c, c->http.err_status, c->http.bad);
        break;
    }
    if (c->flags & CONN_F_DEAD) {
        conn_release(w, c);
        return;
    }
    conn_flush(w, c);
    conn_rearm(w, c);
}

static void conn_rearm(struct worker *w, struct conn *c)
{
    if (c->flags & (CONN_F_DEAD | CONN_F_LINGER))
        return;
    bool unsent = (c->flags & CONN_F_SEND) || c->woff < c->wlen || c->ext;
    bool busy = c->flags & (CONN_F_TASK | CONN_F_WAITQ);

    if (c->flags & CONN_F_CLOSING) {
        if (!unsent && !busy)
            conn_linger(w, c);
        else if (unsent && !busy)
            list_append(w, c, LIST_IDLE, w->now_ms + w->cfg->idle_timeout_ms);
        return;
    }
    if (c->flags & CONN_F_EOF) {
        /* the client is done sending: answer what was complete, then close */
        if (!unsent && !busy)
            conn_abort(w, c);
        return;
    }

    if (!(c->flags & CONN_F_RECV)) {
        /* Compact: keep the current message's unparsed head (the URL is an
         * offset into it); everything before is answered or dropped body. */
        http_compact(&c->http, c->rbuf, &c->rlen, &c->rpos, &c->msg_start);
        if (c->rlen == w->cfg->max_header) {
            if (c->http.in_message && !c->http.head_done && c->rpos == c->rlen) {
                respond_refusal(w, c, 431, BAD_HEADER_TOO_LARGE);
                conn_flush(w, c);
                list_append(w, c, LIST_IDLE, w->now_ms + w->cfg->idle_timeout_ms);
                return;
            }
            /* full of pipelined requests: read on once they are answered */
        } else if (w->throttled && !(c->flags & CONN_F_PAUSED)) {
            c->flags |= CONN_F_PAUSED;
            c->pnext = w->paused;
            w->paused = c;
        } else if (!w->throttled) {
            arm_recv(w, c, c->rbuf + c->rlen, w->cfg->max_header - c->rlen);
            if (c->flags & CONN_F_DEAD)
                return;
        }
    }

    if (busy || (!unsent && (c->flags & CONN_F_PAUSED))) {
        /* the server is working, or holding the client back (backpressure):
         * no client timer runs; overload is latency, never an abort */
        list_remove(c);
    } else if (unsent) {
        list_append(w, c, LIST_IDLE, w->now_ms + w->cfg->idle_timeout_ms);
    } else if (c->http.in_message && c->http.head_done) {
        /* a body: it may take long, but must make progress; each receive
         * restarts the idle timer (the header timer is for the head alone) */
        list_append(w, c, LIST_IDLE, w->now_ms + w->cfg->idle_timeout_ms);
    } else if (c->http.in_message) {
        if (c->list != LIST_HEADER)
            list_append(w, c, LIST_HEADER, w->now_ms + w->cfg->header_timeout_ms);
    } else {
        /* draining: a connection between requests gets a short grace to send
         * the request it may have in flight, then is closed */
        unsigned idle = w->cfg->idle_timeout_ms;
        if (w->drain_seen && idle > DRAIN_IDLE_MS)
            idle = DRAIN_IDLE_MS;
        list_append(w, c, LIST_IDLE, w->now_ms + idle);
    }
}

static bool have_slot(const struct worker *w)
{
    return w->free_conns || w->fresh < w->nslots;
}

/* A released slot, else a never-used one. Slots are set up on first use so
 * that start-up touches none of the table or the arena (start-up time and
 * idle RSS do not grow with --max-conns). */
static struct conn *slot_take(struct worker *w)
{
    struct conn *c = w->free_conns;
    if (c) {
        w->free_conns = c->next;
        return c;
    }
    uint32_t i = w->fresh++;
    size_t per = (size_t)w->cfg->max_header + WBUF_SIZE;
    c = &w->conns[i];
    c->slot = i;
    c->rbuf = w->arena + (size_t)i * per;
    c->wbuf = c->rbuf + w->cfg->max_header;
    return c;
}

static void conn_start(struct worker *w, int fd)
{
    struct conn *c = slot_take(w);
    c->fd = fd;
    c->open = true;
    c->flags = 0;
    c->list = LIST_NONE;
    c->rlen = c->rpos = c->msg_start = 0;
    c->wlen = c->woff = 0;
    c->ext = NULL;
    c->ext_len = c->ext_off = 0;
    c->qnext = c->pnext = NULL;
    c->task = NULL;
    http_init(&c->http, &w->limits);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    w->open++;
    metrics_gauge_add(&w->metrics.conns_open, 1);
    metrics_add(&w->metrics.accepts, 1);
    if (io_conn_open(&w->io, fd) < 0) {
        conn_abort(w, c);
        return;
    }
    conn_rearm(w, c);
}

/* ---- connections over the limit ------------------------------------------ */

/* A multishot accept is cancelled only when its cancel is submitted, at the
 * next io_wait(): meanwhile the kernel may hand us every connection of the
 * backlog (listen(SOMAXCONN)) at once. Those beyond --max-conns are parked:
 * held open and unread, as if still in the backlog, and started in arrival
 * order as slots free up (admit_parked(), from the loop). Closing them would
 * reset clients that did nothing wrong. */
#define PARK_MAX (SOMAXCONN + MAX_EVENTS)

static void take_connection(struct worker *w, int fd)
{
    if (w->npark == 0 && w->open < w->max_open && have_slot(w)) {
        conn_start(w, fd);
        return;
    }
    if (w->npark < PARK_MAX) {
        w->park[(w->park_head + w->npark) % PARK_MAX] = fd;
        w->npark++;
        return;
    }
    /* more than a whole backlog beyond the limit in one go: nothing left to
     * hold it in; the client sees a reset */
    close(fd);
    if (w->now_ms >= w->accept_err_log_ms) {
        log_msg("worker %u: %u connections open and %u waiting: closing a new one", w->id, w->open, w->npark);
        w->accept_err_log_ms = w->now_ms + 1000;
    }
}

/* Starts parked connections while slots are free. Called from the loop only,
 * never from a path that may just have released a slot (whose callers may
 * still look at it). */
static void admit_parked(struct worker *w)
{
    while (w->npark && w->open < w->max_open && have_slot(w)) {
        int fd = w->park[w->park_head];
        w->park_head = (w->park_head + 1) % PARK_MAX;
        w->npark--;
        conn_start(w, fd);
    }
    accept_update(w);
}

/* ---- completions --------------------------------------------------------- */

static void on_accept(struct worker *w, const struct io_event *ev)
{
    if (!ev->more) {
        w->accept_armed = false;
        w->accept_stop_sent = false;
    }
    if (ev->res >= 0) {
        take_connection(w, ev->res);
    } else if (ev->res == -EMFILE || ev->res == -ENFILE || ev->res == -ENOBUFS || ev->res == -ENOMEM) {
        w->accept_retry_ms = w->now_ms + 100;
        if (w->now_ms >= w->accept_err_log_ms) {
            log_msg("worker %u: accept: %s (%u connections open); pausing accept for 100 ms",
                    w->id, strerror(-ev->res), w->open);
            w->accept_err_log_ms = w->now_ms + 1000;
        }
    } else if (ev->res != -ECANCELED && ev->res != -ECONNABORTED && ev->res != -EINTR && ev->res != -EAGAIN) {
        if (w->now_ms >= w->accept_err_log_ms) {
            log_msg("worker %u: accept: %s", w->id, strerror(-ev->res));
            w->accept_err_log_ms = w->now_ms + 1000;
        }
        w->accept_retry_ms = w->now_ms + 100;
    }
    accept_update(w);
}

static void on_recv(struct worker *w, struct conn *c, int res)
{
    c->flags &= (uint16_t)~CONN_F_RECV;
    if (c->flags & CONN_F_DEAD) {
        conn_release(w, c);
        return;
    }
    if (c->flags & CONN_F_LINGER) {
        if (res <= 0)
            conn_abort(w, c);
        else
            arm_recv(w, c, c->rbuf, w->cfg->max_header);
        return;
    }
    if (res == 0) {
        c->flags |= CONN_F_EOF;
    } else if (res < 0) {
        if (res == -EAGAIN || res == -EINTR) {
            conn_rearm(w, c);
            return;
        }
        conn_abort(w, c);
        return;
    } else {
        c->rlen += (uint32_t)res;
    }
    conn_process(w, c);
}

static void on_send(struct worker *w, struct conn *c, int res)
{
    c->flags &= (uint16_t)~CONN_F_SEND;
    if (c->flags & CONN_F_DEAD) {
        conn_release(w, c);
        return;
    }
    if (res < 0) {
        if (res == -EAGAIN || res == -EINTR) {
            conn_flush(w, c);
            return;
        }
        conn_abort(w, c);
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
            ext_free(w, c);
    }
    conn_process(w, c);
}

static void task_done(struct worker *w, struct task *t)
{
    struct conn *c = conn_of(w, t->tag);
    w->tasks_out--;
    t->next = w->task_free;
    w->task_free = t;
    if (!c)
        return; /* cannot happen: a slot with a task out is never released */
    c->flags &= (uint16_t)~CONN_F_TASK;
    c->task = NULL;
    if (c->flags & CONN_F_DEAD) {
        metrics_gauge_add(&w->metrics.in_flight, -1);
        conn_release(w, c);
        return;
    }
    respond_example(w, c, t->result);
    conn_process(w, c);
}

static void unthrottle(struct worker *w)
{
    /* first the requests that waited for a slot, in arrival order */
    while (w->waitq_head && w->task_free) {
        struct conn *c = w->waitq_head;
        w->waitq_head = c->qnext;
        if (!w->waitq_head)
            w->waitq_tail = NULL;
        c->qnext = NULL;
        c->flags &= (uint16_t)~CONN_F_WAITQ;
        if (c->flags & CONN_F_DEAD) {
            /* it died while it waited (its release waits on an operation
             * still in flight): no prime for nobody */
            metrics_gauge_add(&w->metrics.in_flight, -1);
            conn_release(w, c);
            continue;
        }
        struct task *t = w->task_free;
        w->task_free = t->next;
        task_queue(w, c, t);
    }
    if (!w->throttled || w->waitq_head || !w->task_free)
        return;
    w->throttled = false;
    struct conn *p = w->paused;
    w->paused = NULL;
    while (p) {
        struct conn *next = p->pnext;
        p->pnext = NULL;
        p->flags &= (uint16_t)~CONN_F_PAUSED;
        conn_rearm(w, p);
        p = next;
    }
    accept_update(w);
}

static void drain_done(struct worker *w)
{
    struct task *t = atomic_exchange_explicit(&w->done, NULL, memory_order_acquire);
    if (!t)
        return;
    /* the list is LIFO; answer in completion order */
    struct task *rev = NULL;
    while (t) {
        struct task *next = t->next;
        t->next = rev;
        rev = t;
        t = next;
    }
    while (rev) {
        struct task *next = rev->next;
        task_done(w, rev);
        rev = next;
    }
    unthrottle(w);
}

/* Our only queued task is being handed to the worker woken for it
 * (task_queue): leave it alone until HANDOFF_NS have passed. */
static bool handing_off(struct worker *w)
{
    return w->handoff_until_ns && wsq_size(&w->q) == 1 && mono_ns() < w->handoff_until_ns;
}

static struct task *take_task(struct worker *w, bool *stolen)
{
    struct server *s = w->srv;
    for (unsigned i = handing_off(w) ? 1 : 0; i < s->nworkers; i++) {
        struct worker *o = &s->workers[(w->id + i) % s->nworkers];
        for (int tries = 0; tries < 4; tries++) {
            void *x = wsq_steal(&o->q);
            if (x == WSQ_EMPTY)
                break;
            if (x != WSQ_ABORT) {
                *stolen = i != 0;
                return x;
            }
        }
    }
    return NULL;
}

/* Runs one queued task (our own first, oldest first; else the oldest of
 * another worker) and sends the result to its owner. Returns whether it ran. */
static bool run_one_task(struct worker *w)
{
    bool stolen = false;
    struct task *t = take_task(w, &stolen);
    if (!t)
        return false;
    if (atomic_load_explicit(&t->cancelled, memory_order_relaxed)) {
        t->result = -ECANCELED; /* the client reset while it waited */
    } else {
        uint64_t t0 = thread_cpu_ns();
        t->result = prime_generate(w->prime, w->cfg->engine, t->bits, NULL, 0);
        t->prime_ns = thread_cpu_ns() - t0;
        metrics_observe(&w->metrics.prime_seconds, t->prime_ns);
    }
    if (!stolen) {
        task_done(w, t);
        unthrottle(w);
        return true;
    }
    metrics_add(&w->metrics.steals, 1);
    struct worker *o = &w->srv->workers[t->owner];
    struct task *head = atomic_load_explicit(&o->done, memory_order_relaxed);
    do {
        t->next = head;
    } while (!atomic_compare_exchange_weak_explicit(&o->done, &head, t, memory_order_seq_cst,
                                                    memory_order_relaxed));
    if (atomic_exchange_explicit(&o->sleeping, 0, memory_order_seq_cst))
        io_wake(&o->io);
    return true;
}

static bool work_anywhere(struct worker *w)
{
    if (atomic_load_explicit(&w->done, memory_order_seq_cst))
        return true;
    for (unsigned i = 0; i < w->srv->nworkers; i++)
        if (wsq_size(&w->srv->workers[i].q) > 0)
            return true;
    return false;
}

/* ---- time ---------------------------------------------------------------- */

static void update_clock(struct worker *w)
{
    w->now_ms = mono_ns() / 1000000u;
    time_t now = time(NULL);
    if (now != w->date_sec) {
        w->date_sec = now;
        resp_date(w->date, now);
        struct tm tm;
        gmtime_r(&now, &tm);
        strftime(w->iso_time, sizeof(w->iso_time), "%Y-%m-%dT%H:%M:%SZ", &tm);
        if (w->cfg->access_log) {
            alog_flush(&w->alog);
            unsigned long lost = alog_report(&w->alog);
            if (lost)
                log_msg("worker %u: access log: %lu lines dropped (stdout is not being read fast enough)", w->id,
                        lost);
        }
    }
}

static void expire_timers(struct worker *w)
{
    struct conn *s, *c;
    s = &w->lists[LIST_HEADER];
    while ((c = s->next) != s && c->deadline_ms <= w->now_ms) {
        list_remove(c);
        if (c->flags & CONN_F_RECV)
            shutdown(c->fd, SHUT_RD); /* stop reading; the 408 still goes out */
        respond_refusal(w, c, 408, BAD_TIMEOUT);
        conn_flush(w, c);
        list_append(w, c, LIST_IDLE, w->now_ms + w->cfg->idle_timeout_ms);
    }
    s = &w->lists[LIST_IDLE];
    while ((c = s->next) != s && c->deadline_ms <= w->now_ms) {
        list_remove(c);
        conn_abort(w, c);
    }
    s = &w->lists[LIST_LINGER];
    while ((c = s->next) != s && c->deadline_ms <= w->now_ms) {
        list_remove(c);
        conn_abort(w, c);
    }
}

static int next_timeout_ms(struct worker *w)
{
    uint64_t next = w->now_ms + 1000 - (w->now_ms % 1000); /* the Date header's second */
    for (int l = LIST_IDLE; l < LIST__COUNT; l++) {
        struct conn *s = &w->lists[l];
        if (s->next != s && s->next->deadline_ms < next)
            next = s->next->deadline_ms;
    }
    if (w->accept_retry_ms > w->now_ms && w->accept_retry_ms < next)
        next = w->accept_retry_ms;
    return next > w->now_ms ? (int)(next - w->now_ms) : 0;
}

/* ---- draining ------------------------------------------------------------ */

static void drain_begin(struct worker *w)
{
    w->drain_seen = true;
    accept_update(w); /* cancels the accept */
    /* Connections already in the backlog connected before the signal: take
     * them (their requests will be answered), then close the listener so new
     * ones are refused (Knative stops routing to a pod before SIGTERM). */
    while (w->lfd >= 0) { /* listeners are non-blocking (server.c) */
        int fd = accept4(w->lfd, NULL, NULL, SOCK_CLOEXEC | (w->io.kind == IO_EPOLL ? SOCK_NONBLOCK : 0));
        if (fd < 0)
            break;
        take_connection(w, fd);
    }
    if (w->lfd >= 0 && (w->id == 0 || !w->cfg->shared_listener))
        close(w->lfd); /* a shared listener is worker 0's to close */
    w->lfd = -1;
    admit_parked(w);
    /* Connections between requests are closed after a short grace: a
     * request may be on its way (or already in a receive we have not reaped);
     * the rest finish their request first and close after its response. */
    for (uint32_t i = 0; i < w->fresh; i++) {
        struct conn *c = &w->conns[i];
        if (!c->open || c->list != LIST_IDLE || (c->flags & (CONN_F_SEND | CONN_F_CLOSING)))
            continue;
        if (c->deadline_ms > w->now_ms + DRAIN_IDLE_MS)
            list_append(w, c, LIST_IDLE, w->now_ms + DRAIN_IDLE_MS);
    }
}

/* ---- set-up and the loop ------------------------------------------------- */

static int worker_setup(struct worker *w)
{
    const struct config *cfg = w->cfg;
    char name[16];
    snprintf(name, sizeof(name), "primed-w%u", w->id);
    pthread_setname_np(pthread_self(), name); /* top -H, /proc/PID/task/ * /comm */
    if (w->cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(w->cpu, &set);
        int r = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
        if (r) {
            snprintf(w->init_why, sizeof(w->init_why), "pin to CPU %d: %s", w->cpu, strerror(r));
            return -r;
        }
    }
    w->limits.max_url = cfg->max_url;
    w->limits.max_body = cfg->max_body;
    w->limits.default_bits = cfg->bits;

    struct rlimit rl;
    int max_fd = 65536;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        max_fd = (int)rl.rlim_cur;
    char why[160];
    unsigned listening = cfg->listeners && cfg->listeners < w->srv->nworkers ? cfg->listeners : w->srv->nworkers;
    w->max_open = (cfg->max_conns + listening - 1) / listening;
    w->nslots = w->max_open; /* accepts past it are parked (take_connection) */
    /* in flight at once: a receive and a send per slot, the accept, the wake */
    int r = io_init(&w->io, cfg->io, 1024, 2 * w->nslots + 8, max_fd, why, sizeof(why));
    if (r) {
        snprintf(w->init_why, sizeof(w->init_why), "%s: %s%s",
                 cfg->io == IO_EPOLL ? "epoll" : "io_uring_setup", strerror(-r),
                 r == -ENOSYS || r == -EPERM || r == -EACCES
                     ? " (blocked by seccomp or sysctl; run with --io=epoll or the profile in container/seccomp.json)"
                     : "");
        return r;
    }
    if (why[0] && w->id == 0)
        log_msg("%s", why);

    w->conns = calloc(w->nslots, sizeof(*w->conns));
    w->park = malloc(PARK_MAX * sizeof(*w->park));
    size_t per = (size_t)cfg->max_header + WBUF_SIZE;
    /* calloc of this size is mmap'd: pages are touched only by connections in use */
    w->arena = calloc(w->nslots, per);
    if (!w->conns || !w->arena || !w->park) {
        snprintf(w->init_why, sizeof(w->init_why), "allocate %u connection slots: out of memory", w->nslots);
        return -ENOMEM;
    }
    for (int l = 0; l < LIST__COUNT; l++)
        w->lists[l].prev = w->lists[l].next = &w->lists[l];

    w->steal = cfg->dispatch == DISPATCH_STEAL;
    if (w->steal) {
        w->tasks = calloc(cfg->queue_max, sizeof(*w->tasks));
        if (!w->tasks || wsq_init(&w->q, cfg->queue_max)) {
            snprintf(w->init_why, sizeof(w->init_why), "allocate the task queue: out of memory");
            return -ENOMEM;
        }
        for (unsigned i = cfg->queue_max; i-- > 0;) {
            w->tasks[i].next = w->task_free;
            w->task_free = &w->tasks[i];
        }
    } else if (wsq_init(&w->q, 2)) { /* empty, so thieves can look at it */
        return -ENOMEM;
    }

    w->prime = prime_state_create(0);
    if (!w->prime) {
        snprintf(w->init_why, sizeof(w->init_why), "prime state: getrandom or allocation failed");
        return -ENOMEM;
    }
    if (getrandom(&w->rng, sizeof(w->rng), 0) != sizeof(w->rng) || w->rng == 0)
        w->rng = mono_ns() | 1;
    if (cfg->access_log && alog_init(&w->alog, STDOUT_FILENO, 64 * 1024)) {
        snprintf(w->init_why, sizeof(w->init_why), "access log buffer: out of memory");
        return -ENOMEM;
    }
    w->want_accept = w->lfd >= 0;
    update_clock(w);
    return 0;
}

static void worker_teardown(struct worker *w)
{
    while (w->npark) { /* only after a drain timeout: nothing else is left */
        close(w->park[w->park_head]);
        w->park_head = (w->park_head + 1) % PARK_MAX;
        w->npark--;
    }
    free(w->park);
    w->park = NULL;
    if (w->cfg->access_log)
        alog_fini(&w->alog);
    prime_state_destroy(w->prime);
    w->prime = NULL;
    prime_thread_fini();
    io_fini(&w->io);
}

void *worker_main(void *arg)
{
    struct worker *w = arg;
    w->init_err = worker_setup(w);
    pthread_barrier_wait(&worker_start_barrier); /* the server reports set-up errors */
    pthread_barrier_wait(&worker_start_barrier); /* ... and lets us run, or not */
    if (w->init_err || atomic_load(&w->srv->draining) == 2)
        return NULL;

    struct io_event evs[MAX_EVENTS];
    accept_update(w);
    for (;;) {
        int timeout = next_timeout_ms(w);
        bool handoff = false;
        if (w->steal && atomic_load_explicit(&w->done, memory_order_relaxed)) {
            timeout = 0;
        } else if (w->steal && wsq_size(&w->q) > 0) {
            /* during a hand-off, wait on the ring for at most 1 ms, without
             * announcing sleep */
            handoff = handing_off(w);
            timeout = handoff ? 1 : 0;
        }
        if (timeout && w->steal && !handoff) {
            /* announce sleep, then look once more (pairs with wake_one_thief) */
            atomic_store_explicit(&w->sleeping, 1, memory_order_seq_cst);
            if (work_anywhere(w))
                timeout = 0;
        }
        if (timeout && !w->drain_seen && atomic_load_explicit(&w->srv->draining, memory_order_relaxed))
            timeout = 0;
        int n = io_wait(&w->io, evs, MAX_EVENTS, timeout);
        if (w->steal)
            atomic_store_explicit(&w->sleeping, 0, memory_order_relaxed);
        update_clock(w);
        if (n < 0 && n != -EINTR) {
            log_msg("worker %u: wait: %s", w->id, strerror(-n));
            n = 0;
        }
        for (int i = 0; i < n; i++) {
            const struct io_event *ev = &evs[i];
            struct conn *c;
            switch (ev->op) {
            case IO_OP_ACCEPT:
                on_accept(w, ev);
                break;
            case IO_OP_RECV:
                if ((c = conn_of(w, ev->tag)))
                    on_recv(w, c, ev->res);
                break;
            case IO_OP_SEND:
                if ((c = conn_of(w, ev->tag)))
                    on_send(w, c, ev->res);
                break;
            default:
                break; /* wakes: the checks below run anyway */
            }
        }
        if (w->steal) {
            drain_done(w);
            run_one_task(w);
        }
        expire_timers(w);
        if (w->npark)
            admit_parked(w);
        if (w->accept_retry_ms && w->now_ms >= w->accept_retry_ms) {
            w->accept_retry_ms = 0;
            accept_update(w);
        }
        if (!w->drain_seen && atomic_load_explicit(&w->srv->draining, memory_order_relaxed))
            drain_begin(w);
        if (w->drain_seen && w->open == 0 && w->npark == 0 && w->tasks_out == 0)
            break;
    }
    worker_teardown(w);
    return NULL;
}

int worker_render_metrics(struct worker *w, char **out)
{
    struct server *s = w->srv;
    struct metrics *ms[1024];
    int64_t depth = 0;
    for (unsigned i = 0; i < s->nworkers && i < 1024; i++) {
        ms[i] = &s->workers[i].metrics;
        depth += wsq_size(&s->workers[i].q);
    }
    struct metrics_view *v = malloc(sizeof(*v)); /* cold: one scrape */
    if (!v)
        return -ENOMEM;
    metrics_merge(ms, s->nworkers, v);
    struct metrics_info info = {
        .version = PRIMED_VERSION,
        .profile = PRIMED_PROFILE,
        .dispatch = config_dispatch_name(w->cfg->dispatch),
        .cc = PRIMED_CC,
        .engine = prime_engine_name(w->cfg->engine),
        .io = w->io.kind == IO_URING ? "io_uring" : "epoll",
        .queue_depth = w->steal ? depth : -1,
        .steal = w->steal,
        .start_time = s->start_time,
    };
    size_t cap = 64 * 1024;
    char *buf = malloc(cap);
    int len = buf ? metrics_render(v, &info, buf, cap) : -ENOMEM;
    free(v);
    if (len < 0) {
        free(buf);
        return len;
    }
    *out = buf;
    return len;
}
