"""primedlab - the one Python library of benchmarks/, tests/ and profiles/.

Every script reaches it the same way, with these two lines (identical in every file, at any depth,
in the repository or in a scaling bundle):

    import pathlib, sys  # noqa: E401  the scripts' one package: benchmarks/lib/primedlab, found from any folder
    sys.path.insert(0, str(next(p for p in pathlib.Path(__file__).resolve().parents if (p / "benchmarks/lib/primedlab").is_dir()) / "benchmarks/lib"))

then `from primedlab import spawn, quiet` or `from primedlab.tap import Tap`. One module per
concern, each saying its own in its header. The package spans four folders, each module living
beside what it is about:
  benchmarks/lib/primedlab/  measuring: spawn (a process started, probed, stopped), quiet (the
                             measurement lock, the quiet-machine guard), bench (log line, pinning,
                             one wrk run, the commit), pinned, lab and lab_*, tap, pglib
  knative/model/             the autoscaling model: kpa, ksim, kseed, ksweep, kcold, kmanifest (and
                             knative-sim.py, its command line), next to the manifests it writes
  docs/publish/              the reports and the pages: charts, report_html, lab_report, rundata,
                             scalingrun, figures, blocks (and publish.py), next to the pages they write
  knative/tools/             the manifests' tools: kustomize (the offline renderer the validation
                             uses), seccompprofile (the io-uring overlay's SeccompProfile)
A scaling bundle copies all of them into one folder (benchmarks/scaling.py), so a module is found
in either layout under the same name. Importing the package imports no module.
"""
import pathlib

_ROOT = pathlib.Path(__file__).resolve().parents[3]
__path__ += [str(_ROOT / "knative" / "model"), str(_ROOT / "docs" / "publish"), str(_ROOT / "knative" / "tools")]
