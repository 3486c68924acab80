/* access_log.c - the access-log line (access_log.h). */
#include "access_log.h"

#include <inttypes.h>

void access_log_line(struct alog *a, const char *iso_time, unsigned worker, const struct http_req *rq,
                     enum route_id route, int status, size_t bytes, uint64_t dur_ns, const struct trace *tr)
{
    alog_printf(a, "ts=%s worker=%u method=%s path=%s status=%d bytes=%zu dur_us=%" PRIu64 " trace_id=%s", iso_time,
                worker, rq->has_method ? llhttp_method_name((llhttp_method_t)rq->method) : "-",
                route_name(route), status, bytes, dur_ns / 1000,
                tr && tr->valid ? tr->trace_id : "-");
}
