"""benchmarks/lib/primedlab/lab_run.py - one run of the comparison lab, in order: the physical limit,
start-up, then every target up at once for the closed loop, the open loop and siege, then report.

Owns: the order and interleaving (every measurement of one kind runs A B A B across targets in one
process, so drift on a shared machine hits all targets alike); the quiet wait before each window;
a row saying so for a target that fails to start, instead of stopping the run; stopping every
target at the end; trimming the servers' logs; the JVM rows' notes and jfr/summary.json. Never
installs or builds anything (benchmarks/run does), never writes outside the results dir. Standard
library only.
"""

import json
import os
import shlex

from primedlab import quiet
from primedlab import lab_measure
from primedlab.lab_measure import (DISCARDED, cost_of, java_prime_cost, live_pgids, prime_cost, remeasure,
                                   run_openloop, run_siege, run_startup, run_wrk, settle, warm_until_stable)
from primedlab.lab_report import ncpu_of, report
from primedlab.lab_table import fmt
from primedlab.lab_target import (BENCH_DIR, group_sample, held_rss, jfr_path, jfr_summary, jvm_settings, log,
                                  raise_nofile, safe, start, stop)


def lab(args, targets, outdir, meta):
    logdir = os.path.join(outdir, "logs")
    os.makedirs(logdir, exist_ok=True)
    server_cpus, wrk_cpus = args.server_cpus, args.wrk_cpus
    contam = meta["contamination"] = {k: [] for k in ("prime", "startup", "load", "open", "siege")}
    lab_measure.RETRIES = max(0, getattr(args, "remeasure", lab_measure.RETRIES))
    DISCARDED.clear()
    meta["contamination_discarded"] = DISCARDED
    qwait = getattr(args, "quiet_wait", 0)
    if getattr(args, "rss_conns", 0) > 0:
        raise_nofile(args.rss_conns)
    ceiling, cost_us, best_engine = physical_limit(args, targets, meta, contam["prime"], qwait)
    # start-up, target after target (each run is short; the probe kills between runs)
    for i, t in enumerate(targets):
        if t.failed or args.startup_runs <= 0:
            continue
        log("startup %d/%d %s: %d runs" % (i + 1, len(targets), t.name, args.startup_runs))
        quiet.wait_quiet(qwait, what="start-up of %s" % t.name)
        c = remeasure("start-up of %s" % t.name,
                      lambda: run_startup(t, args.startup_runs, server_cpus, wrk_cpus, args.probe), qwait)
        t.startup["contamination"] = c
        contam["startup"].append(c)
        h = t.startup.get("healthz")
        log("  %s: healthz %s ms median%s" % (t.name, fmt(h and h["median_ms"], "%.1f"),
                                               ("  (" + t.startup["error"] + ")") if "error" in t.startup else ""))
    # load: all targets up at once, each on its own port; rounds interleave A B A B
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
        for t in live if args.warmup > 0 else []:
            if t.kind == "java":   # the JIT's turn: until the per-second series settles
                warm_until_stable(t, wrk_cpus, live_pgids(live), max_s=getattr(args, "warmup_max", 120), live=live)
            else:
                log("warm-up %s: /example c=50 %ds (not recorded)" % (t.name, args.warmup))
                run_wrk(t, "/example", 50, args.warmup, wrk_cpus, pgids=live_pgids(live))
        closed_loop(args, live, qwait, contam["load"])
        for t in live:
            if t.proc.poll() is None:
                t.peak_rss_kb = max(t.peak_rss_kb, group_sample(t.stat_pgid)[2])
        open_loop(args, live, qwait, contam["load"], contam["open"])
        siege(args, live, qwait, contam["siege"])
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
    return report(args, targets, contam["load"], outdir, meta, ceiling, cost_us, best_engine, contam["open"],
                  contam["siege"])


def physical_limit(args, targets, meta, windows, qwait):
    """prime_bench on one server CPU: (ceiling, cost_us, best_engine), Nones without it; then Java's
    prime alone on one warmed core when the run has a JVM row (the Java answer's engine factor)."""
    cpus = args.server_cpus or [0]
    if args.prime_bench and os.access(args.prime_bench, os.X_OK):
        quiet.wait_quiet(qwait, what="prime_bench")
    win = quiet.Window()
    costs = prime_cost(args.prime_bench, cpus, count=args.prime_count)
    if costs:
        windows.append(win.stop())
        best_engine = min(costs, key=lambda e: cost_of(costs[e])[0])
        cost_us, cost_kind = cost_of(costs[best_engine])
        ncpu = ncpu_of(args)
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
        best_engine, cost_us, ceiling = None, None, None
        log("prime_bench not available: no physical-limit line this run")
        meta["prime_cost_us"] = "n/a"
        meta["ceiling"] = "n/a (benchmarks/prime_bench not built)"
    meta["java_prime"] = {}
    if any(t.kind == "java" for t in targets):
        quiet.wait_quiet(qwait, what="PrimeCost")
        win = quiet.Window()
        # a --quick run (CI) only checks that it runs: 3 rounds of 20 after at most 10 s of warm-up
        meta["java_prime"] = java_prime_cost(cpus, *((20, 3, 10) if getattr(args, "quick", False) else ()))
        if meta["java_prime"]:
            windows.append(win.stop())
    return ceiling, cost_us, best_engine


