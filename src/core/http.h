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
    X(BAD_EXPECT, "expect")

#define X_ENUM(id, name) id,
enum bad_reason { BAD_REASONS(X_ENUM) BAD__COUNT };
#undef X_ENUM

/* Name of a bad_reason (metric label); never NULL. */
const char *http_bad_reason_name(enum bad_reason r);

struct http_req;
/* A request's head is complete: url (len bytes, the request target) is
 * valid during the call only. ctx is the parser's head_ctx. */
typedef void http_head_fn(void *ctx, const struct http_req *rq, const char *url, size_t len);

struct http_limits {
    unsigned max_url;
    unsigned long max_body;
    http_head_fn *on_head; /* the owner's router, or NULL */
};

/* Capacities of the trace header values kept per request. A longer value
 * is marked as overlong (len = cap + 1) and ignored, never truncated. */
#define HTTP_TRACEPARENT_MAX 64 /* version 00 is 55 characters */
#define HTTP_B3_MAX          72 /* traceid32-spanid16-s-parentspanid16: 68 */
#define HTTP_B3_ID_MAX       32 /* X-B3-TraceId (16 or 32 hex), X-B3-SpanId (16) */
#define HTTP_B3_FLAG_MAX     8  /* X-B3-Sampled ("1", "0", "true", "false"), X-B3-Flags ("1") */

/* The values of the trace headers of the current request, not
 * NUL-terminated (their lengths are in struct http_req). Storage the owner
 * lends the parser with its read buffer (http_lend), so that a connection
 * between requests holds none of it. */
struct http_trace_values {
    char traceparent[HTTP_TRACEPARENT_MAX];
    char b3[HTTP_B3_MAX];               /* the single b3 header */
    char xb3_trace[HTTP_B3_ID_MAX];     /* X-B3-TraceId */
    char xb3_span[HTTP_B3_ID_MAX];      /* X-B3-SpanId */
    char xb3_sampled[HTTP_B3_FLAG_MAX]; /* X-B3-Sampled */
    char xb3_flags[HTTP_B3_FLAG_MAX];   /* X-B3-Flags */
};

/* What the worker needs of one request, filled when its head is complete.
 * Everything before tv (the flags and the lengths of the values) is cleared
 * at each message start. */
struct http_req {
    uint8_t method;  /* llhttp_method_t, valid when has_method */
    bool has_method; /* the request line got as far as its method */
    bool keep_alive; /* valid once the message is complete */
    bool head;       /* HEAD: answer without a body */
    bool early;      /* answered at the end of its head (Expect: 100-continue
                              with a body primed will not read): then close */
    uint8_t traceparent_len;
    uint8_t b3_len;
    uint8_t xb3_trace_len, xb3_span_len, xb3_sampled_len, xb3_flags_len;
    struct http_trace_values *tv; /* lent (http_lend); NULL: the values are not kept */
};

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
    char hname[16]; /* lower-cased prefix of the current header name */
    uint8_t lines;  /* enum http_lines */
    uint8_t hosts;  /* Host fields in this head */
    uint8_t expect; /* Expect: none, 100-continue, anything else */
    uint8_t expect_len;
    char expect_val[16];  /* lower-cased Expect value */
    bool paused_head;     /* the parser paused at the end of the head (Expect) */
    bool paused_trailers; /* ... at the last chunk: trailers follow */
    bool in_message;      /* some bytes of a request have been parsed */
    bool head_done;       /* its head is complete (on_head ran) */
    bool upgrade;
    unsigned long body_len;
    uint16_t err_status; /* with HTTP_ERROR: 400, 413, 414, ... */
    enum bad_reason bad;
    struct http_req req;
};

/* Prepares a parser for a new connection (no storage lent yet). */
void http_init(struct http *h, const struct http_limits *lim);

/* Lends the parser storage for the trace values (tv), or takes it back
 * (NULL), between messages only: the lengths kept are cleared with it, so a
 * value is never read from storage it was not written to. */
void http_lend(struct http *h, struct http_trace_values *tv);

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
