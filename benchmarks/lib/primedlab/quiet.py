#!/usr/bin/python3
"""benchmarks/lib/primedlab/quiet.py - the quiet-machine guard and the one measurement lock
(docs/benchmarking.md#quiet-machine says why and how).

Owns: the exclusive lock every measuring script takes (flock on one machine-wide file, whichever
worktree it runs from); a measurement window's contamination, from /proc; the bounded wait for a
quiet machine; the thresholds docs/publish/publish.py enforces. Never kills or renices anything.

A window's contamination (Window.stop()): other_cpu_pct, the machine's user+nice+system time
(/proc/stat: a compiler that starts and exits between two samples counts) less ours (this script,
its descendants, the targets' process groups, with adopt a container under a conmon started in the
window) and the kernel threads', in % of one CPU; steal_pct, /proc/stat steal in % of all CPUs;
kthread_pct and load1 (start and end), context, never judged; top, the three busiest others.

THRESHOLDS: contaminated when other_cpu_pct > 5 (a twentieth of the core a 2-core lab gives the
server) and other processes used more than MIN_OTHER_S (30 ms, 3 ticks of /proc's 10 ms clock:
less is rounding), or when steal_pct > 2.

CLI (for shell scripts):
  quiet.py run [--what NAME] [--max-wait S] -- CMD ARGS...   lock, wait for quiet, run CMD,
        print its contamination on stderr, exit with CMD's status
  quiet.py lock [--what NAME] -- CMD ARGS...                 the lock only
  quiet.py sample [SECONDS]                                  print one window's contamination
"""

import fcntl
import os
import signal
import subprocess
import sys
import time

CLK_TCK = os.sysconf("SC_CLK_TCK")
PF_KTHREAD = 0x00200000
LOCK_PATH = os.environ.get("PRIMED_MEASURE_LOCK", "/tmp/primed-measure.lock")
HELD_ENV = "PRIMED_MEASURE_LOCK_HELD"
THRESHOLDS = {"other_cpu_pct": 5.0, "steal_pct": 2.0}
MIN_OTHER_S = 0.03

_lock_fd = None


def logger(name, utc=False):
    """A log(msg) that writes `[name HH:MM:SS] msg` on stderr (local time, or UTC): every
    benchmark script's progress line (bench.logger; here, in the lab's lowest module)."""
    clock = time.gmtime if utc else time.localtime

    def log(msg):
        sys.stderr.write("[%s %s] %s\n" % (name, time.strftime("%H:%M:%S", clock()), msg))
        sys.stderr.flush()
    return log


log = logger("quiet", utc=True)


# /proc by hand, not psutil: its process_iter() with oneshot() took 4.1 ms of CPU per snapshot
# against 1.0 ms for _procs() (83 processes), and it has no PF_KTHREAD flag for kernel threads.

def proc_stat(pid):
    """(comm, [the fields after comm]) from /proc/PID/stat, or None once the process is gone.
    Fields after comm, from 0: state ppid pgrp session tty tpgid flags ... utime(11) stime(12)."""
    try:
        with open("/proc/%s/stat" % pid) as f:
            s = f.read()
    except OSError:
        return None
    r = s.rfind(")")
    return s[s.find("(") + 1:r], s[r + 2:].split()


def _procs():
    """{pid: (ppid, pgrp, own_ticks, children_ticks, is_kthread, comm, starttime)} for every
    process (starttime tells a reused pid apart)."""
    out = {}
    for d in os.listdir("/proc"):
        comm, f = (proc_stat(d) if d.isdigit() else None) or ("", [])
        try:
            out[int(d)] = (int(f[1]), int(f[2]), int(f[11]) + int(f[12]), int(f[13]) + int(f[14]),
                           bool(int(f[6]) & PF_KTHREAD), comm, int(f[19]))
        except (IndexError, ValueError):
            continue   # gone, or not a process
    return out


class Snapshot:
    def __init__(self):
        with open("/proc/uptime") as f:
            self.uptime_ticks = float(f.read().split()[0]) * CLK_TCK
        self.t = time.monotonic()
        with open("/proc/stat") as f:   # cpu: user nice system idle iowait irq softirq steal (ticks)
            v = ([int(x) for x in f.readline().split()[1:]] + [0] * 8)[:8]
        # busy = user+nice+system (guest time is inside user): irq and softirq, where the loopback
        # traffic of our own load lands, are left out
        self.busy, self.steal, self.total = sum(v[:3]), v[7], sum(v)
        self.procs = _procs()
        with open("/proc/loadavg") as f:
            self.load1 = float(f.read().split()[0])


def _ours(procs, root, pgids, adopt=(), since=0.0):
    """pids that belong to the measurement: root and its descendants, every process in one of
    pgids (a container's server, a database) and its descendants (a PostgreSQL backend is the
    postmaster's child in a session of its own), and the descendants of any process named in
    adopt that started after `since` (uptime ticks)."""
    kids = {}
    for pid, p in procs.items():
        kids.setdefault(p[0], []).append(pid)
    mine = set()
    stack = [root] if root in procs else []
    stack += [pid for pid, p in procs.items() if p[1] in pgids or (p[5] in adopt and p[6] >= since)]
    while stack:
        pid = stack.pop()
        if pid not in mine:
            mine.add(pid)
            stack.extend(kids.get(pid, ()))
    return mine


