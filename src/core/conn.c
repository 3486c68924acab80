/* conn.c - the connection state machine (conn.h): slots, buffers, parse and
 * answer, flush, rearm, lingering close, timers.
 *
 * Invariants: a slot is released only when no receive or send of it is in
 * flight and no wait of it is out, so a completion or an answer always finds
 * its connection (or is dropped by its generation); responses leave in
 * request order (the parser stops at each message boundary while a request is
 * served); no allocation on the hot path. Never a direct syscall: everything
 * goes through io.h. What a request means is the app's (p->app): this file
 * knows no route.
 */
#include "conn.h"

#include <assert.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "clock.h"
#include "log.h"

enum { TIMER_IDLE = 1, TIMER_HEADER, TIMER_LINGER };

uint64_t conn_tag(const struct conn *c)
{
    return slots_tag(&c->pool->slots, &c->slot);
}

struct conn *conn_of(struct conn_pool *p, uint64_t tag)
{
    struct slot *s = slots_of_tag(&p->slots, tag);
    return s ? slots_elem(&p->slots, s, struct conn) : NULL;
}

static bool gone(const struct conn *c)
{
    return c->state == CONN_DEAD;
}

static void idle_timer(struct conn_pool *p, struct conn *c)
{
    timer_add(&p->idle, &c->timer, p->now_ms + p->lim.idle_timeout_ms);
}

/* One pair of the arena: the read buffer, the write buffer, and the
 * parser's storage for the header values the app keeps (pool->keep). */
static size_t pair_size(const struct conn_pool *p)
{
    size_t kept = p->keep ? p->keep->size : 0;
    return ((size_t)p->lim.max_header + CONN_WBUF_SIZE + kept + 7) & ~(size_t)7;
}

/* Lends c a buffer pair, the most recently returned first. Never fails: a
 * connection holds at most one, and there are as many as slots. Lent
 * between messages only (buf_idle keeps the pair while one is parsed). */
static void buf_take(struct conn_pool *p, struct conn *c)
{
    if (c->rbuf)
        return;
    uint32_t i = p->nbuf_free ? p->buf_free[--p->nbuf_free] : p->buf_fresh++;
    c->rbuf = p->arena + (size_t)i * pair_size(p);
    c->wbuf = c->rbuf + p->lim.max_header;
    http_lend(&c->http, p->keep ? c->wbuf + CONN_WBUF_SIZE : NULL);
}

static void buf_give(struct conn_pool *p, struct conn *c)
{
    if (!c->rbuf)
        return;
    p->buf_free[p->nbuf_free++] = (uint32_t)((size_t)(c->rbuf - p->arena) / pair_size(p));
    c->rbuf = c->wbuf = NULL;
    http_lend(&c->http, NULL);
}

/* Gives c's outside body back, once sent or when c closes. */
static void ext_release(struct conn *c)
{
    struct conn_body b = c->ext;
    if (!b.data)
        return;
    c->ext.data = NULL;
    if (b.release)
        b.release(b.arg, b.data);
}

/* c's request took its body (the app's head hook) and ends before it: the
 * app lets go of what it kept. */
static void body_dropped(struct conn_pool *p, struct conn *c)
{
    if (!c->http.want_body)
        return;
    c->http.want_body = false;
    if (p->app.dropped)
        p->app.dropped(p->app.ctx, c);
}

/* Gives the slot back once nothing of c is in flight (else: called again
 * when the last of them completes). c stays CONN_DEAD: a caller that checks
 * after a call that may have released the slot reads "dead", never a
 * cleared slot; only conn_start() (from the loop) reuses it. */
static void conn_release(struct conn_pool *p, struct conn *c)
{
    if ((c->flags & (CONN_F_RECV | CONN_F_SEND)) || c->fd < 0)
        return;
    body_dropped(p, c);
    timer_remove(&c->timer);
    if (c->flags & CONN_F_PAUSED)
        fifo_remove(&p->paused, &c->paused); /* cold: backpressure only */
    io_conn_close(p->io, c->fd);
    io_close(p->io, c->fd);
    ext_release(c);
    buf_give(p, c);
    c->fd = -1;
    c->state = CONN_DEAD;
    c->flags = 0;
    slots_put(&p->slots, &c->slot);
    p->nopen--;
    stats_gauge_add(&p->stats->conns_open, -1);
}

/* Closes now: in-flight operations are cut short by shutdown() and the slot
 * is released when they complete. A waiting request is cancelled: the app
 * stops its work and never answers it. */
