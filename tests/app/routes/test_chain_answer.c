/* test_chain_answer.c - src/app/routes/chain.c's answers, pure: /callme/ping names its
 * event, /caller/ping answers each way its call can end (its 404 without
 * --callme-url: test_answer.c, through the table). Includes chain.c to reach its static answer functions (the
 * app library's chain.o is then never linked: this file defines its
 * modules). */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "routes/chain.c"

static _Atomic int draining;
static struct answer_env env = {.draining = &draining, .app = "app", .pod = "pod-1", .ns = "ns"};
static const struct http h = {.req.keep_alive = true}; /* a request that may keep its connection */

Test(chain, callme_names_its_event)
{
    struct resp r;
    char body[ANSWER_BODY_MAX];
    callme_body(&env, &h, 42, &r, body, sizeof(body));
    cr_assert_eq(r.status, 200);
    cr_assert_str_eq(r.body, "app(id=42): pod-1 in ns\n");
    cr_assert(r.keep_alive);
}

Test(chain, caller_answers_each_outcome)
{
    struct answer_env e = env;
    e.callme = "callme:80";
    struct resp r;
    char body[ANSWER_BODY_MAX];
    const char *up = "callme(id=9): pod-2 in ns2\n";
    caller_body(&e, &h, 4, UPSTREAM_OK, 0, NULL, 200, up, strlen(up), &r, body, sizeof(body));
    cr_assert_eq(r.status, 200);
    cr_assert_str_eq(r.body, "app(id=4): pod-1 in ns is calling callme(id=9): pod-2 in ns2\n");
    cr_assert_eq(r.body_len, strlen(r.body));

    static const struct {
        int res, err, status;
        const char *why;
        int want;
        const char *text;
    } cases[] = {
        {UPSTREAM_CONNECT, -ECONNREFUSED, 0, NULL, 502, "upstream callme:80: connect failed: Connection refused\n"},
        {UPSTREAM_RESET, -ECONNRESET, 0, NULL, 502, "upstream callme:80: connection reset: Connection reset by peer\n"},
        {UPSTREAM_TOO_LARGE, 0, 0, "response body too large", 502, "upstream callme:80: response body too large\n"},
        {UPSTREAM_CLOSED, 0, 0, NULL, 502, "upstream callme:80: closed before a complete answer\n"},
        {UPSTREAM_UNRESOLVED, 0, 0, NULL, 502, "upstream callme:80: name not resolved\n"},
        {UPSTREAM_TIMEOUT, 0, 0, NULL, 504, "upstream callme:80: no answer within the timeout\n"},
        {UPSTREAM_OK, 0, 503, NULL, 502, "upstream callme:80: answered 503\n"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        caller_body(&e, &h, 5, cases[i].res, cases[i].err, cases[i].why, cases[i].status, "x", 1, &r, body,
                    sizeof(body));
        cr_assert_eq(r.status, cases[i].want, "case %zu", i);
        cr_assert_str_eq(r.body, cases[i].text, "case %zu", i);
        cr_assert(r.keep_alive, "an upstream's failure is not the client's: keep the connection");
    }
    /* an answer that would not fit the inline body is refused, never cut */
    char big[ANSWER_BODY_MAX];
    memset(big, 'x', sizeof(big));
    caller_body(&e, &h, 6, UPSTREAM_OK, 0, NULL, 200, big, sizeof(big) - 20, &r, body, sizeof(body));
    cr_assert_eq(r.status, 502);
    cr_assert(strstr(r.body, "too long to forward"), "%s", r.body);
}
