/* pool_fixture.h - one worker's connections and app over the scripted
 * backend (io_script.h), without its thread: what test_conn.c and the
 * request fuzzer drive. Every completion, deadline and clock tick is the
 * caller's.
 *
 * Fill f->cfg (config_defaults() and changes) and f->app's fields the test
 * needs (catalog), then pool_fixture_start(); the pool is f->w.pool, the app
 * f->aw, the dispatch f->w.dispatch.
 */
#ifndef PRIMED_POOL_FIXTURE_H
#define PRIMED_POOL_FIXTURE_H

#include "app.h"
#include "config.h"
#include "io_script.h"
#include "metrics.h"
#include "resolver.h"

struct pool_fixture {
    struct io_script s;
    struct config cfg;
    struct workers all;
    struct worker_opts opts;
    struct worker w;
    struct app app;
    struct resolver res;   /* app.resolver, with a real backend: the upstreams' names */
    struct app_worker *aw; /* the app's side of w, once started */
    unsigned nslots;       /* connection slots (default 8) */
    unsigned prime_seed;   /* the worker's prime state seed (default 1) */
    bool started;          /* pool_fixture_start() ran: stop undoes it (once) */
    bool real_io;          /* pool_fixture_real_io() ran: the worker's own io is a real backend */
    void (*real_io_fini)(struct pool_fixture *f); /* its undoing, run by stop (pool_fixture_io.c) */
};

/* Zeroes f, sets the scripted backend up and cfg to the defaults. */
void pool_fixture_init(struct pool_fixture *f);
/* Starts the dispatch (cfg's mode and queue), the app and the pool. Returns
 * 0 or -errno (f->w.init_why says why). */
int pool_fixture_start(struct pool_fixture *f);
/* Undoes start; a second call does nothing. */
void pool_fixture_stop(struct pool_fixture *f);
/* Hands out every queued completion, as the worker loop does. */
void pool_fixture_pump(struct pool_fixture *f);
/* Hands n events to their owners: the connections, or whoever worker_own()
 * gave a tag (the app's upstream client, ...). */
void pool_fixture_hand_out(struct pool_fixture *f, const struct io_event *evs, int n);
/* Moves the clock on by ms and fires what is due, then pumps. */
void pool_fixture_tick(struct pool_fixture *f, uint64_t ms);
/* pool_fixture_io.c. For the routes that call out (the gateway, the chain, spans): before
 * start, gives the worker's own io (the app's upstream client, f->w.io) a
 * real backend of kind; the connections stay on the scripted one. Returns 0
 * or -errno (why says why: the test skips). */
int pool_fixture_real_io(struct pool_fixture *f, enum io_kind kind, char *why, size_t cap);
/* Sets *u (a URL of f->cfg: --callme-url's, ...) to http://127.0.0.1:port<path>
 * (path "": a base URL with no path, as --catalog-url's) and gives it to the
 * app's resolver, as the service that calls it does at start-up (after
 * pool_fixture_real_io, before start). Returns 0 or -EINVAL. */
int pool_fixture_upstream(struct pool_fixture *f, struct url *u, int port, const char *path);
/* Turns both backends (the real one up to 10 ms a turn), moving the clock on
 * by the real time passed and firing what is due, until done(ctx) or ms pass.
 * Returns whether done. */
bool pool_fixture_run(struct pool_fixture *f, bool (*done)(void *ctx), void *ctx, unsigned ms);

/* Completes fd's armed receive with the string s, then pumps. Returns the
 * bytes that went in, or -1 when no receive is armed. */
int pool_fixture_feed(struct pool_fixture *f, int fd, const char *s);
/* Lets every send of fd go through, at most max bytes a send, pumping after
 * each. */
void pool_fixture_send(struct pool_fixture *f, int fd, size_t max);

#endif
