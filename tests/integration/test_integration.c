/* test_integration.c - the built binary over raw sockets on 127.0.0.1.
 *
 * Each test starts its own server (--threads 2 --bits 64 unless it needs
 * otherwise) on an ephemeral port and stops it with SIGTERM, asserting a clean
 * exit. Dispatch mode and I/O backend come from the environment, so the meson
 * test setups (steal, inline, epoll) run this whole file under each. Every
 * wait is bounded; every test has a .timeout.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "itest.h"

/* ---- keep-alive and pipelining ------------------------------------------- */

Test(integration, keepalive_100_requests, .fini = fini, .timeout = 60)
{
    up(NULL);
    struct harness_conn c;
    conn(&c);
    unsigned long prev = 0;
    for (int i = 0; i < 100; i++) {
        struct harness_resp r;
        send_str(&c, "GET /example HTTP/1.1\r\nHost: t\r\n\r\n");
        read_resp(&c, &r, false);
        unsigned long n = hello_n(&r);
        cr_assert_gt(n, prev, "request %d: Hello_%lu after Hello_%lu", i, n, prev);
        cr_assert_str_eq(header(&r, "Connection"), "keep-alive", "request %d", i);
        prev = n;
        harness_resp_free(&r);
    }
    harness_close(&c);
    down();
}

Test(integration, pipelined_50_in_one_write, .fini = fini, .timeout = 60)
{
    up(NULL);
    static char req[50 * 64];
    size_t len = 0;
    for (int i = 0; i < 50; i++)
        len += (size_t)snprintf(req + len, sizeof(req) - len, "GET /example?bits=128 HTTP/1.1\r\nHost: t\r\n\r\n");
    struct harness_conn c;
    conn(&c);
    cr_assert_eq(harness_send(&c, req, len, T_IO), 0);
    static struct harness_resp r[50];
    int got = harness_read_responses(&c, r, 50, 20000);
    cr_assert_eq(got, 50, "only %d of 50 pipelined responses", got);
    unsigned long prev = 0;
    for (int i = 0; i < 50; i++) {
        unsigned long n = hello_n(&r[i]);
        cr_assert_gt(n, prev, "response %d: Hello_%lu after Hello_%lu", i, n, prev);
        prev = n;
        harness_resp_free(&r[i]);
    }
    harness_close(&c);
    down();
}

/* ---- closing ------------------------------------------------------------- */

static void expect_close_after(const char *request)
{
    up(NULL);
    struct harness_conn c;
    conn(&c);
    send_str(&c, request);
    struct harness_resp r;
    read_resp(&c, &r, false);
    cr_assert_eq(r.status, 200);
    cr_assert_str_eq(r.body, "ok\n");
    cr_assert_str_eq(header(&r, "Connection"), "close");
    harness_resp_free(&r);
    expect_eof(&c, request);
    harness_close(&c);
    down();
}

Test(integration, http10_gets_close, .fini = fini, .timeout = 30)
{
    expect_close_after("GET /healthz HTTP/1.0\r\n\r\n");
}

