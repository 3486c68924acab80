/* test_metrics.c - per-worker counters merged at scrape time, and the text
 * exposition: escaping, cumulative buckets, +Inf equals _count. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdatomic.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "fault_delay.h"
#include "gateway_service.h"
#include "metrics.h"
#include "upstreams.h"

static const struct metrics_info info = {
    .version = "1.0",
    .profile = "te\"st",
    .dispatch = "steal",
    .cc = "gcc\\x",
    .engine = "flint",
    .io = "io_uring",
    .queue_depth = 3,
    .steal = 1,
    .start_time = 1.5,
};

static uint64_t value_of(const char *text, const char *series)
{
    const char *p = strstr(text, series);
    cr_assert_not_null(p, "series %s missing", series);
    return strtoull(p + strlen(series) + 1, NULL, 10);
}

Test(metrics, escape)
{
    char out[64];
    metrics_escape(out, sizeof(out), "a\"b\\c\nd");
    cr_assert_str_eq(out, "a\\\"b\\\\c\\nd");
    metrics_escape(out, 4, "abcdef");
    cr_assert_eq(strlen(out), 2);
}

Test(metrics, histogram_is_cumulative_and_inf_equals_count)
{
    static struct metrics m;
    memset(&m, 0, sizeof(m));
    stats_observe(&m.req_seconds[ROUTE_EXAMPLE], 200000);         /* 0.2 ms */
    stats_observe(&m.req_seconds[ROUTE_EXAMPLE], 18000000);       /* 18 ms */
    stats_observe(&m.req_seconds[ROUTE_EXAMPLE], 60000000000ULL); /* 60 s: +Inf only */
    struct metrics *ms[1] = {&m};
    struct metrics_view v;
    metrics_merge(ms, 1, &v);
    cr_assert_eq(v.req_bucket[ROUTE_EXAMPLE][0], 1);
    cr_assert_eq(v.req_bucket[ROUTE_EXAMPLE][4], 1); /* le 0.01 */
    cr_assert_eq(v.req_bucket[ROUTE_EXAMPLE][5], 2); /* le 0.025 */
    cr_assert_eq(v.req_bucket[ROUTE_EXAMPLE][STATS_NBUCKETS - 1], 2);
    cr_assert_eq(v.req_bucket[ROUTE_EXAMPLE][STATS_NBUCKETS], 3);
    cr_assert_eq(v.req_count[ROUTE_EXAMPLE], 3);
    for (int b = 1; b <= STATS_NBUCKETS; b++)
        cr_assert_geq(v.req_bucket[ROUTE_EXAMPLE][b], v.req_bucket[ROUTE_EXAMPLE][b - 1]);

    char *buf = malloc(65536);
    int n = metrics_render(&v, &info, buf, 65536);
    cr_assert_gt(n, 0);
    cr_assert_eq(value_of(buf, "primed_http_request_duration_seconds_bucket{path=\"/example\",le=\"+Inf\"}"), 3);
    cr_assert_eq(value_of(buf, "primed_http_request_duration_seconds_count{path=\"/example\"}"), 3);
    cr_assert_eq(value_of(buf, "primed_http_request_duration_seconds_bucket{path=\"/example\",le=\"0.025\"}"), 2);
    cr_assert_not_null(strstr(buf, "profile=\"te\\\"st\""));
    cr_assert_not_null(strstr(buf, "cc=\"gcc\\\\x\""));
    cr_assert_not_null(strstr(buf, "primed_queue_depth 3"));
    cr_assert_not_null(strstr(buf, "# TYPE process_resident_memory_bytes gauge"));
    free(buf);
}

Test(metrics, too_small_buffer_is_enospc)
{
    struct metrics_view v;
    memset(&v, 0, sizeof(v));
    char buf[100];
    cr_assert_lt(metrics_render(&v, &info, buf, sizeof(buf)), 0);
}

struct writer {
    struct metrics *m;
    int n;
};

