/* sqlite.c - the SQLite backend of the event store (sqlite.h, store.h): a
 * bounded FIFO of events under one mutex, drained by a store thread that
 * owns the SQLite connection.
 *
 * Invariants: SQLite is called by the store thread, or, for an in-memory
 * database, by one worker at a time that found nothing queued and no one
 * writing (store_insert_now: `inline_busy` set under the mutex, so the store
 * thread waits for it and no two threads are ever inside SQLite). A worker
 * holds the mutex for a pointer into the ring and an id increment, never
 * across a syscall other than a futex wake. Events commit in id order: in
 * batches (one transaction each: whatever queued while the previous commit
 * ran), or one at a time inline, and go back to their workers only after
 * the COMMIT returned. Rejected: a connection per
 * worker on a WAL file (writers serialise on SQLite's write lock and a busy
 * worker would wait for another's commit), and shared-cache in-memory
 * databases (table locks, SQLITE_LOCKED).
 */
#define _GNU_SOURCE
#include "sqlite.h"

#include <errno.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <time.h>

#include "catalog.h"
#include "clock.h"
#include "log.h"

#define BATCH_MAX 512
#define PROBE_MS  500 /* while the store cannot commit, a probe commit this often (store_health) */

struct store {
    pthread_mutex_t mu;
    pthread_cond_t work; /* events queued, a stats or catalog request, or stop */
    pthread_cond_t done; /* stats answered, or the catalog written */
    struct store_req **ring;  /* owned, cap entries; the events are their submitters' */
    struct store_req **batch; /* owned, BATCH_MAX entries: the store thread's copy */
    unsigned cap, head, len;
    uint64_t next_id;      /* the id the next event gets */
    uint64_t dropped;      /* queue full, or a commit failed */
    bool stop;
    bool mem;          /* ":memory:": nothing to wait for on a disk, so workers may insert inline */
    bool writing;      /* the store thread is inside SQLite (a batch, stats, the catalog) */
    bool inline_busy;  /* a worker is inside SQLite (store_insert_now) */
    bool stats_wanted, stats_ready;
    int stats_err;
    uint64_t stats_rows, stats_max;
    struct catalog *catalog; /* a store_catalog() request, or NULL */
    bool catalog_ready;
    int catalog_err;
    char catalog_why[160];
    struct store_health health; /* /readyz and /metrics: down from a failed commit to the next good one */
    uint64_t checkpoint_ms;     /* the store thread's last free_wal(), monotonic ms */
    char name[200];             /* the path, for the log */
    sqlite3 *db; /* the store thread's */
    sqlite3_stmt *insert;
    pthread_t thread;
};

static int exec(sqlite3 *db, const char *sql)
{
    return sqlite3_exec(db, sql, NULL, NULL, NULL);
}

/* The -errno of SQLite's last failure on db: a full disk (SQLITE_FULL, or
 * an I/O error whose errno is ENOSPC: a WAL append on a full tmpfs fails
 * that way) and a read-only file have their own, the rest is -EIO. */
static int sql_err(sqlite3 *db)
{
    int rc = sqlite3_extended_errcode(db), sys = sqlite3_system_errno(db);
    switch (rc & 0xff) {
    case SQLITE_FULL:
        return -ENOSPC;
    case SQLITE_READONLY:
        return -EROFS;
    case SQLITE_IOERR:
    case SQLITE_CANTOPEN:
        return sys == ENOSPC || sys == EDQUOT ? -ENOSPC : sys == EROFS ? -EROFS : -EIO;
    default:
        return -EIO;
    }
}

/* A WAL that grew until the disk was full frees its space only through a
 * checkpoint that truncates it, and the commits that would have run the
 * automatic one fail. The checkpoint needs room for the pages it copies
 * into the database: note_commit() runs it on the first commit that
 * succeeds again (the room someone freed, before the WAL takes it all
 * back), and after a commit that failed for want of space at most once a
 * PROBE_MS (under load the probe does not run). The store thread's only. */
static void free_wal(struct store *s, bool now)
{
    uint64_t ms = clock_mono_ms();
    if (s->mem || (!now && ms - s->checkpoint_ms < PROBE_MS))
        return;
    s->checkpoint_ms = ms;
    exec(s->db, "PRAGMA wal_checkpoint(TRUNCATE)");
}

/* A commit's outcome: the health flips (and one log line says so) only on a
 * change, so a healthy store's commits touch nothing shared; a full disk's
 * WAL is given back (free_wal). */
