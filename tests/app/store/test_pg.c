/* test_pg.c - src/app/store/pg.c: which --db values are PostgreSQL,
 * that a password never survives into what primed prints (the ready line,
 * logs, error bodies), the kind each error is answered as (store.h's
 * words), and the pipeline's events driven over a scripted libpq (the file
 * is included, h2o's way, so the test fills its table of libpq functions).
 * The store itself runs against a real PostgreSQL in tests/store/postgres. */
#include <criterion/criterion.h>
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <string.h>

#include "store/pg.c"

Test(pgstore, which_db_is_postgres)
{
    cr_assert(pgstore_is_conninfo("postgresql://u@h/db"));
    cr_assert(pgstore_is_conninfo("postgres://h:5432/db"));
    cr_assert(pgstore_is_conninfo("host=db.example dbname=events user=primed"));
    cr_assert_not(pgstore_is_conninfo(":memory:"));
    cr_assert_not(pgstore_is_conninfo("/var/lib/primed/events.db"));
    cr_assert_not(pgstore_is_conninfo("./a=b.db"), "a file path with '=' stays a file");
    cr_assert_not(pgstore_is_conninfo("events.db"));
}

Test(pgstore, redacts_every_password)
{
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"postgresql://primed:s3cret@db:5432/events", "postgresql://primed@db:5432/events"},
        {"postgresql://primed:p@ss@db/events", "postgresql://primed@db/events"},
        {"postgresql://primed@db/events?sslmode=require&password=s3cret", "postgresql://primed@db/events?sslmode=require&password=***"},
        {"postgresql://primed@db/events", "postgresql://primed@db/events"},
        {"host=db dbname=events password=s3cret user=primed", "host=db dbname=events password=*** user=primed"},
        {"host=db password = 's3 c\\'ret' user=primed", "host=db password = *** user=primed"},
        {"password=s3cret", "password=***"},
        {"host=db dbname=events", "host=db dbname=events"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char out[256];
        pgstore_redact(cases[i].in, out, sizeof(out));
        cr_assert_str_eq(out, cases[i].out, "%s", cases[i].in);
        cr_assert_null(strstr(out, "s3"), "a password survives: %s", out);
    }
}

/* Each fault a client must tell apart: by SQLSTATE, or by the message of a
 * connect that failed (no SQLSTATE there); the rest is the caller's default. */
Test(pgstore, errors_by_kind)
{
    cr_assert_eq(pgstore_error_kind("25006", "cannot execute INSERT in a read-only transaction", -EIO), -EROFS);
    cr_assert_eq(pgstore_error_kind("53100", "could not extend file: No space left on device", -EIO), -ENOSPC);
    cr_assert_eq(pgstore_error_kind("53300", NULL, -EIO), -EUSERS);
    cr_assert_eq(pgstore_error_kind("28P01", NULL, -EIO), -EACCES);
    cr_assert_eq(pgstore_error_kind("55P03", "canceling statement due to lock timeout", -EIO), -ETIMEDOUT);
    cr_assert_eq(pgstore_error_kind("57P01", "terminating connection due to administrator command", -EIO),
                 -ECONNRESET);
    cr_assert_eq(pgstore_error_kind(NULL, "connection to server at \"127.0.0.1\", port 5432 failed: FATAL:  sorry, "
                                          "too many clients already", -ENOTCONN), -EUSERS);
    cr_assert_eq(pgstore_error_kind(NULL, "FATAL:  remaining connection slots are reserved for non-replication "
                                          "superuser connections", -ENOTCONN), -EUSERS);
    cr_assert_eq(pgstore_error_kind(NULL, "FATAL:  password authentication failed for user \"primed\"", -ENOTCONN),
                 -EACCES);
    cr_assert_eq(pgstore_error_kind(NULL, "connection to server at \"127.0.0.1\", port 1 failed: Connection refused\n"
                                          "\tIs the server running on that host and accepting TCP/IP connections?",
                                    -ENOTCONN), -ECONNREFUSED);
    cr_assert_eq(pgstore_error_kind(NULL, "could not translate host name \"db.example\" to address: Name or service "
                                          "not known", -ENOTCONN), -ENXIO);
    cr_assert_eq(pgstore_error_kind("3D000", NULL, -ENOTCONN), -ENOENT);
    cr_assert_eq(pgstore_error_kind(NULL, "connection to server failed: network is down", -ENOTCONN), -ENOTCONN);
    cr_assert_eq(pgstore_error_kind("23505", "duplicate key", -EIO), -EIO);
}

/* A connect's SQLSTATE from its verbose message, in any language the server
 * speaks: the code sits between the severity and the text. */
