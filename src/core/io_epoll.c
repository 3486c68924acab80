/* io_epoll.c - the epoll backend: completions emulated over readiness.
 *
 * For where io_uring is refused (seccomp RuntimeDefault in Docker >= 25,
 * containerd 2.0 and so Kubernetes; kernel.io_uring_disabled; gVisor).
 * Connection fds are registered once, edge-triggered for in and out, and
 * carry "readable"/"writable" flags: a receive or send the worker asks for runs
 * at the next io_wait() when the fd is known ready (no syscall wasted on
 * EAGAIN), else when its edge arrives. A short read or write clears the flag
 * (the socket is drained or full), as nginx does. Listeners are level-
 * triggered and accepted in batches with accept4(SOCK_NONBLOCK|SOCK_CLOEXEC).
 * Per-fd state is a table indexed by fd: no allocation after set-up.
 */
#define _GNU_SOURCE
#include "io.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#define EP_WAKE      (UINT64_C(1) << 62)
#define EP_LISTEN    (UINT64_C(1) << 61)
#define EP_POLL      (UINT64_C(1) << 60)
#define ACCEPT_BATCH 64

struct ep_fd {
    uint64_t recv_tag, send_tag, connect_tag;
    void *rbuf; /* not owned: the worker's, until the completion */
    size_t rlen;
    struct msghdr *msg; /* not owned: the worker's, until the completion */
    bool want_recv, want_send;
    bool want_connect; /* a connect in progress: done when writable (SO_ERROR) */
    bool connect_done; /* connect() itself finished: connect_res is the result */
    int connect_res;
    bool readable, writable;
    bool hup; /* the peer's FIN (or an error) was seen: reads never block again */
    bool queued; /* on the ready list */
    bool poll_added; /* io_poll: in the epoll set, level-triggered one-shot */
    uint32_t poll_events; /* its epoll events, to re-arm */
    uint64_t poll_tag;
};

struct epoll_be {
    int epfd;
    int max_fd;
    struct ep_fd *fds; /* owned, max_fd entries */
    int *ready;        /* owned stack of fds with a runnable op */
    int nready;
    int lfd; /* the listener being accepted on, or -1 */
    bool lfd_registered;
    bool accept_stopped; /* owe the worker an ECANCELED accept completion */
    struct epoll_event evbuf[128];
};

static void mark_ready(struct epoll_be *e, int fd)
{
    struct ep_fd *f = &e->fds[fd];
    if (f->queued)
        return;
    f->queued = true;
    e->ready[e->nready++] = fd;
}

static int e_accept(struct io *io, int lfd)
{
    struct epoll_be *e = io->be;
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = EP_LISTEN | (uint64_t)lfd};
    if (!e->lfd_registered && epoll_ctl(e->epfd, EPOLL_CTL_ADD, lfd, &ev) < 0)
        return -errno;
    e->lfd = lfd;
    e->lfd_registered = true;
    return 0;
}

static int e_accept_stop(struct io *io, int lfd)
{
    struct epoll_be *e = io->be;
    if (e->lfd_registered)
        epoll_ctl(e->epfd, EPOLL_CTL_DEL, lfd, NULL);
    e->lfd_registered = false;
    /* like a cancelled multishot accept: one last completion, more=false */
    e->accept_stopped = true;
    return 0;
}

