/* benchmarks/openloop.c - an open-loop HTTP/1.1 load generator: constant arrival rate.
 *
 * k6's constant-arrival-rate semantics: request i is due at t0 + i / rate whether or not
 * earlier ones have finished; it goes out on an idle keep-alive connection, or on a new one
 * (up to --max-conns), and its latency is measured from when it was due, not from when it was
 * sent, so a server that queues cannot hide it by slowing the client down (coordinated
 * omission, the flaw of closed loops such as wrk). A request that had to wait for a connection
 * is a "late start" and its wait is in its latency.
 *
 * Outcomes, counted apart: ok (2xx/3xx), non2xx, refused (connect failed), reset (the
 * connection closed or reset under a request), timeouts (no complete answer --timeout s after
 * it was sent: the client gave up), unsent (due but never sent: the generator fell behind).
 * One epoll loop, one thread, no allocation after start-up. Never retries, never pipelines.
 * Prints one line:  OPENLOOP rate=... scheduled=... ok=... ... p50_us=... p99_us=... max_us=...
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define RBUF 16384

enum cstate { C_FREE, C_CONNECTING, C_IDLE, C_BUSY };

struct conn {
	int fd;
	enum cstate state;
	uint64_t due_ns;  /* when the request in flight was due (latency origin) */
	uint64_t sent_ns; /* when it was written (timeout origin) */
	size_t used;
	char buf[RBUF];
};

static struct {
	double rate, duration, timeout;
	int max_conns;
	struct sockaddr_in addr;
	char req[1024];
	size_t req_len;
} opt = {.rate = 100, .duration = 10, .timeout = 10, .max_conns = 1024};

static struct {
	uint64_t scheduled, sent, ok, non2xx, refused, reset, timeouts, late, opened, max_busy;
} st;

static struct conn *conns;
static int nconns_open;
static uint32_t *lat_us; /* one per answered request */
static uint32_t *lat_sec; /* the second of the run it was answered in, beside lat_us */
static uint64_t nlat, lat_cap;
static uint64_t start_ns; /* t0: request 0 is due then; second 0 of the run starts then */

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void usage(void)
{
	fprintf(stderr, "usage: openloop --rate R [--duration S] [--timeout S] [--max-conns N] "
			"http://127.0.0.1:PORT/PATH\n");
	exit(2);
}

static void parse_url(const char *url)
{
	const char *p = url;
	if (strncmp(p, "http://", 7) == 0)
		p += 7;
	const char *colon = strchr(p, ':'), *slash = strchr(p, '/');
	if (!colon || (slash && slash < colon))
		usage();
	char host[64];
	size_t hl = (size_t)(colon - p);
	if (hl >= sizeof host)
		usage();
	memcpy(host, p, hl);
	host[hl] = 0;
	int port = atoi(colon + 1);
	const char *path = slash ? slash : "/";
	opt.addr.sin_family = AF_INET;
	opt.addr.sin_port = htons((uint16_t)port);
	if (port <= 0 || port > 65535 || inet_pton(AF_INET, host, &opt.addr.sin_addr) != 1)
		usage();
	int n = snprintf(opt.req, sizeof opt.req, "GET %s HTTP/1.1\r\nHost: %s:%d\r\n\r\n", path, host, port);
	if (n < 0 || (size_t)n >= sizeof opt.req)
		usage();
	opt.req_len = (size_t)n;
}

static void conn_close(int ep, struct conn *c)
{
	epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	c->fd = -1;
	c->state = C_FREE;
	c->used = 0;
	nconns_open--;
}

static void record(struct conn *c, uint64_t t, int status)
{
	if (status >= 200 && status < 400)
		st.ok++;
	else
		st.non2xx++;
	if (nlat < lat_cap) {
		uint64_t us = (t - c->due_ns) / 1000;
		lat_sec[nlat] = t > start_ns ? (uint32_t)((t - start_ns) / 1000000000u) : 0;
		lat_us[nlat++] = us > UINT32_MAX ? UINT32_MAX : (uint32_t)us;
	}
}

/* Writes the request; the socket buffer of a fresh or idle connection always takes it. */
static bool send_req(int ep, struct conn *c, uint64_t due, uint64_t t)
{
	c->due_ns = due;
	c->sent_ns = t;
	c->used = 0;
	ssize_t n = send(c->fd, opt.req, opt.req_len, MSG_NOSIGNAL);
	if (n != (ssize_t)opt.req_len) {
		st.reset++;
		conn_close(ep, c);
		return false;
	}
	c->state = C_BUSY;
	st.sent++;
	if (t > due + 1000000)
		st.late++;
	return true;
}

