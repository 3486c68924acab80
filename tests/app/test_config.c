/* test_config.c - flags and environment: defaults, precedence, every bad value. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "config.h"

static const char *const *env_table;

static const char *fake_env(const char *name)
{
    for (const char *const *e = env_table; e && *e; e += 2)
        if (strcmp(e[0], name) == 0)
            return e[1];
    return NULL;
}

static int parse(struct config *c, const char *const *env, int argc, const char **argv, char *err)
{
    env_table = env;
    config_defaults(c);
    return config_parse(c, argc, (char **)argv, fake_env, err, 256);
}

Test(config, defaults)
{
    struct config c;
    char err[256];
    const char *argv[] = {"primed"};
    cr_assert_eq(parse(&c, NULL, 1, argv, err), CONFIG_OK);
    cr_assert_eq(c.port, 8080);
    cr_assert_eq(c.threads, 0);
    cr_assert_eq(c.bits, 1000);
    cr_assert_str_eq(c.host, "0.0.0.0");
    cr_assert_eq(c.max_header, 16384);
    cr_assert_eq(c.db_sync, CONFIG_SYNC_NORMAL, "PostgreSQL's synchronous_commit = on by default");
}

/* config_defaults() runs each default of config.c's list through its flag's parser: every field
 * comes out as README.md's table says. */
Test(config, every_default_through_its_parser)
{
    struct config c;
    config_defaults(&c);
    cr_assert_eq(c.drain_timeout_ms, 30000);
    cr_assert_eq(c.header_timeout_ms, 10000);
    cr_assert_eq(c.idle_timeout_ms, 60000);
    cr_assert_eq(c.max_conns, 10000);
    cr_assert_eq(c.max_url, 8192);
    cr_assert_eq(c.max_body, 1UL << 20);
    cr_assert_eq(c.queue_max, 256);
    cr_assert_eq(c.listeners, 0);
    cr_assert(!c.shared_listener);
    cr_assert_eq(c.engine, PRIME_ENGINE_SIEVE);
    cr_assert(c.prime_split);
    cr_assert_eq(c.dispatch, config_has_dispatch(DISPATCH_STEAL) ? DISPATCH_STEAL : DISPATCH_INLINE);
    cr_assert_eq(c.io, IO_AUTO);
    cr_assert(!c.uring_poll_first);
    cr_assert(c.uring_single_send);
    cr_assert(!c.access_log);
    cr_assert_eq(c.callme.host[0], '\0');
    cr_assert_eq(c.zipkin.host[0], '\0');
    cr_assert_eq(c.upstream_timeout_ms, 3000);
    cr_assert_eq(c.upstream_conns, 64);
    cr_assert_str_eq(c.db, ":memory:");
    cr_assert_eq(c.db_timeout_ms, 2000);
    cr_assert(!c.db_pooler_tx);
    cr_assert_str_eq(c.catalog_file, "");
    cr_assert(!c.fanout_sequential);
    cr_assert_eq(c.fault_delay_ms, 0);
    cr_assert_float_eq(c.fault_delay_pct, 100.0, 1e-9);
    cr_assert_eq(c.fault_abort, 0);
    cr_assert_float_eq(c.fault_abort_pct, 100.0, 1e-9);
    cr_assert_str_eq(c.fault_path, "/");
}

Test(config, flag_wins_over_environment)
{
    struct config c;
    char err[256];
    const char *env[] = {"PORT", "9000", "PRIMED_THREADS", "3", NULL};
    const char *argv[] = {"primed", "--port", "9100"};
    cr_assert_eq(parse(&c, env, 3, argv, err), CONFIG_OK);
    cr_assert_eq(c.port, 9100);
    cr_assert_eq(c.threads, 3);
    const char *argv2[] = {"primed", "--port=0", "--drain-timeout", "250ms", "--idle-timeout=1.5"};
    cr_assert_eq(parse(&c, env, 5, argv2, err), CONFIG_OK);
    cr_assert_eq(c.port, 0);
    cr_assert_eq(c.drain_timeout_ms, 250);
    cr_assert_eq(c.idle_timeout_ms, 1500);
}

