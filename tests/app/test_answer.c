/* test_answer.c - what a request is answered at once, pure, so each answer
 * is checked from a parsed request alone: the refusals, the plain routes
 * (src/app/routes/plain.c, catalog_api.c) and the gateway's that need no call,
 * through the table (app_answer_now); the words the routes share
 * (src/app/answer.c) and the extra headers; the trace ids
 * (src/app/trace_ids.c); the services' own answers: the store's refusals
 * (src/app/store/db.c), the gateway routes' (gateway_service.c), the
 * fault abort's (fault_delay.c).
 * The chain's and /example's own answers: test_chain.c, test_example.c.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "app.h"
#include "catalog.h"
#include "config.h"
#include "db.h"
#include "fault_delay.h"
#include "gateway_service.h"
#include "trace_ids.h"

static _Atomic int draining;
static _Atomic uint64_t example_n, ping_n;
/* the process as the answers see it: its store (db.h) and, once a test puts
 * it there, its catalog */
static struct db db = {.name = "events.db"};
static struct app proc = {.service = {[SERVICE_STORE] = &db}};
static struct answer_env env = {
    .draining = &draining,
    .example_n = &example_n,
    .ping_n = &ping_n,
    .process = &proc,
    .app = "app",
    .pod = "pod-1",
    .ns = "ns",
    .revision_hdr = "K-Revision: r-1\r\n",
};

/* --bits 64: the default of /example's query */
static struct config cfg64 = {.bits = 64};

/* The route of the last request parsed(), as the app's head hook makes it. */
static struct route_result rt;

static bool on_head(void *ctx, const struct http_req *rq, const char *url, size_t len)
{
    app_route_request(&cfg64, rq->method, url, len, &rt);
    return false;
}

static struct http parsed(const char *req)
{
    static struct http_limits lim = {.max_url = 2048, .max_body = 1 << 20, .on_head = on_head, .keep = &trace_keep};
    static char buf[1024];
    static char tv[512]; /* as conn.c lends it: the app's keep list's storage */
    struct http h;
    size_t len = strlen(req), pos = 0;
    memcpy(buf, req, len);
    http_init(&h, &lim);
    http_lend(&h, tv);
    cr_assert_eq(http_feed(&h, buf, &pos, len), HTTP_MSG, "%s", req);
    return h;
}

