#!/usr/bin/python3
"""benchmarks/modes.py - side-by-side comparisons of primed's run-time modes, in one run
(each option's help names the modes it applies to).

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
          workers over a single core's), of the medians of rounds and of every round pooled (all
          requests together); --baseline, --conns and --skewed add binaries and loads.
accept    SO_REUSEPORT listener per worker vs one shared listener: /healthz at -c200 on
          keep-alive connections and with a new connection per request (accept-bound).
plaintext primed (--threads 1), nginx (1 worker, benchmarks/peers/nginx.conf), h2o (1
          thread, benchmarks/peers/h2o.conf; left out when not installed) and the floor
          (build/benchmarks/plaintext_floor, benchmarks/floor.c) as primed sets up its ring, and
          again with --lean (registered fds, one multishot receive per connection into a
          provided-buffer ring), each pinned to CPU 0 with wrk (1 thread) pinned to CPU 1:
          /healthz at -c100 on keep-alive connections; per round req/s and the server's user and
          system CPU per request in µs (/proc/PID/stat of its process group over the wrk run),
          and primed's CPU per request over the two floors', nginx's and h2o's (and each switched
          floor's over the floor's); then req/s again with PIPELINE requests per write (a second
          wrk run). --primed-args and --candidates add primeds with other io_uring switches.

Each scenario runs its targets interleaved (A B A B ... for --rounds rounds) so drift on a
shared machine hits both alike; the table shows medians over rounds. Servers run on
127.0.0.1 with --port 0; the binary defaults to build/src/primed (built with dispatch=both).
Prints a Markdown table on stdout; progress on stderr. Needs wrk (and strace for io).
"""
import argparse
import contextlib
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import pathlib, sys  # noqa: E401  the scripts' one package: benchmarks/lib/primedlab, found from any folder
sys.path.insert(0, str(next(p for p in pathlib.Path(__file__).resolve().parents if (p / "benchmarks/lib/primedlab").is_dir()) / "benchmarks/lib"))
from primedlab import bench, quiet, spawn  # noqa: E402
from primedlab.pinned import LOAD_CPU, SERVER_CPU, Pinned, Server  # noqa: E402  (a server pinned to CPU 0)

log = bench.logger("modes")
med = bench.med


def wrk(port, path, conns, duration, timeout="10s"):
    """bench.wrk's figures; a path ending in #close sends Connection: close (a connection per request)."""
    path, close, _ = path.partition("#close")
    return bench.wrk("http://127.0.0.1:%d%s" % (port, path), conns, duration, 2, timeout,
                     extra=["-H", "Connection: close"] if close else [])


def measure(server, path, conns, duration, timeout="10s"):
    c0, t0 = server.cpu_s(), time.time()
    st = wrk(server.port, path, conns, duration, timeout)
    st["cpu_pct"] = 100.0 * (server.cpu_s() - c0) / (time.time() - t0)
    return st


def pooled(rows, key):
    """rps: every round's requests over every round's time; mean_us: the mean latency of every
    request of every round (each round's mean weighted by its requests)."""
    n = sum(r["requests"] for r in rows)
    if key == "rps":
        return n / (sum(r["duration_us"] for r in rows) / 1e6)
    return sum(r[key] * r["requests"] for r in rows) / n


def fmt_ms(us):
    return "%.1f" % (us / 1000.0)


def run_pairs(binary, targets, scenarios, rounds, duration, during=None):
    """targets: [(name, args, env)] or [(name, args, env, binary)] (a binary of its own);
    scenarios: [(label, path, conns, extra_args, timeout)]; during(name, server), when given, is a
    context manager around each measurement. {(label, name): [wrk stats of each round]}."""
    results = {}
    for label, path, conns, extra, timeout in scenarios:
        for r in range(rounds):
            for name, args, env, *own in targets:
                with Server(own[0] if own else binary, args + extra, env) as srv:
                    if path.startswith("/example"):
                        wrk(srv.port, path, min(conns, 8), 1, timeout)  # warm-up
                    log("%s: %s round %d" % (label, name, r + 1))
                    with during(name, srv) if during else contextlib.nullcontext():
                        st = measure(srv, path, conns, duration, timeout)
                results.setdefault((label, name), []).append(st)
    return results


