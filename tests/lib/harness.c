/* harness.c - start/stop the primed binary and speak raw HTTP/1.1 to it.
 *
 * Owns: the child process (fork + execve, pipes for its stdout/stderr) and
 * client sockets. Every wait is a poll() against a deadline, so a broken
 * server fails a test instead of hanging it. Talks to 127.0.0.1 only.
 */
#define _GNU_SOURCE
#include "harness.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

long long harness_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void harness_sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
        ;
}

static int left_ms(long long deadline)
{
    long long l = deadline - harness_now_ms();
    return l < 0 ? 0 : (int)l;
}

/* ---- the server process -------------------------------------------------- */

int harness_spawn(struct harness_srv *s, const char *const *args, const char *const *env)
{
    /* PRIMED_TEST_BIN (set outside meson) wins over meson's PRIMED_BIN: ./check
     * runs this suite against the ThreadSanitizer build of the server. */
    const char *bin = getenv("PRIMED_TEST_BIN");
    if (!bin || !*bin)
        bin = getenv("PRIMED_BIN");
    if (!bin || !*bin)
        return -ENOENT;
    memset(s, 0, sizeof(*s));
    s->err_fd = s->out_fd = -1;
    int ep[2], op[2];
    if (pipe2(ep, O_CLOEXEC))
        return -errno;
    if (pipe2(op, O_CLOEXEC)) {
        int e = errno;
        close(ep[0]);
        close(ep[1]);
        return -e;
    }
    char *argv[64];
    int argc = 0;
    argv[argc++] = (char *)bin;
    for (int i = 0; args && args[i] && argc < 63; i++)
        argv[argc++] = (char *)args[i];
    argv[argc] = NULL;

    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(ep[0]);
        close(ep[1]);
        close(op[0]);
        close(op[1]);
        return -e;
    }
    if (pid == 0) {
        /* the server must not outlive a test that was killed (timeout) */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(127);
        dup2(op[1], STDOUT_FILENO);
        dup2(ep[1], STDERR_FILENO);
        /* meson sets MALLOC_PERTURB_ for tests; under it glibc memsets every
         * mmap'd calloc, i.e. the server's whole preallocated connection arena
         * (~60 MiB per worker at the default --max-conns): about a second per
         * start on a loaded 2-core box. It checks the test's memory, not the
         * server's, so the server runs without it. */
        unsetenv("MALLOC_PERTURB_");
        for (int i = 0; env && env[i]; i++)
            putenv((char *)env[i]);
        execve(bin, argv, environ);
        dprintf(STDERR_FILENO, "harness: exec %s: %s\n", bin, strerror(errno));
        _exit(127);
    }
    close(ep[1]);
    close(op[1]);
    s->pid = pid;
    s->err_fd = ep[0];
    s->out_fd = op[0];
    fcntl(s->err_fd, F_SETFL, O_NONBLOCK);
    fcntl(s->out_fd, F_SETFL, O_NONBLOCK);
    return 0;
}

static size_t read_into(int *fd, char *buf, size_t *len)
{
    size_t got = 0;
    for (;;) {
        char tmp[4096];
        ssize_t n = read(*fd, tmp, sizeof(tmp));
        if (n > 0) {
            size_t room = HARNESS_LOG_MAX - 1 - *len;
            size_t k = (size_t)n < room ? (size_t)n : room; /* past the cap: dropped */
            memcpy(buf + *len, tmp, k);
            *len += k;
            buf[*len] = '\0';
            got += (size_t)n;
            continue;
        }
        if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
            close(*fd);
            *fd = -1;
        }
        return got;
    }
}