WINDOW_FIELDS = ("wall_s", "other_cpu_pct", "other_cpu_s", "steal_pct", "kthread_pct", "load1_start", "load1_end",
                 "top")   # what Window.stop() returns


class Window:
    """A measurement window: Window(pgids=...) starts it, .stop() returns the contamination
    dict. root defaults to this process: its descendants are ours."""

    def __init__(self, pgids=(), root=None, adopt=()):
        self.root = root or os.getpid()
        self.pgids = [p for p in pgids if p]
        self.adopt = tuple(adopt)
        self.s0 = Snapshot()

    def stop(self):
        s0, s1 = self.s0, Snapshot()
        wall = max(s1.t - s0.t, 1e-6)
        ours0, ours1 = (_ours(s.procs, self.root, self.pgids, self.adopt, s0.uptime_ticks) for s in (s0, s1))

        def delta(pid, with_children):
            p0, p1 = s0.procs.get(pid), s1.procs[pid]
            v1 = p1[2] + (p1[3] if with_children else 0)
            if p0 is None or p0[6] != p1[6]:
                return v1                  # born in the window (or a reused pid): all of it
            return max(0, v1 - (p0[2] + (p0[3] if with_children else 0)))

        # ours: own + reaped children's time (wrk is reaped by us inside the window)
        ours = sum(delta(pid, True) for pid in ours1 | (ours0 & set(s1.procs)))
        if self.adopt:
            # a container started and stopped in the window exits through conmon, which init (or
            # a subreaper) reaps: their time is in its children time, counted as ours
            reapers = {p[0] for s in (s0, s1) for p in s.procs.values() if p[5] in self.adopt} | {1}
            for pid in reapers - ours1:
                p0, p1 = s0.procs.get(pid), s1.procs.get(pid)
                if p0 and p1 and p0[6] == p1[6]:
                    ours += max(0, p1[3] - p0[3])
        kthr = sum(delta(pid, False) for pid, p in s1.procs.items() if p[4])
        other = max(0, s1.busy - s0.busy - ours - kthr)
        by = {}
        for pid, p in s1.procs.items():
            d = 0 if pid in ours1 or pid in ours0 or p[4] else delta(pid, False)
            if d > 0:
                by[p[5]] = by.get(p[5], 0) + d
        top = [kv for kv in sorted(by.items(), key=lambda kv: -kv[1])[:3] if kv[1] >= CLK_TCK / 20]
        tot = max(s1.total - s0.total, 1)
        return {
            "wall_s": round(wall, 3),
            "other_cpu_pct": round(100.0 * other / CLK_TCK / wall, 1),
            "other_cpu_s": round(other / CLK_TCK, 2),
            "steal_pct": round(100.0 * (s1.steal - s0.steal) / tot, 1),
            "kthread_pct": round(100.0 * kthr / CLK_TCK / wall, 1),
            "load1_start": s0.load1, "load1_end": s1.load1,
            "top": ", ".join("%s %.1fs" % (n, d / CLK_TCK) for n, d in top) or "-",
        }


def contaminated(c):
    """The thresholds this contamination dict passes, as a list of reasons (empty: clean)."""
    over = ["%s %.1f > %.1f" % (k, c[k], lim) for k, lim in THRESHOLDS.items()
            if c.get(k) is not None and c[k] > lim]
    if c.get("other_cpu_s", 1.0) <= MIN_OTHER_S:
        over = [o for o in over if not o.startswith("other_cpu_pct")]
    return over


def describe(c):
    """One window's figures in words."""
    secs = c.get("other_cpu_s")
    return ("other processes %.1f%% of a CPU%s (%s), steal %.1f%%, kernel threads %.1f%%, load average "
            "%.2f-%.2f (every runnable thread, the measured server and the load included)"
            % (c["other_cpu_pct"], "" if secs is None else ", %.2f s in all" % secs, c["top"], c["steal_pct"],
               c["kthread_pct"], c["load1_start"], c["load1_end"]))


def worst(cs):
    """Merges contamination dicts into the worst of each figure (for a table header)."""
    cs = [c for c in cs if c]
    if not cs:
        return None
    w = max(cs, key=lambda c: c["other_cpu_pct"])
    return {"other_cpu_pct": w["other_cpu_pct"], "top": w["top"], "other_cpu_s": w.get("other_cpu_s"),
            "steal_pct": max(c["steal_pct"] for c in cs), "kthread_pct": max(c["kthread_pct"] for c in cs),
            "load1_start": min(min(c["load1_start"], c["load1_end"]) for c in cs),
            "load1_end": max(max(c["load1_start"], c["load1_end"]) for c in cs),
            "runs": len(cs), "over": sum(1 for c in cs if contaminated(c))}


