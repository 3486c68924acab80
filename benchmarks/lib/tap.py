"""benchmarks/lib/tap.py - TAP lines for the Python test scripts (tests/knative/validate,
tests/monitoring/*): `ok N - what`, `not ok N - what` with `#   ` detail lines, `# SKIP`, `# note`,
and the `1..N` plan at the end; finish() returns the exit status meson's exit-code protocol reads.
Lives next to spawn.py, the scripts' one shared library. Standard library only.
"""


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
