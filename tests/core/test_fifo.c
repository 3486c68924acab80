/* test_fifo.c - core/fifo.h: oldest first; a node put in front goes next; a
 * node removed from the head, the middle or the tail leaves the rest in
 * order and the tail right for the next append; taken whole, the queue is
 * empty and the nodes come oldest first. */
#include <criterion/criterion.h>

#include "fifo.h"

struct item {
    unsigned seq;
    struct fifo_link link;
};

/* The seqs left in q, oldest first, popped (n of them expected). */
static void expect(struct fifo *q, const unsigned *want, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        struct fifo_link *l = fifo_pop(q);
        cr_assert_not_null(l, "node %u of %u", i, n);
        cr_assert_eq(fifo_entry(l, struct item, link)->seq, want[i], "node %u", i);
        cr_assert_null(l->next, "a popped node is unlinked");
    }
    cr_assert(fifo_empty(q));
    cr_assert_null(fifo_pop(q));
    cr_assert_null(q->tail, "empty: no tail left behind");
}

Test(fifo, pops_oldest_first)
{
    struct fifo q = {0};
    struct item it[4] = {{.seq = 0}, {.seq = 1}, {.seq = 2}, {.seq = 3}};
    cr_assert(fifo_empty(&q));
    cr_assert_null(fifo_pop(&q));
    for (int i = 0; i < 3; i++)
        fifo_push(&q, &it[i].link);
    cr_assert_not(fifo_empty(&q));
    cr_assert_eq(fifo_entry(fifo_pop(&q), struct item, link)->seq, 0);
    fifo_push(&q, &it[3].link); /* appended after the pop: still behind 1 and 2 */
    expect(&q, (unsigned[]){1, 2, 3}, 3);
    fifo_push(&q, &it[0].link); /* the queue emptied by pops takes a node again */
    expect(&q, (unsigned[]){0}, 1);
}

Test(fifo, push_front_goes_next)
{
    struct fifo q = {0};
    struct item it[3] = {{.seq = 0}, {.seq = 1}, {.seq = 2}};
    fifo_push_front(&q, &it[0].link); /* on an empty queue: head and tail */
    fifo_push(&q, &it[1].link);
    fifo_push_front(&q, &it[2].link);
    expect(&q, (unsigned[]){2, 0, 1}, 3);
}

Test(fifo, removes_from_anywhere)
{
    static const struct {
        unsigned gone;
        unsigned left[3];
    } cases[] = {{0, {1, 2, 3}}, {1, {0, 2, 3}}, {2, {0, 1, 3}}};
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        struct fifo q = {0};
        struct item it[4] = {{.seq = 0}, {.seq = 1}, {.seq = 2}, {.seq = 3}};
        for (int i = 0; i < 3; i++)
            fifo_push(&q, &it[i].link);
        cr_assert(fifo_remove(&q, &it[cases[c].gone].link), "case %zu", c);
        cr_assert_null(it[cases[c].gone].link.next);
        cr_assert_not(fifo_remove(&q, &it[cases[c].gone].link), "gone already: not found");
        cr_assert_not(fifo_remove(&q, &it[3].link), "never queued: not found");
        fifo_push(&q, &it[3].link); /* the tail must be right after a removal at the end */
        expect(&q, cases[c].left, 3);
    }
    struct fifo q = {0};
    struct item one = {.seq = 9};
    fifo_push(&q, &one.link);
    cr_assert(fifo_remove(&q, &one.link));
    cr_assert(fifo_empty(&q));
    cr_assert_null(q.tail, "the only node removed: no tail");
}

Test(fifo, take_empties_oldest_first)
{
    struct fifo q = {0};
    struct item it[3] = {{.seq = 0}, {.seq = 1}, {.seq = 2}};
    cr_assert_null(fifo_take(&q));
    for (int i = 0; i < 3; i++)
        fifo_push(&q, &it[i].link);
    struct fifo_link *l = fifo_take(&q);
    cr_assert(fifo_empty(&q));
    cr_assert_null(q.tail);
    for (unsigned i = 0; i < 3; i++) {
        struct fifo_link *next = l->next;
        cr_assert_eq(fifo_entry(l, struct item, link)->seq, i);
        fifo_push(&q, l); /* re-queued while the rest is walked: the walk goes on */
        l = next;
    }
    cr_assert_null(l);
    expect(&q, (unsigned[]){0, 1, 2}, 3);
}
