/* test_timer.c - deadline lists (src/timer.c): order by construction, removal,
 * expiry through the callback only.
 */
#include <criterion/criterion.h>

#include "timer.h"

static uint64_t fired[16];
static unsigned nfired;

static void record(struct timer *t, void *ctx)
{
    cr_assert_eq(t->list, 0, "off its list before the callback");
    fired[nfired++] = t->deadline_ms;
}

Test(timer, keeps_deadline_order_whatever_the_insertion_order)
{
    static const uint64_t at[] = {60000, 1000, 60001, 500, 60000, 2};
    struct timer_list l;
    struct timer t[6];
    timer_list_init(&l, 1);
    for (int i = 0; i < 6; i++) {
        timer_init(&t[i]);
        timer_add(&l, &t[i], at[i]);
    }
    nfired = 0;
    cr_assert_eq(timer_next(&l, 0), 2);
    cr_assert_eq(timer_expire(&l, UINT64_MAX, record, NULL), 6);
    for (unsigned i = 1; i < nfired; i++)
        cr_assert_leq(fired[i - 1], fired[i], "fired out of order at %u", i);
}

Test(timer, expires_only_what_is_due)
{
    struct timer_list l;
    struct timer a, b;
    timer_list_init(&l, 1);
    timer_init(&a);
    timer_init(&b);
    timer_add(&l, &a, 10);
    timer_add(&l, &b, 20);
    nfired = 0;
    cr_assert_eq(timer_expire(&l, 15, record, NULL), 1);
    cr_assert(timer_on(&b, &l));
    cr_assert_eq(timer_next(&l, 99), 20);
}

Test(timer, moving_between_lists_and_removing)
{
    struct timer_list x, y;
    struct timer a;
    timer_list_init(&x, 1);
    timer_list_init(&y, 2);
    timer_init(&a);
    timer_remove(&a); /* on none: nothing */
    timer_add(&x, &a, 5);
    timer_add(&y, &a, 7);
    cr_assert(!timer_on(&a, &x) && timer_on(&a, &y));
    cr_assert_eq(timer_next(&x, 42), 42, "x is empty again");
    timer_remove(&a);
    cr_assert_eq(timer_next(&y, 42), 42);
    cr_assert_eq(a.list, 0);
}
