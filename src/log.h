/* log.h - start-up and error logging on stderr, and the optional per-worker
 * buffered access log.
 *
 * Only start-up code may call die(). Everything else logs and carries on.
 */
#ifndef PRIMED_LOG_H
#define PRIMED_LOG_H

#include <stdarg.h>
#include <stddef.h>
#include <stdnoreturn.h>

#if defined(__GNUC__)
#define PRINTF_LIKE(a, b) __attribute__((format(printf, a, b)))
#else
#define PRINTF_LIKE(a, b)
#endif

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

/* Prints "primed: <msg>" on stderr with one write(2). */
void log_msg(const char *fmt, ...) PRINTF_LIKE(1, 2);

/* Prints "primed: <msg>" on stderr and exits with `status`. Start-up only. */
noreturn void die(int status, const char *fmt, ...) PRINTF_LIKE(2, 3);

/* Per-worker access log buffer: lines are appended without syscalls and
 * written out by alog_flush() when more than half full or once a second. */
struct alog {
    char *buf;  /* owned; malloc'd by alog_init(), freed by alog_fini() */
    size_t len;
    size_t cap;
    int fd;     /* not owned (stdout) */
    unsigned long dropped; /* lines lost because a flush failed */
};

/* Returns 0, or -ENOMEM. */
int alog_init(struct alog *a, int fd, size_t cap);
void alog_fini(struct alog *a);
/* Appends one formatted line (a '\n' is added); flushes first when needed. */
void alog_printf(struct alog *a, const char *fmt, ...) PRINTF_LIKE(2, 3);
/* Writes out what is buffered. Returns 0 or -errno. */
int alog_flush(struct alog *a);

#endif
