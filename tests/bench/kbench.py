"""tests/bench/kbench.py - what the knative-* tests share: one TAP line a check (T, check), the
model's command line run with its output captured, its published inputs as ksim.Targets, and the
generated blocks of the pages it writes. A test imports it from its own folder after
`sys.dont_write_bytecode = True`; it puts benchmarks/lib on sys.path, for primedlab.
"""
import dataclasses
import json
import os
import subprocess

import pathlib, sys  # noqa: E401  the scripts' one package: benchmarks/lib/primedlab, found from any folder
sys.path.insert(0, str(next(p for p in pathlib.Path(__file__).resolve().parents if (p / "benchmarks/lib/primedlab").is_dir()) / "benchmarks/lib"))
from primedlab import blocks  # noqa: E402
from primedlab import ksim  # noqa: E402
from primedlab.tap import Tap  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PUBLISHED = "benchmarks/ksim/published.json"
T = Tap()
check = T.ok


def run(*cmd, timeout=120, **kw):
    """cmd run to its end, its stdout and stderr captured as text (a CompletedProcess)."""
    return subprocess.run(list(cmd), capture_output=True, text=True, timeout=timeout, **kw)


def sim(*args, **kw):
    """`benchmarks/knative-sim ARGS...` through run()."""
    return run(os.path.join(ROOT, "benchmarks", "knative-sim"), *args, **kw)


def published():
    """The model's published inputs: the figures of the published lab run."""
    with open(os.path.join(ROOT, PUBLISHED)) as f:
        return json.load(f)


def target(name):
    """The published target `name` as a ksim.Target, with its first answer's time and image."""
    known = {f.name for f in dataclasses.fields(ksim.Target)}
    row = next(t for t in published()["targets"] if t["name"] == name)
    return ksim.Target(**{k: v for k, v in row.items() if k in known})


def block(page, name):
    """The generated block `name` of docs/PAGE (a dict: name, run, body), or None."""
    with open(os.path.join(ROOT, "docs", page)) as f:
        return next((b for b in blocks.find(f.read()) if b["name"] == name), None)
