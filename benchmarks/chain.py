#!/usr/bin/python3
"""benchmarks/chain.py - what a hop costs: caller -> callme over loopback.

Starts callme and caller (one worker each, both pinned with taskset to one CPU, --cpu,
default 0: the whole chain on one core) and runs wrk pinned to --load-cpu (default 1) against, in turn
(A B A B for --rounds rounds), callme's /callme/ping directly and caller's /caller/ping
(which stores its event and calls callme's /callme/ping over a pooled keep-alive
connection), at the same load: -c1 (a single client: the hop's latency, unloaded) and -c32
(closed-loop saturation: the chain's requests/s on one core). The hop's cost is the
difference of the medians: p50/p99 of /caller/ping minus /callme/ping. Also prints the
caller's upstream counters (every call must be ok). The event store's cost per insert is
benchmarks/store_bench's (docs/benchmarks.md).

nginx (Debian's, 1 worker, benchmarks/peers/nginx-proxy.conf: a reverse proxy with upstream
keep-alive) in front of the same callme, pinned to the same CPU, measured in the same rounds:
row "nginx -> callme". Its hop beside primed's is the question a caller's cost answers: what
a primed caller adds against what a plain proxy adds (--no-nginx leaves it out).

The Java pairs (--java; benchmarks/peers/java/chain21.py, docs/java-peers.md) and a --baseline
pair run pinned to the same CPU, in the same rounds: rows "java21-fixed callme direct",
"tomcat-platform caller -> callme", ...; a Java peer that does not start or answers another body
than primed's fails the run. Each Java pair is warmed before the rounds as the lab warms its JVM
rows: wrk -c32 on its caller in 6 s runs until the per-second rate settles (two ten-second means
within 10 %) or --warm-max s pass; the output says how each went. --db postgresql stores every
pair's events in a PostgreSQL cluster (benchmarks/lib/primedlab/pglib.py) pinned to --cpu with
the pairs, primed's measured once it answers 200 (it connects after its ready line); a
--baseline pair keeps its store in memory.

--counts adds what a request costs in events that hypervisor steal does not bend: context
switches and system calls per request of the server processes (callme; caller and callme;
nginx's master and worker and callme), by `perf stat -p` over a -c1 wrk run of each target.

Takes the measurement lock and refuses to publish a contaminated run (benchmarks/lib/primedlab/quiet.py).
Prints a Markdown table on stdout; progress on stderr. Needs wrk and taskset.
"""
import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
import pathlib, sys  # noqa: E401  the scripts' one package: benchmarks/lib/primedlab, found from any folder
sys.path.insert(0, str(next(p for p in pathlib.Path(__file__).resolve().parents if (p / "benchmarks/lib/primedlab").is_dir()) / "benchmarks/lib"))
from primedlab import bench, lab_measure, pglib, quiet, spawn  # noqa: E402
sys.path.insert(0, os.path.join(bench.BENCH_DIR, "peers", "java"))
import chain21  # noqa: E402  (the JDK 21 callme and caller)

log = bench.logger("chain")
COUNTED = ("context-switches", "raw_syscalls:sys_enter")
LOADS = (1, 32)   # wrk -c: a single client (the hop's latency), closed-loop saturation


def nginx_proxy(cpu, upstream_port):
    """Debian's nginx, one worker, as a reverse proxy to 127.0.0.1:upstream_port, pinned to cpu,
    in its own process group (a spawn.Group)."""
    port = spawn.free_port()
    env = dict(os.environ, PORT=str(port), NGINX_WORKERS="1", UPSTREAM_PORT=str(upstream_port),
               NGINX_CONF=os.path.join(bench.BENCH_DIR, "peers", "nginx-proxy.conf"))
    cmd = subprocess.run([os.path.join(bench.BENCH_DIR, "peers", "nginx-run"), "--prepare"], env=env,
                         capture_output=True, text=True, check=True).stdout.split()
    return spawn.Group(bench.taskset(cpu) + cmd, port)


