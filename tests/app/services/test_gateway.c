/* test_gateway.c - the /api/products fan-out (src/gateway.c) on a real
 * backend (io_uring, then epoll) against two scripted upstreams on 127.0.0.1
 * (tests/upstub.c): a catalog and an inventory that answer as each test
 * says, late, never, or badly. Checks the answer's order and shape, that
 * parallel overlaps and sequential never does, the one deadline of the
 * inventory calls, the catalog's 502/504, cancel, and the bounds on an
 * inventory answer. Every wait is bounded.
 */
#define _GNU_SOURCE /* memmem */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gateway.h"
#include "upstub.h"

/* ---- the script (set before the stubs start, read on their threads) ------ */

static struct {
    int what; /* UPSTUB_* */
    int status;
    const char *body;
} cat_script;

struct inv_case {
    const char *id;
    int what;
    int status;       /* 0: 200 */
    const char *body; /* NULL: {"itemId":"ID","quantity":7} */
    unsigned delay_ms;
};
static const struct inv_case *inv_cases;
static size_t inv_ncases;
static int inv_default; /* UPSTUB_* for an id not in the table */

static void catalog_answer(struct upstub *s, const char *path, unsigned n, struct upstub_answer *a)
{
    (void)s, (void)path, (void)n;
    a->what = cat_script.what;
    a->status = cat_script.status ? cat_script.status : 200;
    a->body = cat_script.body;
    a->body_len = (size_t)-1;
}

static void inventory_answer(struct upstub *s, const char *path, unsigned n, struct upstub_answer *a)
{
    (void)s, (void)n;
    static _Thread_local char body[128];
    const char *id = strncmp(path, "/api/inventory/", 15) == 0 ? path + 15 : "";
    snprintf(body, sizeof(body), "{\"itemId\":\"%s\",\"quantity\":7}", id);
    a->what = inv_default;
    a->body = body;
    a->body_len = (size_t)-1;
    for (size_t i = 0; i < inv_ncases; i++) {
        if (strcmp(inv_cases[i].id, id) != 0)
            continue;
        a->what = inv_cases[i].what;
        if (inv_cases[i].status)
            a->status = inv_cases[i].status;
        if (inv_cases[i].body)
            a->body = inv_cases[i].body;
        a->delay_ms = inv_cases[i].delay_ms;
    }
}

/* ---- the gateway under test ---------------------------------------------- */

static struct upstub cat, inv;
static struct uphost h;
static struct gateway g;
static int cat_up, inv_up;

struct outcome {
    int calls;
    int status;
    char *body; /* the answer, ours once done ran */
    size_t len;
    char why[256];
};
static struct outcome out;

static void on_done(void *ctx, int status, char *body, size_t len, const char *why)
{
    struct outcome *o = ctx;
    o->calls++;
    o->status = status;
    free(o->body);
    o->body = body;
    o->len = len;
    snprintf(o->why, sizeof(o->why), "%s", why ? why : "");
}

static bool is_done(void *ctx)
{
    return ((struct outcome *)ctx)->calls > 0;
}

static void script_reset(void)
{
    memset(&cat_script, 0, sizeof(cat_script));
    inv_cases = NULL;
    inv_ncases = 0;
    inv_default = UPSTUB_ANSWER;
    free(out.body);
    memset(&out, 0, sizeof(out));
}

/* Starts both stubs and the client: conns per upstream, timeout_ms for the
 * catalog call and for the inventory calls together. */
