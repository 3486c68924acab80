/* harness.h - drives the built primed binary from tests: start it on
 * 127.0.0.1 with an ephemeral port, speak raw HTTP/1.1 over TCP, stop it.
 *
 * Every wait is bounded (poll() with a deadline); nothing here can hang a
 * test. The binary comes from $PRIMED_BIN (set by tests/meson.build). The
 * child inherits the test's environment (so meson test setups such as
 * PRIMED_DISPATCH / PRIMED_IO reach it) plus the extra variables given, and
 * dies with the test process (PR_SET_PDEATHSIG) if a test is killed.
 */
#ifndef PRIMED_TESTS_HARNESS_H
#define PRIMED_TESTS_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define HARNESS_LOG_MAX (256 * 1024)

struct harness_srv {
    pid_t pid;  /* 0 once reaped */
    int port;   /* parsed from the ready line */
    int err_fd; /* read end of the child's stderr, -1 at EOF */
    int out_fd; /* read end of the child's stdout, -1 at EOF */
    int status; /* raw waitpid() status once reaped */
    size_t err_len, out_len;
    char err[HARNESS_LOG_MAX]; /* everything read from stderr so far, NUL-terminated */
    char out[HARNESS_LOG_MAX]; /* everything read from stdout so far, NUL-terminated */
};

/* Starts $PRIMED_BIN with argv[1..] = args (NULL-terminated, may be NULL) and
 * the environment plus env ("NAME=value" strings, NULL-terminated, may be
 * NULL). Does not wait for readiness. Returns 0 or -errno. */
int harness_spawn(struct harness_srv *s, const char *const *args, const char *const *env);

/* Reads stderr until a line contains "primed: ready", then parses port=N
 * into s->port. Returns 0, -ETIMEDOUT, or -ECHILD if the server exited. */
int harness_wait_ready(struct harness_srv *s, int timeout_ms);

/* harness_spawn() with "--host 127.0.0.1 --port 0" prepended, then
 * harness_wait_ready() (10 s). Returns 0 or -errno (the child is killed). */
int harness_start(struct harness_srv *s, const char *const *args, const char *const *env);

/* Reads what the child wrote to stdout/stderr so far, waiting up to
 * timeout_ms for something. Returns bytes read (0 when none). */
size_t harness_pump(struct harness_srv *s, int timeout_ms);

/* Waits up to timeout_ms for the child to exit (pumping its output).
 * Returns its exit status 0..255, 128+signal when killed, or -ETIMEDOUT. */
int harness_wait_exit(struct harness_srv *s, int timeout_ms);

/* Sends SIGTERM and waits up to timeout_ms; on timeout sends SIGKILL.
 * Returns the exit status as harness_wait_exit(), or -ETIMEDOUT when the
 * SIGKILL was needed. Safe to call twice. */
int harness_stop(struct harness_srv *s, int timeout_ms);

/* SIGKILL and reap; for clean-up paths. */
void harness_kill(struct harness_srv *s);

/* A free TCP port on 127.0.0.1 right now (bind to 0, read it, close). */
int harness_free_port(void);

/* ---- client side ---------------------------------------------------------- */

struct harness_conn {
    int fd;
    size_t len; /* bytes buffered in buf, not yet consumed */
    char *buf;  /* owned; HARNESS_CONN_BUF bytes */
};

#define HARNESS_CONN_BUF (128 * 1024) /* > the largest response: /metrics is capped at 64 KiB */

/* Connects to 127.0.0.1:port (blocking connect, bounded by the kernel's
 * loopback handshake). Returns 0 or -errno. */
int harness_connect(struct harness_conn *c, int port);
void harness_close(struct harness_conn *c);
/* Closes with SO_LINGER 0 (a reset, no TIME_WAIT). */
void harness_close_reset(struct harness_conn *c);

/* Writes all of buf (blocking fd, bounded by timeout_ms). Returns 0 or -errno. */
int harness_send(struct harness_conn *c, const void *buf, size_t len, int timeout_ms);
int harness_send_str(struct harness_conn *c, const char *s, int timeout_ms);

#define HARNESS_MAX_HEADERS 32

struct harness_resp {
    int status;
    int minor; /* HTTP/1.x */
    int nheaders;
    char *names[HARNESS_MAX_HEADERS]; /* point into head */
    char *values[HARNESS_MAX_HEADERS];
    char head[16384]; /* the head, NUL-separated after parsing */
    size_t content_length;
    bool has_content_length;
    char *body; /* malloc'd, NUL-terminated; NULL for HEAD */
    size_t body_len;
};

/* Reads one response (status line, headers, Content-Length body; no body when
 * head is true) within timeout_ms. Returns 1 on success, 0 on EOF before any
 * byte, -ETIMEDOUT, -EPROTO for a malformed response, or another -errno.
 * Frees nothing: call harness_resp_free(). */
int harness_read_response(struct harness_conn *c, struct harness_resp *r, bool head, int timeout_ms);
/* Reads n responses into r[0..n) within timeout_ms total; returns how many
 * were read before an error/EOF/timeout. */
int harness_read_responses(struct harness_conn *c, struct harness_resp *r, int n, int timeout_ms);
void harness_resp_free(struct harness_resp *r);

/* Value of a header (case-insensitive name), or NULL. */
const char *harness_header(const struct harness_resp *r, const char *name);

/* Waits for the peer to close: returns 0 on EOF (or a reset after our data),
 * -ETIMEDOUT, or 1 if data arrived instead (it is buffered). */
int harness_wait_eof(struct harness_conn *c, int timeout_ms);

/* Whether any byte (or EOF) arrives within timeout_ms: 1 data, 0 nothing,
 * -1 EOF/error. Leaves data buffered. */
int harness_poll_readable(struct harness_conn *c, int timeout_ms);

/* One-shot: connect, send "METHOD path HTTP/1.1\r\nHost: t\r\n<extra>\r\n",
 * read the response, close. Returns as harness_read_response(). */
int harness_request(int port, const char *method, const char *path, const char *extra_headers, struct harness_resp *r,
                    int timeout_ms);

/* Milliseconds on CLOCK_MONOTONIC. */
long long harness_now_ms(void);
void harness_sleep_ms(int ms);

#endif
