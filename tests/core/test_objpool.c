/* test_objpool.c - the worker's object pool: objects distinct and aligned,
 * the most recently returned lent first, growth by chunks only when empty,
 * every object reused after a return. */
#include <criterion/criterion.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "objpool.h"

Test(objpool, objects_are_distinct_aligned_and_whole)
{
    struct objpool p;
    objpool_init(&p, 13, 4); /* not a multiple of the alignment; chunks of 4 */
    cr_assert_geq(p.size, 13);
    cr_assert_eq(p.size % alignof(max_align_t), 0);
    unsigned char *o[10];
    for (int i = 0; i < 10; i++) { /* three chunks */
        o[i] = objpool_get(&p);
        cr_assert_not_null(o[i]);
        cr_assert_eq((uintptr_t)o[i] % alignof(max_align_t), 0);
        memset(o[i], 0xa0 + i, 13); /* whole: writing one never touches another */
    }
    for (int i = 0; i < 10; i++)
        for (int k = 0; k < 13; k++)
            cr_assert_eq(o[i][k], 0xa0 + i, "object %d byte %d overwritten", i, k);
    cr_assert_eq(p.out, 10);
    objpool_fini(&p);
}

Test(objpool, the_last_returned_is_lent_first_and_nothing_grows_while_warm)
{
    struct objpool p;
    objpool_init(&p, 64, 8);
    void *a = objpool_get(&p), *b = objpool_get(&p);
    void *chunks = p.chunks;
    objpool_put(&p, a);
    objpool_put(&p, b);
    cr_assert_eq(p.out, 0);
    cr_assert_eq(objpool_get(&p), b);
    cr_assert_eq(objpool_get(&p), a);
    for (int round = 0; round < 1000; round++) { /* in and out: one chunk serves */
        void *x = objpool_get(&p);
        objpool_put(&p, x);
    }
    cr_assert_eq(p.chunks, chunks, "a warm pool allocated again");
    objpool_fini(&p);
    cr_assert_null(p.chunks);
}

Test(objpool, grows_past_a_chunk_and_reuses_every_object)
{
    struct objpool p;
    objpool_init(&p, sizeof(void *), 3);
    void *o[7];
    for (int i = 0; i < 7; i++)
        o[i] = objpool_get(&p);
    for (int i = 0; i < 7; i++)
        objpool_put(&p, o[i]);
    for (int i = 0; i < 7; i++) {
        void *x = objpool_get(&p);
        bool known = false;
        for (int k = 0; k < 7; k++)
            known |= x == o[k];
        cr_assert(known, "a new object while %d were free", 7 - i);
    }
    objpool_fini(&p);
}