static void note_commit(struct store *s, int err)
{
    bool was_down = atomic_load_explicit(&s->health.down, memory_order_relaxed) != 0;
    int last = atomic_load_explicit(&s->health.last_err, memory_order_relaxed);
    if (!err) {
        if (was_down) {
            if (last == -ENOSPC)
                free_wal(s, true);
            log_msg("event store %s: commits again; /readyz ready", s->name);
        }
        store_health_up(&s->health);
        return;
    }
    if (err == -ENOSPC)
        free_wal(s, false);
    if (!was_down || last != err)
        log_msg("event store %s: %s; /readyz 503 until a commit succeeds", s->name,
                store_fault_words(store_fault_of(err)));
    store_health_down(&s->health, err);
}

/* The store thread chooses its wait under s->mu: an untimed one while the
 * store is up. A worker that marks it down without the lock and a signal
 * (the store thread's last commit succeeded just before the worker's
 * deadline ran out) would leave it asleep with nothing queued, no probe,
 * and /readyz 503 for good, since an unready pod is sent no request. */
void store_timed_out(struct store *s)
{
    pthread_mutex_lock(&s->mu);
    store_health_down(&s->health, -ETIMEDOUT);
    pthread_cond_signal(&s->work);
    pthread_mutex_unlock(&s->mu);
}

/* While the store is down and nothing is queued: one small commit (the row
 * of schema_version rewritten), so readiness comes back by itself once the disk
 * has room again, without waiting for a request a not-ready pod is no
 * longer sent. */
static void probe(struct store *s)
{
    char sql[128];
    snprintf(sql, sizeof(sql), "UPDATE schema_version SET applied_at = %lld WHERE version = %d",
             (long long)(clock_wall_us() / 1000u), STORE_SCHEMA);
    int err = 0;
    if (exec(s->db, "BEGIN") != SQLITE_OK || exec(s->db, sql) != SQLITE_OK || exec(s->db, "COMMIT") != SQLITE_OK) {
        err = sql_err(s->db);
        exec(s->db, "ROLLBACK");
    }
    note_commit(s, err);
}

static void answer_stats(struct store *s)
{
    sqlite3_stmt *q = NULL;
    int rc = sqlite3_prepare_v2(s->db, "SELECT count(*), coalesce(max(id), 0) FROM event", -1, &q, NULL);
    uint64_t rows = 0, max = 0;
    if (rc == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW) {
        rows = (uint64_t)sqlite3_column_int64(q, 0);
        max = (uint64_t)sqlite3_column_int64(q, 1);
    } else {
        rc = SQLITE_ERROR;
    }
    sqlite3_finalize(q);
    pthread_mutex_lock(&s->mu);
    s->stats_rows = rows;
    s->stats_max = max;
    s->stats_err = rc == SQLITE_OK ? 0 : -EIO;
    s->stats_wanted = false;
    s->stats_ready = true;
    pthread_cond_broadcast(&s->done);
    pthread_mutex_unlock(&s->mu);
}

