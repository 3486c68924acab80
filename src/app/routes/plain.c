/* plain.c - the plain routes, answered at once from the request and a
 * counter or a flag: the probes (GET /healthz, GET /readyz: the services'
 * readiness), GET /ping and every unknown path ("other": 404).
 *
 * owns: those answers. never: a wait, a worker hook or per-request state (a
 * route that needs one has a file of its own), a connection or the kernel:
 * each module has an answer function only, pure (app.h), and app.c sends
 * what it fills.
 */
#include "app.h"


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
const struct app_route other_route = {.answer = other_answer};
