"""benchmarks/lib/primedlab/pinned.py - one server pinned to SERVER_CPU (the load goes on LOAD_CPU)
and its CPU seconds, for the benchmarks that compare servers request for request on one core
(benchmarks/modes.py plaintext, benchmarks/cpu-share.py): primed, the plaintext floor, nginx or h2o.
Never runs a load or prints a figure: the entry scripts do.
"""
import os
import shutil
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
        self.kind, self.primed, self.prefix, self.group = kind, None, None, None
        pin = bench.taskset(SERVER_CPU)
        if kind == "primed":
            self.primed = Server(pin[0], pin[1:] + [binary, "--threads", "1"] + list(args), {}, args_first=True)
            self.proc, self.port = self.primed.proc, self.primed.port
        elif kind == "floor":
            self.group = spawn.Group(pin + [binary, "--port", "0"] + list(args), stdout=subprocess.PIPE)
            self.proc = self.group.proc
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
            try:
                self.group = spawn.Group(pin + cmd, self.port)
            except spawn.NotReady:
                self.stop()
                raise
            self.proc = self.group.proc
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
            shutil.rmtree(self.prefix, ignore_errors=True)
        return self.group.stop() if self.group else None
