/* http_response.c - upstream responses (http_response.h).
 *
 * Invariants: nothing is allocated; the body is copied into the caller's
 * buffer and an overlong one is an error, not a truncation (a caller would
 * otherwise forward half a body as if it were whole); the parser pauses at
 * the end of the response, so bytes after it are never taken for the next
 * response's. The same strict llhttp build as the server's (meson.build).
 */
#include "http_response.h"

#include <string.h>

static struct http_response *of(llhttp_t *p)
{
    return (struct http_response *)p->data;
}

static int on_header_any(llhttp_t *p, const char *at, size_t len)
{
    (void)at;
    struct http_response *r = of(p);
    r->head_len += len;
    if (r->head_len > HTTP_RESPONSE_HEAD_MAX) {
        r->why = "response head too large";
        return -1;
    }
    return 0;
}

/* llhttp hands a header line over in pieces: its name, then its value, each
 * split by the feeds, and, with an obs-fold (a line that starts with SP or
 * HTAB continues the value above it), the value around the CRLF llhttp
 * skips. RFC 9112 5.2 lets a user agent unfold it; a strict reading refuses
 * it as it refuses a bare CR. Between two pieces of one line lie only ':'
 * and whitespace, so a CR or LF there is a fold. */
static bool gap_has_crlf(const struct http_response *r, const char *end)
{
    const char *from = r->mark ? r->mark : r->buf_start;
    return memchr(from, '\r', (size_t)(end - from)) || memchr(from, '\n', (size_t)(end - from));
}

static int on_header_field(llhttp_t *p, const char *at, size_t len)
{
    struct http_response *r = of(p);
    r->in_line = true;
    r->gap_crlf = false;
    r->mark = at + len;
    return on_header_any(p, at, len);
}

static int on_header_value(llhttp_t *p, const char *at, size_t len)
{
    struct http_response *r = of(p);
    if (len == 0) /* llhttp's empty piece at a feed's end */
        return 0;
    if (r->in_line && (r->gap_crlf || gap_has_crlf(r, at))) {
        r->why = "obs-fold in the response head";
        return -1;
    }
    r->gap_crlf = false;
    r->mark = at + len;
    return on_header_any(p, at, len);
}

static int on_header_value_complete(llhttp_t *p)
{
    of(p)->in_line = false;
    return 0;
}

static int on_headers_complete(llhttp_t *p)
{
    struct http_response *r = of(p);
    r->status = (uint16_t)p->status_code;
    r->head_done = true;
    if (p->http_major != 1 || p->http_minor > 1) {
        r->why = "not an HTTP/1.0 or HTTP/1.1 response";
        return -1;
    }
    if (r->status == 101) {
        r->why = "the upstream switched protocols";
        return -1;
    }
    if ((p->flags & F_CONTENT_LENGTH) && p->content_length > r->body_cap) {
        r->why = "response body too large";
        return -1;
    }
    return 0;
}

static int on_body(llhttp_t *p, const char *at, size_t len)
{
    struct http_response *r = of(p);
    if (len > r->body_cap - r->body_len) {
        r->why = "response body too large";
        return -1;
    }
    memcpy(r->body + r->body_len, at, len);
    r->body_len += len;
    return 0;
}

static int on_message_complete(llhttp_t *p)
{
    struct http_response *r = of(p);
    if (r->status >= 100 && r->status < 200) {
        /* an interim response (100 Continue): the real one follows */
        r->head_done = false;
        r->head_len = 0;
        return 0;
    }
    r->keep_alive = llhttp_should_keep_alive(p);
    r->done = true;
    return HPE_PAUSED;
}

static const llhttp_settings_t settings = {
    .on_status = on_header_any,
    .on_header_field = on_header_field,
    .on_header_value = on_header_value,
    .on_header_value_complete = on_header_value_complete,
    .on_headers_complete = on_headers_complete,
    .on_body = on_body,
    .on_message_complete = on_message_complete,
};

void http_response_init(struct http_response *r, char *body, size_t body_cap)
{
    memset(r, 0, sizeof(*r));
    r->body = body;
    r->body_cap = body_cap;
    llhttp_init(&r->p, HTTP_RESPONSE, &settings);
    r->p.data = r;
}

enum http_response_status http_response_feed(struct http_response *r, const char *buf, size_t len, size_t *used)
{
    *used = 0;
    if (r->done)
        return HRESP_DONE;
    if (len == 0)
        return HRESP_MORE;
    r->buf_start = buf;
    r->mark = NULL;
    llhttp_errno_t e = llhttp_execute(&r->p, buf, len);
    if (e == HPE_OK && r->in_line && gap_has_crlf(r, buf + len))
        r->gap_crlf = true;
    r->mark = NULL;
    switch (e) {
    case HPE_OK:
        *used = len;
        return HRESP_MORE;
    case HPE_PAUSED:
        *used = (size_t)(llhttp_get_error_pos(&r->p) - buf);
        return HRESP_DONE;
    case HPE_PAUSED_UPGRADE:
        r->why = "the upstream switched protocols";
        return HRESP_ERROR;
    default:
        if (!r->why)
            r->why = "malformed response";
        return HRESP_ERROR;
    }
}

enum http_response_status http_response_eof(struct http_response *r)
{
    if (r->done)
        return HRESP_DONE;
    if (!r->head_done) {
        r->why = "the upstream closed before answering";
        return HRESP_ERROR;
    }
    /* llhttp_finish completes a body delimited by the close (its return is
     * our pause then) and refuses an EOF inside a chunked or Content-Length
     * body: only r->done says which */
    llhttp_finish(&r->p);
    if (!r->done) {
        r->why = "the upstream closed mid-body";
        return HRESP_ERROR;
    }
    r->keep_alive = false;
    return HRESP_DONE;
}