Test(integration, connection_close_honoured, .fini = fini, .timeout = 30)
{
    expect_close_after("GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
}

/* ---- HEAD ---------------------------------------------------------------- */

Test(integration, head_has_length_no_body, .fini = fini, .timeout = 30)
{
    up(NULL);
    struct harness_conn c;
    conn(&c);
    const char *paths[] = {"/example", "/healthz"};
    for (int i = 0; i < 2; i++) {
        char req[128];
        snprintf(req, sizeof(req), "HEAD %s HTTP/1.1\r\nHost: t\r\n\r\n", paths[i]);
        send_str(&c, req);
        struct harness_resp r;
        read_resp(&c, &r, true);
        cr_assert_eq(r.status, 200, "HEAD %s", paths[i]);
        cr_assert(r.has_content_length, "HEAD %s: no Content-Length", paths[i]);
        cr_assert_gt(r.content_length, 0, "HEAD %s: Content-Length 0", paths[i]);
        /* no body bytes: the next response must start right here */
        send_str(&c, "GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n");
        struct harness_resp g;
        read_resp(&c, &g, false);
        cr_assert_eq(g.status, 200, "after HEAD %s: status %d (body bytes were sent?)", paths[i], g.status);
        cr_assert_str_eq(g.body, "ok\n");
        cr_assert_eq(c.len, 0, "after HEAD %s: %zu stray bytes", paths[i], c.len);
        harness_resp_free(&g);
    }
    harness_close(&c);
    down();
}

/* ---- routes and statuses --------------------------------------------------- */

struct route_case {
    const char *method, *path;
    int status;
    const char *body_prefix; /* NULL: any */
};

Test(integration, routes_and_statuses, .fini = fini, .timeout = 30)
{
    static const struct route_case cases[] = {
        {"GET", "/healthz", 200, "ok\n"},
        {"GET", "/readyz", 200, "ready\n"},
        {"GET", "/nope", 404, NULL},
        {"GET", "/example/", 404, NULL},
        {"POST", "/example", 405, NULL},
        {"DELETE", "/healthz", 405, NULL},
        {"GET", "/example?bits=64", 200, "Hello_"},
        {"GET", "/example?bits=65", 200, "Hello_"},
    };
    up(NULL);
    struct harness_conn c;
    conn(&c);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const struct route_case *k = &cases[i];
        char req[256];
        snprintf(req, sizeof(req), "%s %s HTTP/1.1\r\nHost: t\r\n%s\r\n", k->method, k->path,
                 strcmp(k->method, "POST") == 0 ? "Content-Length: 0\r\n" : "");
        send_str(&c, req);
        struct harness_resp r;
        int x = harness_read_response(&c, &r, false, 30000); /* 4096 bits may take a while */
        cr_assert_eq(x, 1, "%s %s: no response", k->method, k->path);
        cr_assert_eq(r.status, k->status, "%s %s: status %d, want %d", k->method, k->path, r.status, k->status);
        if (k->body_prefix)
            cr_assert(strncmp(r.body, k->body_prefix, strlen(k->body_prefix)) == 0, "%s %s: body '%s'", k->method,
                      k->path, r.body);
        if (k->status == 405)
            cr_assert_str_eq(header(&r, "Allow"), "GET, HEAD, OPTIONS", "%s %s", k->method, k->path);
        cr_assert_str_eq(header(&r, "Connection"), "keep-alive", "%s %s", k->method, k->path);
        harness_resp_free(&r);
    }
    harness_close(&c);
    down();
}

Test(integration, bad_bits_400_one_line, .fini = fini, .timeout = 30)
{
    static const char *const bad[] = {
        "/example?bits=abc", "/example?bits=63", "/example?bits=4097",       "/example?bits=",
        "/example?bits",     "/example?bits=-1", "/example?bits=64&bits=65", "/example?bits=99999999",
    };
    up(NULL);
    struct harness_conn c;
    conn(&c);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char req[256];
        snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: t\r\n\r\n", bad[i]);
        send_str(&c, req);
        struct harness_resp r;
        read_resp(&c, &r, false);
        cr_assert_eq(r.status, 400, "%s: status %d", bad[i], r.status);
        cr_assert_gt(r.body_len, 1, "%s: empty reason", bad[i]);
        char *nl = strchr(r.body, '\n');
        cr_assert(nl && nl[1] == '\0', "%s: reason is not one line: '%s'", bad[i], r.body);
        cr_assert(strstr(r.body, "bits"), "%s: reason does not name bits: '%s'", bad[i], r.body);
        harness_resp_free(&r);
    }
    /* the connection survives a bad query */
    send_str(&c, "GET /example?bits=64 HTTP/1.1\r\nHost: t\r\n\r\n");
    struct harness_resp r;
    read_resp(&c, &r, false);
    hello_n(&r);
    harness_resp_free(&r);
    harness_close(&c);
    down();
}

/* ---- refusals ------------------------------------------------------------------ */

struct refusal_case {
    const char *name;
    const char *request;
    int status;
};

Test(integration, malformed_400_then_close, .fini = fini, .timeout = 60)
{
    static const struct refusal_case cases[] = {
        {"header line without colon", "GET / HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n", 400},
        {"Content-Length with Transfer-Encoding",
         "POST /example HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400},
        {"bad Content-Length", "GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 12abc\r\n\r\n", 400},
        {"two Content-Lengths", "GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
         400},
        {"garbage request line", "HELLO\r\n\r\n", 400},
        {"bad version", "GET /healthz HTTP/1.x\r\nHost: x\r\n\r\n", 400},
    };
    up(NULL);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const struct refusal_case *k = &cases[i];
        struct harness_conn c;
        conn(&c);
        send_str(&c, k->request);
        struct harness_resp r;
        int x = harness_read_response(&c, &r, false, T_IO);
        cr_assert_eq(x, 1, "%s: no response (%s)", k->name, x == 0 ? "EOF" : strerror(-x));
        cr_assert_eq(r.status, k->status, "%s: status %d, want %d", k->name, r.status, k->status);
        cr_assert_str_eq(header(&r, "Connection"), "close", "%s", k->name);
        harness_resp_free(&r);
        expect_eof(&c, k->name);
        harness_close(&c);

        expect_serving(k->name);
    }
    down();
}

