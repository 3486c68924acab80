/* test_zipkin.c - Zipkin v2 JSON: fields, escaping, bad ids left out, a
 * buffer too small. The schema check against the Zipkin API is
 * tests/zipkin/validate, over the batch tests/zipkin/sample.c prints. */
#include <criterion/criterion.h>
#include <string.h>

#include "zipkin.h"

static struct zipkin_span server_span(void)
{
    struct zipkin_span s = {
        .trace_id = "4bf92f3577b34da6a3ce929d0e0e4736",
        .id = "00f067aa0ba902b7",
        .parent_id = "",
        .kind = ZIPKIN_SERVER,
        .name = "get /caller/ping",
        .service = "caller",
        .timestamp_us = 1764580000000000ull,
        .duration_us = 1234,
        .method = "GET",
        .path = "/caller/ping",
        .status = 200,
    };
    return s;
}

Test(zipkin, formats_a_server_span)
{
    char buf[1024];
    struct zipkin_span s = server_span();
    size_t n = zipkin_format(buf, sizeof(buf), &s, 1);
    cr_assert_gt(n, 0);
    cr_assert_eq(strlen(buf), n);
    cr_assert_str_eq(
        buf, "[{\"traceId\":\"4bf92f3577b34da6a3ce929d0e0e4736\",\"id\":\"00f067aa0ba902b7\","
             "\"kind\":\"SERVER\",\"name\":\"get /caller/ping\",\"timestamp\":1764580000000000,"
             "\"duration\":1234,\"localEndpoint\":{\"serviceName\":\"caller\"},"
             "\"tags\":{\"http.method\":\"GET\",\"http.path\":\"/caller/ping\",\"http.status_code\":\"200\"}}]");
}

Test(zipkin, escapes_strings_and_drops_bad_ids)
{
    char buf[2048];
    struct zipkin_span s[3] = {server_span(), server_span(), server_span()};
    s[0].service = "a\"b\\c\nd";
    strcpy(s[1].id, "NOT-HEX-AT-ALL!!");
    s[2].kind = ZIPKIN_CLIENT;
    strcpy(s[2].parent_id, "00f067aa0ba902b7");
    strcpy(s[2].id, "1111111111111111");
    s[2].remote = "callme.default.svc.cluster.local";
    s[2].error = "upstream timeout";
    s[2].duration_us = 0;
    size_t n = zipkin_format(buf, sizeof(buf), s, 3);
    cr_assert_gt(n, 0);
    cr_assert(strstr(buf, "\"serviceName\":\"a\\\"b\\\\c\\u000ad\""), "%s", buf);
    cr_assert_null(strstr(buf, "NOT-HEX"), "a span with a bad id was sent: %s", buf);
    cr_assert(strstr(buf, "\"parentId\":\"00f067aa0ba902b7\",\"kind\":\"CLIENT\""), "%s", buf);
    cr_assert(strstr(buf, "\"duration\":1,"), "a zero duration must be sent as 1: %s", buf);
    cr_assert(strstr(buf, "\"error\":\"upstream timeout\""), "%s", buf);
    cr_assert(strstr(buf, "}},{"), "two spans expected: %s", buf);
}

Test(zipkin, too_small_a_buffer_is_0)
{
    char buf[64];
    struct zipkin_span s = server_span();
    cr_assert_eq(zipkin_format(buf, sizeof(buf), &s, 1), 0);
    cr_assert_eq(zipkin_format(buf, 3, NULL, 0), 2);
    cr_assert_str_eq(buf, "[]");
}
