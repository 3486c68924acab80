"""knative/model/ksweep.py - the target sweep: the autoscaling settings a team can set, per CPU class and pod size.

Owns: the grid swept (fractional targets, target utilisation 60-100 %, containerConcurrency caps
from 1 to none), the scenarios it is swept under (arrivals: Poisson from a third of one pod's
capacity to five pods', a step, a burst from zero, a slow ramp; and the seed's k6 users as one
more), running the model over the grid for each CPU class (the image's service times with the
eight-lane engine and with the scalar one) and pod size (1, 2, 4, 8 CPUs), the cost of a setting
(CPU-seconds billed per million answered requests), the recommendation (the cheapest per request
whose p95 meets the objective with no 503 in every scenario), the check that it does not lie on
the grid's edge, and each recommendation run at the absolute rates a service is shipped for
(PEAK_RPS: what decides the pod size the manifests carry).
Invariants: a sweep's rows are a pure function of the inputs, the grid, the scenarios and the
seed (each run seeded alone, so neither the order nor the number of processes matters); the
recommendation reads only those rows. A setting that fails a scenario is not run on the rest
(it cannot be recommended): its row says which scenario it failed. The closed loop (the seed's
users) is run only on the settings that passed every arrival scenario, cheapest first, until one
passes it too: it gates the answer, it does not price it.
Never: writes files or pages (benchmarks/knative-sim does), knows manifests (kmanifest.py does).
"""

from multiprocessing import Pool

from primedlab import ksim

# A pod's targets are these times its CPUs (1-CPU pods: 0.5 .. 1.5; 4-CPU pods: 2 .. 6): a
# CPU-bound pod holds about one request per busy CPU, so the grid is centred there and the edge
# check (recommend()) says when it is not wide enough.
TARGET_FACTORS = [0.5, 0.75, 1, 1.5]
UTILIZATIONS = [0.6, 0.8, 1.0]
POD_CPUS = [1, 2, 4, 8]
# the CPU classes: the image the manifests deploy measured with the eight-lane engine, and the same
# image with the scalar engine's service time (benchmarks/knative-sim inputs: scalar_class())
CLASS_LABELS = {"ctr-static": "AVX-512 IFMA (the eight-lane engine)",
                "ctr-static-scalar": "any x86-64 CPU (the scalar engine)"}
CLASSES = tuple(CLASS_LABELS)
SLO_MS = 250.0                            # the p95 objective benchmarks/k6/primed.js holds a run to
# The sweep's max-scale (and the manifests'): the pods five pods' capacity needs at 60 % utilisation
# (9), with a third more. A revision's first panic asks for max-scale pods at once (the
# activator's backlog counts as concurrency), so max-scale is also what a burst bills and starts.
MAX_SCALE = 12
# The rates the shipped manifests must carry whatever the pod size (Poisson, PEAK_S each, from one
# pod): p95 within the objective and at most MAX_SCALE pod starts at each. The scenarios above
# are in pod capacities, so they say which setting suits a pod size; these say which pod size
# suits a service of up to 5,000 req/s within MAX_SCALE pods (the scalar engine's 13 ms a request
# is 66 CPUs of work at 5,000 req/s: more than twelve 4-CPU pods hold).
PEAK_RPS = [600.0, 1500.0, 5000.0]
PEAK_S = 240.0


# The scenarios, in the order they are run (the ones that reject most settings soonest first):
# name -> (kind, arguments in pod capacities (req/s of one pod) and seconds, initial pods).
# "steady": Poisson at a rate reached by a WARMUP_S ramp from zero that is not counted (steady
# traffic, not a step from nothing: the step and the burst are scenarios of their own).
# "closed" is the seed's k6 users (no think time), stage length in seconds.
WARMUP_S = 30.0
STEADY_S = 45.0
SCENARIOS = {
    "burst-from-zero": ("open", [(60.0, 1.0)], 0),
    "step": ("open", [(30.0, 1.0), (45.0, 4.0)], 1),
    "poisson-5": ("steady", 5.0, 1),
    "ramp": ("ramp", (0.3, 5.0, 90.0), 1),
    "poisson-1.5": ("steady", 1.5, 1),
    "poisson-0.33": ("steady", 1.0 / 3.0, 1),
    "k6-users": ("closed", 30.0, 1),
}


