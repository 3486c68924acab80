#!/usr/bin/python3
"""docs/publish/publish.py [--check] [--docs DIR] RESULTS_DIR - publish a full lab run: the one source of
the figures on the user pages.
docs/publish/publish.py --regenerate [--docs DIR] - rewrite every generated block from the latest
published run's data, without a new run.
docs/publish/publish.py --scaling DIR [--docs DIR] - publish a benchmarks/scaling.py sweep (DIR holds its
scaling.json): the one source of the Results page's Across cores block.
docs/publish/publish.py --reconstruct ENTRY [--features F] [--redraw] [--docs DIR] - keep the data of
a run published before publish kept data, read back from its notebook entry's tables; --redraw
draws its charts again from that data (docs/publish/charts.py, gnuplot) into its folder.

Publishing keeps the run under docs/lab/runs/<run-id>/ (run.json: its tables as data, read from
table.md by rundata.py; its charts rps, plaintext, p95, boot, memory .png and report.html), writes
the whole table.md as the notebook entry docs/lab/<date>-lab-run.md, whose charts are that folder's
(so an old entry keeps its own pictures), lists it in docs/lab/README.md between
<!-- lab-runs:begin --> and <!-- lab-runs:end -->, then regenerates: every block named in
figures.BLOCKS on README.md and docs/*.md is rewritten from the latest published run (the
greatest run id under docs/lab/runs/). A page that lacks one of its blocks is an error. --docs DIR
writes into another docs tree (README.md is then DIR/../README.md). Refuses (exit 1, nothing written):
  - a --quick run: its figures are not quoted;
  - a run without contamination figures (made before the quiet-machine guard);
  - a contaminated run: any measurement window (prime_bench, start-up, every wrk round, every
    open-loop run, siege) in which other processes used more than 5 % of a CPU or steal
    passed 2 % (benchmarks/lib/primedlab/quiet.py THRESHOLDS; docs/benchmarking.md "Quiet machine").
--check: only say whether the run may be published (exit 0 or 1).

A scaling sweep is kept apart (docs/publish/scalingrun.py): under
docs/lab/scaling/<id>/ (scaling.json with its id and notebook, its charts and report.html),
its notebook entry (scaling.md's tables) docs/lab/<id>-scaling-run.md listed in docs/lab/README.md, then
the blocks of figures.SCALING_BLOCKS are rewritten from the latest published sweep (--regenerate
rewrites them too). Refused (exit 1, nothing written): a sweep with a failed run, a run without
its own contamination window, or one over the threshold.
"""
import json
import os
import re
import shutil
import sys

import pathlib, sys  # noqa: E401  the scripts' one package: benchmarks/lib/primedlab, found from any folder
sys.path.insert(0, str(next(p for p in pathlib.Path(__file__).resolve().parents if (p / "benchmarks/lib/primedlab").is_dir()) / "benchmarks/lib"))
from primedlab import blocks  # noqa: E402
from primedlab import figures  # noqa: E402
from primedlab import quiet  # noqa: E402
from primedlab import rundata  # noqa: E402
from primedlab import scalingrun  # noqa: E402

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
argv = sys.argv[1:]
check = "--check" in argv
regen = "--regenerate" in argv
redraw = "--redraw" in argv
argv = [a for a in argv if a not in ("--check", "--regenerate", "--redraw")]


def option(name, default=None):
    if name not in argv:
        return default
    i = argv.index(name)
    v = argv[i + 1] if i + 1 < len(argv) else sys.exit(__doc__)
    del argv[i:i + 2]
    return v


docs = option("--docs", os.path.join(root, "docs"))
features = option("--features", "")
reconstruct = option("--reconstruct")
scaling = option("--scaling")


def regenerate():
    """Every block of figures.BLOCKS rewritten from the latest published run, and of
    figures.SCALING_BLOCKS from the latest published sweep; exit 1 on a page without one of its
    blocks."""
    data = rundata.latest(docs)
    if data is None:
        sys.exit("publish: no published run under %s" % rundata.runs_dir(docs))
    sc = scalingrun.latest(docs)
    changed = rewrite(figures.BLOCKS, data["id"], lambda page, name: figures.body(page, name, data))
    changed += rewrite(figures.SCALING_BLOCKS, scalingrun.source(sc),
                       lambda page, name: figures.scaling_body(page, name, sc))
    print("publish: %d blocks from run %s%s rewritten%s" % (
        len(changed), data["id"], (" and sweep %s" % sc["id"]) if sc else "",
        (": " + ", ".join(changed)) if changed else " (none changed)"))


