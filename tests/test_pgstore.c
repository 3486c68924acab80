/* test_pgstore.c - the pure parts of src/app/pgstore.c: which --db values
 * are PostgreSQL, and that a password never survives into what primed
 * prints (the ready line, logs, error bodies). The store itself runs against
 * a real PostgreSQL in tests/store/postgres. */
#include <criterion/criterion.h>
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
