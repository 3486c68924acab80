#!/usr/bin/python3
"""benchmarks/rss.py - primed's resident memory, idle and holding N keep-alive connections.

    benchmarks/rss.py [--conns 1000] [--rounds 3] [--threads 2] NAME=BINARY [NAME=BINARY ...]

For each target, interleaved over --rounds: start BINARY on 127.0.0.1 (--port 0, --threads T,
the default --max-conns, an fd limit of 16384), answer one /healthz, read VmRSS from
/proc/PID/status ("idle"); then open --conns connections, send one /healthz on each and read its
answer, keeping every connection open, and read VmRSS and VmHWM again ("at N"). Prints a Markdown
table of medians: idle, at N, and (at N - idle) / N per connection. Memory is not a rate, but the
run still takes the measurement lock and reports its contamination like every other benchmark:

    benchmarks/rss.py default=build-check/src/primed lto-static=build-lto-static/src/primed
"""
import argparse
import os
import resource
import statistics
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import pathlib, sys  # noqa: E401  the scripts' one package: benchmarks/lib/primedlab, found from any folder
sys.path.insert(0, str(next(p for p in pathlib.Path(__file__).resolve().parents if (p / "benchmarks/lib/primedlab").is_dir()) / "benchmarks/lib"))
from primedlab import bench, quiet, spawn  # noqa: E402

NOFILE = 16384
log = bench.logger("rss")


def status_kb(srv, key):
    kb = srv.status_kib(key)
    if kb is None:
        raise RuntimeError("no %s in /proc/%d/status" % (key, srv.pid))
    return kb


def one(binary, conns, threads):
    # the default --max-conns (10000, split over the workers) and an fd limit above it, as in a pod:
    # the ring's completion queue is sized from what is left of them, and so is part of the RSS
    # without MALLOC_PERTURB_ (meson sets it for tests): glibc would fill every allocation, the
    # connection arena included, and the idle figure would be the arena's whole size
    env = {k: v for k, v in os.environ.items() if k != "MALLOC_PERTURB_"}
    srv = spawn.Primed(binary, ["--threads", str(threads)], env=env, ready_timeout=20, nofile=NOFILE)
    socks = []
    try:
        for c in spawn.hold_keepalive(srv.port, 1, timeout=5):
            c.close()
        time.sleep(0.3)
        idle = status_kb(srv, "VmRSS")
        socks = spawn.hold_keepalive(srv.port, conns)
        time.sleep(0.3)
        return idle, status_kb(srv, "VmRSS"), status_kb(srv, "VmHWM")
    finally:
        for c in socks:
            c.close()
        srv.stop(20)



def main():
    ap = argparse.ArgumentParser(prog="benchmarks/rss.py", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("targets", nargs="+", metavar="NAME=BINARY")
    ap.add_argument("--conns", type=int, default=1000, help="keep-alive connections held (default 1000)")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    ap.add_argument("--threads", type=int, default=2, help="--threads for each server (default 2)")
    a = ap.parse_args()
    targets = []
    for t in a.targets:
        name, sep, binary = t.partition("=")
        if not sep or not name or not os.access(binary, os.X_OK):
            sys.exit("rss: '%s' is not NAME=BINARY with an executable BINARY" % t)
        targets.append((name, binary))
    if a.conns < 1 or a.rounds < 1 or a.threads < 1:
        sys.exit("rss: --conns, --rounds and --threads must be at least 1")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = max(a.conns + 256, NOFILE)
    if hard != resource.RLIM_INFINITY and hard < need:
        sys.exit("rss: the fd limit (hard %d) is below the %d this run needs" % (hard, need))
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, need), hard))
    quiet.guard("benchmarks/rss.py", table=sys.stdout)
    print(bench.stamp("benchmarks/rss.py --conns %d --rounds %d --threads %d" % (a.conns, a.rounds, a.threads)))
    res = {}
    for r in range(a.rounds):
        for name, binary in targets:
            log("%s round %d" % (name, r + 1))
            res.setdefault(name, []).append(one(binary, a.conns, a.threads))
    med = {name: [statistics.median(x[i] for x in res[name]) for i in range(3)] for name, _ in targets}
    bench.print_table("RSS: idle, holding %d keep-alive connections, and its peak" % a.conns,
                      ["target", "RSS idle MiB", "RSS at %d conns MiB" % a.conns, "peak (VmHWM) MiB",
                       "per connection KiB"],
                      [[name] + ["%.1f" % (x / 1024) for x in (idle, held, hwm)] + ["%.1f" % ((held - idle) / a.conns)]
                       for name, (idle, held, hwm) in med.items()])


if __name__ == "__main__":
    main()
