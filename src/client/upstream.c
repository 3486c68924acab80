/* upstream.c - calls to upstreams on the worker's ring (upstream.h).
 *
 * An outgoing connection is a connection like the server's: a slot with a
 * generation in its tag, one receive and one send in flight at most, released
 * only when nothing of it is in flight. A connection always has its receive
 * armed once connected, idle ones too: an upstream that closes a pooled
 * connection is seen at once (as nginx's keepalive module does), and the
 * response of a call lands in the receive already in flight.
 * What is forwarded: the method, the URL's path, Host (the URL's authority),
 * User-Agent, the caller's extra lines (trace context) and a body with its
 * Content-Type and Content-Length; nothing of the client's request. Bounds:
 * the head (HTTP_RESPONSE_HEAD_MAX), the body (UPSTREAM_BODY_MAX) and the
 * call's deadline, which covers connect, send and the whole response: a slow
 * drip is a timeout, an endless body an error as soon as it passes the bound.
 */
#include "upstream.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "clock.h"
#include "strout.h"

enum { TIMER_CALL = 1, TIMER_IDLE };

enum upc_state {
    UPC_CONNECTING, /* connect in flight */
    UPC_BUSY,       /* carrying a call: sending and/or receiving its response */
    UPC_IDLE,       /* pooled, receive armed */
    UPC_DEAD,       /* closing: released once nothing is in flight */
};

#define UPC_F_RECV    0x01u
#define UPC_F_SEND    0x02u
#define UPC_F_CONNECT 0x04u

struct up_conn {
    struct timer timer;         /* idle deadline while pooled */
    struct up_conn *next;       /* idle list */
    struct slot slot;           /* index, generation, free list link */
    struct upstream_call *call; /* the call it carries, or NULL */
    int fd;
    unsigned up;
    uint8_t state, flags;
    bool reused;                  /* carried a call before this one */
    bool got_bytes;               /* the current call's response has begun */
    size_t wlen, woff;            /* request head + body: total, sent */
    struct sockaddr_storage addr; /* the kernel's while UPC_F_CONNECT: io_uring reads it at submission */
    struct msghdr msg;            /* the kernel's while UPC_F_SEND */
    struct iovec iov[2];
    struct http_response resp;
    char whead[UPSTREAM_HEAD_MAX];
    char rbuf[UPSTREAM_RBUF]; /* the kernel's while UPC_F_RECV */
    char body[UPSTREAM_BODY_MAX];
};

#define X_LABEL(id, label, text) label,
static const char *const labels[] = {UPSTREAM_RESULTS(X_LABEL)};
#undef X_LABEL
#define X_TEXT(id, label, text) text,
static const char *const texts[] = {UPSTREAM_RESULTS(X_TEXT)};
#undef X_TEXT

const char *upstream_result_label(enum upstream_result r)
{
    return r < UPSTREAM__RESULTS ? labels[r] : "error";
}

const char *const *upstream_result_labels(void)
{
    return labels;
}

const char *upstream_result_text(enum upstream_result r)
{
    return r < UPSTREAM__RESULTS ? texts[r] : "error";
}

static uint64_t tag_of(struct upstream_client *c, const struct up_conn *u)
{
    return slots_tag(&c->slots, &u->slot);
}

static struct up_conn *conn_of_tag(struct upstream_client *c, uint64_t tag)
{
    struct slot *s = slots_of_tag(&c->slots, tag);
    return s ? slots_elem(&c->slots, s, struct up_conn) : NULL;
}

static struct up_conn *of_timer(struct timer *t)
{
    return (struct up_conn *)((char *)t - offsetof(struct up_conn, timer));
}

static struct upstream_call *call_of_timer(struct timer *t)
{
    return (struct upstream_call *)((char *)t - offsetof(struct upstream_call, timer));
}

/* ---- calls ------------------------------------------------------------- */


static void count(struct upstream_client *c, unsigned up, enum upstream_result res)
{
    stats_add(&c->ups[up].stats->calls[res], 1);
}

/* Hands the call back to its owner: off every list first, since done may
 * start another call on the same struct. */
static void finish(struct upstream_client *c, struct upstream_call *call, enum upstream_result res, int err, int status,
                   const char *body, size_t len)
{
    timer_remove(&call->timer);
    call->where = UPCALL_IDLE;
    call->conn = NULL;
    count(c, call->up, res);
    stats_observe(&c->ups[call->up].stats->seconds, clock_mono_ns() - call->start_ns);
    call->done(call, res, err, status, body, len);
}

