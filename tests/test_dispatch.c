/* test_dispatch.c - inline and stealing execution (src/dispatch.c) on one
 * thread: the pool bound, the wait queue in order, the throttle, the hooks.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "build_info.h"
#include "dispatch.h"

static struct dispatch_stats m;
static uint64_t done_tags[8];
static unsigned ndone, nresume;

static void on_done(void *ctx, uint64_t tag, int result)
{
    done_tags[ndone++] = tag;
}

static void on_resume(void *ctx)
{
    nresume++;
}

static struct dispatch *make(enum dispatch_mode mode, unsigned queue_max)
{
    static struct dispatch d;
    static struct dispatch *peers[1];
    memset(&d, 0, sizeof(d));
    d.prime = prime_state_create(1);
    d.engine = PRIME_ENGINE_FLINT;
    d.stats = &m;
    d.hooks = (struct dispatch_hooks){.done = on_done, .resume = on_resume};
    peers[0] = &d;
    ndone = nresume = 0;
    cr_assert_eq(dispatch_init(&d, mode, queue_max, false, 0, peers, 1), 0);
    return &d;
}

Test(dispatch, inline_runs_at_once)
{
    struct dispatch *d = make(DISPATCH_INLINE, 4);
    struct dispatch_job job = {0};
    int result = -1;
    cr_assert(dispatch_submit(d, &job, 7, 64, &result));
    cr_assert_eq(result, 64, "the prime's bit length");
    cr_assert_eq(dispatch_queue_depth(d), -1);
    cr_assert(!dispatch_throttled(d));
    prime_state_destroy(d->prime);
}

Test(dispatch, steal_bounds_the_pool_and_answers_in_order)
{
#if PRIMED_HAVE_STEAL
    struct dispatch *d = make(DISPATCH_STEAL, 2);
    struct dispatch_job jobs[3] = {{0}};
    int result;
    for (int i = 0; i < 3; i++)
        cr_assert(!dispatch_submit(d, &jobs[i], (uint64_t)i + 1, 64, &result));
    cr_assert(dispatch_throttled(d));
    cr_assert_eq(jobs[2].where, DISPATCH_JOB_WAITING);
    cr_assert_eq(dispatch_out(d), 2);
    for (int i = 0; i < 3; i++)
        dispatch_poll(d);
    cr_assert_eq(ndone, 3);
    for (unsigned i = 0; i < 3; i++)
        cr_assert_eq(done_tags[i], i + 1, "oldest first");
    cr_assert(!dispatch_throttled(d));
    cr_assert_eq(nresume, 1);
    cr_assert_eq(dispatch_out(d), 0);
    prime_state_destroy(d->prime);
#else
    cr_skip_test("built without work stealing");
#endif
}

Test(dispatch, cancel_unlinks_a_waiting_job)
{
#if PRIMED_HAVE_STEAL
    struct dispatch *d = make(DISPATCH_STEAL, 1);
    struct dispatch_job a = {0}, b = {0};
    int result;
    dispatch_submit(d, &a, 1, 64, &result);
    dispatch_submit(d, &b, 2, 64, &result);
    cr_assert(dispatch_cancel(d, &b), "only waiting: never answered");
    cr_assert_null(d->waitq_head);
    cr_assert(!dispatch_cancel(d, &a), "a task is out: its answer still comes");
    dispatch_poll(d);
    cr_assert_eq(ndone, 1);
    cr_assert_eq(done_tags[0], 1);
    prime_state_destroy(d->prime);
#else
    cr_skip_test("built without work stealing");
#endif
}
