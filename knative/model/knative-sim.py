#!/usr/bin/python3
"""benchmarks/knative-sim - Knative's autoscaler (KPA) modelled with the lab's service and start-up times.

  knative-sim decide < scenarios.jsonl        the decider alone: one JSON line per scenario in,
                                              {"desired_pod_count": [...], "excess_burst_capacity": [...]} out
  knative-sim run [--out DIR] [options]       the seed's k6 scenario (50, 100, 200, 200 users, 2 min
                                              stages) for every target of the inputs, one table, a chart
  knative-sim inputs --from-results DIR       the inputs JSON of a lab results directory (benchmarks/run)
  knative-sim inputs --from-lab PAGE          ... or of a published lab page (docs/lab/*-lab-run.md)
  knative-sim seed000 [--write]               seed 000's cluster figures against the model (docs/autoscaling.md)
  knative-sim sweep [--jobs N] --out FILE     every image x target x containerConcurrency x load, as JSON
  knative-sim publish [--write]               the sweep's chart, tables and the manifests' annotations
  knative-sim check-manifests                 exit 1 when a manifest differs from the sweep's recommendation
  knative-sim cold [--write]                  scale from zero, after idle, and a burst, per image

decide: each line is {"spec": {DeciderSpec's fields in snake case + "initial_ready_pods"},
"steps": [{"t_s", "stable_concurrency", "panic_concurrency", "ready_pods"}, ...]}; a step may also
carry "spec" (fields changed from that step on, Knative's Update()) and "no_data": true (null
answers, no state change). The decider is knative/model/kpa.py; docs/autoscaling.md.

run: the inputs are benchmarks/ksim/published.json (the figures of the published lab table) unless
--inputs FILE or --from-results DIR says otherwise; the Service is knative/base/service.yaml's
(its target and containerConcurrency, 100 % utilisation, scale 0..10, 2 CPUs) with Knative's
config-autoscaler defaults, each changeable below. Deterministic for a --seed.
"""
import argparse
import csv
import json
import os
import re
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True          # no __pycache__ in the source tree
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
DATA = os.path.join(ROOT, "benchmarks", "ksim")      # the model's inputs and its published sweep
import pathlib, sys  # noqa: E401  the scripts' one package: benchmarks/lib/primedlab, found from any folder
sys.path.insert(0, str(next(p for p in pathlib.Path(__file__).resolve().parents if (p / "benchmarks/lib/primedlab").is_dir()) / "benchmarks/lib"))
from primedlab import bench  # noqa: E402
from primedlab import kpa  # noqa: E402
from primedlab import ksim  # noqa: E402
from primedlab import ksweep  # noqa: E402

PUBLISHED = os.path.join(DATA, "published.json")


def cmd_decide(a):
    rc = 0
    for n, line in enumerate(sys.stdin, 1):
        if not line.strip():
            continue
        try:
            out = kpa.decide_scenario(json.loads(line))
        except (ValueError, KeyError, TypeError) as e:
            print("knative-sim decide: line %d: %s" % (n, e), file=sys.stderr)
            out, rc = {"error": str(e)}, 1
        print(json.dumps(out), flush=True)
    return rc


def duration(s):
    """120, 120s, 2m -> seconds."""
    m = re.fullmatch(r"([0-9.]+)(ms|s|m)?", s)
    if not m:
        raise argparse.ArgumentTypeError("a duration: 90, 90s, 2m or 500ms")
    return float(m.group(1)) * {"ms": 1e-3, "s": 1, "m": 60, None: 1}[m.group(2)]


def discipline_of(name):
    """How a lab target serves concurrent requests: a JVM with a thread per request shares the
    pod's CPUs between them all (ps); primed's workers, and a JVM's virtual threads, which a
    CPU-bound request does not give up, run one request per CPU at a time (fifo)."""
    return "ps" if name.startswith("java") and "virtual" not in name else "fifo"


def inputs_from_results(d):
    """The inputs of a lab results directory: results.csv (best /example req/s per target),
    startup.csv (the /healthz phase's median), meta.txt (the sieve's median/mean prime cost)."""
    cap = {}
    with open(os.path.join(d, "results.csv")) as f:
        for r in csv.DictReader(f):
            if r["path"] == "/example" and r.get("rps"):
                cap[r["target"]] = max(cap.get(r["target"], 0.0), float(r["rps"]))
    boot = {}
    p = os.path.join(d, "startup.csv")
    if os.path.exists(p):
        with open(p) as f:
            for r in csv.DictReader(f):
                if r["phase"] == "healthz":
                    boot[r["target"]] = float(r["median_ms"])
    ratio = 6478 / 8996
    p = os.path.join(d, "meta.txt")
    if os.path.exists(p):
        with open(p) as f:
            m = re.search(r"sieve: median ([0-9.]+), mean ([0-9.]+)", f.read())
        if m:
            ratio = float(m.group(1)) / float(m.group(2))
    tg = []
    for name, rps in cap.items():
        if name == "nginx" or rps <= 0:
            continue
        mean = 1000.0 / rps
        tg.append({"name": name, "capacity_rps_1cpu": round(rps, 1), "service_ms_mean": round(mean, 3),
                   "service_ms_median": round(mean * ratio, 3),
                   "discipline": discipline_of(name),
                   "startup_ms": boot.get(name, 0.0), "containerised": name.startswith("ctr-")})
    return {"source": os.path.abspath(d), "targets": tg}


def lab_tables(text):
    """The Markdown tables of a lab page: a list of (header cells, rows of cells)."""
    out, cur = [], None
    for line in text.split("\n") + [""]:
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if cur is None:
                cur = [cells, []]
            elif not all(set(c) <= set("-: ") for c in cells):
                cur[1].append(cells)
        elif cur is not None:
            out.append(tuple(cur))
            cur = None
    return out


