/* floor.c - plaintext_floor: the least an io_uring HTTP/1.1 responder can do.
 *
 * The floor that primed's /healthz is compared with (benchmarks/modes.py
 * plaintext): one thread, one ring set up as src/core/io_uring.c sets up
 * its own (same queue depth, same flag fallbacks, registered ring fd,
 * multishot accept, single-shot receive into the connection's own buffer).
 * It parses nothing: every "\r\n\r\n" received is one request, and each
 * receive is answered with that many copies of one fixed 200 in one send.
 * Never a benchmark of its own: only what the kernel costs per request.
 *
 * Two switches try to move the floor, alone or together (--lean):
 * --fixed-files registers each connection's fd in the ring's file table
 * (IOSQE_FIXED_FILE: no file lookup and reference per operation);
 * --multishot-recv arms one multishot receive per connection that lands every
 * request in a provided-buffer ring (no receive to re-arm per request, no read
 * buffer touched by an idle connection). Same answers, same ring set-up.
 *
 *   plaintext_floor [--port P] [--fixed-files] [--multishot-recv] [--lean]
 *   P = 0: an ephemeral port; prints port=N once listening
 * Listens on 127.0.0.1; SIGTERM or SIGINT: closes everything, exit 0; bad arguments: exit 2.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <liburing.h>

#include "uring_setup.h"

#define ENTRIES  1024  /* worker.c's queue depth */
#define RBUF     8192  /* primed's default --max-header: its read buffer per connection */
#define MAX_RESP 1024  /* responses per send; more requests in one receive wait for the next send */
#define MAX_FD   16384 /* connections are indexed by fd; a higher fd is closed at once */
#define LAND_COUNT 128 /* --multishot-recv: the provided-buffer ring, as src/core/io_uring.c's */
#define LAND_LEN   1024
#define LAND_GROUP 0

/* About the size of primed's /healthz answer (status, Date, Server, length, type). */
static const char RESP[] = "HTTP/1.1 200 OK\r\n"
                           "Server: floor\r\n"
                           "Date: Thu, 01 Jan 1970 00:00:00 GMT\r\n"
                           "Content-Type: text/plain\r\n"
                           "Content-Length: 2\r\n"
                           "\r\n"
                           "OK";
#define RESP_LEN (sizeof(RESP) - 1)

enum op { OP_ACCEPT = 1, OP_RECV, OP_SEND, OP_SIGNAL };

struct conn {
    bool open;
    bool recv_on, send_on, closing;
    unsigned match;   /* bytes of "\r\n\r\n" matched at the end of what came so far */
    unsigned pending; /* requests counted, not yet in a send */
    size_t out_len;   /* bytes of the send in flight (from responses) */
    size_t out_off;   /* of those, sent so far */
    char rbuf[RBUF];
};

static struct io_uring ring;
static struct conn *conns; /* [MAX_FD], indexed by fd */
static char *responses;    /* MAX_RESP copies of RESP */
static bool multishot = true;
static bool fixed;                         /* --fixed-files (or --lean) */
static bool multi;                         /* --multishot-recv (or --lean) */
static struct io_uring_buf_ring *land_ring; /* --multishot-recv: LAND_COUNT buffers of LAND_LEN */
static char *land;

static inline uint64_t pack(enum op op, int fd)
{
    return ((uint64_t)op << 32) | (uint32_t)fd;
}

static struct io_uring_sqe *sqe_get(void)
{
    struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
    if (!sqe) {
        io_uring_submit(&ring);
        sqe = io_uring_get_sqe(&ring);
    }
    if (!sqe) {
        fprintf(stderr, "plaintext_floor: submission queue full\n");
        exit(1);
    }
    return sqe;
}

static void arm_accept(int lfd)
{
    struct io_uring_sqe *sqe = sqe_get();
    if (multishot)
        io_uring_prep_multishot_accept(sqe, lfd, NULL, NULL, SOCK_CLOEXEC);
    else
        io_uring_prep_accept(sqe, lfd, NULL, NULL, SOCK_CLOEXEC);
    io_uring_sqe_set_data64(sqe, pack(OP_ACCEPT, lfd));
}

static void land_put(unsigned bid)
{
    io_uring_buf_ring_add(land_ring, land + (size_t)bid * LAND_LEN, LAND_LEN, (unsigned short)bid,
                          io_uring_buf_ring_mask(LAND_COUNT), 0);
    io_uring_buf_ring_advance(land_ring, 1);
}

static void arm_recv(int fd)
{
    struct io_uring_sqe *sqe = sqe_get();
    if (multi) {
        io_uring_prep_recv_multishot(sqe, fd, NULL, 0, 0);
        sqe->flags |= IOSQE_BUFFER_SELECT;
        sqe->buf_group = LAND_GROUP;
    } else {
        io_uring_prep_recv(sqe, fd, conns[fd].rbuf, RBUF, 0);
    }
    if (fixed) /* fd is also its slot in the file table */
        sqe->flags |= IOSQE_FIXED_FILE;
    io_uring_sqe_set_data64(sqe, pack(OP_RECV, fd));
    conns[fd].recv_on = true;
}