def is_open(name, scenarios=None):
    return (scenarios or SCENARIOS)[name][0] != "closed"


def targets_for(pod_cpus, factors=TARGET_FACTORS):
    return [f * pod_cpus for f in factors]


def caps_for(pod_cpus):
    """containerConcurrency values swept: 1, the pod's CPUs and none (0)."""
    return sorted({1, pod_cpus}) + [0]


def grid(pod_cpus, factors=TARGET_FACTORS, utils=UTILIZATIONS, caps=None):
    """(target, utilisation, containerConcurrency) triples for a pod size; a target above a finite
    cap resolves to the cap (Knative caps it), so those are left out as repeats."""
    return [(t, u, cc) for cc in (caps or caps_for(pod_cpus)) for t in targets_for(pod_cpus, factors) for u in utils
            if cc == 0 or t <= cc]


def pod_capacity(tg, pod_cpus):
    """Requests/s one pod serves at full load: its CPUs over the mean service time."""
    return pod_cpus * 1e3 / tg.service_ms_mean


def load_of(name, tg, pod_cpus, scenarios=None):
    kind, args, _ = (scenarios or SCENARIOS)[name]
    cap = pod_capacity(tg, pod_cpus)
    if kind == "open":
        return ksim.Load(segments=[(d, f * cap) for d, f in args])
    if kind == "ramp":
        lo, hi, d = args
        return ksim.open_load("ramp", [lo * cap, hi * cap, d])
    if kind == "steady":
        up = ksim.open_load("ramp", [0.0, args * cap, WARMUP_S])
        return ksim.Load(segments=up.segments + [(STEADY_S, args * cap)])
    return ksim.seed_load(args, 0.0)


def service(target, util, cc, pod_cpus):
    """The Service a setting makes: knative/base/service.yaml's shape (scale 0..MAX_SCALE, initial 1,
    1 s scheduling) with this target, utilisation, cap and pod size."""
    return ksim.Service(container_concurrency=cc, target=target, utilization=util, min_scale=0,
                        max_scale=MAX_SCALE, initial_scale=1, pod_cpus=pod_cpus, scheduling_delay_s=1.0)


KEEP = ("p50_ms", "p95_ms", "p99_ms", "errors_503", "lost", "pod_starts", "max_ready", "cpu_seconds", "answered",
        "requests")


def kept(summary):
    """The figures of a ksim.summarize() a sweep row keeps (KEEP), floats to 3 places."""
    return {k: (round(summary[k], 3) if isinstance(summary[k], float) else summary[k]) for k in KEEP}


def run_one(tg, name, target, util, cc, pod_cpus, seed, scenarios=None):
    """One scenario for one setting: the summary's figures kept in a sweep row."""
    sc = scenarios or SCENARIOS
    sv = service(target, util, cc, pod_cpus)
    r = ksim.summarize(ksim.Sim(tg, sv, load_of(name, tg, pod_cpus, sc), seed=seed, initial_pods=sc[name][2]).run(),
                       since=WARMUP_S if sc[name][0] == "steady" else 0.0)
    return kept(r)


def passes(s, slo_ms):
    return s["p95_ms"] is not None and s["p95_ms"] <= slo_ms and s["errors_503"] == 0 and s["lost"] == 0


def _setting(job):
    """Every scenario for one setting, in order, stopping at the first it fails."""
    tg, pod_cpus, target, util, cc, seed, slo_ms, scenarios = job
    row = {"class": tg.name, "pod_cpus": pod_cpus, "target": target, "util": util, "cc": cc, "scenarios": {},
           "failed": None}
    for name in scenarios:
        if not is_open(name, scenarios):
            continue
        s = run_one(tg, name, target, util, cc, pod_cpus, seed, scenarios)
        row["scenarios"][name] = s
        if not passes(s, slo_ms):
            row["failed"] = name
            break
    row["cost_per_million"] = cost(row, scenarios)
    return row


