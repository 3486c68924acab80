/* trace.h - W3C trace context (traceparent) and B3 trace ids.
 *
 * Pure parsing and formatting; malformed input is "no trace", never an error.
 */
#ifndef PRIMED_TRACE_H
#define PRIMED_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "http.h"

struct trace {
    bool valid;
    char trace_id[33];  /* 32 lower-case hex digits, NUL-terminated */
    char parent_id[17]; /* 16 hex digits of the caller's span, or "" */
    uint8_t flags;      /* trace-flags (bit 0: sampled) */
};

/* Parses a traceparent value (version 00, or a later version's first four
 * fields). Returns true and fills *t when valid. */
bool trace_parse_traceparent(const char *s, size_t len, struct trace *t);

/* Parses a b3 single header, "traceid-spanid[-sampled[-parentspanid]]"
 * (traceid 16 or 32 hex, spanid 16 hex, sampled 0, 1 or d). The span id
 * becomes the parent of ours; sampled 0 clears the sampled flag, 1 and d
 * (debug) set it, and an absent one (deferred) sets it: primed samples
 * everything. "0" alone (deny, no ids) and other shapes are no trace.
 * Returns true and fills *t when valid. */
bool trace_parse_b3(const char *s, size_t len, struct trace *t);

/* Parses the multi-header B3 form: X-B3-TraceId (required, 16 or 32 hex),
 * X-B3-SpanId (16 hex, or absent), X-B3-Sampled ("1"/"0", or the legacy
 * "true"/"false"; absent: deferred, sampled) and X-B3-Flags ("1": debug,
 * sampled). A value of length 0 is absent. Returns true when valid. */
bool trace_parse_b3_multi(const char *trace_id, size_t trace_len, const char *span_id, size_t span_len,
                          const char *sampled, size_t sampled_len, const char *flags, size_t flags_len,
                          struct trace *t);

/* Writes "00-<trace>-<span>-<flags>" (55 chars + NUL) continuing t with a new
 * span id. Returns 55. */
int trace_format_traceparent(const struct trace *t, uint64_t span, char out[56]);

/* Starts a new sampled trace (no incoming context) with id hi:lo. */
void trace_start(struct trace *t, uint64_t hi, uint64_t lo);

/* The context of an outbound call continuing t: span is the call's (the
 * CLIENT span) and parent the caller's SERVER span. Writes the header lines
 * traceparent, X-B3-TraceId, X-B3-SpanId, X-B3-ParentSpanId and X-B3-Sampled
 * (each ending "\r\n") into out. Returns the length, 0 when cap is short
 * (TRACE_OUTBOUND_MAX is enough). */
#define TRACE_OUTBOUND_MAX 256 /* the five lines take 203 bytes */
size_t trace_format_outbound(const struct trace *t, uint64_t parent, uint64_t span, char *out, size_t cap);

/* The request headers that carry a trace context, as the parser's keep list
 * (http.h): traceparent, b3, X-B3-TraceId, X-B3-SpanId, X-B3-Sampled,
 * X-B3-Flags, each with room for its longest valid value. */
extern const struct http_keep trace_keep;
enum { TRACE_KEEP_TRACEPARENT, TRACE_KEEP_B3, TRACE_KEEP_XB3_TRACE, TRACE_KEEP_XB3_SPAN, TRACE_KEEP_XB3_SAMPLED,
       TRACE_KEEP_XB3_FLAGS, TRACE_KEEP_N };

/* The trace context of a request parsed with trace_keep: traceparent, else
 * a single b3 header, else the X-B3-* headers. An overlong value is no
 * trace. Clears *t first. */
void trace_from_request(const struct http_req *rq, struct trace *t);

#endif