/* One send in flight per socket: what is counted meanwhile waits in pending. */
static void flush(int fd)
{
    struct conn *c = &conns[fd];
    if (c->send_on || c->closing)
        return;
    if (c->out_off == c->out_len) {
        unsigned n = c->pending < MAX_RESP ? c->pending : MAX_RESP;
        if (n == 0)
            return;
        c->pending -= n;
        c->out_len = (size_t)n * RESP_LEN;
        c->out_off = 0;
    }
    struct io_uring_sqe *sqe = sqe_get();
    io_uring_prep_send(sqe, fd, responses + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL);
    if (fixed)
        sqe->flags |= IOSQE_FIXED_FILE;
    io_uring_sqe_set_data64(sqe, pack(OP_SEND, fd));
    c->send_on = true;
}

/* Closes fd once none of its operations is in flight (no stale completion can name a reused fd). */
static void finish(int fd)
{
    struct conn *c = &conns[fd];
    if (!c->closing) {
        c->closing = true;
        if (c->recv_on || c->send_on)
            shutdown(fd, SHUT_RDWR); /* ends whatever is still in flight */
    }
    if (!c->recv_on && !c->send_on) {
        c->open = false;
        if (fixed) {
            int none = -1;
            io_uring_register_files_update(&ring, (unsigned)fd, &none, 1);
        }
        close(fd);
    }
}

static unsigned count_requests(struct conn *c, const char *p, size_t n)
{
    static const char term[] = "\r\n\r\n";
    unsigned k = 0, m = c->match;
    for (size_t i = 0; i < n; i++) {
        if (p[i] == term[m])
            m++;
        else
            m = p[i] == '\r' ? 1 : 0;
        if (m == 4) {
            k++;
            m = 0;
        }
    }
    c->match = m;
    return k;
}

static void on_accept(int lfd, int res, bool more)
{
    if (res >= 0) {
        if (res >= MAX_FD) {
            close(res);
        } else {
            int one = 1;
            setsockopt(res, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)); /* as src/core/io.c does */
            if (fixed && io_uring_register_files_update(&ring, (unsigned)res, &res, 1) != 1) {
                close(res);
                goto rearm;
            }
            struct conn *c = &conns[res];
            c->open = true;
            c->recv_on = c->send_on = c->closing = false;
            c->match = c->pending = 0;
            c->out_len = c->out_off = 0;
            arm_recv(res);
        }
    } else if (res == -EINVAL && multishot) {
        multishot = false; /* kernel < 5.19 */
        more = false;
    }
rearm:
    if (!more)
        arm_accept(lfd);
}

static void on_recv(int fd, int res, unsigned flags)
{
    struct conn *c = &conns[fd];
    bool lent = (flags & IORING_CQE_F_BUFFER) != 0; /* --multishot-recv: the bytes are in a ring buffer */
    unsigned bid = flags >> IORING_CQE_BUFFER_SHIFT;
    c->recv_on = multi && (flags & IORING_CQE_F_MORE);
    if (res > 0 && !c->closing)
        c->pending += count_requests(c, lent ? land + (size_t)bid * LAND_LEN : c->rbuf, (size_t)res);
    if (lent)
        land_put(bid); /* counted: straight back into the ring */
    if (c->closing || res <= 0) {
        if (res == -EAGAIN || res == -EINTR || res == -ENOBUFS) {
            if (c->recv_on)
                return;
            if (!c->closing) {
                arm_recv(fd);
                return;
            }
        }
        finish(fd);
        return;
    }
    flush(fd);
    if (!c->recv_on)
        arm_recv(fd);
}

static void on_send(int fd, int res)
{
    struct conn *c = &conns[fd];
    c->send_on = false;
    if (c->closing || (res < 0 && res != -EAGAIN && res != -EINTR)) {
        finish(fd);
        return;
    }
    if (res > 0)
        c->out_off += (size_t)res;
    flush(fd);
}

/* src/core/io_uring.c's set-up (src/core/uring_setup.h): the most a >= 6.1 kernel gives, flag by flag on EINVAL. */
static int ring_init(void)
{
    int r = -EINVAL;
    for (size_t i = 0; i < sizeof(uring_setup_tries) / sizeof(uring_setup_tries[0]); i++) {
        struct io_uring_params p;
        memset(&p, 0, sizeof(p));
        p.flags = uring_setup_tries[i] | IORING_SETUP_CQSIZE | IORING_SETUP_CLAMP;
        p.cq_entries = uring_cq_size(ENTRIES, 2 * 10000 + 2 * 4 * 64 + 8); /* worker.c's max_ops, one worker, defaults */
        r = io_uring_queue_init_params(ENTRIES, &ring, &p);
        if (r != -EINVAL)
            break;
    }
    if (r == 0)
        io_uring_register_ring_fd(&ring);
    if (r == 0 && fixed)
        r = io_uring_register_files_sparse(&ring, MAX_FD);
    if (r == 0 && multi) {
        void *br = NULL;
        land = aligned_alloc(64, (size_t)LAND_COUNT * LAND_LEN);
        struct io_uring_buf_reg reg = {.ring_entries = LAND_COUNT, .bgid = LAND_GROUP};
        if (!land || posix_memalign(&br, 4096, LAND_COUNT * sizeof(struct io_uring_buf)))
            return -ENOMEM;
        reg.ring_addr = (unsigned long)br;
        r = io_uring_register_buf_ring(&ring, &reg, 0);
        if (r)
            return r;
        land_ring = br;
        io_uring_buf_ring_init(land_ring);
        for (unsigned i = 0; i < LAND_COUNT; i++)
            land_put(i);
    }
    return r;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: plaintext_floor [--port P] [--fixed-files] [--multishot-recv] [--lean]\n"
               "  answers a fixed 200 to every request on 127.0.0.1:P (0: any free port, printed as port=N)\n"
               "  --fixed-files: each connection's fd registered in the ring (IOSQE_FIXED_FILE)\n"
               "  --multishot-recv: one multishot receive per connection into a provided-buffer ring\n"
               "  --lean: both\n");
}

