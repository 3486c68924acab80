#!/usr/bin/python3
"""tests/docs/publish_test.py - one source for the figures: docs/publish/publish.py, rundata.py and
figures.py on a copy of the docs (meson test 'docs-publish').

A made-up lab run (a table.md written as the lab writes one, a raw.json with every window under
the quiet-machine threshold, one chart) is published into a copy of README.md and docs/. Then:
  - its data is kept: docs/lab/runs/<run-id>/run.json with the run's rows, and its chart there;
  - its notebook entry links that folder's chart, not a shared one, and docs/lab/README.md lists it;
  - every generated block on README.md and docs/*.md that the lab run feeds names the new run and
    shows its figures (the scaling block names its sweep: tests/docs/scaling_publish_test.py);
  - tests/docs/check on the copy finds no block from another run;
  - the older run's notebook entry still shows its own charts (history does not change);
  - publish --regenerate from the same data changes nothing; a hand edit in a block is undone;
  - publish refuses a page without one of its blocks, and a run with a window over the threshold;
  - --help prints the usage, a folder that is no lab run gets one line, not a traceback;
  - --reconstruct reads a notebook entry back to the data publish kept, --redraw draws its charts.
Standard library only; no measurement.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
import pathlib, sys  # noqa: E401  the scripts' one package: benchmarks/lib/primedlab, found from any folder
sys.path.insert(0, str(next(p for p in pathlib.Path(__file__).resolve().parents if (p / "benchmarks/lib/primedlab").is_dir()) / "benchmarks/lib"))
from primedlab import blocks  # noqa: E402
from primedlab import figures  # noqa: E402
from primedlab import rundata  # noqa: E402
from primedlab.tap import Tap  # noqa: E402
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, HERE)
import doctree  # noqa: E402  (the docs copy both publish tests work on)

PUBLISH = os.path.join(ROOT, "docs", "publish", "publish.py")
CHECK = os.path.join(HERE, "check")


def table_md():
    """The latest published run's notebook entry, retitled as a later run with other figures and
    without the engine rows of each CPU class: a table.md exactly as the lab writes one."""
    latest = rundata.latest(os.path.join(ROOT, "docs"))
    t = open(os.path.join(ROOT, "docs", "lab", latest["notebook"])).read()
    t = t.split("\nPublished on the [Results page]")[0]
    t = t.replace("# primed comparison lab: %s" % latest["date"], "# primed comparison lab: 2099-01-02 03:04 UTC")
    # the static builds' start-up becomes 7.7 ms: a figure no earlier run has
    t = re.sub(r"^(\| lto-static/(?:inline|steal) \|[^|]*\|[^|]*\|) [0-9.]+ ms", r"\1 7.7 ms", t, flags=re.M)
    # a run without the per-class engine rows (classes_check adds them back)
    return re.sub(r"^\| primed-(ifma|avx512|avx2) \|.*\n", "", t, flags=re.M)


def features_check(t):
    """rundata reads what the CPU has from the primed rows' notes when meta.txt does not say."""
    text = table_md()
    has = rundata.parse(text)["features"]
    # both ways a note says it: "(this CPU has AVX-512 IFMA)" and "(this CPU runs: ifma avx512 ...)"
    lacks = rundata.parse(re.sub(r"\(this CPU runs: [a-z0-9 ]+", "(this CPU runs: avx2 scalar", text.replace(
        "(this CPU has AVX-512 IFMA)", "(this CPU lacks AVX-512 IFMA)")))["features"]
    none = rundata.parse(re.sub(r"\(this CPU (\w+ AVX-512 IFMA|runs: [a-z0-9 ]+)\)", "", text))["features"]
    t.ok((has, lacks, none) == ("AVX-512 IFMA", "no AVX-512 IFMA", ""),
         "a run's CPU features come from its primed rows' notes: has, lacks, not said", repr((has, lacks, none)))


