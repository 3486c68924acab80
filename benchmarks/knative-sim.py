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
answers, no state change). The decider is benchmarks/lib/primedlab/kpa.py; docs/autoscaling.md.

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
HERE = os.path.dirname(os.path.abspath(__file__))
import pathlib, sys  # noqa: E401  the scripts' one package: benchmarks/lib/primedlab, found from any folder
sys.path.insert(0, str(next(p for p in pathlib.Path(__file__).resolve().parents if (p / "benchmarks/lib/primedlab").is_dir()) / "benchmarks/lib"))
from primedlab import kpa  # noqa: E402
from primedlab import ksim  # noqa: E402

PUBLISHED = os.path.join(HERE, "ksim", "published.json")


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
    return {"source": "%s ('primed comparison lab: %s %s:%s UTC'%s): RPS (best /example req/s, 1 worker on "
                      "1 CPU), BOOT UP (first /healthz 200, median of 10), first /example median, sieve median/mean "
                      "%s/%s us" % (os.path.relpath(path, os.path.dirname(HERE)), m.group(1), m.group(2), m.group(3),
                                    ", commit " + commit_m.group(1) if commit_m else "", sieve.group(1), sieve.group(2)),
            "run": run, "fields": INPUT_FIELDS, "excluded": {"nginx": "serves a fixed body on /example, no prime: not the same work"},
            "targets": tg}


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


