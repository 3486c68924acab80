"""knative/model/kseed.py - seed 000's cluster figures against the autoscaler model's prediction.

Owns: the figures seed 000 published for its own cluster (SEED), the model of that cluster
(k6 users who never pause on one machine whose CPU every pod shares, Knative's KPA of
knative/model/kpa.py deciding every 2 s on the concurrency the pods' sidecars count), its
calibration on the first stage's rate and the pod's CPU, and the comparison table, row by row,
with the error and whether it is within 20 %.
Invariants: deterministic (no random draw: the state of each second follows from the users in
the system); the calibration figures, and those that follow from it by construction (the later
stages' requests, a pod's CPU after scaling), are marked as such and never judged.
Never: reads or writes files (benchmarks/knative-sim does), simulates request by request
(knative/model/ksim.py does that; here the machine's capacity, not one pod's, is the limit).
"""

import math

from primedlab import kpa
from primedlab import ksim

# What seed 000 reported for its cluster (target 80, the k6 scenario of benchmarks/k6/primed.js).
SEED = {
    "stage_s": 120.0,
    "users": [50, 100, 200, 200],
    "target": 80.0,
    "requests": [105000, 130000, 135000],       # the first three stages, "about"
    "mean_ms_at": {100: 90.0, 200: 175.0},
    "failures_pct_at_200": 0.02,
    "scale_out_stage": {"fixed": 3, "virtual": 2},   # the stage during which the second pod came
    "pod_cores_before": (1.1, 1.2),
    "pod_cores_after": (0.3, 0.7),
}
WITHIN = 0.20


def users_at(t, stages):
    """k6's ramping VUs: users at time t for [(duration, users)] ramped linearly from 0."""
    t0, cur = 0.0, 0.0
    for d, n in stages:
        if t <= t0 + d:
            return cur + (n - cur) * (t - t0) / d
        t0, cur = t0 + d, n
    return cur


def model(s_cpu_s, machine_cores, target, startup_s, scheduling_s=1.0, stages=None, utilization=None):
    """The seed's cluster, second by second: N(t) users, each with one request in a pod at all times
    (no think time, no time outside the pod: the sidecar counts them all); the pods together get
    machine_cores of the one machine and share them between their requests, so the machine answers
    min(N, cores) / s requests a second however many pods there are. The KPA sees the concurrency
    every second and decides every 2 s; a pod asked for is ready after scheduling_s + startup_s.
    Returns per-second rows {t, users, rate, pods} and the decisions."""
    stages = stages or [(SEED["stage_s"], n) for n in SEED["users"]]
    tv, total = kpa.resolve_target(0, target, utilization)
    dec = kpa.Decider(kpa.DeciderSpec(target_value=tv, total_value=total), initial_ready_pods=1, t_s=0.0)
    end = sum(d for d, _ in stages)
    buckets, rows, ready, starting = [], [], 1, []
    t = 0
    while t < end:
        n = (users_at(t, stages) + users_at(t + 1, stages)) / 2
        rate = min(n, machine_cores) / s_cpu_s
        buckets.append(n)
        ready += sum(1 for r in starting if r <= t + 1)
        starting = [r for r in starting if r > t + 1]
        t += 1
        if t % int(kpa.TICK_S) == 0:
            stable = sum(buckets[-60:]) / len(buckets[-60:])
            panic = sum(buckets[-6:]) / len(buckets[-6:])
            want, _ = dec.scale(float(t), stable, panic, ready)
            live = ready + len(starting)
            if want > live:
                starting += [t + scheduling_s + startup_s] * (want - live)
            elif want < live:
                drop = live - want
                k = min(drop, len(starting))
                starting = starting[:len(starting) - k]
                ready -= min(drop - k, ready - 1)
        rows.append({"t": t, "users": n, "rate": rate, "pods": ready})
    return rows, tv


def calibrate(first_stage_requests, machine_cores, stage_s=120.0, users=50):
    """The CPU seconds one request takes: what makes the model's first stage (0 -> users over
    stage_s) answer first_stage_requests with machine_cores busy whenever users allow."""
    busy = sum(min((users_at(t, [(stage_s, users)]) + users_at(t + 1, [(stage_s, users)])) / 2, machine_cores)
               for t in range(int(stage_s)))
    return busy / first_stage_requests


