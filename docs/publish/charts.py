"""docs/publish/charts.py - the lab's charts, drawn by gnuplot from one results directory.

Owns: reading a results dir (summary.csv, results.csv, startup.csv, raw.json, meta.txt, and
benchmarks/scaling.py's scaling.json or raw.json's "scaling") into one Run; one function per
chart, each returning a gnuplot script whose output is SVG (inlined by report_html.py) or PNG
(the charts benchmarks/plot.py writes and publish copies to docs/, and benchmarks/scaling.py's
speedup charts).
Rules every chart keeps: a target has one colour in every chart and no two targets share one
(up to len(PALETTE) targets); every axis says its unit; /example (one prime per request) and
plaintext answers (nginx's fixed body, every target's /healthz) never share an axis; bars on
linear axes from zero, so a bar's length is its value, with the value written on it; latency,
whose values span four orders of magnitude, on a log axis with connections on x, so no point
mixes two loads; no reference line that bars cross: primed's engine alone on one core is a bar
of its own. Never measures or judges anything. Needs gnuplot (Debian gnuplot-nox).
"""

import csv
import json
import os
import re
import subprocess
from dataclasses import dataclass, field

# Okabe-Ito's colour-blind safe eight (yellow left out: unreadable on white), then ten more far
# from them and from each other (Tol's muted set and a few darker tones), then eight light ones
# (ColorBrewer's paired tones and two darker accents): a full lab (seven builds, five engine rows,
# three images, eight Java rows, nginx, h2o: 25) gets a colour each; a 27th target gets one
# again, with a dash pattern of its own.
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000",
           "#8C564B", "#7F7F7F", "#BCBD22", "#17BECF", "#9467BD", "#332288", "#882255",
           "#44AA99", "#999933", "#AA4499", "#117733",
           "#A6761D", "#E7298A", "#66A61E", "#FB9A99", "#CAB2D6", "#FDBF6F", "#B2DF8A", "#A6CEE3"]
CEILING_COLOUR = "#B00020"
FONT = "DejaVu Sans,11"


@dataclass
class Run:
    """One results directory, as the charts need it."""
    meta: dict
    summary: list                      # summary.csv rows of targets (the limit row apart)
    detail: list                       # results.csv rows
    runs: list                         # raw.json's every wrk run
    open_runs: list                    # raw.json's every open-loop run
    contamination: dict                # raw.json's windows by section
    ceiling: float = None
    colours: dict = field(default_factory=dict)
    scaling: dict = None               # benchmarks/scaling.py's data (raw.json's or scaling.json), or None

    def targets(self):
        return [s["TYPE"] for s in self.summary]

    def plaintext(self, name):
        """True for a peer that answers /example without a prime (nginx's fixed body)."""
        s = next((s for s in self.summary if s["TYPE"] == name), {})
        if s.get("does_prime") in ("True", "False"):
            return s["does_prime"] == "False"
        return s.get("kind") == "nginx" or name.startswith("nginx")


def num(x):
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def load(outdir):
    """A Run from a results dir; raw.json is optional (an older run has no per-second figures)."""
    def rows(name):
        p = os.path.join(outdir, name)
        if not os.path.exists(p):
            return []
        with open(p, newline="") as f:
            return list(csv.DictReader(f))
    meta = {}
    if os.path.exists(os.path.join(outdir, "meta.txt")):    # absent where benchmarks/scaling.py ran alone
        with open(os.path.join(outdir, "meta.txt")) as f:
            for line in f:
                k, _, v = line.rstrip("\n").partition("=")
                meta[k] = v
    summary = rows("summary.csv")
    limit = [s for s in summary if s.get("status") == "limit"]
    raw = {}
    if os.path.exists(os.path.join(outdir, "raw.json")):
        with open(os.path.join(outdir, "raw.json")) as f:
            raw = json.load(f)
    r = Run(meta=meta, summary=[s for s in summary if s.get("status") != "limit"], detail=rows("results.csv"),
            runs=[x for x in raw.get("runs", []) if "error" not in x],
            open_runs=[x for x in raw.get("open_loop", []) if "error" not in x],
            contamination=raw.get("meta", {}).get("contamination", {}))
    m = re.match(r"([0-9.]+) req/s", meta.get("ceiling", ""))
    r.ceiling = float(m.group(1)) if m else (num(limit[0]["RPS"]) if limit else None)
    r.colours = {t: PALETTE[i % len(PALETTE)] for i, t in enumerate(r.targets())}
    r.scaling = raw.get("scaling")
    if r.scaling is None and os.path.exists(os.path.join(outdir, "scaling.json")):
        with open(os.path.join(outdir, "scaling.json")) as f:
            r.scaling = json.load(f)
    return r