static void gw_up(enum io_kind kind, unsigned conns, unsigned timeout_ms)
{
    char why[160];
    int r = uphost_init(&h, kind, conns, timeout_ms, why, sizeof(why));
    if (r)
        cr_skip_test("backend %d unavailable: %s", kind, strerror(-r));
    cr_assert_eq(upstub_start(&cat, catalog_answer, NULL), 0);
    cr_assert_eq(upstub_start(&inv, inventory_answer, NULL), 0);
    cat_up = uphost_add(&h, cat.port, "/");
    inv_up = uphost_add(&h, inv.port, "/");
    cr_assert(cat_up >= 0 && inv_up >= 0);
    cr_assert_eq(uphost_ready(&h), 0);
    memset(&g, 0, sizeof(g));
    g.up = &h.cl;
    g.catalog_up = (unsigned)cat_up;
    g.inventory_up = (unsigned)inv_up;
    snprintf(g.catalog_path, sizeof(g.catalog_path), "/api/catalog");
    snprintf(g.inventory_path, sizeof(g.inventory_path), "/api/inventory/");
    g.now_ms = &h.now_ms;
    g.timeout_ms = timeout_ms;
}

static void gw_down(void)
{
    cr_assert_eq(uphost_fini(&h), 0, "every connection's ops completed");
    upstub_stop(&cat);
    upstub_stop(&inv);
    free(out.body);
    out.body = NULL;
}

/* The fan-out answered exactly want (shown when it did not). */
static void expect_body(const char *want)
{
    cr_assert_eq(out.len, strlen(want), "%.*s", (int)out.len, out.body);
    cr_assert_eq(memcmp(out.body, want, out.len), 0, "%.*s", (int)out.len, out.body);
}

/* The owner's pointer to the fan-out: the gateway clears it when done runs. */
static void *req; /* the owner's slot, as app_req.state */

static struct gateway_req *start(bool sequential)
{
    static const struct trace none;
    req = NULL;
    cr_assert(gateway_start(&g, sequential, &none, 1, 2, on_done, &out, &req), "started");
    return req;
}

static const char CATALOG4[] = "[{\"itemId\":\"a1\",\"name\":\"A\",\"price\":1.5},{\"itemId\":\"a2\",\"name\":\"B\"},"
                               "{\"itemId\":\"a3\",\"name\":\"C\"},{\"itemId\":\"a4\",\"name\":\"D\"}]";

static const char *avail(const char *id)
{
    static char b[4][64];
    static int k;
    char *o = b[k++ % 4];
    snprintf(o, 64, "{\"itemId\":\"%s\",\"quantity\":7}", id);
    return o;
}

/* ---- parallel and sequential --------------------------------------------- */

static void answers_in_catalog_order(enum io_kind kind, bool sequential)
{
    script_reset();
    cat_script.body = CATALOG4;
    /* the later a product, the sooner its inventory answers: the answer's
     * order must be the catalog's, not the arrival's */
    static const struct inv_case late[] = {
        {"a1", UPSTUB_ANSWER, 0, NULL, 80},
        {"a2", UPSTUB_ANSWER, 0, NULL, 60},
        {"a3", UPSTUB_ANSWER, 0, NULL, 40},
        {"a4", UPSTUB_ANSWER, 0, NULL, 20},
    };
    inv_cases = late;
    inv_ncases = 4;
    gw_up(kind, 8, 3000);
    start(sequential);
    cr_assert(uphost_run(&h, is_done, &out, 3000), "fan-out not done within 3 s");
    cr_assert_eq(out.calls, 1);
    cr_assert_null(req, "done cleared the owner's pointer");
    cr_assert_eq(out.status, 200, "%d %s", out.status, out.why);
    char want[1024];
    snprintf(want, sizeof(want),
             "[{\"itemId\":\"a1\",\"name\":\"A\",\"price\":1.5,\"availability\":%s},"
             "{\"itemId\":\"a2\",\"name\":\"B\",\"availability\":%s},"
             "{\"itemId\":\"a3\",\"name\":\"C\",\"availability\":%s},"
             "{\"itemId\":\"a4\",\"name\":\"D\",\"availability\":%s}]",
             avail("a1"), avail("a2"), avail("a3"), avail("a4"));
    expect_body(want);

    char p[96];
    cr_assert_eq(cat.requests, 1);
    cr_assert_str_eq(upstub_path(&cat, 0, p, sizeof(p)), "/api/catalog");
    cr_assert_eq(inv.requests, 4, "one inventory call per product");
    if (sequential) {
        cr_assert_eq(inv.max_pending, 1, "sequential: never two inventory calls open at once");
        for (unsigned i = 0; i < 4; i++) {
            char w[32];
            snprintf(w, sizeof(w), "/api/inventory/a%u", i + 1);
            cr_assert_str_eq(upstub_path(&inv, i, p, sizeof(p)), w, "in catalog order");
        }
        cr_assert_eq(inv.accepts, 1, "one pooled connection carried the four calls");
    } else {
        cr_assert_geq(inv.max_pending, 2, "parallel: the calls overlap (%u at most)", inv.max_pending);
    }
    cr_assert_eq(h.stats[cat_up].calls[UPSTREAM_OK], 1);
    cr_assert_eq(h.stats[inv_up].calls[UPSTREAM_OK], 4);
    cr_assert_eq(g.fallbacks, 0);
    gw_down();
}

