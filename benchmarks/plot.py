#!/usr/bin/python3
"""benchmarks/plot.py RESULTS_DIR - the lab's charts as PNG, for the docs.

Writes rps.png (GET /example: best requests/s per target, with primed's engine alone on one
core as a bar of its own; no plaintext peer on it), plaintext.png (nginx's fixed body and every
target's /healthz, on an axis of their own), p95.png (p95 latency at each connection count, a
line per target, log axis), boot.png (start-up) and memory.png (RSS idle, holding N
connections, peak, each bar's value written on it) into RESULTS_DIR, with the same chart
functions as report.html (docs/publish/charts.py: one colour per target, units on every axis).
docs/publish/publish.py keeps them with the run's data in docs/lab/runs/<run-id>/. Needs gnuplot
(Debian gnuplot-nox, profiles/packages' bench group, which benchmarks/run installs); exits 1
without it or when a chart fails.
"""
import shutil

import pathlib, sys  # noqa: E401  the scripts' one package: benchmarks/lib/primedlab, found from any folder
sys.path.insert(0, str(next(p for p in pathlib.Path(__file__).resolve().parents if (p / "benchmarks/lib/primedlab").is_dir()) / "benchmarks/lib"))
from primedlab import charts  # noqa: E402


def main():
    if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(sys.argv) == 2 else 2
    if not shutil.which("gnuplot"):
        sys.stderr.write("plot: gnuplot is not installed (profiles/deps @bench installs gnuplot-nox)\n")
        return 1
    try:
        names = charts.write_pngs(charts.load(sys.argv[1]), sys.argv[1])
    except (OSError, RuntimeError, ValueError) as e:
        sys.stderr.write("plot: %s\n" % e)
        return 1
    print("plot: wrote %s" % ", ".join(names))
    return 0


if __name__ == "__main__":
    sys.exit(main())
