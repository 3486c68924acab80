/* test_example_answer.c - src/app/routes/example.c's answer, pure: Hello_N counts up; a
 * failed prime is 500 and closes. Includes example.c to reach its static
 * answer function (the app library's example.o is then never linked: this
 * file defines its module). */
#include <criterion/criterion.h>
#include <errno.h>

#include "routes/example.c"

Test(example, counts_and_failure_closes)
{
    static _Atomic int draining;
    static _Atomic uint64_t n;
    struct answer_env env = {.draining = &draining, .example_n = &n};
    struct http h = {.req.keep_alive = true};
    static const struct {
        int result, status;
        const char *body;
        bool keep_alive;
    } cases[] = {
        {0, 200, "Hello_1", true},
        {0, 200, "Hello_2", true}, /* N never repeats */
        {-ENOMEM, 500, "prime generation failed\n", false},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct resp r;
        char body[ANSWER_BODY_MAX];
        example_answer(&env, &h, cases[i].result, &r, body, sizeof(body));
        cr_assert_eq(r.status, cases[i].status, "case %zu", i);
        cr_assert_str_eq(r.body, cases[i].body, "case %zu", i);
        cr_assert_eq(r.keep_alive, cases[i].keep_alive, "case %zu", i);
    }
}
