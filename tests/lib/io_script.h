/* io_script.h - a scripted, in-memory io.h backend for tests.
 *
 * No kernel: fds are small numbers the test picks (< IO_SCRIPT_FDS). A receive
 * or send is recorded when armed; the test completes it (data, EOF, reset,
 * -ECANCELED, a short send) and the completion waits in a queue until
 * io_wait() hands it out, exactly as a backend would. Shutdowns and closes
 * are recorded. Deterministic: nothing happens that the test did not script.
 */
#ifndef PRIMED_IO_SCRIPT_H
#define PRIMED_IO_SCRIPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "io.h"

#define IO_SCRIPT_FDS 16
#define IO_SCRIPT_OUT (256 * 1024)
#define IO_SCRIPT_LAND 1024 /* a select receive's landing buffer (io_script_select()) */

struct io_script_fd {
    bool recv_armed, send_armed;
    uint64_t recv_tag, send_tag; /* the tags of the last receive / send armed */
    char *recv_buf;              /* the conn's, while armed; NULL: a select receive */
    size_t recv_len;
    unsigned recv_hints;     /* IO_RECV_* of the last receive armed */
    unsigned recv_nth;       /* which receive of the script's that was (io_script.recvs then): arming order */
    struct msghdr *send_msg; /* the conn's, while armed */
    bool shut_rd, shut_wr, closed, opened;
    char out[IO_SCRIPT_OUT]; /* every byte sent on the fd, NUL-terminated */
    size_t out_len;
    char land[IO_SCRIPT_LAND]; /* where its select receives land */
    bool land_lent;            /* land is the caller's until io_buf_put() */
};

struct io_script {
    struct io io; /* io.be points here */
    struct io_script_fd fd[IO_SCRIPT_FDS];
    struct io_event q[256]; /* completions not yet returned by io_wait() */
    unsigned nq;
    unsigned recvs, sends; /* operations armed so far */
    unsigned selects;      /* of the receives, select receives */
    unsigned lent;         /* landing buffers handed out and not yet put back */
};

/* Makes s a backend (s->io is the struct io to hand to the code under test). */
void io_script_init(struct io_script *s);
/* Gives the backend select receives of at most len bytes (0: none, the
 * default; at most IO_SCRIPT_LAND). */
void io_script_select(struct io_script *s, unsigned len);
/* Forgets fd's record (before the test reuses the number). */
void io_script_reset_fd(struct io_script *s, int fd);

/* Completes fd's armed receive with len bytes of data (at most what it asked
 * for: a select receive lands them in fd's landing buffer; returns how many
 * went in, -1 when no receive is armed). */
int io_script_data(struct io_script *s, int fd, const char *data, size_t len);
/* Completes fd's armed receive with res (0: EOF, -ECONNRESET, -ECANCELED ...).
 * Returns 0, or -1 when none is armed. */
int io_script_recv_res(struct io_script *s, int fd, int res);
/* Completes fd's armed send with up to max bytes taken (appended to out).
 * Returns the bytes, or -1 when no send is armed. */
int io_script_send(struct io_script *s, int fd, size_t max);
/* Queues a completion as is (a stale tag, say). */
void io_script_push(struct io_script *s, uint8_t op, uint64_t tag, int res);

/* How many times needle stands in hay (an fd's out, say), not overlapping. */
unsigned io_script_count(const char *hay, const char *needle);

#endif
