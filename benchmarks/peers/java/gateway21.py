"""benchmarks/peers/java/gateway21.py - benchmarks/gateway.py's Java rows: seed 003's gateway on
JDK 21 (Gateway.java) in its three models, and on embedded Tomcat (platform pool, virtual
threads) and Netty (TomcatPeer.java, NettyPeer.java through benchmarks/peers/java/stacks), over
the same catalog and inventory as primed's.

For each delay setting benchmarks/gateway.py calls models(): each model in turn is started pinned
to --cpu (one CPU, as primed's gateway, --threads 1), given the scenario's load through
benchmarks/gateway.py's own scenario() (the same siege, the same /metrics counters: Gateway.java
writes primed's names), and stopped. Before its siege each JVM is warmed as the lab warms its JVM
rows: wrk with the siege's users on /api/products in 6 s runs until its per-second rate settles
(primedlab.lab_measure.settled: two ten-second means within 10 %) or --warm-max s pass; the row
keeps how long (warmup_s) and whether it settled. In the delayed setting harder() then runs
--hard-users (more users than the servlet model's pool). A model that does not start raises
(peer21.PeerError): the run fails, it never skips a row.
"""
import argparse
import os

import peer21
from primedlab import bench, lab_measure     # the importing script has put the lab's package on the path

LABELS = {
    "servlet": "java21 servlet (%d threads, calls in turn)",
    "reactive": "java21 reactive (sendAsync + allOf)",
    "virtual": "java21 virtual threads (calls in turn)",
}
JDK = list(LABELS)
# The Tomcat and Netty gateways (TomcatPeer.java, NettyPeer.java through benchmarks/peers/java/stacks):
# model -> (class, environment, label). tomcat-platform's pool is --java-pool, as the servlet model's.
STACKS = {
    "tomcat-platform": ("TomcatPeer", {"EXECUTOR": "platform"}, "tomcat-platform servlet (%d threads, calls in turn)"),
    "tomcat-virtual": ("TomcatPeer", {"EXECUTOR": "virtual"}, "tomcat-virtual servlet (virtual threads, calls in turn)"),
    "netty": ("NettyPeer", {}, "netty reactive (event loops, all calls at once)"),
}
LABELS.update({m: v[2] for m, v in STACKS.items()})
CSV_COLS = ["setting", "gateway", "delay_s", "upstream_timeout_s", "reps", "users", "availability", "transactions",
            "failed_transactions", "transaction_rate", "response_time", "longest_transaction", "answered_200",
            "products", "fallbacks", "fallback_share", "cpu_s", "rss_mib", "other_cpu_pct", "steal_pct", "warmup_s",
            "warm_settled", "error"]


def parse_models(spec):
    """'none' | a comma list of all (the JDK's three), stacks (Tomcat's two and Netty), servlet,
    reactive, virtual, tomcat-platform, tomcat-virtual, netty -> list; SystemExit otherwise."""
    if spec in ("none", ""):
        return []
    ms = [x for m in spec.split(",") for x in {"all": JDK, "stacks": list(STACKS)}.get(m, [m])]
    for x in ms:
        if x not in LABELS:
            raise SystemExit("gateway: --java takes none or a list of all, stacks, %s, not %s"
                             % (", ".join(LABELS), x))
    return list(dict.fromkeys(ms))


def label(a, model):
    return LABELS[model] % a.java_pool if "%d" in LABELS[model] else LABELS[model]


def models(a, scenario, catalog_port, inventory_port, setting, delay, nproducts, load_cpus):
    up = {"UPSTREAM_TIMEOUT": "%g" % a.upstream_timeout, "CATALOG_URL": "http://127.0.0.1:%d" % catalog_port,
          "INVENTORY_URL": "http://127.0.0.1:%d" % inventory_port}
    rows = []
    for m in a.java:
        if m in STACKS:
            cls, env, _ = STACKS[m]
            peer = peer21.Peer(cls, dict(env, MAX_THREADS=a.java_pool, **up), cpu=a.cpu, runner=peer21.STACKS,
                               ready_timeout=90)
        else:
            peer = peer21.Peer("Gateway", dict(up, MODEL=m, POOL=a.java_pool), cpu=a.cpu)
        with peer:
            warm = lab_measure.warm_url(label(a, m), peer.port, "/api/products", load_cpus, conns=a.users,
                                        max_s=a.warm_max)
            rows.append(peer21.timed(peer.pid, lambda: scenario(a, peer, setting, delay, label(a, m), nproducts,
                                                                load_cpus)))
            rows[-1].update(warmup_s=warm["seconds"], warm_settled=warm["settled"])
    return rows


