/* http.c - llhttp glue: one static settings table, request views into the
 * connection's read buffer.
 *
 * Invariants: the parser pauses after every complete message (so the worker
 * answers in order and can stop reading while a request is being served); the
 * URL is kept as an offset into the caller's buffer until the head completes,
 * then routed and forgotten; bodies are counted and dropped. Never allocates.
 */
#include "http.h"

#include <stdbool.h>
#include <string.h>

#define X_NAME(id, name) name,
static const char *const bad_names[] = {BAD_REASONS(X_NAME)};
#undef X_NAME

const char *http_bad_reason_name(enum bad_reason r)
{
    return r < BAD__COUNT ? bad_names[r] : "other";
}

enum { HDR_NONE, HDR_TRACEPARENT, HDR_B3, HDR_B3_TRACEID };

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
    memset(&h->req, 0, offsetof(struct http_req, traceparent));
    return 0;
}

static int on_url(llhttp_t *p, const char *at, size_t len)
{
    struct http *h = of(p);
    if (h->url_len == 0)
        h->url_off = (uint32_t)(at - h->base);
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

static int on_header_field(llhttp_t *p, const char *at, size_t len)
{
    struct http *h = of(p);
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
    if (name_is(h, "traceparent"))
        h->hdr = HDR_TRACEPARENT;
    else if (name_is(h, "b3"))
        h->hdr = HDR_B3;
    else if (name_is(h, "x-b3-traceid"))
        h->hdr = HDR_B3_TRACEID;
    else
        h->hdr = HDR_NONE;
    h->hname_len = 0;
    return 0;
}

static void append(char *dst, uint8_t *dlen, const char *src, size_t len)
{
    /* An overlong value is marked by a full buffer plus one: invalid later. */
    if ((size_t)*dlen + len > HTTP_TRACE_MAX) {
        *dlen = HTTP_TRACE_MAX;
        return;
    }
    memcpy(dst + *dlen, src, len);
    *dlen = (uint8_t)(*dlen + len);
}

static int on_header_value(llhttp_t *p, const char *at, size_t len)
{
    struct http *h = of(p);
    switch (h->hdr) {
    case HDR_TRACEPARENT:
        append(h->req.traceparent, &h->req.traceparent_len, at, len);
        break;
    case HDR_B3:
    case HDR_B3_TRACEID:
        append(h->req.b3, &h->req.b3_len, at, len);
        break;
    default:
        break;
    }
    return 0;
}

static int on_header_value_complete(llhttp_t *p)
{
    of(p)->hdr = HDR_NONE;
    return 0;
}

static int on_headers_complete(llhttp_t *p)
{
    struct http *h = of(p);
    if ((p->flags & F_CONTENT_LENGTH) && p->content_length > h->lim->max_body)
        return refuse(h, 413, BAD_BODY_TOO_LARGE);
    h->req.method = p->method;
    h->req.head = p->method == HTTP_HEAD;
    route_match(p->method, h->base + h->url_off, h->url_len, h->lim->default_bits, &h->req.route);
    if (h->req.route.status == 400)
        h->bad = BAD_QUERY;
    h->head_done = true;
    return 0;
}

static int on_body(llhttp_t *p, const char *at, size_t len)
{
    struct http *h = of(p);
    h->body_len += len;
    if (h->body_len > h->lim->max_body)
        return refuse(h, 413, BAD_BODY_TOO_LARGE);
    return 0;
}

static int on_message_complete(llhttp_t *p)
{
    struct http *h = of(p);
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
    .on_header_field = on_header_field,
    .on_header_field_complete = on_header_field_complete,
    .on_header_value = on_header_value,
    .on_header_value_complete = on_header_value_complete,
    .on_headers_complete = on_headers_complete,
    .on_body = on_body,
    .on_message_complete = on_message_complete,
};

void http_init(struct http *h, const struct http_limits *lim)
{
    memset(h, 0, sizeof(*h));
    h->lim = lim;
    llhttp_init(&h->p, HTTP_REQUEST, &settings);
    h->p.data = h;
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

enum http_status http_feed(struct http *h, const char *buf, size_t *pos, size_t len)
{
    if (h->upgrade) {
        /* after an Upgrade or CONNECT request the bytes are not HTTP/1.1 to
         * us: drop them (the connection closes after the response) */
        *pos = len;
        return HTTP_MORE;
    }
    if (*pos >= len)
        return HTTP_MORE;
    h->base = buf;
    const char *start = buf + *pos;
    llhttp_errno_t e = llhttp_execute(&h->p, start, len - *pos);
    switch (e) {
    case HPE_OK:
        *pos = len;
        return HTTP_MORE;
    case HPE_PAUSED:
    case HPE_PAUSED_UPGRADE:
        *pos = (size_t)(llhttp_get_error_pos(&h->p) - buf);
        /* An upgrade request (or CONNECT) is answered as a plain request and
         * the connection closed: primed speaks HTTP/1.1 only. */
        if (e == HPE_PAUSED_UPGRADE) {
            h->req.keep_alive = false;
            h->upgrade = true;
        }
        llhttp_resume(&h->p);
        if (e == HPE_PAUSED_UPGRADE)
            llhttp_resume_after_upgrade(&h->p);
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
