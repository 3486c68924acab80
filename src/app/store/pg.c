/* store/pg.c - PostgreSQL as the event store (pg.h): one worker's libpq
 * connection in pipeline mode on the worker's ring.
 *
 * Invariants: libpq is only called on the owning worker's thread, with the
 * connection non-blocking: a read or write that would block returns, and
 * the worker asks io_poll() for the readiness libpq needs (reading always;
 * writing while PQflush() has bytes left). At most one pipeline (the
 * set-up, or one batch) is in flight; events that arrive meanwhile queue and
 * form the next batch (group commit). An event's done runs only after its
 * batch's COMMIT result, or with an error; never twice. Nothing waits
 * unbounded: a connect, the set-up or a batch carries a deadline
 * (--db-timeout), past which the connection is dropped; a failed
 * transaction drops it too, so that a connection is ready only once its
 * set-up (a write transaction) committed. Rejected: a store
 * thread per process with blocking libpq (one connection for all workers,
 * a cross-thread hand-off per event and a thread blocked on the network),
 * and one transaction per event (a WAL flush per request).
 */
#include "pg.h"

#include <errno.h>
#include <inttypes.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <dlfcn.h>
#include <netdb.h>
#include <sys/socket.h>

#include "log.h"
#include "slots.h"

/* libpq is loaded when --db names PostgreSQL, not linked: its closure (OpenSSL, Kerberos,
 * LDAP, GnuTLS: 21 more shared libraries) would add to every start-up of every profile, and
 * most runs never use it. pgstore_load() resolves these once, on the main thread, before
 * any worker starts; the macros below make the rest of this file read as plain libpq. */
#define PQ_FUNCS(X)                                                                                               \
    X(PQclear) X(PQconnectPoll) X(PQconnectStartParams) X(PQconninfoFree) X(PQconninfoParse) X(PQconsumeInput)       \
    X(PQenterPipelineMode) X(PQerrorMessage) X(PQfinish) X(PQflush) X(PQfreemem) X(PQgetResult) X(PQgetvalue) \
    X(PQisBusy) X(PQntuples) X(PQpipelineSync) X(PQresultErrorField) X(PQresultErrorMessage)                  \
    X(PQresultStatus) X(PQsendPrepare) X(PQsendQueryParams) X(PQsendQueryPrepared) X(PQsetErrorVerbosity)      \
    X(PQsetnonblocking) X(PQsocket) X(PQstatus)

#define X_PTR(f) __typeof__(f) *f;
static struct {
    PQ_FUNCS(X_PTR)
} pq;
#undef X_PTR