def inputs_from_lab_page(path):
    """The inputs of a published lab page (docs/lab/YYYY-MM-DD-HHMM-lab-run.md): the headline table's
    RPS (best /example req/s, one worker on one CPU) and BOOT UP (exec or container run to the first
    /healthz 200, median), the start-up table's first /example median, the sieve's median/mean."""
    with open(path) as f:
        text = f.read()
    m = re.search(r"^# primed comparison lab: (\d{4}-\d\d-\d\d) (\d\d):(\d\d) UTC", text, re.M)
    if not m:
        raise ValueError("%s: no '# primed comparison lab: YYYY-MM-DD HH:MM UTC' title" % path)
    run = "%s-%s%s" % m.groups()
    sieve = re.search(r"sieve: median ([0-9.]+), mean ([0-9.]+)", text)
    if not sieve:
        raise ValueError("%s: no 'sieve: median N, mean N' physical-limit line" % path)
    ratio = float(sieve.group(1)) / float(sieve.group(2))
    commit_m = re.search(r"commit ([0-9a-f]{7,})", text)
    head = first = None
    for hdr, rows in lab_tables(text):
        if "RPS" in hdr and "BOOT UP" in hdr and head is None:
            head = (hdr, rows)
        if "first /example median" in hdr and first is None:
            first = (hdr, rows)
    if head is None:
        raise ValueError("%s: no table with RPS and BOOT UP columns" % path)
    fa = {}
    if first:
        i = first[0].index("first /example median")
        fa = {r[0]: float(r[i]) for r in first[1] if re.fullmatch(r"[0-9.]+", r[i])}
    hdr, rows = head
    ir, ib = hdr.index("RPS"), hdr.index("BOOT UP")
    ia = hdr.index("ARTIFACT SIZE") if "ARTIFACT SIZE" in hdr else None
    tg = []
    for r in rows:
        name = r[0]
        rps = re.match(r"([0-9.]+) @", r[ir])
        boot = re.match(r"([0-9.]+) ms", r[ib])
        if name == "nginx" or not rps or not boot:
            continue                  # nginx serves a fixed body; the physical-limit row is no server
        mean = 1000.0 / float(rps.group(1))
        t = {"name": name, "capacity_rps_1cpu": float(rps.group(1)), "service_ms_mean": round(mean, 3),
             "service_ms_median": round(mean * ratio, 3), "discipline": discipline_of(name),
             "startup_ms": float(boot.group(1)), "containerised": name.startswith("ctr-")}
        if name in fa:
            t["first_answer_ms"] = fa[name]
        if ia is not None:
            # what a node pulls: the image, or the binary and what it runs on (a JDK, shared libs)
            sizes = re.findall(r"([0-9.]+) (KiB|MiB|GiB)", r[ia])
            if sizes:
                t["image_mib"] = round(sum(float(v) * {"KiB": 1 / 1024, "MiB": 1, "GiB": 1024}[u] for v, u in sizes), 1)
        tg.append(t)
    tg += [t for t in (engine_class(tg, text, *c) for c in ENGINE_CLASSES) if t]
    return {"source": "%s ('primed comparison lab: %s %s:%s UTC'%s): RPS (best /example req/s, 1 worker on "
                      "1 CPU), BOOT UP (first /healthz 200, median of 10), first /example median, sieve median/mean "
                      "%s/%s us" % (os.path.relpath(path, ROOT), m.group(1), m.group(2), m.group(3),
                                    ", commit " + commit_m.group(1) if commit_m else "", sieve.group(1), sieve.group(2)),
            "run": run, "fields": INPUT_FIELDS, "excluded": {"nginx": "serves a fixed body on /example, no prime: not the same work"},
            "targets": tg}


# The CPU classes the manifests answer for: the image the manifests deploy, measured with the
# eight-lane engine (a CPU with AVX-512 IFMA), and the same image on a CPU without it: the scalar
# engine's service times (the lab's primed-scalar row) with the image's start-up and size. The
# AVX-512F and AVX2 classes are inputs too (`run --targets ctr-static-avx2`) when the run has their
# rows (benchmarks/load.py --peers engines).
IFMA, SCALAR = "ctr-static", "ctr-static-scalar"
CLASSES = ksweep.CLASS_LABELS
# the class target, the lab row that gives its service time, the physical-limit line's engine name
ENGINE_CLASSES = [(SCALAR, "primed-scalar", "scalar"), ("ctr-static-avx512", "primed-avx512", "avx512"),
                  ("ctr-static-avx2", "primed-avx2", "avx2")]


def engine_class(targets, text, name, row, engine):
    """A CPU class's target (NAME) from a lab page's rows: ROW's capacity, its median/mean from the
    physical-limit line's ENGINE, ctr-static's start-up and image; None when the page lacks either
    row."""
    by = {t["name"]: t for t in targets}
    if row not in by or IFMA not in by:
        return None
    sc, im = by[row], by[IFMA]
    m = re.search(r"\b%s: median ([0-9.]+), mean ([0-9.]+)" % engine, text)
    ratio = float(m.group(1)) / float(m.group(2)) if m else sc["service_ms_median"] / sc["service_ms_mean"]
    t = dict(im)
    t.update({"name": name, "capacity_rps_1cpu": sc["capacity_rps_1cpu"], "service_ms_mean": sc["service_ms_mean"],
              "service_ms_median": round(sc["service_ms_mean"] * ratio, 3),
              "note": "%s's image and start-up, %s's service time (the %s engine's median/mean): "
                      "the image on a CPU whose best engine is %s" % (IFMA, row, engine, engine)})
    t.pop("first_answer_ms", None)
    if "first_answer_ms" in im and "first_answer_ms" in sc:
        t["first_answer_ms"] = round(im["startup_ms"] + max(0.0, sc["first_answer_ms"] - sc["startup_ms"]), 3)
    return t


INPUT_FIELDS = {
    "capacity_rps_1cpu": "the lab's best closed-loop /example requests/s with one worker on one CPU",
    "service_ms_mean": "CPU time of one request on one core = 1000 / capacity_rps_1cpu",
    "service_ms_median": "service_ms_mean x the prime cost's median/mean (the sieve's): the shape of a prime search's cost",
    "discipline": "fifo: one request per worker, one worker per CPU (primed, a JVM's virtual threads); ps: every request "
                  "in the pod shares its CPUs (thread per request)",
    "startup_ms": "exec (or container run) to the first /healthz 200, median",
    "first_answer_ms": "exec (or container run) to the first /example answer, median (the start-up table)",
    "image_mib": "ARTIFACT SIZE: the image, or the binary plus what it runs on (shared libraries, a JDK), MiB",
    "containerised": "true when startup_ms includes the container's start (podman run); else knative-sim adds "
                     "--container-start-ms"}


