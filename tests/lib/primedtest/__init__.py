"""primedtest - what the Python test scripts under tests/ share: primed under test (PRIMED_BIN,
started by primedlab.spawn.Primed on 127.0.0.1 with --port 0), one raw HTTP/1.1 exchange, /metrics
through prometheus_client's parser, a keep-alive load (Load), and the checks' TAP lines with the exit
status meson reads (0 every check held, 1 one failed, 77 skip).

A script puts tests/lib on sys.path and imports this; it puts benchmarks/lib there in turn, so
primedlab (spawn, tap, pglib, kustomize) is importable too. parts.py runs PART scripts (the chain,
gateway, chaos and soak suites); zipkin.py is the span collector. Every socket wait has a timeout.
"""
import collections
import itertools
import json
import os
import pathlib
import resource
import signal
import socket
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "benchmarks" / "lib"))
from primedlab import spawn  # noqa: E402
from primedlab.tap import Tap  # noqa: E402
from primedlab.pglib import wait_until  # noqa: E402,F401  (re-exported: the scripts' one poll loop)

SKIP = 77
SHARED = ROOT.parent / "shared"   # the CRDs and the Zipkin API, beside the project on build machines


def log(msg):
    print(msg, flush=True)


class Checks(Tap):
    """Tap whose finish() prints a verdict line with the script's name and time, then exits; its
    check lines start with .tag (the case a loop is on, e.g. "[steal] "), and it holds the checks
    most scripts end a server with: still alive, back to idle, SIGTERM's exit 0."""

    tag = ""

    def __init__(self, name):
        super().__init__()
        self.name, self.t0 = name, time.monotonic()

    def ok(self, cond, desc, detail=None):
        return super().ok(cond, self.tag + desc, detail)

    def finish(self):
        rc = super().finish()
        log(f"{self.name}: {'FAIL' if rc else 'PASS'} ({self.failed} of {self.n} failed) "
            f"in {time.monotonic() - self.t0:.1f}s")
        sys.exit(rc)

    def alive(self, srv):
        """Whether srv still runs, as a check (its stderr tail printed when not)."""
        alive = self.ok(srv.alive(), f"server alive ({srv.describe_exit()})")
        if not alive:
            log(srv.stderr_text()[-2000:])
        return alive

    def idle(self, srv, timeout, scrape_timeout=5.0):
        """Two checks: within timeout s, primed_connections_open is back to 1 (the scrape itself)
        and primed_requests_in_flight to 0 or 1 (never negative)."""
        op, inf, dt = wait_idle(srv.port, timeout, scrape_timeout)
        self.ok(op == 1, f"primed_connections_open back to {op} after {dt:.1f}s (want 1: the scrape)")
        self.ok(inf in (0, 1), f"primed_requests_in_flight back to {inf} (want 0 or 1)")

    def stopped(self, srv, timeout=10, what="SIGTERM"):
        """SIGTERM, then exit 0 within timeout s as a check (srv's stderr tail printed when not)."""
        rc = srv.stop(timeout)
        if not self.ok(rc == 0, f"{what}: exit {rc}"):
            log(srv.stderr_text()[-2000:])
        return rc


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


_pg_databases = itertools.count(1)


def _own_pg_database(e):
    """Under tests/store/with-postgres (PRIMED_TEST_PG_ADMIN set): a database of its own for this
    process, as each pod has its own SQLite file, so that suites that count one process's ids
    hold with PostgreSQL too (tests/store/postgres checks ids shared across processes)."""
    admin = e.get("PRIMED_TEST_PG_ADMIN")
    if not admin or not e.get("PRIMED_DB", "").startswith("postgresql://"):
        return False
    psql, sock, port = admin.split("|")
    name = f"p{os.getpid()}_{next(_pg_databases)}"
    subprocess.run([psql, "-h", sock, "-p", port, "-U", "postgres", "-d", "postgres", "-XAtqc",
                    f"CREATE DATABASE {name} OWNER primed"], check=True, timeout=30,
                   stdout=subprocess.DEVNULL)
    e["PRIMED_DB"] = e["PRIMED_DB"].rsplit("/", 1)[0] + "/" + name
    return True


class Server(spawn.Primed):
    """primed under test (PRIMED_BIN, or exe: a wrapper that runs it) on 127.0.0.1:ephemeral, our
    environment plus env, no PORT. With PostgreSQL as the store, it waits (bounded) for /readyz
    200: connecting is not start-up."""

    def __init__(self, args=(), env=None, nofile=None, ready_timeout=15, exe=None):
        e = dict(os.environ, **(env or {}))
        e.pop("PORT", None)
        pg = _own_pg_database(e)
        try:
            super().__init__(exe or primed_bin(), args, env=e, ready_timeout=ready_timeout,
                             nofile=nofile)
        except spawn.NotReady as err:
            raise RuntimeError(f"primed did not print its ready line: {err}") from None
        if pg and "--db" not in args:
            self.wait_ready()

    def wait_ready(self, timeout=15):
        """Polls /readyz until 200 (True) or timeout s pass (False)."""
        return wait_until(lambda: spawn.http_status(self.port, "/readyz", 2) == 200, timeout)

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
        return f"killed by signal {-rc} ({signal.Signals(-rc).name})" if rc < 0 else f"exit {rc}"


