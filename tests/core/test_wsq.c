/* test_wsq.c - the Chase-Lev deque, single-threaded: semantics, capacity,
 * wrap-around. The contended stress test is tests/wsq_stress.c. */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "wsq.h"

#define ITEM(i) ((void *)(uintptr_t)((i)*4 + 8)) /* never NULL nor WSQ_ABORT */

Test(wsq, push_pop_steal_semantics)
{
    struct wsq q;
    cr_assert_eq(wsq_init(&q, 4), 0);
    cr_assert_eq(wsq_pop(&q), WSQ_EMPTY);
    cr_assert_eq(wsq_steal(&q), WSQ_EMPTY);
    for (int i = 0; i < 4; i++)
        cr_assert_eq(wsq_push(&q, ITEM(i)), 0);
    cr_assert_eq(wsq_push(&q, ITEM(9)), -ENOSPC, "full at capacity");
    cr_assert_eq(wsq_size(&q), 4);
    cr_assert_eq(wsq_steal(&q), ITEM(0), "steal takes the oldest");
    cr_assert_eq(wsq_pop(&q), ITEM(3), "pop takes the newest");
    cr_assert_eq(wsq_steal(&q), ITEM(1));
    cr_assert_eq(wsq_pop(&q), ITEM(2));
    cr_assert_eq(wsq_pop(&q), WSQ_EMPTY);
    cr_assert_eq(wsq_size(&q), 0);
    wsq_fini(&q);
}

Test(wsq, wraps_around)
{
    struct wsq q;
    cr_assert_eq(wsq_init(&q, 8), 0);
    for (int round = 0; round < 1000; round++) {
        for (int i = 0; i < 5; i++)
            cr_assert_eq(wsq_push(&q, ITEM(round * 5 + i)), 0);
        for (int i = 0; i < 5; i++)
            cr_assert_eq(wsq_steal(&q), ITEM(round * 5 + i), "FIFO through the ring, round %d", round);
    }
    wsq_fini(&q);
}

Test(wsq, capacity_rounds_up)
{
    struct wsq q;
    cr_assert_eq(wsq_init(&q, 5), 0);
    for (int i = 0; i < 8; i++)
        cr_assert_eq(wsq_push(&q, ITEM(i)), 0);
    cr_assert_eq(wsq_push(&q, ITEM(8)), -ENOSPC);
    wsq_fini(&q);
}

/* The multi-threaded stress (one owner, three thieves, a million items, each
 * taken exactly once) is tests/wsq_stress.c: plain C, so that the same test
 * also runs under ThreadSanitizer, where Criterion's runner cannot start. */
