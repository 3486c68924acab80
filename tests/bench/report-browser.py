#!/usr/bin/python3
"""tests/bench/report-browser.py - report.html in a real browser (Debian's headless Chromium).

  report-browser.py [--png FILE] [--html REPORT]    (no --html: the suite below)

Renders a report over the DevTools protocol (python3-websocket) and fails on a console error or an
exception, a fetch of anything but its own file (no network at view time), a chart that drew
nothing, or a target of the summary table missing from every chart of a family. The suite makes
report.html from tests/bench/report-fixture (docs/publish/report_html.py, gnuplot), checks it,
saves its screenshot (report-browser.png in the working directory, meson's build dir), checks that
the charts read as meant (readable(); the docs' PNGs drawn by the same scripts), then breaks copies
of it on purpose, one way each, and expects each to fail. TAP on stdout; exit 1 on a failure.
"""
import argparse
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

sys.dont_write_bytecode = True
import pathlib, sys  # noqa: E401  the scripts' one package: benchmarks/lib/primedlab, found from any folder
sys.path.insert(0, str(next(p for p in pathlib.Path(__file__).resolve().parents if (p / "benchmarks/lib/primedlab").is_dir()) / "benchmarks/lib"))
from primedlab import charts, report_html, spawn, tap  # noqa: E402

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "report-fixture")
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
    out.plots = svg.querySelectorAll('g[id*="gnuplot_plot_"]').length;
    for (const g of svg.querySelectorAll('g[id$="gnuplot_plot_1"]'))
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
# ways to break a copy of a report by adding markup before </body> (break_chart() has two more)
INJECT = {
    "console-error": "<script>console.error('chart data missing')</script>",
    "exception": "<script>undefinedChartLibrary.draw()</script>",
    "network": '<img src="http://127.0.0.1:9/chart.png" alt="">',
}


# ----------------------------------------------------------------------------- the browser

def chromium():
    names = ("chromium", "chromium-browser", "google-chrome")
    return next(filter(None, map(shutil.which, names)), None)


