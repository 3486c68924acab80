/* test_resp.c - response heads: status line, headers, HEAD, overflow. */
#include <criterion/criterion.h>
#include <string.h>
#include <time.h>

#include "resp.h"

static const char date[] = "Mon, 30 Nov 2026 10:00:00 GMT";

Test(resp, formats_head_and_body)
{
    char buf[512];
    struct resp r = {.status = 200, .ctype = "text/plain", .body = "Hello_1", .body_len = 7, .keep_alive = true};
    size_t n = resp_format(buf, sizeof(buf), &r, date, true);
    cr_assert_gt(n, 0);
    buf[n] = '\0';
    cr_assert(strncmp(buf, "HTTP/1.1 200 OK\r\n", 17) == 0);
    cr_assert_not_null(strstr(buf, "Content-Length: 7\r\n"));
    cr_assert_not_null(strstr(buf, "Content-Type: text/plain\r\n"));
    cr_assert_not_null(strstr(buf, "Date: Mon, 30 Nov 2026 10:00:00 GMT\r\n"));
    cr_assert_not_null(strstr(buf, "Connection: keep-alive\r\n"));
    cr_assert(strcmp(buf + n - 11, "\r\n\r\nHello_1") == 0);
}

Test(resp, head_keeps_length_drops_body)
{
    char buf[512];
    struct resp r = {.status = 200, .body = "Hello_1", .body_len = 7, .head = true};
    size_t n = resp_format(buf, sizeof(buf), &r, date, true);
    buf[n] = '\0';
    cr_assert_not_null(strstr(buf, "Content-Length: 7\r\n"));
    cr_assert(strcmp(buf + n - 4, "\r\n\r\n") == 0);
    cr_assert_not_null(strstr(buf, "Connection: close\r\n"));
}

Test(resp, allow_and_extra_headers)
{
    char buf[512];
    struct resp r = {.status = 405, .allow = "GET, HEAD", .extra = "X-A: b\r\n"};
    size_t n = resp_format(buf, sizeof(buf), &r, date, true);
    buf[n] = '\0';
    cr_assert(strncmp(buf, "HTTP/1.1 405 Method Not Allowed\r\n", 33) == 0);
    cr_assert_not_null(strstr(buf, "Allow: GET, HEAD\r\n"));
    cr_assert_not_null(strstr(buf, "X-A: b\r\n"));
}

Test(resp, too_small_is_zero)
{
    char buf[64];
    struct resp r = {.status = 200, .body = "x", .body_len = 1};
    cr_assert_eq(resp_format(buf, sizeof(buf), &r, date, true), 0);
}

Test(resp, reasons_and_date)
{
    cr_assert_str_eq(resp_reason(431), "Request Header Fields Too Large");
    cr_assert_str_eq(resp_reason(299), "Unknown");
    /* /caller/ping's and /api/products' upstream failures, and --fault-abort's codes:
     * each has its phrase (502 and 504 were "Unknown" before they were in the table) */
    cr_assert_str_eq(resp_reason(502), "Bad Gateway");
    cr_assert_str_eq(resp_reason(504), "Gateway Timeout");
    cr_assert_str_eq(resp_reason(429), "Too Many Requests");
    char d[RESP_DATE_LEN + 1];
    resp_date(d, 0);
    cr_assert_str_eq(d, "Thu, 01 Jan 1970 00:00:00 GMT");
}

/* resp_date computes the calendar itself (clock_utc_of); libc's gmtime_r and strftime in the C
 * locale are the reference: every day from 1900 to 2400 (1900 and 2100 are not leap years, 2000
 * and 2400 are), each at a different second of the day. */
Test(resp, date_matches_libc)
{
    char d[RESP_DATE_LEN + 1], want[64];
    for (long t = -2208988800L, i = 0; t < 13569465600L; t += 86400, i++) {
        long at = t + (i * 7919) % 86400;
        time_t tt = (time_t)at;
        struct tm tm;
        cr_assert_not_null(gmtime_r(&tt, &tm));
        strftime(want, sizeof(want), "%a, %d %b %Y %H:%M:%S GMT", &tm);
        resp_date(d, at);
        cr_assert_str_eq(d, want, "t=%ld", at);
    }
}

/* RESP_HEAD_MAX is a bound: every part at its own bound fits exactly. */
Test(resp, head_max_is_a_bound)
{
    static char buf[RESP_HEAD_MAX + 1];
    char ctype[RESP_CTYPE_MAX + 1], allow[RESP_ALLOW_MAX + 1], extra[RESP_EXTRA_MAX + 1];
    memset(ctype, 'c', RESP_CTYPE_MAX);
    ctype[RESP_CTYPE_MAX] = '\0';
    memset(allow, 'a', RESP_ALLOW_MAX);
    allow[RESP_ALLOW_MAX] = '\0';
    memset(extra, 'x', RESP_EXTRA_MAX);
    extra[RESP_EXTRA_MAX] = '\0';
    struct resp r = {
        .status = 431, /* the longest reason phrase */
        .ctype = ctype,
        .allow = allow,
        .extra = extra,
        .body_len = (size_t)-1, /* the longest Content-Length */
        .keep_alive = true,
        .head = true,
    };
    cr_assert_eq(strlen(resp_reason(431)), RESP_REASON_MAX);
    size_t n = resp_format(buf, sizeof(buf), &r, date, true);
    cr_assert_eq(n, RESP_HEAD_MAX, "head of %zu bytes, bound %zu", n, (size_t)RESP_HEAD_MAX);
    /* and the metrics Content-Type is within its bound */
    cr_assert_leq(strlen("text/plain; version=0.0.4; charset=utf-8"), RESP_CTYPE_MAX);
}
