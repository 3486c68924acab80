/* gateway_service.h - the gateway's settings as a service (services.h):
 * with --catalog-url and --inventory-url, each worker's struct gateway
 * (gateway.h) over its upstream client, for the routes of /api/products.
 *
 * owns: the worker's settings and its fallbacks' count. never: a fan-out
 * (gateway.h), the answers (routes/product_list.c, routes/product_item.c).
 */
#ifndef PRIMED_GATEWAY_SERVICE_H
#define PRIMED_GATEWAY_SERVICE_H

#include "app.h"
#include "gateway.h"

/* /api/products?fanout= (routes/product_list.c): how the gateway calls
 * inventory; FANOUT_DEFAULT: --fanout's. */
enum fanout_mode { FANOUT_DEFAULT, FANOUT_PARALLEL, FANOUT_SEQUENTIAL };

/* The worker's gateway, or NULL: the flags are not given. */
static inline struct gateway *gateway_of(struct app_worker *aw)
{
    return aw->service[SERVICE_GATEWAY];
}

/* The gateway's routes (product_list.c, product_item.c) once their calls are
 * over: 200 with the JSON body (len bytes; the caller sends it), else status
 * (404, 502, 503, 504) with why into body. Pure. */
void gateway_answer(const struct answer_env *env, const struct http *h, int status, const char *json, size_t len,
                    const char *why, struct resp *r, char *body, size_t cap);

/* primed_gateway_fallbacks_total: the sum of n workers' counts. */
void gateway_metrics_put(struct metrics_out *o, uint64_t fallbacks);

#endif
