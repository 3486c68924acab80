"""benchmarks/lib/primedlab/lab_target.py - the comparison lab's targets: what each is (Target),
starting it as a process group pinned to the server CPUs and stopping it, what its processes use
(RSS, threads, a JVM's full GC and flight recording), the lab's log line and fd limit. Never runs a
load or writes a results file (lab_measure.py and lab_report.py do).
"""

import json
import os
import re
import resource
import shlex
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
    gc: dict = field(default_factory=dict)   # java: RSS reading -> "" (after a full GC) or why no GC ran


group_sample = spawn.group_sample


def held_rss(t, conns):
    """(RSS in KiB of t's process group, "") while it holds `conns` keep-alive connections that each
    got one /healthz answer, a JVM's after a full GC; (0, why) when it could not hold them."""
    try:
        held = spawn.hold_keepalive(t.port, conns)
    except OSError as e:
        return 0, str(e)
    try:
        time.sleep(0.3)
        if t.kind == "java":
            t.gc["RAM @%d conns" % conns] = full_gc(t)
        return group_sample(t.stat_pgid)[3], ""
    finally:
        for c in held:
            c.close()


def raise_nofile(conns):
    """The lab's soft fd limit raised, within the hard limit, for each server (they inherit it) to
    hold `conns` connections; says so when it cannot."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = conns + 1024 if hard == resource.RLIM_INFINITY else min(conns + 1024, hard)
    if soft != resource.RLIM_INFINITY and soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    got = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if got != resource.RLIM_INFINITY and got < conns + 64:
        log("fd limit %d: too low to hold %d connections (RAM @conns will say failed)" % (got, conns))


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
    return dict({k: v for k, v in os.environ.items() if k != "MALLOC_PERTURB_"}, **t.env)


def start(t, cpus, logdir, timeout=60.0, jfr=None):
    """Starts t on t.port pinned to cpus, waits for /healthz 200 and reads its idle RSS (a JVM's
    after a full GC; with jfr, a folder, it records into jfr/NAME.jfr from its start). False with
    t.failed set when it does not come up. A port that still answers is waited for up to 10 s:
    the kernel closes an io_uring server's listener in the ring's teardown, after the exit."""
    t0 = time.time()
    while not port_free(t.port):
        if time.time() > t0 + 10.0:
            t.failed = "port %d already in use (something still answers on it after 10 s)" % t.port
            return False
        time.sleep(0.05)
    if time.time() - t0 > 0.04:
        log("%s: port %d answered for %.2f s before it was free" % (t.name, t.port, time.time() - t0))
    env = dict(server_env(t), PORT=str(t.port))
    if jfr and t.kind == "java":
        os.makedirs(jfr, exist_ok=True)
        env["JDK_JAVA_OPTIONS"] = (env.get("JDK_JAVA_OPTIONS", "") + " -XX:StartFlightRecording=filename=%s,"
                                   "settings=default,dumponexit=true" % jfr_path(t, jfr)).strip()
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
            if t.kind == "java":
                t.gc["RAM idle"] = full_gc(t)
            t.idle_rss_kb = group_sample(t.stat_pgid)[3]
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


def read(path, limit=-1):
    """The text of the file at path (at most limit characters), "" when it cannot be read."""
    try:
        with open(path, errors="replace") as f:
            return f.read(limit)
    except OSError:
        return ""


def jvm_settings(log_path):
    """The JVM's flags line ("java-stacks: jvm ...") and settings line ("settings: ...") that
    benchmarks/peers/java/stacks and its peers print, joined with "; "; "" when the log has none."""
    return "; ".join(m.group(1).strip() for m in re.finditer(r"^(?:java-stacks: jvm|settings:)(.*)$",
                                                             read(log_path, 1 << 20), re.M))


def jfr_path(t, jfr):
    return os.path.join(jfr, safe(t.name) + ".jfr")


def jdk_tool(t, tool):
    """The command of JDK tool `tool` (jcmd, jfr) of the JDK whose java t.cmd runs: java's folder's,
    or, for benchmarks/peers/java/jdk21's wrapper (a script that execs the JDK's java through
    Debian 13's loader), the same exec line with the tool for java; None when there is none."""
    java = next((c for c in t.cmd if os.path.basename(c) == "java"), "")
    if os.access(os.path.join(os.path.dirname(java), tool), os.X_OK):
        return [os.path.join(os.path.dirname(java), tool)]
    m = re.search(r'^exec (.*) "\$@"$', read(java, 8192), re.M)
    argv = shlex.split(m.group(1)) if m else [""]
    real = os.path.join(os.path.dirname(argv[-1]), tool)
    return argv[:-1] + [real] if m and os.access(real, os.X_OK) else None


