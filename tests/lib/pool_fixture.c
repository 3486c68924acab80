/* pool_fixture.c - a worker without its thread over the scripted backend
 * (pool_fixture.h): the same set-up steps core/worker.c takes, in the
 * same order, with the app's real hooks.
 */
#include "pool_fixture.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void pool_fixture_init(struct pool_fixture *f)
{
    memset(f, 0, sizeof(*f));
    io_script_init(&f->s);
    config_defaults(&f->cfg);
    f->nslots = 8;
    f->prime_seed = 1;
    f->app.pod = "pod";
    f->app.ns = "ns";
    f->app.name = "app";
}

int pool_fixture_start(struct pool_fixture *f)
{
    const struct config *cfg = &f->cfg;
    struct worker *w = &f->w;
    f->app.cfg = cfg;
    f->app.workers = &f->all;
    f->app.w = w;
    f->all.n = 1;
    f->all.dispatch[0] = &w->dispatch;
    f->all.hooks = &app_worker_hooks;
    f->all.app = &f->app;
    config_worker_opts(cfg, 1, &f->opts);
    f->opts.max_open = f->nslots;
    f->opts.split = false;
    f->started = true;
    w->all = &f->all;
    w->opts = &f->opts;
    w->lfd = -1;
    if (!f->real_io)
        w->io = f->s.io;
    f->app.prime_seed = f->prime_seed;
    w->dispatch.io = &f->s.io;
    int r = dispatch_init(&w->dispatch, cfg->dispatch, cfg->queue_max, false, 0, f->all.dispatch, 1);
    if (r)
        return r;
    w->dispatch.hooks.resume = (void (*)(void *))conn_pool_resume;
    w->dispatch.hooks.resume_ctx = &w->pool;
    w->pool.now_ms = 1000000;
    resp_date(w->pool.date, 784111777);
    if ((r = app_worker_hooks.init(w)))
        return r;
    f->aw = w->app;
    struct conn_pool *p = &w->pool;
    p->lim = f->opts.lim;
    p->io = &f->s.io;
    p->throttle = &w->dispatch.throttled;
    p->nslots = f->nslots;
    return conn_pool_init(p);
}

void pool_fixture_stop(struct pool_fixture *f)
{
    if (!f->started)
        return;
    f->started = false;
    conn_pool_fini(&f->w.pool);
    if (f->w.app) {
        app_worker_hooks.fini(&f->w);
        app_free(f->w.app);
        f->w.app = NULL;
    }
    dispatch_fini(&f->w.dispatch);
    if (f->real_io_fini)
        f->real_io_fini(f);
}

void pool_fixture_hand_out(struct pool_fixture *f, const struct io_event *evs, int n)
{
    for (int i = 0; i < n; i++) {
        unsigned o = slots_owner(evs[i].tag);
        if (o == SLOTS_OWNER_CONN)
            conn_on_event(&f->w.pool, &evs[i]);
        else if (o < SLOTS_OWNERS && f->w.owners[o].fn)
            f->w.owners[o].fn(f->w.owners[o].ctx, &evs[i]);
    }
}

void pool_fixture_pump(struct pool_fixture *f)
{
    struct io_event evs[64];
    int n;
    while ((n = io_wait(&f->s.io, evs, 64, 0)) > 0)
        pool_fixture_hand_out(f, evs, n);
}

void pool_fixture_tick(struct pool_fixture *f, uint64_t ms)
{
    f->w.pool.now_ms += ms;
    conn_pool_expire(&f->w.pool);
    app_worker_hooks.poll(&f->w, false);
    pool_fixture_pump(f);
}

int pool_fixture_feed(struct pool_fixture *f, int fd, const char *s)
{
    int n = io_script_data(&f->s, fd, s, strlen(s));
    pool_fixture_pump(f);
    return n;
}

void pool_fixture_send(struct pool_fixture *f, int fd, size_t max)
{
    while (io_script_send(&f->s, fd, max) >= 0)
        pool_fixture_pump(f);
}
