"""benchmarks/lib/primedlab/lab.py - the comparison lab's engine: targets, servers, wrk, /proc, report.

Owns: starting each target as its own process group on its own port, running wrk against it
with exact percentiles (wrk_report.lua), sampling the group's CPU time, threads and peak RSS
from /proc, the startup probe per target, the physical-limit line from prime_bench, and
writing table.md, results.csv, summary.csv, startup.csv and meta.txt into one results dir.
Invariants: every measurement of one kind runs interleaved across targets (A B A B) in one
process, so drift on the shared machine hits all targets alike; before each one the machine
must be quiet (quiet.wait_quiet, bounded), and what else ran during it is recorded with it
(quiet.Window: every table's header, runs.csv, results.csv); a target that fails to start
gets a row saying so instead of stopping the run. Never installs packages or builds anything
(benchmarks/run does), never writes outside the results dir and the cache dir.
Runs on Debian's /usr/bin/python3, standard library only.
"""

import csv
import json
import os
import re
import resource
import shlex
import signal
import socket
import statistics
import subprocess
import threading
import time
from dataclasses import dataclass, field

from primedlab import bench
from primedlab import quiet
from primedlab import spawn

BENCH_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # benchmarks/
REPO_ROOT = os.path.dirname(BENCH_DIR)
CLK_TCK = os.sysconf("SC_CLK_TCK")
# podman's conmon parents a container started during a window (a container target's start-up
# runs): its processes are ours, not contamination (quiet.Window's adopt)
ADOPT = ("conmon",)
# A window found contaminated is thrown away and measured again, at most --remeasure times
# (steal from the hypervisor comes in bursts); the discarded ones are kept in raw.json
# (meta.contamination_discarded) and counted in meta.txt and the table's header.
RETRIES = 2
DISCARDED = []  # this run's discarded windows (lab() resets both)


def remeasure(what, fn, qwait, pgids=(), discarded=DISCARDED):
    """fn() -> a result whose contamination keys are quiet.Window's (or a dict with them under
    "contamination"); measured again while contaminated, RETRIES times at most."""
    for attempt in range(RETRIES + 1):
        r = fn()
        c = r.get("contamination", r) if isinstance(r, dict) else None
        over = quiet.contaminated(c) if c and "other_cpu_pct" in c else []
        if not over or attempt == RETRIES:
            return r
        if discarded is not None:
            discarded.append(dict(c, what=what))
        log("%s: discarded (contaminated: %s); measuring again (%d of %d)" % (
            what, "; ".join(over), attempt + 1, RETRIES))
        quiet.wait_quiet(qwait, list(pgids), what=what)
    return r


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


# ----------------------------------------------------------------------------- /proc

def group_pids(pgid):
    """All live pids whose process group is pgid (a target's server and its workers)."""
    out = []
    for d in os.listdir("/proc"):
        st = quiet.proc_stat(d) if d.isdigit() else None
        if st is not None and int(st[1][2]) == pgid:       # fields after comm: state ppid pgrp ...
            out.append(int(d))
    return out


def group_sample(pgid):
    """(cpu_seconds, threads, vmhwm_kb, vmrss_kb) summed over the group. Shared pages
    count once per process, so multi-process servers (nginx) are slightly overstated."""
    cpu = 0.0
    thr = hwm = rss = 0
    for pid in group_pids(pgid):
        try:
            rest = quiet.proc_stat(pid)[1]
            cpu += (int(rest[11]) + int(rest[12])) / CLK_TCK   # utime stime
            with open("/proc/%d/status" % pid) as f:
                for line in f:
                    if line.startswith("Threads:"):
                        thr += int(line.split()[1])
                    elif line.startswith("VmHWM:"):
                        hwm += int(line.split()[1])
                    elif line.startswith("VmRSS:"):
                        rss += int(line.split()[1])
        except (OSError, IndexError, ValueError, TypeError):    # TypeError: gone (proc_stat None)
            continue
    return cpu, thr, hwm, rss


# ----------------------------------------------------------------------------- HTTP

http_status = bench.http_status


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


# ----------------------------------------------------------------------------- servers

def start(t, cpus, logdir, timeout=60.0):
    """Starts t on t.port, pinned to cpus; waits (sleeping 10 ms) for /healthz 200."""
    if not port_free(t.port):
        t.failed = "port %d already in use" % t.port
        return False
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
        if http_status(t.port, "/healthz") == 200:
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
    if t.proc is None or t.proc.poll() is not None:
        return
    try:
        os.killpg(t.proc.pid, signal.SIGTERM)
        t.proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        log("%s ignored SIGTERM for %.0f s: SIGKILL" % (t.name, grace))
    except ProcessLookupError:
        pass
    try:
        os.killpg(t.proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    t.proc.wait()


def safe(name):
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)


# ----------------------------------------------------------------------------- wrk

def closed_loop_timeout(duration):
    """wrk's --timeout for a run of `duration` s: longer than the run, so an answer that
    arrives within the run is never counted as a timeout however long it queued (wrk's
    default 2 s counted queued requests at c200 as errors, and counts a late answer both as
    a request and as a timeout). Requests still queued when wrk stops are counted neither way."""
    return duration + 10


def live_pgids(targets):
    return [t.stat_pgid for t in targets if t.stat_pgid]


