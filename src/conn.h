/* conn.h - the connection state machine and the table of connection slots.
 *
 * A pool is one worker's connections: preallocated slots with their read and
 * write buffers, the timer lists, the paused list. It speaks to the kernel
 * through io.h only (a scripted backend drives it in tests/test_conn.c), runs
 * /example work through dispatch.h and asks handlers.h for every answer.
 * conn.c is the only writer of conn->state.
 */
#ifndef PRIMED_CONN_H
#define PRIMED_CONN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "config.h"
#include "dispatch.h"
#include "fault.h"
#include "gateway.h"
#include "handlers.h"
#include "http.h"
#include "io.h"
#include "log.h"
#include "metrics.h"
#include "resp.h"
#include "spans.h"
#include "timer.h"
#include "trace.h"
#include "upstream.h"

/* Where a connection is. Exactly one at a time. */
enum conn_state {
    CONN_READING, /* reading and answering requests (responses may be unsent) */
    CONN_TASK,    /* a request waits on its /example task (queued or in the wait queue) */
    CONN_CALL,    /* a request waits on its upstream call (/caller/ping) or fan-out (/api/products) */
    CONN_HELD,    /* a request is held by --fault-delay (on the pool's held list) */
    CONN_FINAL,   /* its last response is queued: send it, then linger */
    CONN_LINGER,  /* write side shut; reading and dropping until EOF or timeout */
    CONN_DEAD,    /* aborted: released once nothing is in flight; stays DEAD once released */
};

/* In-flight bits and the two conditions that cut across the states. */
#define CONN_F_RECV   0x01u /* a receive is in flight */
#define CONN_F_SEND   0x02u /* a send is in flight */
#define CONN_F_EOF    0x04u /* the client shut its write side */
#define CONN_F_PAUSED 0x08u /* receive not armed while dispatch is throttled (on the paused list) */

/* Response buffer: every response primed writes fits in RESP_MAX (a head
 * within RESP_HEAD_MAX and an inline body within HANDLERS_BODY_MAX), except
 * /metrics' and /api/products' bodies, which go out from a heap buffer, and
 * /api/catalog's, from the catalog (conn->ext). The parser runs only while
 * RESP_MAX bytes are free. */
#define CONN_WBUF_SIZE 4096
#define RESP_MAX       (RESP_HEAD_MAX + HANDLERS_BODY_MAX)
_Static_assert(RESP_MAX <= CONN_WBUF_SIZE / 3, "a few pipelined responses fit the write buffer");
/* /metrics bodies (64 KiB buffers) alive at once per worker, while their
 * clients read them; one more scrape on the worker gets a 503. */
#define CONN_SCRAPES_MAX   4
#define CONN_LINGER_MS     2000
#define CONN_DRAIN_IDLE_MS 1000

struct conn {
    struct timer timer;      /* on one of the pool's timer lists, or none */
    struct conn *free_next;  /* free list link while released */
    struct conn *pnext;      /* paused list link (CONN_F_PAUSED) */
    struct dispatch_job job; /* its /example work (CONN_TASK) */
    uint64_t req_start_ns;   /* when the current request's head was parsed */
    uint64_t req_wall_us;    /* the same, epoch microseconds (spans) */
    struct trace tr;         /* the current request's trace context */
    uint64_t span;           /* its SERVER span id */
    uint64_t client_span;    /* /caller/ping: its call's CLIENT span id */
    uint64_t event_id;       /* /caller/ping: the event it stored */
    uint64_t call_wall_us;   /* /caller/ping: when its call started (the CLIENT span) */
    struct upstream_call call; /* /caller/ping's call (CONN_CALL) */
    struct gateway_req *fan;   /* /api/products' fan-out (CONN_CALL), or NULL */
    int fault_abort;           /* CONN_HELD: the status to answer once held, or 0: serve it */
    int fd;                  /* owned while in use; -1 once released */
    uint32_t gen;            /* bumped at each release: stale completions are dropped */
    uint32_t slot;
    uint8_t state;                  /* enum conn_state */
    uint8_t flags;                  /* CONN_F_* */
    bool calling;                   /* inside upstream_start(): its done must not re-enter conn_process */
    uint32_t rlen, rpos, msg_start; /* read buffer: filled, parsed, current message start */
    uint32_t wlen, woff;            /* response buffer: filled, sent */
    char *rbuf;                     /* pool-owned arena slice, cfg->max_header bytes */
    char *wbuf;                     /* pool-owned arena slice, CONN_WBUF_SIZE bytes */
    char *ext;                      /* a body after wbuf: /metrics', /api/products' (owned, freed when
                                       sent) or the catalog's (not owned) */
    uint8_t ext_kind;               /* enum conn_ext */
    size_t ext_len, ext_off;
    struct msghdr msg; /* owned by the kernel while CONN_F_SEND */
    struct iovec iov[2];
    struct http http;
};