static void *write_counts(void *arg)
{
    struct writer *w = arg;
    for (int i = 0; i < w->n; i++) {
        stats_add(&w->m->requests[ROUTE_HEALTHZ][STATUS_IDX_200], 1);
        stats_observe(&w->m->req_seconds[ROUTE_HEALTHZ], 1000);
    }
    return NULL;
}

Test(metrics, counters_summed_across_workers)
{
    static struct metrics m[4];
    memset(m, 0, sizeof(m));
    pthread_t t[4];
    struct writer w[4];
    for (int i = 0; i < 4; i++) {
        w[i] = (struct writer){&m[i], 10000 * (i + 1)};
        pthread_create(&t[i], NULL, write_counts, &w[i]);
    }
    /* a scrape racing the writers sees a consistent snapshot per bucket */
    struct metrics *ms[4] = {&m[0], &m[1], &m[2], &m[3]};
    struct metrics_view v;
    metrics_merge(ms, 4, &v);
    cr_assert_eq(v.req_count[ROUTE_HEALTHZ], v.req_bucket[ROUTE_HEALTHZ][STATS_NBUCKETS]);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    metrics_merge(ms, 4, &v);
    cr_assert_eq(v.requests[ROUTE_HEALTHZ][STATUS_IDX_200], 100000);
    cr_assert_eq(v.req_count[ROUTE_HEALTHZ], 100000);
}

Test(metrics, status_index)
{
    cr_assert_eq(metrics_status_index(200), STATUS_IDX_200);
    cr_assert_eq(metrics_status_index(431), STATUS_IDX_431);
    cr_assert_eq(metrics_status_index(299), -1);
}

/* Every gauge exists in both dispatch modes: an inline pod reports a queue
 * depth of 0 rather than no series, so dashboard queries return data. */
Test(metrics, queue_gauges_exist_under_inline_dispatch)
{
    struct metrics m;
    memset(&m, 0, sizeof(m));
    struct metrics *ms[1] = {&m};
    struct metrics_info inl = info;
    inl.dispatch = "inline";
    inl.steal = 0;
    inl.queue_depth = -1;
    char *out = NULL;
    int n = metrics_scrape(ms, 1, &inl, &out);
    cr_assert_gt(n, 0);
    cr_assert_not_null(strstr(out, "\nprimed_queue_depth 0\n"), "no primed_queue_depth 0 under inline");
    cr_assert_not_null(strstr(out, "\nprimed_steals_total 0\n"));
    cr_assert_not_null(strstr(out, "\nprimed_prime_pieces_helped_total 0\n"));
    free(out);
}

/* Pieces helped are summed over the workers. */
Test(metrics, pieces_helped_sum_over_workers)
{
    static struct metrics a, b;
    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    stats_add(&a.dispatch.pieces_helped, 3);
    stats_add(&b.dispatch.pieces_helped, 4);
    struct metrics *ms[2] = {&a, &b};
    char *out = NULL;
    cr_assert_gt(metrics_scrape(ms, 2, &info, &out), 0);
    cr_assert_not_null(strstr(out, "\nprimed_prime_pieces_helped_total 7\n"), "%s", out);
    free(out);
}

/* The services' series (each written by its service, services.h), in a
 * scrape: two workers' upstream clients with the gateway's two pools, the
 * gateway's fallbacks and the faults, summed as the services sum them. */
static struct upstreams ups[2];
static bool with_gateway;

static void gateway_and_faults(const void *ctx, struct metrics_out *o)
{
    struct upstreams *const two[2] = {&ups[0], &ups[1]};
    if (with_gateway) {
        upstreams_metrics_put(o, two, 2);
        gateway_metrics_put(o, 10);
    }
    fault_delay_metrics_put(o, 6, 2);
}