Test(integration, limits_431_414_413, .fini = fini, .timeout = 60)
{
    up((const char *const[]){"--max-body", "1024", NULL});
    static char big[32768];

    /* head over 16 KiB (the default --max-header 16384) */
    int n = snprintf(big, sizeof(big), "GET /healthz HTTP/1.1\r\nHost: t\r\nX-Big: ");
    memset(big + n, 'a', 17000);
    n += 17000;
    n += snprintf(big + n, sizeof(big) - (size_t)n, "\r\n\r\n");
    expect_refusal("17 KiB header", big, (size_t)n, 431);

    /* many small headers adding up to more than 16 KiB */
    n = snprintf(big, sizeof(big), "GET /healthz HTTP/1.1\r\nHost: t\r\n");
    for (int i = 0; i < 600; i++)
        n += snprintf(big + n, sizeof(big) - (size_t)n, "X-H%03d: %s\r\n", i, "vvvvvvvvvvvvvvvvvvvv");
    n += snprintf(big + n, sizeof(big) - (size_t)n, "\r\n");
    expect_refusal("600 headers", big, (size_t)n, 431);

    /* URL over 8192 bytes (the default --max-url) */
    n = snprintf(big, sizeof(big), "GET /example?x=");
    memset(big + n, 'u', 9000);
    n += 9000;
    n += snprintf(big + n, sizeof(big) - (size_t)n, " HTTP/1.1\r\nHost: t\r\n\r\n");
    expect_refusal("9000-byte URL", big, (size_t)n, 414);

    /* body over --max-body, announced by Content-Length */
    const char *cl = "POST /healthz HTTP/1.1\r\nHost: t\r\nContent-Length: 2000\r\n\r\n";
    expect_refusal("Content-Length 2000 > 1024", cl, strlen(cl), 413);

    expect_serving("the limits");
    down();
}

Test(integration, body_within_limit_discarded, .fini = fini, .timeout = 30)
{
    up((const char *const[]){"--max-body", "1024", NULL});
    /* the body looks like a request: were it parsed as one, a 404 would appear */
    const char *body = "GET /nope HTTP/1.1\r\nHost: t\r\n\r\n";
    char req[1024];
    int n = snprintf(req, sizeof(req),
                     "GET /healthz HTTP/1.1\r\nHost: t\r\nContent-Length: %zu\r\n\r\n%s"
                     "GET /readyz HTTP/1.1\r\nHost: t\r\n\r\n",
                     strlen(body), body);
    struct harness_conn c;
    conn(&c);
    cr_assert_eq(harness_send(&c, req, (size_t)n, T_IO), 0);
    struct harness_resp r[2];
    cr_assert_eq(harness_read_responses(&c, r, 2, T_IO), 2);
    cr_assert_eq(r[0].status, 200);
    cr_assert_str_eq(r[0].body, "ok\n");
    cr_assert_eq(r[1].status, 200, "second pipelined request: status %d", r[1].status);
    cr_assert_str_eq(r[1].body, "ready\n");
    cr_assert_eq(harness_poll_readable(&c, 200), 0, "a third response appeared");
    harness_resp_free(&r[0]);
    harness_resp_free(&r[1]);
    harness_close(&c);
    down();
}

Test(integration, request_split_at_every_byte, .fini = fini, .timeout = 30)
{
    up(NULL);
    const char *req = "GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n";
    struct harness_conn c;
    conn(&c);
    for (size_t i = 0; req[i]; i++) {
        cr_assert_eq(harness_send(&c, req + i, 1, T_IO), 0);
        harness_sleep_ms(1);
        if (req[i + 1])
            cr_assert_eq(c.len, 0);
    }
    struct harness_resp r;
    read_resp(&c, &r, false);
    cr_assert_eq(r.status, 200);
    cr_assert_str_eq(r.body, "ok\n");
    cr_assert_eq(harness_poll_readable(&c, 200), 0, "more than one response");
    harness_resp_free(&r);
    harness_close(&c);
    down();
}

/* ---- timeouts ------------------------------------------------------------------- */