Test(config, help_and_version)
{
    struct config c;
    char err[256];
    const char *a[] = {"primed", "--help"};
    cr_assert_eq(parse(&c, NULL, 2, a, err), CONFIG_HELP);
    const char *b[] = {"primed", "--version"};
    cr_assert_eq(parse(&c, NULL, 2, b, err), CONFIG_VERSION);
    const char *m[] = {"primed", "--port", "1", "--help-markdown"};
    cr_assert_eq(parse(&c, NULL, 4, m, err), CONFIG_HELP_MARKDOWN);
}

Test(config, bad_values_are_one_line_errors)
{
    static const char *const flags[][2] = {
        {"--port", "70000"},       {"--port", "-1"},
        {"--port", "80x"},         {"--port", ""},
        {"--threads", "0"},        {"--threads", "2000"},
        {"--bits", "63"},          {"--bits", "4097"},
        {"--bits", "1e3"},         {"--drain-timeout", "soon"},
        {"--drain-timeout", "-1"}, {"--header-timeout", "0"},
        {"--idle-timeout", "5m"},  {"--max-conns", "0"},
        {"--max-header", "100"},   {"--max-url", "8"},
        {"--queue-max", "0"},      {"--prime-engine", "magic"},
        {"--dispatch", "threads"}, {"--io", "kqueue"},
        {"--host", "localhost"},   {"--host", "1.2.3.4.5"},
        {"--access-log", "yes"},   {"--callme-url", "https://callme/ping"},
        {"--callme-url", "callme"}, {"--zipkin-url", "http://:9411/"},
        {"--upstream-timeout", "0"}, {"--upstream-timeout", "5ms"},
        {"--upstream-conns", "0"}, {"--upstream-conns", "1025"},
        {"--db", ""},              {"--db-timeout", "0"},
        {"--db-timeout", "50ms"},  {"--db-timeout", "soon"},
        {"--db-pooler", "statement"},
    };
    for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
        struct config c;
        char err[256];
        const char *argv[] = {"primed", flags[i][0], flags[i][1]};
        cr_assert_eq(parse(&c, NULL, 3, argv, err), -EINVAL, "%s %s", flags[i][0], flags[i][1]);
        cr_assert(strlen(err) > 10, "%s: message '%s'", flags[i][0], err);
        cr_assert_null(strchr(err, '\n'), "one line: %s", err);
        cr_assert_not_null(strstr(err, flags[i][0]), "names the flag: %s", err);
    }
}

Test(config, bad_environment_names_the_variable)
{
    struct config c;
    char err[256];
    const char *env[] = {"PORT", "abc", NULL};
    const char *argv[] = {"primed"};
    cr_assert_eq(parse(&c, env, 1, argv, err), -EINVAL);
    cr_assert_not_null(strstr(err, "PORT"), "%s", err);
}

Test(config, unknown_and_incomplete_flags)
{
    struct config c;
    char err[256];
    const char *a[] = {"primed", "--nope"};
    cr_assert_eq(parse(&c, NULL, 2, a, err), -EINVAL);
    cr_assert_not_null(strstr(err, "--nope"));
    const char *b[] = {"primed", "--port"};
    cr_assert_eq(parse(&c, NULL, 2, b, err), -EINVAL);
    const char *d[] = {"primed", "stray"};
    cr_assert_eq(parse(&c, NULL, 2, d, err), -EINVAL);
}

Test(config, dispatch_must_be_built)
{
    struct config c;
    char err[256];
    for (int m = DISPATCH_INLINE; m <= DISPATCH_STEAL; m++) {
        const char *argv[] = {"primed", "--dispatch", config_dispatch_name((enum dispatch_mode)m)};
        int r = parse(&c, NULL, 3, argv, err);
        if (config_has_dispatch((enum dispatch_mode)m))
            cr_assert_eq(r, CONFIG_OK);
        else
            cr_assert_eq(r, -EINVAL);
    }
}