static int e_conn_open(struct io *io, int fd)
{
    struct epoll_be *e = io->be;
    if (fd >= e->max_fd)
        return -EMFILE;
    struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, .data.u64 = (uint64_t)fd};
    if (epoll_ctl(e->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
        return -errno;
    /* a new client has usually sent its request already: try it at once */
    e->fds[fd] = (struct ep_fd){.readable = true, .writable = true};
    return 0;
}

static void e_conn_close(struct io *io, int fd)
{
    struct epoll_be *e = io->be;
    if (fd >= 0 && fd < e->max_fd) {
        bool queued = e->fds[fd].queued;
        e->fds[fd] = (struct ep_fd){.queued = queued}; /* a queued entry is skipped when popped */
    }
    /* close() removes it from the epoll set: no EPOLL_CTL_DEL syscall */
}

static int e_recv(struct io *io, int fd, uint64_t tag, void *buf, size_t len, unsigned hints)
{
    (void)hints; /* readiness is tracked already: it reads only a readable socket */
    struct epoll_be *e = io->be;
    if (fd < 0 || fd >= e->max_fd)
        return -EBADF;
    struct ep_fd *f = &e->fds[fd];
    f->want_recv = true;
    f->recv_tag = tag;
    f->rbuf = buf;
    f->rlen = len;
    if (f->readable)
        mark_ready(e, fd);
    return 0;
}

static int e_send(struct io *io, int fd, uint64_t tag, struct msghdr *msg)
{
    struct epoll_be *e = io->be;
    if (fd < 0 || fd >= e->max_fd)
        return -EBADF;
    struct ep_fd *f = &e->fds[fd];
    f->want_send = true;
    f->send_tag = tag;
    f->msg = msg;
    if (f->writable)
        mark_ready(e, fd);
    return 0;
}

static int e_connect(struct io *io, int fd, uint64_t tag, const struct sockaddr *sa, socklen_t len)
{
    struct epoll_be *e = io->be;
    if (fd < 0 || fd >= e->max_fd)
        return -EBADF;
    struct ep_fd *f = &e->fds[fd];
    f->want_connect = true;
    f->connect_tag = tag;
    f->connect_done = false;
    if (connect(fd, sa, len) == 0) {
        f->connect_done = true; /* loopback often completes at once */
        f->connect_res = 0;
    } else if (errno == EINPROGRESS) {
        f->writable = false; /* the edge of EPOLLOUT says it finished */
        return 0;
    } else {
        f->connect_done = true;
        f->connect_res = -errno;
    }
    mark_ready(e, fd);
    return 0;
}

/* A socket another library reads and writes (io_poll): level-triggered and
 * one-shot in the epoll set, so that readiness left after a read the
 * library did not finish is reported again (edge-triggered would lose it). */
static int e_poll(struct io *io, int fd, uint64_t tag, unsigned events)
{
    struct epoll_be *e = io->be;
    if (fd < 0 || fd >= e->max_fd)
        return -EBADF;
    struct ep_fd *f = &e->fds[fd];
    struct epoll_event ev = {
        .events = EPOLLONESHOT | ((events & IO_POLL_IN) ? EPOLLIN | EPOLLRDHUP : 0) | ((events & IO_POLL_OUT) ? EPOLLOUT : 0),
        .data.u64 = EP_POLL | (uint64_t)fd,
    };
    int r = epoll_ctl(e->epfd, f->poll_added ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd, &ev);
    if (r < 0 && errno == ENOENT) /* the fd was closed (and reused) without io_poll_cancel() */
        r = epoll_ctl(e->epfd, EPOLL_CTL_ADD, fd, &ev);
    if (r < 0)
        return -errno;
    f->poll_added = true;
    f->poll_events = ev.events;
    f->poll_tag = tag;
    return 0;
}

static void e_poll_cancel(struct io *io, int fd, uint64_t tag)
{
    (void)tag;
    struct epoll_be *e = io->be;
    if (fd < 0 || fd >= e->max_fd || !e->fds[fd].poll_added)
        return;
    epoll_ctl(e->epfd, EPOLL_CTL_DEL, fd, NULL);
    e->fds[fd].poll_added = false;
}

/* Runs what fd wants and is ready for; appends completions. */
static int run_fd(struct epoll_be *e, int fd, struct io_event *evs, int n, int max)
{
    struct ep_fd *f = &e->fds[fd];
    if (n < max && f->want_connect && (f->connect_done || f->writable)) {
        int res = f->connect_res;
        if (!f->connect_done) {
            int err = 0;
            socklen_t elen = sizeof(err);
            if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) < 0)
                err = errno;
            struct sockaddr_storage peer;
            socklen_t plen = sizeof(peer);
            if (err == 0 && getpeername(fd, (struct sockaddr *)&peer, &plen) < 0 && errno == ENOTCONN) {
                /* a stale edge: the EPOLLHUP an unconnected socket reports
                 * when it is added; the real one comes when the handshake ends */
                f->writable = false;
                return n;
            }
            res = -err;
        }
        f->want_connect = f->connect_done = false;
        f->writable = res == 0;
        f->hup = false; /* an unconnected socket's EPOLLHUP said nothing of the peer */
        evs[n++] = (struct io_event){.op = IO_OP_CONNECT, .res = res, .tag = f->connect_tag};
        return n;
    }
    if (n < max && f->want_send && f->writable) {
        size_t total = 0;
        for (size_t i = 0; i < f->msg->msg_iovlen; i++)
            total += f->msg->msg_iov[i].iov_len;
        ssize_t r = sendmsg(fd, f->msg, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            f->writable = false;
        } else {
            if (r >= 0 && (size_t)r < total)
                f->writable = false;
            f->want_send = false;
            evs[n++] = (struct io_event){.op = IO_OP_SEND, .res = r < 0 ? -errno : (int32_t)r, .tag = f->send_tag};
        }
    }
    if (n < max && f->want_recv && f->readable) {
        ssize_t r = recv(fd, f->rbuf, f->rlen, MSG_DONTWAIT);
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            f->readable = false;
        } else {
            /* a short read drained the socket, unless the FIN came with the
             * data: then no edge will follow, and the next read returns 0 */
            if (r > 0 && (size_t)r < f->rlen && !f->hup)
                f->readable = false;
            f->want_recv = false;
            evs[n++] = (struct io_event){.op = IO_OP_RECV, .res = r < 0 ? -errno : (int32_t)r, .tag = f->recv_tag};
        }
    }
    return n;
}