static void conn_abort(struct conn_pool *p, struct conn *c)
{
    if (!gone(c)) {
        bool waiting = c->state == CONN_WAITING;
        c->state = CONN_DEAD;
        if (waiting) {
            conn_cancel_fn *cancel = c->cancel;
            c->cancel = NULL;
            stats_gauge_add(&p->stats->in_flight, -1); /* never answered: the client went away */
            if (cancel)
                cancel(c, c->cancel_arg);
        }
        if (c->flags & (CONN_F_RECV | CONN_F_SEND))
            io_shutdown(p->io, c->fd, SHUT_RDWR);
    }
    conn_release(p, c);
}

/* Arms c's receive: a select receive when nothing of a request is in its
 * buffer (its bytes land in the backend's buffer), else into the free end
 * of its own. */
static void arm_recv(struct conn_pool *p, struct conn *c, unsigned hints)
{
    int r;
    if (p->select && c->rlen == 0) {
        r = io_recv_select(p->io, c->fd, conn_tag(c), hints);
        if (r == 0)
            c->flags |= CONN_F_RECV | CONN_F_SELECT;
    } else {
        buf_take(p, c);
        r = io_recv(p->io, c->fd, conn_tag(c), c->rbuf + c->rlen, p->lim.max_header - c->rlen, hints);
        if (r == 0)
            c->flags |= CONN_F_RECV;
    }
    if (r != 0)
        conn_abort(p, c);
}

/* Between requests: gives c's pair back when nothing of it is in use. */
static void buf_idle(struct conn_pool *p, struct conn *c)
{
    if (p->select && c->rbuf && c->rlen == 0 && c->wlen == 0 && !c->ext.data && c->state != CONN_WAITING &&
        !c->http.in_message &&
        !(c->flags & CONN_F_SEND) && (!(c->flags & CONN_F_RECV) || (c->flags & CONN_F_SELECT)))
        buf_give(p, c);
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
    c->rlen = c->rpos = c->msg_start = 0; /* what is left is dropped */
    if (!(c->flags & CONN_F_RECV))
        arm_recv(p, c, 0);
    if (!gone(c))
        buf_idle(p, c);
}

static void conn_flush(struct conn_pool *p, struct conn *c)
{
    if ((c->flags & CONN_F_SEND) || gone(c))
        return;
    int n = 0;
    if (c->woff < c->wlen)
        c->iov[n++] = (struct iovec){c->wbuf + c->woff, c->wlen - c->woff};
    if (c->ext.data && c->ext_off < c->ext_len)
        c->iov[n++] = (struct iovec){c->ext.data + c->ext_off, c->ext_len - c->ext_off};
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

/* Queues one response in c's buffer: the app records it and adds its header
 * lines first (refused: the core's own answer, BAD_NONE otherwise). */
static void queue_response(struct conn_pool *p, struct conn *c, struct resp *r, const struct conn_body *body,
                           enum bad_reason refused)
{
    uint64_t dur = clock_mono_ns() - c->req_start_ns;
    buf_take(p, c);
    r->extra = NULL;
    r->head = refused == BAD_NONE && c->http.req.head; /* a refusal's body goes out, even to HEAD */
    p->app.finish(p->app.ctx, c, r, dur, refused);
    stats_gauge_add(&p->stats->in_flight, -1);

    size_t n = resp_format(c->wbuf + c->wlen, CONN_WBUF_SIZE - c->wlen, r, p->date, body == NULL);
    if (n == 0) {
        /* cannot happen: conn_process() keeps RESP_MAX free; refuse loudly */
        if (body && body->release)
            body->release(body->arg, body->data);
        log_msg("worker %u: response for status %d does not fit; closing", p->id, r->status);
        conn_abort(p, c);
        return;
    }
    c->wlen += (uint32_t)n;
    if (body && !r->head) {
        c->ext = *body;
        c->ext_len = r->body_len;
        c->ext_off = 0;
    } else if (body && body->release) {
        body->release(body->arg, body->data);
    }
    if (!r->keep_alive && !gone(c))
        c->state = CONN_FINAL; /* a dead connection stays dead (a 408 at its header deadline) */
}

/* A request begins: its clock and the in-flight count. */
static void begin_request(struct conn_pool *p, struct conn *c)
{
    c->req_start_ns = clock_mono_ns();
    stats_gauge_add(&p->stats->in_flight, 1);
}

static void respond_refusal(struct conn_pool *p, struct conn *c, int status, enum bad_reason why)
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
        [BAD_TARGET] = "request target not allowed here (RFC 9112 3.2)\n",
        [BAD_VERSION] = "HTTP version not supported: this server speaks HTTP/1.1\n",
        [BAD_METHOD] = "CONNECT not supported: this is an origin server, not a proxy\n",
        [BAD_CHUNK] = "chunk extension too long\n",
    };
    body_dropped(p, c);
    stats_add(&p->stats->bad[why], 1);
    begin_request(p, c);
    struct resp r = {
        .status = status,
        .ctype = "text/plain; charset=utf-8",
        .body = bodies[why] ? bodies[why] : "bad request\n",
        .keep_alive = false,
    };
    r.body_len = strlen(r.body);
    queue_response(p, c, &r, NULL, why);
}