Test(config, chain_flags_and_their_environment)
{
    struct config c;
    char err[256];
    const char *argv[] = {"primed"};
    cr_assert_eq(parse(&c, NULL, 1, argv, err), CONFIG_OK);
    cr_assert_eq(c.callme.host[0], '\0', "no --callme-url: /caller/ping is off");
    cr_assert_eq(c.zipkin.host[0], '\0');
    cr_assert_eq(c.upstream_timeout_ms, 3000);
    cr_assert_eq(c.upstream_conns, 64);
    cr_assert_str_eq(c.db, ":memory:");

    const char *env[] = {"CALLME_URL", "http://callme.default.svc.cluster.local/callme/ping",
                         "PRIMED_ZIPKIN_URL", "http://zipkin.istio-system:9411/api/v2/spans",
                         "PRIMED_UPSTREAM_TIMEOUT", "250ms", "PRIMED_UPSTREAM_CONNS", "8",
                         "PRIMED_DB", "/data/events.db", "PRIMED_DB_TIMEOUT", "750ms", "PRIMED_DB_POOLER",
                         "transaction", NULL};
    cr_assert_eq(parse(&c, env, 1, argv, err), CONFIG_OK, "%s", err);
    cr_assert_str_eq(c.callme.host, "callme.default.svc.cluster.local");
    cr_assert_eq(c.callme.port, 80);
    cr_assert_str_eq(c.callme.path, "/callme/ping");
    cr_assert_str_eq(c.zipkin.authority, "zipkin.istio-system:9411");
    cr_assert_eq(c.upstream_timeout_ms, 250);
    cr_assert_eq(c.upstream_conns, 8);
    cr_assert_str_eq(c.db, "/data/events.db");
    cr_assert_eq(c.db_timeout_ms, 750);
    cr_assert(c.db_pooler_tx);

    const char *argv2[] = {"primed", "--callme-url", "http://127.0.0.1:9/x", "--upstream-timeout", "2"};
    cr_assert_eq(parse(&c, env, 5, argv2, err), CONFIG_OK, "%s", err);
    cr_assert_str_eq(c.callme.authority, "127.0.0.1:9", "the flag wins");
    cr_assert_eq(c.upstream_timeout_ms, 2000, "seconds, like every duration flag");

    const char *empty[] = {"CALLME_URL", "", NULL};
    cr_assert_eq(parse(&c, empty, 1, argv, err), CONFIG_OK);
    cr_assert_eq(c.callme.host[0], '\0', "an empty variable is unset");
}

static int parse1(struct config *c, const char *flag, const char *value, char *err)
{
    const char *argv[] = {"primed", flag, value};
    return parse(c, NULL, 3, argv, err);
}

/* Every {flag, value} of bad is refused with one line that names the flag
 * and, when says is not NULL, contains it. */
static void assert_refused(const char *const bad[][2], size_t n, const char *says)
{
    for (size_t i = 0; i < n; i++) {
        struct config c;
        char err[256];
        cr_assert_eq(parse1(&c, bad[i][0], bad[i][1], err), -EINVAL, "%s '%s'", bad[i][0], bad[i][1]);
        cr_assert_not_null(strstr(err, bad[i][0]), "names the flag: %s", err);
        if (says)
            cr_assert_not_null(strstr(err, says), "says what it takes: %s", err);
        cr_assert_null(strchr(err, '\n'), "one line: %s", err);
    }
}