static int do_accepts(struct epoll_be *e, int lfd, struct io_event *evs, int n, int max)
{
    for (int i = 0; i < ACCEPT_BATCH && n < max; i++) {
        int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd >= 0) {
            evs[n++] = (struct io_event){.op = IO_OP_ACCEPT, .res = fd, .more = true, .tag = (uint64_t)lfd};
            continue;
        }
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR || errno == ECONNABORTED)
            break;
        /* EMFILE and friends: stop (the listener stays readable and would spin);
         * the worker re-arms after a pause, as with io_uring */
        int err = errno;
        e_accept_stop(&(struct io){.be = e}, lfd);
        e->accept_stopped = false; /* this completion is the last one */
        evs[n++] = (struct io_event){.op = IO_OP_ACCEPT, .res = -err, .more = false, .tag = (uint64_t)lfd};
        break;
    }
    return n;
}

static int e_wait(struct io *io, struct io_event *evs, int max, int timeout_ms)
{
    struct epoll_be *e = io->be;
    int n = 0;
    if (e->accept_stopped && n < max) {
        e->accept_stopped = false;
        evs[n++] = (struct io_event){.op = IO_OP_ACCEPT, .res = -ECANCELED, .more = false, .tag = (uint64_t)e->lfd};
    }
    int nev = epoll_wait(e->epfd, e->evbuf, 128, (e->nready || n) ? 0 : timeout_ms);
    if (nev < 0 && errno != EINTR)
        return -errno;
    for (int i = 0; i < nev; i++) {
        uint64_t d = e->evbuf[i].data.u64;
        uint32_t what = e->evbuf[i].events;
        if (d & EP_WAKE) {
            uint64_t v;
            ssize_t r = read(io->wake_fd, &v, sizeof(v));
            (void)r;
            if (n < max)
                evs[n++] = (struct io_event){.op = IO_OP_WAKE};
            continue;
        }
        if (d & EP_LISTEN) {
            if (e->lfd_registered)
                n = do_accepts(e, (int)(d & 0xffffffffu), evs, n, max);
            continue;
        }
        if (d & EP_POLL) {
            /* one-shot: disarmed until the next io_poll() */
            int pfd = (int)(d & 0xffffffffu);
            struct ep_fd *f = &e->fds[pfd];
            int res = ((what & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) ? IO_POLL_IN : 0) |
                      ((what & (EPOLLOUT | EPOLLHUP | EPOLLERR)) ? IO_POLL_OUT : 0);
            if (n < max) {
                evs[n++] = (struct io_event){.op = IO_OP_POLL, .res = res, .tag = f->poll_tag};
            } else {
                /* no room: armed again, level-triggered, it fires at the next wait */
                struct epoll_event again = {.events = f->poll_events, .data.u64 = EP_POLL | (uint64_t)pfd};
                epoll_ctl(e->epfd, EPOLL_CTL_MOD, pfd, &again);
            }
            continue;
        }
        int fd = (int)d;
        struct ep_fd *f = &e->fds[fd];
        if (what & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))
            f->readable = true;
        if (what & (EPOLLRDHUP | EPOLLHUP | EPOLLERR))
            f->hup = true;
        if (what & (EPOLLOUT | EPOLLHUP | EPOLLERR))
            f->writable = true;
        if ((f->want_recv && f->readable) || (f->want_send && f->writable) || (f->want_connect && f->writable))
            mark_ready(e, fd);
    }
    /* run ready fds; what does not fit in evs stays for the next call */
    while (e->nready && n < max) {
        int fd = e->ready[--e->nready];
        e->fds[fd].queued = false;
        n = run_fd(e, fd, evs, n, max);
        struct ep_fd *f = &e->fds[fd];
        if ((f->want_recv && f->readable) || (f->want_send && f->writable))
            mark_ready(e, fd); /* evs filled up before both ops ran */
    }
    return n;
}