/* 1: connecting; 0: no slot or no descriptor (the request waits); -1: refused at once. */
static int open_conn(int ep)
{
	struct conn *c = NULL;
	for (int i = 0; i < opt.max_conns; i++)
		if (conns[i].state == C_FREE) {
			c = &conns[i];
			break;
		}
	if (!c)
		return 0;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	c->fd = fd;
	c->used = 0;
	nconns_open++;
	st.opened++;
	struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP, .data.ptr = c};
	epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
	c->state = C_CONNECTING;
	if (connect(fd, (struct sockaddr *)&opt.addr, sizeof opt.addr) == 0 || errno == EINPROGRESS)
		return 1;
	conn_close(ep, c);
	return -1;
}

/* 1: a complete response is in c->buf (its status in *status, keep-alive in *keep); 0: not yet;
 * -1: not HTTP. Framing: Content-Length, else chunked (to its last chunk), else until close. */
static int parse(struct conn *c, int *status, bool *keep)
{
	c->buf[c->used < RBUF ? c->used : RBUF - 1] = 0;
	char *end = strstr(c->buf, "\r\n\r\n");
	if (!end)
		return c->used >= RBUF - 1 ? -1 : 0;
	if (strncmp(c->buf, "HTTP/1.", 7) != 0 || strlen(c->buf) < 12)
		return -1;
	*status = atoi(c->buf + 9);
	*keep = strncmp(c->buf, "HTTP/1.1", 8) == 0;
	size_t head = (size_t)(end - c->buf) + 4;
	long clen = -1;
	bool chunked = false;
	for (char *l = strstr(c->buf, "\r\n") + 2; l < end; l = strstr(l, "\r\n") + 2) {
		if (strncasecmp(l, "content-length:", 15) == 0)
			clen = atol(l + 15);
		else if (strncasecmp(l, "transfer-encoding:", 18) == 0 && strcasestr(l, "chunked") &&
			 strcasestr(l, "chunked") < strstr(l, "\r\n"))
			chunked = true;
		else if (strncasecmp(l, "connection:", 11) == 0) {
			char *v = l + 11, *e = strstr(l, "\r\n");
			if (strcasestr(v, "close") && strcasestr(v, "close") < e)
				*keep = false;
			if (strcasestr(v, "keep-alive") && strcasestr(v, "keep-alive") < e)
				*keep = true;
		}
	}
	if (*status == 204 || *status == 304 || (*status >= 100 && *status < 200))
		return 1;
	if (clen >= 0)
		return c->used >= head + (size_t)clen ? 1 : (head + (size_t)clen >= RBUF ? -1 : 0);
	if (chunked)
		return strstr(c->buf + head - 2, "\r\n0\r\n\r\n") ? 1 : (c->used >= RBUF - 1 ? -1 : 0);
	*keep = false;
	return 0; /* until close */
}

/* Returns -1 when a connect failed (the caller drops the oldest waiting request), else 0. */
static int on_event(int ep, struct conn *c, uint32_t events, uint64_t t)
{
	if (c->state == C_CONNECTING) {
		int err = 0;
		socklen_t len = sizeof err;
		getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
		if (err || (events & (EPOLLERR | EPOLLHUP))) {
			conn_close(ep, c);
			return -1;
		}
		if (events & EPOLLOUT) { /* the main loop gives it the oldest waiting request */
			struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP, .data.ptr = c};
			epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
			c->state = C_IDLE;
		}
		return 0;
	}
	if (!(events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)))
		return 0;
	for (;;) {
		if (c->used >= RBUF - 1) {
			if (c->state == C_BUSY)
				st.reset++;
			conn_close(ep, c);
			return 0;
		}
		ssize_t n = recv(c->fd, c->buf + c->used, RBUF - 1 - c->used, 0);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return 0;
		if (n <= 0) {
			if (c->state == C_BUSY) {
				int status;
				bool keep;
				if (c->used && parse(c, &status, &keep) == 0 && !strstr(c->buf, "ength:"))
					record(c, t, status); /* close-delimited body: complete now */
				else
					st.reset++;
			}
			conn_close(ep, c);
			return 0;
		}
		c->used += (size_t)n;
		if (c->state != C_BUSY) { /* bytes nobody asked for */
			conn_close(ep, c);
			return 0;
		}
		int status;
		bool keep;
		int r = parse(c, &status, &keep);
		if (r < 0) {
			st.reset++;
			conn_close(ep, c);
			return 0;
		}
		if (r == 1) {
			record(c, t, status);
			c->used = 0;
			c->state = C_IDLE;
			if (!keep) {
				conn_close(ep, c);
				return 0;
			}
		}
	}
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

