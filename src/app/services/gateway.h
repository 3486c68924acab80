/* gateway.h - GET /api/products: the catalog, then inventory for every
 * product, in parallel on the worker's ring or one call after another, and
 * the products answered with their availability (seed 003's gateway).
 *
 * A fan-out is one request's: it calls the catalog upstream (its own
 * deadline, --upstream-timeout), then inventory for every product under one
 * deadline for all of them (--upstream-timeout from the catalog's answer),
 * so the whole answer takes at most one catalog call plus the timeout,
 * whichever the mode. A product whose inventory call fails, passes the
 * deadline or answers no JSON object gets "availability": null (the seed's
 * fallback) and the answer is still 200; a catalog that fails is a 502 (504
 * on its timeout). Each fan-out allocates its state and its answer (cold
 * beside the calls it makes); calls beyond the pool's connections wait in
 * order, as every upstream call does.
 */
#ifndef PRIMED_GATEWAY_H
#define PRIMED_GATEWAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "json.h"
#include "stats.h"
#include "trace.h"
#include "upstream.h"

#define GATEWAY_ITEMS_MAX 64  /* products of a catalog answer; more is a 502 */
#define GATEWAY_AVAIL_MAX 512 /* an inventory answer passed on; longer is a fallback */

/* One worker's gateway; set by the owner, none of it owned but its counter. */
struct gateway {
    struct upstream_client *up;
    unsigned catalog_up, inventory_up;      /* indices in up */
    char catalog_path[URL_PATH_MAX + 64];   /* the catalog base's path + "/api/catalog" */
    char inventory_path[URL_PATH_MAX + 64]; /* the inventory base's path + "/api/inventory/" */
    const uint64_t *now_ms;
    unsigned timeout_ms; /* the inventory calls' deadline, from the catalog's answer */
    mcounter fallbacks;  /* products answered with "availability": null (its own) */
};

struct gateway_req;

/* The fan-out is over (the request is freed when this returns): 200 with
 * body (malloc'd JSON, len bytes, now the callee's), or 502/504 with why (a
 * one-line text) and no body. */
typedef void gateway_done_fn(void *ctx, int status, char *body, size_t len, const char *why);

/* Starts a fan-out; *out (the owner's slot for it: a request's state) gets
 * the request before any call starts (done may
 * run before this returns, and then it has cleared what *out points to: the
 * owner's done sets it to NULL). tr and span continue the trace into every
 * call (a child span of span each, ids from seed). Returns false when out of
 * memory: done does not run then. */
bool gateway_start(struct gateway *g, bool sequential, const struct trace *tr, uint64_t span, uint64_t seed,
                   gateway_done_fn *done, void *ctx, void **out);

/* The catalog's answer to call, read as every route that reads it reads it:
 * its products into objs (at most GATEWAY_ITEMS_MAX) and their count, or,
 * when the call failed or the answer breaks the contract (docs/gateway.md),
 * -status to answer (-502, -504 on the call's timeout) with why naming the
 * catalog. */
int gateway_catalog(const struct gateway *g, const struct upstream_call *call, enum upstream_result res, int status,
                    const char *body, size_t len, struct json_obj *objs, char *why, size_t whylen);

/* Whether an inventory answer is an availability to pass on (a 200 of one JSON
 * object, at most GATEWAY_AVAIL_MAX bytes): its object's offset and length. */
bool gateway_availability(enum upstream_result res, int status, const char *body, size_t len, uint32_t *off,
                          uint32_t *olen);

/* Forgets r (its client went away): its calls are cancelled, done does not run. */
void gateway_cancel(struct gateway_req *r);

#endif
