"""primedlab/spawn.py - a process started, probed, sampled and stopped, for every script.

Owns: primed started on 127.0.0.1 with `--port 0` up to its `primed: ready ... port=N` line, its
stderr drained and kept line by line; stopping a process or a process group (SIGTERM, bounded
wait, SIGKILL); free ports for what cannot take --port 0; the lab's one HTTP GET and /metrics as a
dict; a built program behind a cross build's exe wrapper; keep-alive connections held open; CPU
time, threads and memory (psutil); one wrk command line and its WRKSTAT line (bench runs it).
Never installs, builds or measures anything itself.
"""

import contextlib
import http.client
import os
import random
import re
import resource
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

LUA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "wrk_report.lua")


def exit_on_sigterm():
    """SIGTERM ends the calling script as Ctrl-C does, unwinding the finally blocks that stop
    what it started (by default SIGTERM ends Python at once and leaves them running)."""
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))


def wrapped(cmd):
    """cmd (a program this build made, then its arguments) as meson runs it: behind a cross
    build's MESON_EXE_WRAPPER (qemu-user for profiles/cross), unchanged in a native build."""
    return shlex.split(os.environ.get("MESON_EXE_WRAPPER", "")) + list(cmd)


def terminate(proc, timeout):
    """SIGTERM to a Popen, up to timeout s to exit, then SIGKILL: its status (killed: None)."""
    if proc.poll() is not None:
        return proc.returncode
    proc.terminate()
    try:
        return proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return None


def free_port():
    """A TCP port on 127.0.0.1 that was free a moment ago, for a server that cannot take --port 0."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_block(n, tries=200):
    """The first of n consecutive TCP ports on 127.0.0.1 free a moment ago, for servers that take a
    port each, below the kernel's ephemeral range (ip_local_port_range) so that no outgoing
    connection of a load generator beside takes one. Raises OSError when no block is found."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            low = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    top = max(1024 + n, min(low, 65536) - n)
    rng = random.Random(os.getpid() ^ time.monotonic_ns())
    for _ in range(tries):
        base = rng.randrange(10000 if top > 10000 + n else 1024, top)
        with contextlib.ExitStack() as socks:
            try:
                for p in range(base, base + n):
                    socks.enter_context(socket.socket()).bind(("127.0.0.1", p))
                return base
            except OSError:
                pass
    raise OSError("no %d consecutive free ports below %d on 127.0.0.1" % (n, low))


def http_get(port, path, timeout=10.0):
    """GET http://127.0.0.1:port/path on a fresh connection: (status, body text); raises OSError."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        c.request("GET", path)
        r = c.getresponse()
        return r.status, r.read().decode("utf-8", "replace")
    finally:
        c.close()


def http_status(port, path, timeout=2.0):
    """The status of GET path on a fresh connection to 127.0.0.1:port; 0 when none came."""
    try:
        return http_get(port, path, timeout)[0]
    except (OSError, http.client.HTTPException):
        return 0


def wait_ok(port, path="/healthz", timeout=10.0, proc=None):
    """GET path on port every 50 ms until a 200 (True), timeout s or proc's exit (False)."""
    deadline = time.time() + timeout
    while True:
        if http_status(port, path, 1) == 200:
            return True
        if time.time() > deadline or (proc is not None and proc.poll() is not None):
            return False
        time.sleep(0.05)