static uint32_t pct(double p)
{
	if (!nlat)
		return 0;
	uint64_t i = (uint64_t)(p / 100.0 * (double)nlat);
	return lat_us[i >= nlat ? nlat - 1 : i];
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* One line of per-second figures, before the totals: `OPENLOOP_SECONDS answers=N,N,...
 * p99_us=N,N,...`, second k of the run being [t0 + k s, t0 + k + 1 s) by the answer's arrival
 * (docs/publish/report_html.py draws them). Sorting (second << 32 | latency) puts each
 * second's latencies together and in order; a second without an answer has p99 0. */
static void print_seconds(void)
{
	uint64_t *keys = malloc((nlat ? nlat : 1) * sizeof *keys);
	if (!keys)
		return;
	uint32_t last = 0;
	for (uint64_t i = 0; i < nlat; i++) {
		keys[i] = (uint64_t)lat_sec[i] << 32 | lat_us[i];
		last = lat_sec[i] > last ? lat_sec[i] : last;
	}
	qsort(keys, nlat, sizeof *keys, cmp_u64);
	printf("OPENLOOP_SECONDS answers=");
	uint64_t i = 0;
	char p99s[8192];
	size_t off = 0;
	p99s[0] = 0;
	for (uint32_t sec = 0; nlat && sec <= last; sec++) {
		uint64_t j = i;
		while (j < nlat && keys[j] >> 32 == sec)
			j++;
		uint64_t n = j - i, k = (uint64_t)(0.99 * (double)n); /* as pct() */
		uint32_t p99 = n ? (uint32_t)keys[i + (k >= n ? n - 1 : k)] : 0;
		printf("%s%llu", sec ? "," : "", (unsigned long long)n);
		if (off < sizeof p99s - 16)
			off += (size_t)snprintf(p99s + off, sizeof p99s - off, "%s%u", sec ? "," : "", p99);
		i = j;
	}
	printf(" p99_us=%s\n", p99s);
	free(keys);
}

int main(int argc, char **argv)
{
	const char *url = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--rate") && i + 1 < argc)
			opt.rate = atof(argv[++i]);
		else if (!strcmp(argv[i], "--duration") && i + 1 < argc)
			opt.duration = atof(argv[++i]);
		else if (!strcmp(argv[i], "--timeout") && i + 1 < argc)
			opt.timeout = atof(argv[++i]);
		else if (!strcmp(argv[i], "--max-conns") && i + 1 < argc)
			opt.max_conns = atoi(argv[++i]);
		else if (argv[i][0] != '-' && !url)
			url = argv[i];
		else
			usage();
	}
	if (!url || opt.rate <= 0 || opt.duration <= 0 || opt.timeout <= 0 || opt.max_conns < 1)
		usage();
	parse_url(url);
	signal(SIGPIPE, SIG_IGN);
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	conns = calloc((size_t)opt.max_conns, sizeof *conns);
	lat_cap = (uint64_t)(opt.rate * opt.duration) + 16;
	lat_us = malloc(lat_cap * sizeof *lat_us);
	lat_sec = malloc(lat_cap * sizeof *lat_sec);
	struct epoll_event *evs = calloc(256, sizeof *evs);
	int ep = epoll_create1(EPOLL_CLOEXEC);
	if (!conns || !lat_us || !lat_sec || !evs || ep < 0) {
		perror("openloop: start-up");
		return 1;
	}
	for (int i = 0; i < opt.max_conns; i++)
		conns[i].fd = -1;

	const uint64_t period = (uint64_t)(1e9 / opt.rate);
	const uint64_t total = (uint64_t)(opt.rate * opt.duration);
	const uint64_t tmo = (uint64_t)(opt.timeout * 1e9);
	const uint64_t t0 = now_ns() + 10000000; /* 10 ms to settle */
	start_ns = t0;
	uint64_t next = 0;  /* index of the next request to become due */
	uint64_t first = 0; /* index of the oldest due request not sent yet */
	for (;;) {
		uint64_t t = now_ns();
		while (next < total && t0 + next * period <= t)
			next++;
		st.scheduled = next;
		/* send what is due: idle connections first, then new ones */
		while (first < next) {
			struct conn *c = NULL;
			for (int i = 0; i < opt.max_conns; i++)
				if (conns[i].state == C_IDLE) {
					c = &conns[i];
					break;
				}
			if (c) {
				send_req(ep, c, t0 + first * period, t);
				first++;
				continue;
			}
			int connecting = 0;
			for (int i = 0; i < opt.max_conns; i++)
				connecting += conns[i].state == C_CONNECTING;
			if ((uint64_t)connecting >= next - first) /* each waiting request has its connection coming */
				break;
			int r = open_conn(ep);
			if (r == 0)
				break; /* at the cap: the request waits (a late start) */
			if (r < 0) {
				st.refused++; /* refused at once: that request is lost */
				first++;
			}
		}
		uint64_t busy = 0;
		for (int i = 0; i < opt.max_conns; i++) {
			struct conn *c = &conns[i];
			if (c->state == C_BUSY) {
				busy++;
				if (t - c->sent_ns > tmo) {
					st.timeouts++;
					conn_close(ep, c);
				}
			}
		}
		if (busy > st.max_busy)
			st.max_busy = busy;
		bool schedule_done = next >= total;
		/* done when every due request is answered or lost, or when the last could have timed out */
		if (schedule_done && ((first >= next && busy == 0) ||
				      t > t0 + (uint64_t)(opt.duration * 1e9) + tmo + 1000000000u))
			break;
		/* sleep until the next due time (or 1 ms when behind), woken by any socket */
		uint64_t wake = next < total ? t0 + next * period : t + 10000000;
		struct timespec ts = {0, 0};
		if (wake > t) {
			uint64_t d = wake - t;
			ts.tv_sec = (time_t)(d / 1000000000u);
			ts.tv_nsec = (long)(d % 1000000000u);
		}
		int n = epoll_pwait2(ep, evs, 256, first < next && wake <= t ? &(struct timespec){0, 1000000} : &ts, NULL);
		if (n < 0 && errno == ENOSYS) {
			n = epoll_wait(ep, evs, 256, (int)(ts.tv_sec * 1000 + ts.tv_nsec / 1000000));
		}
		t = now_ns();
		for (int i = 0; i < n; i++) {
			if (on_event(ep, evs[i].data.ptr, evs[i].events, t) < 0 && first < next) {
				st.refused++; /* the request it was opened for is lost */
				first++;
			}
		}
	}
	/* what is still unanswered at the end timed out; what was never sent is unsent */
	uint64_t now = now_ns();
	for (int i = 0; i < opt.max_conns; i++)
		if (conns[i].state == C_BUSY) {
			st.timeouts++;
			conn_close(ep, &conns[i]);
		}
	uint64_t unsent = next - first;
	double wall = (double)(now - t0) / 1e9;
	print_seconds();
	qsort(lat_us, nlat, sizeof *lat_us, cmp_u32);
	double mean = 0;
	for (uint64_t i = 0; i < nlat; i++)
		mean += lat_us[i];
	mean = nlat ? mean / (double)nlat : 0;
	printf("OPENLOOP rate=%.1f duration_s=%.1f scheduled=%llu sent=%llu ok=%llu non2xx=%llu refused=%llu "
	       "reset=%llu timeouts=%llu unsent=%llu late_starts=%llu conns_opened=%llu max_in_flight=%llu "
	       "achieved_rps=%.1f p50_us=%u p90_us=%u p95_us=%u p99_us=%u p999_us=%u max_us=%u mean_us=%.0f "
	       "wall_s=%.2f\n",
	       opt.rate, opt.duration, (unsigned long long)st.scheduled, (unsigned long long)st.sent,
	       (unsigned long long)st.ok, (unsigned long long)st.non2xx, (unsigned long long)st.refused,
	       (unsigned long long)st.reset, (unsigned long long)st.timeouts, (unsigned long long)unsent,
	       (unsigned long long)st.late, (unsigned long long)st.opened, (unsigned long long)st.max_busy,
	       (double)st.ok / opt.duration, pct(50), pct(90), pct(95), pct(99), pct(99.9),
	       nlat ? lat_us[nlat - 1] : 0, mean, wall);
	return 0;
}
