/* store_bench.c - the event store's cost per insert (docs/benchmarks.md):
 * what a worker pays in store_submit() (a lock, a pointer, a wake), and how
 * fast the store thread commits and hands the events back, in memory and in
 * a WAL file (--sync normal|full); and with --opens,
 * what the store costs primed's start-up (docs/profiles.md).
 *
 *   store_bench [--events N] [--threads T] [--db PATH|:memory:] [--sync normal|full]
 *   store_bench --opens N [--db PATH|:memory:]
 *
 * Prints one line per run: db, threads, events, ns per store_submit() on the
 * adding threads (median of the threads), and the events/s from the first
 * submit to the last event back in its thread's inbox. --opens: N times what server_run()
 * does with the store before the workers start, store_open() and then
 * store_catalog() of the built-in products, each timed, then store_close();
 * prints the first time (the process's first SQLite statements: cold code
 * and caches, as at start-up) and the median of the others (warm).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <unistd.h>

#include "catalog.h"
#include "sqlite.h"

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct adder {
    struct store *s;
    unsigned n;
    uint64_t ns, refused, failed, back;
    struct store_inbox inbox; /* no io: this thread polls it */
    struct store_req *reqs;
};

static void on_back(struct store_req *r)
{
    (void)r;
}

static void *add(void *arg)
{
    struct adder *a = arg;
    uint64_t t0 = now_ns();
    for (unsigned i = 0; i < a->n; i++) {
        struct store_req *r = &a->reqs[i];
        r->done = on_back;
        r->inbox = &a->inbox;
        r->time_ms = (int64_t)i;
        r->pod = "primed-00001-deployment-5d8f7c9b4-x2x7q";
        a->refused += store_submit(a->s, r) != 0;
    }
    a->ns = now_ns() - t0;
    /* then every queued event back: committed, or failed */
    while (a->back < a->n - a->refused) {
        unsigned got = store_inbox_poll(&a->inbox);
        a->back += got;
        if (!got)
            sched_yield();
    }
    for (unsigned i = 0; i < a->n; i++)
        a->failed += a->reqs[i].err != 0;
    return NULL;
}

static int cmp(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

static long minor_faults(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_minflt;
}

/* --opens: the store's share of start-up, cold (first) and warm (median of the rest). */
static int opens(const char *db, unsigned n)
{
    static struct catalog c;
    double *open_us = calloc(n, sizeof(double)), *cat_us = calloc(n, sizeof(double));
    long faults = 0;
    if (!open_us || !cat_us) {
        fprintf(stderr, "store_bench: out of memory\n");
        return 1;
    }
    for (unsigned i = 0; i < n; i++) {
        struct store *s;
        char err[300];
        catalog_builtin(&c);
        long f0 = minor_faults();
        uint64_t t0 = now_ns();
        if (store_open(&s, db, STORE_SYNC_NORMAL, 0, 0, err, sizeof(err))) {
            fprintf(stderr, "store_bench: %s\n", err);
            return 1;
        }
        uint64_t t1 = now_ns();
        if (store_catalog(s, &c, err, sizeof(err))) {
            fprintf(stderr, "store_bench: %s\n", err);
            return 1;
        }
        uint64_t t2 = now_ns();
        if (i == 0)
            faults = minor_faults() - f0;
        store_close(s);
        open_us[i] = (double)(t1 - t0) / 1e3;
        cat_us[i] = (double)(t2 - t1) / 1e3;
    }
    double first_open = open_us[0], first_cat = cat_us[0];
    double warm_open = 0, warm_cat = 0;
    if (n > 1) {
        qsort(open_us + 1, n - 1, sizeof(double), cmp);
        qsort(cat_us + 1, n - 1, sizeof(double), cmp);
        warm_open = open_us[1 + (n - 1) / 2];
        warm_cat = cat_us[1 + (n - 1) / 2];
    }
    printf("db=%s opens=%u products=%u first_open_us=%.0f first_catalog_us=%.0f first_total_us=%.0f "
           "first_minor_faults=%ld warm_open_us=%.0f warm_catalog_us=%.0f warm_total_us=%.0f\n",
           db, n, c.n, first_open, first_cat, first_open + first_cat, faults, warm_open, warm_cat,
           warm_open + warm_cat);
    free(open_us);
    free(cat_us);
    return 0;
}

int main(int argc, char **argv)
{
    unsigned events = 200000, threads = 2, nopens = 0;
    const char *db = ":memory:";
    enum store_sync sync = STORE_SYNC_NORMAL;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--events"))
            events = (unsigned)strtoul(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--threads"))
            threads = (unsigned)strtoul(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--db"))
            db = argv[i + 1];
        else if (!strcmp(argv[i], "--opens"))
            nopens = (unsigned)strtoul(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--sync"))
            sync = !strcmp(argv[i + 1], "full") ? STORE_SYNC_FULL : STORE_SYNC_NORMAL;
    }
    if (!threads || threads > 64 || !events || nopens > 100000) {
        fprintf(stderr, "usage: store_bench [--events N] [--threads 1..64] [--db PATH|:memory:] [--sync normal|full]\n"
                        "       store_bench --opens 1..100000 [--db PATH|:memory:]\n");
        return 2;
    }
    if (nopens)
        return opens(db, nopens);
    struct store *s;
    char err[300];
    /* a queue that holds the whole run: the adders measure their own cost,
     * not the store thread's */
    if (store_open(&s, db, sync, events + 1, 0, err, sizeof(err))) {
        fprintf(stderr, "store_bench: %s\n", err);
        return 1;
    }
    struct adder a[64];
    pthread_t t[64];
    uint64_t t0 = now_ns();
    for (unsigned i = 0; i < threads; i++) {
        a[i] = (struct adder){.s = s, .n = events / threads};
        a[i].reqs = calloc(a[i].n, sizeof(*a[i].reqs));
        if (!a[i].reqs) {
            fprintf(stderr, "store_bench: out of memory\n");
            return 1;
        }
    }
    for (unsigned i = 0; i < threads; i++)
        pthread_create(&t[i], NULL, add, &a[i]);
    double per[64];
    uint64_t refused = 0, failed = 0;
    for (unsigned i = 0; i < threads; i++) {
        pthread_join(t[i], NULL);
        per[i] = (double)a[i].ns / a[i].n;
        refused += a[i].refused;
        failed += a[i].failed;
        free(a[i].reqs);
    }
    double secs = (double)(now_ns() - t0) / 1e9;
    qsort(per, threads, sizeof(per[0]), cmp);
    unsigned total = (events / threads) * threads;
    printf("db=%s sync=%s threads=%u events=%u add_ns=%.0f commit_per_s=%.0f commit_us_per_insert=%.2f "
           "refused=%lu failed=%lu\n",
           db, sync == STORE_SYNC_FULL ? "full" : "normal", threads, total, per[threads / 2], total / secs,
           secs * 1e6 / total, (unsigned long)refused, (unsigned long)failed);
    store_close(s);
    return failed ? 1 : 0;
}
