/* io.h - the I/O backend seam: a tiny completion-style event API.
 *
 * The worker asks for accepts, connects, receives and sends and gets
 * completions back;
 * it never knows whether io_uring runs them or an epoll loop emulates them
 * (io_uring.c, io_epoll.c). Like redis' ae.c: one small API, a backend per file,
 * chosen in one place (io_init()).
 *
 * Ownership: a buffer or msghdr handed to io_recv()/io_send() belongs to the
 * backend (the kernel, for io_uring) until its completion is returned.
 * At most one receive and one send are in flight per fd.
 *
 * A select receive (io_recv_select) takes no buffer: the backend lands the
 * bytes in one of its own (io_uring: a provided-buffer ring), so a
 * connection that waits for its next request holds no read buffer. The
 * completion's buf is lent to the caller until io_buf_put().
 */
#ifndef PRIMED_IO_H
#define PRIMED_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>


/* Which backend (--io). */
enum io_kind { IO_AUTO, IO_URING, IO_EPOLL };

enum io_op {
    IO_OP_ACCEPT = 1, /* res: new fd or -errno; more=false: accepting stopped, re-arm */
    IO_OP_RECV,       /* res: bytes, 0 at EOF, or -errno (-ENOBUFS: a select receive found no buffer) */
    IO_OP_SEND,       /* res: bytes sent (maybe short) or -errno */
    IO_OP_WAKE,       /* io_wake() was called (possibly several times) */
    IO_OP_CONNECT,    /* res: 0 connected, or -errno (ECONNREFUSED, ...) */
    IO_OP_POLL,       /* res: the IO_POLL_* the fd is ready for, or -errno (-ECANCELED) */
    IO_OP_INTERNAL,
};

/* io_poll() events. */
#define IO_POLL_IN  1u
#define IO_POLL_OUT 2u

/* io_recv() hints. */
#define IO_RECV_LATER 1u /* a response was just queued: the next request is rarely there yet */

/* Comparison switches of the io_uring backend (--uring-* in config.h); the
 * epoll backend accepts them and ignores them. */
#define IO_TUNE_POLL_FIRST  1u /* IO_RECV_LATER receives go IORING_RECVSEND_POLL_FIRST */
#define IO_TUNE_SINGLE_SEND 2u /* a one-iovec send goes IORING_OP_SEND, not SENDMSG */
#define IO_TUNE_OWN_BUFFERS 4u /* no select receive: every connection keeps its own read buffer */

struct io_event {
    uint8_t op;
    bool more;
    int32_t res;
    uint64_t tag; /* the caller's tag of the op (IO_TAG_BITS wide), echoed back */
    char *buf;    /* IO_OP_RECV of a select receive with res > 0: where the res bytes
                     are, lent until io_buf_put(); NULL otherwise */
};

/* Tags are the caller's: slots.h packs owner, slot and generation. */
#define IO_TAG_BITS 56
#define IO_TAG_MASK ((UINT64_C(1) << IO_TAG_BITS) - 1)

struct io;

/* One backend: io_uring.c and io_epoll.c each define one of these. */
struct io_ops {
    int (*accept)(struct io *io, int lfd);
    int (*accept_stop)(struct io *io, int lfd);
    int (*conn_open)(struct io *io, int fd);
    void (*conn_close)(struct io *io, int fd);
    int (*recv)(struct io *io, int fd, uint64_t tag, void *buf, size_t len, unsigned hints);
    /* NULL where the backend has no select receive (io->select_len 0) */
    int (*recv_select)(struct io *io, int fd, uint64_t tag, unsigned hints);
    void (*buf_put)(struct io *io, char *buf);
    int (*send)(struct io *io, int fd, uint64_t tag, struct msghdr *msg);
    int (*connect)(struct io *io, int fd, uint64_t tag, const struct sockaddr *sa, socklen_t len);
    int (*poll)(struct io *io, int fd, uint64_t tag, unsigned events);
    void (*poll_cancel)(struct io *io, int fd, uint64_t tag);
    int (*wait)(struct io *io, struct io_event *evs, int max, int timeout_ms);
    void (*fini)(struct io *io);
    /* A scripted backend (tests/lib/io_script.c): its fds are not sockets, and
     * shutdown/close go to these instead of the kernel. NULL: the syscalls. */
    int (*shutdown)(struct io *io, int fd, int how);
    void (*close)(struct io *io, int fd);
};

struct io {
    enum io_kind kind; /* IO_URING or IO_EPOLL once initialised */
    const struct io_ops *ops;
    int wake_fd;       /* eventfd, owned; written by io_wake() from any thread */
    uint64_t wake_buf; /* read target for wake_fd (io_uring) */
    void *be;          /* backend state, owned by the backend */
    unsigned select_len; /* the most a select receive returns at once; 0: no select receive */
    char desc[160];    /* what runs and with which features, for the ready line */
};

