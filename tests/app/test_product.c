/* test_product.c - GET /api/products/{id} (src/app/product.c) through the
 * app's hooks: the client's connection on the scripted backend
 * (tests/lib/pool_fixture.c), the route's calls on a real one (epoll) against
 * a scripted catalog and inventory on 127.0.0.1 (tests/lib/upstub.c). The
 * request waits on the catalog, then on its product's inventory, and is
 * answered with that product and its availability (null where inventory
 * failed); an id the catalog does not list is 404, a catalog that fails 502;
 * a client gone meanwhile cancels the call. Every wait is bounded.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "pool_fixture.h"
#include "upstub.h"

static struct pool_fixture F;
static struct upstub cat, inv;
static int cat_what;         /* UPSTUB_* of the catalog */
static unsigned cat_delay_ms;

#define S (F.s)
#define P (F.w.pool)
#define M (F.aw->metrics)

static const char CATALOG[] = "[{\"itemId\":\"a1\",\"name\":\"A\"},{\"itemId\":\"a2\",\"name\":\"B\"}]";

static void catalog_answer(struct upstub *s, const char *path, unsigned n, struct upstub_answer *a)
{
    a->what = cat_what;
    a->status = 200;
    a->body = CATALOG;
    a->body_len = (size_t)-1;
    a->delay_ms = cat_delay_ms;
}

/* a1 has 7; a2's inventory closes the connection: its availability is null */
static void inventory_answer(struct upstub *s, const char *path, unsigned n, struct upstub_answer *a)
{
    a->status = 200;
    a->body = "{\"itemId\":\"a1\",\"quantity\":7}";
    a->body_len = (size_t)-1;
    a->what = strcmp(path, "/api/inventory/a1") == 0 ? UPSTUB_ANSWER : UPSTUB_CLOSE;
}

static void start(int what, unsigned delay_ms)
{
    cat_what = what;
    cat_delay_ms = delay_ms;
    pool_fixture_init(&F);
    F.cfg.bits = PRIME_BITS_MIN;
    F.cfg.dispatch = DISPATCH_INLINE;
    F.cfg.prime_split = false;
    F.cfg.upstream_timeout_ms = 2000;
    char why[160];
    cr_assert_eq(pool_fixture_real_io(&F, IO_EPOLL, why, sizeof(why)), 0, "%s", why);
    cr_assert_eq(upstub_start(&cat, catalog_answer, NULL), 0);
    cr_assert_eq(upstub_start(&inv, inventory_answer, NULL), 0);
    cr_assert_eq(pool_fixture_upstream(&F, &F.cfg.catalog_url, &F.app.catalog_target, cat.port, ""), 0);
    cr_assert_eq(pool_fixture_upstream(&F, &F.cfg.inventory_url, &F.app.inventory_target, inv.port, ""), 0);
    cr_assert_eq(pool_fixture_start(&F), 0, "%s", F.w.init_why);
}

static void teardown(void)
{
    pool_fixture_stop(&F);
    upstub_stop(&cat);
    upstub_stop(&inv);
}

static void feed(int fd, const char *s)
{
    cr_assert_eq(pool_fixture_feed(&F, fd, s), (int)strlen(s), "fd %d: no receive armed", fd);
}

static bool answered(void *ctx)
{
    return S.fd[*(int *)ctx].send_armed;
}

/* Waits (at most 3 s) for fd's answer and lets it all out. */
static void answer_of(int fd)
{
    cr_assert(pool_fixture_run(&F, answered, &fd, 3000), "no answer within 3 s");
    pool_fixture_send(&F, fd, SIZE_MAX);
}

#define GET(path) "GET " path " HTTP/1.1\r\nHost: t\r\n\r\n"

Test(product, answers_the_product_with_its_availability, .fini = teardown)
{
    start(UPSTUB_ANSWER, 0);
    conn_start(&P, 5);
    feed(5, GET("/api/products/a1"));
    cr_assert(!S.fd[5].send_armed, "it waits on its calls");
    answer_of(5);
    const char *o = S.fd[5].out;
    cr_assert(strncmp(o, "HTTP/1.1 200 OK\r\n", 17) == 0, "%s", o);
    cr_assert(strstr(o, "Content-Type: application/json\r\n"), "%s", o);
    cr_assert_str_eq(strstr(o, "\r\n\r\n") + 4,
                     "{\"itemId\":\"a1\",\"name\":\"A\",\"availability\":{\"itemId\":\"a1\",\"quantity\":7}}");
    cr_assert(S.fd[5].recv_armed, "kept alive");
    cr_assert_eq(atomic_load(&M.requests[ROUTE_PRODUCT][STATUS_IDX_200]), 1);
    cr_assert_eq(atomic_load(&inv.requests), 1, "one inventory call: its own");
    char path[96];
    cr_assert_str_eq(upstub_path(&inv, 0, path, sizeof(path)), "/api/inventory/a1");
}

Test(product, an_inventory_that_fails_gives_null, .fini = teardown)
{
    start(UPSTUB_ANSWER, 0);
    conn_start(&P, 5);
    feed(5, GET("/api/products/a2"));
    answer_of(5);
    const char *o = S.fd[5].out;
    cr_assert(strncmp(o, "HTTP/1.1 200 OK\r\n", 17) == 0, "%s", o);
    cr_assert_str_eq(strstr(o, "\r\n\r\n") + 4, "{\"itemId\":\"a2\",\"name\":\"B\",\"availability\":null}");
}

Test(product, an_id_the_catalog_does_not_list_is_404, .fini = teardown)
{
    start(UPSTUB_ANSWER, 0);
    conn_start(&P, 5);
    feed(5, GET("/api/products/zz"));
    answer_of(5);
    cr_assert(strncmp(S.fd[5].out, "HTTP/1.1 404 ", 13) == 0, "%s", S.fd[5].out);
    cr_assert_eq(atomic_load(&inv.requests), 0, "no inventory call");
}

Test(product, a_catalog_that_fails_is_502, .fini = teardown)
{
    start(UPSTUB_CLOSE, 0);
    conn_start(&P, 5);
    feed(5, GET("/api/products/a1"));
    answer_of(5);
    const char *o = S.fd[5].out;
    cr_assert(strncmp(o, "HTTP/1.1 502 ", 13) == 0, "%s", o);
    cr_assert(strstr(strstr(o, "\r\n\r\n"), "catalog"), "the body names the catalog: %s", o);
    cr_assert_eq(atomic_load(&inv.requests), 0);
}

Test(product, a_client_gone_cancels_the_call, .fini = teardown)
{
    start(UPSTUB_ANSWER, 300);
    conn_start(&P, 5);
    feed(5, GET("/api/products/a1"));
    cr_assert_eq(atomic_load(&M.conn.in_flight), 1);
    io_script_recv_res(&S, 5, -ECONNRESET);
    pool_fixture_pump(&F);
    cr_assert(S.fd[5].closed);
    cr_assert_eq(P.nopen, 0);
    cr_assert_eq(atomic_load(&M.conn.in_flight), 0);
    int fd = 5;
    cr_assert(!pool_fixture_run(&F, answered, &fd, 600), "nothing answers it, even once the catalog has");
    cr_assert_eq(atomic_load(&inv.requests), 0, "the route went no further");
}
