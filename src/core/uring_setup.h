/* uring_setup.h - the ring set-up io_uring.c uses, shared with the plaintext
 * floor (benchmarks/floor.c) so that the floor's ring is primed's by
 * construction: the flags tried in order, and the completion queue size.
 */
#ifndef PRIMED_URING_SETUP_H
#define PRIMED_URING_SETUP_H

#include <liburing.h>

/* The most a >= 6.1 kernel gives, then fewer flags on EINVAL. */
static const unsigned uring_setup_tries[] = {
    IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_SUBMIT_ALL, /* >= 6.1 */
    IORING_SETUP_COOP_TASKRUN | IORING_SETUP_SUBMIT_ALL,                               /* >= 5.19 */
    0,
};

/* The completion queue holds a completion for every operation that can be in
 * flight at once (max_ops, the worker's two per connection plus its own), so
 * that none waits in the kernel's overflow list; the kernel caps it at 65536
 * (IORING_SETUP_CLAMP), past which (over 32k connections per worker) the
 * overflow list holds the rest: with IORING_FEAT_NODROP (>= 5.5) they are
 * delayed, never lost. */
static inline unsigned uring_cq_size(unsigned entries, unsigned max_ops)
{
    unsigned want = entries * 4 > max_ops ? entries * 4 : max_ops;
    unsigned n = 1;
    while (n < want && n < 65536)
        n <<= 1;
    return n;
}

#endif
