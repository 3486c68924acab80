#!/usr/bin/python3
"""benchmarks/lib/primedlab/quiet.py - the quiet-machine guard and the one measurement lock.

Owns: (1) the exclusive lock every measuring script takes (flock on one machine-wide file, so
two measurements never overlap, whichever worktree they run from); (2) contamination: what
else ran during a measurement window, from /proc; (3) the bounded wait for a quiet machine;
(4) the thresholds docs/publish/publish.py enforces. Never kills or renices anything: it only
looks, waits and reports.

Contamination of a window (Window.stop()):
  other_cpu_pct  CPU time of every process that is neither ours (the measuring script, its
                 descendants: the load generator, the probe; the target process groups) nor a
                 kernel thread, in % of one CPU over the window. Computed as the machine's
                 user+nice+system time (/proc/stat) minus ours minus the kernel threads', so a
                 compiler that starts and exits between two samples is counted too. irq and
                 softirq time are left out: loopback traffic of our own load lands there.
  steal_pct      /proc/stat steal, in % of the machine's CPU capacity (all CPUs) over the window:
                 the hypervisor gave our vCPUs' time to someone else.
  kthread_pct    kernel threads (kworker, ksoftirqd, ...), % of one CPU: shown, not judged;
                 much of it serves our own load.
  load1          the 1-minute load average at the start and the end (context only: our own
                 load raises it, so it is not judged).
  top            the three busiest other processes by name, e.g. "cc1 1.9s, make 0.1s".
With adopt (a window that starts containers), the children time that init (or conmon's other
reaper) collects during the window counts as ours: a container started and stopped inside the
window exits through conmon, which init reaps; on a quiet machine nothing else is orphaned.

Thresholds (THRESHOLDS; documented in docs/benchmarks.md "Quiet machine"): a run is
contaminated when other_cpu_pct > 5 (a twentieth of one core taken from a 2-core lab that
pins the server to one core and the load to the other) and other processes used more than
MIN_OTHER_S (30 ms, 3 ticks of /proc's 10 ms clock: below that the figure of a short window
is rounding), or when steal_pct > 2.

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
    benchmark script's progress line (through bench.logger; here because this is the lowest
    module of the lab's library)."""
    clock = time.gmtime if utc else time.localtime

    def log(msg):
        sys.stderr.write("[%s %s] %s\n" % (name, time.strftime("%H:%M:%S", clock()), msg))
        sys.stderr.flush()
    return log


log = logger("quiet", utc=True)


# ----------------------------------------------------------------------------- /proc
# Read by hand, not through psutil (which spawn.py uses for one process or group): a snapshot
# reads every process's stat, and psutil's process_iter() with oneshot() took 4.1 ms of CPU per
# snapshot against 1.0 ms for _procs() (83 processes, this 2-CPU host), taken from the CPUs the
# measurement runs on; it also has no field for PF_KTHREAD, which tells kernel threads apart.

