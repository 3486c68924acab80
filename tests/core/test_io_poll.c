/* test_io_poll.c - io_poll() on both real backends (core/io_uring.c,
 * core/io_epoll.c) over a socketpair: no completion before the fd is ready,
 * one when it is (the events asked for), one-shot, and a cancelled poll
 * ends. */
#include <criterion/criterion.h>
#include <errno.h>
#include <sys/socket.h>
#include <unistd.h>

#include "io.h"

static int open_backend(struct io *io, enum io_kind kind)
{
    char why[160];
    return io_init(io, kind, 64, 64, 1024, 0, why, sizeof(why));
}

/* Waits up to ms for events; returns how many polls of tag came back, the
 * last one's res in *res. */
static int polls(struct io *io, uint64_t tag, int ms, int *res)
{
    struct io_event evs[16];
    int got = 0;
    int n = io_wait(io, evs, 16, ms);
    for (int i = 0; i < n; i++)
        if (evs[i].op == IO_OP_POLL && evs[i].tag == tag) {
            got++;
            *res = evs[i].res;
        }
    return got;
}

static void poll_cycle(enum io_kind kind)
{
    struct io io;
    int r = open_backend(&io, kind);
    if (r == -ENOSYS || r == -EPERM)
        cr_skip_test("backend refused here: %d", r);
    cr_assert_eq(r, 0);
    int sv[2];
    cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
    int res = 0;
    cr_assert_eq(io_poll(&io, sv[0], 7, IO_POLL_IN), 0);
    cr_assert_eq(polls(&io, 7, 50, &res), 0, "not readable yet: no completion");
    cr_assert_eq(write(sv[1], "x", 1), 1);
    cr_assert_eq(polls(&io, 7, 1000, &res), 1, "readable: one completion");
    cr_assert(res & IO_POLL_IN, "res %d", res);
    cr_assert_eq(polls(&io, 7, 50, &res), 0, "one-shot: nothing more until asked again");
    /* still readable (not read): asking again reports it again */
    cr_assert_eq(io_poll(&io, sv[0], 8, IO_POLL_IN), 0);
    cr_assert_eq(polls(&io, 8, 1000, &res), 1, "readiness left after a partial read is reported again");
    /* writable at once */
    cr_assert_eq(io_poll(&io, sv[0], 9, IO_POLL_OUT), 0);
    cr_assert_eq(polls(&io, 9, 1000, &res), 1);
    cr_assert(res & IO_POLL_OUT, "res %d", res);
    /* a cancelled poll ends: at most one completion comes for it (with
     * io_uring, -ECANCELED), and none after, whatever the fd does */
    char c;
    cr_assert_eq(read(sv[0], &c, 1), 1);
    cr_assert_eq(io_poll(&io, sv[0], 10, IO_POLL_IN), 0);
    io_poll_cancel(&io, sv[0], 10);
    int first = polls(&io, 10, 100, &res);
    cr_assert_leq(first, 1);
    if (first && kind == IO_URING)
        cr_assert_eq(res, -ECANCELED, "a poll cancelled before the fd was ready reported %d", res);
    cr_assert_eq(write(sv[1], "y", 1), 1);
    cr_assert_eq(polls(&io, 10, 100, &res), 0, "nothing after the cancel");
    close(sv[0]);
    close(sv[1]);
    io_fini(&io);
    io_close_wake(&io);
}

Test(io_poll, uring_one_shot_readiness)
{
    poll_cycle(IO_URING);
}

Test(io_poll, epoll_one_shot_readiness)
{
    poll_cycle(IO_EPOLL);
}