def classes_check(t):
    """With engine rows in the run, the headline gives one row per CPU class, its ratio to the best
    tuned Java stack recomputed here from the table's own RPS cells."""
    text = table_md()
    line = next(x for x in text.splitlines() if x.startswith("| primed-scalar |"))
    rates = {"primed-ifma": 520, "primed-avx512": 301, "primed-avx2": 199, "primed-flint": 70}
    # the headline rows of these engines, at these rates: a run that has them or one that does not
    text = "\n".join(x for x in text.split("\n") if not re.match(r"\| (%s) \|.* @" % "|".join(rates), x)
                     and not x.startswith("Java's prime:"))
    extra = [re.sub(r"^\| primed-scalar \|(.*?\|.*?\|.*?\|) [0-9]+ @", r"| %s |\1 %d @" % (n, v), line)
             for n, v in rates.items()]
    text = text.replace(line, "\n".join(extra + [line]), 1).replace(
        "\nClosed-loop timeout", "\nJava's prime: BigInteger(1000, 3, rnd) alone on one warmed core, CPU ms per prime "
        "(PrimeCost, JDK 21.0.9, this run): median 17.2, min 16.9, max 17.8 over 10 rounds of 200; warm-up 24.0 s, "
        "settled yes.\nClosed-loop timeout", 1)
    data = dict(rundata.parse(text), notebook="x.md")
    rps = {r["TYPE"]: float(r["RPS"].split()[0]) for r in data["summary"] if r["RPS"][:1].isdigit()}
    java = ("tomcat-platform", "tomcat-tuned", "tomcat-virtual", "netty", "tomcat-appcds")
    best = max(rps.get(x, 0) for x in java)
    head = figures.body("docs/benchmarks.md", "answer", data).split("**Per core, per CPU class.**")[-1]
    want = ["`%s`) | %s | %s | %s×" % (n, c, figures.fmt(rps[n], 0), figures.fmt(rps[n] / best))
            for n, _, c in figures.ENGINES if n in rps]
    missing = [w for w in want if w not in head]
    t.ok(len(want) == 4 and not missing, "the headline has a row per CPU class, its ratio from the table",
         "\n".join(missing) + "\n" + head[:1500])
    fl = data["engine"]["flint"]["cpu_mean_us"] / 1000
    want = ["`primed-flint` ÷ `%s` | %s×" % (b, figures.fmt(70 / best)) for b in java if rps.get(b) == best][:1]
    want += ["`primed-scalar` ÷ `primed-flint` | %s×" % figures.fmt(rps["primed-scalar"] / 70),
             "`primed-ifma` ÷ `primed-scalar` | %s×" % figures.fmt(520 / rps["primed-scalar"]),
             "`BigInteger(1000, 3, rnd)` 17.2 ms", "%s× in FLINT's favour" % figures.fmt(17.2 / fl)]
    missing = [w for w in want if w not in head]
    t.ok(len(want) == 5 and not missing, "the factor's steps, each from two rows of the table, and the prime alone",
         "\n".join(missing) + "\n" + head[:2500])


def run(args, **kw):
    return subprocess.run([sys.executable] + args, capture_output=True, text=True, timeout=60, **kw)