def harder(a, scenario, gw, catalog_port, inventory_port, setting, delay, nproducts, load_cpus):
    """The delayed setting again with --hard-users users: primed's gateway gw (still up, both
    fan-outs), then every model, each row's setting naming the load."""
    h = argparse.Namespace(**vars(a))
    h.users, h.reps = a.hard_users, a.hard_reps
    name = "%s, %d users (servlet pool %d)" % (setting, h.users, a.java_pool)
    rows = [peer21.timed(gw.pid, lambda: scenario(h, gw, name, delay, f, nproducts, load_cpus))
            for f in ("parallel", "sequential")]
    return rows + models(h, scenario, catalog_port, inventory_port, name, delay, nproducts, load_cpus)


def warmed(rows):
    """How the JVM rows' warm-ups went, in words: "all N settled" or the ones that did not."""
    jv = [r for r in rows if "warmup_s" in r]
    bad = ["%s (%s)" % (gateway_name(r), r["scenario"]) for r in jv if not r["warm_settled"]]
    return "all %d settled" % len(jv) if not bad else "%d of %d settled; not: %s" % (
        len(jv) - len(bad), len(jv), ", ".join(bad))


def gateway_name(r):
    f = r["fanout"]
    return "primed %s" % f if f in ("parallel", "sequential") else f


def report(table, a, rows):
    """The comparison table (primed's and the models' rows, in run order) and gateway-java.csv."""
    table.write("\n### Gateway models: primed and the Java gateways on JDK 21 (Gateway.java; Tomcat and Netty: "
                "TomcatPeer.java, NettyPeer.java), same catalog and inventory\n\n")
    if a.quick:
        table.write("**Quick smoke run (--quick): these figures are not to be quoted.**\n\n")
    table.write("Each gateway on CPU %d alone (primed `--threads 1`; the JVM pinned with taskset); `--upstream-timeout %g` "
                "for all; the servlet model's pool %d threads. CPU s: the gateway's user + system CPU during its "
                "siege; CPU µs / product: that CPU over the products answered (each one inventory call of the fan-out, the "
                "catalog call shared by the answer's products); RSS: its peak resident memory (VmHWM) by then. "
                "Each JVM warmed first until its rate settled (at most %d s; gateway-java.csv: warmup_s, "
                "warm_settled): %s.\n\n" % (a.cpu, a.upstream_timeout, a.java_pool, a.warm_max, warmed(rows)))
    table.write("| setting | gateway | availability | transactions | trans/s | response time s "
                "| longest transaction s | failed | fallback share | CPU s | CPU µs / product | peak RSS MiB |\n")
    table.write("|---|---|---|---|---|---|---|---|---|---|---|---|\n")
    for r in rows:
        g = gateway_name(r)
        fs = "-" if r.get("fallback_share") is None else "%.1f %% (%d of %d)" % (
            r["fallback_share"], r["fallbacks"], r["answered_200"] * r["products"])
        cpu = "-" if r.get("cpu_s") is None else "%.2f" % r["cpu_s"]
        rss = "-" if r.get("rss_mib") is None else "%.1f" % r["rss_mib"]
        nprod = (r.get("answered_200") or 0) * (r.get("products") or 0)
        per = "-" if r.get("cpu_s") is None or not nprod else "%.1f" % (r["cpu_s"] * 1e6 / nprod)
        if "error" in r:   # the siege's five cells left empty
            siege = "failed: %s | | | | |" % r["error"].replace("|", "/")[:80]
        else:
            rate = "%.2f" % r["transaction_rate"] if r["elapsed_time"] > 0 else "n/a (run < 10 ms)"
            siege = "%.2f %% | %d | %s | %.3f | %.3f | %d" % (r["availability"], r["transactions"], rate,
                                                            r["response_time"], r["longest_transaction"],
                                                            r["failed_transactions"])
        table.write("| %s | %s | %s | %s | %s | %s | %s |\n" % (r["scenario"], g, siege, fs, cpu, per, rss))
    table.flush()
    if a.out:
        bench.write_csv(os.path.join(a.out, "gateway-java.csv"), CSV_COLS,
                        [dict(r, setting=r["scenario"], gateway=gateway_name(r)) for r in rows])
