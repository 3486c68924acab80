#!/usr/bin/python3
"""tests/bench/report-browser.py - report.html in a real browser (Debian's headless Chromium).

  report-browser.py [--png FILE] [--html REPORT]    (no --html: the suite below)

Renders a report over the DevTools protocol (a WebSocket to chromium --remote-debugging-port,
through python3-websocket) and fails when the page logs a console error or throws,
when it fetches anything but its own file (no network at view time), when a chart did not
draw (an empty SVG, or a first plot with nothing visible), or when a target of the summary
table is missing from every chart of a family (throughput, latency, start-up, memory, per
second). The suite makes report.html from the fixed results directory tests/bench/report-fixture
(docs/publish/report_html.py, gnuplot), checks it, saves its screenshot (report-browser.png
in the working directory, meson's build dir), checks that the charts read as meant (one colour
per target across every chart and no colour shared, latency on a log axis by connections,
values on the memory bars, no reference line across the throughput bars; the docs' PNGs drawn
from the same scripts), then breaks copies of it on purpose, one way each (an empty chart, a
target dropped from a chart, a console error, an exception, an image from the network, a
target in another's colour) and expects each to fail. TAP on stdout; exit 1 on a failure.
"""
import base64
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import websocket  # python3-websocket: the DevTools protocol's transport

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
import primedtest  # noqa: E402,F401  (puts primedlab on the path)
from primedlab import spawn  # noqa: E402
from primedlab import tap  # noqa: E402

FAMILIES = ["rps", "latency", "boot", "ram", "persec"]
CHECK_JS = r"""
(() => {
  const targets = [...document.querySelectorAll('table.summary tr.target')].map(r => r.dataset.target);
  const figs = [...document.querySelectorAll('figure.chart')].map(f => {
    const svg = f.querySelector('svg');
    const out = {role: f.dataset.role, title: (f.querySelector('figcaption') || {}).textContent || f.id,
                 area: 0, plots: 0, drawn: false, text: ''};
    if (!svg) return out;
    const b = svg.getBoundingClientRect();
    out.area = b.width * b.height;
    out.text = svg.textContent;
    const groups = svg.querySelectorAll('g[id$="gnuplot_plot_1"]');
    out.plots = svg.querySelectorAll('g[id*="gnuplot_plot_"]').length;
    for (const g of groups)
      for (const e of g.querySelectorAll('path,rect,polyline,polygon,circle,line,use')) {
        const bb = e.getBBox();
        if (bb.width > 0 || bb.height > 0) { out.drawn = true; break; }
      }
    return out;
  });
  const refs = [...document.querySelectorAll('[src],link[href]')]
    .map(e => e.getAttribute('src') || e.getAttribute('href'));
  return JSON.stringify({targets, figs, refs});
})()
"""


# ----------------------------------------------------------------------------- the browser

def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    return None


