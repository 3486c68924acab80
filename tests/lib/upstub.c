/* upstub.c - scripted upstreams and the client loop of the ring suites
 * (upstub.h).
 *
 * The stub's thread owns its sockets and buffers; the test reads only the
 * atomic counters and, under the lock, the paths. One request at a time per
 * connection (primed's client never pipelines): a second head on a
 * connection whose answer is still held waits in its buffer.
 */
#define _GNU_SOURCE /* memmem */
#include "upstub.h"

#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

uint64_t upstub_mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

struct sconn {
    int fd;           /* -1: free */
    bool waiting;     /* a request is in, its answer not sent */
    bool silent;      /* and it never will be */
    uint64_t send_at; /* when the held answer goes */
    size_t in_len, out_len;
    char in[4096];
    char out[UPSTUB_OUT];
};

static void sconn_close(struct upstub *s, struct sconn *c)
{
    close(c->fd);
    c->fd = -1;
    if (c->waiting)
        s->pending--;
    c->waiting = c->silent = false;
    s->open--;
}

static void high(_Atomic unsigned *max, unsigned v)
{
    if (v > *max)
        *max = v;
}

/* Takes one complete head out of c->in, if there is one, and scripts it. */
static void next_request(struct upstub *s, struct sconn *c)
{
    char *end = memmem(c->in, c->in_len, "\r\n\r\n", 4);
    if (c->waiting || !end)
        return;
    size_t head = (size_t)(end - c->in) + 4;
    char path[96] = "";
    char *sp = memchr(c->in, ' ', head);
    if (sp) {
        char *sp2 = memchr(sp + 1, ' ', head - (size_t)(sp + 1 - c->in));
        size_t n = sp2 ? (size_t)(sp2 - sp - 1) : 0;
        snprintf(path, sizeof(path), "%.*s", (int)n, sp + 1);
    }
    memmove(c->in, c->in + head, c->in_len - head);
    c->in_len -= head;
    unsigned n = ++s->requests;
    pthread_mutex_lock(&s->lock);
    if (n <= 64)
        snprintf(s->paths[n - 1], sizeof(s->paths[0]), "%s", path);
    pthread_mutex_unlock(&s->lock);
    c->waiting = true;
    high(&s->max_pending, ++s->pending);

    struct upstub_answer a = {.what = UPSTUB_ANSWER, .status = 200, .content_length = -1};
    s->fn(s, path, n, &a);
    if (a.what == UPSTUB_CLOSE) {
        sconn_close(s, c);
        return;
    }
    if (a.what == UPSTUB_SILENT) {
        c->silent = true;
        return;
    }
    size_t blen = a.body ? (a.body_len == (size_t)-1 ? strlen(a.body) : a.body_len) : 0;
    long cl = a.content_length >= 0 ? a.content_length : (long)blen;
    int hl = snprintf(c->out, sizeof(c->out), "HTTP/1.1 %d %s\r\nContent-Length: %ld\r\n\r\n", a.status,
                      a.status == 200 ? "OK" : "Scripted", cl);
    if (blen > sizeof(c->out) - (size_t)hl)
        blen = sizeof(c->out) - (size_t)hl;
    memcpy(c->out + hl, a.body ? a.body : "", blen);
    c->out_len = (size_t)hl + blen;
    c->send_at = upstub_mono_ms() + a.delay_ms;
}

static void *stub_main(void *arg)
{
    struct upstub *s = arg;
    struct sconn *cs = calloc(UPSTUB_CONNS, sizeof(*cs));
    if (!cs)
        return NULL;
    for (int i = 0; i < UPSTUB_CONNS; i++)
        cs[i].fd = -1;
    while (!s->stop) {
        struct pollfd pf[UPSTUB_CONNS + 1];
        int map[UPSTUB_CONNS + 1], n = 0;
        pf[n] = (struct pollfd){.fd = s->lfd, .events = POLLIN};
        map[n++] = -1;
        int wait = 20;
        uint64_t now = upstub_mono_ms();
        for (int i = 0; i < UPSTUB_CONNS; i++) {
            if (cs[i].fd < 0)
                continue;
            pf[n] = (struct pollfd){.fd = cs[i].fd, .events = POLLIN};
            map[n++] = i;
            if (cs[i].waiting && !cs[i].silent)
                wait = cs[i].send_at <= now ? 0 : (cs[i].send_at - now < 20 ? (int)(cs[i].send_at - now) : 20);
        }
        poll(pf, (nfds_t)n, wait);
        if (pf[0].revents & POLLIN) {
            int fd = accept(s->lfd, NULL, NULL);
            int i = 0;
            while (fd >= 0 && i < UPSTUB_CONNS && cs[i].fd >= 0)
                i++;
            if (fd >= 0 && i == UPSTUB_CONNS) {
                close(fd); /* full: the test asked for more than it should */
            } else if (fd >= 0) {
                cs[i].fd = fd;
                cs[i].in_len = cs[i].out_len = 0;
                s->accepts++;
                high(&s->max_open, ++s->open);
            }
        }
        for (int k = 1; k < n; k++) {
            struct sconn *c = &cs[map[k]];
            if (c->fd < 0 || !(pf[k].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            ssize_t r = recv(c->fd, c->in + c->in_len, sizeof(c->in) - c->in_len, MSG_DONTWAIT);
            if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR) || (r > 0 && c->in_len + (size_t)r == sizeof(c->in))) {
                sconn_close(s, c);
                continue;
            }
            if (r > 0)
                c->in_len += (size_t)r;
            next_request(s, c);
        }
        now = upstub_mono_ms();
        for (int i = 0; i < UPSTUB_CONNS; i++) {
            struct sconn *c = &cs[i];
            if (c->fd < 0 || !c->waiting || c->silent || c->send_at > now)
                continue;
            send(c->fd, c->out, c->out_len, MSG_NOSIGNAL);
            c->waiting = false;
            s->pending--;
            next_request(s, c);
        }
    }
    for (int i = 0; i < UPSTUB_CONNS; i++)
        if (cs[i].fd >= 0)
            sconn_close(s, &cs[i]);
    free(cs);
    return NULL;
}