def cost(row, scenarios=None):
    """CPU-seconds billed per million answered requests over the open-loop scenarios the row ran
    (the closed loop's users send what the pods answer, so it is a gate, not a price); None when
    it answered none."""
    sc = [s for n, s in row["scenarios"].items() if is_open(n, scenarios)]
    answered = sum(s["answered"] for s in sc)
    return round(1e6 * sum(s["cpu_seconds"] for s in sc) / answered, 1) if answered else None


def sweep(targets, pod_cpus=POD_CPUS, grid_of=grid, seed=1, slo_ms=SLO_MS, scenarios=None, jobs=1, progress=None,
          peak_rps=PEAK_RPS):
    """Every class x pod size x setting of grid_of(pod size); rows in a fixed order (class, pod
    size, cap, target, utilisation)."""
    scenarios = scenarios or SCENARIOS
    work = [(tg, n, t, u, cc, seed, slo_ms, scenarios) for tg in targets for n in pod_cpus
            for t, u, cc in grid_of(n)]
    out = [None] * len(work)
    # the costly runs (big pods of the fast class) first, so that the pool ends together
    order = sorted(range(len(work)), key=lambda i: -work[i][1] / work[i][0].service_ms_mean)
    if jobs > 1:
        with Pool(jobs) as p:
            for k, r in zip(order, p.imap(_setting, [work[i] for i in order])):
                out[k] = r
                if progress:
                    progress(r)
    else:
        for k in order:
            out[k] = _setting(work[k])
            if progress:
                progress(out[k])
    gate_closed(out, targets, pod_cpus, seed, slo_ms, scenarios, progress)
    return run_peaks(out, targets, pod_cpus, seed, slo_ms, scenarios, jobs, peak_rps)


def gate_closed(rows, targets, pod_cpus, seed=1, slo_ms=SLO_MS, scenarios=None, progress=None):
    """The closed-loop scenarios on the rows that passed every arrival scenario, per class and pod
    size in rank() order, until one passes them too; rows (updated in place) returned."""
    scenarios = scenarios or SCENARIOS
    closed = [n for n in scenarios if not is_open(n, scenarios)]
    by = {t.name: t for t in targets}
    for cls in by:
        for n in pod_cpus:
            cands = sorted((r for r in rows if r["class"] == cls and r["pod_cpus"] == n and r["failed"] is None),
                           key=rank)
            for r in cands:
                for name in closed:
                    s = run_one(by[cls], name, r["target"], r["util"], r["cc"], n, seed, scenarios)
                    r["scenarios"][name] = s
                    if not passes(s, slo_ms):
                        r["failed"] = name
                        break
                if progress:
                    progress(r)
                if r["failed"] is None:
                    break
    return rows


def _peak(job):
    tg, r, rps, seed = job
    sv = service(r["target"], r["util"], r["cc"], r["pod_cpus"])
    return kept(ksim.summarize(ksim.Sim(tg, sv, ksim.Load(segments=[(PEAK_S, rps)]), seed=seed).run()))


def run_peaks(rows, targets, pod_cpus, seed=1, slo_ms=SLO_MS, scenarios=None, jobs=1, peak_rps=PEAK_RPS):
    """Each class and pod size's recommendation (where there is one) run at every peak_rps rate:
    row["peaks"] = {"<rate>": figures}; rows (updated in place) returned."""
    by = {t.name: t for t in targets}
    work = []
    for cls in by:
        for n in pod_cpus:
            try:
                r = recommend(rows, cls, n, slo_ms, scenarios)
            except EdgeError as e:      # run all the same: the sweep says where its grid is too narrow
                r = e.row
            except ValueError:
                continue
            r["peaks"] = {}
            work += [(by[cls], r, rps, seed) for rps in peak_rps]
    if jobs > 1 and len(work) > 1:
        with Pool(jobs) as p:
            figs = p.map(_peak, work)
    else:
        figs = [_peak(w) for w in work]
    for (_, r, rps, _), f in zip(work, figs):
        r["peaks"]["%g" % rps] = f
    return rows


def carries_peaks(row, slo_ms=SLO_MS, max_scale=MAX_SCALE):
    """Whether a recommendation held every PEAK_RPS rate: p95 within slo_ms, at most max_scale pod
    starts, nothing lost. (503s are shown, not gated: a constant rate from one pod is also a burst.)"""
    peaks = row.get("peaks") or {}
    return bool(peaks) and all(holds_peak(s, slo_ms, max_scale) for s in peaks.values())


