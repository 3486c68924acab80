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
#include "log.h"
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
#define PRIME_ENGINE_DEFAULT_NAME "sieve"
#define DISPATCH_DEFAULT_NAME     (PRIMED_HAVE_STEAL ? "steal" : "inline")

#define STR_(x) #x
#define STR(x)  STR_(x)

/* Every flag that sets a field of struct config, in the order --help and README.md list them:
 *
 *   X(ID, flag, environment, default, shown, meaning)
 *
 *   default  the value config_defaults() gives to the flag's own parser; "" leaves the field zero
 *   shown    the default cell when it is not `default` itself: what zero means ("none", "CPUs usable")
 *   meaning  one paragraph, Markdown: `code` in backticks, which --help drops; ranges as the parser has them
 *
 * --help, the environment variables, config_defaults() and README.md's flag table (--help-markdown)
 * all come from this list; tests/config_readme fails when README.md's table is not what it makes.
 */
#define CONFIG_FLAGS(X)                                                                                           \
    X(HOST, "host", "PRIMED_HOST", "0.0.0.0", NULL, "listen address (numeric IPv4/IPv6)")                         \
    X(PORT, "port", "PORT", "8080", NULL, "TCP port, 0..65535; 0 picks a free one (the ready line says which)")   \
    X(THREADS, "threads", "PRIMED_THREADS", "", "CPUs usable",                                                    \
      "workers, 1.." STR(CONFIG_WORKERS_MAX) ", one pinned per CPU; by default one per CPU of the affinity mask " \
      "capped by the cgroup CPU quota (v2 `cpu.max`, v1 `cpu.cfs_quota_us`/`cpu.cfs_period_us`; rounded up)")     \
    X(BITS, "bits", "PRIMED_BITS", STR(PRIME_BITS_DEFAULT), NULL,                                                 \
      "default prime size of /example, " STR(PRIME_BITS_MIN) ".." STR(PRIME_BITS_MAX))                            \
    X(DRAIN, "drain-timeout", "PRIMED_DRAIN_TIMEOUT", "30", NULL,                                                 \
      "seconds to finish in-flight requests after SIGTERM, 0..3600")                                              \
    X(HEADER_TO, "header-timeout", "PRIMED_HEADER_TIMEOUT", "10", NULL,                                           \
      "seconds for a request to arrive, from its first byte, before 408; 0.1..3600")                              \
    X(IDLE_TO, "idle-timeout", "PRIMED_IDLE_TIMEOUT", "60", NULL,                                                 \
      "seconds an idle keep-alive connection is kept, and a request body may stall; 0.1 s..24 h")                 \
    X(MAX_CONNS, "max-conns", "PRIMED_MAX_CONNS", "10000", NULL,                                                  \
      "open connections before accept pauses, 1..1000000, split evenly over the workers (backpressure, not "      \
      "503; connections past it wait unread, never reset)")                                                       \
    X(MAX_HEADER, "max-header", "PRIMED_MAX_HEADER", "8192", NULL,                                                \
      "request head limit in bytes, 1024..65536 (431 past it)")                                                   \
    X(MAX_URL, "max-url", "PRIMED_MAX_URL", "2048", NULL, "URL limit in bytes, 16..65536 (414 past it)")          \
    X(MAX_BODY, "max-body", "PRIMED_MAX_BODY", "1048576", NULL,                                                   \
      "request body limit in bytes, 0..2^40; bodies are read and discarded (413 past it)")                        \
    X(QUEUE_MAX, "queue-max", "PRIMED_QUEUE_MAX", "256", NULL,                                                    \
      "queued /example tasks per worker before reads pause, 1..65536")                                            \
    X(ENGINE, "prime-engine", "PRIMED_PRIME_ENGINE", PRIME_ENGINE_DEFAULT_NAME, NULL,                             \
      "`sieve` (~0.6× FLINT's time per prime) or `flint` (the reference `fmpz_randprime`); docs/prime.md")        \
    X(DISPATCH, "dispatch", "PRIMED_DISPATCH", DISPATCH_DEFAULT_NAME, "`steal` where built in",                   \
      "`inline` or `steal`, among those built in (`--version` says which)")                                       \
    X(PRIME_SPLIT, "prime-split", "PRIMED_PRIME_SPLIT", "on", NULL,                                               \
      "with `steal` and the sieve engine, a worker with nothing else to do tests pieces of another worker's "     \
      "prime search (docs/architecture.md); `off` keeps every search on one core; inline never splits")           \
    X(IO, "io", "PRIMED_IO", "auto", NULL, "`uring`, `epoll`, or `auto` (io_uring, epoll where it is blocked)")   \
    X(URING_POLL_FIRST, "uring-poll-first", "PRIMED_URING_POLL_FIRST", "off", NULL,                               \
      "`on`: a receive armed while a response is on its way carries `IORING_RECVSEND_POLL_FIRST` (kernel ≥ "      \
      "5.19; the kernel arms its poll at once instead of trying a receive that fails with `EAGAIN`). A "          \
      "comparison switch of issue 19; io_uring only, the epoll backend accepts it and ignores it "                \
      "(docs/architecture.md)")                                                                                   \
    /* on: measured, docs/benchmarks.md */                                                                        \
    X(URING_SINGLE_SEND, "uring-single-send", "PRIMED_URING_SINGLE_SEND", "on", NULL,                             \
      "a response in one buffer goes out as `IORING_OP_SEND` instead of `SENDMSG` (kernel ≥ 5.6, probed; "        \
      "`SENDMSG` where it is missing); `off` keeps `SENDMSG` for comparison. On since 2026-12-02: lower server "  \
      "CPU per `/healthz` than `SENDMSG` in two quiet runs (docs/benchmarks.md). io_uring only, the epoll "       \
      "backend accepts it and ignores it")                                                                        \
    X(URING_PROVIDED, "uring-provided-buffers", "PRIMED_URING_PROVIDED_BUFFERS", "on", NULL,                      \
      "a connection between requests waits with a receive whose bytes land in a buffer the kernel takes "         \
      "from a ring when they arrive (kernel ≥ 5.19; 128 buffers of 1 KiB per worker), so an idle keep-alive "     \
      "connection holds no buffer; `off`: each connection keeps its own 8 KiB read and 4 KiB write buffers, "     \
      "as the epoll backend does (docs/architecture.md)")                                                         \
    X(ACCESS_LOG, "access-log", "PRIMED_ACCESS_LOG", "0", NULL,                                                   \
      "`1`: one logfmt line per request on stdout, buffered per worker, never blocking it (lines stdout cannot "  \
      "take are dropped and counted on stderr)")                                                                  \
    X(ACCEPT, "accept", "PRIMED_ACCEPT", "reuseport", NULL,                                                       \
      "`reuseport` (a listener per worker) or `shared` (one listener for all; for comparison)")                   \
    X(LISTENERS, "listeners", "PRIMED_LISTENERS", "0", "`0` (all)",                                               \
      "only the first N workers accept, 0.." STR(CONFIG_WORKERS_MAX) ": `1` reproduces the skew of few "          \
      "long-lived connections on one core")                                                                       \
    X(CALLME_URL, "callme-url", "CALLME_URL", "", "none",                                                         \
      "full `http://` URL `/caller/ping` calls (docs/chain.md); without it /caller/ping answers 404")             \
    X(UPSTREAM_TIMEOUT, "upstream-timeout", "PRIMED_UPSTREAM_TIMEOUT", "3", NULL,                                 \
      "seconds an upstream call may take, connect to last byte, before 504; 0.01..3600")                          \
    X(UPSTREAM_CONNS, "upstream-conns", "PRIMED_UPSTREAM_CONNS", "64", NULL,                                      \
      "keep-alive connections (= calls in flight) per worker per upstream, 1..1024; more calls wait in order")    \
    X(ZIPKIN_URL, "zipkin-url", "PRIMED_ZIPKIN_URL", "", "none",                                                  \
      "Zipkin v2 collector for the sampled spans (`/api/v2/spans`)")                                              \
    X(DB, "db", "PRIMED_DB", ":memory:", NULL,                                                                    \
      "event store: in memory, a SQLite file (WAL), or PostgreSQL (`postgresql://user@host:port/db` or a libpq " \
      "keyword string; the password from `PGPASSWORD`); a route that stores an event answers once it is "       \
      "committed (docs/chain.md)")                                                                                \
    X(DB_SYNC, "db-sync", "PRIMED_DB_SYNC", "normal", NULL,                                                       \
      "what a committed event survives: `normal` a killed process (SQLite `synchronous=NORMAL` in WAL mode; "    \
      "PostgreSQL `synchronous_commit=off`), `full` also a lost machine (`synchronous=FULL`: an fsync per "      \
      "commit; `synchronous_commit=on`)")                                                                         \
    X(DB_POOLER, "db-pooler", "PRIMED_DB_POOLER", "session", NULL,                                                \
      "PostgreSQL: `session` (each worker's connection is a server session: its INSERT prepared once, "        \
      "`synchronous_commit` set once) or `transaction`, for a transaction pooler such as PgBouncer's "          \
      "`pool_mode = transaction`, which keeps no session state between transactions: the INSERT goes unnamed "  \
      "and `synchronous_commit` with `SET LOCAL` in every transaction (docs/chain.md)")                          \
    X(DB_TIMEOUT, "db-timeout", "PRIMED_DB_TIMEOUT", "2", NULL,                                                   \
      "seconds a request waits for its event's commit before 503 (`not confirmed`: it may still commit), "        \
      "0.1..3600; on PostgreSQL also the bound of a connect and of a transaction in flight (the connection is "   \
      "dropped and made again) and its `tcp_user_timeout`. 2: a healthy commit takes milliseconds, so past 2 s "   \
      "the store is stalled, not slow; and it is under `--upstream-timeout`'s default, so a caller passes on "    \
      "callme's 503 and its words rather than a 504 of its own (docs/chain.md)")                                 \
    X(CATALOG, "catalog", "PRIMED_CATALOG", "", "built-in",                                                       \
      "products of /api/catalog and /api/inventory: a file of "                                                   \
      "`ID<TAB>NAME<TAB>DESCRIPTION<TAB>PRICE<TAB>QUANTITY` lines (docs/gateway.md)")                             \
    X(CATALOG_URL, "catalog-url", "PRIMED_CATALOG_URL", "", "none",                                               \
      "base `http://` URL of the catalog /api/products reads (`/api/catalog` appended); both this and "           \
      "`--inventory-url` or neither")                                                                             \
    X(INVENTORY_URL, "inventory-url", "PRIMED_INVENTORY_URL", "", "none",                                         \
      "base `http://` URL of the inventory /api/products asks per product (`/api/inventory/ID` appended); both "  \
      "this and `--catalog-url` or neither")                                                                      \
    X(FANOUT, "fanout", "PRIMED_FANOUT", "parallel", NULL,                                                        \
      "`parallel` or `sequential` inventory calls, unless `?fanout=` says")                                       \
    X(FAULT_DELAY, "fault-delay", "PRIMED_FAULT_DELAY", "0", NULL,                                                \
      "hold the matching requests this long (a timer on the ring), 0..3600 s, e.g. `3` or `500ms`; Istio's "      \
      "fixedDelay")                                                                                               \
    X(FAULT_DELAY_PCT, "fault-delay-percent", "PRIMED_FAULT_DELAY_PERCENT", "100", NULL,                          \
      "share of the matching requests `--fault-delay` holds, 0..100")                                             \
    X(FAULT_ABORT, "fault-abort", "PRIMED_FAULT_ABORT", "", "none",                                               \
      "answer the matching requests with this status instead (400..504 of primed's), Istio's abort")              \
    X(FAULT_ABORT_PCT, "fault-abort-percent", "PRIMED_FAULT_ABORT_PERCENT", "100", NULL,                          \
      "share of the matching requests `--fault-abort` answers, 0..100")                                           \
    X(FAULT_PATH, "fault-path", "PRIMED_FAULT_PATH", "/", NULL,                                                   \
      "path prefix the faults apply to; never /healthz, /readyz, /metrics")

