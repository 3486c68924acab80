/* http_response.c - upstream responses (http_response.h).
 *
 * Invariants: nothing is allocated; the body is copied into the caller's
 * buffer and an overlong one is an error, not a truncation (a caller would
 * otherwise forward half a body as if it were whole); the parser pauses at
 * the end of the response, so bytes after it are never taken for the next
 * response's. The same strict llhttp build as the server's (meson.build),
 * and what a strict HTTP/1.1 reading refuses where llhttp 8 is lax (bare LF,
 * obs-fold, a body on a 204: framing_ok and on_headers_complete) is an
 * error too, at every split: tests/fuzz/fuzz_response.c holds it to a strict
 * reader of its own.
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

/* The header names read here as well as by llhttp; name_miss has bit k set
 * once the name being read cannot be known[k]. */
enum { NAME_TE, NAME_CL, NAME_CONN, NAME__COUNT };
static const char *const known[NAME__COUNT] = {"transfer-encoding", "content-length", "connection"};

static bool name_is(const struct http_response *r, int k)
{
    return !(r->name_miss & (1u << k)) && r->name_len == strlen(known[k]);
}

/* The Connection token being read ends (a comma, or the end of the value). */
static void conn_token_end(struct http_response *r)
{
    if (!r->tok_other && r->tok_len == 5 && memcmp(r->tok, "close", 5) == 0)
        r->conn_close = true;
    r->tok_len = 0;
    r->tok_ws = r->tok_other = false;
}

/* llhttp 8 misses "close" in some lists a strict reading takes it from (a
 * tab after it: "close \t , x"), and would keep a connection the upstream
 * is about to close: the tokens are read here too, as RFC 9110 7.6.1 lists
 * them (commas, optional whitespace around each). */
static void conn_value(struct http_response *r, const char *at, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        char c = at[i];
        if (c == ',') {
            conn_token_end(r);
        } else if (c == ' ' || c == '\t') {
            r->tok_ws = r->tok_len > 0 || r->tok_other;
        } else if (r->tok_ws || r->tok_len == 5) {
            r->tok_other = true; /* whitespace inside it, or longer than "close" */
        } else {
            r->tok[r->tok_len++] = (char)(c | 0x20);
        }
    }
}

static int on_header_field(llhttp_t *p, const char *at, size_t len)
{
    struct http_response *r = of(p);
    for (size_t i = 0; i < len; i++, r->name_len++)
        for (int k = 0; k < NAME__COUNT; k++)
            if (r->name_len >= strlen(known[k]) || (at[i] | 0x20) != known[k][r->name_len])
                r->name_miss |= (uint8_t)(1u << k);
    return on_header_any(p, at, len);
}

static int on_header_field_complete(llhttp_t *p)
{
    struct http_response *r = of(p);
    if (r->name_len == 0) { /* llhttp takes ": v", a line with no name */
        r->why = "a header line without a name";
        return -1;
    }
    r->in_te = name_is(r, NAME_TE);
    r->in_cl = name_is(r, NAME_CL);
    r->in_conn = name_is(r, NAME_CONN);
    r->te_value = false;
    r->cl_digits = 0;
    r->name_len = 0;
    r->name_miss = 0;
    return 0;
}

static int on_header_value(llhttp_t *p, const char *at, size_t len)
{
    struct http_response *r = of(p);
    for (size_t i = 0; r->in_te && i < len; i++)
        if (at[i] != ' ' && at[i] != '\t')
            r->te_value = true;
    /* llhttp reads any number of leading zeros; a strict reader (and one
     * that stores the digits first) stops at a bound, and two readers that
     * frame one answer differently are a smuggling vector */
    for (size_t i = 0; r->in_cl && i < len; i++) {
        if (at[i] >= '0' && at[i] <= '9' && ++r->cl_digits > HTTP_RESPONSE_CL_DIGITS) {
            r->why = "a Content-Length of more than 18 digits";
            return -1;
        }
    }
    if (r->in_conn)
        conn_value(r, at, len);
    return on_header_any(p, at, len);
}

/* llhttp leaves an empty Transfer-Encoding out of its flags, and then reads
 * a Content-Length beside it: a reader that takes the field as present
 * would frame the body differently */
static int on_header_value_complete(llhttp_t *p)
{
    struct http_response *r = of(p);
    if (r->in_te && !r->te_value) {
        r->why = "an empty Transfer-Encoding";
        return -1;
    }
    r->in_te = false;
    r->in_cl = false;
    if (r->in_conn)
        conn_token_end(r);
    r->in_conn = false;
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
    if (r->status < 100 || r->status > 599) { /* llhttp takes "50" (RFC 9110 15: 100..599) */
        r->why = "a status code outside 100..599";
        return -1;
    }
    if (r->status == 101) {
        r->why = "the upstream switched protocols";
        return -1;
    }
    /* RFC 9112 6.3: a 1xx, 204 or 304 ends at its empty line, whatever its
     * head says; llhttp, which cannot know the request, would read a body.
     * A 304's Content-Length is the representation's; on a 1xx or a 204 a
     * length or a coding is a MUST NOT broken, and the bytes after it either
     * body or the next answer: refused */
    bool bodiless = r->status < 200 || r->status == 204;
    if (bodiless && (((p->flags & F_CONTENT_LENGTH) && p->content_length > 0) || (p->flags & F_TRANSFER_ENCODING))) {
        r->why = "a body framed on a 1xx or 204";
        return -1;
    }
    if (bodiless || r->status == 304) {
        r->phase = bodiless ? HPH_WAIT : HPH_BODY; /* a 1xx: another head follows */
        return 1;                                  /* llhttp: no body */
    }
    if (p->flags & F_CHUNKED) {
        r->phase = HPH_SIZE;
        r->prev_cr = false;
        return HPE_PAUSED; /* feed reads the chunks' lines from here */
    }
    r->phase = HPH_BODY;
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
        /* an interim response (100 Continue): the real one follows; paused so
         * that feed sees where its status line starts */
        r->head_done = false;
        r->head_len = 0;
        r->conn_close = false; /* the final response's fields decide */
        return HPE_PAUSED;
    }
    r->keep_alive = llhttp_should_keep_alive(p) && !r->conn_close;
    r->done = true;
    return HPE_PAUSED;
}

