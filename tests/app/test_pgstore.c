/* test_pgstore.c - the pure parts of src/app/pgstore.c: which --db values
 * are PostgreSQL, and that a password never survives into what primed
 * prints (the ready line, logs, error bodies), and the kind each error is
 * answered as (store.h's words). The store itself runs against
 * a real PostgreSQL in tests/store/postgres. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "pgstore.h"

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
    cr_assert_eq(pgstore_error_kind("57P01", "terminating connection due to administrator command", -EIO),
                 -ECONNRESET);
    cr_assert_eq(pgstore_error_kind(NULL, "connection to server at \"127.0.0.1\", port 5432 failed: FATAL:  sorry, "
                                          "too many clients already", -ENOTCONN), -EUSERS);
    cr_assert_eq(pgstore_error_kind(NULL, "FATAL:  remaining connection slots are reserved for non-replication "
                                          "superuser connections", -ENOTCONN), -EUSERS);
    cr_assert_eq(pgstore_error_kind(NULL, "FATAL:  password authentication failed for user \"primed\"", -ENOTCONN),
                 -EACCES);
    cr_assert_eq(pgstore_error_kind(NULL, "connection refused", -ENOTCONN), -ENOTCONN);
    cr_assert_eq(pgstore_error_kind("23505", "duplicate key", -EIO), -EIO);
}
