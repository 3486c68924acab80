#!/usr/bin/python3
"""benchmarks/modes.py - side-by-side comparisons of primed's run-time modes, in one run.

    benchmarks/modes.py dispatch [--duration S] [--rounds N] [--bin PATH]
    benchmarks/modes.py io       [--duration S] [--rounds N] [--bin PATH] [--no-strace]
    benchmarks/modes.py scrape   [--duration S] [--rounds N] [--bin PATH]
    benchmarks/modes.py accept   [--duration S] [--rounds N] [--bin PATH]
    benchmarks/modes.py engine   [--duration S] [--rounds N] [--bin PATH]
    benchmarks/modes.py split    [--duration S] [--rounds N] [--bin PATH] [--baseline PATH] [--conns LIST]
    benchmarks/modes.py plaintext [--duration S] [--rounds N] [--bin PATH] [--floor PATH]
                               [--primed-args ARGS]... [--candidates] [--no-nginx] [--no-h2o] [--no-lean-floor]
                               [--floor-switches] [--baseline PATH]

dispatch  inline vs steal: /example at -c50 and -c200 (balanced), at -c2 and -c4 with
          every connection on worker 0 (--listeners 1: the skew SO_REUSEPORT hashing can
          produce with few long-lived connections), and at -c2000 (10x overload).
io        io_uring vs epoll: /healthz at -c200, /example at -c50, and syscalls per request
          (strace -c -f over a separate short run, so strace's cost is not in the rates).
scrape    /healthz at -c200 with and without a client scraping /metrics every 100 ms.
engine    the prime engines, flint vs sieve: /example at -c50 on all cores.
split     one prime search split across idle workers (--prime-split on) vs steal without it,
          inline and one worker (--threads 1, a single core's figures): /example at -c1, -c2, -c3
          (latency: mean, p50, p90, p99) and at -c50, -c200 (saturation: req/s), with the ratios
          of split to unsplit steal and to one worker (at -c1 the lone request's latency on all
          workers over a single core's); --baseline PATH
          adds steal and steal+split of another binary (an older build) and their ratios;
          --conns LIST picks the loads (default 1,2,3,50,200); --skewed LIST runs those loads
          again with every connection on worker 0 (--listeners 1). Besides the medians of
          rounds it prints the ratios of every round pooled (all requests together).
accept    SO_REUSEPORT listener per worker vs one shared listener: /healthz at -c200 on
          keep-alive connections and with a new connection per request (accept-bound).
plaintext primed (--threads 1), nginx (1 worker, benchmarks/peers/nginx.conf), h2o (1
          thread, benchmarks/peers/h2o.conf; left out when not installed) and the floor
          (build/benchmarks/plaintext_floor, benchmarks/floor.c) as primed sets up its ring, and
          again with --lean (registered fds, one multishot receive per connection into a
          provided-buffer ring; --no-lean-floor leaves it out; --floor-switches adds each of the
          two alone), each pinned to CPU 0 with wrk (1 thread) pinned to CPU 1: /healthz at
          -c100 on keep-alive connections; per round req/s and the server's user and system CPU
          per request in µs (/proc/PID/stat of its process group over the wrk run), and primed's
          CPU per request over the two floors', nginx's and h2o's (and each switched floor's
          over the floor's); then req/s again with PIPELINE requests per write (a second wrk
          run; --pipeline 0 leaves it out). --primed-args ARGS (repeatable) adds a primed with those flags, e.g.
          --primed-args "--uring-poll-first on"; --candidates adds each io_uring switch away
          from its default (poll-first on, single send off), alone and together, beside the
          plain primed.

Each scenario runs its targets interleaved (A B A B ... for --rounds rounds) so drift on a
shared machine hits both alike; the table shows medians over rounds. Servers run on
127.0.0.1 with --port 0; the binary defaults to build/src/primed (built with dispatch=both).
Prints a Markdown table on stdout; progress on stderr. Needs wrk (and strace for io).
"""
import argparse
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import pathlib, sys  # noqa: E401  the scripts' one package: benchmarks/lib/primedlab, found from any folder
sys.path.insert(0, str(next(p for p in pathlib.Path(__file__).resolve().parents if (p / "benchmarks/lib/primedlab").is_dir()) / "benchmarks/lib"))
from primedlab import bench, quiet, spawn  # noqa: E402
from primedlab.pinned import LOAD_CPU, SERVER_CPU, Pinned, Server  # noqa: E402  (a server pinned to CPU 0)


