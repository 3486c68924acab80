"""benchmarks/peers/java/peer21.py - one JDK 21 peer process for the scripts: `run21 CLASS` (or
`stacks CLASS`, runner=STACKS) on 127.0.0.1 with PORT=0, optionally pinned with taskset, as a
spawn.Primed that reads its `... ready ... port=N` line. run21 installs JDK 21 and compiles on
first use, so the first start may take the download's time (ready_timeout covers it). A peer that
prints no ready line raises PeerError with its stderr: it never starts silently half-way.
"""
import os
import re
import subprocess

from primedlab import spawn     # the importing script has put the lab's package on the path

HERE = os.path.dirname(os.path.abspath(__file__))
RUN21 = os.path.join(HERE, "run21")
STACKS = os.path.join(HERE, "stacks")   # TomcatPeer, NettyPeer (runner=STACKS)


READY = re.compile(r": ready .*\bport=(\d+)")


class PeerError(RuntimeError):
    """The peer exited or stayed silent before its ready line; the message holds its stderr tail."""


def prepare(timeout=1800):
    """Installs JDK 21 and compiles the peers now (run21 --compile-only), so that no start
    below pays for it; raises PeerError with run21's output when either fails."""
    p = subprocess.run([RUN21, "--compile-only"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, timeout=timeout)
    if p.returncode != 0:
        raise PeerError("benchmarks/peers/java/run21 --compile-only failed (rc %d): %s"
                        % (p.returncode, p.stdout.strip()[-800:]))
    return p.stdout.strip().splitlines()[-1]


def compiled(runner, peer):
    """runner --compile-only's key=value words (java, cp, javac_s, class_bytes, ...), for the lab's
    --peers PEER rows; SystemExit with its output when the JDK or javac fails."""
    p = subprocess.run([runner, "--compile-only"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=1800)
    kv = dict(x.split("=", 1) for x in p.stdout.split() if "=" in x)
    if p.returncode != 0 or "java" not in kv:
        raise SystemExit("load: peer %s cannot start: %s" % (peer, p.stdout.strip()[-600:]))
    return kv


class Peer(spawn.Primed):
    """CLASS (Gateway, Chain, Example) on 127.0.0.1:ephemeral, a spawn.Primed in a session of its
    own (run21 execs the JVM). .port, .pid, .ready_line, .text() its stderr lines."""

    def __init__(self, cls, env, cpu=None, ready_timeout=60, runner=RUN21, pre=()):
        cmd = (["taskset", "-c", str(cpu)] if cpu is not None else []) + [runner, *pre, cls]
        full = dict(os.environ, HOST="127.0.0.1", PORT="0")
        full.update({k: str(v) for k, v in env.items()})
        try:
            super().__init__(cmd[0], cmd[1:], env=full, ready_timeout=ready_timeout, listen=[], ready=READY,
                             session=True)
        except spawn.NotReady as e:
            raise PeerError("%s %s (%s) printed no ready line within %g s; stderr:\n%s" % (
                os.path.basename(runner), cls, " ".join("%s=%s" % kv for kv in env.items()), ready_timeout,
                str(e).split("\n", 1)[-1])) from None

    def text(self):
        """Its stderr lines so far."""
        return [line for _, line in self.lines]

    def stop(self, timeout=10):
        return super().stop(timeout)


def timed(pid, fn):
    """fn()'s result (a dict) with cpu_s (pid's CPU seconds during fn) and rss_mib (pid's peak
    resident memory so far, VmHWM) added."""
    c0 = spawn.cpu_s(pid)
    r = fn()
    c1 = spawn.cpu_s(pid)
    hwm = spawn.status_kib(pid, "VmHWM")
    r["cpu_s"] = c1 - c0 if c0 is not None and c1 is not None else None
    r["rss_mib"] = hwm / 1024.0 if hwm is not None else None
    return r