def run_wrk(t, path, conns, duration, wrk_cpus, timeout_s=None, pgids=()):
    """One wrk run against t. Returns a dict of figures (requests/s, percentiles in ms,
    server failures: refused, reset, non-2xx; client timeouts; availability %; server CPU%
    and max threads during the run; answers/s and the closed loop's mean latency per second;
    contamination of the run, quiet.Window's keys)."""
    timeout_s = timeout_s or closed_loop_timeout(duration)
    threads = max(1, min(len(wrk_cpus) if wrk_cpus else (os.cpu_count() or 1), conns))
    pg = t.stat_pgid or t.proc.pid
    cpu0, thr0, _, _ = group_sample(pg)
    maxthr = [thr0]
    stop_evt = threading.Event()

    def sampler():
        while not stop_evt.wait(0.25):
            _, thr, _, _ = group_sample(pg)
            maxthr[0] = max(maxthr[0], thr)

    th = threading.Thread(target=sampler, daemon=True)
    th.start()
    win = quiet.Window(list(pgids) + [pg], adopt=ADOPT)
    w0 = time.time()
    kv, out, rc = bench.run_wrk("http://127.0.0.1:%d%s" % (t.port, path), conns, duration, threads, timeout_s,
                                wrk_cpus, timeout=duration + timeout_s + 60)
    wall = time.time() - w0
    contam = win.stop()
    stop_evt.set()
    th.join()
    cpu1, thr1, hwm, _ = group_sample(pg)
    t.max_threads = max(t.max_threads, maxthr[0], thr1)
    t.peak_rss_kb = max(t.peak_rss_kb, hwm)
    if kv is None:
        return {"error": "wrk failed (rc %d): %s" % (rc, out.strip()[-300:]), **contam}
    nreq = int(kv["requests"])
    ms = (lambda k: int(kv[k]) / 1e3) if nreq else (lambda k: None)  # no answer: no latency
    # wrk's counters: requests = complete responses (any status); status = non-2xx/3xx among
    # them; connect = refused or failed connects; read/write = a connection reset or closed
    # under a request (that request is lost). Attempted = answered + lost.
    refused, reset, non2xx = int(kv["connect"]), int(kv["read"]) + int(kv["write"]), int(kv["status"])
    attempted = nreq + refused + reset
    r = {
        "rps": kv["rps"],
        "requests": nreq,
        "p50_ms": ms("p50_us"), "p90_ms": ms("p90_us"), "p95_ms": ms("p95_us"), "p99_ms": ms("p99_us"),
        "max_ms": ms("max_us"),
        "refused": refused, "reset": reset, "non2xx": non2xx, "timeouts": int(kv["timeout"]),
        "availability_pct": 100.0 * (nreq - non2xx) / attempted if attempted else None,
        "timeout_s": timeout_s,
        "cpu_pct": 100.0 * (cpu1 - cpu0) / wall if wall > 0 else 0.0,
        "threads": maxthr[0],
        "persec_rps": kv["persec_rps"],
        # a closed loop keeps `conns` requests in flight: Little's law gives the mean latency
        "persec_mean_ms": [round(1e3 * conns / x, 3) if x > 0 else None for x in kv["persec_rps"]],
    }
    r.update(contam)
    return r


def jvm_settings(log_path):
    """The JVM's flags line ("java-stacks: jvm ...") and settings line ("settings: ...") that
    benchmarks/peers/java/stacks and its peers print, joined with "; "; "" when the log has none."""
    try:
        with open(log_path, errors="replace") as f:
            text = f.read(1 << 20)
    except OSError:
        return ""
    return "; ".join(m.group(1).strip() for m in re.finditer(r"^(?:java-stacks: jvm|settings:)(.*)$", text, re.M))


def settled(series, window=5, tol=0.10):
    """True when the last window per-second throughputs lie within tol of their mean and their
    mean is within tol of the window before (no climb left: the JIT has compiled the path)."""
    if len(series) < 2 * window:
        return False
    last, before = series[-window:], series[-2 * window:-window]
    m, mb = sum(last) / window, sum(before) / window
    return m > 0 and (max(last) - min(last)) <= tol * m and abs(m - mb) <= tol * m


def warm_until_stable(t, wrk_cpus, pgids, path="/example", conns=50, chunk=6, max_s=120, window=5, tol=0.10):
    """Unrecorded load on t in chunk-second wrk runs until settled() holds or max_s passes. Each
    run's first second (connections opening, the sampler's first reading) is left out of the
    series, so a chunk adds chunk - 1 seconds: window 5 judges the last run against the one
    before. Records t.warmup = {"persec_rps": [...], "seconds": n, "settled": bool} and logs it."""
    series, spent = [], 0
    while spent < max_s:
        r = run_wrk(t, path, conns, chunk, wrk_cpus, pgids=pgids)
        spent += chunk
        if r.get("error"):
            t.warmup = {"persec_rps": series, "seconds": spent, "settled": False, "error": r["error"]}
            log("warm-up %s: %s" % (t.name, r["error"]))
            return t.warmup
        series += [float(x) for x in (r.get("persec_rps") or [])[1:]]
        if settled(series, window, tol):
            break
    t.warmup = {"persec_rps": [round(x) for x in series], "seconds": spent, "settled": settled(series, window, tol)}
    log("warm-up %s: %s %s c=%d for %d s, per second: %s" % (
        t.name, "settled" if t.warmup["settled"] else "NOT settled within %d s" % max_s, path, conns, spent,
        " ".join("%.0f" % x for x in series)))
    return t.warmup


def settle(live, quiet_pct=20.0, window=0.25, max_wait=60.0):
    """Waits until the targets together use under quiet_pct of one CPU over a window.
    A server may still be working off the previous run's queued requests after wrk has
    closed its sockets (inline dispatch computes what it has read); measuring the next
    target meanwhile would charge it for that. Returns the seconds waited."""
    t0 = time.time()
    while True:
        c0 = sum(group_sample(t.stat_pgid)[0] for t in live if t.proc and t.proc.poll() is None)
        time.sleep(window)
        c1 = sum(group_sample(t.stat_pgid)[0] for t in live if t.proc and t.proc.poll() is None)
        busy = 100.0 * (c1 - c0) / window
        if busy < quiet_pct or time.time() - t0 > max_wait:
            if busy >= quiet_pct:
                log("targets still busy (%.0f%% CPU) after %.0f s; measuring anyway" % (busy, max_wait))
            return time.time() - t0


# ----------------------------------------------------------------------------- open loop, siege

OPEN_RE = re.compile(r"OPENLOOP (.*)")
SECONDS_RE = re.compile(r"OPENLOOP_SECONDS (.*)")


def open_loop_timeout(duration):
    """The open-loop client gives up on a request this long after sending it: siege's and
    k6's order of magnitude (30 s, 60 s), never shorter than the run, so a queued request
    is a slow answer, not a loss."""
    return max(30, duration)


def run_openloop(t, path, rate, duration, wrk_cpus, openloop, pgids=()):
    """One constant-arrival-rate run (benchmarks/openloop.c) at `rate` req/s. Returns its
    figures (latency from the scheduled start, ms) and the run's contamination."""
    tmo = open_loop_timeout(duration)
    cmd = bench.taskset(wrk_cpus) + [openloop, "--rate", "%.1f" % rate, "--duration", str(duration),
                                      "--timeout", str(tmo), "--max-conns", "1024",
                                      "http://127.0.0.1:%d%s" % (t.port, path)]
    win = quiet.Window(list(pgids), adopt=ADOPT)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=duration + tmo + 60)
    contam = win.stop()
    m = OPEN_RE.search(p.stdout)
    if not m:
        return {"error": "openloop failed (rc %d): %s" % (p.returncode, p.stdout.strip()[-300:]), **contam}
    kv = dict(x.split("=", 1) for x in m.group(1).split())
    n = {k: int(kv[k]) for k in ("scheduled", "sent", "ok", "non2xx", "refused", "reset", "timeouts", "unsent",
                                 "late_starts", "max_in_flight")}
    r = dict(n)
    r.update({"rate": rate, "achieved_rps": float(kv["achieved_rps"]), "timeout_s": tmo,
              "availability_pct": 100.0 * n["ok"] / n["scheduled"] if n["scheduled"] else None})
    for k in ("p50", "p90", "p95", "p99", "p999", "max"):
        r[k + "_ms"] = int(kv[k + "_us"]) / 1e3 if (n["ok"] + n["non2xx"]) else None
    m = SECONDS_RE.search(p.stdout)    # per second of the run: answers and their p99
    if m:
        sec = dict(x.split("=", 1) for x in m.group(1).split())
        r["persec_rps"] = [int(x) for x in sec.get("answers", "").split(",") if x]
        r["persec_p99_ms"] = [int(x) / 1e3 if a != "0" else None
                              for a, x in zip(sec.get("answers", "").split(","), sec.get("p99_us", "").split(",")) if x]
    r.update(contam)
    return r


