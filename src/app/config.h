/* config.h - struct config: every tunable, from flags and environment.
 *
 * main.c fills it once before anything starts; afterwards it is read-only and
 * shared by all workers.
 *
 * owns: the one list of flags (CONFIG_FLAGS), from which come the struct, the
 * parser with its ranges, --help, README.md's flag table (--help-markdown)
 * and the ready line's settings. never: what a setting does (its users'), the
 * run-time facts the ready line adds (process.c: threads, CPUs, the backend).
 */
#ifndef PRIMED_CONFIG_H
#define PRIMED_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "dispatch.h"
#include "io.h"
#include "prime.h"
#include "url.h"
#include "worker.h"

/* Workers per process at most: --threads, --listeners and every per-worker
 * table of the server are bounded by it. */
#define CONFIG_WORKERS_MAX 1024

#define CONFIG_STR_(x) #x
#define CONFIG_STR(x)  CONFIG_STR_(x)

/* --db-sync: what an answered event survives (the row's meaning says it per store). */
enum config_sync { CONFIG_SYNC_FAST, CONFIG_SYNC_NORMAL, CONFIG_SYNC_FULL };

/* --prime-vector: how the sieve engine runs its base-2 tests (enum prime_vector):
 * auto and on the best the CPU has (on refuses to start with none), off the
 * scalar engine, or one engine forced (refused where the CPU lacks it). */
enum config_vector {
    CONFIG_VECTOR_AUTO,
    CONFIG_VECTOR_ON,
    CONFIG_VECTOR_OFF,
    CONFIG_VECTOR_IFMA,
    CONFIG_VECTOR_AVX512,
    CONFIG_VECTOR_AVX2,
};

/* The kinds of value a flag takes: config.c has one parser, one range check
 * and one printer for each. */
enum config_kind {
    CK_TEXT,     /* char[N]: at most N-1 bytes, then the row's check, if any */
    CK_UINT,     /* unsigned (or int) in LO..HI */
    CK_ULONG,    /* unsigned long in LO..HI */
    CK_MS,       /* a duration ("30", "1.5s", "250ms") in LO..HI ms, kept in ms */
    CK_PCT,      /* double, 0..100 */
    CK_ONOFF,    /* bool: on or off */
    CK_CHOICE,   /* one of the row's names ("a|b|c"), kept as its index (a bool or an enum in that order) */
    CK_URL,      /* struct url: a full http:// URL; "" unsets */
    CK_BASE_URL, /* struct url: a base http:// URL (no query, no trailing slash); "" unsets */
    CK_CUSTOM,   /* the row's own parser and printer */
};

/* Every flag that sets a field of struct config, in the order --help and README.md list them:
 *
 *   X(ID, TYPE, FIELD, DIM, KIND, LO, HI, EXTRA, FLAG, ENVIRONMENT, DEFAULT, SHOWN, READY, MEANING)
 *
 *   TYPE FIELD DIM  the struct member (DIM: "[N]" for text, else empty)
 *   KIND LO HI      how it parses (enum config_kind) and its range (ms for durations)
 *   EXTRA           in parentheses, designated initializers of struct config_opt (config.c): .what
 *                   (the noun of its error message), .choices, .check, .custom
 *   DEFAULT         what config_defaults() gives the flag's own parser; "" leaves the field zero
 *   SHOWN           the default cell when it is not DEFAULT itself: what zero means ("none")
 *   READY           its key on the ready line, or NULL where process.c writes what is in effect
 *   MEANING         one paragraph, Markdown: `code` in backticks, which --help drops; the range of a
 *                   number is not typed here: --help and README.md append it from LO and HI
 */
