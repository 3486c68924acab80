"""docs/publish/lab_report.py - the comparison lab's report: the files a run leaves in its
results directory.

Owns: results.csv, runs.csv, summary.csv, startup.csv, raw.json, openloop.csv, siege.csv
(write_csvs, their columns); table.md, section by section, each opening with its windows'
contamination (md_*); meta.txt with the contamination verdict (contamination_meta); report(),
which writes them all from a run's rows. Never measures (lab_measure.py) or computes a row
(lab_table.py). Standard library only.
"""

import csv
import json
import os

from primedlab import quiet
from primedlab import lab_measure
from primedlab.lab_measure import closed_loop_timeout, open_loop_timeout
from primedlab.lab_table import SUMMARY_COLS, aggregate, fmt, limit_row, summary_rows

DETAIL_COLS = ["target", "path", "conns", "rounds", "rps", "p50_ms", "p95_ms", "p99_ms", "max_ms",
               "refused", "reset", "non2xx", "timeouts", "availability_pct", "cpu_pct", "threads",
               "pct_of_ceiling", "req_per_cpu_s", "other_cpu_pct", "steal_pct", "load1_max", "quiet_wait_s"]
RUN_COLS = ["target", "path", "conns", "round", "rps", "requests", "p50_ms", "p95_ms", "p99_ms", "max_ms",
            "refused", "reset", "non2xx", "timeouts", "availability_pct", "timeout_s", "cpu_pct", "threads",
            "wall_s", "other_cpu_pct", "steal_pct", "kthread_pct", "load1_start", "load1_end", "top",
            "quiet_wait_s", "settle_s", "contaminated"]


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
    jp = meta.get("java_prime")
    if jp:
        L.append("Java's prime: BigInteger(1000, 3, rnd) alone on one warmed core, CPU ms per prime (PrimeCost, JDK %s, "
                 "this run): median %s, min %s, max %s over %s rounds of %s; warm-up %s s, settled %s." % (
                     jp.get("java", "?"), jp.get("cpu_ms_median"), jp.get("cpu_ms_min"), jp.get("cpu_ms_max"),
                     jp.get("rounds"), jp.get("per_round"), jp.get("warmup_s"), jp.get("settled")))
    cs = meta["contamination"]
    L.append("Closed-loop timeout: wrk --timeout = run length + 10 s (%d s): an answer that arrives within the "
             "run is never a timeout, however long it queued." % closed_loop_timeout(args.duration))
    if args.quick:
        L.append("")
        L.append("**Quick smoke run (--quick): these figures are not to be quoted.**")
    if over:
        L.append("")
        L.append("**CONTAMINATED: %d measurement window(s) above the quiet-machine threshold; "
                 "docs/publish/publish.py refuses this run.**" % len(over))
    L.append("")
    L.append(quiet.header(cs["load"] + cs["startup"] + cs["prime"]))
    nd = len(meta.get("contamination_discarded") or [])
    if nd:
        L.append("")
        L.append("Re-measured: %d window(s) came out above the threshold (%s) and were measured again "
                 "(at most %d times each; the discarded figures are in raw.json)." % (
                     nd, "; ".join(sorted({d["what"] for d in meta["contamination_discarded"]}))[:300], lab_measure.RETRIES))
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
             "connections that each got one /healthz answer, after all the load; a JVM row's two are read "
             "after a full GC (its JDK's jcmd GC.run), its heap's growth under load left out. THREADS: most seen "
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
            L.append("- %s: %s after %d s%s; req/s per second: %s" % (
                t.name, "settled" if w.get("settled") else "not settled", w.get("seconds", 0),
                " (begun once the other targets had settled, %.1f s)" % w["waited_s"] if "waited_s" in w else "",
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
    L.append("Charts: " + ", ".join("[%s](%s)" % (c, c) for c in charts) + " (drawn by benchmarks/plot.py); "
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
