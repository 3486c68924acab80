#!/usr/bin/python3
"""tests/docs/publish_test.py - one source for the figures: docs/publish/publish.py, rundata.py and
figures.py on a copy of the docs (meson test 'docs-publish').

A made-up lab run (a table.md as the lab writes one, every window quiet, one chart) is published
into a copy of README.md and docs/; what publish keeps and rewrites there, --regenerate,
--reconstruct and --redraw, and what it refuses are checked, each check's line saying what.
Standard library only; no measurement.
"""
import json
import os
import re
import shutil
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from docslib import PUBLISH, ROOT, Docs, block, load, read, run, write  # noqa: E402  (and primedlab's path)
from primedlab import blocks, figures, rundata  # noqa: E402
from primedlab.tap import Tap  # noqa: E402

RUN = "2099-01-02-0304"  # the made-up run's id, from its date
QUIET = {"other_cpu_pct": 0.0, "steal_pct": 0.0, "kthread_pct": 0.0, "other_cpu_s": 0.0}


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


def main():
    t = Tap(max_detail=20)
    features_check(t)
    classes_check(t)
    with tempfile.TemporaryDirectory(prefix="primed-publish-test.") as tmp:
        site = Docs(tmp)
        lab = os.path.join(site.docs, "lab")
        before = rundata.latest(site.docs)
        old_entry = read(os.path.join(lab, before["notebook"]))
        res = os.path.join(tmp, "lab-2099")  # a results folder as the lab leaves one, every window quiet
        os.makedirs(res)
        shutil.copy(os.path.join(ROOT, "docs", "lab", "runs", before["id"], "rps.png"), res)
        for name, text in (("table.md", table_md()),
                           ("meta.txt", "date=2099-01-02 03:04 UTC\nquick=false\ncpu_features=AVX2\n"),
                           ("raw.json", json.dumps({"meta": {"contamination": {"wrk": [QUIET]}}})),
                           ("runs.csv", "target,path,conns,round,rps\ndefault/inline,/example,50,1,540\n")):
            write(os.path.join(res, name), text)

        p = site.publish(res)
        t.ok(p.returncode == 0, "publish accepts a quiet run", p.stdout + p.stderr)
        folder = os.path.join(lab, "runs", RUN)
        data = load(os.path.join(folder, "run.json"))
        rows = {r["TYPE"]: r for r in data.get("summary", [])}
        t.ok(data.get("id") == RUN and data.get("features") == "AVX2"
             and rows.get("lto-static/steal", {}).get("BOOT UP", "").startswith("7.7 ms"),
             "the run's data is kept in docs/lab/runs/%s/run.json" % RUN, json.dumps(data)[:500])
        t.ok(os.path.exists(os.path.join(folder, "rps.png")), "its chart is kept beside its data")
        t.ok(os.path.exists(os.path.join(folder, "runs.csv")), "every round as measured (runs.csv) is kept beside it")
        entry = data.get("notebook", "?")
        etext = read(os.path.join(lab, entry))
        t.ok("](runs/%s/rps.png)" % RUN in etext and "](runs/%s/runs.csv)" % RUN in etext,
             "the notebook entry links its own run's chart and rounds", etext[-400:])
        t.ok("(%s)" % entry in read(os.path.join(lab, "README.md")), "docs/lab/README.md lists the entry")
        t.ok(read(os.path.join(lab, before["notebook"])) == old_entry,
             "the older run's notebook entry, and the charts it links, are untouched")

        stale, shown = [], False
        for page in ["README.md"] + ["docs/" + f for f in sorted(os.listdir(site.docs)) if f.endswith(".md")]:
            for b in blocks.find(read(os.path.join(site.tree, page))):
                if "/" in b["run"] or b["name"] in figures.SCALING_BLOCKS.get(page, {}):
                    continue  # another producer's block, or the scaling sweep's: not the lab run's
                if b["run"] != RUN:
                    stale.append("%s: %s from %s" % (page, b["name"], b["run"]))
                shown |= "7.7 ms" in b["body"]
        t.ok(not stale, "every block publish writes names the new run", "\n".join(stale))
        t.ok(shown, "the blocks show the new run's figures (the static build's 7.7 ms start-up)")
        answer = block(site.tree, "docs/benchmarks.md", "answer")["body"]
        scalar = rows.get("primed-scalar", {}).get("RPS", "?").split(" ")[0]
        head = next((para for para in answer.split("\n\n") if para.startswith("**Per core")), "")
        first = next((x for x in ("default/inline", "default/steal") if x in rows), "?")
        t.ok("On this run's %s (with AVX2)" % data.get("cpu") in head and "`%s` build" % first in head
             and "IFMA runs, %s req/s)" % scalar in head and "eight-lane engine off" in answer,
             "the Results headline states the run's CPU and both engine rows (primed-scalar's %s req/s)" % scalar,
             head or answer[:900])
        c = site.check()
        t.ok("not the latest published run" not in c and "is not what publish writes" not in c,
             "tests/docs/check finds every block current", c)
        site.regenerates(t, "README.md", "choose", "7.7 ms", "1.0 ms", data="data", where="inside a block")

        readme = os.path.join(site.tree, "README.md")
        choose = r"<!-- generated choose from \S+ -->\n(.*\n)*?<!-- end generated -->\n"
        write(readme, re.sub(choose, "", read(readme)))
        p = site.publish("--regenerate")
        t.ok(p.returncode == 1 and "no block 'choose'" in p.stderr, "publish refuses a page that lacks one of its blocks",
             p.stdout + p.stderr)

        if shutil.which("gnuplot"):
            kept = os.path.join(lab, "runs", before["id"])
            charts = [f for f in os.listdir(kept) if f.endswith(".png")]
            for f in charts:
                os.remove(os.path.join(kept, f))
            p = site.publish("--reconstruct", os.path.join(lab, before["notebook"]), "--redraw")
            back = load(os.path.join(kept, "run.json"))
            t.ok(p.returncode == 0 and back["summary"] == before["summary"]
                 and sorted(back["charts"]) == ["boot", "memory", "p95", "plaintext", "rps"]
                 and all(os.path.exists(os.path.join(kept, f)) for f in charts),
                 "--reconstruct reads a notebook entry back to the same data and --redraw draws its five charts",
                 p.stdout + p.stderr)
        else:
            t.skip("--reconstruct --redraw", "gnuplot is not installed")

        loud = dict(QUIET, other_cpu_pct=40.0, other_cpu_s=4.0)
        write(os.path.join(res, "raw.json"), json.dumps({"meta": {"contamination": {"wrk": [loud]}}}))
        p = site.publish(res)
        t.ok(p.returncode == 1 and "contaminated" in p.stderr, "publish refuses a run over the threshold", p.stderr)
        helped, nodir = run(PUBLISH, "--help"), site.publish(os.path.join(tmp, "no-such-run"))
        t.ok(helped.returncode == 1 and helped.stderr.startswith("docs/publish/publish.py [--check]")
             and nodir.returncode == 1 and "is not a lab run's results folder" in nodir.stderr
             and "Traceback" not in helped.stderr + nodir.stderr,
             "--help prints the usage; a folder that is no run is refused in a line, no traceback",
             helped.stderr[-300:] + nodir.stderr[-300:])
    return t.finish()


if __name__ == "__main__":
    sys.exit(main())
