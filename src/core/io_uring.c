/* io_uring.c - the io_uring backend: one ring per worker thread.
 *
 * The ring is created on the thread that uses it (SINGLE_ISSUER needs that)
 * and asks for the most a >= 6.1 kernel gives, falling back flag by flag on
 * EINVAL: SINGLE_ISSUER|DEFER_TASKRUN (completions run only when we wait, on
 * our thread, in batches), else COOP_TASKRUN (no IPI to interrupt us), else
 * nothing. No SQPOLL: it burns a core per ring, and we have 2.
 * user_data packs the op in its top 8 bits and the caller's tag below.
 * Accepts are multishot (>= 5.19) with a single-shot fallback. Receives are
 * single-shot: that is what lets the worker apply backpressure by simply not
 * arming the next one (a multishot receive would keep delivering, and need a
 * cancel to stop). A receive lands in the caller's buffer, or, for a select
 * receive, in one the kernel takes from a provided-buffer ring (>= 5.19) when
 * the bytes arrive: LAND_COUNT small buffers per ring, lent to the worker
 * until io_buf_put(), so an idle connection holds no read buffer.
 * Two switches of issue 19 (IO_TUNE_*): a receive armed behind a response
 * polls first (off unless asked: it did not show), and a one-buffer send is a
 * SEND (on by default: less CPU per /healthz than SENDMSG, docs/benchmarks.md).
 */
#include "io.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <liburing.h>

#include "uring_setup.h"

/* The landing ring: a power of two of buffers, each the most one select
 * receive returns (a longer request is read on into the connection's own
 * buffer). All of them are touched as the ring turns: LAND_COUNT x LAND_LEN
 * resident per worker, whatever the number of connections. Each is back in
 * the ring before the next submit, so only more than LAND_COUNT receives
 * completing in one batch meet -ENOBUFS (and are armed again). */
#define LAND_COUNT 128
#define LAND_LEN   1024
#define LAND_GROUP 0

struct uring_be {
    struct io_uring ring;
    unsigned flags;        /* setup flags granted */
    bool multishot_accept; /* cleared when the kernel refuses it */
    bool ring_fd_registered;
    unsigned cq_entries; /* granted */
    bool nodrop;         /* IORING_FEAT_NODROP: an overflowed completion is kept */
    bool poll_first;     /* IO_TUNE_POLL_FIRST asked and the kernel has it */
    bool single_send;    /* IO_TUNE_SINGLE_SEND asked and the kernel has IORING_OP_SEND */
    struct io_uring_buf_ring *land_ring; /* owned, registered; NULL: no select receive */
    char *land;                          /* owned: LAND_COUNT x LAND_LEN */
};

static inline uint64_t pack(enum io_op op, uint64_t tag)
{
    return ((uint64_t)op << IO_TAG_BITS) | (tag & IO_TAG_MASK);
}

static struct io_uring_sqe *get_sqe(struct uring_be *u)
{
    struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);
    if (!sqe) {
        /* SQ full: flush it to the kernel and retry once. */
        io_uring_submit(&u->ring);
        sqe = io_uring_get_sqe(&u->ring);
    }
    return sqe;
}

static int arm_wake(struct io *io)
{
    struct uring_be *u = io->be;
    struct io_uring_sqe *sqe = get_sqe(u);
    if (!sqe)
        return -EBUSY;
    io_uring_prep_read(sqe, io->wake_fd, &io->wake_buf, sizeof(io->wake_buf), 0);
    io_uring_sqe_set_data64(sqe, pack(IO_OP_WAKE, 0));
    return 0;
}

static int u_accept(struct io *io, int lfd)
{
    struct uring_be *u = io->be;
    struct io_uring_sqe *sqe = get_sqe(u);
    if (!sqe)
        return -EBUSY;
    if (u->multishot_accept)
        io_uring_prep_multishot_accept(sqe, lfd, NULL, NULL, SOCK_CLOEXEC);
    else
        io_uring_prep_accept(sqe, lfd, NULL, NULL, SOCK_CLOEXEC);
    io_uring_sqe_set_data64(sqe, pack(IO_OP_ACCEPT, (uint64_t)lfd));
    return 0;
}

static int u_accept_stop(struct io *io, int lfd)
{
    struct uring_be *u = io->be;
    struct io_uring_sqe *sqe = get_sqe(u);
    if (!sqe)
        return -EBUSY;
    io_uring_prep_cancel64(sqe, pack(IO_OP_ACCEPT, (uint64_t)lfd), 0);
    io_uring_sqe_set_data64(sqe, pack(IO_OP_INTERNAL, 0));
    return 0;
}

