/* route_fixture.h - what every route test of tests/app shares: one pool
 * fixture (pool_fixture.h), F, with the real app over the scripted backend,
 * and the few steps each test takes on it (feed a request, let its answer
 * out, wait for an answer that calls out). A test file keeps only its own
 * cases and whatever config its route needs. Owns no state but F and the
 * gateway's scripted upstreams; never asserts a route's behaviour.
 *
 * Use: route_fixture_init(), the changes to F.cfg / F.app, (for a route that
 * calls out: route_fixture_calls_out(), route_fixture_upstub() per
 * upstream), route_fixture_start(); route_fixture_stop() as the .fini.
 */
#ifndef PRIMED_ROUTE_FIXTURE_H
#define PRIMED_ROUTE_FIXTURE_H

#include "conn_expect.h"
#include "pool_fixture.h"
#include "upstub.h"

extern struct pool_fixture F;

#define S (F.s)
#define P (F.w.pool)
#define M (*app_metrics(F.aw))

#define GET(path) "GET " path " HTTP/1.1\r\nHost: t\r\n\r\n"

/* pool_fixture_init(&F), the smallest primes and inline dispatch, no split. */
void route_fixture_init(void);
/* Starts F (fails the test when it cannot start). */
void route_fixture_start(void);
/* Stops F; a second call does nothing (a .fini). */
void route_fixture_stop(void);

/* Completes fd's receive with the request s and pumps (fails the test when
 * no receive is armed). */
void route_feed(int fd, const char *s);
/* Lets every send of fd go through, in full. */
void route_drain(int fd);

/* ---- routes that call out: their calls on a real backend (epoll) ---------- */

/* Before start: a 2 s upstream timeout and F's real backend (fails the test
 * when it cannot have one). */
void route_fixture_calls_out(void);
/* Starts the stub u answering with fn, and points *url at it with path (see
 * pool_fixture_upstream). Fails the test when either fails. */
void route_fixture_upstub(struct upstub *u, upstub_fn *fn, struct url *url, const char *path);
/* Whether fd (ctx points at it) has an answer on its way. */
bool route_answered(void *ctx);
/* Waits (at most 3 s, turning both backends) for fd's answer and lets it all out. */
void route_answer_of(int fd);

/* ---- the gateway's upstreams (routes/product_list.c, routes/product_item.c) -----------------------
 * A scripted catalog (ROUTE_CATALOG_JSON: a1 "A", a2 "B") and inventory (a1
 * has 7; a2's closes the connection: its availability is null). */
#define ROUTE_CATALOG_JSON "[{\"itemId\":\"a1\",\"name\":\"A\"},{\"itemId\":\"a2\",\"name\":\"B\"}]"
extern struct upstub route_cat, route_inv;
/* Starts F calling out to both; the catalog does what (UPSTUB_*) after delay_ms. */
void route_fixture_gateway(int what, unsigned delay_ms);
/* Stops F and both stubs (a .fini). */
void route_fixture_gateway_stop(void);
/* A gateway route's client that goes away while its catalog call waits (the
 * catalog answers after 300 ms): request on fd 5, then a reset. Checks the
 * connection closes with nothing in flight, the request's state is gone,
 * nothing answers it even once the catalog has, and no inventory call
 * follows. */
void route_gateway_client_gone(const char *request);

#endif
