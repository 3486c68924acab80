/* http.c - llhttp glue: one static settings table, request views into the
 * connection's read buffer, and the framing rules llhttp leaves loose.
 *
 * Invariants: the parser pauses after every complete message (so the worker
 * answers in order and can stop reading while a request is being served); the
 * URL is kept as an offset into the caller's buffer until the head completes,
 * then handed to the owner (lim->on_head) and forgotten; bodies are counted and dropped. Never allocates.
 * llhttp is built with LLHTTP_STRICT_MODE (meson.build); what strict mode
 * still lets through (a bare LF as the empty line that ends a head or a
 * trailer section, obs-fold, bare CR/LF between messages) is refused by the
 * line check here, so every line of a head ends in CRLF or the request gets
 * 400 and the connection closes (docs/security.md lists what is tolerated).
 */
#include "http.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <strings.h>

#define X_NAME(id, name) name,
static const char *const bad_names[] = {BAD_REASONS(X_NAME)};
#undef X_NAME

const char *http_bad_reason_name(enum bad_reason r)
{
    return r < BAD__COUNT ? bad_names[r] : "other";
}

/* h->hdr: none, Host, Expect, Transfer-Encoding, or HDR_KEPT + i for value i
 * of the keep list. */
enum { HDR_NONE, HDR_HOST, HDR_EXPECT, HDR_TE, HDR_KEPT };
enum { EXPECT_NONE, EXPECT_CONTINUE, EXPECT_OTHER };

static struct http *of(llhttp_t *p)
{
    return (struct http *)p->data;
}

static int refuse(struct http *h, uint16_t status, enum bad_reason why)
{
    h->err_status = status;
    h->bad = why;
    return -1;
}

static int on_message_begin(llhttp_t *p)
{
    struct http *h = of(p);
    h->in_message = true;
    h->head_done = false;
    h->url_len = 0;
    h->body_len = 0;
    h->hdr = HDR_NONE;
    h->hname_len = 0;
    h->hosts = 0;
    h->expect = EXPECT_NONE;
    h->expect_len = 0;
    h->host_st = 0;
    h->te_seen = false;
    h->want_body = false;
    h->send_continue = false;
    h->extra_len = 0;
    memset(&h->req, 0, offsetof(struct http_req, kept)); /* the values are read up to their lengths */
    return 0;
}

/* RFC 9110 2.5: a recipient treats a higher minor version of HTTP/1 as the
 * highest it speaks (1.1), so llhttp is told to pass any "HTTP/d.d" and the
 * major version is checked here: 505 for anything but 1. */
static int on_version_complete(llhttp_t *p)
{
    if (p->http_major != 1)
        return refuse(of(p), 505, BAD_VERSION);
    return 0;
}

static int on_url(llhttp_t *p, const char *at, size_t len)
{
    struct http *h = of(p);
    if (h->url_len == 0) {
        h->url_off = (uint32_t)(at - h->base);
        h->req.method = p->method; /* the request line got this far */
        h->req.has_method = true;
    }
    /* Pieces of one URL are contiguous in the buffer: the caller keeps the
     * unparsed part of a message in place between feeds. */
    h->url_len += (uint32_t)len;
    if (h->url_len > h->lim->max_url)
        return refuse(h, 414, BAD_URL_TOO_LONG);
    return 0;
}

/* RFC 9110 5.6.2 tchar. llhttp 8.1 lets a space through inside a field
 * name ("Ho st: x"); a proxy in front may read that differently, so refuse. */