def _cpu_line():
    """/proc/stat's aggregate cpu line as (busy, steal, total) in clock ticks; busy is
    user+nice+system (guest time is inside user)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    v += [0] * (8 - len(v))
    user, nice, system, idle, iowait, irq, softirq, steal = v[:8]
    return user + nice + system, steal, user + nice + system + idle + iowait + irq + softirq + steal


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
        st = proc_stat(d) if d.isdigit() else None
        if st is None:
            continue
        comm, f = st
        try:
            # after comm: state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt
            #             utime stime cutime cstime
            out[int(d)] = (int(f[1]), int(f[2]), int(f[11]) + int(f[12]), int(f[13]) + int(f[14]),
                           bool(int(f[6]) & PF_KTHREAD), comm, int(f[19]))
        except (IndexError, ValueError):
            continue
    return out


def _loadavg():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


class Snapshot:
    def __init__(self):
        with open("/proc/uptime") as f:
            self.uptime_ticks = float(f.read().split()[0]) * CLK_TCK
        self.t = time.monotonic()
        self.busy, self.steal, self.total = _cpu_line()
        self.procs = _procs()
        self.load1 = _loadavg()


def _ours(procs, root, pgids, adopt=(), since=0.0):
    """pids that belong to the measurement: root and its descendants, and every process in
    one of pgids (a container's server is not our descendant; its process group is known),
    and the descendants of any process named in adopt that started after `since` (uptime
    ticks): podman's conmon, which parents the containers a script starts."""
    kids = {}
    for pid, p in procs.items():
        kids.setdefault(p[0], []).append(pid)
    mine = set()
    stack = [root] if root in procs else []
    stack += [pid for pid, p in procs.items() if p[5] in adopt and p[6] >= since]
    while stack:
        pid = stack.pop()
        if pid in mine:
            continue
        mine.add(pid)
        stack.extend(kids.get(pid, ()))
    pg = set(pgids)
    mine.update(pid for pid, p in procs.items() if p[1] in pg)
    return mine


# what Window.stop() returns (lab_measure's runs give them beside their own figures)
WINDOW_FIELDS = ("wall_s", "other_cpu_pct", "other_cpu_s", "steal_pct", "kthread_pct", "load1_start", "load1_end",
                 "top")


class Window:
    """A measurement window: Window(pgids=...) starts it, .stop() returns the contamination
    dict (see the module comment). root defaults to this process: its descendants are ours."""

    def __init__(self, pgids=(), root=None, adopt=()):
        self.root = root or os.getpid()
        self.pgids = [p for p in pgids if p]
        self.adopt = tuple(adopt)
        self.s0 = Snapshot()

    def stop(self):
        s0, s1 = self.s0, Snapshot()
        wall = max(s1.t - s0.t, 1e-6)
        ours0 = _ours(s0.procs, self.root, self.pgids, self.adopt, s0.uptime_ticks)
        ours1 = _ours(s1.procs, self.root, self.pgids, self.adopt, s0.uptime_ticks)

        def delta(pid, with_children):
            p1 = s1.procs[pid]
            p0 = s0.procs.get(pid)
            v1 = p1[2] + (p1[3] if with_children else 0)
            if p0 is None or p0[6] != p1[6]:
                return v1                  # born in the window (or a reused pid): all of it
            return max(0, v1 - (p0[2] + (p0[3] if with_children else 0)))

        # ours: own + reaped children's time (wrk is reaped by us inside the window)
        ours = sum(delta(pid, True) for pid in ours1 | (ours0 & set(s1.procs)))
        if self.adopt:
            # an adopted process (conmon) double-forks away from us: when it and its container
            # exit inside the window, their time lands in the children time of whoever reaps
            # them (init, or a subreaper), not in any process we can see
            reapers = {p[0] for pid, p in list(s0.procs.items()) + list(s1.procs.items()) if p[5] in self.adopt}
            reapers.add(1)
            for pid in reapers - ours1:
                p0, p1 = s0.procs.get(pid), s1.procs.get(pid)
                if p0 and p1 and p0[6] == p1[6]:
                    ours += max(0, p1[3] - p0[3])
        kthr = sum(delta(pid, False) for pid, p in s1.procs.items() if p[4])
        busy = s1.busy - s0.busy
        other = max(0, busy - ours - kthr)
        named = []
        for pid, p in s1.procs.items():
            if pid in ours1 or pid in ours0 or p[4]:
                continue
            d = delta(pid, False)
            if d > 0:
                named.append((d, p[5]))
        by = {}
        for d, name in named:
            by[name] = by.get(name, 0) + d
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
    """One window's figures in words. The load average counts every runnable thread, the measured
    server's and the load generator's included, so it is read beside the CPU figures, not alone."""
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
    """Waits until one window of `window` s is clean (contaminated() empty), at most max_wait
    s. Returns (seconds waited, the last window's contamination). Says why it waits, every
    10 s; after max_wait it measures anyway (the run's own contamination is recorded)."""
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
        if st is None:
            break
        pid = int(st[1][1])
    return seen


def _holder(fd):
    try:
        return os.pread(fd, 512, 0).decode(errors="replace").strip() or "unknown"
    except OSError:
        return "unknown"


def lock(what, max_wait=None):
    """Takes the machine-wide measurement lock (LOCK_PATH), waiting for it and saying so.
    A script run by a lock holder (PRIMED_MEASURE_LOCK_HELD names an ancestor) goes on
    without it. max_wait: seconds, None = as long as it takes. Returns True when taken or
    inherited; exits 3 after max_wait. The lock lives as long as this process."""
    global _lock_fd
    if _lock_fd is not None:
        return True
    held = os.environ.get(HELD_ENV, "")
    if held.isdigit() and int(held) in _ancestors():
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
    """For a measuring script: lock, wait (at most max_wait s) for quiet, and print the whole
    run's contamination on stderr at exit, and as a Markdown line on `table` (a file such as
    sys.stdout, where the script prints its table) when given. adopt: see Window (containers
    pass ("conmon",)). Returns the Window."""
    import atexit
    lock(what)
    wait_quiet(max_wait, what=what)
    w = Window(adopt=adopt)

    def report():
        c = w.stop()
        log("%s contamination: %s%s" % (what, describe(c),
                                         ("; CONTAMINATED: " + "; ".join(contaminated(c))) if contaminated(c) else
                                         "; under the threshold"))
        if table is not None:
            try:
                table.write("\n" + header([c]).replace("(worst run)", "(whole run)") + "\n")
                table.flush()
            except (OSError, ValueError):
                pass
    atexit.register(report)
    return w


# ----------------------------------------------------------------------------- CLI

def _run_child(cmd):
    p = subprocess.Popen(cmd)
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, lambda sig, _f: p.send_signal(sig))
    while True:
        try:
            return p.wait()
        except InterruptedError:
            continue


def main(argv):
    if len(argv) >= 1 and argv[0] == "sample":
        secs = float(argv[1]) if len(argv) > 1 else 1.0
        w = Window()
        time.sleep(secs)
        c = w.stop()
        print(describe(c) + ("; CONTAMINATED: " + "; ".join(contaminated(c)) if contaminated(c) else "; quiet"))
        return 1 if contaminated(c) else 0
    if len(argv) < 1 or argv[0] not in ("run", "lock") or "--" not in argv:
        sys.stderr.write(__doc__)
        return 2
    mode, opts, cmd = argv[0], argv[1:argv.index("--")], argv[argv.index("--") + 1:]
    what = cmd[0] if cmd else "?"
    max_wait = 60.0
    i = 0
    while i < len(opts):
        if opts[i] == "--what":
            what = opts[i + 1]
            i += 1
        elif opts[i] == "--max-wait":
            max_wait = float(opts[i + 1])
            i += 1
        i += 1
    if not cmd:
        return 2
    if mode == "lock":
        lock(what)
        return _run_child(cmd)
    guard(what, max_wait)
    return _run_child(cmd)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