log = bench.logger("modes")


def wrk(port, path, conns, duration, timeout="10s"):
    """bench.wrk's figures; a path ending in #close sends Connection: close (a connection per request)."""
    headers = []
    if path.endswith("#close"):
        path = path[:-len("#close")]
        headers = ["-H", "Connection: close"]
    return bench.wrk("http://127.0.0.1:%d%s" % (port, path), conns, duration, 2, timeout, extra=headers)


def measure(server, path, conns, duration, timeout="10s"):
    c0, t0 = server.cpu_s(), time.time()
    st = wrk(server.port, path, conns, duration, timeout)
    st["cpu_pct"] = 100.0 * (server.cpu_s() - c0) / (time.time() - t0)
    return st


med = bench.med


def pooled(rows, key):
    """rps: every round's requests over every round's time; mean_us: the mean latency of every
    request of every round (each round's mean weighted by its requests)."""
    n = sum(r["requests"] for r in rows)
    if key == "rps":
        return n / (sum(r["duration_us"] for r in rows) / 1e6)
    return sum(r[key] * r["requests"] for r in rows) / n


def fmt_ms(us):
    return "%.1f" % (us / 1000.0)


def run_pairs(binary, targets, scenarios, rounds, duration):
    """targets: [(name, args, env)] or [(name, args, env, binary)] (a binary of its own);
    scenarios: [(label, path, conns, extra_args, timeout)]."""
    results = {}
    for label, path, conns, extra, timeout in scenarios:
        for r in range(rounds):
            for name, args, env, *own in targets:
                srv = Server(own[0] if own else binary, args + extra, env)
                try:
                    if path.startswith("/example"):
                        wrk(srv.port, path, min(conns, 8), 1, timeout)  # warm-up
                    log("%s: %s round %d" % (label, name, r + 1))
                    st = measure(srv, path, conns, duration, timeout)
                    st["threads"] = srv.threads()
                finally:
                    srv.stop()
                results.setdefault((label, name), []).append(st)
    return results


def print_rows(title, targets, scenarios, results):
    rows = []
    for label, path, conns, _, _ in scenarios:
        for name, _, _ in targets:
            rs = results[(label, name)]
            rows.append([label, name, "%.0f" % med(rs, "rps"), fmt_ms(med(rs, "p50_us")),
                         fmt_ms(med(rs, "p99_us")), "%d" % sum(r["failures"] for r in rs),
                         "%d" % sum(r["non2xx"] for r in rs), "%d" % sum(r["timeouts"] for r in rs),
                         "%.0f" % med(rs, "cpu_pct")])
    bench.print_table(title, ["load", "mode", "req/s", "p50 ms", "p99 ms", "refused/reset", "non-2xx", "client timeouts",
                  "CPU %"], rows)


def strace_syscalls(binary, args, env, path, conns, duration):
    """Syscalls per request over a short wrk run, with strace -c -f attached."""
    srv = Server(binary, args, env)
    out = "/tmp/primed-strace-%d.txt" % os.getpid()
    try:
        tr = subprocess.Popen(["strace", "-c", "-f", "-o", out, "-p", str(srv.pid)],
                              stderr=subprocess.DEVNULL)
        time.sleep(0.5)
        st = wrk(srv.port, path, conns, duration)
        tr.send_signal(signal.SIGINT)
        tr.wait(30)
    finally:
        srv.stop()
    total = 0
    top = []
    with open(out) as f:
        for line in f:
            m = re.match(r"\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(\w+)$", line)
            if m and m.group(2) != "total":
                total += int(m.group(1))
                top.append((int(m.group(1)), m.group(2)))
    os.unlink(out)
    top.sort(reverse=True)
    return total / max(1, st["requests"]), ", ".join("%s %.2f" % (n, c / max(1, st["requests"])) for c, n in top[:4])


