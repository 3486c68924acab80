/* fuzz_json.c - libFuzzer target over src/app/services/json.c and the answer src/app/services/gateway.c
 * builds from what the catalog and inventory send.
 *
 * Input: one byte of options (bit 0: sequential fan-out, bit 1: a traced
 * request, bits 2-7: the seed of the order the inventory calls end in), the
 * catalog's body, then NUL-separated inventory answers, given to the products
 * in turn ("!..." answers 503, "T" times out; none: `{"q":1}`).
 * Checks, against tests/fuzz/strict_json.h (a decoder written apart):
 * - json_objects accepts exactly the JSON arrays of objects (nesting within
 *   JSON_DEPTH_MAX, at most the max), counts them, and flags the same
 *   products' non-string "itemId"; json_object accepts exactly one object;
 * - the gateway, over stub upstream calls ending in that order, answers 200
 *   exactly when the catalog's array keeps the contract, and then valid JSON
 *   (UTF-8, escapes that decode): an array of as many objects, each with one
 *   "availability"; else a 502 naming the catalog.
 * abort() with a message on a failed check, so libFuzzer saves the input.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gateway.h"
#include "json.h"
#include "strict_json.h"

#define FUZZ_NAME "fuzz_json"
#include "fuzz_fail.h"

#define ANSWERS_MAX 16

/* -- the upstream calls, stubbed: started calls wait here until the driver ends them -- */
static struct upstream_call *pending[GATEWAY_ITEMS_MAX + 1];
static unsigned npending;

bool upstream_start(struct upstream_client *c, unsigned up, struct upstream_call *call, enum upstream_result *res)
{
    (void)c;
    (void)res;
    if (npending == GATEWAY_ITEMS_MAX + 1)
        FAIL("more calls in flight than products and the catalog");
    if (strchr(call->extra, '\n') && !strstr(call->extra, "\r\n"))
        FAIL("a trace header line without CRLF");
    call->up = up;
    call->where = UPCALL_ACTIVE;
    pending[npending++] = call;
    return true;
}

void upstream_cancel(struct upstream_client *c, struct upstream_call *call)
{
    (void)c;
    for (unsigned i = 0; i < npending; i++)
        if (pending[i] == call)
            pending[i] = pending[--npending];
    call->where = UPCALL_IDLE;
}

const char *upstream_result_text(enum upstream_result r)
{
    return r == UPSTREAM_TIMEOUT ? "timeout" : "error";
}

static struct {
    bool done;
    int status;
    char *body;
    size_t len;
    char why[200];
} answer;

static void on_done(void *ctx, int status, char *body, size_t len, const char *why)
{
    (void)ctx;
    answer.done = true;
    answer.status = status;
    answer.body = body;
    answer.len = len;
    snprintf(answer.why, sizeof(answer.why), "%s", why ? why : "");
}

