/* test_dispatch.c - inline and stealing execution (src/core/dispatch.c) on
 * one thread: the pool bound, the wait queue in order, the throttle, the
 * hooks, and the job function it is given (a stub: the core knows no prime).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "build_info.h"
#include "clock.h"
#include "dispatch.h"

#include <sys/eventfd.h>
#include <unistd.h>

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
    cr_assert(fifo_empty(&d->waitq));
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

static uint64_t stats_steals(struct dispatch_stats *st)
{
    return atomic_load(&st->steals);
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

/* Two workers on one thread: b's io is a real eventfd, so that a wake sent
 * to b can be read back. */
static struct dispatch pa, pb;
static struct dispatch *ppeers[2] = {&pa, &pb};
static struct dispatch_stats sa, sb;
static unsigned ra, rb;
static struct io io_a, io_b;

static void make_pair(void)
{
    memset(&pa, 0, sizeof(pa));
    memset(&pb, 0, sizeof(pb));
    shares_made = shared_runs = helps = ndone = 0;
    share_fails = false;
    io_a.wake_fd = -1;
    io_b.wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    cr_assert_geq(io_b.wake_fd, 0);
    pa.stats = &sa;
    pb.stats = &sb;
    pa.io = &io_a;
    pb.io = &io_b;
    pa.hooks = pb.hooks = (struct dispatch_hooks){.done = on_done, .resume = on_resume};
    cr_assert_eq(dispatch_init(&pa, DISPATCH_STEAL, 4, true, 0, ppeers, 2), 0);
    cr_assert_eq(dispatch_init(&pb, DISPATCH_STEAL, 4, true, 1, ppeers, 2), 0);
    cr_assert_eq(dispatch_set_work(&pa, &share_work, &ra), 0);
    cr_assert_eq(dispatch_set_work(&pb, &share_work, &rb), 0);
    cr_assert_not_null(pa.share);
}

static bool b_was_woken(void)
{
    uint64_t n;
    return read(io_b.wake_fd, &n, sizeof(n)) == sizeof(n);
}

/* "Just now" below means within QUIET_NS (1 ms) of `since`: where more passed (a preempted test
 * on a busy machine, qemu-user's emulation), the case did not happen and says so. */
#if PRIMED_HAVE_STEAL
static void still_just_now(uint64_t since, const char *what)
{
    if (clock_mono_ns() - since >= 1000000u)
        cr_skip_test("%s: more than 1 ms passed, the case did not happen", what);
}
#endif

/* A peer that answered a job of its own less than 1 ms ago (QUIET_NS) is
 * about to be sent its next request (-c2, -c3): a job is not shared with it,
 * asleep or not; once it has been quiet that long, it is. */
Test(dispatch, split_leaves_out_a_peer_that_just_answered)
{
#if PRIMED_HAVE_STEAL
    make_pair();
    struct dispatch_job j1 = {0};
    int result = 0;
    /* b asleep, but it answered a job of its own just now: a's job is
     * queued whole, b woken to take it as a thief */
    atomic_store(&pb.sleeping, 1);
    uint64_t now = clock_mono_ns();
    atomic_store(&pb.answered_ns, now);
    bool queued = !dispatch_submit(&pa, &j1, 1, 10, &result);
    still_just_now(now, "b's answer");
    cr_assert(queued, "b just answered: queued, not run here shared");
    cr_assert(b_was_woken(), "b is woken to take the task");
    pa.handoff_until_ns = 0;
    dispatch_poll(&pa);
    cr_assert_eq(ndone, 1);
    cr_assert_eq(shared_runs, 0, "a peer that just answered does not help");
    /* b quiet for 2 ms: run at once, shared */
    atomic_store(&pb.sleeping, 1);
    atomic_store(&pb.answered_ns, clock_mono_ns() - 2000000u);
    cr_assert(dispatch_submit(&pa, &j1, 2, 10, &result), "run at once, here");
    cr_assert_eq(shared_runs, 1, "a quiet idle peer helps");
    cr_assert(b_was_woken());
    /* a job b takes from a that answered just now: whole */
    atomic_store(&pb.sleeping, 0);
    now = clock_mono_ns();
    atomic_store(&pa.answered_ns, now);
    cr_assert(!dispatch_submit(&pa, &j1, 3, 10, &result));
    dispatch_poll(&pb);
    still_just_now(now, "a's answer");
    cr_assert_eq(stats_steals(&sb), 1);
    cr_assert_eq(shared_runs, 1, "stolen from an owner that just answered: whole");
    dispatch_poll(&pa);
    cr_assert_eq(ndone, 2, "the owner answers it");
    /* the same with a quiet owner: shared */
    atomic_store(&pa.answered_ns, clock_mono_ns() - 2000000u);
    cr_assert(!dispatch_submit(&pa, &j1, 4, 10, &result));
    dispatch_poll(&pb);
    cr_assert_eq(shared_runs, 2, "stolen from a quiet owner: shared");
    dispatch_poll(&pa);
    cr_assert_eq(ndone, 3);
    close(io_b.wake_fd);
#else
    cr_skip_test("built without work stealing");
#endif
}