def main():
    t = Tap(max_detail=20)
    features_check(t)
    classes_check(t)
    with tempfile.TemporaryDirectory(prefix="primed-publish-test.") as tmp:
        tree, docs = doctree.copy(ROOT, tmp)
        before = rundata.latest(docs)
        old_entry = open(os.path.join(docs, "lab", before["notebook"])).read()

        res = os.path.join(tmp, "lab-2099")
        os.makedirs(res)
        open(os.path.join(res, "table.md"), "w").write(table_md())
        open(os.path.join(res, "meta.txt"), "w").write("date=2099-01-02 03:04 UTC\nquick=false\ncpu_features=AVX2\n")
        quiet = {"other_cpu_pct": 0.0, "steal_pct": 0.0, "kthread_pct": 0.0, "other_cpu_s": 0.0}
        json.dump({"meta": {"contamination": {"wrk": [quiet]}}}, open(os.path.join(res, "raw.json"), "w"))
        shutil.copy(os.path.join(ROOT, "docs", "lab", "runs", before["id"], "rps.png"), os.path.join(res, "rps.png"))
        open(os.path.join(res, "runs.csv"), "w").write("target,path,conns,round,rps\ndefault/inline,/example,50,1,540\n")

        p = run([PUBLISH, "--docs", docs, res])
        t.ok(p.returncode == 0, "publish accepts a quiet run", p.stdout + p.stderr)
        folder = os.path.join(docs, "lab", "runs", "2099-01-02-0304")
        data = json.load(open(os.path.join(folder, "run.json"))) if os.path.exists(os.path.join(folder, "run.json")) else {}
        t.ok(data.get("id") == "2099-01-02-0304" and data.get("features") == "AVX2"
             and any(r["TYPE"] == "lto-static/steal" and r["BOOT UP"].startswith("7.7 ms") for r in data.get("summary", [])),
             "the run's data is kept in docs/lab/runs/2099-01-02-0304/run.json", json.dumps(data)[:500])
        t.ok(os.path.exists(os.path.join(folder, "rps.png")), "its chart is kept beside its data")
        t.ok(os.path.exists(os.path.join(folder, "runs.csv")), "every round as measured (runs.csv) is kept beside it")
        entry = os.path.join(docs, "lab", data.get("notebook", "?"))
        etext = open(entry).read() if os.path.exists(entry) else ""
        t.ok("](runs/2099-01-02-0304/rps.png)" in etext and "](runs/2099-01-02-0304/runs.csv)" in etext,
             "the notebook entry links its own run's chart and rounds", etext[-400:])
        t.ok("(%s)" % os.path.basename(entry) in open(os.path.join(docs, "lab", "README.md")).read(),
             "docs/lab/README.md lists the entry")
        t.ok(open(os.path.join(docs, "lab", before["notebook"])).read() == old_entry,
             "the older run's notebook entry, and the charts it links, are untouched")

        stale, shown = [], False
        for page in ["README.md"] + ["docs/" + f for f in sorted(os.listdir(docs)) if f.endswith(".md")]:
            for b in blocks.find(open(os.path.join(tree, page)).read()):
                if "/" in b["run"] or b["name"] in figures.SCALING_BLOCKS.get(page, {}):
                    continue  # another producer's block, or the scaling sweep's: not the lab run's
                if b["run"] != "2099-01-02-0304":
                    stale.append("%s: %s from %s" % (page, b["name"], b["run"]))
                shown |= "7.7 ms" in b["body"]
        t.ok(not stale, "every block publish writes names the new run", "\n".join(stale))
        t.ok(shown, "the blocks show the new run's figures (the static build's 7.7 ms start-up)")
        res_text = open(os.path.join(tree, "docs", "benchmarks.md")).read()
        answer = next((b["body"] for b in blocks.find(res_text) if b["name"] == "answer"), "")
        rows = {r["TYPE"]: r for r in data.get("summary", [])}
        scalar = rows.get("primed-scalar", {}).get("RPS", "?").split(" ")[0]
        head = next((para for para in answer.split("\n\n") if para.startswith("**Per core")), "")
        first = next((x for x in ("default/inline", "default/steal") if x in rows), "?")
        t.ok("On this run's %s (with AVX2)" % data.get("cpu") in head and "`%s` build" % first in head
             and "IFMA runs, %s req/s)" % scalar in head and "eight-lane engine off" in answer,
             "the Results headline states the run's CPU and both engine rows (primed-scalar's %s req/s)" % scalar,
             head or answer[:900])
        c = run([CHECK, tree])
        t.ok("not the latest published run" not in c.stdout and "is not what publish writes" not in c.stdout,
             "tests/docs/check finds every block current", c.stdout)

        p = run([PUBLISH, "--docs", docs, "--regenerate"])
        t.ok(p.returncode == 0 and "none changed" in p.stdout, "--regenerate from the same data changes nothing",
             p.stdout + p.stderr)
        readme = os.path.join(tree, "README.md")
        text = open(readme).read()
        b = next(b for b in blocks.find(text) if b["name"] == "choose")
        open(readme, "w").write(blocks.replace(text, "choose", b["run"], b["body"].replace("7.7 ms", "1.0 ms")))
        p = run([PUBLISH, "--docs", docs, "--regenerate"])
        t.ok(p.returncode == 0 and "7.7 ms" in open(readme).read() and "1.0 ms" not in open(readme).read(),
             "--regenerate undoes a hand edit inside a block", p.stdout + p.stderr)

        text = open(readme).read()
        open(readme, "w").write(re.sub(r"<!-- generated choose from \S+ -->\n(.*\n)*?<!-- end generated -->\n", "", text))
        p = run([PUBLISH, "--docs", docs, "--regenerate"])
        t.ok(p.returncode == 1 and "no block 'choose'" in p.stderr, "publish refuses a page that lacks one of its blocks",
             p.stdout + p.stderr)

        entry_now = os.path.join(docs, "lab", before["notebook"])
        if shutil.which("gnuplot"):
            for f in os.listdir(os.path.join(docs, "lab", "runs", before["id"])):
                if f.endswith(".png"):
                    os.remove(os.path.join(docs, "lab", "runs", before["id"], f))
            p = run([PUBLISH, "--docs", docs, "--reconstruct", entry_now, "--redraw"])
            kept = json.load(open(os.path.join(docs, "lab", "runs", before["id"], "run.json")))
            t.ok(p.returncode == 0 and kept["summary"] == before["summary"]
                 and sorted(kept["charts"]) == ["boot", "memory", "p95", "plaintext", "rps"],
                 "--reconstruct reads a notebook entry back to the same data and --redraw draws its five charts",
                 p.stdout + p.stderr)
        else:
            t.skip("--reconstruct --redraw", "gnuplot is not installed")

        loud = dict(quiet, other_cpu_pct=40.0, other_cpu_s=4.0)
        json.dump({"meta": {"contamination": {"wrk": [loud]}}}, open(os.path.join(res, "raw.json"), "w"))
        p = run([PUBLISH, "--docs", docs, res])
        t.ok(p.returncode == 1 and "contaminated" in p.stderr, "publish refuses a run over the threshold", p.stderr)
        helped, nodir = run([PUBLISH, "--help"]), run([PUBLISH, "--docs", docs, os.path.join(tmp, "no-such-run")])
        t.ok(helped.returncode == 1 and helped.stderr.startswith("docs/publish/publish.py [--check]")
             and nodir.returncode == 1 and "is not a lab run's results folder" in nodir.stderr
             and "Traceback" not in helped.stderr + nodir.stderr,
             "--help prints the usage; a folder that is no run is refused in a line, no traceback",
             helped.stderr[-300:] + nodir.stderr[-300:])
    return t.finish()


if __name__ == "__main__":
    sys.exit(main())