static bool is_tchar(unsigned char c)
{
    if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
        return true;
    return c && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

/* A trailer section's bytes count against the head's limit. */
static int count_trailer(struct http *h, size_t len)
{
    if (!h->head_done || !h->lim->max_header)
        return 0;
    h->extra_len += (uint32_t)len;
    if (h->extra_len > h->lim->max_header)
        return refuse(h, 431, BAD_HEADER_TOO_LARGE);
    return 0;
}

static int on_header_field(llhttp_t *p, const char *at, size_t len)
{
    struct http *h = of(p);
    if (count_trailer(h, len))
        return -1;
    for (size_t i = 0; i < len; i++)
        if (!is_tchar((unsigned char)at[i]))
            return refuse(h, 400, BAD_PARSE);
    for (size_t i = 0; i < len && h->hname_len < sizeof(h->hname); i++) {
        char c = at[i];
        h->hname[h->hname_len++] = (c >= 'A' && c <= 'Z') ? (char)(c + 32) : c;
    }
    if (len > sizeof(h->hname))
        h->hname_len = sizeof(h->hname); /* too long to be one we want */
    return 0;
}

static bool name_is(const struct http *h, const char *s)
{
    size_t n = strlen(s);
    return h->hname_len == n && memcmp(h->hname, s, n) == 0;
}

static int on_header_field_complete(llhttp_t *p)
{
    struct http *h = of(p);
    const struct http_keep *k = h->lim->keep;
    if (h->hname_len == 0)
        return refuse(h, 400, BAD_PARSE); /* RFC 9112 5: a field name is a token, one tchar or more */
    h->hdr = HDR_NONE;
    if (name_is(h, "host")) {
        h->hdr = HDR_HOST;
    } else if (name_is(h, "expect")) {
        h->hdr = HDR_EXPECT;
    } else if (name_is(h, "transfer-encoding")) {
        h->hdr = HDR_TE;
    } else if (k) {
        for (unsigned i = 0; i < k->n; i++) {
            if (name_is(h, k->h[i].name)) {
                h->hdr = (uint8_t)(HDR_KEPT + i);
                break;
            }
        }
    }
    if (h->head_done && h->hdr != HDR_NONE)
        h->hdr = HDR_NONE; /* a trailer: too late to mean anything */
    if (h->hdr == HDR_HOST && h->hosts < UINT8_MAX)
        h->hosts++;
    if (h->hdr == HDR_TE)
        h->te_seen = true;
    h->hname_len = 0;
    return 0;
}

/* Appends to a value kept in dst (cap bytes). An overlong value is marked by
 * a length of cap + 1 and ignored later, never truncated into something valid. */
static void append(char *dst, uint8_t *dlen, size_t cap, const char *src, size_t len)
{
    if (*dlen > cap)
        return;
    if ((size_t)*dlen + len > cap) {
        *dlen = (uint8_t)(cap + 1);
        return;
    }
    memcpy(dst + *dlen, src, len);
    *dlen = (uint8_t)(*dlen + len);
}

/* The Host value's syntax (RFC 9112 3.2, RFC 3986 3.2.2): uri-host [":" port],
 * the host a reg-name (unreserved, pct-encoded, sub-delims but the comma:
 * a list is not one host) or an IP-literal in brackets; not empty (RFC 9110
 * 4.2.1: an http URI has a host). llhttp drops the leading whitespace and
 * keeps the trailing, which is allowed. Fed byte by byte across pieces. */
enum {
    HOST_START,
    HOST_REG,
    HOST_PCT1,
    HOST_PCT2,
    HOST_IPLIT,
    HOST_IPLIT_IN,
    HOST_IPEND,
    HOST_PORT,
    HOST_TRAIL,
    HOST_DONE,
    HOST_BAD
};

static bool is_reg_char(unsigned char c)
{
    if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
        return true;
    return c && strchr("-._~!$&'()*+;=", c) != NULL;
}

static bool is_hex(unsigned char c)
{
    return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
}

static uint8_t host_step(uint8_t st, unsigned char c)
{
    bool ows = c == ' ' || c == '\t';
    switch (st) {
    case HOST_START:
        return c == '[' ? HOST_IPLIT : c == '%' ? HOST_PCT1 : is_reg_char(c) ? HOST_REG : HOST_BAD;
    case HOST_REG:
        return is_reg_char(c) ? HOST_REG : c == '%' ? HOST_PCT1 : c == ':' ? HOST_PORT : ows ? HOST_TRAIL : HOST_BAD;
    case HOST_PCT1:
        return is_hex(c) ? HOST_PCT2 : HOST_BAD;
    case HOST_PCT2:
        return is_hex(c) ? HOST_REG : HOST_BAD;
    case HOST_IPLIT:
    case HOST_IPLIT_IN:
        /* IPv6address or IPvFuture: their characters, then "]" (not at once) */
        if (c == ']')
            return st == HOST_IPLIT_IN ? HOST_IPEND : HOST_BAD;
        return is_reg_char(c) || c == ':' ? HOST_IPLIT_IN : HOST_BAD;
    case HOST_IPEND:
        return c == ':' ? HOST_PORT : ows ? HOST_TRAIL : HOST_BAD;
    case HOST_PORT:
        return c >= '0' && c <= '9' ? HOST_PORT : ows ? HOST_TRAIL : HOST_BAD;
    case HOST_TRAIL:
        return ows ? HOST_TRAIL : HOST_BAD;
    default:
        return HOST_BAD;
    }
}

static bool host_valid(uint8_t st)
{
    return st == HOST_REG || st == HOST_IPEND || st == HOST_PORT || st == HOST_TRAIL;
}

static int on_header_value(llhttp_t *p, const char *at, size_t len)
{
    struct http *h = of(p);
    struct http_req *q = &h->req;
    if (count_trailer(h, len))
        return -1;
    if (h->hdr == HDR_HOST) {
        uint8_t st = h->host_st;
        for (size_t i = 0; i < len && st != HOST_BAD; i++)
            st = host_step(st, (unsigned char)at[i]);
        h->host_st = st;
    } else if (h->hdr == HDR_EXPECT) {
        append(h->expect_val, &h->expect_len, sizeof(h->expect_val), at, len);
    } else if (h->hdr >= HDR_KEPT && q->kept) { /* not kept: nowhere to keep it */
        const struct http_keep *k = h->lim->keep;
        unsigned i = h->hdr - HDR_KEPT;
        append(q->kept + k->off[i], &q->kept_len[i], k->h[i].cap, at, len);
    }
    return 0;
}

/* RFC 9110 10.1.1: "100-continue", case-insensitive, with optional whitespace. */
static bool is_100_continue(const char *v, size_t len)
{
    static const char want[] = "100-continue";
    while (len && (*v == ' ' || *v == '\t')) {
        v++;
        len--;
    }
    while (len && (v[len - 1] == ' ' || v[len - 1] == '\t'))
        len--;
    if (len != sizeof(want) - 1)
        return false;
    for (size_t i = 0; i < len; i++)
        if ((v[i] | 0x20) != want[i])
            return false;
    return true;
}

static int on_header_value_complete(llhttp_t *p)
{
    struct http *h = of(p);
    if (h->hdr == HDR_EXPECT) {
        /* several Expect fields, or one with a list: anything but exactly
         * 100-continue is an expectation primed cannot meet */
        bool cont = h->expect_len <= sizeof(h->expect_val) && is_100_continue(h->expect_val, h->expect_len);
        h->expect = cont && h->expect == EXPECT_NONE ? EXPECT_CONTINUE : EXPECT_OTHER;
        h->expect_len = 0;
    } else if (h->hdr == HDR_HOST) {
        h->host_st = host_valid(h->host_st) ? HOST_DONE : HOST_BAD;
    }
    h->hdr = HDR_NONE;
    return 0;
}

/* RFC 3986's characters of a URI (unreserved, sub-delims, ":@/?", the
 * brackets of an IP literal, '%' of a pct-encoding), '#' aside: llhttp also
 * passes a backslash, '{', '|', '"', '<' ... which a proxy may escape, decode or
 * refuse, so the target would not be what primed routes. */
static bool is_uri_char(unsigned char c)
{
    if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
        return true;
    return c && strchr("-._~!$&'()*+,;=:@/?[]%", c) != NULL;
}

static bool uri_chars(const char *url, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)url[i];
        if (!is_uri_char(c))
            return false;
        if (c == '%' && (i + 2 >= len || !is_hex((unsigned char)url[i + 1]) || !is_hex((unsigned char)url[i + 2])))
            return false;
    }
    return true;
}

