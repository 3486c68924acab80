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

static int on_headers_complete(llhttp_t *p)
{
    struct http_response *r = of(p);
    r->status = (uint16_t)p->status_code;
    r->head_done = true;
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
    .on_header_field = on_header_any,
    .on_header_value = on_header_any,
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
    llhttp_errno_t e = llhttp_execute(&r->p, buf, len);
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
