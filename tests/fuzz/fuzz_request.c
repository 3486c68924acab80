/* fuzz_request.c - libFuzzer target over primed's real request path, short of
 * the socket: the core's connections and the app's handlers over the
 * scripted io.h backend (tests/lib/pool_fixture.c, tests/lib/io_script.c), with
 * inline dispatch and a stub prime.
 *
 * Bytes in -> receives of sizes chosen by the first input bytes -> conn.c
 * (read buffer, http_feed, compaction, 431, pipelining, flush) -> the routes
 * -> the bytes conn.c sends, checked against the access log conn.c writes:
 * - every response is a well-formed HTTP/1.1 head of known header names,
 *   printable ASCII only (nothing from the request is reflected), with the
 *   status and body the log line of its request says, in log order;
 * - one answer per request: the in-flight gauge is back at 0, as many
 *   responses on the wire as log lines, and nothing left over;
 * - the connection never stalls: while input is left a receive is armed
 *   (or it closed), and after EOF it closes;
 * - trace parsing yields either "no trace" or a valid id (32 lower-case hex,
 *   not all zero; parent "" or 16 lower-case hex).
 * abort() with a message on a failed check, so libFuzzer saves the input.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pool_fixture.h"
#include "prime.h"
#include "trace.h"

#define FAIL(...)                                      \
    do {                                               \
        fprintf(stderr, "fuzz_request: " __VA_ARGS__); \
        fputc('\n', stderr);                           \
        abort();                                       \
    } while (0)

/* Not linked here: the real backends and FLINT. */
int io_uring_backend_init(struct io *io, unsigned entries, unsigned max_ops, unsigned tune)
{
    return -ENOSYS;
}

int io_epoll_backend_init(struct io *io, int max_fd)
{
    return -ENOSYS;
}

int prime_generate(struct prime_state *st, enum prime_engine e, unsigned bits, char *hex, size_t hexlen)
{
    return (int)bits;
}

struct prime_state *prime_state_create(unsigned long seed)
{
    static char state;
    return (struct prime_state *)&state;
}

void prime_state_destroy(struct prime_state *st)
{
}

const char *prime_engine_name(enum prime_engine e)
{
    return "stub";
}

int prime_engine_parse(const char *s, enum prime_engine *e)
{
    /* config_defaults() parses its default, "sieve" */
    if (strcmp(s, "sieve") == 0 || strcmp(s, "flint") == 0) {
        *e = s[0] == 's' ? PRIME_ENGINE_SIEVE : PRIME_ENGINE_FLINT;
        return 0;
    }
    return -1;
}

void prime_thread_fini(void)
{
}

/* the split search (inline dispatch here: never shared) and the vector unit */
struct prime_hunt *prime_hunt_create(void)
{
    return NULL;
}

int prime_generate_shared(struct prime_state *st, struct prime_hunt *h, enum prime_engine e, unsigned bits, char *hex,
                          size_t hexlen)
{
    return (int)bits;
}

bool prime_hunt_help(struct prime_state *st, struct prime_hunt *h)
{
    return false;
}

bool prime_vector_has(enum prime_vector v)
{
    return v == PRIME_VECTOR_SCALAR;
}

enum prime_vector prime_vector_best(void)
{
    return PRIME_VECTOR_SCALAR;
}

const char *prime_vector_name(enum prime_vector v)
{
    return v == PRIME_VECTOR_SCALAR ? "scalar" : "unknown";
}

int prime_state_vector(struct prime_state *st, enum prime_vector v)
{
    return v == PRIME_VECTOR_SCALAR ? 0 : -ENOTSUP;
}

static bool is_lhex(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

static bool lhex_run(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!is_lhex(s[i]))
            return false;
    return true;
}

static bool zero_run(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != '0')
            return false;
    return true;
}

static void check_trace(const struct trace *t, bool ok, const char *what)
{
    if (ok != t->valid)
        FAIL("%s: return value %d but valid=%d", what, ok, t->valid);
    if (!ok)
        return;
    if (strlen(t->trace_id) != 32 || !lhex_run(t->trace_id, 32) || zero_run(t->trace_id, 32))
        FAIL("%s: invalid trace id '%.33s'", what, t->trace_id);
    size_t pl = strnlen(t->parent_id, sizeof(t->parent_id));
    if (pl == sizeof(t->parent_id) || (pl != 0 && pl != 16) || !lhex_run(t->parent_id, pl))
        FAIL("%s: invalid parent id", what);
}

static const char *const known_headers[] = {
    "Server", "Date", "Content-Type", "Allow", "traceparent", "Content-Length", "Connection", "K-Revision",
};