# ----------------------------------------------------------------------------- gnuplot

def q(s):
    """A gnuplot double-quoted string's inside."""
    return str(s).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def head(title, terminal, size=(640, 380)):
    """The settings every chart shares. SVG: sized to its place in the page (report_html's
    figure carries the title); PNG: larger, titled, for a docs page."""
    if terminal == "svg":
        gp = ['set terminal svg size %d,%d dynamic noenhanced font "%s" background "#ffffff"' % (size + (FONT,))]
    else:
        gp = ['set terminal pngcairo size %d,%d noenhanced font "%s"' % (
            int(size[0] * 1.5), int(size[1] * 1.5), FONT), 'set title "%s"' % q(title)]
    return gp + ["set grid ytics lc rgb '#dddddd'", "set border 3", "set tics nomirror",
                 "set key below noautotitle", "set yrange [0:*]"]


def datablock(name, rows):
    out = ["$%s << EOD" % name]
    for r in rows:
        out.append(" ".join(('"%s"' % q(c)) if isinstance(c, str) else "NaN" if c is None else
                            ("%d" % c) if isinstance(c, int) else "%.6g" % c for c in r))   # %d: colours exact
    return out + ["EOD"]


def dash(i):
    return 1 + (i // len(PALETTE))


def bars(title, ylabel, items, terminal, hline=None, size=(640, 380)):
    """One bar per (label, value, colour, err_low, err_high); hline = (value, label)."""
    gp = head(title, terminal, size)
    gp += ['set ylabel "%s"' % q(ylabel), "set style fill solid 0.85 border -1", "set boxwidth 0.7",
           "set xtics rotate by -25 scale 0", "set xrange [-0.6:%g]" % (len(items) - 0.4),
           "set offsets 0,0,graph 0.08,0"]
    rows = [(i, lab, v, int(c[1:], 16), lo, hi) for i, (lab, v, c, lo, hi) in enumerate(items)]
    gp += datablock("d", rows)
    plots = ["$d using 1:3:4:xtic(2) with boxes lc rgb variable notitle"]
    if any(lo is not None for _, _, _, lo, _ in items):
        plots.append('$d using 1:3:5:6 with yerrorbars lc rgb "#333333" pt -1 title "p10-p90"')
    plots.append('$d using 1:3:(sprintf($3 >= 100 ? "%.0f" : "%.3g", $3)) with labels offset 0,0.7 notitle')
    if hline and hline[0]:
        plots.append('%g with lines dt 2 lw 2 lc rgb "%s" title "%s"' % (hline[0], CEILING_COLOUR, q(hline[1])))
    return gp + ["plot " + ", ".join(plots)]


def grouped(title, ylabel, cats, series, terminal, size=(640, 380), labels=False):
    """Clustered bars: categories on x, one bar per series (name, colour, [value per cat]);
    labels: each bar's value written above it (turned upright: the bars are narrow)."""
    gp = head(title, terminal, size)
    gp += ['set ylabel "%s"' % q(ylabel), "set style data histograms", "set style histogram clustered gap 1",
           "set style fill solid 0.85 border -1", "set xtics scale 0", "set xrange [-0.6:%g]" % (len(cats) - 0.4)]
    if labels:
        gp.append("set offsets 0,0,graph 0.15,0")
    gp += datablock("d", [[c] + [s[2][i] for s in series] for i, c in enumerate(cats)])
    plots = ['$d using %d%s lc rgb "%s" fs solid 0.85 title "%s"' % (
        j + 2, ":xtic(1)" if j == 0 else "", colour, q(name)) for j, (name, colour, _) in enumerate(series)]
    n = len(series)
    if labels:  # gnuplot centres bar j of n in a cluster at x + (j - (n-1)/2) / (n + gap)
        plots += ['$d using ($0 + %g):%d:(sprintf("%%.1f", column(%d))) with labels rotate by 90 left '
                  'offset 0,0.3 font ",8" notitle' % ((j - (n - 1) / 2.0) / (n + 1), j + 2, j + 2) for j in range(n)]
    return gp + ["plot " + ", ".join(plots)]


def lines(title, xlabel, ylabel, series, terminal, hlines=(), size=(640, 360), logy=False, xtics=None):
    """One line per (name, colour, dash, [(x, y)]); logy: a log y axis (values over decades);
    xtics: the x values to mark (the loads measured) instead of a regular step."""
    gp = head(title, terminal, size)
    n = max([len(pts) for _, _, _, pts in series] or [1])
    gp += ['set xlabel "%s"' % q(xlabel), 'set ylabel "%s"' % q(ylabel), "set xrange [0:*]",
           ("set xtics (%s)" % ", ".join("%g" % x for x in xtics)) if xtics else
           "set xtics %d" % (1 if n <= 15 else 5 if n <= 75 else 30)]
    if logy:
        gp += ["set logscale y", "set yrange [*:*]", "set mytics 10", "set grid ytics mytics lc rgb '#eeeeee'"]
    plots = []
    for j, (name, colour, dt, pts) in enumerate(series):
        gp += datablock("s%d" % j, pts)
        plots.append('$s%d using 1:2 with linespoints lw 2 pt 7 ps 0.6 dt %d lc rgb "%s" title "%s"' % (
            j, dt, colour, q(name)))
    for v, lab, colour in hlines:
        plots.append('%g with lines dt 2 lw 2 lc rgb "%s" title "%s"' % (v, colour, q(lab)))
    return gp + ["plot " + ", ".join(plots)]


def draw(script, terminal="svg", out=None):
    """Runs gnuplot on script: the SVG text (terminal svg), or writes out (png). Raises
    RuntimeError with gnuplot's message when it fails."""
    if out:
        script = ['set output "%s"' % q(out)] + script
    p = subprocess.run(["gnuplot"], input="\n".join(script) + "\n", stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=60)
    if p.returncode != 0:
        raise RuntimeError("gnuplot failed: %s" % p.stderr.strip()[-400:])
    return p.stdout


# ----------------------------------------------------------------------------- the charts
# Each returns (role, title, script) or None when the run has nothing to draw for it; role
# names the family a test checks: every target of the table is in some chart of each family.

def best(run, name, path):
    rows = [d for d in run.detail if d["target"] == name and d["path"] == path and num(d["rps"]) is not None]
    return max(rows, key=lambda d: num(d["rps"])) if rows else None


def example_rps(run, terminal):
    items = []
    for t in run.targets():
        b = best(run, t, "/example")
        if b and not run.plaintext(t):
            items.append(("%s @%s" % (t, b["conns"]), num(b["rps"]), run.colours[t], None, None))
    if not items:
        return None
    if run.ceiling:  # the engine alone, a bar beside the servers: serving's cost is the gap to it
        items.append(("engine alone (prime_bench)", run.ceiling, CEILING_COLOUR, None, None))
    title = "GET /example (one 1000-bit prime per request): best requests/s per target, one core"
    return "rps", title, bars(title, "requests/s (answers per second)", items, terminal)


def plaintext_rps(run, terminal):
    items = []
    for t in run.targets():
        b = best(run, t, "/example") if run.plaintext(t) else None
        if b:
            items.append(("%s /example (no prime) @%s" % (t, b["conns"]), num(b["rps"]), run.colours[t], None, None))
    for t in run.targets():
        b = best(run, t, "/healthz")
        if b:
            items.append(("%s /healthz @%s" % (t, b["conns"]), num(b["rps"]), run.colours[t], None, None))
    if not items:
        return None
    title = "Plaintext answers (no prime): best requests/s; not comparable with /example"
    return "rps", title, bars(title, "requests/s (answers per second)", items, terminal)


def latency(run, terminal, plaintext=False):
    """p95 of GET /example at each connection count the run measured, a line per target, on a
    log axis: a target's point at N connections is its run at N connections, nothing mixed."""
    series, conns = [], set()
    for i, t in enumerate(run.targets()):
        if run.plaintext(t) != plaintext:
            continue
        pts = sorted((num(d["conns"]), num(d.get("p95_ms"))) for d in run.detail
                     if d["target"] == t and d["path"] == "/example" and num(d.get("p95_ms")))
        if pts:
            series.append((t, run.colours[t], dash(i), pts))
            conns.update(c for c, _ in pts)
    if not series:
        return None
    what = "plaintext peers' GET /example (no prime)" if plaintext else "GET /example"
    title = "%s: p95 latency at each number of connections (log scale)" % what
    return "latency", title, lines(title, "connections (closed loop)", "p95 latency (ms, log scale)", series,
                                   terminal, logy=True, xtics=sorted(conns))


def boot(run, terminal):
    items = []
    for s in run.summary:
        m = num(s.get("boot_ms_median"))
        if m is not None:
            items.append((s["TYPE"], m, run.colours[s["TYPE"]], num(s.get("boot_ms_p10")), num(s.get("boot_ms_p90"))))
    if not items:
        return None
    title = "Start-up: exec to the first /healthz 200, median with p10-p90"
    return "boot", title, bars(title, "start-up time (ms)", items, terminal)


def memory(run, terminal):
    conns = next((s.get("rss_conns") for s in run.summary if s.get("rss_conns")), "")
    cats = ["idle", "%s connections" % conns, "peak (VmHWM)"]
    keys = ["idle_rss_kb", "conns_rss_kb", "peak_rss_kb"]
    series = []
    for s in run.summary:
        vals = [num(s.get(k)) / 1024 if num(s.get(k)) else None for k in keys]
        if any(v is not None for v in vals):
            series.append((s["TYPE"], run.colours[s["TYPE"]], vals))
    if not series:
        return None
    title = "Resident memory (RSS of the process group): idle, holding %s connections, peak under load" % conns
    return "ram", title, grouped(title, "resident memory (MiB)", cats, series, terminal, labels=True)


def per_second(run, terminal):
    """Per (path, connections, /example or plaintext): answers/s and the closed loop's mean
    latency, second by second, of every wrk run (a line per target and round)."""
    groups = {}
    for r in run.runs:
        if not r.get("persec_rps") or r.get("target") not in run.colours:
            continue
        plain = r["path"] != "/example" or run.plaintext(r["target"])
        groups.setdefault((r["path"], int(r["conns"]), plain), []).append(r)
    rounds = max([int(r.get("round", 1)) for r in run.runs] or [1])
    out = []
    for (path, conns, plain), rs in sorted(groups.items(), key=lambda kv: (kv[0][2], kv[0][0], kv[0][1])):
        label = "%s%s, %d connections" % (path, " (no prime)" if plain and path == "/example" else "", conns)
        s_rps, s_lat = [], []
        for r in rs:
            t = r["target"]
            name = t + (" round %s" % r["round"] if rounds > 1 else "")
            dt = int(r.get("round", 1)) + run.targets().index(t) // len(PALETTE)
            s_rps.append((name, run.colours[t], dt, [(i + 1, v) for i, v in enumerate(r["persec_rps"])]))
            s_lat.append((name, run.colours[t], dt,
                          [(i + 1, v) for i, v in enumerate(r.get("persec_mean_ms") or [])]))
        t1 = "%s: requests/s, second by second" % label
        t2 = "%s: mean latency (connections / requests/s), second by second" % label
        out.append(("persec", t1, lines(t1, "second of the run (s)", "requests/s", s_rps, terminal)))
        out.append(("persec", t2, lines(t2, "second of the run (s)", "mean latency (ms)", s_lat, terminal)))
    return out + open_per_second(run, terminal)


def open_per_second(run, terminal):
    """Per open-loop load (% of each target's capacity), /example and plaintext apart: the
    answers and their p99, second by second (benchmarks/openloop measures every request)."""
    groups = {}
    for r in run.open_runs:
        if r.get("persec_rps") and r.get("target") in run.colours:
            groups.setdefault((int(r["load_pct"]), run.plaintext(r["target"])), []).append(r)
    out = []
    for (pct, plain), rs in sorted(groups.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        label = "Open loop at %d %% of each target's capacity%s" % (pct, " (plaintext peers)" if plain else "")
        s_rps, s_p99 = [], []
        for r in rs:
            t = r["target"]
            name = "%s (%.0f req/s due)" % (t, r["rate"]) if r.get("rate") else t
            dt = 1 + run.targets().index(t) // len(PALETTE)
            s_rps.append((name, run.colours[t], dt, [(i + 1, v) for i, v in enumerate(r["persec_rps"])]))
            s_p99.append((name, run.colours[t], dt, [(i + 1, v) for i, v in enumerate(r.get("persec_p99_ms") or [])]))
        t1 = "%s: answers/s, second by second" % label
        t2 = "%s: p99 latency from the scheduled start, second by second" % label
        out.append(("persec", t1, lines(t1, "second of the run (s)", "answers/s", s_rps, terminal)))
        out.append(("persec", t2, lines(t2, "second of the run (s)", "p99 latency (ms)", s_p99, terminal)))
    return out


def contamination(run, terminal):
    """Every measurement window's other processes' CPU and steal, with the thresholds."""
    rows = []
    for sec in ("prime", "startup", "load", "open", "siege"):
        for i, c in enumerate(run.contamination.get(sec) or []):
            if not c or "other_cpu_pct" not in c:
                continue
            what = " ".join(str(c[k]) for k in ("target", "path") if c.get(k))
            if c.get("conns"):
                what += " c%s" % c["conns"]
            if c.get("load_pct"):
                what += " %s%%" % c["load_pct"]
            rows.append(("%s %s" % (sec, what or "#%d" % (i + 1)), c["other_cpu_pct"], c.get("steal_pct", 0)))
    if not rows:
        return None
    title = "Contamination of each measurement window (publish refuses a run above a line)"
    gp = head(title, terminal, (1100, 420))
    gp += ['set ylabel "CPU (%)"', "set style data histograms", "set style histogram clustered gap 1",
           "set style fill solid 0.85 border -1", "set xtics rotate by -35 scale 0 font ',9'"]
    gp += datablock("d", rows)
    gp.append('plot $d using 2:xtic(1) lc rgb "#0072B2" title "other processes (% of one CPU)", '
              '$d using 3 lc rgb "#E69F00" title "steal (% of all CPUs)", '
              '5 with lines dt 2 lw 2 lc rgb "#0072B2" title "other processes limit 5 %", '
              '2 with lines dt 3 lw 2 lc rgb "#E69F00" title "steal limit 2 %"')
    return "contamination", title, gp


def speedup(scaling, path, terminal):
    """benchmarks/scaling.py's speedup over N=1 against server CPUs on one path: a line per server
    (loader-bound rows, which have no speedup, left out) and the ideal, speedup = N, dashed.
    None when no row of path has a speedup."""
    rows = [s for s in (scaling or {}).get("summary", []) if s["path"] == path]
    names = []
    for s in rows:
        if s["server"] not in names:
            names.append(s["server"])
    series = []
    for i, name in enumerate(names):
        pts = sorted((s["n"], s["speedup"]) for s in rows if s["server"] == name and s.get("speedup") is not None)
        if pts:
            series.append((name, PALETTE[i % len(PALETTE)], dash(i), pts))
    if not series:
        return None
    ns = sorted({s["n"] for s in rows})
    series.append(("ideal (speedup = N)", "#444444", 2, [(n, n) for n in ns]))
    title = "%s: speedup over one server CPU (req/s at N ÷ req/s at N=1)" % path
    return "scaling", title, lines(title, "server CPUs (N)", "speedup (×)", series, terminal, xtics=ns)


def all_charts(run, terminal="svg"):
    """Every chart of a run in reading order: (role, title, script)."""
    out = [example_rps(run, terminal), plaintext_rps(run, terminal), latency(run, terminal),
           latency(run, terminal, plaintext=True), boot(run, terminal), memory(run, terminal)]
    out += per_second(run, terminal)
    out.append(contamination(run, terminal))
    return [c for c in out if c]


def write_pngs(run, outdir):
    """The charts the docs show, as PNG: rps.png (/example), plaintext.png, p95.png (latency
    percentiles), boot.png and memory.png; returns the names written."""
    wanted = [("rps.png", example_rps(run, "png")), ("plaintext.png", plaintext_rps(run, "png")),
              ("p95.png", latency(run, "png")), ("boot.png", boot(run, "png")), ("memory.png", memory(run, "png"))]
    done = []
    for name, chart in wanted:
        if chart:
            draw(chart[2], "png", os.path.join(outdir, name))
            done.append(name)
    return done