Test(pgstore, connect_sqlstate_from_the_verbose_message)
{
    static const struct {
        const char *msg, *want;
    } cases[] = {
        {"connection to server at \"127.0.0.1\", port 5432 failed: FATAL:  3D000: database \"nope\" does not exist\n"
         "LOCATION:  InitPostgres, postinit.c:941", "3D000"},
        {"connection to server at \"127.0.0.1\", port 5432 failed: FATAL:  28P01: password authentication failed",
         "28P01"},
        {"connection to server on socket \"/s/.s.PGSQL.1\" failed: FATAL:  53300: sorry, too many clients already",
         "53300"},
        {"FATAL:  57P03: das Datenbanksystem startet", "57P03"},
        {"connection to server at \"127.0.0.1\", port 1 failed: Connection refused", NULL},
        {"FATAL:  database \"nope\" does not exist", NULL}, /* not verbose: no code */
        {"", NULL},
        {NULL, NULL},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char out[6];
        const char *got = pgstore_connect_sqlstate(cases[i].msg, out);
        if (cases[i].want)
            cr_assert(got && strcmp(got, cases[i].want) == 0, "%s: %s", cases[i].msg, got ? got : "(none)");
        else
            cr_assert_null(got, "%s: %s", cases[i].msg ? cases[i].msg : "(null)", got);
    }
}

/* Keepalives give up on a silent peer within --db-timeout, where whole
 * seconds allow it: idle, then count probes interval apart. */
Test(pgstore, tcp_bounds_within_the_timeout)
{
    static const struct {
        unsigned timeout_ms, idle_s, interval_s, count;
    } cases[] = {
        {100, 1, 1, 1}, {500, 1, 1, 1}, {2000, 1, 1, 1}, {3000, 1, 1, 2},
        {10000, 5, 1, 3}, {60000, 30, 10, 3}, {3600000, 1800, 600, 3},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct tcp_bounds b = tcp_bounds(cases[i].timeout_ms);
        cr_assert(b.idle_s == cases[i].idle_s && b.interval_s == cases[i].interval_s && b.count == cases[i].count,
                  "%u ms: idle %u, interval %u, count %u", cases[i].timeout_ms, b.idle_s, b.interval_s, b.count);
        unsigned total_ms = (b.idle_s + b.interval_s * b.count) * 1000;
        cr_assert_leq(total_ms, cases[i].timeout_ms < 2000 ? 2000 : cases[i].timeout_ms, "%u ms", cases[i].timeout_ms);
        cr_assert_eq(b.user_timeout_ms, cases[i].timeout_ms);
    }
}

/* ---- the pipeline over a scripted libpq ---------------------------------- */

/* what the scripted libpq answers, and what it saw */
static struct {
    int send_ok;      /* PQsendQueryPrepared's return: 1 queued, 0 the connection is gone */
    unsigned sends;   /* prepared INSERTs queued */
    unsigned syncs;   /* Syncs queued */
    unsigned dones;   /* store_req.done runs */
} fake;

static int fake_send_prepared(PGconn *c, const char *name, int n, const char *const *v, const int *len,
                              const int *fmt, int rfmt)
{
    (void)c, (void)name, (void)n, (void)v, (void)len, (void)fmt, (void)rfmt;
    fake.sends++;
    return fake.send_ok;
}

static int fake_sync(PGconn *c)
{
    (void)c;
    fake.syncs++;
    return 1;
}

static int fake_flush(PGconn *c)
{
    (void)c;
    return 0; /* everything written */
}

static char *fake_error(const PGconn *c)
{
    (void)c;
    return "server closed the connection unexpectedly";
}

static void fake_finish(PGconn *c)
{
    (void)c;
}

static void count_done(struct store_req *r)
{
    (void)r;
    fake.dones++;
}

/* A worker's store, connected and set up, over the scripted libpq (no socket: nothing is polled). */
static struct pgstore *ready_store(const uint64_t *now)
{
#undef PQsendQueryPrepared
#undef PQpipelineSync
#undef PQflush
#undef PQerrorMessage
#undef PQfinish
    pq.PQsendQueryPrepared = fake_send_prepared;
    pq.PQpipelineSync = fake_sync;
    pq.PQflush = fake_flush;
    pq.PQerrorMessage = fake_error;
    pq.PQfinish = fake_finish;
    memset(&fake, 0, sizeof(fake));
    fake.send_ok = 1;
    struct pgstore *p = calloc(1, sizeof(*p));
    cr_assert_not_null(p);
    p->o.now_ms = now;
    p->o.timeout_ms = 2000;
    p->conn = (PGconn *)&fake; /* never dereferenced: every call on it is scripted */
    p->fd = -1;
    p->state = PG_READY;
    p->ready = true;
    snprintf(p->name, sizeof(p->name), "scripted");
    return p;
}

/* A send that finds the connection gone inside pgstore_submit fails the
 * event, but its done runs from the next pgstore_poll: the caller
 * (events_store) sets up the event's deadline and slot only after submit
 * returns. Without a Sync sent nothing can commit: "nothing was stored". */