def run_siege(t, path, siegerc, wrk_cpus, reps=10, users=10, pgids=()):
    """siege -r reps -c users against t, as seed 003 ran it (benchmarks/lib/siegerc restates
    siege's defaults). Returns siege's JSON summary and the run's contamination."""
    cmd = bench.taskset(wrk_cpus) + ["siege", "-R", siegerc, "-r", str(reps), "-c", str(users),
                                      "http://127.0.0.1:%d%s" % (t.port, path)]
    win = quiet.Window(list(pgids), adopt=ADOPT)
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        return {"error": "siege timed out", **win.stop()}
    contam = win.stop()
    try:
        r = json.loads(p.stdout[p.stdout.index("{"):])
    except ValueError:
        return {"error": "siege failed (rc %d): %s" % (p.returncode, (p.stdout + p.stderr).strip()[-300:]),
                **contam}
    r.update(contam)
    return r


# ----------------------------------------------------------------------------- startup

def run_startup(t, runs, server_cpus, probe_cpus, probe, timeout=30):
    """benchmarks/startup's probe over t's command; fills t.startup[phase] = dict."""
    # the probe pins itself and its child (--cpu, --server-cpus): with taskset prefixes the
    # server's taskset ran, and the server started, on the probe's busy CPU (it inherits it)
    pin = []
    if probe_cpus:
        pin += ["--cpu", str(probe_cpus[0])]
    if server_cpus:
        pin += ["--server-cpus", ",".join(map(str, server_cpus))]
    cmd = [probe, "--runs", str(runs), "--port", str(t.port), "--timeout", str(timeout), "--quiet"] + pin + \
        ["--"] + t.cmd
    env = server_env(t)
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=runs * (3 * timeout + 15) + 30)
    for line in p.stdout.splitlines():
        kv = dict(x.split("=", 1) for x in line.split() if "=" in x)
        if "metric" in kv and kv.get("ok", "0") != "0":
            t.startup[kv["metric"]] = {k: float(v) for k, v in kv.items() if k.endswith("_ms")}
            t.startup[kv["metric"]]["ok"] = int(kv["ok"])
            t.startup[kv["metric"]]["runs"] = int(kv["runs"])
    if p.returncode != 0:
        t.startup["error"] = (p.stderr.strip().splitlines() or ["rc %d" % p.returncode])[-1]


# ----------------------------------------------------------------------------- ceiling

def prime_cost(prime_bench, cpus, bits=1000, count=200):
    """Runs prime_bench --csv on one server CPU. Returns {engine: {median_us, mean_us,
    cpu_mean_us, ...}} from its `engine=… bits=… median_us=…` lines (empty if absent)."""
    if not prime_bench or not os.access(prime_bench, os.X_OK):
        return {}
    cmd = bench.taskset(cpus[:1]) + [prime_bench, "--bits", str(bits), "--count", str(count),
                                      "--engine", "all", "--csv"]
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as e:
        log("prime_bench failed: %s" % e)
        return {}
    out = {}
    for line in p.stdout.splitlines():
        kv = dict(x.split("=", 1) for x in line.split() if "=" in x)
        if "engine" in kv and kv.get("bits") == str(bits) and "median_us" in kv:
            out[kv["engine"]] = {k: float(v) for k, v in kv.items() if k.endswith("_us")}
    if not out:
        log("prime_bench printed no engine=… median_us=… line (rc %d)" % p.returncode)
    return out


def cost_of(c):
    """The cost one request must pay, in µs of one core: CPU time per prime (mean) when
    prime_bench reports it, else wall mean, else wall median. The mean, not the median,
    bounds throughput (prime search times have a long tail); CPU time, not wall time,
    keeps other tenants of a shared core out of the physical limit."""
    for k in ("cpu_mean_us", "mean_us", "median_us"):
        if k in c:
            return c[k], k
    return None, None


# ----------------------------------------------------------------------------- analysis

def saturation(points):
    """points: [(conns, rps, p95_ms)] for /example. The saturation point is the first
    concurrency past which requests/s rises by no more than 5% while p95 keeps growing."""
    pts = sorted(p for p in points if p[1] and p[2] is not None)
    for (c0, r0, l0), (c1, r1, l1) in zip(pts, pts[1:]):
        if r1 <= r0 * 1.05 and l1 > l0:
            return str(c0)
    return "> %d" % pts[-1][0] if pts else "n/a"


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


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


def fmt(x, spec="%.0f", none="n/a"):
    return none if x is None else spec % x


# ----------------------------------------------------------------------------- the run

