/* http.h - llhttp glue: one request at a time out of a connection's read buffer.
 *
 * The parser never copies the request: it records offsets into the caller's
 * buffer, routes the request when its head is complete, and pauses at every
 * message boundary so responses leave in request order.
 */
#ifndef PRIMED_HTTP_H
#define PRIMED_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <llhttp.h>

#include "route.h"

/* Why a request was refused; the label of primed_bad_requests_total. */
#define BAD_REASONS(X)                 \
    X(BAD_NONE, "none")                \
    X(BAD_PARSE, "parse")              \
    X(BAD_HEADER_TOO_LARGE, "header_too_large") \
    X(BAD_URL_TOO_LONG, "url_too_long") \
    X(BAD_BODY_TOO_LARGE, "body_too_large") \
    X(BAD_TIMEOUT, "timeout")          \
    X(BAD_QUERY, "query")

#define X_ENUM(id, name) id,
enum bad_reason { BAD_REASONS(X_ENUM) BAD__COUNT };
#undef X_ENUM

/* Name of a bad_reason (metric label); never NULL. */
const char *http_bad_reason_name(enum bad_reason r);

struct http_limits {
    unsigned max_url;
    unsigned long max_body;
    unsigned default_bits;
};

#define HTTP_TRACE_MAX 64

/* What the worker needs of one request, filled when its head is complete. */
struct http_req {
    struct route_result route;
    uint8_t method;        /* llhttp_method_t */
    bool keep_alive;       /* valid once the message is complete */
    bool head;             /* HEAD: answer without a body */
    uint8_t traceparent_len;
    uint8_t b3_len;
    char traceparent[HTTP_TRACE_MAX]; /* W3C traceparent value, not NUL-terminated */
    char b3[HTTP_TRACE_MAX];          /* b3 single header or X-B3-TraceId */
};

enum http_status {
    HTTP_MORE = 0,   /* consumed everything; the current message needs more bytes */
    HTTP_MSG = 1,    /* one complete request in h->req */
    HTTP_ERROR = 2,  /* refuse: answer h->err_status, then close */
};

struct http {
    llhttp_t p;
    const struct http_limits *lim; /* not owned; the worker's config */
    const char *base;              /* buffer of the current feed; valid during http_feed() only */
    uint32_t url_off;              /* offset of the URL in the connection's read buffer */
    uint32_t url_len;
    uint8_t hdr;                   /* which header the current value belongs to */
    uint8_t hname_len;
    char hname[16];                /* lower-cased prefix of the current header name */
    bool in_message;               /* some bytes of a request have been parsed */
    bool head_done;                /* its head is complete (the request is routed) */
    bool upgrade;
    unsigned long body_len;
    uint16_t err_status;           /* with HTTP_ERROR: 400, 413, 414, ... */
    enum bad_reason bad;
    struct http_req req;
};

/* Prepares a parser for a new connection. */
void http_init(struct http *h, const struct http_limits *lim);

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
