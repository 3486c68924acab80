"""faultlib.py - shared pieces of the fault suite (tests/fault/*): primed under test
(benchmarks/lib/primedlab/spawn.py starts it on 127.0.0.1 with an ephemeral port and reads its
ready line), raw HTTP/1.1, /metrics, and the checks' report (TAP lines).

Every script runs under /usr/bin/python3, needs PRIMED_BIN (the binary under test)
and ends with check.finish(): exit 0 when every check held, 1 otherwise, 77 (meson:
skip) when the environment cannot run it.
"""
import os
import resource
import signal
import socket
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import pathlib, sys  # noqa: E401  the scripts' one package: benchmarks/lib/primedlab, found from any folder
sys.path.insert(0, str(next(p for p in pathlib.Path(__file__).resolve().parents if (p / "benchmarks/lib/primedlab").is_dir()) / "benchmarks/lib"))
from primedlab import spawn  # noqa: E402  (start / ready line / stop, shared with the other scripts)
from primedlab.tap import Tap  # noqa: E402  (the checks' lines, as tests/bench's)

SKIP = 77


def log(msg):
    print(msg, flush=True)


class Checks(Tap):
    """The scripts' TAP lines (primedlab.tap.Tap: one counter, `ok N - ...` / `not ok N - ...`);
    finish() prints the plan and a verdict line with the script's name and time, and exits with
    the verdict (meson reads the exit status)."""

    def __init__(self, name):
        super().__init__()
        self.name = name
        self.t0 = time.monotonic()

    def finish(self):
        rc = super().finish()
        dt = time.monotonic() - self.t0
        log(f"{self.name}: {'FAIL' if rc else 'PASS'} ({self.failed} of {self.n} failed) in {dt:.1f}s")
        sys.exit(rc)


def skip(msg):
    log(f"SKIP {msg}")
    sys.exit(SKIP)


def primed_bin():
    b = os.environ.get("PRIMED_BIN")
    if not b or not os.access(b, os.X_OK):
        skip("PRIMED_BIN is not set to an executable primed")
    return b


def raise_nofile(n=None):
    """Raises this process' soft fd limit to n (default: the hard limit); returns it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = hard if n is None else min(n, hard)
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


_pg_databases = 0


def _own_pg_database(e):
    """Under tests/store/with-postgres (PRIMED_TEST_PG_ADMIN set): a database of its own for this
    process, as each pod has its own SQLite file, so that suites that count one process's ids
    hold with PostgreSQL too (tests/store/postgres checks ids shared across processes)."""
    global _pg_databases
    admin = e.get("PRIMED_TEST_PG_ADMIN")
    if not admin or not e.get("PRIMED_DB", "").startswith("postgresql://"):
        return False
    psql, sock, port = admin.split("|")
    _pg_databases += 1
    name = f"p{os.getpid()}_{_pg_databases}"
    import subprocess
    subprocess.run([psql, "-h", sock, "-p", port, "-U", "postgres", "-d", "postgres", "-XAtqc",
                    f"CREATE DATABASE {name} OWNER primed"], check=True, timeout=30, stdout=subprocess.DEVNULL)
    e["PRIMED_DB"] = e["PRIMED_DB"].rsplit("/", 1)[0] + "/" + name
    return True


class Server(spawn.Primed):
    """primed under test (PRIMED_BIN) on 127.0.0.1:ephemeral, our environment plus env, no PORT.
    With PostgreSQL as the store, it waits (bounded) for /readyz 200: connecting is not start-up."""

    def __init__(self, args=(), env=None, nofile=None, ready_timeout=15):
        e = dict(os.environ)
        e.update(env or {})
        e.pop("PORT", None)
        pg = _own_pg_database(e)
        try:
            super().__init__(primed_bin(), args, env=e, ready_timeout=ready_timeout, nofile=nofile)
        except spawn.NotReady as err:
            raise RuntimeError(f"primed did not print its ready line: {err}") from None
        if pg and "--db" not in args:
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline:
                try:
                    if get(self.port, "/readyz", timeout=2)[0] == 200:
                        break
                except OSError:
                    pass
                time.sleep(0.05)

    def dispatch(self):
        return self.ready("dispatch") or "?"

    def rss_kib(self):
        return self.status_kib("VmRSS")

    def stop(self, timeout=10):
        return super().stop(timeout)

    def describe_exit(self):
        rc = self.proc.poll()
        if rc is None:
            return "running"
        if rc < 0:
            return f"killed by signal {-rc} ({signal.Signals(-rc).name})"
        return f"exit {rc}"


def read_response(sock, deadline, head_only=False):
    """Reads one HTTP/1.1 response (Content-Length framed; head_only: the head alone, as the
    answer to HEAD is) from sock. Returns (status, headers dict lower-case, body bytes, rest bytes)
    or raises."""
    buf = b""
    while b"\r\n\r\n" not in buf:
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError(f"EOF before a response head ({len(buf)} bytes)")
        buf += chunk
    head, _, rest = buf.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/1."):
        raise ValueError(f"bad status line {lines[0]!r}")
    status = int(parts[1])
    headers = {}
    for l in lines[1:]:
        k, _, v = l.partition(":")
        headers[k.strip().lower()] = v.strip()
    n = 0 if head_only else int(headers.get("content-length", "0"))
    while len(rest) < n:
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("EOF in a response body")
        rest += chunk
    return status, headers, rest[:n], rest[n:]


def get(port, path, timeout=5.0, method="GET"):
    """One request on a fresh connection. Returns (status, headers, body)."""
    deadline = time.monotonic() + timeout
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(f"{method} {path} HTTP/1.1\r\nHost: fault\r\nConnection: close\r\n\r\n".encode())
        st, h, body, _ = read_response(s, deadline)
        return st, h, body


def metrics(port, timeout=5.0):
    """/metrics as {name{labels}: value} (samples summed over nothing: verbatim keys)."""
    st, _, body = get(port, "/metrics", timeout)
    if st != 200:
        raise RuntimeError(f"/metrics answered {st}")
    return spawn.parse_metrics(body.decode())


def metric_sum(m, name, **labels):
    """Sum of the samples of one metric name whose labels include labels."""
    total = 0.0
    for key, v in m.items():
        base = key.split("{", 1)[0]
        if base != name:
            continue
        if all(f'{k}="{val}"' in key for k, val in labels.items()):
            total += v
    return total