def _recv(sock, deadline, where):
    sock.settimeout(max(0.01, deadline - time.monotonic()))
    chunk = sock.recv(65536)
    if not chunk:
        raise ConnectionError(f"EOF {where}")
    return chunk


def read_response(sock, deadline, head_only=False, pre=b""):
    """One HTTP/1.1 response (Content-Length framed; head_only: the head alone, as the answer to
    HEAD is) from pre (bytes read before: the last call's rest) and sock: (status, headers dict
    lower-case, body bytes, rest bytes), or raises."""
    buf = pre
    while b"\r\n\r\n" not in buf:
        buf += _recv(sock, deadline, f"before a response head ({len(buf)} bytes)")
    head, _, rest = buf.partition(b"\r\n\r\n")
    status, *lines = head.decode("latin-1").split("\r\n")
    parts = status.split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/1."):
        raise ValueError(f"bad status line {status!r}")
    headers = {k.strip().lower(): v.strip() for k, _, v in (l.partition(":") for l in lines)}
    n = 0 if head_only else int(headers.get("content-length", "0"))
    while len(rest) < n:
        rest += _recv(sock, deadline, "in a response body")
    return int(parts[1]), headers, rest[:n], rest[n:]


class Resp:
    """One answer: status (None when there was none), lower-case headers, body text (raw: bytes),
    ms taken, error."""

    def __init__(self, status, headers, raw, ms, error=None):
        self.status, self.headers, self.raw, self.ms, self.error = status, headers, raw, ms, error
        self.body = raw.decode("utf-8", "replace")

    def __repr__(self):
        if self.status is None:
            return f"no answer after {self.ms:.0f} ms ({self.error})"
        return f"{self.status} {self.body[:120]!r} in {self.ms:.0f} ms"

    def json(self):
        """The body as JSON, or None when it is not JSON."""
        try:
            return json.loads(self.body)
        except ValueError:
            return None


def req(port, path, headers=None, timeout=5.0, sock=None, method="GET"):
    """One request: on sock (keep-alive) when given, else on a fresh connection with Connection: close.
    Never raises for the server's behaviour: no answer is Resp(status=None)."""
    extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
    t0 = time.monotonic()
    deadline = t0 + timeout
    own = sock is None
    try:
        if own:
            sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        sock.settimeout(timeout)
        conn = "Connection: close\r\n" if own else ""
        sock.sendall(f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{extra}{conn}\r\n"
                     .encode())
        st, h, body, _ = read_response(sock, deadline, head_only=method == "HEAD")
        return Resp(st, h, body, (time.monotonic() - t0) * 1e3)
    except (OSError, ValueError) as e:
        return Resp(None, {}, b"", (time.monotonic() - t0) * 1e3, f"{type(e).__name__}: {e}")
    finally:
        if own and sock is not None:
            sock.close()


def get(port, path, timeout=5.0, method="GET"):
    """req() on a fresh connection as (status, headers, body bytes); raises OSError for no answer."""
    r = req(port, path, timeout=timeout, method=method)
    if r.status is None:
        raise OSError(r.error)
    return r.status, r.headers, r.raw


def parse_metrics(text):
    """A /metrics body as a list of prometheus_client samples (name, labels, value)."""
    from prometheus_client.parser import text_string_to_metric_families
    return [s for fam in text_string_to_metric_families(text) for s in fam.samples]


def metrics(port, timeout=5.0):
    """/metrics of the primed on port, parsed (parse_metrics); RuntimeError unless 200."""
    st, _, body = get(port, "/metrics", timeout)
    if st != 200:
        raise RuntimeError(f"/metrics answered {st}")
    return parse_metrics(body.decode())


def metric_sum(samples, name, **labels):
    """The sum of the samples called name whose labels include labels."""
    return sum(s.value for s in samples if s.name == name
               and all(s.labels.get(k) == v for k, v in labels.items()))


def counter(port, name, **labels):
    """metric_sum() of /metrics on port, or a text saying why /metrics did not answer."""
    try:
        return metric_sum(metrics(port), name, **labels)
    except (OSError, ValueError, RuntimeError) as e:
        return f"no /metrics ({e})"


