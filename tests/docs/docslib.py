"""tests/docs/docslib.py - what tests/docs/check and the publish tests share: primedlab's path, the
repository's paths, files and blocks read and written, and Docs, a copy of the user docs
(doctree.py) with publish and the check run on it. Import it (after setting
sys.dont_write_bytecode) before anything from primedlab.
"""
import json
import os
import subprocess
import sys

import pathlib, sys  # noqa: E401  the scripts' one package: benchmarks/lib/primedlab, found from any folder
sys.path.insert(0, str(next(p for p in pathlib.Path(__file__).resolve().parents if (p / "benchmarks/lib/primedlab").is_dir()) / "benchmarks/lib"))
from primedlab import blocks  # noqa: E402
import doctree  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
PUBLISH = os.path.join(ROOT, "docs", "publish", "publish.py")


def run(*args):
    """A Python script with its arguments, its output kept as text."""
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=60)


def read(path):
    return open(path, encoding="utf-8").read() if os.path.exists(path) else ""


def load(path):
    return json.load(open(path)) if os.path.exists(path) else {}


def write(path, text, mode="w"):
    with open(path, mode, encoding="utf-8") as f:
        f.write(text)


def block(root, page, name):
    """Block NAME of PAGE (README.md, docs/x.md) under root; run "?" and no body when it has none."""
    found = blocks.find(read(os.path.join(root, page)))
    return next((b for b in found if b["name"] == name), {"run": "?", "body": ""})


def edit_block(root, page, name, edit, run=None):
    """Block NAME of PAGE under root rewritten: its body to edit(body), its run to RUN if given.
    Returns the block as it was."""
    path = os.path.join(root, page)
    b = block(root, page, name)
    write(path, blocks.replace(read(path), name, run or b["run"], edit(b["body"])))
    return b


class Docs:
    """README.md and docs/ copied into tmp/tree to publish into (doctree.copy)."""

    def __init__(self, tmp):
        self.tree, self.docs = doctree.copy(ROOT, tmp)

    def publish(self, *args):
        return run(PUBLISH, "--docs", self.docs, *args)

    def check(self):
        """tests/docs/check's report on the copy."""
        return run(os.path.join(HERE, "check"), self.tree).stdout

    def regenerates(self, t, page, name, old, new, data, where):
        """--regenerate from the same DATA changes nothing, and undoes a hand edit (OLD to NEW) in
        block NAME of PAGE; WHERE says which block in the check's line."""
        p = self.publish("--regenerate")
        t.ok(p.returncode == 0 and "none changed" in p.stdout,
             "--regenerate from the same %s changes nothing" % data, p.stdout + p.stderr)
        was = edit_block(self.tree, page, name, lambda body: body.replace(old, new))
        p = self.publish("--regenerate")
        now = block(self.tree, page, name)["body"]
        t.ok(p.returncode == 0 and old in was["body"] and now == was["body"],
             "--regenerate undoes a hand edit " + where, p.stdout + p.stderr + now)
