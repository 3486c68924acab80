/* conn_expect.h - the checks on a connection's state that tests/core's
 * connection tests and tests/app's route tests both make, over the scripted
 * backend (io_script.h): a request that waits, a connection paused by the
 * throttle. Each fails the test (Criterion) when the state is not so; it
 * owns nothing and changes nothing.
 */
#ifndef PRIMED_CONN_EXPECT_H
#define PRIMED_CONN_EXPECT_H

#include "conn.h"
#include "io_script.h"

/* fd's connection (by its last receive) waits on its request
 * (CONN_WAITING). Returns it. */
struct conn *conn_expect_waiting(struct conn_pool *p, struct io_script *s, int fd);
/* fd's connection (by its last send) is paused by the throttle: no receive
 * armed, CONN_F_PAUSED, no timer. Returns it. */
struct conn *conn_expect_paused(struct conn_pool *p, struct io_script *s, int fd);

#endif
