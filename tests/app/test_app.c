/* test_app.c - the app on the core (src/app/app.c) through its hooks over the
 * scripted backend (tests/lib/pool_fixture.c): a request's route from the
 * table (route.h), the plain answers answer.c gives, refusals of the route
 * table (404, 405 with Allow, 400), HEAD, a lasting body (the catalog) and the
 * counts each answer leaves in the worker's metrics.
 */
#include <criterion/criterion.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "catalog.h"
#include "route_fixture.h"

static struct catalog cat;

static void start(struct catalog *c)
{
    route_fixture_init();
    F.app.service[SERVICE_CATALOG] = c;
    route_fixture_start();
}

static void setup(void)
{
    start(NULL);
}

/* A test's .init runs after the suite's: start the app again, with the catalog. */
static void setup_catalog(void)
{
    route_fixture_stop();
    catalog_builtin(&cat);
    cr_assert_eq(catalog_render(&cat), 0);
    start(&cat);
}

TestSuite(app, .init = setup, .fini = route_fixture_stop);

/* Each request's answer, from the route table's row down to the status line
 * and the body, and its count under its route's label. */
Test(app, answers_each_plain_route_and_counts_it)
{
    static const struct {
        const char *req;
        const char *status_line;
        const char *body; /* the whole body, or NULL: not checked */
        enum route_id route;
        int status;
    } cases[] = {
        {GET("/healthz"), "HTTP/1.1 200 OK\r\n", "ok\n", ROUTE_HEALTHZ, 200},
        {GET("/readyz"), "HTTP/1.1 200 OK\r\n", "ready\n", ROUTE_READYZ, 200},
        {GET("/ping"), "HTTP/1.1 200 OK\r\n", "app(id=1): pod in ns\n", ROUTE_PING, 200},
        {GET("/nope"), "HTTP/1.1 404 Not Found\r\n", "not found\n", ROUTE_OTHER, 404},
        {GET("/api/catalog"), "HTTP/1.1 404 Not Found\r\n", "not found\n", ROUTE_CATALOG, 404},
        {GET("/api/products"), "HTTP/1.1 404 Not Found\r\n", NULL, ROUTE_PRODUCTS, 404},
        {GET("/caller/ping"), "HTTP/1.1 404 Not Found\r\n", NULL, ROUTE_CALLER, 404},
        {"DELETE /healthz HTTP/1.1\r\nHost: t\r\n\r\n", "HTTP/1.1 405 Method Not Allowed\r\n", "method not allowed\n",
         ROUTE_HEALTHZ, 405},
        {GET("/example?bits=3"), "HTTP/1.1 400 Bad Request\r\n", NULL, ROUTE_EXAMPLE, 400},
    };
    conn_start(&P, 5);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        size_t before = S.fd[5].out_len;
        route_feed(5, cases[i].req);
        route_drain(5);
        const char *o = S.fd[5].out + before;
        cr_assert(strncmp(o, cases[i].status_line, strlen(cases[i].status_line)) == 0, "%s: %s", cases[i].req, o);
        const char *body = strstr(o, "\r\n\r\n");
        cr_assert(body, "%s", o);
        if (cases[i].body)
            cr_assert_str_eq(body + 4, cases[i].body, "%s", cases[i].req);
        if (cases[i].status == 405)
            cr_assert(strstr(o, "Allow: GET, HEAD, OPTIONS\r\n"), "%s", o);
        cr_assert(S.fd[5].recv_armed && !S.fd[5].closed, "%s: kept alive", cases[i].req);
        int si = metrics_status_index(cases[i].status);
        cr_assert_eq(atomic_load(&M.requests[cases[i].route][si]), 1, "%s: counted under %s", cases[i].req,
                     route_name(cases[i].route));
    }
    cr_assert_eq(atomic_load(&M.conn.bad[BAD_QUERY]), 1, "the 400 is a bad query");
    cr_assert_eq(atomic_load(&M.conn.in_flight), 0);
}

Test(app, head_answers_the_length_without_the_body)
{
    conn_start(&P, 5);
    route_feed(5, "HEAD /healthz HTTP/1.1\r\nHost: t\r\n\r\n");
    route_drain(5);
    const char *o = S.fd[5].out;
    cr_assert(strncmp(o, "HTTP/1.1 200 OK\r\n", 17) == 0, "%s", o);
    cr_assert(strstr(o, "Content-Length: 3\r\n"), "%s", o);
    cr_assert_eq(strstr(o, "\r\n\r\n")[4], '\0', "no body: %s", o);
}

Test(app, a_trace_sent_continues_in_the_answer)
{
    conn_start(&P, 5);
    route_feed(5, "GET /healthz HTTP/1.1\r\nHost: t\r\n"
                  "traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\r\n\r\n");
    route_drain(5);
    cr_assert(strstr(S.fd[5].out, "traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-"), "%s", S.fd[5].out);
    size_t before = S.fd[5].out_len;
    route_feed(5, GET("/healthz"));
    route_drain(5);
    cr_assert_null(strstr(S.fd[5].out + before, "traceparent"), "none sent, none started for a probe: %s",
                   S.fd[5].out + before);
}

Test(app, catalog_body_goes_out_intact_across_short_sends, .init = setup_catalog)
{
    cr_assert_gt(cat.json_len, 200, "a body worth splitting");
    conn_start(&P, 5);
    for (int round = 0; round < 2; round++) {
        size_t before = S.fd[5].out_len;
        route_feed(5, GET("/api/catalog"));
        pool_fixture_send(&F, 5, 97);
        const char *o = S.fd[5].out + before;
        cr_assert(strncmp(o, "HTTP/1.1 200 OK\r\n", 17) == 0, "%s", o);
        cr_assert(strstr(o, "Content-Type: application/json\r\n"), "%s", o);
        char cl[48];
        snprintf(cl, sizeof(cl), "Content-Length: %zu\r\n", cat.json_len);
        cr_assert(strstr(o, cl), "%s", o);
        const char *body = strstr(o, "\r\n\r\n");
        cr_assert(body);
        body += 4;
        cr_assert_eq(strlen(body), cat.json_len, "round %d: the whole body, once", round);
        cr_assert_eq(memcmp(body, cat.json, cat.json_len), 0, "round %d: intact", round);
        cr_assert(S.fd[5].recv_armed, "kept alive");
    }
    cr_assert_eq(atomic_load(&M.requests[ROUTE_CATALOG][STATUS_IDX_200]), 2);
    struct conn *c = conn_of(&P, S.fd[5].recv_tag);
    cr_assert(c && c->ext.data == NULL, "the catalog's body is not the connection's to keep");
    cr_assert_eq(cat.json[0], '[', "nor to free: still the catalog's");
    pool_fixture_stop(&F);
    catalog_free(&cat); /* after the pool: nothing points into it any more */
}
