/* resp.c - response head + body formatting.
 *
 * One snprintf per head keeps this obviously correct; the head is ~130 bytes
 * and formatting it costs far less than one syscall.
 */
#include "resp.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

const char *resp_reason(int status)
{
    switch (status) {
#define X_CASE(code, text) \
    case code:             \
        return text;
        HTTP_STATUSES(X_CASE)
#undef X_CASE
    default:
        return "Unknown";
    }
}

size_t resp_format(char *buf, size_t cap, const struct resp *r, const char *date, bool with_body)
{
    int n =
        snprintf(buf, cap,
                 "HTTP/1.1 %d %s\r\n"
                 "Server: primed\r\n"
                 "Date: %.*s\r\n"
                 "%s%s%s"
                 "%s%s%s"
                 "%s"
                 "Content-Length: %zu\r\n"
                 "Connection: %s\r\n"
                 "\r\n",
                 r->status, resp_reason(r->status), RESP_DATE_LEN, date, r->ctype ? "Content-Type: " : "",
                 r->ctype ? r->ctype : "", r->ctype ? "\r\n" : "", r->allow ? "Allow: " : "", r->allow ? r->allow : "",
                 r->allow ? "\r\n" : "", r->extra ? r->extra : "", r->body_len, r->keep_alive ? "keep-alive" : "close");
    if (n < 0 || (size_t)n >= cap)
        return 0;
    size_t len = (size_t)n;
    if (with_body && !r->head && r->body_len) {
        if (r->body_len > cap - len)
            return 0;
        memcpy(buf + len, r->body, r->body_len);
        len += r->body_len;
    }
    return len;
}

void resp_date(char *out, long t)
{
    time_t tt = (time_t)t;
    struct tm tm;
    gmtime_r(&tt, &tm);
    strftime(out, RESP_DATE_LEN + 1, "%a, %d %b %Y %H:%M:%S GMT", &tm);
}
