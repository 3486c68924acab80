/* test_product_item.c - GET /api/products/{id} (src/app/routes/product_item.c) through the
 * app's hooks: the client's connection on the scripted backend
 * (tests/lib/pool_fixture.c), the route's calls on a real one (epoll) against
 * a scripted catalog and inventory on 127.0.0.1 (tests/lib/route_fixture.c). The
 * request waits on the catalog, then on its product's inventory, and is
 * answered with that product and its availability (null where inventory
 * failed); an id the catalog does not list is 404, a catalog that fails 502;
 * a client gone meanwhile cancels the call (route_gateway_client_gone()).
 * Every wait is bounded.
 */
#include <criterion/criterion.h>
#include <stdatomic.h>
#include <string.h>

#include "route_fixture.h"

Test(product, answers_the_product_with_its_availability, .fini = route_fixture_gateway_stop)
{
    route_fixture_gateway(UPSTUB_ANSWER, 0);
    conn_start(&P, 5);
    route_feed(5, GET("/api/products/a1"));
    cr_assert(!S.fd[5].send_armed, "it waits on its calls");
    route_answer_of(5);
    const char *o = S.fd[5].out;
    cr_assert(strncmp(o, "HTTP/1.1 200 OK\r\n", 17) == 0, "%s", o);
    cr_assert(strstr(o, "Content-Type: application/json\r\n"), "%s", o);
    cr_assert_str_eq(strstr(o, "\r\n\r\n") + 4,
                     "{\"itemId\":\"a1\",\"name\":\"A\",\"availability\":{\"itemId\":\"a1\",\"quantity\":7}}");
    cr_assert(S.fd[5].recv_armed, "kept alive");
    cr_assert_eq(atomic_load(&M.requests[ROUTE_PRODUCT][STATUS_IDX_200]), 1);
    cr_assert_eq(atomic_load(&route_inv.requests), 1, "one inventory call: its own");
    char path[96];
    cr_assert_str_eq(upstub_path(&route_inv, 0, path, sizeof(path)), "/api/inventory/a1");
}

Test(product, an_inventory_that_fails_gives_null, .fini = route_fixture_gateway_stop)
{
    route_fixture_gateway(UPSTUB_ANSWER, 0);
    conn_start(&P, 5);
    route_feed(5, GET("/api/products/a2"));
    route_answer_of(5);
    const char *o = S.fd[5].out;
    cr_assert(strncmp(o, "HTTP/1.1 200 OK\r\n", 17) == 0, "%s", o);
    cr_assert_str_eq(strstr(o, "\r\n\r\n") + 4, "{\"itemId\":\"a2\",\"name\":\"B\",\"availability\":null}");
}

Test(product, an_id_the_catalog_does_not_list_is_404, .fini = route_fixture_gateway_stop)
{
    route_fixture_gateway(UPSTUB_ANSWER, 0);
    conn_start(&P, 5);
    route_feed(5, GET("/api/products/zz"));
    route_answer_of(5);
    cr_assert(strncmp(S.fd[5].out, "HTTP/1.1 404 ", 13) == 0, "%s", S.fd[5].out);
    cr_assert_eq(atomic_load(&route_inv.requests), 0, "no inventory call");
}

Test(product, a_catalog_that_fails_is_502, .fini = route_fixture_gateway_stop)
{
    route_fixture_gateway(UPSTUB_CLOSE, 0);
    conn_start(&P, 5);
    route_feed(5, GET("/api/products/a1"));
    route_answer_of(5);
    const char *o = S.fd[5].out;
    cr_assert(strncmp(o, "HTTP/1.1 502 ", 13) == 0, "%s", o);
    cr_assert(strstr(strstr(o, "\r\n\r\n"), "catalog"), "the body names the catalog: %s", o);
    cr_assert_eq(atomic_load(&route_inv.requests), 0);
}

Test(product, a_client_gone_cancels_the_call, .fini = route_fixture_gateway_stop)
{
    route_gateway_client_gone(GET("/api/products/a1"));
}
