/* io_script.c - the scripted io.h backend (io_script.h).
 *
 * Owns only its records and its completion queue; the buffers and msghdrs it
 * is handed stay the caller's and are read or written only when the test
 * completes an operation. Never a syscall.
 */
#include "io_script.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct io_script *of(struct io *io)
{
    return io->be;
}

static struct io_script_fd *slot(struct io_script *s, int fd)
{
    if (fd < 0 || fd >= IO_SCRIPT_FDS) {
        fprintf(stderr, "io_script: fd %d out of range\n", fd);
        abort();
    }
    return &s->fd[fd];
}

static int s_accept(struct io *io, int lfd)
{
    return 0;
}

static int s_accept_stop(struct io *io, int lfd)
{
    return 0;
}

static int s_conn_open(struct io *io, int fd)
{
    slot(of(io), fd)->opened = true;
    return 0;
}

static void s_conn_close(struct io *io, int fd)
{
}

static int s_recv(struct io *io, int fd, uint64_t tag, void *buf, size_t len, unsigned hints)
{
    struct io_script *s = of(io);
    struct io_script_fd *f = slot(s, fd);
    if (f->recv_armed) {
        fprintf(stderr, "io_script: a second receive on fd %d\n", fd);
        abort();
    }
    f->recv_armed = true;
    f->recv_tag = tag;
    f->recv_buf = buf;
    f->recv_len = len;
    f->recv_hints = hints;
    s->recvs++;
    f->recv_nth = s->recvs;
    return 0;
}

static int s_recv_select(struct io *io, int fd, uint64_t tag, unsigned hints)
{
    int r = s_recv(io, fd, tag, NULL, io->select_len, hints);
    of(io)->selects++;
    return r;
}

static void s_buf_put(struct io *io, char *buf)
{
    struct io_script *s = of(io);
    for (int fd = 0; fd < IO_SCRIPT_FDS; fd++) {
        if (buf == s->fd[fd].land) {
            if (!s->fd[fd].land_lent) {
                fprintf(stderr, "io_script: landing buffer of fd %d put back twice\n", fd);
                abort();
            }
            s->fd[fd].land_lent = false;
            s->lent--;
            return;
        }
    }
    fprintf(stderr, "io_script: io_buf_put of a buffer that is not a landing buffer\n");
    abort();
}

static int s_send(struct io *io, int fd, uint64_t tag, struct msghdr *msg)
{
    struct io_script *s = of(io);
    struct io_script_fd *f = slot(s, fd);
    if (f->send_armed) {
        fprintf(stderr, "io_script: a second send on fd %d\n", fd);
        abort();
    }
    f->send_armed = true;
    f->send_tag = tag;
    f->send_msg = msg;
    s->sends++;
    return 0;
}

static int s_wait(struct io *io, struct io_event *evs, int max, int timeout_ms)
{
    struct io_script *s = of(io);
    int n = 0;
    while (n < max && (unsigned)n < s->nq) {
        evs[n] = s->q[n];
        n++;
    }
    memmove(s->q, s->q + n, (s->nq - (unsigned)n) * sizeof(s->q[0]));
    s->nq -= (unsigned)n;
    return n;
}

static void s_fini(struct io *io)
{
}

static int s_shutdown(struct io *io, int fd, int how)
{
    struct io_script_fd *f = slot(of(io), fd);
    if (how == SHUT_RD || how == SHUT_RDWR)
        f->shut_rd = true;
    if (how == SHUT_WR || how == SHUT_RDWR)
        f->shut_wr = true;
    return 0;
}

static void s_close(struct io *io, int fd)
{
    slot(of(io), fd)->closed = true;
}

static const struct io_ops script_ops = {
    .accept = s_accept,
    .accept_stop = s_accept_stop,
    .conn_open = s_conn_open,
    .conn_close = s_conn_close,
    .recv = s_recv,
    .send = s_send,
    .buf_put = s_buf_put,
    .wait = s_wait,
    .fini = s_fini,
    .shutdown = s_shutdown,
    .close = s_close,
};

void io_script_init(struct io_script *s)
{
    memset(s, 0, sizeof(*s));
    s->io.ops = &script_ops;
    s->io.be = s;
    s->io.wake_fd = -1;
    snprintf(s->io.desc, sizeof(s->io.desc), "scripted");
}

void io_script_select(struct io_script *s, unsigned len)
{
    static struct io_ops with_select;
    with_select = script_ops;
    with_select.recv_select = s_recv_select;
    s->io.ops = len ? &with_select : &script_ops;
    s->io.select_len = len < IO_SCRIPT_LAND ? len : IO_SCRIPT_LAND;
}

void io_script_reset_fd(struct io_script *s, int fd)
{
    struct io_script_fd *f = slot(s, fd);
    if (f->land_lent) {
        fprintf(stderr, "io_script: fd %d reset with its landing buffer still lent\n", fd);
        abort();
    }
    memset(f, 0, sizeof(*f));
}

void io_script_push(struct io_script *s, uint8_t op, uint64_t tag, int res)
{
    if (s->nq == sizeof(s->q) / sizeof(s->q[0])) {
        fprintf(stderr, "io_script: completion queue full\n");
        abort();
    }
    s->q[s->nq++] = (struct io_event){.op = op, .res = res, .tag = tag};
}

int io_script_data(struct io_script *s, int fd, const char *data, size_t len)
{
    struct io_script_fd *f = slot(s, fd);
    if (!f->recv_armed)
        return -1;
    if (len > f->recv_len)
        len = f->recv_len;
    char *land = NULL;
    if (!f->recv_buf && len > 0) {
        if (f->land_lent) {
            fprintf(stderr, "io_script: fd %d lands data while its landing buffer is lent\n", fd);
            abort();
        }
        land = f->land;
        f->land_lent = true;
        s->lent++;
    }
    if (len)
        memcpy(land ? land : f->recv_buf, data, len);
    f->recv_armed = false;
    io_script_push(s, IO_OP_RECV, f->recv_tag, (int)len);
    s->q[s->nq - 1].buf = land;
    return (int)len;
}

int io_script_recv_res(struct io_script *s, int fd, int res)
{
    struct io_script_fd *f = slot(s, fd);
    if (!f->recv_armed)
        return -1;
    f->recv_armed = false;
    io_script_push(s, IO_OP_RECV, f->recv_tag, res);
    return 0;
}

int io_script_send(struct io_script *s, int fd, size_t max)
{
    struct io_script_fd *f = slot(s, fd);
    if (!f->send_armed)
        return -1;
    size_t n = 0;
    for (size_t i = 0; i < f->send_msg->msg_iovlen && n < max; i++) {
        const struct iovec *v = &f->send_msg->msg_iov[i];
        size_t k = v->iov_len < max - n ? v->iov_len : max - n;
        if (f->out_len + k < IO_SCRIPT_OUT) {
            memcpy(f->out + f->out_len, v->iov_base, k);
            f->out_len += k;
            f->out[f->out_len] = '\0';
        }
        n += k;
    }
    f->send_armed = false;
    io_script_push(s, IO_OP_SEND, f->send_tag, (int)n);
    return (int)n;
}

unsigned io_script_count(const char *hay, const char *needle)
{
    unsigned n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}
