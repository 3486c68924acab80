/* route_fixture.c - the route tests' shared set-up over the pool fixture
 * (route_fixture.h): F, started as a route test wants it, the steps that
 * feed it and let its answers out, and the gateway's scripted catalog and
 * inventory. It checks that each step took (a fixture that did not start
 * fails the test), never what a route answers: that is each test's, but for
 * the one scenario both gateway routes share word for word
 * (route_gateway_client_gone()).
 */
#include "route_fixture.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdatomic.h>
#include <string.h>

struct pool_fixture F;
struct upstub route_cat, route_inv;

void route_fixture_init(void)
{
    pool_fixture_init(&F);
    F.cfg.bits = PRIME_BITS_MIN;
    F.cfg.dispatch = DISPATCH_INLINE;
    F.cfg.prime_split = false;
}

void route_fixture_start(void)
{
    cr_assert_eq(pool_fixture_start(&F), 0, "%s", F.w.init_why);
}

void route_fixture_stop(void)
{
    pool_fixture_stop(&F);
}

void route_feed(int fd, const char *s)
{
    cr_assert_eq(pool_fixture_feed(&F, fd, s), (int)strlen(s), "fd %d: no receive armed", fd);
}

void route_drain(int fd)
{
    pool_fixture_send(&F, fd, SIZE_MAX);
}

void route_fixture_calls_out(void)
{
    F.cfg.upstream_timeout_ms = 2000;
    char why[160];
    cr_assert_eq(pool_fixture_real_io(&F, IO_EPOLL, why, sizeof(why)), 0, "%s", why);
}

void route_fixture_upstub(struct upstub *u, upstub_fn *fn, struct url *url, const char *path)
{
    cr_assert_eq(upstub_start(u, fn, NULL), 0);
    cr_assert_eq(pool_fixture_upstream(&F, url, u->port, path), 0);
}

bool route_answered(void *ctx)
{
    return S.fd[*(int *)ctx].send_armed;
}

void route_answer_of(int fd)
{
    cr_assert(pool_fixture_run(&F, route_answered, &fd, 3000), "no answer within 3 s");
    route_drain(fd);
}

/* ---- the gateway's upstreams ------------------------------------------------ */

static int cat_what; /* UPSTUB_* of the catalog */
static unsigned cat_delay_ms;

static void catalog_answer(struct upstub *s, const char *path, unsigned n, struct upstub_answer *a)
{
    a->what = cat_what;
    a->status = 200;
    a->body = ROUTE_CATALOG_JSON;
    a->body_len = (size_t)-1;
    a->delay_ms = cat_delay_ms;
}

static void inventory_answer(struct upstub *s, const char *path, unsigned n, struct upstub_answer *a)
{
    a->status = 200;
    a->body = "{\"itemId\":\"a1\",\"quantity\":7}";
    a->body_len = (size_t)-1;
    a->what = strcmp(path, "/api/inventory/a1") == 0 ? UPSTUB_ANSWER : UPSTUB_CLOSE;
}

void route_fixture_gateway(int what, unsigned delay_ms)
{
    cat_what = what;
    cat_delay_ms = delay_ms;
    route_fixture_init();
    route_fixture_calls_out();
    route_fixture_upstub(&route_cat, catalog_answer, &F.cfg.catalog_url, "");
    route_fixture_upstub(&route_inv, inventory_answer, &F.cfg.inventory_url, "");
    route_fixture_start();
}

void route_fixture_gateway_stop(void)
{
    pool_fixture_stop(&F);
    upstub_stop(&route_cat);
    upstub_stop(&route_inv);
}

void route_gateway_client_gone(const char *request)
{
    route_fixture_gateway(UPSTUB_ANSWER, 300);
    conn_start(&P, 5);
    route_feed(5, request);
    cr_assert_eq(atomic_load(&M.conn.in_flight), 1);
    io_script_recv_res(&S, 5, -ECONNRESET);
    pool_fixture_pump(&F);
    cr_assert(S.fd[5].closed);
    cr_assert_eq(P.nopen, 0);
    cr_assert_eq(atomic_load(&M.conn.in_flight), 0);
    cr_assert_null(app_req_of(&P.conns[0])->state, "the route's calls are gone");
    int fd = 5;
    cr_assert(!pool_fixture_run(&F, route_answered, &fd, 600), "nothing answers it, even once the catalog has");
    cr_assert_eq(atomic_load(&route_inv.requests), 0, "the route went no further");
}
