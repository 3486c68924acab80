/* upstream.h - the client side: HTTP/1.1 calls to upstreams (callme, the
 * Zipkin collector) on the worker's own ring and timer lists.
 *
 * A client is one worker's: per upstream a pool of keep-alive connections
 * (at most cfg->upstream_conns, which is also the bound on calls in flight;
 * calls beyond it wait in FIFO order), a deadline per call covering connect,
 * send and the whole response, and a fixed-size response parser
 * (http_response.h). No thread ever blocks on a socket; addresses come from
 * the resolver (resolver.h), never from a lookup on the worker.
 */
#ifndef PRIMED_UPSTREAM_H
#define PRIMED_UPSTREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "fifo.h"
#include "http_response.h"
#include "io.h"
#include "stats.h"
#include "resolver.h"
#include "slots.h"
#include "timer.h"
#include "trace.h"

#define UPSTREAM_MAX       4                  /* upstreams per client: callme, zipkin, catalog, inventory */
#define UPSTREAM_BODY_MAX  16384              /* response body kept; a longer one is an error */
#define UPSTREAM_RBUF      4096               /* receive buffer (the head may span several) */
#define UPSTREAM_HEAD_MAX  2048               /* the request head primed writes: path, Host, extra within it */
#define UPSTREAM_EXTRA_MAX TRACE_OUTBOUND_MAX /* extra request header lines: the trace context */
#define UPSTREAM_IDLE_MS   15000              /* an idle pooled connection is closed after this */

/* How a call ended. Labels of primed_upstream_calls_total{result}. */
#define UPSTREAM_RESULTS(X)                                                 \
    X(UPSTREAM_OK, "ok", "")                                                \
    X(UPSTREAM_UNRESOLVED, "unresolved", "name not resolved")               \
    X(UPSTREAM_CONNECT, "connect_error", "connect failed")                  \
    X(UPSTREAM_RESET, "reset", "connection reset")                          \
    X(UPSTREAM_CLOSED, "closed", "closed before a complete answer")         \
    X(UPSTREAM_BAD, "bad_response", "malformed answer")                     \
    X(UPSTREAM_TOO_LARGE, "too_large", "answer over primed's bounds")       \
    X(UPSTREAM_TIMEOUT, "timeout", "no complete answer within the timeout") \
    X(UPSTREAM_ERROR, "error", "local error")

#define X_ENUM(id, label, text) id,
enum upstream_result { UPSTREAM_RESULTS(X_ENUM) UPSTREAM__RESULTS };
#undef X_ENUM

/* What a client counts of one upstream (the app embeds and renders them). */
struct upstream_stats {
    mcounter calls[UPSTREAM__RESULTS]; /* by result */
    struct histo seconds;              /* start of a call to its end, any result */
};

struct upstream_call;
/* The call is over: res, and with UPSTREAM_OK the status and the body (valid
 * during the callback only). err is -errno behind a connect error or reset,
 * else 0. The call is the caller's again when this runs. */
typedef void upstream_done_fn(struct upstream_call *call, enum upstream_result res, int err, int status,
                              const char *body, size_t len);

enum { UPCALL_IDLE, UPCALL_QUEUED, UPCALL_ACTIVE };

/* One request, embedded in its owner (a server connection, the span
 * exporter, a fan-out). The owner fills the public part and keeps it, the
 * path and the body unchanged until done runs or upstream_cancel() returns. */
struct upstream_call {
    /* public */
    const char *method; /* "GET", "POST" */
    const char *path;   /* the request target, or NULL: the URL's path */
    uint64_t deadline_ms; /* 0: the client's timeout from the start; else the earlier of the two */
    const char *ctype;  /* Content-Type of body, or NULL */
    const char *body;   /* not owned; NULL: none */
    size_t body_len;
    char extra[UPSTREAM_EXTRA_MAX]; /* header lines, each ending "\r\n" */
    upstream_done_fn *done;
    void *ctx;
    /* the client's */
    struct timer timer; /* the call's deadline */
    struct fifo_link wait; /* on its upstream's wait queue (UPCALL_QUEUED) */
    struct up_conn *conn;
    uint64_t start_ns;
    const char *why; /* with an error: a static detail ("response body too large"), or NULL */
    unsigned up;
    uint8_t where; /* UPCALL_* */
    bool retried;  /* already re-sent once after a reused connection closed */
};

/* One upstream of a client. */
struct upstream {
    const struct url *url;          /* not owned: the config's */
    struct resolver_target *target; /* not owned: the server's */
    char name[URL_HOST_MAX + 9];    /* host:port, for messages */
    unsigned nconns;                /* open or opening */
    struct up_conn *idle;           /* pooled connections, LIFO */
    struct fifo wait;               /* calls waiting for a connection, oldest first */
    unsigned nwait;
    struct upstream_stats *stats; /* not owned: the worker's */
};

struct upstream_client {
    /* set by the owner before upstream_client_init(); not owned */
    struct io *io;
    const uint64_t *now_ms;
    unsigned max_conns;  /* per upstream */
    unsigned timeout_ms; /* per call */
    const char *user_agent;
    uint8_t owner; /* the tag owner of its completions (worker_own) */

    struct upstream ups[UPSTREAM_MAX];
    unsigned nups;
    struct up_conn *conns; /* owned table of nups * max_conns, touched on first use */
    struct slot_table slots;
    uint32_t nslots;
    struct timer_list deadlines, idle;
    bool draining; /* no connection goes back to the pool */
};

/* Allocates the connection table. Returns 0 or -ENOMEM. */
int upstream_client_init(struct upstream_client *c);
/* Closes every connection (none with an op in flight: after the loop) and frees. */
void upstream_client_fini(struct upstream_client *c);
/* Adds an upstream counted in stats; returns its index, or -ENOSPC. */
int upstream_add(struct upstream_client *c, const struct url *url, struct resolver_target *target,
                 struct upstream_stats *stats);

/* Starts call on upstream up. Returns true when started: call->done will
 * run, and may already have run when the ring refused an op (the owner sets
 * its state before the call); false with *res when it cannot start at all
 * (name not resolved, no socket): done is not called then. */
bool upstream_start(struct upstream_client *c, unsigned up, struct upstream_call *call, enum upstream_result *res);
/* Forgets call (its owner goes away): done will not run. */
void upstream_cancel(struct upstream_client *c, struct upstream_call *call);

/* A completion of a tag of c->owner (slots.h). */
void upstream_on_event(struct upstream_client *c, const struct io_event *ev);
/* Fires deadlines due at *now_ms: 504s and idle closes. */
void upstream_expire(struct upstream_client *c);
/* The earliest deadline, or none. */
uint64_t upstream_next_deadline(const struct upstream_client *c, uint64_t none);
/* Connections with an op in flight (the loop waits for them before exit). */
unsigned upstream_busy(const struct upstream_client *c);
/* SIGTERM: close idle connections; busy ones close after their call. */
void upstream_drain(struct upstream_client *c);

/* The label and the one-line text of a result. */
const char *upstream_result_label(enum upstream_result r);
/* Every label, in enum order (UPSTREAM__RESULTS). */
const char *const *upstream_result_labels(void);
const char *upstream_result_text(enum upstream_result r);

#endif