Test(answer, routes_each_path)
{
    static const struct {
        const char *req;
        enum answer_action action;
        int status;
        const char *body;
    } cases[] = {
        {"GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n", ANSWER_NOW, 200, "ok\n"},
        {"GET /readyz HTTP/1.1\r\nHost: a\r\n\r\n", ANSWER_NOW, 200, "ready\n"},
        {"GET /nope HTTP/1.1\r\nHost: a\r\n\r\n", ANSWER_NOW, 404, "not found\n"},
        {"POST /healthz HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n", ANSWER_NOW, 405, NULL},
        {"GET /example HTTP/1.1\r\nHost: a\r\n\r\n", ANSWER_LATER, 0, NULL},
        {"GET /metrics HTTP/1.1\r\nHost: a\r\n\r\n", ANSWER_LATER, 0, NULL},
        {"GET /ping HTTP/1.1\r\nHost: a\r\n\r\n", ANSWER_NOW, 200, "app(id=1): pod-1 in ns\n"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct http h = parsed(cases[i].req);
        struct resp r;
        char body[ANSWER_BODY_MAX];
        enum answer_action a = app_answer_now(&env, &h, &rt, &r, body, sizeof(body));
        cr_assert_eq(a, cases[i].action, "%s", cases[i].req);
        if (a != ANSWER_NOW)
            continue;
        cr_assert_eq(r.status, cases[i].status, "%s", cases[i].req);
        if (cases[i].body)
            cr_assert_str_eq(r.body, cases[i].body);
        if (r.status == 405)
            cr_assert_not_null(r.allow);
        cr_assert(r.keep_alive);
    }
}

Test(answer, draining_closes_and_readyz_says_so)
{
    struct http h = parsed("GET /readyz HTTP/1.1\r\nHost: a\r\n\r\n");
    struct resp r;
    char body[ANSWER_BODY_MAX];
    atomic_store(&draining, 1);
    app_answer_now(&env, &h, &rt, &r, body, sizeof(body));
    atomic_store(&draining, 0);
    cr_assert_eq(r.status, 503);
    cr_assert(!r.keep_alive);
}

Test(answer, headers_carry_trace_and_revision)
{
    struct http h = parsed("GET /healthz HTTP/1.1\r\nHost: a\r\n"
                           "traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\r\n\r\n");
    struct trace tr;
    char extra[RESP_EXTRA_MAX];
    uint64_t rng = 1, span;
    trace_ids_begin(&h.req, &rng, false, &tr, &span);
    cr_assert(tr.valid);
    answer_headers(&env, &tr, span, extra, sizeof(extra));
    cr_assert(strstr(extra, "traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-"), "%s", extra);
    cr_assert(strstr(extra, "K-Revision: r-1\r\n"));
}

Test(answer, trace_starts_only_when_asked)
{
    struct http h = parsed("GET /caller/ping HTTP/1.1\r\nHost: a\r\n\r\n");
    struct trace tr;
    uint64_t rng = 7, span;
    trace_ids_begin(&h.req, &rng, false, &tr, &span);
    cr_assert(!tr.valid, "no incoming context, not asked: no trace");
    trace_ids_begin(&h.req, &rng, true, &tr, &span);
    cr_assert(tr.valid);
    cr_assert_eq(strlen(tr.trace_id), 32);
    cr_assert_eq(tr.flags, 1, "a started trace is sampled");
    cr_assert_str_eq(tr.parent_id, "", "a root span has no parent");
    cr_assert_neq(span, 0);
}

Test(answer, callme_waits_for_its_event)
{
    struct http h = parsed("GET /callme/ping HTTP/1.1\r\nHost: a\r\n\r\n");
    struct resp r;
    char body[ANSWER_BODY_MAX];
    cr_assert_eq(app_answer_now(&env, &h, &rt, &r, body, sizeof(body)), ANSWER_LATER,
                 "its answer waits for the store (chain.c)");
}

Test(answer, store_errors_name_the_store_and_say_nothing_was_stored)
{
    struct http h = parsed("GET /callme/ping HTTP/1.1\r\nHost: a\r\n\r\n");
    struct resp r;
    char body[ANSWER_BODY_MAX];
    db_refusal(&env, &h, -EAGAIN, &r, body, sizeof(body));
    cr_assert_eq(r.status, 503);
    cr_assert_str_eq(r.body, "event store events.db: behind (its queue is full); nothing was stored; retry\n");
    cr_assert(r.keep_alive);
    db_refusal(&env, &h, -EIO, &r, body, sizeof(body));
    cr_assert_eq(r.status, 503);
    cr_assert_str_eq(r.body, "event store events.db: commit failed; nothing was stored; retry\n");
}

/* Each kind has its own words, the same for either store; a full disk is
 * not an I/O error; the two kinds whose commit was sent say "not
 * confirmed", never "nothing was stored". */
Test(answer, store_errors_by_kind)
{
    struct http h = parsed("GET /callme/ping HTTP/1.1\r\nHost: a\r\n\r\n");
    struct resp r;
    char body[ANSWER_BODY_MAX];
    struct answer_env e = env;
    db.timeout_ms = 1500;
    static const struct {
        int err;
        const char *body;
    } cases[] = {
        {-ENOSPC, "event store events.db: disk full; nothing was stored; retry\n"},
        {-EROFS, "event store events.db: the database is read-only; nothing was stored; retry\n"},
        {-EUSERS, "event store events.db: too many connections (the server has no slot free); nothing was stored; "
                  "retry\n"},
        {-EACCES, "event store events.db: authentication failed; nothing was stored; retry\n"},
        {-ENOTCONN, "event store events.db: unreachable; nothing was stored; retry\n"},
        {-ETIMEDOUT, "event store events.db: no answer within --db-timeout (1500 ms); not confirmed: the event may "
                     "still be stored; retry\n"},
        {-ECONNRESET, "event store events.db: connection lost before the commit was confirmed; not confirmed: the "
                      "event may still be stored; retry\n"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        db_refusal(&e, &h, cases[i].err, &r, body, sizeof(body));
        cr_assert_eq(r.status, 503);
        cr_assert_str_eq(r.body, cases[i].body);
    }
    cr_assert_eq(store_fault_of(-ENOSPC), STORE_FAULT_DISK_FULL);
    cr_assert_str_eq(store_fault_label(store_fault_of(-EUSERS)), "too_many_connections");
    cr_assert_eq(store_fault_of(-E2BIG), STORE_FAULT_OTHER, "an unnamed errno is 'other'");
}

/* /readyz is 503 while the store cannot commit, with the reason, and 200
 * again once it can; PostgreSQL's workers must all be connected. */
Test(answer, readyz_follows_the_store)
{
    struct http h = parsed("GET /readyz HTTP/1.1\r\nHost: a\r\n\r\n");
    struct resp r;
    char body[ANSWER_BODY_MAX];
    struct store_health health = {0};
    struct answer_env e = env;
    db.health = &health;
    app_answer_now(&e, &h, &rt, &r, body, sizeof(body));
    cr_assert_eq(r.status, 200);
    store_health_down(&health, -ENOSPC);
    app_answer_now(&e, &h, &rt, &r, body, sizeof(body));
    cr_assert_eq(r.status, 503);
    cr_assert_str_eq(r.body, "event store events.db cannot commit: disk full\n");
    store_health_up(&health);
    app_answer_now(&e, &h, &rt, &r, body, sizeof(body));
    cr_assert_eq(r.status, 200, "ready again after a good commit");
    db.pg = "host=db"; /* PostgreSQL: each worker connects */
    atomic_store(&db.pg_up, 1);
    db.pg_need = 2;
    atomic_store(&health.last_err, -EUSERS);
    app_answer_now(&e, &h, &rt, &r, body, sizeof(body));
    cr_assert_eq(r.status, 503, "one worker of two not connected");
    cr_assert_str_eq(r.body,
                     "event store events.db cannot commit: too many connections (the server has no slot free)\n");
    atomic_store(&db.pg_up, 2);
    app_answer_now(&e, &h, &rt, &r, body, sizeof(body));
    cr_assert_eq(r.status, 200);
    db.pg = NULL;
    db.health = NULL;
}

Test(answer, caller_needs_an_upstream)
{
    struct http h = parsed("GET /caller/ping HTTP/1.1\r\nHost: a\r\n\r\n");
    struct resp r;
    char body[ANSWER_BODY_MAX];
    cr_assert_eq(app_answer_now(&env, &h, &rt, &r, body, sizeof(body)), ANSWER_NOW);
    cr_assert_eq(r.status, 404, "no --callme-url: chain.c's answer, through the table");
    struct answer_env with = env;
    with.callme = "callme:80";
    cr_assert_eq(app_answer_now(&with, &h, &rt, &r, body, sizeof(body)), ANSWER_LATER);
}

Test(answer, gateway_routes)
{
    static struct catalog cat;
    catalog_builtin(&cat);
    cr_assert_eq(catalog_render(&cat), 0);
    static struct app with_catalog; /* env's has none */
    with_catalog = proc;
    with_catalog.service[SERVICE_CATALOG] = &cat;
    struct answer_env with = env;
    with.process = &with_catalog;
    with.gateway = true;
    struct resp r;
    char body[ANSWER_BODY_MAX];

    struct http h = parsed("GET /api/catalog HTTP/1.1\r\nHost: a\r\n\r\n");
    cr_assert_eq(app_answer_now(&with, &h, &rt, &r, body, sizeof(body)), ANSWER_LASTING, "sent from the catalog");
    cr_assert_eq(r.status, 200);
    cr_assert_str_eq(r.ctype, "application/json");
    cr_assert_eq(r.body, cat.json, "the catalog's own buffer, not a copy");
    cr_assert_eq(r.body_len, cat.json_len);
    cr_assert(r.keep_alive);
    cr_assert_eq(app_answer_now(&env, &h, &rt, &r, body, sizeof(body)), ANSWER_NOW);
    cr_assert_eq(r.status, 404, "no catalog: 404");

    h = parsed("GET /api/inventory/329299 HTTP/1.1\r\nHost: a\r\n\r\n");
    cr_assert_eq(app_answer_now(&with, &h, &rt, &r, body, sizeof(body)), ANSWER_NOW);
    cr_assert_eq(r.status, 200);
    cr_assert_str_eq(r.ctype, "application/json");
    const struct catalog_item *it = catalog_find(&cat, "329299");
    cr_assert(it);
    cr_assert_eq(r.body_len, it->inventory_len);
    char want[64];
    snprintf(want, sizeof(want), "{\"itemId\":\"329299\",\"quantity\":%lld}", (long long)it->quantity);
    cr_assert_eq(r.body_len, strlen(want));
    cr_assert_eq(memcmp(r.body, want, r.body_len), 0, "%.*s", (int)r.body_len, r.body);
    static const char *const unknown[] = {
        "GET /api/inventory/999999 HTTP/1.1\r\nHost: a\r\n\r\n",
        "GET /api/inventory/3292990000000000000000000000000000 HTTP/1.1\r\nHost: a\r\n\r\n",
        "GET /api/inventory/329299%20 HTTP/1.1\r\nHost: a\r\n\r\n",
        "GET /api/inventory/329299/x HTTP/1.1\r\nHost: a\r\n\r\n",
    };
    for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
        h = parsed(unknown[i]);
        cr_assert_eq(app_answer_now(&with, &h, &rt, &r, body, sizeof(body)), ANSWER_NOW);
        cr_assert_eq(r.status, 404, "%s", unknown[i]);
        cr_assert_str_eq(r.body, "no such item\n");
        cr_assert(r.keep_alive);
    }
    h = parsed("GET /api/inventory/329299 HTTP/1.1\r\nHost: a\r\n\r\n");
    app_answer_now(&env, &h, &rt, &r, body, sizeof(body));
    cr_assert_eq(r.status, 404, "no catalog: no item");

    h = parsed("GET /api/products HTTP/1.1\r\nHost: a\r\n\r\n");
    cr_assert_eq(app_answer_now(&with, &h, &rt, &r, body, sizeof(body)), ANSWER_LATER);
    cr_assert_eq(app_answer_now(&env, &h, &rt, &r, body, sizeof(body)), ANSWER_NOW);
    cr_assert_eq(r.status, 404);
    cr_assert(strstr(r.body, "--catalog-url") && strstr(r.body, "--inventory-url"), "says what is missing: %s", r.body);
    h = parsed("GET /api/products?fanout=bogus HTTP/1.1\r\nHost: a\r\n\r\n");
    cr_assert_eq(app_answer_now(&with, &h, &rt, &r, body, sizeof(body)), ANSWER_NOW);
    cr_assert_eq(r.status, 400);
    cr_assert(strstr(r.body, "fanout"), "%s", r.body);
    h = parsed("POST /api/products HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n");
    cr_assert_eq(app_answer_now(&with, &h, &rt, &r, body, sizeof(body)), ANSWER_NOW);
    cr_assert_eq(r.status, 405);
    cr_assert_str_eq(r.allow, "GET, HEAD, OPTIONS");

    h = parsed("GET /api/products/329299 HTTP/1.1\r\nHost: a\r\n\r\n");
    cr_assert_eq(app_answer_now(&with, &h, &rt, &r, body, sizeof(body)), ANSWER_LATER, "product.c calls");
    cr_assert_eq(app_answer_now(&env, &h, &rt, &r, body, sizeof(body)), ANSWER_NOW);
    cr_assert_eq(r.status, 404);
    cr_assert(strstr(r.body, "--catalog-url"), "says what is missing: %s", r.body);
    h = parsed("GET /api/products/329299%20 HTTP/1.1\r\nHost: a\r\n\r\n");
    cr_assert_eq(app_answer_now(&with, &h, &rt, &r, body, sizeof(body)), ANSWER_NOW);
    cr_assert_eq(r.status, 404, "an id no product can have: no call");
    cr_assert_str_eq(r.body, "no such product\n");
    catalog_free(&cat);
}

Test(answer, products_answers_each_outcome)
{
    struct answer_env with = env;
    with.gateway = true;
    struct http h = parsed("GET /api/products HTTP/1.1\r\nHost: a\r\n\r\n");
    struct resp r;
    char body[ANSWER_BODY_MAX];
    static const char json[] = "[{\"itemId\":\"1\",\"availability\":null}]";
    gateway_answer(&with, &h, 200, json, sizeof(json) - 1, NULL, &r, body, sizeof(body));
    cr_assert_eq(r.status, 200);
    cr_assert_str_eq(r.ctype, "application/json");
    cr_assert_eq(r.body, json, "the fan-out's buffer: the caller sends it");
    cr_assert_eq(r.body_len, sizeof(json) - 1);
    cr_assert(r.keep_alive);

    gateway_answer(&with, &h, 502, NULL, 0, "catalog 127.0.0.1:9: answered 500", &r, body, sizeof(body));
    cr_assert_eq(r.status, 502);
    cr_assert_str_eq(r.body, "catalog 127.0.0.1:9: answered 500\n");
    cr_assert(r.keep_alive, "an upstream's failure is not the client's");
    gateway_answer(&with, &h, 504, NULL, 0, "catalog c:1: no complete answer within the timeout", &r, body,
                      sizeof(body));
    cr_assert_eq(r.status, 504);
    cr_assert(strstr(r.body, "catalog c:1"));
    gateway_answer(&with, &h, 503, NULL, 0, NULL, &r, body, sizeof(body));
    cr_assert_eq(r.status, 503);
    cr_assert_str_eq(r.body, "upstream failed\n");
    /* a why longer than the body is cut, never overflows */
    char why[1000];
    memset(why, 'w', sizeof(why) - 1);
    why[sizeof(why) - 1] = '\0';
    gateway_answer(&with, &h, 502, NULL, 0, why, &r, body, sizeof(body));
    cr_assert_lt(r.body_len, sizeof(body));
    cr_assert_eq(body[r.body_len - 1], '\n');
}

Test(answer, fault_abort_is_envoys_answer)
{
    struct http h = parsed("GET /api/inventory/1 HTTP/1.1\r\nHost: a\r\n\r\n");
    struct resp r;
    static const int codes[] = {400, 404, 429, 500, 502, 503, 504};
    for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
        fault_abort_answer(&env, &h, codes[i], &r);
        cr_assert_eq(r.status, codes[i]);
        cr_assert_str_eq(r.body, "fault filter abort");
        cr_assert_eq(r.body_len, 18);
        cr_assert(r.keep_alive);
    }
    atomic_store(&draining, 1);
    fault_abort_answer(&env, &h, 503, &r);
    atomic_store(&draining, 0);
    cr_assert(!r.keep_alive, "draining: the answer closes");
}
