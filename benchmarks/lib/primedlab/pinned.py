"""benchmarks/lib/primedlab/pinned.py - one server pinned to a CPU, and its CPU time, for the benchmarks
that compare servers request for request on one core (benchmarks/modes.py plaintext, benchmarks/cpu-share.py).

Owns: the layout (the server on SERVER_CPU, the load generator on LOAD_CPU); starting primed
(Server: --port 0, its CPU seconds and threads), the floor (build/benchmarks/plaintext_floor),
nginx or h2o (benchmarks/peers/*-run) pinned there in a process group of their own (Pinned), and
their user and system clock ticks read from /proc (group_ticks). Never runs a load or prints a
figure: the entry scripts do. Standard library only.
"""
import os
import signal
import subprocess

from primedlab import bench
from primedlab import quiet
from primedlab import spawn

SERVER_CPU, LOAD_CPU = "0", "1"
TCK = os.sysconf("SC_CLK_TCK")


class Server(spawn.Primed):
    """primed on --port 0 (spawn.Primed, 20 s to its ready line, 40 s to stop) with its CPU seconds
    and threads read from /proc; RuntimeError when it does not start."""

    def __init__(self, binary, args, env, **kw):
        try:
            super().__init__(binary, args, env=dict(os.environ, **env), ready_timeout=20, **kw)
        except spawn.NotReady as err:
            raise RuntimeError("server did not start: %s" % err) from None
        self.p = self.proc

    def cpu_s(self):
        fields = quiet.proc_stat(self.p.pid)[1]
        return (int(fields[11]) + int(fields[12])) / TCK

    def threads(self):
        return len(os.listdir("/proc/%d/task" % self.p.pid))

    def stop(self):
        return super().stop(40)


def group_ticks(pgid):
    """(utime, stime) clock ticks summed over the live processes of group pgid (nginx's master
    and worker; primed and the floor are one process each)."""
    ut = st = 0
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        ps = quiet.proc_stat(d)
        try:
            if ps is not None and int(ps[1][2]) == pgid:
                ut += int(ps[1][11])
                st += int(ps[1][12])
        except (IndexError, ValueError):
            continue
    return ut, st


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

    def ticks(self):
        """(utime, stime) of the server so far: primed's process, the others' whole group."""
        if self.primed:
            f = quiet.proc_stat(self.proc.pid)[1]
            return int(f[11]), int(f[12])
        return group_ticks(self.pgid)

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
