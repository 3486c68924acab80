"""docs/publish/report_html.py - report.html: one lab run as a page a person reads at a glance.

Owns: the page (report.html in the results dir): the run's context (machine, commit,
command, pinning, the contamination verdict), the summary table, every chart of charts.py
inlined as SVG, and, when the dir holds benchmarks/scaling.py's data, a Scaling section (its
tables, loader-bound rows drawn as the limit row, and its speedup charts). Self-contained: no
script, no font, no image fetched at view time, so it opens from disk and from a CI artifact
alike. A chart gnuplot could not draw is kept as
an empty <svg> with its error beside it (tests/bench/report-browser fails on it). Never
measures; reads only the results dir. Docs: docs/report.md.
"""

import csv
import html
import os
import re
import sys

import pathlib, sys  # noqa: E401  the scripts' one package: benchmarks/lib/primedlab, found from any folder
sys.path.insert(0, str(next(p for p in pathlib.Path(__file__).resolve().parents if (p / "benchmarks/lib/primedlab").is_dir()) / "benchmarks/lib"))
from primedlab import charts  # noqa: E402

# summary.csv's columns shown, as in table.md
COLS = ["TYPE", "BUILD TIME", "ARTIFACT SIZE", "BOOT UP", "RPS", "RESPONSE TIME p95", "SATURATION POINT", "RAM",
        "RAM idle", "RAM @conns", "CPU", "THREADS", "% of ceiling", "SERVER FAILURES", "CLIENT TIMEOUTS",
        "AVAILABILITY"]
CSS = """
body { font: 15px/1.45 "DejaVu Sans", sans-serif; margin: 1.5em auto; max-width: 1180px; color: #111; padding: 0 1em; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 1.6em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; font-size: 13px; display: block; overflow-x: auto; }
th, td { border: 1px solid #ccc; padding: 3px 6px; text-align: right; white-space: nowrap; }
th:first-child, td:first-child { text-align: left; }
tr.limit td { font-style: italic; background: #f6f6f6; }
.warn { background: #fff3cd; border: 1px solid #e0c060; padding: 0.5em 0.8em; }
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(560px, 1fr)); gap: 1em; }
figure.chart { margin: 0; border: 1px solid #ddd; padding: 0.4em; }
figure.chart[data-role="contamination"] { grid-column: 1 / -1; }
figure.chart svg { width: 100%; height: auto; display: block; }
figcaption { font-size: 13px; color: #333; }
p.error { color: #a00; }
"""


def esc(s):
    return html.escape(str(s), quote=True)


def inline_svg(svg, n):
    """gnuplot's SVG document as an element of the page: its XML prologue dropped, its ids
    (gnuplot names every chart's the same) made unique per chart."""
    svg = svg[svg.index("<svg"):]
    svg = re.sub(r"""\bid=(['"])""", r"id=\1c%d_" % n, svg)
    return re.sub(r"""href=(['"])#""", r"href=\1#c%d_" % n, svg)


def figure(n, role, title, script):
    try:
        body = inline_svg(charts.draw(script, "svg"), n)
        err = ""
    except (RuntimeError, ValueError, OSError) as e:
        body = '<svg xmlns="http://www.w3.org/2000/svg" class="failed"></svg>'
        err = '<p class="error">chart not drawn: %s</p>' % esc(e)
    return '<figure class="chart" data-role="%s" id="chart-%d"><figcaption>%s</figcaption>\n%s\n%s</figure>' % (
        esc(role), n, esc(title), body, err)


def context(run):
    m = run.meta
    out = ["<p>Machine: %s; kernel %s; commit %s.<br>Command: <code>%s</code><br>Pinning: %s.<br>"
           "The engine alone (prime_bench on the server's cores, no server; drawn as a bar beside the "
           "targets): %s.</p>" % (esc(m.get("machine", "?")), esc(m.get("kernel", "?")),
                                        esc(m.get("commit", "?")), esc(m.get("command", "?")),
                                        esc(m.get("pinning", "?")), esc(m.get("ceiling", "n/a")))]
    if m.get("quick") == "true":
        out.append('<p class="warn">Quick smoke run (--quick): these figures are not to be quoted.</p>')
    over = int(m.get("contamination_over", "0") or 0)
    verdict = ("%s of %s measurement windows above the quiet-machine threshold (%s): docs/publish/publish.py "
               "refuses this run." if over else "%s of %s measurement windows above the threshold (%s).") % (
        over, m.get("contamination_windows", "?"), m.get("contamination_threshold", "?"))
    out.append('<p class="%s">Contamination: %s Worst window: other processes %s %% of a CPU, steal %s %%.</p>' % (
        "warn" if over else "ok", esc(verdict), esc(m.get("contamination_worst_other_cpu_pct", "?")),
        esc(m.get("contamination_worst_steal_pct", "?"))))
    return out