static void wait_unlink(struct upstream *up, struct upstream_call *call)
{
    if (fifo_remove(&up->wait, &call->wait))
        up->nwait--;
}

/* ---- connections ------------------------------------------------------- */

static void pump(struct upstream_client *c, unsigned up);

static void idle_unlink(struct upstream *up, struct up_conn *u)
{
    for (struct up_conn **pp = &up->idle; *pp; pp = &(*pp)->next) {
        if (*pp == u) {
            *pp = u->next;
            u->next = NULL;
            return;
        }
    }
}

/* Gives the slot back once nothing is in flight. */
static void release(struct upstream_client *c, struct up_conn *u)
{
    if (u->flags)
        return;
    timer_remove(&u->timer);
    io_conn_close(c->io, u->fd);
    io_close(c->io, u->fd);
    u->fd = -1;
    slots_put(&c->slots, &u->slot);
    c->ups[u->up].nconns--;
    pump(c, u->up); /* a waiting call may open a connection in its place */
}

/* Closes u: in-flight ops are cut short by shutdown() and complete. */
static void kill_conn(struct upstream_client *c, struct up_conn *u)
{
    if (u->state == UPC_IDLE)
        idle_unlink(&c->ups[u->up], u);
    if (u->state != UPC_DEAD) {
        u->state = UPC_DEAD;
        if (u->flags)
            io_shutdown(c->io, u->fd, SHUT_RDWR);
    }
    release(c, u);
}

/* Ends u's call with res and closes u. */
static void fail(struct upstream_client *c, struct up_conn *u, enum upstream_result res, int err)
{
    struct upstream_call *call = u->call;
    u->call = NULL;
    kill_conn(c, u);
    if (call)
        finish(c, call, res, err, 0, NULL, 0);
}

static void arm_recv(struct upstream_client *c, struct up_conn *u)
{
    if (u->flags & UPC_F_RECV)
        return;
    if (io_recv(c->io, u->fd, tag_of(c, u), u->rbuf, sizeof(u->rbuf), 0) == 0)
        u->flags |= UPC_F_RECV;
    else
        fail(c, u, UPSTREAM_ERROR, -EBUSY);
}

static void flush(struct upstream_client *c, struct up_conn *u)
{
    if ((u->flags & UPC_F_SEND) || u->woff >= u->wlen)
        return;
    struct upstream_call *call = u->call;
    size_t head = u->wlen - (call && call->body ? call->body_len : 0);
    int n = 0;
    if (u->woff < head)
        u->iov[n++] = (struct iovec){u->whead + u->woff, head - u->woff};
    if (call && call->body && u->wlen > head) {
        size_t boff = u->woff > head ? u->woff - head : 0;
        u->iov[n++] = (struct iovec){(char *)call->body + boff, call->body_len - boff};
    }
    memset(&u->msg, 0, sizeof(u->msg));
    u->msg.msg_iov = u->iov;
    u->msg.msg_iovlen = (size_t)n;
    if (io_send(c->io, u->fd, tag_of(c, u), &u->msg) == 0)
        u->flags |= UPC_F_SEND;
    else
        fail(c, u, UPSTREAM_ERROR, -EBUSY);
}

/* Puts call on u: formats the request and sends it. */
static void carry(struct upstream_client *c, struct up_conn *u, struct upstream_call *call)
{
    struct upstream *up = &c->ups[u->up];
    u->call = call;
    u->state = UPC_BUSY;
    u->got_bytes = false;
    call->conn = u;
    call->where = UPCALL_ACTIVE;
    timer_remove(&u->timer);
    http_response_init(&u->resp, u->body, sizeof(u->body));
    struct strout o = strout_init(u->whead, sizeof(u->whead));
    strout_str(&o, call->method);
    STROUT_LIT(&o, " ");
    strout_str(&o, call->path ? call->path : up->url->path);
    STROUT_LIT(&o, " HTTP/1.1\r\nHost: ");
    strout_str(&o, up->url->authority);
    STROUT_LIT(&o, "\r\nUser-Agent: ");
    strout_str(&o, c->user_agent);
    STROUT_LIT(&o, "\r\n");
    strout_str(&o, call->extra);
    if (call->body) {
        STROUT_LIT(&o, "Content-Type: ");
        strout_str(&o, call->ctype ? call->ctype : "application/octet-stream");
        STROUT_LIT(&o, "\r\nContent-Length: ");
        strout_uint(&o, call->body_len);
        STROUT_LIT(&o, "\r\n");
    }
    STROUT_LIT(&o, "\r\n");
    size_t n = strout_end(&o);
    if (n == 0) {
        fail(c, u, UPSTREAM_ERROR, -ENOSPC); /* cannot happen: url.h and extra are bounded */
        return;
    }
    u->wlen = n + (call->body ? call->body_len : 0);
    u->woff = 0;
    if (u->state == UPC_BUSY && !(u->flags & UPC_F_CONNECT)) {
        flush(c, u);
        if (u->state == UPC_BUSY)
            arm_recv(c, u);
    }
}