def rewrite(pages, run, body):
    """Each block of pages ({page: block names}) rewritten as from run with body(page, name); the
    "page:name" of those that changed. Exit 1 on a page without one of its blocks."""
    top = os.path.dirname(os.path.abspath(docs))
    changed = []
    for page, names in pages.items():
        path = os.path.join(top, page) if page == "README.md" else os.path.join(docs, page[len("docs/"):])
        for name in names:
            try:
                if blocks.rewrite(path, name, run, body(page, name)):
                    changed.append("%s:%s" % (page, name))
            except (OSError, blocks.BlockError) as e:
                sys.exit("publish: %s: %s" % (page, e))
    return changed


def lab_index():
    """docs/lab/README.md's path and text; exit 1 (before anything is written) when it lacks the
    markers a published entry goes between."""
    index_path = os.path.join(docs, "lab", "README.md")
    index = open(index_path).read() if os.path.exists(index_path) else ""
    if "<!-- lab-runs:begin -->" not in index or "<!-- lab-runs:end -->" not in index:
        sys.exit("publish: markers missing in %s" % index_path)
    return index_path, index


def add_to_index(entry, name):
    """Lists a notebook entry at the top of docs/lab/README.md's published runs."""
    index_path, index = lab_index()
    ibegin = "<!-- lab-runs:begin -->"
    if "(%s)" % name not in index:
        head_i, rest_i = index.split(ibegin, 1)
        open(index_path, "w").write(head_i + ibegin + "\n" + entry + rest_i)


def publish_scaling(res):
    """--scaling: judge the sweep, keep it, write its notebook entry, list it, regenerate."""
    try:
        data = scalingrun.load(res)
    except ValueError as e:
        sys.exit("publish: %s" % e)
    why = scalingrun.refusal(data)
    if why:
        sys.exit("publish: refused: the sweep in %s: %s" % (res, why))
    if check:
        print("publish: the sweep in %s may be published: %s" % (res, scalingrun.window_line(data)))
        sys.exit(0)
    try:
        md = open(os.path.join(res, "scaling.md")).read()
    except OSError as e:
        sys.exit("publish: %s" % e)
    lab_index()
    data, folder, names = scalingrun.keep(docs, res, data)
    name = data["notebook"]
    with open(os.path.join(docs, "lab", name), "w") as f:
        f.write(scalingrun.notebook(data, md, names))
    add_to_index("- [%s: scaling sweep, published](%s)" % (data["meta"]["date"], name), name)
    regenerate()
    print("published the sweep in %s into %s and %s" % (res, os.path.join(docs, "lab", name), folder))


if regen:
    if argv:
        sys.exit(__doc__)
    regenerate()
    sys.exit(0)
if scaling:
    if argv:
        sys.exit(__doc__)
    publish_scaling(scaling)
    sys.exit(0)
if reconstruct:
    if argv:
        sys.exit(__doc__)
    try:
        data = rundata.parse(open(reconstruct).read(), features)
    except (OSError, ValueError) as e:
        sys.exit("publish: %s: %s" % (reconstruct, e))
    data["notebook"] = os.path.basename(reconstruct)
    data["source"] = "read back from the notebook entry's tables (publish kept no data then)"
    folder = os.path.join(rundata.runs_dir(docs), data["id"])
    if redraw:
        import tempfile
        from primedlab import charts
        with tempfile.TemporaryDirectory(prefix="primed-redraw.") as tmp:
            try:
                names = charts.write_pngs(charts.load(rundata.to_results_dir(data, tmp)), tmp)
            except (OSError, RuntimeError, ValueError) as e:
                sys.exit("publish: --redraw: %s" % e)
            os.makedirs(folder, exist_ok=True)
            for n in names:
                shutil.copyfile(os.path.join(tmp, n), os.path.join(folder, n))
    data["charts"] = sorted(f[:-4] for f in os.listdir(folder) if f.endswith(".png")) if os.path.isdir(folder) else []
    print("publish: kept %s" % rundata.write(docs, data))
    sys.exit(0)
if len(argv) != 1 or argv[0].startswith("-"):
    sys.exit(__doc__)
res = argv[0]
try:
    meta = dict(l.rstrip("\n").split("=", 1) for l in open(os.path.join(res, "meta.txt")) if "=" in l)