Test(metrics, gateway_and_fault_series)
{
    static struct metrics m[2];
    memset(m, 0, sizeof(m));
    memset(ups, 0, sizeof(ups));
    for (int w = 0; w < 2; w++) {
        ups[w].client.nups = 2;
        ups[w].names[0] = "catalog";
        ups[w].names[1] = "inventory";
        stats_add(&ups[w].stats[0].calls[0], 2);
        stats_add(&ups[w].stats[1].calls[7], 4);
        stats_add(&m[w].requests[ROUTE_PRODUCTS][STATUS_IDX_200], 6);
        stats_add(&m[w].requests[ROUTE_PRODUCTS][STATUS_IDX_504], 1);
        stats_add(&m[w].requests[ROUTE_CATALOG][STATUS_IDX_200], 7);
        stats_add(&m[w].requests[ROUTE_INVENTORY][STATUS_IDX_404], 8);
    }
    struct metrics_info gw = info;
    gw.services = gateway_and_faults;
    with_gateway = true;
    struct metrics *ms[2] = {&m[0], &m[1]};
    char *out = NULL;
    int n = metrics_scrape(ms, 2, &gw, &out);
    cr_assert_gt(n, 0);
    cr_assert_eq(value_of(out, "primed_faults_injected_total{kind=\"delay\"}"), 6);
    cr_assert_eq(value_of(out, "primed_faults_injected_total{kind=\"abort\"}"), 2);
    cr_assert_eq(value_of(out, "\nprimed_gateway_fallbacks_total"), 10);
    cr_assert_not_null(strstr(out, "# TYPE primed_gateway_fallbacks_total counter\n"));
    cr_assert_eq(value_of(out, "primed_upstream_calls_total{upstream=\"catalog\",result=\"ok\"}"), 4);
    cr_assert_eq(value_of(out, "primed_upstream_calls_total{upstream=\"inventory\",result=\"timeout\"}"), 8);
    cr_assert_eq(value_of(out, "primed_upstream_calls_total{upstream=\"inventory\",result=\"ok\"}"), 0);
    cr_assert_null(strstr(out, "upstream=\"callme\""), "only the roles configured");
    cr_assert_eq(value_of(out, "primed_http_requests_total{path=\"/api/products\",code=\"200\"}"), 12);
    cr_assert_eq(value_of(out, "primed_http_requests_total{path=\"/api/products\",code=\"504\"}"), 2);
    cr_assert_eq(value_of(out, "primed_http_requests_total{path=\"/api/catalog\",code=\"200\"}"), 14);
    cr_assert_eq(value_of(out, "primed_http_requests_total{path=\"/api/inventory/{itemId}\",code=\"404\"}"), 16);
    cr_assert_not_null(strstr(out, "primed_upstream_call_duration_seconds_count{upstream=\"inventory\"}"));
    cr_assert(strstr(out, "primed_faults_injected_total") < strstr(out, "\nprocess_"),
              "the services' series come before the process's");
    free(out);

    /* not a gateway: no fallback series; the fault series are always there */
    with_gateway = false;
    out = NULL;
    cr_assert_gt(metrics_scrape(ms, 2, &gw, &out), 0);
    cr_assert_null(strstr(out, "primed_gateway_fallbacks_total"));
    cr_assert_not_null(strstr(out, "primed_faults_injected_total{kind=\"delay\"} 6\n"));
    cr_assert_null(strstr(out, "primed_upstream_calls_total"), "no upstream configured");
    free(out);
}

/* The store's state and its failures by kind (db.c): written with a store,
 * every kind listed (a rate over a missing series is no rate), none without. */
static struct db db;
static const struct db *the_db;

static void store_series(const void *ctx, struct metrics_out *o)
{
    db_metrics_put(o, the_db, false);
}

