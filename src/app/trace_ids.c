/* trace_ids.c - a request's trace context and its span ids (trace_ids.h). */
#include "trace_ids.h"

uint64_t rng_next(uint64_t *state)
{
    /* xorshift64*: span ids only need to be unique-ish, not secret */
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545F4914F6CDD1DULL;
}

void trace_ids_begin(const struct http_req *rq, uint64_t *rng, bool start, struct trace *tr, uint64_t *span)
{
    trace_from_request(rq, tr);
    if (!tr->valid && start) {
        uint64_t hi = rng_next(rng);
        trace_start(tr, hi, rng_next(rng));
    }
    *span = rng_next(rng);
}

