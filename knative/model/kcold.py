"""knative/model/kcold.py - scale from zero and bursts, per image: who waits for a cold start, how long.

Owns: the cold-start scenarios (requests arriving at zero pods; the same after the Service has
scaled to zero while idle; a burst past the panic threshold on one ready pod), the parts a cold
start is made of (scheduling, image pull, process start to the first /healthz 200, the first
/example answer, JIT warm-up) and their tables.
Invariants: deterministic for a seed; every part shown is an input (measured by the lab, or a
stated model default), never fitted; a part the lab did not measure is shown as such.
Never: writes files (benchmarks/knative-sim does), decides (knative/model/kpa.py does).
"""

from primedlab import ksim

RATE = 20.0          # req/s of the scale-from-zero scenarios: below one pod's capacity for every image
IDLE_S = 150.0       # idle long enough to scale to zero: stable window 60 s + grace 30 s + decisions
PULL_MIB_S = 50.0    # the first pull's rate on a node without the image (a model input, not measured)


def service(**kw):
    """The base's Service shape (scale 0..10, 2 CPUs a pod, 1 s scheduling, 100 % utilisation) with kw:
    knative-sim cold passes each image's recommended target and containerConcurrency."""
    return ksim.Service(**{**ksim.Service(utilization=1.0).__dict__, **kw})


def parts(tg, sv, pull_mib_s=PULL_MIB_S):
    """A cold start's parts in ms: scheduling (the model's default), image pull (the image's size
    at pull_mib_s: a node without it), process start (the lab's exec or container run to the
    first /healthz 200), first answer (the lab's first /example answer after that), JIT warm-up
    (None: not measured)."""
    return {"scheduling": 1e3 * sv.scheduling_delay_s,
            "pull": 1e3 * tg.image_mib / pull_mib_s if pull_mib_s > 0 else 0.0,
            "process": tg.startup_ms + (0.0 if tg.containerised else 1e3 * sv.container_start_s),
            "first_answer": 1e3 * tg.first_extra_s(),
            "jit_warmup": None}


def _run(sim):
    """summarize() of a finished Sim, with the longest answer of a request that waited for a cold
    start (its wait, the first answer's extra time and its own service)."""
    r = ksim.summarize(sim)
    cold = [q.end - q.t for q in sim.reqs if q.cold and q.end is not None]
    r["cold_latency_max_ms"] = 1e3 * max(cold) if cold else None
    return r


def scenarios(tg, seed=1, pull_mib_s=PULL_MIB_S, settings=None):
    """The scenarios' summaries for one image: {name: ksim.summarize()} plus the load each ran.
    settings: Service fields of the image's Service (default the base's shape before the sweep)."""
    settings = settings or {}
    cap = settings.get("pod_cpus", 2) * 1e3 / tg.service_ms_mean     # one pod, requests/s
    out = {}

    def svc(**kw):
        return service(**{**settings, **kw})
    sv = svc(initial_scale=0)
    out["zero"] = _run(ksim.Sim(tg, sv, ksim.Load(segments=[(60.0, RATE)]), seed=seed, initial_pods=0).run())
    svp = svc(initial_scale=0, pull_mib_s=pull_mib_s)
    out["zero_pull"] = _run(ksim.Sim(tg, svp, ksim.Load(segments=[(60.0, RATE)]), seed=seed, initial_pods=0).run())
    idle = ksim.Load(segments=[(30.0, RATE), (IDLE_S, 0.0), (30.0, RATE)])
    sim = ksim.Sim(tg, svc(), idle, seed=seed).run()
    out["idle"] = _run(sim)
    out["idle"]["zero_before_burst"] = any(t[2] == 0 for t in sim.timeline if 30.0 < t[0] <= 30.0 + IDLE_S)
    base, peak = 0.3 * cap, 4.0 * cap
    out["burst"] = _run(ksim.Sim(tg, svc(), ksim.Load(segments=[(30.0, base), (20.0, peak), (40.0, base)]),
                                           seed=seed).run())
    out["burst"]["base_rps"], out["burst"]["peak_rps"] = base, peak
    return out


def fmt(x, spec="%.0f"):
    return "n/a" if x is None else spec % x


def parts_table(targets, sv=None, pull_mib_s=PULL_MIB_S):
    sv = sv or service()
    L = ["| image | scheduling ms (assumed) | image pull ms (MiB; assumed rate) | process start ms (measured) "
         "| first answer ms (measured) | JIT warm-up "
         "| ready to serve, image present ms | ... first pull ms |", "|---|---|---|---|---|---|---|---|"]
    for tg in targets:
        p = parts(tg, sv, pull_mib_s)
        present = p["scheduling"] + p["process"] + p["first_answer"]
        L.append("| %s | %.0f | %.0f (%.1f) | %.1f | %.1f | %s | %.0f | %.0f |" % (
            tg.name, p["scheduling"], p["pull"], tg.image_mib, p["process"], p["first_answer"],
            "not measured" if tg.name.startswith("java") else "none (compiled ahead of time)",
            present, present + p["pull"]))
    return "\n".join(L) + "\n"


def scenario_table(results):
    """results: [(name, scenarios())]."""
    L = ["| image | cold requests | wait for a pod p50 / max ms | slowest answer ms | first pull on the node: "
         "slowest answer ms | after idle: scaled to zero | cold requests | slowest answer ms |",
         "|---|---|---|---|---|---|---|---|"]
    for name, r in results:
        z, zp, i = r["zero"], r["zero_pull"], r["idle"]
        L.append("| %s | %d | %s / %s | %s | %s | %s | %d | %s |" % (
            name, z["cold_requests"], fmt(z["cold_wait_p50_ms"]), fmt(z["cold_wait_max_ms"]),
            fmt(z["cold_latency_max_ms"]), fmt(zp["cold_latency_max_ms"]), "yes" if i["zero_before_burst"] else "no",
            i["cold_requests"], fmt(i["cold_latency_max_ms"])))
    return "\n".join(L) + "\n"


def burst_table(results):
    """results: [(name, scenarios())]: the burst past the panic threshold on one ready pod."""
    L = ["| image | base / burst req/s | panic decisions | most pods | pod starts | requests that waited in the "
         "activator | their wait p95 ms | p95 of all ms |", "|---|---|---|---|---|---|---|---|"]
    for name, r in results:
        b = r["burst"]
        L.append("| %s | %.0f / %.0f | %d | %d | %d | %d | %s | %s |" % (
            name, b["base_rps"], b["peak_rps"], b["panic_ticks"], b["max_ready"], b["pod_starts"],
            b["buffered_requests"], fmt(b["buffered_wait_p95_ms"]), fmt(b["p95_ms"], "%.1f")))
    return "\n".join(L) + "\n"

