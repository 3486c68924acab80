/* route.h - the path -> handler table, and the query of /example.
 *
 * Pure functions: no state, no allocation, no syscalls.
 */
#ifndef PRIMED_ROUTE_H
#define PRIMED_ROUTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The routes: id, path, Allow, and the handler of a route whose answer
 * needs work (app.c's table; NULL: handlers_route() answers it). */
#define ROUTES(X)                                                          \
    X(ROUTE_OTHER, "other", NULL, NULL)                                    \
    X(ROUTE_EXAMPLE, "/example", "GET, HEAD", example_serve)               \
    X(ROUTE_HEALTHZ, "/healthz", "GET, HEAD", NULL)                        \
    X(ROUTE_READYZ, "/readyz", "GET, HEAD", NULL)                          \
    X(ROUTE_METRICS, "/metrics", "GET, HEAD", scrape_serve)                \
    X(ROUTE_PING, "/ping", "GET, HEAD", NULL)                              \
    X(ROUTE_CALLME, "/callme/ping", "GET, HEAD", chain_callme_serve)       \
    X(ROUTE_CALLER, "/caller/ping", "GET, HEAD", chain_caller_serve)       \
    X(ROUTE_CATALOG, "/api/catalog", "GET, HEAD", NULL)                    \
    X(ROUTE_INVENTORY, "/api/inventory/{itemId}", "GET, HEAD", NULL)       \
    X(ROUTE_PRODUCTS, "/api/products", "GET, HEAD", products_serve)

#define X_ENUM(id, path, allow, handler) id,
enum route_id { ROUTES(X_ENUM) ROUTE__COUNT };
#undef X_ENUM

/* An item id of /api/inventory/{itemId}: 1..ROUTE_ITEM_MAX bytes of
 * [A-Za-z0-9._-] (any other is an unknown item: 404). */
#define ROUTE_ITEM_MAX 32

/* /api/products?fanout=: how the gateway calls inventory. */
enum route_fanout { ROUTE_FANOUT_DEFAULT, ROUTE_FANOUT_PARALLEL, ROUTE_FANOUT_SEQUENTIAL };

struct route_result {
    uint8_t id;         /* enum route_id; ROUTE_OTHER for unknown paths */
    uint16_t status;    /* 0: serve it; else answer this status (400, 404, 405) */
    unsigned bits;      /* /example: the prime size asked for */
    const char *reason; /* with status 400: a one-line reason (static string) */
    uint8_t fanout;     /* /api/products: enum route_fanout */
    uint8_t item_len;   /* /api/inventory/{itemId}: the id's length */
    char item[ROUTE_ITEM_MAX + 1]; /* and the id, NUL-terminated */
};

/* Routes one request: method is an llhttp method (HTTP_GET, ...), url the
 * request target (origin- or absolute-form). out->status says the outcome. */
void route_match(int method, const char *url, size_t len, unsigned default_bits, struct route_result *out);

/* Whether ch may stand in an item id (the set above): route.c, catalog.c and
 * json.c hold ids to this one rule. */
bool route_item_char(char ch);

/* Whether the path of url (origin- or absolute-form, query excluded) starts
 * with prefix (--fault-path). */
bool route_has_prefix(const char *url, size_t len, const char *prefix);

/* The path of a route ("/example", or "other"); never NULL. */
const char *route_name(enum route_id id);

/* The Allow header value of a route, or NULL. */
const char *route_allow(enum route_id id);

#endif
