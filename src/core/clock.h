/* clock.h - the one clock of the server: monotonic time for every duration
 * and deadline, wall-clock time for timestamps that leave the process (spans,
 * events, the Date header), a thread's CPU time for what a job costs.
 *
 * Header-only: a vDSO call each, cheap enough for the request path. Nothing
 * else in src/ reads a clock (tests/layers/check).
 */
#ifndef PRIMED_CLOCK_H
#define PRIMED_CLOCK_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC in nanoseconds. */
static inline uint64_t clock_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* CLOCK_MONOTONIC in milliseconds. */
static inline uint64_t clock_mono_ms(void)
{
    return clock_mono_ns() / 1000000u;
}

/* The CLOCK_MONOTONIC time ms milliseconds from now, as a timespec (for a
 * condition variable set to CLOCK_MONOTONIC). */
static inline struct timespec clock_mono_after(unsigned ms)
{
    uint64_t t = clock_mono_ns() + (uint64_t)ms * 1000000u;
    return (struct timespec){.tv_sec = (time_t)(t / 1000000000u), .tv_nsec = (long)(t % 1000000000u)};
}

/* Initialises cv to wait on CLOCK_MONOTONIC (its deadlines from
 * clock_mono_after), so a step of the wall clock never stretches a wait. */
static inline void clock_cond_init(pthread_cond_t *cv)
{
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(cv, &ca);
    pthread_condattr_destroy(&ca);
}

/* This thread's CPU time in nanoseconds. */
static inline uint64_t clock_thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* CLOCK_REALTIME in microseconds since the epoch. */
static inline uint64_t clock_wall_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* CLOCK_REALTIME in whole seconds since the epoch. */
static inline time_t clock_wall_s(void)
{
    return (time_t)(clock_wall_us() / 1000000u);
}

#endif
