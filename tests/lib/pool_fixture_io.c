/* pool_fixture_io.c - the pool fixture's real backend for the app's calls
 * (pool_fixture.h: pool_fixture_real_io, _upstream, _run), apart from
 * pool_fixture.c so that the fuzzer, which links no real backend, links the
 * fixture without it.
 */
#include "pool_fixture.h"

#include <errno.h>
#include <stdio.h>
#include <time.h>

static void real_io_fini(struct pool_fixture *f)
{
    io_fini(&f->w.io);
    io_close_wake(&f->w.io);
    resolver_fini(&f->res);
    f->app.resolver = NULL;
    f->real_io = false;
    f->real_io_fini = NULL;
}

static uint64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int pool_fixture_real_io(struct pool_fixture *f, enum io_kind kind, char *why, size_t cap)
{
    int r = io_init(&f->w.io, kind, 64, 64, 4096, 0, why, cap);
    if (r)
        return r;
    resolver_init(&f->res);
    f->app.resolver = &f->res;
    f->real_io = true;
    f->real_io_fini = real_io_fini;
    return 0;
}

int pool_fixture_upstream(struct pool_fixture *f, struct url *u, int port, const char *path)
{
    char s[160], err[128];
    snprintf(s, sizeof(s), "http://127.0.0.1:%d%s", port, path);
    if (url_parse(s, u, err, sizeof(err)))
        return -EINVAL;
    if (!path[0])
        u->path[0] = '\0'; /* a base URL (--catalog-url's): the app appends its paths */
    return resolver_add(&f->res, u) ? 0 : -EINVAL;
}

bool pool_fixture_run(struct pool_fixture *f, bool (*done)(void *ctx), void *ctx, unsigned ms)
{
    uint64_t last = mono_ms(), until = last + ms;
    for (;;) {
        pool_fixture_pump(f);
        if (done(ctx))
            return true;
        uint64_t now = mono_ms();
        if (now >= until)
            return false;
        if (f->real_io) {
            struct io_event evs[32];
            int n = io_wait(&f->w.io, evs, 32, 10);
            if (n > 0)
                pool_fixture_hand_out(f, evs, n);
        }
        now = mono_ms();
        pool_fixture_tick(f, now - last);
        last = now;
    }
}