enum conn_ext {
    CONN_EXT_SCRAPE,  /* a /metrics body: heap, counted in ext_live */
    CONN_EXT_HEAP,    /* heap */
    CONN_EXT_LASTING, /* lives as long as the process: not freed */
};

/* Renders /metrics into a malloc'd buffer (*out, owned by the caller).
 * Returns the length or -errno. */
typedef int conn_scrape_fn(void *ctx, char **out);

struct conn_pool {
    /* set by the owner before conn_pool_init(); none owned */
    const struct config *cfg;
    struct io *io;
    struct dispatch *dispatch;
    struct metrics *metrics;
    struct alog *alog; /* NULL: no access log */
    const struct handler_env *env;
    conn_scrape_fn *scrape;
    void *scrape_ctx;
    struct upstream_client *up; /* the worker's client, or NULL */
    int callme_up;              /* callme's index in up, or -1 */
    struct spans *spans;        /* the span exporter, or NULL (no --zipkin-url) */
    struct gateway *gw;         /* /api/products' fan-outs, or NULL */
    const struct fault *fault;  /* --fault-*, or NULL: none */
    unsigned id; /* the worker's, for logs */
    uint32_t nslots;

    /* the clock: written by the owner (the worker loop, or a test) */
    uint64_t now_ms;
    char date[RESP_DATE_LEN + 1];
    char iso_time[24]; /* access log timestamp */
    uint64_t rng;      /* span ids; non-zero */
    bool drain_seen;   /* conn_pool_drain() ran */

    struct conn *conns;      /* owned table of nslots */
    char *arena;             /* owned: read and write buffers of all slots */
    uint32_t fresh;          /* slots [fresh, nslots) never used: not yet touched */
    struct conn *free_conns; /* released slots, LIFO so the hot set stays small */
    unsigned nopen;          /* slots in use */
    unsigned ext_live;       /* /metrics bodies not yet sent (<= CONN_SCRAPES_MAX) */
    struct timer_list idle, header, linger, held;
    struct conn *paused;       /* connections whose receive waits for the throttle to lift */
    struct http_limits limits; /* the parser's view of cfg */
};

/* Allocates the table and the arena (untouched until used). Also sets the
 * dispatch's hooks. Returns 0 or -ENOMEM. */
int conn_pool_init(struct conn_pool *p);
/* Frees the table, the arena and the bodies left (no connection in use). */
void conn_pool_fini(struct conn_pool *p);
/* Whether a slot is free for conn_start(). */
bool conn_pool_has_slot(const struct conn_pool *p);

/* Starts serving the accepted fd (owned from now on) in a free slot. */
void conn_start(struct conn_pool *p, int fd);
/* One completion of the backend, by tag; stale tags are dropped. */
void conn_on_recv(struct conn_pool *p, uint64_t tag, int res);
void conn_on_send(struct conn_pool *p, uint64_t tag, int res);
/* Fires the timers due at p->now_ms: 408 at the header deadline, close at
 * the idle and linger deadlines, a held request's end of --fault-delay. */
void conn_pool_expire(struct conn_pool *p);
/* The earliest timer deadline, or none. */
uint64_t conn_pool_next_deadline(const struct conn_pool *p, uint64_t none);
/* SIGTERM: connections between requests get CONN_DRAIN_IDLE_MS to send the
 * request they may have in flight; the rest close after their response. */
void conn_pool_drain(struct conn_pool *p);

/* The connection of a tag, or NULL (released, or reused since). */
struct conn *conn_of(struct conn_pool *p, uint64_t tag);
uint64_t conn_tag(const struct conn *c);

#endif