# the comparisons of two settings, each target [(name, args, env)] over each scenario
# [(label, path, conns, extra args, wrk timeout)]: what -> (title, targets, scenarios)
PAIRS = {
    "dispatch": ("Dispatch: inline vs steal (/example, 1000-bit primes)",
                 [("inline", [], {"PRIMED_DISPATCH": "inline"}), ("steal", [], {"PRIMED_DISPATCH": "steal"})],
                 [("balanced -c50", "/example", 50, [], "30s"),
                  ("balanced -c200", "/example", 200, [], "30s"),
                  ("skewed -c2 (1 listener)", "/example", 2, ["--listeners", "1"], "30s"),
                  ("skewed -c4 (1 listener)", "/example", 4, ["--listeners", "1"], "30s"),
                  ("overload -c2000", "/example", 2000, [], "120s")]),
    "io": ("I/O backend: io_uring vs epoll",
           [("io_uring", ["--io", "uring"], {}), ("epoll", ["--io", "epoll"], {})],
           [("/healthz -c200", "/healthz", 200, [], "10s"), ("/example -c50", "/example", 50, [], "30s")]),
    "engine": ("Prime engine: flint vs sieve (/example, 1000-bit, all cores)",
               [("flint", ["--prime-engine", "flint"], {}), ("sieve", ["--prime-engine", "sieve"], {})],
               [("/example -c50", "/example", 50, [], "30s")]),
    "accept": ("Listener: SO_REUSEPORT per worker vs one shared listener",
               [("reuseport", ["--accept", "reuseport"], {}), ("shared", ["--accept", "shared"], {})],
               [("/healthz -c200 keep-alive", "/healthz", 200, [], "10s"),
                ("/healthz -c200 new conn per request", "/healthz#close", 200, [], "10s"),
                ("/example -c50 (dispatch inline)", "/example", 50, ["--dispatch", "inline"], "30s")]),
}


# ----------------------------------------------------------------------------- plaintext

PLAINTEXT_CONNS = 100
# each io_uring switch away from its default, alone and together (single send is on by default)
PIPELINE = 16  # requests per write in the pipelined run (TechEmpower's plaintext depth)
# wrk script of the pipelined run: PIPELINE GETs of the URL per write; wrk_report.lua's done()
# is appended to it, so the run prints the same WRKSTAT line
PIPELINE_LUA = """init = function(args)
   local r = {}
   for i = 1, %d do r[i] = wrk.format(nil) end
   req = table.concat(r)
end
request = function() return req end
"""
CANDIDATES = [["--uring-poll-first", "on"], ["--uring-single-send", "off"],
              ["--uring-poll-first", "on", "--uring-single-send", "off"]]


def plaintext_check(a):
    for prog in ("taskset", "wrk"):
        if not shutil.which(prog):
            sys.exit("modes plaintext: %s is missing" % prog)
    if not os.access(a.floor, os.X_OK):
        sys.exit("modes plaintext: %s is not built (ninja -C build)" % a.floor)
    if a.baseline and not os.access(a.baseline, os.X_OK):
        sys.exit("modes plaintext: --baseline %s is not an executable" % a.baseline)
    if not a.no_nginx and not os.access("/usr/sbin/nginx", os.X_OK):
        sys.exit("modes plaintext: /usr/sbin/nginx is missing (apt-get install nginx, or --no-nginx)")
    if len(os.sched_getaffinity(0)) < 2 or not {0, 1} <= os.sched_getaffinity(0):
        sys.exit("modes plaintext: needs CPUs 0 and 1 (server on 0, wrk on 1)")


