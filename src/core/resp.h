/* resp.h - response heads and bodies written into a connection's buffer.
 *
 * Pure formatting: no syscalls, no allocation. Status codes come from one
 * X-macro so the reason phrase and the metric label never disagree.
 */
#ifndef PRIMED_RESP_H
#define PRIMED_RESP_H

#include <stdbool.h>
#include <stddef.h>

#define HTTP_STATUSES(X)                      \
    X(200, "OK")                              \
    X(400, "Bad Request")                     \
    X(401, "Unauthorized")                    \
    X(403, "Forbidden")                       \
    X(404, "Not Found")                       \
    X(405, "Method Not Allowed")              \
    X(408, "Request Timeout")                 \
    X(413, "Content Too Large")               \
    X(414, "URI Too Long")                    \
    X(417, "Expectation Failed")              \
    X(429, "Too Many Requests")               \
    X(431, "Request Header Fields Too Large") \
    X(500, "Internal Server Error")           \
    X(501, "Not Implemented")                 \
    X(502, "Bad Gateway")                     \
    X(503, "Service Unavailable")             \
    X(504, "Gateway Timeout")                 \
    X(505, "HTTP Version Not Supported")

#define RESP_DATE_LEN 29 /* "Sun, 06 Nov 1994 08:49:37 GMT" */

/* Bounds of each part of a head, so that RESP_HEAD_MAX is one: a caller that
 * keeps each part within its bound never gets 0 from resp_format() with
 * RESP_HEAD_MAX + body bytes free (tests/core/test_resp.c fills every part to its
 * bound and checks). */
#define RESP_REASON_MAX 31  /* "Request Header Fields Too Large" */
#define RESP_CTYPE_MAX  48  /* Content-Type values (the longest, /metrics', is 41) */
#define RESP_ALLOW_MAX  40  /* Allow values ("GET, HEAD, POST, PUT, OPTIONS") */
#define RESP_EXTRA_MAX  256 /* extra header lines: traceparent (70) + K-Revision (at most 141) */
#define RESP_HEAD_MAX                                                                                                  \
    (sizeof("HTTP/1.1 000 \r\nServer: primed\r\nDate: \r\n") - 1 + RESP_REASON_MAX + RESP_DATE_LEN +                   \
     sizeof("Content-Type: \r\n") - 1 + RESP_CTYPE_MAX + sizeof("Allow: \r\n") - 1 + RESP_ALLOW_MAX + RESP_EXTRA_MAX + \
     sizeof("Content-Length: 18446744073709551615\r\nConnection: keep-alive\r\n\r\n") - 1)

/* Reason phrase of a status code ("Unknown" for codes not in the table). */
const char *resp_reason(int status);

struct resp {
    int status;
    const char *ctype; /* Content-Type, or NULL for none */
    const char *body;  /* not owned */
    size_t body_len;
    const char *allow; /* Allow header value (405), or NULL */
    const char *extra; /* extra header lines, each ending "\r\n", or NULL */
    bool keep_alive;
    bool head; /* HEAD: send the head only, Content-Length still the body's */
};

/* Formats r into buf (cap bytes) with the Date header from date (RESP_DATE_LEN
 * chars). The body is copied in when with_body is set; otherwise only the head
 * is written (the caller sends the body from elsewhere). Returns the bytes
 * written, or 0 when they do not fit (nothing usable is left in buf). */
size_t resp_format(char *buf, size_t cap, const struct resp *r, const char *date, bool with_body);

/* Writes the IMF-fixdate for time t into out (RESP_DATE_LEN + 1 bytes). */
void resp_date(char *out, long t);

#endif
