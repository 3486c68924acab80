/* access_log.h - the access-log line of one answered request (--access-log):
 * time, worker, method, route, status, bytes, duration and trace id, into
 * the worker's own buffer (log.h's alog), flushed once a second.
 *
 * owns: the line's words. never: the buffer's flushing (app.c's poll).
 */
#ifndef PRIMED_ACCESS_LOG_H
#define PRIMED_ACCESS_LOG_H

#include <stddef.h>
#include <stdint.h>

#include "http.h"
#include "log.h"
#include "route.h"
#include "trace.h"

/* Appends the access-log line of one answered request to a. */
void access_log_line(struct alog *a, const char *iso_time, unsigned worker, const struct http_req *rq,
                     enum route_id route, int status, size_t bytes, uint64_t dur_ns, const struct trace *tr);

#endif