static void conn_process(struct conn_pool *p, struct conn *c);
static void conn_rearm(struct conn_pool *p, struct conn *c);

void conn_wait(struct conn *c, conn_cancel_fn *cancel, void *arg)
{
    /* what conn.h promises: a request in hand, not yet answered */
    assert(!gone(c) && (c->answering || c->state == CONN_WAITING));
    c->state = CONN_WAITING;
    c->cancel = cancel;
    c->cancel_arg = arg;
}

void conn_answer(struct conn *c, struct resp *r, const struct conn_body *body)
{
    struct conn_pool *p = c->pool;
    if (gone(c)) {
        /* the app answers a request of a connection that closed under it:
         * cannot happen (its wait was cancelled); give the body back */
        if (body && body->release)
            body->release(body->arg, body->data);
        return;
    }
    bool waited = c->state == CONN_WAITING;
    if (waited) {
        c->state = CONN_READING;
        c->cancel = NULL;
    }
    queue_response(p, c, r, body, BAD_NONE);
    if (waited && !c->answering)
        conn_process(p, c); /* else the conn_process() that started the wait goes on */
}

static void handle_request(struct conn_pool *p, struct conn *c)
{
    begin_request(p, c);
    c->answering = true;
    p->app.request(p->app.ctx, c);
    c->answering = false;
}

/* http_head_fn: the head of c's request is complete; the app routes it. */
static bool on_head(void *ctx, const struct http_req *rq, const char *url, size_t len)
{
    struct conn *c = ctx;
    return c->pool->app.head(c->pool->app.ctx, c, rq, url, len);
}

/* http_body_fn: a piece of a body the app reads. */
static int on_body(void *ctx, const char *at, size_t len)
{
    struct conn *c = ctx;
    return c->pool->app.body(c->pool->app.ctx, c, at, len);
}

