"""benchmarks/peers/java/chain21.py - benchmarks/chain.py's Java rows: the callme and caller pair
on JDK 21 (Chain.java: HttpServer + HttpClient, the event in H2 in memory through JDBC), and the
same pair on Tomcat and Netty (--java tomcat-platform, tomcat-virtual, netty: TomcatPeer.java and
NettyPeer.java through benchmarks/peers/java/stacks, JDBC through HikariCP; rows named so).

Each pair runs pinned to --cpu as primed's is (the whole chain on one core), with the same APP_NAME,
POD_NAME and POD_NAMESPACE, and must answer the bodies primed's would (docs/chain.md) before
benchmarks/chain.py measures it beside primed's. A peer that does not start, or answers otherwise,
raises: never a missing row.
"""
import re

import peer21
from primedlab import spawn     # the importing script has put the lab's package on the path

# --java names that start a Tomcat or Netty pair: (class, environment)
STACKS = {"tomcat-platform": ("TomcatPeer", {"EXECUTOR": "platform"}),
          "tomcat-virtual": ("TomcatPeer", {"EXECUTOR": "virtual"}),
          "netty": ("NettyPeer", {})}
TYPES = ["fixed", "virtual"] + list(STACKS)


def start(a, env):
    """Starts a callme and a caller for each --java name: (peers to stop, [(row name, port, path)])."""
    peers, rows = [], []
    db = getattr(a, "java_db", lambda pair, n: {})   # benchmarks/chain.py --db postgresql: a database each
    pod = "%s in %s" % (env["POD_NAME"], env["POD_NAMESPACE"])
    try:
        for tt in a.java:
            if tt in STACKS:
                cls, extra = STACKS[tt]
                kw, name = {"runner": peer21.STACKS, "ready_timeout": 90}, tt
            else:
                cls, extra, kw, name = "Chain", {"THREAD_TYPE": tt}, {}, "java21-%s" % tt
            callme = peer21.Peer(cls, dict(env, APP_NAME="callme", **extra, **db(name, "callme")), cpu=a.cpu, **kw)
            peers.append(callme)
            caller = peer21.Peer(cls, dict(env, APP_NAME="caller", **extra, **db(name, "caller"),
                                           CALLME_URL="http://127.0.0.1:%d/callme/ping" % callme.port), cpu=a.cpu, **kw)
            peers.append(caller)
            check(callme.port, "/callme/ping", r"callme\(id=1\): %s\n" % pod)
            check(caller.port, "/caller/ping",
                  r"caller\(id=1\): %s is calling callme\(id=2\): %s\n" % (pod, pod))
            rows += [("%s callme direct" % name, callme.port, "/callme/ping"),
                     ("%s caller -> callme" % name, caller.port, "/caller/ping")]
    except BaseException:
        for p in peers:
            p.stop()
        raise
    return peers, rows


def check(port, path, want):
    st, body = spawn.http_get(port, path)
    if st != 200 or not re.fullmatch(want, body):
        raise peer21.PeerError("%s answered %d %r, not %r" % (path, st, body, want))