Test(integration, header_timeout_408, .fini = fini, .timeout = 30)
{
    up((const char *const[]){"--header-timeout", "1", NULL});
    struct harness_conn c;
    conn(&c);
    long long t0 = harness_now_ms();
    send_str(&c, "GET /healthz HTTP/1.1\r\nHost: ");
    struct harness_resp r;
    int x = harness_read_response(&c, &r, false, 3000);
    cr_assert_eq(x, 1, "no 408 within 3 s (%s)", x == 0 ? "EOF" : strerror(-x));
    cr_assert_eq(r.status, 408);
    cr_assert_str_eq(header(&r, "Connection"), "close");
    harness_resp_free(&r);
    int e = harness_wait_eof(&c, 3000 - (int)(harness_now_ms() - t0));
    cr_assert_eq(e, 0, "not closed within 3 s of the partial request");
    long long dt = harness_now_ms() - t0;
    cr_assert_geq(dt, 800, "408 after %lld ms, before the 1 s timeout", dt);
    harness_close(&c);
    down();
}

Test(integration, idle_timeout_closes, .fini = fini, .timeout = 30)
{
    up((const char *const[]){"--idle-timeout", "1", NULL});
    struct harness_conn c;
    conn(&c);
    long long t0 = harness_now_ms();
    int e = harness_wait_eof(&c, 3000);
    cr_assert_eq(e, 0, "idle connection not closed within 3 s (%s)", e == 1 ? "data arrived" : strerror(-e));
    long long dt = harness_now_ms() - t0;
    cr_assert_geq(dt, 800, "closed after %lld ms, before the 1 s idle timeout", dt);
    harness_close(&c);

    /* and after a request: idle again, closed again */
    conn(&c);
    send_str(&c, "GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n");
    struct harness_resp r;
    read_resp(&c, &r, false);
    cr_assert_eq(r.status, 200);
    harness_resp_free(&r);
    e = harness_wait_eof(&c, 3000);
    cr_assert_eq(e, 0, "keep-alive connection not closed within 3 s of idling");
    harness_close(&c);
    down();
}

Test(integration, slow_clients_do_not_block_others, .fini = fini, .timeout = 60)
{
    up(NULL);
    enum { SLOW = 200 };
    static struct harness_conn slow[SLOW];
    for (int i = 0; i < SLOW; i++) {
        conn(&slow[i]);
        send_str(&slow[i], "GET /healthz HTTP/1.1\r\nHost: sl");
    }
    struct harness_conn c;
    conn(&c);
    long long t0 = harness_now_ms();
    for (int i = 0; i < 20; i++) {
        send_str(&c, "GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n");
        struct harness_resp r;
        read_resp(&c, &r, false);
        cr_assert_eq(r.status, 200);
        harness_resp_free(&r);
    }
    long long dt = harness_now_ms() - t0;
    cr_assert_lt(dt, 2000, "20 requests took %lld ms behind 200 slow clients", dt);
    /* the slow ones are still waiting, not answered or dropped */
    for (int i = 0; i < SLOW; i += 20)
        cr_assert_eq(harness_poll_readable(&slow[i], 0), 0, "slow client %d got something", i);
    /* they finish their requests and are answered */
    for (int i = 0; i < SLOW; i++)
        send_str(&slow[i], "ow\r\n\r\n");
    for (int i = 0; i < SLOW; i++) {
        struct harness_resp r;
        read_resp(&slow[i], &r, false);
        cr_assert_eq(r.status, 200, "slow client %d", i);
        harness_resp_free(&r);
        harness_close(&slow[i]);
    }
    harness_close(&c);
    down();
}

/* ---- draining ------------------------------------------------------------------- */


/* Opens n connections and waits until the server counts them and k (already
 * open) in primed_connections_open: accepted, not just in the backlog. */
static void open_accepted(struct harness_conn *k, struct harness_conn *cs, int n)
{
    for (int i = 0; i < n; i++)
        conn(&cs[i]);
    long open = 0;
    for (long long end = harness_now_ms() + T_IO; harness_now_ms() < end; harness_sleep_ms(20))
        if ((open = metric_value(k, "primed_connections_open")) >= n + 1)
            break;
    cr_assert_geq(open, n + 1, "only %ld connections accepted", open);
}