static int u_conn_open(struct io *io, int fd)
{
    (void)io;
    (void)fd;
    return 0;
}

static void u_conn_close(struct io *io, int fd)
{
    (void)io;
    (void)fd;
}

static int u_recv(struct io *io, int fd, uint64_t tag, void *buf, size_t len, unsigned hints)
{
    struct uring_be *u = io->be;
    struct io_uring_sqe *sqe = get_sqe(u);
    if (!sqe)
        return -EBUSY;
    io_uring_prep_recv(sqe, fd, buf, len, 0);
    /* Behind a response the socket is most likely empty: without this the
     * kernel first tries the receive, gets EAGAIN, then arms its poll; with
     * it (>= 5.19) it arms the poll at once. */
    if ((hints & IO_RECV_LATER) && u->poll_first)
        sqe->ioprio |= IORING_RECVSEND_POLL_FIRST;
    io_uring_sqe_set_data64(sqe, pack(IO_OP_RECV, tag));
    return 0;
}

static int u_recv_select(struct io *io, int fd, uint64_t tag, unsigned hints)
{
    struct uring_be *u = io->be;
    struct io_uring_sqe *sqe = get_sqe(u);
    if (!sqe)
        return -EBUSY;
    io_uring_prep_recv(sqe, fd, NULL, LAND_LEN, 0);
    sqe->flags |= IOSQE_BUFFER_SELECT;
    sqe->buf_group = LAND_GROUP;
    if ((hints & IO_RECV_LATER) && u->poll_first)
        sqe->ioprio |= IORING_RECVSEND_POLL_FIRST;
    io_uring_sqe_set_data64(sqe, pack(IO_OP_RECV, tag));
    return 0;
}

static void land_add(struct uring_be *u, unsigned bid, int offset)
{
    io_uring_buf_ring_add(u->land_ring, u->land + (size_t)bid * LAND_LEN, LAND_LEN, (unsigned short)bid,
                          io_uring_buf_ring_mask(LAND_COUNT), offset);
}

static void u_buf_put(struct io *io, char *buf)
{
    struct uring_be *u = io->be;
    land_add(u, (unsigned)((buf - u->land) / LAND_LEN), 0);
    io_uring_buf_ring_advance(u->land_ring, 1);
}

static int u_send(struct io *io, int fd, uint64_t tag, struct msghdr *msg)
{
    struct uring_be *u = io->be;
    struct io_uring_sqe *sqe = get_sqe(u);
    if (!sqe)
        return -EBUSY;
    /* IORING_OP_SEND (>= 5.6) skips copying in the msghdr and its iovec
     * array; the buffer still belongs to the kernel until the completion. */
    if (u->single_send && msg->msg_iovlen == 1)
        io_uring_prep_send(sqe, fd, msg->msg_iov[0].iov_base, msg->msg_iov[0].iov_len, MSG_NOSIGNAL);
    else
        io_uring_prep_sendmsg(sqe, fd, msg, MSG_NOSIGNAL);
    io_uring_sqe_set_data64(sqe, pack(IO_OP_SEND, tag));
    return 0;
}

static int u_connect(struct io *io, int fd, uint64_t tag, const struct sockaddr *sa, socklen_t len)
{
    struct uring_be *u = io->be;
    struct io_uring_sqe *sqe = get_sqe(u);
    if (!sqe)
        return -EBUSY;
    io_uring_prep_connect(sqe, fd, sa, len);
    io_uring_sqe_set_data64(sqe, pack(IO_OP_CONNECT, tag));
    return 0;
}

static int u_poll(struct io *io, int fd, uint64_t tag, unsigned events)
{
    struct uring_be *u = io->be;
    struct io_uring_sqe *sqe = get_sqe(u);
    if (!sqe)
        return -EBUSY;
    /* one-shot IORING_OP_POLL_ADD (>= 5.1); it holds a reference to the
     * file, so closing fd does not end it: io_poll_cancel() first */
    io_uring_prep_poll_add(sqe, fd, ((events & IO_POLL_IN) ? POLLIN : 0) | ((events & IO_POLL_OUT) ? POLLOUT : 0));
    io_uring_sqe_set_data64(sqe, pack(IO_OP_POLL, tag));
    return 0;
}

static void u_poll_cancel(struct io *io, int fd, uint64_t tag)
{
    (void)fd;
    struct uring_be *u = io->be;
    struct io_uring_sqe *sqe = get_sqe(u);
    if (!sqe)
        return;
    io_uring_prep_poll_remove(sqe, pack(IO_OP_POLL, tag));
    io_uring_sqe_set_data64(sqe, pack(IO_OP_INTERNAL, 0));
}