int upstub_start(struct upstub *s, upstub_fn *fn, void *ctx)
{
    memset(s, 0, sizeof(*s));
    s->fn = fn;
    s->ctx = ctx;
    pthread_mutex_init(&s->lock, NULL);
    s->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s->lfd < 0)
        return -errno;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t l = sizeof(a);
    if (bind(s->lfd, (struct sockaddr *)&a, sizeof(a)) || getsockname(s->lfd, (struct sockaddr *)&a, &l) ||
        listen(s->lfd, 64)) {
        int e = -errno;
        close(s->lfd);
        return e;
    }
    s->port = ntohs(a.sin_port);
    int e = pthread_create(&s->thread, NULL, stub_main, s);
    if (e) {
        close(s->lfd);
        return -e;
    }
    return 0;
}

void upstub_stop(struct upstub *s)
{
    s->stop = true;
    pthread_join(s->thread, NULL);
    close(s->lfd);
    pthread_mutex_destroy(&s->lock);
}

const char *upstub_path(struct upstub *s, unsigned i, char *out, size_t cap)
{
    pthread_mutex_lock(&s->lock);
    snprintf(out, cap, "%s", i < 64 ? s->paths[i] : "");
    pthread_mutex_unlock(&s->lock);
    return out;
}

/* ---- the client side ----------------------------------------------------- */

int uphost_init(struct uphost *h, enum io_kind kind, unsigned conns, unsigned timeout_ms, char *why, size_t cap)
{
    memset(h, 0, sizeof(*h));
    int r = io_init(&h->io, kind, 64, 64, 4096, 0, why, cap);
    if (r)
        return r;
    resolver_init(&h->res);
    h->cl.io = &h->io;
    h->cl.now_ms = &h->now_ms;
    h->cl.max_conns = conns;
    h->cl.timeout_ms = timeout_ms;
    h->cl.user_agent = "primed/test";
    h->cl.owner = 1; /* what the worker hands the first owner after its connections (worker_own) */
    h->now_ms = upstub_mono_ms();
    return 0;
}

int uphost_add(struct uphost *h, int port, const char *path)
{
    char s[160], err[128];
    if (h->cl.nups >= UPSTREAM_MAX)
        return -ENOSPC;
    struct url *u = &h->urls[h->cl.nups];
    snprintf(s, sizeof(s), "http://127.0.0.1:%d%s", port, path);
    if (url_parse(s, u, err, sizeof(err)))
        return -EINVAL;
    return upstream_add(&h->cl, u, resolver_add(&h->res, u), &h->stats[h->cl.nups]);
}

int uphost_ready(struct uphost *h)
{
    return upstream_client_init(&h->cl);
}

void uphost_turn(struct uphost *h, int wait_ms)
{
    struct io_event evs[32];
    int k = io_wait(&h->io, evs, 32, wait_ms);
    h->now_ms = upstub_mono_ms();
    for (int i = 0; i < k; i++)
        if (slots_owner(evs[i].tag) == h->cl.owner)
            upstream_on_event(&h->cl, &evs[i]);
    upstream_expire(&h->cl);
}

bool uphost_run(struct uphost *h, bool (*done)(void *ctx), void *ctx, unsigned ms)
{
    for (uint64_t until = upstub_mono_ms() + ms; upstub_mono_ms() < until;) {
        if (done && done(ctx))
            return true;
        uphost_turn(h, 10);
    }
    return done && done(ctx);
}

unsigned uphost_fini(struct uphost *h)
{
    upstream_drain(&h->cl);
    for (uint64_t until = upstub_mono_ms() + 2000; upstream_busy(&h->cl) && upstub_mono_ms() < until;)
        uphost_turn(h, 20);
    unsigned busy = upstream_busy(&h->cl);
    upstream_client_fini(&h->cl);
    io_fini(&h->io);
    io_close_wake(&h->io);
    resolver_fini(&h->res);
    return busy;
}

unsigned uphost_conns(const struct uphost *h, unsigned up)
{
    return h->cl.ups[up].nconns;
}