bool config_has_dispatch(enum dispatch_mode m)
{
    return m == DISPATCH_INLINE ? PRIMED_HAVE_INLINE : PRIMED_HAVE_STEAL;
}

const char *config_dispatch_name(enum dispatch_mode m)
{
    return m == DISPATCH_INLINE ? "inline" : "steal";
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
#define X_ID(id, flag, env, def, shown, meaning) OPT_##id,
    CONFIG_FLAGS(X_ID)
#undef X_ID
    /* the commands: no value, no environment */
    OPT_HELP,
    OPT_HELP_MARKDOWN,
    OPT_VERSION,
};

struct opt {
    const char *flag; /* without the leading "--" */
    const char *env;  /* NULL: a command */
    enum opt_id id;
    const char *def;     /* "": none, the field stays zero; NULL: a command */
    const char *shown;   /* the default as --help and README.md show it; NULL: def */
    const char *meaning; /* Markdown */
};

static const struct opt opts[] = {
#define X_OPT(id, flag, env, def, shown, meaning) {flag, env, OPT_##id, def, shown, meaning},
    CONFIG_FLAGS(X_OPT)
#undef X_OPT
        {"help", NULL, OPT_HELP, NULL, NULL, "print this help and exit"},
    {"help-markdown", NULL, OPT_HELP_MARKDOWN, NULL, NULL, "print this list as README.md's flag table and exit"},
    {"version", NULL, OPT_VERSION, NULL, NULL,
     "print the version, build profile, dispatch, compiler and flags and exit"},
};

