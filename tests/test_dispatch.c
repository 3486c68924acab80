/* test_dispatch.c - inline and stealing execution (src/core/dispatch.c) on
 * one thread: the pool bound, the wait queue in order, the throttle, the
 * hooks, and the job function it is given (a stub: the core knows no prime).
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

/* The stub work: counts its runs in its state, answers twice the size. */
static unsigned runs;

static int stub_run(void *state, unsigned size)
{
    ++*(unsigned *)state;
    return 2 * (int)size;
}

static const struct dispatch_work stub_work = {.run = stub_run};

static struct dispatch *make(enum dispatch_mode mode, unsigned queue_max)
{
    static struct dispatch d;
    static struct dispatch *peers[1];
    memset(&d, 0, sizeof(d));
    d.stats = &m;
    d.hooks = (struct dispatch_hooks){.done = on_done, .resume = on_resume};
    peers[0] = &d;
    ndone = nresume = runs = 0;
    cr_assert_eq(dispatch_init(&d, mode, queue_max, false, 0, peers, 1), 0);
    cr_assert_eq(dispatch_set_work(&d, &stub_work, &runs), 0);
    return &d;
}

Test(dispatch, inline_runs_at_once)
{
    struct dispatch *d = make(DISPATCH_INLINE, 4);
    struct dispatch_job job = {0};
    int result = -1;
    cr_assert(dispatch_submit(d, &job, 7, 64, &result));
    cr_assert_eq(result, 128, "the work's own result, as it is");
    cr_assert_eq(runs, 1, "run with the state it was given");
    cr_assert_eq(dispatch_queue_depth(d), -1);
    cr_assert(!dispatch_throttled(d));
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
#else
    cr_skip_test("built without work stealing");
#endif
}

/* A shareable stub: run_shared and help count into the state; the share is a
 * counter of pieces run. */
static unsigned shares_made, shared_runs, helps;
static bool share_fails;
static unsigned share_obj;

static void *stub_share_create(void)
{
    shares_made++;
    return share_fails ? NULL : &share_obj;
}

static int stub_run_shared(void *state, void *share, unsigned size)
{
    (void)state;
    cr_assert_eq(share, &share_obj, "the share it made");
    shared_runs++;
    return 3 * (int)size;
}

static bool stub_help(void *state, void *share)
{
    (void)state;
    (void)share;
    helps++;
    return true;
}

static const struct dispatch_work share_work = {
    .run = stub_run, .share_create = stub_share_create, .run_shared = stub_run_shared, .help = stub_help};

Test(dispatch, split_makes_a_share_only_when_it_can)
{
#if PRIMED_HAVE_STEAL
    static struct dispatch a, b;
    static struct dispatch *peers[2] = {&a, &b};
    shares_made = 0;
    share_fails = false;
    /* one worker has nobody to help it */
    memset(&a, 0, sizeof(a));
    cr_assert_eq(dispatch_init(&a, DISPATCH_STEAL, 4, true, 0, peers, 1), 0);
    cr_assert_eq(dispatch_set_work(&a, &share_work, &runs), 0);
    cr_assert_null(a.share);
    /* a work that cannot be shared */
    memset(&a, 0, sizeof(a));
    cr_assert_eq(dispatch_init(&a, DISPATCH_STEAL, 4, true, 0, peers, 2), 0);
    cr_assert_eq(dispatch_set_work(&a, &stub_work, &runs), 0);
    cr_assert_null(a.share);
    /* split off */
    memset(&a, 0, sizeof(a));
    cr_assert_eq(dispatch_init(&a, DISPATCH_STEAL, 4, false, 0, peers, 2), 0);
    cr_assert_eq(dispatch_set_work(&a, &share_work, &runs), 0);
    cr_assert_null(a.share);
    cr_assert_eq(shares_made, 0);
    /* inline never shares */
    memset(&a, 0, sizeof(a));
    cr_assert_eq(dispatch_init(&a, DISPATCH_INLINE, 4, true, 0, peers, 2), 0);
    cr_assert_eq(dispatch_set_work(&a, &share_work, &runs), 0);
    cr_assert_null(a.share);
    /* the allocation fails: said, not hidden */
    share_fails = true;
    memset(&a, 0, sizeof(a));
    cr_assert_eq(dispatch_init(&a, DISPATCH_STEAL, 4, true, 0, peers, 2), 0);
    cr_assert_eq(dispatch_set_work(&a, &share_work, &runs), -ENOMEM);
    share_fails = false;
#else
    cr_skip_test("built without work stealing");
#endif
}

Test(dispatch, split_runs_shared_and_an_idle_peer_helps)
{
#if PRIMED_HAVE_STEAL
    static struct dispatch a, b;
    static struct dispatch *peers[2] = {&a, &b};
    static struct dispatch_stats sa, sb;
    static unsigned ra, rb;
    static struct io dummy_io;
    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    shares_made = shared_runs = helps = 0;
    share_fails = false;
    ndone = 0;
    a.stats = &sa;
    b.stats = &sb;
    a.io = b.io = &dummy_io;
    a.hooks = b.hooks = (struct dispatch_hooks){.done = on_done, .resume = on_resume};
    cr_assert_eq(dispatch_init(&a, DISPATCH_STEAL, 4, true, 0, peers, 2), 0);
    cr_assert_eq(dispatch_init(&b, DISPATCH_STEAL, 4, true, 1, peers, 2), 0);
    cr_assert_eq(dispatch_set_work(&a, &share_work, &ra), 0);
    cr_assert_eq(dispatch_set_work(&b, &share_work, &rb), 0);
    cr_assert_not_null(a.share);
    struct dispatch_job job = {0};
    int result;
    cr_assert(!dispatch_submit(&a, &job, 5, 10, &result));
    a.handoff_until_ns = 0; /* no hand-off wait in a one-thread test */
    dispatch_poll(&a);
    cr_assert_eq(shared_runs, 1, "a split job runs shared");
    cr_assert_eq(ndone, 1);
    cr_assert_eq(done_tags[0], 5);
    /* while a peer shares, an idle worker runs one piece of its job */
    atomic_store(&a.sharing, true);
    dispatch_poll(&b);
    cr_assert_eq(helps, 1);
    cr_assert_eq(atomic_load(&sb.pieces_helped), 1);
    atomic_store(&a.sharing, false);
    dispatch_poll(&b);
    cr_assert_eq(helps, 1, "nobody shares: nothing to help");
#else
    cr_skip_test("built without work stealing");
#endif
}