def compare(lab_fixed, lab_virtual):
    """The comparison rows: (figure, seed, model, error or None, verdict). lab_fixed and lab_virtual
    are the lab's JVM rows (ksim.Target or dicts with service_ms_mean and startup_ms): their ratio
    scales the virtual-thread JVM's CPU per request to the fixed pool's, calibrated on the seed."""
    def g(x, k):
        return x[k] if isinstance(x, dict) else getattr(x, k)
    cores = sum(SEED["pod_cores_before"]) / 2
    s_fixed = calibrate(SEED["requests"][0], cores, SEED["stage_s"], SEED["users"][0])
    s_virtual = s_fixed * g(lab_virtual, "service_ms_mean") / g(lab_fixed, "service_ms_mean")
    out = {}
    for name, s, lab in (("fixed", s_fixed, lab_fixed), ("virtual", s_virtual, lab_virtual)):
        rows, tv = model(s, cores, SEED["target"], g(lab, "startup_ms") / 1e3)
        out[name] = rows
    fx = out["fixed"]
    st = SEED["stage_s"]
    rows = []

    def row(fig, seed, mod, unit="", calib=False, fmt="%.0f", built=False):
        err = (mod - seed) / seed if seed else None
        verdict = "calibration" if calib else "by construction" if built else (
            "within 20 %" if abs(err) <= WITHIN else "miss")
        rows.append({"figure": fig, "seed": (fmt % seed) + unit, "model": (fmt % mod) + unit,
                     "error": None if calib else err, "verdict": verdict})

    for i, n in enumerate(SEED["requests"]):
        got = sum(r["rate"] for r in fx if i * st < r["t"] <= (i + 1) * st)
        # past the first stage the machine's rate is the calibrated one (the pods share its cores):
        # the later stages' requests follow from the calibration, they test nothing
        row("requests in stage %d (%s users)" % (i + 1, ["0 -> 50", "50 -> 100", "100 -> 200"][i]),
            n, got, calib=(i == 0), built=(i > 0))
    for n, ms in sorted(SEED["mean_ms_at"].items()):
        # Little's law at the moment the users number n: every one of them has a request in flight
        row("mean latency at %d users" % n, ms, 1e3 * n / (min(n, cores) / s_fixed), " ms")
    rows.append({"figure": "failures at 200 users", "seed": "%.2f %%" % SEED["failures_pct_at_200"],
                 "model": "0 %", "error": None, "verdict": "not modelled"})
    for name in ("fixed", "virtual"):
        first = next((r for r in out[name] if r["pods"] > 1), None)
        stage = int(math.ceil(first["t"] / st)) if first else None
        seed_stage = SEED["scale_out_stage"][name]
        rows.append({"figure": "second pod ready, %s JVM" % ("fixed-pool" if name == "fixed" else "virtual-thread"),
                     "seed": "stage %d (%d users)" % (seed_stage, SEED["users"][seed_stage - 1]),
                     "model": ("stage %d, at %d s, %.0f users" % (stage, first["t"], first["users"])) if first
                     else "never",
                     "error": None, "verdict": "same stage" if stage == seed_stage else "miss"})
    rows.append({"figure": "one pod's CPU before scaling", "seed": "%.1f-%.1f cores" % SEED["pod_cores_before"],
                 "model": "%.2f cores" % cores, "error": None, "verdict": "calibration"})
    after = [cores / r["pods"] for r in fx if r["pods"] > 1]
    if after:
        lo, hi = min(after), max(after)
        slo, shi = SEED["pod_cores_after"]
        # the error of a range: how far the model's ends fall outside the seed's, relative to it
        err = max(0.0, slo - lo) / slo + max(0.0, hi - shi) / shi
        rows.append({"figure": "one pod's CPU after scaling", "seed": "%.1f-%.1f cores" % (slo, shi),
                     "model": "%.2f-%.2f cores (%d-%d pods)" % (lo, hi, round(cores / hi), round(cores / lo)),
                     "error": err, "verdict": "by construction"})      # the calibrated cores / the pods
    return {"s_fixed_ms": 1e3 * s_fixed, "s_virtual_ms": 1e3 * s_virtual, "cores": cores,
            "target_value": kpa.resolve_target(0, SEED["target"], None)[0], "rows": rows}