/* The catalog's tables replaced by c's products, then c refilled from them. */
static int write_catalog(sqlite3 *db, struct catalog *c, char *why, size_t whylen)
{
    sqlite3_stmt *ins_c = NULL, *ins_i = NULL, *q = NULL;
    int r = -EIO;
    bool in_tx = false;
    if (exec(db, "CREATE TABLE IF NOT EXISTS catalog (item_id TEXT PRIMARY KEY, name TEXT NOT NULL, "
                 "description TEXT NOT NULL, price TEXT NOT NULL)") != SQLITE_OK ||
        exec(db, "CREATE TABLE IF NOT EXISTS inventory (item_id TEXT PRIMARY KEY, quantity INTEGER NOT NULL)") !=
            SQLITE_OK ||
        exec(db, "BEGIN") != SQLITE_OK)
        goto fail;
    in_tx = true;
    if (exec(db, "DELETE FROM catalog") != SQLITE_OK || exec(db, "DELETE FROM inventory") != SQLITE_OK ||
        sqlite3_prepare_v2(db, "INSERT INTO catalog (item_id, name, description, price) VALUES (?, ?, ?, ?)", -1,
                           &ins_c, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, "INSERT INTO inventory (item_id, quantity) VALUES (?, ?)", -1, &ins_i, NULL) !=
            SQLITE_OK)
        goto fail;
    for (unsigned i = 0; i < c->n; i++) {
        const struct catalog_item *it = &c->items[i];
        sqlite3_bind_text(ins_c, 1, it->id, -1, SQLITE_STATIC);
        sqlite3_bind_text(ins_c, 2, it->name, -1, SQLITE_STATIC);
        sqlite3_bind_text(ins_c, 3, it->desc, -1, SQLITE_STATIC);
        sqlite3_bind_text(ins_c, 4, it->price, -1, SQLITE_STATIC);
        sqlite3_bind_text(ins_i, 1, it->id, -1, SQLITE_STATIC);
        sqlite3_bind_int64(ins_i, 2, it->quantity);
        if (sqlite3_step(ins_c) != SQLITE_DONE || sqlite3_step(ins_i) != SQLITE_DONE)
            goto fail;
        sqlite3_reset(ins_c);
        sqlite3_reset(ins_i);
    }
    if (exec(db, "COMMIT") != SQLITE_OK)
        goto fail;
    in_tx = false;
    /* read back: the values served are the database's */
    if (sqlite3_prepare_v2(db, "SELECT c.item_id, c.name, c.description, c.price, i.quantity FROM catalog c "
                               "JOIN inventory i ON i.item_id = c.item_id ORDER BY c.rowid",
                           -1, &q, NULL) != SQLITE_OK)
        goto fail;
    unsigned n = 0;
    int rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW && n < CATALOG_ITEMS_MAX) {
        struct catalog_item *it = &c->items[n++];
        snprintf(it->id, sizeof(it->id), "%s", (const char *)sqlite3_column_text(q, 0));
        snprintf(it->name, sizeof(it->name), "%s", (const char *)sqlite3_column_text(q, 1));
        snprintf(it->desc, sizeof(it->desc), "%s", (const char *)sqlite3_column_text(q, 2));
        snprintf(it->price, sizeof(it->price), "%s", (const char *)sqlite3_column_text(q, 3));
        it->quantity = sqlite3_column_int64(q, 4);
    }
    if (rc != SQLITE_DONE || n != c->n)
        snprintf(why, whylen, "catalog tables: read back %u of %u products", n, c->n);
    else
        r = 0;
    goto done;
fail:
    snprintf(why, whylen, "catalog tables: %s", sqlite3_errmsg(db));
    if (in_tx)
        exec(db, "ROLLBACK");
done:
    sqlite3_finalize(ins_c);
    sqlite3_finalize(ins_i);
    sqlite3_finalize(q);
    return r;
}

static void answer_catalog(struct store *s)
{
    char why[160] = "";
    int r = write_catalog(s->db, s->catalog, why, sizeof(why));
    pthread_mutex_lock(&s->mu);
    s->catalog_err = r;
    snprintf(s->catalog_why, sizeof(s->catalog_why), "%s", why);
    s->catalog = NULL;
    s->catalog_ready = true;
    pthread_cond_broadcast(&s->done);
    pthread_mutex_unlock(&s->mu);
}

/* Hands every event of the batch back to its worker: pushed on its inbox,
 * the worker woken once per batch. */
static void hand_back(struct store_req **batch, unsigned n)
{
    struct store_inbox *woken[8];
    unsigned nwoken = 0;
    for (unsigned i = 0; i < n; i++) {
        struct store_req *r = batch[i];
        struct store_inbox *in = r->inbox;
        treiber_push(&in->back, &r->back);
        bool seen = false;
        for (unsigned k = 0; k < nwoken && !seen; k++)
            seen = woken[k] == in;
        if (seen)
            continue;
        if (!in->io)
            continue; /* its owner polls (benchmarks, tests) */
        if (nwoken == sizeof(woken) / sizeof(woken[0])) {
            io_wake(in->io); /* more workers than slots: wake as we go */
            continue;
        }
        woken[nwoken++] = in;
    }
    for (unsigned k = 0; k < nwoken; k++)
        io_wake(woken[k]->io);
}

unsigned store_inbox_poll(struct store_inbox *in)
{
    unsigned n = 0;
    for (struct treiber_link *l = treiber_take(&in->back); l; n++) { /* in commit order */
        struct treiber_link *next = l->next;
        struct store_req *r = treiber_entry(l, struct store_req, back);
        r->done(r);
        l = next;
    }
    return n;
}

