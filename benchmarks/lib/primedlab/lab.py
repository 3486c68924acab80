"""benchmarks/lib/primedlab/lab.py - the comparison lab's names as its scripts call them (lab.lab(...),
lab.Target(...), lab.log(...)); no code: lab_target (a target), lab_measure (one window), lab_table
(a run's rows), lab_report (its files) and lab_run (one run, in order) hold it.
"""

from primedlab import bench, quiet, spawn  # noqa: F401  (lab.bench, lab.quiet, lab.spawn)
from primedlab.lab_measure import run_openloop, run_siege, settled  # noqa: F401
from primedlab.lab_run import lab  # noqa: F401
from primedlab.lab_target import (BENCH_DIR, REPO_ROOT, Target, dir_bytes, human_bytes,  # noqa: F401
                                  jvm_settings, log, safe, start, stop)