def read_inputs(path):
    """The inputs JSON (default benchmarks/ksim/published.json), or exit with why."""
    try:
        with open(path or PUBLISHED) as f:
            doc = json.load(f)
        if not isinstance(doc.get("targets"), list):
            raise ValueError("no targets list")
        return doc
    except (OSError, ValueError, AttributeError) as e:
        sys.exit("knative-sim: inputs %s: %s" % (path or PUBLISHED, e))


def load_inputs(a):
    if a.from_results:
        doc = inputs_from_results(a.from_results)
    else:
        with open(a.inputs or PUBLISHED) as f:
            doc = json.load(f)
    out = []
    for t in doc["targets"]:
        if a.targets and t["name"] not in a.targets:
            continue
        out.append(ksim.Target(name=t["name"], service_ms_mean=t["service_ms_mean"],
                               service_ms_median=t.get("service_ms_median"), discipline=t.get("discipline", "fifo"),
                               startup_ms=t.get("startup_ms", 0.0), containerised=t.get("containerised", False),
                               note=t.get("note", "")))
    if a.targets:
        missing = set(a.targets) - {t.name for t in out}
        if missing:
            sys.exit("knative-sim: no target %s in the inputs" % ", ".join(sorted(missing)))
    return doc, out


def service_of(a):
    return ksim.Service(container_concurrency=a.container_concurrency, target=a.target, utilization=a.utilization,
                        min_scale=a.min_scale, max_scale=a.max_scale, initial_scale=a.initial_pods,
                        pod_cpus=a.pod_cpus, scheduling_delay_s=a.scheduling_delay,
                        container_start_s=a.container_start_ms / 1e3, target_burst_capacity=a.target_burst_capacity,
                        stable_window_s=a.stable_window, panic_window_pct=a.panic_window_pct,
                        panic_threshold=a.panic_threshold_pct / 100.0, max_scale_up_rate=a.max_scale_up_rate,
                        max_scale_down_rate=a.max_scale_down_rate, scale_down_delay_s=a.scale_down_delay,
                        scale_to_zero_grace_s=a.scale_to_zero_grace, activation_scale=a.activation_scale,
                        queue_proxy_cpu_ms=a.queue_proxy_cpu_ms)


def load_of(a):
    if a.open:
        kind, *rest = a.open.split(":")
        return ksim.open_load(kind, rest, uniform=a.uniform)
    return ksim.seed_load(a.stage, a.think)


def fmt(x, spec="%.1f"):
    return "n/a" if x is None else spec % x


# one colour per target (gnuplot's default cycle repeats after 8, and the lab has 11 targets)
COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
          "#bcbd22", "#17becf", "#000000", "#aec7e8", "#ffbb78", "#98df8a"]


def color(i):
    return COLORS[i % len(COLORS)]


def chart(outdir, names, title):
    """pods-latency.png: ready pods and p95 latency (10 s buckets, by arrival) over time, every target;
    the title names the load, the second line the inputs, commit and seed (as benchmarks/plot.py names
    the machine, kernel, commit and date)."""
    if not shutil.which("gnuplot"):
        print("knative-sim: gnuplot not installed (profiles/deps @bench): no chart", file=sys.stderr)
        return None
    safe = [n.replace("/", "_") for n in names]
    gp = ['set terminal pngcairo size 1100,800 font "DejaVu Sans,10" noenhanced',
          'set output "%s"' % os.path.join(outdir, "pods-latency.png"),
          'set multiplot layout 2,1 title "%s"' % title.replace('"', "'").replace("\n", "\\n"),
          'set key outside right', 'set grid', 'set xlabel "time (s)"',
          'set ylabel "ready pods"', 'set yrange [0:*]',
          # the first target's line widest: targets whose pods coincide (closed-loop users) stay visible
          'plot ' + ", ".join('"%s" using 1:2 with steps lw %.1f lc rgb "%s" title "%s"' % (
              os.path.join(outdir, "timeline-%s.tsv" % s), 1.5 + 4.5 * (len(names) - i - 1) / max(1, len(names) - 1),
              color(i), n) for i, (s, n) in enumerate(zip(safe, names))),
          'set ylabel "p95 latency (ms, 10 s buckets)"', 'set logscale y', 'set yrange [*:*]',
          'plot ' + ", ".join('"%s" using 1:4 with linespoints lw 2 pt 7 ps 0.5 lc rgb "%s" title "%s"' % (
              os.path.join(outdir, "latency-%s.tsv" % s), color(i), n) for i, (s, n) in enumerate(zip(safe, names))),
          'unset multiplot']
    p = subprocess.run(["gnuplot"], input="\n".join(gp) + "\n", text=True, capture_output=True)
    if p.returncode != 0:
        print("knative-sim: gnuplot failed: %s" % p.stderr.strip(), file=sys.stderr)
        return None
    return os.path.join(outdir, "pods-latency.png")


def table(rows, sv, load_desc, doc_source, seed):
    L = ["# knative-sim: %s" % load_desc, "",
         "Inputs: %s." % doc_source,
         "Service: target %g, containerConcurrency %d, utilisation %g %%, scale %d..%s, initial %d, %d CPU(s) a pod, "
         "scheduling delay %g s; KPA: stable window %g s, panic window %g %%, panic threshold %g %%, "
         "max scale up %g, down %g, scale-down delay %g s, target burst capacity %g. Seed %d." % (
             sv.target, sv.container_concurrency, 100 * sv.utilization, sv.min_scale, sv.max_scale or "inf",
             sv.initial_scale, sv.pod_cpus, sv.scheduling_delay_s, sv.stable_window_s, sv.panic_window_pct,
             100 * sv.panic_threshold, sv.max_scale_up_rate, sv.max_scale_down_rate, sv.scale_down_delay_s,
             sv.target_burst_capacity, seed), "",
         "| target | requests | answered req/s | 503s | p50 ms | p95 ms | p99 ms | max pods | pod starts | cold-start requests "
         "| cold wait p50 ms | cold wait max ms | activator-buffered | buffered wait p95 ms | CPU-s billed |",
         "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        L.append("| %s | %d | %.1f | %d | %s | %s | %s | %d | %d | %d | %s | %s | %d | %s | %.0f |" % (
            r["target"], r["requests"], r["throughput_rps"], r["errors_503"], fmt(r["p50_ms"]), fmt(r["p95_ms"]),
            fmt(r["p99_ms"]),
            r["max_ready"], r["pod_starts"], r["cold_requests"], fmt(r["cold_wait_p50_ms"]),
            fmt(r["cold_wait_max_ms"]), r["buffered_requests"], fmt(r["buffered_wait_p95_ms"]), r["cpu_seconds"]))
    L += ["", "503s: refused by a full queue (queue-proxy's 10 x containerConcurrency, the activator's 10000); "
          "max pods: most ready pods at once; pod starts: pods the autoscaler started that became ready; "
          "cold-start requests: arrived while no pod was ready (their wait is the cold wait); activator-buffered: "
          "waited for a free containerConcurrency slot in the activator; CPU-s billed: pod-seconds (scheduled to "
          "stopped) x CPUs a pod. A model's output, not a measurement: docs/autoscaling.md says what it assumes."]
    return "\n".join(L) + "\n"


