/* test_url.c - upstream URLs: the forms Knative gives, and each refusal. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "url.h"

Test(url, knative_cluster_local_names)
{
    struct url u;
    char err[300];
    cr_assert_eq(url_parse("http://callme.default.svc.cluster.local/callme/ping", &u, err, sizeof(err)), 0, "%s", err);
    cr_assert_str_eq(u.host, "callme.default.svc.cluster.local");
    cr_assert_eq(u.port, 80);
    cr_assert_str_eq(u.path, "/callme/ping");
    cr_assert_str_eq(u.authority, "callme.default.svc.cluster.local");
    cr_assert_eq(url_parse("http://zipkin.istio-system.svc.cluster.local:9411/api/v2/spans", &u, err, sizeof(err)), 0);
    cr_assert_eq(u.port, 9411);
    cr_assert_str_eq(u.authority, "zipkin.istio-system.svc.cluster.local:9411");
}

Test(url, defaults_and_forms)
{
    struct url u;
    char err[300];
    cr_assert_eq(url_parse("http://127.0.0.1:8081", &u, err, sizeof(err)), 0);
    cr_assert_str_eq(u.path, "/");
    cr_assert_eq(u.port, 8081);
    cr_assert_eq(url_parse("http://h?x=1#frag", &u, err, sizeof(err)), 0);
    cr_assert_str_eq(u.path, "/?x=1");
    cr_assert_eq(url_parse("http://[::1]:9000/a", &u, err, sizeof(err)), 0);
    cr_assert_str_eq(u.host, "::1");
    cr_assert_str_eq(u.authority, "[::1]:9000");
    cr_assert_eq(u.port, 9000);
}

Test(url, refusals_say_why)
{
    static const struct {
        const char *in;
        const char *why;
    } cases[] = {
        {"https://a/", "https"},        {"ftp://a/", "not an http"},  {"http://", "no host"},
        {"http://u:p@a/", "user info"}, {"http://a:0/", "port"},      {"http://a:65536/", "port"},
        {"http://a:80x/", "port"},      {"http://a:/", "port"},       {"http://a b/", "host"},
        {"http://a/b c", "space"},      {"http://[::1/", "unclosed"}, {"http://[::1]x/", "junk"},
        {"callme/ping", "not an http"}, {"http://a\x01/", "host"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct url u;
        char err[300] = "";
        cr_assert_lt(url_parse(cases[i].in, &u, err, sizeof(err)), 0, "accepted '%s'", cases[i].in);
        cr_assert(strstr(err, cases[i].why), "'%s': reason '%s' does not say '%s'", cases[i].in, err, cases[i].why);
    }
}

/* Found by fuzz-url: a query-only path of 1024 bytes lost its last byte to the '/' put first; a
 * control byte in the URL broke the one-line reason. */
Test(url, a_path_is_never_cut_and_a_reason_is_one_line)
{
    char s[1100], err[300];
    struct url u;
    snprintf(s, sizeof(s), "http://h?%01023d", 7);
    cr_assert_eq(url_parse(s, &u, err, sizeof(err)), -EINVAL, "a '/' + 1024 bytes is over the bound");
    snprintf(s, sizeof(s), "http://h?%01022d", 7);
    cr_assert_eq(url_parse(s, &u, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(strlen(u.path), 1024);
    cr_assert_eq(u.path[1023], '7');
    cr_assert_eq(url_parse("http://h\n/x", &u, err, sizeof(err)), -EINVAL);
    cr_assert_null(strchr(err, '\n'), "%s", err);
    cr_assert(strstr(err, "'http://h?/x'"), "%s", err);
}