def hold_keepalive(port, n, timeout=10.0):
    """n keep-alive HTTPConnections to 127.0.0.1:port, each with one GET /healthz answered
    HTTP/1.1 200, for the caller to close; else OSError saying how many were, all closed."""
    held, answered = [], 0
    try:
        for _ in range(n):
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
            held.append(c)
            c.request("GET", "/healthz")
            r = c.getresponse()
            r.read()
            if r.status != 200 or r.version != 11:
                raise OSError("/healthz answered HTTP/%d.%d %d" % (r.version // 10, r.version % 10, r.status))
            if r.will_close:
                raise OSError("/healthz closed the connection")
            answered += 1
        return held
    except (OSError, http.client.HTTPException) as e:
        for c in held:
            c.close()
        raise OSError("held %d of %d connections: %s" % (answered, n, e)) from e


# psutil and prometheus_client are imported where they are used, so that a script that takes only
# wrapped() or free_port() runs under any python3. psutil does not expose VmHWM, the peak RSS.

def cpu_s(pid, children=False):
    """User + system CPU seconds of pid (children: with its reaped children's); None once gone."""
    import psutil
    try:
        t = psutil.Process(pid).cpu_times()
        return t.user + t.system + (t.children_user + t.children_system if children else 0)
    except psutil.Error:
        return None


def status_kib(pid, field):
    """One kB field of /proc/PID/status (VmRSS, VmHWM), or None once the process is gone."""
    try:
        with open("/proc/%d/status" % pid) as f:
            return next((int(line.split()[1]) for line in f if line.startswith(field + ":")), None)
    except OSError:
        return None


def group(pgid):
    """psutil.Process of every live process of process group pgid (a server's master and workers)."""
    import psutil
    out = []
    for p in psutil.process_iter():
        with contextlib.suppress(OSError):
            if os.getpgid(p.pid) == pgid:
                out.append(p)
    return out


def group_sample(pgid):
    """(cpu_seconds, threads, vmhwm_kb, vmrss_kb) summed over process group pgid. Shared pages
    count once per process, so a multi-process server (nginx) is slightly overstated."""
    import psutil
    cpu = 0.0
    thr = hwm = rss = 0
    for p in group(pgid):
        try:
            with p.oneshot():
                t = p.cpu_times()
                cpu += t.user + t.system
                thr += p.num_threads()
                rss += p.memory_info().rss // 1024
            hwm += status_kib(p.pid, "VmHWM") or 0
        except psutil.Error:
            continue
    return cpu, thr, hwm, rss


def parse_metrics(text):
    """A /metrics body as {`name{a="x",b="y"}`, labels in the body's order: value}, parsed by
    prometheus_client (ValueError when malformed). primed's label values need no escaping."""
    from prometheus_client.parser import text_string_to_metric_families
    out = {}
    for fam in text_string_to_metric_families(text):
        for smp in fam.samples:
            labels = ",".join('%s="%s"' % kv for kv in smp.labels.items())
            out[smp.name + ("{%s}" % labels if labels else "")] = smp.value
    return out


class NotReady(RuntimeError):
    """primed exited or stayed silent before its ready line; the message holds its stderr tail."""


READY = re.compile(r"primed: ready.*?\bport=(\d+)")


class Primed:
    """One primed on host:ephemeral: .port, .pid, .ready_line, .lines [(monotonic, line)],
    .start_ms (exec to ready line). args go after `--host H --port 0` unless args_first (then the
    listener flags win); env is the whole environment (default: ours); log_path gets every stderr
    line too; nofile caps the child's fd limit. Another server that prints a ready line on stderr
    starts the same way: listen=[], ready its line's pattern with the port as group 1,
    session=True to stop it as a process group (a wrapper that execs a JVM)."""

    def __init__(self, exe, args=(), env=None, args_first=False, ready_timeout=15, nofile=None,
                 log_path=None, host="127.0.0.1", listen=None, ready=READY, session=False):
        listen = ["--host", host, "--port", "0"] if listen is None else listen
        self.cmd = [exe, *args, *listen] if args_first else [exe, *listen, *args]
        self.session = session
        limit = (nofile, nofile)
        pre = (lambda: resource.setrlimit(resource.RLIMIT_NOFILE, limit)) if nofile else None
        t0 = time.monotonic()
        self.proc = subprocess.Popen(self.cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, env=env, preexec_fn=pre,
                                     start_new_session=session)
        self.pid = self.proc.pid
        self.lines = []
        self.ready_line = self.port = self.start_ms = None
        got = threading.Event()
        log = open(log_path, "w") if log_path else None

        def reader():
            for raw in self.proc.stderr:
                line = raw.decode("utf-8", "replace").rstrip("\n")
                self.lines.append((time.monotonic(), line))
                if log:
                    print(line, file=log, flush=True)
                m = ready.search(line) if self.port is None else None
                if m:
                    self.start_ms = (time.monotonic() - t0) * 1e3
                    self.ready_line, self.port = line, int(m.group(1))
                    got.set()
            if log:
                log.close()
            got.set()

        self.reader = threading.Thread(target=reader, daemon=True)
        self.reader.start()
        if not got.wait(ready_timeout) or self.port is None:
            self.kill()
            raise NotReady(f"no ready line ({ready.pattern}) within {ready_timeout:g} s: "
                           f"{' '.join(self.cmd)}\n{self.stderr_text(10)}")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()

    def ready(self, key):
        """The word after key= on the ready line (io=io_uring(...) gives io_uring; "" when absent)."""
        m = re.search(rf"\b{key}=(\w+)", self.ready_line or "")
        return m.group(1) if m else ""

    def alive(self):
        return self.proc.poll() is None

    def status_kib(self, field):
        """One kB field of its /proc/PID/status (VmRSS, VmHWM), or None once it is gone."""
        return status_kib(self.pid, field)

    def cpu_s(self):
        """Its user + system CPU seconds so far; None once it is gone."""
        return cpu_s(self.pid)

    def memory_kib(self):
        """(VmRSS, VmHWM) in KiB."""
        return self.status_kib("VmRSS"), self.status_kib("VmHWM")

    def url(self, path="/example"):
        return "http://127.0.0.1:%d%s" % (self.port, path)

    def metrics(self):
        """Its /metrics as parse_metrics() reads it."""
        return parse_metrics(http_get(self.port, "/metrics")[1])

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
        if self.session:
            stop_group(self.proc, 0)
        elif self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def stop(self, timeout=15):
        """terminate() (stop_group() with session): the exit status, None when killed."""
        if self.session:
            rc = None if stop_group(self.proc, timeout) else self.proc.returncode
        else:
            rc = terminate(self.proc, timeout)
        self.reader.join(2)
        return rc

    def stderr_text(self, last=None):
        lines = self.lines if last is None else self.lines[-last:]
        return "\n".join(l for _, l in lines)


def stop_group(proc, grace=15.0):
    """SIGTERM to the process group proc leads, up to grace s for proc to exit, then SIGKILL to
    whatever is left of the group (a worker its master did not reap); True when it had to kill."""
    killed = False
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            killed = True
        except ProcessLookupError:
            pass
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    return killed


class Group:
    """cmd as a process group of its own (nginx, h2o, the floor, a JVM): .proc, .pid, .port; with a
    port, NotReady with its stderr tail when /healthz there is not 200 within timeout s."""

    def __init__(self, cmd, port=None, env=None, stdout=subprocess.DEVNULL, stderr=None, timeout=10.0):
        self.port = port
        self.err = stderr if stderr is not None else tempfile.TemporaryFile()
        self.proc = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=stdout, stderr=self.err,
                                     start_new_session=True)
        self.pid = self.proc.pid
        if port is not None and not wait_ok(port, timeout=timeout, proc=self.proc):
            self.stop()
            tail = ""
            if stderr is None:
                self.err.seek(0)
                tail = self.err.read().decode(errors="replace")[-400:]
            raise NotReady("%s did not answer /healthz on port %d: %s" % (" ".join(cmd), port, tail))

    def stop(self, grace=15.0):
        stop_group(self.proc, grace)
        return self.proc.returncode


def wrk_cmd(url, conns, secs, threads=2, timeout_s=10, lua=LUA, extra=()):
    """wrk's argv: threads capped at conns, timeout_s in s (or wrk's own "10s"), wrk_report.lua's
    WRKSTAT line unless lua is another script or None, extra flags (-H ..., --latency) last."""
    cmd = ["wrk", "-t%d" % max(1, min(threads, conns)), "-c%d" % conns, "-d%ds" % secs,
           "--timeout", timeout_s if isinstance(timeout_s, str) else "%gs" % timeout_s]
    if lua:
        cmd += ["-s", lua]
    return cmd + list(extra) + [url]


def wrk_stats(out):
    """wrk_report.lua's WRKSTAT line as {key: int or float}, or None when wrk printed none."""
    m = re.search(r"WRKSTAT (.*)", out)
    if not m:
        return None
    kv = dict(x.split("=", 1) for x in m.group(1).split())
    return {k: float(v) if "." in v else int(v) for k, v in kv.items()}