#define CONFIG_FLAGS(X)                                                                                           \
    X(HOST, char, host, [64], CK_TEXT, 0, 0, (.check = check_host), "host", "PRIMED_HOST", "0.0.0.0", NULL, "host", \
      "listen address (numeric IPv4/IPv6)")                                                                       \
    X(PORT, int, port, , CK_UINT, 0, 65535, (.what = "a port"), "port", "PORT", "8080", NULL, NULL,                 \
      "TCP port; 0 picks a free one (the ready line says which)")                                                 \
    X(THREADS, unsigned, threads, , CK_UINT, 1, CONFIG_WORKERS_MAX, (.what = "a thread count"), "threads",          \
      "PRIMED_THREADS", "", "CPUs usable", NULL,                                                                  \
      "workers, one pinned per CPU; by default one per CPU of the affinity mask capped by the cgroup CPU quota "  \
      "(v2 `cpu.max`, v1 `cpu.cfs_quota_us`/`cpu.cfs_period_us`; rounded up)")                                    \
    X(BITS, unsigned, bits, , CK_UINT, PRIME_BITS_MIN, PRIME_BITS_MAX, (.what = "a bit size"), "bits",              \
      "PRIMED_BITS", CONFIG_STR(PRIME_BITS_DEFAULT), NULL, "bits", "default prime size of /example")              \
    X(DRAIN, unsigned, drain_timeout_ms, , CK_MS, 0, 3600 * 1000, (.what = "a duration"), "drain-timeout",          \
      "PRIMED_DRAIN_TIMEOUT", "30", NULL, "drain_timeout", "seconds to finish in-flight requests after SIGTERM")  \
    X(HEADER_TO, unsigned, header_timeout_ms, , CK_MS, 100, 3600 * 1000, (.what = "a duration"), "header-timeout",  \
      "PRIMED_HEADER_TIMEOUT", "10", NULL, "header_timeout",                                                      \
      "seconds for a request to arrive, from its first byte, before 408")                                         \
    X(IDLE_TO, unsigned, idle_timeout_ms, , CK_MS, 100, 24 * 3600 * 1000, (.what = "a duration"), "idle-timeout",   \
      "PRIMED_IDLE_TIMEOUT", "60", NULL, "idle_timeout",                                                          \
      "seconds an idle keep-alive connection is kept, and a request body may stall")                              \
    X(MAX_CONNS, unsigned, max_conns, , CK_UINT, 1, 1000000, (.what = "a connection count"), "max-conns",           \
      "PRIMED_MAX_CONNS", "10000", NULL, "max_conns",                                                             \
      "open connections before accept pauses, split evenly over the workers (backpressure, not 503; "             \
      "connections past it wait unread, never reset)")                                                            \
    X(MAX_HEADER, unsigned, max_header, , CK_UINT, 1024, 65536, (.what = "a size"), "max-header",                   \
      "PRIMED_MAX_HEADER", "16384", NULL, "max_header",                                                           \
      "request head limit in bytes, the read buffer of a connection with a request in hand (431 past it; a "      \
      "trailer section has the same limit)")                                                                      \
    X(MAX_URL, unsigned, max_url, , CK_UINT, 16, 65536, (.what = "a size"), "max-url", "PRIMED_MAX_URL", "8192",    \
      NULL, "max_url",                                                                                            \
      "request-target limit in bytes (414 past it); the default takes the 8000-octet request line RFC 9112 3 "    \
      "recommends")                                                                                               \
    X(MAX_BODY, unsigned long, max_body, , CK_ULONG, 0, 1UL << 40, (.what = "a size"), "max-body",                  \
      "PRIMED_MAX_BODY", "1048576", NULL, "max_body",                                                             \
      "request body limit in bytes (413 past it); bodies are read and discarded, but /echo's")                    \
    X(ECHO_ROUTE, bool, echo_route, , CK_ONOFF, 0, 0, (), "echo-route", "PRIMED_ECHO_ROUTE", "off", NULL,           \
      "echo_route",                                                                                               \
      "`on`: `/echo` answers GET and HEAD with a short body, POST and PUT with the request's body (up to "        \
      "--max-body), OPTIONS with `Allow`: a route that reads a body, for HTTP conformance suites "                \
      "(docs/http.md); `off`: /echo is 404")                                                                      \
    X(QUEUE_MAX, unsigned, queue_max, , CK_UINT, 1, 65536, (.what = "a queue bound"), "queue-max",                  \
      "PRIMED_QUEUE_MAX", "256", NULL, "queue_max", "queued /example tasks per worker before reads pause")        \
    X(ENGINE, enum prime_engine, engine, , CK_CHOICE, 0, 0, (.choices = "flint|sieve", .what = "a prime engine"),   \
      "prime-engine", "PRIMED_PRIME_ENGINE", "sieve", NULL, "engine",                                             \
      "`sieve` (its cost against FLINT's: docs/prime.md) or `flint` (the reference `fmpz_randprime`)")            \
    X(VECTOR, enum config_vector, prime_vector, , CK_CHOICE, 0, 0,                                                 \
      (.choices = "auto|on|off|ifma|avx512|avx2", .what = "a vector setting"), "prime-vector",                    \
      "PRIMED_PRIME_VECTOR", "auto", NULL, NULL,                                                                  \
      "how the sieve engine runs its base-2 tests: `auto` the best this CPU has (`ifma`: eight at once with "     \
      "AVX-512 IFMA, `avx512`: eight with AVX-512F, `avx2`: four with AVX2), `off` one at a time (the scalar "    \
      "engine of CPUs without them: the same primes, slower); `on` is `auto` but refuses to start without a "    \
      "vector engine, and a named one refuses to start where the CPU lacks it; the ready line and `--version` "  \
      "say which runs (docs/prime.md)")                                                                           \
    X(DISPATCH, enum dispatch_mode, dispatch, , CK_CUSTOM, 0, 0, (.custom = &custom_dispatch), "dispatch",          \
      "PRIMED_DISPATCH", DISPATCH_DEFAULT_NAME, "`steal` where built in", "dispatch",                             \
      "`inline` or `steal`, among those built in (`--version` says which)")                                       \
    X(PRIME_SPLIT, bool, prime_split, , CK_ONOFF, 0, 0, (), "prime-split", "PRIMED_PRIME_SPLIT", "on", NULL, NULL,  \
      "with `steal` and the sieve engine, a prime is shared with idle workers when no other request waits "      \
      "anywhere (docs/architecture.md); `off` keeps every prime on one core; inline never splits")                \
    X(IO, enum io_kind, io, , CK_CHOICE, 0, 0, (.choices = "auto|uring|epoll", .what = "an I/O backend"), "io",     \
      "PRIMED_IO", "auto", NULL, NULL, "`uring`, `epoll`, or `auto` (io_uring, epoll where it is blocked)")       \
    X(URING_POLL_FIRST, bool, uring_poll_first, , CK_ONOFF, 0, 0, (), "uring-poll-first", "PRIMED_URING_POLL_FIRST", \
      "off", NULL, "uring_poll_first",                                                                            \
      "`on`: a receive armed while a response is on its way carries `IORING_RECVSEND_POLL_FIRST` (kernel ≥ "      \
      "5.19; the kernel arms its poll at once instead of trying a receive that fails with `EAGAIN`). A "          \
      "comparison switch, off by default; io_uring only, the epoll backend accepts it and ignores it "            \
      "(docs/architecture.md)")                                                                                   \
    X(URING_SINGLE_SEND, bool, uring_single_send, , CK_ONOFF, 0, 0, (), "uring-single-send",                        \
      "PRIMED_URING_SINGLE_SEND", "on", NULL, "uring_single_send",                                                \
      "a response in one buffer goes out as `IORING_OP_SEND` instead of `SENDMSG` (kernel ≥ 5.6, probed; "        \
      "`SENDMSG` where it is missing); `off` keeps `SENDMSG` for comparison. io_uring only, the epoll "           \
      "backend accepts it and ignores it")                                                                        \
    X(URING_PROVIDED, bool, uring_provided, , CK_ONOFF, 0, 0, (), "uring-provided-buffers",                         \
      "PRIMED_URING_PROVIDED_BUFFERS", "on", NULL, "uring_provided_buffers",                                      \
      "a connection between requests waits with a receive whose bytes land in a buffer the kernel takes "         \
      "from a ring when they arrive (kernel ≥ 5.19; 128 buffers of 1 KiB per worker), so an idle keep-alive "     \
      "connection holds no buffer; `off`: each connection keeps its own read (--max-header) and 4 KiB write "     \
      "buffers, as the epoll backend does (docs/architecture.md)")                                                         \
    X(ACCESS_LOG, bool, access_log, , CK_CUSTOM, 0, 0, (.custom = &custom_access_log), "access-log",                \
      "PRIMED_ACCESS_LOG", "0", NULL, "access_log",                                                               \
      "`1`: one logfmt line per request on stdout, buffered per worker, never blocking it (lines stdout cannot "  \
      "take are dropped and counted on stderr)")                                                                  \
    X(ACCEPT, bool, shared_listener, , CK_CHOICE, 0, 0, (.choices = "reuseport|shared", .what = "an accept mode"),  \
      "accept", "PRIMED_ACCEPT", "reuseport", NULL, "accept",                                                     \
      "`reuseport` (a listener per worker) or `shared` (one listener for all; for comparison)")                   \
    X(LISTENERS, unsigned, listeners, , CK_UINT, 0, CONFIG_WORKERS_MAX, (.what = "a worker count"), "listeners",    \
      "PRIMED_LISTENERS", "0", "`0` (all)", NULL,                                                                 \
      "only the first N workers accept: `1` reproduces the skew of few long-lived connections on one core")       \
    X(CALLME_URL, struct url, callme, , CK_URL, 0, 0, (), "callme-url", "CALLME_URL", "", "none", "callme",         \
      "full `http://` URL `/caller/ping` calls (docs/chain.md); without it /caller/ping answers 404")             \
    X(UPSTREAM_TIMEOUT, unsigned, upstream_timeout_ms, , CK_MS, 10, 3600 * 1000, (.what = "a duration"),            \
      "upstream-timeout", "PRIMED_UPSTREAM_TIMEOUT", "3", NULL, "upstream_timeout",                               \
      "seconds an upstream call may take, connect to last byte, before 504")                                      \
    X(UPSTREAM_CONNS, unsigned, upstream_conns, , CK_UINT, 1, 1024, (.what = "a connection count"),                 \
      "upstream-conns", "PRIMED_UPSTREAM_CONNS", "64", NULL, "upstream_conns",                                    \
      "keep-alive connections (= calls in flight) per worker per upstream; more calls wait in order")             \
    X(ZIPKIN_URL, struct url, zipkin, , CK_URL, 0, 0, (), "zipkin-url", "PRIMED_ZIPKIN_URL", "", "none", "zipkin",  \
      "Zipkin v2 collector for the sampled spans (`/api/v2/spans`)")                                              \
    X(DB, char, db, [256], CK_TEXT, 0, 0, (.check = check_db), "db", "PRIMED_DB", ":memory:", NULL, NULL,           \
      "event store: in memory, a SQLite file (WAL), or PostgreSQL (`postgresql://user@host:port/db` or a libpq " \
      "keyword string; the password from `PGPASSWORD`); a route that stores an event answers once it is "       \
      "committed (docs/chain.md)")                                                                                \
    X(DB_SYNC, enum config_sync, db_sync, , CK_CHOICE, 0, 0, (.choices = "fast|normal|full", .what = "a sync mode"), \
      "db-sync", "PRIMED_DB_SYNC", "normal", NULL, "db_sync",                                                     \
      "what an answered event survives (docs/chain.md). `normal`: SQLite WAL with `synchronous=NORMAL` "        \
      "survives a killed primed, not a lost machine (the last commits may be in the page cache only); "         \
      "PostgreSQL `synchronous_commit=on` survives a killed primed and PostgreSQL's own crash-restart (its "   \
      "machine's too, with the server's `fsync=on`). `full`: "                                                     \
      "SQLite `synchronous=FULL` (an fsync per commit) also survives a lost machine; PostgreSQL as `normal`. "   \
      "`fast`: SQLite as `normal`; PostgreSQL `synchronous_commit=off`, no wait for the WAL flush per commit, " \
      "and a crash-restart of PostgreSQL loses the commits of up to its last 3 `wal_writer_delay` that were "   \
      "already answered")                                                                                         \
    X(DB_POOLER, bool, db_pooler_tx, , CK_CHOICE, 0, 0, (.choices = "session|transaction", .what = "a pooler mode"), \
      "db-pooler", "PRIMED_DB_POOLER", "session", NULL, "db_pooler",                                              \
      "PostgreSQL: `session` (each worker's connection is a server session: its INSERT prepared once, "        \
      "`synchronous_commit` set once) or `transaction`, for a transaction pooler such as PgBouncer's "          \
      "`pool_mode = transaction`, which keeps no session state between transactions: the INSERT goes unnamed "  \
      "and `synchronous_commit` with `SET LOCAL` in every transaction (docs/chain.md)")                          \
    X(DB_TIMEOUT, unsigned, db_timeout_ms, , CK_MS, 100, 3600 * 1000, (.what = "a duration"), "db-timeout",       \
      "PRIMED_DB_TIMEOUT", "2", NULL, "db_timeout",                                                               \
      "seconds from an event's submit to its answer: past it 503 (`not confirmed`: it may still commit; on "      \
      "PostgreSQL an event not yet sent: `nothing was stored`); on "                                              \
      "PostgreSQL also the bound of a connect and of a transaction in flight (the connection is dropped and "     \
      "made again) and its `tcp_user_timeout`. 2: a healthy commit takes milliseconds, so past 2 s the store is " \
      "stalled, not slow; and it is under `--upstream-timeout`'s default, so a caller passes on callme's 503 "    \
      "and its words rather than a 504 of its own (docs/chain.md)")                                              \
    X(CATALOG, char, catalog_file, [256], CK_TEXT, 0, 0, (), "catalog", "PRIMED_CATALOG", "", "built-in", NULL,     \
      "products of /api/catalog and /api/inventory: a file of "                                                   \
      "`ID<TAB>NAME<TAB>DESCRIPTION<TAB>PRICE<TAB>QUANTITY` lines (docs/gateway.md)")                             \
    X(CATALOG_URL, struct url, catalog_url, , CK_BASE_URL, 0, 0, (), "catalog-url", "PRIMED_CATALOG_URL", "",       \
      "none", "catalog_url",                                                                                      \
      "base `http://` URL of the catalog /api/products reads (`/api/catalog` appended); both this and "           \
      "`--inventory-url` or neither")                                                                             \
    X(INVENTORY_URL, struct url, inventory_url, , CK_BASE_URL, 0, 0, (), "inventory-url", "PRIMED_INVENTORY_URL",   \
      "", "none", "inventory_url",                                                                                \
      "base `http://` URL of the inventory /api/products asks per product (`/api/inventory/ID` appended); both "  \
      "this and `--catalog-url` or neither")                                                                      \
    X(FANOUT, bool, fanout_sequential, , CK_CHOICE, 0, 0, (.choices = "parallel|sequential", .what = "a fan-out"),  \
      "fanout", "PRIMED_FANOUT", "parallel", NULL, "fanout",                                                      \
      "`parallel` or `sequential` inventory calls, unless `?fanout=` says")                                       \
    X(FAULT_DELAY, unsigned, fault_delay_ms, , CK_MS, 0, 3600 * 1000, (.what = "a duration"), "fault-delay",        \
      "PRIMED_FAULT_DELAY", "0", NULL, "fault_delay",                                                             \
      "hold the matching requests this long (a timer on the ring), e.g. `3` or `500ms`; Istio's fixedDelay")      \
    X(FAULT_DELAY_PCT, double, fault_delay_pct, , CK_PCT, 0, 100, (.what = "a percentage"), "fault-delay-percent",  \
      "PRIMED_FAULT_DELAY_PERCENT", "100", NULL, "fault_delay_percent",                                           \
      "share of the matching requests `--fault-delay` holds")                                                     \
    X(FAULT_ABORT, unsigned, fault_abort, , CK_CUSTOM, 0, 0, (.custom = &custom_fault_abort), "fault-abort",        \
      "PRIMED_FAULT_ABORT", "", "none", "fault_abort",                                                            \
      "answer the matching requests with this status instead (400..504 of primed's), Istio's abort")              \
    X(FAULT_ABORT_PCT, double, fault_abort_pct, , CK_PCT, 0, 100, (.what = "a percentage"), "fault-abort-percent",  \
      "PRIMED_FAULT_ABORT_PERCENT", "100", NULL, "fault_abort_percent",                                           \
      "share of the matching requests `--fault-abort` answers")                                                   \
    X(FAULT_PATH, char, fault_path, [256], CK_TEXT, 0, 0, (.check = check_fault_path), "fault-path",                \
      "PRIMED_FAULT_PATH", "/", NULL, "fault_path", "path prefix the faults apply to; never /healthz, /readyz, /metrics")