/* Parses and answers what is in the read buffer, as far as it can go. */
static void conn_process(struct conn_pool *p, struct conn *c)
{
    while (c->state == CONN_READING) {
        if (c->ext.data || CONN_WBUF_SIZE - c->wlen < RESP_MAX + CONN_CONTINUE_LEN)
            break; /* resumes when the send completes */
        if (c->rpos >= c->rlen)
            break;
        size_t pos = c->rpos;
        enum http_status st = http_feed(&c->http, c->rbuf, &pos, c->rlen);
        c->rpos = (uint32_t)pos;
        if (c->http.send_continue) {
            /* before the final answer, which needs the body first */
            c->http.send_continue = false;
            memcpy(c->wbuf + c->wlen, CONN_CONTINUE, CONN_CONTINUE_LEN);
            c->wlen += (uint32_t)CONN_CONTINUE_LEN;
        }
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
    bool unsent = (c->flags & CONN_F_SEND) || c->woff < c->wlen || c->ext.data;
    bool busy = c->state == CONN_WAITING;

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
        if (c->rbuf)
            http_compact(&c->http, c->rbuf, &c->rlen, &c->rpos, &c->msg_start);
        bool throttled = p->throttle && *p->throttle;
        if (c->rlen == p->lim.max_header) {
            if (c->http.in_message && !c->http.head_done && c->rpos == c->rlen) {
                respond_refusal(p, c, 431, BAD_HEADER_TOO_LARGE);
                conn_flush(p, c);
                idle_timer(p, c);
                return;
            }
            /* full of pipelined requests: read on once they are answered */
        } else if (throttled) {
            /* Backpressure: read no more. A connection joins the paused
             * list (at the end: the oldest pause resumes first) once it has
             * no request in hand and its answer is out, when its client may
             * send the next one: the list is then in the order the requests
             * can arrive in. Paused at the read instead, a connection kept
             * its place while its client waited for the answer, and under
             * overload the next request on it overtook older ones that had
             * met a full landing ring (-ENOBUFS) and paused again behind it.
             * Busy or sending, it comes back here when that is done. */
            if (!(c->flags & CONN_F_PAUSED) && !busy && !unsent) {
                c->flags |= CONN_F_PAUSED;
                fifo_push(&p->paused, &c->paused);
            }
        } else {
            /* behind a response (unsent), the client is rarely sending yet */
            arm_recv(p, c, unsent ? IO_RECV_LATER : 0);
            if (gone(c))
                return;
        }
    }
    buf_idle(p, c);

    if (busy || (!unsent && (c->flags & CONN_F_PAUSED))) {
        /* the server is working, or holding the client back (backpressure):
         * no client timer runs; overload is latency, never an abort */
        timer_remove(&c->timer);
    } else if (unsent) {
        idle_timer(p, c);
    } else if (c->http.in_message && c->http.head_done) {
        /* a body: it may take long, but must make progress; each receive
         * restarts the idle timer (the header timer is for the head alone) */
        idle_timer(p, c);
    } else if (c->http.in_message) {
        if (!timer_on(&c->timer, &p->header))
            timer_add(&p->header, &c->timer, p->now_ms + p->lim.header_timeout_ms);
    } else {
        /* draining: a connection between requests gets a short grace to send
         * the request it may have in flight, then is closed */
        unsigned idle = p->lim.idle_timeout_ms;
        if (p->drain_seen && idle > CONN_DRAIN_IDLE_MS)
            idle = CONN_DRAIN_IDLE_MS;
        timer_add(&p->idle, &c->timer, p->now_ms + idle);
    }
}

/* ---- the pool ------------------------------------------------------------ */

bool conn_pool_has_slot(const struct conn_pool *p)
{
    return slots_has_free(&p->slots);
}

void conn_start(struct conn_pool *p, int fd)
{
    bool fresh;
    struct conn *c = slots_elem(&p->slots, slots_take(&p->slots, &fresh), struct conn);
    if (fresh) {
        /* set up on first use, so that start-up touches none of the table
         * or the arena (start-up time and idle RSS do not grow with
         * --max-conns) */
        c->pool = p;
        c->rbuf = c->wbuf = NULL;
    }
    c->fd = fd;
    c->state = CONN_READING;
    c->flags = 0;
    timer_init(&c->timer);
    c->rlen = c->rpos = c->msg_start = 0;
    c->wlen = c->woff = 0;
    c->ext = (struct conn_body){0};
    c->ext_len = c->ext_off = 0;
    c->cancel = NULL;
    c->paused.next = NULL;
    http_init(&c->http, &p->limits);
    c->http.head_ctx = c;
    p->nopen++;
    stats_gauge_add(&p->stats->conns_open, 1);
    stats_add(&p->stats->accepts, 1);
    if (io_conn_open(p->io, fd) < 0) {
        conn_abort(p, c);
        return;
    }
    conn_rearm(p, c);
}

/* A select receive's bytes go to the end of c's own buffer (lent now if
 * it has none); the backend's buffer goes straight back. False: they do not
 * fit (cannot happen: a select receive is armed only on an empty buffer,
 * and the backend lands at most select_len <= max_header bytes). */
static bool take_landed(struct conn_pool *p, struct conn *c, const struct io_event *ev)
{
    buf_take(p, c);
    bool fits = (size_t)ev->res <= p->lim.max_header - c->rlen;
    if (fits) {
        memcpy(c->rbuf + c->rlen, ev->buf, (size_t)ev->res);
        c->rlen += (uint32_t)ev->res;
    }
    io_buf_put(p->io, ev->buf);
    return fits;
}

