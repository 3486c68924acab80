/* wsq_stress.c - the Chase-Lev deque under contention, without Criterion, so
 * that it runs under ThreadSanitizer (Criterion's runner cannot set up its
 * shared arena under TSan). One owner pushes a million items and takes some
 * back from both ends; three thieves steal; every item must be taken exactly
 * once. Exit status 0 when so, 1 otherwise. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "wsq.h"

#define N_ITEMS   1000000
#define N_THIEVES 3
#define ITEM(i)   ((void *)(uintptr_t)((i)*4 + 8))

static struct wsq q;
static _Atomic uint8_t *taken;
static atomic_bool done;
static atomic_long total, twice;

static void take(void *x)
{
    uintptr_t i = ((uintptr_t)x - 8) / 4;
    if (i >= N_ITEMS || atomic_fetch_add(&taken[i], 1) != 0)
        atomic_fetch_add(&twice, 1);
    atomic_fetch_add(&total, 1);
}

static void *thief(void *arg)
{
    (void)arg;
    while (!atomic_load(&done) || wsq_size(&q) > 0) {
        void *x = wsq_steal(&q);
        if (x != WSQ_EMPTY && x != WSQ_ABORT)
            take(x);
    }
    return NULL;
}

int main(void)
{
    taken = calloc(N_ITEMS, 1);
    if (!taken || wsq_init(&q, 256))
        return 1;
    pthread_t t[N_THIEVES];
    for (int i = 0; i < N_THIEVES; i++)
        pthread_create(&t[i], NULL, thief, NULL);
    for (long i = 0; i < N_ITEMS;) {
        if (wsq_push(&q, ITEM(i)) == 0) {
            i++;
        } else {
            void *x = (i & 1) ? wsq_pop(&q) : wsq_steal(&q);
            if (x != WSQ_EMPTY && x != WSQ_ABORT)
                take(x);
        }
    }
    void *x;
    while ((x = wsq_pop(&q)) != WSQ_EMPTY)
        take(x);
    atomic_store(&done, true);
    for (int i = 0; i < N_THIEVES; i++)
        pthread_join(t[i], NULL);
    long missing = 0;
    for (long i = 0; i < N_ITEMS; i++)
        missing += taken[i] == 0;
    printf("wsq_stress: %ld taken, %ld twice, %ld missing\n", atomic_load(&total), atomic_load(&twice), missing);
    wsq_fini(&q);
    free((void *)taken);
    return (atomic_load(&twice) || missing || atomic_load(&total) != N_ITEMS) ? 1 : 0;
}
