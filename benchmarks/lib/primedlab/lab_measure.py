"""benchmarks/lib/primedlab/lab_measure.py - one measurement window of the comparison lab: a closed
loop (wrk), an open loop, siege, the start-up probe, the prime cost; the JVM warm-up; the targets
idle before a window; a contaminated window measured again.

Owns: each run's command (pinned to the load CPUs), its timeout, its figures parsed into one dict
with its window's contamination. Never decides what runs in which order (lab_run.py) or writes a
file. Standard library only.
"""

import json
import os
import re
import subprocess
import threading
import time

from primedlab import bench
from primedlab import quiet
from primedlab.lab_target import BENCH_DIR, group_sample, log, server_env

ADOPT = ("conmon",)   # it parents the containers a start-up window starts: ours (quiet.Window)
RETRIES = 2     # --remeasure: steal from the hypervisor comes in bursts
DISCARDED = []  # this run's discarded windows, for raw.json (lab() resets both)


def remeasure(what, fn, qwait, pgids=()):
    """fn()'s result (quiet.Window's keys, or a dict with them under "contamination"), measured again
    while contaminated, RETRIES times at most."""
    for attempt in range(RETRIES + 1):
        r = fn()
        c = r.get("contamination", r) if isinstance(r, dict) else None
        over = quiet.contaminated(c) if c and "other_cpu_pct" in c else []
        if not over or attempt == RETRIES:
            return r
        DISCARDED.append(dict(c, what=what))
        log("%s: discarded (contaminated: %s); measuring again (%d of %d)" % (
            what, "; ".join(over), attempt + 1, RETRIES))
        quiet.wait_quiet(qwait, list(pgids), what=what)


def closed_loop_timeout(duration):
    """wrk's --timeout: longer than the run, so an answer within the run is never a timeout however
    long it queued (wrk counts a late answer both as a request and as a timeout)."""
    return duration + 10


def open_loop_timeout(duration):
    """The open-loop client's give-up time: siege's and k6's order (30 s, 60 s), never shorter than
    the run, so a queued request is a slow answer, not a loss."""
    return max(30, duration)


def live_pgids(targets):
    return [t.stat_pgid for t in targets if t.stat_pgid]


def fields(text):
    """The key=value words of text as a dict of strings."""
    return dict(x.split("=", 1) for x in text.split() if "=" in x)


def run_wrk(t, path, conns, duration, wrk_cpus, timeout_s=None, pgids=()):
    """One wrk run against t: requests/s, percentiles in ms, server failures (refused, reset,
    non-2xx), client timeouts, availability %, the server's CPU % and most threads, answers and
    the closed loop's mean latency per second, and the window's contamination."""
    timeout_s = timeout_s or closed_loop_timeout(duration)
    threads = max(1, min(len(wrk_cpus) if wrk_cpus else (os.cpu_count() or 1), conns))
    pg = t.stat_pgid or t.proc.pid
    cpu0, thr0, _, _ = group_sample(pg)
    maxthr = [thr0]
    stop_evt = threading.Event()

    def sampler():
        while not stop_evt.wait(0.25):
            maxthr[0] = max(maxthr[0], group_sample(pg)[1])

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
    # wrk's counters: requests = complete responses (any status); status = non-2xx/3xx among
    # them; connect = refused or failed connects; read/write = a connection reset or closed
    # under a request (that request is lost). Attempted = answered + lost.
    refused, reset, non2xx = int(kv["connect"]), int(kv["read"]) + int(kv["write"]), int(kv["status"])
    attempted = nreq + refused + reset
    r = {"rps": kv["rps"], "requests": nreq}
    for k in ("p50", "p90", "p95", "p99", "max"):
        r[k + "_ms"] = int(kv[k + "_us"]) / 1e3 if nreq else None    # no answer: no latency
    r.update({
        "refused": refused, "reset": reset, "non2xx": non2xx, "timeouts": int(kv["timeout"]),
        "availability_pct": 100.0 * (nreq - non2xx) / attempted if attempted else None,
        "timeout_s": timeout_s,
        "cpu_pct": 100.0 * (cpu1 - cpu0) / wall if wall > 0 else 0.0,
        "threads": maxthr[0],
        "persec_rps": kv["persec_rps"],
        # a closed loop keeps `conns` requests in flight: Little's law gives the mean latency
        "persec_mean_ms": [round(1e3 * conns / x, 3) if x > 0 else None for x in kv["persec_rps"]],
    }, **contam)
    return r


def settled(series, window=10, tol=0.10):
    """True when the mean of the last `window` per-second throughputs is within tol of the window
    before's: no climb left (the JIT has compiled the path). Not a bound on each second: a JVM at
    ~50 req/s counts 40-70 answers a second and pauses for GC, while a climb of 2 % a second still
    moves a ten-second mean by more than tol."""
    if len(series) < 2 * window:
        return False
    m, mb = sum(series[-window:]) / window, sum(series[-2 * window:-window]) / window
    return m > 0 and abs(m - mb) <= tol * m


