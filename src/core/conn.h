/* conn.h - the connection state machine and the table of connection slots.
 *
 * A pool is one worker's connections: preallocated slots with their read and
 * write buffers, the timer lists, the paused list. It speaks to the kernel
 * through io.h only (a scripted backend drives it in tests/core/test_conn.c) and
 * knows nothing of what a request means: the app given in p->app routes each
 * request when its head is complete, answers it, and records each response.
 *
 * One way to wait: the app answers a request at once (conn_answer), or starts
 * work and calls conn_wait() with a cancel hook; whatever finishes the work
 * calls conn_answer() on the connection's own worker. conn.c is the only
 * writer of conn->state.
 */
#ifndef PRIMED_CONN_H
#define PRIMED_CONN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "fifo.h"
#include "http.h"
#include "io.h"
#include "resp.h"
#include "slots.h"
#include "stats.h"
#include "timer.h"

/* Where a connection is. Exactly one at a time. */
enum conn_state {
    CONN_READING, /* reading and answering requests (responses may be unsent) */
    CONN_WAITING, /* its request waits on the app's work (conn_wait) */
    CONN_FINAL,   /* its last response is queued: send it, then linger */
    CONN_LINGER,  /* write side shut; reading and dropping until EOF or timeout */
    CONN_DEAD,    /* aborted: released once nothing is in flight; stays DEAD once released */
};

/* In-flight bits and the two conditions that cut across the states. */
#define CONN_F_RECV   0x01u /* a receive is in flight */
#define CONN_F_SEND   0x02u /* a send is in flight */
#define CONN_F_EOF    0x04u /* the client shut its write side */
#define CONN_F_PAUSED 0x08u /* receive not armed while the pool is throttled (on the paused list) */
#define CONN_F_SELECT 0x10u /* the receive in flight is a select receive (no buffer of c's) */

/* An inline body (copied into the write buffer) is at most CONN_BODY_MAX
 * bytes; a longer one goes out from a struct conn_body. The parser runs only
 * while RESP_MAX bytes of the write buffer are free. */
#define CONN_WBUF_SIZE 4096
#define CONN_BODY_MAX  640
#define RESP_MAX       (RESP_HEAD_MAX + CONN_BODY_MAX)
/* The interim answer to Expect: 100-continue, for a body the app reads. */
#define CONN_CONTINUE     "HTTP/1.1 100 Continue\r\n\r\n"
#define CONN_CONTINUE_LEN (sizeof(CONN_CONTINUE) - 1)
_Static_assert(RESP_MAX + CONN_CONTINUE_LEN <= CONN_WBUF_SIZE / 3, "a few pipelined responses fit the write buffer");
#define CONN_LINGER_MS     2000
#define CONN_DRAIN_IDLE_MS 1000

/* A body sent from outside the write buffer. release(arg, data) runs once
 * it is sent or its connection closes; NULL: it outlives every connection. */
struct conn_body {
    char *data;
    void (*release)(void *arg, char *data);
    void *arg;
};

/* The core's counters of one worker (the app embeds and renders them). */
struct conn_stats {
    mcounter accepts;
    mgauge conns_open;
    mgauge in_flight; /* requests parsed and not yet answered */
    mcounter bad[BAD__COUNT];
};

struct conn;
/* A waiting request's connection is closing: stop the work; conn_answer()
 * must not be called for it any more. */
typedef void conn_cancel_fn(struct conn *c, void *arg);

/* What the app does with requests; every hook runs on the pool's worker. */
struct conn_app {
    /* The head of c's request is complete: route it (url, len: the target,
     * valid during the call only). Returns true when the app reads the
     * request's body: its pieces then go to body (after --max-body's check),
     * and a request that ends before its body does goes to dropped. */
    bool (*head)(void *ctx, struct conn *c, const struct http_req *rq, const char *url, size_t len);
    /* A piece of the body head took (valid during the call only): 0, or -1
     * when the app cannot keep it (the request is refused with 413). NULL:
     * the app reads no body. */
    int (*body)(void *ctx, struct conn *c, const char *at, size_t len);
    /* The request whose body head took ends before it does (refused, or its
     * connection closes): let go of what body kept. */
    void (*dropped)(void *ctx, struct conn *c);
    /* c's request is complete: answer it now or conn_wait(). */
    void (*request)(void *ctx, struct conn *c);
    /* One response of c is about to be written (dur_ns since its request
     * began; refused != BAD_NONE: the core refused it and the app never saw
     * the request): record it, and set r->extra (valid until this returns). */
    void (*finish)(void *ctx, struct conn *c, struct resp *r, uint64_t dur_ns, enum bad_reason refused);
    void *ctx;
};

struct conn_pool;

