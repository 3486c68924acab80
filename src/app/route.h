/* route.h - the path -> route table: one row a route, matched on the
 * request target's path; each route's file reads its own query (its
 * module's query hook, app.h).
 *
 * Pure functions: no state, no allocation, no syscalls.
 */
#ifndef PRIMED_ROUTE_H
#define PRIMED_ROUTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "item_id.h"

/* The route table: one row a route.
 *
 *   X(ID, PATH, ALLOW, MODULE, FLAGS, HELP)
 *
 *   ALLOW   the methods it serves, its Allow header: any other is 405; OPTIONS
 *           is answered by the app (200 with this Allow)
 *   PATH    exact, or ending in one "/{name}" segment: the prefix, then an id of
 *           1..ROUTE_ITEM_MAX bytes of [A-Za-z0-9._-] (route_result.item; any other
 *           id is an unknown item: the route answers 404). One metrics label a row.
 *   MODULE  the route's struct app_route (app.h), in the route's own file
 *           (routes/): its query, answer and serve functions and its worker
 *           hooks (the probes, /ping and "other" share routes/plain.c, the
 *           catalog service's two routes/catalog_api.c)
 *   FLAGS   ROUTE_F_*: what the app does around the route
 *   HELP    what --help says after the path: its query, the flag it needs
 *
 * Adding a route: one row here and one file with its module (docs/architecture.md). */
#define ROUTE_F_NEW_TRACE 1u /* the chain's routes, which call or are called: a trace starts here when none came */
#define ROUTE_F_QUIET     2u /* probes and /metrics: no span, no injected fault */
#define ROUTES(X)                                                                                                    \
    X(ROUTE_OTHER, "other", NULL, other_route, 0, NULL)                                                              \
    X(ROUTE_EXAMPLE, "/example", "GET, HEAD, OPTIONS", example_route, 0, "[?bits=N]")                               \
    X(ROUTE_HEALTHZ, "/healthz", "GET, HEAD, OPTIONS", healthz_route, ROUTE_F_QUIET, "")                            \
    X(ROUTE_READYZ, "/readyz", "GET, HEAD, OPTIONS", readyz_route, ROUTE_F_QUIET, "")                               \
    X(ROUTE_METRICS, "/metrics", "GET, HEAD, OPTIONS", scrape_route, ROUTE_F_QUIET, "")                             \
    X(ROUTE_PING, "/ping", "GET, HEAD, OPTIONS", ping_route, 0, "")                                                 \
    X(ROUTE_CALLME, "/callme/ping", "GET, HEAD, OPTIONS", callme_route, ROUTE_F_NEW_TRACE, "")                      \
    X(ROUTE_CALLER, "/caller/ping", "GET, HEAD, OPTIONS", caller_route, ROUTE_F_NEW_TRACE, " (with --callme-url)")  \
    X(ROUTE_CATALOG, "/api/catalog", "GET, HEAD, OPTIONS", catalog_route, 0, "")                                    \
    X(ROUTE_INVENTORY, "/api/inventory/{itemId}", "GET, HEAD, OPTIONS", inventory_route, 0, "")                     \
    X(ROUTE_PRODUCTS, "/api/products", "GET, HEAD, OPTIONS", products_route, ROUTE_F_NEW_TRACE,                     \
      "[?fanout=parallel|sequential] (with --catalog-url and --inventory-url)")                                      \
    X(ROUTE_PRODUCT, "/api/products/{id}", "GET, HEAD, OPTIONS", product_route, ROUTE_F_NEW_TRACE,                  \
      " (with --catalog-url and --inventory-url)")                                                                   \
    X(ROUTE_ECHO, "/echo", "GET, HEAD, POST, PUT, OPTIONS", echo_route, 0, " (with --echo-route)")

#define X_ENUM(id, path, allow, module, flags, help) id,
enum route_id { ROUTES(X_ENUM) ROUTE__COUNT };
#undef X_ENUM

/* The id of a route's "/{name}" segment: 1..ROUTE_ITEM_MAX bytes of
 * [A-Za-z0-9._-] (any other is an unknown item: 404). */
#define ROUTE_ITEM_MAX ITEM_ID_MAX

struct route_result {
    uint8_t id;         /* enum route_id; ROUTE_OTHER for unknown paths */
    uint16_t status;    /* 0: serve it; else answer this status (400, 404, 405) */
    uint32_t arg;       /* what the route's query hook made of the query (example.c: bits=; product_list.c: fanout=) */
    const char *reason; /* with status 400: a one-line reason (static string) */
    uint8_t item_len;   /* a "/{name}" route: the id's length (0: none primed can hold) */
    char item[ROUTE_ITEM_MAX + 1]; /* and the id, NUL-terminated */
};

/* Routes one request: method is an llhttp method (HTTP_GET, ...), url the
 * request target (origin- or absolute-form, or "*": the server itself,
 * ROUTE_OTHER with status 0; the core lets "*" through for OPTIONS only).
 * out->status says the outcome; its query (after the '?') into *query and
 * *query_len (NULL and 0: none), for the route's own query hook. */
void route_match(int method, const char *url, size_t len, struct route_result *out, const char **query,
                 size_t *query_len);

/* The one parameter `name` of a query string ("name" or "name=value"; other
 * parameters are ignored). Returns 1 with *v and *vlen set, 0 when absent,
 * -1 when it is given more than once. */
int route_query_param(const char *q, size_t len, const char *name, const char **v, size_t *vlen);

/* Whether ch may stand in an item id (item_id.h's rule). */
bool route_item_char(char ch);

/* Whether the path of url (origin- or absolute-form, query excluded) starts
 * with prefix (--fault-path). */
bool route_has_prefix(const char *url, size_t len, const char *prefix);

/* The path of a route ("/example", or "other"); never NULL. */
const char *route_name(enum route_id id);

/* The Allow header value of a route, or NULL. */
const char *route_allow(enum route_id id);

/* Whether a route serves an llhttp method (its row's ALLOW names it). */
bool route_allows(enum route_id id, int method);

/* A route's ROUTE_F_* flags. */
unsigned route_flags(enum route_id id);

#endif