Test(config, gateway_flags_and_their_environment)
{
    struct config c;
    char err[256];
    const char *argv[] = {"primed"};
    cr_assert_eq(parse(&c, NULL, 1, argv, err), CONFIG_OK);
    cr_assert_eq(c.catalog_url.host[0], '\0', "no gateway by default");
    cr_assert_eq(c.inventory_url.host[0], '\0');
    cr_assert(!c.fanout_sequential, "parallel by default");
    cr_assert_str_eq(c.catalog_file, "");

    const char *both[] = {"primed", "--catalog-url", "http://127.0.0.1:8081/", "--inventory-url",
                          "http://inv.default.svc:8082/shop//"};
    cr_assert_eq(parse(&c, NULL, 5, both, err), CONFIG_OK, "%s", err);
    cr_assert_str_eq(c.catalog_url.host, "127.0.0.1");
    cr_assert_eq(c.catalog_url.port, 8081);
    cr_assert_str_eq(c.catalog_url.path, "", "a trailing slash is dropped: the paths are appended");
    cr_assert_str_eq(c.inventory_url.authority, "inv.default.svc:8082");
    cr_assert_str_eq(c.inventory_url.path, "/shop");
    const char *bare[] = {"primed", "--catalog-url=http://c", "--inventory-url=http://i:9"};
    cr_assert_eq(parse(&c, NULL, 3, bare, err), CONFIG_OK, "%s", err);
    cr_assert_str_eq(c.catalog_url.path, "");
    cr_assert_eq(c.catalog_url.port, 80);

    const char *env[] = {"PRIMED_CATALOG_URL", "http://cat:1/base/", "PRIMED_INVENTORY_URL", "http://inv:2",
                         "PRIMED_FANOUT", "sequential", "PRIMED_CATALOG", "/etc/primed/products.tsv", NULL};
    cr_assert_eq(parse(&c, env, 1, argv, err), CONFIG_OK, "%s", err);
    cr_assert_str_eq(c.catalog_url.authority, "cat:1");
    cr_assert_str_eq(c.catalog_url.path, "/base");
    cr_assert_str_eq(c.inventory_url.authority, "inv:2");
    cr_assert(c.fanout_sequential);
    cr_assert_str_eq(c.catalog_file, "/etc/primed/products.tsv");
    const char *flags[] = {"primed", "--fanout", "parallel", "--catalog", "/tmp/p.tsv"};
    cr_assert_eq(parse(&c, env, 5, flags, err), CONFIG_OK, "%s", err);
    cr_assert(!c.fanout_sequential, "the flag wins");
    cr_assert_str_eq(c.catalog_file, "/tmp/p.tsv");

    /* one without the other */
    const char *one[] = {"primed", "--catalog-url", "http://c:1"};
    cr_assert_eq(parse(&c, NULL, 3, one, err), -EINVAL);
    cr_assert(strstr(err, "--inventory-url"), "names the missing one: %s", err);
    const char *other[] = {"primed", "--inventory-url", "http://i:1"};
    cr_assert_eq(parse(&c, NULL, 3, other, err), -EINVAL);
    cr_assert(strstr(err, "--catalog-url"), "%s", err);
    const char *envone[] = {"PRIMED_INVENTORY_URL", "http://i:1", NULL};
    cr_assert_eq(parse(&c, envone, 1, argv, err), -EINVAL, "from the environment too");
    const char *emptied[] = {"PRIMED_CATALOG_URL", "", "PRIMED_INVENTORY_URL", "", NULL};
    cr_assert_eq(parse(&c, emptied, 1, argv, err), CONFIG_OK, "empty variables are unset: %s", err);
    cr_assert_eq(c.catalog_url.host[0], '\0');
}

Test(config, gateway_bad_values)
{
    static const char *const bad[][2] = {
        {"--catalog-url", "http://c:1/?x=1"},   {"--catalog-url", "http://c:1/base?x"},
        {"--inventory-url", "http://i:1?q=1"},  {"--catalog-url", "https://c/"},
        {"--inventory-url", "inventory"},       {"--fanout", "both"},
        {"--fanout", ""},                       {"--fanout", "Parallel"},
    };
    assert_refused(bad, sizeof(bad) / sizeof(bad[0]), NULL);
    struct config c;
    char err[256];
    cr_assert_eq(parse1(&c, "--catalog-url", "http://c:1/?x=1", err), -EINVAL);
    cr_assert(strstr(err, "query"), "says why: %s", err);
}

