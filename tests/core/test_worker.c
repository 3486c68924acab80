/* test_worker.c - core/worker.c's owner hand-out: tag owners are given at run
 * time, after the core's own connections, until SLOTS_OWNERS are out; each
 * completion of an owner's tag goes to the handler it registered. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "worker.h"

static void on_a(void *ctx, const struct io_event *ev)
{
    (void)ev;
    ++*(int *)ctx;
}

Test(worker, owners_are_handed_out_after_the_connections)
{
    static struct worker w;
    memset(&w, 0, sizeof(w));
    int count = 0;
    int first = worker_own(&w, on_a, &count);
    cr_assert_eq(first, SLOTS_OWNER_CONN + 1, "the core's connections keep owner %d", SLOTS_OWNER_CONN);
    for (int o = first + 1; o < SLOTS_OWNERS; o++)
        cr_assert_eq(worker_own(&w, on_a, &count), o);
    cr_assert_eq(worker_own(&w, on_a, &count), -ENOSPC, "all %d owners out", SLOTS_OWNERS);
    cr_assert_eq(w.owners[first].ctx, &count);
    w.owners[first].fn(w.owners[first].ctx, NULL);
    cr_assert_eq(count, 1);
}

/* An owner's tags carry it: slots_owner() reads back what slots_init() was given. */
Test(worker, a_tag_names_its_owner)
{
    static struct worker w;
    memset(&w, 0, sizeof(w));
    int o = worker_own(&w, on_a, NULL);
    struct {
        struct slot slot;
    } elems[2] = {0};
    struct slot_table t;
    slots_init(&t, elems, sizeof(elems[0]), 0, 2, (uint8_t)o);
    bool fresh;
    struct slot *s = slots_take(&t, &fresh);
    cr_assert_eq(slots_owner(slots_tag(&t, s)), (unsigned)o);
}