def wait_idle(port, timeout, scrape_timeout=5.0):
    """Polls /metrics until primed_connections_open <= 1 (the scrape's own) and
    primed_requests_in_flight <= 1, or timeout s pass: (connections open, in flight, seconds);
    the counts are None when /metrics never answered."""
    t0, last = time.monotonic(), [None, None]

    def idle():
        try:
            m = metrics(port, scrape_timeout)
        except (OSError, ValueError, RuntimeError):  # workers busy with primes nobody waits for
            return False
        last[:] = metric_sum(m, "primed_connections_open"), metric_sum(m, "primed_requests_in_flight")
        return last[0] <= 1 and last[1] <= 1
    wait_until(idle, timeout, 0.2)
    return last[0], last[1], time.monotonic() - t0


def event_id(body):
    """The id of a /callme/ping (or /caller/ping) answer: `name(id=N): ...`."""
    text = body.decode() if isinstance(body, bytes) else body
    i = text.index("(id=") + 4
    return int(text[i:text.index(")", i)])


class Load:
    """conns keep-alive connections asking paths in turn (gap s apart) until stop(); with probe, a
    /healthz prober every 20 ms as well. .rec: (sent, done, path, status, body) per request,
    monotonic times; status None (body the error) when the connection was lost, cut or refused
    (a refused connect is retried 50 ms later). .health: (sent, status or None, ms) per probe.
    pause: seconds a client waits after a 503, so that a store that is down is not met by a busy
    loop taking the CPUs its recovery needs."""

    def __init__(self, port, conns=8, paths=("/callme/ping",), gap=0.0, pause=0.0,
                 answer_timeout=15.0, probe=False):
        self.port, self.paths, self.gap, self.pause = port, list(paths), gap, pause
        self.answer_timeout = answer_timeout
        self.rec, self.health = [], []
        self.lock = threading.RLock()
        self.stopping = threading.Event()
        self.threads = [threading.Thread(target=self._client, args=(i,), daemon=True)
                        for i in range(conns)]
        if probe:
            self.threads.append(threading.Thread(target=self._prober, daemon=True))
        for t in self.threads:
            t.start()

    def _add(self, to, item):
        with self.lock:
            to.append(item)

    def _client(self, k):
        while not self.stopping.is_set():
            t0, path = time.monotonic(), self.paths[k % len(self.paths)]
            try:
                s = socket.create_connection(("127.0.0.1", self.port), timeout=5)
            except OSError as e:
                self._add(self.rec, (t0, time.monotonic(), path, None, f"connect: {e}"))
                time.sleep(0.05)
                continue
            with s:
                try:
                    while not self.stopping.is_set():
                        t0, path = time.monotonic(), self.paths[k % len(self.paths)]
                        k += 1
                        s.sendall(f"GET {path} HTTP/1.1\r\nHost: load\r\n\r\n".encode())
                        st, h, body, _ = read_response(s, t0 + self.answer_timeout)
                        self._add(self.rec, (t0, time.monotonic(), path, st, body))
                        if h.get("connection", "").lower() == "close":
                            break
                        time.sleep(self.pause if st == 503 and self.pause else self.gap)
                except (OSError, ValueError) as e:
                    self._add(self.rec, (t0, time.monotonic(), path, None, f"connection: {e!r}"))

    def _prober(self):
        while not self.stopping.is_set():
            t0 = time.monotonic()
            r = req(self.port, "/healthz", timeout=5)
            self._add(self.health, (t0, r.status, r.ms))
            time.sleep(0.02)

    @property
    def answers(self):
        """The requests answered, as rec has them."""
        with self.lock:
            return [a for a in self.rec if a[3] is not None]

    @property
    def ids(self):
        return [event_id(a[4]) for a in self.answers if a[3] == 200]

    @property
    def statuses(self):
        return dict(collections.Counter(a[3] for a in self.answers))

    @property
    def slowest(self):
        return max((a[1] - a[0] for a in self.answers), default=0.0)

    @property
    def last_ok(self):
        return max((a[1] for a in self.answers if a[3] == 200), default=0.0)

    @property
    def words(self):
        """The 503s by their words after the store's name."""
        return dict(collections.Counter(a[4].split(b": ", 1)[-1].strip().decode(errors="replace")
                                        for a in self.answers if a[3] == 503))

    def lost(self):
        """Connections lost, cut or refused."""
        with self.lock:
            return [a[4] for a in self.rec if a[3] is None]

    def problems(self):
        """Connections lost, cut or refused, and answers neither 200 nor 503."""
        return self.lost() + [f"{a[3]}: {a[4][:100]!r}" for a in self.answers
                              if a[3] not in (200, 503)]

    def count(self):
        with self.lock:
            return sum(1 for a in self.rec if a[3] == 200)

    def first(self, status, after):
        """The first request sent at or after `after` and answered status, or None."""
        return next((a for a in self.answers if a[0] >= after and a[3] == status), None)

    def stop(self):
        self.stopping.set()
        for t in self.threads:
            t.join(self.answer_timeout + 5)


def fd_count(pid):
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return -1
