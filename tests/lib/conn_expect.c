/* conn_expect.c - checks on a connection's state over the scripted backend
 * (conn_expect.h), shared by tests/core/test_conn.c and tests/app's route
 * tests. Reads the pool and the script, never changes either.
 */
#include "conn_expect.h"

#include <criterion/criterion.h>

struct conn *conn_expect_waiting(struct conn_pool *p, struct io_script *s, int fd)
{
    struct conn *c = conn_of(p, s->fd[fd].recv_tag);
    cr_assert(c, "fd %d: a connection", fd);
    cr_assert_eq(c->state, CONN_WAITING, "fd %d: its request waits", fd);
    return c;
}

struct conn *conn_expect_paused(struct conn_pool *p, struct io_script *s, int fd)
{
    struct conn *c = conn_of(p, s->fd[fd].send_tag);
    cr_assert(c, "fd %d: a connection", fd);
    cr_assert(!s->fd[fd].recv_armed, "fd %d paused: no receive while throttled", fd);
    cr_assert(c->flags & CONN_F_PAUSED, "fd %d", fd);
    cr_assert_eq(c->timer.list, 0, "fd %d: a paused connection runs no timer", fd);
    return c;
}
