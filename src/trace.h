/* trace.h - W3C trace context (traceparent) and B3 trace ids.
 *
 * Pure parsing and formatting; malformed input is "no trace", never an error.
 */
#ifndef PRIMED_TRACE_H
#define PRIMED_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct trace {
    bool valid;
    char trace_id[33];  /* 32 lower-case hex digits, NUL-terminated */
    char parent_id[17]; /* 16 hex digits of the caller's span, or "" */
    uint8_t flags;      /* trace-flags (bit 0: sampled) */
};

/* Parses a traceparent value (version 00, or a later version's first four
 * fields). Returns true and fills *t when valid. */
bool trace_parse_traceparent(const char *s, size_t len, struct trace *t);

/* Parses a B3 trace id: the X-B3-TraceId value (16 or 32 hex) or the first
 * field of a b3 single header ("traceid-spanid[-sampled[-parent]]"). */
bool trace_parse_b3(const char *s, size_t len, struct trace *t);

/* Writes "00-<trace>-<span>-<flags>" (55 chars + NUL) continuing t with a new
 * span id. Returns 55. */
int trace_format_traceparent(const struct trace *t, uint64_t span, char out[56]);

#endif