/* What the access log says of one answer: the status, the body bytes sent
 * (0 for HEAD) and whether it was HEAD. */
struct answer {
    int status;
    size_t bytes;
    bool head;
};

/* Checks the one response primed sent at b (n bytes from there on) against
 * its access-log line; returns its length. */
static size_t check_response(const char *b, size_t n, const struct answer *want)
{
    struct {
        int status;
        size_t body_len;
        bool head;
    } rr = {want->status, want->bytes, want->head}, *r = &rr;
    if (n < 17 || memcmp(b, "HTTP/1.1 ", 9) || b[12] != ' ')
        FAIL("bad status line: '%.*s'", (int)(n < 40 ? n : 40), b);
    int code = (b[9] - '0') * 100 + (b[10] - '0') * 10 + (b[11] - '0');
    if (code != r->status)
        FAIL("status %d, wanted %d", code, r->status);
    const char *end = NULL;
    for (size_t i = 0; i + 3 < n; i++)
        if (!memcmp(b + i, "\r\n\r\n", 4)) {
            end = b + i;
            break;
        }
    if (!end)
        FAIL("response head not terminated");
    size_t head_len = (size_t)(end - b) + 4;
    /* header lines: printable ASCII, known names, one Content-Length */
    long clen = -1;
    const char *line = memchr(b, '\n', head_len) + 1;
    while (line < end + 2) {
        const char *eol = memchr(line, '\r', (size_t)(end + 2 - line));
        if (!eol || eol[1] != '\n')
            FAIL("header line without CRLF");
        for (const char *p = line; p < eol; p++)
            if (*p < 0x20 || *p > 0x7e)
                FAIL("byte 0x%02x in a response header", (unsigned char)*p);
        const char *colon = memchr(line, ':', (size_t)(eol - line));
        if (!colon || colon[1] != ' ')
            FAIL("header line without ': '");
        bool known = false;
        for (size_t k = 0; k < sizeof(known_headers) / sizeof(known_headers[0]); k++)
            if (strlen(known_headers[k]) == (size_t)(colon - line) &&
                !memcmp(line, known_headers[k], (size_t)(colon - line)))
                known = true;
        if (!known)
            FAIL("unknown response header '%.*s'", (int)(colon - line), line);
        if (colon - line == 14 && !memcmp(line, "Content-Length", 14)) {
            if (clen >= 0)
                FAIL("two Content-Length headers");
            clen = strtol(colon + 2, NULL, 10);
        }
        line = eol + 2;
    }
    if (clen < 0 || (!r->head && (size_t)clen != r->body_len))
        FAIL("Content-Length %ld, the log says %zu body bytes", clen, r->body_len);
    size_t len = head_len + (r->head ? 0 : (size_t)clen);
    if (n < len)
        FAIL("response is cut short: %zu bytes of %zu", n, len);
    for (size_t i = head_len; i < len; i++)
        if ((b[i] < 0x20 || b[i] > 0x7e) && b[i] != '\n')
            FAIL("byte 0x%02x in a response body", (unsigned char)b[i]);
    return len;
}

static const uint32_t max_headers[] = {8192, 1024, 1500, 4096};
static const unsigned max_urls[] = {2048, 16, 100, 1000};
static const unsigned long max_bodies[] = {1UL << 20, 0, 10, 1000};

static struct pool_fixture F;
#define S (F.s)
#define P (F.w.pool)
#define M (*app_metrics(F.aw))

static void pump(void)
{
    pool_fixture_pump(&F);
}

static void sends(int fd)
{
    while (io_script_send(&S, fd, SIZE_MAX) >= 0)
        pump();
}

