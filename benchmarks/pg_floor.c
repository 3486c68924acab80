/* pg_floor.c - the least an HTTP answer over a committed INSERT can cost.
 *
 * The floor that primed's /callme/ping on PostgreSQL is compared with
 * (benchmarks/store.py pg, at -c1): one thread, blocking sockets, no event
 * loop, no parser, no timers, no metrics. One connection at a time; every
 * "\r\n\r\n" received is one request, answered 200 once the INSERT ...
 * RETURNING id that primed and pgbench run (prepared, one libpq connection,
 * the synchronous_commit PGOPTIONS names) has come back, with the id in the
 * body. Its sleeps per request are a request's least: one waiting for the
 * client, one waiting for the database. Never a server: only what the kernel,
 * libpq and the database cost per answered event.
 *
 *   pg_floor --db URL [--port P]
 *   P = 0 (default): an ephemeral port; "pg_floor: port=N" on stderr once listening
 * Listens on 127.0.0.1; SIGTERM or SIGINT: exit 0; bad arguments or no
 * database: a message and exit 2.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <libpq-fe.h>

/* primed's own statement (src/app/store/pg.c) */
#define INSERT_SQL "INSERT INTO event (time_ms, pod) VALUES ($1, $2) RETURNING id"

static int listen_on(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    socklen_t len = sizeof(a);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
        bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 64) < 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) < 0) {
        perror("pg_floor: listen");
        exit(2);
    }
    fprintf(stderr, "pg_floor: port=%d\n", ntohs(a.sin_port));
    return fd;
}

static PGconn *db_open(const char *url)
{
    PGconn *c = PQconnectdb(url);
    if (PQstatus(c) != CONNECTION_OK) {
        fprintf(stderr, "pg_floor: %s: %s", url, PQerrorMessage(c));
        exit(2);
    }
    PGresult *r = PQexec(c, "CREATE TABLE IF NOT EXISTS event (id bigserial PRIMARY KEY, "
                            "time_ms bigint NOT NULL, pod text NOT NULL)");
    PQclear(r);
    r = PQprepare(c, "floor_event", INSERT_SQL, 2, NULL);
    if (PQresultStatus(r) != PGRES_COMMAND_OK) {
        fprintf(stderr, "pg_floor: prepare: %s", PQerrorMessage(c));
        exit(2);
    }
    PQclear(r);
    return c;
}

/* One request: the INSERT committed, then its answer. 0, or -1 when the
 * client is gone; a failed INSERT is a 503 and the run goes on. */
static int answer(int fd, PGconn *db, long long n)
{
    char t[24], out[256];
    snprintf(t, sizeof(t), "%lld", n);
    const char *v[] = {t, "bench-pod"};
    PGresult *r = PQexecPrepared(db, "floor_event", 2, v, NULL, NULL, 0);
    int len;
    if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1) {
        char body[40];
        int blen = snprintf(body, sizeof(body), "Hello_%s", PQgetvalue(r, 0, 0));
        len = snprintf(out, sizeof(out), "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                                         "Content-Length: %d\r\n\r\n%s", blen, body);
    } else {
        fprintf(stderr, "pg_floor: insert: %s", PQresultErrorMessage(r));
        len = snprintf(out, sizeof(out), "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n");
    }
    PQclear(r);
    return write(fd, out, len) == len ? 0 : -1;
}

static void serve(int c, PGconn *db)
{
    static long long n;
    char buf[8192];
    unsigned match = 0; /* bytes of "\r\n\r\n" matched so far */
    int one = 1;
    setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    for (;;) {
        ssize_t got = read(c, buf, sizeof(buf));
        if (got <= 0)
            return;
        for (ssize_t i = 0; i < got; i++) {
            match = buf[i] == "\r\n\r\n"[match] ? match + 1 : buf[i] == '\r';
            if (match == 4) {
                match = 0;
                if (answer(c, db, ++n) < 0)
                    return;
            }
        }
    }
}

static void on_stop(int sig)
{
    (void)sig;
    _exit(0);
}

int main(int argc, char **argv)
{
    const char *url = NULL;
    int port = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--db") && i + 1 < argc)
            url = argv[++i];
        else if (!strcmp(argv[i], "--port") && i + 1 < argc)
            port = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: pg_floor --db URL [--port P]\n");
            return 2;
        }
    }
    if (!url) {
        fprintf(stderr, "usage: pg_floor --db URL [--port P]\n");
        return 2;
    }
    signal(SIGTERM, on_stop);
    signal(SIGINT, on_stop);
    signal(SIGPIPE, SIG_IGN);
    PGconn *db = db_open(url);
    int l = listen_on(port);
    for (;;) {
        int c = accept(l, NULL, NULL);
        if (c < 0)
            continue;
        serve(c, db);
        close(c);
    }
}