/* RFC 9112 3.2: the request-target's form must fit its method. Returns 0,
 * 400 (a fragment, "*" for a method other than OPTIONS, authority-form or
 * anything else for a method other than CONNECT) or 501 (CONNECT: primed is
 * an origin server, not a tunnel). */
static int check_target(uint8_t method, const char *url, size_t len)
{
    if (method == HTTP_CONNECT)
        return 501;
    if (len == 1 && url[0] == '*')
        return method == HTTP_OPTIONS ? 0 : 400;
    if (memchr(url, '#', len))
        return 400; /* a fragment is the client's own; never sent (RFC 9110 4.2.4) */
    if (!uri_chars(url, len))
        return 400;
    if (len && url[0] == '/')
        return 0; /* origin-form */
    /* absolute-form: http or https (any case), "://", a host */
    size_t s = len > 7 && strncasecmp(url, "http://", 7) == 0    ? 7
               : len > 8 && strncasecmp(url, "https://", 8) == 0 ? 8
                                                                 : 0;
    return s && url[s] != '/' && url[s] != '?' ? 0 : 400;
}

static int on_headers_complete(llhttp_t *p)
{
    struct http *h = of(p);
    /* RFC 9112 3.2: a server MUST answer 400 to an HTTP/1.1 request without
     * a Host field, and to any request with more than one. */
    if (h->hosts > 1 || (h->hosts == 0 && p->http_major == 1 && p->http_minor >= 1) ||
        (h->hosts == 1 && h->host_st != HOST_DONE))
        return refuse(h, 400, BAD_HOST);
    /* RFC 9112 6.1, 6.3: a Transfer-Encoding other than a final chunked (an
     * empty one too: llhttp frames such a request by its Content-Length) and
     * any Transfer-Encoding in HTTP/1.0 are framing primed cannot trust */
    if (h->te_seen && (!(p->flags & F_CHUNKED) || p->http_minor == 0))
        return refuse(h, 400, BAD_PARSE);
    /* RFC 9112 3: one SP on each side of the target (llhttp passes more;
     * a recipient that splits on each SP would read another target). The
     * request line is still in the buffer: the head is kept in place. */
    const char *u = h->base + h->url_off;
    if (u[-2] == ' ' || u[h->url_len + 1] == ' ')
        return refuse(h, 400, BAD_PARSE);
    int target = check_target(p->method, u, h->url_len);
    if (target)
        return refuse(h, (uint16_t)target, target == 501 ? BAD_METHOD : BAD_TARGET);
    if ((p->flags & F_CONTENT_LENGTH) && p->content_length > h->lim->max_body)
        return refuse(h, 413, BAD_BODY_TOO_LARGE);
    if (h->expect == EXPECT_CONTINUE && p->http_minor == 0)
        h->expect = EXPECT_NONE; /* RFC 9110 10.1.1: an HTTP/1.0 client's is ignored */
    if (h->expect == EXPECT_OTHER)
        return refuse(h, 417, BAD_EXPECT); /* RFC 9110 10.1.1 */
    h->req.method = p->method;
    h->req.has_method = true;
    h->req.head = p->method == HTTP_HEAD;
    h->req.asterisk = h->url_len == 1 && h->base[h->url_off] == '*';
    if (h->lim->on_head)
        h->want_body = h->lim->on_head(h->head_ctx, &h->req, h->base + h->url_off, h->url_len) && h->lim->on_body;
    h->head_done = true;
    bool body = (p->flags & F_CHUNKED) || ((p->flags & F_CONTENT_LENGTH) && p->content_length > 0);
    if (h->expect == EXPECT_CONTINUE && body && h->want_body) {
        /* the owner reads this body: the client may send it (RFC 9110
         * 10.1.1); the owner writes the interim answer before any other */
        h->send_continue = true;
    } else if (h->expect == EXPECT_CONTINUE && body) {
        /* No route of primed reads a body: the final answer goes out now,
         * without a 100 Continue and without waiting for the body, and the
         * connection closes after it (the body, if the client sends it
         * anyway, is read and dropped by the lingering close). */
        h->req.early = true;
        h->req.keep_alive = false;
        h->paused_head = true;
        return HPE_PAUSED;
    }
    return 0;
}

