"""benchmarks/peers/java/labstacks.py - the lab's Tomcat and Netty rows: tomcat-platform,
tomcat-tuned, tomcat-virtual, netty and tomcat-appcds (docs/java-peers.md).

benchmarks/load.py imports this for `--peers stacks`. Each row runs the java command that
benchmarks/peers/java/stacks would exec (command()), its flags in the row's note; the JVM's own
settings line, in the server log, is what lab.jvm_settings() reads back into the report.
tomcat-appcds starts from a CDS archive that targets() makes first with a training run (train()).
Every row runs with DB_URL=none: it serves /example, as Example.java does, so no connection pool
is in its start-up. A missing jar, JDK or archive ends the run with the reason (SystemExit): a
requested peer is never skipped quietly.
"""
import os
import subprocess
import time

import peer21
from primedlab import spawn     # the importing script has put the lab's package on the path

STACKS = peer21.STACKS
NAMES = ["tomcat-platform", "tomcat-tuned", "tomcat-virtual", "netty", "tomcat-appcds"]


def train(archive, timeout=90):
    """Makes archive with a training run of TomcatPeer; SystemExit when none is written."""
    if os.path.exists(archive):
        os.unlink(archive)
    try:
        p = peer21.Peer("TomcatPeer", {"EXECUTOR": "platform", "DB_URL": "none"}, ready_timeout=timeout,
                        runner=STACKS, pre=["--cds-train", archive])
    except peer21.PeerError as e:
        raise SystemExit("load: the AppCDS training run wrote no %s: %s" % (archive, e)) from None
    try:
        for path in ("/healthz", "/example", "/example"):
            st = spawn.http_get(p.port, path, timeout=30)[0]
            if st != 200:
                raise OSError("the training run's %s answered %d" % (path, st))
    finally:
        p.stop(timeout)   # the archive is written at exit
    if not os.path.exists(archive) or os.path.getsize(archive) == 0:
        raise SystemExit("load: the AppCDS training run wrote no %s: %s"
                         % (archive, "\n".join(p.text()[-8:])))
    return os.path.getsize(archive)


def command(pre, cls, cpus=()):
    """The java command stacks would exec for cls (`stacks --print-cmd`), with the JVM's CPU count
    taken under the CPUs the lab pins the server to: the lab execs the JVM itself, so that no
    shell script is in its start-up time. SystemExit with stacks' reason when it fails."""
    pin = ["taskset", "-c", ",".join(map(str, cpus))] if cpus else []
    p = subprocess.run(pin + [STACKS, "--print-cmd", *pre, cls], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=600)
    if p.returncode != 0:
        raise SystemExit("load: peer stacks cannot start %s: %s" % (cls, p.stderr.strip()[-600:]))
    return p.stdout.splitlines()


def targets(lab, outdir_cache=None, cpus=()):
    """The rows of NAMES as lab.Target (port unset), their JVMs sized for cpus (the server's CPUs);
    SystemExit when the JDK, a jar or the archive fails."""
    kv = peer21.compiled(STACKS, "stacks")
    cache = outdir_cache or os.path.join(os.environ.get("BENCH_CACHE", os.path.join(lab.BENCH_DIR, ".cache")),
                                         "java-stacks-cds")
    os.makedirs(cache, exist_ok=True)
    archive = os.path.join(cache, "tomcat.jsa")
    t0 = time.time()
    jsa = train(archive)
    train_s = time.time() - t0
    size = lab.dir_bytes(os.path.dirname(os.path.dirname(kv["java"])))
    rows = [("tomcat-platform", [], "TomcatPeer", {"EXECUTOR": "platform"},
             "embedded Tomcat %s, its platform pool (maxThreads 200)"),
            # /example is CPU-bound: a thread per CPU keeps the core on one prime at a time (no
            # time-slicing 200 of them, which stretches p95), and no MBeans in the start-up.
            ("tomcat-tuned", [], "TomcatPeer", {"EXECUTOR": "platform", "MAX_THREADS": "cpus", "MBEAN_REGISTRY": "off"},
             "embedded Tomcat %s, its platform pool sized to the CPUs, no MBean registry"),
            ("tomcat-virtual", [], "TomcatPeer", {"EXECUTOR": "virtual"},
             "embedded Tomcat %s, a virtual thread per request (useVirtualThreads)"),
            ("netty", [], "NettyPeer", {}, "Netty %s, /example on a 20-thread worker pool (as Vert.x executeBlocking)"),
            ("tomcat-appcds", ["--cds", archive], "TomcatPeer", {"EXECUTOR": "platform"},
             "embedded Tomcat %s, platform pool, started from an AppCDS archive of a training run")]
    out = []
    for name, pre, cls, env, what in rows:
        cmd = command(pre, cls, cpus)
        t = lab.Target(name=name, kind="java", cmd=cmd, env=dict(env, DB_URL="none"))
        t.build_s = float(kv["javac_s"]) + (train_s if pre else 0)
        t.build = "%.1f s (javac%s)" % (t.build_s, " + CDS training run" if pre else "")
        t.artifact_bytes = int(kv["class_bytes"]) + int(kv["jar_bytes"]) + (jsa if pre else 0)
        t.artifact_note = "classes + Debian's jars%s, + %s JDK 21 (Debian 13's)" % (
            " + the CDS archive" if pre else "", lab.human_bytes(size))
        t.note = "%s; JVM tuned by benchmarks/peers/java/stacks: %s" % (
            what % ("10.1" if cls == "TomcatPeer" else "4.1"), " ".join(a for a in cmd[1:] if a.startswith("-X")))
        out.append(t)
    return out
