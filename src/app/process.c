/* process.c - the process: CPU discovery, one pinned worker per core,
 * listeners, signals, drain and join.
 *
 * The main thread owns start-up (every error there is one clear line and a
 * non-zero exit) and signals: SIGTERM/SIGINT are blocked in every thread and
 * taken with sigtimedwait() here, so no handler ever runs on a worker.
 * Workers share nothing mutable except through dispatch (core/worker.c) and
 * the few atomics of struct workers and struct app. server_run() reads as
 * its steps: the app's state, the CPUs, the listeners, the workers, the
 * ready line, the wait for a signal, the drain.
 */
#define _GNU_SOURCE
#include "process.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "build_info.h"
#include "cgroup.h"
#include "clock.h"
#include "log.h"

/* CPUs this process may use: the affinity mask, capped by a cgroup CPU quota
 * (rounded up); at least 1. Fills cpus (up to max) with the allowed CPU ids
 * and returns the count to use; *quota_cpus gets the quota (0: none). */
static unsigned usable_cpus(int *cpus, unsigned max, unsigned *quota_cpus)
{
    unsigned n = 0;
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) == 0) {
        for (int i = 0; i < CPU_SETSIZE && n < max; i++)
            if (CPU_ISSET(i, &set))
                cpus[n++] = i;
    }
    if (n == 0) {
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        for (long i = 0; i < c && n < max; i++)
            cpus[n++] = (int)i;
    }
    if (n == 0) {
        cpus[0] = -1;
        n = 1;
    }
    unsigned q = cgroup_quota_cpus("/proc/self/cgroup", "/sys/fs/cgroup");
    if (quota_cpus)
        *quota_cpus = q;
    if (q && q < n)
        return q;
    return n;
}

static socklen_t fill_addr(const struct config *cfg, int port, struct sockaddr_storage *ss)
{
    memset(ss, 0, sizeof(*ss));
    struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
    if (inet_pton(AF_INET, cfg->host, &a4->sin_addr) == 1) {
        a4->sin_family = AF_INET;
        a4->sin_port = htons((uint16_t)port);
        return sizeof(*a4);
    }
    inet_pton(AF_INET6, cfg->host, &a6->sin6_addr);
    a6->sin6_family = AF_INET6;
    a6->sin6_port = htons((uint16_t)port);
    return sizeof(*a6);
}

/* Binds a throw-away socket without SO_REUSEPORT. Returns 0 or -errno
 * (-EADDRINUSE: something listens on the port). */
static int probe_port(const struct config *cfg, int port)
{
    struct sockaddr_storage ss;
    socklen_t len = fill_addr(cfg, port, &ss);
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    int one = 1, r = 0;
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) || bind(fd, (struct sockaddr *)&ss, len))
        r = -errno;
    close(fd);
    return r;
}

static int make_listener(const struct config *cfg, int port, int *bound_port)
{
    struct sockaddr_storage ss;
    socklen_t len = fill_addr(cfg, port, &ss);
    /* Non-blocking for every backend: epoll needs it, io_uring does not mind,
     * and which one runs is decided later, per worker (--io auto). */
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -errno;
    int one = 1;
    /* One listener per worker: the kernel spreads new connections over them
     * (SO_REUSEPORT, hashed on the 4-tuple), so no accept is shared between
     * threads. See docs/architecture.md for the measurement behind it. */
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
        setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) || bind(fd, (struct sockaddr *)&ss, len) ||
        listen(fd, SOMAXCONN)) {
        int e = errno;
        close(fd);
        return -e;
    }
    if (bound_port) {
        struct sockaddr_storage got;
        socklen_t gl = sizeof(got);
        getsockname(fd, (struct sockaddr *)&got, &gl);
        *bound_port = ntohs(got.ss_family == AF_INET ? ((struct sockaddr_in *)&got)->sin_port
                                                     : ((struct sockaddr_in6 *)&got)->sin6_port);
    }
    return fd;
}

static const char *env_or(const char *name, const char *def)
{
    const char *v = getenv(name);
    return v && *v ? v : def;
}

