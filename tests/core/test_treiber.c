/* test_treiber.c - core/treiber.h: oldest first on one thread; four
 * producers against one owner lose nothing and keep each producer's order. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdint.h>

#include "treiber.h"

struct item {
    unsigned producer, seq;
    struct treiber_link link;
};

Test(treiber, takes_oldest_first)
{
    struct treiber s = {0};
    struct item it[3] = {{.seq = 0}, {.seq = 1}, {.seq = 2}};
    cr_assert_not(treiber_nonempty(&s, memory_order_relaxed));
    cr_assert_null(treiber_take(&s));
    for (int i = 0; i < 3; i++)
        treiber_push(&s, &it[i].link);
    cr_assert(treiber_nonempty(&s, memory_order_relaxed));
    struct treiber_link *l = treiber_take(&s);
    for (unsigned i = 0; i < 3; i++, l = l->next)
        cr_assert_eq(treiber_entry(l, struct item, link)->seq, i);
    cr_assert_null(l);
    cr_assert_not(treiber_nonempty(&s, memory_order_relaxed), "taken whole");
}

#define PRODUCERS 4
#define PER       20000

static struct treiber shared;
static struct item items[PRODUCERS][PER];

static void *produce(void *arg)
{
    unsigned p = (unsigned)(uintptr_t)arg;
    for (unsigned i = 0; i < PER; i++) {
        items[p][i] = (struct item){.producer = p, .seq = i};
        treiber_push(&shared, &items[p][i].link);
    }
    return NULL;
}

Test(treiber, many_producers_one_owner)
{
    pthread_t th[PRODUCERS];
    for (unsigned p = 0; p < PRODUCERS; p++)
        cr_assert_eq(pthread_create(&th[p], NULL, produce, (void *)(uintptr_t)p), 0);
    unsigned next[PRODUCERS] = {0}, got = 0;
    while (got < PRODUCERS * PER) {
        for (struct treiber_link *l = treiber_take(&shared); l; l = l->next) {
            struct item *it = treiber_entry(l, struct item, link);
            cr_assert_eq(it->seq, next[it->producer], "producer %u: %u after %u", it->producer, it->seq,
                         next[it->producer]);
            next[it->producer]++;
            got++;
        }
    }
    for (unsigned p = 0; p < PRODUCERS; p++)
        pthread_join(th[p], NULL);
    cr_assert_null(treiber_take(&shared));
}
