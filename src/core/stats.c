/* stats.c - the histogram's bucket search (stats.h). Runs on the request
 * path: a scan of STATS_NBUCKETS doubles, no lock, no allocation.
 */
#include "stats.h"

static const double bounds[STATS_NBUCKETS] = {STATS_BUCKETS_S};

void stats_observe(struct histo *h, uint64_t ns)
{
    int i = 0;
    double s = (double)ns / 1e9;
    while (i < STATS_NBUCKETS && s > bounds[i])
        i++;
    stats_add(&h->bucket[i], 1);
    stats_add(&h->sum_ns, ns);
    stats_add(&h->count, 1);
}