def commit():
    try:
        return subprocess.run(["git", "-C", HERE, "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, timeout=10).stdout.strip() or "?"
    except (OSError, subprocess.SubprocessError):
        return "?"


def chart(outdir, names, title):
    """pods-latency.png: ready pods and p95 latency (10 s buckets, by arrival) over time, every target;
    the title names the load, the second line the inputs, commit and seed (as benchmarks/plot names
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
         "| target | requests | answered req/s | p50 ms | p95 ms | p99 ms | max pods | pod starts | cold-start requests "
         "| cold wait p50 ms | cold wait max ms | activator-buffered | buffered wait p95 ms | CPU-s billed |",
         "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        L.append("| %s | %d | %.1f | %s | %s | %s | %d | %d | %d | %s | %s | %d | %s | %.0f |" % (
            r["target"], r["requests"], r["throughput_rps"], fmt(r["p50_ms"]), fmt(r["p95_ms"]), fmt(r["p99_ms"]),
            r["max_ready"], r["pod_starts"], r["cold_requests"], fmt(r["cold_wait_p50_ms"]),
            fmt(r["cold_wait_max_ms"]), r["buffered_requests"], fmt(r["buffered_wait_p95_ms"]), r["cpu_seconds"]))
    L += ["", "max pods: most ready pods at once; pod starts: pods the autoscaler started that became ready; "
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
            desc, (src[:90] + "...") if len(src) > 90 else src, commit(), a.seed))
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


def cmd_sweep(a):
    from primedlab import ksweep
    doc = read_inputs(a.inputs)
    if a.jobs < 1 or a.stage <= 0:
        sys.exit("knative-sim sweep: --jobs must be at least 1 and --stage longer than 0")
    if any(x < 1 for x in (a.grid_targets or [])) or any(x < 0 for x in (a.grid_cc or [])):
        sys.exit("knative-sim sweep: targets are at least 1, containerConcurrency at least 0")
    names = a.images or (list(ksweep.IMAGES) + ksweep.jvm_rows([t["name"] for t in doc["targets"]]))
    targets = sorted(targets_of(doc, names), key=lambda t: names.index(t.name))
    pairs = ksweep.grid(a.grid_targets or ksweep.TARGETS, a.grid_cc or ksweep.CONCURRENCIES)
    n = [0]

    def progress(r):
        n[0] += 1
        if a.verbose:
            print("knative-sim sweep: %d/%d %s %s target %d cc %d: p95 %.1f ms, %.0f CPU-s" % (
                n[0], total, r["image"], r["load"], r["target"], r["cc"], r["p95_ms"], r["cpu_seconds"]),
                file=sys.stderr, flush=True)
    loads = ksweep.LOADS
    if a.loads:
        bad = set(a.loads) - set(ksweep.LOADS)
        if bad:
            sys.exit("knative-sim sweep: no load %s (%s)" % (", ".join(sorted(bad)), ", ".join(ksweep.LOADS)))
        loads = {k: v for k, v in ksweep.LOADS.items() if k in a.loads}
    total = len(targets) * len(pairs) * len(loads)
    rows = ksweep.sweep(targets, pairs, loads=loads, stage_s=a.stage, seed=a.seed, jobs=a.jobs, progress=progress)
    out = {"run": doc.get("run", "?"), "inputs": doc.get("source", "?"), "seed": a.seed, "stage_s": a.stage,
           "loads": loads, "service": ksweep.base_service().__dict__,
           "grid": {"targets": sorted({p[0] for p in pairs}), "container_concurrency": sorted({p[1] for p in pairs})},
           "images": [t.name for t in targets], "rows": rows}
    text = json.dumps(out, indent=1, sort_keys=True) + "\n"
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


def page(name):
    return os.path.join(os.path.dirname(HERE), "docs", name)


def write_block(path, name, data, body):
    """Writes a block whose run is its data file (a path from the repository's root): the model's
    blocks come from benchmarks/ksim/, which a lab run's publish does not rewrite; bench-knative-sim
    and bench-knative-sweep fail when those files are older than the latest published run."""
    from primedlab import blocks
    run = os.path.relpath(os.path.abspath(data), os.path.dirname(HERE))
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


def cmd_cold(a):
    from primedlab import kcold
    from primedlab import ksweep
    doc = read_inputs(a.inputs)
    names = a.images or (list(ksweep.IMAGES) + ksweep.jvm_rows([t["name"] for t in doc["targets"]]))
    targets = sorted(targets_of(doc, names, start_parts=True), key=lambda t: names.index(t.name))
    recs = {}
    if os.path.exists(SWEEP):
        recs = recommendations(load_sweep(SWEEP), 250.0)
    res = [(t.name, kcold.scenarios(t, seed=a.seed, pull_mib_s=a.pull_mib_s, settings={
        "target": recs[t.name]["target"], "container_concurrency": recs[t.name]["cc"]} if t.name in recs else None))
        for t in targets]
    run = doc.get("run", "?")
    parts = kcold.parts_table(targets, pull_mib_s=a.pull_mib_s)
    from_zero = kcold.scenario_table(res)
    burst = kcold.burst_table(res)
    note = ("Inputs: the lab run %s (process start, first answer, image size: for the containers their "
            "image and a `podman run` to the first /healthz 200; the JVM rows were measured without a "
            "container, so theirs is an exec and the JDK with the program); scheduling is the model's "
            "default, the first pull assumes %g MiB/s. Each image's Service: %s; scale 0..10, 2 CPUs a pod. "
            "Requests at %g req/s (Poisson, seed %d) for 60 s from zero pods; after idle: 30 s of them, %g s of "
            "nothing, 30 s again. A model's output.\n" % (
                run, a.pull_mib_s, "its recommended target and containerConcurrency (the sweep, objective 250 ms)"
                if recs else "knative/base/service.yaml's target and containerConcurrency", kcold.RATE, a.seed,
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


SWEEP = os.path.join(HERE, "ksim", "sweep.json")


def load_sweep(path):
    try:
        with open(path or SWEEP) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        sys.exit("knative-sim: the sweep %s: %s (benchmarks/knative-sim sweep --out FILE makes one)" % (
            path or SWEEP, e))


def recommendations(sw, slo_ms):
    from primedlab import ksweep
    return {im: ksweep.recommend(sw["rows"], im, slo_ms)[0] for im in sw["images"]}


def sweep_chart(sw, outdir, slo_ms):
    """sweep.png: per image, the settings no other beats on both p95 and CPU-seconds (users who never
    pause), p95 against CPU-seconds billed; the objective as a vertical line."""
    from primedlab import ksweep
    if not shutil.which("gnuplot"):
        print("knative-sim: gnuplot not installed (profiles/deps @bench): no chart", file=sys.stderr)
        return None
    os.makedirs(outdir, exist_ok=True)
    import tempfile
    tmp = tempfile.mkdtemp(prefix="ksweep-")
    plots = []
    for i, im in enumerate(sw["images"]):
        f = os.path.join(tmp, "%d.tsv" % i)
        with open(f, "w") as out:
            for r in ksweep.pareto(sw["rows"], im):
                out.write("%g\t%g\t%d/%d\n" % (r["p95_ms"], r["cpu_seconds"], r["target"], r["cc"]))
        plots.append('"%s" using 1:2 with linespoints lw 2 pt 7 ps 0.7 lc rgb "%s" title "%s"' % (f, color(i), im))
    png = os.path.join(outdir, "sweep.png")
    gp = ['set terminal pngcairo size 1000,650 font "DejaVu Sans,10" noenhanced',
          'set output "%s"' % png,
          'set title "CPU-seconds billed against p95, the best settings per image (target/containerConcurrency '
          'labelled on one)\\nusers who never pause (the seed\'s k6 stages), model; inputs: lab run %s, '
          'seed %d"' % (sw["run"], sw["seed"]),
          'set key outside right', 'set grid', 'set logscale x', 'set xlabel "p95 latency (ms)"',
          'set ylabel "CPU-seconds billed (pods x 2 CPUs)"', 'set yrange [0:*]',
          'set arrow from %g, graph 0 to %g, graph 1 nohead dt 2 lc rgb "#888888"' % (slo_ms, slo_ms),
          'set label "objective %g ms" at %g, graph 0.5 offset 0.5,0 tc rgb "#555555"' % (slo_ms, slo_ms),
          'plot ' + ", ".join(plots) + ', "%s" using 1:2:3 with labels offset 0,1 font ",8" notitle' % (
              os.path.join(tmp, "%d.tsv" % next((i for i, im in enumerate(sw["images"]) if im.startswith("ctr-")), 0)))]
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
    """The sweep's chart, tables and the manifests' annotations."""
    from primedlab import kmanifest
    from primedlab import ksweep
    sw = load_sweep(a.sweep)
    run = sw["run"]
    outdir = os.path.join(os.path.dirname(HERE), "docs", "autoscaling", run)
    png = sweep_chart(sw, outdir, a.slo_ms) if a.write else None
    recs = recommendations(sw, a.slo_ms)
    rec_md = ksweep.recommendations_table(sw["rows"], sw["images"], a.slo_ms)
    rec_md += ("\nThe fewest CPU-seconds whose p95 meets %g ms with the seed's users who never pause (\"(misses)\": "
               "none does, the lowest p95), then the same settings when users think 1 s, and what the sweep recommends "
               "for those users. The manifests carry the first. From "
               "benchmarks/ksim/sweep.json: the lab run %s's inputs, targets %s, containerConcurrency %s (0: no "
               "cap), stages of %g s, seed %d. A model's output.\n" % (
                   a.slo_ms, run_date(run), ", ".join(map(str, sw["grid"]["targets"])),
                   ", ".join(map(str, sw["grid"]["container_concurrency"])), sw["stage_s"], sw["seed"]))
    curves = []
    for im in sw["images"]:
        curves.append("#### %s\n\nUsers who never pause (p95 ms / CPU-seconds billed):\n\n%s\nUsers who think 1 s:\n\n%s"
                      % (im, ksweep.curve_table(sw["rows"], im, "seed"), ksweep.curve_table(sw["rows"], im, "think-1s")))
    if png:
        print("chart: %s" % png)
    if not a.write:
        sys.stdout.write(rec_md + "\n" + "\n".join(curves))
        return 0
    rel = os.path.relpath(png, os.path.join(os.path.dirname(HERE), "docs")) if png else None
    write_block(page("autoscaling.md"), "sweep-recommended", a.sweep or SWEEP,
                rec_md + ("\n![CPU-seconds against p95 per image](%s)\n" % rel if rel else ""))
    write_block(page("autoscaling.md"), "sweep-grid", a.sweep or SWEEP, "\n".join(curves))
    write_block(page("knative.md"), "recommended", a.sweep or SWEEP, rec_md)
    why = "lab run %s, p95 objective %g ms" % (run_date(run), a.slo_ms)
    changed = kmanifest.rewrite(os.path.dirname(HERE), {im: (r["target"], r["cc"]) for im, r in recs.items()}, why)
    # the saturation alert follows the base's cap
    changed += kmanifest.rewrite_rules(os.path.dirname(HERE), kmanifest.base_values(os.path.dirname(HERE))[2])
    for c in changed:
        print("knative-sim: %s rewritten" % c, file=sys.stderr)
    return 0


def cmd_annotate_check(a):
    from primedlab import kmanifest
    sw = load_sweep(a.sweep)
    recs = recommendations(sw, a.slo_ms)
    errs = kmanifest.differences(os.path.dirname(HERE), {im: (r["target"], r["cc"]) for im, r in recs.items()})
    for e in errs:
        print("knative-sim: %s" % e, file=sys.stderr)
    return 1 if errs else 0


def add_model_args(ap):
    """The Service, the KPA and the load, shared with benchmarks/knative-target."""
    d = kpa.DEFAULTS
    g = ap.add_argument_group("the Service (defaults: knative/base/service.yaml)")
    from primedlab import kmanifest
    try:
        _, bt, bc = kmanifest.base_values(os.path.dirname(HERE))
    except (OSError, KeyError, ValueError) as e:
        sys.exit("knative-sim: %s: %s" % (kmanifest.BASE, e))
    g.add_argument("--target", type=float, default=bt,
                   help="autoscaling.knative.dev/target (default the base's, %g)" % bt)
    g.add_argument("--container-concurrency", type=int, default=bc,
                   help="containerConcurrency (default the base's, %d; 0 = unlimited)" % bc)
    g.add_argument("--utilization", type=float, default=1.0, help="target utilisation as a fraction (default 1.0 = 100 %%)")
    g.add_argument("--min-scale", type=int, default=0)
    g.add_argument("--max-scale", type=int, default=10, help="0 = unbounded (default 10)")
    g.add_argument("--initial-pods", type=int, default=1, help="ready pods at t=0 (default 1 = initial-scale)")
    g.add_argument("--pod-cpus", type=int, default=2, help="CPUs a pod requests and serves with (default 2)")
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
    r.add_argument("--targets", type=lambda s: s.split(","), help="comma-separated target names (default all)")
    r.add_argument("--out", metavar="DIR", help="write summary.md/.json, per-target TSVs and pods-latency.png here")
    add_model_args(r)
    i = sub.add_parser("inputs", help="print the inputs JSON of a lab results directory")
    g = i.add_mutually_exclusive_group(required=True)
    g.add_argument("--from-results", metavar="DIR", help="a lab results directory (benchmarks/run --out)")
    g.add_argument("--from-lab", metavar="PAGE", help="a published lab page (docs/lab/*-lab-run.md)")
    w = sub.add_parser("sweep", help="every image x (target, containerConcurrency) x load, as JSON")
    w.add_argument("--inputs", help="inputs JSON (default benchmarks/ksim/published.json)")
    w.add_argument("--images", type=lambda s: s.split(","),
                   help="comma-separated target names (default the container images and the JVM rows)")
    w.add_argument("--grid-targets", type=ints, help="targets swept (default 1,2,5,10,20,30,50,70,100)")
    w.add_argument("--grid-cc", type=ints, help="containerConcurrency values swept (default 0,10,50,100)")
    w.add_argument("--stage", type=duration, default=120.0, help="each k6 stage's length (default 2m)")
    w.add_argument("--loads", type=lambda s: s.split(","), help="comma-separated: seed, think-1s (default both)")
    w.add_argument("--seed", type=int, default=1)
    w.add_argument("--jobs", type=int, default=1, help="processes (the result does not depend on it)")
    w.add_argument("--out", metavar="FILE", help="write the JSON here (default stdout)")
    w.add_argument("-v", "--verbose", action="store_true", help="one line per run on stderr")
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