def holds_peak(s, slo_ms=SLO_MS, max_scale=MAX_SCALE):
    return s["p95_ms"] is not None and s["p95_ms"] <= slo_ms and s["pod_starts"] <= max_scale and s["lost"] == 0


def rank(r):
    """The order the recommendation prefers: the lowest cost per million, then the higher
    utilisation (target x utilisation is what the autoscaler aims at: of two settings with the
    same product, the one whose target is nearer what a pod holds), the larger target, a finite
    cap before none, the smaller cap."""
    return (r["cost_per_million"], -r["util"], -r["target"], r["cc"] == 0, r["cc"])


class EdgeError(ValueError):
    """The winner lies on the grid's edge: the grid does not show that a setting beyond it is worse.
    row: that winner."""

    def __init__(self, msg, row):
        super().__init__(msg)
        self.row = row


def recommend(rows, cls, pod_cpus, slo_ms=SLO_MS, scenarios=None):
    """The row of cls and pod_cpus that passed every scenario (p95 <= slo_ms, no 503, none lost)
    at the lowest cost per million answered requests (ties: rank()). Raises ValueError when no row
    passes or a scenario is closed loop only, EdgeError when the winner's target is the grid's
    smallest or largest or its utilisation the smallest (the cap's range is whole: 1 to none)."""
    mine = [r for r in rows if r["class"] == cls and r["pod_cpus"] == pod_cpus]
    if not mine:
        raise ValueError("no sweep rows for %s on %d-CPU pods" % (cls, pod_cpus))
    names = set().union(*(r["scenarios"] for r in mine))
    if not any(is_open(n, scenarios) for n in names):
        raise ValueError("%s, %d CPUs: only closed-loop scenarios: users who wait for their answer send what "
                         "the pods answer, whatever the setting; arrivals are the question" % (cls, pod_cpus))
    want = set(scenarios or SCENARIOS)
    ok = [r for r in mine if r["failed"] is None and r["cost_per_million"] is not None and
          want <= set(r["scenarios"]) and all(passes(s, slo_ms) for s in r["scenarios"].values())]
    if not ok:
        raise ValueError("%s, %d CPUs: no setting meets p95 <= %g ms with no 503 in every scenario" % (
            cls, pod_cpus, slo_ms))
    best = min(ok, key=rank)
    ts, us = sorted({r["target"] for r in mine}), sorted({r["util"] for r in mine})
    if best["target"] in (ts[0], ts[-1]) or best["util"] == us[0]:
        raise EdgeError("%s, %d CPUs: the winner (target %g, utilisation %g %%, cap %d) lies on the grid's edge "
                        "(targets %g..%g, utilisation from %g %%): widen the grid" % (
                            cls, pod_cpus, best["target"], 100 * best["util"], best["cc"], ts[0], ts[-1],
                            100 * us[0]), best)
    return best


def worst_p95(row):
    """The highest p95 of a row's scenarios, ms, and the scenario."""
    name = max(row["scenarios"], key=lambda n: row["scenarios"][n]["p95_ms"] or 0.0)
    return row["scenarios"][name]["p95_ms"], name


def answers(sw, slo_ms=SLO_MS):
    """{(class, pod_cpus): recommended row} of a sweep document."""
    return {(c, n): recommend(sw["rows"], c, n, slo_ms, sw.get("scenarios")) for c in sw["classes"]
            for n in sw["pod_cpus"]}


def answers_or_none(sw, slo_ms=SLO_MS):
    """{(class, pod_cpus): recommended row, or None where no setting meets the objective}; an
    EdgeError (a winner on the grid's edge) is raised, not hidden."""
    out = {}
    for c in sw["classes"]:
        for n in sw["pod_cpus"]:
            try:
                out[(c, n)] = recommend(sw["rows"], c, n, slo_ms, sw.get("scenarios"))
            except EdgeError:
                raise
            except ValueError:
                out[(c, n)] = None
    return out


def fmt_num(x):
    return ("%.2f" % x).rstrip("0").rstrip(".")


def fmt_rps(x):
    return "{:,}".format(int(x)) if x == int(x) else "%g" % x


