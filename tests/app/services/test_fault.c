/* test_fault.c - which requests get a fault: percentages as thresholds on a
 * uniform draw, the exempt routes, delay and abort drawn independently. */
#include <criterion/criterion.h>
#include <stdint.h>

#include "config.h"
#include "fault.h"

/* fault_init() from a config's --fault-* values, as the fault delay service calls it. */
static bool fault_init_cfg(struct fault *f, const struct config *c)
{
    return fault_init(f, c->fault_delay_ms, c->fault_delay_pct, c->fault_abort, c->fault_abort_pct);
}
#include "route.h"

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t next(void)
{
    uint64_t x = rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    rng = x;
    return x * 0x2545F4914F6CDD1DULL;
}

Test(fault, none_configured)
{
    struct config c;
    config_defaults(&c);
    struct fault f;
    cr_assert(!fault_init_cfg(&f, &c));
    c.fault_delay_ms = 100;
    c.fault_delay_pct = 0;
    cr_assert(!fault_init_cfg(&f, &c), "0 % is no fault");
}

Test(fault, always_and_exempt_routes)
{
    struct config c;
    config_defaults(&c);
    c.fault_delay_ms = 250;
    c.fault_abort = 503;
    struct fault f;
    cr_assert(fault_init_cfg(&f, &c));
    unsigned d;
    int a;
    fault_draw(&f, true, UINT64_MAX, UINT64_MAX, &d, &a);
    cr_assert_eq(d, 250);
    cr_assert_eq(a, 503);
    fault_draw(&f, false, 0, 0, &d, &a);
    cr_assert_eq(d, 0, "outside --fault-path, or a quiet route");
    cr_assert_eq(a, 0);
    /* the quiet routes (never held, never aborted) are the probes and /metrics */
    for (int r = 0; r < ROUTE__COUNT; r++) {
        bool quiet = route_flags((enum route_id)r) & ROUTE_F_QUIET;
        bool probe = r == ROUTE_HEALTHZ || r == ROUTE_READYZ || r == ROUTE_METRICS;
        cr_assert_eq(quiet, probe, "route %s", route_name((enum route_id)r));
    }
}

/* Share of n draws delayed at pct, and aborted at apct. */
static void shares(double pct, double apct, unsigned n, double *dshare, double *ashare, double *both)
{
    struct config c;
    config_defaults(&c);
    c.fault_delay_ms = 10;
    c.fault_delay_pct = pct;
    c.fault_abort = 500;
    c.fault_abort_pct = apct;
    struct fault f;
    fault_init_cfg(&f, &c);
    unsigned nd = 0, na = 0, nb = 0;
    for (unsigned i = 0; i < n; i++) {
        unsigned d;
        int a;
        uint64_t r1 = next(), r2 = next();
        fault_draw(&f, true, r1, r2, &d, &a);
        nd += d != 0;
        na += a != 0;
        nb += d != 0 && a != 0;
    }
    *dshare = (double)nd / n;
    *ashare = (double)na / n;
    *both = (double)nb / n;
}

Test(fault, percentages_within_statistical_bounds)
{
    /* n = 100000: the standard deviation of a share p is sqrt(p(1-p)/n) <= 0.0016;
     * the bound is 5 of them */
    static const double pcts[] = {0.5, 10, 33.3, 50, 90, 99.5};
    for (size_t i = 0; i < sizeof(pcts) / sizeof(pcts[0]); i++) {
        double d, a, b;
        double p = pcts[i] / 100.0, q = 1.0 - p;
        shares(pcts[i], 100.0 - pcts[i], 100000, &d, &a, &b);
        cr_assert(d > p - 0.008 && d < p + 0.008, "delay at %.1f %%: %.4f", pcts[i], d);
        cr_assert(a > q - 0.008 && a < q + 0.008, "abort at %.1f %%: %.4f", 100.0 - pcts[i], a);
        /* independent draws: both at p * q */
        cr_assert(b > p * q - 0.008 && b < p * q + 0.008, "both: %.4f, want %.4f", b, p * q);
    }
}

Test(fault, zero_and_hundred_are_exact)
{
    double d, a, b;
    shares(100, 0.0001, 20000, &d, &a, &b);
    cr_assert_eq(d, 1.0);
    cr_assert(a < 0.001);
}
