/* itest.c - the integration suites' shared steps (itest.h). */
#include "itest.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct harness_srv srv;

void fini(void)
{
    harness_kill(&srv);
}

void up_env(const char *const *args, const char *const *env)
{
    const char *all[48] = {"--threads", "2", "--bits", "64"};
    int n = 4;
    for (int i = 0; args && args[i] && n < 47; i++)
        all[n++] = args[i];
    all[n] = NULL;
    int r = harness_start(&srv, all, env);
    cr_assert_eq(r, 0, "server did not start: %s\nstderr:\n%s", strerror(-r), srv.err);
}

void up(const char *const *args)
{
    up_env(args, NULL);
}

void down(void)
{
    int st = harness_stop(&srv, 10000);
    cr_assert_eq(st, 0, "exit status %d after SIGTERM; stderr:\n%s", st, srv.err);
}

void conn(struct harness_conn *c)
{
    int r = harness_connect(c, srv.port);
    cr_assert_eq(r, 0, "connect to port %d: %s", srv.port, strerror(-r));
}

void send_str(struct harness_conn *c, const char *s)
{
    int r = harness_send_str(c, s, T_IO);
    cr_assert_eq(r, 0, "send: %s", strerror(-r));
}

void read_resp(struct harness_conn *c, struct harness_resp *r, bool head)
{
    int x = harness_read_response(c, r, head, T_IO);
    cr_assert_eq(x, 1, "read response: %s", x == 0 ? "EOF" : strerror(-x));
}

void expect_eof(struct harness_conn *c, const char *what)
{
    int r = harness_wait_eof(c, T_IO);
    cr_assert_eq(r, 0, "%s: server did not close the connection (%s)", what,
                 r == 1 ? "more data arrived" : strerror(-r));
}

const char *header(const struct harness_resp *r, const char *name)
{
    const char *v = harness_header(r, name);
    return v ? v : "";
}

unsigned long hello_n(const struct harness_resp *r)
{
    cr_assert_eq(r->status, 200, "status %d, body %s", r->status, r->body ? r->body : "");
    cr_assert(r->body && strncmp(r->body, "Hello_", 6) == 0, "body '%s'", r->body ? r->body : "(none)");
    char *end;
    unsigned long n = strtoul(r->body + 6, &end, 10);
    cr_assert(*end == '\0' && n > 0, "body '%s'", r->body);
    return n;
}

bool built_with(const char *mode)
{
    const char *bin = getenv("PRIMED_TEST_BIN");
    if (!bin || !*bin)
        bin = getenv("PRIMED_BIN");
    cr_assert(bin, "PRIMED_BIN is not set");
    char cmd[1200], line[256];
    snprintf(cmd, sizeof(cmd), "'%s' --version", bin);
    FILE *p = popen(cmd, "r");
    cr_assert(p, "cannot run %s --version", bin);
    bool found = false, seen = false;
    while (fgets(line, sizeof(line), p)) {
        char *b = strstr(line, "(built: ");
        if (b) {
            seen = true;
            found = strstr(b, mode) != NULL;
        }
    }
    pclose(p);
    cr_assert(seen, "%s --version does not say which dispatch modes are built", bin);
    return found;
}

void expect_serving(const char *after)
{
    struct harness_resp r;
    int x = harness_request(srv.port, "GET", "/healthz", NULL, &r, T_IO);
    cr_assert_eq(x, 1, "after %s: a new connection is not served (%s)", after, x == 0 ? "EOF" : strerror(-x));
    cr_assert_eq(r.status, 200, "after %s: /healthz %d", after, r.status);
    harness_resp_free(&r);
}

void expect_refusal(const char *what, const char *req, size_t len, int status)
{
    struct harness_conn c;
    conn(&c);
    int s = harness_send(&c, req, len, T_IO);
    cr_assert(s == 0 || s == -ECONNRESET || s == -EPIPE, "%s: send: %s", what, strerror(-s));
    struct harness_resp r;
    int x = harness_read_response(&c, &r, false, T_IO);
    cr_assert_eq(x, 1, "%s: no response (%s)", what, x == 0 ? "EOF" : strerror(-x));
    cr_assert_eq(r.status, status, "%s: status %d, want %d (body '%s')", what, r.status, status, r.body);
    cr_assert_str_eq(header(&r, "Connection"), "close", "%s", what);
    harness_resp_free(&r);
    expect_eof(&c, what); /* EOF, not a second response */
    harness_close(&c);
}

long metric_value(struct harness_conn *c, const char *line_prefix)
{
    send_str(c, "GET /metrics HTTP/1.1\r\nHost: t\r\n\r\n");
    struct harness_resp r;
    read_resp(c, &r, false);
    cr_assert_eq(r.status, 200);
    long v = 0;
    size_t pl = strlen(line_prefix);
    for (char *l = r.body; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        if (strncmp(l, line_prefix, pl) == 0 && l[pl] == ' ') {
            v = (long)strtod(l + pl + 1, NULL);
            break;
        }
    }
    harness_resp_free(&r);
    return v;
}