def table(run, limit_row=None):
    conns = next((s.get("rss_conns") for s in run.summary if s.get("rss_conns")), "N")
    hdr = [("RAM @%s conns" % conns) if c == "RAM @conns" else c for c in COLS]
    out = ['<table class="summary"><thead><tr>%s</tr></thead><tbody>' % "".join("<th>%s</th>" % esc(h) for h in hdr)]
    for s in run.summary:
        cells = [s.get(c, "") for c in COLS]
        if s.get("status") not in ("ok", None, ""):
            cells[4] = "failed: " + s["status"]
        out.append('<tr class="target" data-target="%s">%s</tr>' % (
            esc(s["TYPE"]), "".join("<td>%s</td>" % esc(c) for c in cells)))
    if limit_row:
        out.append('<tr class="limit">%s</tr>' % "".join("<td>%s</td>" % esc(limit_row.get(c, "")) for c in COLS))
    out.append("</tbody></table>")
    return out


def scaling_section(sc, n):
    """benchmarks/scaling.py's tables (loader-bound rows as the limit row is drawn) and its speedup
    charts; n numbers the charts. Returns (lines, charts drawn)."""
    m = sc.get("meta", {})
    out = ["<h2>Scaling</h2>", "<p>benchmarks/scaling.py on %s, %s; <code>%s</code>; %s.</p>" % (
        esc(m.get("host", "?")), esc(m.get("date", "?")), esc(m.get("command", "?")), esc(m.get("version", "?")))]
    for t in sc.get("tables", []):
        out.append("<h3>%s</h3>" % esc(t["title"]))
        out.append('<table class="scaling"><thead><tr>%s</tr></thead><tbody>' % "".join(
            "<th>%s</th>" % esc(h) for h in t["header"]))
        for r in t["rows"]:
            out.append('<tr%s>%s</tr>' % (' class="limit"' if "loader-bound" in str(r[-1]) else "",
                                          "".join("<td>%s</td>" % esc(c) for c in r)))
        out.append("</tbody></table><p>%s</p>" % esc(t.get("note", "")))
    out.append('<div class="charts">')
    for path in ("/example", "/healthz"):
        chart = charts.speedup(sc, path, "svg")
        if chart:
            n += 1
            out.append(figure(n, chart[0], chart[1], chart[2]))
    out.append("</div>")
    return out, n


def page(outdir):
    """report.html's text for the results dir outdir: a lab run, benchmarks/scaling.py's data, or both."""
    run = charts.load(outdir)
    limit = None
    if os.path.exists(os.path.join(outdir, "summary.csv")):
        with open(os.path.join(outdir, "summary.csv"), newline="") as f:
            limit = next((s for s in csv.DictReader(f) if s.get("status") == "limit"), None)
    if not run.meta and run.scaling:        # benchmarks/scaling.py's folder alone
        title = "primed scaling sweep: %s" % run.scaling.get("meta", {}).get("date", "?")
        out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
               '<meta name="viewport" content="width=device-width, initial-scale=1">',
               "<title>%s</title><style>%s</style></head><body>" % (esc(title), CSS), "<h1>%s</h1>" % esc(title)]
        out += scaling_section(run.scaling, 0)[0]
        out.append("<p>Written by docs/publish/report_html.py from this directory's scaling.json; the charts "
                   "by gnuplot (see docs/report.md).</p></body></html>")
        return "\n".join(out) + "\n"
    title = "primed comparison lab: %s" % run.meta.get("date", "?")
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           "<title>%s</title><style>%s</style></head><body>" % (esc(title), CSS), "<h1>%s</h1>" % esc(title)]
    out += context(run)
    out.append("<h2>Summary</h2>")
    out += table(run, limit)
    out.append("<p>RPS: best /example requests/s over the concurrencies (@connections). Plaintext peers "
               "(nginx's fixed body) answer /example without a prime: their bars are on a chart of their own, "
               "with every target's /healthz. Colours: one per target, the same in every chart.</p>")
    sections = {"rps": "Throughput", "latency": "Latency", "boot": "Start-up", "ram": "Memory",
                "persec": "Every wrk run, second by second", "contamination": "Contamination"}
    seen, n = None, 0
    for role, ctitle, script in charts.all_charts(run, "svg"):
        if role != seen:
            if seen is not None:
                out.append("</div>")
            out.append("<h2>%s</h2>" % esc(sections.get(role, role)))
            if role == "persec":
                out.append("<p>wrk (closed loop): requests/s from the bytes wrk read each second (/proc/PID/io) "
                           "over the bytes of one answer; mean latency = connections ÷ requests/s (a closed loop "
                           "keeps every connection busy). wrk reports no latency per request, so its runs have no "
                           "per-second p99 (each run's p99 is in the latency chart and the table). Open loop "
                           "(benchmarks/openloop, which times every request): answers and their p99 latency, from "
                           "each request's scheduled start, per second.</p>")
            out.append('<div class="charts">')
            seen = role
        n += 1
        out.append(figure(n, role, ctitle, script))
    if seen is not None:
        out.append("</div>")
    if run.scaling:
        out += scaling_section(run.scaling, n)[0]
    out.append("<p>Written by docs/publish/report_html.py from this directory's CSV and raw.json; "
               "the charts by gnuplot (see docs/report.md).</p></body></html>")
    return "\n".join(out) + "\n"


def write(outdir):
    """Writes outdir/report.html; returns its path."""
    path = os.path.join(outdir, "report.html")
    text = page(outdir)
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)
    return path


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: report_html.py RESULTS_DIR")
    print(write(sys.argv[1]))
