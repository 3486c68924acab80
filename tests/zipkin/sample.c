/* sample.c - prints a batch of the spans primed exports (a SERVER span, the
 * CLIENT span of its upstream call, an error span) for tests/zipkin/validate. */
#include <stdio.h>
#include <string.h>

#include "zipkin.h"

int main(void)
{
    struct zipkin_span s[3] = {
        {.trace_id = "4bf92f3577b34da6a3ce929d0e0e4736", .id = "00f067aa0ba902b7", .kind = ZIPKIN_SERVER,
         .name = "get /caller/ping", .service = "caller", .timestamp_us = 1764580000000000ull,
         .duration_us = 2100, .method = "GET", .path = "/caller/ping", .status = 200},
        {.trace_id = "4bf92f3577b34da6a3ce929d0e0e4736", .id = "1111111111111111",
         .parent_id = "00f067aa0ba902b7", .kind = ZIPKIN_CLIENT, .name = "get /callme/ping", .service = "caller",
         .remote = "callme.default.svc.cluster.local", .timestamp_us = 1764580000000100ull, .duration_us = 1800,
         .method = "GET", .path = "/callme/ping", .status = 200},
        {.trace_id = "00000000000000004bf92f3577b34da6", .id = "2222222222222222",
         .parent_id = "00f067aa0ba902b7", .kind = ZIPKIN_CLIENT, .name = "get /callme/ping", .service = "caller",
         .remote = "callme", .timestamp_us = 1764580000005000ull, .duration_us = 0, .method = "GET",
         .path = "/callme/ping", .status = 504, .error = "upstream timeout"},
    };
    char buf[4096];
    size_t n = zipkin_format(buf, sizeof(buf), s, 3);
    if (n == 0)
        return 1;
    fwrite(buf, 1, n, stdout);
    putchar('\n');
    return 0;
}
