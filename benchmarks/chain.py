#!/usr/bin/python3
"""benchmarks/chain - what a hop costs: caller -> callme over loopback.

    benchmarks/chain [--duration S] [--rounds N] [--bin PATH] [--cpu N] [--load-cpu N] [--java fixed,virtual|none]
                     [--baseline PATH]

Starts callme and caller (one worker each, both pinned with taskset to one CPU, --cpu,
default 0: the whole chain on one core) and runs wrk pinned to --load-cpu (default 1) against, in turn
(A B A B for --rounds rounds), callme's /callme/ping directly and caller's /caller/ping
(which stores its event and calls callme's /callme/ping over a pooled keep-alive
connection), at the same load: -c1 (a single client: the hop's latency, unloaded) and -c32
(closed-loop saturation: the chain's requests/s on one core). The hop's cost is the
difference of the medians: p50/p99 of /caller/ping minus /callme/ping. Also prints the
caller's upstream counters (every call must be ok). The event store's cost per insert is
benchmarks/store_bench's (docs/benchmarks.md).

--java (default fixed) adds seed 000's pair on JDK 21 (benchmarks/peers/java/Chain.java:
HttpServer + HttpClient, the event in H2 in memory through JDBC, B3 forwarded), per
THREAD_TYPE, pinned to the same CPU, measured in the same rounds: rows "java21-fixed callme
direct" and "java21-fixed caller -> callme"; a Java peer that does not start or answers
another body than primed's fails the run (benchmarks/peers/java/chain21.py).

Takes the measurement lock and refuses to publish a contaminated run (benchmarks/lib/quiet.py).
Prints a Markdown table on stdout; progress on stderr. Needs wrk and taskset.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(HERE, "lib"))
import bench  # noqa: E402
import quiet  # noqa: E402
import spawn  # noqa: E402
sys.path.insert(0, os.path.join(HERE, "peers", "java"))
import chain21  # noqa: E402  (the JDK 21 callme and caller)

log = bench.logger("chain")


def start(binary, cpu, args, env):
    return bench.start_pinned(binary, cpu, args, env)


def wrk(port, path, conns, secs, load_cpu):
    return bench.wrk("http://127.0.0.1:%d%s" % (port, path), conns, secs, threads=1, timeout_s=10, cpus=load_cpu,
                     timeout=secs + 30)


def main():
    ap = argparse.ArgumentParser(prog="benchmarks/chain", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--duration", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "src", "primed"))
    ap.add_argument("--cpu", type=int, default=0)
    ap.add_argument("--load-cpu", type=int, default=1 if (os.cpu_count() or 1) > 1 else None,
                    help="CPU wrk is pinned to (default 1; unpinned on a 1-CPU machine)")
    ap.add_argument("--java", default="fixed",
                    help="the JDK 21 pair (benchmarks/peers/java/Chain.java) beside primed's, per THREAD_TYPE: "
                         "fixed, virtual, fixed,virtual or none (fixed: 200 threads, the seed's Tomcat)")
    ap.add_argument("--baseline", metavar="PATH",
                    help="another primed (an older build): its callme and caller measured in the same rounds, "
                         "rows 'baseline callme direct' and 'baseline caller -> callme'")
    a = ap.parse_args()
    a.java = [] if a.java == "none" else a.java.split(",")
    if a.baseline and not os.access(a.baseline, os.X_OK):
        sys.exit("chain: --baseline %s is not an executable" % a.baseline)
    if any(t not in ("fixed", "virtual") for t in a.java):
        sys.exit("chain: --java takes fixed, virtual, both or none")
    if not os.access(a.bin, os.X_OK):
        sys.exit("chain: %s is not built (meson setup build && ninja -C build)" % a.bin)
    quiet.guard("benchmarks/chain", table=sys.stdout)
    rev = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                         text=True).stdout.strip()
    print("<!-- benchmarks/chain --duration %d --rounds %d --cpu %d; %s; commit %s; %s; load %s -->" % (
        a.duration, a.rounds, a.cpu, os.uname().release, rev, time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        open("/proc/loadavg").read().split()[0]))

    env = {"POD_NAME": "bench-pod", "POD_NAMESPACE": "bench"}
    callme = start(a.bin, a.cpu, [], dict(env, APP_NAME="callme"))
    caller = start(a.bin, a.cpu, ["--callme-url", "http://127.0.0.1:%d/callme/ping" % callme.port],
                   dict(env, APP_NAME="caller"))
    res = {}
    jpeers, pairs = [], [("callme direct", callme.port, "/callme/ping"), ("caller -> callme", caller.port, "/caller/ping")]
    try:
        if a.baseline:
            bcallme = start(a.baseline, a.cpu, [], dict(env, APP_NAME="callme"))
            jpeers.append(bcallme)
            bcaller = start(a.baseline, a.cpu, ["--callme-url", "http://127.0.0.1:%d/callme/ping" % bcallme.port],
                            dict(env, APP_NAME="caller"))
            jpeers.append(bcaller)
            pairs += [("baseline callme direct", bcallme.port, "/callme/ping"),
                      ("baseline caller -> callme", bcaller.port, "/caller/ping")]
            for _ in range(2):
                spawn.http_get(bcaller.port, "/caller/ping")
        if a.java:
            jp, jrows = chain21.start(a, env)
            jpeers += jp
            pairs += jrows
            for _, port, path in jrows[1::2]:
                for _ in range(2):
                    spawn.http_get(port, path)
        for _ in range(2):  # warm-up: the pool's connection, the store's first pages
            spawn.http_get(caller.port, "/caller/ping")
        wrk(caller.port, "/caller/ping", 4, 1, a.load_cpu)
        for r in range(a.rounds):
            for conns in (1, 32):
                for name, port, path in pairs:
                    log("round %d: %s -c%d" % (r + 1, name, conns))
                    res.setdefault((conns, name), []).append(wrk(port, path, conns, a.duration, a.load_cpu))
        m = spawn.parse_metrics(spawn.http_get(caller.port, "/metrics")[1])
    finally:
        for p in jpeers:
            p.stop()
        caller.stop()
        callme.stop()

    def med(rows, k):
        return statistics.median(x[k] for x in rows)

    print("\n### Chain: caller -> callme on one core (%s)\n" % ("CPU %d" % a.cpu))
    print("| load | target | req/s | p50 ms | p99 ms | errors |")
    print("|---|---|---|---|---|---|")
    for conns in (1, 32):
        for name, _, _ in pairs:
            rs = res[(conns, name)]
            print("| -c%d | %s | %.0f | %.3f | %.3f | %d |" % (conns, name, med(rs, "rps"), med(rs, "p50_us") / 1e3,
                                                                med(rs, "p99_us") / 1e3, sum(x["errors"] for x in rs)))
    print("\n| load | pair | hop p50 ms | hop p99 ms | chain req/s / direct req/s |")
    print("|---|---|---|---|---|")
    for conns in (1, 32):
        for (dn, _, _), (cn, _, _) in zip(pairs[0::2], pairs[1::2]):
            d, c = res[(conns, dn)], res[(conns, cn)]
            print("| -c%d | %s | %.3f | %.3f | %.2f |" % (conns, cn.rsplit(" caller", 1)[0]
                                                          if cn.startswith(("java", "baseline")) else "primed", (med(c, "p50_us") - med(d, "p50_us")) / 1e3,
                                                          (med(c, "p99_us") - med(d, "p99_us")) / 1e3,
                                                          med(c, "rps") / med(d, "rps")))
    calls = {k: v for k, v in m.items() if k.startswith("primed_upstream_calls_total") and v}
    print("\ncaller's upstream calls: %s" % ", ".join("%s %d" % (k.split("result=")[1].rstrip("}"), v)
                                                       for k, v in sorted(calls.items())))


if __name__ == "__main__":
    main()