static void format_cpu_list(struct server *s)
{
    size_t off = 0;
    s->cpu_list[0] = '\0';
    for (unsigned i = 0; i < s->all.n && off < sizeof(s->cpu_list) - 8; i++) {
        if (s->cpus[i] < 0)
            off += (size_t)snprintf(s->cpu_list + off, sizeof(s->cpu_list) - off, "%sany", i ? "," : "");
        else
            off += (size_t)snprintf(s->cpu_list + off, sizeof(s->cpu_list) - off, "%s%d", i ? "," : "", s->cpus[i]);
    }
}

_Static_assert(CONFIG_WORKERS_MAX == WORKERS_MAX, "--threads is bounded by the core's table");

static int wait_workers(struct server *s, const struct config *cfg, sigset_t *set)
{
    /* returns when every worker has exited, or on timeout / second signal */
    uint64_t start = clock_mono_ns();
    for (;;) {
        if (atomic_load(&s->all.running) == 0)
            return 0;
        double waited = (double)(clock_mono_ns() - start) / 1e9;
        double left = (double)cfg->drain_timeout_ms / 1000.0 - waited;
        if (left <= 0) {
            long open = 0;
            for (unsigned i = 0; i < s->all.n; i++)
                open += atomic_load_explicit(&s->workers[i].pool.stats->conns_open, memory_order_relaxed);
            log_msg("drain timeout (%.1f s) reached with %ld connections still open; exiting", waited, open);
            return 1;
        }
        if (left > 0.05)
            left = 0.05;
        struct timespec ts = {0, (long)(left * 1e9)};
        int sig = sigtimedwait(set, NULL, &ts);
        if (sig == SIGTERM || sig == SIGINT) {
            log_msg("second %s during drain: exiting now", sig == SIGTERM ? "SIGTERM" : "SIGINT");
            return 1;
        }
    }
}

static void *worker_entry(void *arg)
{
    struct worker *w = arg;
    worker_main(w);
    atomic_fetch_sub(&w->all->running, 1);
    return NULL;
}

/* The app's process-wide state: /ping's names, K-Revision, the resolver of
 * the upstreams, and every service's start. */
static void app_start(struct server *s)
{
    const struct config *cfg = s->cfg;
    struct app *a = &s->app;
    a->cfg = cfg;
    a->workers = &s->all;
    a->start_time = (double)clock_wall_us() / 1e6;
    a->pod = env_or("POD_NAME", "unknown-pod");
    a->ns = env_or("POD_NAMESPACE", "unknown-namespace");
    a->name = env_or("APP_NAME", "primed");
    const char *rev = getenv("K_REVISION");
    if (rev && *rev) {
        /* only a header-safe token goes into a header */
        char clean[128];
        size_t n = 0;
        for (const char *p = rev; *p && n < sizeof(clean) - 1; p++)
            if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '-' ||
                *p == '.' || *p == '_')
                clean[n++] = *p;
        clean[n] = '\0';
        snprintf(a->revision_hdr, sizeof(a->revision_hdr), "K-Revision: %s\r\n", clean);
    }

    /* the services (services.h), in the table's order: the names they call
     * are given to the resolver (looked up now: a failure is not fatal,
     * Knative may create callme after the caller), the event store opened,
     * the catalog loaded. After the signal mask: their threads must not take
     * SIGTERM (its default action would kill the process instead of
     * draining it). */
    a->resolver = &s->resolver;
    resolver_init(a->resolver);
    each_service(sv) {
        if ((*sv)->start)
            (*sv)->start(a);
    }
    for (unsigned i = 0; i < a->resolver->n; i++) {
        const struct resolver_target *t = &a->resolver->targets[i];
        if (t->looked && !t->resolved)
            log_msg("cannot resolve %s (%s): calls to it fail with 502 until it resolves; retrying every %d ms",
                    t->url->host, t->err, RESOLVER_RETRY_MS);
    }
    if (resolver_start(a->resolver))
        die(1, "cannot start the resolver thread");
    each_service(sv) {
        if ((*sv)->run)
            (*sv)->run(a);
    }
}

