"""Helpers shared by benchmarks/knative-target and benchmarks/k6-local: build primed if needed,
start it on 127.0.0.1 with an ephemeral port, run wrk with wrk-checks.lua, read /proc memory.

Owns: nothing persistent; every server it starts it also stops (SIGTERM, then SIGKILL after 15 s).
Never: touch a port other than the one the server reports, or run wrk without a deadline.
"""
import json
import os
import platform
import re
import select
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
LUA = os.path.join(HERE, "wrk-checks.lua")


def die(msg):
    print(f"{os.path.basename(sys.argv[0])}: {msg}", file=sys.stderr)
    sys.exit(1)


def ensure_tools():
    if shutil.which("wrk") is None:
        die("wrk is not installed: apt-get install -y wrk")


def ensure_binary(path):
    """Return the primed binary, building build/src/primed (nice, -j2) when it is the default
    and missing."""
    default = os.path.join(ROOT, "build", "src", "primed")
    path = path or default
    if os.path.isfile(path) and os.access(path, os.X_OK):
        return path
    if path != default:
        die(f"{path}: no such executable")
    build = os.path.join(ROOT, "build")
    if not os.path.isfile(os.path.join(build, "build.ninja")):
        subprocess.run(["meson", "setup", build, ROOT], check=True, cwd=ROOT)
    subprocess.run(["nice", "-n", "10", "ninja", "-C", build, "-j2", "src/primed"], check=True)
    return path


class Server:
    """primed on 127.0.0.1:<ephemeral>; .port, .pid; use as a context manager."""

    def __init__(self, exe, env_extra=None, args=()):
        env = {k: v for k, v in os.environ.items() if not k.startswith("PRIMED_")}
        env.update(env_extra or {})
        self.proc = subprocess.Popen([exe, "--host", "127.0.0.1", "--port", "0", *args], env=env,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        t0 = time.monotonic()
        self.pid = self.proc.pid
        self.ready_line = None
        deadline = time.monotonic() + 10
        lines = []
        while time.monotonic() < deadline and self.proc.poll() is None:
            r, _, _ = select.select([self.proc.stderr], [], [], 0.2)
            if not r:
                continue
            line = self.proc.stderr.readline()
            lines.append(line.rstrip())
            m = re.search(r"port=(\d+)", line)
            if "primed: ready" in line and m:
                self.port = int(m.group(1))
                self.ready_line = line.strip()
                self.start_ms = (time.monotonic() - t0) * 1e3     # exec to "ready", incl. fork
                # Keep draining stderr so a chatty server never blocks on a full pipe.
                self._drain = subprocess.Popen(["cat"], stdin=self.proc.stderr,
                                               stdout=subprocess.DEVNULL)
                return
        self.proc.kill()
        self.proc.wait()
        die("primed did not print 'primed: ready ... port=N' within 10 s:\n" + "\n".join(lines[-10:]))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._drain.wait()

    def url(self, path="/example"):
        return f"http://127.0.0.1:{self.port}{path}"

    def metrics(self):
        """primed's /metrics as {series line key: value} (labels kept in the key)."""
        import http.client
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            c.request("GET", "/metrics")
            text = c.getresponse().read().decode()
        finally:
            c.close()
        out = {}
        for line in text.splitlines():
            if line and not line.startswith("#"):
                k, _, v = line.rpartition(" ")
                out[k] = float(v)
        return out

    def memory_kib(self):
        """(VmRSS, VmHWM) in KiB from /proc/PID/status."""
        with open(f"/proc/{self.pid}/status") as f:
            s = f.read()
        return tuple(int(re.search(rf"^{k}:\s+(\d+) kB", s, re.M).group(1)) for k in ("VmRSS", "VmHWM"))


def wrk(url, connections, seconds, threads=2, timeout_s=10):
    """One wrk run; returns the WRK_RESULT dict (plus req_per_s)."""
    t = max(1, min(threads, connections))
    cmd = ["wrk", "-t", str(t), "-c", str(connections), "-d", f"{seconds}s",
           "--timeout", f"{timeout_s}s", "-s", LUA, url]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + timeout_s + 30)
    m = re.search(r"^WRK_RESULT (\{.*\})$", p.stdout, re.M)
    if p.returncode != 0 or not m:
        die(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stdout}{p.stderr}")
    r = json.loads(m.group(1))
    r["req_per_s"] = r["requests"] / (r["duration_us"] / 1e6)
    r["errors"] = sum(r[k] for k in ("connect_errors", "read_errors", "write_errors", "timeouts",
                                     "not_200", "empty"))
    r["command"] = " ".join(cmd)
    return r


def machine():
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            m = re.search(r"^model name\s*:\s*(.*)$", f.read(), re.M)
            model = m.group(1).strip() if m else model
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} CPUs, Linux {platform.release()}"