def table(res):
    """The comparison as Markdown, with the calibration it rests on."""
    L = ["| figure | seed 000 | model | error | |", "|---|---|---|---|---|"]
    for r in res["rows"]:
        L.append("| %s | %s | %s | %s | %s |" % (r["figure"], r["seed"], r["model"],
                                                 "" if r["error"] is None else "%+.0f %%" % (100 * r["error"]),
                                                 r["verdict"]))
    L += ["", "Calibrated: the pods together get %.2f cores of the machine (the seed's one pod before scaling); "
          "one request of the fixed-pool JVM takes %.2f ms of CPU (what makes the first stage %d requests), the "
          "virtual-thread JVM's %.2f ms (the lab's ratio of the two); target %g at Knative's default "
          "utilisation = %g requests in flight a pod." % (res["cores"], res["s_fixed_ms"], SEED["requests"][0],
                                                        res["s_virtual_ms"], SEED["target"], res["target_value"])]
    built = [r["figure"] for r in res["rows"] if r["verdict"] == "by construction"]
    if built:
        L += ["", "By construction, so no test of the model: %s (the pods share the calibrated cores, so the "
              "machine's rate after the first stage is the first stage's, and a pod's CPU is those cores over "
              "the pods)." % "; ".join(built)]
    why = [r for r in res["rows"] if r["verdict"] in ("miss", "not modelled")]
    if why:
        L += ["", "Why the misses:"]
        for r in why:
            L.append("- %s: %s." % (r["figure"], WHY[_why_key(r["figure"])]))
    return "\n".join(L) + "\n"


WHY = {
    "requests": "the seed's rate rose from stage to stage while its pods' CPU stayed at about one pod's, so each "
                "request cost less CPU later (a JVM still compiling in the first stage) or spent part of its time "
                "outside the pods (k6, the ingress, the network on the same machine); the model has one CPU cost "
                "per request, calibrated on the first stage, and no time outside the pods, so the machine's rate "
                "stays at the first stage's and the wait grows with the users",
    "latency": "the model's rate stays at the first stage's (its pods share the calibrated cores) while the "
               "seed's rose from stage to stage (a JVM still compiling in the first stage, or time spent outside "
               "the pods: k6, the ingress, the network on the same machine); Little's law then gives each user's "
               "request the users / rate, longer than the seed's",
    "failures": "the model refuses a request only past a full queue (queue-proxy's 10 x containerConcurrency, "
                "the activator's 10000), which 200 users never fill, and nothing times out; the seed's "
                "failures are errors the model has no cause for",
    "scale-out": "in the model every user's request is inside a pod, so both JVMs show the sidecar the same "
                 "concurrency and cross the target at the same moment (with one pod, Knative panics as soon as "
                 "the panic window's concurrency passes one target); the seed's fixed-pool pod showed less, "
                 "which time spent outside that pod would explain and the model does not have",
    "cpu": "",
}


def _why_key(figure):
    if figure.startswith("requests"):
        return "requests"
    if figure.startswith("mean latency"):
        return "latency"
    if figure.startswith("failures"):
        return "failures"
    if figure.startswith("second pod"):
        return "scale-out"
    return "cpu"


def lab_rows(targets):
    """The lab's fixed-pool and virtual-thread JVM rows of a list of ksim targets or dicts (the JDK
    21 pair when published, else java-fixed for both)."""
    by = {(t["name"] if isinstance(t, dict) else t.name): t for t in targets}
    fixed = by.get("java21-fixed") or by.get("java-fixed")
    virtual = by.get("java21-virtual") or fixed
    if fixed is None:
        raise ValueError("the inputs have no JVM row (java21-fixed or java-fixed)")
    return fixed, virtual


__all__ = ["SEED", "compare", "table", "lab_rows", "model", "calibrate", "users_at", "ksim"]