static void app_stop(struct server *s)
{
    struct app *a = &s->app;
    each_service(sv) { /* the store writes what is queued */
        if ((*sv)->stop)
            (*sv)->stop(a);
    }
    resolver_fini(a->resolver);
}

/* How many workers, on which CPUs; and their settings. */
static void plan_workers(struct server *s)
{
    const struct config *cfg = s->cfg;
    unsigned usable = usable_cpus(s->cpus, WORKERS_MAX, &s->quota);
    unsigned ncpu_mask = usable;
    s->all.n = cfg->threads ? cfg->threads : usable;
    if (s->all.n > WORKERS_MAX)
        s->all.n = WORKERS_MAX;
    /* Pin worker i to the i-th allowed CPU; more workers than CPUs wrap. With
     * a quota smaller than the mask, the kernel still schedules us on any of
     * the mask's CPUs: pinning to the first `quota` ones keeps them apart. */
    for (unsigned i = ncpu_mask; i < s->all.n; i++)
        s->cpus[i] = s->cpus[i % ncpu_mask];
    format_cpu_list(s);

    unsigned listening = cfg->listeners && cfg->listeners < s->all.n ? cfg->listeners : s->all.n;
    config_worker_opts(cfg, listening, &s->opts);
    s->all.hooks = &app_worker_hooks;
    s->all.app = &s->app;
}

/* A listener per worker (or one shared, or only the first --listeners). */
static void open_listeners(struct server *s)
{
    const struct config *cfg = s->cfg;
    s->workers = calloc(s->all.n, sizeof(*s->workers));
    if (!s->workers)
        die(1, "cannot allocate %u workers: out of memory", s->all.n);
    s->app.w = s->workers;
    int port = cfg->port;
    /* Every listener sets SO_REUSEPORT, which would let this process share a
     * port with another primed of the same user (and take half its traffic).
     * A bind without it fails when anything listens there already. */
    if (port != 0) {
        int e = probe_port(cfg, port);
        if (e == -EADDRINUSE)
            die(2, "cannot listen on %s port %d: it is in use by another process", cfg->host, port);
    }
    for (unsigned i = 0; i < s->all.n; i++) {
        struct worker *w = &s->workers[i];
        w->all = &s->all;
        w->opts = &s->opts;
        w->id = i;
        w->cpu = s->cpus[i];
        s->all.dispatch[i] = &w->dispatch;
        int bound = 0;
        if (cfg->listeners && i >= cfg->listeners) {
            w->lfd = -1; /* --listeners: this worker only serves what others hand it */
            continue;
        }
        if (cfg->shared_listener && i > 0) {
            w->lfd = s->workers[0].lfd; /* --accept shared: worker 0 owns and closes it */
            continue;
        }
        w->lfd = make_listener(cfg, port, &bound);
        if (w->lfd < 0)
            die(2, "cannot listen on %s port %d: %s", cfg->host, port, strerror(-w->lfd));
        port = bound; /* --port 0: the others join the port the first one got */
    }
    s->port = port;
}

/* Starts the workers and waits for their set-up. Returns 0, or 1 when one
 * failed (said on stderr; the others are stopped and joined). */
static int start_workers(struct server *s)
{
    pthread_barrier_init(&s->all.start, NULL, s->all.n + 1);
    atomic_store(&s->all.running, (int)s->all.n);
    for (unsigned i = 0; i < s->all.n; i++) {
        int r = pthread_create(&s->workers[i].thread, NULL, worker_entry, &s->workers[i]);
        if (r)
            die(1, "cannot start worker %u: %s", i, strerror(r));
    }
    pthread_barrier_wait(&s->all.start);
    for (unsigned i = 0; i < s->all.n; i++) {
        if (s->workers[i].init_err) {
            log_msg("worker %u: %s", i, s->workers[i].init_why);
            atomic_store(&s->all.draining, 2);
            pthread_barrier_wait(&s->all.start);
            for (unsigned j = 0; j < s->all.n; j++)
                pthread_join(s->workers[j].thread, NULL);
            return 1;
        }
    }
    return 0;
}