size_t harness_pump(struct harness_srv *s, int timeout_ms)
{
    struct pollfd p[2];
    int n = 0;
    if (s->err_fd >= 0)
        p[n++] = (struct pollfd){.fd = s->err_fd, .events = POLLIN};
    if (s->out_fd >= 0)
        p[n++] = (struct pollfd){.fd = s->out_fd, .events = POLLIN};
    if (n == 0) {
        if (timeout_ms > 0)
            harness_sleep_ms(timeout_ms < 10 ? timeout_ms : 10);
        return 0;
    }
    if (poll(p, (nfds_t)n, timeout_ms) <= 0)
        return 0;
    size_t got = 0;
    if (s->err_fd >= 0)
        got += read_into(&s->err_fd, s->err, &s->err_len);
    if (s->out_fd >= 0)
        got += read_into(&s->out_fd, s->out, &s->out_len);
    return got;
}

static int decode_status(int st)
{
    if (WIFEXITED(st))
        return WEXITSTATUS(st);
    if (WIFSIGNALED(st))
        return 128 + WTERMSIG(st);
    return 255;
}

static bool try_reap(struct harness_srv *s)
{
    if (s->pid <= 0)
        return true;
    int st;
    pid_t r = waitpid(s->pid, &st, WNOHANG);
    if (r == s->pid || (r < 0 && errno == ECHILD)) {
        s->status = r == s->pid ? st : (255 << 8);
        s->pid = 0;
        return true;
    }
    return false;
}

int harness_wait_ready(struct harness_srv *s, int timeout_ms)
{
    long long deadline = harness_now_ms() + timeout_ms;
    for (;;) {
        char *ready = strstr(s->err, "primed: ready");
        if (ready) {
            char *eol = strchr(ready, '\n');
            char *p = strstr(ready, " port=");
            if (eol && p && p < eol) {
                s->port = atoi(p + 6);
                return s->port > 0 ? 0 : -EPROTO;
            }
        }
        if (s->err_fd < 0 && try_reap(s))
            return -ECHILD;
        int l = left_ms(deadline);
        if (l == 0)
            return -ETIMEDOUT;
        harness_pump(s, l < 50 ? l : 50);
    }
}

int harness_start(struct harness_srv *s, const char *const *args, const char *const *env)
{
    const char *all[64] = {"--host", "127.0.0.1", "--port", "0"};
    int n = 4;
    for (int i = 0; args && args[i] && n < 63; i++)
        all[n++] = args[i];
    all[n] = NULL;
    int r = harness_spawn(s, all, env);
    if (r)
        return r;
    r = harness_wait_ready(s, 10000);
    if (r) {
        fprintf(stderr, "harness: server not ready (%s); its stderr:\n%s\n", strerror(-r), s->err);
        harness_kill(s);
    }
    return r;
}

int harness_wait_exit(struct harness_srv *s, int timeout_ms)
{
    long long deadline = harness_now_ms() + timeout_ms;
    for (;;) {
        if (try_reap(s)) {
            /* collect what it wrote last (bounded: the pipes are at EOF or soon) */
            for (int i = 0; i < 50 && (s->err_fd >= 0 || s->out_fd >= 0); i++)
                harness_pump(s, 10);
            return decode_status(s->status);
        }
        int l = left_ms(deadline);
        if (l == 0)
            return -ETIMEDOUT;
        harness_pump(s, l < 10 ? l : 10);
    }
}

int harness_stop(struct harness_srv *s, int timeout_ms)
{
    if (s->pid <= 0)
        return decode_status(s->status);
    kill(s->pid, SIGTERM);
    int r = harness_wait_exit(s, timeout_ms);
    if (r == -ETIMEDOUT) {
        fprintf(stderr, "harness: server did not exit %d ms after SIGTERM; killing. stderr:\n%s\n", timeout_ms, s->err);
        harness_kill(s);
        return -ETIMEDOUT;
    }
    return r;
}

void harness_kill(struct harness_srv *s)
{
    if (s->pid > 0) {
        kill(s->pid, SIGKILL);
        int st;
        if (waitpid(s->pid, &st, 0) == s->pid)
            s->status = st;
        s->pid = 0;
    }
    if (s->err_fd >= 0)
        close(s->err_fd);
    if (s->out_fd >= 0)
        close(s->out_fd);
    s->err_fd = s->out_fd = -1;
}

