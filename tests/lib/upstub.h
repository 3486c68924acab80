/* upstub.h - for the ring suites (test_upstream.c, test_gateway.c): scripted
 * upstreams on 127.0.0.1 and a real backend (io_uring or epoll) driving an
 * upstream client against them.
 *
 * A stub is a thread that accepts any number of connections (poll), reads
 * each GET head and asks the test's answer function what to do: answer
 * (after a delay), stay silent, or close. It counts accepts, requests, open
 * connections and requests received but not yet answered, with the highs of
 * the last two, so a test can tell parallel calls from sequential ones.
 * Every wait on either side is bounded.
 */
#ifndef PRIMED_TESTS_UPSTUB_H
#define PRIMED_TESTS_UPSTUB_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "upstream.h"

#define UPSTUB_CONNS 32
#define UPSTUB_OUT   32768 /* an answer: head and body */

/* What the stub does with one request. */
struct upstub_answer {
    enum { UPSTUB_ANSWER, UPSTUB_SILENT, UPSTUB_CLOSE } what;
    int status;        /* UPSTUB_ANSWER: the status line's code */
    const char *body;  /* and its body (copied at once), or NULL: none */
    size_t body_len;   /* (size_t)-1: strlen(body) */
    long content_length; /* >= 0: this Content-Length instead of the body's (a lie) */
    unsigned delay_ms; /* held this long before it is sent */
};

struct upstub;
/* Called on the stub's thread for each request: path is its target, n the
 * stub's request count including this one. Fills *a (zeroed: a 200 with no
 * body, at once). */
typedef void upstub_fn(struct upstub *s, const char *path, unsigned n, struct upstub_answer *a);

struct upstub {
    int lfd, port;
    upstub_fn *fn;
    void *ctx; /* the test's */
    pthread_t thread;
    _Atomic bool stop;
    _Atomic unsigned accepts, requests, open, max_open, pending, max_pending;
    pthread_mutex_t lock; /* guards paths */
    char paths[64][96];   /* the first 64 request targets, in arrival order */
};

/* Binds 127.0.0.1:0 and starts the thread. Returns 0 or -errno. */
int upstub_start(struct upstub *s, upstub_fn *fn, void *ctx);
/* Stops the thread and closes every socket. */
void upstub_stop(struct upstub *s);
/* The i-th request target seen (copied into out), or "" when none. */
const char *upstub_path(struct upstub *s, unsigned i, char *out, size_t cap);

/* The client side: one backend, one upstream client, its counters. */
struct uphost {
    struct io io;
    struct upstream_client cl;
    struct upstream_stats stats[UPSTREAM_MAX]; /* by upstream index */
    struct resolver res;
    struct url urls[UPSTREAM_MAX];
    uint64_t now_ms;
};

/* Milliseconds of CLOCK_MONOTONIC. */
uint64_t upstub_mono_ms(void);
/* Brings the backend up (-errno when the kernel lacks it: the test skips)
 * and sets the client's bounds; add the upstreams, then uphost_ready(). */
int uphost_init(struct uphost *h, enum io_kind kind, unsigned conns, unsigned timeout_ms, char *why, size_t cap);
/* Adds http://127.0.0.1:port/path, counted in stats[its index]. Returns its index or -errno. */
int uphost_add(struct uphost *h, int port, const char *path);
/* Allocates the client's connections. Returns 0 or -ENOMEM. */
int uphost_ready(struct uphost *h);
/* One turn of the loop: waits up to wait_ms for completions, moves the clock,
 * hands them to the client, fires its deadlines. */
void uphost_turn(struct uphost *h, int wait_ms);
/* Turns the loop until done(ctx) or ms pass. Returns whether done. */
bool uphost_run(struct uphost *h, bool (*done)(void *ctx), void *ctx, unsigned ms);
/* Drains and tears down. Returns the connections still busy after 2 s (0). */
unsigned uphost_fini(struct uphost *h);
/* Connections of upstream up the client holds: open or opening, pooled or busy. */
unsigned uphost_conns(const struct uphost *h, unsigned up);

#endif