#define NOPTS (sizeof(opts) / sizeof(opts[0]))

static bool is_command(const struct opt *o)
{
    return o->id >= OPT_HELP;
}

/* Columns of s up to its end, a UTF-8 character (the list's "≥", "×") as one. */
static size_t columns(const char *s, size_t n)
{
    size_t w = 0;
    for (size_t i = 0; i < n; i++)
        w += ((unsigned char)s[i] & 0xC0) != 0x80;
    return w;
}

/* Markdown text as plain words: backticks dropped, wrapped at 80 columns, each line indented. */
static void write_wrapped(int fd, const char *text, int indent)
{
    char line[256];
    size_t n = 0, width = 0;
    const char *p = text;
    while (*p) {
        while (*p == ' ')
            p++;
        const char *w = p;
        while (*p && *p != ' ')
            p++;
        char word[256];
        size_t wn = 0;
        for (const char *q = w; q < p && wn + 1 < sizeof(word); q++)
            if (*q != '`')
                word[wn++] = *q;
        if (wn == 0)
            continue;
        size_t ww = columns(word, wn);
        if (n > 0 && (size_t)indent + width + 1 + ww > 80) {
            dprintf(fd, "%*s%.*s\n", indent, "", (int)n, line);
            n = width = 0;
        }
        if (n + 1 + wn >= sizeof(line))
            wn = sizeof(line) - n - 2; /* no meaning has such a word */
        if (n > 0) {
            line[n++] = ' ';
            width++;
        }
        memcpy(line + n, word, wn);
        n += wn;
        width += ww;
    }
    if (n > 0)
        dprintf(fd, "%*s%.*s\n", indent, "", (int)n, line);
}

