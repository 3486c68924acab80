"""benchmarks/peers/java/peer21.py - one JDK 21 peer process (Gateway or Chain) for the scripts.

Owns: starting `benchmarks/peers/java/run21 CLASS` (or `stacks CLASS`, runner=STACKS) on 127.0.0.1 with PORT=0 (optionally pinned
with taskset), reading its `... ready ... port=N` line from stderr (kept, line by line),
stopping it (SIGTERM, bounded wait, SIGKILL), and its CPU time and peak memory (spawn's). run21
installs JDK 21 and compiles on first use, so the first start may take the download's time
(ready_timeout covers it). A peer that does not print its ready line raises PeerError with its
stderr: it never starts silently half-way.
"""
import os
import re
import signal
import subprocess
import threading

from primedlab import spawn     # the importing script has put the lab's package on the path

HERE = os.path.dirname(os.path.abspath(__file__))
RUN21 = os.path.join(HERE, "run21")
STACKS = os.path.join(HERE, "stacks")   # TomcatPeer, NettyPeer (runner=STACKS)


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


class Peer:
    """CLASS (Gateway, Chain, Example) on 127.0.0.1:ephemeral. .port, .pid, .lines, .ready_line."""

    def __init__(self, cls, env, cpu=None, ready_timeout=60, runner=RUN21, pre=()):
        cmd = [runner, *pre, cls]
        if cpu is not None:
            cmd = ["taskset", "-c", str(cpu)] + cmd
        full = dict(os.environ, HOST="127.0.0.1", PORT="0")
        full.update({k: str(v) for k, v in env.items()})
        self.cls = cls
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, env=full, start_new_session=True)
        self.pid = self.proc.pid
        self.lines, self.ready_line, self.port = [], None, None
        got = threading.Event()

        def reader():
            for raw in self.proc.stderr:
                line = raw.decode("utf-8", "replace").rstrip("\n")
                self.lines.append(line)
                m = re.search(r": ready .*\bport=(\d+)", line)
                if self.port is None and m:
                    self.ready_line, self.port = line, int(m.group(1))
                    got.set()
            got.set()

        self.reader = threading.Thread(target=reader, daemon=True)
        self.reader.start()
        if not got.wait(ready_timeout) or self.port is None:
            self.stop(2)
            raise PeerError("%s %s (%s) printed no ready line within %g s; stderr:\n%s" % (
                os.path.basename(runner), cls, " ".join("%s=%s" % kv for kv in env.items()), ready_timeout, "\n".join(self.lines[-15:])))

    def alive(self):
        return self.proc.poll() is None

    def stop(self, timeout=10):
        """SIGTERM, up to timeout s, then SIGKILL (the whole session: run21 execs the JVM)."""
        if self.proc.poll() is None:
            try:
                os.killpg(self.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.pid, signal.SIGKILL)
                self.proc.wait()
        self.reader.join(2)
        return self.proc.returncode


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
