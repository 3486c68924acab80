"""faultlib.py - shared pieces of the fault suite (tests/fault/*): start primed on
127.0.0.1 with an ephemeral port, read its ready line, talk raw HTTP/1.1, read
/metrics and the process' RSS, and report checks.

Every script runs under /usr/bin/python3, needs PRIMED_BIN (the binary under test)
and ends with check.finish(): exit 0 when every check held, 1 otherwise, 77 (meson:
skip) when the environment cannot run it.
"""
import os
import re
import resource
import signal
import socket
import subprocess
import sys
import threading
import time

SKIP = 77


def log(msg):
    print(msg, flush=True)


class Checks:
    """Collects pass/fail lines; finish() exits with the verdict."""

    def __init__(self, name):
        self.name = name
        self.failed = 0
        self.t0 = time.monotonic()

    def ok(self, cond, msg):
        log(("ok   " if cond else "FAIL ") + msg)
        if not cond:
            self.failed += 1
        return cond

    def finish(self):
        dt = time.monotonic() - self.t0
        verdict = "FAIL" if self.failed else "PASS"
        log(f"{self.name}: {verdict} ({self.failed} failed) in {dt:.1f}s")
        sys.exit(1 if self.failed else 0)


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


class Server:
    """One primed process on 127.0.0.1:ephemeral; stderr lines kept in .lines."""

    def __init__(self, args=(), env=None, nofile=None, ready_timeout=15):
        e = dict(os.environ)
        e.update(env or {})
        e.pop("PORT", None)

        def pre():
            if nofile:
                resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

        cmd = [primed_bin(), "--host", "127.0.0.1", "--port", "0", *args]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, env=e, preexec_fn=pre)
        self.lines = []
        self.ready_line = None
        self.port = None
        got = threading.Event()

        def reader():
            for raw in self.proc.stderr:
                line = raw.decode("utf-8", "replace").rstrip("\n")
                self.lines.append((time.monotonic(), line))
                if self.port is None and "primed: ready" in line:
                    m = re.search(r"port=(\d+)", line)
                    if m:
                        self.ready_line = line
                        self.port = int(m.group(1))
                        got.set()
            got.set()

        self.reader = threading.Thread(target=reader, daemon=True)
        self.reader.start()
        if not got.wait(ready_timeout) or self.port is None:
            self.kill()
            tail = "\n".join(l for _, l in self.lines[-10:])
            raise RuntimeError(f"primed did not print its ready line: {' '.join(cmd)}\n{tail}")
        self.pid = self.proc.pid

    def dispatch(self):
        m = re.search(r"dispatch=(\w+)", self.ready_line or "")
        return m.group(1) if m else "?"

    def alive(self):
        return self.proc.poll() is None

    def rss_kib(self):
        try:
            with open(f"/proc/{self.pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1])
        except OSError:
            return None
        return None

    def signal(self, sig=signal.SIGTERM):
        if self.alive():
            self.proc.send_signal(sig)

    def wait(self, timeout):
        """Exit status, or None when still running after timeout seconds."""
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def stop(self, timeout=10):
        """SIGTERM, wait; returns the exit status (killed: None)."""
        self.signal(signal.SIGTERM)
        rc = self.wait(timeout)
        if rc is None:
            self.kill()
        self.reader.join(2)
        return rc

    def stderr_text(self):
        return "\n".join(l for _, l in self.lines)

    def describe_exit(self):
        rc = self.proc.poll()
        if rc is None:
            return "running"
        if rc < 0:
            return f"killed by signal {-rc} ({signal.Signals(-rc).name})"
        return f"exit {rc}"


def read_response(sock, deadline):
    """Reads one HTTP/1.1 response (Content-Length framed) from sock.
    Returns (status, headers dict lower-case, body bytes, rest bytes) or raises."""
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
    n = int(headers.get("content-length", "0"))
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
    out = {}
    for line in body.decode().splitlines():
        if not line or line.startswith("#"):
            continue
        key, _, val = line.rpartition(" ")
        try:
            out[key] = float(val)
        except ValueError:
            pass
    return out


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