def counts(pids, port, path, secs, load_cpu):
    """perf stat's COUNTED events of pids (every thread) over one wrk -c1 run of secs: a dict
    event -> per request, plus "requests"."""
    with tempfile.NamedTemporaryFile("r", suffix=".csv") as out:
        perf = subprocess.Popen(["perf", "stat", "-x,", "-o", out.name, "-e", ",".join(COUNTED),
                                 "-p", ",".join(map(str, pids))], stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.3)  # attached
        st = wrk(port, path, 1, secs, load_cpu)
        perf.send_signal(signal.SIGINT)
        perf.wait(15)
        got = {}
        for line in out.read().splitlines():
            f = line.split(",")
            if len(f) > 2 and f[2] in COUNTED and f[0].strip().isdigit():
                got[f[2]] = int(f[0])
    n = max(int(st["requests"]), 1)
    return dict({k: got.get(k, 0) / n for k in COUNTED}, requests=n)


def wrk(port, path, conns, secs, load_cpu):
    return bench.wrk("http://127.0.0.1:%d%s" % (port, path), conns, secs, threads=1, timeout_s=10, cpus=load_cpu,
                     timeout=secs + 30)


def main():
    ap = argparse.ArgumentParser(prog="benchmarks/chain.py", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--duration", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--bin", default=os.path.join(bench.REPO_ROOT, "build", "src", "primed"))
    ap.add_argument("--cpu", type=int, default=0)
    ap.add_argument("--load-cpu", type=int, default=1 if (os.cpu_count() or 1) > 1 else None,
                    help="CPU wrk is pinned to (default 1; unpinned on a 1-CPU machine)")
    ap.add_argument("--java", default="fixed,tomcat-platform,tomcat-virtual,netty",
                    help="Java pairs beside primed's: fixed, virtual (benchmarks/peers/java/Chain.java's THREAD_TYPE; "
                         "fixed: 200 threads), tomcat-platform, tomcat-virtual, netty (TomcatPeer.java, NettyPeer.java); "
                         "a comma list, or none")
    ap.add_argument("--db", choices=["memory", "postgresql"], default="memory",
                    help="the event store of every pair: memory (primed's :memory:, the Java pairs' H2 in memory) or "
                         "postgresql (a cluster of Debian's PostgreSQL on 127.0.0.1, pinned to --cpu, one database per "
                         "process: primed through libpq, Tomcat and Netty through pgjdbc; Chain.java has H2 only)")
    ap.add_argument("--baseline", metavar="PATH",
                    help="another primed (an older build): its callme and caller measured in the same rounds, "
                         "rows 'baseline callme direct' and 'baseline caller -> callme'")
    ap.add_argument("--counts", action="store_true",
                    help="context switches and system calls per request of each target (perf stat)")
    ap.add_argument("--no-nginx", action="store_true", help="leave out nginx as a reverse proxy in front of callme")
    ap.add_argument("--warm-max", type=int, default=60,
                    help="longest warm-up of each Java pair before the rounds, s (default 60)")
    a = ap.parse_args()
    if a.counts and not shutil.which("perf"):
        sys.exit("chain: --counts needs perf (apt-get install linux-perf)")
    if not a.no_nginx and not os.access("/usr/sbin/nginx", os.X_OK):
        sys.exit("chain: /usr/sbin/nginx is missing (apt-get install nginx, or --no-nginx)")
    a.java = [] if a.java == "none" else a.java.split(",")
    if a.baseline and not os.access(a.baseline, os.X_OK):
        sys.exit("chain: --baseline %s is not an executable" % a.baseline)
    if any(t not in chain21.TYPES for t in a.java):
        sys.exit("chain: --java takes a list of %s, or none" % ",".join(chain21.TYPES))
    if a.db == "postgresql":
        if any(t not in chain21.STACKS for t in a.java):
            sys.exit("chain: --db postgresql: Chain.java (--java fixed, virtual) stores in H2 only; give --java %s"
                     % ",".join(chain21.STACKS))
        if not pglib.bindir():
            sys.exit("chain: --db postgresql needs PostgreSQL (profiles/deps @test installs postgresql-15)")
    if not os.access(a.bin, os.X_OK):
        sys.exit("chain: %s is not built (meson setup build && ninja -C build)" % a.bin)
    quiet.guard("benchmarks/chain.py", table=sys.stdout)
    print(bench.stamp("benchmarks/chain.py --duration %d --rounds %d --cpu %d" % (a.duration, a.rounds, a.cpu)))

    env = {"POD_NAME": "bench-pod", "POD_NAMESPACE": "bench"}
    pg = pglib.Postgres(cpu=a.cpu) if a.db == "postgresql" else None
    try:
        run(a, env, pg)
    finally:
        if pg:
            pg.close()