int harness_free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t l = sizeof(a);
    if (bind(fd, (struct sockaddr *)&a, sizeof(a)) || getsockname(fd, (struct sockaddr *)&a, &l)) {
        int e = errno;
        close(fd);
        return -e;
    }
    close(fd);
    return ntohs(a.sin_port);
}

/* ---- client side ----------------------------------------------------------- */

int harness_connect(struct harness_conn *c, int port)
{
    c->fd = -1;
    c->len = 0;
    c->buf = malloc(HARNESS_CONN_BUF);
    if (!c->buf)
        return -ENOMEM;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    struct sockaddr_in a = {
        .sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (connect(fd, (struct sockaddr *)&a, sizeof(a))) {
        int e = errno;
        close(fd);
        free(c->buf);
        c->buf = NULL;
        return -e;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    c->fd = fd;
    return 0;
}

void harness_close(struct harness_conn *c)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    free(c->buf);
    c->buf = NULL;
    c->len = 0;
}

void harness_close_reset(struct harness_conn *c)
{
    if (c->fd >= 0) {
        struct linger l = {.l_onoff = 1, .l_linger = 0};
        setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
    }
    harness_close(c);
}

/* Waits for events on fd until deadline: 0 when ready, -ETIMEDOUT, or -errno. */
static int wait_fd(int fd, short events, long long deadline)
{
    for (;;) {
        struct pollfd pf = {.fd = fd, .events = events};
        int pr = poll(&pf, 1, left_ms(deadline));
        if (pr > 0)
            return 0;
        if (pr == 0)
            return -ETIMEDOUT;
        if (errno != EINTR)
            return -errno;
    }
}

int harness_send(struct harness_conn *c, const void *buf, size_t len, int timeout_ms)
{
    long long deadline = harness_now_ms() + timeout_ms;
    const char *p = buf;
    while (len) {
        int pr = wait_fd(c->fd, POLLOUT, deadline);
        if (pr < 0)
            return pr;
        ssize_t n = send(c->fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR)
                continue;
            return -errno;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int harness_send_str(struct harness_conn *c, const char *s, int timeout_ms)
{
    return harness_send(c, s, strlen(s), timeout_ms);
}

/* Reads more bytes into c->buf before the deadline. Returns bytes read, 0 at
 * EOF, or -errno (-ETIMEDOUT). */
static int fill(struct harness_conn *c, long long deadline)
{
    if (c->len >= HARNESS_CONN_BUF)
        return -ENOBUFS;
    for (;;) {
        int pr = wait_fd(c->fd, POLLIN, deadline);
        if (pr < 0)
            return pr;
        ssize_t n = recv(c->fd, c->buf + c->len, HARNESS_CONN_BUF - c->len, MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            continue;
        if (n < 0)
            return -errno;
        c->len += (size_t)n;
        return (int)n;
    }
}

static void consume(struct harness_conn *c, size_t n)
{
    memmove(c->buf, c->buf + n, c->len - n);
    c->len -= n;
}

static char *find_head_end(const char *b, size_t len)
{
    return memmem(b, len, "\r\n\r\n", 4);
}

static int parse_head(struct harness_resp *r, size_t hlen)
{
    /* head[] holds hlen bytes ending with "\r\n\r\n" */
    r->head[hlen] = '\0';
    char *line = r->head;
    char *eol = strstr(line, "\r\n");
    *eol = '\0';
    int major, minor, status;
    char sp;
    if (sscanf(line, "HTTP/%d.%d %3d%c", &major, &minor, &status, &sp) != 4 || major != 1 || sp != ' ')
        return -EPROTO;
    r->status = status;
    r->minor = minor;
    line = eol + 2;
    while (*line) {
        eol = strstr(line, "\r\n");
        if (!eol)
            return -EPROTO;
        *eol = '\0';
        if (*line == '\0')
            break;
        char *colon = strchr(line, ':');
        if (!colon || r->nheaders >= HARNESS_MAX_HEADERS)
            return -EPROTO;
        *colon = '\0';
        char *v = colon + 1;
        while (*v == ' ' || *v == '\t')
            v++;
        r->names[r->nheaders] = line;
        r->values[r->nheaders] = v;
        r->nheaders++;
        line = eol + 2;
    }
    const char *cl = harness_header(r, "Content-Length");
    if (cl) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(cl, &end, 10);
        if (errno || *end || end == cl)
            return -EPROTO;
        r->content_length = (size_t)v;
        r->has_content_length = true;
    }
    return 0;
}

int harness_read_response(struct harness_conn *c, struct harness_resp *r, bool head, int timeout_ms)
{
    memset(r, 0, offsetof(struct harness_resp, head));
    r->head[0] = '\0';
    r->body = NULL;
    r->body_len = 0;
    r->content_length = 0;
    r->has_content_length = false;
    long long deadline = harness_now_ms() + timeout_ms;
    char *end;
    while (!(end = find_head_end(c->buf, c->len))) {
        if (c->len >= sizeof(r->head) - 1)
            return -EPROTO;
        int n = fill(c, deadline);
        if (n == 0)
            return c->len == 0 ? 0 : -EPROTO;
        if (n < 0)
            return n;
    }
    size_t hlen = (size_t)(end - c->buf) + 4;
    if (hlen >= sizeof(r->head))
        return -EPROTO;
    memcpy(r->head, c->buf, hlen);
    consume(c, hlen);
    int pr = parse_head(r, hlen);
    if (pr)
        return pr;
    if (head)
        return 1;
    if (!r->has_content_length)
        return -EPROTO; /* primed always sends one */
    if (r->content_length > HARNESS_CONN_BUF)
        return -EPROTO;
    while (c->len < r->content_length) {
        int n = fill(c, deadline);
        if (n == 0)
            return -EPROTO;
        if (n < 0)
            return n;
    }
    r->body = malloc(r->content_length + 1);
    if (!r->body)
        return -ENOMEM;
    memcpy(r->body, c->buf, r->content_length);
    r->body[r->content_length] = '\0';
    r->body_len = r->content_length;
    consume(c, r->content_length);
    return 1;
}

int harness_read_responses(struct harness_conn *c, struct harness_resp *r, int n, int timeout_ms)
{
    long long deadline = harness_now_ms() + timeout_ms;
    for (int i = 0; i < n; i++) {
        int x = harness_read_response(c, &r[i], false, left_ms(deadline));
        if (x != 1)
            return i;
    }
    return n;
}

void harness_resp_free(struct harness_resp *r)
{
    free(r->body);
    r->body = NULL;
}

const char *harness_header(const struct harness_resp *r, const char *name)
{
    for (int i = 0; i < r->nheaders; i++)
        if (strcasecmp(r->names[i], name) == 0)
            return r->values[i];
    return NULL;
}

int harness_wait_eof(struct harness_conn *c, int timeout_ms)
{
    long long deadline = harness_now_ms() + timeout_ms;
    size_t before = c->len;
    int n = fill(c, deadline);
    if (n == 0 || n == -ECONNRESET)
        return 0;
    if (n == -ETIMEDOUT)
        return -ETIMEDOUT;
    if (n < 0)
        return n;
    return c->len > before ? 1 : 0;
}

int harness_poll_readable(struct harness_conn *c, int timeout_ms)
{
    if (c->len)
        return 1;
    long long deadline = harness_now_ms() + timeout_ms;
    int n = fill(c, deadline);
    if (n == -ETIMEDOUT)
        return 0;
    if (n > 0)
        return 1;
    return -1;
}

int harness_request(int port, const char *method, const char *path, const char *extra_headers, struct harness_resp *r,
                    int timeout_ms)
{
    struct harness_conn c;
    int e = harness_connect(&c, port);
    if (e)
        return e;
    char req[8192];
    snprintf(req, sizeof(req), "%s %s HTTP/1.1\r\nHost: t\r\n%s\r\n", method, path, extra_headers ? extra_headers : "");
    e = harness_send_str(&c, req, timeout_ms);
    if (e == 0)
        e = harness_read_response(&c, r, strcmp(method, "HEAD") == 0, timeout_ms);
    harness_close(&c);
    return e;
}
