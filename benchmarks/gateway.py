#!/usr/bin/python3
"""benchmarks/gateway.py - seed 003's siege scenario on loopback: a gateway in front of a catalog
and an inventory, the inventory delayed by a fault rule.

Starts three primed processes on 127.0.0.1 (one worker each, --threads 1, pinned with taskset
to --cpu, default 0): the catalog, the inventory and the gateway (--catalog-url and
--inventory-url naming the other two, --upstream-timeout T, default 3 s). Then four
scenarios, one row each: {no delay, inventory delayed D (default 2 s: the inventory started
with --fault-delay D --fault-path /api/inventory)} x {parallel fan-out, sequential
(?fanout=sequential)}. Between the two delay settings the inventory is restarted with the
fault, and the gateway with it (the inventory comes back on a new ephemeral port, and a
fresh gateway holds no pooled connection to the old one); the catalog stays up.

Each scenario is seed 003's load: `siege -R benchmarks/lib/siegerc -r 10 -c 10
http://127.0.0.1:PORT/api/products[?fanout=sequential]` (Debian's siege 4.0.7; its --json
summary), from --load-cpu (default 1; not pinned on a 1-CPU machine). Around each siege the
gateway's /metrics is read: the fallback share is primed_gateway_fallbacks_total's increase
over (the /api/products answered 200 x the catalog's products), i.e. the share of products
that went out with "availability": null.

With D < T < 8 x D the scenarios tell the fan-outs apart (docs/gateway.md#benchmark says how,
and what the connection pool adds). --quick (the CI smoke, tests/bench/gateway): delay 0.3 s,
upstream timeout 1 s (0.3 < 1 < 2.4 s), siege -r 2 -c 4, quiet wait 2 s; its figures are not
to be quoted.

The Java gateways (--java, default all,stacks; --quick none; docs/java-peers.md) run each
setting's siege after primed's, over the same catalog and inventory, then in the delayed setting
a harder load (--hard-users, past the servlet pool, --hard-reps) runs against primed and every
model. A second table lists them all with the CPU seconds and peak RSS of each gateway (and
DIR/gateway-java.csv); benchmarks/peers/java/gateway21.py.

Takes the measurement lock and waits for a quiet machine (benchmarks/lib/primedlab/quiet.py);
the whole run's contamination is the table's last line. Prints a Markdown table on stdout (and,
with --out DIR, into DIR/table.md with DIR/gateway.csv beside it); progress on stderr. Needs
siege and taskset.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time

sys.dont_write_bytecode = True
import pathlib, sys  # noqa: E401  the scripts' one package: benchmarks/lib/primedlab, found from any folder
sys.path.insert(0, str(next(p for p in pathlib.Path(__file__).resolve().parents if (p / "benchmarks/lib/primedlab").is_dir()) / "benchmarks/lib"))
from primedlab import bench, lab, quiet, spawn  # noqa: E402
sys.path.insert(0, os.path.join(bench.BENCH_DIR, "peers", "java"))
import gateway21  # noqa: E402  (the JDK 21 gateways' rows)
import peer21  # noqa: E402

SIEGERC = os.path.join(bench.BENCH_DIR, "lib", "siegerc")
CSV_COLS = ["scenario", "fanout", "delay_s", "upstream_timeout_s", "reps", "users", "availability",
            "transactions", "successful_transactions", "failed_transactions", "transaction_rate",
            "response_time", "longest_transaction", "shortest_transaction", "elapsed_time",
            "answered_200", "products", "fallbacks", "fallback_share", "other_cpu_pct", "steal_pct",
            "top", "error"]
# what a surrounding shell might set that would change what the three processes do
SCRUB = ("PRIMED_CATALOG", "PRIMED_CATALOG_URL", "PRIMED_INVENTORY_URL", "PRIMED_FANOUT",
         "PRIMED_UPSTREAM_TIMEOUT", "PRIMED_UPSTREAM_CONNS", "PRIMED_FAULT_DELAY", "PRIMED_FAULT_DELAY_PERCENT",
         "PRIMED_FAULT_ABORT", "PRIMED_FAULT_ABORT_PERCENT", "PRIMED_FAULT_PATH", "PRIMED_THREADS",
         "PRIMED_ZIPKIN_URL", "ZIPKIN_URL", "PRIMED_ACCESS_LOG")


log = bench.logger("gateway")


class Tee:
    """stdout and, with --out, table.md: the guard writes the contamination line to both at exit."""

    def __init__(self, path=None):
        self.f = open(path, "w") if path else None

    def write(self, s):
        sys.stdout.write(s)
        if self.f:
            self.f.write(s)

    def flush(self):
        sys.stdout.flush()
        if self.f:
            self.f.flush()


def counters(port):
    """(/api/products answered 200, products answered with null availability) from the gateway."""
    m = spawn.parse_metrics(spawn.http_get(port, "/metrics")[1])
    return (m.get('primed_http_requests_total{path="/api/products",code="200"}', 0.0),
            m.get("primed_gateway_fallbacks_total", 0.0))


def settled_counters(port, quiet_s=0.5, max_s=5.0):
    """counters() once two reads quiet_s apart agree, at most max_s: the requests a warm-up left in
    flight (its wrk's last ones, abandoned at its end) are still answered, and counted, after it."""
    end, last = time.monotonic() + max_s, counters(port)
    while time.monotonic() < end:
        time.sleep(quiet_s)
        now = counters(port)
        if now == last:
            break
        last = now
    return last


def scenario(a, gw, name, delay, fanout, nproducts, load_cpus):
    path = "/api/products" + ("?fanout=sequential" if fanout == "sequential" else "")
    # warm-up, and a check that the chain answers at all: one request on the path measured
    st, body = spawn.http_get(gw.port, path, timeout=a.upstream_timeout + 10)
    if st != 200:
        raise RuntimeError("%s %s: warm-up answered %d: %s" % (name, fanout, st, body[:200]))
    ok0, fb0 = settled_counters(gw.port)
    log("%s, %s: siege -r %d -c %d %s" % (name, fanout, a.reps, a.users, path))
    r = lab.run_siege(gw, path, SIEGERC, load_cpus, reps=a.reps, users=a.users)
    ok1, fb1 = settled_counters(gw.port)
    answered, fallbacks = int(ok1 - ok0), int(fb1 - fb0)
    r.update({"scenario": name, "fanout": fanout, "delay_s": delay, "upstream_timeout_s": a.upstream_timeout,
              "reps": a.reps, "users": a.users, "answered_200": answered, "products": nproducts,
              "fallbacks": fallbacks,
              "fallback_share": 100.0 * fallbacks / (answered * nproducts) if answered and nproducts else None})
    if "error" in r:
        log("%s, %s: %s" % (name, fanout, r["error"]))
    else:
        log("%s, %s: availability %.2f %%, %.2f trans/s, longest %.2f s, fallback share %s" % (
            name, fanout, r["availability"], r["transaction_rate"], r["longest_transaction"],
            "-" if r["fallback_share"] is None else "%.1f %%" % r["fallback_share"]))
    return r


def row(r):
    fs = "-" if r.get("fallback_share") is None else "%.1f %% (%d of %d)" % (
        r["fallback_share"], r["fallbacks"], r["answered_200"] * r["products"])
    if "error" in r:
        return "| %s | %s | failed: %s | | | | | | %s |" % (r["scenario"], r["fanout"],
                                                          r["error"].replace("|", "/")[:80], fs)
    # siege times a run to 10 ms and divides by it: a shorter run reports 0 transactions/s
    rate = "%.2f" % r["transaction_rate"] if r["elapsed_time"] > 0 else "n/a (run < 10 ms)"
    return "| %s | %s | %.2f %% | %d | %s | %.3f | %.3f | %d | %s |" % (
        r["scenario"], r["fanout"], r["availability"], r["transactions"], rate,
        r["response_time"], r["longest_transaction"], r["failed_transactions"], fs)


def main():
    ap = argparse.ArgumentParser(prog="benchmarks/gateway.py", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--delay", type=float, default=None, help="inventory's fault delay, s (2; --quick 0.3)")
    ap.add_argument("--upstream-timeout", type=float, default=None, help="the gateway's, s (3; --quick 1)")
    ap.add_argument("--reps", type=int, default=None, help="siege -r (10; --quick 2)")
    ap.add_argument("--users", type=int, default=None, help="siege -c (10; --quick 4)")
    ap.add_argument("--upstream-conns", type=int, default=None,
                    help="the gateway's connections per upstream (default: primed's, 64)")
    ap.add_argument("--bin", default=os.path.join(bench.REPO_ROOT, "build-default", "src", "primed"))
    ap.add_argument("--cpu", type=int, default=0, help="CPU of the three servers (0)")
    ap.add_argument("--load-cpu", type=int, default=1, help="CPU of siege (1; unpinned on a 1-CPU machine)")
    ap.add_argument("--quiet-wait", type=float, default=None, help="longest wait for a quiet machine, s (60; --quick 2)")
    ap.add_argument("--lock-wait", type=float, default=None,
                    help="longest wait for the measurement lock, s, then exit 3 (default: as long as it takes)")
    ap.add_argument("--out", help="directory for table.md and gateway.csv")
    ap.add_argument("--quick", action="store_true", help="CI smoke: 0.3 s delay, 1 s timeout, -r 2 -c 4")
    ap.add_argument("--java", default=None, help="Java gateway models beside primed's: none or a list of all (the JDK's "
                    "servlet,reactive,virtual), stacks (tomcat-platform,tomcat-virtual,netty) or single models "
                    "(all,stacks; --quick none); docs/java-peers.md")
    ap.add_argument("--java-pool", type=int, default=None, help="the servlet model's threads (200; --quick 4)")
    ap.add_argument("--hard-users", type=int, default=None,
                    help="siege -c of the harder setting, past the servlet pool (pool + 50; --quick 2 x pool; "
                         "siege refuses more than 255 users)")
    ap.add_argument("--hard-reps", type=int, default=2, help="siege -r of the harder setting (2)")
    ap.add_argument("--warm-max", type=int, default=None,
                    help="longest warm-up of each Java gateway before its siege, s (60; --quick 2)")
    a = ap.parse_args()
    q = a.quick
    bench.defaults(a, q, delay=(2.0, 0.3), upstream_timeout=(3.0, 1.0), reps=(10, 2), users=(10, 4),
                   quiet_wait=(60.0, 2.0), warm_max=(60, 2), java=("all,stacks", "none"), java_pool=(200, 4))
    a.java = gateway21.parse_models(a.java)
    a.hard_users = a.hard_users or (2 * a.java_pool if q else a.java_pool + 50)
    if not os.access(a.bin, os.X_OK):
        sys.exit("gateway: %s is not built (profiles/build default build-default, or --bin)" % a.bin)
    for tool in ("siege", "taskset"):
        if not shutil.which(tool):
            sys.exit("gateway: %s is not installed (profiles/deps)" % tool)
    load_cpus = [a.load_cpu] if (os.cpu_count() or 1) > 1 else []
    if a.out:
        os.makedirs(a.out, exist_ok=True)
    table = Tee(os.path.join(a.out, "table.md") if a.out else None)
    quiet.lock("benchmarks/gateway.py", max_wait=a.lock_wait)
    quiet.guard("benchmarks/gateway.py", max_wait=a.quiet_wait, table=table)
    table.write(bench.stamp("benchmarks/gateway.py%s --delay %g --upstream-timeout %g%s --reps %d --users %d --cpu %d" % (
        " --quick" if q else "", a.delay, a.upstream_timeout,
        " --upstream-conns %d" % a.upstream_conns if a.upstream_conns else "", a.reps, a.users, a.cpu)) + "\n")

    if a.java:
        log("JDK 21 gateways: %s" % peer21.prepare())   # install and compile before the clock runs
    if set(a.java) & set(gateway21.STACKS):
        p = subprocess.run([peer21.STACKS, "--compile-only"], capture_output=True, text=True, timeout=1800)
        if p.returncode != 0:
            sys.exit("gateway: the Tomcat and Netty gateways cannot start: %s" % (p.stdout + p.stderr).strip()[-600:])
        log("Tomcat and Netty gateways: %s" % p.stdout.strip())
    res, jres = [], []
    with bench.start_pinned(a.bin, a.cpu, [], scrub=SCRUB) as catalog:
        st, body = spawn.http_get(catalog.port, "/api/catalog")
        if st != 200:
            raise RuntimeError("catalog's /api/catalog answered %d: %s" % (st, body[:200]))
        nproducts = len(json.loads(body))
        upstream = ["--upstream-timeout", "%g" % a.upstream_timeout]
        upstream += ["--upstream-conns", str(a.upstream_conns)] if a.upstream_conns else []
        for name, delay in (("no delay", 0.0), ("inventory delayed %g s" % a.delay, a.delay)):
            fault = ["--fault-delay", "%g" % delay, "--fault-path", "/api/inventory"] if delay else []
            with bench.start_pinned(a.bin, a.cpu, fault, scrub=SCRUB) as inventory, \
                    bench.start_pinned(a.bin, a.cpu, ["--catalog-url", "http://127.0.0.1:%d" % catalog.port,
                                                      "--inventory-url", "http://127.0.0.1:%d" % inventory.port,
                                                      *upstream], scrub=SCRUB) as gw:
                for fanout in ("parallel", "sequential"):
                    res.append(peer21.timed(gw.pid, lambda: scenario(a, gw, name, delay, fanout, nproducts,
                                                                     load_cpus)))
                if a.java:
                    jres += res[-2:] + gateway21.models(a, scenario, catalog.port, inventory.port, name, delay,
                                                        nproducts, load_cpus)
                if a.java and delay:
                    jres += gateway21.harder(a, scenario, gw, catalog.port, inventory.port, name, delay,
                                             nproducts, load_cpus)

    table.write("\n### Gateway: siege -r %d -c %d on /api/products (seed 003's scenario, loopback)\n\n" % (
        a.reps, a.users))
    if q:
        table.write("**Quick smoke run (--quick): these figures are not to be quoted.**\n\n")
    table.write("catalog, inventory and gateway: one worker each on CPU %d; siege on %s. Inventory delayed "
                "with `--fault-delay %g --fault-path /api/inventory`; gateway `--upstream-timeout %g` `--upstream-conns %s`; "
                "%d products per answer.\n\n" % (a.cpu, "CPU %d" % load_cpus[0] if load_cpus else "any CPU",
                                                a.delay, a.upstream_timeout, a.upstream_conns or "64 (default)",
                                                nproducts))
    table.write("| scenario | fan-out | availability | transactions | trans/s | response time s "
                "| longest transaction s | failed | fallback share |\n")
    table.write("|---|---|---|---|---|---|---|---|---|\n")
    for r in res:
        table.write(row(r) + "\n")
    table.flush()
    if a.java:
        gateway21.report(table, a, jres)
    if a.out:
        bench.write_csv(os.path.join(a.out, "gateway.csv"), CSV_COLS, res)
    return 1 if any("error" in r for r in res + jres) else 0


if __name__ == "__main__":
    sys.exit(main())
