/* test_scrape.c - GET /metrics (src/app/routes/scrape.c) through the app's hooks over
 * the scripted backend (tests/lib/pool_fixture.c): the worker's counters
 * rendered (the answers before it counted under their path and code), a body
 * sent from the heap and freed once sent, and at most SCRAPES_MAX bodies
 * alive while their clients do not read them (503 past it, then 200 again).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "route_fixture.h"

/* the route's file itself, for its limit and its count of bodies alive
 * (the app library's scrape.o is then not linked: this file defines it) */
#include "routes/scrape.c"

#define LIVE (((struct scrapes *)F.aw->route_state[ROUTE_METRICS])->live)

static void setup(void)
{
    route_fixture_init();
    F.nslots = SCRAPES_MAX + 2;
    route_fixture_start();
}

TestSuite(scrape, .init = setup, .fini = route_fixture_stop);

Test(scrape, renders_the_counts_of_the_answers_before)
{
    conn_start(&P, 5);
    route_feed(5, GET("/healthz"));
    route_feed(5, GET("/nope"));
    route_feed(5, GET("/nope"));
    route_drain(5);
    size_t before = S.fd[5].out_len;
    route_feed(5, GET("/metrics"));
    route_drain(5);
    const char *o = S.fd[5].out + before;
    cr_assert(strncmp(o, "HTTP/1.1 200 OK\r\n", 17) == 0, "%s", o);
    cr_assert(strstr(o, "Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"), "%s", o);
    cr_assert(strstr(o, "\nprimed_http_requests_total{path=\"/healthz\",code=\"200\"} 1\n"), "%s", o);
    cr_assert(strstr(o, "\nprimed_http_requests_total{path=\"other\",code=\"404\"} 2\n"), "%s", o);
    const char *body = strstr(o, "\r\n\r\n") + 4;
    char cl[48];
    snprintf(cl, sizeof(cl), "Content-Length: %zu\r\n", strlen(body));
    cr_assert(strstr(o, cl), "the length is the body's: %s", o);
    cr_assert_eq(LIVE, 0u, "its body is freed once sent");
    cr_assert(S.fd[5].recv_armed, "kept alive");
}

Test(scrape, bodies_not_read_are_bounded)
{
    for (int i = 0; i < SCRAPES_MAX; i++) {
        conn_start(&P, 5 + i);
        route_feed(5 + i, GET("/metrics")); /* never read: its body stays */
        cr_assert(S.fd[5 + i].send_armed);
    }
    cr_assert_eq(LIVE, (unsigned)SCRAPES_MAX);
    int late = 5 + SCRAPES_MAX;
    conn_start(&P, late);
    route_feed(late, GET("/metrics"));
    route_drain(late);
    cr_assert(strncmp(S.fd[late].out, "HTTP/1.1 503 ", 13) == 0, "%s", S.fd[late].out);
    cr_assert(strstr(S.fd[late].out, "too many /metrics responses"), "%s", S.fd[late].out);
    route_drain(5); /* one client reads: its body goes */
    cr_assert_eq(LIVE, (unsigned)SCRAPES_MAX - 1);
    size_t before = S.fd[late].out_len;
    route_feed(late, GET("/metrics"));
    route_drain(late);
    cr_assert(strncmp(S.fd[late].out + before, "HTTP/1.1 200 ", 13) == 0, "%s", S.fd[late].out + before);
}
