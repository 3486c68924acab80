#!/usr/bin/python3
"""benchmarks/scaling.py - throughput against server CPUs: primed (and nginx, h2o) on 1, 2, 4, ... CPUs.

    benchmarks/scaling.py [--cpus LIST] [--paths example,healthz] [--modes default,inline,split-off]
                       [--conns-example C] [--conns-healthz C] [--warmup S] [--duration S] [--rounds N]
                       [--peers nginx,h2o|none] [--share-loader] [--overload] [--overload-factor F] [--lone] [--bin PATH]
                       [--loader-limit PCT] [--quiet-wait S] [--out DIR]
    benchmarks/scaling.py --from DIR/scaling.json [--loader-limit PCT] [--out DIR]
    benchmarks/scaling.py --bundle DIR [--bin PATH]

What it runs, prints and writes, and how to run it on a bigger host: docs/benchmarking.md, "Scaling
across cores". For each N the server runs pinned to the first N CPUs this process may use (primed
with --threads N; nginx and h2o on /healthz with N workers, N threads) and wrk on all the others, one
thread a CPU; the default Ns are 1, 2, 4, ... up to the CPUs less a quarter kept for the loader, and
that top itself. --share-loader lets N take every CPU, wrk beside the server: such a row compares
modes (its req/s over the first mode's) and has no speedup. A row whose loader used more than
--loader-limit % of its CPUs is loader-bound: its req/s is what the loader could send (printed as a
lower bound), never the server's rate, and it has no speedup or efficiency.

Owns: the CPU layout; one closed-loop measurement per server, N and round (req/s, p50/p99, the
server's CPU per request from /proc/PID/stat, the loader's from its rusage); the summary (medians of
rounds, speedup over the same server's N=1, efficiency); the open-loop (--overload) and lone-request
(--lone) runs; the results (scaling.json, scaling.md, the speedup charts and report.html through
charts.py and report_html.py, and a lab run's raw.json when --out names one); the bundle (--bundle:
what the sweep runs and the libraries it loads but glibc's own, with DIR/run, for any x86-64 Linux
with glibc >= 2.36, coreutils and python3). Never installs or builds anything; kills only the
processes it started (their PIDs are kept).
"""
import argparse
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import psutil

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import pathlib, sys  # noqa: E401  the scripts' one package: benchmarks/lib/primedlab, found from any folder
sys.path.insert(0, str(next(p for p in pathlib.Path(__file__).resolve().parents if (p / "benchmarks/lib/primedlab").is_dir()) / "benchmarks/lib"))
from primedlab import bench, lab, quiet, scalingrun, spawn  # noqa: E402
from primedlab.scalingrun import by_server_n, med  # noqa: E402
import primedlab  # noqa: E402  (its folders, which a bundle copies)

BUNDLE = os.environ.get("SCALING_BUNDLE", "")   # set by a bundle's run: the bundle's folder
PATHS = {"example": "/example", "healthz": "/healthz"}
CONNS = {"example": 32, "healthz": 64}
MODES = {"default": [], "inline": ["--dispatch", "inline"], "split-off": ["--prime-split", "off"]}
PEERS = ("nginx", "h2o")
LOADER_LIMIT = 90.0
# glibc's own libraries: the host has them (glibc >= 2.36), and a copy would not match its ld-linux
GLIBC = re.compile(r"^(libc|ld-linux[-\w]*|libm|libpthread|libdl|librt|linux-vdso|linux-gate)\.so")
LONE_COLUMNS = ["server", "N", "req/s", "mean ms", "p50 ms", "p99 ms", "÷ N=1 (mean)", "errors", "note"]
COLUMNS = ["server", "N", "conns", "req/s", "speedup", "efficiency", "server CPU µs/req", "p50 ms", "p99 ms",
           "loader CPU %", "errors", "note"]
OVERLOAD_COLUMNS = ["server", "N", "rate req/s", "answered %", "p50 ms", "p99 ms (answered)",
                    "oldest served ms", "client timeouts", "unsent", "refused/reset"]

log = bench.logger("scaling")
STARTED = []        # every server this run started and has not stopped (stopped at exit)


def utc(fmt):
    return time.strftime(fmt, time.gmtime())


# ----------------------------------------------------------------------------- servers

def peer_binary(kind):
    """nginx's or h2o's executable (the bundle's, then PATH, then /usr/sbin), or None."""
    for cand in ([os.path.join(BUNDLE, "bin", kind)] if BUNDLE else []) + [shutil.which(kind) or "",
                                                                           "/usr/sbin/" + kind]:
        if cand and os.access(cand, os.X_OK):
            return cand
    return None


