#!/usr/bin/python3
"""benchmarks/knative-target.py: measure what one primed pod can take and derive the Knative
autoscaling numbers for knative/base/service.yaml from it.

Starts build/src/primed (building it when missing) on 127.0.0.1 with an ephemeral port and
PRIMED_THREADS = the pod's CPU count, drives GET /example with wrk at concurrency 1, 2, 4, ... 64
(short closed-loop runs: wrk keeps exactly C requests in flight), and prints per level the
throughput X, latency percentiles and the Little's-law check N = X * mean latency. Then:

  containerConcurrency (hard cap) = the largest measured C whose p95 <= the objective (and no
      errors): queue-proxy never lets more requests into the pod, so the pod's own latency stays
      within the objective; extra requests wait for a new pod instead.
  autoscaling target (soft)       = headroom * containerConcurrency (default 0.7, Knative's own
      default utilisation), never below the knee X_max * S1 (S1 = latency at C=1, the service
      time): below the knee a pod would scale out before its cores are busy.

Also reports primed's memory (VmRSS idle, VmHWM after the load) for the resource requests.

Then (unless --no-model) the autoscaler model (benchmarks/knative-sim, docs/autoscaling.md) runs
the seed's k6 scenario (0 -> 50 -> 100 -> 200 users, stages of --model-stage) over pods that serve
as this run measured (per-core service time = threads / X_max, or the CPU time per prime when the
wall clock is contended; its skew from the C=1 run; start-up from the spawn), for each measured
level as containerConcurrency with target = headroom x it, and for the recommendation above,
knative/base/service.yaml's values and Knative's defaults: its recommendation is the cheapest in
CPU-seconds whose p95 meets the objective, and it says what each buys (p95, pods, cold starts,
CPU-seconds). --model-only NAME skips the measurement: for an image of the published sweep
(benchmarks/ksim/sweep.json) it prints the sweep's choice for the objective, for another target
of benchmarks/ksim/published.json it models the levels instead.
The load generator shares the machine's cores with the server, so the figures are a floor of
what a pod with dedicated CPUs does: rerun it on a node like yours before trusting the numbers.
"""
import argparse
import datetime
import json
import math
import os
import sys

sys.dont_write_bytecode = True          # no __pycache__ in the source tree
import pathlib, sys  # noqa: E401  the scripts' one package: benchmarks/lib/primedlab, found from any folder
sys.path.insert(0, str(next(p for p in pathlib.Path(__file__).resolve().parents if (p / "benchmarks/lib/primedlab").is_dir()) / "benchmarks/lib"))
from primedlab import bench, kmanifest, ksim, ksweep, quiet  # noqa: E402