/* Opens a connection for call. Returns false with *res when it cannot. */
static bool dial(struct upstream_client *c, unsigned upi, struct upstream_call *call, enum upstream_result *res)
{
    struct upstream *up = &c->ups[upi];
    struct sockaddr_storage addr;
    socklen_t alen;
    if (!resolver_get(up->target, &addr, &alen)) {
        *res = UPSTREAM_UNRESOLVED;
        return false;
    }
    bool fresh;
    struct slot *sl = slots_take(&c->slots, &fresh);
    if (!sl) {
        *res = UPSTREAM_ERROR; /* cannot happen: nslots = nups * max_conns */
        return false;
    }
    struct up_conn *u = slots_elem(&c->slots, sl, struct up_conn);
    int fd = io_socket(c->io, addr.ss_family);
    if (fd < 0) {
        u->fd = -1;
        slots_put(&c->slots, &u->slot);
        *res = UPSTREAM_ERROR;
        return false;
    }
    u->fd = fd;
    u->up = upi;
    u->flags = 0;
    u->call = NULL;
    u->next = NULL;
    u->reused = false;
    timer_init(&u->timer);
    up->nconns++;
    u->state = UPC_CONNECTING;
    u->addr = addr;
    if (io_conn_open(c->io, fd) < 0 || io_connect(c->io, fd, tag_of(c, u), (struct sockaddr *)&u->addr, alen) < 0) {
        kill_conn(c, u);
        *res = UPSTREAM_ERROR;
        return false;
    }
    u->flags |= UPC_F_CONNECT;
    carry(c, u, call); /* formats now; sends once connected */
    return true;
}

/* The most recently pooled connection of up (LIFO keeps the warm ones busy). */
static struct up_conn *idle_pop(struct upstream *up)
{
    struct up_conn *u = up->idle;
    up->idle = u->next;
    u->next = NULL;
    return u;
}

/* Starts waiting calls while connections are free or can be opened. */
static void pump(struct upstream_client *c, unsigned upi)
{
    struct upstream *up = &c->ups[upi];
    while (!fifo_empty(&up->wait)) {
        if (!up->idle && up->nconns >= c->max_conns)
            return;
        struct upstream_call *call = fifo_entry(fifo_pop(&up->wait), struct upstream_call, wait);
        up->nwait--;
        if (up->idle) {
            carry(c, idle_pop(up), call);
            continue;
        }
        enum upstream_result res;
        if (!dial(c, upi, call, &res))
            finish(c, call, res, 0, 0, NULL, 0);
    }
}

bool upstream_start(struct upstream_client *c, unsigned upi, struct upstream_call *call, enum upstream_result *res)
{
    struct upstream *up = &c->ups[upi];
    uint64_t deadline = *c->now_ms + c->timeout_ms;
    if (call->deadline_ms && call->deadline_ms < deadline)
        deadline = call->deadline_ms;
    call->up = upi;
    call->wait.next = NULL;
    call->conn = NULL;
    call->retried = false;
    call->why = NULL;
    call->start_ns = clock_mono_ns();
    timer_init(&call->timer);
    if (up->idle) {
        timer_add(&c->deadlines, &call->timer, deadline);
        carry(c, idle_pop(up), call);
        return true;
    }
    if (up->nconns < c->max_conns) {
        if (!dial(c, upi, call, res)) {
            count(c, upi, *res);
            return false;
        }
        timer_add(&c->deadlines, &call->timer, deadline);
        return true;
    }
    /* every connection busy: wait in order (backpressure, never a refusal) */
    call->where = UPCALL_QUEUED;
    fifo_push(&up->wait, &call->wait);
    up->nwait++;
    timer_add(&c->deadlines, &call->timer, deadline);
    return true;
}