Test(gateway, parallel_answers_in_catalog_order_uring)
{
    answers_in_catalog_order(IO_URING, false);
}
Test(gateway, parallel_answers_in_catalog_order_epoll)
{
    answers_in_catalog_order(IO_EPOLL, false);
}
Test(gateway, sequential_answers_one_call_at_a_time_uring)
{
    answers_in_catalog_order(IO_URING, true);
}
Test(gateway, sequential_answers_one_call_at_a_time_epoll)
{
    answers_in_catalog_order(IO_EPOLL, true);
}

/* ---- the one deadline of the inventory calls ------------------------------ */

static void silent_item_is_null_at_the_deadline(enum io_kind kind)
{
    script_reset();
    cat_script.body = CATALOG4;
    static const struct inv_case silent[] = {{"a3", UPSTUB_SILENT, 0, NULL, 0}};
    inv_cases = silent;
    inv_ncases = 1;
    gw_up(kind, 8, 250);
    uint64_t t0 = upstub_mono_ms();
    start(false);
    cr_assert(uphost_run(&h, is_done, &out, 3000));
    uint64_t took = upstub_mono_ms() - t0;
    cr_assert_eq(out.status, 200, "a silent inventory is a fallback, not an error: %s", out.why);
    cr_assert(took >= 240 && took < 1000, "at the deadline: %llu ms", (unsigned long long)took);
    char want[1024];
    snprintf(want, sizeof(want),
             "[{\"itemId\":\"a1\",\"name\":\"A\",\"price\":1.5,\"availability\":%s},"
             "{\"itemId\":\"a2\",\"name\":\"B\",\"availability\":%s},"
             "{\"itemId\":\"a3\",\"name\":\"C\",\"availability\":null},"
             "{\"itemId\":\"a4\",\"name\":\"D\",\"availability\":%s}]",
             avail("a1"), avail("a2"), avail("a4"));
    expect_body(want);
    cr_assert_eq(g.fallbacks, 1);
    cr_assert_eq(h.stats[inv_up].calls[UPSTREAM_TIMEOUT], 1);
    gw_down();
}

Test(gateway, silent_inventory_is_null_at_the_deadline_uring)
{
    silent_item_is_null_at_the_deadline(IO_URING);
}
Test(gateway, silent_inventory_is_null_at_the_deadline_epoll)
{
    silent_item_is_null_at_the_deadline(IO_EPOLL);
}

/* Sequential against an inventory that never answers: the first call takes
 * the whole deadline and the others are not made; one timeout, not four. */
static void deadline_is_shared(enum io_kind kind)
{
    script_reset();
    cat_script.body = CATALOG4;
    inv_default = UPSTUB_SILENT;
    gw_up(kind, 8, 250);
    uint64_t t0 = upstub_mono_ms();
    start(true);
    cr_assert(uphost_run(&h, is_done, &out, 3000));
    uint64_t took = upstub_mono_ms() - t0;
    cr_assert_eq(out.status, 200, "%s", out.why);
    cr_assert(took >= 240 && took < 700, "one deadline for all four calls: %llu ms", (unsigned long long)took);
    static const char want[] = "[{\"itemId\":\"a1\",\"name\":\"A\",\"price\":1.5,\"availability\":null},"
                               "{\"itemId\":\"a2\",\"name\":\"B\",\"availability\":null},"
                               "{\"itemId\":\"a3\",\"name\":\"C\",\"availability\":null},"
                               "{\"itemId\":\"a4\",\"name\":\"D\",\"availability\":null}]";
    expect_body(want);
    cr_assert_eq(inv.requests, 1, "the products whose turn comes after the deadline are not called");
    cr_assert_eq(g.fallbacks, 4);
    gw_down();
}

