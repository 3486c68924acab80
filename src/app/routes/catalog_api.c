/* catalog_api.c - the catalog service's two routes, as primed plays the
 * gateway's upstreams: GET /api/catalog (every product) and GET
 * /api/inventory/{itemId} (one item's stock), answered at once from the
 * process's catalog (catalog_service.h), 404 without one.
 *
 * owns: those answers. never: the products (catalog.h), a wait.
 */
#include "app.h"

#include "catalog_service.h"

static const char JSON[] = "application/json";

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

const struct app_route catalog_route = {.answer = catalog_answer};
const struct app_route inventory_route = {.answer = inventory_answer};