def main():
    ap = argparse.ArgumentParser(prog="benchmarks/knative-target.py", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--slo-ms", type=float, default=250, help="p95 latency objective (default 250)")
    ap.add_argument("--levels", default="1,2,4,8,16,32,64", help="concurrency levels (default 1,2,...,64)")
    ap.add_argument("--duration", type=int, default=5, help="seconds per level (default 5)")
    ap.add_argument("--threads", type=int, default=2,
                    help="PRIMED_THREADS, = the pod's CPU limit (default 2, as in knative/base)")
    ap.add_argument("--dispatch", default="inline", choices=("inline", "steal"))
    ap.add_argument("--headroom", type=float, default=0.7,
                    help="target = headroom * containerConcurrency (default 0.7)")
    ap.add_argument("--server-args", default="--max-conns 256",
                    help="primed flags, as the manifests' args (default '--max-conns 256')")
    ap.add_argument("--binary", help="primed to measure (default build/src/primed, built if missing)")
    ap.add_argument("--no-model", dest="model", action="store_false",
                    help="skip the autoscaler model's section (benchmarks/knative-sim)")
    ap.add_argument("--model-stage", type=float, default=120.0,
                    help="seconds per k6 stage in the model (default 120, as benchmarks/k6/primed.js)")
    ap.add_argument("--model-seed", type=int, default=1, help="the model's seed (default 1)")
    ap.add_argument("--scheduling-delay", type=float, default=1.0,
                    help="the model's pod scheduling delay in seconds (default 1)")
    ap.add_argument("--model-only", metavar="NAME",
                    help="no measurement: the published sweep's choice for an image of it (e.g. ctr-static), "
                         "or the model of another target of benchmarks/ksim/published.json")
    a = ap.parse_args()
    levels = [int(x) for x in a.levels.split(",")]
    if a.model_only:
        return model_only(a, levels)
    quiet.guard("benchmarks/knative-target.py", table=sys.stdout)
    slo = a.slo_ms / 1000
    bench.need_wrk()
    exe = bench.built(a.binary)
    if a.threads > (os.cpu_count() or 1):
        print(f"note: --threads {a.threads} > {os.cpu_count()} CPUs here", file=sys.stderr)

    env = {"PRIMED_THREADS": str(a.threads), "PRIMED_DISPATCH": a.dispatch}
    with bench.start_clean(exe, env, a.server_args.split()) as srv:
        idle_rss, _ = srv.memory_kib()
        bench.wrk_checks(srv.url(), 2, 1)                                      # warm-up, not reported
        rows = [dict(bench.wrk_checks(srv.url(), c, a.duration), c=c) for c in levels]
        rss, hwm = srv.memory_kib()
        m = srv.metrics()
        with open("/proc/loadavg") as f:
            load = f.read().split()[:3]
    start_ms = srv.start_ms

    print(f"# knative-target  {datetime.date.today().isoformat()}  {bench.machine()}")
    print(f"# command: {' '.join([os.path.relpath(sys.argv[0])] + sys.argv[1:])}")
    print(f"# server: PRIMED_THREADS={a.threads} PRIMED_DISPATCH={a.dispatch} {exe} {a.server_args}")
    print(f"#   {srv.ready_line}")
    print(f"# start-up: {start_ms:.1f} ms from spawn to the 'primed: ready' line")
    print(f"# each level: wrk -c C -d {a.duration}s, GET /example; objective p95 <= {a.slo_ms:g} ms")
    print(f"# load average at the end: {' '.join(load)} on {os.cpu_count()} CPUs")
    print(f"{'C':>4} {'req/s':>9} {'mean ms':>8} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} "
          f"{'X*W':>6} {'errors':>6}  p95<=obj")
    for r in rows:
        w = r["mean_us"] / 1e6
        r["ok"] = r["p95_us"] / 1e6 <= slo and r["errors"] == 0
        print(f"{r['c']:>4} {r['req_per_s']:>9.1f} {w * 1e3:>8.1f} {r['p50_us'] / 1e3:>8.1f} "
              f"{r['p95_us'] / 1e3:>8.1f} {r['p99_us'] / 1e3:>8.1f} {r['req_per_s'] * w:>6.1f} "
              f"{r['errors']:>6}  {'yes' if r['ok'] else 'no'}")

    r1 = rows[0] if rows[0]["c"] == 1 else None
    s1 = r1["mean_us"] / 1e6 if r1 else None
    xmax = max(r["req_per_s"] for r in rows)
    knee = xmax * s1 if s1 else None
    passing = [r["c"] for r in rows if r["ok"]]
    print("\nReasoning (Little's law, N = X * W: requests in flight = throughput * time in system):")
    dev = max(abs(r["req_per_s"] * r["mean_us"] / 1e6 - r["c"]) / r["c"] for r in rows)
    print(f"  X*W deviates from C by at most {dev * 100:.0f} % (wrk holds C requests in flight, so it should be ~0)"
          + ("" if dev <= 0.15 else "  (more than 15 %: client-side time is not negligible, "
             "the load generator is short of CPU; trust the figures less)"))
    if s1:
        print(f"  service time S1 = latency at C=1 = {s1 * 1e3:.1f} ms; peak throughput X_max = {xmax:.1f} req/s")
        print(f"  knee: N* = X_max * S1 = {knee:.1f}: the concurrency that keeps every worker busy; "
              "beyond it requests only queue")
    print(f"  past the knee W grows as C / X_max, so the objective allows about X_max * {a.slo_ms:g} ms "
          f"= {xmax * slo:.0f} in flight on average (the mean, not p95: the measured p95 decides)")
    if not passing:
        cc = 1
        print(f"  no level met p95 <= {a.slo_ms:g} ms on the wall clock: out of reach for even one request here; "
              "by this measure containerConcurrency=1")
    else:
        cc = max(passing)
        print(f"  largest measured C with p95 <= {a.slo_ms:g} ms and no errors: {cc}"
              + ("  (the largest level tested: rerun with higher --levels to find the limit)"
                 if cc == max(levels) else ""))

    # The same law from CPU time, which a busy machine does not stretch: primed measures the CPU
    # time of each prime (primed_prime_duration_seconds). With `threads` dedicated cores a pod
    # completes X = threads / S requests/s; if every request took the p95 CPU time S95, a request
    # arriving behind N-1 others waits about N * S95 / threads, so the objective allows
    # N = threads * objective / S95 (conservative: most requests take much less than S95).
    n = m.get("primed_prime_duration_seconds_count", 0)
    s_cpu = m["primed_prime_duration_seconds_sum"] / n if n else None
    buckets = sorted((float(k.split('le="')[1].rstrip('"}').replace("+Inf", "inf")), v) for k, v in m.items()
                     if k.startswith("primed_prime_duration_seconds_bucket"))
    s95 = next((le for le, v in buckets if v >= 0.95 * n), None) if n else None
    wall_sum, wall_n = (m.get('primed_http_request_duration_seconds_%s{path="/example"}' % k, 0)
                        for k in ("sum", "count"))
    stretch = (wall_sum / wall_n) / s_cpu if s_cpu and wall_n else None
    model_cc = None
    if s_cpu and s95:
        model_cc = max(1, min(1000, math.floor(a.threads * slo / s95)))
        print(f"  CPU time per prime (primed_prime_duration_seconds, {n:.0f} primes): mean "
              f"{s_cpu * 1e3:.1f} ms, p95 <= {s95 * 1e3:g} ms (histogram bucket bound)")
        print(f"  inside primed a request took {wall_sum / wall_n * 1e3:.1f} ms of wall clock on average: "
              f"{stretch:.1f} x its CPU time" + ("" if stretch <= 1.5 else
                                                 " (the machine is contended: the wall-clock table understates a pod)"))
        print(f"  dedicated-core model: N = threads * objective / S95 = {a.threads} * {a.slo_ms:g} ms / "
              f"{s95 * 1e3:g} ms = {model_cc}")
    source = "measured wall clock"
    helped = m.get("primed_prime_pieces_helped_total", 0)
    if helped and model_cc:
        # --prime-split: idle workers tested pieces of the searches, so the histogram holds only the
        # owner's share of each prime's CPU time: neither the stretch nor the model means anything
        print(f"  {helped:.0f} pieces of the searches were tested by idle workers (--prime-split): the histogram "
              "holds the owner's share of each prime only, so the CPU-time model is not used")
        stretch = None
    if stretch and stretch > 1.5 and model_cc:
        cc, source = model_cc, "CPU-time model (wall clock is contended here)"
    print(f"  containerConcurrency = {cc} (from the {source})")
    target = max(1, math.floor(a.headroom * cc))
    if knee and target < math.ceil(knee) <= cc:
        target = math.ceil(knee)
    print(f"  target = max(floor({a.headroom:g} * {cc}), knee) = {target}: scale out before the "
          "cap makes requests queue")
    print(f"\nMemory of primed (/proc/PID/status): VmRSS idle {idle_rss / 1024:.1f} MiB, "
          f"VmRSS after load {rss / 1024:.1f} MiB, VmHWM (peak) {hwm / 1024:.1f} MiB")
    # request: peak x 2 rounded up to 16 MiB; limit: 2 x the request. The working set Kubernetes
    # counts adds page cache and the container runtime's share to RSS.
    mem_req = max(32, 16 * math.ceil(2 * hwm / 1024 / 16))
    mem_lim = 2 * mem_req
    print("\nRecommended (knative/base/service.yaml):")
    print(f'  autoscaling.knative.dev/target: "{target}"')
    print(f"  containerConcurrency: {cc}")
    print(f"  resources: requests memory {mem_req}Mi, limits memory {mem_lim}Mi "
          f"(2 x peak RSS rounded up to 16 MiB, limit 2 x request); cpu {a.threads} = PRIMED_THREADS")
    print(f"RESULT target={target} containerConcurrency={cc} slo_ms={a.slo_ms:g} xmax={xmax:.1f} "
          f"source={source.split(' (')[0].replace(' ', '_')} start_ms={start_ms:.1f} idle_rss_kib={idle_rss} "
          f"hwm_kib={hwm} mem_request_mi={mem_req} mem_limit_mi={mem_lim}")
    if not a.model:
        return 0
    skew = r1["p50_us"] / r1["mean_us"] if r1 and r1["mean_us"] > 0 else None
    if source.startswith("CPU-time") and s_cpu:
        # the wall clock is contended here: the CPU time per prime is what a dedicated core takes
        mean_ms, why = 1e3 * s_cpu, "primed's CPU time per prime"
    else:
        mean_ms, why = 1e3 * a.threads / xmax, f"{a.threads} / X_max"
    tg = ksim.Target(name="primed (this run)", service_ms_mean=mean_ms,
                     service_ms_median=mean_ms * skew if skew else None, startup_ms=start_ms)
    print(f"\nThe model's inputs from this run: service time per core = {why} = {mean_ms:.2f} ms mean"
          + (f", median {mean_ms * skew:.2f} ms (the C=1 run's p50/mean)" if skew else "")
          + f"; start-up {start_ms:.1f} ms + {a.scheduling_delay:g} s scheduling")
    model_section(a, tg, levels, target, cc)
    return 0


def model_section(a, tg, levels, target, cc):
    """What the recommendation buys in the seed's scenario, by the autoscaler model."""
    base = ksim.Service(pod_cpus=a.threads, scheduling_delay_s=a.scheduling_delay)
    _, now_t, now_cc = kmanifest.base_values(bench.REPO_ROOT)
    extra = [("the rule above", target, cc, 1.0),
             ("service.yaml now", int(now_t) if now_t == int(now_t) else now_t, now_cc, 1.0),
             ("Knative defaults", None, 0, ksim.kpa.DEFAULTS["target_utilization"])]
    rows, best = ksim.recommend(tg, levels, a.slo_ms, a.headroom, base, ksim.seed_load(a.model_stage),
                                seed=a.model_seed, extra=extra)
    print(f"\nWhat each choice buys, by the autoscaler model (benchmarks/knative-sim; docs/autoscaling.md): the seed's "
          f"k6 scenario (0 -> 50 -> 100 -> 200 users, hold 200; stages of {a.model_stage:g} s), pods of "
          f"{a.threads} CPU(s) serving as {tg.name}, scale 0..{base.max_scale}, Knative's KPA defaults, seed "
          f"{a.model_seed}. A model's output, not a measurement.")
    print(f"  {'choice':<18} {'target':>6} {'cc':>4} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'max pods':>8} "
          f"{'pod starts':>10} {'CPU-s':>8}")
    for label, t, c, u, r in rows:
        tshow = t if t is not None else "%g" % ksim.kpa.resolve_target(c, None, u)[0]
        print(f"  {label:<18} {tshow!s:>6} {c if c else 'none':>4} {r['p50_ms']:>8.1f} {r['p95_ms']:>8.1f} "
              f"{r['p99_ms']:>8.1f} {r['max_ready']:>8} {r['pod_starts']:>10} {r['cpu_seconds']:>8.0f}")
    label, t, c, u, r = best
    meets = r["p95_ms"] <= a.slo_ms
    print(f"  the model recommends target {t}, containerConcurrency {c}: "
          + (f"the fewest CPU-seconds ({r['cpu_seconds']:.0f}) with p95 {r['p95_ms']:.1f} ms <= {a.slo_ms:g} ms"
             if meets else f"no level meets p95 <= {a.slo_ms:g} ms in this scenario; the lowest p95 "
             f"({r['p95_ms']:.1f} ms)")
          + f", at most {r['max_ready']} pods, {r['pod_starts']} pod starts")
    print(f"MODEL target={t} containerConcurrency={c} p95_ms={r['p95_ms']:.1f} cpu_s={r['cpu_seconds']:.0f} "
          f"max_pods={r['max_ready']} meets_slo={'yes' if meets else 'no'}")


def from_sweep(a, name, sw):
    """--model-only for a CPU class of the published sweep: its answer per pod size for --slo-ms,
    read from the sweep's rows (benchmarks/knative-sim sweep; docs/autoscaling.md). At another
    objective than the sweep's own, only the settings the sweep ran through every scenario count."""
    print(f"# knative-target --model-only {name}: the published sweep (benchmarks/ksim/sweep.json, lab run "
          f"{sw['run']}, seed {sw['seed']}): arrivals and the seed's users, objective p95 <= {a.slo_ms:g} ms "
          f"with no 503")
    rc = 0
    for n in sw["pod_cpus"]:
        try:
            r = ksweep.recommend(sw["rows"], name, n, a.slo_ms, sw.get("scenarios"))
        except ValueError as e:        # none meets the objective, or (EdgeError) the grid's edge wins
            edge = isinstance(e, ksweep.EdgeError)
            print(f"  {e}")
            print(f"MODEL pod_cpus={n} " + ("edge=yes" if edge else "none"))
            rc = 1 if edge else rc
            continue
        p95, where = ksweep.worst_p95(r)
        print(f"  {n} CPU(s) a pod: target {ksweep.fmt_num(r['target'])}, utilisation {round(100 * r['util'])} %, "
              f"containerConcurrency {r['cc']}: {r['cost_per_million']:.0f} CPU-s per million requests, p95 "
              f"{p95:.1f} ms at worst ({where})")
        print(f"MODEL pod_cpus={n} target={ksweep.fmt_num(r['target'])} utilization={r['util']:g} "
              f"containerConcurrency={r['cc']} p95_ms={p95:.1f} cost_per_million={r['cost_per_million']:.0f}")
    return rc


def ksim_json(name):
    """benchmarks/ksim/NAME as JSON; None when there is no such file."""
    path = os.path.join(bench.BENCH_DIR, "ksim", name)
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def model_only(a, levels):
    """--model-only NAME: the published sweep's answer for an image of it, else the model's section
    for a target of the published lab table."""
    doc = ksim_json("published.json")
    t = next((x for x in doc["targets"] if x["name"] == a.model_only), None)
    if t is None:
        sys.exit("knative-target: no target %s in benchmarks/ksim/published.json (%s)" % (
            a.model_only, ", ".join(x["name"] for x in doc["targets"])))
    sw = ksim_json("sweep.json")
    if sw and t["name"] in sw.get("classes", []):
        return from_sweep(a, t["name"], sw)
    fields = ("name", "service_ms_mean", "service_ms_median", "discipline", "startup_ms", "containerised")
    tg = ksim.Target(**{k: t[k] for k in fields if k in t})
    print(f"# knative-target --model-only {t['name']}: inputs from {doc.get('source', '?')}")
    # the rule above, applied to the levels alone: the largest level, target = headroom x it
    cc = max(levels)
    model_section(a, tg, levels, max(1, math.floor(a.headroom * cc)), cc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
