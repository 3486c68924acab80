"""benchmarks/lib/primedlab - the one Python library of benchmarks/, tests/ and profiles/.

Every script reaches it the same way, with these two lines (identical in every file, at any depth,
in the repository or in a scaling bundle):

    import pathlib, sys  # noqa: E401  the scripts' one package: benchmarks/lib/primedlab, found from any folder
    sys.path.insert(0, str(next(p for p in pathlib.Path(__file__).resolve().parents if (p / "benchmarks/lib/primedlab").is_dir()) / "benchmarks/lib"))

then `from primedlab import spawn, quiet` or `from primedlab.tap import Tap`. One module per
concern, each saying its own in its header: spawn (primed on --port 0), quiet (the measurement
lock and the quiet-machine guard), tap (TAP lines), bench (logging, pinning, one wrk run), pinned (a server pinned to one CPU), lab
(the comparison lab, in lab_*.py), charts and report_html (report.html), blocks, figures and
rundata (the published figures), ksim, kpa, kseed, ksweep, kcold, kmanifest (the autoscaling
model), pglib (a throwaway PostgreSQL). Standard library only, except kmanifest (PyYAML).
Importing the package imports nothing else: each script names the modules it uses.
"""