def peer_cmd(kind, binary, port, n, prefix):
    """The command of nginx or h2o on 127.0.0.1:port with n workers (threads), its config filled
    from benchmarks/peers' template into prefix (a temp dir), as nginx-run and h2o-run do. Not
    those scripts themselves: they need bash, sed and find and run /usr/sbin/nginx, /usr/bin/h2o,
    none of which a bundle's host has; the templates are the one thing to share."""
    subst = {"@PORT@": str(port), "@WORKERS@": str(n), "@THREADS@": str(n), "@PREFIX@": prefix,
             "@UPSTREAM_PORT@": "0", "@USER@": "user: root" if os.getuid() == 0 else ""}
    text = pathlib.Path(HERE, "peers", kind + ".conf").read_text()
    for k, v in subst.items():
        text = text.replace(k, v)
    conf = os.path.join(prefix, kind + ".conf")
    pathlib.Path(conf).write_text(text)
    if kind == "h2o":   # the two bodies h2o.conf serves as files
        for name, body in (("ok", "OK"), ("hello", "Hello_1")):
            pathlib.Path(prefix, name).write_text(body)
        return [binary, "-c", conf]
    return [binary, "-p", prefix, "-c", conf, "-e", "stderr"]


class Server:
    """One server pinned to cpus with n threads (workers): primed through bench.start_pinned, or
    a peer in a session of its own (its master and workers one process group). .port, .pid,
    cpu_s() (user+system seconds so far, the whole group's for a peer), stop()."""

    def __init__(self, kind, binary, cpus, n, args=()):
        self.primed = None
        if kind == "primed":
            try:
                self.primed = bench.start_pinned(binary, cpus, args, threads=n)
            except spawn.NotReady as e:
                raise RuntimeError("primed did not start: %s" % e) from None
            self.port, self.pid = self.primed.port, self.primed.pid
        else:
            self.port = spawn.free_port()
            self.prefix = tempfile.mkdtemp(prefix="primed-scaling-%s." % kind)
            cmd = bench.taskset(cpus) + peer_cmd(kind, binary, self.port, n, self.prefix)
            try:
                self.group = spawn.Group(cmd, self.port)
            except spawn.NotReady:
                shutil.rmtree(self.prefix, ignore_errors=True)
                raise
            self.pid = self.group.pid
        STARTED.append(self)

    def cpu_s(self):
        return spawn.cpu_s(self.pid) if self.primed else spawn.group_sample(self.pid)[0]

    def stop(self):
        if self in STARTED:
            STARTED.remove(self)
        if self.primed:
            self.primed.stop()
        else:
            self.group.stop()     # the group this run started, no other
            shutil.rmtree(self.prefix, ignore_errors=True)


def stop_all():
    """Stops what this run started and has not stopped (at exit, on SIGTERM, SIGINT, SIGHUP): the
    servers it keeps, then any child of this process still running (a primed a signal caught
    before its ready line, a wrk): our own children only, by PID (or the session it leads)."""
    for s in list(STARTED):
        try:
            s.stop()
        except OSError:
            pass
    kids = psutil.Process().children()
    for child in kids:
        try:
            if os.getpgid(child.pid) == child.pid:
                os.killpg(child.pid, signal.SIGTERM)
            else:
                child.terminate()
        except (ProcessLookupError, psutil.Error):
            pass
    for child in psutil.wait_procs(kids, timeout=5)[1]:     # wait_procs reaps them: they are ours
        try:
            child.kill()
            child.wait()
        except psutil.Error:
            pass


# ----------------------------------------------------------------------------- layout

def parse_list(text, what):
    try:
        xs = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError("%s: a list of whole numbers such as 1,2,4 (got %r)" % (what, text))
    if not xs or min(xs) < 1:
        raise argparse.ArgumentTypeError("%s: numbers of 1 or more (got %r)" % (what, text))
    return sorted(set(xs))


