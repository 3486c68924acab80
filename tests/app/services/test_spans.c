/* test_spans.c - the span exporter (src/app/services/spans.c) as the app drives it:
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

#include "route_fixture.h"
#include "spans.h"

static struct upstub coll;
static int coll_what; /* UPSTUB_* */

static void collector_answer(struct upstub *s, const char *path, unsigned n, struct upstub_answer *a)
{
    a->what = coll_what;
    a->status = 202;
}

static void start(int what)
{
    coll_what = what;
    route_fixture_init();
    route_fixture_calls_out();
    route_fixture_upstub(&coll, collector_answer, &F.cfg.zipkin, "/api/v2/spans");
    route_fixture_start();
}

static void teardown(void)
{
    route_fixture_stop();
    upstub_stop(&coll);
}

static bool exported(void *ctx)
{
    return atomic_load(&spans_of(F.aw)->sent) + atomic_load(&spans_of(F.aw)->dropped) > 0;
}

Test(spans, a_sampled_request_s_span_is_posted_after_the_flush_time, .fini = teardown)
{
    start(UPSTUB_ANSWER);
    conn_start(&P, 5);
    route_feed(5, GET("/callme/ping")); /* starts a sampled trace */
    route_feed(5, GET("/callme/ping"));
    pool_fixture_send(&F, 5, SIZE_MAX);
    cr_assert_eq(spans_of(F.aw)->n, 2u, "two SERVER spans wait for their batch");
    pool_fixture_tick(&F, SPANS_FLUSH_MS - 1);
    cr_assert_eq(spans_of(F.aw)->in_flight, 0u, "not before the flush time");
    pool_fixture_tick(&F, 1);
    cr_assert_eq(spans_of(F.aw)->in_flight, 2u, "one batch of both");
    cr_assert(pool_fixture_run(&F, exported, NULL, 3000), "no export within 3 s");
    cr_assert_eq(atomic_load(&spans_of(F.aw)->sent), 2);
    cr_assert_eq(atomic_load(&spans_of(F.aw)->dropped), 0);
    cr_assert_eq(atomic_load(&coll.requests), 1);
    char path[96];
    cr_assert_str_eq(upstub_path(&coll, 0, path, sizeof(path)), "/api/v2/spans");
}

Test(spans, probes_and_unsampled_requests_make_none, .fini = teardown)
{
    start(UPSTUB_ANSWER);
    conn_start(&P, 5);
    route_feed(5, GET("/healthz"));
    route_feed(5, GET("/metrics"));
    route_feed(5, "GET /ping HTTP/1.1\r\nHost: t\r\n"
                  "traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00\r\n\r\n");
    pool_fixture_send(&F, 5, SIZE_MAX);
    cr_assert_eq(spans_of(F.aw)->n, 0u);
    pool_fixture_tick(&F, SPANS_FLUSH_MS);
    cr_assert(!pool_fixture_run(&F, exported, NULL, 200));
    cr_assert_eq(atomic_load(&coll.requests), 0);
}

Test(spans, a_collector_that_fails_drops_the_batch_once, .fini = teardown)
{
    start(UPSTUB_CLOSE);
    conn_start(&P, 5);
    route_feed(5, GET("/callme/ping"));
    pool_fixture_send(&F, 5, SIZE_MAX);
    pool_fixture_tick(&F, SPANS_FLUSH_MS);
    cr_assert(pool_fixture_run(&F, exported, NULL, 3000), "no export within 3 s");
    cr_assert_eq(atomic_load(&spans_of(F.aw)->dropped), 1);
    cr_assert_eq(atomic_load(&spans_of(F.aw)->sent), 0);
    pool_fixture_tick(&F, 2 * SPANS_FLUSH_MS);
    cr_assert_eq(spans_of(F.aw)->n + spans_of(F.aw)->in_flight, 0u, "never retried");
}
