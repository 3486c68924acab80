/* test_example.c - src/app/example.c's answer, pure: Hello_N counts up; a
 * failed prime is 500 and closes. Includes example.c to reach its static
 * answer function (the app library's example.o is then never linked: this
 * file defines its module). */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "example.c"

Test(example, counts_and_failure_closes)
{
    static _Atomic int draining;
    static _Atomic uint64_t n;
    struct handler_env env = {.draining = &draining, .example_n = &n};
    struct http h = {.req.keep_alive = true};
    struct resp r;
    char body[HANDLERS_BODY_MAX];
    example_answer(&env, &h, 0, &r, body, sizeof(body));
    cr_assert_eq(r.status, 200);
    cr_assert_str_eq(r.body, "Hello_1");
    cr_assert(r.keep_alive);
    example_answer(&env, &h, 0, &r, body, sizeof(body));
    cr_assert_str_eq(r.body, "Hello_2", "N never repeats");
    example_answer(&env, &h, -ENOMEM, &r, body, sizeof(body));
    cr_assert_eq(r.status, 500);
    cr_assert(!r.keep_alive);
}