def lab(args, targets, outdir, meta):
    os.makedirs(outdir, exist_ok=True)
    logdir = os.path.join(outdir, "logs")
    os.makedirs(logdir, exist_ok=True)
    server_cpus, wrk_cpus = args.server_cpus, args.wrk_cpus

    contam = {"prime": [], "startup": [], "load": [], "open": [], "siege": []}
    meta["contamination"] = contam
    global RETRIES
    RETRIES = max(0, getattr(args, "remeasure", RETRIES))
    DISCARDED.clear()
    discarded = DISCARDED
    meta["contamination_discarded"] = discarded
    qwait = getattr(args, "quiet_wait", 0)
    if getattr(args, "rss_conns", 0) > 0:
        # the servers inherit it: each must be able to hold --rss-conns connections
        got = raise_nofile(args.rss_conns + 1024)
        if got != resource.RLIM_INFINITY and got < args.rss_conns + 64:
            log("fd limit %d: too low to hold %d connections (RAM @conns will say failed)" % (got, args.rss_conns))

    # 1. the physical limit, measured now, on one server CPU
    if args.prime_bench and os.access(args.prime_bench, os.X_OK):
        quiet.wait_quiet(qwait, what="prime_bench")
    win = quiet.Window()
    costs = prime_cost(args.prime_bench, server_cpus or [0], count=args.prime_count)
    if costs:
        contam["prime"].append(win.stop())
    if costs:
        best_engine = min(costs, key=lambda e: cost_of(costs[e])[0])
        cost_us, cost_kind = cost_of(costs[best_engine])
        ncpu = len(server_cpus) if server_cpus else (os.cpu_count() or 1)
        ceiling = ncpu * 1e6 / cost_us
        log("prime cost (%s): %s; ceiling %d CPU x 1e6 / %.1f us (%s) = %.0f req/s" % (
            cost_kind, ", ".join("%s %.1f us" % (e, cost_of(c)[0]) for e, c in sorted(costs.items())),
            ncpu, cost_us, best_engine, ceiling))
        meta["prime_cost_us"] = "; ".join(
            "%s: median %.0f, mean %.0f%s" % (e, c["median_us"], c.get("mean_us", float("nan")),
                                              (", CPU mean %.0f" % c["cpu_mean_us"]) if "cpu_mean_us" in c else "")
            for e, c in sorted(costs.items()))
        meta["ceiling"] = "%.0f req/s = %d CPU x 1e6 / %.0f µs (%s engine, %s)" % (
            ceiling, ncpu, cost_us, best_engine, cost_kind)
    else:
        best_engine, cost_us, ceiling, ncpu = None, None, None, None
        log("prime_bench not available: no physical-limit line this run")
        meta["prime_cost_us"] = "n/a"
        meta["ceiling"] = "n/a (benchmarks/prime_bench not built)"

    # 2. start-up, target after target (each run is short; the probe kills between runs)
    if args.startup_runs > 0:
        for i, t in enumerate(targets):
            if t.failed:
                continue
            log("startup %d/%d %s: %d runs" % (i + 1, len(targets), t.name, args.startup_runs))
            quiet.wait_quiet(qwait, what="start-up of %s" % t.name)

            def one_startup(t=t):
                win = quiet.Window(adopt=ADOPT)
                t.startup.pop("error", None)
                try:
                    run_startup(t, args.startup_runs, server_cpus, wrk_cpus, args.probe)
                except subprocess.TimeoutExpired:
                    t.startup["error"] = "probe timed out"
                return win.stop()

            c = remeasure("start-up of %s" % t.name, one_startup, qwait, discarded=discarded)
            t.startup["contamination"] = c
            contam["startup"].append(c)
            h = t.startup.get("healthz")
            log("  %s: healthz %s ms median%s" % (t.name, fmt(h and h["median_ms"], "%.1f"),
                                                   ("  (" + t.startup["error"] + ")") if "error" in t.startup else ""))

    # 3. load: all targets up at once, each on its own port; rounds interleave A B A B
    raw, open_runs, siege_runs = [], [], []
    try:
        for t in targets:
            if t.failed:
                continue
            log("starting %s on port %d: %s" % (t.name, t.port, " ".join(shlex.quote(c) for c in t.cmd)))
            if not start(t, server_cpus, logdir):
                log("  %s failed: %s" % (t.name, t.failed))
            elif t.kind == "java":
                t.settings = jvm_settings(os.path.join(logdir, "server-%s.log" % safe(t.name)))
                if t.settings:
                    log("  %s: %s" % (t.name, t.settings))
        live = [t for t in targets if not t.failed]
        if args.warmup > 0:
            for t in live:
                if t.kind == "java":   # the JIT's turn: until the per-second series settles
                    warm_until_stable(t, wrk_cpus, live_pgids(live), max_s=getattr(args, "warmup_max", 120))
                    continue
                log("warm-up %s: /example c=50 %ds (not recorded)" % (t.name, args.warmup))
                run_wrk(t, "/example", 50, args.warmup, wrk_cpus, pgids=live_pgids(live))
        scenarios = [("/example", c) for c in args.conns] + [("/healthz", c) for c in args.healthz_conns]
        total = len(scenarios) * args.rounds * len(live)
        k = 0
        for path, conns in scenarios:
            for rnd in range(1, args.rounds + 1):
                for t in live:
                    k += 1
                    if t.proc.poll() is not None:
                        t.failed = t.failed or "died during load (status %s)" % t.proc.returncode
                        continue
                    waited = settle(live)
                    qw, _ = quiet.wait_quiet(qwait, live_pgids(live), what="%s %s c=%d" % (t.name, path, conns))
                    r = remeasure("%s %s c=%d" % (t.name, path, conns),
                                  lambda: run_wrk(t, path, conns, args.duration, wrk_cpus, pgids=live_pgids(live)),
                                  qwait, live_pgids(live), discarded)
                    r.update({"target": t.name, "path": path, "conns": conns, "round": rnd,
                              "settle_s": round(waited, 2), "quiet_wait_s": round(qw, 1)})
                    raw.append(r)
                    contam["load"].append(r)
                    flag = (" CONTAMINATED (%s)" % quiet.describe(r)) if quiet.contaminated(r) else ""
                    if "error" in r:
                        log("%d/%d %s %s c=%d round %d: %s%s" % (k, total, t.name, path, conns, rnd, r["error"], flag))
                    else:
                        log("%d/%d %s %s c=%d round %d: %.0f req/s p95 %s ms cpu %.0f%% refused %d reset %d "
                            "non2xx %d timeouts %d other %.1f%%%s" % (
                                k, total, t.name, path, conns, rnd, r["rps"], fmt(r["p95_ms"], "%.2f"), r["cpu_pct"],
                                r["refused"], r["reset"], r["non2xx"], r["timeouts"], r["other_cpu_pct"], flag))
        for t in live:
            if t.proc.poll() is None:
                _, thr, hwm, _ = group_sample(t.stat_pgid)
                t.peak_rss_kb = max(t.peak_rss_kb, hwm)
        open_runs = open_loop(args, live, raw, wrk_cpus, qwait, contam)
        siege_runs = siege(args, live, wrk_cpus, qwait, contam)
        rss_conns = getattr(args, "rss_conns", 0)
        for t in live:
            if rss_conns <= 0 or t.proc.poll() is not None:
                continue
            t.conns_rss_kb, t.conns_rss_err = held_rss(t, rss_conns)
            log("%s: RSS %s holding %d keep-alive connections%s" % (
                t.name, ("%.1f MiB" % (t.conns_rss_kb / 1024)) if t.conns_rss_kb else "n/a", rss_conns,
                (" (" + t.conns_rss_err + ")") if t.conns_rss_err else ""))
    finally:
        for t in targets:
            stop(t)
    trim_logs(logdir)
    return report(args, targets, raw, outdir, meta, ceiling, cost_us, best_engine, open_runs, siege_runs)


def capacity(raw, name):
    """A target's measured capacity: its best closed-loop /example requests/s in this run."""
    rs = [r["rps"] for r in raw if r.get("target") == name and r.get("path") == "/example" and "error" not in r]
    return max(rs) if rs else None


