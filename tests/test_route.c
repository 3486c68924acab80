/* test_route.c - the path table and the /example query, from a table. */
#include <criterion/criterion.h>
#include <string.h>

#include <llhttp.h>

#include "route.h"

struct route_case {
    int method;
    const char *url;
    int id;
    int status;
    unsigned bits;
};

Test(route, table)
{
    static const struct route_case cases[] = {
        {HTTP_GET, "/example", ROUTE_EXAMPLE, 0, 1000},
        {HTTP_HEAD, "/example", ROUTE_EXAMPLE, 0, 1000},
        {HTTP_GET, "/example?bits=64", ROUTE_EXAMPLE, 0, 64},
        {HTTP_GET, "/example?bits=4096", ROUTE_EXAMPLE, 0, 4096},
        {HTTP_GET, "/example?x=1&bits=512&y", ROUTE_EXAMPLE, 0, 512},
        {HTTP_GET, "/example?other=1", ROUTE_EXAMPLE, 0, 1000},
        {HTTP_GET, "/example?", ROUTE_EXAMPLE, 0, 1000},
        {HTTP_GET, "/example?bits=63", ROUTE_EXAMPLE, 400, 0},
        {HTTP_GET, "/example?bits=4097", ROUTE_EXAMPLE, 400, 0},
        {HTTP_GET, "/example?bits=abc", ROUTE_EXAMPLE, 400, 0},
        {HTTP_GET, "/example?bits=", ROUTE_EXAMPLE, 400, 0},
        {HTTP_GET, "/example?bits", ROUTE_EXAMPLE, 400, 0},
        {HTTP_GET, "/example?bits=+100", ROUTE_EXAMPLE, 400, 0},
        {HTTP_GET, "/example?bits=100.5", ROUTE_EXAMPLE, 400, 0},
        {HTTP_GET, "/example?bits=99999999999999999999", ROUTE_EXAMPLE, 400, 0},
        {HTTP_GET, "/example?bits=100&bits=200", ROUTE_EXAMPLE, 400, 0},
        {HTTP_GET, "/healthz", ROUTE_HEALTHZ, 0, 1000},
        {HTTP_GET, "/readyz", ROUTE_READYZ, 0, 1000},
        {HTTP_GET, "/metrics", ROUTE_METRICS, 0, 1000},
        {HTTP_GET, "/ping", ROUTE_PING, 0, 1000},
        {HTTP_GET, "http://host:8080/healthz", ROUTE_HEALTHZ, 0, 1000},
        {HTTP_GET, "http://host", ROUTE_OTHER, 404, 1000},
        {HTTP_GET, "/", ROUTE_OTHER, 404, 1000},
        {HTTP_GET, "/example/", ROUTE_OTHER, 404, 1000},
        {HTTP_GET, "/examplex", ROUTE_OTHER, 404, 1000},
        {HTTP_GET, "/exampl", ROUTE_OTHER, 404, 1000},
        {HTTP_GET, "*", ROUTE_OTHER, 404, 1000},
        {HTTP_POST, "/example", ROUTE_EXAMPLE, 405, 1000},
        {HTTP_DELETE, "/healthz", ROUTE_HEALTHZ, 405, 1000},
        {HTTP_POST, "/nope", ROUTE_OTHER, 404, 1000},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const struct route_case *c = &cases[i];
        struct route_result r;
        route_match(c->method, c->url, strlen(c->url), 1000, &r);
        cr_assert_eq(r.id, c->id, "%s: id %d", c->url, r.id);
        cr_assert_eq(r.status, c->status, "%s: status %d", c->url, r.status);
        if (c->status == 0)
            cr_assert_eq(r.bits, c->bits, "%s: bits %u", c->url, r.bits);
        if (c->status == 400) {
            cr_assert_not_null(r.reason, "%s", c->url);
            cr_assert_null(strchr(r.reason, '\n'), "one line");
        }
    }
}

Test(route, names_and_allow)
{
    cr_assert_str_eq(route_name(ROUTE_EXAMPLE), "/example");
    cr_assert_str_eq(route_name(ROUTE_OTHER), "other");
    cr_assert_str_eq(route_allow(ROUTE_EXAMPLE), "GET, HEAD");
    cr_assert_null(route_allow(ROUTE_OTHER));
}
