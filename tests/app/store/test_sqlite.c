/* test_sqlite.c - the SQLite backend of the event store: in memory and in a WAL
 * file; an event comes back to its submitter only after its transaction
 * committed (the row is there when done runs), ids unique and increasing
 * across threads and continued across a reopen, a full queue refused, a
 * commit that fails said so (nothing stored) and marks the store down until
 * a commit (its own probe) succeeds, clear errors; an idle
 * in-memory store takes an event on the caller's thread (store_insert_now),
 * mixed with queued ones without a duplicate or an id out of order. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sqlite.h"

/* A submitter: its inbox (polled, no io) and what came back. */
struct sub {
    struct store *s;
    struct store_inbox inbox;
    unsigned back;
    bool check_committed; /* done checks that the row is in the database */
    unsigned not_there;   /* ... and counts the events it did not find */
};

static struct sub *sub_of(struct store_req *r)
{
    return (struct sub *)((char *)r->inbox - offsetof(struct sub, inbox));
}

static void on_done(struct store_req *r)
{
    struct sub *b = sub_of(r);
    b->back++;
    if (b->check_committed && r->err == 0) {
        uint64_t rows, max;
        if (store_stats(b->s, &rows, &max) || max < r->id)
            b->not_there++;
    }
}

/* A new directory for a database file: dir (a mkdtemp template) and path filled. */
static void tmp_db(char *dir, char *path, size_t cap)
{
    cr_assert(mkdtemp(dir));
    snprintf(path, cap, "%s/events.db", dir);
}

static int submit(struct sub *b, struct store_req *r, int64_t t)
{
    r->done = on_done;
    r->inbox = &b->inbox;
    r->time_ms = t;
    r->pod = "pod-a";
    return store_submit(b->s, r);
}

/* Polls b's inbox until n events came back (or ~20 s). */
static void wait_back(struct sub *b, unsigned n)
{
    for (int i = 0; i < 200000 && b->back < n; i++)
        if (!store_inbox_poll(&b->inbox))
            usleep(100);
    cr_assert_eq(b->back, n, "%u of %u events came back", b->back, n);
}

Test(store, memory_ids_start_at_one_and_come_back_committed)
{
    struct sub b = {0};
    char err[200];
    cr_assert_eq(store_open(&b.s, ":memory:", STORE_SYNC_NORMAL, 0, 0, err, sizeof(err)), 0, "%s", err);
    b.check_committed = true;
    struct store_req r[2];
    cr_assert_eq(submit(&b, &r[0], 1000), 0);
    cr_assert_eq(submit(&b, &r[1], 1001), 0);
    cr_assert_eq(r[0].id, 1);
    cr_assert_eq(r[1].id, 2);
    wait_back(&b, 2);
    cr_assert_eq(r[0].err, 0);
    cr_assert_eq(r[1].err, 0);
    cr_assert_eq(b.not_there, 0, "done ran before its row was in the database");
    uint64_t rows, max;
    cr_assert_eq(store_stats(b.s, &rows, &max), 0);
    cr_assert_eq(rows, 2);
    cr_assert_eq(max, 2);
    store_close(b.s);
}

/* Events come back in the order they were committed, to the inbox they were
 * submitted from, each once. */
Test(store, comes_back_in_commit_order)
{
    struct sub b = {0};
    char err[200];
    cr_assert_eq(store_open(&b.s, ":memory:", STORE_SYNC_NORMAL, 0, 0, err, sizeof(err)), 0, "%s", err);
    static struct store_req r[1000];
    for (int i = 0; i < 1000; i++)
        cr_assert_eq(submit(&b, &r[i], i), 0);
    wait_back(&b, 1000);
    for (int i = 1; i < 1000; i++)
        cr_assert_eq(r[i].id, r[i - 1].id + 1);
    store_close(b.s);
}

#define THREADS 4
#define PER     5000

struct adder {
    struct sub b;
    bool now; /* try store_insert_now first */
    unsigned inline_n, failed;
    struct store_req reqs[PER];
};

