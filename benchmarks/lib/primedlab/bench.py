"""primedlab/bench.py - the toolkit every benchmark script uses.

Owns: the `[NAME HH:MM:SS] message` log line (quiet.py's); primed started pinned with taskset
(start_pinned) or without the caller's PRIMED_* (start_clean), the default binary built when
missing (built); one wrk run with wrk_report.lua's percentiles, server failures apart from client
timeouts and the answers of each second (run_wrk, wrk), or with k6/wrk-checks.lua's checks
(wrk_checks); the commit, the host and a table's header comment; --quick defaults; a Markdown
table on stdout (print_table; tap.md_table reads it back). Never judges a figure: the entry
scripts (benchmarks/*.py) and the lab (lab_*.py) decide what to measure.
"""

import contextlib
import csv
import itertools
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import threading
import time

import psutil

from primedlab import quiet
from primedlab import spawn

BENCH_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # benchmarks/
REPO_ROOT = os.path.dirname(BENCH_DIR)
CHECKS_LUA = os.path.join(BENCH_DIR, "k6", "wrk-checks.lua")


logger = quiet.logger


def taskset(cpus):
    """taskset's prefix for cpus (an int, "0,1" or a list); [] for None or an empty list."""
    if cpus is None or cpus == [] or cpus == "":
        return []
    if isinstance(cpus, (list, tuple)):
        cpus = ",".join(map(str, cpus))
    return ["taskset", "-c", str(cpus)]


def start_pinned(binary, cpus, args=(), env=None, threads=1, ready_timeout=20, scrub=(), **kw):
    """primed on 127.0.0.1:ephemeral pinned to cpus with --threads threads (None: its default), as
    a spawn.Primed, in our environment less the names in scrub, plus env; raises spawn.NotReady."""
    cmd = taskset(cpus) + [binary] + (["--threads", str(threads)] if threads else []) + list(args)
    environ = {k: v for k, v in os.environ.items() if k not in scrub}
    environ.update(env or {})
    return spawn.Primed(cmd[0], cmd[1:], env=environ, args_first=True, ready_timeout=ready_timeout,
                        **kw)


class PerSecondReads(threading.Thread):
    """/proc/PID/io's rchar once a second until stop(): wrk reads its answers with read(2), so
    rates() turns each second's growth into answers/s without a response() hook in wrk's Lua, which
    would copy every answer into Lua and slow the client (and still give no per-second p99)."""

    def __init__(self, pid):
        super().__init__(daemon=True)
        self.proc, self.samples, self.done = psutil.Process(pid), [], threading.Event()
        self.start()

    def run(self):
        t0 = time.monotonic()
        for k in itertools.count(1):
            with contextlib.suppress(psutil.Error):
                self.samples.append((time.monotonic(), self.proc.io_counters().read_chars))
            if self.done.wait(max(0.0, t0 + k - time.monotonic())):
                return

    def stop(self):
        self.done.set()
        self.join()

    def rates(self, bytes_per_answer):
        """Answers/s of each whole second sampled (a last part-second is left out)."""
        if bytes_per_answer <= 0:
            return []
        s = self.samples
        return [round((b1 - b0) / bytes_per_answer / (t1 - t0), 1)
                for (t0, b0), (t1, b1) in zip(s, s[1:]) if t1 - t0 >= 0.5]


def run_wrk(url, conns, secs, threads=2, timeout_s=10, cpus=None, extra=(), lua=spawn.LUA, timeout=None):
    """One wrk run pinned to cpus: (stats, stdout, rc). stats, None without a WRKSTAT line, holds
    wrk_report.lua's figures plus rps, non2xx, failures (refused + reset: the server's), timeouts
    (the client gave up), errors (all of them) and persec_rps (answers of each second)."""
    cmd = taskset(cpus) + spawn.wrk_cmd(url, conns, secs, threads, timeout_s, lua=lua, extra=extra)
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         stdin=subprocess.DEVNULL)
    reads = None
    try:
        reads = PerSecondReads(p.pid)
        out = p.communicate(timeout=timeout)[0]
    except subprocess.TimeoutExpired:
        p.kill()
        out = p.communicate()[0]
    except BaseException:       # SIGTERM's SystemExit, Ctrl-C: no wrk left behind
        p.kill()
        p.wait()
        raise
    finally:
        if reads:
            reads.stop()
    st = spawn.wrk_stats(out) if lua == spawn.LUA else None
    if st is not None:
        n = int(st["requests"])
        m = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
        st["non2xx"] = int(m.group(1)) if m else int(st.get("status", 0))
        st["rps"] = n / (st["duration_us"] / 1e6) if st["duration_us"] else 0.0
        st["failures"] = st["connect"] + st["read"] + st["write"]
        st["timeouts"] = st["timeout"]
        st["errors"] = st["failures"] + st["timeout"] + st.get("status", 0)
        st["persec_rps"] = reads.rates(st["bytes"] / n if n else 0)
    return st, out, p.returncode


def wrk(url, conns, secs, threads=2, timeout_s=10, cpus=None, extra=(), timeout=None):
    """run_wrk's stats; raises RuntimeError with wrk's output tail when it printed none."""
    st, out, _ = run_wrk(url, conns, secs, threads, timeout_s, cpus, extra, timeout=timeout)
    if st is None:
        raise RuntimeError("wrk gave no stats: " + out[-500:])
    return st


def die(msg):
    """Ends the script with `NAME: msg` on stderr and status 1."""
    sys.exit("%s: %s" % (os.path.basename(sys.argv[0]), msg))


def need_wrk():
    if shutil.which("wrk") is None:
        die("wrk is not installed: apt-get install -y wrk")


