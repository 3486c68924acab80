/* startup.c - startup_probe: time from exec to the first 200 answer, for any command.
 *
 * Owns one measurement loop: fork, exec the command (PORT in its environment, its own
 * process group), then poll 127.0.0.1:PORT with connect() + "GET path" + read of the
 * status line as fast as it can, never sleeping: a refused connect on loopback costs a
 * few microseconds, so the probe's resolution is far finer than any server's start-up.
 * The price is one busy core while the server boots; pin the probe away from the
 * server (taskset) when the machine has a core to spare.
 *
 * Phases, in order, each timed from just before fork(): the health path answers 200,
 * then /readyz answers 200 (a 404 there means "not offered" and is reported as -1),
 * then the first GET /example answers 200. Between runs the whole process group gets
 * SIGTERM, then SIGKILL after --kill-timeout seconds; the next run waits until the port
 * refuses connections again, so a slow exit is never measured as a fast start.
 *
 * Pinning is done here, not with taskset around the probe and the command: a child
 * inherits its parent's CPU mask, so under `taskset -c 1 startup_probe -- CMD` the server
 * started on the probe's busy CPU and waited for a scheduler slice there (its main thread
 * for the whole start-up, or a `taskset -c 0` wrapper for its own exec), which the figures
 * counted as start-up. --cpu N pins the probe alone; the child is given --server-cpus
 * (default: the CPUs the probe was allowed, less N) with sched_setaffinity() by the probe
 * right after fork() (a new child otherwise waits behind the polling probe for up to a
 * scheduler tick) and by the child before exec, so no wrapper's exec is timed either.
 *
 * Output: one "run=K ..." line per run and one "metric=NAME ..." summary line per phase
 * (median, min, p10, p90, max in milliseconds), both machine-readable. Exit status 0
 * when every run reached 200 on the health path, 1 otherwise, 2 on usage errors.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_RUNS 1000

enum phase { PH_HEALTH, PH_READY, PH_EXAMPLE, PH_COUNT };

static const char *const phase_name[PH_COUNT] = { "healthz", "readyz", "example" };

struct opts {
    int runs;
    int port;
    const char *path[PH_COUNT];
    double timeout_s;      /* per phase */
    double kill_timeout_s;
    bool quiet;
    int cpu;             /* the probe's own CPU, -1: not pinned */
    cpu_set_t server;    /* the command's CPUs, set between fork and exec */
    bool pin_server;
};

/* "0,2-3" into a CPU set; false on anything else (empty, out of range, junk). */
static bool parse_cpus(const char *s, cpu_set_t *set)
{
    CPU_ZERO(set);
    while (*s) {
        char *end;
        long a = strtol(s, &end, 10), b = a;
        if (end == s || a < 0 || a >= CPU_SETSIZE)
            return false;
        if (*end == '-') {
            s = end + 1;
            b = strtol(s, &end, 10);
            if (end == s || b < a || b >= CPU_SETSIZE)
                return false;
        }
        for (long i = a; i <= b; i++)
            CPU_SET((int)i, set);
        if (*end == ',')
            end++;
        else if (*end)
            return false;
        s = end;
    }
    return CPU_COUNT(set) > 0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One request on a fresh connection. Returns the HTTP status (> 0), 0 when the
 * connection was refused or reset before a status line arrived, -1 on a local error. */
static int probe_once(int port, const char *path, double deadline)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        close(fd);
        return 0;
    }
    /* A listener that has bound but not yet served sits in the accept queue: the
     * read below then blocks until the server answers, which is what we time. The
     * receive timeout only keeps a hung server from hanging the probe. */
    double left = deadline - now_s();
    if (left < 0.001)
        left = 0.001;
    struct timeval tv = { .tv_sec = (time_t)left, .tv_usec = (suseconds_t)((left - (double)(time_t)left) * 1e6) };
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);

    char req[512];
    int n = snprintf(req, sizeof req,
                     "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n\r\n", path, port);
    if (n <= 0 || (size_t)n >= sizeof req || send(fd, req, (size_t)n, MSG_NOSIGNAL) != n) {
        close(fd);
        return 0;
    }
    char buf[64];
    size_t got = 0;
    while (got < 12) {
        ssize_t r = recv(fd, buf + got, sizeof buf - 1 - got, 0);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    buf[got] = '\0';
    int status = 0;
    if (got >= 12 && strncmp(buf, "HTTP/1.", 7) == 0)
        status = atoi(buf + 9);
    return status;
}

static bool child_gone(pid_t pid, int *wstatus)
{
    return waitpid(pid, wstatus, WNOHANG) == pid;
}

/* Polls until `path` answers 200. Returns seconds since t0, -1 on timeout or exit,
 * -2 when the path answered 404/405 (not offered by this server). */