int pgstore_load(char *err, size_t errlen)
{
    static void *lib;
    if (lib)
        return 0;
    void *h = dlopen("libpq.so.5", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return log_einval(err, errlen, "PostgreSQL needs libpq.so.5 (Debian: libpq5): %s", dlerror());
#define X_LOAD(f)                                                                                    \
    if (!(*(void **)&pq.f = dlsym(h, #f))) {                                                         \
        dlclose(h);                                                                                  \
        return log_einval(err, errlen, "libpq.so.5 has no %s (libpq 14 or newer is needed)", #f);  \
    }
    PQ_FUNCS(X_LOAD)
#undef X_LOAD
    lib = h;
    return 0;
}

#define PQclear             (pq.PQclear)
#define PQconnectPoll       (pq.PQconnectPoll)
#define PQconnectStartParams (pq.PQconnectStartParams)
#define PQconninfoFree      (pq.PQconninfoFree)
#define PQconninfoParse     (pq.PQconninfoParse)
#define PQconsumeInput      (pq.PQconsumeInput)
#define PQenterPipelineMode (pq.PQenterPipelineMode)
#define PQerrorMessage      (pq.PQerrorMessage)
#define PQfinish            (pq.PQfinish)
#define PQflush             (pq.PQflush)
#define PQfreemem           (pq.PQfreemem)
#define PQgetResult         (pq.PQgetResult)
#define PQgetvalue          (pq.PQgetvalue)
#define PQisBusy            (pq.PQisBusy)
#define PQntuples           (pq.PQntuples)
#define PQpipelineSync      (pq.PQpipelineSync)
#define PQresultErrorField  (pq.PQresultErrorField)
#define PQresultErrorMessage (pq.PQresultErrorMessage)
#define PQresultStatus      (pq.PQresultStatus)
#define PQsendPrepare       (pq.PQsendPrepare)
#define PQsendQueryParams   (pq.PQsendQueryParams)
#define PQsendQueryPrepared (pq.PQsendQueryPrepared)
#define PQsetErrorVerbosity (pq.PQsetErrorVerbosity)
#define PQsetnonblocking    (pq.PQsetnonblocking)
#define PQsocket            (pq.PQsocket)
#define PQstatus            (pq.PQstatus)

#define INSERT_SQL "INSERT INTO event (time_ms, pod) VALUES ($1, $2) RETURNING id"

enum pg_state {
    PG_IDLE,       /* not connected: a retry at retry_ms */
    PG_CONNECTING, /* PQconnectPoll until OK */
    PG_SETUP,      /* schema, catalog, the prepared INSERT: one pipeline */
    PG_READY,      /* connected: a batch may be in flight */
};

struct pgstore {
    struct pgstore_opts o;
    char *conninfo; /* owned copy */
    char name[256]; /* redacted, for logs */
    PGconn *conn;
    enum pg_state state;
    bool ready;    /* PG_READY: what /readyz reads */
    int fd;        /* PQsocket of conn, or -1 */
    uint32_t gen;  /* the tag's generation: bumped when conn closes */
    bool polling;  /* a poll of fd in flight */
    unsigned poll_events;
    uint64_t retry_ms;
    unsigned backoff_ms;
    bool logged_down; /* one line per outage */
    int down_err;     /* why it is not ready (-errno, store.h's kinds): what a submit answers meanwhile */
    uint64_t deadline_ms; /* the connect, the set-up or the batch in flight must be over by then; 0: none */
    uint64_t idle_ms;     /* the last pipeline's end: an idle connection is pinged --db-timeout after it */

    /* the queue: events waiting for the next batch, oldest first */
    struct fifo queue;
    unsigned queued;
    /* events failed (err set), their done still to run: from pgstore_poll,
     * never from inside pgstore_submit (its caller has not yet set up what
     * the done undoes) */
    struct fifo dead;
    /* the batch in flight: its events in order, how many results came */
    struct store_req *batch[PGSTORE_BATCH_MAX];
    unsigned nbatch;
    bool in_flight;
    unsigned results;   /* results read of the pipeline so far (BEGIN, inserts, COMMIT) */
    unsigned expect;    /* results the pipeline gives before its Sync */
    unsigned version_at; /* the set-up's: the index of its schema_version result */
    bool failed;        /* a result of it was an error */
    int why_err;        /* ... its kind (-errno) */
    char why[160];      /* the first error, for the log */
};

/* ---- conninfo ------------------------------------------------------------ */

bool pgstore_is_conninfo(const char *db)
{
    return strncmp(db, "postgresql://", 13) == 0 || strncmp(db, "postgres://", 11) == 0 ||
           (strchr(db, '=') != NULL && db[0] != '/' && db[0] != '.');
}

/* A conninfo keyword's value, else the environment variable libpq reads
 * for it, else NULL. */
static const char *conn_word(const PQconninfoOption *o, const char *key, const char *env)
{
    for (; o && o->keyword; o++)
        if (strcmp(o->keyword, key) == 0 && o->val && o->val[0])
            return o->val;
    const char *e = getenv(env);
    return e && e[0] ? e : NULL;
}

int pgstore_host(const char *conninfo, struct url *out)
{
    PQconninfoOption *opts = PQconninfoParse(conninfo, NULL);
    if (!opts)
        return -EINVAL;
    const char *host = conn_word(opts, "host", "PGHOST");
    const char *port = conn_word(opts, "port", "PGPORT");
    unsigned char probe[sizeof(struct in6_addr)];
    /* nothing to look up: a socket directory (or libpq's default one), an
     * address, an address given (hostaddr), several hosts (libpq tries each) */
    int r = host && host[0] != '/' && host[0] != '@' && !strchr(host, ',') && strlen(host) <= URL_HOST_MAX &&
            !conn_word(opts, "hostaddr", "PGHOSTADDR") && inet_pton(AF_INET, host, probe) != 1 &&
            inet_pton(AF_INET6, host, probe) != 1 && (!port || !strchr(port, ','));
    if (r) {
        memset(out, 0, sizeof(*out));
        snprintf(out->host, sizeof(out->host), "%s", host);
        snprintf(out->authority, sizeof(out->authority), "%s", host);
        long n = port ? strtol(port, NULL, 10) : 5432;
        out->port = (uint16_t)(n > 0 && n < 65536 ? n : 5432);
        snprintf(out->path, sizeof(out->path), "/");
    }
    PQconninfoFree(opts);
    return r;
}

void pgstore_redact(const char *db, char *out, size_t cap)
{
    snprintf(out, cap, "%s", db);
    char *scheme = strstr(out, "://");
    if (scheme) {
        /* postgresql://user:password@host/...: the userinfo ends at the last
         * '@' before the path */
        char *auth = scheme + 3;
        char *end = auth + strcspn(auth, "/?");
        char *at = NULL;
        for (char *p = auth; p < end; p++)
            if (*p == '@')
                at = p;
        char *colon = at ? memchr(auth, ':', (size_t)(at - auth)) : NULL;
        if (colon)
            memmove(colon, at, strlen(at) + 1);
        /* ...?password=... */
        char *q = strchr(out, '?');
        char *pw = q ? strstr(q, "password=") : NULL;
        if (pw) {
            char *v = pw + 9, *e = v + strcspn(v, "&");
            memmove(v + 3, e, strlen(e) + 1);
            memcpy(v, "***", 3);
        }
        return;
    }
    /* keyword string: password=value or password='quoted value' */
    for (char *pw = strstr(out, "password"); pw; pw = strstr(pw + 1, "password")) {
        char *p = pw + 8;
        while (*p == ' ')
            p++;
        if (*p != '=' || (pw != out && pw[-1] != ' '))
            continue;
        p++;
        while (*p == ' ')
            p++;
        char *e = p;
        if (*e == '\'') {
            for (e++; *e && *e != '\''; e++)
                if (*e == '\\' && e[1])
                    e++;
            if (*e)
                e++;
        } else {
            e += strcspn(e, " ");
        }
        if ((size_t)(p - out) + 3 < cap) {
            memmove(p + 3, e, strlen(e) + 1);
            memcpy(p, "***", 3);
        }
    }
}

/* ---- errors by kind ------------------------------------------------------ */

/* By SQLSTATE wherever the server sent one (a connect's too: connect_sqlstate);
 * libpq's own messages (a refused connect, a name not resolved: no server
 * spoke) are primed's locale's, C, so English; the server's messages are
 * matched only as a last resort (lc_messages' default is English). */
int pgstore_error_kind(const char *sqlstate, const char *msg, int dflt)
{
    if (sqlstate) {
        if (strcmp(sqlstate, "3D000") == 0) /* invalid_catalog_name: no such database */
            return -ENOENT;
        if (strcmp(sqlstate, "25006") == 0) /* read_only_sql_transaction: also a hot standby */
            return -EROFS;
        if (strcmp(sqlstate, "53100") == 0) /* disk_full */
            return -ENOSPC;
        if (strcmp(sqlstate, "53300") == 0) /* too_many_connections */
            return -EUSERS;
        if (strcmp(sqlstate, "55P03") == 0) /* lock_not_available: lock_timeout (the set-up's) */
            return -ETIMEDOUT;
        if (strncmp(sqlstate, "28", 2) == 0) /* invalid_authorization_specification, invalid_password */
            return -EACCES;
        if (strncmp(sqlstate, "08", 2) == 0 || strncmp(sqlstate, "57P", 3) == 0) /* connection, shutdown */
            return -ECONNRESET;
    }
    if (msg) {
        if (strstr(msg, "Connection refused"))
            return -ECONNREFUSED;
        if (strstr(msg, "could not translate host name"))
            return -ENXIO;
        if (strstr(msg, "too many clients") || strstr(msg, "remaining connection slots"))
            return -EUSERS;
        if (strstr(msg, "authentication failed") || strstr(msg, "pg_hba.conf") || strstr(msg, "no password"))
            return -EACCES;
        if (strstr(msg, "read-only"))
            return -EROFS;
        if (strstr(msg, "No space left"))
            return -ENOSPC;
    }
    return dflt;
}

/* The SQLSTATE in a message libpq wrote with PQERRORS_VERBOSE ("...failed:
 * FATAL:  3D000: database ... does not exist"), as a connect's error has no
 * PGresult to ask: into out (6 bytes), or NULL when there is none. */
const char *pgstore_connect_sqlstate(const char *msg, char out[6])
{
    for (const char *s = msg ? strstr(msg, ":  ") : NULL; s; s = strstr(s + 1, ":  ")) {
        const char *c = s + 3;
        size_t n = strspn(c, "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ");
        if (n == 5 && c[5] == ':') {
            memcpy(out, c, 5);
            out[5] = '\0';
            return out;
        }
    }
    return NULL;
}

/* ---- polling ---------------------------------------------------------- */

static uint64_t tag(const struct pgstore *p)
{
    return slots_pack(0, p->gen, p->o.owner);
}

/* Asks for the readiness libpq waits on now (reading always while
 * connected; writing while output is left). */
static void arm(struct pgstore *p, unsigned events)
{
    if (p->fd < 0 || p->polling)
        return;
    if (io_poll(p->o.io, p->fd, tag(p), events) == 0) {
        p->polling = true;
        p->poll_events = events;
    }
}

static void forget_socket(struct pgstore *p)
{
    if (p->fd >= 0 && p->polling)
        io_poll_cancel(p->o.io, p->fd, tag(p));
    p->polling = false;
    p->fd = -1;
    p->gen++; /* a late completion of the old poll is stale */
}

/* ---- failing events ----------------------------------------------------- */

/* Takes the events out of the store and errors them (the batch in flight
 * with sent_err: its commit was not confirmed; the queue with err: nothing
 * of it was sent); their done runs from the next pgstore_poll (run_failed).
 * A failure can start inside pgstore_submit (a send that finds the
 * connection gone), before its caller has set up the event's deadline and
 * slot: a done run from there would answer a request twice or free what
 * the caller then uses. Rejected: failing only the submitted event with a
 * return code, since the events queued before it would still complete
 * inside a submit of another request. */
static void fail_all(struct pgstore *p, int sent_err, int err)
{
    for (unsigned i = 0; i < p->nbatch; i++) {
        p->batch[i]->err = sent_err;
        fifo_push(&p->dead, &p->batch[i]->link);
    }
    p->nbatch = 0;
    p->in_flight = false;
    for (struct fifo_link *l; (l = fifo_pop(&p->queue));) {
        fifo_entry(l, struct store_req, link)->err = err;
        fifo_push(&p->dead, l);
    }
    p->queued = 0;
}

/* Drops the queued events whose deadline passed before their turn came (the
 * oldest first: the queue is in deadline order): nothing of them was sent,
 * so "nothing was stored" (-ETIME); their done runs with the failed ones'. */
static void expire_queued(struct pgstore *p)
{
    uint64_t now = *p->o.now_ms;
    while (!fifo_empty(&p->queue)) {
        struct store_req *r = fifo_entry(p->queue.head, struct store_req, link);
        if (r->deadline_ms > now)
            break;
        fifo_pop(&p->queue);
        p->queued--;
        r->err = -ETIME;
        fifo_push(&p->dead, &r->link);
    }
}

/* Runs the done of the events failed so far; those that fail meanwhile (a
 * done may submit again) wait for the next call. */
static void run_failed(struct pgstore *p)
{
    for (struct fifo_link *l = fifo_take(&p->dead), *next; l; l = next) {
        next = l->next;
        struct store_req *r = fifo_entry(l, struct store_req, link);
        r->done(r);
    }
}

static void set_ready(struct pgstore *p, bool ready)
{
    if (p->ready != ready && p->o.up)
        atomic_fetch_add(p->o.up, ready ? 1 : -1);
    p->ready = ready;
}

/* Drops the connection (err: why, one of store.h's kinds) and retries after
 * the backoff; the batch in flight fails as not confirmed (-ETIMEDOUT when
 * its deadline passed, else -ECONNRESET), the queue with err. */
static void disconnect(struct pgstore *p, const char *why, int err)
{
    bool was_ready = p->ready;
    bool changed = p->down_err != err;
    /* why is often PQerrorMessage(): copied before PQfinish() frees it */
    char msg[200];
    snprintf(msg, sizeof(msg), "%.*s", (int)strcspn(why, "\n"), why);
    forget_socket(p);
    if (p->conn)
        PQfinish(p->conn);
    p->conn = NULL;
    p->state = PG_IDLE;
    p->deadline_ms = 0;
    p->down_err = err;
    if (p->o.health)
        atomic_store_explicit(&p->o.health->last_err, err, memory_order_relaxed);
    set_ready(p, false);
    p->backoff_ms = p->backoff_ms ? p->backoff_ms * 2 : PGSTORE_RETRY_MIN_MS;
    if (p->backoff_ms > PGSTORE_RETRY_MAX_MS)
        p->backoff_ms = PGSTORE_RETRY_MAX_MS;
    p->retry_ms = *p->o.now_ms + p->backoff_ms;
    if (was_ready || !p->logged_down || changed) {
        log_msg("worker %u: event store %s: %s (%s); /readyz 503; retrying every %u ms at most", p->o.worker,
                p->name, store_fault_words(store_fault_of(err)), msg, PGSTORE_RETRY_MAX_MS);
        p->logged_down = true;
    }
    /* in flight: the commit was not confirmed; queued: nothing was sent
     * (after a timeout: the oldest event's deadline passed, those behind it
     * waited for it in vain) */
    int queued_err = err == -ETIMEDOUT ? -ETIME : err == -ECONNRESET ? -ENOTCONN : err;
    fail_all(p, err == -ETIMEDOUT ? -ETIMEDOUT : -ECONNRESET, queued_err);
}

/* ---- pipelines ---------------------------------------------------------- */

static bool send0(struct pgstore *p, const char *sql)
{
    return PQsendQueryParams(p->conn, sql, 0, NULL, NULL, NULL, NULL, 0) == 1;
}

/* Sends what is queued and asks for what comes back. */
static void flush(struct pgstore *p)
{
    int f = PQflush(p->conn);
    if (f < 0) {
        disconnect(p, PQerrorMessage(p->conn), -ECONNRESET);
        return;
    }
    arm(p, IO_POLL_IN | (f == 1 ? IO_POLL_OUT : 0));
}

/* TCP keepalives that give up on a silent peer within --db-timeout where
 * their whole seconds allow (2 s and more): idle half of it, then probes
 * in the other half, at most 3. */
struct tcp_bounds {
    unsigned idle_s, interval_s, count, user_timeout_ms;
};

static struct tcp_bounds tcp_bounds(unsigned timeout_ms)
{
    unsigned t = timeout_ms / 1000 ? timeout_ms / 1000 : 1;
    struct tcp_bounds b = {.idle_s = t / 2 ? t / 2 : 1, .user_timeout_ms = timeout_ms ? timeout_ms : 1000};
    unsigned rest = t > b.idle_s ? t - b.idle_s : 1;
    b.interval_s = rest / 3 ? rest / 3 : 1;
    b.count = rest / b.interval_s < 3 ? rest / b.interval_s : 3;
    if (!b.count)
        b.count = 1;
    return b;
}

/* The set-up pipeline: the schema (created if missing, under an advisory
 * lock, so two processes starting on an empty database do not race), the
 * catalog's tables (when given), the session's durability, the INSERT. */
static void send_setup(struct pgstore *p)
{
    static const char *const schema[] = {
        "BEGIN",
        "SELECT pg_advisory_xact_lock(4242001)",
        "CREATE TABLE IF NOT EXISTS schema_version (version integer PRIMARY KEY, "
        "applied_at timestamptz NOT NULL DEFAULT now())",
        "CREATE TABLE IF NOT EXISTS event (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, "
        "time_ms bigint NOT NULL, pod text NOT NULL)",
        "CREATE TABLE IF NOT EXISTS catalog (item_id text PRIMARY KEY, name text NOT NULL, "
        "description text NOT NULL, price text NOT NULL)",
        "CREATE TABLE IF NOT EXISTS inventory (item_id text PRIMARY KEY, quantity bigint NOT NULL)",
        "INSERT INTO schema_version (version) VALUES (1) ON CONFLICT DO NOTHING",
        /* a write on every connect, so that the set-up's COMMIT is a real
         * one (a transaction id, WAL flushed) on each worker's connection,
         * not only the first's: the CREATEs IF NOT EXISTS and the INSERT
         * ON CONFLICT DO NOTHING of an existing schema write nothing, and
         * a transaction that wrote nothing commits on a database that
         * cannot take a write */
        "UPDATE schema_version SET applied_at = applied_at WHERE version = 1",
    };
    bool ok = PQenterPipelineMode(p->conn) == 1;
    unsigned n = 0;
    /* "relation ... already exists, skipping" is no news: only warnings reach
     * stderr. Behind a transaction pooler a session SET would stay with
     * whichever server connection ran it, so the set-up's is LOCAL and
     * synchronous_commit goes with each batch. */
    if (!p->o.pooler_tx) {
        ok = ok && send0(p, p->o.sync_off ? "SET synchronous_commit = off" : "SET synchronous_commit = on");
        ok = ok && send0(p, "SET client_min_messages = warning");
        n += 2;
        /* the server's side of the socket under the same bounds: after a
         * partition its backend (and any lock it holds: the set-up's
         * advisory lock) goes within --db-timeout, not after the kernel's
         * two hours of keepalive idle. Per session: not through a
         * transaction pooler, whose server connections are its own. */
        struct tcp_bounds b = tcp_bounds(p->o.timeout_ms);
        const char *const names[] = {"tcp_keepalives_idle", "tcp_keepalives_interval", "tcp_keepalives_count",
                                     "tcp_user_timeout"};
        const unsigned vals[] = {b.idle_s, b.interval_s, b.count, b.user_timeout_ms};
        for (size_t i = 0; ok && i < sizeof(vals) / sizeof(vals[0]); i++, n++) {
            char set[64];
            snprintf(set, sizeof(set), "SET %s = %u", names[i], vals[i]);
            ok = send0(p, set);
        }
    }
    /* The advisory lock is waited for under lock_timeout, below the set-up's
     * deadline: a set-up given up at its deadline leaves its backend waiting
     * for the lock (the server does not read a socket while it waits), so
     * every retry would add one more backend in the queue behind a session
     * that holds it (a set-up cut off by a partition, whose backend stays
     * until TCP gives up), until the server's slots are gone. */
    char lock_timeout[48];
    snprintf(lock_timeout, sizeof(lock_timeout), "SET LOCAL lock_timeout = %u",
             p->o.timeout_ms > 1 ? p->o.timeout_ms / 2 : 1);
    for (size_t i = 0; ok && i < sizeof(schema) / sizeof(schema[0]); i++, n++) {
        ok = send0(p, schema[i]);
        if (ok && i == 0) {
            ok = send0(p, lock_timeout);
            n++;
        }
        if (ok && i == 0 && p->o.pooler_tx) {
            ok = send0(p, "SET LOCAL client_min_messages = warning");
            n++;
        }
    }
    const struct catalog *c = p->o.catalog;
    for (unsigned i = 0; ok && c && i < c->n; i++) {
        const struct catalog_item *it = &c->items[i];
        char qty[24];
        snprintf(qty, sizeof(qty), "%" PRId64, it->quantity);
        const char *cv[] = {it->id, it->name, it->desc, it->price};
        const char *iv[] = {it->id, qty};
        ok = PQsendQueryParams(p->conn,
                               "INSERT INTO catalog (item_id, name, description, price) VALUES ($1, $2, $3, $4) "
                               "ON CONFLICT (item_id) DO UPDATE SET name = EXCLUDED.name, "
                               "description = EXCLUDED.description, price = EXCLUDED.price",
                               4, NULL, cv, NULL, NULL, 0) == 1 &&
             PQsendQueryParams(p->conn,
                               "INSERT INTO inventory (item_id, quantity) VALUES ($1, $2) "
                               "ON CONFLICT (item_id) DO UPDATE SET quantity = EXCLUDED.quantity",
                               2, NULL, iv, NULL, NULL, 0) == 1;
        n += 2;
    }
    ok = ok && send0(p, "COMMIT");
    n++;
    /* a schema newer than this binary's is refused, not written over */
    ok = ok && send0(p, "SELECT max(version) FROM schema_version");
    p->version_at = n++;
    if (!p->o.pooler_tx) {
        ok = ok && PQsendPrepare(p->conn, "primed_event", INSERT_SQL, 2, NULL) == 1;
        n++;
    }
    ok = ok && PQpipelineSync(p->conn) == 1;
    if (!ok) {
        disconnect(p, PQerrorMessage(p->conn), -ECONNRESET);
        return;
    }
    p->state = PG_SETUP;
    p->in_flight = true;
    p->deadline_ms = *p->o.now_ms + p->o.timeout_ms;
    p->results = 0;
    p->expect = n;
    p->failed = false;
    p->why[0] = '\0';
    flush(p);
}

/* One transaction for everything queued (up to PGSTORE_BATCH_MAX): the
 * INSERTs and a Sync, no BEGIN or COMMIT. What a pipeline sends up to a
 * Sync outside an explicit block is one implicit transaction: the Sync
 * commits it when every statement succeeded and rolls it back otherwise,
 * and an error at that commit (a deferred constraint) comes back as one
 * more result before the Sync's (libpq 15; then results != expect, the batch
 * failed). Saves the server two statements, each parsed anew, per batch:
 * at one request at a time, every request is a batch. Behind a transaction
 * pooler the block is explicit, for its SET LOCAL. */
static void send_batch(struct pgstore *p)
{
    expire_queued(p);
    if (p->state != PG_READY || p->in_flight || fifo_empty(&p->queue))
        return;
    bool tx = p->o.pooler_tx, ok = true;
    if (tx)
        ok = send0(p, "BEGIN") &&
             send0(p, p->o.sync_off ? "SET LOCAL synchronous_commit = off" : "SET LOCAL synchronous_commit = on");
    unsigned n = 0;
    while (ok && !fifo_empty(&p->queue) && n < PGSTORE_BATCH_MAX) {
        struct store_req *r = fifo_entry(fifo_pop(&p->queue), struct store_req, link);
        char t[24];
        snprintf(t, sizeof(t), "%" PRId64, r->time_ms);
        const char *v[] = {t, r->pod};
        /* a transaction pooler may run this transaction on a server
         * connection that never saw the prepare: the statement unnamed */
        ok = (p->o.pooler_tx ? PQsendQueryParams(p->conn, INSERT_SQL, 2, NULL, v, NULL, NULL, 0)
                             : PQsendQueryPrepared(p->conn, "primed_event", 2, v, NULL, NULL, 0)) == 1;
        p->queued--;
        p->batch[n++] = r;
    }
    p->nbatch = n;
    p->in_flight = true;
    ok = ok && (!tx || send0(p, "COMMIT")) && PQpipelineSync(p->conn) == 1;
    if (!ok) {
        /* no Sync went out: the server commits none of it, so the batch is
         * queued again and fails as unsent, "nothing was stored" */
        while (p->nbatch)
            fifo_push_front(&p->queue, &p->batch[--p->nbatch]->link);
        p->queued += n;
        p->in_flight = false;
        disconnect(p, PQerrorMessage(p->conn), -ECONNRESET);
        return;
    }
    /* the bound of the oldest event, from its submit (the queue is in
     * submit order): past it, its answer is due, so the transaction is
     * given up with its connection, every event of it "not confirmed" */
    p->deadline_ms = p->batch[0]->deadline_ms;
    p->results = 0;
    p->expect = n + (tx ? 3 : 0);
    p->failed = false;
    p->why[0] = '\0';
    flush(p);
}

/* One result of the pipeline in flight (not the Sync's). */
static void on_result(struct pgstore *p, PGresult *res)
{
    ExecStatusType st = PQresultStatus(res);
    unsigned i = p->results++;
    bool ok = st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK;
    if (!ok && !p->failed) {
        p->failed = true;
        const char *m = st == PGRES_PIPELINE_ABORTED ? "aborted after an earlier error" : PQresultErrorMessage(res);
        snprintf(p->why, sizeof(p->why), "%.*s", (int)strcspn(m, "\n"), m);
        p->why_err = pgstore_error_kind(PQresultErrorField(res, PG_DIAG_SQLSTATE), m, -EIO);
    }
    if (!ok)
        return;
    if (p->state == PG_SETUP) {
        /* the SELECT of the schema version is the result before the prepare */
        if (i == p->version_at && PQntuples(res) == 1) {
            long v = strtol(PQgetvalue(res, 0, 0), NULL, 10);
            if (v > STORE_SCHEMA && !p->failed) {
                p->failed = true;
                snprintf(p->why, sizeof(p->why), "schema_version %ld is newer than this binary's (%d)", v,
                         STORE_SCHEMA);
            }
        }
        return;
    }
    /* a batch: the inserts (after BEGIN and SET LOCAL behind a pooler) */
    unsigned first = p->o.pooler_tx ? 2 : 0;
    if (i >= first && i < first + p->nbatch && PQntuples(res) == 1)
        p->batch[i - first]->id = strtoull(PQgetvalue(res, 0, 0), NULL, 10);
}

/* The pipeline's Sync came back: it is over. */
static void on_sync(struct pgstore *p)
{
    p->in_flight = false;
    p->deadline_ms = 0;
    p->idle_ms = *p->o.now_ms;
    if (p->state == PG_SETUP) {
        if (p->failed || p->results != p->expect) {
            /* the schema cannot be set up (its transaction is the probe a
             * read-only or full database fails): keep retrying; say why once */
            char why[200];
            snprintf(why, sizeof(why), "set-up failed: %s", p->why[0] ? p->why : "short answer");
            disconnect(p, why, p->failed ? p->why_err : -EIO);
            return;
        }
        p->state = PG_READY;
        p->down_err = 0;
        set_ready(p, true);
        /* the backoff stays until a batch of events commits: a database
         * that takes the set-up and fails the events' commits (a trigger, a
         * constraint, a full disk where the events' table must grow) is
         * reconnected to ever more slowly, not every PGSTORE_RETRY_MIN_MS */
        if (p->logged_down)
            log_msg("worker %u: event store %s: connected", p->o.worker, p->name);
        p->logged_down = false;
        send_batch(p);
        return;
    }
    /* a batch: committed when every result was good and no error came from
     * the commit at the Sync (it would be one result more) */
    bool committed = !p->failed && p->results == p->expect;
    unsigned n = p->nbatch;
    struct store_req *done[PGSTORE_BATCH_MAX];
    memcpy(done, p->batch, n * sizeof(done[0]));
    p->nbatch = 0;
    int err = committed ? 0 : p->failed ? p->why_err : -EIO;
    for (unsigned i = 0; i < n; i++)
        done[i]->err = err;
    if (committed) {
        if (n)
            p->backoff_ms = 0; /* a commit of events: the next outage starts from the shortest wait */
        send_batch(p); /* what queued meanwhile goes out before the answers */
    } else {
        /* rolled back: nothing of it was stored. The connection is set up
         * again (its set-up is a write transaction: the probe /readyz waits
         * for), what queued fails with the same kind meanwhile. */
        char why[sizeof(p->why) + 48]; /* the words before p->why's: never cut */
        snprintf(why, sizeof(why), "a transaction of %u events failed: %s", n, p->why);
        disconnect(p, why, err);
    }
    for (unsigned i = 0; i < n; i++)
        done[i]->done(done[i]);
}

/* Reads what arrived and hands each result of the pipeline on. */
static void read_results(struct pgstore *p)
{
    if (PQconsumeInput(p->conn) != 1) {
        disconnect(p, PQerrorMessage(p->conn), -ECONNRESET);
        return;
    }
    while (p->conn && p->in_flight && !PQisBusy(p->conn)) {
        PGresult *res = PQgetResult(p->conn);
        if (!res)
            continue; /* the end of one query's results */
        ExecStatusType st = PQresultStatus(res);
        if (st == PGRES_PIPELINE_SYNC) {
            PQclear(res);
            on_sync(p);
            continue; /* a new batch may be in flight now */
        }
        on_result(p, res);
        PQclear(res);
    }
    if (p->conn && PQstatus(p->conn) == CONNECTION_BAD)
        disconnect(p, PQerrorMessage(p->conn), -ECONNRESET);
}

/* ---- connecting ----------------------------------------------------------- */

static void connect_step(struct pgstore *p)
{
    PostgresPollingStatusType s = PQconnectPoll(p->conn);
    int fd = PQsocket(p->conn);
    if (fd != p->fd) {
        forget_socket(p); /* libpq moved on to another address */
        p->fd = fd;
    }
    switch (s) {
    case PGRES_POLLING_READING:
        arm(p, IO_POLL_IN);
        break;
    case PGRES_POLLING_WRITING:
        arm(p, IO_POLL_OUT);
        break;
    case PGRES_POLLING_OK:
        PQsetErrorVerbosity(p->conn, PQERRORS_DEFAULT); /* the log's lines: the message alone */
        if (PQsetnonblocking(p->conn, 1) != 0) {
            disconnect(p, PQerrorMessage(p->conn), -ENOTCONN);
            return;
        }
        send_setup(p);
        break;
    default: {
        char why[200], state[6];
        const char *m = PQerrorMessage(p->conn);
        snprintf(why, sizeof(why), "cannot connect: %.*s", (int)strcspn(m, "\n"), m);
        if (p->o.host)
            resolver_stale(p->o.host); /* the address may have moved: look the name up again */
        disconnect(p, why, pgstore_error_kind(pgstore_connect_sqlstate(m, state), m, -ENOTCONN));
        break;
    }
    }
}

/* The connection's TCP bounds (tcp_bounds), before --db's own words (which
 * win: libpq keeps a keyword's last value, and --db is expanded last):
 * keepalives so an idle connection to a silent peer is noticed,
 * tcp_user_timeout (--db-timeout) so data the peer never acknowledges
 * fails the connection. The set-up asks the server for the same on its
 * side. The deadline of the work in flight (pgstore_poll) bounds
 * everything else, a stopped server included: its kernel still
 * acknowledges. */
static void start_connect(struct pgstore *p)
{
    struct tcp_bounds b = tcp_bounds(p->o.timeout_ms);
    char idle[16], interval[16], count[16], user_to[16];
    snprintf(idle, sizeof(idle), "%u", b.idle_s);
    snprintf(interval, sizeof(interval), "%u", b.interval_s);
    snprintf(count, sizeof(count), "%u", b.count);
    snprintf(user_to, sizeof(user_to), "%u", b.user_timeout_ms);
    /* the host's address from the resolver thread: libpq connects to
     * hostaddr and keeps the name for authentication and TLS, so the worker
     * never waits on DNS (a dead resolver would stall /healthz with it) */
    char addr[NI_MAXHOST] = "";
    if (p->o.host) {
        struct sockaddr_storage ss;
        socklen_t len;
        if (!resolver_get(p->o.host, &ss, &len) ||
            getnameinfo((struct sockaddr *)&ss, len, addr, sizeof(addr), NULL, 0, NI_NUMERICHOST) != 0) {
            char why[128], msg[256];
            resolver_why(p->o.host, why, sizeof(why));
            snprintf(msg, sizeof(msg), "cannot connect: %.100s not resolved (%.80s)", p->o.host->url->host, why);
            disconnect(p, msg, -ENXIO);
            return;
        }
    }
    const char *keys[8] = {"keepalives", "keepalives_idle", "keepalives_interval", "keepalives_count",
                           "tcp_user_timeout"};
    const char *vals[8] = {"1", idle, interval, count, user_to};
    int n = 5;
    if (addr[0]) {
        keys[n] = "hostaddr";
        vals[n++] = addr;
    }
    keys[n] = "dbname"; /* --db, expanded: its words win over the ones above */
    vals[n++] = p->conninfo;
    keys[n] = vals[n] = NULL;
    p->conn = PQconnectStartParams(keys, vals, 1);
    if (!p->conn || PQstatus(p->conn) == CONNECTION_BAD) {
        const char *m = p->conn ? PQerrorMessage(p->conn) : "out of memory";
        disconnect(p, m, pgstore_error_kind(NULL, m, -ENOTCONN));
        return;
    }
    /* a connect's error carries its SQLSTATE only in the message, and only
     * in the verbose form (pgstore_connect_sqlstate); back to the default
     * once connected */
    PQsetErrorVerbosity(p->conn, PQERRORS_VERBOSE);
    p->state = PG_CONNECTING;
    p->deadline_ms = *p->o.now_ms + p->o.timeout_ms;
    p->fd = -1;
    connect_step(p);
}

/* ---- the API ---------------------------------------------------------------- */

int pgstore_create(struct pgstore **out, const struct pgstore_opts *o, char *err, size_t errlen)
{
    int lr = pgstore_load(err, errlen);
    if (lr)
        return lr;
    char *perr = NULL;
    PQconninfoOption *opts = PQconninfoParse(o->conninfo, &perr);
    if (!opts) {
        char name[256];
        pgstore_redact(o->conninfo, name, sizeof(name));
        int r = log_einval(err, errlen, "event store %s: %.*s", name, perr ? (int)strcspn(perr, "\n") : 13,
                           perr ? perr : "out of memory");
        PQfreemem(perr);
        return r;
    }
    PQconninfoFree(opts);
    struct pgstore *p = calloc(1, sizeof(*p));
    if (!p || !(p->conninfo = strdup(o->conninfo))) {
        free(p);
        return log_einval(err, errlen, "event store: out of memory");
    }
    p->o = *o;
    p->o.conninfo = p->conninfo;
    p->fd = -1;
    p->down_err = -ENOTCONN;
    pgstore_redact(o->conninfo, p->name, sizeof(p->name));
    start_connect(p);
    *out = p;
    return 0;
}

void pgstore_destroy(struct pgstore *p)
{
    if (!p)
        return;
    forget_socket(p);
    if (p->conn)
        PQfinish(p->conn);
    p->conn = NULL;
    set_ready(p, false);
    fail_all(p, -ECANCELED, -ECANCELED);
    run_failed(p);
    free(p->conninfo);
    free(p);
}

int pgstore_submit(struct pgstore *p, struct store_req *r)
{
    if (p->state != PG_READY) {
        /* nothing of r is sent: a connection that timed out or was lost
         * leaves it unreachable, the other kinds say themselves */
        int e = p->down_err;
        return e && e != -ETIMEDOUT && e != -ECONNRESET ? e : -ENOTCONN;
    }
    if (p->queued >= PGSTORE_QUEUE_MAX)
        return -EAGAIN;
    r->id = 0;
    r->err = 0;
    if (!r->deadline_ms)
        r->deadline_ms = *p->o.now_ms + p->o.timeout_ms;
    fifo_push(&p->queue, &r->link);
    p->queued++;
    send_batch(p);
    return 0;
}

void pgstore_on_event(struct pgstore *p, const struct io_event *ev)
{
    if (ev->op != IO_OP_POLL || ev->tag != tag(p))
        return; /* a poll of a socket closed since */
    p->polling = false;
    if (ev->res < 0)
        return;
    if (p->state == PG_CONNECTING) {
        connect_step(p);
        return;
    }
    if (!p->conn)
        return;
    if (ev->res & IO_POLL_OUT) {
        flush(p);
        if (!p->conn)
            return;
    }
    if (ev->res & IO_POLL_IN)
        read_results(p);
    if (p->conn && !p->polling)
        arm(p, IO_POLL_IN); /* a closed connection is seen at once, in flight or idle */
}

/* A connection with nothing to do for --db-timeout sends a bare Sync (an
 * empty pipeline: the server answers ReadyForQuery) under the same
 * deadline, so a server that stalls while no request comes is found out,
 * and /readyz says so, without a request having to wait on it first. Its
 * Sync ends like a batch of no events. */
static void ping(struct pgstore *p)
{
    if (PQpipelineSync(p->conn) != 1) {
        disconnect(p, PQerrorMessage(p->conn), -ECONNRESET);
        return;
    }
    p->in_flight = true;
    p->nbatch = 0;
    p->results = 0;
    p->expect = 0;
    p->failed = false;
    p->why[0] = '\0';
    p->deadline_ms = *p->o.now_ms + p->o.timeout_ms;
    flush(p);
}

void pgstore_poll(struct pgstore *p)
{
    uint64_t now = *p->o.now_ms;
    if (p->state == PG_IDLE && now >= p->retry_ms) {
        start_connect(p);
    } else if (p->deadline_ms && now >= p->deadline_ms) {
        char why[80];
        snprintf(why, sizeof(why), "no answer within %u ms (--db-timeout)", p->o.timeout_ms);
        disconnect(p, why, -ETIMEDOUT);
    } else if (p->state == PG_READY && !p->in_flight && now >= p->idle_ms + p->o.timeout_ms) {
        ping(p);
    }
    expire_queued(p);
    run_failed(p);
}

uint64_t pgstore_next_deadline(const struct pgstore *p, uint64_t none)
{
    if (!fifo_empty(&p->dead))
        return *p->o.now_ms; /* their done is due now */
    if (p->state == PG_IDLE)
        return p->retry_ms < none ? p->retry_ms : none;
    uint64_t t = p->deadline_ms;
    if (p->state == PG_READY && !p->in_flight)
        t = p->idle_ms + p->o.timeout_ms; /* the next ping */
    if (!fifo_empty(&p->queue)) {
        uint64_t q = fifo_entry(p->queue.head, struct store_req, link)->deadline_ms;
        if (!t || q < t)
            t = q;
    }
    return t && t < none ? t : none;
}

/* ---- the backend's ops (store.h) ----------------------------------------- */

static int ops_submit(void *conn, struct store_req *r)
{
    return pgstore_submit(conn, r);
}

/* done runs on the worker, from pgstore_poll(): no inbox to poll; each event's
 * deadline is the connection's own */
const struct store_ops store_pg_ops = {
    .name = "PostgreSQL",
    .submit = ops_submit,
};