Test(integration, sigterm_drains_in_flight, .fini = fini, .timeout = 60)
{
    /* One worker, busy first on a 2048-bit prime (hundreds of ms): the N
     * requests behind it are still unanswered when SIGTERM comes, however
     * slowly a loaded machine sends them. */
    const char *mode = built_with("inline") ? "inline" : "steal";
    /* the whole batch may take seconds under ASan on a loaded CI host (the
     * work-stealing deque serves its owner newest first, so request 0 can be
     * the last answered): bounds for what must happen, not for speed */
    up((const char *const[]){"--threads", "1", "--dispatch", mode, "--drain-timeout", "30", NULL});
    enum { N = 20 };
    static struct harness_conn cs[N];
    struct harness_conn k, slow; /* an already-open keep-alive connection, and the slow request's */
    conn(&k);
    conn(&slow);
    open_accepted(&k, cs, N); /* all accepted before SIGTERM */

    send_str(&slow, "GET /example?bits=2048 HTTP/1.1\r\nHost: t\r\n\r\n");
    for (int i = 0; i < N; i++)
        send_str(&cs[i], "GET /example?bits=1000 HTTP/1.1\r\nHost: t\r\n\r\n");
    cr_assert_eq(kill(srv.pid, SIGTERM), 0);

    struct harness_resp r;
    int x;
    for (int i = 0; i < N; i++) {
        x = harness_read_response(&cs[i], &r, false, 30000);
        cr_assert_eq(x, 1, "in-flight request %d not answered (%s)", i, x == 0 ? "EOF" : strerror(-x));
        hello_n(&r);
        cr_assert_str_eq(header(&r, "Connection"), "close", "in-flight request %d", i);
        harness_resp_free(&r);
        expect_eof(&cs[i], "drained connection");
        harness_close(&cs[i]);
    }
    x = harness_read_response(&slow, &r, false, 10000);
    cr_assert_eq(x, 1, "the 2048-bit request not answered");
    hello_n(&r);
    harness_resp_free(&r);
    harness_close(&slow);
    harness_close(&k);
    int st = harness_wait_exit(&srv, 10000);
    cr_assert_eq(st, 0, "exit status %d after drain; stderr:\n%s", st, srv.err);
}

/* /readyz sent on an idle keep-alive connection right after SIGTERM, while
 * /example work is still pending elsewhere: the spec's answer is 503. */
Test(integration, readyz_503_on_keepalive_after_sigterm, .fini = fini, .timeout = 60)
{
    up(NULL);
    enum { N = 4 };
    static struct harness_conn cs[N];
    struct harness_conn k;
    conn(&k);
    open_accepted(&k, cs, N);
    for (int i = 0; i < N; i++)
        send_str(&cs[i], "GET /example?bits=2048 HTTP/1.1\r\nHost: t\r\n\r\n");
    cr_assert_eq(kill(srv.pid, SIGTERM), 0);
    /* kill() returns before the server has taken the signal: a request sent
     * at once may be answered 200, rightly. Wait for its "draining" line (the
     * readiness flag is set right after it is logged), then ask within the
     * server's grace for idle connections (1 s). */
    for (long long end = harness_now_ms() + T_IO; !strstr(srv.err, "draining") && harness_now_ms() < end;)
        harness_pump(&srv, 10);
    cr_assert(strstr(srv.err, "draining"), "no draining line after SIGTERM: %s", srv.err);
    harness_sleep_ms(20);
    send_str(&k, "GET /readyz HTTP/1.1\r\nHost: t\r\n\r\n");
    struct harness_resp r;
    /* it may queue behind two 2048-bit primes on its worker: under ASan on
     * a loaded CI host those took over 10 s once (2026-12-03); what must
     * happen is a 503, not how soon */
    int x = harness_read_response(&k, &r, false, 30000);
    cr_assert_eq(x, 1, "/readyz after SIGTERM: no response (%s)",
                 x == 0 ? "EOF: the idle keep-alive connection was closed" : strerror(-x));
    cr_assert_eq(r.status, 503, "/readyz after SIGTERM: status %d", r.status);
    cr_assert_str_eq(header(&r, "Connection"), "close");
    harness_resp_free(&r);
    for (int i = 0; i < N; i++) {
        x = harness_read_response(&cs[i], &r, false, 30000);
        cr_assert_eq(x, 1, "in-flight request %d not answered", i);
        hello_n(&r);
        harness_resp_free(&r);
        harness_close(&cs[i]);
    }
    harness_close(&k);
    int st = harness_wait_exit(&srv, 10000);
    cr_assert_eq(st, 0, "exit status %d after drain; stderr:\n%s", st, srv.err);
}

/* The deterministic half of the /readyz check: a request that is still
 * arriving when the drain begins is kept and answered 503. */
