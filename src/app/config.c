/* config.c - flags and environment into struct config.
 *
 * Every value is range-checked here, before anything starts, so the rest of
 * the server never sees a bad one. A flag always wins over its environment
 * variable. No allocation: the struct holds everything by value.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "build_info.h"
#include "resp.h"

/* What --fault-abort may answer: the statuses of resp.h's table from 400 up
 * (each has its reason phrase and its metric label). */
#define X_CODE(code, text) code,
static const int statuses[] = {HTTP_STATUSES(X_CODE)};
#undef X_CODE

static bool abort_code(unsigned long u)
{
    for (size_t i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++)
        if (statuses[i] >= 400 && (unsigned long)statuses[i] == u)
            return true;
    return false;
}

/* Those statuses as "400 401 ..." into out. */
static const char *abort_codes(char *out, size_t cap)
{
    size_t n = 0;
    out[0] = '\0';
    for (size_t i = 0; i < sizeof(statuses) / sizeof(statuses[0]) && n + 5 < cap; i++)
        if (statuses[i] >= 400)
            n += (size_t)snprintf(out + n, cap - n, "%s%d", n ? " " : "", statuses[i]);
    return out;
}

/* The sieve engine is the default: same contract and strength as FLINT's
 * fmpz_randprime, ~0.6x its time (docs/prime.md). */
#define PRIME_ENGINE_DEFAULT      PRIME_ENGINE_SIEVE
#define PRIME_ENGINE_DEFAULT_NAME "sieve"

void config_defaults(struct config *c)
{
    memset(c, 0, sizeof(*c));
    strcpy(c->host, "0.0.0.0");
    c->port = 8080;
    c->threads = 0;
    c->bits = PRIME_BITS_DEFAULT;
    c->drain_timeout_ms = 30000;
    c->header_timeout_ms = 10000;
    c->idle_timeout_ms = 60000;
    c->max_conns = 10000;
    c->max_header = 8192;
    c->max_url = 2048;
    c->max_body = 1 << 20;
    c->queue_max = 256;
    c->engine = PRIME_ENGINE_DEFAULT;
    c->prime_split = true;
    c->uring_single_send = true; /* measured: docs/benchmarks.md, "Plaintext" */
    c->dispatch = PRIMED_HAVE_STEAL ? DISPATCH_STEAL : DISPATCH_INLINE;
    c->io = IO_AUTO;
    c->access_log = false;
    c->upstream_timeout_ms = 3000;
    c->upstream_conns = 64;
    strcpy(c->db, ":memory:");
    c->fault_delay_pct = 100.0;
    c->fault_abort_pct = 100.0;
    strcpy(c->fault_path, "/");
}

bool config_has_dispatch(enum dispatch_mode m)
{
    return m == DISPATCH_INLINE ? PRIMED_HAVE_INLINE : PRIMED_HAVE_STEAL;
}

const char *config_dispatch_name(enum dispatch_mode m)
{
    return m == DISPATCH_INLINE ? "inline" : "steal";
}

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -EINVAL;
}

/* Unsigned decimal in [lo, hi]; no sign, no trailing garbage. */
/* "on" or "off" into *out. Returns 0, or -1 for anything else. */
static int parse_onoff(const char *v, bool *out)
{
    if (strcmp(v, "on") != 0 && strcmp(v, "off") != 0)
        return -1;
    *out = v[1] == 'n';
    return 0;
}

static int parse_ulong(const char *s, unsigned long lo, unsigned long hi, unsigned long *out)
{
    if (!s || *s < '0' || *s > '9')
        return -EINVAL;
    errno = 0;
    char *end;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return -EINVAL;
    *out = v;
    return 0;
}

/* A percentage: a decimal number from 0 to 100 ("0.5", "50", "100"). */
static int parse_pct(const char *s, double *out)
{
    if (!s || ((*s < '0' || *s > '9') && *s != '.'))
        return -EINVAL;
    errno = 0;
    char *end;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= 0.0 && v <= 100.0))
        return -EINVAL;
    *out = v;
    return 0;
}