static void *store_main(void *arg)
{
    struct store *s = arg;
    struct store_req **batch = s->batch;
    pthread_setname_np(pthread_self(), "primed-store");
    for (;;) {
        pthread_mutex_lock(&s->mu);
        s->writing = false;
        bool probe_due = false;
        while ((!s->len && !s->stop && !s->stats_wanted && !s->catalog && !probe_due) || s->inline_busy) {
            if (s->inline_busy || !atomic_load_explicit(&s->health.down, memory_order_relaxed)) {
                pthread_cond_wait(&s->work, &s->mu);
                continue;
            }
            struct timespec ts = clock_mono_after(PROBE_MS); /* s->work waits on CLOCK_MONOTONIC */
            probe_due = pthread_cond_timedwait(&s->work, &s->mu, &ts) == ETIMEDOUT;
        }
        s->writing = true;
        unsigned n = s->len < BATCH_MAX ? s->len : BATCH_MAX;
        for (unsigned i = 0; i < n; i++)
            batch[i] = s->ring[(s->head + i) % s->cap];
        s->head = (s->head + n) % s->cap;
        s->len -= n;
        bool stop = s->stop && !s->len, stats = s->stats_wanted && !s->len, catalog = s->catalog != NULL;
        pthread_mutex_unlock(&s->mu);

        if (n) {
            /* one transaction: every event of it is stored, or none is */
            int err = 0;
            bool ok = exec(s->db, "BEGIN") == SQLITE_OK;
            for (unsigned i = 0; ok && i < n; i++) {
                sqlite3_bind_int64(s->insert, 1, (sqlite3_int64)batch[i]->id);
                sqlite3_bind_int64(s->insert, 2, batch[i]->time_ms);
                sqlite3_bind_text(s->insert, 3, batch[i]->pod, -1, SQLITE_STATIC);
                ok = sqlite3_step(s->insert) == SQLITE_DONE;
                sqlite3_reset(s->insert);
            }
            if (!ok || exec(s->db, "COMMIT") != SQLITE_OK) {
                err = sql_err(s->db); /* before the ROLLBACK's own code */
                exec(s->db, "ROLLBACK");
                ok = false;
            }
            note_commit(s, err);
            /* counted before the answers go back: whoever sees a failed answer sees it counted */
            if (!ok) {
                pthread_mutex_lock(&s->mu);
                s->dropped += n;
                pthread_mutex_unlock(&s->mu);
            }
            for (unsigned i = 0; i < n; i++)
                batch[i]->err = err;
            hand_back(batch, n); /* the events are their workers' again: not touched after this */
        }
        else if (probe_due)
            probe(s);
        if (stats)
            answer_stats(s);
        if (catalog)
            answer_catalog(s);
        if (stop)
            return NULL;
    }
}

/* err gets "event store PATH: WHY". Returns e. */
/* Whether the database has the table name (a read, never a write: a
 * read-only file of an existing store opens as it did). */
static bool table_exists(sqlite3 *db, const char *name)
{
    sqlite3_stmt *q = NULL;
    bool found = sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", -1, &q,
                                    NULL) == SQLITE_OK &&
                 sqlite3_bind_text(q, 1, name, -1, SQLITE_STATIC) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW;
    sqlite3_finalize(q);
    return found;
}

static int fail(char *err, size_t errlen, int e, const char *path, const char *why)
{
    snprintf(err, errlen, "event store %s: %s", path, why);
    return e;
}

/* SQLite's words for db's last failure, with the system's where it has an
 * errno ("unable to open database file" says neither that the file system is
 * read-only nor that the folder is missing). */
static int fail_db(char *err, size_t errlen, const char *path, sqlite3 *db)
{
    int sys = db ? sqlite3_system_errno(db) : 0;
    struct statvfs fs;
    /* on a read-only file system SQLite opens the file read-only and then
     * fails on its -wal or -shm file: its errno (ENOENT) would mislead */
    const char *how = statvfs(path, &fs) == 0 && (fs.f_flag & ST_RDONLY) ? "its file system is read-only"
                      : sys                                             ? strerror(sys)
                                                                        : NULL;
    char why[256];
    snprintf(why, sizeof(why), "%s%s%s%s", db ? sqlite3_errmsg(db) : "out of memory", how ? " (" : "",
             how ? how : "", how ? ")" : "");
    return fail(err, errlen, -EIO, path, why);
}

