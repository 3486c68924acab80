/* test_config.c - flags and environment: defaults, precedence, every bad value. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

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
    cr_assert_eq(c.max_header, 8192);
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
        {"--db", ""},
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
                         "PRIMED_DB", "/data/events.db", NULL};
    cr_assert_eq(parse(&c, env, 1, argv, err), CONFIG_OK, "%s", err);
    cr_assert_str_eq(c.callme.host, "callme.default.svc.cluster.local");
    cr_assert_eq(c.callme.port, 80);
    cr_assert_str_eq(c.callme.path, "/callme/ping");
    cr_assert_str_eq(c.zipkin.authority, "zipkin.istio-system:9411");
    cr_assert_eq(c.upstream_timeout_ms, 250);
    cr_assert_eq(c.upstream_conns, 8);
    cr_assert_str_eq(c.db, "/data/events.db");

    const char *argv2[] = {"primed", "--callme-url", "http://127.0.0.1:9/x", "--upstream-timeout", "2"};
    cr_assert_eq(parse(&c, env, 5, argv2, err), CONFIG_OK, "%s", err);
    cr_assert_str_eq(c.callme.authority, "127.0.0.1:9", "the flag wins");
    cr_assert_eq(c.upstream_timeout_ms, 2000, "seconds, like every duration flag");

    const char *empty[] = {"CALLME_URL", "", NULL};
    cr_assert_eq(parse(&c, empty, 1, argv, err), CONFIG_OK);
    cr_assert_eq(c.callme.host[0], '\0', "an empty variable is unset");
}