/* A duration: "1.5", "1.5s" or "250ms"; result in ms within [lo, hi]. */
static int parse_ms(const char *s, unsigned lo, unsigned hi, unsigned *out)
{
    if (!s || ((*s < '0' || *s > '9') && *s != '.'))
        return -EINVAL;
    errno = 0;
    char *end;
    double v = strtod(s, &end);
    if (errno || end == s)
        return -EINVAL;
    double ms;
    if (strcmp(end, "ms") == 0)
        ms = v;
    else if (*end == '\0' || strcmp(end, "s") == 0)
        ms = v * 1000.0;
    else
        return -EINVAL;
    if (!(ms >= lo && ms <= hi))
        return -EINVAL;
    *out = (unsigned)(ms + 0.5);
    return 0;
}

enum opt_id {
    OPT_HOST,
    OPT_PORT,
    OPT_THREADS,
    OPT_BITS,
    OPT_DRAIN,
    OPT_HEADER_TO,
    OPT_IDLE_TO,
    OPT_MAX_CONNS,
    OPT_MAX_HEADER,
    OPT_MAX_URL,
    OPT_MAX_BODY,
    OPT_QUEUE_MAX,
    OPT_LISTENERS,
    OPT_ACCEPT,
    OPT_ENGINE,
    OPT_PRIME_SPLIT,
    OPT_DISPATCH,
    OPT_IO,
    OPT_URING_POLL_FIRST,
    OPT_URING_SINGLE_SEND,
    OPT_ACCESS_LOG,
    OPT_CALLME_URL,
    OPT_ZIPKIN_URL,
    OPT_UPSTREAM_TIMEOUT,
    OPT_UPSTREAM_CONNS,
    OPT_DB,
    OPT_CATALOG_URL,
    OPT_INVENTORY_URL,
    OPT_FANOUT,
    OPT_CATALOG,
    OPT_FAULT_DELAY,
    OPT_FAULT_DELAY_PCT,
    OPT_FAULT_ABORT,
    OPT_FAULT_ABORT_PCT,
    OPT_FAULT_PATH,
    OPT_HELP,
    OPT_VERSION,
};

struct opt {
    const char *flag; /* without the leading "--" */
    const char *env;  /* NULL: flag only */
    enum opt_id id;
    bool takes_value;
    const char *help;
};

