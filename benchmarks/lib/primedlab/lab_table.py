"""benchmarks/lib/primedlab/lab_table.py - the comparison lab's rows, made from a run's raw windows:
results.csv's (aggregate), the summary's per target (summary_rows) and the physical limit's
(limit_row), and their number formats. Pure: never measures, never writes a file (lab_report.py
does). Standard library only.
"""

import statistics

from primedlab.lab_target import human_bytes


def saturation(points):
    """The first of points [(conns, rps, p95_ms)] past which requests/s rises by 5 % or less while
    p95 keeps growing."""
    pts = sorted(p for p in points if p[1] and p[2] is not None)
    for (c0, r0, l0), (c1, r1, l1) in zip(pts, pts[1:]):
        if r1 <= r0 * 1.05 and l1 > l0:
            return str(c0)
    return "> %d" % pts[-1][0] if pts else "n/a"


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt(x, spec="%.0f", none="n/a"):
    return none if x is None else spec % x


SUMMARY_COLS = ["TYPE", "BUILD TIME", "ARTIFACT SIZE", "BOOT UP", "RPS", "RESPONSE TIME p95",
                "SATURATION POINT", "RAM", "RAM idle", "RAM @conns", "CPU", "THREADS", "% of ceiling", "SERVER FAILURES",
                "CLIENT TIMEOUTS", "AVAILABILITY"]


def availability(rs):
    """Availability over wrk runs: answered with 2xx/3xx / attempted, in %."""
    ok = sum(r["requests"] - r["non2xx"] for r in rs)
    att = sum(r["requests"] + r["refused"] + r["reset"] for r in rs)
    return 100.0 * ok / att if att else None


def aggregate(targets, raw, ceiling):
    """results.csv's rows: each (target, path, conns) over its rounds: medians of per-round
    figures, sums of errors, the worst round's contamination."""
    agg = {}
    for r in raw:
        if "error" not in r:
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
            for k in ("threads", "other_cpu_pct", "steal_pct"):
                d[k] = max(r[k] for r in rs)
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
        summary.append({
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
            **{"boot_ms_" + k: h[k + "_ms"] if h else None for k in ("median", "min", "p10", "p90", "max")},
            "readyz_ms_median": t.startup.get("readyz", {}).get("median_ms"),
            "first_example_ms_median": t.startup.get("example", {}).get("median_ms"),
            **{k: getattr(t, k) or None for k in ("idle_rss_kb", "peak_rss_kb", "conns_rss_kb")},
            "rss_conns": getattr(args, "rss_conns", 0),
            "conns_rss_error": t.conns_rss_err or None,
            "artifact_bytes": t.artifact_bytes,
            "build_s": t.build_s,
            "status": t.failed or "ok",
            "kind": t.kind,
            "does_prime": t.does_prime,
        })
    return summary


def limit_row(summary, ceiling, cost_us):
    """The physical limit's row of the summary table."""
    limit = dict.fromkeys(summary[0] if summary else (), "")
    limit.update(dict.fromkeys(SUMMARY_COLS, "-"))
    limit.update({"TYPE": "physical limit (prime cost)", "RPS": ("%.0f" % ceiling) if ceiling else "n/a",
                  "RESPONSE TIME p95": ("%.2f ms (1 prime)" % (cost_us / 1e3)) if cost_us else "n/a",
                  "% of ceiling": "100%" if ceiling else "n/a", "status": "limit"})
    return limit