def warm_until_stable(t, wrk_cpus, pgids, path="/example", conns=50, chunk=6, max_s=120, window=10, tol=0.10,
                      live=()):
    """Unrecorded load on t in chunk-second wrk runs until settled() or max_s, recorded in t.warmup.
    First the other live targets settle: JVMs started together compile for a minute or more on the
    server's CPU, and a warm-up beside them reads a starved series as flat."""
    waited = settle([x for x in live if x is not t])
    t.warmup = warm(t.name, lambda: run_wrk(t, path, conns, chunk, wrk_cpus, pgids=pgids), path, conns, chunk,
                    max_s, window, tol)
    t.warmup["waited_s"] = round(waited, 1)
    return t.warmup


def warm_url(name, port, path, cpus, conns=8, chunk=6, max_s=60, window=10, tol=0.10):
    """warm_until_stable's record for any server on 127.0.0.1:port (the gateway's and the chain's
    JVMs), wrk pinned to cpus; an answer not 2xx/3xx is an error."""
    url = "http://127.0.0.1:%d%s" % (port, path)
    chunk = min(chunk, max_s)

    def once():
        st, out, _ = bench.run_wrk(url, conns, chunk, threads=1, cpus=cpus, timeout=chunk + 30)
        if st is None:
            return {"error": "wrk gave no stats: " + out[-200:]}
        return st if not st["errors"] else dict(st, error="%d errors in %s requests" % (st["errors"], st["requests"]))
    return warm(name, once, path, conns, chunk, max_s, window, tol)


def warm(name, once, path, conns, chunk, max_s, window, tol):
    """The warm-up loop over once(), one chunk-second wrk run (its stats, or {"error": ...}); each
    run's first second (connections opening) is left out of the series."""
    series, spent = [], 0
    while spent < max_s:
        r = once()
        spent += chunk
        if r.get("error"):
            log("warm-up %s: %s" % (name, r["error"]))
            return {"persec_rps": series, "seconds": spent, "settled": False, "error": r["error"]}
        series += [float(x) for x in (r.get("persec_rps") or [])[1:]]
        if settled(series, window, tol):
            break
    rec = {"persec_rps": [round(x) for x in series], "seconds": spent, "settled": settled(series, window, tol)}
    log("warm-up %s: %s %s c=%d for %d s, per second: %s" % (
        name, "settled" if rec["settled"] else "NOT settled within %d s" % max_s, path, conns, spent,
        " ".join("%.0f" % x for x in series)))
    return rec


def settle(live, quiet_pct=20.0, window=0.25, max_wait=60.0):
    """Waits until the targets together use under quiet_pct of one CPU, a server still working off
    the last run's queue being charged to the next run otherwise. Returns the seconds waited."""
    def cpu():
        return sum(group_sample(t.stat_pgid)[0] for t in live if t.proc and t.proc.poll() is None)
    t0 = time.time()
    while True:
        c0 = cpu()
        time.sleep(window)
        busy = 100.0 * (cpu() - c0) / window
        if busy < quiet_pct or time.time() - t0 > max_wait:
            if busy >= quiet_pct:
                log("targets still busy (%.0f%% CPU) after %.0f s; measuring anyway" % (busy, max_wait))
            return time.time() - t0


def run_openloop(t, path, rate, duration, wrk_cpus, openloop, pgids=()):
    """One benchmarks/openloop run at `rate` req/s: its figures (latency from the scheduled start)
    and the window's contamination."""
    tmo = open_loop_timeout(duration)
    cmd = bench.taskset(wrk_cpus) + [openloop, "--rate", "%.1f" % rate, "--duration", str(duration),
                                      "--timeout", str(tmo), "--max-conns", "1024",
                                      "http://127.0.0.1:%d%s" % (t.port, path)]
    win = quiet.Window(list(pgids), adopt=ADOPT)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=duration + tmo + 60)
    contam = win.stop()
    m = re.search(r"OPENLOOP (.*)", p.stdout)
    if not m:
        return {"error": "openloop failed (rc %d): %s" % (p.returncode, p.stdout.strip()[-300:]), **contam}
    kv = fields(m.group(1))
    r = {k: int(kv[k]) for k in ("scheduled", "sent", "ok", "non2xx", "refused", "reset", "timeouts", "unsent",
                                 "late_starts", "max_in_flight")}
    r.update({"rate": rate, "achieved_rps": float(kv["achieved_rps"]), "timeout_s": tmo,
              "availability_pct": 100.0 * r["ok"] / r["scheduled"] if r["scheduled"] else None})
    for k in ("p50", "p90", "p95", "p99", "p999", "max"):
        r[k + "_ms"] = int(kv[k + "_us"]) / 1e3 if (r["ok"] + r["non2xx"]) else None
    m = re.search(r"OPENLOOP_SECONDS (.*)", p.stdout)    # per second of the run: answers and their p99
    if m:
        sec = fields(m.group(1))
        answers, p99 = sec.get("answers", "").split(","), sec.get("p99_us", "").split(",")
        r["persec_rps"] = [int(x) for x in answers if x]
        r["persec_p99_ms"] = [int(x) / 1e3 if a != "0" else None for a, x in zip(answers, p99) if x]
    r.update(contam)
    return r