/* A default as --help shows it: shown without its backticks, or def. */
static void write_default(int fd, const struct opt *o)
{
    if (!o->shown) {
        dprintf(fd, "%s", o->def);
        return;
    }
    for (const char *s = o->shown; *s; s++)
        if (*s != '`')
            dprintf(fd, "%c", *s);
}

void config_usage(int fd)
{
    dprintf(fd, "usage: primed [options]\n\n"
                "A thread-per-core io_uring HTTP/1.1 server; GET /example answers with a\n"
                "random probable prime's worth of work. Every option is --NAME V or\n"
                "--NAME=V, or its environment variable; flags win over environment.\n"
                "Durations take 30, 1.5s or 250ms.\n\n");
    for (size_t i = 0; i < NOPTS; i++) {
        const struct opt *o = &opts[i];
        if (is_command(o)) {
            dprintf(fd, "  --%s\n", o->flag);
        } else {
            dprintf(fd, "  --%s V, $%s (default ", o->flag, o->env);
            write_default(fd, o);
            dprintf(fd, ")\n");
        }
        write_wrapped(fd, o->meaning, 6);
    }
    dprintf(fd, "\nEndpoints: GET|HEAD /example[?bits=N], /healthz, /readyz, /metrics, /ping,\n"
                "           /callme/ping, /caller/ping (with --callme-url), /api/catalog,\n"
                "           /api/inventory/ID, /api/products (with --catalog-url and --inventory-url)\n");
}

void config_usage_markdown(int fd)
{
    dprintf(fd, "| flag | environment | default | meaning |\n|---|---|---|---|\n");
    for (size_t i = 0; i < NOPTS; i++) {
        const struct opt *o = &opts[i];
        if (is_command(o))
            dprintf(fd, "| `--%s` | | | %s |\n", o->flag, o->meaning);
        else if (o->shown)
            dprintf(fd, "| `--%s` | `%s` | %s | %s |\n", o->flag, o->env, o->shown, o->meaning);
        else
            dprintf(fd, "| `--%s` | `%s` | `%s` | %s |\n", o->flag, o->env, o->def, o->meaning);
    }
}

