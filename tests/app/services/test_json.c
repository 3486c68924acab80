/* test_json.c - the gateway's scanner: what it accepts, where it says each
 * object is, the itemId it keeps, and everything it refuses. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "json.h"

static int scan(const char *s, struct json_obj *out, unsigned max)
{
    return json_objects(s, strlen(s), out, max);
}

/* Each of cases is one product whose flag (a bool of struct json_obj at offset off) is want. */
static void flag_is(const char *const *cases, size_t n, size_t off, bool want)
{
    for (size_t i = 0; i < n; i++) {
        struct json_obj o[1];
        cr_assert_eq(scan(cases[i], o, 1), 1, "%s", cases[i]);
        cr_assert_eq(*(const bool *)((const char *)&o[0] + off), want, "%s: flag %d", cases[i], !want);
    }
}

Test(json, array_of_objects_with_offsets_and_ids)
{
    const char *s = " [ {\"itemId\":\"329299\",\"name\":\"Red \\\"Fedora\\\"\",\"price\":34.99},\n"
                    "{\"name\":\"x\",\"itemId\":42,\"tags\":[1,{\"a\":null}],\"ok\":true}, {} ] ";
    struct json_obj o[4];
    int n = scan(s, o, 4);
    cr_assert_eq(n, 3);
    cr_assert(o[0].has_id);
    cr_assert_str_eq(o[0].id, "329299");
    cr_assert_eq(s[o[0].off], '{');
    cr_assert_eq(s[o[0].off + o[0].len - 1], '}');
    cr_assert(strncmp(s + o[0].off, "{\"itemId\"", 9) == 0);
    cr_assert(!o[1].has_id, "a number is not the contract's string id");
    cr_assert(o[1].id_not_string);
    cr_assert(!o[0].id_not_string);
    cr_assert(!o[1].empty);
    cr_assert(o[2].empty);
    cr_assert(!o[2].has_id);
    cr_assert_eq(o[2].len, 2);
}

Test(json, empty_array)
{
    struct json_obj o[1];
    cr_assert_eq(scan("[]", o, 1), 0);
    cr_assert_eq(scan(" [ ] \n", o, 1), 0);
}

Test(json, ids_that_are_not_path_segments_are_not_kept)
{
    static const char *const cases[] = {
        "[{\"itemId\":\"a/b\"}]",     "[{\"itemId\":\"a b\"}]",
        "[{\"itemId\":\"\"}]",        "[{\"itemId\":\"x\\u0041\"}]",
        "[{\"itemId\":true}]",        "[{\"itemId\":null}]",
        "[{\"itemId\":{\"a\":1}}]",   "[{\"itemId\":\"123456789012345678901234567890123\"}]",
        "[{\"itemId\":\"a\\r\\nb\"}]",     "[{\"itemId\":\"..\\/x\"}]",
    };
    flag_is(cases, sizeof(cases) / sizeof(cases[0]), offsetof(struct json_obj, has_id), false);
}

Test(json, an_escaped_key_is_the_key_it_decodes_to)
{
    struct json_obj o[1];
    cr_assert_eq(scan("[{\"item\\u0049d\":\"a1\"}]", o, 1), 1);
    cr_assert(o[0].has_id);
    cr_assert_str_eq(o[0].id, "a1");
    static const char *const other[] = {"[{\"item\\u0049\":\"a1\"}]", "[{\"itemIdx\":\"a1\"}]",
                                        "[{\"item\\u0049dx\":\"a1\"}]", "[{\"item\\u0069d\":\"a1\"}]",
                                        "[{\"item\\/Id\":\"a1\"}]"};
    for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++) {
        cr_assert_eq(scan(other[i], o, 1), 1, "%s", other[i]);
        cr_assert(!o[0].has_id, "%s", other[i]);
    }
}

Test(json, a_products_own_availability_is_flagged)
{
    static const char *const flagged[] = {"[{\"availability\":null}]", "[{\"itemId\":\"a\",\"availability\":{}}]",
                                          "[{\"availabilit\\u0079\":1}]"};
    static const char *const fine[] = {"[{\"x\":{\"availability\":1}}]", "[{\"availabilityx\":1}]", "[{}]"};
    flag_is(flagged, sizeof(flagged) / sizeof(flagged[0]), offsetof(struct json_obj, has_availability), true);
    flag_is(fine, sizeof(fine) / sizeof(fine[0]), offsetof(struct json_obj, has_availability), false);
}

Test(json, ids_of_another_type_than_string_are_flagged)
{
    static const char *const flagged[] = {
        "[{\"itemId\":42}]",          "[{\"itemId\":1e999999}]", "[{\"itemId\":-0}]",
        "[{\"itemId\":true}]",        "[{\"itemId\":null}]",     "[{\"itemId\":{\"a\":1}}]",
        "[{\"itemId\":[\"1\"]}]",       "[{\"itemId\":1,\"itemId\":\"1\"}]", /* a duplicate does not clear it */
        "[{\"item\\u0049d\":1}]",     "[{\"\\u0069temI\\u0064\":null}]", /* the key as a reader decodes it */
    };
    static const char *const fine[] = {"[{}]", "[{\"itemId\":\"\"}]", "[{\"itemId\":\"a/b\"}]",
                                       "[{\"x\":{\"itemId\":1}}]" /* not a product's own */};
    flag_is(flagged, sizeof(flagged) / sizeof(flagged[0]), offsetof(struct json_obj, id_not_string), true);
    flag_is(fine, sizeof(fine) / sizeof(fine[0]), offsetof(struct json_obj, id_not_string), false);
}