class Browser:
    """One headless Chromium with its own profile dir, closed on leaving a `with`; .render(path)
    loads a file in a tab of it."""

    def __init__(self, timeout=60):
        self.profile = tempfile.mkdtemp(prefix="primed-chromium.")
        self.proc = subprocess.Popen(
            [chromium(), "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
             "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
             "--remote-debugging-port=0", "--user-data-dir=" + self.profile, "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
        deadline = time.monotonic() + timeout
        url, seen = None, []
        while not url and time.monotonic() < deadline:
            line = self.proc.stderr.readline().decode("utf-8", "replace")
            if not line and self.proc.poll() is not None:
                break
            seen.append(line)
            m = re.search(r"DevTools listening on (ws://\S+)", line)
            url = m and m.group(1)
        if not url:
            self.close()
            raise RuntimeError("chromium did not start:\n" + "".join(seen[-10:]))
        # stderr keeps being written: drain it, or the browser blocks on a full pipe
        threading.Thread(target=lambda: [None for _ in self.proc.stderr], daemon=True).start()
        self.ws = websocket.create_connection(url, timeout=timeout, suppress_origin=True)
        self.next_id = 0
        self.events = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def receive(self, want, what, timeout=60):
        """The first message read for which want(message) holds; those before go to self.events."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            m = json.loads(self.ws.recv())
            if want(m):
                return m
            self.events.append(m)
        raise RuntimeError("%s: nothing within %d s" % (what, timeout))

    def call(self, method, params=None, session=None):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        self.ws.send(json.dumps(msg))
        m = self.receive(lambda m: m.get("id") == self.next_id, method)
        if "error" in m:
            raise RuntimeError("%s: %s" % (method, m["error"]))
        return m.get("result", {})

    def wait_event(self, session, method):
        def want(e):
            return e.get("sessionId") == session and e.get("method") == method
        for i, e in enumerate(self.events):
            if want(e):
                return self.events.pop(i)
        return self.receive(want, method)

    def render(self, path, png=None, width=1280):
        """Loads file `path` in a new tab: {errors: [...], requests: [...], checks: {...}};
        saves a full-page screenshot to png when given."""
        tid = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        s = self.call("Target.attachToTarget", {"targetId": tid, "flatten": True})["sessionId"]
        self.events = []
        for dom in ("Page", "Runtime", "Log", "Network"):
            self.call(dom + ".enable", session=s)
        size = {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": False}
        self.call("Emulation.setDeviceMetricsOverride", size, session=s)
        url = "file://" + os.path.abspath(path)
        self.call("Page.navigate", {"url": url}, session=s)
        self.wait_event(s, "Page.loadEventFired")
        checks = json.loads(self.call("Runtime.evaluate", {"expression": CHECK_JS, "returnByValue": True},
                                      session=s)["result"]["value"])
        if png:
            h = self.call("Page.getLayoutMetrics", session=s)["cssContentSize"]["height"]
            self.call("Emulation.setDeviceMetricsOverride", dict(size, height=min(int(h) + 1, 16000)),
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
        out += ["target %s missing from the %s charts" % (t, fam)
                for t in c["targets"] if t not in text]
    return out


# ----------------------------------------------------------------------------- the suite

def break_chart(src, dst, how):
    """A copy of report src broken one way: empty-svg, target-dropped or one of INJECT."""
    with open(src) as f:
        doc = f.read()
    if how == "empty-svg":      # the first chart's SVG emptied: it drew nothing
        a = doc.index("<svg", doc.index('<figure class="chart"'))
        b = doc.index("</svg>", a) + len("</svg>")
        doc = doc[:a] + '<svg xmlns="http://www.w3.org/2000/svg"></svg>' + doc[b:]
    elif how == "target-dropped":   # the start-up chart loses its last target's bar label
        boot = doc.index('data-role="boot"')
        end = doc.index("</figure>", boot)
        last = re.findall(r'data-target="([^"]+)"', doc)[-1]
        doc = doc[:boot] + doc[boot:end].replace(last, "x" * len(last)) + doc[end:]
    else:
        doc = doc.replace("</body>", INJECT[how] + "</body>")
    with open(dst, "w") as f:
        f.write(doc)


PLOT = re.compile(r'<g id="(?:c\d+_)?gnuplot_plot_\d+"')  # report_html prefixes each chart's ids
LEGEND = re.compile(r"<text>([^<]*)</text>")
RGB = re.compile(r"(?:stroke|fill|color)\s*=\s*'(rgb\([^)]*\))'")


def legends(html):
    """(name, colour match) of every plot of a report with a legend: its legend text (a target's
    name, less the ' @N' connections it may have) and the first colour it draws with."""
    starts = list(PLOT.finditer(html))
    for m, end in zip(starts, [n.start() for n in starts[1:]] + [len(html)]):
        name, rgb = LEGEND.search(html, m.end(), end), RGB.search(html, m.end(), end)
        if name and rgb:
            yield re.sub(r" @\d+$", "", name.group(1).strip()), rgb


def colours(html, targets):
    """{target: {colour, ...}} over every chart of a report."""
    out = {}
    for n, rgb in legends(html):
        if n in targets:
            out.setdefault(n, set()).add(re.sub(r"\s+", "", rgb.group(1)))
    return out


def readable(html, targets, run):
    """What makes the charts readable, as a list of faults: a target drawn in two colours, two
    targets in one, latency not on a log axis, memory bars without their values, a reference
    line in the throughput chart (the engine alone is a bar of its own)."""
    bad, owner, cs = [], {}, colours(html, targets)
    for n, c in sorted(cs.items()):
        if len(c) > 1:
            bad.append("target %s drawn in %d colours: %s" % (n, len(c), ", ".join(sorted(c))))
        for x in c:
            if owner.setdefault(x, n) != n:
                bad.append("targets %s and %s share the colour %s" % (owner[x], n, x))
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
    for tool, path in (("chromium", chromium()), ("gnuplot", shutil.which("gnuplot"))):
        if not path:
            t.ok(False, "%s installed (profiles/deps @test installs it)" % tool)
            return
    with tempfile.TemporaryDirectory(prefix="primed-report.") as work, Browser() as b:
        res = os.path.join(work, "results")
        shutil.copytree(FIXTURE, res)
        report = report_html.write(res)
        r = b.render(report, png)
        t.errors("the fixture's report renders: no console error, every chart drawn, every target in "
                 "every family (%d charts, %d targets)"
                 % (len(r["checks"]["figs"]), len(r["checks"]["targets"])), problems(r))
        t.ok(os.path.getsize(png) > 20000, "screenshot saved: %s" % png)
        run = charts.load(res)
        with open(report) as f:
            html = f.read()
        targets = run.targets()
        t.errors("the charts read as meant: one colour per target in every chart (%d targets), latency "
                 "on a log axis by connections, values on the memory bars, no line across bars"
                 % len(targets), readable(html, targets, run))
        first = sorted(colours(html, targets).items())
        if len(first) >= 2:  # one target's legend drawn in another's colour: must be caught
            (a_name, _), (_, b_col) = first[0], first[1]
            k = next(rgb for n, rgb in legends(html) if n == a_name)
            recoloured = html[:k.start(1)] + next(iter(b_col)) + html[k.end(1):]
            t.ok(bool(readable(recoloured, targets, run)), "a chart with a target in another's colour fails")
        names = charts.write_pngs(run, work)
        t.ok(len(names) == 5 and all(os.path.getsize(os.path.join(work, n)) > 5000 for n in names),
             "the docs' PNGs are drawn from the same scripts: %s" % ", ".join(names))
        for how in ["empty-svg", "target-dropped", *INJECT]:
            broken = os.path.join(work, "broken-%s.html" % how)
            break_chart(report, broken, how)
            bad = problems(b.render(broken))
            if t.ok(bool(bad), "a report broken on purpose (%s) fails" % how, "no problem found"):
                t.note("%s: %s" % (how, bad[0].splitlines()[0]))


def main():
    ap = argparse.ArgumentParser(description="report.html in headless Chromium (no --html: the suite)")
    ap.add_argument("--png", default=os.path.abspath("report-browser.png"), help="the screenshot")
    ap.add_argument("--html", help="a report to check alone")
    a = ap.parse_args()
    t = tap.Tap(max_detail=30)
    if a.html:
        with Browser() as b:
            t.errors("report renders", problems(b.render(a.html, a.png)))
    else:
        suite(t, a.png)
    return t.finish()


if __name__ == "__main__":
    sys.exit(main())
