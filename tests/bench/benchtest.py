"""tests/bench/benchtest.py - what the smokes of tests/bench share beyond primedtest.bench: the
binaries they test, a benchmark script run with a SIGTERM at its timeout and the exit statuses
they expect, and the TAP lines (T, check) and Markdown tables (md_table, md_rows) they read.
A script sets sys.dont_write_bytecode before `import benchtest` (its folder is on sys.path).
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from primedtest.bench import ROOT, BUILD, BIN, T, check, install_java  # noqa: E402,F401
from primedlab.tap import md_table, md_rows  # noqa: E402,F401

FLOOR = os.path.join(BUILD, "benchmarks", "plaintext_floor")


def arg(i, default):
    """sys.argv[i] (a binary meson passes), else BUILD/default."""
    return sys.argv[i] if len(sys.argv) > i else os.path.join(BUILD, default)


def script(name):
    return os.path.join(ROOT, "benchmarks", name)


def run(argv, timeout=60, **kw):
    """subprocess.run's result for argv (text, output captured); past timeout s it gets SIGTERM,
    so it stops the servers it started (subprocess.run's SIGKILL would leave them), and the
    result says so (returncode None, the reason in stderr)."""
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
    try:
        out, err = p.communicate(timeout=timeout)
        return subprocess.CompletedProcess(argv, p.returncode, out, err)
    except subprocess.TimeoutExpired:
        p.terminate()
        out, err = p.communicate(timeout=30)
        return subprocess.CompletedProcess(argv, None, out, err + "\n(timed out after %d s)" % timeout)


def bench(name, *args, timeout=240):
    """benchmarks/NAME run with args (run()), and a check line that it exits 0 (named with its
    subcommand, when the first argument is one)."""
    p = run([script(name), *args], timeout)
    sub = " " + args[0] if args and not args[0].startswith("-") else ""
    check(p.returncode == 0, "benchmarks/%s%s exits 0" % (name, sub), p.stderr[-1500:])
    return p


def refused(p, word, rc=2):
    """Whether p exited rc (None: any failure) with a message naming word, and no traceback."""
    failed = p.returncode != 0 if rc is None else p.returncode == rc
    return failed and word in p.stderr and "Traceback" not in p.stderr
