/* test_route.c - the path table and the /example query, from a table. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include <llhttp.h>

#include "config.h"
#include "gateway_service.h"
#include "route.h"

/* A request routed as the app routes it: the table, then the route's own
 * query (example.c's bits=, product_list.c's fanout=), --bits 1000. */
static void match(int method, const char *url, size_t len, struct route_result *r)
{
    static struct config cfg = {.bits = 1000};
    app_route_request(&cfg, method, url, len, r);
}

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
        {HTTP_GET, "http:///healthz", ROUTE_HEALTHZ, 0, 1000}, /* an empty authority: the path starts at once */
        {HTTP_GET, "http://host", ROUTE_OTHER, 404, 1000},
        {HTTP_GET, "/", ROUTE_OTHER, 404, 1000},
        {HTTP_GET, "/example/", ROUTE_OTHER, 404, 1000},
        {HTTP_GET, "/examplex", ROUTE_OTHER, 404, 1000},
        {HTTP_GET, "/exampl", ROUTE_OTHER, 404, 1000},
        {HTTP_OPTIONS, "*", ROUTE_OTHER, 0, 1000}, /* the server itself (the core lets "*" through for OPTIONS only) */
        {HTTP_OPTIONS, "/healthz", ROUTE_HEALTHZ, 0, 1000},
        {HTTP_OPTIONS, "/nope", ROUTE_OTHER, 404, 1000},
        {HTTP_POST, "/echo", ROUTE_ECHO, 0, 1000},
        {HTTP_PUT, "/echo", ROUTE_ECHO, 0, 1000},
        {HTTP_DELETE, "/echo", ROUTE_ECHO, 405, 1000},
        {HTTP_PUT, "/example", ROUTE_EXAMPLE, 405, 1000},
        {HTTP_POST, "/example", ROUTE_EXAMPLE, 405, 1000},
        {HTTP_DELETE, "/healthz", ROUTE_HEALTHZ, 405, 1000},
        {HTTP_POST, "/nope", ROUTE_OTHER, 404, 1000},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const struct route_case *c = &cases[i];
        struct route_result r;
        match(c->method, c->url, strlen(c->url), &r);
        cr_assert_eq(r.id, c->id, "%s: id %d", c->url, r.id);
        cr_assert_eq(r.status, c->status, "%s: status %d", c->url, r.status);
        if (c->status == 0 && c->id == ROUTE_EXAMPLE) /* the bits of /example's query, --bits without one */
            cr_assert_eq(r.arg, c->bits, "%s: bits %u", c->url, r.arg);
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
    cr_assert_str_eq(route_allow(ROUTE_EXAMPLE), "GET, HEAD, OPTIONS");
    cr_assert_str_eq(route_allow(ROUTE_ECHO), "GET, HEAD, POST, PUT, OPTIONS");
    cr_assert_null(route_allow(ROUTE_OTHER));
}

/* route_allows() answers GET, HEAD and OPTIONS without reading the row:
 * every row must name them. The rest is read from the row, word by word. */
Test(route, every_row_allows_get_head_options_and_names_the_rest)
{
    for (int id = ROUTE_OTHER + 1; id < ROUTE__COUNT; id++) {
        const char *a = route_allow((enum route_id)id);
        cr_assert(strncmp(a, "GET, HEAD", 9) == 0 && strstr(a, "OPTIONS"), "%s: %s", route_name((enum route_id)id), a);
        /* and names no method route_allows() cannot name itself */
        char words[64];
        snprintf(words, sizeof(words), "%s", a);
        for (char *w = strtok(words, ", "); w; w = strtok(NULL, ", "))
            cr_assert(strstr(" GET HEAD OPTIONS POST PUT DELETE PATCH ", w), "%s: %s", route_name((enum route_id)id), w);
    }
    cr_assert(route_allows(ROUTE_ECHO, HTTP_POST));
    cr_assert(route_allows(ROUTE_ECHO, HTTP_PUT));
    cr_assert_not(route_allows(ROUTE_ECHO, HTTP_PATCH));
    cr_assert_not(route_allows(ROUTE_ECHO, HTTP_DELETE));
    cr_assert_not(route_allows(ROUTE_EXAMPLE, HTTP_POST));
    cr_assert_not(route_allows(ROUTE_OTHER, HTTP_GET));
}

/* The gateway's routes: /api/catalog, /api/products' fanout=, and the one
 * prefix route /api/inventory/{itemId}. */