static double poll_phase(const struct opts *o, pid_t pid, bool *exited, const char *path, double t0)
{
    double deadline = now_s() + o->timeout_s;
    for (;;) {
        int st = probe_once(o->port, path, deadline);
        double t = now_s();
        if (st == 200)
            return t - t0;
        if (st == 404 || st == 405)
            return -2;
        int ws;
        if (!*exited && child_gone(pid, &ws)) {
            *exited = true;
            fprintf(stderr, "startup_probe: command exited (%s %d) before %s answered 200\n",
                    WIFEXITED(ws) ? "status" : "signal", WIFEXITED(ws) ? WEXITSTATUS(ws) : WTERMSIG(ws), path);
        }
        if (*exited)
            return -1;
        if (t > deadline) {
            fprintf(stderr, "startup_probe: %s did not answer 200 within %.1f s (last status %d)\n",
                    path, o->timeout_s, st);
            return -1;
        }
    }
}

static void stop_child(const struct opts *o, pid_t pid, bool exited)
{
    if (exited)
        return;
    kill(-pid, SIGTERM);
    double deadline = now_s() + o->kill_timeout_s;
    int ws;
    while (waitpid(pid, &ws, WNOHANG) == 0) {
        if (now_s() > deadline) {
            fprintf(stderr, "startup_probe: pid %d ignored SIGTERM for %.1f s, sending SIGKILL\n",
                    (int)pid, o->kill_timeout_s);
            kill(-pid, SIGKILL);
            waitpid(pid, &ws, 0);
            break;
        }
        struct timespec ts = { 0, 1000000 }; /* between runs sleeping is fine */
        nanosleep(&ts, NULL);
    }
    /* Children that left the group leader behind (a shell wrapper's server) go too. */
    kill(-pid, SIGKILL);
}

/* Waits (sleeping) until nothing answers on the port. Returns false after 10 s. */
static bool wait_port_free(int port)
{
    double deadline = now_s() + 10.0;
    while (now_s() < deadline) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
            return false;
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        int rc = connect(fd, (struct sockaddr *)&sa, sizeof sa);
        close(fd);
        if (rc < 0 && errno == ECONNREFUSED)
            return true;
        struct timespec ts = { 0, 5000000 };
        nanosleep(&ts, NULL);
    }
    return false;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Nearest-rank percentile of a sorted array; median averages the middle pair. */
static double pct(const double *v, int n, double p)
{
    if (p == 50.0 && n % 2 == 0)
        return (v[n / 2 - 1] + v[n / 2]) / 2.0;
    int k = (int)((p / 100.0) * n + 0.999999);
    if (k < 1)
        k = 1;
    if (k > n)
        k = n;
    return v[k - 1];
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: startup_probe [--runs N] [--port P] [--path /healthz] [--ready-path /readyz]\n"
            "                     [--example-path /example] [--timeout S] [--kill-timeout S] [--quiet]\n"
            "                     [--cpu N] [--server-cpus LIST] -- CMD ARGS...\n"
            "Runs CMD N times (PORT=P in its environment) and times exec -> first 200 on each path.\n"
            "An empty --ready-path or --example-path skips that phase. --cpu pins the probe to CPU N;\n"
            "CMD then runs on --server-cpus (e.g. 0 or 0,2-3; default: the probe's CPUs less N).\n");
}