Test(config, fault_flags)
{
    struct config c;
    char err[256];
    const char *argv[] = {"primed"};
    cr_assert_eq(parse(&c, NULL, 1, argv, err), CONFIG_OK);
    cr_assert_eq(c.fault_delay_ms, 0);
    cr_assert_eq(c.fault_abort, 0);
    cr_assert_float_eq(c.fault_delay_pct, 100.0, 1e-9);
    cr_assert_float_eq(c.fault_abort_pct, 100.0, 1e-9);
    cr_assert_str_eq(c.fault_path, "/");

    static const struct {
        const char *v;
        unsigned ms;
    } delays[] = {{"3", 3000}, {"1.5", 1500}, {"250ms", 250}, {"2s", 2000}, {"0", 0}, {"3600", 3600000}, {".5", 500}};
    for (size_t i = 0; i < sizeof(delays) / sizeof(delays[0]); i++) {
        cr_assert_eq(parse1(&c, "--fault-delay", delays[i].v, err), CONFIG_OK, "%s: %s", delays[i].v, err);
        cr_assert_eq(c.fault_delay_ms, delays[i].ms, "%s", delays[i].v);
    }
    static const struct {
        const char *v;
        double pct;
    } pcts[] = {{"0", 0}, {"100", 100}, {"33.3", 33.3}, {"0.5", 0.5}, {"100.0", 100}};
    for (size_t i = 0; i < sizeof(pcts) / sizeof(pcts[0]); i++) {
        cr_assert_eq(parse1(&c, "--fault-delay-percent", pcts[i].v, err), CONFIG_OK, "%s: %s", pcts[i].v, err);
        cr_assert_float_eq(c.fault_delay_pct, pcts[i].pct, 1e-9, "%s", pcts[i].v);
        cr_assert_eq(parse1(&c, "--fault-abort-percent", pcts[i].v, err), CONFIG_OK, "%s: %s", pcts[i].v, err);
        cr_assert_float_eq(c.fault_abort_pct, pcts[i].pct, 1e-9, "%s", pcts[i].v);
    }
    static const char *const codes[] = {"400", "404", "429", "500", "502", "503", "504"};
    for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
        cr_assert_eq(parse1(&c, "--fault-abort", codes[i], err), CONFIG_OK, "%s: %s", codes[i], err);
        cr_assert_eq(c.fault_abort, (unsigned)atoi(codes[i]));
    }
    cr_assert_eq(parse1(&c, "--fault-path", "/api/inventory", err), CONFIG_OK);
    cr_assert_str_eq(c.fault_path, "/api/inventory");

    const char *env[] = {"PRIMED_FAULT_DELAY",         "500ms", "PRIMED_FAULT_DELAY_PERCENT", "12.5",
                         "PRIMED_FAULT_ABORT",         "503",   "PRIMED_FAULT_ABORT_PERCENT", "7",
                         "PRIMED_FAULT_PATH",          "/api",  NULL};
    cr_assert_eq(parse(&c, env, 1, argv, err), CONFIG_OK, "%s", err);
    cr_assert_eq(c.fault_delay_ms, 500);
    cr_assert_float_eq(c.fault_delay_pct, 12.5, 1e-9);
    cr_assert_eq(c.fault_abort, 503);
    cr_assert_float_eq(c.fault_abort_pct, 7.0, 1e-9);
    cr_assert_str_eq(c.fault_path, "/api");
    const char *wins[] = {"primed", "--fault-delay", "2", "--fault-abort=504", "--fault-path", "/x"};
    cr_assert_eq(parse(&c, env, 6, wins, err), CONFIG_OK, "%s", err);
    cr_assert_eq(c.fault_delay_ms, 2000, "the flag wins");
    cr_assert_eq(c.fault_abort, 504);
    cr_assert_str_eq(c.fault_path, "/x");
    const char *noabort[] = {"PRIMED_FAULT_ABORT", "", NULL};
    cr_assert_eq(parse(&c, noabort, 1, argv, err), CONFIG_OK);
    cr_assert_eq(c.fault_abort, 0, "an empty variable is no abort");
}

Test(config, fault_bad_values)
{
    static const char *const bad[][2] = {
        {"--fault-delay", "3601"},          {"--fault-delay", "-1"},
        {"--fault-delay", "soon"},          {"--fault-delay", "5m"},
        {"--fault-delay", ""},              {"--fault-delay-percent", "101"},
        {"--fault-delay-percent", "-1"},    {"--fault-delay-percent", "abc"},
        {"--fault-delay-percent", ""},      {"--fault-delay-percent", "50%"},
        {"--fault-delay-percent", "100.01"}, {"--fault-abort-percent", "101"},
        {"--fault-abort-percent", "-1"},    {"--fault-abort-percent", "abc"},
        {"--fault-abort", "418"},           {"--fault-abort", "299"},
        {"--fault-abort", "200"},           {"--fault-abort", "600"},
        {"--fault-abort", "50x"},           {"--fault-abort", "-503"},
        {"--fault-path", "api"},            {"--fault-path", ""},
    };
    assert_refused(bad, sizeof(bad) / sizeof(bad[0]), NULL);
    struct config c;
    char err[256];
    cr_assert_eq(parse1(&c, "--fault-abort", "418", err), -EINVAL);
    cr_assert(strstr(err, "400") && strstr(err, "503") && strstr(err, "504"), "lists the codes: %s", err);
    cr_assert_null(strstr(err, "200"), "only statuses from 400 up: %s", err);
    cr_assert_eq(parse1(&c, "--fault-path", "api", err), -EINVAL);
    cr_assert(strstr(err, "starts with /"), "%s", err);
    const char *env[] = {"PRIMED_FAULT_ABORT_PERCENT", "101", NULL};
    const char *argv[] = {"primed"};
    cr_assert_eq(parse(&c, env, 1, argv, err), -EINVAL);
    cr_assert(strstr(err, "PRIMED_FAULT_ABORT_PERCENT"), "names the variable: %s", err);
}