static void *add_many(void *arg)
{
    struct adder *a = arg;
    unsigned queued = 0;
    for (int i = 0; i < PER; i++) {
        if (a->now) {
            struct store_req *r = &a->reqs[i];
            r->time_ms = i;
            r->pod = "pod-a";
            int e = store_insert_now(a->b.s, r);
            if (e != -EBUSY) {
                a->inline_n += e == 0;
                a->failed += e != 0; /* asserted on the main thread */
                continue;
            }
        }
        while (submit(&a->b, &a->reqs[i], i) == -EAGAIN)
            store_inbox_poll(&a->b.inbox);
        queued++;
    }
    while (a->b.back < queued)
        if (!store_inbox_poll(&a->b.inbox))
            sched_yield();
    return NULL;
}

/* Workers submit at once (now: each tries store_insert_now first): every id
 * is unique, increasing within each thread, and every row is in the
 * database. Returns how many went inline. */
static unsigned add_from_threads(bool now)
{
    struct store *s;
    char err[200];
    cr_assert_eq(store_open(&s, ":memory:", STORE_SYNC_NORMAL, 0, 0, err, sizeof(err)), 0, "%s", err);
    static struct adder a[THREADS];
    memset(a, 0, sizeof(a));
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++) {
        a[i].b.s = s;
        a[i].now = now;
        pthread_create(&t[i], NULL, add_many, &a[i]);
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    for (int i = 0; i < THREADS; i++)
        cr_assert_eq(a[i].failed, 0, "an inline insert failed");
    static unsigned char seen[THREADS * PER + 1];
    memset(seen, 0, sizeof(seen));
    for (int i = 0; i < THREADS; i++) {
        for (int k = 0; k < PER; k++) {
            uint64_t id = a[i].reqs[k].id;
            cr_assert(id >= 1 && id <= THREADS * PER, "id %lu", (unsigned long)id);
            cr_assert_not(seen[id], "id %lu twice", (unsigned long)id);
            seen[id] = 1;
            cr_assert_eq(a[i].reqs[k].err, 0);
            if (k)
                cr_assert_gt(id, a[i].reqs[k - 1].id);
        }
    }
    uint64_t rows, max;
    cr_assert_eq(store_stats(s, &rows, &max), 0);
    cr_assert_eq(rows, THREADS * PER);
    cr_assert_eq(max, THREADS * PER);
    cr_assert_eq(store_dropped(s), 0);
    store_close(s);
    unsigned n = 0;
    for (int i = 0; i < THREADS; i++)
        n += a[i].inline_n;
    return n;
}

Test(store, ids_unique_and_increasing_across_threads, .timeout = 60)
{
    add_from_threads(false);
}

/* Inline inserts and queued ones at once: the same guarantees (how many went
 * inline depends on the scheduler, and is not asserted). */
Test(store, insert_now_mixed_with_queued_across_threads, .timeout = 60)
{
    add_from_threads(true);
}

/* An idle in-memory store: the event is committed when store_insert_now
 * returns, with the next id; queued events go on from it. */
Test(store, insert_now_commits_before_it_returns)
{
    struct sub b = {0};
    char err[200];
    cr_assert_eq(store_open(&b.s, ":memory:", STORE_SYNC_NORMAL, 0, 0, err, sizeof(err)), 0, "%s", err);
    struct store_req now = {.time_ms = 5, .pod = "pod-a"}, later;
    cr_assert_eq(store_insert_now(b.s, &now), 0);
    cr_assert_eq(now.id, 1);
    uint64_t rows, max;
    cr_assert_eq(store_stats(b.s, &rows, &max), 0);
    cr_assert_eq(rows, 1);
    cr_assert_eq(max, 1);
    cr_assert_eq(submit(&b, &later, 6), 0);
    cr_assert_eq(later.id, 2);
    wait_back(&b, 1);
    /* the store thread hands the event back before it takes the mutex to mark
     * itself idle: until then insert_now says -EBUSY (the caller queues) */
    int rc;
    for (int i = 0; i < 20000 && (rc = store_insert_now(b.s, &now)) == -EBUSY; i++)
        usleep(100);
    cr_assert_eq(rc, 0, "store_insert_now: %d once the store thread is idle", rc);
    cr_assert_eq(now.id, 3);
    cr_assert_eq(store_stats(b.s, &rows, &max), 0);
    cr_assert_eq(rows, 3);
    store_close(b.s);
}