def measured(what, fn, live, qwait, into, **tags):
    """One window of a live target in its turn: the targets idle (settle), the machine quiet, fn()
    measured again while contaminated, tagged and added to into; (it, seconds settling, waiting)."""
    settled_s = settle(live)
    waited, _ = quiet.wait_quiet(qwait, live_pgids(live), what=what)
    r = remeasure(what, fn, qwait, live_pgids(live))
    r.update(tags)
    into.append(r)
    return r, settled_s, waited


def closed_loop(args, live, qwait, raw):
    """wrk at each scenario, round after round, the targets interleaved A B A B."""
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
                what = "%s %s c=%d" % (t.name, path, conns)
                r, settled_s, waited = measured(
                    what, lambda: run_wrk(t, path, conns, args.duration, args.wrk_cpus, pgids=live_pgids(live)),
                    live, qwait, raw, target=t.name, path=path, conns=conns, round=rnd)
                r.update({"settle_s": round(settled_s, 2), "quiet_wait_s": round(waited, 1)})
                flag = (" CONTAMINATED (%s)" % quiet.describe(r)) if quiet.contaminated(r) else ""
                got = r.get("error") or "%.0f req/s p95 %s ms cpu %.0f%% refused %d reset %d non2xx %d " \
                    "timeouts %d other %.1f%%" % (r["rps"], fmt(r["p95_ms"], "%.2f"), r["cpu_pct"], r["refused"],
                                                  r["reset"], r["non2xx"], r["timeouts"], r["other_cpu_pct"])
                log("%d/%d %s round %d: %s%s" % (k, total, what, rnd, got, flag))


def jvm_notes(targets, outdir, meta):
    """Which RSS readings followed a full GC and what the JFR recording says, in each JVM row's note
    and in jfr/summary.json."""
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


def open_loop(args, live, qwait, raw, out):
    """Constant arrival rate at each fraction of each target's capacity, interleaved A B A B."""
    fracs = getattr(args, "open_loop", [])
    if fracs and not getattr(args, "openloop", None):
        log("open-loop table skipped: benchmarks/openloop not built")
        return
    for f in fracs:
        for t in live:
            cap = max((r["rps"] for r in raw if r["target"] == t.name and r["path"] == "/example"
                       and "error" not in r), default=None)   # its best closed-loop /example requests/s
            if not cap or t.proc.poll() is not None:
                continue
            r, _, _ = measured("open loop %s %d%%" % (t.name, f),
                               lambda: run_openloop(t, "/example", cap * f / 100.0, args.open_duration,
                                                    args.wrk_cpus, args.openloop, pgids=live_pgids(live)),
                               live, qwait, out, target=t.name, capacity=cap, load_pct=f)
            if "error" in r:
                log("open loop %s %d%%: %s" % (t.name, f, r["error"]))
            else:
                log("open loop %s %d%% of %.0f = %.1f req/s: ok %d p50 %s p99 %s ms, refused %d reset %d non2xx %d "
                    "timeouts %d unsent %d, other %.1f%%" % (
                        t.name, f, cap, r["rate"], r["ok"], fmt(r["p50_ms"], "%.1f"), fmt(r["p99_ms"], "%.1f"),
                        r["refused"], r["reset"], r["non2xx"], r["timeouts"], r["unsent"], r["other_cpu_pct"]))


def siege(args, live, qwait, out):
    for t in live:
        if not getattr(args, "siege", False) or t.proc.poll() is not None:
            continue
        r, _, _ = measured("siege %s" % t.name,
                           lambda: run_siege(t, "/example", os.path.join(BENCH_DIR, "lib", "siegerc"), args.wrk_cpus,
                                             pgids=live_pgids(live)),
                           live, qwait, out, target=t.name)
        log("siege %s: %s" % (t.name, r.get("error") or "availability %.2f %%, %.2f trans/s, longest %.2f s" % (
            r["availability"], r["transaction_rate"], r["longest_transaction"])))


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