static int u_wait(struct io *io, struct io_event *evs, int max, int timeout_ms)
{
    struct uring_be *u = io->be;
    int r;
    if (timeout_ms == 0) {
        r = io_uring_submit_and_get_events(&u->ring);
    } else {
        struct __kernel_timespec ts = {
            .tv_sec = timeout_ms / 1000,
            .tv_nsec = (long long)(timeout_ms % 1000) * 1000000,
        };
        struct io_uring_cqe *cqe;
        /* One io_uring_enter: submit everything queued, wait for one
         * completion or the timeout (EXT_ARG, no timeout SQE needed). */
        r = io_uring_submit_and_wait_timeout(&u->ring, &cqe, 1, timeout_ms < 0 ? NULL : &ts, NULL);
    }
    if (r < 0 && r != -ETIME && r != -EINTR && r != -EAGAIN && r != -EBUSY)
        return r;

    int n = 0;
    unsigned head, seen = 0;
    struct io_uring_cqe *cqe;
    io_uring_for_each_cqe(&u->ring, head, cqe)
    {
        if (n == max)
            break;
        seen++;
        uint64_t ud = io_uring_cqe_get_data64(cqe);
        enum io_op op = (enum io_op)(ud >> IO_TAG_BITS);
        switch (op) {
        case IO_OP_WAKE:
            arm_wake(io);
            /* A burst of wakes makes one event: the worker re-checks all. */
            evs[n++] = (struct io_event){.op = IO_OP_WAKE};
            break;
        case IO_OP_ACCEPT:
            if (cqe->res == -EINVAL && u->multishot_accept) {
                /* kernel < 5.19: no multishot accept; go on single-shot */
                u->multishot_accept = false;
                u_accept(io, (int)(ud & IO_TAG_MASK));
                break;
            }
            evs[n++] = (struct io_event){
                .op = IO_OP_ACCEPT,
                .res = cqe->res,
                .tag = ud & IO_TAG_MASK,
                .more = (cqe->flags & IORING_CQE_F_MORE) != 0,
            };
            break;
        case IO_OP_RECV: {
            char *buf = NULL;
            if (cqe->flags & IORING_CQE_F_BUFFER)
                buf = u->land + (size_t)(cqe->flags >> IORING_CQE_BUFFER_SHIFT) * LAND_LEN;
            if (buf && cqe->res <= 0) { /* a buffer taken for nothing: straight back */
                u_buf_put(io, buf);
                buf = NULL;
            }
            evs[n++] = (struct io_event){.op = IO_OP_RECV, .res = cqe->res, .tag = ud & IO_TAG_MASK, .buf = buf};
            break;
        }
        case IO_OP_SEND:
        case IO_OP_CONNECT:
            evs[n++] = (struct io_event){.op = (uint8_t)op, .res = cqe->res, .tag = ud & IO_TAG_MASK};
            break;
        case IO_OP_POLL: {
            int res = cqe->res;
            if (res >= 0) /* POLLERR and POLLHUP: ready for whatever was asked (the read or write says why) */
                res = ((res & (POLLIN | POLLERR | POLLHUP)) ? IO_POLL_IN : 0) |
                      ((res & (POLLOUT | POLLERR | POLLHUP)) ? IO_POLL_OUT : 0);
            evs[n++] = (struct io_event){.op = IO_OP_POLL, .res = res, .tag = ud & IO_TAG_MASK};
            break;
        }
        default:
            break; /* cancels and other internal ops */
        }
    }
    io_uring_cq_advance(&u->ring, seen);
    return n;
}

static void u_fini(struct io *io)
{
    struct uring_be *u = io->be;
    if (!u)
        return;
    io_uring_queue_exit(&u->ring); /* unregisters the landing ring too */
    free(u->land_ring);
    free(u->land);
    free(u);
    io->be = NULL;
}

static const struct io_ops uring_ops = {
    .accept = u_accept,
    .accept_stop = u_accept_stop,
    .conn_open = u_conn_open,
    .conn_close = u_conn_close,
    .recv = u_recv,
    .send = u_send,
    .recv_select = u_recv_select,
    .buf_put = u_buf_put,
    .connect = u_connect,
    .poll = u_poll,
    .poll_cancel = u_poll_cancel,
    .wait = u_wait,
    .fini = u_fini,
};

/* Registers the landing ring (>= 5.19); without it select receives are
 * off (io->select_len stays 0) and connections keep their own buffer. */