/* Chunk extensions: read and dropped, at most HTTP_CHUNK_EXT_MAX bytes a chunk. */
static int on_chunk_ext(llhttp_t *p, const char *at, size_t len)
{
    struct http *h = of(p);
    h->extra_len += (uint32_t)len;
    if (h->extra_len > HTTP_CHUNK_EXT_MAX)
        return refuse(h, 400, BAD_CHUNK);
    return 0;
}

static int on_chunk_header(llhttp_t *p)
{
    of(p)->extra_len = 0; /* the next chunk's extensions, or the trailer section */
    if (p->content_length != 0)
        return 0;
    /* the last chunk: its trailer section follows, line-checked like a head */
    of(p)->paused_trailers = true;
    return HPE_PAUSED;
}

static int on_body(llhttp_t *p, const char *at, size_t len)
{
    struct http *h = of(p);
    h->body_len += len;
    if (h->body_len > h->lim->max_body)
        return refuse(h, 413, BAD_BODY_TOO_LARGE);
    if (h->want_body && h->lim->on_body(h->head_ctx, at, len))
        return refuse(h, 413, BAD_BODY_TOO_LARGE); /* the owner cannot keep it */
    return 0;
}

static int on_message_complete(llhttp_t *p)
{
    struct http *h = of(p);
    h->want_body = false; /* the body is whole: the owner has it */
    h->req.keep_alive = llhttp_should_keep_alive(p);
    if (p->upgrade) {
        /* Upgrade or CONNECT: answered as a plain request, then the
         * connection closes (primed speaks HTTP/1.1 only). Noted here: our
         * pause would otherwise hide llhttp's HPE_PAUSED_UPGRADE until the
         * next feed, which would report this same message again. */
        h->upgrade = true;
        h->req.keep_alive = false;
    }
    h->in_message = false;
    return HPE_PAUSED;
}