Test(config, prime_split_flag_and_environment)
{
    struct config c;
    char err[256];
    const char *argv[] = {"primed"};
    cr_assert_eq(parse(&c, NULL, 1, argv, err), CONFIG_OK);
    cr_assert(c.prime_split, "on by default");
    cr_assert_eq(parse1(&c, "--prime-split", "off", err), CONFIG_OK, "%s", err);
    cr_assert(!c.prime_split);
    const char *env[] = {"PRIMED_PRIME_SPLIT", "off", NULL};
    cr_assert_eq(parse(&c, env, 1, argv, err), CONFIG_OK, "%s", err);
    cr_assert(!c.prime_split);
    const char *flags[] = {"primed", "--prime-split=on"};
    cr_assert_eq(parse(&c, env, 2, flags, err), CONFIG_OK, "%s", err);
    cr_assert(c.prime_split, "the flag wins");
    static const char *const bad[][2] = {
        {"--prime-split", "yes"}, {"--prime-split", ""}, {"--prime-split", "ON"}, {"--prime-split", "1"}};
    assert_refused(bad, sizeof(bad) / sizeof(bad[0]), "on or off");
}

Test(config, uring_switches_have_their_defaults_and_take_on_or_off)
{
    struct config c;
    char err[256];
    const char *none[] = {"primed"};
    cr_assert_eq(parse(&c, NULL, 1, none, err), CONFIG_OK);
    cr_assert(!c.uring_poll_first, "poll-first is off unless asked: it did not show in CPU per request");
    cr_assert(c.uring_single_send, "single send is on by default (measured: docs/benchmarks.md)");

    const char *env[] = {"PRIMED_URING_POLL_FIRST", "on", "PRIMED_URING_SINGLE_SEND", "on", NULL};
    cr_assert_eq(parse(&c, env, 1, none, err), CONFIG_OK, "%s", err);
    cr_assert(c.uring_poll_first && c.uring_single_send);
    const char *off[] = {"primed", "--uring-poll-first", "off", "--uring-single-send=off"};
    cr_assert_eq(parse(&c, env, 4, off, err), CONFIG_OK, "%s", err);
    cr_assert(!c.uring_poll_first && !c.uring_single_send, "the flags win over the environment");
    const char *on[] = {"primed", "--uring-poll-first", "on"};
    cr_assert_eq(parse(&c, NULL, 3, on, err), CONFIG_OK, "%s", err);
    cr_assert(c.uring_poll_first && c.uring_single_send, "each switch is its own");
    const char *single_off[] = {"primed", "--uring-single-send", "off"};
    cr_assert_eq(parse(&c, NULL, 3, single_off, err), CONFIG_OK, "%s", err);
    cr_assert(!c.uring_poll_first && !c.uring_single_send);

    const char *epoll[] = {"primed", "--io", "epoll", "--uring-poll-first", "on", "--uring-single-send", "on"};
    cr_assert_eq(parse(&c, NULL, 7, epoll, err), CONFIG_OK, "accepted with epoll too (it ignores them): %s", err);
    cr_assert_eq(c.io, IO_EPOLL);
}

Test(config, uring_switches_bad_values)
{
    static const char *const bad[][2] = {
        {"--uring-poll-first", "yes"}, {"--uring-poll-first", "1"},   {"--uring-poll-first", ""},
        {"--uring-poll-first", "ON"},  {"--uring-single-send", "0"},  {"--uring-single-send", "true"},
        {"--uring-single-send", ""},   {"--uring-single-send", "of"},
    };
    assert_refused(bad, sizeof(bad) / sizeof(bad[0]), "on or off");
    struct config c;
    char err[256];
    const char *env[] = {"PRIMED_URING_SINGLE_SEND", "yes", NULL};
    const char *argv[] = {"primed"};
    cr_assert_eq(parse(&c, env, 1, argv, err), -EINVAL);
    cr_assert(strstr(err, "PRIMED_URING_SINGLE_SEND"), "names the variable: %s", err);
}

