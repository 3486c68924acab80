/* test_catalog.c - the products: the built-in set, the --catalog format and
 * every refusal with its line, the rendered answers (valid JSON, escaped). */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "catalog.h"
#include "json.h"

static struct catalog cat;

static void reset(void)
{
    catalog_free(&cat);
    memset(&cat, 0, sizeof(cat));
}

TestSuite(catalog, .init = reset, .fini = reset);

Test(catalog, builtin_renders_as_an_array_of_objects)
{
    catalog_builtin(&cat);
    cr_assert_eq(cat.n, 8);
    cr_assert_eq(catalog_render(&cat), 0);
    struct json_obj o[CATALOG_ITEMS_MAX];
    int n = json_objects(cat.json, cat.json_len, o, CATALOG_ITEMS_MAX);
    cr_assert_eq(n, 8, "%s", cat.json);
    for (unsigned i = 0; i < cat.n; i++) {
        cr_assert(o[i].has_id);
        cr_assert_str_eq(o[i].id, cat.items[i].id);
        uint32_t off, len;
        cr_assert(json_object(cat.items[i].inventory, cat.items[i].inventory_len, &off, &len));
    }
    const struct catalog_item *it = catalog_find(&cat, "329299");
    cr_assert_not_null(it);
    cr_assert_str_eq(it->inventory, "{\"itemId\":\"329299\",\"quantity\":35}");
    cr_assert(strstr(cat.json, "{\"itemId\":\"329299\",\"name\":\"Red Fedora\",\"description\":") == cat.json + 1);
    cr_assert_null(catalog_find(&cat, "nope"));
}

Test(catalog, file_format_comments_crlf_and_escapes)
{
    const char *text = "# id\tname\tdescription\tprice\tquantity\n"
                       "\n"
                       "a-1\tQuote \"x\" and \\\tCaf\xc3\xa9 cr\xc3\xa8me\t1.5\t0\r\n"
                       "b_2\tB\t\t10\t1000000000\n";
    char err[200];
    cr_assert_eq(catalog_parse(&cat, text, strlen(text), err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(cat.n, 2);
    cr_assert_str_eq(cat.items[0].name, "Quote \"x\" and \\");
    cr_assert_eq(cat.items[1].quantity, 1000000000);
    cr_assert_eq(catalog_render(&cat), 0);
    cr_assert(strstr(cat.json, "\"name\":\"Quote \\\"x\\\" and \\\\\""), "%s", cat.json);
    cr_assert(strstr(cat.json, "\"price\":1.5}"), "%s", cat.json);
    cr_assert(strstr(cat.json, "\"description\":\"\""), "%s", cat.json);
    struct json_obj o[2];
    cr_assert_eq(json_objects(cat.json, cat.json_len, o, 2), 2, "%s", cat.json);
}

struct bad {
    const char *text, *why;
};

Test(catalog, refusals_name_the_line)
{
    static const struct bad cases[] = {
        {"", "no products"},
        {"# only a comment\n", "no products"},
        {"1\tA\tD\t1\t1\n1\tB\tD\t2\t2\n", "line 2: item id 1 given twice"},
        {"1\tA\tD\t1\n", "line 1: fewer than 5"},
        {"1\tA\tD\t1\t2\t3\n", "line 1: more than 5"},
        {"a/b\tA\tD\t1\t2\n", "line 1: the id may hold only"},
        {"\tA\tD\t1\t2\n", "line 1: the id must be 1..32 bytes"},
        {"123456789012345678901234567890123\tA\tD\t1\t2\n", "the id must be 1..32"},
        {"1\t\tD\t1\t2\n", "the name must be"},
        {"1\tA\x01\tD\t1\t2\n", "the name must be"},
        {"1\tA\xff\tD\t1\t2\n", "the name must be"},
        {"1\tA\xc0\xaf\tD\t1\t2\n", "the name must be"},     /* overlong '/' */
        {"1\tA\xed\xa0\x80\tD\t1\t2\n", "the name must be"}, /* a surrogate */
        {"1\tA\tD\t1.234\t2\n", "the price must be"},
        {"1\tA\tD\t-1\t2\n", "the price must be"},
        {"1\tA\tD\t1e3\t2\n", "the price must be"},
        {"1\tA\tD\t.5\t2\n", "the price must be"},
        {"1\tA\tD\t011\t2\n", "the price must be"}, /* not a JSON number (fuzz-catalog) */
        {"1\tA\tD\t00.5\t2\n", "the price must be"},
        {"1\tA\tD\t1\t-2\n", "the quantity must be"},
        {"1\tA\tD\t1\t1000000001\n", "the quantity must be"},
        {"1\tA\tD\t1\t\n", "the quantity must be"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char err[200] = "";
        reset();
        cr_assert_eq(catalog_parse(&cat, cases[i].text, strlen(cases[i].text), err, sizeof(err)), -EINVAL,
                     "accepted case %zu", i);
        cr_assert(strstr(err, cases[i].why), "case %zu: '%s' lacks '%s'", i, err, cases[i].why);
    }
}

Test(catalog, more_than_max_products)
{
    static char text[CATALOG_ITEMS_MAX * 32 + 64];
    size_t n = 0;
    for (int i = 0; i <= CATALOG_ITEMS_MAX; i++)
        n += (size_t)snprintf(text + n, sizeof(text) - n, "id%d\tN\tD\t1\t1\n", i);
    char err[200];
    cr_assert_eq(catalog_parse(&cat, text, n, err, sizeof(err)), -EINVAL);
    cr_assert(strstr(err, "more than 64 products"), "%s", err);
}

Test(catalog, load_a_file_and_a_missing_one)
{
    char path[] = "/tmp/primed-catalog-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    const char *text = "x\tX\tan x\t2.00\t3\n";
    cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    char err[300];
    cr_assert_eq(catalog_load(&cat, path, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(cat.n, 1);
    unlink(path);
    cr_assert_eq(catalog_load(&cat, path, err, sizeof(err)), -ENOENT);
    cr_assert(strstr(err, path) && strstr(err, "No such file"), "%s", err);
}

Test(catalog, a_line_too_long)
{
    static char text[CATALOG_LINE_MAX + 64];
    memset(text, 'a', sizeof(text) - 2);
    text[sizeof(text) - 2] = '\n';
    text[sizeof(text) - 1] = '\0';
    char err[200];
    cr_assert_eq(catalog_parse(&cat, text, strlen(text), err, sizeof(err)), -EINVAL);
    cr_assert(strstr(err, "line 1: longer than"), "%s", err);
}