int main(int argc, char **argv)
{
    struct opts o = {
        .runs = 10, .port = 18080, .path = { "/healthz", "/readyz", "/example" },
        .timeout_s = 30.0, .kill_timeout_s = 10.0, .cpu = -1,
    };
    const char *server_cpus = NULL;
    static const struct option lo[] = {
        { "runs", required_argument, NULL, 'n' },
        { "port", required_argument, NULL, 'p' },
        { "path", required_argument, NULL, 'h' },
        { "ready-path", required_argument, NULL, 'r' },
        { "example-path", required_argument, NULL, 'e' },
        { "timeout", required_argument, NULL, 't' },
        { "kill-timeout", required_argument, NULL, 'k' },
        { "quiet", no_argument, NULL, 'q' },
        { "cpu", required_argument, NULL, 'c' },
        { "server-cpus", required_argument, NULL, 's' },
        { "help", no_argument, NULL, 'H' },
        { 0 },
    };
    int c;
    while ((c = getopt_long(argc, argv, "+n:p:h:r:e:t:k:qc:s:H", lo, NULL)) != -1) {
        switch (c) {
        case 'n': o.runs = atoi(optarg); break;
        case 'p': o.port = atoi(optarg); break;
        case 'h': o.path[PH_HEALTH] = optarg; break;
        case 'r': o.path[PH_READY] = optarg; break;
        case 'e': o.path[PH_EXAMPLE] = optarg; break;
        case 't': o.timeout_s = atof(optarg); break;
        case 'k': o.kill_timeout_s = atof(optarg); break;
        case 'q': o.quiet = true; break;
        case 'c': {
            char *end;
            long n = strtol(optarg, &end, 10);
            if (end == optarg || *end || n < 0 || n >= CPU_SETSIZE) {
                fprintf(stderr, "startup_probe: --cpu wants one CPU number, not '%s'\n", optarg);
                return 2;
            }
            o.cpu = (int)n;
            break;
        }
        case 's': server_cpus = optarg; break;
        case 'H': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind >= argc || o.runs < 1 || o.runs > MAX_RUNS || o.port < 1 || o.port > 65535 ||
        o.timeout_s <= 0) {
        usage(stderr);
        return 2;
    }
    /* Pinning (see the top of the file): the command's CPUs first, from the mask we were
     * started with, then the probe's own. */
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) < 0) {
        perror("startup_probe: sched_getaffinity");
        return 1;
    }
    if (server_cpus) {
        if (!parse_cpus(server_cpus, &o.server)) {
            fprintf(stderr, "startup_probe: --server-cpus wants a list like 0 or 0,2-3, not '%s'\n", server_cpus);
            return 2;
        }
        o.pin_server = true;
    } else if (o.cpu >= 0) {
        o.server = allowed;
        CPU_CLR(o.cpu, &o.server);
        o.pin_server = CPU_COUNT(&o.server) > 0; /* one CPU only: the command shares it */
    }
    if (o.cpu >= 0) {
        cpu_set_t mine;
        CPU_ZERO(&mine);
        CPU_SET(o.cpu, &mine);
        if (sched_setaffinity(0, sizeof mine, &mine) < 0) {
            fprintf(stderr, "startup_probe: cannot pin the probe to CPU %d: %s\n", o.cpu, strerror(errno));
            return 2;
        }
    }
    char **cmd = argv + optind;
    char portstr[16];
    snprintf(portstr, sizeof portstr, "%d", o.port);

    static double res[PH_COUNT][MAX_RUNS];
    int nres[PH_COUNT] = { 0 };
    bool offered[PH_COUNT] = { true, true, true };
    int failures = 0;

    for (int run = 1; run <= o.runs; run++) {
        if (!wait_port_free(o.port)) {
            fprintf(stderr, "startup_probe: port %d is still answering; is another server on it?\n", o.port);
            return 1;
        }
        double t0 = now_s();
        pid_t pid = fork();
        if (pid < 0) {
            perror("startup_probe: fork");
            return 1;
        }
        if (pid == 0) {
            setpgid(0, 0);
            setenv("PORT", portstr, 1);
            if (o.pin_server && sched_setaffinity(0, sizeof o.server, &o.server) < 0) {
                fprintf(stderr, "startup_probe: cannot pin the command to --server-cpus: %s\n", strerror(errno));
                _exit(127);
            }
            execvp(cmd[0], cmd);
            fprintf(stderr, "startup_probe: execvp %s: %s\n", cmd[0], strerror(errno));
            _exit(127);
        }
        setpgid(pid, pid); /* both sides, so kill(-pid) works whichever runs first */
        /* Both sides too: the new child waits on our CPU's run queue until we yield it,
         * up to a scheduler tick (4 ms at HZ=250) while we poll; moved from here it starts
         * at once on an idle server CPU. */
        if (o.pin_server)
            sched_setaffinity(pid, sizeof o.server, &o.server);

        bool exited = false;
        double t[PH_COUNT] = { -1, -1, -1 };
        for (int ph = 0; ph < PH_COUNT; ph++) {
            if (!o.path[ph][0] || !offered[ph])
                continue;
            t[ph] = poll_phase(&o, pid, &exited, o.path[ph], t0);
            if (t[ph] == -2) {
                offered[ph] = false; /* 404/405: this server has no such path */
                t[ph] = -1;
                if (ph == PH_HEALTH)
                    break;
                continue;
            }
            if (t[ph] < 0)
                break;
            res[ph][nres[ph]++] = t[ph] * 1e3;
        }
        if (t[PH_HEALTH] < 0)
            failures++;
        if (!o.quiet) {
            printf("run=%d healthz_ms=%.3f readyz_ms=%.3f example_ms=%.3f\n", run,
                   t[PH_HEALTH] < 0 ? -1 : t[PH_HEALTH] * 1e3, t[PH_READY] < 0 ? -1 : t[PH_READY] * 1e3,
                   t[PH_EXAMPLE] < 0 ? -1 : t[PH_EXAMPLE] * 1e3);
            fflush(stdout);
        }
        stop_child(&o, pid, exited);
    }

    for (int ph = 0; ph < PH_COUNT; ph++) {
        int n = nres[ph];
        if (n == 0) {
            printf("metric=%s path=%s runs=0 ok=0 %s\n", phase_name[ph], o.path[ph][0] ? o.path[ph] : "-",
                   !o.path[ph][0] ? "skipped" : offered[ph] ? "failed" : "not_offered");
            continue;
        }
        qsort(res[ph], (size_t)n, sizeof(double), cmp_double);
        printf("metric=%s path=%s runs=%d ok=%d median_ms=%.3f min_ms=%.3f p10_ms=%.3f p90_ms=%.3f max_ms=%.3f\n",
               phase_name[ph], o.path[ph], o.runs, n, pct(res[ph], n, 50), res[ph][0], pct(res[ph], n, 10),
               pct(res[ph], n, 90), res[ph][n - 1]);
    }
    return failures ? 1 : 0;
}