void upstream_cancel(struct upstream_client *c, struct upstream_call *call)
{
    timer_remove(&call->timer);
    if (call->where == UPCALL_QUEUED)
        wait_unlink(&c->ups[call->up], call);
    else if (call->where == UPCALL_ACTIVE && call->conn) {
        struct up_conn *u = call->conn;
        u->call = NULL;
        kill_conn(c, u); /* its response would be unread: not reusable */
    }
    call->where = UPCALL_IDLE;
    call->conn = NULL;
}

/* ---- completions -------------------------------------------------------- */

/* u's call got its whole response. */
static void complete(struct upstream_client *c, struct up_conn *u, bool extra_bytes)
{
    struct upstream_call *call = u->call;
    struct upstream *up = &c->ups[u->up];
    u->call = NULL;
    u->reused = true;
    bool reuse = u->resp.keep_alive && !extra_bytes && u->state == UPC_BUSY && !c->draining;
    if (reuse) {
        u->state = UPC_IDLE;
        u->next = up->idle;
        up->idle = u;
        timer_add(&c->idle, &u->timer, *c->now_ms + UPSTREAM_IDLE_MS);
    }
    /* the body is in u->body: finish before u can carry another call */
    if (call)
        finish(c, call, UPSTREAM_OK, 0, u->resp.status, u->body, u->resp.body_len);
    if (!reuse)
        kill_conn(c, u);
    else
        pump(c, u->up);
}

/* A reused connection closed before a byte of the answer: the upstream
 * closed it idle while we sent. Sent again once on a new connection (the
 * calls primed makes are GET or an idempotent span batch). */
static bool retry(struct upstream_client *c, struct up_conn *u)
{
    struct upstream_call *call = u->call;
    if (!call || !u->reused || u->got_bytes || call->retried)
        return false;
    call->retried = true;
    u->call = NULL;
    kill_conn(c, u);
    struct upstream *up = &c->ups[call->up];
    call->where = UPCALL_QUEUED;
    fifo_push_front(&up->wait, &call->wait); /* it goes first: it was sent before the waiting ones */
    up->nwait++;
    pump(c, call->up);
    return true;
}

static void on_recv(struct upstream_client *c, struct up_conn *u, int res)
{
    if (u->state == UPC_DEAD) {
        release(c, u);
        return;
    }
    if (u->state == UPC_IDLE) {
        /* closed by the upstream, or bytes nobody asked for: not reusable */
        kill_conn(c, u);
        return;
    }
    if (res < 0 && (res == -EAGAIN || res == -EINTR)) {
        arm_recv(c, u);
        return;
    }
    if (res < 0) {
        if (!retry(c, u))
            fail(c, u, res == -ECONNRESET || res == -EPIPE ? UPSTREAM_RESET : UPSTREAM_ERROR, res);
        return;
    }
    if (res == 0) {
        if (retry(c, u))
            return;
        enum http_response_status st = u->got_bytes ? http_response_eof(&u->resp) : HRESP_ERROR;
        if (st == HRESP_DONE) {
            u->resp.keep_alive = false;
            complete(c, u, false);
        } else {
            if (u->call)
                u->call->why = u->got_bytes ? u->resp.why : "closed before answering";
            fail(c, u, UPSTREAM_CLOSED, 0);
        }
        return;
    }
    u->got_bytes = true;
    size_t used = 0;
    enum http_response_status st = http_response_feed(&u->resp, u->rbuf, (size_t)res, &used);
    if (st == HRESP_ERROR) {
        bool big = u->resp.why && strstr(u->resp.why, "too large");
        if (u->call)
            u->call->why = u->resp.why;
        fail(c, u, big ? UPSTREAM_TOO_LARGE : UPSTREAM_BAD, 0);
        return;
    }
    if (st == HRESP_DONE) {
        complete(c, u, used < (size_t)res);
        if (u->state == UPC_IDLE)
            arm_recv(c, u);
        return;
    }
    arm_recv(c, u);
}

static void on_send(struct upstream_client *c, struct up_conn *u, int res)
{
    if (u->state == UPC_DEAD) {
        release(c, u);
        return;
    }
    if (res < 0 && (res == -EAGAIN || res == -EINTR)) {
        flush(c, u);
        return;
    }
    if (res < 0) {
        if (!retry(c, u))
            fail(c, u, res == -ECONNRESET || res == -EPIPE ? UPSTREAM_RESET : UPSTREAM_ERROR, res);
        return;
    }
    u->woff += (size_t)res;
    flush(c, u);
}