def print_rows(title, targets, scenarios, results):
    rows = []
    for label, *_ in scenarios:
        for name, *_ in targets:
            rs = results[(label, name)]
            rows.append([label, name, "%.0f" % med(rs, "rps"), *(fmt_ms(med(rs, k)) for k in ("p50_us", "p99_us")),
                         *("%d" % sum(r[k] for r in rs) for k in ("failures", "non2xx", "timeouts")),
                         "%.0f" % med(rs, "cpu_pct")])
    bench.print_table(title, ["load", "mode", "req/s", "p50 ms", "p99 ms", "refused/reset", "non-2xx",
                              "client timeouts", "CPU %"], rows)


def strace_syscalls(binary, args, env, path, conns, duration):
    """Syscalls per request over a short wrk run, with strace -c -f attached: (all, the top four)."""
    out = "/tmp/primed-strace-%d.txt" % os.getpid()
    with Server(binary, args, env) as srv:
        tr = subprocess.Popen(["strace", "-c", "-f", "-o", out, "-p", str(srv.pid)], stderr=subprocess.DEVNULL)
        time.sleep(0.5)
        st = wrk(srv.port, path, conns, duration)
        tr.send_signal(signal.SIGINT)
        tr.wait(30)
    calls = []
    with open(out) as f:
        for line in f:
            m = re.match(r"\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(\w+)$", line)
            if m and m.group(2) != "total":
                calls.append((int(m.group(1)), m.group(2)))
    os.unlink(out)
    n = max(1, st["requests"])
    top = sorted(calls, reverse=True)[:4]
    return sum(c for c, _ in calls) / n, ", ".join("%s %.2f" % (name, c / n) for c, name in top)


def syscalls(binary, targets, scenarios):
    rows = []
    for name, args, env in targets:
        for label, path, conns, _, _ in scenarios:
            log("strace %s %s" % (name, label))
            per, top = strace_syscalls(binary, args, env, path, conns, 5)
            rows.append([label, name, "%.2f" % per, top])
    bench.print_table("Syscalls per request (strace -c -f, separate 5 s run)",
                      ["load", "backend", "syscalls/req", "top calls per request"], rows)


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


def split(a):
    steal = ["--dispatch", "steal", "--prime-split", "off"]
    split_on = ["--dispatch", "steal", "--prime-split", "on"]
    targets = [("inline", ["--dispatch", "inline"], {}), ("steal", steal, {}), ("steal+split", split_on, {}),
               ("one worker", ["--threads", "1"], {})]
    if a.baseline:
        targets += [("baseline steal", steal, {}, a.baseline),
                    ("baseline steal+split", split_on, {}, a.baseline)]
    scenarios = [("-c%d" % c, "/example", c, [], "30s") for c in a.conns]
    scenarios += [("-c%d skewed" % c, "/example", c, ["--listeners", "1"], "30s") for c in a.skewed]
    res = run_pairs(a.bin, targets, scenarios, a.rounds, a.duration)
    rows = []
    for label, *_ in scenarios:
        for name, *_ in targets:
            rs = res[(label, name)]
            rows.append([label, name, "%.1f" % med(rs, "rps"),
                         *(fmt_ms(med(rs, k)) for k in ("mean_us", "p50_us", "p90_us", "p99_us")),
                         "%d" % sum(r["failures"] + r["non2xx"] for r in rs), "%.0f" % med(rs, "cpu_pct")])
    bench.print_table("Split prime search: /example (1000-bit), 2 workers, medians of %d rounds" % a.rounds,
                      ["load", "mode", "req/s", "mean ms", "p50 ms", "p90 ms", "p99 ms", "server failures",
                       "CPU %"], rows)
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
                      for label, *_ in scenarios]
            bench.print_table("%s / %s%s (same run)" % (new, old, what), ["load"] + [names[k] for k in keys],
                              ratios)


@contextlib.contextmanager
def scraping(name, srv):
    """run_pairs' during for scrape: a client GETting /metrics every 100 ms while srv is measured,
    for every target but "no scraper"."""
    stop = threading.Event()

    def scraper():
        while not stop.is_set():
            spawn.http_status(srv.port, "/metrics")
            stop.wait(0.1)
    t = threading.Thread(target=scraper, daemon=True)
    if name != "no scraper":
        t.start()
    try:
        yield
    finally:
        stop.set()
        if t.is_alive():
            t.join()