/* The ready line: what runs (version, the backend, the workers and their
 * CPUs, the port, the split and vector unit in effect, each service's words:
 * the store without its password, the catalog), then every setting of the flag list (config_ready). */
static void say_ready(struct server *s)
{
    const struct config *cfg = s->cfg;
    const struct app *a = &s->app;
    const struct worker *w0 = &s->workers[0];
    char quota_txt[32] = "none", settings[3072], words[1024];
    if (s->quota)
        snprintf(quota_txt, sizeof(quota_txt), "%u", s->quota);
    config_ready(cfg, settings, sizeof(settings));
    size_t n = 0;
    words[0] = '\0';
    each_service(sv) {
        if ((*sv)->describe && n < sizeof(words))
            n += (*sv)->describe(a, words + n, sizeof(words) - n);
    }
    log_msg("ready version=%s profile=%s io=%s threads=%u cpus=%s cgroup_cpus=%s listeners=%u port=%d prime_split=%s "
            "prime_vector=%s%s%s",
            PRIMED_VERSION, PRIMED_PROFILE, w0->io.desc, s->all.n, s->cpu_list, quota_txt,
            cfg->listeners && cfg->listeners < s->all.n ? cfg->listeners : s->all.n, s->port,
            w0->dispatch.share ? "on" : "off", prime_vector_name(config_vector(cfg)), words, settings);
}

/* Blocks SIGTERM and SIGINT in every thread (inherited), for sigwait here. */
static void block_signals(sigset_t *set)
{
    signal(SIGPIPE, SIG_IGN);
    sigemptyset(set);
    sigaddset(set, SIGTERM);
    sigaddset(set, SIGINT);
    pthread_sigmask(SIG_BLOCK, set, NULL); /* inherited by every worker and helper thread */
}

/* Until SIGTERM or SIGINT; then the workers drain. Returns the exit status. */
static int serve_until_signal(struct server *s, sigset_t *set)
{
    const struct config *cfg = s->cfg;
    int sig;
    for (;;) {
        sig = sigwaitinfo(set, NULL);
        if (sig == SIGTERM || sig == SIGINT)
            break;
    }
    log_msg("%s: draining (readyz 503, finishing in-flight requests, up to %.1f s)",
            sig == SIGTERM ? "SIGTERM" : "SIGINT", (double)cfg->drain_timeout_ms / 1000.0);
    atomic_store(&s->all.draining, 1);
    for (unsigned i = 0; i < s->all.n; i++)
        io_wake(&s->workers[i].io);

    int status = wait_workers(s, cfg, set);
    if (status)
        return status; /* workers may still run: exit() ends them */
    for (unsigned i = 0; i < s->all.n; i++) {
        pthread_join(s->workers[i].thread, NULL);
        if (s->workers[i].lfd >= 0 && (i == 0 || !cfg->shared_listener))
            close(s->workers[i].lfd);
    }
    for (unsigned i = 0; i < s->all.n; i++)
        io_close_wake(&s->workers[i].io);
    return 0;
}

int server_run(const struct config *cfg)
{
    static struct server srv; /* one per process; workers point into it */
    struct server *s = &srv;
    s->cfg = cfg;
    char why[256];
    if (config_vector_refusal(cfg, why, sizeof(why)))
        die(2, "%s", why);
    sigset_t set;
    plan_workers(s);
    block_signals(&set);
    app_start(s);
    open_listeners(s);
    if (start_workers(s))
        return 1;
    say_ready(s);
    pthread_barrier_wait(&s->all.start);
    int status = serve_until_signal(s, &set);
    if (status)
        return status;
    app_stop(s);
    uint64_t served = atomic_load(&s->app.example_n);
    log_msg("drained: exiting (/example answered %llu times)", (unsigned long long)served);
    return 0;
}
