/* test_spans.c - the span exporter (src/app/spans.c) as the app drives it:
 * requests through the app's hooks over the scripted backend
 * (tests/lib/pool_fixture.c), the export on a real backend (epoll) to a
 * scripted collector on 127.0.0.1 (tests/lib/upstub.c). A sampled request's
 * SERVER span leaves in a batch SPANS_FLUSH_MS after it, POSTed to
 * --zipkin-url; probes make none; a collector that fails drops the batch,
 * counted, and it is never sent again. Every wait is bounded.
 */
#include <criterion/criterion.h>
#include <stdatomic.h>
#include <string.h>

#include "pool_fixture.h"
#include "upstub.h"

static struct pool_fixture F;
static struct upstub coll;
static int coll_what; /* UPSTUB_* */

#define S (F.s)
#define P (F.w.pool)
#define M (F.aw->metrics)

static void collector_answer(struct upstub *s, const char *path, unsigned n, struct upstub_answer *a)
{
    a->what = coll_what;
    a->status = 202;
}

static void start(int what)
{
    coll_what = what;
    pool_fixture_init(&F);
    F.cfg.bits = PRIME_BITS_MIN;
    F.cfg.dispatch = DISPATCH_INLINE;
    F.cfg.prime_split = false;
    F.cfg.upstream_timeout_ms = 2000;
    char why[160];
    cr_assert_eq(pool_fixture_real_io(&F, IO_EPOLL, why, sizeof(why)), 0, "%s", why);
    cr_assert_eq(upstub_start(&coll, collector_answer, NULL), 0);
    cr_assert_eq(pool_fixture_upstream(&F, &F.cfg.zipkin, &F.app.zipkin_target, coll.port, "/api/v2/spans"), 0);
    cr_assert_eq(pool_fixture_start(&F), 0, "%s", F.w.init_why);
}

static void teardown(void)
{
    pool_fixture_stop(&F);
    upstub_stop(&coll);
}

static void feed(int fd, const char *s)
{
    cr_assert_eq(pool_fixture_feed(&F, fd, s), (int)strlen(s), "fd %d: no receive armed", fd);
}

static bool exported(void *ctx)
{
    return atomic_load(&M.spans_sent) + atomic_load(&M.spans_dropped) > 0;
}

#define GET(path) "GET " path " HTTP/1.1\r\nHost: t\r\n\r\n"

Test(spans, a_sampled_request_s_span_is_posted_after_the_flush_time, .fini = teardown)
{
    start(UPSTUB_ANSWER);
    conn_start(&P, 5);
    feed(5, GET("/callme/ping")); /* starts a sampled trace */
    feed(5, GET("/callme/ping"));
    pool_fixture_send(&F, 5, SIZE_MAX);
    cr_assert_eq(F.aw->spans->n, 2u, "two SERVER spans wait for their batch");
    pool_fixture_tick(&F, SPANS_FLUSH_MS - 1);
    cr_assert_eq(F.aw->spans->in_flight, 0u, "not before the flush time");
    pool_fixture_tick(&F, 1);
    cr_assert_eq(F.aw->spans->in_flight, 2u, "one batch of both");
    cr_assert(pool_fixture_run(&F, exported, NULL, 3000), "no export within 3 s");
    cr_assert_eq(atomic_load(&M.spans_sent), 2);
    cr_assert_eq(atomic_load(&M.spans_dropped), 0);
    cr_assert_eq(atomic_load(&coll.requests), 1);
    char path[96];
    cr_assert_str_eq(upstub_path(&coll, 0, path, sizeof(path)), "/api/v2/spans");
}

Test(spans, probes_and_unsampled_requests_make_none, .fini = teardown)
{
    start(UPSTUB_ANSWER);
    conn_start(&P, 5);
    feed(5, GET("/healthz"));
    feed(5, GET("/metrics"));
    feed(5, "GET /ping HTTP/1.1\r\nHost: t\r\n"
            "traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00\r\n\r\n");
    pool_fixture_send(&F, 5, SIZE_MAX);
    cr_assert_eq(F.aw->spans->n, 0u);
    pool_fixture_tick(&F, SPANS_FLUSH_MS);
    cr_assert(!pool_fixture_run(&F, exported, NULL, 200));
    cr_assert_eq(atomic_load(&coll.requests), 0);
}

Test(spans, a_collector_that_fails_drops_the_batch_once, .fini = teardown)
{
    start(UPSTUB_CLOSE);
    conn_start(&P, 5);
    feed(5, GET("/callme/ping"));
    pool_fixture_send(&F, 5, SIZE_MAX);
    pool_fixture_tick(&F, SPANS_FLUSH_MS);
    cr_assert(pool_fixture_run(&F, exported, NULL, 3000), "no export within 3 s");
    cr_assert_eq(atomic_load(&M.spans_dropped), 1);
    cr_assert_eq(atomic_load(&M.spans_sent), 0);
    pool_fixture_tick(&F, 2 * SPANS_FLUSH_MS);
    cr_assert_eq(F.aw->spans->n + F.aw->spans->in_flight, 0u, "never retried");
}
