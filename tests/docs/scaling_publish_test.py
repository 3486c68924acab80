#!/usr/bin/python3
"""tests/docs/scaling_publish_test.py - a scaling sweep as the Results page's source:
docs/publish/publish.py --scaling, scalingrun.py and figures.b_scaling on a copy of the docs
(meson test 'docs-publish-scaling').

Made-up sweeps (runs as benchmarks/scaling.py records them, each with its contamination window),
rendered by benchmarks/scaling.py --from as a real one is, are published into a copy of README.md
and docs/: the spoilt ones refused, a quiet one kept and shown in the Results page's scaling block,
a later one up to 12 CPUs in its place. Standard library only; no measurement.
"""
import copy
import json
import os
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from docslib import ROOT, Docs, block, load, read, run, write  # noqa: E402  (and primedlab's path)
from primedlab.tap import Tap  # noqa: E402

SCALING = os.path.join(ROOT, "benchmarks", "scaling.py")
QUIET = {"wall_s": 6.0, "other_cpu_pct": 0.0, "other_cpu_s": 0.0, "steal_pct": 0.0, "kthread_pct": 0.1,
         "load1_start": 0.5, "load1_end": 1.9, "top": "-"}


def closed(server, n, rnd, rps, shared):
    return {"path": "/example", "server": server, "n": n, "round": rnd, "conns": 32 * n, "server_cpus": list(range(n)),
            "loader_cpus": list(range(n)) if shared else [n], "loader_shared": shared, "rps": rps,
            "requests": int(rps * 6), "mean_ms": 40.0, "p50_ms": 40.0, "p99_ms": 60.0,
            "server_cpu_us": 2e6 / rps if shared else 1e6 / rps, "loader_cpu_pct": 10.0, "errors": 0,
            "contamination": dict(QUIET)}


def sweep(counts, shared_from):
    """A sweep of primed default and inline at each N in counts: default at 1000 req/s a CPU,
    inline at 1010; overload p99 4000 ms (default) against 4100 (inline); the lone request 1.30 ms
    at N=1 and 0.78 ms above."""
    runs, ov, lone = [], [], []
    for n in counts:
        shared = n >= shared_from
        for rnd in (1, 2, 3):
            for server, rps in (("primed default", 1000.0 * n), ("primed inline", 1010.0 * n)):
                runs.append(closed(server, n, rnd, rps, shared))
                ov.append({"server": server, "n": n, "round": rnd, "capacity_rps": rps, "rate": 2020.0 * n,
                           "scheduled": 1000, "ok": 900, "non2xx": 0, "refused": 0, "reset": 0, "timeouts": 0,
                           "unsent": 0, "availability_pct": 90.0, "p50_ms": 2000.0,
                           "p99_ms": 4000.0 if server == "primed default" else 4100.0, "max_ms": 4500.0,
                           "contamination": dict(QUIET)})
                lone.append(dict(closed(server, n, rnd, 760.0, shared), mean_ms=1.30 if n == 1 else 0.78,
                                 p50_ms=1.2, p99_ms=2.5))
    for r in lone:
        del r["path"], r["conns"]
    top = counts[-1] + 1  # the made-up host's CPUs: one more than the largest N
    return {"meta": {"host": "Made-up CPU, %d CPUs usable (%d online), kernel 6.0" % (top, top),
                     "date": "2099-01-0%d 03:04 UTC" % (1 if top <= 12 else 2),
                     "command": "benchmarks/scaling.py (made up)", "version": "primed 0.1.0",
                     "build": "primed 0.1.0\nprime vector: on, eight lanes (made up)", "commit": "abc1234",
                     "cpus": list(range(top)), "bundle": False, "peers": [], "contamination": "-"},
            "config": {"counts": counts, "paths": ["/example"], "modes": ["default", "inline"],
                       "conns_per_cpu": {"example": 32, "healthz": 64}, "warmup_s": 2, "duration_s": 6,
                       "rounds": 3, "loader_limit": 90.0, "overload_factor": 2.0, "lone": True},
            "runs": runs, "summary": [], "overload": ov, "lone": lone}


def render(tmp, name, data):
    """benchmarks/scaling.py --from: the sweep's summary, scaling.md and scaling.json as a real run's."""
    res = os.path.join(tmp, name)
    os.makedirs(res)
    write(os.path.join(res, "scaling.json"), json.dumps(data))
    return res, run(SCALING, "--from", os.path.join(res, "scaling.json"))


