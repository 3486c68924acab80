/* io.c - chooses the I/O backend, in one place, and forwards to it.
 *
 * io_uring first; when the kernel or a seccomp filter refuses io_uring_setup
 * (ENOSYS from Docker/containerd/Kubernetes RuntimeDefault profiles, EPERM
 * from kernel.io_uring_disabled, EACCES from io_uring_group) and the user did
 * not insist on it, epoll. Everything above this file is backend-agnostic.
 */
#include "io.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

int io_init(struct io *io, enum io_kind want, unsigned entries, unsigned max_ops, int max_fd, unsigned tune, char *why,
            size_t whylen)
{
    memset(io, 0, sizeof(*io));
    why[0] = '\0';
    io->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (io->wake_fd < 0)
        return -errno;

    int r = -ENOSYS;
    if (want != IO_EPOLL) {
        r = io_uring_backend_init(io, entries, max_ops, tune);
        if (r == 0)
            return 0;
        if (want == IO_URING || (r != -ENOSYS && r != -EPERM && r != -EACCES)) {
            io_close_wake(io);
            return r;
        }
        snprintf(why, whylen, "io_uring blocked (%s%s): using epoll; see docs/containers.md#seccomp",
                 r == -ENOSYS  ? "ENOSYS, seccomp filter or old kernel"
                 : r == -EPERM ? "EPERM, kernel.io_uring_disabled"
                               : "EACCES, io_uring_group",
                 "");
    }
    r = io_epoll_backend_init(io, max_fd);
    if (r) {
        io_close_wake(io);
        return r;
    }
    return 0;
}

void io_fini(struct io *io)
{
    /* wake_fd stays open: other threads may still io_wake() this worker
     * while it exits; the server closes it after joining (io_close_wake). */
    if (io->ops)
        io->ops->fini(io);
    io->ops = NULL;
}

void io_close_wake(struct io *io)
{
    if (io->wake_fd >= 0)
        close(io->wake_fd);
    io->wake_fd = -1;
}

int io_accept(struct io *io, int lfd)
{
    return io->ops->accept(io, lfd);
}
int io_accept_stop(struct io *io, int lfd)
{
    return io->ops->accept_stop(io, lfd);
}
int io_conn_open(struct io *io, int fd)
{
    if (!io->ops->close) {
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    }
    return io->ops->conn_open(io, fd);
}

void io_conn_close(struct io *io, int fd)
{
    io->ops->conn_close(io, fd);
}

int io_shutdown(struct io *io, int fd, int how)
{
    if (io->ops->shutdown)
        return io->ops->shutdown(io, fd, how);
    return shutdown(fd, how) == 0 ? 0 : -errno;
}

void io_close(struct io *io, int fd)
{
    if (io->ops->close)
        io->ops->close(io, fd);
    else
        close(fd);
}

int io_socket(struct io *io, int family)
{
    /* io_uring: a blocking socket, as accepted ones are (its ops never block
     * the thread; a non-blocking one would only add EAGAIN round trips) */
    int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC | (io->kind == IO_EPOLL ? SOCK_NONBLOCK : 0), 0);
    return fd >= 0 ? fd : -errno;
}

int io_connect(struct io *io, int fd, uint64_t tag, const struct sockaddr *sa, socklen_t len)
{
    return io->ops->connect(io, fd, tag, sa, len);
}

int io_recv(struct io *io, int fd, uint64_t tag, void *buf, size_t len, unsigned hints)
{
    return io->ops->recv(io, fd, tag, buf, len, hints);
}

int io_recv_select(struct io *io, int fd, uint64_t tag, unsigned hints)
{
    return io->ops->recv_select ? io->ops->recv_select(io, fd, tag, hints) : -ENOTSUP;
}

void io_buf_put(struct io *io, char *buf)
{
    if (buf && io->ops->buf_put)
        io->ops->buf_put(io, buf);
}

int io_send(struct io *io, int fd, uint64_t tag, struct msghdr *msg)
{
    return io->ops->send(io, fd, tag, msg);
}

int io_poll(struct io *io, int fd, uint64_t tag, unsigned events)
{
    return io->ops->poll ? io->ops->poll(io, fd, tag, events) : -ENOTSUP;
}

void io_poll_cancel(struct io *io, int fd, uint64_t tag)
{
    if (io->ops->poll_cancel)
        io->ops->poll_cancel(io, fd, tag);
}

int io_wait(struct io *io, struct io_event *evs, int max, int timeout_ms)
{
    return io->ops->wait(io, evs, max, timeout_ms);
}

void io_wake(struct io *io)
{
    uint64_t one = 1;
    /* EAGAIN means the counter is already non-zero: the wake is pending. */
    ssize_t w = write(io->wake_fd, &one, sizeof(one));
    (void)w;
}