static void on_recv(struct conn_pool *p, const struct io_event *ev)
{
    struct conn *c = conn_of(p, ev->tag);
    int res = ev->res;
    if (!c) {
        io_buf_put(p->io, ev->buf);
        return;
    }
    c->flags &= (uint8_t)~(CONN_F_RECV | CONN_F_SELECT);
    if (gone(c)) {
        io_buf_put(p->io, ev->buf);
        conn_release(p, c);
        return;
    }
    if (c->state == CONN_LINGER) {
        io_buf_put(p->io, ev->buf); /* dropped */
        if (res <= 0 && res != -ENOBUFS) {
            conn_abort(p, c);
            return;
        }
        arm_recv(p, c, 0);
        if (!gone(c))
            buf_idle(p, c);
        return;
    }
    if (res == 0) {
        c->flags |= CONN_F_EOF;
    } else if (res < 0) {
        if (res == -EAGAIN || res == -EINTR || res == -ENOBUFS) {
            conn_rearm(p, c);
            return;
        }
        conn_abort(p, c);
        return;
    } else if (ev->buf) {
        if (!take_landed(p, c, ev)) {
            log_msg("worker %u: a select receive overran the read buffer; closing", p->id);
            conn_abort(p, c);
            return;
        }
    } else {
        c->rlen += (uint32_t)res;
    }
    conn_process(p, c);
}

static void on_send(struct conn_pool *p, uint64_t tag, int res)
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
        if (c->ext.data && c->ext_off >= c->ext_len)
            ext_release(c);
    }
    conn_process(p, c);
}

void conn_on_event(struct conn_pool *p, const struct io_event *ev)
{
    if (ev->op == IO_OP_RECV)
        on_recv(p, ev);
    else if (ev->op == IO_OP_SEND)
        on_send(p, ev->tag, ev->res);
}

void conn_pool_resume(struct conn_pool *p)
{
    struct fifo_link *l = fifo_take(&p->paused);
    while (l) { /* oldest first */
        struct conn *c = fifo_entry(l, struct conn, paused);
        l = l->next;
        c->paused.next = NULL;
        c->flags &= (uint8_t)~CONN_F_PAUSED;
        conn_rearm(p, c);
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

void conn_pool_expire(struct conn_pool *p)
{
    timer_expire(&p->header, p->now_ms, on_header_deadline, p);
    timer_expire(&p->idle, p->now_ms, on_close_deadline, p);
    timer_expire(&p->linger, p->now_ms, on_close_deadline, p);
}

uint64_t conn_pool_next_deadline(const struct conn_pool *p, uint64_t none)
{
    uint64_t next = timer_next(&p->idle, none);
    uint64_t h = timer_next(&p->header, none), l = timer_next(&p->linger, none);
    if (h < next)
        next = h;
    if (l < next)
        next = l;
    return next;
}

void conn_pool_drain(struct conn_pool *p)
{
    p->drain_seen = true;
    for (uint32_t i = 0; i < p->slots.fresh; i++) {
        struct conn *c = &p->conns[i];
        if (c->fd < 0 || !timer_on(&c->timer, &p->idle) || (c->flags & CONN_F_SEND) || c->state == CONN_FINAL)
            continue;
        if (c->timer.deadline_ms > p->now_ms + CONN_DRAIN_IDLE_MS)
            timer_add(&p->idle, &c->timer, p->now_ms + CONN_DRAIN_IDLE_MS);
    }
}

int conn_pool_init(struct conn_pool *p)
{
    p->limits.max_url = p->lim.max_url;
    p->limits.max_body = p->lim.max_body;
    p->limits.max_header = p->lim.max_header;
    p->limits.on_head = on_head;
    p->limits.on_body = p->app.body ? on_body : NULL;
    p->limits.keep = p->keep;
    timer_list_init(&p->idle, TIMER_IDLE);
    timer_list_init(&p->header, TIMER_HEADER);
    timer_list_init(&p->linger, TIMER_LINGER);
    p->conns = calloc(p->nslots, sizeof(*p->conns));
    /* calloc of this size is mmap'd: pages are touched only by connections in use */
    p->arena = calloc(p->nslots, pair_size(p));
    p->buf_free = calloc(p->nslots, sizeof(*p->buf_free));
    p->nbuf_free = p->buf_fresh = 0;
    p->select = p->io->select_len > 0 && p->io->select_len <= p->lim.max_header;
    if (!p->conns || !p->arena || !p->buf_free) {
        conn_pool_fini(p);
        return -ENOMEM;
    }
    slots_init(&p->slots, p->conns, sizeof(*p->conns), offsetof(struct conn, slot), p->nslots, SLOTS_OWNER_CONN);
    return 0;
}

void conn_pool_fini(struct conn_pool *p)
{
    for (uint32_t i = 0; p->conns && i < p->slots.fresh; i++)
        ext_release(&p->conns[i]);
    free(p->conns);
    free(p->arena);
    free(p->buf_free);
    p->conns = NULL;
    p->arena = NULL;
    p->buf_free = NULL;
}