def built(path):
    """The primed binary: path, or build/src/primed, built (nice, -j2) when that default is missing."""
    default = os.path.join(REPO_ROOT, "build", "src", "primed")
    path = path or default
    if os.path.isfile(path) and os.access(path, os.X_OK):
        return path
    if path != default:
        die("%s: no such executable" % path)
    build = os.path.join(REPO_ROOT, "build")
    if not os.path.isfile(os.path.join(build, "build.ninja")):
        subprocess.run(["meson", "setup", build, REPO_ROOT], check=True, cwd=REPO_ROOT)
    subprocess.run(["nice", "-n", "10", "ninja", "-C", build, "-j2", "src/primed"], check=True)
    return path


def openloop(bundle=""):
    """benchmarks/openloop: a bundle's bin/openloop, else the build's (build, build-check), else
    lib/probe-path's (which builds it with cc); None when there is none."""
    for cand in ([os.path.join(bundle, "bin", "openloop")] if bundle else []) + \
            [os.path.join(REPO_ROOT, d, "benchmarks", "openloop") for d in ("build", "build-check")]:
        if os.access(cand, os.X_OK):
            return cand
    probe = os.path.join(BENCH_DIR, "lib", "probe-path")
    if os.access(probe, os.X_OK):
        p = subprocess.run([probe, "openloop"], capture_output=True, text=True)
        return p.stdout.strip() if p.returncode == 0 else None
    return None


def start_clean(exe, env=None, args=()):
    """primed on 127.0.0.1:ephemeral with none of the caller's PRIMED_* variables, plus env, as a
    spawn.Primed; ends the script when it prints no ready line."""
    try:
        return start_pinned(exe, None, args, env, threads=None, ready_timeout=10,
                            scrub=[k for k in os.environ if k.startswith("PRIMED_")])
    except spawn.NotReady as err:
        die("primed did not print its ready line: %s" % err)


def wrk_checks(url, connections, seconds, threads=2, timeout_s=10):
    """One wrk run with k6/wrk-checks.lua (each answer's status and body checked, as k6's checks
    do): its WRK_RESULT dict plus req_per_s, errors and the command; ends the script when wrk fails."""
    _, out, rc = run_wrk(url, connections, seconds, threads, timeout_s, lua=CHECKS_LUA,
                         timeout=seconds + timeout_s + 30)
    cmd = spawn.wrk_cmd(url, connections, seconds, threads, timeout_s, lua=CHECKS_LUA)
    m = re.search(r"^WRK_RESULT (\{.*\})$", out, re.M)
    if rc != 0 or not m:
        die("%s failed (%s):\n%s" % (" ".join(cmd), rc, out))
    r = json.loads(m.group(1))
    r["req_per_s"] = r["requests"] / (r["duration_us"] / 1e6)
    r["errors"] = sum(r[k] for k in ("connect_errors", "read_errors", "write_errors", "timeouts",
                                     "not_200", "empty"))
    r["command"] = " ".join(cmd)
    return r


def cpu_model():
    """/proc/cpuinfo's model name; "unknown CPU" when it has none."""
    try:
        with open("/proc/cpuinfo") as f:
            return next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), "unknown CPU")
    except OSError:
        return "unknown CPU"


def machine():
    """`MODEL, N CPUs, Linux RELEASE` of this host."""
    return "%s, %d CPUs, Linux %s" % (cpu_model(), os.cpu_count(), os.uname().release)


def git(*args):
    """git's stripped stdout in this checkout; "" outside one (a scaling bundle) or without git."""
    try:
        p = subprocess.run(["git", "-C", REPO_ROOT, *args], capture_output=True, text=True,
                           timeout=10)
    except (OSError, subprocess.SubprocessError):
        return ""
    return p.stdout.strip() if p.returncode == 0 else ""


def commit():
    """This checkout's HEAD, short; "" outside a git checkout or without git."""
    return git("rev-parse", "--short", "HEAD")


def dirty():
    """Whether this checkout's tracked files differ from HEAD (untracked files do not count)."""
    return bool(git("status", "--porcelain", "--untracked-files=no"))


def stamp(command):
    """The HTML comment a printed table starts with: the command, kernel, commit, UTC time, load."""
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    return "<!-- %s; %s; commit %s; %s; load %.2f -->" % (command, os.uname().release, commit(),
                                                          when, os.getloadavg()[0])


def defaults(args, quick, **pairs):
    """Fills each option left at None: name=(full run's value, --quick's value)."""
    for name, (full, short) in pairs.items():
        if getattr(args, name) is None:
            setattr(args, name, short if quick else full)


def med(rows, key):
    """The median of rows' key (rows: one dict a round)."""
    return statistics.median(r[key] for r in rows)


def wrk_cells(rows):
    """A wrk result's table cells over the rounds: median req/s, p50 and p99 in ms, errors summed."""
    return "%.0f | %.3f | %.3f | %d" % (med(rows, "rps"), med(rows, "p50_us") / 1e3, med(rows, "p99_us") / 1e3,
                                         sum(x["errors"] for x in rows))


def md_table(title, header, rows):
    """`### title`, a blank line, then header and rows (lists of cells) as Markdown table lines."""
    return ["### " + title, "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)] + \
        ["| " + " | ".join(str(x) for x in r) + " |" for r in rows]


def print_table(title, header, rows):
    """Prints md_table() after a blank line, on stdout."""
    print("\n" + "\n".join(md_table(title, header, rows)))


def write_csv(path, cols, rows):
    """rows (dicts) as a CSV file of cols: floats with 3 decimals, None empty, other keys left out."""
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols, extrasaction="ignore")
        w.writeheader()
        w.writerows({k: "%.3f" % v if isinstance(v, float) else "" if v is None else v
                     for k, v in r.items()} for r in rows)