def scrape(a):
    targets = [("no scraper", [], {}), ("scrape every 100 ms", [], {})]
    res = run_pairs(a.bin, targets, [("scrape", "/healthz", 200, [], "10s")], a.rounds, a.duration, scraping)
    base = med(res[("scrape", "no scraper")], "rps")
    rows = []
    for name, *_ in targets:
        rs = res[("scrape", name)]
        rows.append([name, "%.0f" % med(rs, "rps"), fmt_ms(med(rs, "p50_us")), fmt_ms(med(rs, "p99_us")),
                     "%d" % sum(x["failures"] + x["non2xx"] for x in rs), "%d" % sum(x["timeouts"] for x in rs),
                     "%.3f" % (med(rs, "rps") / base) if name != "no scraper" else "1"])
    bench.print_table("/healthz -c200 with and without a /metrics scraper",
                      ["case", "req/s", "p50 ms", "p99 ms", "server failures", "client timeouts", "ratio"], rows)


# ----------------------------------------------------------------------------- plaintext

PLAINTEXT_CONNS = 100
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
# each io_uring switch away from its default, alone and together (single send is on by default)
CANDIDATES = [["--uring-poll-first", "on"], ["--uring-single-send", "off"],
              ["--uring-poll-first", "on", "--uring-single-send", "off"]]
PEERS = ("floor", "floor lean", "nginx", "h2o")  # the CPU/req ratio columns, in order
CPU_KEYS = ("user_us", "sys_us", "cpu_us")


def plaintext_check(a):
    for msg, missing in (("taskset is missing", not shutil.which("taskset")),
                         ("wrk is missing", not shutil.which("wrk")),
                         ("%s is not built (ninja -C build)" % a.floor, not os.access(a.floor, os.X_OK)),
                         ("/usr/sbin/nginx is missing (apt-get install nginx, or --no-nginx)",
                          not a.no_nginx and not os.access("/usr/sbin/nginx", os.X_OK)),
                         ("needs CPUs 0 and 1 (server on 0, wrk on 1)", not {0, 1} <= os.sched_getaffinity(0))):
        if missing:
            sys.exit("modes plaintext: " + msg)


def plaintext_targets(a):
    """(name, kind, binary, args) of each server compared, in the order a round runs them."""
    variants = [[]] + [x.split() for x in a.primed_args] + (CANDIDATES if a.candidates else [])
    targets = [(" ".join(["primed"] + v), "primed", a.bin, v) for v in variants]
    if a.baseline:
        targets.insert(1, ("primed baseline", "primed", a.baseline, []))
    if not a.no_nginx:
        targets.append(("nginx", "nginx", None, []))
    if not a.no_h2o and not shutil.which("h2o"):
        log("plaintext: h2o is not installed (profiles/deps @bench): left out")
    elif not a.no_h2o:
        targets.append(("h2o", "h2o", None, []))
    floors = [("floor", [])]
    if not a.no_lean_floor:
        if a.floor_switches:
            floors += [("floor fixed files", ["--fixed-files"]), ("floor multishot recv", ["--multishot-recv"])]
        floors.append(("floor lean", ["--lean"]))
    return targets + [(name, "floor", a.floor, args) for name, args in floors]


def plaintext_round(a, targets, lua, r):
    """{name: its figures} of one round over every target; lua: the pipelined run's script or None."""
    row = {}
    for name, kind, exe, args in targets:
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
        pst = spawn.wrk_stats(piped)
        user, system = (u1 - u0) * 1e6 / n, (s1 - s0) * 1e6 / n
        row[name] = {"rps": n / (float(st["duration_us"]) / 1e6), "user_us": user, "sys_us": system,
                     "cpu_us": user + system, "errors": int(st["failures"] + st["timeouts"] + st["non2xx"]),
                     "piped_rps": pst["requests"] / (float(pst["duration_us"]) / 1e6) if pst else None}
    return row


def cpu_ratio(row, name, peer):
    return row[name]["cpu_us"] / row[peer]["cpu_us"] if peer in row and row[peer]["cpu_us"] > 0 else None


def compared(kind, name, peer):
    """Whether a row has a CPU/req ratio to peer: primed's to every peer, a switched floor's to the
    plain floor."""
    return kind == "primed" or (peer == "floor" and name.startswith("floor "))