Test(pgstore, no_done_inside_submit)
{
    uint64_t now = 1000;
    struct pgstore *p = ready_store(&now);
    struct store_req a = {.done = count_done, .pod = "pod"}, b = a;
    fake.send_ok = 0;
    cr_assert_eq(pgstore_submit(p, &a), 0, "queued: its failure is the poll's to report");
    cr_assert_eq(fake.sends, 1, "the INSERT was tried");
    cr_assert_eq(fake.dones, 0, "no done inside submit");
    cr_assert_leq(pgstore_next_deadline(p, UINT64_MAX), now, "the failure is due at once");
    cr_assert_eq(pgstore_submit(p, &b), -ENOTCONN, "disconnected: the next submit is refused, nothing queued");
    cr_assert_eq(fake.dones, 0);
    pgstore_poll(p);
    cr_assert_eq(fake.dones, 1, "the poll runs the failed event's done, once");
    cr_assert_eq(a.err, -ENOTCONN, "no Sync went out: nothing was stored (%d)", a.err);
    cr_assert_eq(fake.syncs, 0);
    pgstore_poll(p);
    cr_assert_eq(fake.dones, 1, "never twice");
    pgstore_destroy(p);
}

/* The batch in flight has its commit back: what the Sync's result does. */
static void commit_in_flight(struct pgstore *p)
{
    p->results = p->expect;
    on_sync(p);
}

/* A batch's bound is its oldest event's deadline, from that event's submit,
 * not from the send: an event that waited for the batch before it is
 * answered --db-timeout after its submit ("not confirmed": it was sent). */
Test(pgstore, deadline_from_submit)
{
    uint64_t now = 900;
    struct pgstore *p = ready_store(&now);
    struct store_req x = {.done = count_done, .pod = "pod"}, a = x;
    cr_assert_eq(pgstore_submit(p, &x), 0);
    cr_assert_eq(p->deadline_ms, 2900, "x sent at its submit: bound 900 + 2000");
    now = 1000;
    cr_assert_eq(pgstore_submit(p, &a), 0);
    cr_assert_eq(fake.sends, 1, "a waits: x is in flight");
    now = 2500;
    commit_in_flight(p); /* x committed; a goes out now */
    cr_assert_eq(fake.dones, 1);
    cr_assert_eq(x.err, 0);
    cr_assert_eq(fake.sends, 2, "a sent after x's commit");
    cr_assert_eq(p->deadline_ms, 3000, "a's bound is its submit + 2000, not its send + 2000 (%" PRIu64 ")",
                 p->deadline_ms);
    cr_assert_eq(pgstore_next_deadline(p, UINT64_MAX), 3000);
    now = 2999;
    pgstore_poll(p);
    cr_assert_eq(fake.dones, 1, "not yet");
    now = 3000;
    pgstore_poll(p);
    cr_assert_eq(fake.dones, 2, "a answered at its deadline");
    cr_assert_eq(a.err, -ETIMEDOUT, "sent: not confirmed (%d)", a.err);
    cr_assert(store_fault_unconfirmed(store_fault_of(a.err)));
    pgstore_destroy(p);
}

/* Events that never went out are answered "nothing was stored", never "not
 * confirmed": those queued behind a batch that ran out of time, and one
 * still queued at its own deadline. */
Test(pgstore, unsent_events_say_nothing_was_stored)
{
    uint64_t now = 900;
    struct pgstore *p = ready_store(&now);
    struct store_req x = {.done = count_done, .pod = "pod"}, a = x, b = x;
    cr_assert_eq(pgstore_submit(p, &x), 0);
    now = 1000;
    cr_assert_eq(pgstore_submit(p, &a), 0);
    now = 2900;
    pgstore_poll(p); /* x's bound: the connection is dropped */
    cr_assert_eq(fake.dones, 2);
    cr_assert_eq(x.err, -ETIMEDOUT, "x was sent: not confirmed (%d)", x.err);
    cr_assert_eq(a.err, -ETIME, "a was never sent: nothing was stored (%d)", a.err);
    cr_assert_not(store_fault_unconfirmed(store_fault_of(a.err)));
    cr_assert_str_eq(store_fault_label(store_fault_of(a.err)), "timeout_not_sent");
    pgstore_destroy(p);

    /* one queued past its own deadline while the batch before it still has time (a batch
     * whose oldest event came with a later deadline than b's: b from another clock) */
    now = 900;
    p = ready_store(&now);
    x = (struct store_req){.done = count_done, .pod = "pod", .deadline_ms = 5000};
    b = (struct store_req){.done = count_done, .pod = "pod", .deadline_ms = 1500};
    cr_assert_eq(pgstore_submit(p, &x), 0);
    cr_assert_eq(pgstore_submit(p, &b), 0);
    cr_assert_eq(pgstore_next_deadline(p, UINT64_MAX), 1500, "b's deadline is the next");
    now = 1500;
    pgstore_poll(p);
    cr_assert_eq(fake.dones, 1, "b dropped from the queue, x still in flight");
    cr_assert_eq(b.err, -ETIME, "%d", b.err);
    commit_in_flight(p);
    cr_assert_eq(fake.sends, 1, "b was never sent");
    cr_assert_eq(x.err, 0);
    pgstore_destroy(p);
}