Test(route, gateway_routes_and_fanout)
{
    static const struct {
        int method;
        const char *url;
        int id, status, fanout;
    } cases[] = {
        {HTTP_GET, "/api/catalog", ROUTE_CATALOG, 0, FANOUT_DEFAULT},
        {HTTP_HEAD, "/api/catalog?x=1", ROUTE_CATALOG, 0, FANOUT_DEFAULT},
        {HTTP_POST, "/api/catalog", ROUTE_CATALOG, 405, FANOUT_DEFAULT},
        {HTTP_GET, "/api/catalog/", ROUTE_OTHER, 404, FANOUT_DEFAULT},
        {HTTP_GET, "/api/products", ROUTE_PRODUCTS, 0, FANOUT_DEFAULT},
        {HTTP_GET, "/api/products?fanout=parallel", ROUTE_PRODUCTS, 0, FANOUT_PARALLEL},
        {HTTP_GET, "/api/products?fanout=sequential", ROUTE_PRODUCTS, 0, FANOUT_SEQUENTIAL},
        {HTTP_GET, "/api/products?a=1&fanout=sequential&b", ROUTE_PRODUCTS, 0, FANOUT_SEQUENTIAL},
        {HTTP_GET, "/api/products?fanoutx=1", ROUTE_PRODUCTS, 0, FANOUT_DEFAULT},
        {HTTP_GET, "/api/products?bits=64", ROUTE_PRODUCTS, 0, FANOUT_DEFAULT},
        {HTTP_GET, "/api/products?fanout=bogus", ROUTE_PRODUCTS, 400, -1},
        {HTTP_GET, "/api/products?fanout=Parallel", ROUTE_PRODUCTS, 400, -1},
        {HTTP_GET, "/api/products?fanout=parallelx", ROUTE_PRODUCTS, 400, -1},
        {HTTP_GET, "/api/products?fanout=", ROUTE_PRODUCTS, 400, -1},
        {HTTP_GET, "/api/products?fanout", ROUTE_PRODUCTS, 400, -1},
        {HTTP_GET, "/api/products?fanout=parallel&fanout=parallel", ROUTE_PRODUCTS, 400, -1},
        {HTTP_GET, "/api/products?fanout=parallel&fanout=sequential", ROUTE_PRODUCTS, 400, -1},
        {HTTP_DELETE, "/api/products", ROUTE_PRODUCTS, 405, FANOUT_DEFAULT},
        {HTTP_GET, "http://gw:8080/api/products?fanout=sequential", ROUTE_PRODUCTS, 0, FANOUT_SEQUENTIAL},
        {HTTP_GET, "http://gw/api/catalog", ROUTE_CATALOG, 0, FANOUT_DEFAULT},
        {HTTP_GET, "/example?fanout=bogus", ROUTE_EXAMPLE, 0, FANOUT_DEFAULT},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct route_result r;
        match(cases[i].method, cases[i].url, strlen(cases[i].url), &r);
        cr_assert_eq(r.id, cases[i].id, "%s: id %d", cases[i].url, r.id);
        cr_assert_eq(r.status, cases[i].status, "%s: status %d", cases[i].url, r.status);
        if (r.status == 0 && r.id == ROUTE_PRODUCTS) /* its query's; another route's query is not read for it */
            cr_assert_eq(r.arg, cases[i].fanout, "%s: fanout %d", cases[i].url, r.arg);
        if (r.status == 0 && r.id == ROUTE_EXAMPLE)
            cr_assert_eq(r.arg, 1000, "%s: fanout= means nothing to /example", cases[i].url);
        if (r.status == 400) {
            cr_assert_not_null(r.reason, "%s", cases[i].url);
            cr_assert(strstr(r.reason, "fanout"), "%s: %s", cases[i].url, r.reason);
            cr_assert_null(strchr(r.reason, '\n'));
        }
    }
}

