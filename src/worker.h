/* worker.h - one pinned thread: its ring, listener, connection table, timers,
 * Date cache, deque; and the connection and task structs it owns.
 */
#ifndef PRIMED_WORKER_H
#define PRIMED_WORKER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "http.h"
#include "io.h"
#include "log.h"
#include "metrics.h"
#include "resp.h"
#include "server.h"
#include "wsq.h"

#define CONN_F_RECV     0x0001u /* a receive is in flight */
#define CONN_F_SEND     0x0002u /* a send is in flight */
#define CONN_F_TASK     0x0004u /* a prime task is out for this connection */
#define CONN_F_CLOSING  0x0008u /* answer what is queued, then close */
#define CONN_F_DEAD     0x0010u /* aborted: close as soon as nothing is in flight */
#define CONN_F_LINGER   0x0020u /* write side shut; reading until EOF or timeout */
#define CONN_F_EOF      0x0040u /* the client shut its write side */
#define CONN_F_WAITQ    0x0080u /* waiting for a task slot (backpressure) */
#define CONN_F_PAUSED   0x0100u /* receive not armed because the worker is throttled */

enum { LIST_NONE, LIST_IDLE, LIST_HEADER, LIST_LINGER, LIST__COUNT };

/* Response buffer: every response primed writes fits in RESP_MAX (a head
 * within RESP_HEAD_MAX and an inline body within RESP_BODY_INLINE_MAX: the
 * /ping body is the longest, at most 288 bytes), except /metrics, whose body
 * goes out from a heap buffer (conn->ext). conn_process() parses the next
 * request only while RESP_MAX bytes are free. */
#define WBUF_SIZE 4096
/* /metrics bodies (64 KiB buffers) alive at once per worker, while their
 * clients read them; one more scrape on the worker gets a 503. */
#define METRICS_BODIES_MAX 4
#define RESP_BODY_INLINE_MAX 320
#define RESP_MAX (RESP_HEAD_MAX + RESP_BODY_INLINE_MAX)
_Static_assert(RESP_MAX <= WBUF_SIZE / 4, "a few pipelined responses fit the write buffer");

struct conn {
    struct conn *prev, *next;  /* timer list links (intrusive), or free list (next) */
    struct conn *qnext;        /* wait queue link (CONN_F_WAITQ) */
    struct conn *pnext;        /* paused list link (CONN_F_PAUSED): a connection can be on both */
    struct task *task;         /* the task out for it (CONN_F_TASK), owned by whoever runs it */
    uint64_t deadline_ms;
    uint64_t req_start_ns;     /* when the current request's head was parsed */
    int fd;                    /* owned while open */
    uint32_t gen;              /* bumped at each reuse of the slot: stale completions are dropped */
    uint32_t slot;
    uint16_t flags;            /* CONN_F_* */
    uint8_t list;              /* LIST_*: which timer list holds it */
    bool open;
    uint32_t rlen, rpos, msg_start; /* read buffer: filled, parsed, current message start */
    uint32_t wlen, woff;       /* response buffer: filled, sent */
    char *rbuf;                /* worker-owned arena slice, cfg->max_header bytes */
    char *wbuf;                /* worker-owned arena slice, WBUF_SIZE bytes */
    char *ext;                 /* cold heap body after wbuf (/metrics); owned, freed when sent */
    size_t ext_len, ext_off;
    struct msghdr msg;         /* owned by the kernel while CONN_F_SEND */
    struct iovec iov[2];
    struct http http;
};

struct task {
    struct task *next;         /* free list, or the owner's done list */
    _Atomic bool cancelled;    /* its connection is gone: skip the prime */
    uint64_t tag;              /* connection slot + generation at the owner */
    uint64_t queued_ns;
    uint64_t prime_ns;         /* CPU time spent on the prime */
    unsigned owner;
    unsigned bits;
    int result;                /* prime_generate()'s return */
};

struct worker {
    struct server *srv;        /* not owned */
    const struct config *cfg;  /* not owned */
    unsigned id;
    int cpu;                   /* pinned CPU, or -1 */
    pthread_t thread;
    int lfd;                   /* listening socket, owned */
    struct io io;
    struct prime_state *prime; /* this thread's random state, owned */

    struct conn *conns;        /* owned table of nslots */
    char *arena;               /* owned: read and write buffers of all slots */
    uint32_t nslots;
    uint32_t fresh;            /* slots [fresh, nslots) never used: not yet touched */
    struct conn *free_conns;   /* released slots, LIFO so the hot set stays small */
    unsigned open, max_open;
    unsigned ext_live;         /* /metrics bodies not yet sent (<= METRICS_BODIES_MAX) */
    int *park;                 /* owned ring of accepted fds waiting for a slot (worker.c) */
    unsigned park_head, npark;
    struct conn lists[LIST__COUNT]; /* sentinels of the timer lists */

    bool want_accept;          /* the worker wants connections */
    bool accept_armed;         /* an accept is in flight */
    bool accept_stop_sent;     /* its cancel is in flight */
    uint64_t accept_retry_ms;  /* EMFILE and friends: retry then */
    uint64_t accept_err_log_ms;
    bool drain_seen;

    /* work-stealing dispatch */
    bool steal;
    struct wsq q;
    struct task *tasks;        /* owned pool of cfg->queue_max */
    struct task *task_free;
    unsigned tasks_out;        /* tasks of this worker not yet answered */
    bool throttled;            /* backpressure: receives and accepts paused */
    uint64_t handoff_until_ns; /* a woken thief gets first go at our newest task until then */
    struct conn *waitq_head, *waitq_tail; /* connections waiting for a task slot, FIFO */
    struct conn *paused;       /* connections whose receive waits for the throttle to lift */
    _Alignas(64) _Atomic(struct task *) done; /* finished tasks for us, pushed by any worker */
    _Alignas(64) _Atomic int sleeping;        /* 1 while blocked in io_wait with nothing to do */

    struct http_limits limits; /* the parser's view of cfg */
    uint64_t now_ms;
    long date_sec;
    char iso_time[24];         /* access log timestamp, once a second */
    char date[RESP_DATE_LEN + 1];
    uint64_t rng;              /* xorshift state for span ids */
    struct alog alog;          /* access log, when enabled */

    int init_err;              /* set by the thread before the start barrier */
    char init_why[200];

    struct metrics metrics;    /* written by this worker only */
};

/* Thread entry: sets up the worker (ring, tables), waits on the start
 * barrier, runs until drained. arg is the struct worker. */
void *worker_main(void *arg);

/* Start barrier shared by server.c and the workers. */
extern pthread_barrier_t worker_start_barrier;

/* Renders /metrics for the whole server into a malloc'd buffer (cold). Returns
 * the length and sets *out, or -errno. */
int worker_render_metrics(struct worker *w, char **out);

#endif
