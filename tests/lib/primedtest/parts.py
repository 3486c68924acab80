"""primedtest.parts - the PART scripts of primed's upstream calls: tests/upstream/chain (caller ->
callme), tests/gateway/gateway (the fan-out), tests/upstream/chaos and soak.

A script is a set of PARTs; each part gets a Ctx that starts primed processes (primedtest.Server,
--io BACKEND appended when given) and tests/upstream/hostile.py subprocesses, and stops every one
of them in close(). A process that does not start is a failed check line and ends the part
(Abort). req() is one HTTP/1.1 exchange that never raises for the server's behaviour. run() is
the scripts' main: exit 0 (every check held) / 1 / 2 (usage) / 77 (no PRIMED_BIN).
"""
import argparse
import json
import os
import re
import select
import socket
import subprocess
import sys
import threading
import traceback

import primedtest as fl
from primedtest import req  # noqa: F401  (the scripts take it from here too)
from primedlab import spawn

HOSTILE_PY = str(fl.ROOT / "tests" / "upstream" / "hostile.py")


class Abort(Exception):
    """A part cannot go on (a process did not start): the failure is already a check line."""


_HELD = []  # closed_port()'s sockets: bound for the life of the script


def closed_port():
    """A port on 127.0.0.1 where connect is refused: bound by a socket that never listens, and held
    for the life of the script. A port closed again at once is free for the next bind to port 0: a
    primed started after it could get it, and answer its own upstream calls (a CI failure)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    _HELD.append(s)
    return s.getsockname()[1]


def concurrent(n, fn):
    """Runs fn(i) for i < n in threads started together; returns the results (None: no result
    in 30 s)."""
    out = [None] * n
    go = threading.Barrier(n + 1, timeout=10)

    def one(i):
        try:
            go.wait()
        except threading.BrokenBarrierError:
            return
        out[i] = fn(i)

    ts = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(n)]
    for t in ts:
        t.start()
    go.wait()
    for t in ts:
        t.join(30)
    return out


def wait_port_free(port, host="127.0.0.1", timeout=10.0):
    """Waits until host:port can be bound again (a SIGKILLed primed's io_uring lets go of its
    listener after the process is reaped, not at once). Returns whether it could."""
    def free():
        with socket.socket() as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                s.bind((host, port))
                return True
            except OSError:
                return False
    return fl.wait_until(free, timeout)


class HostileProc:
    """tests/upstream/hostile.py as a subprocess (its own interpreter: its endless and drip
    threads never share a GIL with the suite's timing)."""

    def __init__(self, ready_timeout=10):
        self.proc = subprocess.Popen([sys.executable, HOSTILE_PY], stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        out = self.proc.stdout
        line = out.readline().decode() if select.select([out], [], [], ready_timeout)[0] else ""
        m = re.match(r"hostile: ready port=(\d+)", line)
        if not m:
            self.stop()
            raise RuntimeError("hostile.py printed no ready line")
        self.port = int(m.group(1))

    def _ctl(self, method, path):
        r = req(self.port, path, method=method)
        if r.status != 200:
            raise RuntimeError(f"hostile {method} {path} answered {r!r}")
        return r.body

    def mode(self, name):
        assert self._ctl("POST", "/_mode/" + name) == f"mode {name}\n"

    def reset(self):
        self._ctl("POST", "/_reset")

    def recorded(self):
        return json.loads(self._ctl("GET", "/_recorded"))

    def conns(self):
        return json.loads(self._ctl("GET", "/_conns"))

    def url(self, path="/callme/ping"):
        return f"http://127.0.0.1:{self.port}{path}"

    def stop(self):
        spawn.terminate(self.proc, 5)


class Ctx:
    """One part's checks and processes: primed() and hostile() start them, close() stops them all
    (printing the stderr tail of each primed when a check failed)."""

    def __init__(self, check, io):
        self.check, self.io = check, io
        self.servers = []   # (name, fl.Server)
        self.cleanup = []

    def ok(self, cond, msg):
        return self.check.ok(cond, msg)

    def primed(self, name, args, env=None, exe=None):
        args = list(args) + (["--io", self.io] if self.io else [])
        try:
            s = fl.Server(args, env=env, exe=exe)
        except RuntimeError as e:
            self.ok(False, f"{name} starts ({' '.join(args)}): {e}")
            raise Abort() from None
        self.servers.append((name, s))
        self.ok(True, f"{name} starts on port {s.port} ({' '.join(args)})")
        return s

    def hostile(self):
        try:
            h = HostileProc()
        except (RuntimeError, OSError) as e:
            self.ok(False, f"hostile.py starts: {e}")
            raise Abort() from None
        self.cleanup.append(h.stop)
        return h

    def close(self):
        for name, s in self.servers:
            if self.check.failed:
                tail = s.stderr_text(8)
                if tail:
                    print("\n".join(f"# {name} stderr: {l}" for l in tail.splitlines()), flush=True)
            try:
                s.stop()
            except Exception as e:  # noqa: BLE001  (stopping must go on for the others)
                print(f"# {name}: stop: {e}")
        for f in reversed(self.cleanup):
            try:
                f()
            except Exception as e:  # noqa: BLE001
                print(f"# cleanup: {e}")


def run(prog, parts, argv, scrub=(), ctx_class=Ctx, options=None):
    """The main of a PART script: `prog PART [PRIMED_BIN] [--io BACKEND]` and what options(parser)
    adds (ctx.args holds them all). Clears the environment variables in scrub, runs parts[PART]
    with a ctx_class, exits through Checks.finish() (2 on a usage error, as argparse does)."""
    ap = argparse.ArgumentParser(prog=prog)
    ap.add_argument("part", choices=list(parts))
    ap.add_argument("primed", nargs="?", help="the binary under test (default: $PRIMED_BIN)")
    ap.add_argument("--io", help="passed to every primed started")
    if options:
        options(ap)
    args = ap.parse_args(argv)
    part, io = args.part, args.io
    if args.primed:
        os.environ["PRIMED_BIN"] = os.path.abspath(args.primed)
    for k in scrub:
        os.environ.pop(k, None)
    fl.primed_bin()  # exit 77 without a binary
    fl.raise_nofile()
    check = fl.Checks(f"{prog} {part}" + (f" --io {io}" if io else ""))
    ctx = ctx_class(check, io)
    ctx.args = args
    try:
        parts[part](ctx)
    except Abort:
        pass
    except Exception as e:  # noqa: BLE001  (a surprise is a failed check, never a crash)
        traceback.print_exc(file=sys.stdout)
        check.ok(False, f"{part}: unexpected {type(e).__name__}: {e}")
    finally:
        ctx.close()
    check.finish()
