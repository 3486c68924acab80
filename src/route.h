/* route.h - the path -> handler table, and the query of /example.
 *
 * Pure functions: no state, no allocation, no syscalls.
 */
#ifndef PRIMED_ROUTE_H
#define PRIMED_ROUTE_H

#include <stddef.h>
#include <stdint.h>

#define ROUTES(X)                             \
    X(ROUTE_OTHER, "other", NULL)             \
    X(ROUTE_EXAMPLE, "/example", "GET, HEAD") \
    X(ROUTE_HEALTHZ, "/healthz", "GET, HEAD") \
    X(ROUTE_READYZ, "/readyz", "GET, HEAD")   \
    X(ROUTE_METRICS, "/metrics", "GET, HEAD") \
    X(ROUTE_PING, "/ping", "GET, HEAD")                 \
    X(ROUTE_CALLME, "/callme/ping", "GET, HEAD")        \
    X(ROUTE_CALLER, "/caller/ping", "GET, HEAD")

#define X_ENUM(id, path, allow) id,
enum route_id { ROUTES(X_ENUM) ROUTE__COUNT };
#undef X_ENUM

struct route_result {
    uint8_t id;         /* enum route_id; ROUTE_OTHER for unknown paths */
    uint16_t status;    /* 0: serve it; else answer this status (400, 404, 405) */
    unsigned bits;      /* /example: the prime size asked for */
    const char *reason; /* with status 400: a one-line reason (static string) */
};

/* Routes one request: method is an llhttp method (HTTP_GET, ...), url the
 * request target (origin- or absolute-form). out->status says the outcome. */
void route_match(int method, const char *url, size_t len, unsigned default_bits, struct route_result *out);

/* The path of a route ("/example", or "other"); never NULL. */
const char *route_name(enum route_id id);

/* The Allow header value of a route, or NULL. */
const char *route_allow(enum route_id id);

#endif
