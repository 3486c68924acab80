/* http.h - llhttp glue: one request at a time out of a connection's read buffer.
 *
 * The parser never copies the request: it records offsets into the caller's
 * buffer, hands the head to its owner's hook (lim->on_head) when it is
 * complete, and pauses at every message boundary so responses leave in
 * request order. It knows no route.
 */
#ifndef PRIMED_HTTP_H
#define PRIMED_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <llhttp.h>


/* Why a request was refused; the label of primed_bad_requests_total. */
#define BAD_REASONS(X)                          \
    X(BAD_NONE, "none")                         \
    X(BAD_PARSE, "parse")                       \
    X(BAD_HEADER_TOO_LARGE, "header_too_large") \
    X(BAD_URL_TOO_LONG, "url_too_long")         \
    X(BAD_BODY_TOO_LARGE, "body_too_large")     \
    X(BAD_TIMEOUT, "timeout")                   \
    X(BAD_QUERY, "query")                       \
    X(BAD_FRAMING, "framing")                   \
    X(BAD_HOST, "host")                         \
    X(BAD_EXPECT, "expect")                     \
    X(BAD_TARGET, "target")                     \
    X(BAD_VERSION, "version")                   \
    X(BAD_METHOD, "method")                     \
    X(BAD_CHUNK, "chunk")

#define X_ENUM(id, name) id,
enum bad_reason { BAD_REASONS(X_ENUM) BAD__COUNT };
#undef X_ENUM

/* Name of a bad_reason (metric label); never NULL. */
const char *http_bad_reason_name(enum bad_reason r);

struct http_req;
/* A request's head is complete: url (len bytes, the request target) is
 * valid during the call only. ctx is the parser's head_ctx. Returns true
 * when the owner reads the request's body (then each piece of it goes to
 * on_body), false when the body is counted and dropped. */
typedef bool http_head_fn(void *ctx, const struct http_req *rq, const char *url, size_t len);
/* A piece of the body of a request whose head's hook returned true (at: in
 * the caller's buffer, valid during the call only), after --max-body was
 * checked. Returns 0, or -1 to refuse the request with 500 (the owner could
 * not keep it). */
typedef int http_body_fn(void *ctx, const char *at, size_t len);

/* Bounds besides the limits the owner gives: the bytes of one chunk's
 * extensions (RFC 9112 7.1.1: primed reads none of them), and of a trailer
 * section (the owner's max_header, as for the head). */
#define HTTP_CHUNK_EXT_MAX 256

/* Headers whose values the owner keeps per request (its app's list: say,
 * a trace context). The parser knows no name of its own beyond Host and
 * Expect: it keeps the values of these, up to each one's capacity, and no
 * other. A longer value is marked overlong and never truncated into
 * something valid. Names are lower-case, 1..HTTP_KEEP_NAME_MAX characters;
 * a capacity is 1..HTTP_KEEP_CAP_MAX. */
#define HTTP_KEEP_MAX      8
#define HTTP_KEEP_NAME_MAX 16
#define HTTP_KEEP_CAP_MAX  254
struct http_keep {
    unsigned n;
    struct {
        const char *name;
        uint8_t cap;
    } h[HTTP_KEEP_MAX];
    uint16_t off[HTTP_KEEP_MAX]; /* http_keep_init: where each value starts in the lent storage */
    uint16_t size;               /* http_keep_init: the storage one request needs */
};

/* Checks k and lays out its storage. 0, or -EINVAL (a name too long, empty
 * or not lower-case, a capacity out of range, more than HTTP_KEEP_MAX). */
int http_keep_init(struct http_keep *k);

struct http_limits {
    unsigned max_url;
    unsigned long max_body;
    unsigned max_header;         /* a trailer section's bound (431 past it); 0: none */
    http_head_fn *on_head;       /* the owner's router, or NULL */
    http_body_fn *on_body;       /* the bodies on_head asked for; NULL: none is read */
    const struct http_keep *keep; /* the headers kept, or NULL: none (http_keep_init'ed) */
};

/* What the worker needs of one request, filled when its head is complete.
 * Everything before kept (the flags and the lengths of the values) is
 * cleared at each message start. */
struct http_req {
    uint8_t method;  /* llhttp_method_t, valid when has_method */
    bool has_method; /* the request line got as far as its method */
    bool keep_alive; /* valid once the message is complete */
    bool head;       /* HEAD: answer without a body */
    bool early;      /* answered at the end of its head (Expect: 100-continue
                              with a body primed will not read): then close */
    bool asterisk;   /* its target is "*" (OPTIONS, RFC 9112 3.2.4) */
    uint8_t kept_len[HTTP_KEEP_MAX]; /* the kept values' lengths: 0 absent, cap + 1 overlong */
    char *kept; /* lent (http_lend), keep->size bytes; NULL: the values are not kept */
};