def open_loop(args, live, raw, wrk_cpus, qwait, contam):
    """Constant arrival rate at each fraction of each target's capacity, interleaved A B A B."""
    fracs = getattr(args, "open_loop", [])
    if not fracs or not getattr(args, "openloop", None):
        if fracs:
            log("open-loop table skipped: benchmarks/openloop not built")
        return []
    out = []
    for f in fracs:
        for t in live:
            cap = capacity(raw, t.name)
            if not cap or t.proc.poll() is not None:
                continue
            settle(live)
            quiet.wait_quiet(qwait, live_pgids(live), what="open loop %s %d%%" % (t.name, f))
            r = remeasure("open loop %s %d%%" % (t.name, f),
                          lambda: run_openloop(t, "/example", cap * f / 100.0, args.open_duration, wrk_cpus,
                                               args.openloop, pgids=live_pgids(live)),
                          qwait, live_pgids(live))
            r.update({"target": t.name, "capacity": cap, "load_pct": f})
            out.append(r)
            contam["open"].append(r)
            if "error" in r:
                log("open loop %s %d%%: %s" % (t.name, f, r["error"]))
            else:
                log("open loop %s %d%% of %.0f = %.1f req/s: ok %d p50 %s p99 %s ms, refused %d reset %d non2xx %d "
                    "timeouts %d unsent %d, other %.1f%%" % (
                        t.name, f, cap, r["rate"], r["ok"], fmt(r["p50_ms"], "%.1f"), fmt(r["p99_ms"], "%.1f"),
                        r["refused"], r["reset"], r["non2xx"], r["timeouts"], r["unsent"], r["other_cpu_pct"]))
    return out


def siege(args, live, wrk_cpus, qwait, contam):
    if not getattr(args, "siege", False):
        return []
    out = []
    for t in live:
        if t.proc.poll() is not None:
            continue
        settle(live)
        quiet.wait_quiet(qwait, live_pgids(live), what="siege %s" % t.name)
        r = remeasure("siege %s" % t.name,
                      lambda: run_siege(t, "/example", os.path.join(BENCH_DIR, "lib", "siegerc"), wrk_cpus,
                                        pgids=live_pgids(live)),
                      qwait, live_pgids(live))
        r["target"] = t.name
        out.append(r)
        contam["siege"].append(r)
        log("siege %s: %s" % (t.name, r.get("error") or "availability %.2f %%, %.2f trans/s, longest %.2f s" % (
            r["availability"], r["transaction_rate"], r["longest_transaction"])))
    return out


def trim_logs(logdir, keep=1 << 20):
    """Per-request logs (the Java peer logs every request) can grow large: keep the tail."""
    for f in os.listdir(logdir):
        p = os.path.join(logdir, f)
        if os.path.getsize(p) > keep:
            with open(p, "rb") as fh:
                fh.seek(-keep, os.SEEK_END)
                tail = fh.read()
            with open(p, "wb") as fh:
                fh.write(b"[... trimmed to the last %d bytes ...]\n" % keep + tail)


# ----------------------------------------------------------------------------- report

SUMMARY_COLS = ["TYPE", "BUILD TIME", "ARTIFACT SIZE", "BOOT UP", "RPS", "RESPONSE TIME p95",
                "SATURATION POINT", "RAM", "RAM idle", "RAM @conns", "CPU", "THREADS", "% of ceiling", "SERVER FAILURES",
                "CLIENT TIMEOUTS", "AVAILABILITY"]
DETAIL_COLS = ["target", "path", "conns", "rounds", "rps", "p50_ms", "p95_ms", "p99_ms", "max_ms",
               "refused", "reset", "non2xx", "timeouts", "availability_pct", "cpu_pct", "threads",
               "pct_of_ceiling", "req_per_cpu_s", "other_cpu_pct", "steal_pct", "load1_max", "quiet_wait_s"]
RUN_COLS = ["target", "path", "conns", "round", "rps", "requests", "p50_ms", "p95_ms", "p99_ms", "max_ms",
            "refused", "reset", "non2xx", "timeouts", "availability_pct", "timeout_s", "cpu_pct", "threads",
            "wall_s", "other_cpu_pct", "steal_pct", "kthread_pct", "load1_start", "load1_end", "top",
            "quiet_wait_s", "settle_s", "contaminated"]


def availability(rs):
    """siege's availability over runs: answered with 2xx/3xx / attempted, in %."""
    ok = sum(r["requests"] - r["non2xx"] for r in rs)
    att = sum(r["requests"] + r["refused"] + r["reset"] for r in rs)
    return 100.0 * ok / att if att else None


def contamination_meta(meta):
    """Adds the contamination verdict of every measured window to meta (meta.txt keys), and
    returns the list of windows over the threshold as (section, description) pairs."""
    allc = [(sec, c) for sec, cs in meta["contamination"].items() for c in cs if c]
    over = [(sec, c) for sec, c in allc if quiet.contaminated(c)]
    w = quiet.worst([c for _, c in allc])
    meta["contamination_windows"] = str(len(allc))
    meta["contamination_over"] = str(len(over))
    meta["contamination_worst_other_cpu_pct"] = "%.1f" % w["other_cpu_pct"] if w else "n/a"
    meta["contamination_worst_steal_pct"] = "%.1f" % w["steal_pct"] if w else "n/a"
    meta["contamination_threshold"] = "other_cpu_pct<=%.1f steal_pct<=%.1f" % (
        quiet.THRESHOLDS["other_cpu_pct"], quiet.THRESHOLDS["steal_pct"])
    meta["contamination_remeasured"] = str(len(meta.get("contamination_discarded") or []))
    return over


def section(title, window):
    """table.md lines that open a section: its title, then the contamination of its window."""
    return ["", "## " + title, "", quiet.header(window), ""]


def aggregate(targets, raw, ceiling):
    """results.csv's rows: each (target, path, conns) over its rounds: medians of per-round
    figures, sums of errors, the worst round's contamination."""
    agg = {}
    for r in raw:
        if "error" in r:
            continue
        agg.setdefault((r["target"], r["path"], r["conns"]), []).append(r)
    detail = []
    for t in targets:
        for (name, path, conns), rs in sorted(agg.items(), key=lambda kv: (kv[0][1] != "/example", kv[0][2])):
            if name != t.name:
                continue
            d = {"target": name, "path": path, "conns": conns, "rounds": len(rs)}
            for k in ("rps", "p50_ms", "p95_ms", "p99_ms", "max_ms", "cpu_pct"):
                d[k] = med([r[k] for r in rs])
            for k in ("refused", "reset", "non2xx", "timeouts", "requests"):
                d[k] = sum(r[k] for r in rs)
            d["availability_pct"] = availability(rs)
            d["threads"] = max(r["threads"] for r in rs)
            d["other_cpu_pct"] = max(r["other_cpu_pct"] for r in rs)
            d["steal_pct"] = max(r["steal_pct"] for r in rs)
            d["load1_max"] = max(max(r["load1_start"], r["load1_end"]) for r in rs)
            d["quiet_wait_s"] = sum(r.get("quiet_wait_s", 0) for r in rs)
            # requests per second of server CPU time: what a core buys, whatever share of it
            # the server got on a shared machine (compare with 1e6 / prime cost)
            d["req_per_cpu_s"] = med([r["rps"] / (r["cpu_pct"] / 100.0) for r in rs if r["cpu_pct"] > 1.0])
            d["pct_of_ceiling"] = (100.0 * d["rps"] / ceiling) if (ceiling and path == "/example" and t.does_prime) \
                else None
            detail.append(d)

    return detail


