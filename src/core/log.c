/* log.c - stderr logging and the per-worker access log buffer.
 *
 * Each stderr message is formatted into a stack buffer and written with one
 * write(2), so lines from different threads never interleave. The access log is
 * a plain byte buffer per worker: no locks, no syscall per request.
 */
#define _GNU_SOURCE
#include "log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

static void vlog(const char *fmt, va_list ap)
{
    char line[4096]; /* the ready line names every setting */
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
    a->blocking = false;
    a->dropped = a->reported = 0;
    return 0;
}

/* One write of buf[0, len): with RWF_NOWAIT until the fd says it has none
 * (EOPNOTSUPP: regular files on most file systems, ttys), then plain. */
static ssize_t write_some(struct alog *a, size_t len)
{
    for (;;) {
        ssize_t w;
        if (!a->blocking) {
            struct iovec iov = {a->buf, len};
            w = pwritev2(a->fd, &iov, 1, -1, RWF_NOWAIT);
            if (w < 0 && (errno == EOPNOTSUPP || errno == EINVAL)) {
                a->blocking = true;
                continue;
            }
        } else {
            w = write(a->fd, a->buf, len);
        }
        if (w < 0 && errno == EINTR)
            continue;
        return w < 0 ? -errno : w;
    }
}

int alog_flush(struct alog *a)
{
    while (a->len) {
        ssize_t w = write_some(a, a->len);
        if (w == -EAGAIN)
            return -EAGAIN; /* the reader is behind: the rest waits for the next flush */
        if (w <= 0) {
            /* count the lines lost */
            for (size_t i = 0; i < a->len; i++)
                a->dropped += a->buf[i] == '\n';
            a->len = 0;
            return w < 0 ? (int)w : -EIO;
        }
        memmove(a->buf, a->buf + w, a->len - (size_t)w);
        a->len -= (size_t)w;
    }
    return 0;
}

unsigned long alog_report(struct alog *a)
{
    unsigned long n = a->dropped - a->reported;
    a->reported = a->dropped;
    return n;
}

void alog_fini(struct alog *a)
{
    if (a->buf && a->len) {
        a->blocking = true; /* at exit: wait for the reader rather than lose the tail */
        alog_flush(a);
    }
    free(a->buf);
    a->buf = NULL;
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
        a->dropped++; /* full: the reader of stdout is that far behind */
        return;
    }
    a->len += (size_t)n;
    a->buf[a->len++] = '\n';
}

int log_einval(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -EINVAL;
}