def fr(x):
    return "%.2f" % x if x is not None else "n/a"


def plaintext(a):
    targets = plaintext_targets(a)
    lua = None
    if a.pipeline > 0:
        lua = os.path.join("/tmp", "primed-modes-pipeline-%d.lua" % os.getpid())
        with open(lua, "w") as f, open(spawn.LUA) as report:
            f.write(PIPELINE_LUA % a.pipeline + report.read())
    rounds = [plaintext_round(a, targets, lua, r) for r in range(a.rounds)]
    if lua:
        os.unlink(lua)
    per = []
    for i, rw in enumerate(rounds):
        for name, kind, *_ in targets:
            m = rw[name]
            per.append([i + 1, name, "%.0f" % m["rps"], *("%.2f" % m[k] for k in CPU_KEYS),
                        *(fr(cpu_ratio(rw, name, p)) if compared(kind, name, p) else "" for p in PEERS),
                        "%.0f" % m["piped_rps"] if m["piped_rps"] else "n/a", m["errors"]])
    head = ["round", "server", "req/s", "user µs/req", "sys µs/req", "CPU µs/req", "CPU/req ÷ floor",
            "CPU/req ÷ lean floor", "CPU/req ÷ nginx", "CPU/req ÷ h2o", "pipelined req/s", "errors"]
    bench.print_table("Plaintext /healthz -c%d, server on CPU %s, wrk on CPU %s: each round"
                      % (PLAINTEXT_CONNS, SERVER_CPU, LOAD_CPU), head, per)
    meds = []
    for name, kind, *_ in targets:
        rs = [rw[name] for rw in rounds]
        ratios = {p: [x for x in (cpu_ratio(rw, name, p) for rw in rounds) if x is not None] for p in PEERS}
        piped = [x["piped_rps"] for x in rs if x["piped_rps"]]
        meds.append([name, "%.0f" % med(rs, "rps"), *("%.2f" % med(rs, k) for k in CPU_KEYS),
                     *(fr(statistics.median(ratios[p])) if ratios[p] and compared(kind, name, p) else ""
                       for p in PEERS),
                     "%.0f" % statistics.median(piped) if piped else "n/a", sum(x["errors"] for x in rs)])
    bench.print_table("Plaintext /healthz -c%d: medians over %d interleaved rounds (ratios: median of each round's)"
                      % (PLAINTEXT_CONNS, len(rounds)), head[1:], meds)


def main():
    spawn.exit_on_sigterm()
    ap = argparse.ArgumentParser(prog="benchmarks/modes.py", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=["dispatch", "io", "scrape", "accept", "engine", "split", "plaintext"])
    ap.add_argument("--duration", type=int, default=10, help="seconds per wrk run (default 10)")
    ap.add_argument("--rounds", type=int, default=2, help="interleaved rounds (default 2)")
    ap.add_argument("--bin", default=os.path.join(bench.REPO_ROOT, "build", "src", "primed"))
    ap.add_argument("--no-strace", action="store_true", help="io: leave out the syscalls per request")
    ap.add_argument("--floor", default=os.path.join(bench.REPO_ROOT, "build", "benchmarks", "plaintext_floor"),
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
    if a.what in ("split", "plaintext") and a.baseline and not os.access(a.baseline, os.X_OK):
        sys.exit("modes %s: --baseline %s is not an executable" % (a.what, a.baseline))
    if a.what == "plaintext":
        plaintext_check(a)
    quiet.guard("benchmarks/modes.py", table=sys.stdout)
    if not os.access(a.bin, os.X_OK):
        sys.exit("modes: %s is not built (meson setup build && ninja -C build)" % a.bin)
    print(bench.stamp("benchmarks/modes.py %s --duration %d --rounds %d" % (a.what, a.duration, a.rounds)))
    if a.what in PAIRS:
        title, targets, scenarios = PAIRS[a.what]
        print_rows(title, targets, scenarios, run_pairs(a.bin, targets, scenarios, a.rounds, a.duration))
        if a.what == "io" and not a.no_strace:
            syscalls(a.bin, targets, scenarios)
    else:
        {"split": split, "scrape": scrape, "plaintext": plaintext}[a.what](a)


if __name__ == "__main__":
    main()
