"""docs/publish/rundata.py - a published lab run's data, kept under docs/lab/runs/<run-id>/.

owns: reading a lab run's table.md (the Markdown the lab writes, which is also its notebook entry)
into one dict; writing and reading docs/lab/runs/<run-id>/run.json; naming the latest published
run (the greatest run id under docs/lab/runs/).
never: measures, judges a run (publish and quiet.py do), or writes a page (figures.py and publish do).

run.json holds: id (YYYY-MM-DD-HHMM), date, machine, cpu, cpus, features ("AVX-512 IFMA", "no AVX-512 IFMA"
or "" when the run does not say), kernel, commit, notebook
(the entry's file name), server_engine (the prime engine every primed row ran), engine (prime_bench per engine: median_us, mean_us, cpu_mean_us), and the
tables by name: summary (the headline table), runs (every closed-loop run), startup, openloop,
siege, each a list of {column: cell} with the cells as the lab printed them.
"""
import csv
import json
import os
import re

TABLES = {  # name in run.json: the heading the table stands under (None: the first table)
    "summary": None,
    "runs": "## Every run",
    "startup": "## Start-up",
    "openloop": "## Open loop",
    "siege": "## siege",
}


def run_id(date):
    """'2026-12-04 14:20 UTC' -> '2026-12-04-1420'."""
    m = re.match(r"(\d{4}-\d\d-\d\d)[ T](\d\d):(\d\d)", date)
    if not m:
        raise ValueError("not a lab run's date: %r" % date)
    return "%s-%s%s" % m.groups()


def _table_after(text, start):
    """The first Markdown table at or after offset start: a list of {column: cell}."""
    m = re.compile(r"^(\|.*\|)\n\|[-| :]+\|\n((?:\|.*\|\n?)+)", re.M).search(text, start)
    if not m:
        return None
    cols = [c.strip() for c in m.group(1).strip().strip("|").split("|")]
    out = []
    for line in m.group(2).strip().split("\n"):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        out.append(dict(zip(cols, cells)))
    return out


def parse(text, features=""):
    """A lab run's table.md (or its notebook entry) as run data. Raises ValueError when the text is
    not a lab run's (no title with a date, no headline table)."""
    m = re.search(r"^# primed comparison lab: (.+)$", text, re.M)
    if not m:
        raise ValueError("no '# primed comparison lab: DATE' title")
    date = m.group(1).strip()
    if not features:
        # the primed rows' notes say what the CPU has (primed --version's "prime vector" line)
        said = set(re.findall(r"\(this CPU (has|lacks) AVX-512 IFMA\)", text))
        said |= {"has" if "ifma" in runs.split() else "lacks"
                 for runs in re.findall(r"\(this CPU runs: ([a-z0-9 ]+)", text)}
        features = {"has": "AVX-512 IFMA", "lacks": "no AVX-512 IFMA"}[said.pop()] if len(said) == 1 else ""
    d = {"id": run_id(date), "date": date, "features": features}
    m = re.search(r"^Machine: (.*?); kernel (.*?); commit (\w+)\.", text, re.M)
    if m:
        d["machine"], d["kernel"], d["commit"] = m.groups()
        d["cpu"] = d["machine"].split(",")[0].strip()
        c = re.search(r"(\d+) CPUs?", d["machine"])
        d["cpus"] = int(c.group(1)) if c else None
    d["engine"] = {}
    m = re.search(r"^Physical limit: .*?µs \(prime_bench, this run\): (.*?); ceiling", text, re.M)
    if m:
        for part in m.group(1).split("; "):
            e = re.match(r"(\w+): median (\d+), mean (\d+), CPU mean (\d+)", part)
            if e:
                d["engine"][e.group(1)] = {"median_us": int(e.group(2)), "mean_us": int(e.group(3)),
                                           "cpu_mean_us": int(e.group(4))}
    m = re.search(r"^Java's prime: .*?\(PrimeCost, JDK (\S+), this run\): median ([0-9.]+), min ([0-9.]+), "
                  r"max ([0-9.]+) over (\d+) rounds of (\d+); warm-up ([0-9.]+) s, settled (\w+)\.", text, re.M)
    if m:
        d["java_prime"] = dict(zip(("java", "cpu_ms_median", "cpu_ms_min", "cpu_ms_max", "rounds", "per_round",
                                    "warmup_s", "settled"), m.groups()))
    engines = set(re.findall(r"; prime engine: (\w+);", text))
    d["server_engine"] = engines.pop() if len(engines) == 1 else None  # the engine every primed row ran
    for name, heading in TABLES.items():
        start = 0
        if heading:
            h = re.search("^" + re.escape(heading), text, re.M)
            if not h:
                d[name] = []
                continue
            start = h.end()
        d[name] = _table_after(text, start) or []
    if not d["summary"]:
        raise ValueError("no headline table")
    return d