static const struct opt opts[] = {
    {"host", "PRIMED_HOST", OPT_HOST, true, "listen address (default 0.0.0.0)"},
    {"port", "PORT", OPT_PORT, true, "TCP port, 0 for any free one (default 8080)"},
    {"threads", "PRIMED_THREADS", OPT_THREADS, true,
     "worker threads, one per CPU (default: CPUs allowed by affinity and cgroup cpu.max)"},
    {"bits", "PRIMED_BITS", OPT_BITS, true, "default prime size for /example, 64..4096 (default 1000)"},
    {"drain-timeout", "PRIMED_DRAIN_TIMEOUT", OPT_DRAIN, true,
     "seconds to finish in-flight requests after SIGTERM (default 30)"},
    {"header-timeout", "PRIMED_HEADER_TIMEOUT", OPT_HEADER_TO, true,
     "seconds a request may take to arrive before 408 (default 10)"},
    {"idle-timeout", "PRIMED_IDLE_TIMEOUT", OPT_IDLE_TO, true,
     "seconds an idle keep-alive connection is kept (default 60)"},
    {"max-conns", "PRIMED_MAX_CONNS", OPT_MAX_CONNS, true, "open connections before accept pauses (default 10000)"},
    {"max-header", "PRIMED_MAX_HEADER", OPT_MAX_HEADER, true,
     "request head limit in bytes, 1024..65536; larger gets 431 (default 8192)"},
    {"max-url", "PRIMED_MAX_URL", OPT_MAX_URL, true, "URL limit in bytes; longer gets 414 (default 2048)"},
    {"max-body", "PRIMED_MAX_BODY", OPT_MAX_BODY, true,
     "request body limit in bytes, read and discarded; larger gets 413 (default 1048576)"},
    {"queue-max", "PRIMED_QUEUE_MAX", OPT_QUEUE_MAX, true,
     "queued /example requests per worker before reads pause (default 256)"},
    {"listeners", "PRIMED_LISTENERS", OPT_LISTENERS, true,
     "workers that accept connections, 0 = all (default 0); 1 puts every connection on worker 0, "
     "to test or measure skewed load"},
    {"accept", "PRIMED_ACCEPT", OPT_ACCEPT, true,
     "reuseport (a listening socket per worker, default) or shared (one socket, every worker accepts on it)"},
    {"prime-engine", "PRIMED_PRIME_ENGINE", OPT_ENGINE, true,
     "flint or sieve (default: " PRIME_ENGINE_DEFAULT_NAME ")"},
    {"prime-split", "PRIMED_PRIME_SPLIT", OPT_PRIME_SPLIT, true,
     "on or off: with --dispatch steal and the sieve engine, a worker that is asleep when a prime search starts "
     "is woken to test pieces of it (default on); inline dispatch never splits"},
    {"dispatch", "PRIMED_DISPATCH", OPT_DISPATCH, true,
     "inline or steal, among those built in (" PRIMED_DISPATCH_BUILT ")"},
    {"io", "PRIMED_IO", OPT_IO, true, "uring, epoll or auto (default auto)"},
    {"uring-poll-first", "PRIMED_URING_POLL_FIRST", OPT_URING_POLL_FIRST, true,
     "on or off: a receive armed behind a response polls before it reads (IORING_RECVSEND_POLL_FIRST, "
     "kernel >= 5.19); io_uring only, epoll accepts and ignores it (default off)"},
    {"uring-single-send", "PRIMED_URING_SINGLE_SEND", OPT_URING_SINGLE_SEND, true,
     "on or off: a response in one buffer goes out as IORING_OP_SEND instead of SENDMSG; io_uring only, "
     "epoll accepts and ignores it (default on)"},
    {"access-log", "PRIMED_ACCESS_LOG", OPT_ACCESS_LOG, true, "1 to log each request on stdout (default 0)"},
    {"callme-url", "CALLME_URL", OPT_CALLME_URL, true,
     "full http:// URL GET /caller/ping calls, e.g. http://callme.default.svc.cluster.local/callme/ping "
     "(default: none, /caller/ping answers 404)"},
    {"zipkin-url", "PRIMED_ZIPKIN_URL", OPT_ZIPKIN_URL, true,
     "Zipkin v2 collector to POST spans to, e.g. http://zipkin.istio-system.svc.cluster.local:9411/api/v2/spans "
     "(default: none)"},
    {"upstream-timeout", "PRIMED_UPSTREAM_TIMEOUT", OPT_UPSTREAM_TIMEOUT, true,
     "seconds an upstream call may take, connect to last byte, before 504 (default 3)"},
    {"upstream-conns", "PRIMED_UPSTREAM_CONNS", OPT_UPSTREAM_CONNS, true,
     "connections (calls in flight) per worker per upstream, 1..1024; more calls wait in order (default 64)"},
    {"db", "PRIMED_DB", OPT_DB, true, "event store: :memory: or a SQLite file path, WAL (default :memory:)"},
    {"catalog-url", "PRIMED_CATALOG_URL", OPT_CATALOG_URL, true,
     "base http:// URL of the catalog GET /api/products reads (its /api/catalog), e.g. "
     "http://catalog.default.svc.cluster.local (default: none; with --inventory-url, /api/products answers)"},
    {"inventory-url", "PRIMED_INVENTORY_URL", OPT_INVENTORY_URL, true,
     "base http:// URL of the inventory GET /api/products asks per product (its /api/inventory/ID) (default: none)"},
    {"fanout", "PRIMED_FANOUT", OPT_FANOUT, true,
     "parallel or sequential: how /api/products calls inventory, unless ?fanout= says (default parallel)"},
    {"catalog", "PRIMED_CATALOG", OPT_CATALOG, true,
     "products for /api/catalog and /api/inventory/ID: a file of lines ID<TAB>NAME<TAB>DESCRIPTION<TAB>PRICE"
     "<TAB>QUANTITY (default: a built-in set of 8)"},
    {"fault-delay", "PRIMED_FAULT_DELAY", OPT_FAULT_DELAY, true,
     "hold matching requests this long before answering, 0..3600 s, e.g. 3 or 500ms (default 0: none)"},
    {"fault-delay-percent", "PRIMED_FAULT_DELAY_PERCENT", OPT_FAULT_DELAY_PCT, true,
     "percentage of matching requests delayed, 0..100 (default 100)"},
    {"fault-abort", "PRIMED_FAULT_ABORT", OPT_FAULT_ABORT, true,
     "answer matching requests with this status instead, e.g. 503 (default: none)"},
    {"fault-abort-percent", "PRIMED_FAULT_ABORT_PERCENT", OPT_FAULT_ABORT_PCT, true,
     "percentage of matching requests aborted, 0..100 (default 100)"},
    {"fault-path", "PRIMED_FAULT_PATH", OPT_FAULT_PATH, true,
     "path prefix the faults apply to; /healthz, /readyz and /metrics never (default /)"},
    {"help", NULL, OPT_HELP, false, "print this help and exit"},
    {"version", NULL, OPT_VERSION, false, "print version and build profile and exit"},
};

