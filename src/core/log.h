/* log.h - start-up and error logging on stderr, and the optional per-worker
 * buffered access log.
 *
 * Only start-up code may call die(). Everything else logs and carries on.
 */
#ifndef PRIMED_LOG_H
#define PRIMED_LOG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdnoreturn.h>

#if defined(__GNUC__)
#define PRINTF_LIKE(a, b) __attribute__((format(printf, a, b)))
#else
#define PRINTF_LIKE(a, b)
#endif

/* Prints "primed: <msg>" on stderr with one write(2). */
void log_msg(const char *fmt, ...) PRINTF_LIKE(1, 2);

/* Prints "primed: <msg>" on stderr and exits with `status`. Start-up only. */
noreturn void die(int status, const char *fmt, ...) PRINTF_LIKE(2, 3);

/* A parser's refusal: the one-line reason into err (errlen bytes, always
 * NUL-terminated). Returns -EINVAL, for `return log_einval(...)`. */
int log_einval(char *err, size_t errlen, const char *fmt, ...) PRINTF_LIKE(3, 4);

/* Per-worker access log buffer: lines are appended without syscalls and
 * written out by alog_flush() when more than half full or once a second.
 * A flush never blocks the worker: it writes with RWF_NOWAIT where the fd
 * supports it (pipes, sockets), keeps what did not fit for the next flush,
 * and when the buffer is full drops new lines and counts them. A fd without
 * RWF_NOWAIT (a regular file, a tty) gets plain write(2)s. */
struct alog {
    char *buf; /* owned; malloc'd by alog_init(), freed by alog_fini() */
    size_t len;
    size_t cap;
    int fd;                 /* not owned (stdout) */
    bool blocking;          /* fd refused RWF_NOWAIT: plain write(2) */
    unsigned long dropped;  /* lines lost: the buffer was full, or a write failed */
    unsigned long reported; /* dropped as of the last alog_report() */
};

/* Returns 0, or -ENOMEM. */
int alog_init(struct alog *a, int fd, size_t cap);
/* Appends one formatted line (a '\n' is added); flushes first when needed. */
void alog_printf(struct alog *a, const char *fmt, ...) PRINTF_LIKE(2, 3);
/* Writes out what it can of the buffer without blocking (see above). Returns
 * 0 when all of it went out, -EAGAIN when some waits for the next flush, or
 * -errno (then the buffer is dropped and counted). */
int alog_flush(struct alog *a);
/* Lines dropped since the last call (for a once-a-second stderr note). */
unsigned long alog_report(struct alog *a);
/* Writes out everything, blocking if it must (at exit only). */
void alog_fini(struct alog *a);

#endif