static const llhttp_settings_t settings = {
    .on_message_begin = on_message_begin,
    .on_url = on_url,
    .on_version_complete = on_version_complete,
    .on_header_field = on_header_field,
    .on_header_field_complete = on_header_field_complete,
    .on_header_value = on_header_value,
    .on_header_value_complete = on_header_value_complete,
    .on_headers_complete = on_headers_complete,
    .on_chunk_header = on_chunk_header,
    .on_chunk_extension_name = on_chunk_ext,
    .on_chunk_extension_value = on_chunk_ext,
    .on_body = on_body,
    .on_message_complete = on_message_complete,
};

void http_init(struct http *h, const struct http_limits *lim)
{
    memset(h, 0, sizeof(*h));
    h->lim = lim;
    llhttp_init(&h->p, HTTP_REQUEST, &settings);
    h->p.lenient_flags |= LENIENT_VERSION; /* on_version_complete checks it */
    h->p.data = h;
}

int http_keep_init(struct http_keep *k)
{
    if (k->n > HTTP_KEEP_MAX)
        return -EINVAL;
    unsigned off = 0;
    for (unsigned i = 0; i < k->n; i++) {
        const char *name = k->h[i].name;
        size_t n = name ? strlen(name) : 0;
        if (n == 0 || n > HTTP_KEEP_NAME_MAX || k->h[i].cap == 0 || k->h[i].cap > HTTP_KEEP_CAP_MAX)
            return -EINVAL;
        for (size_t j = 0; j < n; j++)
            if (name[j] >= 'A' && name[j] <= 'Z')
                return -EINVAL; /* matched against the lower-cased name */
        k->off[i] = (uint16_t)off;
        off += k->h[i].cap;
    }
    k->size = (uint16_t)off;
    return 0;
}

void http_lend(struct http *h, char *kept)
{
    struct http_req *q = &h->req;
    q->kept = kept;
    memset(q->kept_len, 0, sizeof(q->kept_len));
}

void http_shift(struct http *h, size_t n)
{
    if (h->url_len)
        h->url_off -= (uint32_t)n;
}

size_t http_compact(struct http *h, char *buf, uint32_t *len, uint32_t *pos, uint32_t *msg_start)
{
    /* *msg_start can lie before *pos without a message having begun: llhttp
     * consumes the empty lines allowed between messages. Clamp rather than
     * trust it when nothing of a head is pending. */
    uint32_t keep = *pos;
    if (h->in_message && !h->head_done && *msg_start < *pos)
        keep = *msg_start;
    if (keep == 0)
        return 0;
    memmove(buf, buf + keep, *len - keep);
    *len -= keep;
    *pos -= keep;
    *msg_start = *msg_start > keep ? *msg_start - keep : 0;
    http_shift(h, keep);
    return keep;
}

