/* fuzz_catalog.c - libFuzzer target over src/app/services/catalog.c, a --catalog file as
 * it is parsed and rendered into /api/catalog and /api/inventory's answers.
 *
 * Input: the file's text. Checks on a catalog taken: 1..CATALOG_ITEMS_MAX
 * products, each id a path segment that catalog_find finds; /api/catalog's
 * answer is valid JSON by tests/fuzz/strict_json.h (a decoder written apart
 * from src/app/services/json.c): an array of as many objects, each with a string
 * "itemId"; each inventory answer one JSON object of its length. On a
 * refusal, the reason is one line.
 * abort() with a message on a failed check, so libFuzzer saves the input.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "strict_json.h"

#define FUZZ_NAME "fuzz_catalog"
#include "fuzz_fail.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct catalog c;
    static struct sj_info info;
    char err[256] = "";
    if (catalog_parse(&c, (const char *)data, size, err, sizeof(err)) != 0) {
        if (!err[0] || strchr(err, '\n'))
            FAIL("a refusal without a one-line reason: '%s'", err);
        return 0;
    }
    if (c.n == 0 || c.n > CATALOG_ITEMS_MAX)
        FAIL("%u products", c.n);
    if (catalog_render(&c) != 0)
        return 0; /* out of memory */
    if (!sj_check(c.json, c.json_len, &info) || info.top != '[' || !info.all_objects || info.count != c.n)
        FAIL("/api/catalog is not a JSON array of %u objects: %.*s", c.n, (int)c.json_len, c.json);
    for (unsigned i = 0; i < c.n; i++) {
        const struct catalog_item *it = &c.items[i];
        if (i < SJ_ITEMS && info.id_type[i] != '"')
            FAIL("product %u: itemId of type %c", i, info.id_type[i]);
        size_t idn = strlen(it->id);
        for (size_t k = 0; k < idn; k++)
            if (!route_item_char(it->id[k]))
                FAIL("product %u: id byte 0x%02x", i, (unsigned char)it->id[k]);
        if (idn == 0 || catalog_find(&c, it->id) != it)
            FAIL("product %u: id '%s' not found as itself", i, it->id);
        struct sj_info ii;
        if (it->inventory_len != strlen(it->inventory) || !sj_check(it->inventory, it->inventory_len, &ii) ||
            ii.top != '{')
            FAIL("product %u: inventory answer '%s'", i, it->inventory);
    }
    catalog_free(&c);
    return 0;
}