Test(integration, readyz_503_while_draining, .fini = fini, .timeout = 30)
{
    up(NULL);
    struct harness_conn k;
    conn(&k);
    send_str(&k, "GET /readyz HTTP/1.1\r\nHost: t\r\n\r\n");
    struct harness_resp r;
    read_resp(&k, &r, false);
    cr_assert_eq(r.status, 200);
    harness_resp_free(&r);
    send_str(&k, "GET /readyz HTTP/1.1\r\nHost: t\r\n");
    harness_sleep_ms(100);
    cr_assert_eq(kill(srv.pid, SIGTERM), 0);
    for (long long end = harness_now_ms() + T_IO; !strstr(srv.err, "draining") && harness_now_ms() < end;)
        harness_pump(&srv, 50);
    harness_sleep_ms(200);
    send_str(&k, "\r\n");
    read_resp(&k, &r, false);
    cr_assert_eq(r.status, 503, "status %d", r.status);
    cr_assert_str_eq(header(&r, "Connection"), "close");
    harness_resp_free(&r);
    expect_eof(&k, "readyz during drain");
    harness_close(&k);
    int st = harness_wait_exit(&srv, 10000);
    cr_assert_eq(st, 0, "exit status %d after drain; stderr:\n%s", st, srv.err);
}

/* ---- backpressure ---------------------------------------------------------------- */

Test(integration, max_conns_backpressure, .fini = fini, .timeout = 60)
{
    /* one worker: --max-conns is split over workers, and SO_REUSEPORT picks
     * the worker, so only with one does "the first 4" mean these 4 */
    up((const char *const[]){"--threads", "1", "--max-conns", "4", NULL});
    struct harness_conn c[8];
    const char *req = "GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n";
    for (int i = 0; i < 4; i++) {
        conn(&c[i]);
        send_str(&c[i], req);
        struct harness_resp r;
        read_resp(&c[i], &r, false);
        cr_assert_eq(r.status, 200, "connection %d", i);
        harness_resp_free(&r);
    }
    for (int i = 4; i < 8; i++) {
        conn(&c[i]); /* the kernel completes the handshake; the server does not accept */
        send_str(&c[i], req);
    }
    for (int i = 4; i < 8; i++)
        cr_assert_eq(harness_poll_readable(&c[i], i == 4 ? 500 : 50), 0,
                     "connection %d answered (or closed) while 4 were open", i);
    /* the first 4 still work */
    for (int i = 0; i < 4; i++) {
        send_str(&c[i], req);
        struct harness_resp r;
        read_resp(&c[i], &r, false);
        cr_assert_eq(r.status, 200, "connection %d, second request", i);
        harness_resp_free(&r);
    }
    /* as earlier ones close, the waiting ones are served, never refused */
    for (int i = 0; i < 4; i++) {
        harness_close(&c[i]);
        struct harness_resp r;
        int x = harness_read_response(&c[i + 4], &r, false, T_IO);
        cr_assert_eq(x, 1, "connection %d not served after one closed (%s)", i + 4, x == 0 ? "EOF" : strerror(-x));
        cr_assert_eq(r.status, 200, "connection %d", i + 4);
        harness_resp_free(&r);
    }
    for (int i = 4; i < 8; i++)
        harness_close(&c[i]);
    down();
}

/* A full task queue (steal dispatch) pauses accepting; it must resume once
 * the queue drains. With --queue-max 1 every /example fills it. */
Test(integration, accepts_again_after_queue_full, .fini = fini, .timeout = 30)
{
    up((const char *const[]){"--threads", "1", "--queue-max", "1", NULL});
    for (int i = 0; i < 3; i++) {
        struct harness_resp r;
        int x = harness_request(srv.port, "GET", "/example", NULL, &r, T_IO);
        cr_assert_eq(x, 1, "connection %d after a full queue: not served (%s)", i, x == 0 ? "EOF" : strerror(-x));
        hello_n(&r);
        harness_resp_free(&r);
    }
    down();
}

/* ---- flags ------------------------------------------------------------------------ */

struct flag_case {
    const char *args[6];
    const char *env;   /* NAME=value or NULL */
    const char *names; /* what the one stderr line must mention */
    bool port_given;   /* a free port was passed: check nothing listens there */
};

static bool port_listening(int port)
{
    struct harness_conn c;
    int r = harness_connect(&c, port);
    if (r == 0)
        harness_close(&c);
    return r == 0;
}

