/* plain.c - the small routes answered at once from what the process holds,
 * several routes in one file: the probes (GET /healthz, GET /readyz), GET
 * /ping, the catalog service's two (GET /api/catalog, GET
 * /api/inventory/{itemId}: catalog.c's products, as primed plays the
 * gateway's upstreams) and every unknown path ("other": 404).
 *
 * owns: those answers. never: a wait, a worker hook or per-request state (a
 * route that needs one has a file of its own), a connection or the kernel:
 * each module has an answer function only, pure (app.h), and app.c sends
 * what it fills.
 */
#include "app.h"

#include <errno.h>
#include <stdio.h>

#include "catalog.h"

static const char JSON[] = "application/json";

static enum handler_action healthz_answer(const struct handler_env *env, const struct http *h,
                                          const struct route_result *rt, struct resp *r, char *body, size_t cap)
{
    handlers_text(r, 200, "ok\n", handlers_keep_alive(env, h));
    return HANDLER_RESPOND;
}

/* 503 while draining (and the connection closes), or while the store cannot
 * commit, with the reason. */
static enum handler_action readyz_answer(const struct handler_env *env, const struct http *h,
                                         const struct route_result *rt, struct resp *r, char *body, size_t cap)
{
    bool ka = handlers_keep_alive(env, h);
    if (atomic_load_explicit(env->draining, memory_order_relaxed)) {
        handlers_text(r, 503, "draining\n", false);
    } else if (!handlers_store_ready(env)) {
        int e = env->store_health ? atomic_load_explicit(&env->store_health->last_err, memory_order_relaxed) : 0;
        snprintf(body, cap, "event store %.200s cannot commit: %s\n", env->store_name,
                 store_fault_words(store_fault_of(e ? e : -ENOTCONN)));
        handlers_text(r, 503, body, ka);
    } else {
        handlers_text(r, 200, "ready\n", ka);
    }
    return HANDLER_RESPOND;
}

/* "APP(id=N): POD in NS", N counting the process's pings. */
static enum handler_action ping_answer(const struct handler_env *env, const struct http *h,
                                       const struct route_result *rt, struct resp *r, char *body, size_t cap)
{
    uint64_t n = atomic_fetch_add_explicit(env->ping_n, 1, memory_order_relaxed) + 1;
    handlers_who(env, n, "\n", body, cap);
    handlers_text(r, 200, body, handlers_keep_alive(env, h));
    return HANDLER_RESPOND;
}

/* 200 with len bytes of the catalog's JSON at json, answered as found says
 * (HANDLER_LASTING: sent from the catalog, which outlives every connection;
 * HANDLER_RESPOND: copied), or 404 with missing when json is NULL. */
static enum handler_action catalog_json(const struct handler_env *env, const struct http *h, const char *json,
                                        size_t len, enum handler_action found, const char *missing, struct resp *r)
{
    bool ka = handlers_keep_alive(env, h);
    if (!json) {
        handlers_text(r, 404, missing, ka);
        return HANDLER_RESPOND;
    }
    *r = (struct resp){.status = 200, .ctype = JSON, .body = json, .body_len = len, .keep_alive = ka};
    return found;
}

/* The whole catalog, sent from where it was rendered. */
static enum handler_action catalog_answer(const struct handler_env *env, const struct http *h,
                                          const struct route_result *rt, struct resp *r, char *body, size_t cap)
{
    const struct catalog *c = env->catalog;
    return catalog_json(env, h, c ? c->json : NULL, c ? c->json_len : 0, HANDLER_LASTING, "not found\n", r);
}

/* One item's inventory object (copied inline: it is short). */
static enum handler_action inventory_answer(const struct handler_env *env, const struct http *h,
                                            const struct route_result *rt, struct resp *r, char *body, size_t cap)
{
    const struct catalog_item *it = env->catalog && rt->item_len ? catalog_find(env->catalog, rt->item) : NULL;
    return catalog_json(env, h, it ? it->inventory : NULL, it ? it->inventory_len : 0, HANDLER_RESPOND,
                        "no such item\n", r);
}

/* A path no row names: route_match() refuses it (404) before this; here for
 * a table with no hole. */
static enum handler_action other_answer(const struct handler_env *env, const struct http *h,
                                        const struct route_result *rt, struct resp *r, char *body, size_t cap)
{
    handlers_text(r, 404, "not found\n", handlers_keep_alive(env, h));
    return HANDLER_RESPOND;
}

const struct app_route healthz_route = {.answer = healthz_answer};
const struct app_route readyz_route = {.answer = readyz_answer};
const struct app_route ping_route = {.answer = ping_answer};
const struct app_route catalog_route = {.answer = catalog_answer};
const struct app_route inventory_route = {.answer = inventory_answer};
const struct app_route other_route = {.answer = other_answer};