def plaintext(a):
    variants = [[]] + [x.split() for x in a.primed_args] + (CANDIDATES if a.candidates else [])
    targets = [("primed" + ("" if not v else " " + " ".join(v)), "primed", v) for v in variants]
    if a.baseline:
        targets.insert(1, ("primed baseline", "primed", []))
    if not a.no_nginx:
        targets.append(("nginx", "nginx", []))
    if not a.no_h2o:
        if not shutil.which("h2o"):
            log("plaintext: h2o is not installed (profiles/deps @bench): left out")
        else:
            targets.append(("h2o", "h2o", []))
    targets.append(("floor", "floor", []))
    if not a.no_lean_floor:
        if a.floor_switches:
            targets += [("floor fixed files", "floor", ["--fixed-files"]),
                        ("floor multishot recv", "floor", ["--multishot-recv"])]
        targets.append(("floor lean", "floor", ["--lean"]))
    lua = None
    if a.pipeline > 0:
        lua = os.path.join("/tmp", "primed-modes-pipeline-%d.lua" % os.getpid())
        with open(lua, "w") as f, open(spawn.LUA) as report:
            f.write(PIPELINE_LUA % a.pipeline + report.read())
    rounds = []
    for r in range(a.rounds):
        row = {}
        for name, kind, args in targets:
            exe = a.floor if kind == "floor" else a.baseline if name == "primed baseline" else a.bin
            srv = Pinned(kind, exe, args)
            try:
                url = "http://127.0.0.1:%d/healthz" % srv.port
                bench.run_wrk(url, PLAINTEXT_CONNS, 1, 1, cpus=LOAD_CPU)  # warm-up: connections, caches
                log("plaintext: %s round %d" % (name, r + 1))
                u0, s0 = srv.times()
                try:
                    st = bench.wrk(url, PLAINTEXT_CONNS, a.duration, 1, cpus=LOAD_CPU)
                except RuntimeError as e:
                    raise RuntimeError("%s: %s" % (name, e)) from None
                u1, s1 = srv.times()
                piped = bench.run_wrk(url, PLAINTEXT_CONNS, a.duration, 1, cpus=LOAD_CPU, lua=lua)[1] if lua else ""
            finally:
                srv.stop()
            n = max(1, int(st["requests"]))
            row[name] = {
                "rps": n / (float(st["duration_us"]) / 1e6),
                "user_us": (u1 - u0) * 1e6 / n,
                "sys_us": (s1 - s0) * 1e6 / n,
                "errors": int(st["failures"] + st["timeouts"] + st["non2xx"]),
            }
            row[name]["cpu_us"] = row[name]["user_us"] + row[name]["sys_us"]
            pst = spawn.wrk_stats(piped) if lua else None
            row[name]["piped_rps"] = pst["requests"] / (float(pst["duration_us"]) / 1e6) if pst else None
        rounds.append(row)
    if lua:
        os.unlink(lua)

    def ratio(rw, name, peer):
        return rw[name]["cpu_us"] / rw[peer]["cpu_us"] if peer in rw and rw[peer]["cpu_us"] > 0 else None

    def fr(x):
        return "%.2f" % x if x is not None else "n/a"

    per = []
    for i, rw in enumerate(rounds):
        for name, kind, _ in targets:
            m = rw[name]
            per.append([i + 1, name, "%.0f" % m["rps"], "%.2f" % m["user_us"], "%.2f" % m["sys_us"],
                        "%.2f" % m["cpu_us"], fr(ratio(rw, name, "floor")) if kind == "primed" or name.startswith("floor ") else "",
                        fr(ratio(rw, name, "floor lean")) if kind == "primed" else "",
                        fr(ratio(rw, name, "nginx")) if kind == "primed" else "",
                        fr(ratio(rw, name, "h2o")) if kind == "primed" else "",
                        "%.0f" % m["piped_rps"] if m["piped_rps"] else "n/a", m["errors"]])
    head = ["round", "server", "req/s", "user µs/req", "sys µs/req", "CPU µs/req", "CPU/req ÷ floor",
            "CPU/req ÷ lean floor", "CPU/req ÷ nginx", "CPU/req ÷ h2o", "pipelined req/s", "errors"]
    bench.print_table("Plaintext /healthz -c%d, server on CPU %s, wrk on CPU %s: each round" % (PLAINTEXT_CONNS, SERVER_CPU, LOAD_CPU),
          head, per)
    meds = []
    for name, kind, _ in targets:
        rs = [rw[name] for rw in rounds]

        def mr(peer):
            xs = [ratio(rw, name, peer) for rw in rounds]
            xs = [x for x in xs if x is not None]
            return fr(statistics.median(xs)) if xs and (kind == "primed" or peer == "floor" and name.startswith("floor ")) else ""
        piped = [x["piped_rps"] for x in rs if x["piped_rps"]]
        meds.append([name, "%.0f" % med(rs, "rps"), "%.2f" % med(rs, "user_us"), "%.2f" % med(rs, "sys_us"),
                     "%.2f" % med(rs, "cpu_us"), mr("floor"), mr("floor lean"), mr("nginx"), mr("h2o"),
                     "%.0f" % statistics.median(piped) if piped else "n/a", sum(x["errors"] for x in rs)])
    bench.print_table("Plaintext /healthz -c%d: medians over %d interleaved rounds (ratios: median of each round's)" % (
        PLAINTEXT_CONNS, len(rounds)), head[1:], meds)