def main():
    t = Tap(max_detail=30)
    with tempfile.TemporaryDirectory(prefix="primed-scaling-publish-test.") as tmp:
        site = Docs(tmp)
        kept = os.path.join(site.docs, "lab", "scaling")
        before = set(os.listdir(kept)) if os.path.isdir(kept) else set()

        good = sweep([1, 2], shared_from=2)
        for label, spoil, want in (
                ("a run without its window", lambda d: d["runs"][0].pop("contamination"), "no contamination window"),
                ("a window over the threshold", lambda d: d["overload"][1]["contamination"].update(
                    other_cpu_pct=30.0, other_cpu_s=2.0), "contaminated: 1 of"),
                ("a failed run", lambda d: d["lone"][0].update(error="wrk gave no stats"), "runs failed")):
            bad = copy.deepcopy(good)
            spoil(bad)
            res, p = render(tmp, "bad-%d" % len(label), bad)
            q = site.publish("--scaling", res)
            now = set(os.listdir(kept)) if os.path.isdir(kept) else set()
            t.ok(p.returncode in (0, 1) and q.returncode == 1 and want in q.stderr and now == before,
                 "publish --scaling refuses %s and keeps nothing" % label, p.stderr[-300:] + q.stdout + q.stderr)

        res, p = render(tmp, "good", good)
        t.ok(p.returncode == 0 and os.path.exists(os.path.join(res, "scaling.md")),
             "benchmarks/scaling.py --from renders the made-up sweep", p.stdout[-500:] + p.stderr[-500:])
        q = site.publish("--scaling", res)
        t.ok(q.returncode == 0, "publish --scaling accepts a quiet sweep", q.stdout + q.stderr)
        folder = os.path.join(kept, "2099-01-01-0304")
        data = load(os.path.join(folder, "scaling.json"))
        t.ok(data.get("id") == "2099-01-01-0304" and data.get("notebook") == "2099-01-01-0304-scaling-run.md"
             and not any(f.endswith(".md") for f in os.listdir(folder)),
             "the sweep is kept in docs/lab/scaling/2099-01-01-0304/ with its id and notebook "
             "(its tables in the entry, no page there)", sorted(data)[:20])
        etext = read(os.path.join(site.docs, "lab", "2099-01-01-0304-scaling-run.md"))
        t.ok("benchmarks/scaling.py (made up)" in etext and "every run under the threshold" in etext
             and "(2099-01-01-0304-scaling-run.md)" in read(os.path.join(site.docs, "lab", "README.md")),
             "its notebook entry holds its command, tables and contamination, and the notebook index lists it",
             etext[:600])

        b = block(site.tree, "docs/benchmarks.md", "scaling")
        body = b["body"]
        t.ok(b["run"] == "docs/lab/scaling/2099-01-01-0304/scaling.json",
             "the Results page's scaling block names the sweep's kept data", b["run"])
        t.ok("| primed inline | 2 | 2020 | 1.01 | – | – |" in body,
             "the block gives each mode's req/s over the first mode's (inline 2020 ÷ default 2000 at N=2)", body)
        t.ok("| primed inline | 1 | 2020 req/s | 4.10 s | 1.02 | 4.50 s | 0 |" in body,
             "the overload row gives the answered p99 over the first mode's (4.1 s ÷ 4.0 s)", body)
        t.ok("| primed default | 2 | 0.78 ms | 2.50 ms | 0.60 |" in body,
             "the lone request's mean over the same mode's at N=1 (0.78 ÷ 1.30)", body)
        t.ok("At N=2 the loader shares the server's CPUs" in body
             and "| primed default | 2 | 2000 | 1.00 | – | – |" in body,
             "a row whose loader shares the server's CPUs has no speedup or efficiency, and says why", body)
        t.ok("The largest N here is 2" in body and "benchmarking.md#on-a-bigger-host-the-bundle" in body,
             "a sweep below 12 CPUs says what is left for a bigger host", body)

        c = site.check()
        t.ok("block 'scaling'" not in c, "tests/docs/check finds the scaling block current", c)
        site.regenerates(t, "docs/benchmarks.md", "scaling", "| 0.60 |", "| 0.50 |",
                         data="sweep", where="in the scaling block")

        res, p = render(tmp, "big", sweep([1, 2, 4, 8, 12], shared_from=99))
        q = site.publish("--scaling", res)
        b = block(site.tree, "docs/benchmarks.md", "scaling")
        t.ok(q.returncode == 0 and b["run"] == "docs/lab/scaling/2099-01-02-0304/scaling.json"
             and "| primed inline | 12 | 12120 | 1.01 | 12.00 | 100 % |" in b["body"]
             and "largest N" not in b["body"] and "shares the server's CPUs" not in b["body"],
             "a later sweep up to 12 CPUs replaces it, with speedup and efficiency and no bigger-host note",
             q.stdout + q.stderr + b["body"])
    return t.finish()


if __name__ == "__main__":
    sys.exit(main())