#define NOPTS (sizeof(opts) / sizeof(opts[0]))

void config_usage(int fd)
{
    dprintf(fd, "usage: primed [options]\n\n"
                "A thread-per-core io_uring HTTP/1.1 server; GET /example answers with a\n"
                "random probable prime's worth of work. Flags win over environment.\n\n");
    for (size_t i = 0; i < NOPTS; i++) {
        char left[64];
        snprintf(left, sizeof(left), "--%s%s", opts[i].flag, opts[i].takes_value ? " V" : "");
        dprintf(fd, "  %-22s %s%s%s%s\n", left, opts[i].help, opts[i].env ? " [" : "", opts[i].env ? opts[i].env : "",
                opts[i].env ? "]" : "");
    }
    dprintf(fd, "\nEndpoints: GET|HEAD /example[?bits=N], /healthz, /readyz, /metrics, /ping,\n"
                "           /callme/ping, /caller/ping (with --callme-url), /api/catalog,\n"
                "           /api/inventory/ID, /api/products (with --catalog-url and --inventory-url)\n");
}

static int apply(struct config *c, const struct opt *o, const char *v, const char *src, char *err, size_t errlen)
{
    unsigned long u;
    switch (o->id) {
    case OPT_HOST: {
        unsigned char tmp[16];
        if (strlen(v) >= sizeof(c->host) || (inet_pton(AF_INET, v, tmp) != 1 && inet_pton(AF_INET6, v, tmp) != 1))
            return fail(err, errlen, "%s: '%s' is not a numeric IPv4 or IPv6 address", src, v);
        strcpy(c->host, v);
        return 0;
    }
    case OPT_PORT:
        if (parse_ulong(v, 0, 65535, &u))
            return fail(err, errlen, "%s: '%s' is not a port (0..65535)", src, v);
        c->port = (int)u;
        return 0;
    case OPT_THREADS:
        if (parse_ulong(v, 1, CONFIG_WORKERS_MAX, &u))
            return fail(err, errlen, "%s: '%s' is not a thread count (1..%d)", src, v, CONFIG_WORKERS_MAX);
        c->threads = (unsigned)u;
        return 0;
    case OPT_BITS:
        if (parse_ulong(v, PRIME_BITS_MIN, PRIME_BITS_MAX, &u))
            return fail(err, errlen, "%s: '%s' is not a bit size (%d..%d)", src, v, PRIME_BITS_MIN, PRIME_BITS_MAX);
        c->bits = (unsigned)u;
        return 0;
    case OPT_DRAIN:
        if (parse_ms(v, 0, 3600 * 1000, &c->drain_timeout_ms))
            return fail(err, errlen, "%s: '%s' is not a duration (0..3600 s, e.g. 30 or 500ms)", src, v);
        return 0;
    case OPT_HEADER_TO:
        if (parse_ms(v, 100, 3600 * 1000, &c->header_timeout_ms))
            return fail(err, errlen, "%s: '%s' is not a duration (0.1..3600 s)", src, v);
        return 0;
    case OPT_IDLE_TO:
        if (parse_ms(v, 100, 24 * 3600 * 1000, &c->idle_timeout_ms))
            return fail(err, errlen, "%s: '%s' is not a duration (0.1 s..24 h)", src, v);
        return 0;
    case OPT_MAX_CONNS:
        if (parse_ulong(v, 1, 1000000, &u))
            return fail(err, errlen, "%s: '%s' is not a connection count (1..1000000)", src, v);
        c->max_conns = (unsigned)u;
        return 0;
    case OPT_MAX_HEADER:
        if (parse_ulong(v, 1024, 65536, &u))
            return fail(err, errlen, "%s: '%s' is not a size (1024..65536)", src, v);
        c->max_header = (unsigned)u;
        return 0;
    case OPT_MAX_URL:
        if (parse_ulong(v, 16, 65536, &u))
            return fail(err, errlen, "%s: '%s' is not a size (16..65536)", src, v);
        c->max_url = (unsigned)u;
        return 0;
    case OPT_MAX_BODY:
        if (parse_ulong(v, 0, 1UL << 40, &u))
            return fail(err, errlen, "%s: '%s' is not a size (0..2^40)", src, v);
        c->max_body = u;
        return 0;
    case OPT_QUEUE_MAX:
        if (parse_ulong(v, 1, 65536, &u))
            return fail(err, errlen, "%s: '%s' is not a queue bound (1..65536)", src, v);
        c->queue_max = (unsigned)u;
        return 0;
    case OPT_LISTENERS:
        if (parse_ulong(v, 0, CONFIG_WORKERS_MAX, &u))
            return fail(err, errlen, "%s: '%s' is not a worker count (0..%d)", src, v, CONFIG_WORKERS_MAX);
        c->listeners = (unsigned)u;
        return 0;
    case OPT_ACCEPT:
        if (strcmp(v, "reuseport") == 0)
            c->shared_listener = false;
        else if (strcmp(v, "shared") == 0)
            c->shared_listener = true;
        else
            return fail(err, errlen, "%s: '%s' is not an accept mode (reuseport or shared)", src, v);
        return 0;
    case OPT_ENGINE:
        if (prime_engine_parse(v, &c->engine))
            return fail(err, errlen, "%s: '%s' is not a prime engine (flint or sieve)", src, v);
        return 0;
    case OPT_PRIME_SPLIT:
        if (parse_onoff(v, &c->prime_split))
            return fail(err, errlen, "%s: '%s' is not on or off", src, v);
        return 0;
    case OPT_DISPATCH:
        if (strcmp(v, "inline") == 0)
            c->dispatch = DISPATCH_INLINE;
        else if (strcmp(v, "steal") == 0)
            c->dispatch = DISPATCH_STEAL;
        else
            return fail(err, errlen, "%s: '%s' is not a dispatch mode (inline or steal)", src, v);
        if (!config_has_dispatch(c->dispatch))
            return fail(err, errlen, "%s: dispatch '%s' is not built into this binary (built: %s)", src, v,
                        PRIMED_DISPATCH_BUILT);
        return 0;
    case OPT_IO:
        if (strcmp(v, "uring") == 0)
            c->io = IO_URING;
        else if (strcmp(v, "epoll") == 0)
            c->io = IO_EPOLL;
        else if (strcmp(v, "auto") == 0)
            c->io = IO_AUTO;
        else
            return fail(err, errlen, "%s: '%s' is not an I/O backend (uring, epoll or auto)", src, v);
        return 0;
    case OPT_URING_POLL_FIRST:
    case OPT_URING_SINGLE_SEND: {
        bool *dst = o->id == OPT_URING_POLL_FIRST ? &c->uring_poll_first : &c->uring_single_send;
        if (parse_onoff(v, dst))
            return fail(err, errlen, "%s: '%s' is not on or off", src, v);
        return 0;
    }
    case OPT_ACCESS_LOG:
        if (strcmp(v, "1") == 0 || strcmp(v, "true") == 0)
            c->access_log = true;
        else if (strcmp(v, "0") == 0 || strcmp(v, "false") == 0 || *v == '\0')
            c->access_log = false;
        else
            return fail(err, errlen, "%s: '%s' is not 0 or 1", src, v);
        return 0;
    case OPT_CALLME_URL:
    case OPT_ZIPKIN_URL: {
        struct url *dst = o->id == OPT_CALLME_URL ? &c->callme : &c->zipkin;
        char why[160];
        if (*v == '\0') {
            dst->host[0] = '\0'; /* an empty variable is unset */
            return 0;
        }
        if (url_parse(v, dst, why, sizeof(why)))
            return fail(err, errlen, "%s: '%.300s': %s", src, v, why);
        return 0;
    }
    case OPT_UPSTREAM_TIMEOUT:
        if (parse_ms(v, 10, 3600 * 1000, &c->upstream_timeout_ms))
            return fail(err, errlen, "%s: '%s' is not a duration (0.01..3600 s, e.g. 3 or 300ms)", src, v);
        return 0;
    case OPT_UPSTREAM_CONNS:
        if (parse_ulong(v, 1, 1024, &u))
            return fail(err, errlen, "%s: '%s' is not a connection count (1..1024)", src, v);
        c->upstream_conns = (unsigned)u;
        return 0;
    case OPT_DB:
        if (*v == '\0' || strlen(v) >= sizeof(c->db))
            return fail(err, errlen, "%s: '%.300s' is not a path (:memory: or 1..255 bytes)", src, v);
        strcpy(c->db, v);
        return 0;
    case OPT_CATALOG_URL:
    case OPT_INVENTORY_URL: {
        struct url *dst = o->id == OPT_CATALOG_URL ? &c->catalog_url : &c->inventory_url;
        char why[160];
        if (*v == '\0') {
            dst->host[0] = '\0';
            return 0;
        }
        if (url_parse(v, dst, why, sizeof(why)))
            return fail(err, errlen, "%s: '%.300s': %s", src, v, why);
        if (strchr(dst->path, '?'))
            return fail(err, errlen, "%s: '%.300s': a base URL has no query (/api/... is appended to it)", src, v);
        size_t n = strlen(dst->path);
        while (n > 0 && dst->path[n - 1] == '/')
            dst->path[--n] = '\0'; /* "http://h/" and "http://h" are one base */
        if (n + sizeof("/api/inventory/") + 32 > sizeof(dst->path))
            return fail(err, errlen, "%s: '%.300s': the base path is too long", src, v);
        return 0;
    }
    case OPT_FANOUT:
        if (strcmp(v, "parallel") == 0)
            c->fanout_sequential = false;
        else if (strcmp(v, "sequential") == 0)
            c->fanout_sequential = true;
        else
            return fail(err, errlen, "%s: '%s' is not a fan-out (parallel or sequential)", src, v);
        return 0;
    case OPT_CATALOG:
        if (strlen(v) >= sizeof(c->catalog_file))
            return fail(err, errlen, "%s: '%.300s' is not a path (0..255 bytes)", src, v);
        strcpy(c->catalog_file, v);
        return 0;
    case OPT_FAULT_DELAY:
        if (parse_ms(v, 0, 3600 * 1000, &c->fault_delay_ms))
            return fail(err, errlen, "%s: '%s' is not a duration (0..3600 s, e.g. 3 or 500ms)", src, v);
        return 0;
    case OPT_FAULT_DELAY_PCT:
    case OPT_FAULT_ABORT_PCT:
        if (parse_pct(v, o->id == OPT_FAULT_DELAY_PCT ? &c->fault_delay_pct : &c->fault_abort_pct))
            return fail(err, errlen, "%s: '%s' is not a percentage (0..100)", src, v);
        return 0;
    case OPT_FAULT_ABORT:
        if (*v == '\0') {
            c->fault_abort = 0;
            return 0;
        }
        if (parse_ulong(v, 400, 599, &u) || !abort_code(u)) {
            char codes[128];
            return fail(err, errlen, "%s: '%s' is not a status primed answers (one of %s)", src, v,
                        abort_codes(codes, sizeof(codes)));
        }
        c->fault_abort = (unsigned)u;
        return 0;
    case OPT_FAULT_PATH:
        if (v[0] != '/' || strlen(v) >= sizeof(c->fault_path))
            return fail(err, errlen, "%s: '%.300s' is not a path prefix (starts with /, at most 255 bytes)", src, v);
        strcpy(c->fault_path, v);
        return 0;
    case OPT_HELP:
    case OPT_VERSION:
        break;
    }
    return 0;
}