def default_counts(ncpu):
    """1, 2, 4, ... up to ncpu less a quarter (at least one CPU) for the loader, and that top itself."""
    top = max(1, ncpu - max(1, ncpu // 4))
    ns, n = [], 1
    while n <= top:
        ns.append(n)
        n *= 2
    return ns + ([top] if ns[-1] != top else [])


def layout(cpus, counts, share=False):
    """[(N, server CPUs, loader CPUs)] for each N, or raises ValueError naming the N that leaves
    the loader no CPU. share: an N of every CPU puts the loader on all of them, beside the server."""
    for n in counts:
        if n > len(cpus) or (n == len(cpus) and not share):
            raise ValueError("--cpus %d leaves the loader no CPU: this process may use %d CPUs (%s); "
                             "N is at most %d (%d with --share-loader)" % (
                                 n, len(cpus), ",".join(map(str, cpus)), len(cpus) - 1, len(cpus)))
    return [(n, cpus[:n], cpus[n:] or cpus) for n in counts]


# ----------------------------------------------------------------------------- one measurement

def children_cpu_s():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def measure(srv, path, conns, loader, warmup, duration):
    """One wrk run on the loader CPUs (after a warm-up run) against srv: its figures, the
    server's CPU per request, the loader's CPU in % of its CPUs and the run's contamination
    (a quiet.Window around the measured run alone). wrk is the only child
    reaped during the run, so the growth of RUSAGE_CHILDREN is its CPU time."""
    url = "http://127.0.0.1:%d%s" % (srv.port, path)
    tmo = 30 if path == "/example" else 10
    if warmup > 0:
        bench.run_wrk(url, conns, warmup, len(loader), tmo, cpus=loader, timeout=warmup + 60)
    window = quiet.Window()
    l0, c0, t0 = children_cpu_s(), srv.cpu_s(), time.monotonic()
    st, out, _ = bench.run_wrk(url, conns, duration, len(loader), tmo, cpus=loader, timeout=duration + 60)
    wall = time.monotonic() - t0
    l1, c1 = children_cpu_s(), srv.cpu_s()
    clean = window.stop()
    if st is None:
        raise RuntimeError("wrk gave no stats: " + out[-300:])
    n = int(st["requests"])
    return {"rps": st["rps"], "requests": n, "mean_ms": st["mean_us"] / 1e3, "p50_ms": st["p50_us"] / 1e3,
            "p99_ms": st["p99_us"] / 1e3,
            "server_cpu_us": (c1 - c0) * 1e6 / n if n else None,
            "loader_cpu_pct": 100.0 * (l1 - l0) / (wall * len(loader)),
            "errors": int(st["failures"] + st["timeouts"] + st["non2xx"]), "contamination": clean}


def targets(args, path):
    """[(name, kind, binary, flags)] measured on path: primed in each mode, the peers on /healthz."""
    out = [("primed" if args.modes == ["default"] else "primed " + m, "primed", args.bin, MODES[m])
           for m in args.modes]
    if path == "/healthz":
        out += [(k, k, args.peer_bins[k], []) for k in args.peers if args.peer_bins.get(k)]
    return out


def interleaved(args, plan, path, label, first, run):
    """Each N of plan, each round, each target on path in turn (A B A B): first(name, n, scpus,
    lcpus) gives the row's own fields (None: that target is left out at that N), run(srv, row,
    lcpus) the figures measured on a fresh Server; a failed start or run is the row's error."""
    out = []
    for n, scpus, lcpus in plan:
        for r in range(args.rounds):
            for name, kind, binary, flags in targets(args, path):
                row = first(name, n, scpus, lcpus)
                if row is None:
                    continue
                row.update({"server": name, "n": n, "round": r + 1})
                log("%s N=%d: %s round %d" % (label, n, name, r + 1))
                try:
                    srv = Server(kind, binary, scpus, n, flags)
                    try:
                        row.update(run(srv, row, lcpus))
                    finally:
                        srv.stop()
                except (RuntimeError, subprocess.TimeoutExpired) as e:
                    log("%s N=%d %s: %s" % (label, n, name, e))
                    row["error"] = str(e)
                out.append(row)
    return out


def sweep(args, plan):
    runs = []
    for key in args.paths:
        path, conns = PATHS[key], args.conns[key]
        runs += interleaved(args, plan, path, "%s c%d/CPU" % (path, conns),
                            lambda name, n, scpus, lcpus: {"path": path, "conns": conns * n, "server_cpus": scpus,
                                                           "loader_cpus": lcpus, "loader_shared": scpus == lcpus},
                            lambda srv, row, lcpus: measure(srv, path, row["conns"], lcpus, args.warmup, args.duration))
    return runs


def overload(args, plan, summary):
    """Open loop on /example at --overload-factor times the highest primed mode's capacity at each
    N: one rate for every mode at that N. Each at its own capacity's multiple would load a mode
    that measured higher harder, and the p99 follows the rate (the backlog grows at the offered
    rate less the service rate)."""
    cap = {(s["server"], s["n"]): s["rps_med"] for s in summary if s["path"] == "/example"}

    def first(name, n, scpus, lcpus):
        best = max((cap.get((t[0], n)) or 0 for t in targets(args, "/example")), default=0)
        return {"capacity_rps": cap[(name, n)], "rate": args.overload_factor * best} if cap.get((name, n)) else None

    def run(srv, row, lcpus):
        res = lab.run_openloop(srv, "/example", row["rate"], args.overload_duration, lcpus, args.openloop)
        # its window's figures, which run_openloop gives beside its own, as measure() keeps them
        res["contamination"] = {k: res[k] for k in quiet.WINDOW_FIELDS if k in res}
        return res
    return interleaved(args, plan, "/example", "overload /example", first, run)


def lone(args, plan):
    """/example at -c1 (one wrk thread and connection, on the first loader CPU) against each
    primed mode at each N: the lone request's latency, what the split search buys a request that
    finds the other cores idle."""
    return interleaved(args, plan, "/example", "lone /example c1",
                       lambda name, n, scpus, lcpus: {"loader_shared": scpus == lcpus},
                       lambda srv, row, lcpus: measure(srv, "/example", 1, lcpus[:1], args.warmup, args.duration))


# ----------------------------------------------------------------------------- summary, tables

def summarise(runs, loader_limit):
    """One row per (path, server, N): medians over rounds; loader_bound when the loader's median
    CPU is above loader_limit % of its CPUs; speedup over the same server's N=1 and efficiency
    (speedup ÷ N) only when neither row is loader-bound and the loader had CPUs of its own;
    vs_first: req/s over the first server's at the same N (the first mode's, when modes are
    compared)."""
    groups = {}
    for r in runs:
        groups.setdefault((r["path"], r["server"], r["n"]), []).append(r)
    rows = []
    for (path, server, n), rs in groups.items():
        ok = [r for r in rs if "error" not in r]
        row = {"path": path, "server": server, "n": n, "conns": rs[0]["conns"], "rounds": len(ok),
               "loader_shared": rs[0].get("loader_shared", False),
               "errors": sum(r.get("errors", 0) for r in ok), "failed": len(rs) - len(ok)}
        for k in ("rps", "server_cpu_us", "p50_ms", "p99_ms", "loader_cpu_pct"):
            row[k + "_med"] = med([r.get(k) for r in ok])
        row["loader_bound"] = row["loader_cpu_pct_med"] is not None and row["loader_cpu_pct_med"] > loader_limit
        rows.append(row)
    by = {(s["path"], s["server"], s["n"]): s for s in rows}
    first = {}
    for s in rows:
        first.setdefault(s["path"], s["server"])
    for s in rows:
        base = by.get((s["path"], s["server"], 1))
        quoted = s["rps_med"] and not s["loader_bound"]
        s["speedup"] = (s["rps_med"] / base["rps_med"] if quoted and base and base["rps_med"] and
                        not base["loader_bound"] and not s["loader_shared"] else None)
        s["efficiency"] = s["speedup"] / s["n"] if s["speedup"] is not None else None
        ref = by.get((s["path"], first[s["path"]], s["n"]))
        s["vs_first"] = (s["rps_med"] / ref["rps_med"] if quoted and ref and ref["rps_med"] and
                         not ref["loader_bound"] else None)
    return rows


def fmt(x, spec, none="–"):
    return spec % x if x is not None else none


def med_of(rows, key, spec):
    """The median of rows' key, formatted."""
    return fmt(med([r[key] for r in rows]), spec)


def table_list(data):
    """The tables of a sweep, as report.html and scaling.md show them: [{title, header, rows,
    note}], one per path, then the overload table and the lone-request table."""
    summary, cfg = data["summary"], data["config"]
    servers, out = scalingrun.servers(summary), []
    for path in [p for p in PATHS.values() if any(s["path"] == p for s in summary)]:
        rows = sorted((s for s in summary if s["path"] == path), key=lambda s: (servers.index(s["server"]), s["n"]))
        multi = len({s["server"] for s in rows if s["server"].startswith("primed")}) > 1
        head = COLUMNS[:-1] + (["÷ %s" % rows[0]["server"]] if multi else []) + COLUMNS[-1:]
        cells = []
        for s in rows:
            lb, rps = s["loader_bound"], fmt(s["rps_med"], "%.0f")
            notes = (("loader-bound", lb), ("loader shares the server's CPUs", s.get("loader_shared")),
                     ("%d run(s) failed" % s["failed"], s["failed"]))
            c = [s["server"], s["n"], s["conns"], ("≥ " + rps) if lb else rps, fmt(s["speedup"], "%.2f"),
                 fmt(s["efficiency"] and 100 * s["efficiency"], "%.0f %%"), fmt(s["server_cpu_us_med"], "%.1f"),
                 fmt(s["p50_ms_med"], "%.2f"), fmt(s["p99_ms_med"], "%.2f"), fmt(s["loader_cpu_pct_med"], "%.0f"),
                 s["errors"]]
            cells.append(c + ([fmt(s["vs_first"], "%.2f")] if multi else []) + ["; ".join(x for x, on in notes if on)])
        out.append({"title": "%s: server on the first N CPUs (--threads N), wrk on the rest, medians of %d round(s)"
                             % (path, cfg["rounds"]), "header": head, "rows": cells,
                    "note": "Speedup: req/s over the same server's at N=1; efficiency: speedup ÷ N. A row whose "
                            "loader used more than %g %% of its CPUs is loader-bound: its req/s is a lower bound "
                            "set by the loader, not the server's rate, and it has no speedup." % cfg["loader_limit"]})
    groups = by_server_n(data.get("overload"))
    if groups:
        cells = [[server, n, med_of(rs, "rate", "%.0f")]
                 + [med_of(rs, k, "%.1f") for k in ("availability_pct", "p50_ms", "p99_ms", "max_ms")]
                 + [sum(r["timeouts"] for r in rs), sum(r["unsent"] for r in rs),
                    sum(r["refused"] + r["reset"] for r in rs)] for (server, n), rs in groups.items()]
        out.append({"title": "Overload: /example open loop at %g× the best mode's capacity (one rate for all at an "
                             "N), medians of %d round(s)" % (cfg["overload_factor"], cfg["rounds"]),
                    "header": OVERLOAD_COLUMNS, "rows": cells,
                    "note": "Latency from each request's scheduled start (benchmarks/openloop); oldest served: the "
                            "longest any answered request waited."})
    groups = by_server_n(data.get("lone"))
    if groups:
        cells = []
        for (server, n), rs in groups.items():
            mean, one = med([r["mean_ms"] for r in rs]), groups.get((server, 1))
            ratio = mean / med([r["mean_ms"] for r in one]) if one else None
            cells.append([server, n, med_of(rs, "rps", "%.0f"), fmt(mean, "%.2f"), med_of(rs, "p50_ms", "%.2f"),
                          med_of(rs, "p99_ms", "%.2f"), fmt(ratio, "%.2f"), sum(r["errors"] for r in rs),
                          "loader shares the server's CPUs" if rs[0]["loader_shared"] else ""])
        out.append({"title": "Lone request: /example at -c1, medians of %d round(s)" % cfg["rounds"],
                    "header": LONE_COLUMNS, "rows": cells,
                    "note": "One connection, one request at a time (wrk on the first loader CPU); ÷ N=1: the "
                            "mean latency over the same mode's on one CPU."})
    return out


def tables(data):
    """scaling.md's text: the host, then table_list's tables in Markdown."""
    meta = data["meta"]
    out = ["<!-- benchmarks/scaling.py on %s; %s -->" % (meta.get("host", "?"), meta.get("date", "?")),
           "Host: %s. Binary: %s." % (meta.get("host", "?"), meta.get("version", "?"))]
    for t in table_list(data):
        out += [""] + bench.md_table(t["title"], t["header"], t["rows"]) + ["", t["note"]]
    return "\n".join(out) + "\n"


# ----------------------------------------------------------------------------- results

def commit():
    """The commit the measured primed was built from: the bundle's BUILD_INFO in a bundle, else
    this checkout's HEAD (with -dirty when its tree differs), else "?"."""
    if BUNDLE:
        try:
            m = re.search(r"from commit (\S+)", pathlib.Path(BUNDLE, "BUILD_INFO").read_text())
        except OSError:
            return "?"
        return m.group(1) if m else "?"
    rev = bench.commit()
    return rev + ("-dirty" if bench.dirty() else "") if rev else "?"


def host_meta():
    return {"host": "%s, %d CPUs usable (%d online), kernel %s" % (bench.cpu_model(), len(os.sched_getaffinity(0)),
                                                                  os.cpu_count() or 0, os.uname().release),
            "date": utc("%Y-%m-%d %H:%M UTC")}


def write_results(data, outdir):
    """scaling.json, scaling.md, the speedup PNGs and report.html into outdir (and raw.json's
    "scaling" when outdir holds a lab run); a missing gnuplot leaves out the charts, said."""
    os.makedirs(outdir, exist_ok=True)
    data["tables"] = table_list(data)
    pathlib.Path(outdir, "scaling.json").write_text(json.dumps(data, indent=1))
    pathlib.Path(outdir, "scaling.md").write_text(tables(data))
    raw = os.path.join(outdir, "raw.json")
    if os.path.exists(raw):
        with open(raw) as f:
            whole = json.load(f)
        whole["scaling"] = data
        pathlib.Path(raw + ".tmp").write_text(json.dumps(whole, indent=1))
        os.replace(raw + ".tmp", raw)
    if not shutil.which("gnuplot"):
        log("gnuplot missing: no charts, no report.html (run benchmarks/scaling.py --from %s where it is)" %
            os.path.join(outdir, "scaling.json"))
        return
    from primedlab import charts
    from primedlab import report_html
    for key, path in PATHS.items():
        chart = charts.speedup(data, path, "png")
        if chart:
            charts.draw(chart[2], "png", os.path.join(outdir, "scaling-%s.png" % key))
    report_html.write(outdir)


# ----------------------------------------------------------------------------- bundle

def shared_libs(exe):
    """[(soname, path)] that exe loads (ldd), glibc's own left out; [] for a static one."""
    p = subprocess.run(["ldd", exe], capture_output=True, text=True)
    out = []
    for line in p.stdout.splitlines():
        m = re.match(r"\s*(\S+) => (/\S+)", line)
        if m and not GLIBC.match(m.group(1)):
            out.append((m.group(1), m.group(2)))
        elif re.match(r"\s*\S+ => not found", line):
            raise RuntimeError("%s: %s" % (exe, line.strip()))
    return out


RUN = r"""#!/bin/sh
# run - the primed scaling sweep from this bundle (made by benchmarks/scaling.py --bundle): the
# programs in bin/ with the libraries in lib/ (LD_LIBRARY_PATH, set for them only), results in
# results/<UTC date-time>/ unless --out DIR. Arguments are benchmarks/scaling.py's (--help).
# SIGTERM, SIGINT or SIGHUP stop the sweep: it stops the servers it started, and nothing else.
here=$(cd "$(dirname "$0")" && pwd)
PATH="$here/bin:$PATH"
SCALING_BUNDLE="$here"
export PATH SCALING_BUNDLE
command -v python3 >/dev/null || { echo "run: python3 is needed" >&2; exit 127; }
python3 "$here/benchmarks/scaling.py" "$@" &
pid=$!
trap 'kill -TERM $pid 2>/dev/null' TERM INT HUP
wait $pid
rc=$?
[ $rc -gt 128 ] && wait $pid && rc=$?
exit $rc
"""


def make_bundle(args):
    """Fills DIR (new or empty): bin/ (primed, wrk, taskset, openloop, the installed peers), lib/
    (what they load but glibc's own), benchmarks/ (this script and what it reads), run, BUILD_INFO."""
    dest = os.path.abspath(args.bundle)
    if os.path.exists(dest) and os.listdir(dest):
        sys.exit("scaling --bundle: %s exists and is not empty" % dest)
    exes = {"primed": args.bin, "wrk": shutil.which("wrk"), "taskset": shutil.which("taskset"),
            "openloop": args.openloop}
    for k, exe in exes.items():
        if not exe or not os.access(exe, os.X_OK):
            sys.exit("scaling --bundle: %s is missing (%s)" % (k, exe or "not on PATH"))
    for k in PEERS:
        exes[k] = peer_binary(k)
        if not exes[k]:
            log("bundle: %s is not installed: left out" % k)
    lib = os.path.join(dest, "benchmarks", "lib")
    for d in ("bin", "lib", "benchmarks/lib/primedlab", "benchmarks/peers"):
        os.makedirs(os.path.join(dest, d), exist_ok=True)
    libs = {}
    for name, exe in exes.items():
        if exe:
            shutil.copy(exe, os.path.join(dest, "bin", name))
            try:
                libs.update(shared_libs(exe))
            except RuntimeError as e:
                sys.exit("scaling --bundle: a library is missing: %s" % e)
    for soname, path in libs.items():
        shutil.copy(path, os.path.join(dest, "lib", soname))     # follows the link: the file itself
    shutil.copy(os.path.join(HERE, "scaling.py"), os.path.join(dest, "benchmarks"))
    for d in primedlab.__path__:        # the package's three folders made one: the bundle has no docs/ or knative/
        for f in os.listdir(d) if os.path.isdir(d) else ():
            if f.endswith(".py") and f[:-3].isidentifier():        # modules (knative-sim.py is a command)
                shutil.copy(os.path.join(d, f), os.path.join(lib, "primedlab", f))
    shutil.copy(os.path.join(HERE, "lib", "wrk_report.lua"), lib)
    for k in PEERS:
        shutil.copy(os.path.join(HERE, "peers", k + ".conf"), os.path.join(dest, "benchmarks", "peers"))
    run = pathlib.Path(dest, "run")
    run.write_text(RUN)
    run.chmod(0o755)
    ver = subprocess.run([args.bin, "--version"], capture_output=True, text=True).stdout.strip()
    pathlib.Path(dest, "BUILD_INFO").write_text(
        "made %s by benchmarks/scaling.py --bundle from commit %s\nprimed: %s\nprograms: %s\nlibraries: %s\n" % (
            utc("%Y-%m-%d %H:%M UTC"), bench.commit() or "?", ver, " ".join(k for k, v in exes.items() if v),
            " ".join(sorted(libs))))
    log("bundle: %s (%d programs, %d libraries); run it as %s/run [--cpus LIST] ..." % (
        dest, sum(1 for v in exes.values() if v), len(libs), dest))


# ----------------------------------------------------------------------------- main

def parse(argv):
    ap = argparse.ArgumentParser(prog="benchmarks/scaling.py", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cpus", type=lambda v: parse_list(v, "--cpus"), help="server CPU counts (default 1,2,4,...)")
    ap.add_argument("--paths", default="example,healthz", help="endpoints: example, healthz (default both)")
    ap.add_argument("--modes", default="default", help="primed's modes, compared: default, inline, split-off")
    ap.add_argument("--conns-example", type=int, default=CONNS["example"], help="connections per server CPU on /example")
    ap.add_argument("--conns-healthz", type=int, default=CONNS["healthz"], help="connections per server CPU on /healthz")
    ap.add_argument("--warmup", type=int, default=2, help="seconds of warm-up before each run (default 2)")
    ap.add_argument("--duration", type=int, default=6, help="seconds measured per run (default 6)")
    ap.add_argument("--rounds", type=int, default=1, help="interleaved rounds (default 1)")
    ap.add_argument("--peers", default=",".join(PEERS), help="peers on /healthz: nginx,h2o or none")
    ap.add_argument("--share-loader", action="store_true",
                    help="allow N = every CPU, the loader on all of them beside the server (no speedup)")
    ap.add_argument("--overload", action="store_true", help="open loop on /example at --overload-factor x capacity")
    ap.add_argument("--lone", action="store_true", help="/example at -c1 against each primed mode at each N")
    ap.add_argument("--overload-factor", type=float, default=2.0, metavar="F",
                    help="the open loop's rate over the best mode's capacity at each N (default 2)")
    ap.add_argument("--overload-duration", type=int, help="seconds of each open-loop run (default --duration)")
    ap.add_argument("--openloop", help="the openloop binary (default: the build's, else built with cc)")
    ap.add_argument("--loader-limit", type=float, default=None,
                    help="loader CPU %%%% of its CPUs above which a row is loader-bound (default %g)" % LOADER_LIMIT)
    ap.add_argument("--quiet-wait", type=float, default=60.0, help="seconds to wait for a quiet machine (default 60)")
    ap.add_argument("--bin", help="the primed binary (default the build's, in a bundle the bundle's)", default=os.path.join(BUNDLE, "bin", "primed") if BUNDLE else
                    os.path.join(bench.REPO_ROOT, "build", "src", "primed"))
    ap.add_argument("--out", help="results folder")
    ap.add_argument("--from", dest="source", metavar="JSON", help="re-render a scaling.json")
    ap.add_argument("--bundle", metavar="DIR", help="pack the sweep into DIR for another host")
    a = ap.parse_args(argv)
    for name in ("paths", "modes", "peers"):
        vals = [] if getattr(a, name) == "none" else [x for x in getattr(a, name).split(",") if x]
        known = {"paths": PATHS, "modes": MODES, "peers": PEERS}[name]
        bad = [v for v in vals if v not in known]
        if bad or (name != "peers" and not vals):
            ap.error("--%s: %s is not one of %s" % (name, ",".join(bad) or "nothing", ",".join(known)))
        setattr(a, name, vals)
    for name in ("conns_example", "conns_healthz", "duration", "rounds"):
        if getattr(a, name) < 1:
            ap.error("--%s must be 1 or more" % name.replace("_", "-"))
    if a.warmup < 0 or a.overload_factor <= 0:
        ap.error("--warmup must be 0 or more, --overload-factor above 0")
    if a.overload and "example" not in a.paths:
        ap.error("--overload needs /example in --paths (it runs at a multiple of /example's capacity)")
    a.conns = {"example": a.conns_example, "healthz": a.conns_healthz}
    a.overload_duration = a.overload_duration or a.duration
    return ap, a


def main(argv=None):
    spawn.exit_on_sigterm()
    signal.signal(signal.SIGHUP, lambda signum, frame: sys.exit(128 + signum))
    ap, a = parse(argv)
    if BUNDLE:
        os.environ["LD_LIBRARY_PATH"] = os.path.join(BUNDLE, "lib")   # for the programs, not this python
    a.openloop = a.openloop or bench.openloop(BUNDLE)
    if a.bundle:
        return make_bundle(a)
    if a.source:
        try:
            with open(a.source) as f:
                data = json.load(f)
            data["config"]["loader_limit"], data["runs"]     # noqa: B018 (what --from needs)
        except (OSError, ValueError, KeyError, TypeError) as e:
            sys.exit("scaling --from %s: not a scaling.json (%s: %s)" % (a.source, type(e).__name__, e))
        if a.loader_limit is not None:
            data["config"]["loader_limit"] = a.loader_limit
        data["summary"] = summarise(data["runs"], data["config"]["loader_limit"])
        sys.stdout.write(tables(data))
        write_results(data, a.out or os.path.dirname(os.path.abspath(a.source)))
        return 0
    a.loader_limit = LOADER_LIMIT if a.loader_limit is None else a.loader_limit
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        sys.exit("scaling: needs 2 CPUs at least (the server on one, the loader on another); this process may use %d"
                 % len(cpus))
    try:
        plan = layout(cpus, a.cpus or default_counts(len(cpus)), a.share_loader)
    except ValueError as e:
        ap.error(str(e))
    for prog in ("taskset", "wrk"):
        if not shutil.which(prog):
            sys.exit("scaling: %s is missing" % prog)
    if not os.access(a.bin, os.X_OK):
        sys.exit("scaling: %s is not built (meson setup build && meson compile -C build)" % a.bin)
    if a.overload and not a.openloop:
        sys.exit("scaling: --overload needs benchmarks/openloop (meson compile -C build, or --openloop PATH)")
    a.peer_bins = {k: peer_binary(k) for k in a.peers}
    for k in a.peers:
        if not a.peer_bins[k]:
            log("%s is not installed: left out of /healthz" % k)
    stamp = utc("%Y%m%d-%H%M%S")
    out = a.out or (os.path.join(BUNDLE, "results", stamp) if BUNDLE else
                    os.path.join(HERE, "results", "scaling-" + stamp))
    quiet.guard("benchmarks/scaling.py", max_wait=a.quiet_wait)
    window = quiet.Window()
    meta = host_meta()
    ver = subprocess.run([a.bin, "--version"], capture_output=True, text=True).stdout.strip()
    meta.update({"command": " ".join(["benchmarks/scaling.py"] + (argv if argv is not None else sys.argv[1:])),
                 "version": (ver.splitlines() or ["?"])[0], "build": ver, "cpus": cpus, "commit": commit(),
                 "bundle": bool(BUNDLE), "peers": [k for k in a.peers if a.peer_bins[k]]})
    config = {"counts": [n for n, _, _ in plan], "paths": [PATHS[p] for p in a.paths], "modes": a.modes,
              "conns_per_cpu": a.conns, "warmup_s": a.warmup, "duration_s": a.duration, "rounds": a.rounds,
              "loader_limit": a.loader_limit, "overload_factor": a.overload_factor if a.overload else None,
              "lone": a.lone}
    try:
        runs = sweep(a, plan)
        summary = summarise(runs, a.loader_limit)
        ov = overload(a, plan, summary) if a.overload else []
        lo = lone(a, plan) if a.lone else []
    finally:
        stop_all()
    meta["contamination"] = quiet.describe(window.stop())
    data = {"meta": meta, "config": config, "runs": runs, "summary": summary, "overload": ov, "lone": lo}
    sys.stdout.write(tables(data))
    sys.stdout.write("\nContamination (whole run): %s\n%s\n" % (meta["contamination"], scalingrun.window_line(data)))
    write_results(data, out)
    log("results in %s" % out)
    return 1 if any("error" in r for r in runs + ov + lo) else 0


if __name__ == "__main__":
    import atexit
    atexit.register(stop_all)
    sys.exit(main())
