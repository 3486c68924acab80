/* fuzz_response.c - libFuzzer target over src/client/http_response.c, an upstream's
 * answer as the client reads it.
 *
 * Input: one byte of options (bit 0: the upstream closes after the bytes;
 * bits 1-7: a body buffer of 16 << (bits % 8) bytes), then the bytes an
 * upstream sends. They are fed whole, one byte at a time, and in pieces of
 * every size from 2 to 16 (the split points a ring could give), and then:
 * - every split gives the same verdict, status, body, keep-alive and bytes
 *   used (a split never changes what the parser makes of the bytes);
 * - an answer it accepts is one a strict HTTP/1.1 reading (RFC 9112, the
 *   reader below, written apart from llhttp) accepts too, with the same
 *   status and body, and keep-alive only where it keeps it: never a bare
 *   CR or LF, an obs-fold, two
 *   Content-Lengths, Content-Length with Transfer-Encoding, a chunk that
 *   breaks the grammar, or a version other than HTTP/1.0 and 1.1.
 * abort() with a message on a failed check, so libFuzzer saves the input.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_response.h"

#define FUZZ_NAME "fuzz_response"
#include "fuzz_fail.h"

#define BODY_MAX (16 << 7)

struct verdict {
    enum http_response_status st;
    uint16_t status;
    bool keep_alive;
    size_t used, body_len;
    char body[BODY_MAX];
};

static void run(const uint8_t *in, size_t len, size_t chunk, bool eof, size_t cap, struct verdict *v)
{
    struct http_response r;
    http_response_init(&r, v->body, cap);
    v->st = HRESP_MORE;
    size_t off = 0;
    while (off < len && v->st == HRESP_MORE) {
        size_t n = chunk && len - off > chunk ? chunk : len - off, used;
        v->st = http_response_feed(&r, (const char *)in + off, n, &used);
        if (used > n || (v->st == HRESP_MORE && used != n))
            FAIL("used %zu of %zu with status %d", used, n, v->st);
        off += used;
    }
    if (v->st == HRESP_MORE && eof)
        v->st = http_response_eof(&r);
    if (v->st == HRESP_ERROR && !r.why)
        FAIL("an error without a reason");
    v->used = off;
    v->status = r.status;
    v->keep_alive = r.keep_alive;
    v->body_len = r.body_len;
    if (r.body_len > cap)
        FAIL("body %zu over the buffer %zu", r.body_len, cap);
}

/* -- the strict reader: RFC 9112 for a response to a GET ------------------------------ */

struct strict {
    const uint8_t *s;
    size_t n, i;
};