static struct json_obj objs[GATEWAY_ITEMS_MAX];
static struct sj_info info;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint8_t opt = data[0];
    const char *cat = (const char *)data + 1;
    const char *end = (const char *)data + size;
    const char *nul = memchr(cat, '\0', (size_t)(end - cat));
    size_t cat_len = (size_t)((nul ? nul : end) - cat);
    const char *ans[ANSWERS_MAX];
    size_t ans_len[ANSWERS_MAX];
    unsigned nans = 0;
    for (const char *p = nul; p && nans < ANSWERS_MAX;) {
        const char *s = p + 1, *e = memchr(s, '\0', (size_t)(end - s));
        ans[nans] = s;
        ans_len[nans++] = (size_t)((e ? e : end) - s);
        p = e;
    }

    /* the scanner against the decoder */
    bool valid = sj_check(cat, cat_len, &info);
    bool array = valid && info.top == '[' && info.all_objects;
    int n = json_objects(cat, cat_len, objs, GATEWAY_ITEMS_MAX);
    if (n >= 0) {
        if (!array || info.count != (unsigned)n)
            FAIL("json_objects took %d objects of what the decoder calls %s (top %c, %u elements)", n,
                 valid ? "JSON" : "not JSON", info.top, info.count);
        for (int i = 0; i < n && i < SJ_ITEMS; i++)
            if (objs[i].id_not_string != info.id_not_string[i])
                FAIL("product %d: itemId not a string: scanner %d, decoder %d", i, objs[i].id_not_string,
                     info.id_not_string[i]);
        for (int i = 0; i < n && i < SJ_ITEMS; i++)
            if (objs[i].has_availability != (info.availability[i] > 0))
                FAIL("product %d: an availability of its own: scanner %d, decoder %u", i, objs[i].has_availability,
                     info.availability[i]);
        for (int i = 0; i < n; i++) {
            if (cat[objs[i].off] != '{' || cat[objs[i].off + objs[i].len - 1] != '}' ||
                !sj_check(cat + objs[i].off, objs[i].len, &(struct sj_info){0}))
                FAIL("product %d: [%u, +%u) is not one object", i, objs[i].off, objs[i].len);
            if (objs[i].has_id && (info.id_type[i] != '"' || strlen(objs[i].id) == 0))
                FAIL("product %d: an id kept from a value of type %c", i, info.id_type[i]);
        }
    } else if (n == -E2BIG) {
        if (!(info.count > GATEWAY_ITEMS_MAX || !array))
            FAIL("E2BIG for %u objects", info.count);
    } else if (array && info.depth_max <= JSON_DEPTH_MAX && info.count <= GATEWAY_ITEMS_MAX) {
        FAIL("json_objects refused a JSON array of %u objects, depth %u", info.count, info.depth_max);
    }
    uint32_t off, olen;
    bool one = json_object(cat, cat_len, &off, &olen);
    struct sj_info oi;
    bool obj = sj_check(cat, cat_len, &oi) && oi.top == '{';
    if (one && !obj)
        FAIL("json_object took what the decoder does not call one object");
    if (!one && obj && oi.depth_max <= JSON_DEPTH_MAX)
        FAIL("json_object refused an object of depth %u", oi.depth_max);

    /* the gateway's answer */
    static struct upstream_client client;
    static struct url curl = {.host = "cat", .authority = "cat:1", .port = 1, .path = "/"};
    static uint64_t now_ms = 1000;
    snprintf(client.ups[0].name, sizeof(client.ups[0].name), "cat:1");
    snprintf(client.ups[1].name, sizeof(client.ups[1].name), "inv:2");
    client.ups[0].url = &curl;
    client.nups = 2;
    struct gateway g = {.up = &client, .catalog_up = 0, .inventory_up = 1, .now_ms = &now_ms, .timeout_ms = 1000};
    snprintf(g.catalog_path, sizeof(g.catalog_path), "/api/catalog");
    snprintf(g.inventory_path, sizeof(g.inventory_path), "/api/inventory/");
    struct trace tr = {0};
    if (opt & 2) {
        tr.valid = true;
        memcpy(tr.trace_id, "4bf92f3577b34da6a3ce929d0e0e4736", 33);
        memcpy(tr.parent_id, "00f067aa0ba902b7", 17);
        tr.flags = 1;
    }
    struct gateway_req *req = NULL;
    memset(&answer, 0, sizeof(answer));
    npending = 0;
    if (!gateway_start(&g, opt & 1, &tr, 7, 11, on_done, NULL, &req))
        return 0; /* out of memory */
    uint32_t rnd = opt >> 2;
    unsigned served = 0;
    while (npending) {
        rnd = rnd * 1103515245u + 12345u;
        unsigned k = (rnd >> 16) % npending;
        struct upstream_call *c = pending[k];
        pending[k] = pending[--npending];
        c->where = UPCALL_IDLE;
        if (c->up == 0) {
            c->done(c, UPSTREAM_OK, 0, 200, cat, cat_len);
            continue;
        }
        const char *a = "{\"q\":1}";
        size_t al = 7;
        if (nans) {
            a = ans[served % nans];
            al = ans_len[served % nans];
        }
        served++;
        if (al == 1 && a[0] == 'T')
            c->done(c, UPSTREAM_TIMEOUT, 0, 0, NULL, 0);
        else if (al >= 1 && a[0] == '!')
            c->done(c, UPSTREAM_OK, 0, 503, a + 1, al - 1);
        else
            c->done(c, UPSTREAM_OK, 0, 200, a, al);
    }
    if (!answer.done || req)
        FAIL("the fan-out did not end (%u calls left)", npending);
    bool contract = n >= 0;
    for (int i = 0; contract && i < n; i++)
        contract = !objs[i].id_not_string && !objs[i].has_availability;
    if (answer.status == 200) {
        if (!contract)
            FAIL("200 for a catalog that breaks the contract (%d)", n);
        struct sj_info ai;
        if (!sj_check(answer.body, answer.len, &ai) || ai.top != '[' || !ai.all_objects || ai.count != (unsigned)n)
            FAIL("the gateway's answer is not a JSON array of %d objects: %.*s", n, (int)answer.len, answer.body);
        for (int i = 0; i < n && i < SJ_ITEMS; i++)
            if (ai.availability[i] != 1)
                FAIL("product %d of the answer has %u availability members", i, ai.availability[i]);
    } else {
        if (contract)
            FAIL("%d for a catalog that keeps the contract: %s", answer.status, answer.why);
        if (answer.status != 502 || answer.body || strncmp(answer.why, "catalog cat:1: ", 15) != 0)
            FAIL("%d (%s) for a catalog that breaks it", answer.status, answer.why);
    }
    free(answer.body);
    return 0;
}
