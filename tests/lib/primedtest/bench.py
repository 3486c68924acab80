"""primedtest.bench - what the CI smokes under tests/bench share: this build's primed (meson passes
BENCH_BUILD_ROOT, its build dir; else ROOT/build) and one TAP line a check (T, check)."""
import os
import subprocess
import sys

import primedtest
from primedlab import spawn
from primedlab.tap import Tap

ROOT = str(primedtest.ROOT)
BUILD = os.environ.get("BENCH_BUILD_ROOT") or os.path.join(ROOT, "build")
BIN = os.path.join(BUILD, "src", "primed")
T = Tap()
check = T.ok


def need_bin():
    """Exits 1 (a failure, never a skip) unless this build's primed is there."""
    if not os.access(BIN, os.X_OK):
        print("FAIL: no primed binary at %s (set BENCH_BUILD_ROOT)" % BIN, file=sys.stderr)
        sys.exit(1)


def primed(*args, env=None):
    """This build's primed, --threads 1 and args, on 127.0.0.1 (port 0); env added to ours."""
    return spawn.Primed(BIN, ["--threads", "1", *args], env=dict(os.environ, **(env or {})), ready_timeout=20)


def install_java(group, what=""):
    """profiles/deps GROUP and benchmarks/peers/java/jdk21 --check (cached): a check line each,
    either failing a failure, never a skip. Whether every check so far held."""
    p = subprocess.run([os.path.join(ROOT, "profiles", "deps"), group], capture_output=True, text=True, timeout=900)
    check(p.returncode == 0, "profiles/deps %s%s %s" % (group, what, p.stderr[-300:]))
    p = subprocess.run([os.path.join(ROOT, "benchmarks", "peers", "java", "jdk21"), "--check"], capture_output=True,
                       text=True, timeout=1500)
    check(p.returncode == 0, "benchmarks/peers/java/jdk21 --check: %s" % (p.stderr.strip().splitlines() or ["?"])[-1])
    return not T.failed