int store_open(struct store **out, const char *path, enum store_sync sync, unsigned queue_cap, unsigned busy_ms,
               char *err, size_t errlen)
{
    struct store *s = calloc(1, sizeof(*s));
    if (!s)
        return fail(err, errlen, -ENOMEM, path, "out of memory");
    s->cap = queue_cap ? queue_cap : STORE_QUEUE_DEFAULT;
    s->ring = malloc((size_t)s->cap * sizeof(*s->ring)); /* touched only as events come */
    s->batch = malloc(BATCH_MAX * sizeof(*s->batch));
    int r = -EIO;
    if (!s->ring || !s->batch) {
        r = fail(err, errlen, -ENOMEM, path, "cannot allocate the queue");
        goto out;
    }
    bool mem = strcmp(path, ":memory:") == 0;
    s->mem = mem;
    snprintf(s->name, sizeof(s->name), "%s", path);
    int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
    if (sqlite3_open_v2(path, &s->db, flags, NULL) != SQLITE_OK) {
        r = fail_db(err, errlen, path, s->db);
        goto out;
    }
    /* Another process holding the write lock for a moment (a backup, a
     * checkpoint, sqlite3 in a shell) is waited for on the store thread,
     * never on a worker, below the requests' bound, so a brief lock delays
     * commits instead of failing them ("commit failed"). */
    if (busy_ms)
        sqlite3_busy_timeout(s->db, (int)busy_ms);
    /* A file: WAL (readers never block the writer). synchronous=NORMAL: a
     * commit is in the WAL (the kernel's page cache) when COMMIT returns,
     * so it survives a killed process; fsync only at checkpoints, on the
     * store thread. FULL: the WAL is fsynced at every commit, so it also
     * survives a lost machine. */
    if ((!mem && (exec(s->db, "PRAGMA journal_mode=WAL") != SQLITE_OK ||
                  exec(s->db, sync == STORE_SYNC_FULL ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL") !=
                      SQLITE_OK)) ||
        exec(s->db, "CREATE TABLE IF NOT EXISTS event (id INTEGER PRIMARY KEY, time_ms INTEGER NOT NULL, "
                    "pod TEXT NOT NULL)") != SQLITE_OK ||
        (!table_exists(s->db, "schema_version") &&
         (exec(s->db, "CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL "
                      "DEFAULT 0)") != SQLITE_OK ||
          exec(s->db, "INSERT INTO schema_version (version) VALUES (1)") != SQLITE_OK)) ||
        sqlite3_prepare_v2(s->db, "INSERT INTO event (id, time_ms, pod) VALUES (?, ?, ?)", -1, &s->insert, NULL) !=
            SQLITE_OK) {
        r = fail_db(err, errlen, path, s->db);
        goto out;
    }
    /* the probe's one-row table in the files written before schema_version
     * (whose row the probe rewrites now); a file that cannot lose it keeps it */
    if (table_exists(s->db, "store_probe"))
        exec(s->db, "DROP TABLE store_probe");
    sqlite3_stmt *q = NULL;
    long long version = 0;
    if (sqlite3_prepare_v2(s->db, "SELECT max(version) FROM schema_version", -1, &q, NULL) == SQLITE_OK &&
        sqlite3_step(q) == SQLITE_ROW)
        version = sqlite3_column_int64(q, 0);
    sqlite3_finalize(q);
    q = NULL;
    if (version > STORE_SCHEMA) {
        char why[96];
        snprintf(why, sizeof(why), "schema_version %lld is newer than this binary's (%d)", version, STORE_SCHEMA);
        r = fail(err, errlen, -EPROTO, path, why);
        goto out;
    }
    s->next_id = 1;
    if (sqlite3_prepare_v2(s->db, "SELECT coalesce(max(id), 0) FROM event", -1, &q, NULL) == SQLITE_OK &&
        sqlite3_step(q) == SQLITE_ROW)
        s->next_id = (uint64_t)sqlite3_column_int64(q, 0) + 1; /* ids go on increasing across restarts */
    sqlite3_finalize(q);
    pthread_mutex_init(&s->mu, NULL);
    clock_cond_init(&s->work); /* the probe's timed wait */
    pthread_cond_init(&s->done, NULL);
    int e = pthread_create(&s->thread, NULL, store_main, s);
    if (e) {
        r = fail(err, errlen, -e, path, "cannot start its thread");
        goto out;
    }
    *out = s;
    return 0;
out:
    if (s->insert)
        sqlite3_finalize(s->insert);
    if (s->db)
        sqlite3_close(s->db);
    free(s->ring);
    free(s->batch);
    free(s);
    return r;
}

int store_submit(struct store *s, struct store_req *r)
{
    pthread_mutex_lock(&s->mu);
    if (s->len == s->cap) {
        s->dropped++;
        pthread_mutex_unlock(&s->mu);
        return -EAGAIN;
    }
    r->id = s->next_id++;
    r->err = 0;
    s->ring[(s->head + s->len) % s->cap] = r;
    s->len++;
    pthread_cond_signal(&s->work);
    pthread_mutex_unlock(&s->mu);
    return 0;
}

int store_insert_now(struct store *s, struct store_req *r)
{
    if (!s->mem)
        return -EBUSY;
    pthread_mutex_lock(&s->mu);
    if (s->len || s->writing || s->inline_busy) {
        pthread_mutex_unlock(&s->mu);
        return -EBUSY;
    }
    s->inline_busy = true;
    r->id = s->next_id++;
    pthread_mutex_unlock(&s->mu);

    /* one statement, its own transaction: committed when it returns */
    sqlite3_bind_int64(s->insert, 1, (sqlite3_int64)r->id);
    sqlite3_bind_int64(s->insert, 2, r->time_ms);
    sqlite3_bind_text(s->insert, 3, r->pod, -1, SQLITE_STATIC);
    bool ok = sqlite3_step(s->insert) == SQLITE_DONE;
    int err = ok ? 0 : sql_err(s->db);
    sqlite3_reset(s->insert);
    if (!ok || atomic_load_explicit(&s->health.down, memory_order_relaxed))
        note_commit(s, err);

    pthread_mutex_lock(&s->mu);
    s->inline_busy = false;
    if (!ok)
        s->dropped++;
    if (s->len || s->stop || s->stats_wanted || s->catalog)
        pthread_cond_signal(&s->work); /* the store thread waited for us */
    pthread_mutex_unlock(&s->mu);
    r->err = err;
    return r->err;
}

int store_stats(struct store *s, uint64_t *rows, uint64_t *max_id)
{
    pthread_mutex_lock(&s->mu);
    s->stats_ready = false;
    s->stats_wanted = true;
    pthread_cond_signal(&s->work);
    while (!s->stats_ready)
        pthread_cond_wait(&s->done, &s->mu);
    *rows = s->stats_rows;
    *max_id = s->stats_max;
    int r = s->stats_err;
    pthread_mutex_unlock(&s->mu);
    return r;
}

int store_catalog(struct store *s, struct catalog *c, char *err, size_t errlen)
{
    pthread_mutex_lock(&s->mu);
    s->catalog_ready = false;
    s->catalog = c;
    pthread_cond_signal(&s->work);
    while (!s->catalog_ready)
        pthread_cond_wait(&s->done, &s->mu);
    int r = s->catalog_err;
    snprintf(err, errlen, "%s", s->catalog_why);
    pthread_mutex_unlock(&s->mu);
    return r;
}

struct store_health *store_health_of(struct store *s)
{
    return &s->health;
}

uint64_t store_dropped(struct store *s)
{
    pthread_mutex_lock(&s->mu);
    uint64_t n = s->dropped;
    pthread_mutex_unlock(&s->mu);
    return n;
}

void store_close(struct store *s)
{
    if (!s)
        return;
    pthread_mutex_lock(&s->mu);
    s->stop = true;
    pthread_cond_signal(&s->work);
    pthread_mutex_unlock(&s->mu);
    pthread_join(s->thread, NULL);
    sqlite3_finalize(s->insert);
    sqlite3_close(s->db);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->work);
    pthread_cond_destroy(&s->done);
    free(s->ring);
    free(s->batch);
    free(s);
}

/* ---- the backend's ops (store.h) ----------------------------------------- */

static int ops_submit(void *conn, struct store_req *r)
{
    return store_submit(conn, r);
}

static int ops_insert_now(void *conn, struct store_req *r)
{
    return store_insert_now(conn, r);
}

static void ops_timed_out(void *conn)
{
    store_timed_out(conn);
}

const struct store_ops store_sqlite_ops = {
    .name = "SQLite",
    .submit = ops_submit,
    .insert_now = ops_insert_now,
    .poll = store_inbox_poll,
    .timed_out = ops_timed_out,
};