static void e_fini(struct io *io)
{
    struct epoll_be *e = io->be;
    if (!e)
        return;
    close(e->epfd);
    free(e->fds);
    free(e->ready);
    free(e);
    io->be = NULL;
}

static const struct io_ops epoll_ops = {
    .accept = e_accept,
    .accept_stop = e_accept_stop,
    .conn_open = e_conn_open,
    .conn_close = e_conn_close,
    .recv = e_recv,
    .send = e_send,
    .connect = e_connect,
    .poll = e_poll,
    .poll_cancel = e_poll_cancel,
    .wait = e_wait,
    .fini = e_fini,
};

int io_epoll_backend_init(struct io *io, int max_fd)
{
    if (max_fd <= 0 || max_fd > (1 << 20))
        max_fd = 1 << 20;
    struct epoll_be *e = calloc(1, sizeof(*e));
    if (!e)
        return -ENOMEM;
    e->lfd = -1;
    e->max_fd = max_fd;
    e->fds = calloc((size_t)max_fd, sizeof(*e->fds));
    e->ready = calloc((size_t)max_fd, sizeof(*e->ready));
    e->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (!e->fds || !e->ready || e->epfd < 0) {
        int err = e->epfd < 0 ? errno : ENOMEM;
        if (e->epfd >= 0)
            close(e->epfd);
        free(e->fds);
        free(e->ready);
        free(e);
        return -err;
    }
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = EP_WAKE};
    if (epoll_ctl(e->epfd, EPOLL_CTL_ADD, io->wake_fd, &ev) < 0) {
        int err = errno;
        close(e->epfd);
        free(e->fds);
        free(e->ready);
        free(e);
        return -err;
    }
    io->be = e;
    io->ops = &epoll_ops;
    io->kind = IO_EPOLL;
    snprintf(io->desc, sizeof(io->desc), "epoll(edge-triggered)");
    return 0;
}