def summary_rows(args, targets, detail):
    """summary.csv's rows (the table's columns, then the CSV's extra ones), one per target."""
    summary = []
    for t in targets:
        ex = [d for d in detail if d["target"] == t.name and d["path"] == "/example"]
        hz = [d for d in detail if d["target"] == t.name and d["path"] == "/healthz"]
        best = max(ex, key=lambda d: d["rps"]) if ex else None
        mine = [d for d in detail if d["target"] == t.name]
        h = t.startup.get("healthz")
        row = {
            "TYPE": t.name,
            "BUILD TIME": t.build,
            "ARTIFACT SIZE": human_bytes(t.artifact_bytes) + (" " + t.artifact_note if t.artifact_note else ""),
            "BOOT UP": ("%.1f ms (%.1f-%.1f)" % (h["median_ms"], h["p10_ms"], h["p90_ms"])) if h else
                       ("n/a" if args.startup_runs == 0 else "failed"),
            "RPS": ("%.0f @%d" % (best["rps"], best["conns"])) if best else "failed",
            "RESPONSE TIME p95": ("%.1f ms" % best["p95_ms"]) if best and best["p95_ms"] is not None else "n/a",
            "SATURATION POINT": saturation([(d["conns"], d["rps"], d["p95_ms"]) for d in ex]) if ex else "n/a",
            "RAM": ("%.1f MiB" % (t.peak_rss_kb / 1024)) if t.peak_rss_kb else "n/a",
            "RAM idle": ("%.1f MiB" % (t.idle_rss_kb / 1024)) if t.idle_rss_kb else "n/a",
            "RAM @conns": ("%.1f MiB" % (t.conns_rss_kb / 1024)) if t.conns_rss_kb else
                          ("n/a" if not getattr(args, "rss_conns", 0) else "failed"),
            "CPU": ("%.0f%%" % best["cpu_pct"]) if best else "n/a",
            "THREADS": str(t.max_threads) if t.max_threads else "n/a",
            "% of ceiling": ("%.1f%%" % best["pct_of_ceiling"]) if best and best["pct_of_ceiling"] is not None else "n/a",
            "SERVER FAILURES": str(sum(d["refused"] + d["reset"] + d["non2xx"] for d in mine)) if mine else "n/a",
            "CLIENT TIMEOUTS": str(sum(d["timeouts"] for d in mine)) if mine else "n/a",
            "AVAILABILITY": fmt(availability(mine), "%.2f %%") if mine else "n/a",
            # extra, CSV only
            "healthz_rps": hz[0]["rps"] if hz else None,
            "req_per_cpu_s": best["req_per_cpu_s"] if best else None,
            "boot_ms_median": h["median_ms"] if h else None,
            "boot_ms_min": h["min_ms"] if h else None,
            "boot_ms_p10": h["p10_ms"] if h else None,
            "boot_ms_p90": h["p90_ms"] if h else None,
            "boot_ms_max": h["max_ms"] if h else None,
            "readyz_ms_median": t.startup.get("readyz", {}).get("median_ms"),
            "first_example_ms_median": t.startup.get("example", {}).get("median_ms"),
            "idle_rss_kb": t.idle_rss_kb or None,
            "peak_rss_kb": t.peak_rss_kb or None,
            "conns_rss_kb": t.conns_rss_kb or None,
            "rss_conns": getattr(args, "rss_conns", 0),
            "conns_rss_error": t.conns_rss_err or None,
            "artifact_bytes": t.artifact_bytes,
            "build_s": t.build_s,
            "status": t.failed or "ok",
            "kind": t.kind,
            "does_prime": t.does_prime,
        }
        summary.append(row)
    return summary


def limit_row(summary, ceiling, cost_us):
    """The physical limit's row of the summary table."""
    limit = {k: "" for k in summary[0]} if summary else {}
    limit.update({"TYPE": "physical limit (prime cost)", "BUILD TIME": "-", "ARTIFACT SIZE": "-", "BOOT UP": "-",
                  "RPS": ("%.0f" % ceiling) if ceiling else "n/a",
                  "RESPONSE TIME p95": ("%.2f ms (1 prime)" % (cost_us / 1e3)) if cost_us else "n/a",
                  "SATURATION POINT": "-", "RAM": "-", "RAM idle": "-", "RAM @conns": "-", "CPU": "-", "THREADS": "-",
                  "% of ceiling": "100%" if ceiling else "n/a", "SERVER FAILURES": "-", "CLIENT TIMEOUTS": "-",
                  "AVAILABILITY": "-", "status": "limit"})
    return limit


def cell(v, floats=True):
    """A CSV cell: floats to 3 decimals (unless floats is False), None empty."""
    return ("%.3f" % v) if floats and isinstance(v, float) else ("" if v is None else v)


def write_rows(path, cols, rows, floats=True):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: cell(v, floats) for k, v in r.items()})


OPEN_COLS = ["target", "capacity", "load_pct", "rate", "achieved_rps", "scheduled", "sent", "ok", "non2xx",
             "refused", "reset", "timeouts", "unsent", "late_starts", "max_in_flight", "availability_pct",
             "p50_ms", "p90_ms", "p95_ms", "p99_ms", "p999_ms", "max_ms", "timeout_s", "other_cpu_pct",
             "steal_pct", "kthread_pct", "load1_start", "load1_end", "top", "error"]
SIEGE_COLS = ["target", "transactions", "availability", "transaction_rate", "response_time", "longest_transaction",
              "shortest_transaction", "successful_transactions", "failed_transactions", "elapsed_time",
              "other_cpu_pct", "steal_pct", "load1_start", "load1_end", "top", "error"]