/* Value i of the keep list k in request q, not NUL-terminated, with its
 * length; NULL when it is absent, overlong or not kept. */
static inline const char *http_kept(const struct http_req *q, const struct http_keep *k, unsigned i, size_t *len)
{
    if (!q->kept || i >= k->n || q->kept_len[i] == 0 || q->kept_len[i] > k->h[i].cap)
        return NULL;
    *len = q->kept_len[i];
    return q->kept + k->off[i];
}

/* Line framing of a head or a trailer section, checked byte by byte beside
 * llhttp (which accepts a bare LF as the empty line and obs-fold). */
enum http_lines {
    LINES_OFF = 0, /* not in a head or trailer section */
    LINES_LEAD,    /* before a request line: empty lines (CRLF) allowed */
    LINES_LEAD_CR,
    LINES_TEXT,   /* inside a line */
    LINES_CR,     /* a CR ended a line: LF must follow */
    LINES_BOL,    /* at the start of a field line, or of the empty line */
    LINES_END_CR, /* a CR at the start of a line: the empty line's LF must follow */
};

enum http_status {
    HTTP_MORE = 0,  /* consumed everything; the current message needs more bytes */
    HTTP_MSG = 1,   /* one complete request in h->req (or, with req.early, its
                        head: answer it, then close without reading on) */
    HTTP_ERROR = 2, /* refuse: answer h->err_status, then close */
};

struct http {
    llhttp_t p;
    const struct http_limits *lim; /* not owned; the worker's config */
    void *head_ctx;                /* lim->on_head's ctx: the owner's (a connection) */
    const char *base;              /* buffer of the current feed; valid during http_feed() only */
    uint32_t url_off;              /* offset of the URL in the connection's read buffer */
    uint32_t url_len;
    uint8_t hdr; /* which header the current value belongs to */
    uint8_t hname_len;
    char hname[HTTP_KEEP_NAME_MAX + 1]; /* lower-cased prefix of the current header name: one longer than
                                         any name matched, so a longer name never matches */
    uint8_t lines;  /* enum http_lines */
    uint8_t hosts;  /* Host fields in this head */
    uint8_t expect; /* Expect: none, 100-continue, anything else */
    uint8_t expect_len;
    char expect_val[16];  /* lower-cased Expect value */
    uint8_t host_st;      /* the Host value's syntax, checked byte by byte */
    bool te_seen;         /* a Transfer-Encoding field came (any value) */
    bool want_body;       /* on_head took the body: its pieces go to on_body */
    bool send_continue;   /* 100 Continue is due before the body (the owner sends it) */
    bool paused_head;     /* the parser paused at the end of the head (Expect) */
    bool paused_trailers; /* ... at the last chunk: trailers follow */
    bool in_message;      /* some bytes of a request have been parsed */
    bool head_done;       /* its head is complete (on_head ran) */
    bool upgrade;
    unsigned long body_len;
    uint32_t extra_len;  /* this chunk's extension bytes, or the trailer section's */
    uint16_t err_status; /* with HTTP_ERROR: 400, 413, 414, ... */
    enum bad_reason bad;
    struct http_req req;
};

/* Prepares a parser for a new connection (no storage lent yet). */
void http_init(struct http *h, const struct http_limits *lim);

/* Lends the parser storage for the kept values (lim->keep->size bytes), or
 * takes it back (NULL), between messages only: the lengths kept are cleared
 * with it, so a value is never read from storage it was not written to. */
void http_lend(struct http *h, char *kept);

/* Parses buf[*pos, len) until one request completes (HTTP_MSG), the bytes run
 * out (HTTP_MORE) or the input is refused (HTTP_ERROR). *pos advances past what
 * was consumed. Offsets it keeps are relative to buf: the caller must keep the
 * unparsed bytes of the current message in place, or call http_shift(). */
enum http_status http_feed(struct http *h, const char *buf, size_t *pos, size_t len);

/* The caller moved its buffer's contents down by n bytes. */
void http_shift(struct http *h, size_t n);

/* Makes room at the end of a read buffer: moves down what the parser still
 * needs (the unparsed rest, and the current message's head while the head is
 * incomplete, since the URL is an offset into it) and adjusts *len, *pos,
 * *msg_start and the parser's offsets. *msg_start is where the current (or
 * next) message starts, at or before *pos. Returns the bytes dropped. */
size_t http_compact(struct http *h, char *buf, uint32_t *len, uint32_t *pos, uint32_t *msg_start);

#endif