def database(pg, name):
    """A new database NAME in pg for one process: (primed's environment, the Java peers')."""
    pg.psql("CREATE DATABASE %s OWNER primed" % name)
    url = "postgresql://primed@127.0.0.1:%d/%s" % (pg.port, name)
    return ({"PRIMED_DB": url, "PGPASSWORD": pglib.PASSWORD},
            {"DB_URL": "jdbc:postgresql://127.0.0.1:%d/%s" % (pg.port, name), "DB_USER": "primed",
             "DB_PASSWORD": pglib.PASSWORD})


def start_pair(binary, cpu, env, started, prefix="", callme_env=None, caller_env=None):
    """primed's callme, then its caller calling it, pinned to cpu, each added to started as it
    starts: their rows (name, port, path, the pids --counts counts), callme direct first."""
    callme = bench.start_pinned(binary, cpu, [], dict(env, APP_NAME="callme", **(callme_env or {})))
    started.append(callme)
    caller = bench.start_pinned(binary, cpu, ["--callme-url", "http://127.0.0.1:%d/callme/ping" % callme.port],
                                dict(env, APP_NAME="caller", **(caller_env or {})))
    started.append(caller)
    return [(prefix + "callme direct", callme.port, "/callme/ping", [callme.pid]),
            (prefix + "caller -> callme", caller.port, "/caller/ping", [caller.pid, callme.pid])]


def run(a, env, pg):
    penv = ({}, {})
    if pg:
        penv = tuple(database(pg, "primed_" + n)[0] for n in ("callme", "caller"))
        a.java_db = lambda pair, n: database(pg, ("%s_%s" % (pair, n)).replace("-", "_"))[1]
    started, res, cnt, warmed, proxied = [], {}, {}, {}, []
    try:
        pairs = start_pair(a.bin, a.cpu, env, started, "", *penv)   # callme direct, caller -> callme, ...
        callme, caller = started
        if pg:   # primed connects to PostgreSQL after its ready line: measure once both store
            for _, port, path, _ in pairs:
                if not spawn.wait_ok(port, path, 15):
                    sys.exit("chain: primed's %s did not answer 200 within 15 s on PostgreSQL" % path)
        if a.baseline:
            pairs += start_pair(a.baseline, a.cpu, env, started, "baseline ")
            for _ in range(2):
                spawn.http_get(started[-1].port, "/caller/ping")
        if not a.no_nginx:
            nginx = nginx_proxy(a.cpu, callme.port)
            started.append(nginx)
            st, body = spawn.http_get(nginx.port, "/callme/ping")
            if st != 200:
                raise RuntimeError("nginx -> callme answered %d: %r" % (st, body[:200]))
            proxied = [("nginx -> callme", nginx.port, "/callme/ping",
                        [p.pid for p in spawn.group(nginx.pid)] + [callme.pid])]
        if a.java:
            jp, jrows = chain21.start(a, env)
            started += jp
            pairs += [row + (None,) for row in jrows]    # --counts leaves them out
            for name, port, path in jrows[1::2]:
                for _ in range(2):
                    spawn.http_get(port, path)
                warmed[name] = lab_measure.warm_url(name, port, path, a.load_cpu, conns=32, max_s=a.warm_max)
        for _ in range(2):  # warm-up: the pool's connection, the store's first pages
            spawn.http_get(caller.port, "/caller/ping")
        wrk(caller.port, "/caller/ping", 4, 1, a.load_cpu)
        targets = pairs[:2] + proxied + pairs[2:]
        for r in range(a.rounds):
            for conns in LOADS:
                for name, port, path, _ in targets:
                    log("round %d: %s -c%d" % (r + 1, name, conns))
                    res.setdefault((conns, name), []).append(wrk(port, path, conns, a.duration, a.load_cpu))
        for name, port, path, pids in targets if a.counts else []:
            if pids:
                log("counts: %s -c1" % name)
                cnt[name] = counts(pids, port, path, a.duration, a.load_cpu)
        m = spawn.parse_metrics(spawn.http_get(caller.port, "/metrics")[1])
    finally:
        for p in reversed(started):
            p.stop()
    report(a, pg, res, [n for n, *_ in pairs], [n for n, *_ in proxied], cnt, warmed, m)