def cmd_run(a):
    doc, targets = load_inputs(a)
    sv, load = service_of(a), load_of(a)
    desc = ("open loop %s" % a.open) if a.open else (
        "the seed's k6 scenario (0->50->100->200 users, hold 200; stages of %gs, think %gs)" % (a.stage, a.think))
    rows, names = [], []
    if a.out:
        os.makedirs(a.out, exist_ok=True)
    for tg in targets:
        print("knative-sim: %s ..." % tg.name, file=sys.stderr, flush=True)
        sim = ksim.Sim(tg, sv, load, seed=a.seed).run()
        r = ksim.summarize(sim)
        rows.append(r)
        names.append(tg.name)
        if a.out:
            s = tg.name.replace("/", "_")
            with open(os.path.join(a.out, "timeline-%s.tsv" % s), "w") as f:
                f.write("# t_s\tready_pods\tpods\tactivator_queue\tin_system\tpanic\n")
                for t, ready, pods, q, ins, pan in sim.timeline:
                    f.write("%g\t%d\t%d\t%d\t%d\t%d\n" % (t, ready, pods, q, ins, pan))
            with open(os.path.join(a.out, "latency-%s.tsv" % s), "w") as f:
                f.write("# t_s(arrival bucket)\trequests\tp50_ms\tp95_ms\tp99_ms\n")
                for t, n, p50, p95, p99 in r["latency_series"]:
                    f.write("%g\t%d\t%.2f\t%.2f\t%.2f\n" % (t, n, 1e3 * p50, 1e3 * p95, 1e3 * p99))
            with open(os.path.join(a.out, "decisions-%s.tsv" % s), "w") as f:
                f.write("# t_s\tready\tstable\tpanic\tdecider\tebc\tapplied\tpanic_mode\n")
                for d in sim.decisions:
                    f.write("%g\t%d\t%.2f\t%.2f\t%d\t%d\t%d\t%d\n" % (
                        d["t"], d["ready"], d["stable"], d["panic"], d["decider"], d["ebc"], d["applied"],
                        d["panic_mode"]))
    md = table(rows, sv, desc, doc.get("source", "?"), a.seed)
    sys.stdout.write(md)
    if a.out:
        with open(os.path.join(a.out, "summary.md"), "w") as f:
            f.write(md)
        with open(os.path.join(a.out, "summary.json"), "w") as f:
            json.dump({"service": sv.__dict__, "load": desc, "seed": a.seed, "inputs": doc.get("source"),
                       "targets": [{k: v for k, v in r.items() if k != "latency_series"} for r in rows]}, f, indent=1)
        src = doc.get("source", "?")
        png = chart(a.out, names, "knative-sim (a model, not a measurement): %s\ninputs: %s | commit %s | seed %d" % (
            desc, (src[:90] + "...") if len(src) > 90 else src, bench.commit() or "?", a.seed))
        if png:
            print("chart: %s" % png)
    return 0


def cmd_inputs(a):
    try:
        doc = inputs_from_results(a.from_results) if a.from_results else inputs_from_lab_page(a.from_lab)
    except (OSError, ValueError) as e:
        sys.exit("knative-sim inputs: %s" % e)
    json.dump(doc, sys.stdout, indent=1)
    print()
    return 0


def targets_of(doc, names=None, start_parts=False):
    """ksim.Targets of an inputs document, all or those named, in the document's order; with
    start_parts, with the first answer's extra time and the image's size (the cold-start runs: the
    sweep's pods start at their /healthz time, with the image present)."""
    out = [ksim.Target(name=t["name"], service_ms_mean=t["service_ms_mean"],
                       service_ms_median=t.get("service_ms_median"), discipline=t.get("discipline", "fifo"),
                       startup_ms=t.get("startup_ms", 0.0), containerised=t.get("containerised", False),
                       note=t.get("note", ""),
                       first_answer_ms=t.get("first_answer_ms") if start_parts else None,
                       image_mib=t.get("image_mib", 0.0) if start_parts else 0.0)
           for t in doc["targets"] if names is None or t["name"] in names]
    if names:
        missing = set(names) - {t.name for t in out}
        if missing:
            sys.exit("knative-sim: no target %s in the inputs" % ", ".join(sorted(missing)))
    return out