Test(integration, bad_flags_exit_2, .fini = fini, .timeout = 60)
{
    static const struct flag_case cases[] = {
        {{"--port", "70000"}, NULL, "--port", false},
        {{"--threads", "0"}, NULL, "--threads", true},
        {{"--bits", "5"}, NULL, "--bits", true},
        {{"--nope"}, NULL, "--nope", true},
        {{"--threads", "2", "--port"}, NULL, "--port", false},
        {{NULL}, "PORT=abc", "PORT", false},
        {{NULL}, "PRIMED_THREADS=x", "PRIMED_THREADS", true},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const struct flag_case *k = &cases[i];
        const char *args[16];
        int n = 0;
        char port[16];
        int p = harness_free_port();
        cr_assert_gt(p, 0);
        snprintf(port, sizeof(port), "%d", p);
        args[n++] = "--host";
        args[n++] = "127.0.0.1";
        if (k->port_given) {
            args[n++] = "--port";
            args[n++] = port;
        }
        for (int j = 0; k->args[j]; j++)
            args[n++] = k->args[j];
        args[n] = NULL;
        const char *env[] = {k->env, NULL};
        int r = harness_spawn(&srv, args, env);
        cr_assert_eq(r, 0);
        int st = harness_wait_exit(&srv, 10000);
        cr_assert_eq(st, 2, "case %zu (%s): exit status %d, want 2; stderr:\n%s", i, k->names, st, srv.err);
        char *nl = strchr(srv.err, '\n');
        cr_assert(nl && nl[1] == '\0', "case %zu: want one line on stderr, got:\n%s", i, srv.err);
        cr_assert(strstr(srv.err, k->names), "case %zu: stderr does not name %s: %s", i, k->names, srv.err);
        cr_assert(!strstr(srv.err, "ready"), "case %zu: it started: %s", i, srv.err);
        if (k->port_given)
            cr_assert(!port_listening(p), "case %zu: something listens on port %d", i, p);
    }
}

Test(integration, help_and_version, .fini = fini, .timeout = 30)
{
    int r = harness_spawn(&srv, (const char *const[]){"--help", NULL}, NULL);
    cr_assert_eq(r, 0);
    int st = harness_wait_exit(&srv, 10000);
    cr_assert_eq(st, 0, "--help: exit status %d", st);
    cr_assert(strstr(srv.out, "usage:"), "--help printed no usage: %s", srv.out);
    cr_assert(strstr(srv.out, "--port"), "--help does not list --port");

    r = harness_spawn(&srv, (const char *const[]){"--version", NULL}, NULL);
    cr_assert_eq(r, 0);
    st = harness_wait_exit(&srv, 10000);
    cr_assert_eq(st, 0, "--version: exit status %d", st);
    cr_assert(strstr(srv.out, "profile:"), "--version has no profile: %s", srv.out);
}

/* ---- /metrics -------------------------------------------------------------------- */