static int apply(struct config *c, const struct opt *o, const char *v, const char *src, char *err, size_t errlen)
{
    unsigned long u;
    switch (o->id) {
    case OPT_HOST: {
        unsigned char tmp[16];
        if (strlen(v) >= sizeof(c->host) || (inet_pton(AF_INET, v, tmp) != 1 && inet_pton(AF_INET6, v, tmp) != 1))
            return log_einval(err, errlen, "%s: '%s' is not a numeric IPv4 or IPv6 address", src, v);
        strcpy(c->host, v);
        return 0;
    }
    case OPT_PORT:
        if (parse_ulong(v, 0, 65535, &u))
            return log_einval(err, errlen, "%s: '%s' is not a port (0..65535)", src, v);
        c->port = (int)u;
        return 0;
    case OPT_THREADS:
        if (parse_ulong(v, 1, CONFIG_WORKERS_MAX, &u))
            return log_einval(err, errlen, "%s: '%s' is not a thread count (1..%d)", src, v, CONFIG_WORKERS_MAX);
        c->threads = (unsigned)u;
        return 0;
    case OPT_BITS:
        if (parse_ulong(v, PRIME_BITS_MIN, PRIME_BITS_MAX, &u))
            return log_einval(err, errlen, "%s: '%s' is not a bit size (%d..%d)", src, v, PRIME_BITS_MIN, PRIME_BITS_MAX);
        c->bits = (unsigned)u;
        return 0;
    case OPT_DRAIN:
        if (parse_ms(v, 0, 3600 * 1000, &c->drain_timeout_ms))
            return log_einval(err, errlen, "%s: '%s' is not a duration (0..3600 s, e.g. 30 or 500ms)", src, v);
        return 0;
    case OPT_HEADER_TO:
        if (parse_ms(v, 100, 3600 * 1000, &c->header_timeout_ms))
            return log_einval(err, errlen, "%s: '%s' is not a duration (0.1..3600 s)", src, v);
        return 0;
    case OPT_IDLE_TO:
        if (parse_ms(v, 100, 24 * 3600 * 1000, &c->idle_timeout_ms))
            return log_einval(err, errlen, "%s: '%s' is not a duration (0.1 s..24 h)", src, v);
        return 0;
    case OPT_MAX_CONNS:
        if (parse_ulong(v, 1, 1000000, &u))
            return log_einval(err, errlen, "%s: '%s' is not a connection count (1..1000000)", src, v);
        c->max_conns = (unsigned)u;
        return 0;
    case OPT_MAX_HEADER:
        if (parse_ulong(v, 1024, 65536, &u))
            return log_einval(err, errlen, "%s: '%s' is not a size (1024..65536)", src, v);
        c->max_header = (unsigned)u;
        return 0;
    case OPT_MAX_URL:
        if (parse_ulong(v, 16, 65536, &u))
            return log_einval(err, errlen, "%s: '%s' is not a size (16..65536)", src, v);
        c->max_url = (unsigned)u;
        return 0;
    case OPT_MAX_BODY:
        if (parse_ulong(v, 0, 1UL << 40, &u))
            return log_einval(err, errlen, "%s: '%s' is not a size (0..2^40)", src, v);
        c->max_body = u;
        return 0;
    case OPT_QUEUE_MAX:
        if (parse_ulong(v, 1, 65536, &u))
            return log_einval(err, errlen, "%s: '%s' is not a queue bound (1..65536)", src, v);
        c->queue_max = (unsigned)u;
        return 0;
    case OPT_LISTENERS:
        if (parse_ulong(v, 0, CONFIG_WORKERS_MAX, &u))
            return log_einval(err, errlen, "%s: '%s' is not a worker count (0..%d)", src, v, CONFIG_WORKERS_MAX);
        c->listeners = (unsigned)u;
        return 0;
    case OPT_ACCEPT:
        if (strcmp(v, "reuseport") == 0)
            c->shared_listener = false;
        else if (strcmp(v, "shared") == 0)
            c->shared_listener = true;
        else
            return log_einval(err, errlen, "%s: '%s' is not an accept mode (reuseport or shared)", src, v);
        return 0;
    case OPT_ENGINE:
        if (prime_engine_parse(v, &c->engine))
            return log_einval(err, errlen, "%s: '%s' is not a prime engine (flint or sieve)", src, v);
        return 0;
    case OPT_PRIME_SPLIT:
        if (parse_onoff(v, &c->prime_split))
            return log_einval(err, errlen, "%s: '%s' is not on or off", src, v);
        return 0;
    case OPT_DISPATCH:
        if (strcmp(v, "inline") == 0)
            c->dispatch = DISPATCH_INLINE;
        else if (strcmp(v, "steal") == 0)
            c->dispatch = DISPATCH_STEAL;
        else
            return log_einval(err, errlen, "%s: '%s' is not a dispatch mode (inline or steal)", src, v);
        if (!config_has_dispatch(c->dispatch))
            return log_einval(err, errlen, "%s: dispatch '%s' is not built into this binary (built: %s)", src, v,
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
            return log_einval(err, errlen, "%s: '%s' is not an I/O backend (uring, epoll or auto)", src, v);
        return 0;
    case OPT_URING_POLL_FIRST:
    case OPT_URING_SINGLE_SEND:
    case OPT_URING_PROVIDED: {
        bool *dst = o->id == OPT_URING_POLL_FIRST    ? &c->uring_poll_first
                    : o->id == OPT_URING_PROVIDED ? &c->uring_provided
                                                  : &c->uring_single_send;
        if (parse_onoff(v, dst))
            return log_einval(err, errlen, "%s: '%s' is not on or off", src, v);
        return 0;
    }
    case OPT_ACCESS_LOG:
        if (strcmp(v, "1") == 0 || strcmp(v, "true") == 0)
            c->access_log = true;
        else if (strcmp(v, "0") == 0 || strcmp(v, "false") == 0 || *v == '\0')
            c->access_log = false;
        else
            return log_einval(err, errlen, "%s: '%s' is not 0 or 1", src, v);
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
            return log_einval(err, errlen, "%s: '%.300s': %s", src, v, why);
        return 0;
    }
    case OPT_UPSTREAM_TIMEOUT:
        if (parse_ms(v, 10, 3600 * 1000, &c->upstream_timeout_ms))
            return log_einval(err, errlen, "%s: '%s' is not a duration (0.01..3600 s, e.g. 3 or 300ms)", src, v);
        return 0;
    case OPT_UPSTREAM_CONNS:
        if (parse_ulong(v, 1, 1024, &u))
            return log_einval(err, errlen, "%s: '%s' is not a connection count (1..1024)", src, v);
        c->upstream_conns = (unsigned)u;
        return 0;
    case OPT_DB:
        if (*v == '\0' || strlen(v) >= sizeof(c->db))
            return log_einval(err, errlen, "%s: '%.300s' is not a path (:memory: or 1..%zu bytes)", src, v,
                              sizeof(c->db) - 1);
        strcpy(c->db, v);
        return 0;
    case OPT_DB_TIMEOUT:
        if (parse_ms(v, 100, 3600 * 1000, &c->db_timeout_ms))
            return log_einval(err, errlen, "%s: '%s' is not a duration (0.1..3600 s, e.g. 2 or 500ms)", src, v);
        return 0;
    case OPT_DB_POOLER:
        if (strcmp(v, "session") == 0)
            c->db_pooler_tx = false;
        else if (strcmp(v, "transaction") == 0)
            c->db_pooler_tx = true;
        else
            return log_einval(err, errlen, "%s: '%s' is not a pooler mode (session or transaction)", src, v);
        return 0;
    case OPT_DB_SYNC:
        if (strcmp(v, "normal") == 0)
            c->db_sync_full = false;
        else if (strcmp(v, "full") == 0)
            c->db_sync_full = true;
        else
            return log_einval(err, errlen, "%s: '%s' is not a sync mode (normal or full)", src, v);
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
            return log_einval(err, errlen, "%s: '%.300s': %s", src, v, why);
        if (strchr(dst->path, '?'))
            return log_einval(err, errlen, "%s: '%.300s': a base URL has no query (/api/... is appended to it)", src, v);
        size_t n = strlen(dst->path);
        while (n > 0 && dst->path[n - 1] == '/')
            dst->path[--n] = '\0'; /* "http://h/" and "http://h" are one base */
        if (n + sizeof("/api/inventory/") + 32 > sizeof(dst->path))
            return log_einval(err, errlen, "%s: '%.300s': the base path is too long", src, v);
        return 0;
    }
    case OPT_FANOUT:
        if (strcmp(v, "parallel") == 0)
            c->fanout_sequential = false;
        else if (strcmp(v, "sequential") == 0)
            c->fanout_sequential = true;
        else
            return log_einval(err, errlen, "%s: '%s' is not a fan-out (parallel or sequential)", src, v);
        return 0;
    case OPT_CATALOG:
        if (strlen(v) >= sizeof(c->catalog_file))
            return log_einval(err, errlen, "%s: '%.300s' is not a path (0..255 bytes)", src, v);
        strcpy(c->catalog_file, v);
        return 0;
    case OPT_FAULT_DELAY:
        if (parse_ms(v, 0, 3600 * 1000, &c->fault_delay_ms))
            return log_einval(err, errlen, "%s: '%s' is not a duration (0..3600 s, e.g. 3 or 500ms)", src, v);
        return 0;
    case OPT_FAULT_DELAY_PCT:
    case OPT_FAULT_ABORT_PCT:
        if (parse_pct(v, o->id == OPT_FAULT_DELAY_PCT ? &c->fault_delay_pct : &c->fault_abort_pct))
            return log_einval(err, errlen, "%s: '%s' is not a percentage (0..100)", src, v);
        return 0;
    case OPT_FAULT_ABORT:
        if (*v == '\0') {
            c->fault_abort = 0;
            return 0;
        }
        if (parse_ulong(v, 400, 599, &u) || !abort_code(u)) {
            char codes[128];
            return log_einval(err, errlen, "%s: '%s' is not a status primed answers (one of %s)", src, v,
                        abort_codes(codes, sizeof(codes)));
        }
        c->fault_abort = (unsigned)u;
        return 0;
    case OPT_FAULT_PATH:
        if (v[0] != '/' || strlen(v) >= sizeof(c->fault_path))
            return log_einval(err, errlen, "%s: '%.300s' is not a path prefix (starts with /, at most 255 bytes)", src, v);
        strcpy(c->fault_path, v);
        return 0;
    case OPT_HELP:
    case OPT_HELP_MARKDOWN:
    case OPT_VERSION:
        break;
    }
    return 0;
}