def run_siege(t, path, siegerc, wrk_cpus, reps=10, users=10, pgids=()):
    """siege -r reps -c users against t (benchmarks/lib/siegerc restates siege's defaults): its JSON
    summary and the window's contamination."""
    cmd = bench.taskset(wrk_cpus) + ["siege", "-R", siegerc, "-r", str(reps), "-c", str(users),
                                      "http://127.0.0.1:%d%s" % (t.port, path)]
    win = quiet.Window(list(pgids), adopt=ADOPT)
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        return {"error": "siege timed out", **win.stop()}
    contam = win.stop()
    try:
        return dict(json.loads(p.stdout[p.stdout.index("{"):]), **contam)
    except ValueError:
        return {"error": "siege failed (rc %d): %s" % (p.returncode, (p.stdout + p.stderr).strip()[-300:]),
                **contam}


def run_startup(t, runs, server_cpus, probe_cpus, probe, timeout=30):
    """benchmarks/startup's probe over t's command, filling t.startup[phase] (or ["error"]): the
    window's contamination."""
    # the probe pins itself and its child (--cpu, --server-cpus): with taskset prefixes the
    # server's taskset ran, and the server started, on the probe's busy CPU (it inherits it)
    pin = ["--cpu", str(probe_cpus[0])] if probe_cpus else []
    pin += ["--server-cpus", ",".join(map(str, server_cpus))] if server_cpus else []
    cmd = [probe, "--runs", str(runs), "--port", str(t.port), "--timeout", str(timeout), "--quiet"] + pin + \
        ["--"] + t.cmd
    win = quiet.Window(adopt=ADOPT)
    t.startup.pop("error", None)
    try:
        p = subprocess.run(cmd, env=server_env(t), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=runs * (3 * timeout + 15) + 30)
    except subprocess.TimeoutExpired:
        t.startup["error"] = "probe timed out"
        return win.stop()
    for kv in map(fields, p.stdout.splitlines()):
        if "metric" in kv and kv.get("ok", "0") != "0":
            t.startup[kv["metric"]] = dict({k: float(v) for k, v in kv.items() if k.endswith("_ms")},
                                           ok=int(kv["ok"]), runs=int(kv["runs"]))
    if p.returncode != 0:
        t.startup["error"] = (p.stderr.strip().splitlines() or ["rc %d" % p.returncode])[-1]
    return win.stop()


def pinned_output(cpus, cmd, timeout, what):
    """cmd pinned to the first of cpus, its stderr with its stdout: the CompletedProcess, or None
    with `WHAT: why` logged when it could not run."""
    try:
        return subprocess.run(bench.taskset(cpus[:1]) + cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as e:
        log("%s: %s" % (what, e))


def prime_cost(prime_bench, cpus, bits=1000, count=200):
    """prime_bench --csv on one server CPU: {engine: {median_us, mean_us, cpu_mean_us, ...}} from its
    `engine=… bits=… median_us=…` lines ({} without them)."""
    if not prime_bench or not os.access(prime_bench, os.X_OK):
        return {}
    p = pinned_output(cpus, [prime_bench, "--bits", str(bits), "--count", str(count), "--engine", "all",
                             "--csv"], 600, "prime_bench failed")
    if p is None:
        return {}
    out = {}
    for kv in map(fields, p.stdout.splitlines()):
        if "engine" in kv and kv.get("bits") == str(bits) and "median_us" in kv:
            out[kv["engine"]] = {k: float(v) for k, v in kv.items() if k.endswith("_us")}
    if not out:
        log("prime_bench printed no engine=… median_us=… line (rc %d)" % p.returncode)
    return out


def java_prime_cost(cpus, per_round=200, rounds=10, max_warmup_s=120):
    """BigInteger(1000, 3, rnd)'s CPU per prime on one warmed core (benchmarks/peers/java/run21
    PrimeCost): its `prime_cost java=… cpu_ms_median=…` line's fields, or {} with the reason logged."""
    p = pinned_output(cpus, [os.path.join(BENCH_DIR, "peers", "java", "run21"), "PrimeCost", str(per_round),
                             str(rounds), str(max_warmup_s)], 900, "Java's prime cost not measured")
    if p is None:
        return {}
    line = next((x for x in p.stdout.splitlines() if x.startswith("prime_cost ")), None)
    if p.returncode != 0 or not line:
        log("Java's prime cost not measured (rc %d): %s" % (p.returncode, p.stdout.strip()[-300:]))
        return {}
    return fields(line)


def cost_of(c):
    """(µs of one core a request must pay, its key): the mean CPU time per prime, else the wall mean,
    else the wall median. The mean bounds throughput (prime search times have a long tail); CPU
    time keeps other tenants of a shared core out of the physical limit."""
    for k in ("cpu_mean_us", "mean_us", "median_us"):
        if k in c:
            return c[k], k
    return None, None