Test(metrics, store_state_and_failures_by_kind)
{
    struct metrics m = {0};
    struct metrics *ms[1] = {&m};
    struct metrics_info st = info;
    st.services = store_series;
    struct store_health health = {0};
    db.health = &health;
    the_db = &db;
    store_health_down(&health, -ENOSPC);
    atomic_store(&health.failures[STORE_FAULT_DISK_FULL], 7);
    atomic_store(&health.failures[STORE_FAULT_TIMEOUT], 2);
    char *out = NULL;
    cr_assert_gt(metrics_scrape(ms, 1, &st, &out), 0);
    cr_assert_eq(value_of(out, "\nprimed_store_ready"), 0);
    cr_assert_not_null(strstr(out, "# TYPE primed_store_ready gauge\n"));
    cr_assert_eq(value_of(out, "primed_store_failures_total{kind=\"disk_full\"}"), 7);
    cr_assert_eq(value_of(out, "primed_store_failures_total{kind=\"timeout\"}"), 2);
    cr_assert_eq(value_of(out, "primed_store_failures_total{kind=\"too_many_connections\"}"), 0);
    free(out);
    store_health_up(&health);
    cr_assert_gt(metrics_scrape(ms, 1, &st, &out), 0);
    cr_assert_eq(value_of(out, "\nprimed_store_ready"), 1);
    free(out);
    the_db = NULL;
    cr_assert_gt(metrics_scrape(ms, 1, &st, &out), 0);
    cr_assert_null(strstr(out, "primed_store_ready"), "no store, no series");
    free(out);
}

/* The process_* series read /proc/self/stat by field position; /proc/self/status names its
 * fields, so it is the reference: threads equal, virtual size equal, resident size within
 * what a page or two of allocation between the two reads can move. */
static long status_kib(const char *field)
{
    FILE *f = fopen("/proc/self/status", "re");
    cr_assert_not_null(f);
    char line[256];
    long v = -1;
    size_t n = strlen(field);
    while (fgets(line, sizeof(line), f))
        if (strncmp(line, field, n) == 0 && line[n] == ':')
            v = strtol(line + n + 1, NULL, 10);
    fclose(f);
    cr_assert_geq(v, 0, "%s missing from /proc/self/status", field);
    return v;
}

/* Under qemu-user /proc/self/stat is qemu's own rendering, most of its fields 0 (the virtual
 * size among them, never 0 for a real process), and /proc/self/status is the emulator's. */
static bool stat_is_emulated(void)
{
    FILE *f = fopen("/proc/self/stat", "re");
    cr_assert_not_null(f);
    char line[1024];
    bool got = fgets(line, sizeof(line), f) != NULL;
    fclose(f);
    char *p = got ? strrchr(line, ')') : NULL;
    cr_assert_not_null(p);
    int field = 2; /* the ")" ends field 2, comm */
    for (char *q = strtok(p + 1, " \n"); q; q = strtok(NULL, " \n"))
        if (++field == 23) /* vsize */
            return strcmp(q, "0") == 0;
    return true;
}

Test(metrics, process_series_match_proc_status)
{
    if (stat_is_emulated())
        cr_skip_test("/proc/self/stat is emulated here (qemu-user): nothing to compare with");
    struct metrics_view v;
    memset(&v, 0, sizeof(v));
    char *buf = malloc(65536);
    cr_assert_gt(metrics_render(&v, &info, buf, 65536), 0);
    long threads = status_kib("Threads"), vm_kib = status_kib("VmSize"), rss_kib = status_kib("VmRSS");
    cr_assert_eq(value_of(buf, "\nprocess_threads"), (uint64_t)threads);
    long vm = (long)value_of(buf, "\nprocess_virtual_memory_bytes") / 1024;
    cr_assert(vm > vm_kib - 1024 && vm < vm_kib + 1024, "virtual %ld KiB, status %ld KiB", vm, vm_kib);
    long rss = (long)value_of(buf, "\nprocess_resident_memory_bytes") / 1024;
    cr_assert(rss > rss_kib / 2 && rss < rss_kib * 2, "resident %ld KiB, status %ld KiB", rss, rss_kib);
    cr_assert_gt(rss, 0);
    free(buf);
}
