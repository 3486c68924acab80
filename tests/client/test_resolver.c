/* test_resolver.c - upstream names: numeric hosts at once, a name that does
 * not resolve is an error string (not fatal), stale marks, the thread's
 * start and stop. No DNS server is asked: only numeric hosts, "localhost"
 * (nss files) and a name under .invalid (RFC 6761: never resolves). */
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <string.h>

#include "resolver.h"

static struct url parse(const char *s)
{
    struct url u;
    char err[128];
    cr_assert_eq(url_parse(s, &u, err, sizeof(err)), 0, "%s", err);
    return u;
}

Test(resolver, numeric_hosts_resolve_at_once)
{
    struct resolver r;
    resolver_init(&r);
    struct url u4 = parse("http://127.0.0.1:9411/api/v2/spans");
    struct resolver_target *t = resolver_add(&r, &u4);
    cr_assert_not_null(t);
    struct sockaddr_storage ss;
    socklen_t len;
    cr_assert(resolver_get(t, &ss, &len));
    cr_assert_eq(ss.ss_family, AF_INET);
    const struct sockaddr_in *in = (const struct sockaddr_in *)&ss;
    cr_assert_eq(ntohs(in->sin_port), 9411);
    cr_assert_eq(ntohl(in->sin_addr.s_addr), 0x7f000001u);
    cr_assert_str_eq(t->err, "");
    resolver_fini(&r);
}

Test(resolver, an_unresolvable_name_is_an_error_not_a_crash)
{
    struct resolver r;
    resolver_init(&r);
    struct url u = parse("http://callme.primed-test.invalid/callme/ping");
    struct resolver_target *t = resolver_add(&r, &u);
    cr_assert_not_null(t);
    struct sockaddr_storage ss;
    socklen_t len;
    cr_assert(!resolver_get(t, &ss, &len), "nothing to connect to");
    cr_assert_neq(t->err[0], '\0', "says why");
    cr_assert_eq(resolver_start(&r), 0);
    resolver_stale(t); /* the thread tries again; it must not crash on a failure */
    resolver_fini(&r);
}

Test(resolver, bounded_targets_and_thread_lifecycle)
{
    struct resolver r;
    resolver_init(&r);
    struct url u = parse("http://localhost:8080/");
    for (int i = 0; i < RESOLVER_MAX; i++)
        cr_assert_not_null(resolver_add(&r, &u));
    cr_assert_null(resolver_add(&r, &u), "RESOLVER_MAX is a bound");
    cr_assert_eq(resolver_start(&r), 0);
    for (int i = 0; i < RESOLVER_MAX; i++)
        resolver_stale(&r.targets[i]);
    resolver_fini(&r); /* joins the thread */
}