/* A file has a disk to wait for: its events always go to the store thread. */
Test(store, insert_now_leaves_a_file_to_the_store_thread)
{
    char dir[] = "/tmp/primed-store-XXXXXX", path[64], cmd[128];
    tmp_db(dir, path, sizeof(path));
    struct sub b = {0};
    char err[200];
    cr_assert_eq(store_open(&b.s, path, STORE_SYNC_NORMAL, 0, 0, err, sizeof(err)), 0, "%s", err);
    struct store_req r = {.time_ms = 5, .pod = "pod-a"};
    cr_assert_eq(store_insert_now(b.s, &r), -EBUSY);
    uint64_t rows, max;
    cr_assert_eq(store_stats(b.s, &rows, &max), 0);
    cr_assert_eq(rows, 0);
    store_close(b.s);
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

/* A file: WAL mode, and ids go on from the largest one after a reopen. */
Test(store, file_is_wal_and_ids_continue_after_reopen)
{
    char dir[] = "/tmp/primed-store-XXXXXX", path[64], cmd[128];
    tmp_db(dir, path, sizeof(path));
    struct sub b = {0};
    char err[200];
    cr_assert_eq(store_open(&b.s, path, STORE_SYNC_FULL, 0, 0, err, sizeof(err)), 0, "%s", err);
    struct store_req r[11];
    for (int i = 0; i < 10; i++)
        submit(&b, &r[i], i);
    wait_back(&b, 10);
    store_close(b.s);
    char wal[80];
    snprintf(wal, sizeof(wal), "%s-wal", path);
    b = (struct sub){0};
    cr_assert_eq(store_open(&b.s, path, STORE_SYNC_NORMAL, 0, 0, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(access(wal, F_OK), 0, "no %s: not in WAL mode", wal);
    cr_assert_eq(submit(&b, &r[10], 11), 0);
    cr_assert_eq(r[10].id, 11, "ids restart instead of going on");
    wait_back(&b, 1);
    uint64_t rows, max;
    cr_assert_eq(store_stats(b.s, &rows, &max), 0);
    cr_assert_eq(rows, 11);
    store_close(b.s);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

/* The store thread is behind by the whole queue: store_submit refuses
 * (-EAGAIN) and counts, it never waits. */
Test(store, full_queue_is_refused_not_waited_for)
{
    struct sub b = {0};
    char err[200];
    cr_assert_eq(store_open(&b.s, ":memory:", STORE_SYNC_NORMAL, 4, 0, err, sizeof(err)), 0, "%s", err);
    static struct store_req r[100000];
    unsigned refused = 0;
    for (int i = 0; i < 100000; i++)
        refused += submit(&b, &r[i], i) == -EAGAIN;
    /* the thread drains as we go, so some go through; a 4-event queue
     * cannot take 100000 submits from a tight loop without refusing some */
    cr_assert_gt(refused, 0);
    wait_back(&b, 100000 - refused);
    cr_assert_eq(store_dropped(b.s), refused);
    store_close(b.s);
}

/* Another connection holds the file's write lock: the store's transaction
 * cannot commit, and every event of it comes back with an error, none of
 * them in the database. */
Test(store, a_failed_commit_comes_back_as_an_error)
{
    char dir[] = "/tmp/primed-store-XXXXXX", path[64], cmd[128];
    tmp_db(dir, path, sizeof(path));
    struct sub b = {0};
    char err[200];
    cr_assert_eq(store_open(&b.s, path, STORE_SYNC_NORMAL, 0, 0, err, sizeof(err)), 0, "%s", err);
    sqlite3 *other;
    cr_assert_eq(sqlite3_open(path, &other), SQLITE_OK);
    cr_assert_eq(sqlite3_exec(other, "BEGIN EXCLUSIVE", NULL, NULL, NULL), SQLITE_OK);
    struct store_req r[3];
    for (int i = 0; i < 3; i++)
        cr_assert_eq(submit(&b, &r[i], i), 0);
    wait_back(&b, 3);
    for (int i = 0; i < 3; i++)
        cr_assert_eq(r[i].err, -EIO, "event %d: err %d", i, r[i].err);
    cr_assert_eq(store_dropped(b.s), 3);
    struct store_health *h = store_health_of(b.s);
    cr_assert_eq(atomic_load(&h->down), 1, "a failed commit: the store cannot commit (/readyz 503)");
    cr_assert_eq(atomic_load(&h->last_err), -EIO);
    sqlite3_exec(other, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_close(other);
    /* nothing queued: the store's own probe commits once the lock is gone */
    for (int i = 0; i < 300 && atomic_load(&h->down); i++)
        usleep(10000);
    cr_assert_eq(atomic_load(&h->down), 0, "up again after the probe's commit, with no request sent");
    uint64_t rows, max;
    cr_assert_eq(store_stats(b.s, &rows, &max), 0);
    cr_assert_eq(rows, 0, "a failed event is not in the database");
    store_close(b.s);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

/* Another connection holds the write lock for a moment (200 ms): with a busy
 * timeout (1 s, as half of --db-timeout gives) the store thread waits for it
 * and commits, every event stored, the store never down. */
Test(store, a_brief_lock_is_waited_for)
{
    char dir[] = "/tmp/primed-store-XXXXXX", path[64], cmd[128];
    tmp_db(dir, path, sizeof(path));
    struct sub b = {0};
    char err[200];
    cr_assert_eq(store_open(&b.s, path, STORE_SYNC_NORMAL, 0, 1000, err, sizeof(err)), 0, "%s", err);
    sqlite3 *other;
    cr_assert_eq(sqlite3_open(path, &other), SQLITE_OK);
    cr_assert_eq(sqlite3_exec(other, "BEGIN EXCLUSIVE", NULL, NULL, NULL), SQLITE_OK);
    struct store_req r[3];
    for (int i = 0; i < 3; i++)
        cr_assert_eq(submit(&b, &r[i], i), 0);
    usleep(200000);
    cr_assert_eq(b.back + store_inbox_poll(&b.inbox), 0, "nothing back while the lock is held");
    sqlite3_exec(other, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_close(other);
    wait_back(&b, 3);
    for (int i = 0; i < 3; i++)
        cr_assert_eq(r[i].err, 0, "event %d: err %d (a lock held for 200 ms failed the commit)", i, r[i].err);
    cr_assert_eq(store_dropped(b.s), 0);
    cr_assert_eq(atomic_load(&store_health_of(b.s)->down), 0, "never down");
    uint64_t rows, max;
    cr_assert_eq(store_stats(b.s, &rows, &max), 0);
    cr_assert_eq(rows, 3);
    store_close(b.s);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

/* A worker's wait ran out while the store thread slept with nothing queued
 * and the store up (its last commit just made it): store_timed_out marks it
 * down and wakes the thread, whose probe brings it up again with no request
 * sent. Marking it down without the wake-up left it 503 for good. */
Test(store, a_timeout_while_idle_is_probed_back_up)
{
    char dir[] = "/tmp/primed-store-XXXXXX", path[64], cmd[128];
    tmp_db(dir, path, sizeof(path));
    struct sub b = {0};
    char err[200];
    cr_assert_eq(store_open(&b.s, path, STORE_SYNC_NORMAL, 0, 0, err, sizeof(err)), 0, "%s", err);
    struct store_req r;
    cr_assert_eq(submit(&b, &r, 1), 0);
    wait_back(&b, 1);
    usleep(50000); /* the store thread asleep, no deadline: nothing queued, the store up */
    struct store_health *h = store_health_of(b.s);
    store_timed_out(b.s);
    cr_assert_eq(atomic_load(&h->down), 1, "a wait that ran out: down");
    cr_assert_eq(atomic_load(&h->last_err), -ETIMEDOUT);
    for (int i = 0; i < 300 && atomic_load(&h->down); i++) /* a probe is due within 500 ms */
        usleep(10000);
    cr_assert_eq(atomic_load(&h->down), 0, "probed back up, no request sent");
    store_close(b.s);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

Test(store, bad_path_is_a_clear_error)
{
    struct store *s;
    char err[200] = "";
    int r = store_open(&s, "/nonexistent-dir/x/events.db", STORE_SYNC_NORMAL, 0, 0, err, sizeof(err));
    cr_assert_lt(r, 0);
    cr_assert(strstr(err, "/nonexistent-dir/x/events.db"), "error does not name the path: %s", err);
}

/* A value of the one-row answer of sql on the file path (-1: no row). */
static long long one_value(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *q = NULL;
    long long v = -1;
    cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
    if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW)
        v = sqlite3_column_int64(q, 0);
    sqlite3_finalize(q);
    sqlite3_close(db);
    return v;
}

static void run_sql(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
    cr_assert_eq(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK, "%s: %s", sql, sqlite3_errmsg(db));
    sqlite3_close(db);
}

/* The schema PostgreSQL has: schema_version says STORE_SCHEMA; a file written
 * before it (a store_probe table, no schema_version) opens with its events
 * and gets it; a file of a newer schema is refused, saying so. */
Test(store, one_schema_version_old_files_open_newer_refused)
{
    char dir[] = "/tmp/primed-store-XXXXXX", path[64], cmd[128];
    tmp_db(dir, path, sizeof(path));
    run_sql(path, "CREATE TABLE event (id INTEGER PRIMARY KEY, time_ms INTEGER NOT NULL, pod TEXT NOT NULL);"
                  "CREATE TABLE store_probe (k INTEGER PRIMARY KEY, at_ms INTEGER NOT NULL);"
                  "INSERT INTO event (id, time_ms, pod) VALUES (41, 1, 'old');"
                  "INSERT INTO store_probe (k, at_ms) VALUES (1, 1)");
    struct sub b = {0};
    char err[200] = "";
    cr_assert_eq(store_open(&b.s, path, STORE_SYNC_NORMAL, 0, 0, err, sizeof(err)), 0, "%s", err);
    struct store_req r;
    cr_assert_eq(submit(&b, &r, 1), 0);
    cr_assert_eq(r.id, 42, "the old file's events go on");
    wait_back(&b, 1);
    store_close(b.s);
    cr_assert_eq(one_value(path, "SELECT max(version) FROM schema_version"), STORE_SCHEMA);
    cr_assert_eq(one_value(path, "SELECT count(*) FROM sqlite_master WHERE name = 'store_probe'"), 0,
                 "the probe's old table is gone: schema_version's row is the probe's");

    run_sql(path, "INSERT INTO schema_version (version) VALUES (2)");
    struct store *s = NULL;
    int e = store_open(&s, path, STORE_SYNC_NORMAL, 0, 0, err, sizeof(err));
    cr_assert_lt(e, 0, "a newer schema is refused");
    cr_assert(strstr(err, "schema_version 2 is newer than this binary's (1)"), "%s", err);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

/* A file that cannot be opened is refused with the system's reason beside
 * SQLite's words: "unable to open database file" alone does not say why. */
Test(store, open_failure_says_why)
{
    struct store *s = NULL;
    char err[300] = "";
    int e = store_open(&s, "/nonexistent-primed-dir/events.db", STORE_SYNC_NORMAL, 0, 0, err, sizeof(err));
    cr_assert_lt(e, 0);
    cr_assert_null(s);
    cr_assert(strstr(err, "event store /nonexistent-primed-dir/events.db: unable to open database file "
                          "(No such file or directory)"), "%s", err);
}
