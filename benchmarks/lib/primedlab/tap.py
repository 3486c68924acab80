"""benchmarks/lib/primedlab/tap.py - TAP lines for the Python test scripts: `ok N - what`,
`not ok N - what` with `#   ` detail lines, `# SKIP`, `# note`, the `1..N` plan at the end, and the
exit status meson's exit-code protocol reads; md_table() reads back a benchmark's Markdown table.
"""
import re


class Tap:
    """max_detail caps the detail lines a failure prints (None: all)."""

    def __init__(self, max_detail=None):
        self.n = self.failed = 0
        self.max_detail = max_detail

    def ok(self, cond, desc, detail=None):
        self.n += 1
        print(("ok" if cond else "not ok") + f" {self.n} - {desc}", flush=True)
        if not cond:
            self.failed += 1
            for line in str(detail or "").splitlines()[:self.max_detail]:
                print("#   " + line)
        return cond

    def skip(self, desc, why):
        self.n += 1
        print(f"ok {self.n} - {desc} # SKIP {why}", flush=True)

    def errors(self, desc, errs):
        """One check from a list of problems: passes when the list is empty."""
        return self.ok(not errs, desc, "\n".join(errs))

    def note(self, msg):
        print("# " + msg, flush=True)

    def finish(self):
        print(f"1..{self.n}")
        return 1 if self.failed else 0


def md_table(out, title):
    """(header, rows) of the Markdown table under the heading `### title...` in out, each a list
    of stripped cells, the |---| line left out; None when out has no such table."""
    m = re.search(r"^### " + re.escape(title) + r".*\n\n((?:\|.*\n)+)", out, re.M)
    if not m:
        return None
    lines = [[c.strip() for c in line.strip().strip("|").split("|")] for line in m.group(1).splitlines()]
    return lines[0], lines[2:]


def md_rows(out, title):
    """The rows of md_table(out, title), or None."""
    t = md_table(out, title)
    return t[1] if t else None
