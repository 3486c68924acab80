"""benchmarks/lib/primedlab/ksweep.py - the target sweep: what each autoscaling setting costs and buys, per image.

Owns: the grid of (target, containerConcurrency) swept, the loads it is swept under (the seed's k6
users who never pause; the same users thinking 1 s between requests), running the model over the
grid for each published image (in parallel, each run with its own seed so the result does not
depend on the order or the number of processes), the recommendation for a p95 objective (the
fewest CPU-seconds billed whose p95 meets it) and the tables of both.
Invariants: a sweep's rows are a pure function of the inputs, the grid, the loads and the seed;
the recommendation reads only those rows.
Never: writes files or pages (benchmarks/knative-sim does), knows manifests (kmanifest.py does).
"""

import math
from multiprocessing import Pool

from primedlab import ksim

TARGETS = [1, 2, 5, 10, 20, 30, 50, 70, 100]
CONCURRENCIES = [0, 10, 50, 100]          # containerConcurrency; 0 = no cap
LOADS = {"seed": 0.0, "think-1s": 1.0}    # name -> users' mean think time, seconds
IMAGES = ("ctr-static", "ctr-distroless", "ctr-slim")    # the published images (JVM rows: jvm_rows())
SLO_MS = 250.0                            # the p95 objective benchmarks/k6/primed.js holds a run to


def grid(targets=TARGETS, concurrencies=CONCURRENCIES):
    """(target, containerConcurrency) pairs: a target above a finite cap resolves to the cap
    (Knative caps it), so those pairs are left out as repeats."""
    return [(t, cc) for cc in concurrencies for t in targets if cc == 0 or t <= cc]


def jvm_rows(names):
    """The JVM rows among the inputs' target names, in their order."""
    return [n for n in names if n.startswith("java")]


def base_service():
    """knative/base/service.yaml's Service but for the two values swept: 100 % utilisation, scale
    0..10, initial 1, 2 CPUs a pod, 1 s scheduling."""
    return ksim.Service(utilization=1.0, min_scale=0, max_scale=10, initial_scale=1, pod_cpus=2,
                        scheduling_delay_s=1.0)


def _one(job):
    tg, load_name, think, target, cc, stage_s, seed = job
    sv = ksim.Service(**{**base_service().__dict__, "container_concurrency": cc, "target": target})
    r = ksim.summarize(ksim.Sim(tg, sv, ksim.seed_load(stage_s, think), seed=seed).run())
    keep = ("p50_ms", "p95_ms", "p99_ms", "mean_ms", "cpu_seconds", "max_ready", "pod_starts", "requests",
            "buffered_requests", "throughput_rps")
    return dict({"image": tg.name, "load": load_name, "target": target, "cc": cc},
                **{k: (round(r[k], 3) if isinstance(r[k], float) else r[k]) for k in keep})


def sweep(targets, pairs=None, loads=None, stage_s=120.0, seed=1, jobs=1, progress=None):
    """Every image x load x pair, simulated; rows in a fixed order (image, load, cc, target)."""
    pairs = pairs or grid()
    loads = loads or LOADS
    work = [(tg, ln, th, t, cc, stage_s, seed) for tg in targets for ln, th in loads.items() for t, cc in pairs]
    # the costly runs (many pods, users who never pause) first, so that the pool ends together
    order = sorted(range(len(work)), key=lambda i: (work[i][2] > 0, work[i][3]))
    out = [None] * len(work)
    if jobs > 1:
        with Pool(jobs) as p:
            for k, r in zip(order, p.imap(_one, [work[i] for i in order])):
                out[k] = r
                if progress:
                    progress(r)
    else:
        for k in order:
            out[k] = _one(work[k])
            if progress:
                progress(out[k])
    return out


