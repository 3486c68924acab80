/* catalog.c - the products, parsed and rendered (catalog.h).
 *
 * Every field is checked when it is read, so rendering is plain copying and
 * escaping: a name reaches JSON escaped, an id is a path segment as it is,
 * a price is a JSON number as it is.
 */
#include "catalog.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json.h"
#include "log.h"

static const struct {
    const char *id, *name, *desc, *price;
    int64_t quantity;
} builtin[] = {
    {"329299", "Red Fedora", "Official Red Hat Fedora, wool felt", "34.99", 35},
    {"329199", "Forge Laptop Sticker", "A vinyl sticker of the JBoss Forge project", "8.50", 512},
    {"165613", "Solid Performance Polo", "Moisture-wicking polyester polo with a rib-knit collar", "17.80", 256},
    {"165614", "Ogio Caliber Polo", "Textured polo that keeps its shape wash after wash", "28.75", 54},
    {"165954", "16 oz. Vortex Tumbler", "Double-wall insulated tumbler with a slide lid", "6.00", 443},
    {"444434", "Pebble Smart Watch", "A smart watch with an e-paper display and a week of battery", "24.00", 0},
    {"444435", "Oculus Rift", "A virtual reality headset for games and demos", "106.00", 12},
    {"444436", "Lytro Camera", "A light-field camera: focus after the shot", "44.30", 7},
};

void catalog_builtin(struct catalog *c)
{
    c->n = 0;
    for (size_t i = 0; i < sizeof(builtin) / sizeof(builtin[0]); i++) {
        struct catalog_item *it = &c->items[c->n++];
        memset(it, 0, sizeof(*it));
        snprintf(it->id, sizeof(it->id), "%s", builtin[i].id);
        snprintf(it->name, sizeof(it->name), "%s", builtin[i].name);
        snprintf(it->desc, sizeof(it->desc), "%s", builtin[i].desc);
        snprintf(it->price, sizeof(it->price), "%s", builtin[i].price);
        it->quantity = builtin[i].quantity;
    }
}

/* Well-formed UTF-8 without control characters (RFC 3629: no overlongs, no
 * surrogates, nothing past U+10FFFF: json_utf8_len). */
static bool text_ok(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        uint32_t cp;
        size_t len = json_utf8_len(s + i, n - i, &cp);
        /* C0, DEL and the C1 controls (U+0080..U+009F) */
        if (!len || cp < 0x20 || (cp >= 0x7f && cp <= 0x9f))
            return false;
        i += len;
    }
    return true;
}

/* digits without a leading zero (but "0"), optionally '.' and one or two
 * digits; at most 9 before the point: a JSON number as written */
static bool price_ok(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n && s[i] >= '0' && s[i] <= '9')
        i++;
    if (i == 0 || i > 9 || (i > 1 && s[0] == '0')) /* "011" is not a JSON number */
        return false;
    if (i == n)
        return true;
    if (s[i] != '.' || n - i - 1 < 1 || n - i - 1 > 2)
        return false;
    for (size_t k = i + 1; k < n; k++)
        if (s[k] < '0' || s[k] > '9')
            return false;
    return true;
}

static bool qty_parse(const char *s, size_t n, int64_t *out)
{
    if (n == 0 || n > 10)
        return false;
    int64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (s[i] - '0');
    }
    if (v > CATALOG_QTY_MAX)
        return false;
    *out = v;
    return true;
}

/* One product line of n bytes into it. Returns NULL or what is wrong. */
static const char *parse_line(const char *line, size_t n, struct catalog_item *it)
{
    const char *f[5];
    size_t fl[5];
    size_t nf = 0, start = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i == n || line[i] == '\t') {
            if (nf == 5)
                return "more than 5 TAB-separated fields (ID NAME DESCRIPTION PRICE QUANTITY)";
            f[nf] = line + start;
            fl[nf++] = i - start;
            start = i + 1;
        }
    }
    if (nf != 5)
        return "fewer than 5 TAB-separated fields (ID NAME DESCRIPTION PRICE QUANTITY)";
    if (fl[0] == 0 || fl[0] > ITEM_ID_MAX)
        return "the id must be 1..32 bytes";
    for (size_t k = 0; k < fl[0]; k++)
        if (!item_id_char(f[0][k]))
            return "the id may hold only letters, digits, '.', '_' and '-'";
    if (fl[1] == 0 || fl[1] > CATALOG_NAME_MAX || !text_ok((const unsigned char *)f[1], fl[1]))
        return "the name must be 1..64 bytes of UTF-8 text";
    if (fl[2] > CATALOG_DESC_MAX || !text_ok((const unsigned char *)f[2], fl[2]))
        return "the description must be at most 256 bytes of UTF-8 text";
    if (fl[3] > CATALOG_PRICE_MAX || !price_ok(f[3], fl[3]))
        return "the price must be a decimal like 34.99 (no leading zero, at most 2 decimals, under 10^9)";
    memset(it, 0, sizeof(*it));
    if (!qty_parse(f[4], fl[4], &it->quantity))
        return "the quantity must be a whole number from 0 to 1000000000";
    memcpy(it->id, f[0], fl[0]);
    memcpy(it->name, f[1], fl[1]);
    memcpy(it->desc, f[2], fl[2]);
    memcpy(it->price, f[3], fl[3]);
    return NULL;
}

