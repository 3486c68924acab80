/* catalog.h - the products of GET /api/catalog and /api/inventory/{itemId}
 * (seed 003's catalog and inventory services): a built-in set or a file,
 * read-only once the server runs, with its JSON answers rendered once.
 *
 * Pure: parsing and rendering, no I/O but catalog_load()'s one read of the
 * file at start-up. The event store (store.h) writes the set into its catalog
 * and inventory tables and reads it back; the workers serve the snapshot.
 */
#ifndef PRIMED_CATALOG_H
#define PRIMED_CATALOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "item_id.h"

#define CATALOG_ITEMS_MAX 64           /* products per catalog */
#define CATALOG_NAME_MAX  64           /* bytes of a name */
#define CATALOG_DESC_MAX  256          /* bytes of a description */
#define CATALOG_PRICE_MAX 12           /* "123456789.99" */
#define CATALOG_QTY_MAX   1000000000LL /* quantities 0..10^9 */
#define CATALOG_LINE_MAX  1024         /* a line of a --catalog file */
#define CATALOG_FILE_MAX  (256 * 1024) /* a --catalog file */

struct catalog_item {
    char id[ITEM_ID_MAX + 1]; /* 1..32 of [A-Za-z0-9._-]: it is a path segment */
    char name[CATALOG_NAME_MAX + 1];
    char desc[CATALOG_DESC_MAX + 1];
    char price[CATALOG_PRICE_MAX + 1]; /* as given: digits, at most one '.' and 2 decimals: a JSON number */
    int64_t quantity;
    char inventory[ITEM_ID_MAX + 48]; /* its /api/inventory answer: {"itemId":"...","quantity":N} */
    uint8_t inventory_len;
};

struct catalog {
    struct catalog_item items[CATALOG_ITEMS_MAX];
    unsigned n;
    char *json; /* /api/catalog's answer, owned (catalog_render) */
    size_t json_len;
};

/* The built-in set: eight products of seed 003's shop. */
void catalog_builtin(struct catalog *c);

/* Parses a --catalog text: one product per line, five fields separated by
 * TABs: ID NAME DESCRIPTION PRICE QUANTITY; blank lines and lines starting
 * with '#' are skipped. Names and descriptions are UTF-8 without control
 * characters. Returns 0, or -EINVAL with "line N: reason" in err. */
int catalog_parse(struct catalog *c, const char *text, size_t len, char *err, size_t errlen);

/* Reads and parses the file at path (at most CATALOG_FILE_MAX bytes).
 * Returns 0 or -errno with a one-line reason in err. */
int catalog_load(struct catalog *c, const char *path, char *err, size_t errlen);

/* Renders the answers: c->json and every item's inventory line. Returns 0
 * or -ENOMEM. Call again after changing items (it frees the old one). */
int catalog_render(struct catalog *c);

/* The item with id, or NULL. */
const struct catalog_item *catalog_find(const struct catalog *c, const char *id);

/* Frees c->json. */
void catalog_free(struct catalog *c);

#endif
