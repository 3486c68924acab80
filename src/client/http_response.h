/* http_response.h - an upstream's HTTP/1.1 response, parsed with llhttp in
 * response mode into fixed buffers: the status, whether the connection can be
 * reused, and the body (up to the caller's buffer), never more.
 */
#ifndef PRIMED_HTTP_RESPONSE_H
#define PRIMED_HTTP_RESPONSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <llhttp.h>

#define HTTP_RESPONSE_HEAD_MAX 8192 /* a longer status line + header section is an error */

enum http_response_status {
    HRESP_MORE = 0,  /* consumed everything; the response needs more bytes */
    HRESP_DONE = 1,  /* the response is complete (status, body, keep_alive) */
    HRESP_ERROR = 2, /* malformed (read strictly), head over HTTP_RESPONSE_HEAD_MAX, or body over the buffer */
};

struct http_response {
    llhttp_t p;
    char *body; /* not owned: the caller's buffer of body_cap bytes */
    size_t body_cap;
    size_t body_len; /* bytes of the body kept (all of it, once DONE) */
    size_t head_len; /* bytes of the head seen so far */
    uint16_t status; /* valid once the head is complete */
#define HTTP_RESPONSE_CL_DIGITS 18 /* a longer Content-Length (even 0000...) is refused */
    bool head_done;
    bool keep_alive; /* valid once DONE: the connection can carry another request */
    bool done;
    const char *why; /* with HRESP_ERROR: a short static reason */
    size_t name_len;      /* bytes of the header name being read */
    uint8_t name_miss;    /* bit k: it is not http_response.c's known[k] */
    bool in_te, te_value; /* reading a Transfer-Encoding value; a byte of it not whitespace */
    bool in_cl;           /* reading a Content-Length value */
    bool in_conn;         /* reading a Connection value: its tokens, for "close" */
    bool conn_close;      /* a Connection field of this response has the token "close" */
    bool tok_ws, tok_other; /* the token being read: whitespace after it; it cannot be "close" */
    uint8_t tok_len;        /* its bytes so far (up to 5, in tok) */
    char tok[5];
    uint8_t cl_digits;    /* its digits so far (more than HTTP_RESPONSE_CL_DIGITS: refused) */
    /* the lines read before llhttp (http_response.c, framing_ok) */
    uint8_t phase;       /* HPH_* */
    uint8_t crlfs;       /* CRLFs in a row */
    bool prev_cr;        /* the last byte was a CR */
    bool head_started;   /* a byte of this head was read */
    uint8_t status_col;  /* bytes of its status line read, up to 13 */
    bool size_done;      /* a chunk size's digits are over */
    uint64_t chunk_left; /* a chunk's data bytes still to come */
};

/* Where framing_ok is: a head, llhttp's verdict on the body, a body it does
 * not read, a chunk's size line, data, the CRLF after it, trailers, done. */
enum { HPH_HEAD, HPH_WAIT, HPH_BODY, HPH_SIZE, HPH_DATA, HPH_DATA_CR, HPH_DATA_LF, HPH_TRAILER, HPH_END };

/* Prepares r for one response into body[0, body_cap). */
void http_response_init(struct http_response *r, char *body, size_t body_cap);

/* Parses buf[0, len). *used gets the bytes consumed: with HRESP_DONE, bytes
 * after the response (a misbehaving upstream's extra) are not consumed.
 * Returns as the enum says. */
enum http_response_status http_response_feed(struct http_response *r, const char *buf, size_t len, size_t *used);

/* The upstream closed: completes a response delimited by the close (no
 * Content-Length, not chunked). Returns HRESP_DONE or HRESP_ERROR (closed
 * mid-response). */
enum http_response_status http_response_eof(struct http_response *r);

#endif