except OSError as e:
    sys.exit("publish: %s is not a lab run's results folder: %s" % (res, e))
if meta.get("quick") == "true":
    sys.exit("publish: %s is a --quick run; its figures are not quoted" % res)

# the verdict is computed here from every window's figures, not read from the run's own summary
try:
    with open(os.path.join(res, "raw.json")) as f:
        windows = json.load(f)["meta"]["contamination"]
except (OSError, KeyError, ValueError):
    sys.exit("publish: %s has no contamination figures (a run made before the quiet-machine guard); "
             "re-run it" % res)
allw = [(sec, c) for sec, cs in windows.items() for c in cs if c]
over = [(sec, c) for sec, c in allw if quiet.contaminated(c)]
if not allw:
    sys.exit("publish: %s measured no window; nothing to publish" % res)
if over:
    lines = ["  %s: %s (%s)" % (sec, "; ".join(quiet.contaminated(c)), quiet.describe(c)) for sec, c in over[:5]]
    sys.exit("publish: refused: %s is contaminated: %d of %d measurement windows above the threshold "
             "(other processes > %.0f %% of a CPU or steal > %.0f %%):\n%s%s" % (
                 res, len(over), len(allw), quiet.THRESHOLDS["other_cpu_pct"], quiet.THRESHOLDS["steal_pct"],
                 "\n".join(lines), "\n  ..." if len(over) > 5 else ""))
if check:
    w = quiet.worst([c for _, c in allw])
    print("publish: %s may be published: %d windows, worst %s" % (res, len(allw), quiet.describe(w)))
    sys.exit(0)

table = open(os.path.join(res, "table.md")).read()
# the notebook entry: the whole table.md, named by the run's date (its time too when that date has one)
day = meta.get("date", "")[:10] or os.path.basename(os.path.normpath(res))[:10]
lab = os.path.join(docs, "lab")
name = "%s-lab-run.md" % day
first = table.split("\n", 1)[0]
if os.path.exists(os.path.join(lab, name)) and first not in open(os.path.join(lab, name)).read():
    name = "%s-%s-lab-run.md" % (day, meta.get("date", "")[11:16].replace(":", ""))
lab_index()

try:
    data = rundata.parse(table, meta.get("cpu_features", features))
except ValueError as e:
    sys.exit("publish: %s/table.md: %s" % (res, e))
data["notebook"] = name
data["results_dir"] = os.path.basename(os.path.normpath(res))
folder = os.path.join(rundata.runs_dir(docs), data["id"])
os.makedirs(folder, exist_ok=True)
links, data["charts"] = [], []
for c in ("rps", "plaintext", "p95", "boot", "memory"):
    src = os.path.join(res, c + ".png")
    if os.path.exists(src):
        shutil.copyfile(src, os.path.join(folder, c + ".png"))
        data["charts"].append(c)
        links.append("![%s](runs/%s/%s.png)" % (c, data["id"], c))
if os.path.exists(os.path.join(res, "report.html")):
    shutil.copyfile(os.path.join(res, "report.html"), os.path.join(folder, "report.html"))
    links.append("\nThe whole report, every chart: [report.html](runs/%s/report.html)." % data["id"])
# every round as measured (the tables give medians over rounds), and the JVMs' flight-recorder summary
kept = {f: f for f in ("runs.csv", "startup.csv", "openloop.csv", "siege.csv")}
kept["jfr/summary.json"] = "jfr-summary.json"
kept = {f: n for f, n in kept.items() if os.path.exists(os.path.join(res, f))}
for f, n in kept.items():
    shutil.copyfile(os.path.join(res, f), os.path.join(folder, n))
if kept:
    links.append("\nEvery round as measured: %s." % ", ".join("[%s](runs/%s/%s)" % (n, data["id"], n)
                                                               for n in kept.values()))
rundata.write(docs, data)
table = re.sub(r"^Charts: .*$", "", table, flags=re.M).rstrip() + "\n"
with open(os.path.join(lab, name), "w") as f:  # the entry's charts are its own run's folder's
    f.write(table + "\nPublished on the [Results page](../benchmarks.md) from `%s`; its data: "
            "[runs/%s/run.json](runs/%s/run.json).\n\n%s\n" % (data["results_dir"], data["id"], data["id"], "\n".join(links)))
add_to_index("- [%s: lab run, published](%s)" % (meta.get("date", day), name), name)

regenerate()
print("published %s into %s and %s" % (res, os.path.join(lab, name), folder))