static double metric_line(const char *body, const char *prefix)
{
    size_t pl = strlen(prefix);
    for (const char *l = body; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
        if (strncmp(l, prefix, pl) == 0 && l[pl] == ' ')
            return strtod(l + pl + 1, NULL);
    return 0; /* a series not yet seen counts as 0 */
}

static char *scrape(struct harness_conn *c)
{
    send_str(c, "GET /metrics HTTP/1.1\r\nHost: t\r\n\r\n");
    struct harness_resp r;
    read_resp(c, &r, false);
    cr_assert_eq(r.status, 200);
    cr_assert(strncmp(header(&r, "Content-Type"), "text/plain", 10) == 0);
    return r.body; /* caller frees */
}

Test(integration, metrics_count_requests, .fini = fini, .timeout = 60)
{
    up(NULL);
    struct harness_conn c;
    conn(&c);
    const char *ctr = "primed_http_requests_total{path=\"/example\",code=\"200\"}";
    const char *cnt = "primed_http_request_duration_seconds_count{path=\"/example\"}";
    /* one request first, so the series exist */
    send_str(&c, "GET /example HTTP/1.1\r\nHost: t\r\n\r\n");
    struct harness_resp r;
    read_resp(&c, &r, false);
    harness_resp_free(&r);
    char *b0 = scrape(&c);
    double c0 = metric_line(b0, ctr), h0 = metric_line(b0, cnt);
    cr_assert_eq(c0, 1, "counter %g after one request", c0);
    enum { K = 7 };
    for (int i = 0; i < K; i++) {
        send_str(&c, "GET /example HTTP/1.1\r\nHost: t\r\n\r\n");
        read_resp(&c, &r, false);
        hello_n(&r);
        harness_resp_free(&r);
    }
    char *b1 = scrape(&c);
    double c1 = metric_line(b1, ctr), h1 = metric_line(b1, cnt);
    cr_assert_eq(c1 - c0, K, "counter grew by %g, want %d", c1 - c0, K);
    cr_assert_eq(h1 - h0, K, "histogram _count grew by %g, want %d", h1 - h0, K);
    free(b0);
    free(b1);
    harness_close(&c);
    down();
}

Test(integration, metrics_parse_with_prometheus_client, .fini = fini, .timeout = 60)
{
    const char *script = getenv("METRICS_PARSE_PY");
    cr_assert(script && *script, "METRICS_PARSE_PY not set (tests/meson.build sets it)");
    up(NULL);
    struct harness_conn c;
    conn(&c);
    const char *reqs[] = {"/example", "/example", "/healthz", "/nope", "/example?bits=1"};
    for (size_t i = 0; i < sizeof(reqs) / sizeof(reqs[0]); i++) {
        char req[128];
        snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: t\r\n\r\n", reqs[i]);
        send_str(&c, req);
        struct harness_resp r;
        read_resp(&c, &r, false);
        harness_resp_free(&r);
    }
    char *body = scrape(&c);
    char path[] = "/tmp/primed-metrics-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    size_t len = strlen(body);
    cr_assert_eq(write(fd, body, len), (ssize_t)len);
    close(fd);
    free(body);
    char cmd[512];
    /* expects: 2 /example 200s, 1 /example 400 */
    snprintf(cmd, sizeof(cmd), "/usr/bin/python3 '%s' '%s' example_200=2 example_400=1 2>&1", script, path);
    FILE *p = popen(cmd, "r");
    cr_assert(p);
    char out[4096];
    size_t got = fread(out, 1, sizeof(out) - 1, p);
    out[got] = '\0';
    int st = pclose(p);
    unlink(path);
    cr_assert_eq(st, 0, "metrics_parse.py failed (status %d):\n%s", st, out);
    harness_close(&c);
    down();
}

/* ---- /ping, Knative and tracing headers ------------------------------------------ */

Test(integration, ping_names_pod_and_revision, .fini = fini, .timeout = 30)
{
    up_env(NULL, (const char *const[]){"POD_NAME=pod-7", "POD_NAMESPACE=ns-x", "K_REVISION=rev-1", NULL});
    struct harness_resp r;
    cr_assert_eq(harness_request(srv.port, "GET", "/ping", NULL, &r, T_IO), 1);
    cr_assert_eq(r.status, 200);
    cr_assert_str_eq(r.body, "primed(id=1): pod-7 in ns-x\n");
    cr_assert_str_eq(header(&r, "K-Revision"), "rev-1");
    harness_resp_free(&r);
    cr_assert_eq(harness_request(srv.port, "GET", "/ping", NULL, &r, T_IO), 1);
    cr_assert_str_eq(r.body, "primed(id=2): pod-7 in ns-x\n");
    harness_resp_free(&r);
    cr_assert_eq(harness_request(srv.port, "GET", "/example", NULL, &r, T_IO), 1);
    cr_assert_str_eq(header(&r, "K-Revision"), "rev-1", "K-Revision on /example");
    harness_resp_free(&r);
    down();
}

Test(integration, no_revision_header_without_env, .fini = fini, .timeout = 30)
{
    up_env(NULL, (const char *const[]){"K_REVISION=", NULL}); /* empty counts as unset */
    struct harness_resp r;
    cr_assert_eq(harness_request(srv.port, "GET", "/healthz", NULL, &r, T_IO), 1);
    cr_assert_null(harness_header(&r, "K-Revision"));
    harness_resp_free(&r);
    down();
}

Test(integration, traceparent_propagated, .fini = fini, .timeout = 30)
{
    up(NULL);
    const char *in = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    struct harness_resp r;
    cr_assert_eq(harness_request(srv.port, "GET", "/example",
                                 "traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\r\n", &r, T_IO),
                 1);
    cr_assert_eq(r.status, 200);
    const char *out = harness_header(&r, "traceparent");
    cr_assert(out, "no traceparent in the response");
    cr_assert_eq(strlen(out), 55, "traceparent '%s'", out);
    cr_assert(strncmp(out, in, 36) == 0, "trace id changed: '%s'", out); /* "00-" + 32 hex + "-" */
    cr_assert(strncmp(out + 36, in + 36, 16) != 0, "span id not changed: '%s'", out);
    for (int i = 36; i < 52; i++)
        cr_assert((out[i] >= '0' && out[i] <= '9') || (out[i] >= 'a' && out[i] <= 'f'), "span id '%s'", out);
    cr_assert_eq(out[52], '-');
    harness_resp_free(&r);

    static const char *const bad[] = {
        "traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7\r\n",
        "traceparent: 00-00000000000000000000000000000000-00f067aa0ba902b7-01\r\n",
        "traceparent: 00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01\r\n",
        "traceparent: xyz\r\n",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cr_assert_eq(harness_request(srv.port, "GET", "/example", bad[i], &r, T_IO), 1);
        cr_assert_eq(r.status, 200, "%s", bad[i]);
        cr_assert_null(harness_header(&r, "traceparent"), "echoed a trace for %s", bad[i]);
        harness_resp_free(&r);
    }
    down();
}
