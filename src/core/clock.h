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

/* A UTC calendar time: year, month 1-12, day 1-31, hour, minute, second, weekday 0-6 (Sunday 0). */
struct clock_utc {
    int64_t year;
    int mon, mday, hour, min, sec, wday;
};

/* t seconds since the epoch as a UTC calendar time (proleptic Gregorian; the days-to-civil
 * arithmetic of Howard Hinnant's "chrono-Compatible Low-Level Date Algorithms"). Here rather
 * than gmtime_r: glibc's gmtime_r reads the TZ rules (tzset), which links its sscanf and file
 * parsing into the static build, for a conversion that needs no time zone. */
static inline struct clock_utc clock_utc_of(int64_t t)
{
    int64_t days = t / 86400, secs = t % 86400;
    if (secs < 0)
        secs += 86400, days--;
    struct clock_utc u = {.hour = (int)(secs / 3600), .min = (int)(secs / 60 % 60), .sec = (int)(secs % 60)};
    u.wday = (int)((days % 7 + 11) % 7); /* 1970-01-01 was a Thursday (4) */
    int64_t z = days + 719468, era = (z >= 0 ? z : z - 146096) / 146097;
    unsigned doe = (unsigned)(z - era * 146097);
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100), mp = (5 * doy + 2) / 153;
    u.mday = (int)(doy - (153 * mp + 2) / 5 + 1);
    u.mon = (int)(mp < 10 ? mp + 3 : mp - 9);
    u.year = (int64_t)yoe + era * 400 + (u.mon <= 2);
    return u;
}

#endif