def main():
    spawn.exit_on_sigterm()
    ap = argparse.ArgumentParser(prog="benchmarks/modes.py", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=["dispatch", "io", "scrape", "accept", "engine", "split", "plaintext"])
    ap.add_argument("--duration", type=int, default=10, help="seconds per wrk run (default 10)")
    ap.add_argument("--rounds", type=int, default=2, help="interleaved rounds (default 2)")
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "src", "primed"))
    ap.add_argument("--no-strace", action="store_true")
    ap.add_argument("--floor", default=os.path.join(ROOT, "build", "benchmarks", "plaintext_floor"),
                    help="plaintext: the floor program (default build/benchmarks/plaintext_floor)")
    ap.add_argument("--primed-args", action="append", default=[], metavar="ARGS",
                    help="plaintext: one more primed with these flags (repeatable)")
    ap.add_argument("--conns", default="1,2,3,50,200", type=lambda v: [int(x) for x in v.split(",")],
                    help="split: the loads, connections per wrk run (default 1,2,3,50,200)")
    ap.add_argument("--skewed", default=[], type=lambda v: [int(x) for x in v.split(",")],
                    help="split: loads run again with every connection on worker 0 (--listeners 1), "
                         "the layout in which a core idles without the split (e.g. 2,3)")
    ap.add_argument("--baseline", metavar="PATH",
                    help="plaintext, split: another primed binary (an older build) beside --bin")
    ap.add_argument("--candidates", action="store_true",
                    help="plaintext: add primed with each --uring-* switch away from its default, and with all")
    ap.add_argument("--no-nginx", action="store_true", help="plaintext: leave nginx out")
    ap.add_argument("--no-h2o", action="store_true", help="plaintext: leave h2o out")
    ap.add_argument("--no-lean-floor", action="store_true",
                    help="plaintext: leave out the floor's --lean run (registered fds, multishot receive)")
    ap.add_argument("--floor-switches", action="store_true",
                    help="plaintext: add the floor with each of --fixed-files and --multishot-recv alone")
    ap.add_argument("--pipeline", type=int, default=PIPELINE, metavar="N",
                    help="plaintext: requests per write of the pipelined run (default %d; 0: no such run)" % PIPELINE)
    a = ap.parse_args()
    if a.what == "plaintext":
        plaintext_check(a)
    quiet.guard("benchmarks/modes.py", table=sys.stdout)
    if not os.access(a.bin, os.X_OK):
        sys.exit("modes: %s is not built (meson setup build && ninja -C build)" % a.bin)
    print(bench.stamp("benchmarks/modes.py %s --duration %d --rounds %d" % (a.what, a.duration, a.rounds)))

    if a.what in PAIRS:
        title, targets, scenarios = PAIRS[a.what]
        res = run_pairs(a.bin, targets, scenarios, a.rounds, a.duration)
        print_rows(title, targets, scenarios, res)
    if a.what == "io" and not a.no_strace:
        rows = []
        for name, args, env in targets:
            for label, path, conns, _, _ in scenarios:
                log("strace %s %s" % (name, label))
                per, top = strace_syscalls(a.bin, args, env, path, conns, 5)
                rows.append([label, name, "%.2f" % per, top])
        bench.print_table("Syscalls per request (strace -c -f, separate 5 s run)",
                          ["load", "backend", "syscalls/req", "top calls per request"], rows)
    if a.what == "split":
        targets = [("inline", ["--dispatch", "inline"], {}),
                   ("steal", ["--dispatch", "steal", "--prime-split", "off"], {}),
                   ("steal+split", ["--dispatch", "steal", "--prime-split", "on"], {}),
                   ("one worker", ["--threads", "1"], {})]
        if a.baseline and not os.access(a.baseline, os.X_OK):
            sys.exit("modes split: --baseline %s is not an executable" % a.baseline)
        if a.baseline:
            targets += [("baseline steal", ["--dispatch", "steal", "--prime-split", "off"], {}, a.baseline),
                        ("baseline steal+split", ["--dispatch", "steal", "--prime-split", "on"], {}, a.baseline)]
        scenarios = [("-c%d" % c, "/example", c, [], "30s") for c in a.conns]
        scenarios += [("-c%d skewed" % c, "/example", c, ["--listeners", "1"], "30s") for c in a.skewed]
        res = run_pairs(a.bin, targets, scenarios, a.rounds, a.duration)
        rows = []
        for label, _, _, _, _ in scenarios:
            for name, *_ in targets:
                rs = res[(label, name)]
                rows.append([label, name, "%.1f" % med(rs, "rps"), fmt_ms(med(rs, "mean_us")), fmt_ms(med(rs, "p50_us")),
                             fmt_ms(med(rs, "p90_us")), fmt_ms(med(rs, "p99_us")),
                             "%d" % sum(r["failures"] + r["non2xx"] for r in rs), "%.0f" % med(rs, "cpu_pct")])
        bench.print_table("Split prime search: /example (1000-bit), 2 workers, medians of %d rounds" % a.rounds,
              ["load", "mode", "req/s", "mean ms", "p50 ms", "p90 ms", "p99 ms", "server failures", "CPU %"], rows)
        pairs = [("steal+split", "steal"), ("steal+split", "one worker")]
        if a.baseline:
            pairs += [("steal+split", "baseline steal+split"), ("steal", "baseline steal"),
                      ("baseline steal+split", "baseline steal")]
        # then every round's requests together: with few connections, which worker each one
        # lands on (SO_REUSEPORT's hash of a new port per round) moves a round's figures more
        # than the mode does, and a median of rounds follows that luck; pooling weighs it evenly
        views = [(med, "", ("rps", "mean_us", "p90_us", "p99_us")),
                 (pooled, ", every round pooled", ("rps", "mean_us"))]
        names = {"rps": "req/s", "mean_us": "mean", "p90_us": "p90", "p99_us": "p99"}
        for agg, what, keys in views:
            for new, old in pairs:
                ratios = [[label] + ["%.2f" % (agg(res[(label, new)], k) / agg(res[(label, old)], k)) for k in keys]
                          for label, _, _, _, _ in scenarios]
                bench.print_table("%s / %s%s (same run)" % (new, old, what), ["load"] + [names[k] for k in keys], ratios)
    elif a.what == "plaintext":
        plaintext(a)
    elif a.what == "scrape":
        stop = threading.Event()

        def scraper(port):
            while not stop.is_set():
                spawn.http_status(port, "/metrics")
                time.sleep(0.1)

        results = {}
        for r in range(a.rounds):
            for name in ("no scraper", "scrape every 100 ms"):
                srv = Server(a.bin, [], {})
                t = None
                if name != "no scraper":
                    stop.clear()
                    t = threading.Thread(target=scraper, args=(srv.port,), daemon=True)
                    t.start()
                log("scrape: %s round %d" % (name, r + 1))
                try:
                    results.setdefault(name, []).append(measure(srv, "/healthz", 200, a.duration))
                finally:
                    stop.set()
                    if t:
                        t.join()
                    srv.stop()
        rows = [[n, "%.0f" % med(rs, "rps"), fmt_ms(med(rs, "p50_us")), fmt_ms(med(rs, "p99_us")),
                 "%d" % sum(x["failures"] + x["non2xx"] for x in rs), "%d" % sum(x["timeouts"] for x in rs)]
                for n, rs in results.items()]
        base = med(results["no scraper"], "rps")
        rows[1].append("%.3f" % (med(results["scrape every 100 ms"], "rps") / base))
        rows[0].append("1")
        bench.print_table("/healthz -c200 with and without a /metrics scraper", ["case", "req/s", "p50 ms", "p99 ms", "server failures",
                                                                     "client timeouts", "ratio"], rows)


if __name__ == "__main__":
    main()
