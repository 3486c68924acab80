"""benchmarks/lib/primedlab/lab.py - the comparison lab (benchmarks/load.py), the names its users call.

The lab is one concern per module: lab_target.py (a target: start, stop, /proc), lab_measure.py
(one window: wrk, open loop, siege, start-up, prime_bench; re-measured while contaminated),
lab_table.py (a run's rows), lab_report.py (the results directory's files), lab_run.py (one run,
in order). This module only gathers what benchmarks/load.py, benchmarks/gateway.py, benchmarks/scaling.py,
the Java peers (benchmarks/peers/java/lab21.py, labstacks.py) and tests/bench/* use, so that
`lab.lab(...)`, `lab.Target(...)`, `lab.log(...)` and the rest read as before. Never holds code.
Standard library only.
"""

from primedlab import bench, quiet, spawn  # noqa: F401  (lab.bench, lab.quiet, lab.spawn)
from primedlab.lab_measure import run_openloop, run_siege, run_wrk, settled  # noqa: F401
from primedlab.lab_run import lab  # noqa: F401
from primedlab.lab_target import (BENCH_DIR, REPO_ROOT, Target, dir_bytes, group_sample,  # noqa: F401
                                  human_bytes, jvm_settings, log, safe, start, stop)