Test(gateway, one_deadline_for_all_inventory_calls_uring)
{
    deadline_is_shared(IO_URING);
}
Test(gateway, one_deadline_for_all_inventory_calls_epoll)
{
    deadline_is_shared(IO_EPOLL);
}

/* ---- the catalog's failures ------------------------------------------------ */

static char many[80 * 70];

static const char *objects(int n)
{
    size_t k = 0;
    many[k++] = '[';
    for (int i = 0; i < n; i++)
        k += (size_t)snprintf(many + k, sizeof(many) - k, "%s{\"itemId\":\"p%d\",\"name\":\"P\"}", i ? "," : "", i);
    many[k++] = ']';
    many[k] = '\0';
    return many;
}

static void catalog_failures(enum io_kind kind)
{
    const struct {
        int what, status;
        const char *body;
        int want;
        const char *text;
    } cases[] = {
        {UPSTUB_ANSWER, 500, "oops", 502, "answered 500"},
        {UPSTUB_ANSWER, 404, "[]", 502, "answered 404"},
        {UPSTUB_SILENT, 0, NULL, 504, "within the timeout"},
        {UPSTUB_CLOSE, 0, NULL, 502, "closed"},
        {UPSTUB_ANSWER, 200, "{\"itemId\":\"a1\"}", 502, "not a JSON array of objects"},
        {UPSTUB_ANSWER, 200, "[{\"itemId\":\"a1\"},]", 502, "not a JSON array of objects"},
        {UPSTUB_ANSWER, 200, "[1,2]", 502, "not a JSON array of objects"},
        {UPSTUB_ANSWER, 200, NULL, 502, "more than 64 products"}, /* 65 objects */
        /* a catalog breaking the contract (docs/gateway.md): the answer would not be JSON, or the id
         * would need a spelling chosen for it */
        {UPSTUB_ANSWER, 200, "[{\"itemId\":\"a1\",\"name\":\"\xff\xfe\"}]", 502, "not a JSON array of objects"},
        {UPSTUB_ANSWER, 200, "[{\"itemId\":\"a1\",\"name\":\"\xc0\xaf\"}]", 502, "not a JSON array of objects"},
        {UPSTUB_ANSWER, 200, "[{\"itemId\":\"a1\",\"name\":\"\xed\xa0\x80\"}]", 502, "not a JSON array of objects"},
        {UPSTUB_ANSWER, 200, "[{\"itemId\":\"a1\",\"name\":\"\\ud800\"}]", 502, "not a JSON array of objects"},
        {UPSTUB_ANSWER, 200, "[{\"itemId\":\"a1\",\"name\":\"\\udc00\\ud800\"}]", 502, "not a JSON array of objects"},
        {UPSTUB_ANSWER, 200, "[{\"itemId\":\"a1\"},{\"itemId\":1e999999}]", 502, "product 2's itemId is not a string"},
        {UPSTUB_ANSWER, 200, "[{\"itemId\":42}]", 502, "product 1's itemId is not a string"},
        {UPSTUB_ANSWER, 200, "[{\"itemId\":null}]", 502, "product 1's itemId is not a string"},
        {UPSTUB_ANSWER, 200, "[{\"itemId\":\"a1\",\"itemId\":[\"a1\"]}]", 502, "product 1's itemId is not a string"},
        {UPSTUB_ANSWER, 200, "[{\"item\\u0049d\":7}]", 502, "product 1's itemId is not a string"},
        {UPSTUB_ANSWER, 200, "[{\"itemId\":\"a1\"},{\"itemId\":\"a2\",\"availability\":9}]", 502,
         "product 2's has an availability of its own"},
        {UPSTUB_ANSWER, 200, "[{\"availabilit\\u0079\":{}}]", 502, "product 1's has an availability of its own"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        script_reset();
        cat_script.what = cases[i].what;
        cat_script.status = cases[i].status;
        cat_script.body = cases[i].body ? cases[i].body : objects(65);
        gw_up(kind, 8, 250);
        start(i % 2);
        cr_assert(uphost_run(&h, is_done, &out, 3000), "case %zu", i);
        cr_assert_eq(out.calls, 1);
        cr_assert_eq(out.status, cases[i].want, "case %zu: %d %s", i, out.status, out.why);
        cr_assert_null(out.body, "an error has no body");
        char name[64];
        snprintf(name, sizeof(name), "catalog 127.0.0.1:%d", cat.port);
        cr_assert_eq(strncmp(out.why, name, strlen(name)), 0, "names the upstream: %s", out.why);
        cr_assert(strstr(out.why, cases[i].text), "case %zu: %s", i, out.why);
        cr_assert_null(strchr(out.why, '\n'), "one line");
        cr_assert_eq(inv.requests, 0, "inventory is not called");
        gw_down();
    }
    /* 64 products are the most, and all get their availability */
    script_reset();
    cat_script.body = objects(64);
    gw_up(kind, 8, 2000);
    start(false);
    cr_assert(uphost_run(&h, is_done, &out, 3000));
    cr_assert_eq(out.status, 200, "%s", out.why);
    cr_assert_eq(inv.requests, 64);
    cr_assert_eq(g.fallbacks, 0);
    cr_assert(memmem(out.body, out.len, "{\"itemId\":\"p63\",\"name\":\"P\",\"availability\":{\"itemId\":\"p63\"", 57));
    gw_down();
}

Test(gateway, catalog_failures_are_502_or_504_naming_it_uring)
{
    catalog_failures(IO_URING);
}
Test(gateway, catalog_failures_are_502_or_504_naming_it_epoll)
{
    catalog_failures(IO_EPOLL);
}

Test(gateway, refused_catalog_is_a_502)
{
    script_reset();
    gw_up(IO_AUTO, 8, 250);
    /* nothing listens on the catalog's port any more */
    upstub_stop(&cat);
    int port = cat.port;
    start(false);
    cr_assert(uphost_run(&h, is_done, &out, 3000));
    cr_assert_eq(out.status, 502, "%s", out.why);
    char name[64];
    snprintf(name, sizeof(name), "catalog 127.0.0.1:%d: connect failed", port);
    cr_assert(strstr(out.why, name), "%s", out.why);
    cr_assert_eq(uphost_fini(&h), 0);
    upstub_stop(&inv);
    free(out.body);
    out.body = NULL;
}

/* ---- cancel ---------------------------------------------------------------- */

static unsigned want_pending;

/* The stub (ctx) holds want_pending requests unanswered. */
static bool holds(void *ctx)
{
    return ((struct upstub *)ctx)->pending >= want_pending;
}

static void cancel_mid_fanout(enum io_kind kind, bool sequential, bool in_catalog)
{
    script_reset();
    cat_script.what = in_catalog ? UPSTUB_SILENT : UPSTUB_ANSWER;
    cat_script.body = CATALOG4;
    inv_default = UPSTUB_SILENT;
    gw_up(kind, 8, 300);
    start(sequential);
    cr_assert_not_null(req);
    struct upstub *where = in_catalog ? &cat : &inv;
    want_pending = in_catalog || sequential ? 1 : 4;
    cr_assert(uphost_run(&h, holds, where, 2000), "%u calls reached the stub", want_pending);
    gateway_cancel(req);
    cr_assert_null(req, "cancel clears the owner's pointer");
    cr_assert_eq(out.calls, 0);
    /* past every deadline the cancelled calls had: nothing calls back */
    uphost_run(&h, NULL, NULL, 500);
    cr_assert_eq(out.calls, 0, "done never runs after cancel");
    /* a call cut mid-answer leaves its connection unreadable: closed, not pooled */
    cr_assert_eq(uphost_conns(&h, (unsigned)inv_up), 0, "inventory connections closed");
    cr_assert_eq(inv.open, 0, "and the stub saw them close");
    if (in_catalog) {
        cr_assert_eq(uphost_conns(&h, (unsigned)cat_up), 0);
        cr_assert_eq(cat.open, 0);
    } else {
        cr_assert_eq(uphost_conns(&h, (unsigned)cat_up), cat.open, "the catalog's answered connection is pooled");
        cr_assert_eq(cat.open, 1);
    }
    cr_assert_eq(g.fallbacks, 0);
    gw_down();
}

Test(gateway, cancel_mid_fanout_never_calls_back_uring)
{
    cancel_mid_fanout(IO_URING, false, false);
    cancel_mid_fanout(IO_URING, true, false);
    cancel_mid_fanout(IO_URING, false, true);
}
Test(gateway, cancel_mid_fanout_never_calls_back_epoll)
{
    cancel_mid_fanout(IO_EPOLL, false, false);
    cancel_mid_fanout(IO_EPOLL, true, false);
    cancel_mid_fanout(IO_EPOLL, false, true);
}

/* ---- what an inventory answer may be --------------------------------------- */

static char obj600[700], obj512[600];

static const char *object_of(char *buf, size_t len, const char *id)
{
    int n = snprintf(buf, len + 1, "{\"itemId\":\"%s\",\"pad\":\"", id);
    memset(buf + n, 'x', len - (size_t)n - 2);
    buf[len - 2] = '"';
    buf[len - 1] = '}';
    buf[len] = '\0';
    return buf;
}

static void inventory_bounds(enum io_kind kind)
{
    script_reset();
    cat_script.body = "[{\"itemId\":\"a1\"},{\"itemId\":\"a2\"},{\"itemId\":\"a3\"},{\"itemId\":\"a4\"},"
                      "{\"itemId\":\"a5\"},{\"itemId\":\"a6\"},{}]";
    const struct inv_case cases[] = {
        {"a2", UPSTUB_ANSWER, 0, object_of(obj600, 600, "a2"), 0},
        {"a3", UPSTUB_ANSWER, 503, "{\"itemId\":\"a3\",\"quantity\":1}", 0},
        {"a4", UPSTUB_ANSWER, 0, "[1]", 0},
        {"a5", UPSTUB_ANSWER, 0, object_of(obj512, GATEWAY_AVAIL_MAX, "a5"), 0},
        {"a6", UPSTUB_CLOSE, 0, NULL, 0},
    };
    inv_cases = cases;
    inv_ncases = sizeof(cases) / sizeof(cases[0]);
    gw_up(kind, 8, 2000);
    start(false);
    cr_assert(uphost_run(&h, is_done, &out, 3000));
    cr_assert_eq(out.status, 200, "%s", out.why);
    static char want[2048];
    snprintf(want, sizeof(want),
             "[{\"itemId\":\"a1\",\"availability\":%s},{\"itemId\":\"a2\",\"availability\":null},"
             "{\"itemId\":\"a3\",\"availability\":null},{\"itemId\":\"a4\",\"availability\":null},"
             "{\"itemId\":\"a5\",\"availability\":%s},{\"itemId\":\"a6\",\"availability\":null},"
             "{\"availability\":null}]",
             avail("a1"), obj512);
    expect_body(want);
    cr_assert_eq(inv.requests, 6, "an object without itemId is not called");
    cr_assert_eq(g.fallbacks, 5);
    gw_down();
}

Test(gateway, inventory_answer_over_512_bytes_is_null_uring)
{
    inventory_bounds(IO_URING);
}
Test(gateway, inventory_answer_over_512_bytes_is_null_epoll)
{
    inventory_bounds(IO_EPOLL);
}
