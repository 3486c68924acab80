"""benchmarks/peers/java/chain21.py - benchmarks/chain's Java rows: seed 000's callme and caller
on JDK 21 (Chain.java: HttpServer + HttpClient, the event in H2 in memory through JDBC).

start() starts, per THREAD_TYPE asked (--java fixed,virtual), a callme and a caller pinned to
--cpu as primed's pair is (the whole chain on one core), with the same APP_NAME, POD_NAME and
POD_NAMESPACE, checks that each answers the body primed's would (docs/chain.md), and returns
the peers and the (name, port, path) rows benchmarks/chain measures in its A B A B rounds
beside primed's. A peer that does not start, or answers otherwise, raises: never a missing row.
"""
import re

import peer21


def start(a, env):
    """(peers to stop, [(row name, port, path)])."""
    peers, rows = [], []
    try:
        for tt in a.java:
            callme = peer21.Peer("Chain", dict(env, APP_NAME="callme", THREAD_TYPE=tt), cpu=a.cpu)
            peers.append(callme)
            caller = peer21.Peer("Chain", dict(env, APP_NAME="caller", THREAD_TYPE=tt,
                                               CALLME_URL="http://127.0.0.1:%d/callme/ping" % callme.port), cpu=a.cpu)
            peers.append(caller)
            check(callme.port, "/callme/ping", r"callme\(id=1\): %s in %s\n" % (env["POD_NAME"], env["POD_NAMESPACE"]))
            check(caller.port, "/caller/ping", r"caller\(id=1\): %s in %s is calling callme\(id=2\): %s in %s\n" % (
                env["POD_NAME"], env["POD_NAMESPACE"], env["POD_NAME"], env["POD_NAMESPACE"]))
            rows += [("java21-%s callme direct" % tt, callme.port, "/callme/ping"),
                     ("java21-%s caller -> callme" % tt, caller.port, "/caller/ping")]
    except BaseException:
        for p in peers:
            p.stop()
        raise
    return peers, rows


def check(port, path, want):
    import spawn
    st, body = spawn.http_get(port, path)
    if st != 200 or not re.fullmatch(want, body):
        raise peer21.PeerError("java21 %s answered %d %r, not %r" % (path, st, body, want))
