"""benchmarks/lib/primedlab/pinned.py - one server pinned to a CPU, and its CPU time, for the benchmarks
that compare servers request for request on one core (benchmarks/modes.py plaintext, benchmarks/cpu-share.py).

Owns: the layout (the server on SERVER_CPU, the load generator on LOAD_CPU); starting primed
(Server: --port 0, its CPU seconds and threads), the floor (build/benchmarks/plaintext_floor),
nginx or h2o (benchmarks/peers/*-run) pinned there in a process group of their own (Pinned), and
their user and system CPU seconds (times). Never runs a load or prints a figure: the entry
scripts do.
"""
import os
import signal
import subprocess

import psutil

from primedlab import bench
from primedlab import spawn

SERVER_CPU, LOAD_CPU = "0", "1"


class Server(spawn.Primed):
    """primed on --port 0 (spawn.Primed, 20 s to its ready line, 40 s to stop) with its threads;
    RuntimeError when it does not start."""

    def __init__(self, binary, args, env, **kw):
        try:
            super().__init__(binary, args, env=dict(os.environ, **env), ready_timeout=20, **kw)
        except spawn.NotReady as err:
            raise RuntimeError("server did not start: %s" % err) from None

    def threads(self):
        return psutil.Process(self.pid).num_threads()

    def stop(self):
        return super().stop(40)


class Pinned:
    """One server on 127.0.0.1 in its own process group, pinned to SERVER_CPU: kind is primed,
    nginx, h2o or floor. .port, .pgid; stop() SIGTERMs the group."""

    def __init__(self, kind, binary, args=()):
        self.kind, self.primed, self.prefix = kind, None, None
        pin = bench.taskset(SERVER_CPU)
        if kind == "primed":
            self.primed = Server(pin[0], pin[1:] + [binary, "--threads", "1"] + list(args), {}, args_first=True)
            self.proc, self.port = self.primed.proc, self.primed.port
        elif kind == "floor":
            self.proc = subprocess.Popen(pin + [binary, "--port", "0"] + list(args), stdout=subprocess.PIPE,
                                         stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, start_new_session=True)
            line = self.proc.stdout.readline().decode().strip()
            if not line.startswith("port="):
                self.stop()
                raise RuntimeError("plaintext_floor did not start: %r" % line)
            self.port = int(line[5:])
        else:
            self.port = spawn.free_port()
            env = dict(os.environ, PORT=str(self.port), NGINX_WORKERS="1", H2O_THREADS="1")
            cmd = subprocess.run([os.path.join(bench.BENCH_DIR, "peers", kind + "-run"), "--prepare"], env=env,
                                 capture_output=True, text=True, check=True).stdout.split()
            if kind == "h2o":  # h2o-run leaves its prefix (the -c file's directory) to us
                self.prefix = os.path.dirname(cmd[cmd.index("-c") + 1])
            self.proc = subprocess.Popen(pin + cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL, start_new_session=True)
            if not spawn.wait_ok(self.port, proc=self.proc):
                self.stop()
                raise RuntimeError("%s did not answer /healthz on port %d" % (kind, self.port))
        self.pgid = self.proc.pid  # floor, nginx: a new session, its leader's pid is the group's id

    def times(self):
        """(user, system) CPU seconds of the server so far: primed's process, the others' whole group."""
        procs = [psutil.Process(self.proc.pid)] if self.primed else spawn.group(self.pgid)
        ts = [p.cpu_times() for p in procs]
        return sum(t.user for t in ts), sum(t.system for t in ts)

    def stop(self):
        if self.primed:
            return self.primed.stop()
        if self.prefix:
            subprocess.run(["rm", "-rf", self.prefix])
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                return self.proc.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        return self.proc.returncode