/* The split policy: a job is shared only when nothing else waits anywhere
 * and a peer is idle to help; an idle peer runs one piece of a shared job. */
Test(dispatch, split_shares_only_with_an_idle_peer_and_nothing_waiting)
{
#if PRIMED_HAVE_STEAL
    make_pair();
    struct dispatch_job j1 = {0}, j2 = {0};
    int result;
    /* b busy (not asleep): a's job runs whole */
    cr_assert(!dispatch_submit(&pa, &j1, 1, 10, &result));
    dispatch_poll(&pa);
    cr_assert_eq(ndone, 1);
    cr_assert_eq(shared_runs, 0, "no idle peer: whole");
    cr_assert_eq(ra, 1);
    /* b asleep and nothing out or queued: a runs the job at once, shared
     * (no hand-off to b and no answer back through the done list), and
     * wakes b to help */
    atomic_store(&pb.sleeping, 1);
    result = 0;
    cr_assert(dispatch_submit(&pa, &j1, 2, 10, &result), "run at once, here");
    cr_assert_eq(result, 30, "run_shared's result");
    cr_assert_eq(shared_runs, 1, "an idle peer and nothing waiting: shared");
    cr_assert(b_was_woken(), "the sleeping peer is woken to help");
    cr_assert_eq(atomic_load(&pb.sleeping), 0, "one waker per sleep");
    cr_assert_eq(ndone, 1, "answered by the return value, not the done hook");
    cr_assert_eq(dispatch_out(&pa), 0);
    /* b asleep, but a job of a's is queued: the next is queued too, whole */
    cr_assert(!dispatch_submit(&pa, &j1, 3, 10, &result), "b busy: queued");
    atomic_store(&pb.sleeping, 1);
    cr_assert(!dispatch_submit(&pa, &j2, 4, 10, &result), "a task is out: queued");
    cr_assert(b_was_woken(), "the thief's wake for the queued task");
    atomic_store(&pb.sleeping, 1); /* it went back to sleep without stealing */
    pa.handoff_until_ns = 0;
    dispatch_poll(&pa);
    cr_assert_eq(shared_runs, 1, "another job waits: whole");
    cr_assert_eq(ndone, 2);
    cr_assert_eq(done_tags[1], 3, "oldest first");
    atomic_store(&pb.sleeping, 0);
    dispatch_poll(&pa);
    cr_assert_eq(ndone, 3);
    cr_assert_eq(done_tags[2], 4);
    /* a job b takes from a (a handed it over, quiet for a while): shared,
     * its owner helps */
    atomic_store(&pb.sleeping, 0);
    atomic_store(&pa.sleeping, 0);
    atomic_store(&pa.answered_ns, 0);
    cr_assert(!dispatch_submit(&pa, &j1, 5, 10, &result));
    dispatch_poll(&pb);
    cr_assert_eq(shared_runs, 2, "stolen with nothing else waiting: shared");
    cr_assert_eq(stats_steals(&sb), 1);
    dispatch_poll(&pa);
    cr_assert_eq(ndone, 4, "the owner answers it");
    /* while a peer shares, an idle worker runs one piece of its job */
    atomic_store(&pa.sharing, true);
    dispatch_poll(&pb);
    cr_assert_eq(helps, 1);
    cr_assert_eq(atomic_load(&sb.pieces_helped), 1);
    atomic_store(&pa.sharing, false);
    dispatch_poll(&pb);
    cr_assert_eq(helps, 1, "nobody shares: nothing to help");
    close(io_b.wake_fd);
#else
    cr_skip_test("built without work stealing");
#endif
}