def report(a, pg, res, pairs, proxied, cnt, warmed, metrics):
    """The tables; pairs: the rows' names in pairs (callme direct, then its caller), proxied: nginx's."""
    med = bench.med
    order = pairs[:2] + proxied + pairs[2:]
    bench.print_table("Chain: caller -> callme on one core (CPU %d; event store: %s)" % (
        a.cpu, "PostgreSQL, a database per process" if pg else "in memory"),
        ["load", "target", "req/s", "p50 ms", "p99 ms", "errors"],
        [["-c%d" % c, name, bench.wrk_cells(res[(c, name)])] for c in LOADS for name in order])

    def hop(conns, label, d, c):    # what the hop adds over the direct call at the same load
        d, c = res[(conns, d)], res[(conns, c)]
        return ["-c%d" % conns, label, "%.3f" % ((med(c, "p50_us") - med(d, "p50_us")) / 1e3),
                "%.3f" % ((med(c, "p99_us") - med(d, "p99_us")) / 1e3), "%.2f" % (med(c, "rps") / med(d, "rps"))]
    rows = []
    for conns in LOADS:
        for direct, called in zip(pairs[0::2], pairs[1::2]):
            label = "primed" if called == pairs[1] else called.rsplit(" caller", 1)[0]
            rows.append(hop(conns, label, direct, called))
        rows += [hop(conns, "nginx (proxy)", pairs[0], name) for name in proxied]
    bench.print_table("Chain: what the hop costs", ["load", "pair", "hop p50 ms", "hop p99 ms",
                                                     "chain req/s / direct req/s"], rows)
    if cnt:
        bench.print_table("Chain: events per request", ["target (-c1, perf stat)", "requests",
                                                         "context switches / request", "system calls / request"],
                          [[name, c["requests"], "%.2f" % c[COUNTED[0]], "%.2f" % c[COUNTED[1]]]
                           for name, c in cnt.items()])
    if warmed:
        print("\nJVM warm-up before the rounds (wrk -c32 on the caller): %s" % "; ".join(
            "%s %s in %d s" % (n.rsplit(" caller", 1)[0], "settled" if w["settled"] else "NOT settled", w["seconds"])
            for n, w in warmed.items()))
    calls = {k: v for k, v in metrics.items() if k.startswith("primed_upstream_calls_total") and v}
    print("\ncaller's upstream calls: %s" % ", ".join("%s %d" % (k.split("result=")[1].rstrip("}"), v)
                                                       for k, v in sorted(calls.items())))


if __name__ == "__main__":
    main()