static bool tchar(uint8_t c)
{
    return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') || (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* One line ending in CRLF (no CR or LF inside): its [start, end) into *a, *b. */
static bool line(struct strict *p, size_t *a, size_t *b)
{
    size_t k = p->i;
    while (k < p->n && p->s[k] != '\r' && p->s[k] != '\n')
        k++;
    if (k + 1 >= p->n || p->s[k] != '\r' || p->s[k + 1] != '\n')
        return false;
    *a = p->i;
    *b = k;
    p->i = k + 2;
    return true;
}

static bool ieq(const uint8_t *s, size_t n, const char *lit)
{
    if (strlen(lit) != n)
        return false;
    for (size_t k = 0; k < n; k++)
        if ((s[k] | 0x20) != lit[k])
            return false;
    return true;
}

/* Whether the comma-separated list s holds tok as an element (OWS around it, case-insensitive). */
static bool has_token(const uint8_t *s, size_t n, const char *tok)
{
    size_t k = 0;
    while (k <= n) {
        size_t a = k;
        while (k < n && s[k] != ',')
            k++;
        size_t b = k++;
        while (a < b && (s[a] == ' ' || s[a] == '\t'))
            a++;
        while (b > a && (s[b - 1] == ' ' || s[b - 1] == '\t'))
            b--;
        if (ieq(s + a, b - a, tok))
            return true;
    }
    return false;
}

struct head {
    unsigned status, minor;
    bool cl, te, chunked_last, close, keep_alive_tok;
    uint64_t length;
};

/* A field section (headers or trailers) up to its empty line. */
static bool fields(struct strict *p, struct head *h, bool trailers)
{
    for (;;) {
        size_t a, b;
        if (!line(p, &a, &b))
            return false;
        if (a == b)
            return true;
        const uint8_t *s = p->s;
        size_t c = a;
        while (c < b && tchar(s[c]))
            c++;
        if (c == a || c == b || s[c] != ':') /* an empty name, a space before ':', an obs-fold */
            return false;
        size_t va = c + 1, vb = b;
        while (va < vb && (s[va] == ' ' || s[va] == '\t'))
            va++;
        while (vb > va && (s[vb - 1] == ' ' || s[vb - 1] == '\t'))
            vb--;
        for (size_t k = va; k < vb; k++)
            if ((s[k] < 0x20 && s[k] != '\t') || s[k] == 0x7f)
                return false;
        if (trailers)
            continue;
        if (ieq(s + a, c - a, "content-length")) {
            if (h->cl || va == vb || vb - va > 18)
                return false;
            h->cl = true;
            h->length = 0;
            for (size_t k = va; k < vb; k++) {
                if (s[k] < '0' || s[k] > '9')
                    return false;
                h->length = h->length * 10 + (s[k] - '0');
            }
        } else if (ieq(s + a, c - a, "transfer-encoding")) {
            h->te = true;
            /* the last coding of every field so far: is it chunked */
            size_t e = vb;
            while (e > va && s[e - 1] != ',')
                e--;
            while (e < vb && (s[e] == ' ' || s[e] == '\t'))
                e++;
            h->chunked_last = ieq(s + e, vb - e, "chunked");
        } else if (ieq(s + a, c - a, "connection")) {
            if (has_token(s + va, vb - va, "close"))
                h->close = true;
            if (has_token(s + va, vb - va, "keep-alive"))
                h->keep_alive_tok = true;
        }
    }
}

static bool status_line(struct strict *p, struct head *h)
{
    size_t a, b;
    if (!line(p, &a, &b))
        return false;
    const uint8_t *s = p->s + a;
    size_t n = b - a;
    if (n < 12 || memcmp(s, "HTTP/1.", 7) != 0 || (s[7] != '0' && s[7] != '1') || s[8] != ' ')
        return false;
    h->minor = s[7] - '0';
    for (int k = 9; k < 12; k++)
        if (s[k] < '0' || s[k] > '9')
            return false;
    h->status = (s[9] - '0') * 100u + (s[10] - '0') * 10u + (s[11] - '0');
    if (h->status < 100 || h->status > 599)
        return false;
    /* status-line = HTTP-version SP status-code SP [ reason-phrase ]; llhttp also takes the
     * code with nothing after it, which no framing depends on: allowed here too */
    if (n > 12 && s[12] != ' ')
        return false;
    for (size_t k = 13; k < n; k++)
        if ((s[k] < 0x20 && s[k] != '\t') || s[k] == 0x7f)
            return false;
    return true;
}

enum strict_verdict { S_MORE, S_DONE, S_REFUSED };

/* Reads one response (interim 1xx ones before it skipped); eof: the bytes end with the close. */
static enum strict_verdict strict_read(const uint8_t *in, size_t len, bool eof, struct verdict *v)
{
    struct strict p = {in, len, 0};
    struct head h;
    for (;;) {
        memset(&h, 0, sizeof(h));
        /* an incomplete head is as good as a refused one here: only accepted answers are compared */
        if (!status_line(&p, &h) || !fields(&p, &h, false))
            return S_REFUSED;
        if (h.status >= 100 && h.status < 200) {
            if (h.status == 101 || (h.cl && h.length > 0) || h.te)
                return S_REFUSED;
            continue;
        }
        break;
    }
    if (h.cl && h.te)
        return S_REFUSED;
    v->status = (uint16_t)h.status;
    v->body_len = 0;
    bool persistent = h.minor == 1 ? !h.close : h.keep_alive_tok && !h.close;
    if (h.status == 204 && ((h.cl && h.length > 0) || h.te))
        return S_REFUSED;
    if (h.status == 204 || h.status == 304) {
        v->keep_alive = persistent;
        v->used = p.i;
        return S_DONE;
    }
    if (h.te && h.chunked_last) {
        for (;;) {
            size_t a, b;
            if (!line(&p, &a, &b))
                return S_MORE;
            uint64_t size = 0;
            size_t k = a;
            while (k < b && ((in[k] >= '0' && in[k] <= '9') || ((in[k] | 0x20) >= 'a' && (in[k] | 0x20) <= 'f'))) {
                if (size >> 56)
                    return S_REFUSED;
                size = size * 16 + (in[k] <= '9' ? in[k] - '0' : (in[k] | 0x20) - 'a' + 10);
                k++;
            }
            if (k == a)
                return S_REFUSED;
            /* chunk-ext: anything after ';' within the line (BWS, names, values) */
            while (k < b && (in[k] == ' ' || in[k] == '\t'))
                k++;
            if (k < b && in[k] != ';')
                return S_REFUSED;
            if (size == 0) {
                if (!fields(&p, &h, true))
                    return S_REFUSED;
                break;
            }
            if (len - p.i < size + 2)
                return S_MORE;
            if (v->body_len + size <= BODY_MAX)
                memcpy(v->body + v->body_len, in + p.i, size);
            v->body_len += size;
            p.i += size;
            if (in[p.i] != '\r' || in[p.i + 1] != '\n')
                return S_REFUSED;
            p.i += 2;
        }
        v->keep_alive = persistent;
    } else if (h.te || !h.cl) {
        if (!eof)
            return S_MORE;
        size_t n = len - p.i;
        memcpy(v->body, in + p.i, n < BODY_MAX ? n : BODY_MAX);
        v->body_len = n;
        p.i = len;
        v->keep_alive = false;
    } else {
        if (len - p.i < h.length)
            return S_MORE;
        memcpy(v->body, in + p.i, h.length < BODY_MAX ? h.length : BODY_MAX);
        v->body_len = h.length;
        p.i += h.length;
        v->keep_alive = persistent;
    }
    v->used = p.i;
    return S_DONE;
}

static struct verdict whole, split, ref;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    bool eof = data[0] & 1;
    size_t cap = (size_t)16 << ((data[0] >> 1) % 8);
    const uint8_t *in = data + 1;
    size_t len = size - 1;

    run(in, len, 0, eof, cap, &whole);
    for (size_t chunk = 1; chunk <= 16 && chunk < len; chunk++) {
        run(in, len, chunk, eof, cap, &split);
        if (split.st != whole.st)
            FAIL("split %zu: status %d, whole %d", chunk, split.st, whole.st);
        if (whole.st != HRESP_DONE)
            continue;
        if (split.status != whole.status || split.keep_alive != whole.keep_alive || split.used != whole.used ||
            split.body_len != whole.body_len || memcmp(split.body, whole.body, whole.body_len) != 0)
            FAIL("split %zu: %u %d used %zu body %zu, whole %u %d used %zu body %zu", chunk, split.status,
                 split.keep_alive, split.used, split.body_len, whole.status, whole.keep_alive, whole.used,
                 whole.body_len);
    }
    if (whole.st != HRESP_DONE)
        return 0;
    enum strict_verdict sv = strict_read(in, len, eof, &ref);
    if (sv != S_DONE)
        FAIL("accepted an answer a strict reading %s", sv == S_MORE ? "has not finished" : "refuses");
    /* the parser may close where a strict reading would keep the connection (llhttp does after a
     * framing field in the trailers), never the reverse */
    if (ref.status != whole.status || (whole.keep_alive && !ref.keep_alive) || ref.used != whole.used ||
        ref.body_len != whole.body_len || memcmp(ref.body, whole.body, whole.body_len) != 0)
        FAIL("strict reading: %u keep-alive %d used %zu body %zu; parser: %u %d used %zu body %zu", ref.status,
             ref.keep_alive, ref.used, ref.body_len, whole.status, whole.keep_alive, whole.used, whole.body_len);
    return 0;
}