/* The log lines, in order: "... method=M path=P status=S bytes=B ...". */
static void check_output(const char *out, size_t out_len, const char *raw, size_t log_len)
{
    char *log = malloc(log_len + 1); /* NUL-terminated, for strstr */
    if (!log)
        return;
    memcpy(log, raw, log_len);
    log[log_len] = '\0';
    size_t off = 0, lines = 0;
    const char *l = log, *end = log + log_len;
    while (l < end) {
        const char *nl = memchr(l, '\n', (size_t)(end - l));
        if (!nl)
            FAIL("access log line without a newline");
        struct answer a = {0};
        const char *st = strstr(l, " status="), *by = strstr(l, " bytes="), *me = strstr(l, " method=");
        if (!st || !by || !me || st > nl || by > nl || me > nl)
            FAIL("access log line without method, status or bytes: %.*s", (int)(nl - l), l);
        a.status = atoi(st + 8);
        a.bytes = strtoul(by + 7, NULL, 10);
        /* HEAD answered without a body logs 0 bytes; a refused HEAD (never
         * routed) gets its body like any refusal */
        a.head = !strncmp(me + 8, "HEAD ", 5) && a.bytes == 0;
        static const int known[] = {200, 400, 404, 405, 408, 413, 414, 417, 431, 500, 501, 503, 505};
        bool ok = false;
        for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
            ok |= a.status == known[i];
        if (!ok)
            FAIL("answered with status %d", a.status);
        if (off >= out_len)
            FAIL("log line %zu has no response on the wire", lines + 1);
        off += check_response(out + off, out_len - off, &a);
        lines++;
        l = nl + 1;
    }
    if (off != out_len)
        FAIL("%zu bytes on the wire after the %zu logged responses", out_len - off, lines);
    free(log);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* byte 0: limits (bit 0x80: select receives of 64 bytes, as io_uring's
     * provided buffers land them); byte 1: number of split sizes; then the
     * sizes (1..256) */
    if (size < 2)
        return 0;
    uint8_t cfg = data[0];
    size_t nsplit = data[1] % 16;
    if (size < 2 + nsplit)
        return 0;
    const uint8_t *splits = data + 2;
    const char *in = (const char *)data + 2 + nsplit;
    size_t in_len = size - 2 - nsplit;

    /* the trace parsers on raw bytes too, not only through headers */
    struct trace t;
    size_t tl = in_len < 80 ? in_len : 80;
    check_trace(&t, trace_parse_traceparent(in, tl, &t), "raw traceparent");
    check_trace(&t, trace_parse_b3(in, tl, &t), "raw b3");

    pool_fixture_init(&F);
    if (cfg & 0x80)
        io_script_select(&S, 64);
    struct config *C = &F.cfg;
    C->max_header = max_headers[cfg & 3];
    C->max_url = max_urls[(cfg >> 2) & 3];
    C->max_body = max_bodies[(cfg >> 4) & 3];
    C->bits = PRIME_BITS_DEFAULT;
    C->header_timeout_ms = 10000;
    C->idle_timeout_ms = 60000;
    C->queue_max = 1;
    C->dispatch = DISPATCH_INLINE;
    C->access_log = true;
    F.nslots = 1;
    if (cfg & 0x40)
        snprintf(F.app.revision_hdr, sizeof(F.app.revision_hdr), "K-Revision: primed-00001\r\n");
    if (pool_fixture_start(&F))
        FAIL("pool_fixture_start: %s", F.w.init_why);
    /* the access log into a buffer that is never half full: nothing is
     * written, the checks read it */
    struct alog *A = &F.aw->alog;
    alog_fini(A);
    if (alog_init(A, -1, 1 << 20))
        return 0;
    strcpy(F.aw->iso_time, "1994-11-06T08:49:37Z");

    const int fd = 5;
    conn_start(&P, fd);
    size_t ip = 0, k = 0;
    while (ip < in_len && !S.fd[fd].closed) {
        sends(fd);
        if (S.fd[fd].closed)
            break;
        if (!S.fd[fd].recv_armed) {
            if (S.fd[fd].shut_wr || S.fd[fd].shut_rd)
                break; /* closing: waiting on nothing we script */
            FAIL("input left (%zu bytes) but no receive armed and nothing to send: the connection stalls", in_len - ip);
        }
        size_t want = nsplit ? (size_t)splits[k++ % nsplit] + 1 : in_len;
        if (want > in_len - ip)
            want = in_len - ip;
        int n = io_script_data(&S, fd, in + ip, want);
        ip += (size_t)n;
        pump();
    }
    sends(fd);
    if (!S.fd[fd].closed) {
        if (io_script_recv_res(&S, fd, 0) == 0) /* the client's EOF */
            pump();
        sends(fd);
        if (!S.fd[fd].closed && S.fd[fd].recv_armed) {
            io_script_recv_res(&S, fd, 0); /* lingering: EOF again */
            pump();
        }
        if (!S.fd[fd].closed)
            FAIL("the connection is still open after the client's EOF");
    }
    if (atomic_load(&M.conn.in_flight) != 0)
        FAIL("%lld requests never answered (or answered twice)", (long long)atomic_load(&M.conn.in_flight));
    if (S.lent != 0)
        FAIL("%u landing buffers never put back", S.lent);
    check_output(S.fd[fd].out, S.fd[fd].out_len, A->buf, A->len);
    pool_fixture_stop(&F);
    return 0;
}
