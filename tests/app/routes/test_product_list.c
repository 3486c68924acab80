/* test_product_list.c - GET /api/products (src/app/routes/product_list.c) through the app's
 * hooks: the client's connection on the scripted backend
 * (tests/lib/pool_fixture.c), the gateway's calls on a real one (epoll)
 * against a scripted catalog and inventory on 127.0.0.1 (tests/lib/route_fixture.c).
 * The request waits on the fan-out and is answered with the products in the
 * catalog's order, each with its availability (null where inventory failed),
 * or 502 naming the catalog; a client gone meanwhile cancels the calls.
 * Every wait is bounded.
 */
#include <criterion/criterion.h>
#include <stdatomic.h>
#include <string.h>

#include "route_fixture.h"

Test(products, answers_the_catalog_with_each_availability, .fini = route_fixture_gateway_stop)
{
    route_fixture_gateway(UPSTUB_ANSWER, 0);
    conn_start(&P, 5);
    route_feed(5, GET("/api/products"));
    cr_assert(!S.fd[5].send_armed, "it waits on the fan-out");
    route_answer_of(5);
    const char *o = S.fd[5].out;
    cr_assert(strncmp(o, "HTTP/1.1 200 OK\r\n", 17) == 0, "%s", o);
    cr_assert(strstr(o, "Content-Type: application/json\r\n"), "%s", o);
    cr_assert_str_eq(strstr(o, "\r\n\r\n") + 4,
                     "[{\"itemId\":\"a1\",\"name\":\"A\",\"availability\":{\"itemId\":\"a1\",\"quantity\":7}},"
                     "{\"itemId\":\"a2\",\"name\":\"B\",\"availability\":null}]");
    cr_assert(strstr(o, "\r\ntraceparent: 00-"), "a trace starts here: %s", o);
    cr_assert(S.fd[5].recv_armed, "kept alive");
    cr_assert_eq(atomic_load(&M.requests[ROUTE_PRODUCTS][STATUS_IDX_200]), 1);
    cr_assert_eq(atomic_load(&route_cat.requests), 1);
    cr_assert_eq(atomic_load(&route_inv.requests), 2);
}

Test(products, a_catalog_that_fails_is_502_naming_it, .fini = route_fixture_gateway_stop)
{
    route_fixture_gateway(UPSTUB_CLOSE, 0);
    conn_start(&P, 5);
    route_feed(5, GET("/api/products"));
    route_answer_of(5);
    const char *o = S.fd[5].out;
    cr_assert(strncmp(o, "HTTP/1.1 502 ", 13) == 0, "%s", o);
    cr_assert(strstr(strstr(o, "\r\n\r\n"), "catalog"), "the body names the catalog: %s", o);
    cr_assert_eq(atomic_load(&route_inv.requests), 0, "no inventory call without a catalog");
}

Test(products, a_client_gone_cancels_the_fan_out, .fini = route_fixture_gateway_stop)
{
    route_gateway_client_gone(GET("/api/products"));
}