def ints(s):
    try:
        return [int(x) for x in s.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError("comma-separated whole numbers: %r" % s)


def floats(s):
    try:
        return [float(x) for x in s.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError("comma-separated numbers: %r" % s)


def cmd_sweep(a):
    from primedlab import ksweep
    doc = read_inputs(a.inputs)
    if a.jobs < 1:
        sys.exit("knative-sim sweep: --jobs must be at least 1")
    names = a.classes or list(ksweep.CLASSES)
    targets = sorted(targets_of(doc, names), key=lambda t: names.index(t.name))
    cpus = a.pod_cpus or ksweep.POD_CPUS
    factors, utils = a.target_factors or ksweep.TARGET_FACTORS, a.utilizations or ksweep.UTILIZATIONS
    if any(x <= 0 for x in factors) or any(not 0 < x <= 1 for x in utils) or any(x < 1 for x in cpus):
        sys.exit("knative-sim sweep: target factors > 0, utilisations in (0, 1], pod CPUs at least 1")
    scenarios = ksweep.SCENARIOS
    if a.scenarios:
        bad = set(a.scenarios) - set(ksweep.SCENARIOS)
        if bad:
            sys.exit("knative-sim sweep: no scenario %s (%s)" % (", ".join(sorted(bad)), ", ".join(ksweep.SCENARIOS)))
        scenarios = {k: v for k, v in ksweep.SCENARIOS.items() if k in a.scenarios}

    def grid_of(n):
        return ksweep.grid(n, factors, utils, a.caps)
    total = sum(len(grid_of(n)) for n in cpus) * len(targets)
    done = [0]

    def progress(r):
        done[0] += 1
        if a.verbose:
            print("knative-sim sweep: %d/%d %s %d CPU target %g util %g cc %d: %s, %s per million" % (
                done[0], total, r["class"], r["pod_cpus"], r["target"], r["util"], r["cc"],
                "failed " + r["failed"] if r["failed"] else "passed", r["cost_per_million"]), file=sys.stderr, flush=True)
    peaks = a.peak_rps or ksweep.PEAK_RPS
    if any(x <= 0 for x in peaks):
        sys.exit("knative-sim sweep: --peak-rps rates must be above 0")
    rows = ksweep.sweep(targets, cpus, grid_of, seed=a.seed, slo_ms=a.slo_ms, scenarios=scenarios, jobs=a.jobs,
                        progress=progress, peak_rps=peaks)
    out = {"run": doc.get("run", "?"), "inputs": doc.get("source", "?"), "seed": a.seed, "slo_ms": a.slo_ms,
           "scenarios": scenarios, "warmup_s": ksweep.WARMUP_S, "steady_s": ksweep.STEADY_S,
           "max_scale": ksweep.MAX_SCALE, "peak_rps": peaks, "peak_s": ksweep.PEAK_S,
           "classes": [t.name for t in targets], "pod_cpus": cpus,
           "grid": {"target_factors": factors, "utilizations": utils,
                    "caps": {str(n): a.caps or ksweep.caps_for(n) for n in cpus}},
           "rows": rows}
    text = json.dumps(out, indent=1, sort_keys=True) + "\n"
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


def page(name):
    return os.path.join(ROOT, "docs", name)


def write_block(path, name, data, body):
    """Writes a block whose run is its data file (a path from the repository's root): the model's
    blocks come from benchmarks/ksim/, which a lab run's publish does not rewrite; bench-knative-sim
    and bench-knative-sweep fail when those files are older than the latest published run."""
    from primedlab import blocks
    run = os.path.relpath(os.path.abspath(data), ROOT)
    try:
        changed = blocks.rewrite(path, name, run, body)
    except (OSError, blocks.BlockError) as e:
        sys.exit("knative-sim: %s: %s" % (path, e))
    print("knative-sim: %s block %s %s" % (os.path.relpath(path), name, "rewritten" if changed else "unchanged"),
          file=sys.stderr)


def cmd_seed000(a):
    from primedlab import kseed
    doc = read_inputs(a.inputs)
    try:
        fixed, virtual = kseed.lab_rows(doc["targets"])
    except ValueError as e:
        sys.exit("knative-sim seed000: %s" % e)
    res = kseed.compare(fixed, virtual)
    md = kseed.table(res)
    md += ("\nThe JVM rows: %s and %s of the lab run %s (their CPU per request's ratio and start-up). "
           "`benchmarks/knative-sim seed000 --write` regenerates this block.\n" % (
               fixed["name"], virtual["name"], doc.get("run", "?")))
    if a.write:
        write_block(page("autoscaling.md"), "seed000", a.inputs or PUBLISHED, md)
    else:
        sys.stdout.write(md)
    if a.json:
        json.dump(res, sys.stdout, indent=1)
        print()
    return 0


def settings_text(st):
    from primedlab import kmanifest
    return "target %s, %d %%, containerConcurrency %d, scale 0..%d, %d CPU%s a pod" % (
        kmanifest.num(st["target"]), round(100 * st["util"]), st["cc"], st["max_scale"], st["cpus"],
        "s" if st["cpus"] > 1 else "")


def cmd_cold(a):
    from primedlab import kcold
    from primedlab import ksweep
    doc = read_inputs(a.inputs)
    from primedlab import kmanifest
    names = a.images or (list(ksweep.CLASSES) + [t["name"] for t in doc["targets"] if t["name"].startswith("java")])
    targets = sorted(targets_of(doc, names, start_parts=True), key=lambda t: names.index(t.name))
    # the classes run with what their manifest carries: the base (scalar), the IFMA overlay
    have = kmanifest.carried(ROOT)
    recs = {kmanifest.SCALAR: have[kmanifest.BASE], kmanifest.IFMA: have.get(kmanifest.IFMA_OVERLAY, have[kmanifest.BASE])}
    res = [(t.name, kcold.scenarios(t, seed=a.seed, pull_mib_s=a.pull_mib_s, settings={
        "target": recs[t.name]["target"], "container_concurrency": recs[t.name]["cc"],
        "utilization": recs[t.name]["util"], "pod_cpus": recs[t.name]["cpus"],
        "max_scale": recs[t.name]["max_scale"]} if t.name in recs else None))
        for t in targets]
    run = doc.get("run", "?")
    parts = kcold.parts_table(targets, pull_mib_s=a.pull_mib_s)
    from_zero = kcold.scenario_table(res)
    burst = kcold.burst_table(res)
    note = ("Inputs: the lab run %s (process start, first answer, image size: for the containers their "
            "image and a `podman run` to the first /healthz 200; the JVM rows were measured without a "
            "container, so theirs is an exec and the JDK with the program); scheduling is the model's "
            "default, the first pull assumes %g MiB/s. Each image's Service: %s. "
            "Requests at %g req/s (Poisson, seed %d) for 60 s from zero pods; after idle: 30 s of them, %g s of "
            "nothing, 30 s again. A model's output.\n" % (
                run, a.pull_mib_s, "for %s, knative/base/service.yaml's settings (%s); for %s, the IFMA overlay's (%s); "
                "for the JVM rows, Knative's defaults with the base's shape before the sweep (target 11, "
                "containerConcurrency 16, 100 %%, scale 0..10, 2 CPUs)" % (
                    kmanifest.SCALAR, settings_text(recs[kmanifest.SCALAR]), kmanifest.IFMA,
                    settings_text(recs[kmanifest.IFMA])), kcold.RATE, a.seed,
                kcold.IDLE_S))
    whole = ("### The parts of a cold start\n\n" + parts + "\n### Requests that waited for one\n\n" + from_zero +
             "\n### A burst past the panic threshold\n\nOne ready pod at 30 % of its capacity for 30 s, 4 times "
             "its capacity for 20 s, then 30 % again for 40 s.\n\n" + burst + "\n" + note)
    short = parts + "\n" + from_zero + "\n" + note + "(docs/autoscaling.md has the burst.)\n"
    if a.write:
        write_block(page("autoscaling.md"), "cold-starts", a.inputs or PUBLISHED, whole)
        write_block(page("knative.md"), "cold-start", a.inputs or PUBLISHED, short)
    else:
        sys.stdout.write(whole)
    return 0


SWEEP = os.path.join(DATA, "sweep.json")


def load_sweep(path):
    try:
        with open(path or SWEEP) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        sys.exit("knative-sim: the sweep %s: %s (benchmarks/knative-sim sweep --out FILE makes one)" % (
            path or SWEEP, e))


def answers(sw, slo_ms):
    """{(class, pod CPUs): row or None} of a sweep, or exit when a winner lies on the grid's edge."""
    from primedlab import ksweep
    try:
        return ksweep.answers_or_none(sw, slo_ms)
    except ksweep.EdgeError as e:
        sys.exit("knative-sim: %s" % e)


def manifest_settings(sw, slo_ms):
    """What the manifests must carry: kmanifest.wanted() of the sweep's answers."""
    from primedlab import kmanifest
    ans = answers(sw, slo_ms)
    if all(ans.get((kmanifest.SCALAR, n)) is None for n in sw["pod_cpus"]):
        sys.exit("knative-sim: no pod size has an answer for the scalar class: nothing safe to ship")
    try:
        return kmanifest.wanted(ans, sw["max_scale"], slo_ms), ans
    except ValueError as e:
        sys.exit("knative-sim: %s" % e)


CHART_RPS, CHART_S = 1500.0, 240.0     # the answer chart's load: Poisson arrivals at this rate for this long
OLD = {"target": 100.0, "util": 1.0, "cc": 100, "cpus": 2, "max_scale": 10}   # the manifests' before the arrivals sweep


def answer_chart(doc, outdir, want, seed=1):
    """pods-answer.png: CPUs held (ready pods x pod CPUs) and p95 per 10 s of ctr-static at
    CHART_RPS for CHART_S, with the settings the manifests carried before (OLD) and the IFMA
    overlay's answer; None without gnuplot."""
    from primedlab import kmanifest
    if not shutil.which("gnuplot"):
        print("knative-sim: gnuplot not installed (profiles/deps @bench): no chart", file=sys.stderr)
        return None
    import tempfile
    tmp = tempfile.mkdtemp(prefix="kanswer-")
    tg = targets_of(doc, [IFMA])[0]
    w = want[kmanifest.IFMA_OVERLAY]
    runs = [("target 100, cc 100, 100 %, 2 CPUs (before)", OLD),
            ("target %s, cc %d, %d %%, %d CPUs (the IFMA answer)" % (kmanifest.num(w["target"]), w["cc"],
                                                                    round(100 * w["util"]), w["cpus"]), w)]
    plots_p, plots_l = [], []
    for i, (label, st) in enumerate(runs):
        sv = ksim.Service(container_concurrency=st["cc"], target=st["target"], utilization=st["util"],
                          max_scale=st["max_scale"], pod_cpus=st["cpus"])
        sim = ksim.Sim(tg, sv, ksim.Load(segments=[(CHART_S, CHART_RPS)]), seed=seed).run()
        r = ksim.summarize(sim)
        fp, fl = os.path.join(tmp, "p%d.tsv" % i), os.path.join(tmp, "l%d.tsv" % i)
        with open(fp, "w") as f:
            for t, ready, *_ in sim.timeline:
                f.write("%g\t%d\n" % (t, ready * st["cpus"]))
        with open(fl, "w") as f:
            for t, n, p50, p95, p99 in r["latency_series"]:
                f.write("%g\t%.2f\n" % (t, 1e3 * p95))
        label += ": p95 %.0f ms, %d pod starts" % (r["p95_ms"], r["pod_starts"])
        plots_p.append('"%s" using 1:2 with steps lw 2 lc rgb "%s" title "%s"' % (fp, color(i), label))
        plots_l.append('"%s" using 1:2 with linespoints lw 2 pt 7 ps 0.5 lc rgb "%s" title "%s"' % (fl, color(i), label))
    os.makedirs(outdir, exist_ok=True)
    png = os.path.join(outdir, "pods-answer.png")
    gp = ['set terminal pngcairo size 1100,800 font "DejaVu Sans,10" noenhanced', 'set output "%s"' % png,
          'set multiplot layout 2,1 title "ctr-static (AVX-512 IFMA) at %g req/s, Poisson, %g s: a model, not a '
          'measurement\\ninputs: lab run %s | commit %s | seed %d"' % (CHART_RPS, CHART_S, doc.get("run"), bench.commit() or "?", seed),
          'set key below', 'set grid', 'set xlabel "time (s)"', 'set ylabel "CPUs held (ready pods x CPUs)"',
          'set yrange [0:*]', 'plot ' + ", ".join(plots_p),
          'set ylabel "p95 latency (ms, 10 s buckets)"', 'set logscale y', 'set yrange [*:*]', 'plot ' + ", ".join(plots_l),
          'unset multiplot']
    p = subprocess.run(["gnuplot"], input="\n".join(gp) + "\n", text=True, capture_output=True)
    shutil.rmtree(tmp, ignore_errors=True)
    if p.returncode != 0:
        print("knative-sim: gnuplot failed: %s" % p.stderr.strip(), file=sys.stderr)
        return None
    return png


def run_date(run):
    m = re.fullmatch(r"(\d{4}-\d\d-\d\d)-(\d\d)(\d\d)", run or "")
    return "%s %s:%s UTC" % m.groups() if m else run


def cmd_publish(a):
    """The sweep's answer table, grids and chart, and the manifests' settings."""
    from primedlab import kmanifest
    from primedlab import ksweep
    sw = load_sweep(a.sweep)
    doc = read_inputs(None)
    run = sw["run"]
    want, ans = manifest_settings(sw, a.slo_ms)
    n = want[kmanifest.BASE]["cpus"]
    table = ksweep.answers_table(sw, ans, CLASSES, shipped=(kmanifest.SCALAR, n))
    sc = ksweep.SCENARIOS        # tests/bench/knative-sweep holds the published sweep's to these
    note = ("The cheapest setting per million answered requests (CPU-seconds billed: pod CPUs x each pod's life, "
            "scheduled to stopped) whose p95 meets %g ms with no 503 in every scenario: Poisson arrivals at a third of "
            "one pod's capacity, 1.5 and 5 pods' (each after a %g s ramp from zero that is not counted, then %g s), "
            "a step from one pod's capacity to four, a burst of one pod's capacity from zero pods, a ramp from 0.3 to "
            "5 pods' capacity over %g s, and the seed's k6 users (stages of %g s; a gate, not a price: users who wait "
            "for their answer send what the pods answer). A pod's capacity: its CPUs / the mean service time. The "
            "grid per pod size: targets %s x its CPUs, target utilisation %s %%, containerConcurrency 1, the pod's "
            "CPUs and none; scale 0..%d, initial 1, Knative's config-autoscaler defaults (target-burst-capacity 211). "
            "Inputs: the lab run %s (%s: ctr-static's row, measured with the eight-lane engine; %s: primed-scalar's "
            "service time with ctr-static's start-up). At %s req/s: each answer under Poisson arrivals at that rate "
            "for %g s from one pod (p95 ms / pod starts / 503s). \"(shipped)\": the pod size the manifests carry: of "
            "the sizes whose two answers hold all of those rates within %g ms and %d pods, the one whose scalar "
            "answer costs least per request; knative/base/service.yaml carries its scalar answer (safe on "
            "every CPU), knative/overlays/ifma the IFMA one. Seed %d. A model's output: "
            "`benchmarks/knative-sim sweep` then `publish --write`.\n" % (
                a.slo_ms, sw["warmup_s"], sw["steady_s"], sc["ramp"][1][2], sc["k6-users"][1],
                ", ".join(ksweep.fmt_num(x) for x in sw["grid"]["target_factors"]),
                ", ".join("%d" % round(100 * u) for u in sw["grid"]["utilizations"]), sw["max_scale"],
                run_date(run), CLASSES[kmanifest.IFMA].split(" (")[0], CLASSES[kmanifest.SCALAR].split(" (")[0],
                " / ".join(ksweep.fmt_rps(r) for r in sw["peak_rps"]), sw["peak_s"], a.slo_ms, sw["max_scale"],
                sw["seed"]))
    detail = []
    for (c, k), r in sorted(ans.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        if r is None:
            continue
        detail.append("#### %s, %d CPU%s: target %s, %d %%, containerConcurrency %s\n\n%s" % (
            c, k, "s" if k > 1 else "", ksweep.fmt_num(r["target"]), round(100 * r["util"]), r["cc"],
            ksweep.scenario_table(r)))
    grids = ["#### %s, %d CPU%s\n\n%s" % (c, k, "s" if k > 1 else "", ksweep.grid_table(sw["rows"], c, k))
             for k in sw["pod_cpus"] for c in sw["classes"]]
    if not a.write:
        sys.stdout.write(table + "\n" + note + "\n" + "\n".join(detail) + "\n" + "\n".join(grids))
        return 0
    outdir = os.path.join(ROOT, "docs", "autoscaling", run)
    png = answer_chart(doc, outdir, want, seed=sw["seed"])
    rel_k = os.path.relpath(png, os.path.join(ROOT, "docs")) if png else None
    chart_md = ("\n![CPUs held and p95 over time: the settings before against the IFMA answer](%s)\n" % rel_k
                if rel_k else "")
    write_block(page("knative.md"), "answer", a.sweep or SWEEP, table + "\n" + note + chart_md)
    write_block(page("autoscaling.md"), "sweep-recommended", a.sweep or SWEEP,
                table + "\n" + note + "\n" + "\n".join(detail))
    write_block(page("autoscaling.md"), "sweep-grid", a.sweep or SWEEP, "\n".join(grids))
    why = "lab run %s, p95 objective %g ms, %d-CPU pods" % (run_date(run), a.slo_ms, n)
    changed = kmanifest.rewrite(ROOT, want, why)
    # the saturation alert follows the base's cap
    changed += kmanifest.rewrite_rules(ROOT, want[kmanifest.BASE]["cc"])
    for c in changed:
        print("knative-sim: %s rewritten" % c, file=sys.stderr)
    return 0


def cmd_annotate_check(a):
    from primedlab import kmanifest
    want, _ = manifest_settings(load_sweep(a.sweep), a.slo_ms)
    errs = kmanifest.differences(ROOT, want)
    for e in errs:
        print("knative-sim: %s" % e, file=sys.stderr)
    return 1 if errs else 0


def add_model_args(ap):
    """The Service, the KPA and the load, shared with benchmarks/knative-target."""
    d = kpa.DEFAULTS
    g = ap.add_argument_group("the Service (defaults: knative/base/service.yaml)")
    from primedlab import kmanifest
    try:
        b = kmanifest.base_settings(ROOT)
    except (OSError, KeyError, ValueError, TypeError) as e:
        sys.exit("knative-sim: %s: %s" % (kmanifest.BASE, e))
    g.add_argument("--target", type=float, default=b["target"],
                   help="autoscaling.knative.dev/target (default the base's, %g)" % b["target"])
    g.add_argument("--container-concurrency", type=int, default=b["cc"],
                   help="containerConcurrency (default the base's, %d; 0 = unlimited)" % b["cc"])
    g.add_argument("--utilization", type=float, default=b["util"],
                   help="target utilisation as a fraction (default the base's, %g)" % b["util"])
    g.add_argument("--min-scale", type=int, default=b["min_scale"], help="(default the base's, %d)" % b["min_scale"])
    g.add_argument("--max-scale", type=int, default=b["max_scale"],
                   help="0 = unbounded (default the base's, %d)" % b["max_scale"])
    g.add_argument("--initial-pods", type=int, default=b["initial_scale"],
                   help="ready pods at t=0 (default the base's initial-scale, %d)" % b["initial_scale"])
    g.add_argument("--pod-cpus", type=int, default=b["cpus"],
                   help="CPUs a pod requests and serves with (default the base's CPU limit, %d)" % b["cpus"])
    g.add_argument("--scheduling-delay", type=duration, default=1.0,
                   help="pod created -> container starting: scheduling, image present (default 1s)")
    g.add_argument("--container-start-ms", type=float, default=0.0,
                   help="added to the start-up of targets measured without a container (default 0)")
    g = ap.add_argument_group("config-autoscaler (defaults: Knative's)")
    g.add_argument("--target-burst-capacity", type=float, default=d["target_burst_capacity"])
    g.add_argument("--stable-window", type=duration, default=d["stable_window_s"])
    g.add_argument("--panic-window-pct", type=float, default=d["panic_window_percentage"])
    g.add_argument("--panic-threshold-pct", type=float, default=100 * d["panic_threshold"])
    g.add_argument("--max-scale-up-rate", type=float, default=d["max_scale_up_rate"])
    g.add_argument("--max-scale-down-rate", type=float, default=d["max_scale_down_rate"])
    g.add_argument("--scale-down-delay", type=duration, default=d["scale_down_delay_s"])
    g.add_argument("--scale-to-zero-grace", type=duration, default=d["scale_to_zero_grace_period_s"])
    g.add_argument("--activation-scale", type=int, default=1)
    g.add_argument("--queue-proxy-cpu-ms", type=float, default=0.0,
                   help="queue-proxy's CPU per request, ms of one core, added to each request's work (default 0)")
    g = ap.add_argument_group("the load")
    g.add_argument("--stage", type=duration, default=120.0, help="each k6 stage's length (default 2m, as primed.js)")
    g.add_argument("--think", type=duration, default=0.0, help="users' mean think time (default 0, as primed.js)")
    g.add_argument("--open", metavar="KIND:ARGS",
                   help="open loop instead: constant:RATE:DURATION, step:RATE1:RATE2:AT:DURATION, "
                        "spike:BASE:PEAK:AT:LENGTH:DURATION (req/s, seconds)")
    g.add_argument("--uniform", action="store_true", help="open loop evenly spaced (default Poisson)")
    g.add_argument("--seed", type=int, default=1)


def main():
    ap = argparse.ArgumentParser(prog="knative-sim", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("decide", help="the decider alone, JSON lines on stdin")
    r = sub.add_parser("run", help="the seed's scenario for every target")
    r.add_argument("--inputs", help="inputs JSON (default benchmarks/ksim/published.json)")
    r.add_argument("--from-results", metavar="DIR", help="a lab results directory instead")
    r.add_argument("--targets", type=lambda s: s.split(","),
                   help="comma-separated target names of the inputs (default all); the CPU classes the manifests "
                        "answer for: %s; ctr-static-avx512 and ctr-static-avx2 where the inputs' run has their "
                        "engine rows" % "; ".join("%s = %s" % kv for kv in CLASSES.items()))
    r.add_argument("--out", metavar="DIR", help="write summary.md/.json, per-target TSVs and pods-latency.png here")
    add_model_args(r)
    i = sub.add_parser("inputs", help="print the inputs JSON of a lab results directory")
    g = i.add_mutually_exclusive_group(required=True)
    g.add_argument("--from-results", metavar="DIR", help="a lab results directory (benchmarks/run --out)")
    g.add_argument("--from-lab", metavar="PAGE", help="a published lab page (docs/lab/*-lab-run.md)")
    w = sub.add_parser("sweep", help="every CPU class x pod size x (target, utilisation, cap) under the scenarios, as JSON")
    w.add_argument("--inputs", help="inputs JSON (default benchmarks/ksim/published.json)")
    w.add_argument("--classes", type=lambda s: s.split(","),
                   help="comma-separated target names (default the CPU classes: ctr-static, ctr-static-scalar; "
                        "ctr-static-avx512 and ctr-static-avx2 where the inputs' run has their engine rows)")
    w.add_argument("--pod-cpus", type=ints, help="pod sizes swept, CPUs (default 1,2,4,8)")
    w.add_argument("--target-factors", type=floats,
                   help="targets swept, times the pod's CPUs (default 0.5,0.75,1,1.5)")
    w.add_argument("--utilizations", type=floats, help="target utilisations swept, fractions (default 0.6,0.8,1)")
    w.add_argument("--caps", type=ints, help="containerConcurrency values swept (default 1, the pod's CPUs, 0 = none)")
    w.add_argument("--scenarios", type=lambda s: s.split(","), help="comma-separated scenario names (default all)")
    w.add_argument("--slo-ms", type=float, default=250.0, help="the p95 objective (default 250)")
    w.add_argument("--peak-rps", type=floats, help="the absolute rates each answer is run at, req/s; the shipped "
                   "pod size must hold them all (default 600,1500,5000)")
    w.add_argument("--seed", type=int, default=1)
    w.add_argument("--jobs", type=int, default=1, help="processes (the result does not depend on it)")
    w.add_argument("--out", metavar="FILE", help="write the JSON here (default stdout)")
    w.add_argument("-v", "--verbose", action="store_true", help="one line per setting on stderr")
    z = sub.add_parser("seed000", help="seed 000's cluster figures against the model's prediction")
    z.add_argument("--inputs", help="inputs JSON (default benchmarks/ksim/published.json)")
    z.add_argument("--write", action="store_true", help="rewrite docs/autoscaling.md's seed000 block")
    z.add_argument("--json", action="store_true", help="also print the comparison as JSON")
    c = sub.add_parser("cold", help="scale from zero, after idle, and a burst, per image")
    c.add_argument("--inputs", help="inputs JSON (default benchmarks/ksim/published.json)")
    c.add_argument("--images", type=lambda s: s.split(","), help="comma-separated target names")
    c.add_argument("--pull-mib-s", type=float, default=50.0, help="first pull's rate, MiB/s (default 50)")
    c.add_argument("--seed", type=int, default=1)
    c.add_argument("--write", action="store_true",
                   help="rewrite the cold-starts block of docs/autoscaling.md and cold-start of docs/knative.md")
    for name, hlp in (("publish", "the sweep's chart and tables (--write: into docs/autoscaling.md, and the "
                                  "manifests' annotations)"),
                      ("check-manifests", "exit 1 when a manifest's annotations are not the sweep's recommendation")):
        q = sub.add_parser(name, help=hlp)
        q.add_argument("--sweep", metavar="FILE", help="the sweep JSON (default benchmarks/ksim/sweep.json)")
        q.add_argument("--slo-ms", type=float, default=250.0, help="the p95 objective (default 250)")
        if name == "publish":
            q.add_argument("--write", action="store_true")
    a = ap.parse_args()
    return {"decide": cmd_decide, "run": cmd_run, "inputs": cmd_inputs, "sweep": cmd_sweep,
            "seed000": cmd_seed000, "cold": cmd_cold, "publish": cmd_publish,
            "check-manifests": cmd_annotate_check}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
