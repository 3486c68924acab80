/* test_store.c - the event store over a real SQLite: in memory and in a WAL
 * file, ids unique and increasing across threads, continued across a reopen,
 * a full queue refused, clear errors. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store.h"

Test(store, memory_ids_start_at_one_and_rows_land)
{
    struct store *s;
    char err[200];
    cr_assert_eq(store_open(&s, ":memory:", 0, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(store_add(s, 1000, "pod-a"), 1);
    cr_assert_eq(store_add(s, 1001, "pod-a"), 2);
    cr_assert_eq(store_sync(s, 5000), 0);
    uint64_t rows, max;
    cr_assert_eq(store_stats(s, &rows, &max), 0);
    cr_assert_eq(rows, 2);
    cr_assert_eq(max, 2);
    store_close(s);
}

#define THREADS 4
#define PER     5000

struct adder {
    struct store *s;
    uint64_t ids[PER];
};

static void *add_many(void *arg)
{
    struct adder *a = arg;
    for (int i = 0; i < PER; i++)
        a->ids[i] = store_add(a->s, i, "pod-x");
    return NULL;
}

/* Workers add at once: every id is unique, increasing within each thread,
 * and every row is in the database. */
Test(store, ids_unique_and_increasing_across_threads, .timeout = 60)
{
    struct store *s;
    char err[200];
    cr_assert_eq(store_open(&s, ":memory:", 0, err, sizeof(err)), 0, "%s", err);
    static struct adder a[THREADS];
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++) {
        a[i].s = s;
        pthread_create(&t[i], NULL, add_many, &a[i]);
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    static unsigned char seen[THREADS * PER + 1];
    for (int i = 0; i < THREADS; i++) {
        for (int k = 0; k < PER; k++) {
            uint64_t id = a[i].ids[k];
            cr_assert(id >= 1 && id <= THREADS * PER, "id %lu", (unsigned long)id);
            cr_assert_not(seen[id], "id %lu twice", (unsigned long)id);
            seen[id] = 1;
            if (k)
                cr_assert_gt(id, a[i].ids[k - 1]);
        }
    }
    cr_assert_eq(store_sync(s, 20000), 0);
    uint64_t rows, max;
    cr_assert_eq(store_stats(s, &rows, &max), 0);
    cr_assert_eq(rows, THREADS * PER);
    cr_assert_eq(max, THREADS * PER);
    cr_assert_eq(store_dropped(s), 0);
    store_close(s);
}

/* A file: WAL mode, and ids go on from the largest one after a reopen. */
Test(store, file_is_wal_and_ids_continue_after_reopen)
{
    char dir[] = "/tmp/primed-store-XXXXXX", path[64], cmd[128];
    cr_assert(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/events.db", dir);
    struct store *s;
    char err[200];
    cr_assert_eq(store_open(&s, path, 0, err, sizeof(err)), 0, "%s", err);
    for (int i = 0; i < 10; i++)
        store_add(s, i, "pod-f");
    store_close(s); /* writes what is queued */
    char wal[80];
    snprintf(wal, sizeof(wal), "%s-wal", path);
    cr_assert_eq(store_open(&s, path, 0, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(access(wal, F_OK), 0, "no %s: not in WAL mode", wal);
    cr_assert_eq(store_add(s, 11, "pod-f"), 11, "ids restart instead of going on");
    cr_assert_eq(store_sync(s, 5000), 0);
    uint64_t rows, max;
    cr_assert_eq(store_stats(s, &rows, &max), 0);
    cr_assert_eq(rows, 11);
    store_close(s);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

/* The store thread is behind by the whole queue: store_add refuses (0) and
 * counts, it never waits. */
Test(store, full_queue_is_refused_not_waited_for)
{
    struct store *s;
    char err[200];
    cr_assert_eq(store_open(&s, ":memory:", 4, err, sizeof(err)), 0, "%s", err);
    unsigned refused = 0;
    for (int i = 0; i < 100000; i++)
        refused += store_add(s, i, "p") == 0;
    /* the thread drains as we go, so some go through; a 4-event queue
     * cannot take 100000 adds from a tight loop without refusing some */
    cr_assert_gt(refused, 0);
    cr_assert_eq(store_sync(s, 10000), 0);
    cr_assert_eq(store_dropped(s), refused);
    store_close(s);
}

Test(store, bad_path_is_a_clear_error)
{
    struct store *s;
    char err[200] = "";
    int r = store_open(&s, "/nonexistent-dir/x/events.db", 0, err, sizeof(err));
    cr_assert_lt(r, 0);
    cr_assert(strstr(err, "/nonexistent-dir/x/events.db"), "error does not name the path: %s", err);
}