def peaks_cell(row, rates, slo_ms, max_scale):
    """p95 ms / pod starts / 503s at each absolute rate, a rate it does not hold in bold."""
    out = []
    for rps in rates:
        s = (row.get("peaks") or {}).get("%g" % rps)
        if s is None:
            out.append("not run")
            continue
        cell = "%s / %d / %d" % ("%.0f" % s["p95_ms"] if s["p95_ms"] is not None else "n/a", s["pod_starts"],
                                 s["errors_503"])
        out.append(cell if holds_peak(s, slo_ms, max_scale) else "**%s**" % cell)
    return "; ".join(out)


def answers_table(sw, answers, labels, shipped=None):
    """Markdown: pod size x CPU class -> target, utilisation, cap, the p95 of its worst scenario,
    the most pod starts of a scenario, CPU-seconds billed per million answered requests, and the
    answer at each absolute rate (sw["peak_rps"])."""
    rates = sw.get("peak_rps") or []
    head = "at %s req/s: p95 ms / pod starts / 503s" % ", ".join(fmt_rps(r) for r in rates)
    L = ["| pod | CPU class | target | target utilisation | containerConcurrency | p95 ms (worst scenario) | "
         "most pod starts | CPU-s billed per million requests | %s |" % head, "|---|---|---|---|---|---|---|---|---|"]
    for n in sw["pod_cpus"]:
        for c in sw["classes"]:
            r = answers.get((c, n))
            mark = " (shipped)" if shipped and shipped == (c, n) else ""
            if r is None:
                L.append("| %d CPU%s | %s | none meets %g ms with no 503 | | | | | | |" % (
                    n, "s" if n > 1 else "", labels.get(c, c), sw["slo_ms"]))
                continue
            p95, where = worst_p95(r)
            L.append("| %d CPU%s%s | %s | %s | %d %% | %s | %.1f (%s) | %d | %.0f | %s |" % (
                n, "s" if n > 1 else "", mark, labels.get(c, c), fmt_num(r["target"]), round(100 * r["util"]),
                r["cc"] if r["cc"] else "0 (none)", p95, where, max(s["pod_starts"] for s in r["scenarios"].values()),
                r["cost_per_million"], peaks_cell(r, rates, sw["slo_ms"], sw["max_scale"])))
    return "\n".join(L) + "\n"


def scenario_table(row):
    """Markdown: one recommended setting, scenario by scenario."""
    L = ["| scenario | requests | p50 ms | p95 ms | p99 ms | 503s | pod starts | most pods | CPU-s billed |",
         "|---|---|---|---|---|---|---|---|---|"]
    for name, s in sorted(row["scenarios"].items()):
        L.append("| %s | %d | %.1f | %.1f | %.1f | %d | %d | %d | %.0f |" % (
            name, s["requests"], s["p50_ms"], s["p95_ms"], s["p99_ms"], s["errors_503"], s["pod_starts"],
            s["max_ready"], s["cpu_seconds"]))
    return "\n".join(L) + "\n"


def grid_table(rows, cls, pod_cpus):
    """Markdown: every setting of one class and pod size: its cost per million, or the scenario
    it failed (p95 over the objective, a 503 or a request lost) with that scenario's p95 and 503s."""
    mine = sorted((r for r in rows if r["class"] == cls and r["pod_cpus"] == pod_cpus),
                  key=lambda r: (r["cc"] == 0, r["cc"], r["target"], r["util"]))
    L = ["| target | utilisation | containerConcurrency | CPU-s per million | failed |", "|---|---|---|---|---|"]
    for r in mine:
        f = r["failed"]
        why = ""
        if f:
            s = r["scenarios"][f]
            why = "%s: p95 %s ms, %d 503s" % (f, "%.0f" % s["p95_ms"] if s["p95_ms"] is not None else "n/a",
                                              s["errors_503"])
        L.append("| %s | %d %% | %s | %s | %s |" % (
            fmt_num(r["target"]), round(100 * r["util"]), r["cc"] if r["cc"] else "0 (none)",
            "%.0f" % r["cost_per_million"] if r["cost_per_million"] is not None and not f else "", why))
    return "\n".join(L) + "\n"
