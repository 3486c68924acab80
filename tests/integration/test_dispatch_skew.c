/* test_dispatch_skew.c - issue 3: two busy keep-alive connections that the
 * kernel placed on the same worker.
 *
 * With inline dispatch the worker that owns both connections does all their
 * prime work while the other worker idles; with work-stealing the idle one
 * steals and both do a share. Placement is SO_REUSEPORT's hash of the 4-tuple,
 * which a client cannot choose portably. So the test opens three connections
 * to a two-worker server (two of them must share a worker: pigeonhole), sends
 * each a different first request (/healthz, /readyz, /ping), and reads where
 * each landed from the access log (--access-log 1 writes worker=N per
 * request, flushed once a second). No retries, no luck involved.
 *
 * Work done is measured as utime+stime of the worker threads from
 * /proc/PID/task/TID/stat (the main thread and io_uring helper threads,
 * named iou-*, are not workers).
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "itest.h"

/* primes a connection asks for: enough worker CPU to share out (the check
 * below wants 0.1 s) also where the eight-lane engine makes a prime ~1.3 ms.
 * PRIMED_TEST_SLOW=1 (./check's sanitizer stages: the server is instrumented
 * and each prime costs many times the CPU) asks for 30. */
#define REQS_MAX 100
#define NCONN    3

static int reqs(void)
{
    const char *slow = getenv("PRIMED_TEST_SLOW");
    return slow && strcmp(slow, "1") == 0 ? 30 : REQS_MAX;
}

struct threads {
    int n;
    int tid[8];
    long long ticks[8];
};

/* utime+stime of every worker thread of pid. */
static void worker_cpu(pid_t pid, struct threads *t)
{
    char dir[64];
    snprintf(dir, sizeof(dir), "/proc/%d/task", (int)pid);
    DIR *d = opendir(dir);
    cr_assert(d, "opendir %s: %s", dir, strerror(errno));
    t->n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        int tid = atoi(e->d_name);
        if (tid <= 0 || tid == pid)
            continue;
        char path[128], buf[1024];
        snprintf(path, sizeof(path), "%s/%d/stat", dir, tid);
        FILE *f = fopen(path, "re");
        if (!f)
            continue;
        size_t len = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[len] = '\0';
        char *lp = strchr(buf, '('), *rp = strrchr(buf, ')');
        cr_assert(lp && rp, "unparsable %s", path);
        if (strncmp(lp + 1, "primed-w", 8) != 0)
            continue; /* workers name themselves primed-wN; not io_uring's iou-* or a sanitizer's */
        /* after ") ": state(3) ppid pgrp session tty_nr tpgid flags minflt
         * cminflt majflt cmajflt utime(14) stime(15) */
        unsigned long long ut = 0, st = 0;
        int k = sscanf(rp + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st);
        cr_assert_eq(k, 2, "unparsable %s: %s", path, buf);
        cr_assert_lt(t->n, 8, "more than 8 worker threads");
        t->tid[t->n] = tid;
        t->ticks[t->n] = (long long)(ut + st);
        t->n++;
    }
    closedir(d);
}

/* The worker=N of the k-th (0-based) access-log line for `path`, or -1. */
static int worker_of(const char *log, const char *path, int k)
{
    char needle[64];
    snprintf(needle, sizeof(needle), " path=%s ", path);
    for (const char *l = log; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        const char *eol = strchr(l, '\n');
        if (!eol)
            return -1; /* a partial line: not flushed yet */
        const char *p = strstr(l, needle);
        if (!p || p > eol)
            continue;
        if (k-- > 0)
            continue;
        const char *w = strstr(l, "worker=");
        return w && w < eol ? atoi(w + 7) : -1;
    }
    return -1;
}

static void probe(struct harness_conn *c, const char *path)
{
    char req[128];
    snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: t\r\n\r\n", path);
    cr_assert_eq(harness_send_str(c, req, 5000), 0);
    struct harness_resp r;
    cr_assert_eq(harness_read_response(c, &r, false, 5000), 1);
    cr_assert_eq(r.status, 200);
    harness_resp_free(&r);
}

/* Finds two connections on the same worker (pigeonhole: 3 connections, 2
 * workers), streams reqs() primes on each, and returns the share of the worker
 * CPU done by the busier thread and by the other one. */