/* A choice is kept as its index: the names' order is the enum's. */
Test(config, choices_are_the_enums_in_order)
{
    struct config c;
    char err[256];
    static const struct {
        const char *flag, *value;
        size_t off;
        int want;
    } cases[] = {
        {"--io", "auto", offsetof(struct config, io), IO_AUTO},
        {"--io", "uring", offsetof(struct config, io), IO_URING},
        {"--io", "epoll", offsetof(struct config, io), IO_EPOLL},
        {"--prime-engine", "flint", offsetof(struct config, engine), PRIME_ENGINE_FLINT},
        {"--prime-engine", "sieve", offsetof(struct config, engine), PRIME_ENGINE_SIEVE},
        {"--prime-vector", "auto", offsetof(struct config, prime_vector), CONFIG_VECTOR_AUTO},
        {"--prime-vector", "on", offsetof(struct config, prime_vector), CONFIG_VECTOR_ON},
        {"--prime-vector", "off", offsetof(struct config, prime_vector), CONFIG_VECTOR_OFF},
        {"--db-sync", "fast", offsetof(struct config, db_sync), CONFIG_SYNC_FAST},
        {"--db-sync", "normal", offsetof(struct config, db_sync), CONFIG_SYNC_NORMAL},
        {"--db-sync", "full", offsetof(struct config, db_sync), CONFIG_SYNC_FULL},
        {"--prime-vector", "ifma", offsetof(struct config, prime_vector), CONFIG_VECTOR_IFMA},
        {"--prime-vector", "avx512", offsetof(struct config, prime_vector), CONFIG_VECTOR_AVX512},
        {"--prime-vector", "avx2", offsetof(struct config, prime_vector), CONFIG_VECTOR_AVX2},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cr_assert_eq(parse1(&c, cases[i].flag, cases[i].value, err), CONFIG_OK, "%s", err);
        cr_assert_eq(*(const int *)((const char *)&c + cases[i].off), cases[i].want, "%s %s", cases[i].flag,
                     cases[i].value);
    }
    cr_assert_eq(parse1(&c, "--accept", "shared", err), CONFIG_OK);
    cr_assert(c.shared_listener);
    cr_assert_eq(parse1(&c, "--db-sync", "off", err), -EINVAL);
    cr_assert(strstr(err, "fast, normal or full"), "lists the choices: %s", err);
    cr_assert_eq(parse1(&c, "--prime-vector", "eight", err), -EINVAL);
    cr_assert(strstr(err, "auto, on, off, ifma, avx512 or avx2"), "lists the choices: %s", err);
    cr_assert_eq(parse1(&c, "--prime-vector", "", err), -EINVAL, "an empty choice is none of them");
}

/* --prime-vector against this CPU: a forced engine runs where the CPU has it
 * and is refused (with the extension named) where it lacks it; auto and on
 * run the best it has, on is refused with none; the flint engine runs no
 * vector engine. */
