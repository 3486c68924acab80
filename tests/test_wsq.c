/* test_wsq.c - the Chase-Lev deque: semantics, wrap-around, and a
 * multi-threaded stress (one owner, several thieves, a million items, each
 * taken exactly once). Also built under ThreadSanitizer by .ci/run. */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "wsq.h"

#define ITEM(i) ((void *)(uintptr_t)((i) * 4 + 8)) /* never NULL nor WSQ_ABORT */

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

#define N_ITEMS 1000000
#define N_THIEVES 3

static struct wsq sq;
static _Atomic uint8_t *taken;
static atomic_bool done;
static atomic_long total;

static void take(void *x)
{
    uintptr_t i = ((uintptr_t)x - 8) / 4;
    cr_assert_lt(i, N_ITEMS);
    cr_assert_eq(atomic_fetch_add(&taken[i], 1), 0, "item %lu taken twice", (unsigned long)i);
    atomic_fetch_add(&total, 1);
}

static void *thief(void *arg)
{
    (void)arg;
    while (!atomic_load(&done) || wsq_size(&sq) > 0) {
        void *x = wsq_steal(&sq);
        if (x != WSQ_EMPTY && x != WSQ_ABORT)
            take(x);
    }
    return NULL;
}

Test(wsq, stress_every_item_exactly_once, .timeout = 120)
{
    taken = calloc(N_ITEMS, 1);
    cr_assert_eq(wsq_init(&sq, 256), 0);
    pthread_t t[N_THIEVES];
    for (int i = 0; i < N_THIEVES; i++)
        pthread_create(&t[i], NULL, thief, NULL);
    for (long i = 0; i < N_ITEMS;) {
        if (wsq_push(&sq, ITEM(i)) == 0) {
            i++;
        } else {
            /* full: the owner works too, alternating ends as the worker may */
            void *x = (i & 1) ? wsq_pop(&sq) : wsq_steal(&sq);
            if (x != WSQ_EMPTY && x != WSQ_ABORT)
                take(x);
        }
    }
    void *x;
    while ((x = wsq_pop(&sq)) != WSQ_EMPTY)
        take(x);
    atomic_store(&done, true);
    for (int i = 0; i < N_THIEVES; i++)
        pthread_join(t[i], NULL);
    cr_assert_eq(atomic_load(&total), N_ITEMS);
    for (long i = 0; i < N_ITEMS; i++)
        cr_assert_eq(taken[i], 1, "item %ld", i);
    wsq_fini(&sq);
    free((void *)taken);
}