static void on_connect(struct upstream_client *c, struct up_conn *u, int res)
{
    if (u->state == UPC_DEAD) {
        release(c, u);
        return;
    }
    if (res < 0) {
        resolver_stale(c->ups[u->up].target); /* the address may have moved */
        fail(c, u, UPSTREAM_CONNECT, res);
        return;
    }
    u->state = UPC_BUSY;
    if (!u->call) { /* cannot happen: a connection is dialled for a call */
        kill_conn(c, u);
        return;
    }
    flush(c, u);
    if (u->state == UPC_BUSY)
        arm_recv(c, u);
}

void upstream_on_event(struct upstream_client *c, const struct io_event *ev)
{
    struct up_conn *u = conn_of_tag(c, ev->tag);
    if (!u)
        return;
    if (ev->op == IO_OP_RECV) {
        u->flags &= (uint8_t)~UPC_F_RECV;
        on_recv(c, u, ev->res);
    } else if (ev->op == IO_OP_SEND) {
        u->flags &= (uint8_t)~UPC_F_SEND;
        on_send(c, u, ev->res);
    } else if (ev->op == IO_OP_CONNECT) {
        u->flags &= (uint8_t)~UPC_F_CONNECT;
        on_connect(c, u, ev->res);
    }
}

/* ---- timers and the client ----------------------------------------------- */

static void on_call_deadline(struct timer *t, void *ctx)
{
    struct upstream_client *c = ctx;
    struct upstream_call *call = call_of_timer(t);
    if (call->where == UPCALL_QUEUED) {
        wait_unlink(&c->ups[call->up], call);
        finish(c, call, UPSTREAM_TIMEOUT, 0, 0, NULL, 0);
        return;
    }
    struct up_conn *u = call->conn;
    if (u) {
        u->call = NULL;
        kill_conn(c, u); /* a late answer would be read by nobody */
    }
    finish(c, call, UPSTREAM_TIMEOUT, 0, 0, NULL, 0);
}

static void on_idle_deadline(struct timer *t, void *ctx)
{
    kill_conn(ctx, of_timer(t));
}

void upstream_expire(struct upstream_client *c)
{
    timer_expire(&c->deadlines, *c->now_ms, on_call_deadline, c);
    timer_expire(&c->idle, *c->now_ms, on_idle_deadline, c);
}

uint64_t upstream_next_deadline(const struct upstream_client *c, uint64_t none)
{
    uint64_t a = timer_next(&c->deadlines, none), b = timer_next(&c->idle, none);
    return a < b ? a : b;
}

unsigned upstream_busy(const struct upstream_client *c)
{
    unsigned n = 0;
    for (uint32_t i = 0; i < c->slots.fresh; i++)
        if (c->conns[i].fd >= 0 && c->conns[i].flags)
            n++;
    return n;
}

void upstream_drain(struct upstream_client *c)
{
    c->draining = true;
    for (unsigned i = 0; i < c->nups; i++)
        while (c->ups[i].idle)
            kill_conn(c, c->ups[i].idle);
}

int upstream_add(struct upstream_client *c, const struct url *url, struct resolver_target *target,
                 struct upstream_stats *stats)
{
    if (c->nups >= UPSTREAM_MAX)
        return -ENOSPC;
    struct upstream *up = &c->ups[c->nups];
    memset(up, 0, sizeof(*up));
    up->url = url;
    up->target = target;
    up->stats = stats;
    snprintf(up->name, sizeof(up->name), "%s", url->authority);
    return (int)c->nups++;
}

int upstream_client_init(struct upstream_client *c)
{
    timer_list_init(&c->deadlines, TIMER_CALL);
    timer_list_init(&c->idle, TIMER_IDLE);
    c->nslots = c->nups * c->max_conns;
    c->conns = NULL;
    slots_init(&c->slots, NULL, sizeof(*c->conns), offsetof(struct up_conn, slot), 0, c->owner);
    if (c->nslots == 0)
        return 0;
    /* calloc of this size is mmap'd: a slot's pages are touched when first used */
    c->conns = calloc(c->nslots, sizeof(*c->conns));
    if (!c->conns)
        return -ENOMEM;
    slots_init(&c->slots, c->conns, sizeof(*c->conns), offsetof(struct up_conn, slot), c->nslots, c->owner);
    return 0;
}

void upstream_client_fini(struct upstream_client *c)
{
    for (uint32_t i = 0; c->conns && i < c->slots.fresh; i++) {
        if (c->conns[i].fd >= 0) {
            io_conn_close(c->io, c->conns[i].fd);
            io_close(c->io, c->conns[i].fd);
            c->conns[i].fd = -1;
        }
    }
    free(c->conns);
    c->conns = NULL;
}