def runs_dir(docs):
    return os.path.join(docs, "lab", "runs")


def write(docs, data):
    """docs/lab/runs/<id>/run.json; returns the folder."""
    folder = os.path.join(runs_dir(docs), data["id"])
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "run.json"), "w") as f:
        json.dump(data, f, indent=1, ensure_ascii=False)
        f.write("\n")
    return folder


def kept(top, name):
    """The ids under top (folders holding a file name), oldest first: ids sort as their dates."""
    if not os.path.isdir(top):
        return []
    return sorted(r for r in os.listdir(top) if os.path.exists(os.path.join(top, r, name)))


def latest_kept(top, name):
    """The JSON file name of the greatest id under top, or None when none is kept."""
    ids = kept(top, name)
    if not ids:
        return None
    with open(os.path.join(top, ids[-1], name)) as f:
        return json.load(f)


def published(docs):
    """The ids of the published runs (folders under docs/lab/runs/ with a run.json), oldest first."""
    return kept(runs_dir(docs), "run.json")


def latest(docs):
    """The latest published run's data, or None when none is kept."""
    return latest_kept(runs_dir(docs), "run.json")


def _mib_kb(cell):
    m = re.match(r"([0-9.]+) MiB", cell or "")
    return "%.0f" % (float(m.group(1)) * 1024) if m else ""


def to_results_dir(data, out):
    """The kept data as the results-directory files docs/publish/charts.py reads (meta.txt,
    summary.csv, results.csv): how a run kept only as data gets its charts drawn again."""
    os.makedirs(out, exist_ok=True)
    e = data.get("engine", {}).get(data.get("server_engine") or "sieve")
    with open(os.path.join(out, "meta.txt"), "w") as f:
        f.write("date=%s\nmachine=%s\n" % (data["date"], data.get("machine", "")))
        if e:
            f.write("ceiling=%.0f req/s = 1 CPU x 1e6 / %d µs\n" % (1e6 / e["cpu_mean_us"], e["cpu_mean_us"]))
    boot = {r["target"]: r for r in data.get("startup", [])}
    cols = ["TYPE", "kind", "status", "boot_ms_median", "boot_ms_p10", "boot_ms_p90", "rss_conns", "idle_rss_kb",
            "conns_rss_kb", "peak_rss_kb"]
    with open(os.path.join(out, "summary.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for r in data["summary"]:
            if r["TYPE"].startswith("physical"):
                continue
            b = boot.get(r["TYPE"], {})
            conns = next((k.split("@")[1].split()[0] for k in r if k.startswith("RAM @")), "")
            w.writerow([r["TYPE"], "nginx" if r["TYPE"].startswith("nginx") else "", "ok",
                        b.get("/healthz 200 median", ""), b.get("p10", ""), b.get("p90", ""), conns,
                        _mib_kb(r.get("RAM idle")), _mib_kb(r.get("RAM @%s conns" % conns)), _mib_kb(r.get("RAM"))])
    with open(os.path.join(out, "results.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["target", "path", "conns", "rps", "p50_ms", "p95_ms", "p99_ms", "max_ms"])
        for r in data.get("runs", []):
            if r.get("conns", "-") == "-":
                continue
            w.writerow([r["target"], r["path"], r["conns"], r["req/s"], r["p50 ms"], r["p95 ms"], r["p99 ms"], ""])
    return out