def recommend(rows, image, slo_ms=SLO_MS, load="seed"):
    """The row of image under load that bills the fewest whole CPU-seconds with p95 <= slo_ms (ties:
    the larger target, a finite cap before none (it bounds a pod's queue), the larger cap, the lower
    p95: settings that bill the same and differ only in the cap differ in p95 by the simulation's
    grain); when none meets it, the lowest p95. Returns (row, meets)."""
    mine = [r for r in rows if r["image"] == image and r["load"] == load and r["p95_ms"] is not None]
    if not mine:
        raise ValueError("no sweep rows for %s under %s" % (image, load))
    ok = [r for r in mine if r["p95_ms"] <= slo_ms]
    if ok:
        # whole CPU-seconds: a fraction of one is the simulation's grain, not a difference in cost
        return min(ok, key=lambda r: (round(r["cpu_seconds"]), -r["target"], r["cc"] == 0, -r["cc"], r["p95_ms"])), True
    return min(mine, key=lambda r: (r["p95_ms"], r["cpu_seconds"])), False


def recommendations_table(rows, images, slo_ms=SLO_MS):
    """Markdown: per image, the recommended annotations under the seed's load and what they buy,
    what the same choice does when users think 1 s, and the recommendation for those users."""
    L = ["| image | target | containerConcurrency | p95 ms | CPU-s billed | most pods | same, users think 1 s: "
         "p95 ms / CPU-s | users think 1 s: target / cc, p95 ms / CPU-s |", "|---|---|---|---|---|---|---|---|"]
    for im in images:
        r, meets = recommend(rows, im, slo_ms)
        th = [x for x in rows if x["image"] == im and x["load"] == "think-1s" and x["target"] == r["target"]
              and x["cc"] == r["cc"]]
        t1 = th[0] if th else None
        try:
            k, kmeets = recommend(rows, im, slo_ms, load="think-1s")
            own = "%d / %d, %.1f%s / %.0f" % (k["target"], k["cc"], k["p95_ms"], "" if kmeets else " (misses)",
                                             k["cpu_seconds"])
        except ValueError:
            own = "n/a"
        L.append("| %s | %d | %s | %.1f%s | %.0f | %d | %s | %s |" % (
            im, r["target"], r["cc"], r["p95_ms"], "" if meets else " (misses)", r["cpu_seconds"], r["max_ready"],
            "%.1f / %.0f" % (t1["p95_ms"], t1["cpu_seconds"]) if t1 else "n/a", own))
    return "\n".join(L) + "\n"


def curve_table(rows, image, load="seed"):
    """Markdown: one image's grid under one load, CPU-seconds and p95 per target (rows) and cap
    (columns: 'p95 ms / CPU-s')."""
    ccs = sorted({r["cc"] for r in rows if r["image"] == image and r["load"] == load}, key=lambda c: c or 10 ** 6)
    ts = sorted({r["target"] for r in rows if r["image"] == image and r["load"] == load})
    by = {(r["target"], r["cc"]): r for r in rows if r["image"] == image and r["load"] == load}
    L = ["| target | " + " | ".join("cc %s: p95 ms / CPU-s" % (c if c else "0 (none)") for c in ccs) + " |",
         "|---|" + "---|" * len(ccs)]
    for t in ts:
        cells = []
        for c in ccs:
            r = by.get((t, c))
            cells.append("%.1f / %.0f" % (r["p95_ms"], r["cpu_seconds"]) if r else "")
        L.append("| %d | %s |" % (t, " | ".join(cells)))
    return "\n".join(L) + "\n"


def pareto(rows, image, load="seed"):
    """The rows no other row beats on both p95 and CPU-seconds, by p95: the curve a team picks from."""
    mine = sorted((r for r in rows if r["image"] == image and r["load"] == load),
                  key=lambda r: (r["p95_ms"], r["cpu_seconds"]))
    out, best = [], math.inf
    for r in mine:
        if r["cpu_seconds"] < best:
            out.append(r)
            best = r["cpu_seconds"]
    return out
