/* log.c - stderr logging and the per-worker access log buffer.
 *
 * Each stderr message is formatted into a stack buffer and written with one
 * write(2), so lines from different threads never interleave. The access log is
 * a plain byte buffer per worker: no locks, no syscall per request.
 */
#include "log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void vlog(const char *fmt, va_list ap)
{
    char line[1024];
    int n = snprintf(line, sizeof(line), "primed: ");
    int m = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
    if (m < 0)
        m = 0;
    size_t len = (size_t)n + (size_t)m;
    if (len > sizeof(line) - 2)
        len = sizeof(line) - 2;
    line[len++] = '\n';
    ssize_t w = write(STDERR_FILENO, line, len);
    (void)w; /* nowhere left to report a failed write to stderr */
}

void log_msg(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(fmt, ap);
    va_end(ap);
}

noreturn void die(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(fmt, ap);
    va_end(ap);
    exit(status);
}

int alog_init(struct alog *a, int fd, size_t cap)
{
    a->buf = malloc(cap);
    if (!a->buf)
        return -ENOMEM;
    a->len = 0;
    a->cap = cap;
    a->fd = fd;
    a->dropped = 0;
    return 0;
}

void alog_fini(struct alog *a)
{
    alog_flush(a);
    free(a->buf);
    a->buf = NULL;
}

int alog_flush(struct alog *a)
{
    size_t off = 0;
    while (off < a->len) {
        ssize_t w = write(a->fd, a->buf + off, a->len - off);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            int err = errno;
            a->dropped++;
            a->len = 0;
            return -err;
        }
        off += (size_t)w;
    }
    a->len = 0;
    return 0;
}

void alog_printf(struct alog *a, const char *fmt, ...)
{
    if (!a->buf)
        return;
    if (a->len > a->cap / 2)
        alog_flush(a);
    va_list ap;
    va_start(ap, fmt);
    size_t room = a->cap - a->len;
    int n = vsnprintf(a->buf + a->len, room, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n + 1 >= room) {
        a->dropped++; /* a line longer than half the buffer: cannot happen with our formats */
        return;
    }
    a->len += (size_t)n;
    a->buf[a->len++] = '\n';
}
