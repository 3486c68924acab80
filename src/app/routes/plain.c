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

#include "catalog_service.h"

static const char JSON[] = "application/json";

static enum answer_action healthz_answer(const struct answer_env *env, const struct http *h,
                                          const struct route_result *rt, struct resp *r, char *body, size_t cap)
{
    answer_text(r, 200, "ok\n", answer_keep_alive(env, h));
    return ANSWER_NOW;
}

/* 503 while draining (and the connection closes), or while a service
 * cannot serve (the event store cannot commit), with its reason. */
static enum answer_action readyz_answer(const struct answer_env *env, const struct http *h,
                                         const struct route_result *rt, struct resp *r, char *body, size_t cap)
{
    bool ka = answer_keep_alive(env, h);
    if (atomic_load_explicit(env->draining, memory_order_relaxed))
        answer_text(r, 503, "draining\n", false);
    else if (!app_ready(env->process, body, cap))
        answer_text(r, 503, body, ka);
    else
        answer_text(r, 200, "ready\n", ka);
    return ANSWER_NOW;
}

/* "APP(id=N): POD in NS", N counting the process's pings. */
static enum answer_action ping_answer(const struct answer_env *env, const struct http *h,
                                       const struct route_result *rt, struct resp *r, char *body, size_t cap)
{
    uint64_t n = atomic_fetch_add_explicit(env->ping_n, 1, memory_order_relaxed) + 1;
    answer_who(env, n, "\n", body, cap);
    answer_text(r, 200, body, answer_keep_alive(env, h));
    return ANSWER_NOW;
}

/* 200 with len bytes of the catalog's JSON at json, answered as found says
 * (ANSWER_LASTING: sent from the catalog, which outlives every connection;
 * ANSWER_NOW: copied), or 404 with missing when json is NULL. */
static enum answer_action catalog_json(const struct answer_env *env, const struct http *h, const char *json,
                                        size_t len, enum answer_action found, const char *missing, struct resp *r)
{
    bool ka = answer_keep_alive(env, h);
    if (!json) {
        answer_text(r, 404, missing, ka);
        return ANSWER_NOW;
    }
    *r = (struct resp){.status = 200, .ctype = JSON, .body = json, .body_len = len, .keep_alive = ka};
    return found;
}

/* The whole catalog, sent from where it was rendered. */
static enum answer_action catalog_answer(const struct answer_env *env, const struct http *h,
                                          const struct route_result *rt, struct resp *r, char *body, size_t cap)
{
    const struct catalog *c = catalog_of(env->process);
    return catalog_json(env, h, c ? c->json : NULL, c ? c->json_len : 0, ANSWER_LASTING, "not found\n", r);
}

/* One item's inventory object (copied inline: it is short). */
static enum answer_action inventory_answer(const struct answer_env *env, const struct http *h,
                                            const struct route_result *rt, struct resp *r, char *body, size_t cap)
{
    const struct catalog *c = catalog_of(env->process);
    const struct catalog_item *it = c && rt->item_len ? catalog_find(c, rt->item) : NULL;
    return catalog_json(env, h, it ? it->inventory : NULL, it ? it->inventory_len : 0, ANSWER_NOW,
                        "no such item\n", r);
}

/* A path no row names: route_match() refuses it (404) before this; here for
 * a table with no hole. */
static enum answer_action other_answer(const struct answer_env *env, const struct http *h,
                                        const struct route_result *rt, struct resp *r, char *body, size_t cap)
{
    answer_text(r, 404, "not found\n", answer_keep_alive(env, h));
    return ANSWER_NOW;
}

const struct app_route healthz_route = {.answer = healthz_answer};
const struct app_route readyz_route = {.answer = readyz_answer};
const struct app_route ping_route = {.answer = ping_answer};
const struct app_route catalog_route = {.answer = catalog_answer};
const struct app_route inventory_route = {.answer = inventory_answer};
const struct app_route other_route = {.answer = other_answer};
