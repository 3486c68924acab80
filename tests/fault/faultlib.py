"""faultlib - what the scripts of tests/fault share: tests/lib on the path (primedtest as fl, and
primedlab), and Checks, whose lines carry the case a loop is on and which holds the checks most
scripts end a server with: still alive, back to idle, SIGTERM's exit 0. A script imports it from
its own folder, with sys.dont_write_bytecode set first (no __pycache__ in the source tree).
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import primedtest as fl  # noqa: E402

__all__ = ["Checks", "fl"]


class Checks(fl.Checks):
    """fl.Checks whose check lines start with .tag (the case a loop is on, e.g. "[steal] ")."""

    tag = ""

    def ok(self, cond, desc, detail=None):
        return super().ok(cond, self.tag + desc, detail)

    def alive(self, srv):
        """Whether srv still runs, as a check (its stderr tail printed when not)."""
        alive = self.ok(srv.alive(), f"server alive ({srv.describe_exit()})")
        if not alive:
            fl.log(srv.stderr_text()[-2000:])
        return alive

    def idle(self, srv, timeout, scrape_timeout=5.0):
        """Two checks: within timeout s, primed_connections_open is back to 1 (the scrape itself)
        and primed_requests_in_flight to 0 or 1 (never negative)."""
        op, inf, dt = fl.wait_idle(srv.port, timeout, scrape_timeout)
        self.ok(op == 1, f"primed_connections_open back to {op} after {dt:.1f}s (want 1: the scrape)")
        self.ok(inf in (0, 1), f"primed_requests_in_flight back to {inf} (want 0 or 1)")

    def stopped(self, srv, timeout=10, what="SIGTERM"):
        """SIGTERM, then exit 0 within timeout s as a check (srv's stderr tail printed when not)."""
        rc = srv.stop(timeout)
        if not self.ok(rc == 0, f"{what}: exit {rc}"):
            fl.log(srv.stderr_text()[-2000:])
        return rc
