#!/usr/bin/python3
"""benchmarks/k6-local.py: the k6 scenario of benchmarks/k6/primed.js (50, 100, 200, 200 virtual
users, checks: status 200 and a non-empty body) run on this machine with wrk against a local
primed, scaled down in time (10 s per stage by default instead of 2 minutes).

One difference from k6: k6 ramps the users linearly over a stage, wrk holds the stage's final
count for the whole stage (the stage's worst case). Each wrk connection is one user sending
requests back to back, as in primed.js. Prints one row per stage and the server's memory.
"""
import argparse
import datetime
import os
import sys

sys.dont_write_bytecode = True          # no __pycache__ in the source tree
import pathlib, sys  # noqa: E401  the scripts' one package: benchmarks/lib/primedlab, found from any folder
sys.path.insert(0, str(next(p for p in pathlib.Path(__file__).resolve().parents if (p / "benchmarks/lib/primedlab").is_dir()) / "benchmarks/lib"))
from primedlab import bench, quiet  # noqa: E402

STAGES = (50, 100, 200, 200)        # virtual users, as in benchmarks/k6/primed.js


def main():
    ap = argparse.ArgumentParser(prog="benchmarks/k6-local.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--stage-seconds", type=int, default=10, help="seconds per stage (default 10)")
    ap.add_argument("--threads", type=int, default=2, help="PRIMED_THREADS (default 2)")
    ap.add_argument("--dispatch", default="inline", choices=("inline", "steal"))
    ap.add_argument("--binary", help="primed to run (default build/src/primed, built if missing)")
    ap.add_argument("--url", help="load this server instead of starting one (its base URL)")
    a = ap.parse_args()
    quiet.guard("benchmarks/k6-local.py", table=sys.stdout)
    bench.need_wrk()

    def run(url, mem, server=None):
        print(f"# k6-local  {datetime.date.today().isoformat()}  {bench.machine()}")
        print(f"# command: {' '.join([os.path.relpath(sys.argv[0])] + sys.argv[1:])}")
        if server:
            print(f"# server: {server}")
        print(f"# GET {url}, stages {'/'.join(map(str, STAGES))} users x {a.stage_seconds} s "
              "(k6: 2 min each, ramped)")
        print(f"{'stage':>5} {'users':>5} {'requests':>9} {'req/s':>8} {'p50 ms':>8} {'p95 ms':>8} "
              f"{'p99 ms':>8} {'max ms':>8} {'failed':>6} {'RSS MiB':>8}")
        failed = 0
        for i, users in enumerate(STAGES, 1):
            r = bench.wrk_checks(url, users, a.stage_seconds)
            rss = f"{mem()[0] / 1024:.1f}" if mem else "-"
            failed += r["errors"]
            print(f"{i:>5} {users:>5} {r['requests']:>9} {r['req_per_s']:>8.1f} {r['p50_us'] / 1e3:>8.1f} "
                  f"{r['p95_us'] / 1e3:>8.1f} {r['p99_us'] / 1e3:>8.1f} {r['max_us'] / 1e3:>8.1f} "
                  f"{r['errors']:>6} {rss:>8}")
        if mem:
            print(f"# primed VmHWM (peak RSS) {mem()[1] / 1024:.1f} MiB")
        print(f"# checks (status 200, non-empty body): {'all passed' if not failed else f'{failed} failed'}")
        return 1 if failed else 0

    if a.url:
        return run(a.url.rstrip("/") + "/example", None)
    exe = bench.built(a.binary)
    with bench.start_clean(exe, {"PRIMED_THREADS": str(a.threads), "PRIMED_DISPATCH": a.dispatch}) as srv:
        return run(srv.url(), srv.memory_kib,
                   f"{exe} PRIMED_THREADS={a.threads} PRIMED_DISPATCH={a.dispatch}")


if __name__ == "__main__":
    sys.exit(main())
