/* test_scrape.c - GET /metrics (src/app/scrape.c) through the app's hooks over
 * the scripted backend (tests/lib/pool_fixture.c): the worker's counters
 * rendered (the answers before it counted under their path and code), a body
 * sent from the heap and freed once sent, and at most APP_SCRAPES_MAX bodies
 * alive while their clients do not read them (503 past it, then 200 again).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "pool_fixture.h"

static struct pool_fixture F;

#define S (F.s)
#define P (F.w.pool)

static void setup(void)
{
    pool_fixture_init(&F);
    F.cfg.bits = PRIME_BITS_MIN;
    F.cfg.dispatch = DISPATCH_INLINE;
    F.cfg.prime_split = false;
    F.nslots = APP_SCRAPES_MAX + 2;
    cr_assert_eq(pool_fixture_start(&F), 0, "%s", F.w.init_why);
}

static void teardown(void)
{
    pool_fixture_stop(&F);
}

static void feed(int fd, const char *s)
{
    cr_assert_eq(pool_fixture_feed(&F, fd, s), (int)strlen(s), "fd %d: no receive armed", fd);
}

static void drain_sends(int fd)
{
    pool_fixture_send(&F, fd, SIZE_MAX);
}

#define GET(path) "GET " path " HTTP/1.1\r\nHost: t\r\n\r\n"

TestSuite(scrape, .init = setup, .fini = teardown);

Test(scrape, renders_the_counts_of_the_answers_before)
{
    conn_start(&P, 5);
    feed(5, GET("/healthz"));
    feed(5, GET("/nope"));
    feed(5, GET("/nope"));
    drain_sends(5);
    size_t before = S.fd[5].out_len;
    feed(5, GET("/metrics"));
    drain_sends(5);
    const char *o = S.fd[5].out + before;
    cr_assert(strncmp(o, "HTTP/1.1 200 OK\r\n", 17) == 0, "%s", o);
    cr_assert(strstr(o, "Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"), "%s", o);
    cr_assert(strstr(o, "\nprimed_http_requests_total{path=\"/healthz\",code=\"200\"} 1\n"), "%s", o);
    cr_assert(strstr(o, "\nprimed_http_requests_total{path=\"other\",code=\"404\"} 2\n"), "%s", o);
    const char *body = strstr(o, "\r\n\r\n") + 4;
    char cl[48];
    snprintf(cl, sizeof(cl), "Content-Length: %zu\r\n", strlen(body));
    cr_assert(strstr(o, cl), "the length is the body's: %s", o);
    cr_assert_eq(F.aw->scrapes_live, 0u, "its body is freed once sent");
    cr_assert(S.fd[5].recv_armed, "kept alive");
}

Test(scrape, bodies_not_read_are_bounded)
{
    for (int i = 0; i < APP_SCRAPES_MAX; i++) {
        conn_start(&P, 5 + i);
        feed(5 + i, GET("/metrics")); /* never read: its body stays */
        cr_assert(S.fd[5 + i].send_armed);
    }
    cr_assert_eq(F.aw->scrapes_live, (unsigned)APP_SCRAPES_MAX);
    int late = 5 + APP_SCRAPES_MAX;
    conn_start(&P, late);
    feed(late, GET("/metrics"));
    drain_sends(late);
    cr_assert(strncmp(S.fd[late].out, "HTTP/1.1 503 ", 13) == 0, "%s", S.fd[late].out);
    cr_assert(strstr(S.fd[late].out, "too many /metrics responses"), "%s", S.fd[late].out);
    drain_sends(5); /* one client reads: its body goes */
    cr_assert_eq(F.aw->scrapes_live, (unsigned)APP_SCRAPES_MAX - 1);
    size_t before = S.fd[late].out_len;
    feed(late, GET("/metrics"));
    drain_sends(late);
    cr_assert(strncmp(S.fd[late].out + before, "HTTP/1.1 200 ", 13) == 0, "%s", S.fd[late].out + before);
}