def write_csvs(outdir, targets, raw, detail, summary, limit, meta, open_runs, siege_runs):
    """results.csv, runs.csv, summary.csv, startup.csv, raw.json and, when run, openloop.csv
    and siege.csv."""
    write_rows(os.path.join(outdir, "results.csv"), DETAIL_COLS, detail)
    write_rows(os.path.join(outdir, "runs.csv"), RUN_COLS,
               [dict(r, contaminated="; ".join(quiet.contaminated(r)) or "no") for r in raw])
    write_rows(os.path.join(outdir, "summary.csv"), list(summary[0].keys()) if summary else SUMMARY_COLS,
               summary + ([limit] if summary else []))
    with open(os.path.join(outdir, "startup.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["target", "phase", "runs", "ok", "median_ms", "min_ms", "p10_ms", "p90_ms", "max_ms",
                    "other_cpu_pct", "steal_pct", "load1_start", "load1_end", "contaminated"])
        for t in targets:
            c = t.startup.get("contamination") or {}
            cc = [c.get(k, "") for k in ("other_cpu_pct", "steal_pct", "load1_start", "load1_end")] + \
                ["; ".join(quiet.contaminated(c)) or "no" if c else ""]
            for ph in ("healthz", "readyz", "example"):
                s = t.startup.get(ph)
                if s:
                    w.writerow([t.name, ph, s["runs"], s["ok"]] +
                               ["%.3f" % s[k] for k in ("median_ms", "min_ms", "p10_ms", "p90_ms", "max_ms")] + cc)
    with open(os.path.join(outdir, "raw.json"), "w") as f:
        json.dump({"meta": meta, "runs": raw, "open_loop": list(open_runs), "siege": list(siege_runs)}, f, indent=1)
    if open_runs:
        write_rows(os.path.join(outdir, "openloop.csv"), OPEN_COLS, open_runs)
    if siege_runs:
        write_rows(os.path.join(outdir, "siege.csv"), SIEGE_COLS, siege_runs, floats=False)


def md_head(args, meta, over):
    """table.md's opening: the run's context, its verdicts, its contamination."""
    L = []
    L.append("# primed comparison lab: %s" % meta["date"])
    L.append("")
    L.append("Machine: %s; kernel %s; commit %s." % (meta["machine"], meta["kernel"], meta["commit"]))
    L.append("Command: `%s`" % meta["command"])
    L.append("Pinning: %s. Load: wrk, %ds per run, %d round(s) interleaved A B A B, warm-up %ds; "
             "/example at %s connections, /healthz at %s." % (
                 meta["pinning"], args.duration, args.rounds, args.warmup,
                 ", ".join(map(str, args.conns)), ", ".join(map(str, args.healthz_conns))))
    L.append("Physical limit: prime cost per 1000-bit prime on one core, µs (prime_bench, this run): %s; ceiling %s." % (
        meta["prime_cost_us"], meta["ceiling"]))
    cs = meta["contamination"]
    L.append("Closed-loop timeout: wrk --timeout = run length + 10 s (%d s): an answer that arrives within the "
             "run is never a timeout, however long it queued." % closed_loop_timeout(args.duration))
    if args.quick:
        L.append("")
        L.append("**Quick smoke run (--quick): these figures are not to be quoted.**")
    if over:
        L.append("")
        L.append("**CONTAMINATED: %d measurement window(s) above the quiet-machine threshold; "
                 "benchmarks/lib/publish refuses this run.**" % len(over))
    L.append("")
    L.append(quiet.header(cs["load"] + cs["startup"] + cs["prime"]))
    nd = len(meta.get("contamination_discarded") or [])
    if nd:
        L.append("")
        L.append("Re-measured: %d window(s) came out above the threshold (%s) and were measured again "
                 "(at most %d times each; the discarded figures are in raw.json)." % (
                     nd, "; ".join(sorted({d["what"] for d in meta["contamination_discarded"]}))[:300], RETRIES))
    L.append("")
    return L


def md_summary(args, targets, summary, limit):
    """The summary table, what its columns mean, the targets' notes."""
    L = []
    header = {"RAM @conns": "RAM @%d conns" % getattr(args, "rss_conns", 0)}
    L.append("| " + " | ".join(header.get(c, c) for c in SUMMARY_COLS) + " |")
    L.append("|" + "---|" * len(SUMMARY_COLS))
    for row in summary + [limit]:
        cells = [str(row[c]) for c in SUMMARY_COLS]
        if row.get("status") not in ("ok", "limit"):
            cells[4] = "failed: " + row["status"]
        L.append("| " + " | ".join(c.replace("|", "/") for c in cells) + " |")
    L.append("")
    L.append("RPS: best /example requests/s over the concurrencies (@connections); p95, CPU and %% of ceiling "
             "are from that same run. BOOT UP: exec to first /healthz 200, median (p10-p90) of %d runs. "
             "RAM: peak RSS (VmHWM, summed over the process group) over the whole load. RAM idle: RSS (VmRSS, "
             "summed) just after the first /healthz 200 at start. RAM @N conns: RSS while it holds N keep-alive "
             "connections that each got one /healthz answer, after all the load. THREADS: most seen "
             "during load. SATURATION POINT: connections past which requests/s rose by 5%% or less while p95 "
             "still grew (\"> N\": not reached). SERVER FAILURES: refused connects + connections reset or "
             "closed under a request + non-2xx answers, over all its closed-loop runs; CLIENT TIMEOUTS: wrk gave "
             "up (with this timeout, only a request older than the run); AVAILABILITY: 2xx/3xx answers ÷ "
             "attempted requests, as siege computes it." % args.startup_runs)
    notes = [t for t in targets if t.note]
    if notes:
        L.append("")
        for t in notes:
            L.append("- %s: %s" % (t.name, t.note))
    return L


def md_runs(args, detail, ceiling, cost_us, cs):
    """Every closed-loop run, medians over rounds, with the physical limit's row."""
    L = []
    L += section("Every run (medians over rounds)", cs["load"])
    L.append("| target | path | conns | req/s | p50 ms | p95 ms | p99 ms | refused | reset | non-2xx | timeouts "
             "| availability | CPU % | threads | % of ceiling | req per CPU-s | other CPU % | steal % |")
    L.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for d in detail:
        L.append("| %s | %s | %d | %.0f | %s | %s | %s | %d | %d | %d | %d | %s | %.0f | %d | %s | %s | %.1f | %.1f |" % (
            d["target"], d["path"], d["conns"], d["rps"], fmt(d["p50_ms"], "%.2f"), fmt(d["p95_ms"], "%.2f"),
            fmt(d["p99_ms"], "%.2f"), d["refused"], d["reset"], d["non2xx"], d["timeouts"],
            fmt(d["availability_pct"], "%.2f %%"), d["cpu_pct"], d["threads"],
            ("%.1f%%" % d["pct_of_ceiling"]) if d["pct_of_ceiling"] is not None else "-",
            fmt(d["req_per_cpu_s"], "%.0f", "-"), d["other_cpu_pct"], d["steal_pct"]))
    if ceiling:
        L.append("| physical limit | /example | - | %.0f | - | - | - | - | - | - | - | - | - | %d | 100%% | %.0f | - | - |" % (
            ceiling, ncpu_of(args), 1e6 / cost_us))
    L.append("")
    L.append("req per CPU-s = requests/s ÷ (server CPU % / 100): what one core's worth of the server's "
             "CPU time bought, whatever share of the shared machine it got; the physical limit's is "
             "1e6 / prime cost. other CPU % and steal %: the worst round's contamination (runs.csv has "
             "every round's, with the busiest other processes by name).")
    return L