/* Every setting, one field per row of CONFIG_FLAGS. */
struct config {
#define CONFIG_X_FIELD(id, type, field, dim, kind, lo, hi, extra, flag, env, def, shown, ready, meaning) type field dim;
    CONFIG_FLAGS(CONFIG_X_FIELD)
#undef CONFIG_X_FIELD
};

enum {
    CONFIG_OK = 0,
    CONFIG_HELP = 1,
    CONFIG_VERSION = 2,
    CONFIG_HELP_MARKDOWN = 3,
};

/* Fills *c with the defaults: each flag's default in the list, through its own parser. */
void config_defaults(struct config *c);

/* Applies environment variables read through getenv_fn (getenv in main.c, a
 * table in tests), then flags, which win. Returns CONFIG_OK, CONFIG_HELP,
 * CONFIG_HELP_MARKDOWN, CONFIG_VERSION, or -EINVAL with a one-line reason in err. */
int config_parse(struct config *c, int argc, char **argv, const char *(*getenv_fn)(const char *), char *err,
                 size_t errlen);

/* Writes the --help text to fd: every flag, its environment variable, default, meaning and range. */
void config_usage(int fd);

/* Writes the same list as README.md's flag table (Markdown) to fd: --help-markdown. */
void config_usage_markdown(int fd);

/* Writes " KEY=VALUE" for every flag with a ready-line key, in the list's
 * order, into out (NUL-terminated, cut at cap). Returns the length written. */
size_t config_ready(const struct config *c, char *out, size_t cap);

/* The workers' settings from cfg, with `listening` workers sharing
 * --max-conns: the one mapping, the server's and the test fixture's. */
void config_worker_opts(const struct config *cfg, unsigned listening, struct worker_opts *o);

/* Whether this binary was built with a dispatch mode. */
bool config_has_dispatch(enum dispatch_mode m);

const char *config_dispatch_name(enum dispatch_mode m);

/* The engine /example's base-2 tests run with under cfg on this CPU (the
 * scalar one with the flint engine, which has none): the ready line and
 * --version say it, example.c sets its prime state so. A setting this CPU
 * cannot run gives the best it has; config_vector_refusal() says so first. */
enum prime_vector config_vector(const struct config *cfg);

/* Why cfg's --prime-vector cannot run on this CPU (a forced engine it lacks,
 * or on without any), written into why; NULL when it can. */
const char *config_vector_refusal(const struct config *cfg, char *why, size_t len);

#endif