Test(json, strings_must_decode)
{
    /* RFC 8259 8.1 (UTF-8) and 8.2 (surrogates only in pairs): the gateway copies strings as they come */
    static const char *const bad[] = {
        "[{\"a\":\"\xff\xfe\"}]",            /* not UTF-8 at all */
        "[{\"a\":\"\xc0\xaf\"}]",            /* overlong '/' */
        "[{\"a\":\"\xe0\x80\xaf\"}]",        /* overlong, 3 bytes */
        "[{\"a\":\"\xed\xa0\x80\"}]",        /* U+D800 encoded */
        "[{\"a\":\"\xf4\x90\x80\x80\"}]",    /* past U+10FFFF */
        "[{\"a\":\"\xc3\"}]",                /* cut short by the quote */
        "[{\"a\":\"x\xe2\x82\"}]",           /* cut short */
        "[{\"a\":\"\x80\"}]",                /* a lone continuation byte */
        "[{\"a\":\"\\ud800\"}]",             /* a lone high surrogate */
        "[{\"a\":\"\\udc00\"}]",             /* a lone low surrogate */
        "[{\"a\":\"\\ud800\\u0041\"}]",      /* high, then not a low one */
        "[{\"a\":\"\\ud800\\ud800\"}]",      /* high, high */
        "[{\"a\":\"\\udc00\\ud800\"}]",      /* low, high */
        "[{\"a\":\"\\ud800x\"}]",            /* high, then text */
        "[{\"a\":\"\\ud800\\\"}]",          /* high, then another escape */
        "[{\"a\":\"\\ud800\\udc0\"}]",       /* a low one cut short */
        "[{\"\xff\":1}]",                    /* in a key too */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct json_obj o[1];
        uint32_t off, len;
        cr_assert_eq(scan(bad[i], o, 1), -EINVAL, "accepted %s", bad[i]);
        cr_assert(!json_object(bad[i] + 1, strlen(bad[i]) - 2, &off, &len), "json_object accepted %s", bad[i]);
    }
    static const char *const good[] = {
        "[{\"a\":\"caf\xc3\xa9\"}]",               "[{\"a\":\"\xe2\x82\xac \xf0\x9f\x98\x80\"}]",
        "[{\"a\":\"\\ud83d\\ude00\"}]",           "[{\"a\":\"\\uD83D\\uDE00x\"}]",
        "[{\"a\":\"\\u0000\\uffff\\ud7ff\\ue000\"}]", "[{\"a\":\"\xef\xbf\xbf\xf4\x8f\xbf\xbf\"}]",
    };
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        struct json_obj o[1];
        cr_assert_eq(scan(good[i], o, 1), 1, "refused %s", good[i]);
    }
}

Test(json, refuses_what_is_not_an_array_of_objects)
{
    static const char *const cases[] = {
        "",
        "{}",
        "[1]",
        "[{}, 2]",
        "[{\"a\":1}",
        "[{\"a\":1}]x",
        "[{\"a\":1},]",
        "[{\"a\" 1}]",
        "[{\"a\":1,}]",
        "[{a:1}]",
        "[{\"a\":01}]",
        "[{\"a\":1.}]",
        "[{\"a\":.5}]",
        "[{\"a\":1e}]",
        "[{\"a\":tru}]",
        "[{\"a\":\"\\x\"}]",
        "[{\"a\":\"\\u12G4\"}]",
        "[{\"a\":\"tab\there\"}]",
        "[{\"a\":\"unterminated}]",
        "[{\"a\":[1,2}]",
        "[{\"a\":-}]",
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct json_obj o[4];
        cr_assert_eq(scan(cases[i], o, 4), -EINVAL, "accepted %s", cases[i]);
    }
}

Test(json, depth_is_bounded)
{
    char s[256] = "[{\"a\":";
    size_t n = strlen(s);
    for (int i = 0; i < 40; i++)
        s[n++] = '[';
    for (int i = 0; i < 40; i++)
        s[n++] = ']';
    strcpy(s + n, "}]");
    struct json_obj o[1];
    cr_assert_eq(scan(s, o, 1), -EINVAL);
}

Test(json, more_than_max_is_e2big)
{
    struct json_obj o[2];
    cr_assert_eq(scan("[{},{},{}]", o, 2), -E2BIG);
    cr_assert_eq(scan("[{},{}]", o, 2), 2);
}

Test(json, a_nul_byte_inside_is_refused)
{
    const char s[] = "[{\"a\":\"x\0y\"}]";
    struct json_obj o[1];
    cr_assert_eq(json_objects(s, sizeof(s) - 1, o, 1), -EINVAL);
}

Test(json, one_object)
{
    uint32_t off, len;
    const char *s = "  {\"itemId\":\"1\",\"quantity\":35}\n";
    cr_assert(json_object(s, strlen(s), &off, &len));
    cr_assert_eq(off, 2);
    cr_assert_eq(len, strlen("{\"itemId\":\"1\",\"quantity\":35}"));
    cr_assert(!json_object("[{}]", 4, &off, &len));
    cr_assert(!json_object("{} {}", 5, &off, &len));
    cr_assert(!json_object("{\"a\":}", 6, &off, &len));
    cr_assert(!json_object("", 0, &off, &len));
    cr_assert(!json_object("not found\n", 10, &off, &len));
}