def md_startup(targets, cs):
    L = []
    L += section("Start-up (ms from exec; each phase polled after the previous one answered)", cs["startup"])
    L.append("| target | /healthz 200 median | min | p10 | p90 | max | /readyz 200 median | first /example median |")
    L.append("|---|---|---|---|---|---|---|---|")
    for t in targets:
        h = t.startup.get("healthz")
        if not h:
            L.append("| %s | %s | | | | | | |" % (t.name, t.startup.get("error", "not run")))
            continue
        L.append("| %s | %.1f | %.1f | %.1f | %.1f | %.1f | %s | %s |" % (
            t.name, h["median_ms"], h["min_ms"], h["p10_ms"], h["p90_ms"], h["max_ms"],
            fmt(t.startup.get("readyz", {}).get("median_ms"), "%.1f", "not offered"),
            fmt(t.startup.get("example", {}).get("median_ms"), "%.1f")))
    return L


def md_warmup(targets):
    """The JVM rows' warm-up: per-second /example throughput until it settled, and their settings."""
    rows = [t for t in targets if t.warmup or t.settings]
    if not rows:
        return []
    L = ["", "## JVM warm-up and settings (unrecorded load until the per-second series settles)", ""]
    for t in rows:
        w = t.warmup
        if w:
            L.append("- %s: %s after %d s; req/s per second: %s" % (
                t.name, "settled" if w.get("settled") else "not settled", w.get("seconds", 0),
                " ".join(str(x) for x in w.get("persec_rps", [])) or w.get("error", "none")))
        if t.settings:
            L.append("- %s settings: %s" % (t.name, t.settings))
    return L


def md_rows(runs, ncols, lead, line):
    """A Markdown table's rows: line(r) for a run, or for a failed one its lead(r) cells, then
    "failed: ERROR" and empty cells up to ncols."""
    out = []
    for r in runs:
        if "error" in r:
            cells = lead(r) + ["failed: %s" % r["error"].replace("|", "/")[:80]]
            out.append("| " + " | ".join(cells) + " |" + " |" * (ncols - len(cells)))
        else:
            out.append(line(r))
    return out


def md_open(args, open_runs, cs):
    L = []
    if open_runs:
        L += section("Open loop: constant arrival rate on /example", cs["open"])
        L.append("`benchmarks/openloop` (k6's constant-arrival-rate: request i starts at i/rate whether or not "
                 "earlier ones finished; latency from the scheduled start, so queueing is not hidden), %d s per "
                 "run, at %s %% of each target's capacity = its best closed-loop /example req/s above; up to 1024 "
                 "connections; the client gives up %d s after sending." % (
                     args.open_duration, ", ".join(map(str, args.open_loop)), open_loop_timeout(args.open_duration)))
        L.append("")
        L.append("| target | capacity req/s | load | rate req/s | answered req/s | p50 ms | p90 ms | p95 ms | p99 ms "
                 "| max ms | server failures | timeouts | unsent | late starts | availability | other CPU % |")
        L.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        L += md_rows(open_runs, 16, lambda r: [r["target"], "%.0f" % r["capacity"], "%d%%" % r["load_pct"]],
                     lambda r: "| %s | %.0f | %d%% | %.1f | %.1f | %s | %s | %s | %s | %s | %d | %d | %d | %d | %s "
                               "| %.1f |" % (
                         r["target"], r["capacity"], r["load_pct"], r["rate"], r["achieved_rps"],
                         fmt(r["p50_ms"], "%.1f"), fmt(r["p90_ms"], "%.1f"), fmt(r["p95_ms"], "%.1f"),
                         fmt(r["p99_ms"], "%.1f"), fmt(r["max_ms"], "%.1f"), r["refused"] + r["reset"] + r["non2xx"],
                         r["timeouts"], r["unsent"], r["late_starts"], fmt(r["availability_pct"], "%.2f %%"),
                         r["other_cpu_pct"]))
        L.append("")
        L.append("server failures: refused + reset + non-2xx; timeouts: the client gave up; unsent: due but "
                 "never sent (the generator fell behind); late starts: sent over 1 ms after due (no free "
                 "connection), their wait is in their latency; availability: 2xx/3xx ÷ scheduled.")
    return L


def md_siege(siege_runs, cs):
    L = []
    if siege_runs:
        L += section("siege -r 10 -c 10 on /example (as seed 003 ran it)", cs["siege"])
        L.append("`siege -R benchmarks/lib/siegerc -r 10 -c 10 URL`: 10 users x 10 repetitions, a new connection "
                 "per transaction, no delay, 30 s socket timeout (siege 4.0.7's defaults, written out).")
        L.append("")
        L.append("| target | transactions | availability | transaction rate /s | response time s | longest transaction s "
                 "| failed |")
        L.append("|---|---|---|---|---|---|---|")
        L += md_rows(siege_runs, 7, lambda r: [r["target"]],
                     lambda r: "| %s | %d | %.2f %% | %.2f | %.3f | %.3f | %d |" % (
                         r["target"], r["transactions"], r["availability"], r["transaction_rate"],
                         r["response_time"], r["longest_transaction"], r["failed_transactions"]))
    return L


def md_charts():
    L = []
    charts = [c for c in ("rps.png", "plaintext.png", "p95.png", "boot.png", "memory.png")]
    L.append("")
    L.append("Charts: " + ", ".join("[%s](%s)" % (c, c) for c in charts) + " (drawn by benchmarks/plot); "
             "every chart, per second too: [report.html](report.html).")
    return L


def report(args, targets, raw, outdir, meta, ceiling, cost_us, engine, open_runs=(), siege_runs=()):
    """Writes the run's CSVs, table.md and meta.txt; returns (summary rows, detail rows)."""
    detail = aggregate(targets, raw, ceiling)
    summary = summary_rows(args, targets, detail)
    limit = limit_row(summary, ceiling, cost_us)
    over = contamination_meta(meta)
    write_csvs(outdir, targets, raw, detail, summary, limit, meta, open_runs, siege_runs)
    cs = meta["contamination"]
    L = md_head(args, meta, over) + md_summary(args, targets, summary, limit) + \
        md_runs(args, detail, ceiling, cost_us, cs) + md_startup(targets, cs) + md_warmup(targets) + \
        md_open(args, open_runs, cs) + \
        md_siege(siege_runs, cs) + md_charts()
    with open(os.path.join(outdir, "table.md"), "w") as f:
        f.write("\n".join(L) + "\n")
    with open(os.path.join(outdir, "meta.txt"), "w") as f:
        for k, v in meta.items():
            if isinstance(v, str):
                f.write("%s=%s\n" % (k, v))
    return summary, detail


def ncpu_of(args):
    return len(args.server_cpus) if args.server_cpus else (os.cpu_count() or 1)
