/* test_strout.c - formatting by appending: what snprintf would have written,
 * a piece fits only with a byte to spare, and a piece that does not fit fails
 * the whole output (never a cut value). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "strout.h"

Test(strout, writes_what_snprintf_would)
{
    char buf[128], want[128];
    struct strout o = strout_init(buf, sizeof(buf));
    STROUT_LIT(&o, "id=");
    strout_uint(&o, 18446744073709551615ULL);
    STROUT_LIT(&o, " hex=");
    strout_hex(&o, 0xabcULL, 16);
    strout_hex(&o, 0x1ULL, 2);
    STROUT_LIT(&o, " ");
    strout_strn(&o, "podname-that-is-long", 7);
    strout_uint(&o, 0);
    size_t n = strout_end(&o);
    snprintf(want, sizeof(want), "id=%llu hex=%016llx%02x %.7s%u", 18446744073709551615ULL, 0xabcULL, 1u,
             "podname-that-is-long", 0u);
    cr_assert_str_eq(buf, want);
    cr_assert_eq(n, strlen(want));
}

Test(strout, fits_only_with_a_byte_to_spare)
{
    char buf[6];
    struct strout o = strout_init(buf, sizeof(buf));
    STROUT_LIT(&o, "abcde"); /* 5 + NUL: fits */
    cr_assert_eq(strout_end(&o), 5);
    cr_assert_str_eq(buf, "abcde");
    o = strout_init(buf, sizeof(buf));
    STROUT_LIT(&o, "abc");
    STROUT_LIT(&o, "def"); /* would leave no byte for the NUL */
    STROUT_LIT(&o, "g");   /* nothing after a failure counts */
    cr_assert_eq(strout_end(&o), 0);
    cr_assert_str_eq(buf, "", "a failed output is empty, never cut");
}

Test(strout, an_empty_buffer_takes_nothing)
{
    char c = 'x';
    struct strout o = strout_init(&c, 0);
    STROUT_LIT(&o, "");
    cr_assert_eq(strout_end(&o), 0);
    cr_assert_eq(c, 'x');
}
