"""storelib - what tests/store/postgres and tests/store/faults share: tests/lib on the path (so
primedtest and primedlab import), the ids a cluster's `events` database holds, and every
PostgreSQL process stopped and let run again. A script imports it from its own folder, with
sys.dont_write_bytecode set first (no __pycache__ in the source tree).
"""
import contextlib
import os
import signal
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import primedtest as fl  # noqa: E402
from primedtest import event_id  # noqa: E402
from primedlab import pglib, spawn  # noqa: E402

__all__ = ["event_id", "fl", "frozen", "pglib", "spawn", "stored_ids"]  # the scripts import these from here


def stored_ids(pg):
    """The ids in the event table of pg's database `events`."""
    return {int(x) for x in pg.psql("SELECT id FROM event", db="events").split()}


@contextlib.contextmanager
def frozen(pg):
    """Every process of pg (the postmaster and its backends) SIGSTOPped for the with block."""
    pids = pg.pids()
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):  # a backend that ended meanwhile
                os.kill(pid, signal.SIGCONT)