def full_gc(t, timeout=20):
    """A full GC in t's JVM (the process of its group that maps libjvm.so) by its JDK's `jcmd PID
    GC.run`, at most timeout s: "" when it ran, else why not (logged)."""
    jcmd, why = jdk_tool(t, "jcmd"), ""
    pids = [p.pid for p in spawn.group(t.stat_pgid) if "/libjvm.so" in read("/proc/%d/maps" % p.pid)]
    if not jcmd or not pids:
        why = "no jcmd beside the java of %s" % t.cmd[0] if not jcmd else "no JVM in process group %d" % t.stat_pgid
    else:
        t0 = time.time()
        try:
            p = subprocess.run(jcmd + [str(pids[0]), "GC.run"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               stdin=subprocess.DEVNULL, text=True, timeout=timeout)
            why = "" if p.returncode == 0 and "Command executed successfully" in p.stdout else \
                "jcmd GC.run: rc %d: %s" % (p.returncode, " ".join(p.stdout.split())[-200:])
        except (OSError, subprocess.TimeoutExpired) as e:
            why = "jcmd GC.run: %s" % e
    log("%s: %s" % (t.name, ("no GC before reading: " + why) if why else
                    "full GC before the RSS reading (jcmd %d GC.run, %.1f s)" % (pids[0], time.time() - t0)))
    return why


JFR_EVENTS = "jdk.GarbageCollection,jdk.CompilerStatistics,jdk.Compilation,jdk.VirtualThreadPinned"


def jfr_summary(t, path, timeout=180):
    """What t's recording at path says (its JDK's jfr): GCs (count, pauses, how many by jcmd), the
    JIT (compilations, their time, those over 1 s), virtual threads pinned over 20 ms (None on a JDK
    without the event); {"error": why} when the recording or the tool is missing or fails."""
    jfr = jdk_tool(t, "jfr")
    if not jfr or not os.path.isfile(path) or os.path.getsize(path) == 0:
        return {"error": ("no jfr beside the java of %s" % t.cmd[0]) if not jfr else
                "no recording at %s (the JVM did not exit cleanly?)" % path}
    try:
        s, ev = [subprocess.run(jfr + a + [path], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                timeout=timeout, check=True).stdout
                 for a in (["summary"], ["print", "--json", "--events", JFR_EVENTS])]
        ev = json.loads(ev)["recording"]["events"]
    except (OSError, ValueError, KeyError, subprocess.SubprocessError) as e:
        return {"error": "jfr: %s" % str(e)[-300:]}
    gcs = [e["values"] for e in ev if e["type"] == "jdk.GarbageCollection"]
    jit = [e["values"] for e in ev if e["type"] == "jdk.CompilerStatistics"][-1:] or [{}]
    dur = re.search(r"^\s*Duration: (\d+) s", s, re.M)
    return {"duration_s": int(dur.group(1)) if dur else None, "gc_count": len(gcs),
            "gc_pause_total_ms": round(sum(ms(g.get("sumOfPauses")) for g in gcs), 1),
            "gc_pause_max_ms": round(max([ms(g.get("longestPause")) for g in gcs] or [0]), 1),
            "gc_by_jcmd": sum(g.get("cause") == "Diagnostic Command" for g in gcs),
            "jit_compilations": jit[0].get("compileCount"), "jit_time_ms": round(ms(jit[0].get("totalTimeSpent"))),
            "jit_over_1s": sum(e["type"] == "jdk.Compilation" for e in ev),
            "vthread_pinned": sum(e["type"] == "jdk.VirtualThreadPinned" for e in ev)
            if re.search(r"^\s*jdk\.VirtualThreadPinned\s", s, re.M) else None}


def ms(iso):
    """Milliseconds of a JFR JSON duration ("PT0.036S", "PT1M2.5S"); 0 when there is none."""
    m = re.fullmatch(r"PT(?:(\d+)H)?(?:(\d+)M)?(?:([\d.]+)S)?", iso or "")
    return ((int(m.group(1) or 0) * 60 + int(m.group(2) or 0)) * 60 + float(m.group(3) or 0)) * 1e3 if m else 0.0


def dir_bytes(d):
    """Bytes of the regular files under d (links not followed): a JDK's size on disk."""
    paths = (os.path.join(root, f) for root, _, files in os.walk(d) for f in files)
    return sum(os.path.getsize(p) for p in paths if not os.path.islink(p))


def human_bytes(n):
    if n is None:
        return "n/a"
    for unit, div in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= div:
            return "%.1f %s" % (n / div, unit)
    return "%d B" % n