def header(cs):
    """One Markdown line for a table's header: the worst contamination of its runs."""
    w = worst(cs)
    if not w:
        return "Contamination: not measured."
    if w["runs"] == 1:
        verdict = "**CONTAMINATED**" if w["over"] else "under the threshold"
    else:
        verdict = ("**CONTAMINATED: %d of %d runs above the threshold**" % (w["over"], w["runs"]) if w["over"]
                   else "under the threshold in all %d runs" % w["runs"])
    return ("Contamination (worst run): %s. A window is over the threshold when other processes used more "
            "than %.0f%% of a CPU and more than %.2f s in all (less is the rounding of /proc's clock), or "
            "steal passed %.0f%%: %s." % (describe(w), THRESHOLDS["other_cpu_pct"], MIN_OTHER_S,
                                          THRESHOLDS["steal_pct"], verdict))


def wait_quiet(max_wait, pgids=(), window=1.0, what="measurement"):
    """Waits, saying why every 10 s, until a `window`-s window is clean, at most max_wait s (then the
    run measures anyway and records its own): (seconds waited, the last window's contamination)."""
    t0 = time.monotonic()
    said = -1e9
    while True:
        w = Window(pgids)
        time.sleep(window)
        c = w.stop()
        waited = time.monotonic() - t0
        if not contaminated(c):
            return waited, c
        if waited >= max_wait:
            if max_wait > 0:
                log("machine not quiet after %.0f s (%s); %s measured anyway, flagged" % (waited, describe(c), what))
            return waited, c
        if waited - said >= 10:
            log("waiting (up to %.0f s) for a quiet machine before %s: %s" % (max_wait, what, describe(c)))
            said = waited


# ----------------------------------------------------------------------------- the lock

def _ancestors():
    pid, seen = os.getpid(), set()
    while pid > 1 and pid not in seen:
        seen.add(pid)
        st = proc_stat(pid)
        pid = int(st[1][1]) if st else 0
    return seen


def _holder(fd):
    try:
        return os.pread(fd, 512, 0).decode(errors="replace").strip() or "unknown"
    except OSError:
        return "unknown"


def lock(what, max_wait=None):
    """Takes LOCK_PATH for as long as this process lives, waiting (max_wait s, None: for ever; then
    exit 3) and saying so; a script run by its holder (HELD_ENV names an ancestor) goes on. True."""
    global _lock_fd
    held = os.environ.get(HELD_ENV, "")
    if _lock_fd is not None or held.isdigit() and int(held) in _ancestors():
        return True
    fd = os.open(LOCK_PATH, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
    t0 = time.monotonic()
    said = None
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            waited = time.monotonic() - t0
            if said is None or waited - said >= 60:
                log("%s waits for the measurement lock %s, held by: %s (waited %.0f s)" % (
                    what, LOCK_PATH, _holder(fd), waited))
                said = waited
            if max_wait is not None and waited >= max_wait:
                log("%s: gave up waiting for the measurement lock after %.0f s" % (what, waited))
                sys.exit(3)
            time.sleep(0.5)
    if said is not None:
        log("%s took the measurement lock after %.0f s" % (what, time.monotonic() - t0))
    os.ftruncate(fd, 0)
    os.pwrite(fd, ("pid=%d what=%s since=%s\n" % (os.getpid(), what.replace(" ", "_"),
                                                  time.strftime("%H:%M:%SZ", time.gmtime()))).encode(), 0)
    os.environ[HELD_ENV] = str(os.getpid())
    _lock_fd = fd
    return True


def guard(what, max_wait=60.0, table=None, adopt=()):
    """For a measuring script: lock, wait for quiet, and at exit print the whole run's contamination on
    stderr and as a Markdown line on `table` (e.g. sys.stdout) when given. Returns the Window."""
    import atexit
    lock(what)
    wait_quiet(max_wait, what=what)
    w = Window(adopt=adopt)

    def report():
        c = w.stop()
        over = contaminated(c)
        log("%s contamination: %s; %s" % (
            what, describe(c), "CONTAMINATED: " + "; ".join(over) if over else "under the threshold"))
        if table is not None:
            try:
                table.write("\n" + header([c]).replace("(worst run)", "(whole run)") + "\n")
                table.flush()
            except (OSError, ValueError):
                pass
    atexit.register(report)
    return w


# ----------------------------------------------------------------------------- CLI

def main(argv):
    if argv[:1] == ["sample"]:
        w = Window()
        time.sleep(float(argv[1]) if len(argv) > 1 else 1.0)
        c = w.stop()
        over = contaminated(c)
        print(describe(c) + ("; CONTAMINATED: " + "; ".join(over) if over else "; quiet"))
        return 1 if over else 0
    i = argv.index("--") if "--" in argv else len(argv)
    opts, cmd = dict(zip(argv[1:i:2], argv[2:i:2])), argv[i + 1:]
    if argv[:1] not in (["run"], ["lock"]) or not cmd:
        sys.stderr.write(__doc__)
        return 2
    if argv[0] == "lock":
        lock(opts.get("--what", cmd[0]))
    else:
        guard(opts.get("--what", cmd[0]), float(opts.get("--max-wait", 60.0)))
    p = subprocess.Popen(cmd)
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, lambda sig, _f: p.send_signal(sig))
    return p.wait()   # PEP 475: a signal handled here does not interrupt the wait


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