Test(config, prime_vector_runs_what_the_cpu_has)
{
    struct config c;
    char why[256];
    static const struct {
        const char *value;
        enum prime_vector v;
        const char *lacks;
    } forced[] = {
        {"off", PRIME_VECTOR_SCALAR, NULL},
        {"avx2", PRIME_VECTOR_AVX2, "lacks AVX2"},
        {"avx512", PRIME_VECTOR_AVX512, "lacks AVX-512F"},
        {"ifma", PRIME_VECTOR_IFMA, "lacks AVX-512 IFMA"},
    };
    for (size_t i = 0; i < sizeof(forced) / sizeof(forced[0]); i++) {
        cr_assert_eq(parse1(&c, "--prime-vector", forced[i].value, why), CONFIG_OK, "%s", why);
        const char *r = config_vector_refusal(&c, why, sizeof(why));
        if (prime_vector_has(forced[i].v)) {
            cr_assert_null(r, "%s refused: %s", forced[i].value, r);
            cr_assert_eq(config_vector(&c), forced[i].v, "%s", forced[i].value);
        } else {
            cr_assert_not_null(r, "%s accepted where the CPU lacks it", forced[i].value);
            cr_assert(strstr(r, forced[i].lacks), "%s: %s", forced[i].value, r);
            cr_assert_eq(config_vector(&c), prime_vector_best());
        }
    }
    cr_assert_eq(parse1(&c, "--prime-vector", "auto", why), CONFIG_OK);
    cr_assert_null(config_vector_refusal(&c, why, sizeof(why)));
    cr_assert_eq(config_vector(&c), prime_vector_best());
    cr_assert_eq(parse1(&c, "--prime-vector", "on", why), CONFIG_OK);
    cr_assert_eq(config_vector_refusal(&c, why, sizeof(why)) != NULL, prime_vector_best() == PRIME_VECTOR_SCALAR);
    cr_assert_eq(config_vector(&c), prime_vector_best());
    cr_assert_eq(parse1(&c, "--prime-engine", "flint", why), CONFIG_OK);
    cr_assert_eq(config_vector(&c), PRIME_VECTOR_SCALAR);
}

/* The ready line's settings come from the list: every setting with a key,
 * each kind printed as the ready line has always printed it. */
Test(config, ready_line_names_the_settings)
{
    struct config c;
    char err[256], line[4096];
    const char *argv[] = {"primed", "--fault-delay", "250ms", "--fault-abort", "503", "--catalog-url",
                          "http://127.0.0.1:81/shop/", "--inventory-url", "http://inv:82", "--callme-url",
                          "http://callme:80/callme/ping", "--access-log", "1", "--max-body", "42"};
    cr_assert_eq(parse(&c, NULL, sizeof(argv) / sizeof(argv[0]), argv, err), CONFIG_OK, "%s", err);
    size_t n = config_ready(&c, line, sizeof(line));
    cr_assert_eq(n, strlen(line));
    static const char *const want[] = {
        " host=0.0.0.0 ", " bits=1000 ", " drain_timeout=30000ms ", " max_body=42 ", " engine=sieve ",
        " dispatch=", " access_log=on ", " accept=reuseport ", " callme=callme:80 ", " zipkin=none ",
        " upstream_timeout=3000ms ", " db_sync=normal ", " catalog_url=http://127.0.0.1:81/shop ",
        " inventory_url=http://inv:82 ", " fanout=parallel ", " fault_delay=250ms ", " fault_abort=503 ",
        " fault_delay_percent=100 ", " fault_path=/"};
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        cr_assert(strstr(line, want[i]), "'%s' in '%s'", want[i], line);
    /* what process.c writes as in effect is not here twice */
    cr_assert_null(strstr(line, " port="));
    cr_assert_null(strstr(line, " io="));
    cr_assert_null(strstr(line, " prime_split="));
    char small[16];
    cr_assert_lt(config_ready(&c, small, sizeof(small)), sizeof(small), "cut, never past cap");
}

/* A number's range is written once, in the list: the help and the error say
 * the same range. */
Test(config, ranges_come_from_the_list)
{
    struct config c;
    char err[256];
    cr_assert_eq(parse1(&c, "--upstream-conns", "1025", err), -EINVAL);
    cr_assert(strstr(err, "1..1024"), "%s", err);
    cr_assert_eq(parse1(&c, "--header-timeout", "0.05", err), -EINVAL);
    cr_assert(strstr(err, "0.1..3600 s"), "%s", err);
    cr_assert_eq(parse1(&c, "--max-body", "1099511627777", err), -EINVAL);
    cr_assert(strstr(err, "0..2^40"), "%s", err);
    cr_assert_eq(parse1(&c, "--max-body", "1099511627776", err), CONFIG_OK, "2^40 itself is in range");
    int fd[2];
    cr_assert_eq(pipe(fd), 0);
    config_usage_markdown(fd[1]);
    close(fd[1]);
    static char md[65536];
    ssize_t got = read(fd[0], md, sizeof(md) - 1);
    close(fd[0]);
    cr_assert_gt(got, 0);
    md[got] = '\0';
    cr_assert(strstr(md, "per worker per upstream; more calls wait in order; 1..1024 |"), "the row has its range");
    cr_assert(strstr(md, "before 408; 0.1..3600 s |"));
}