class Browser:
    """One headless Chromium with its own profile dir; .page(url) opens a tab in it."""

    def __init__(self, timeout=60):
        self.profile = tempfile.mkdtemp(prefix="primed-chromium.")
        self.proc = subprocess.Popen(
            [chromium(), "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
             "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
             "--remote-debugging-port=0", "--user-data-dir=" + self.profile, "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
        deadline = time.monotonic() + timeout
        url, seen = None, []
        while time.monotonic() < deadline:
            line = self.proc.stderr.readline().decode("utf-8", "replace")
            if not line and self.proc.poll() is not None:
                break
            seen.append(line)
            m = re.search(r"DevTools listening on (ws://\S+)", line)
            if m:
                url = m.group(1)
                break
        if not url:
            self.close()
            raise RuntimeError("chromium did not start:\n" + "".join(seen[-10:]))
        # stderr keeps being written: drain it, or the browser blocks on a full pipe
        threading.Thread(target=lambda: [None for _ in self.proc.stderr], daemon=True).start()
        self.ws = websocket.create_connection(url, timeout=timeout, suppress_origin=True)
        self.next_id = 0
        self.events = []

    def call(self, method, params=None, session=None, timeout=60):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        self.ws.send(json.dumps(msg))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            m = json.loads(self.ws.recv())
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise RuntimeError("%s: %s" % (method, m["error"]))
                return m.get("result", {})
            self.events.append(m)
        raise RuntimeError("%s: no answer within %d s" % (method, timeout))

    def wait_event(self, session, method, timeout=60):
        for i, e in enumerate(self.events):
            if e.get("sessionId") == session and e.get("method") == method:
                return self.events.pop(i)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            m = json.loads(self.ws.recv())
            if m.get("sessionId") == session and m.get("method") == method:
                return m
            self.events.append(m)
        raise RuntimeError("no %s within %d s" % (method, timeout))

    def render(self, path, png=None, width=1280):
        """Loads file `path` in a new tab: {errors: [...], requests: [...], checks: {...}};
        saves a full-page screenshot to png when given."""
        tid = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        s = self.call("Target.attachToTarget", {"targetId": tid, "flatten": True})["sessionId"]
        self.events = []
        for dom in ("Page", "Runtime", "Log", "Network"):
            self.call(dom + ".enable", session=s)
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": False}, session=s)
        url = "file://" + os.path.abspath(path)
        self.call("Page.navigate", {"url": url}, session=s)
        self.wait_event(s, "Page.loadEventFired")
        checks = json.loads(self.call("Runtime.evaluate", {"expression": CHECK_JS, "returnByValue": True},
                                      session=s)["result"]["value"])
        if png:
            h = self.call("Page.getLayoutMetrics", session=s)["cssContentSize"]["height"]
            self.call("Emulation.setDeviceMetricsOverride",
                      {"width": width, "height": min(int(h) + 1, 16000), "deviceScaleFactor": 1, "mobile": False},
                      session=s)
            shot = self.call("Page.captureScreenshot", {"format": "png"}, session=s)["data"]
            with open(png, "wb") as f:
                f.write(base64.b64decode(shot))
        errors, requests = [], []
        for e in self.events:
            if e.get("sessionId") != s:
                continue
            m, p = e.get("method"), e.get("params", {})
            if m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                errors.append("console.%s: %s" % (p["type"], " ".join(str(a.get("value", a.get("description")))
                                                                       for a in p.get("args", []))))
            elif m == "Runtime.exceptionThrown":
                d = p.get("exceptionDetails", {})
                errors.append("exception: %s" % (d.get("exception", {}).get("description") or d.get("text")))
            elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                errors.append("log: %s %s" % (p["entry"].get("text"), p["entry"].get("url", "")))
            elif m == "Network.requestWillBeSent":
                u = p.get("request", {}).get("url", "")
                if u != url and not u.startswith("data:"):
                    requests.append(u)
        self.call("Target.closeTarget", {"targetId": tid})
        return {"errors": errors, "requests": requests, "checks": checks}

    def close(self):
        spawn.terminate(self.proc, 10)
        shutil.rmtree(self.profile, ignore_errors=True)


def problems(result):
    """What is wrong with a rendered report (empty list: nothing)."""
    out = list(result["errors"])
    out += ["fetched at view time: %s" % u for u in result["requests"]]
    c = result["checks"]
    out += ["refers to %s" % r for r in c["refs"] if r and not r.startswith(("#", "data:"))]
    if not c["targets"]:
        out.append("the summary table names no target")
    if not c["figs"]:
        out.append("no chart")
    for f in c["figs"]:
        if f["area"] <= 0 or not f["drawn"]:
            out.append("chart did not draw: %s (area %.0f px², %d plots)" % (f["title"], f["area"], f["plots"]))
    for fam in FAMILIES:
        figs = [f for f in c["figs"] if f["role"] == fam]
        if not figs:
            out.append("no %s chart" % fam)
            continue
        text = " ".join(f["text"] for f in figs)
        for t in c["targets"]:
            if t not in text:
                out.append("target %s missing from the %s charts" % (t, fam))
    return out


# ----------------------------------------------------------------------------- the suite

def break_chart(src, dst, how):
    """A copy of report src broken one way."""
    doc = open(src).read()
    figs = [m.start() for m in re.finditer(r'<figure class="chart"', doc)]
    if how == "empty-svg":      # the first chart's SVG emptied: it drew nothing
        a = doc.index("<svg", figs[0])
        b = doc.index("</svg>", a) + len("</svg>")
        doc = doc[:a] + '<svg xmlns="http://www.w3.org/2000/svg"></svg>' + doc[b:]
    elif how == "target-dropped":   # the start-up chart loses its last target's bar label
        boot = doc.index('data-role="boot"')
        end = doc.index("</figure>", boot)
        last = re.findall(r'data-target="([^"]+)"', doc)[-1]
        doc = doc[:boot] + doc[boot:end].replace(last, "x" * len(last)) + doc[end:]
    elif how == "console-error":
        doc = doc.replace("</body>", "<script>console.error('chart data missing')</script></body>")
    elif how == "exception":
        doc = doc.replace("</body>", "<script>undefinedChartLibrary.draw()</script></body>")
    elif how == "network":
        doc = doc.replace("</body>", '<img src="http://127.0.0.1:9/chart.png" alt=""></body>')
    with open(dst, "w") as f:
        f.write(doc)


PLOT = re.compile(r'<g id="(?:c\d+_)?gnuplot_plot_\d+"')  # report_html prefixes each chart's ids
LEGEND = re.compile(r"<text>([^<]*)</text>")
RGB = re.compile(r"(?:stroke|fill|color)\s*=\s*'(rgb\([^)]*\))'")


def colours(html, targets):
    """{target: {colour, ...}} over every chart of a report: each plot's legend text (a target's
    name, with ' @N' connections when it has them) and the first colour it draws with."""
    out = {}
    for chunk in PLOT.split(html)[1:]:
        name, rgb = LEGEND.search(chunk), RGB.search(chunk)
        if name and rgb:
            n = re.sub(r" @\d+$", "", name.group(1).strip())
            if n in targets:
                out.setdefault(n, set()).add(re.sub(r"\s+", "", rgb.group(1)))
    return out


def readable(html, targets, run):
    """What makes the charts readable, as a list of faults: a target drawn in two colours, two
    targets in one, latency not on a log axis, memory bars without their values, a reference
    line in the throughput chart (the engine alone is a bar of its own)."""
    from primedlab import charts
    bad = []
    cs = colours(html, targets)
    for n, c in sorted(cs.items()):
        if len(c) > 1:
            bad.append("target %s drawn in %d colours: %s" % (n, len(c), ", ".join(sorted(c))))
    owner = {}
    for n, c in sorted(cs.items()):
        for x in c:
            if x in owner and owner[x] != n:
                bad.append("targets %s and %s share the colour %s" % (owner[x], n, x))
            owner[x] = n
    if len(cs) < len(targets):
        bad.append("no legend colour found for %s" % ", ".join(sorted(set(targets) - set(cs))))
    lat, mem, rps = charts.latency(run, "svg"), charts.memory(run, "svg"), charts.example_rps(run, "svg")
    if not lat or "set logscale y" not in lat[2]:
        bad.append("the latency chart is not on a log axis")
    if not mem or "with labels" not in " ".join(mem[2]):
        bad.append("the memory chart has no value labels")
    if rps and "with lines" in " ".join(rps[2]):
        bad.append("the throughput chart draws a line across its bars")
    return bad


def suite(t, png):
    if not chromium():
        t.ok(False, "chromium installed (profiles/deps @test installs it)")
        return
    if not shutil.which("gnuplot"):
        t.ok(False, "gnuplot installed (profiles/deps @test installs gnuplot-nox)")
        return
    from primedlab import report_html
    work = tempfile.mkdtemp(prefix="primed-report.")
    try:
        res = os.path.join(work, "results")
        shutil.copytree(os.path.join(HERE, "report-fixture"), res)
        report = report_html.write(res)
        b = Browser()
        try:
            r = b.render(report, png)
            bad = problems(r)
            t.ok(not bad, "the fixture's report renders: no console error, every chart drawn, every target "
                          "in every family (%d charts, %d targets)" % (len(r["checks"]["figs"]),
                                                                     len(r["checks"]["targets"])), "\n".join(bad))
            t.ok(os.path.getsize(png) > 20000, "screenshot saved: %s" % png)
            from primedlab import charts
            run = charts.load(res)
            html = open(report).read()
            targets = run.targets()
            bad = readable(html, targets, run)
            t.ok(not bad, "the charts read as meant: one colour per target in every chart (%d targets), latency "
                          "on a log axis by connections, values on the memory bars, no line across bars" % len(targets),
                 "\n".join(bad))
            first = sorted(colours(html, targets).items())
            if len(first) >= 2:  # one target's legend drawn in another's colour: must be caught
                (a_name, _), (_, b_col) = first[0], first[1]
                recoloured = html
                for m in PLOT.finditer(html):
                    end = html.find('<g id="', m.end())
                    chunk = html[m.end():end if end > 0 else len(html)]
                    name, k = LEGEND.search(chunk), RGB.search(chunk)
                    if name and k and re.sub(r" @\d+$", "", name.group(1).strip()) == a_name:
                        at = m.end() + k.start(1)
                        recoloured = html[:at] + next(iter(b_col)) + html[m.end() + k.end(1):]
                        break
                t.ok(bool(readable(recoloured, targets, run)), "a chart with a target in another's colour fails")
            names = charts.write_pngs(run, work)
            t.ok(len(names) == 5 and all(os.path.getsize(os.path.join(work, n)) > 5000 for n in names),
                 "the docs' PNGs are drawn from the same scripts: %s" % ", ".join(names))
            for how in ("empty-svg", "target-dropped", "console-error", "exception", "network"):
                broken = os.path.join(work, "broken-%s.html" % how)
                break_chart(report, broken, how)
                bad = problems(b.render(broken))
                t.ok(bool(bad), "a report broken on purpose (%s) fails" % how, "no problem found")
                if bad:
                    t.note("%s: %s" % (how, bad[0].splitlines()[0]))
        finally:
            b.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    argv = sys.argv[1:]
    png = os.path.abspath("report-browser.png")
    if "--png" in argv:
        png = argv[argv.index("--png") + 1]
    t = tap.Tap(max_detail=30)
    if "--html" in argv:
        b = Browser()
        try:
            bad = problems(b.render(argv[argv.index("--html") + 1], png))
        finally:
            b.close()
        t.ok(not bad, "report renders", "\n".join(bad))
    else:
        suite(t, png)
    return t.finish()


if __name__ == "__main__":
    sys.exit(main())