static void land_init(struct io *io, struct uring_be *u)
{
    void *ring = NULL;
    if (posix_memalign(&ring, 4096, LAND_COUNT * sizeof(struct io_uring_buf)) != 0)
        return;
    u->land = aligned_alloc(64, (size_t)LAND_COUNT * LAND_LEN);
    struct io_uring_buf_reg reg = {.ring_addr = (unsigned long)ring, .ring_entries = LAND_COUNT, .bgid = LAND_GROUP};
    if (!u->land || io_uring_register_buf_ring(&u->ring, &reg, 0) != 0) {
        free(ring);
        free(u->land);
        u->land = NULL;
        return;
    }
    u->land_ring = ring;
    io_uring_buf_ring_init(u->land_ring);
    for (unsigned i = 0; i < LAND_COUNT; i++)
        land_add(u, i, (int)i);
    io_uring_buf_ring_advance(u->land_ring, LAND_COUNT);
    io->select_len = LAND_LEN;
}

static void describe_flags(unsigned f, char *out, size_t len)
{
    snprintf(out, len, "%s%s%s%s", f & IORING_SETUP_SINGLE_ISSUER ? "SINGLE_ISSUER," : "",
             f & IORING_SETUP_DEFER_TASKRUN ? "DEFER_TASKRUN," : "",
             f & IORING_SETUP_COOP_TASKRUN ? "COOP_TASKRUN," : "", f & IORING_SETUP_SUBMIT_ALL ? "SUBMIT_ALL," : "");
    size_t n = strlen(out);
    if (n)
        out[n - 1] = '\0';
    else
        snprintf(out, len, "none");
}

/* What the ready line says of one switch: nothing when not asked for. */
static const char *tuned(unsigned asked, bool got, const char *yes, const char *no)
{
    return !asked ? "" : got ? yes : no;
}

int io_uring_backend_init(struct io *io, unsigned entries, unsigned max_ops, unsigned tune)
{
    struct uring_be *u = calloc(1, sizeof(*u));
    if (!u)
        return -ENOMEM;
    int r = -EINVAL;
    for (size_t i = 0; i < sizeof(uring_setup_tries) / sizeof(uring_setup_tries[0]); i++) {
        struct io_uring_params p;
        memset(&p, 0, sizeof(p));
        p.flags = uring_setup_tries[i] | IORING_SETUP_CQSIZE | IORING_SETUP_CLAMP;
        p.cq_entries = uring_cq_size(entries, max_ops);
        r = io_uring_queue_init_params(entries, &u->ring, &p);
        if (r == 0) {
            u->flags = uring_setup_tries[i];
            u->cq_entries = p.cq_entries;
            u->nodrop = (p.features & IORING_FEAT_NODROP) != 0;
            break;
        }
        if (r != -EINVAL)
            break; /* ENOSYS, EPERM, ENOMEM...: fewer flags will not help */
    }
    if (r) {
        free(u);
        return r;
    }
    u->multishot_accept = true;
    /* IORING_RECVSEND_POLL_FIRST came with 5.19, as COOP_TASKRUN did: an
     * older kernel fails a receive whose ioprio is set (EINVAL), so it is
     * used only on a ring that got one of the >= 5.19 flags. */
    u->poll_first =
        (tune & IO_TUNE_POLL_FIRST) && (u->flags & (IORING_SETUP_COOP_TASKRUN | IORING_SETUP_SINGLE_ISSUER));
    if (tune & IO_TUNE_SINGLE_SEND) {
        struct io_uring_probe *probe = io_uring_get_probe_ring(&u->ring); /* >= 5.6 */
        u->single_send = probe && io_uring_opcode_supported(probe, IORING_OP_SEND);
        if (probe)
            io_uring_free_probe(probe);
    }
    /* Registered ring fd (>= 5.18): io_uring_enter skips the fd lookup. */
    u->ring_fd_registered = io_uring_register_ring_fd(&u->ring) == 1;
    if (!(tune & IO_TUNE_OWN_BUFFERS))
        land_init(io, u);
    io->be = u;
    io->ops = &uring_ops;
    io->kind = IO_URING;
    char flags[96];
    describe_flags(u->flags, flags, sizeof(flags));
    snprintf(io->desc, sizeof(io->desc), "io_uring(flags=%s,ring_fd=%s,cq=%u,recv=%s%s%s%s)", flags,
             u->ring_fd_registered ? "registered" : "plain", u->cq_entries, u->land_ring ? "provided" : "own",
             u->cq_entries < max_ops ? (u->nodrop ? ",cq_overflow=kept" : ",cq_overflow=DROPPED") : "",
             tuned(tune & IO_TUNE_POLL_FIRST, u->poll_first, ",poll_first", ",poll_first=unsupported"),
             tuned(tune & IO_TUNE_SINGLE_SEND, u->single_send, ",single_send", ",single_send=unsupported"));
    r = arm_wake(io);
    if (r) {
        u_fini(io);
        return r;
    }
    return 0;
}
