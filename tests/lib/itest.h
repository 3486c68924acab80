/* itest.h - Criterion helpers shared by the integration suites: one server per
 * test (srv), started with the suite's defaults and stopped with a clean-exit
 * assertion; client steps that assert instead of returning errors. Every wait
 * is bounded by T_IO.
 */
#ifndef PRIMED_TESTS_ITEST_H
#define PRIMED_TESTS_ITEST_H

#include <stdbool.h>
#include <stddef.h>

#include "harness.h"

#define T_IO 5000 /* ms: generous bound for one response on a noisy 2-core box */

extern struct harness_srv srv;

/* .fini of every test: kills the server after a failed assertion (a no-op
 * after down()). */
void fini(void);
/* Starts a server with "--threads 2 --bits 64", then args (later flags win),
 * with env added to the environment; asserts that it became ready. */
void up_env(const char *const *args, const char *const *env);
void up(const char *const *args);
/* SIGTERM, and asserts exit status 0 within 10 s. */
void down(void);

void conn(struct harness_conn *c);
void send_str(struct harness_conn *c, const char *s);
void read_resp(struct harness_conn *c, struct harness_resp *r, bool head);
/* Asserts that the server closes c within T_IO. */
void expect_eof(struct harness_conn *c, const char *what);
/* The value of a response header, "" when absent. */
const char *header(const struct harness_resp *r, const char *name);
/* The N of a "Hello_N" body; asserts a 200 with such a body. */
unsigned long hello_n(const struct harness_resp *r);

/* Sends req (len bytes) on a new connection and expects exactly one response,
 * with `status` and Connection: close, then EOF: no second response, whatever
 * the bytes hid. */
void expect_refusal(const char *what, const char *req, size_t len, int status);

/* Asserts that a new connection still gets /healthz 200 (after: for the message). */
void expect_serving(const char *after);

/* Reads an unlabelled metric (primed_connections_open, a counter, ...)
 * through c, a keep-alive connection: 0 when absent. */
long metric_value(struct harness_conn *c, const char *line_prefix);

/* Whether the binary under test was built with a dispatch mode ("inline",
 * "steal"): the lto-static and minimal profiles build one ("built: ..." in
 * its --version). */
bool built_with(const char *mode);

#endif