void config_defaults(struct config *c)
{
    memset(c, 0, sizeof(*c));
    for (size_t i = 0; i < NOPTS; i++) {
        char err[256];
        if (opts[i].def && opts[i].def[0] && apply(c, &opts[i], opts[i].def, "default", err, sizeof(err))) {
            dprintf(STDERR_FILENO, "primed: bad default in config.c's list: %s\n", err);
            abort(); /* the list is wrong: test_config's defaults test says which */
        }
    }
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
            return log_einval(err, errlen, "unexpected argument '%s' (see --help)", arg);
        const char *name = arg + 2;
        const char *eq = strchr(name, '=');
        size_t nlen = eq ? (size_t)(eq - name) : strlen(name);
        const struct opt *o = NULL;
        for (size_t i = 0; i < NOPTS; i++)
            if (strlen(opts[i].flag) == nlen && strncmp(opts[i].flag, name, nlen) == 0)
                o = &opts[i];
        if (!o)
            return log_einval(err, errlen, "unknown option '%.*s' (see --help)", (int)(nlen + 2), arg);
        if (o->id == OPT_HELP)
            return CONFIG_HELP;
        if (o->id == OPT_HELP_MARKDOWN)
            return CONFIG_HELP_MARKDOWN;
        if (o->id == OPT_VERSION)
            return CONFIG_VERSION;
        const char *v;
        if (eq)
            v = eq + 1;
        else if (a + 1 < argc)
            v = argv[++a];
        else
            return log_einval(err, errlen, "option '--%s' needs a value", o->flag);
        char src[40];
        snprintf(src, sizeof(src), "--%s", o->flag);
        int r = apply(c, o, v, src, err, errlen);
        if (r)
            return r;
    }
    if (!c->catalog_url.host[0] != !c->inventory_url.host[0])
        return log_einval(err, errlen,
                    "--catalog-url and --inventory-url go together: /api/products needs both (%s is unset)",
                    c->catalog_url.host[0] ? "--inventory-url" : "--catalog-url");
    return CONFIG_OK;
}
