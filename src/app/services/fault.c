/* fault.c - which requests get a fault (fault.h). */
#include "fault.h"

#include <string.h>

/* pct of 2^64, for a comparison with a uniform 64-bit draw */
static uint64_t cut_of(double pct)
{
    double v = pct / 100.0 * 18446744073709551616.0;
    if (!(v > 0.0))
        return 0;
    return v >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)v;
}

bool fault_init(struct fault *f, unsigned delay_ms, double delay_pct, unsigned abort_status, double abort_pct)
{
    memset(f, 0, sizeof(*f));
    if (delay_ms && delay_pct > 0.0) {
        f->delay_ms = delay_ms;
        f->delay_always = delay_pct >= 100.0;
        f->delay_cut = f->delay_always ? 0 : cut_of(delay_pct);
    }
    if (abort_status && abort_pct > 0.0) {
        f->abort_status = (int)abort_status;
        f->abort_always = abort_pct >= 100.0;
        f->abort_cut = f->abort_always ? 0 : cut_of(abort_pct);
    }
    return f->delay_ms || f->abort_status;
}

void fault_draw(const struct fault *f, bool applies, uint64_t r1, uint64_t r2, unsigned *delay_ms, int *abort_status)
{
    *delay_ms = 0;
    *abort_status = 0;
    if (!applies)
        return;
    if (f->delay_ms && (f->delay_always || r1 < f->delay_cut))
        *delay_ms = f->delay_ms;
    if (f->abort_status && (f->abort_always || r2 < f->abort_cut))
        *abort_status = f->abort_status;
}