/* Checks the line framing of buf[from, len) while a head or trailer section
 * is open (h->lines != LINES_OFF): every line ends in CRLF, no field line
 * starts with whitespace (obs-fold, RFC 9112 5.2: rejected), and the empty
 * line is CRLF too. Stops at the end of the section. Returns false at the
 * first violation. */
static bool lines_check(struct http *h, const char *buf, size_t from, size_t len)
{
    uint8_t st = h->lines;
    for (size_t i = from; i < len && st != LINES_OFF; i++) {
        char ch = buf[i];
        switch (st) {
        case LINES_LEAD:
            if (ch == '\r')
                st = LINES_LEAD_CR;
            else if (ch == '\n')
                return false;
            else
                st = LINES_TEXT;
            break;
        case LINES_LEAD_CR:
            if (ch != '\n')
                return false;
            st = LINES_LEAD;
            break;
        case LINES_TEXT: {
            /* the common case: skip to the next CR or LF */
            const char *cr = memchr(buf + i, '\r', len - i);
            const char *lf = memchr(buf + i, '\n', (size_t)((cr ? cr : buf + len) - (buf + i)));
            if (lf)
                return false; /* an LF before any CR: bare */
            if (!cr) {
                i = len - 1;
                break;
            }
            i = (size_t)(cr - buf);
            st = LINES_CR;
            break;
        }
        case LINES_CR:
            if (ch != '\n')
                return false; /* bare CR */
            st = LINES_BOL;
            break;
        case LINES_BOL:
            if (ch == '\r')
                st = LINES_END_CR;
            else if (ch == '\n' || ch == ' ' || ch == '\t')
                return false; /* bare LF as the empty line; obs-fold */
            else
                st = LINES_TEXT;
            break;
        case LINES_END_CR:
            if (ch != '\n')
                return false;
            st = LINES_OFF; /* the empty line: the section is over */
            break;
        default:
            st = LINES_OFF;
            break;
        }
    }
    h->lines = st;
    return true;
}

enum http_status http_feed(struct http *h, const char *buf, size_t *pos, size_t len)
{
    if (h->upgrade) {
        /* after an Upgrade or CONNECT request the bytes are not HTTP/1.1 to
         * us: drop them (the connection closes after the response) */
        *pos = len;
        return HTTP_MORE;
    }
    h->base = buf;
    for (;;) {
        if (*pos >= len)
            return HTTP_MORE;
        if (!h->in_message && h->lines == LINES_OFF)
            h->lines = LINES_LEAD; /* a new message (or the empty lines before it) */
        if (h->lines != LINES_OFF && !lines_check(h, buf, *pos, len)) {
            refuse(h, 400, BAD_FRAMING);
            *pos = len;
            return HTTP_ERROR;
        }
        const char *start = buf + *pos;
        llhttp_errno_t e = llhttp_execute(&h->p, start, len - *pos);
        switch (e) {
        case HPE_OK:
            *pos = len;
            return HTTP_MORE;
        case HPE_PAUSED:
        case HPE_PAUSED_UPGRADE:
            *pos = (size_t)(llhttp_get_error_pos(&h->p) - buf);
            llhttp_resume(&h->p);
            if (h->paused_trailers) {
                /* after the last chunk's line: check the trailer section's
                 * lines from here, then parse on */
                h->paused_trailers = false;
                h->lines = LINES_BOL;
                continue;
            }
            if (h->paused_head) {
                h->paused_head = false; /* answer now (req.early); nothing after it is parsed */
                return HTTP_MSG;
            }
            /* An upgrade request (or CONNECT) is answered as a plain request and
             * the connection closed: primed speaks HTTP/1.1 only. */
            if (e == HPE_PAUSED_UPGRADE) {
                h->req.keep_alive = false;
                h->upgrade = true;
                llhttp_resume_after_upgrade(&h->p);
            }
            h->lines = LINES_OFF;
            return HTTP_MSG;
        default:
            if (!h->err_status) {
                h->err_status = 400;
                h->bad = BAD_PARSE;
            }
            *pos = len;
            return HTTP_ERROR;
        }
    }
}
