"""Helpers shared by benchmarks/knative-target.py and benchmarks/k6-local.py: build primed if needed,
start it on 127.0.0.1 with an ephemeral port, run wrk with wrk-checks.lua, read /proc memory.

Owns: nothing persistent; every server it starts it also stops (SIGTERM, then SIGKILL after 15 s).
Never: touch a port other than the one the server reports, or run wrk without a deadline.
"""
import json
import os
import platform
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import pathlib, sys  # noqa: E401  the scripts' one package: benchmarks/lib/primedlab, found from any folder
sys.path.insert(0, str(next(p for p in pathlib.Path(__file__).resolve().parents if (p / "benchmarks/lib/primedlab").is_dir()) / "benchmarks/lib"))
from primedlab import bench  # noqa: E402  (one wrk run)
from primedlab import spawn  # noqa: E402  (primed on --port 0: start, ready line, stop; wrk's argv)
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


class Server(spawn.Primed):
    """primed on 127.0.0.1:<ephemeral> without our PRIMED_* variables; use as a context manager."""

    def __init__(self, exe, env_extra=None, args=()):
        env = {k: v for k, v in os.environ.items() if not k.startswith("PRIMED_")}
        env.update(env_extra or {})
        try:
            super().__init__(exe, args, env=env, ready_timeout=10)
        except spawn.NotReady as err:
            die(f"primed did not print its ready line: {err}")

    def url(self, path="/example"):
        return f"http://127.0.0.1:{self.port}{path}"

    def metrics(self):
        """primed's /metrics as {series line key: value} (labels kept in the key)."""
        return spawn.parse_metrics(spawn.http_get(self.port, "/metrics")[1])

    def memory_kib(self):
        """(VmRSS, VmHWM) in KiB from /proc/PID/status."""
        return self.status_kib("VmRSS"), self.status_kib("VmHWM")


def wrk(url, connections, seconds, threads=2, timeout_s=10):
    """One wrk run with wrk-checks.lua; returns its WRK_RESULT dict (plus req_per_s)."""
    _, out, rc = bench.run_wrk(url, connections, seconds, threads, timeout_s, lua=LUA,
                               timeout=seconds + timeout_s + 30)
    cmd = spawn.wrk_cmd(url, connections, seconds, threads, timeout_s, lua=LUA)
    m = re.search(r"^WRK_RESULT (\{.*\})$", out, re.M)
    if rc != 0 or not m:
        die(f"{' '.join(cmd)} failed ({rc}):\n{out}")
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