/* Sets up a backend: IO_URING or IO_EPOLL as asked, or with IO_AUTO io_uring
 * and, when the kernel or a seccomp filter refuses it (ENOSYS, EPERM, EACCES),
 * epoll. why receives the reason for a fallback ("" when none). max_fd bounds
 * the fds it will be asked about; max_ops the operations the caller may have
 * in flight at once (io_uring sizes its completion queue from it); tune the
 * IO_TUNE_* switches (io_uring only). Returns 0 or -errno. */
int io_init(struct io *io, enum io_kind want, unsigned entries, unsigned max_ops, int max_fd, unsigned tune, char *why,
            size_t whylen);
/* Tears the backend down; the wake eventfd stays open (see io_close_wake). */
void io_fini(struct io *io);
/* Closes the wake eventfd once no thread can call io_wake() on io any more. */
void io_close_wake(struct io *io);

/* Starts accepting on a listening socket (multishot where possible); its
 * completions carry tag = lfd. Returns 0 or -errno. */
int io_accept(struct io *io, int lfd);
/* Stops accepting on lfd; an accept completion may still arrive. Returns 0 or -errno. */
int io_accept_stop(struct io *io, int lfd);

/* A connection fd is born (TCP_NODELAY is set here) / about to be closed (no
 * op of it in flight). io_conn_open returns 0 or -errno. */
int io_conn_open(struct io *io, int fd);
void io_conn_close(struct io *io, int fd);
/* shutdown(2) and close(2) of a connection fd, through the backend's hooks
 * when it has them. io_shutdown returns 0 or -errno. */
int io_shutdown(struct io *io, int fd, int how);
void io_close(struct io *io, int fd);

/* A TCP socket of family for an outgoing connection, as the backend wants
 * it (non-blocking for epoll); register it with io_conn_open() before
 * io_connect(). Returns the fd (owned by the caller) or -errno. */
int io_socket(struct io *io, int family);
/* Connects fd to sa (which stays valid until the completion). At most one
 * connect in flight per fd, and no receive or send before it completes.
 * Returns 0 or -errno (then no completion comes). */
int io_connect(struct io *io, int fd, uint64_t tag, const struct sockaddr *sa, socklen_t len);

/* Receives up to len bytes into buf; hints: IO_RECV_* (0: none), which a
 * backend may use or ignore. Returns 0 or -errno (then no completion comes). */
int io_recv(struct io *io, int fd, uint64_t tag, void *buf, size_t len, unsigned hints);
/* Receives up to io->select_len bytes into a buffer the backend picks when
 * they arrive (the completion's buf, lent until io_buf_put()); nothing is
 * held while the fd is idle. At EOF or on an error no buffer is lent; with
 * none free the completion is -ENOBUFS (nothing lost: ask again). Returns 0
 * or -errno (-ENOTSUP: io->select_len is 0). */
int io_recv_select(struct io *io, int fd, uint64_t tag, unsigned hints);
/* Gives a select receive's buffer back (ev->buf). */
void io_buf_put(struct io *io, char *buf);
/* Sends msg (iovecs stay valid until the completion). Returns 0 or -errno. */
int io_send(struct io *io, int fd, uint64_t tag, struct msghdr *msg);

/* Readiness of a socket another library reads and writes itself (libpq):
 * one completion when fd is ready for any of events (IO_POLL_IN, _OUT),
 * then the poll is over (ask again). At most one poll in flight per fd; do
 * not mix with io_recv/io_send on it. Returns 0 or -errno (-ENOTSUP: a
 * backend without it). */
int io_poll(struct io *io, int fd, uint64_t tag, unsigned events);
/* Removes fd's poll before fd is closed; one completion with that tag may
 * still come (-ECANCELED, or readiness found before the cancel), none
 * after it. */
void io_poll_cancel(struct io *io, int fd, uint64_t tag);

/* Submits what is queued and waits up to timeout_ms (0: do not block) for at
 * least one completion. Returns the number of events written to evs (0 on
 * timeout), or -errno. */
int io_wait(struct io *io, struct io_event *evs, int max, int timeout_ms);

/* Wakes the worker blocked in io_wait() on io. Thread-safe, async-signal-safe. */
void io_wake(struct io *io);

/* Backend set-up (io_uring.c, io_epoll.c): fill io->ops, io->be, io->desc.
 * wake_fd is already open. Return 0 or -errno. */
int io_uring_backend_init(struct io *io, unsigned entries, unsigned max_ops, unsigned tune);
int io_epoll_backend_init(struct io *io, int max_fd);

#endif
