/* config.h - struct config: every tunable, from flags and environment.
 *
 * main.c fills it once before anything starts; afterwards it is read-only and
 * shared by all workers.
 */
#ifndef PRIMED_CONFIG_H
#define PRIMED_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "dispatch.h"
#include "io.h"
#include "prime.h"
#include "url.h"

/* Workers per process at most: --threads, --listeners and every per-worker
 * table of the server are bounded by it. */
#define CONFIG_WORKERS_MAX 1024


struct config {
    char host[64];    /* listen address, numeric IPv4 or IPv6 */
    int port;         /* 0: ephemeral (the ready line says which) */
    unsigned threads; /* 0: one per usable CPU (affinity and cgroup quota) */
    unsigned bits;    /* default ?bits for /example */
    unsigned drain_timeout_ms;
    unsigned header_timeout_ms;
    unsigned idle_timeout_ms;
    unsigned max_conns;  /* process-wide; split evenly across workers */
    unsigned max_header; /* request head limit = read buffer per connection */
    unsigned max_url;
    unsigned long max_body;
    unsigned queue_max;   /* queued /example tasks per worker before backpressure */
    unsigned listeners;   /* workers that accept (0: all); fewer skews load on purpose */
    bool shared_listener; /* one listening socket for all workers instead of SO_REUSEPORT each */
    enum prime_engine engine;
    enum dispatch_mode dispatch;
    enum io_kind io;
    bool uring_poll_first;  /* --uring-poll-first: IORING_RECVSEND_POLL_FIRST behind a response */
    bool uring_single_send; /* --uring-single-send (default on): IORING_OP_SEND for a one-buffer response */
    bool uring_provided;    /* --uring-provided-buffers (default on): idle connections wait by select receive */
    bool access_log;

    /* the chain (upstream.h, store.h, spans.h); a URL with host[0] == '\0' is unset */
    struct url callme;            /* --callme-url: GET /caller/ping calls it */
    struct url zipkin;            /* --zipkin-url: spans are POSTed there */
    unsigned upstream_timeout_ms; /* a call's whole deadline: connect, send, answer */
    unsigned upstream_conns;      /* connections (= calls in flight) per worker per upstream */
    char db[256];                 /* the event store: ":memory:" or a file path */
    bool db_sync_full;            /* --db-sync full: an fsync per commit */
    bool db_pooler_tx;            /* --db-pooler transaction: no session state kept across transactions */
    unsigned db_timeout_ms;       /* --db-timeout: a request's wait for its commit, and PostgreSQL's work in flight */

    /* the gateway (gateway.h, catalog.h) */
    struct url catalog_url;   /* --catalog-url: base URL; GET /api/products calls its /api/catalog */
    struct url inventory_url; /* --inventory-url: base URL; and its /api/inventory/{itemId} */
    bool prime_split;         /* --prime-split: idle workers help a busy one's prime search (steal) */
    bool fanout_sequential;   /* --fanout: inventory calls one after another instead of in parallel */
    char catalog_file[256];   /* --catalog: the products to serve, or "" for the built-in set */

    /* fault injection (fault.h), Istio's semantics on the serving side */
    unsigned fault_delay_ms;  /* 0: none */
    double fault_delay_pct;   /* of the matching requests, 0..100 */
    unsigned fault_abort;     /* a status to answer, 0: none */
    double fault_abort_pct;   /* 0..100 */
    char fault_path[256];     /* path prefix the faults apply to ("/": all but the probes and /metrics) */
};

enum {
    CONFIG_OK = 0,
    CONFIG_HELP = 1,
    CONFIG_VERSION = 2,
    CONFIG_HELP_MARKDOWN = 3,
};

/* Fills *c with the defaults: each flag's default in config.c's list, through its own parser. */
void config_defaults(struct config *c);

/* Applies environment variables read through getenv_fn (getenv in main.c, a
 * table in tests), then flags, which win. Returns CONFIG_OK, CONFIG_HELP,
 * CONFIG_HELP_MARKDOWN, CONFIG_VERSION, or -EINVAL with a one-line reason in err. */
int config_parse(struct config *c, int argc, char **argv, const char *(*getenv_fn)(const char *), char *err,
                 size_t errlen);

/* Writes the --help text to fd: every flag, its environment variable, default and meaning. */
void config_usage(int fd);

/* Writes the same list as README.md's flag table (Markdown) to fd: --help-markdown. */
void config_usage_markdown(int fd);

/* Whether this binary was built with a dispatch mode. */
bool config_has_dispatch(enum dispatch_mode m);

const char *config_dispatch_name(enum dispatch_mode m);

#endif
