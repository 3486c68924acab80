"""docs/publish/scalingrun.py - a published scaling sweep, kept under docs/lab/scaling/<id>/.

owns: the sweep's data as its tables read it (med, servers, by_server_n), judging a benchmarks/scaling.py results folder for publishing (every measured run a quiet
window, no failed run), keeping it (scaling.json, its charts and report.html) under
docs/lab/scaling/<id>/, its notebook entry's text (the command, scaling.md's tables, the
contamination), and naming the latest published sweep (the greatest id there).
never: measures (benchmarks/scaling.py does), writes a page's block (figures.py writes its text,
publish puts it in place), or touches the lab runs under docs/lab/runs/ (rundata.py).

A sweep is published apart from the lab run: it may come from another host (the bundle's run on a
bigger machine), and the Results page's scaling block names it, not the lab run.
"""
import json
import os
import shutil
import statistics

from primedlab import quiet
from primedlab import rundata

KEEP = ("scaling.json", "scaling-example.png", "scaling-healthz.png", "report.html")  # the tables: the notebook entry


def folder(docs):
    return os.path.join(docs, "lab", "scaling")


def load(res):
    """The sweep in results folder res (its scaling.json). ValueError when it is not one."""
    try:
        with open(os.path.join(res, "scaling.json")) as f:
            data = json.load(f)
        data["meta"]["date"], data["summary"], data["config"]["rounds"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ValueError("%s holds no benchmarks/scaling.py scaling.json (%s: %s)" % (res, type(e).__name__, e))
    return data


def med(xs):
    """The median of xs, Nones left out; None when nothing is left."""
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def servers(summary):
    """The sweep's servers (modes and peers) in the order it measured them first."""
    out = []
    for s in summary:
        if s["server"] not in out:
            out.append(s["server"])
    return out


def by_server_n(rows):
    """{(server, N): [rows]} of the rows (overload or lone runs) without an error, in run order."""
    groups = {}
    for r in rows or []:
        if "error" not in r:
            groups.setdefault((r["server"], r["n"]), []).append(r)
    return groups


def measured(data):
    """Every measured run of the sweep: the closed-loop rounds, the open-loop and the lone runs."""
    return list(data.get("runs", [])) + list(data.get("overload") or []) + list(data.get("lone") or [])


def refusal(data):
    """Why the sweep may not be published, or None: a run without its own contamination window
    (made before benchmarks/scaling.py measured one per run), a window over quiet.py's threshold, or
    a run that failed."""
    runs = measured(data)
    if not runs:
        return "it measured nothing"
    failed = [r for r in runs if "error" in r]
    if failed:
        return "%d of its %d runs failed (first: %s)" % (len(failed), len(runs), failed[0]["error"][:200])
    missing = [r for r in runs if not r.get("contamination")]
    if missing:
        return ("%d of its %d runs have no contamination window (a sweep made before benchmarks/scaling.py "
                "measured one per run): re-run it" % (len(missing), len(runs)))
    over = [r for r in runs if quiet.contaminated(r["contamination"])]
    if over:
        c = over[0]["contamination"]
        return ("contaminated: %d of %d runs above the threshold (other processes > %.0f %% of a CPU or "
                "steal > %.0f %%); first: %s" % (len(over), len(runs), quiet.THRESHOLDS["other_cpu_pct"],
                                                  quiet.THRESHOLDS["steal_pct"], quiet.describe(c)))
    return None


def sweep_id(data):
    return rundata.run_id(data["meta"]["date"])


def notebook_name(data):
    return "%s-scaling-run.md" % sweep_id(data)


def keep(docs, res, data):
    """Copies the sweep's files into docs/lab/scaling/<id>/, with id, notebook and results_dir added
    to its scaling.json; returns (the kept data, the folder, the names of the files kept)."""
    out = os.path.join(folder(docs), sweep_id(data))
    os.makedirs(out, exist_ok=True)
    names = ["scaling.json"]
    for name in KEEP[1:]:
        if os.path.exists(os.path.join(res, name)):
            shutil.copyfile(os.path.join(res, name), os.path.join(out, name))
            names.append(name)
    data = dict(data, id=sweep_id(data), notebook=notebook_name(data),
                results_dir=os.path.basename(os.path.normpath(res)))
    with open(os.path.join(out, "scaling.json"), "w") as f:
        json.dump(data, f, indent=1, ensure_ascii=False)
        f.write("\n")
    return data, out, names


def notebook(data, scaling_md, names):
    """The notebook entry: the sweep's command, its own tables (scaling.md), its contamination,
    and links to what is kept (names: the files under docs/lab/scaling/<id>/)."""
    i, m = data["id"], data["meta"]
    charts = ["![%s](scaling/%s/%s)" % (n[:-4], i, n) for n in names if n.endswith(".png")]
    report = (", the report: [report.html](scaling/%s/report.html)" % i) if "report.html" in names else ""
    return ("# Scaling sweep: %s\n\nCommand: `%s`; commit %s.\n\n%s\n\n%s\n\nPublished on the "
            "[Results page](../benchmarks.md#across-cores); its data: [scaling/%s/scaling.json](scaling/%s/scaling.json)"
            "%s.\n%s" % (m["date"], m.get("command", "?"), m.get("commit", "?"), scaling_md.rstrip("\n"),
                          window_line(data), i, i, report, ("\n" + "\n".join(charts) + "\n") if charts else ""))


def window_line(data):
    """The sweep's contamination in one line: each measured run is a window (quiet.Window)."""
    w = quiet.worst([r.get("contamination") for r in measured(data)])
    if not w:
        return "Contamination per run: not measured (a sweep made before benchmarks/scaling.py measured one per run)."
    return "Contamination (worst of its %d runs): %s; %s." % (
        w["runs"], quiet.describe(w), "%d over the threshold" % w["over"] if w["over"] else
        "every run under the threshold")


def published(docs):
    """The ids of the published sweeps, oldest first."""
    return rundata.kept(folder(docs), "scaling.json")


def latest(docs):
    """The latest published sweep's data, or None."""
    return rundata.latest_kept(folder(docs), "scaling.json")


def source(data):
    """What a block from this sweep names as its run: the kept scaling.json, from the repository's root."""
    return "docs/lab/scaling/%s/scaling.json" % data["id"] if data else "none"
