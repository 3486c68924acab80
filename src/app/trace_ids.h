/* trace_ids.h - a request's trace context and the ids of its spans: the
 * trace it continues (traceparent, B3) or a new one, and a new span id for
 * this server's span, from the worker's own random state (xorshift64*: ids
 * need to be unique-ish, not secret).
 *
 * owns: nothing (the state is the caller's, one per worker). never: a
 * span's export (spans.h), the headers of an answer (answer.h).
 */
#ifndef PRIMED_TRACE_IDS_H
#define PRIMED_TRACE_IDS_H

#include <stdbool.h>
#include <stdint.h>

#include "http.h"
#include "trace.h"

/* The request's trace context into tr (a new sampled trace when it has none
 * and start is set) and a new span id for this server's span into *span,
 * from *rng. */
void trace_ids_begin(const struct http_req *rq, uint64_t *rng, bool start, struct trace *tr, uint64_t *span);

/* A random id from *rng (non-zero state). */
uint64_t rng_next(uint64_t *rng);

#endif
