"""benchmarks/lib/primedlab/lab_target.py - the comparison lab's targets: what each is, starting and
stopping it, and what its processes use.

Owns: Target (one thing under test and what a run fills in about it); its environment; starting it
as its own process group on its own port pinned to the server CPUs, waiting for /healthz, stopping
the group (start, stop); its RSS while it holds keep-alive connections (held_rss); the JVM settings its log prints; the
lab's fd limit; artifact sizes (dir_bytes, human_bytes); the lab's log line (log).
Never runs a load or writes a results file (lab_measure.py and lab_report.py do). The group's
CPU time, threads and memory are spawn.group_sample's.
"""

import os
import re
import resource
import socket
import subprocess
import time
from dataclasses import dataclass, field

from primedlab import bench
from primedlab import spawn

BENCH_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # benchmarks/
REPO_ROOT = os.path.dirname(BENCH_DIR)

log = bench.logger("lab", utc=True)


@dataclass
class Target:
    """One thing under test. cmd/env are what a start execs (PORT is added)."""
    name: str
    kind: str                      # primed | java | nginx | custom
    cmd: list
    env: dict = field(default_factory=dict)
    build: str = "n/a"             # human text for BUILD TIME
    build_s: float = None
    artifact_bytes: int = None     # the file(s) you ship
    artifact_note: str = ""        # e.g. "+ 14.2 MiB shared libs"
    note: str = ""                 # free text shown under the table
    port: int = 0
    does_prime: bool = True        # False for nginx: no % of the prime-cost ceiling
    container: str = ""            # podman container name: its server is sampled, not the wrapper
    stat_pgid: int = 0             # process group sampled in /proc (the server's)
    # filled while running
    proc: object = None
    failed: str = ""
    idle_rss_kb: int = 0
    peak_rss_kb: int = 0
    conns_rss_kb: int = 0          # RSS holding --rss-conns keep-alive connections, after the load
    conns_rss_err: str = ""
    max_threads: int = 0
    startup: dict = field(default_factory=dict)
    warmup: dict = field(default_factory=dict)   # warm_until_stable()'s series (java targets)
    settings: str = ""             # the JVM's flags and settings lines from its log (java targets)


group_sample = spawn.group_sample


def held_rss(t, conns):
    """(RSS in KiB summed over t's process group, "") while t holds `conns` keep-alive
    connections that each got one /healthz answer; (0, why) when it could not hold them."""
    try:
        held = spawn.hold_keepalive(t.port, conns)
    except OSError as e:
        return 0, str(e)
    try:
        time.sleep(0.3)
        _, _, _, rss = group_sample(t.stat_pgid)
        return rss, ""
    finally:
        for c in held:
            c.close()


def raise_nofile(need):
    """The lab's soft fd limit up to `need` (its servers inherit it), within the hard limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = need if hard == resource.RLIM_INFINITY else min(need, hard)
    if soft != resource.RLIM_INFINITY and soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def port_free(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return False
    except OSError:
        return True


def server_env(t):
    """The environment a target runs in: the lab's, less MALLOC_PERTURB_ (meson sets it for
    tests: glibc would then fill every allocation, and a server's whole connection arena would
    count as resident and as start-up time), plus the target's own."""
    env = {k: v for k, v in os.environ.items() if k != "MALLOC_PERTURB_"}
    env.update(t.env)
    return env


def start(t, cpus, logdir, timeout=60.0):
    """Starts t on t.port, pinned to cpus; waits (sleeping 10 ms) for /healthz 200. A port
    that still answers is waited for up to 10 s first: the start-up probe's last server has
    exited, but an io_uring server's listening socket is closed by the kernel's ring teardown,
    which runs after the process is gone (later still on a busy CPU)."""
    t0 = time.time()
    while not port_free(t.port):
        if time.time() > t0 + 10.0:
            t.failed = "port %d already in use (something still answers on it after 10 s)" % t.port
            return False
        time.sleep(0.05)
    if time.time() - t0 > 0.04:
        log("%s: port %d answered for %.2f s before it was free" % (t.name, t.port, time.time() - t0))
    env = server_env(t)
    env["PORT"] = str(t.port)
    logf = open(os.path.join(logdir, "server-%s.log" % safe(t.name)), "wb")
    t.proc = subprocess.Popen(bench.taskset(cpus) + t.cmd, env=env, stdout=logf, stderr=subprocess.STDOUT,
                              stdin=subprocess.DEVNULL, start_new_session=True)
    deadline = time.time() + timeout
    while time.time() < deadline:
        if t.proc.poll() is not None:
            t.failed = "exited with status %s at start-up (see server-%s.log)" % (t.proc.returncode, safe(t.name))
            return False
        if spawn.http_status(t.port, "/healthz") == 200:
            t.stat_pgid = t.proc.pid
            if t.container:
                pid = container_pid(t.container)
                if pid:
                    t.stat_pgid = os.getpgid(pid)
                else:
                    log("%s: cannot find the container's pid; sampling the wrapper" % t.name)
            _, _, _, rss = group_sample(t.stat_pgid)
            t.idle_rss_kb = rss
            return True
        time.sleep(0.01)
    t.failed = "no /healthz 200 within %.0f s" % timeout
    stop(t)
    return False


def container_pid(name):
    try:
        out = subprocess.run(["podman", "inspect", "-f", "{{.State.Pid}}", name], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True, timeout=30).stdout.strip()
        return int(out) if out.isdigit() and int(out) > 0 else 0
    except (OSError, subprocess.TimeoutExpired):
        return 0


def stop(t, grace=10.0):
    if t.proc is not None and t.proc.poll() is None and spawn.stop_group(t.proc, grace):
        log("%s ignored SIGTERM for %.0f s: SIGKILL" % (t.name, grace))


def safe(name):
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)


def jvm_settings(log_path):
    """The JVM's flags line ("java-stacks: jvm ...") and settings line ("settings: ...") that
    benchmarks/peers/java/stacks and its peers print, joined with "; "; "" when the log has none."""
    try:
        with open(log_path, errors="replace") as f:
            text = f.read(1 << 20)
    except OSError:
        return ""
    return "; ".join(m.group(1).strip() for m in re.finditer(r"^(?:java-stacks: jvm|settings:)(.*)$", text, re.M))


def dir_bytes(d):
    """Bytes of the regular files under d (links not followed): a JDK's size on disk."""
    total = 0
    for root, _, files in os.walk(d):
        for f in files:
            p = os.path.join(root, f)
            if not os.path.islink(p):
                total += os.path.getsize(p)
    return total


def human_bytes(n):
    if n is None:
        return "n/a"
    for unit, div in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= div:
            return "%.1f %s" % (n / div, unit)
    return "%d B" % n