static void shared_worker_split(const char *mode, double *hi, double *lo)
{
    if (!built_with(mode))
        cr_skip_test("dispatch %s is not built into this binary (profile builds one mode)", mode);
    char env_dispatch[32];
    snprintf(env_dispatch, sizeof(env_dispatch), "PRIMED_DISPATCH=%s", mode);
    int r = harness_start(&srv, (const char *const[]){"--threads", "2", "--bits", "64", "--access-log", "1", NULL},
                          (const char *const[]){env_dispatch, NULL});
    cr_assert_eq(r, 0, "server did not start: %s", strerror(-r));
    char want[40];
    snprintf(want, sizeof(want), "dispatch=%s ", mode);
    cr_assert(strstr(srv.err, want), "ready line does not say %s: %s", want, srv.err);

    static const char *const paths[NCONN] = {"/healthz", "/readyz", "/ping"};
    struct harness_conn c[NCONN];
    int w[NCONN];
    for (int i = 0; i < NCONN; i++) {
        cr_assert_eq(harness_connect(&c[i], srv.port), 0);
        probe(&c[i], paths[i]);
    }
    /* the access log is flushed once a second */
    bool all = false;
    for (long long end = harness_now_ms() + 5000; !all && harness_now_ms() < end;) {
        harness_pump(&srv, 100);
        all = true;
        for (int i = 0; i < NCONN; i++)
            all = all && (w[i] = worker_of(srv.out, paths[i], 0)) >= 0;
    }
    cr_assert(all, "no access-log line for each probe; stdout:\n%s", srv.out);
    int a = -1, b = -1;
    for (int i = 0; i < NCONN && a < 0; i++)
        for (int j = i + 1; j < NCONN && a < 0; j++)
            if (w[i] == w[j]) {
                a = i;
                b = j;
            }
    cr_assert(a >= 0, "3 connections on 3 different workers of 2?");
    for (int i = 0; i < NCONN; i++)
        if (i != a && i != b)
            harness_close(&c[i]);

    const int n = reqs();
    static char req[REQS_MAX * 64];
    size_t len = 0;
    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(req + len, sizeof(req) - len, "GET /example?bits=1000 HTTP/1.1\r\nHost: t\r\n\r\n");
    struct threads t0, t1;
    worker_cpu(srv.pid, &t0);
    cr_assert_eq(t0.n, 2, "%d worker threads, want 2", t0.n);
    cr_assert_eq(harness_send(&c[a], req, len, 5000), 0);
    cr_assert_eq(harness_send(&c[b], req, len, 5000), 0);
    static struct harness_resp ra[REQS_MAX], rb[REQS_MAX];
    cr_assert_eq(harness_read_responses(&c[a], ra, n, 60000), n);
    cr_assert_eq(harness_read_responses(&c[b], rb, n, 60000), n);
    for (int i = 0; i < n; i++) {
        cr_assert_eq(ra[i].status, 200);
        cr_assert_eq(rb[i].status, 200);
        harness_resp_free(&ra[i]);
        harness_resp_free(&rb[i]);
    }
    worker_cpu(srv.pid, &t1);
    cr_assert_eq(t1.n, 2);
    harness_close(&c[a]);
    harness_close(&c[b]);

    long long d[2], total = 0;
    for (int i = 0; i < 2; i++) {
        cr_assert_eq(t0.tid[i], t1.tid[i]);
        d[i] = t1.ticks[i] - t0.ticks[i];
        total += d[i];
    }
    long tck = sysconf(_SC_CLK_TCK);
    fprintf(stderr, "dispatch_skew %s: %s and %s on worker %d; thread cpu %.2f s + %.2f s\n", mode, paths[a], paths[b],
            w[a], (double)d[0] / (double)tck, (double)d[1] / (double)tck);
    /* 2n primes of 1000 bits: far more than a few ticks of CPU */
    cr_assert_geq(total, tck / 10, "%s: only %lld ticks of worker CPU for %d primes", mode, total, 2 * n);
    double s0 = (double)d[0] / (double)total, s1 = (double)d[1] / (double)total;
    *hi = s0 > s1 ? s0 : s1;
    *lo = s0 > s1 ? s1 : s0;
    int st = harness_stop(&srv, 10000);
    cr_assert_eq(st, 0, "exit status %d", st);
}

Test(dispatch_skew, inline_one_worker_does_all, .fini = fini, .timeout = 240)
{
    double hi, lo;
    shared_worker_split("inline", &hi, &lo);
    cr_assert_geq(hi, 0.90, "inline: busier worker did %.0f%% of the work, want >= 90%%", hi * 100);
}

Test(dispatch_skew, steal_both_workers_work, .fini = fini, .timeout = 240)
{
    double hi, lo;
    shared_worker_split("steal", &hi, &lo);
    cr_assert_geq(lo, 0.20, "steal: idle worker did %.0f%% of the work, want >= 20%%", lo * 100);
}

/* --prime-split: one connection asks for primes one at a time, so the other
 * worker has nothing of its own to do; it tests pieces of each search
 * (primed_prime_pieces_helped_total grows) and every answer is a prime's
 * Hello_N. With --prime-split off, or the flint engine, nothing is split. */
static long lone_primes(const char *split, const char *engine)
{
    if (!built_with("steal"))
        cr_skip_test("built without the steal dispatch");
    up((const char *const[]){"--threads", "2", "--dispatch", "steal", "--prime-split", split, "--prime-engine", engine,
                             NULL});
    char want[40];
    /* the ready line says what is in effect: flint is never split */
    snprintf(want, sizeof(want), " prime_split=%s ", strcmp(engine, "flint") == 0 ? "off" : split);
    cr_assert(strstr(srv.err, want), "the ready line does not say%s: %s", want, srv.err);
    struct harness_conn c;
    conn(&c);
    unsigned long last = 0;
    for (int i = 0; i < 20; i++) {
        send_str(&c, "GET /example?bits=1000 HTTP/1.1\r\nHost: t\r\n\r\n");
        struct harness_resp r;
        read_resp(&c, &r, false);
        unsigned long n = hello_n(&r);
        cr_assert_gt(n, last, "Hello_%lu after Hello_%lu", n, last);
        last = n;
        harness_resp_free(&r);
        harness_sleep_ms(5); /* the helper goes back to sleep between requests */
    }
    long helped = metric_value(&c, "primed_prime_pieces_helped_total");
    harness_close(&c);
    down();
    return helped;
}

Test(dispatch_skew, idle_worker_helps_a_lone_prime, .fini = fini, .timeout = 120)
{
    long helped = lone_primes("on", "sieve");
    /* a 1000-bit window is 125 pieces and the answer lies ~20 pieces in */
    cr_assert_geq(helped, 20, "%ld pieces helped in 20 searches", helped);
}

Test(dispatch_skew, nothing_split_when_off_or_flint, .fini = fini, .timeout = 120)
{
    cr_assert_eq(lone_primes("off", "sieve"), 0);
    cr_assert_eq(lone_primes("on", "flint"), 0);
}