static int parse_port(int argc, char **argv)
{
    int port = 8080;
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            exit(0);
        } else if (strcmp(argv[i], "--lean") == 0) {
            fixed = multi = true;
            continue;
        } else if (strcmp(argv[i], "--fixed-files") == 0) {
            fixed = true;
            continue;
        } else if (strcmp(argv[i], "--multishot-recv") == 0) {
            multi = true;
            continue;
        } else if (strcmp(argv[i], "--port") == 0 && i + 1 < argc) {
            v = argv[++i];
        } else if (strncmp(argv[i], "--port=", 7) == 0) {
            v = argv[i] + 7;
        } else {
            fprintf(stderr, "plaintext_floor: unexpected argument '%s'\n", argv[i]);
            usage(stderr);
            exit(2);
        }
        char *end;
        errno = 0;
        long p = strtol(v, &end, 10);
        if (errno || end == v || *end || p < 0 || p > 65535 || *v < '0' || *v > '9') {
            fprintf(stderr, "plaintext_floor: --port: '%s' is not a port (0..65535)\n", v);
            exit(2);
        }
        port = (int)p;
    }
    return port;
}

int main(int argc, char **argv)
{
    int port = parse_port(argc, argv);

    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    conns = calloc(MAX_FD, sizeof(*conns));
    responses = malloc(MAX_RESP * RESP_LEN);
    if (!conns || !responses) {
        fprintf(stderr, "plaintext_floor: out of memory\n");
        return 1;
    }
    for (size_t i = 0; i < MAX_RESP; i++)
        memcpy(responses + i * RESP_LEN, RESP, RESP_LEN);

    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGINT);
    sigprocmask(SIG_BLOCK, &mask, NULL);
    int sfd = signalfd(-1, &mask, SFD_CLOEXEC);

    int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t slen = sizeof(sa);
    if (sfd < 0 || lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
        bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 4096) ||
        getsockname(lfd, (struct sockaddr *)&sa, &slen)) {
        fprintf(stderr, "plaintext_floor: listen on 127.0.0.1:%d: %s\n", port, strerror(errno));
        return 1;
    }
    int r = ring_init();
    if (r) {
        fprintf(stderr, "plaintext_floor: io_uring_queue_init_params: %s\n", strerror(-r));
        return 1;
    }
    printf("port=%d\n", ntohs(sa.sin_port));
    fflush(stdout);

    struct signalfd_siginfo si;
    struct io_uring_sqe *sqe = sqe_get();
    io_uring_prep_read(sqe, sfd, &si, sizeof(si), 0);
    io_uring_sqe_set_data64(sqe, pack(OP_SIGNAL, sfd));
    arm_accept(lfd);

    bool stop = false;
    while (!stop) {
        struct io_uring_cqe *cqe;
        r = io_uring_submit_and_wait(&ring, 1);
        if (r < 0 && r != -EINTR && r != -EAGAIN && r != -EBUSY) {
            fprintf(stderr, "plaintext_floor: io_uring_enter: %s\n", strerror(-r));
            return 1;
        }
        unsigned head, seen = 0;
        io_uring_for_each_cqe(&ring, head, cqe)
        {
            seen++;
            uint64_t ud = io_uring_cqe_get_data64(cqe);
            int fd = (int)(uint32_t)ud;
            switch ((enum op)(ud >> 32)) {
            case OP_ACCEPT:
                on_accept(fd, cqe->res, (cqe->flags & IORING_CQE_F_MORE) != 0);
                break;
            case OP_RECV:
                on_recv(fd, cqe->res, cqe->flags);
                break;
            case OP_SEND:
                on_send(fd, cqe->res);
                break;
            case OP_SIGNAL:
                stop = true;
                break;
            }
        }
        io_uring_cq_advance(&ring, seen);
    }
    for (int fd = 0; fd < MAX_FD; fd++)
        if (conns[fd].open)
            close(fd);
    close(lfd);
    io_uring_queue_exit(&ring);
    close(sfd);
    free(conns);
    free(responses);
    free(land_ring);
    free(land);
    return 0;
}
