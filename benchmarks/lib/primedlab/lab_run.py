"""benchmarks/lib/primedlab/lab_run.py - one run of the comparison lab, in order: the physical limit,
start-up, then every target up at once for the closed loop, the open loop and siege, then report.

Owns: the order and interleaving (every measurement of one kind runs A B A B across targets in one
process, so drift on a shared machine hits all targets alike); the quiet wait before each window;
a target that fails to start gets a row saying so instead of stopping the run; stopping every
target at the end; trimming the servers' logs; the JVM rows' JFR recordings' summary (jfr/summary.json,
a line in each row's note, with which RSS readings followed a full GC). Never installs packages or builds anything
(benchmarks/run does), never writes outside the results dir.
Standard library only.
"""

import json
import os
import resource
import shlex
import subprocess

from primedlab import quiet
from primedlab import lab_measure
from primedlab.lab_measure import (ADOPT, DISCARDED, cost_of, java_prime_cost, live_pgids, prime_cost, remeasure,
                                   run_openloop, run_siege, run_startup, run_wrk, settle, warm_until_stable)
from primedlab.lab_report import report
from primedlab.lab_table import fmt
from primedlab.lab_target import (BENCH_DIR, group_sample, held_rss, jfr_path, jfr_summary, jvm_settings, log,
                                  raise_nofile, safe, start, stop)


def lab(args, targets, outdir, meta):
    os.makedirs(outdir, exist_ok=True)
    logdir = os.path.join(outdir, "logs")
    os.makedirs(logdir, exist_ok=True)
    server_cpus, wrk_cpus = args.server_cpus, args.wrk_cpus

    contam = {"prime": [], "startup": [], "load": [], "open": [], "siege": []}
    meta["contamination"] = contam
    lab_measure.RETRIES = max(0, getattr(args, "remeasure", lab_measure.RETRIES))
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

    # 1b. Java's prime alone (BigInteger on one warmed core) when the run has a JVM row: the Java
    # answer's engine factor, measured in the same run
    meta["java_prime"] = {}
    if any(t.kind == "java" for t in targets):
        quiet.wait_quiet(qwait, what="PrimeCost")
        win = quiet.Window()
        # a --quick run (CI) only checks that it runs: 3 rounds of 20 after at most 10 s of warm-up
        meta["java_prime"] = java_prime_cost(server_cpus or [0], *((20, 3, 10) if getattr(args, "quick", False) else ()))
        if meta["java_prime"]:
            contam["prime"].append(win.stop())

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
            if not start(t, server_cpus, logdir, jfr=os.path.join(outdir, "jfr")):
                log("  %s failed: %s" % (t.name, t.failed))
            elif t.kind == "java":
                t.settings = jvm_settings(os.path.join(logdir, "server-%s.log" % safe(t.name)))
                if t.settings:
                    log("  %s: %s" % (t.name, t.settings))
        live = [t for t in targets if not t.failed]
        if args.warmup > 0:
            for t in live:
                if t.kind == "java":   # the JIT's turn: until the per-second series settles
                    warm_until_stable(t, wrk_cpus, live_pgids(live), max_s=getattr(args, "warmup_max", 120), live=live)
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
    jvm_notes(targets, outdir, meta)
    trim_logs(logdir)
    return report(args, targets, raw, outdir, meta, ceiling, cost_us, best_engine, open_runs, siege_runs)


def jvm_notes(targets, outdir, meta):
    """Each JVM row's note gets which RSS readings followed a full GC and what its JFR recording
    says (jfr_summary), all of which go to jfr/summary.json too."""
    out = {}
    for t in (t for t in targets if t.kind == "java" and t.gc):
        gc = [k for k, why in t.gc.items() if not why]
        t.note += "; %s" % "; ".join(["read after a full GC (jcmd GC.run): " + ", ".join(gc)] * bool(gc) + [
            "%s: no GC before reading (%s)" % (k, why) for k, why in t.gc.items() if why])
        j = out[t.name] = dict(jfr_summary(t, jfr_path(t, os.path.join(outdir, "jfr"))), rss_gc=t.gc)
        t.note += "; JFR (jfr/%s): %s" % (os.path.basename(jfr_path(t, "")), j["error"] if "error" in j else (
            "%d GCs, pauses %.0f ms in all, %.0f ms the longest (%d by jcmd); JIT %s compilations, %.1f s; "
            "virtual threads pinned over 20 ms: %s" % (
                j["gc_count"], j["gc_pause_total_ms"], j["gc_pause_max_ms"], j["gc_by_jcmd"], j["jit_compilations"],
                j["jit_time_ms"] / 1e3, "n/a" if j["vthread_pinned"] is None else j["vthread_pinned"])))
        log("%s: JFR %s" % (t.name, json.dumps(j)))
    if out:
        with open(os.path.join(outdir, "jfr", "summary.json"), "w") as f:
            json.dump(out, f, indent=1)
        meta["jfr"] = "jfr/summary.json: %s" % ", ".join(out)


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