struct conn {
    struct timer timer;      /* on one of the pool's timer lists, or none */
    struct slot slot;        /* index, generation, free list link */
    struct fifo_link paused; /* paused list link (CONN_F_PAUSED) */
    struct conn_pool *pool;  /* its pool, for the app's way back */
    conn_cancel_fn *cancel;  /* CONN_WAITING: the app's hook */
    void *cancel_arg;
    uint64_t req_start_ns;   /* when the current request's head was parsed */
    int fd;                  /* owned while in use; -1 once released */
    uint8_t state;                  /* enum conn_state */
    uint8_t flags;                  /* CONN_F_* */
    bool answering;                 /* inside app->request(): an answer must not re-enter conn_process */
    uint32_t rlen, rpos, msg_start; /* read buffer: filled, parsed, current message start */
    uint32_t wlen, woff;            /* response buffer: filled, sent */
    char *rbuf;                     /* lent arena slice, limits.max_header bytes, or NULL (idle) */
    char *wbuf;                     /* lent with rbuf: CONN_WBUF_SIZE bytes after it, or NULL */
    struct conn_body ext;           /* a body after wbuf (ext.data != NULL), released when sent */
    size_t ext_len, ext_off;
    struct msghdr msg; /* owned by the kernel while CONN_F_SEND */
    struct iovec iov[2];
    struct http http;
};

/* What an idle keep-alive connection costs the worker (with select
 * receives): its slot. Growing it is a decision, not an accident. */
_Static_assert(sizeof(struct conn) <= 512, "struct conn grew past 512 bytes: see docs/architecture.md#ownership");

/* The pool's view of the configuration. */
struct conn_limits {
    unsigned max_header; /* read buffer per connection = request head limit */
    unsigned max_url;
    unsigned long max_body;
    unsigned header_timeout_ms;
    unsigned idle_timeout_ms;
};

struct conn_pool {
    /* set by the owner before conn_pool_init(); none owned */
    struct conn_limits lim;
    struct io *io;
    struct conn_app app;
    const struct http_keep *keep; /* the header values the app keeps (http_keep_init'ed), or NULL */
    struct conn_stats *stats;
    const bool *throttle; /* while *throttle, receives pause (backpressure); NULL: never */
    unsigned id;          /* the worker's, for logs */
    uint32_t nslots;

    /* the clock: written by the owner (the worker loop, or a test) */
    uint64_t now_ms;
    char date[RESP_DATE_LEN + 1];
    bool drain_seen; /* conn_pool_drain() ran */

    struct conn *conns; /* owned table of nslots */
    char *arena;        /* owned: nslots read + write buffer pairs, lent to connections */
    uint32_t *buf_free; /* owned stack of free pair indexes (most recently returned on top) */
    uint32_t nbuf_free, buf_fresh; /* on the stack; pairs never lent yet (from buf_fresh on) */
    bool select;        /* the backend lands receives (io->select_len): idle connections hold no pair */
    struct slot_table slots;
    unsigned nopen; /* slots in use */
    struct timer_list idle, header, linger;
    struct fifo paused;        /* connections whose receive waits for the throttle to lift, oldest first */
    struct http_limits limits; /* the parser's view of lim */
};

/* Allocates the table and the arena (untouched until used). A connection
 * holds a buffer pair only while it has bytes to parse or to send, or an
 * answer to wait for; between requests it gives it back, when the backend
 * has select receives (io->select_len), so that an idle keep-alive
 * connection costs its table entry alone and the pairs reused are the
 * recently used (warm) ones. Returns 0 or -ENOMEM. */
int conn_pool_init(struct conn_pool *p);
/* Frees the table, the arena and the bodies left (no connection in use). */
void conn_pool_fini(struct conn_pool *p);
/* Whether a slot is free for conn_start(). */
bool conn_pool_has_slot(const struct conn_pool *p);

/* Starts serving the accepted fd (owned from now on) in a free slot. */
void conn_start(struct conn_pool *p, int fd);
/* One completion of the backend for a connection (its tag's owner is
 * SLOTS_OWNER_CONN); stale tags are dropped. */
void conn_on_event(struct conn_pool *p, const struct io_event *ev);
/* Fires the timers due at p->now_ms: 408 at the header deadline, close at
 * the idle and linger deadlines. */
void conn_pool_expire(struct conn_pool *p);
/* The earliest timer deadline, or none. */
uint64_t conn_pool_next_deadline(const struct conn_pool *p, uint64_t none);
/* SIGTERM: connections between requests get CONN_DRAIN_IDLE_MS to send the
 * request they may have in flight; the rest close after their response. */
void conn_pool_drain(struct conn_pool *p);
/* The throttle lifted: paused receives go on, in the order they paused (the
 * connection that has waited longest reads first, so none starves). */
void conn_pool_resume(struct conn_pool *p);

/* c's current request waits for the app's work; cancel(c, arg) runs if the
 * connection closes first. Call with the request in hand and not answered:
 * inside app->request(), or while it already waits (the app hands it from one
 * piece of its work to the next, on c's worker: a held request's timer starts
 * the route's work). Call it before starting work that may answer at once
 * (conn_answer needs the wait). Asserted. */
void conn_wait(struct conn *c, conn_cancel_fn *cancel, void *arg);
/* The answer to c's current request, now (from app->request()) or after a
 * wait: r's inline body (at most CONN_BODY_MAX) is copied, or, with body,
 * r->body_len bytes of body->data go out after the head (released when sent
 * or, HEAD or not, when no longer needed). Never blocks; may close c. */
void conn_answer(struct conn *c, struct resp *r, const struct conn_body *body);

/* The connection of a tag, or NULL (released, or reused since). */
struct conn *conn_of(struct conn_pool *p, uint64_t tag);
uint64_t conn_tag(const struct conn *c);
/* The slot index of c: 0..nslots-1, for the app's per-connection tables. */
static inline uint32_t conn_index(const struct conn *c)
{
    return c->slot.index;
}

#endif