Test(route, inventory_item_ids)
{
    char id32[33], id33[34];
    memset(id32, 'a', 32);
    id32[32] = '\0';
    memset(id33, 'b', 33);
    id33[33] = '\0';
    char url32[64], url33[64];
    snprintf(url32, sizeof(url32), "/api/inventory/%s", id32);
    snprintf(url33, sizeof(url33), "/api/inventory/%s", id33);
    static const char *const kept[][2] = {
        {"/api/inventory/329299", "329299"},
        {"/api/inventory/a", "a"},
        {"/api/inventory/A-z_0.9", "A-z_0.9"},
        {"/api/inventory/329299?x=1", "329299"},
        {"http://inv:8082/api/inventory/444434", "444434"},
        {"http://inv/api/inventory/444434?q", "444434"},
    };
    for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++) {
        struct route_result r;
        match(HTTP_GET, kept[i][0], strlen(kept[i][0]), &r);
        cr_assert_eq(r.id, ROUTE_INVENTORY, "%s", kept[i][0]);
        cr_assert_eq(r.status, 0, "%s", kept[i][0]);
        cr_assert_str_eq(r.item, kept[i][1], "%s", kept[i][0]);
        cr_assert_eq(r.item_len, strlen(kept[i][1]));
    }
    struct route_result r;
    match(HTTP_GET, url32, strlen(url32), &r);
    cr_assert_eq(r.item_len, 32, "32 bytes is the longest id");
    cr_assert_str_eq(r.item, id32);

    /* ids primed cannot hold: the route, with no item (the handler's 404) */
    const char *unheld[] = {url33, "/api/inventory/a/b", "/api/inventory/a%2Fb", "/api/inventory/{itemId}",
                            "/api/inventory/a b", "/api/inventory/a:b", "http://inv/api/inventory/a%20"};
    for (size_t i = 0; i < sizeof(unheld) / sizeof(unheld[0]); i++) {
        match(HTTP_GET, unheld[i], strlen(unheld[i]), &r);
        cr_assert_eq(r.id, ROUTE_INVENTORY, "%s", unheld[i]);
        cr_assert_eq(r.status, 0, "%s", unheld[i]);
        cr_assert_eq(r.item_len, 0, "%s: item_len %u", unheld[i], r.item_len);
        cr_assert_str_eq(r.item, "");
    }
    /* no id at all is not the route */
    const char *none[] = {"/api/inventory/", "/api/inventory", "/api/inventory/?x=1", "http://inv/api/inventory/",
                          "/api/inventoryx/1"};
    for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++) {
        match(HTTP_GET, none[i], strlen(none[i]), &r);
        cr_assert_eq(r.id, ROUTE_OTHER, "%s", none[i]);
        cr_assert_eq(r.status, 404, "%s", none[i]);
    }
    match(HTTP_PUT, "/api/inventory/1", 16, &r);
    cr_assert_eq(r.status, 405);
    cr_assert_str_eq(route_name(ROUTE_INVENTORY), "/api/inventory/{itemId}", "one metrics label for every id");
    cr_assert_str_eq(route_allow(ROUTE_PRODUCTS), "GET, HEAD, OPTIONS");
}

Test(route, has_prefix)
{
    static const struct {
        const char *url, *prefix;
        bool want;
    } cases[] = {
        {"/api/inventory/1", "/api/inventory", true},
        {"/api/inventory/1", "/", true},
        {"/api/inventory/1", "/api/inventory/1", true},
        {"/api/inventory/1", "/api/inventory/12", false},
        {"/api/catalog", "/api/inventory", false},
        {"/api/inventory?x=/api/inventory", "/api/inventory", true},
        {"/api?x=/api/inventory", "/api/inventory", false},
        {"/api/inv", "/api/inventory", false},
        {"http://inv:8082/api/inventory/1", "/api/inventory", true},
        {"http://inv:8082/api/inventory/1?a=b", "/api/inventory/1", true},
        {"http://inv:8082/api/catalog?p=/api/inventory", "/api/inventory", false},
        {"http://inv:8082", "/", true},
        {"http://inv:8082", "/api", false},
        {"https://inv/api/inventory", "/api/inventory", true},
        {"*", "/", false},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        cr_assert_eq(route_has_prefix(cases[i].url, strlen(cases[i].url), cases[i].prefix), cases[i].want,
                     "%s under %s", cases[i].url, cases[i].prefix);
}

/* Every "/{name}" row matches by its prefix, with no code of its own in the
 * matcher: /api/products/{id} beside the exact /api/products. */
Test(route, param_rows_match_by_their_prefix)
{
    struct route_result r;
    match(HTTP_GET, "/api/products", 13, &r);
    cr_assert_eq(r.id, ROUTE_PRODUCTS, "the exact row first");
    match(HTTP_GET, "/api/products?fanout=sequential", 31, &r);
    cr_assert_eq(r.id, ROUTE_PRODUCTS);
    cr_assert_eq(r.arg, FANOUT_SEQUENTIAL);
    match(HTTP_GET, "/api/products/329299", 20, &r);
    cr_assert_eq(r.id, ROUTE_PRODUCT);
    cr_assert_eq(r.status, 0);
    cr_assert_str_eq(r.item, "329299");
    match(HTTP_GET, "/api/products/329299?x=1", 24, &r);
    cr_assert_eq(r.id, ROUTE_PRODUCT, "a query is not part of the id");
    cr_assert_str_eq(r.item, "329299");
    match(HTTP_GET, "/api/products/a/b", 17, &r);
    cr_assert_eq(r.id, ROUTE_PRODUCT);
    cr_assert_eq(r.item_len, 0, "an id primed cannot hold: the route answers 404");
    match(HTTP_GET, "/api/products/", 14, &r);
    cr_assert_eq(r.id, ROUTE_OTHER, "no id: not the route");
    match(HTTP_POST, "/api/products/1", 15, &r);
    cr_assert_eq(r.status, 405);
    cr_assert_str_eq(route_name(ROUTE_PRODUCT), "/api/products/{id}", "one metrics label for every id");
    cr_assert(route_flags(ROUTE_PRODUCT) & ROUTE_F_NEW_TRACE);
}
