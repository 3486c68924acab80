/* clock.h - the one clock of the server: monotonic nanoseconds for every
 * duration and deadline, wall-clock microseconds for timestamps that leave
 * the process (spans).
 *
 * Header-only: a vDSO call each, cheap enough for the request path. Nothing
 * else in src/ defines a clock.
 */
#ifndef PRIMED_CLOCK_H
#define PRIMED_CLOCK_H

#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC in nanoseconds. */
static inline uint64_t clock_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* CLOCK_REALTIME in microseconds since the epoch. */
static inline uint64_t clock_wall_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

#endif