int config_parse(struct config *c, int argc, char **argv, const char *(*getenv_fn)(const char *), char *err,
                 size_t errlen)
{
    err[0] = '\0';
    for (size_t i = 0; getenv_fn && i < NOPTS; i++) {
        if (!opts[i].env)
            continue;
        const char *v = getenv_fn(opts[i].env);
        if (!v)
            continue;
        int r = apply(c, &opts[i], v, opts[i].env, err, errlen);
        if (r)
            return r;
    }

    for (int a = 1; a < argc; a++) {
        const char *arg = argv[a];
        if (strncmp(arg, "--", 2) != 0 || arg[2] == '\0')
            return fail(err, errlen, "unexpected argument '%s' (see --help)", arg);
        const char *name = arg + 2;
        const char *eq = strchr(name, '=');
        size_t nlen = eq ? (size_t)(eq - name) : strlen(name);
        const struct opt *o = NULL;
        for (size_t i = 0; i < NOPTS; i++)
            if (strlen(opts[i].flag) == nlen && strncmp(opts[i].flag, name, nlen) == 0)
                o = &opts[i];
        if (!o)
            return fail(err, errlen, "unknown option '%.*s' (see --help)", (int)(nlen + 2), arg);
        if (o->id == OPT_HELP)
            return CONFIG_HELP;
        if (o->id == OPT_VERSION)
            return CONFIG_VERSION;
        const char *v;
        if (eq)
            v = eq + 1;
        else if (a + 1 < argc)
            v = argv[++a];
        else
            return fail(err, errlen, "option '--%s' needs a value", o->flag);
        char src[40];
        snprintf(src, sizeof(src), "--%s", o->flag);
        int r = apply(c, o, v, src, err, errlen);
        if (r)
            return r;
    }
    if (!c->catalog_url.host[0] != !c->inventory_url.host[0])
        return fail(err, errlen, "--catalog-url and --inventory-url go together: /api/products needs both (%s is unset)",
                    c->catalog_url.host[0] ? "--inventory-url" : "--catalog-url");
    return CONFIG_OK;
}