static const llhttp_settings_t settings = {
    .on_status = on_header_any,
    .on_header_field = on_header_field,
    .on_header_value = on_header_value,
    .on_header_field_complete = on_header_field_complete,
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

/* llhttp 8, even strict, ends a line at a bare LF in the status line, at
 * the head's end and in a chunked body's framing, takes control bytes in
 * the reason phrase, and unfolds an obs-fold (a line that starts with SP or
 * HTAB continues the one above; RFC 9112 5.2 lets a user agent unfold it, a
 * strict reading refuses it): those lines are read here first. Every LF
 * follows a CR, no control byte but HTAB is in a line (RFC 9112's grammar
 * has none), no line of a head or of trailers starts with whitespace, and
 * the status code has three digits. The head is read to its empty line; llhttp then says, pausing at
 * on_headers_complete, whether chunks follow, and their size lines, the
 * CRLF after each chunk's data and the trailers are read the same way.
 * Returns false at a byte a strict reading refuses. */
static bool line_byte(struct http_response *r, unsigned char c)
{
    if ((c < 0x20 && c != '\t' && c != '\r' && c != '\n') || c == 0x7f)
        return false;
    if (c == '\n' && !r->prev_cr)
        return false;
    r->prev_cr = c == '\r';
    return true;
}

static bool framing_ok(struct http_response *r, const char *buf, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)buf[i];
        switch (r->phase) {
        case HPH_HEAD:
        case HPH_TRAILER:
            if (!line_byte(r, c))
                return false;
            if (r->phase == HPH_HEAD && !r->head_started && (c == '\r' || c == '\n'))
                return false; /* llhttp skips empty lines before a status line */
            if (r->crlfs == 1 && (c == ' ' || c == '\t'))
                return false; /* an obs-fold */
            if (r->phase == HPH_HEAD && r->status_col < 13) {
                /* "HTTP/1.x SP 3DIGIT (SP | CR)": llhttp takes "0502" for 502 */
                unsigned col = r->status_col++;
                if ((col == 8 && c != ' ') || (col >= 9 && col <= 11 && (c < '0' || c > '9')) ||
                    (col == 12 && c != ' ' && c != '\r'))
                    return false;
            }
            r->head_started = true;
            if (c == '\n' && ++r->crlfs == 2)
                r->phase = r->phase == HPH_HEAD ? HPH_WAIT : HPH_END;
            else if (c != '\r' && c != '\n')
                r->crlfs = 0;
            break;
        case HPH_SIZE:
            if (!line_byte(r, c))
                return false;
            if (c == '\n') {
                r->phase = r->chunk_left ? HPH_DATA : HPH_TRAILER;
                r->crlfs = 1;
                r->size_done = false;
            } else if (!r->size_done && ((c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f'))) {
                if (r->chunk_left >> 56)
                    return false; /* llhttp refuses it too */
                r->chunk_left = r->chunk_left * 16 + (c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
            } else {
                r->size_done = true;
            }
            break;
        case HPH_DATA: {
            size_t n = len - i < r->chunk_left ? len - i : (size_t)r->chunk_left;
            r->chunk_left -= n;
            i += n - 1;
            if (!r->chunk_left)
                r->phase = HPH_DATA_CR;
            break;
        }
        case HPH_DATA_CR:
            if (c != '\r')
                return false;
            r->phase = HPH_DATA_LF;
            break;
        case HPH_DATA_LF:
            if (c != '\n')
                return false;
            r->phase = HPH_SIZE;
            r->prev_cr = false;
            break;
        default: /* HPH_WAIT, HPH_BODY, HPH_END: nothing read here */
            return true;
        }
    }
    return true;
}

enum http_response_status http_response_feed(struct http_response *r, const char *buf, size_t len, size_t *used)
{
    *used = 0;
    if (r->done)
        return HRESP_DONE;
    size_t off = 0;
    for (;;) {
        if (off == len) {
            *used = len;
            return HRESP_MORE;
        }
        if (!framing_ok(r, buf + off, len - off)) {
            r->why = "a bare LF, a control byte or an obs-fold in the response's lines";
            return HRESP_ERROR;
        }
        llhttp_errno_t e = llhttp_execute(&r->p, buf + off, len - off);
        switch (e) {
        case HPE_OK:
            *used = len;
            return HRESP_MORE;
        case HPE_PAUSED:
            off = (size_t)(llhttp_get_error_pos(&r->p) - buf);
            if (!r->done) {
                /* the next head starts here (after a 1xx), or chunks do */
                if (r->phase == HPH_WAIT) {
                    r->phase = HPH_HEAD;
                    r->head_started = false;
                    r->status_col = 0;
                    r->prev_cr = false;
                    r->crlfs = 0;
                }
                llhttp_resume(&r->p);
                continue;
            }
            *used = off;
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