int catalog_parse(struct catalog *c, const char *text, size_t len, char *err, size_t errlen)
{
    c->n = 0;
    unsigned lineno = 0;
    size_t pos = 0;
    while (pos < len) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - text) : len;
        const char *line = text + pos;
        size_t n = end - pos;
        pos = end + 1;
        lineno++;
        if (n && line[n - 1] == '\r')
            n--;
        if (n > CATALOG_LINE_MAX)
            return log_einval(err, errlen, "line %u: longer than %d bytes", lineno, CATALOG_LINE_MAX);
        if (n == 0 || line[0] == '#')
            continue;
        if (c->n == CATALOG_ITEMS_MAX)
            return log_einval(err, errlen, "line %u: more than %d products", lineno, CATALOG_ITEMS_MAX);
        struct catalog_item *it = &c->items[c->n];
        const char *why = parse_line(line, n, it);
        if (why)
            return log_einval(err, errlen, "line %u: %s", lineno, why);
        if (catalog_find(c, it->id))
            return log_einval(err, errlen, "line %u: item id %s given twice", lineno, it->id);
        c->n++;
    }
    if (c->n == 0)
        return log_einval(err, errlen, "no products (lines of ID<TAB>NAME<TAB>DESCRIPTION<TAB>PRICE<TAB>QUANTITY)");
    return 0;
}

int catalog_load(struct catalog *c, const char *path, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        snprintf(err, errlen, "%s: %s", path, strerror(e));
        return -e;
    }
    char *buf = malloc(CATALOG_FILE_MAX + 1);
    if (!buf) {
        close(fd);
        snprintf(err, errlen, "%s: out of memory", path);
        return -ENOMEM;
    }
    size_t len = 0;
    for (;;) {
        ssize_t n = read(fd, buf + len, CATALOG_FILE_MAX + 1 - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int e = errno;
            snprintf(err, errlen, "%s: %s", path, strerror(e));
            free(buf);
            close(fd);
            return -e;
        }
        if (n == 0)
            break;
        len += (size_t)n;
        if (len > CATALOG_FILE_MAX) {
            snprintf(err, errlen, "%s: larger than %d bytes", path, CATALOG_FILE_MAX);
            free(buf);
            close(fd);
            return -EFBIG;
        }
    }
    close(fd);
    char why[200];
    int r = catalog_parse(c, buf, len, why, sizeof(why));
    free(buf);
    if (r)
        snprintf(err, errlen, "%s: %s", path, why);
    return r;
}

/* s as JSON string content into out (cap bytes); returns the bytes written.
 * s is checked text (no control characters): only '"' and '\\' need escapes. */
static size_t escape(char *out, const char *s)
{
    size_t n = 0;
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            out[n++] = '\\';
        out[n++] = *s;
    }
    return n;
}

int catalog_render(struct catalog *c)
{
    /* the bound: every byte of a name or description escaped */
    size_t cap = 3;
    for (unsigned i = 0; i < c->n; i++)
        cap += sizeof("{\"itemId\":\"\",\"name\":\"\",\"description\":\"\",\"price\":},") + ITEM_ID_MAX +
               2 * (CATALOG_NAME_MAX + CATALOG_DESC_MAX) + CATALOG_PRICE_MAX;
    char *buf = malloc(cap);
    if (!buf)
        return -ENOMEM;
    size_t n = 0;
    buf[n++] = '[';
    for (unsigned i = 0; i < c->n; i++) {
        struct catalog_item *it = &c->items[i];
        if (i)
            buf[n++] = ',';
        n += (size_t)sprintf(buf + n, "{\"itemId\":\"%s\",\"name\":\"", it->id);
        n += escape(buf + n, it->name);
        n += (size_t)sprintf(buf + n, "\",\"description\":\"");
        n += escape(buf + n, it->desc);
        n += (size_t)sprintf(buf + n, "\",\"price\":%s}", it->price);
        /* through a copy: the id and the line share the item (GCC's -Wrestrict) */
        char inv[sizeof(it->inventory)];
        int k = snprintf(inv, sizeof(inv), "{\"itemId\":\"%s\",\"quantity\":%lld}", it->id, (long long)it->quantity);
        memcpy(it->inventory, inv, sizeof(inv));
        it->inventory_len = (uint8_t)k;
    }
    buf[n++] = ']';
    buf[n] = '\0';
    free(c->json);
    c->json = buf;
    c->json_len = n;
    return 0;
}

const struct catalog_item *catalog_find(const struct catalog *c, const char *id)
{
    for (unsigned i = 0; i < c->n; i++)
        if (strcmp(c->items[i].id, id) == 0)
            return &c->items[i];
    return NULL;
}

void catalog_free(struct catalog *c)
{
    free(c->json);
    c->json = NULL;
    c->json_len = 0;
}
