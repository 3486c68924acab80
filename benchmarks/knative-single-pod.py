#!/usr/bin/python3
"""benchmarks/knative-single-pod.py - the autoscaler model's single-pod predictions beside one primed here.

Starts one primed (build/src/primed unless --binary; PRIMED_THREADS=--threads, --dispatch inline
by default so that one request runs on one worker, as the model's FIFO pod does) on 127.0.0.1 with
an ephemeral port, and:
  1. calibrates: wrk -c1 for --calibrate s (one request in flight: no queueing); the model draws
     each service time from a lognormal of that run's p50 and mean (the shape the sweep assumes),
     or with --service measured from its latency distribution (wrk's 101 quantiles, min to max,
     linear between them); a second table gives the other one beside the same runs;
  2. measures, closed loop, wrk -cC for each C of --levels, and open loop, benchmarks/openloop at
     each fraction of --rates of the model's capacity (threads / mean service time);
  3. runs the model (knative/model/ksim.py: one pod, no autoscaler, no containerConcurrency cap:
     wrk and openloop talk to primed directly) with the same concurrency or arrival rate, seed
     --seed, and prints a table: measured and modelled p50, p95 and throughput, and their
     difference in % (the check: within 15 % at p50 and p95 below saturation).
The load generator shares the machine with the server: run it on a quiet machine (the measurement
lock and quiet guard of benchmarks/lib/primedlab/quiet.py apply) and pin as the lab does when comparing.
Figures go to docs/autoscaling.md ("The single-pod check").

--breaker CC puts a real concurrency breaker in front of primed, as queue-proxy is in front of a
pod: HAProxy (Debian's haproxy package) with `maxconn CC` on the server and a 503 for a request
that finds 10 x CC waiting (`queue()`; HAProxy's `maxqueue` would not refuse: it hands the excess
to the backend's queue), as queue-proxy's breaker does (pkg/queue/breaker.go); wrk and
openloop then talk to HAProxy, and the model gets containerConcurrency CC with the activator out
of the path (target-burst-capacity 0), so both refuse past 10 x CC waiting. Add rates above 100 %
(--rates 50,80,120,150) to compare the 503s past saturation. --pin puts primed on the first
--threads CPUs and HAProxy and the load generators on the last CPU (taskset); the table's header
says what it cost: HAProxy's CPU seconds over the runs.

The real-run check, in one command on a quiet machine with 2 CPUs or more:
  benchmarks/knative-single-pod.py --threads 1 --breaker 1 --pin --rates 50,80,95,130
  benchmarks/knative-single-pod.py --threads 2 --breaker 2 --pin --rates 50,80,95,130   (3 CPUs or more)
"""
import argparse
import contextlib
import datetime
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True          # no __pycache__ in the source tree
import pathlib, sys  # noqa: E401  the scripts' one package: benchmarks/lib/primedlab, found from any folder
sys.path.insert(0, str(next(p for p in pathlib.Path(__file__).resolve().parents if (p / "benchmarks/lib/primedlab").is_dir()) / "benchmarks/lib"))
from primedlab import bench, ksim, quiet, spawn  # noqa: E402


def openloop(exe, url, rate, secs, cpu=None):
    p = subprocess.run(bench.taskset(cpu) + [exe, "--rate", "%.3f" % rate, "--duration", str(secs), "--timeout",
                                             "30", url], capture_output=True, text=True, timeout=secs + 60)
    m = re.search(r"^OPENLOOP (.*)$", p.stdout, re.M)
    if p.returncode != 0 or not m:
        bench.die("openloop failed (%d): %s%s" % (p.returncode, p.stdout, p.stderr))
    return {k: float(v) for k, v in (x.split("=", 1) for x in m.group(1).split())}


def model(tg, threads, closed=None, rate=None, secs=10.0, seed=1, breaker=0):
    # with a breaker: queue-proxy's (cc slots, 10 x cc waiting, 503 past them) straight in front
    # of the pod, the activator out of the path (target-burst-capacity 0), as HAProxy here
    sv = ksim.Service(container_concurrency=breaker, target=max(1, breaker), pod_cpus=threads, scheduling_delay_s=0.0,
                      target_burst_capacity=0.0 if breaker else ksim.Service.target_burst_capacity)
    load = (ksim.Load(stages=[(1e-6, closed), (secs, closed)]) if closed else
            ksim.Load(segments=[(secs, rate)], uniform=True))
    return ksim.summarize(ksim.single_pod(tg, sv, load, seed=seed))


HAPROXY_CFG = """global
    maxconn 4096
defaults
    mode http
    timeout connect 5s
    timeout client 120s
    timeout server 120s
    timeout queue 120s
frontend fe
    bind 127.0.0.1:%(port)d
    default_backend be
backend be
    # queue-proxy's breaker: cc requests in flight, a queue of 10 x cc, 503 past it. HAProxy's
    # maxqueue would send the excess to the backend's own queue (unbounded but for its timeout),
    # so the queue's length is refused here instead (queue() is this backend's waiting count).
    http-request return status 503 content-type text/plain string "overload" if { queue() ge %(queue)d }
    server primed 127.0.0.1:%(upstream)d maxconn %(cc)d
"""


def breaker(stack, upstream_port, cc, cpu=None):
    """HAProxy in front of primed: maxconn cc, and 503 for a request that finds 10 x cc waiting;
    a spawn.Group, started once primed's /healthz answers through it, stopped by stack."""
    if not shutil.which("haproxy"):
        bench.die("--breaker needs HAProxy: apt-get install haproxy")
    port = spawn.free_port()
    cfg = os.path.join(stack.enter_context(tempfile.TemporaryDirectory(prefix="breaker-")),
                       "haproxy.cfg")
    with open(cfg, "w") as f:
        f.write(HAPROXY_CFG % {"port": port, "upstream": upstream_port, "cc": cc, "queue": 10 * cc})
    try:
        brk = spawn.Group(bench.taskset(cpu) + ["haproxy", "-db", "-f", cfg], port)
    except spawn.NotReady as e:
        bench.die("haproxy did not listen on 127.0.0.1:%d: %s" % (port, e))
    stack.callback(brk.stop, 10.0)
    return brk


def diff(model_v, meas_v):
    return "n/a" if model_v is None or not meas_v else "%+.0f%%" % (100.0 * (model_v - meas_v) / meas_v)


def main():
    ap = argparse.ArgumentParser(prog="knative-single-pod", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--binary", help="primed (default build/src/primed, built if missing)")
    ap.add_argument("--openloop", help="benchmarks/openloop (default: build*/benchmarks/openloop)")
    ap.add_argument("--threads", type=int, default=1, help="PRIMED_THREADS (default 1, as the lab's server)")
    ap.add_argument("--dispatch", default="inline", choices=("inline", "steal"))
    ap.add_argument("--server-args", default="--max-conns 256")
    ap.add_argument("--levels", default="2,4,8,16", help="wrk concurrencies (default 2,4,8,16)")
    ap.add_argument("--rates", default="50,80", help="openloop rates, %% of the model's capacity (default 50,80)")
    ap.add_argument("--duration", type=int, default=10, help="seconds per run (default 10)")
    ap.add_argument("--calibrate", type=int, default=10, help="seconds of the wrk -c1 run (default 10)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--recalibrate", type=int, default=5, metavar="S",
                    help="seconds of wrk -c1 on primed alone before each row, whose model then uses that row's "
                         "own service times (default 5; 0: the first calibration for every row). On a shared "
                         "host the CPU's speed moves by tens of %% within minutes, without any steal")
    ap.add_argument("--service", choices=("lognormal", "measured"), default="lognormal",
                    help="the model's service times: a lognormal of the calibration's p50 and mean, as the "
                         "sweep assumes (default), or the calibration's own distribution")
    ap.add_argument("--breaker", type=int, default=0, metavar="CC",
                    help="HAProxy in front with maxconn CC and a queue of 10 x CC (503 past it), as queue-proxy "
                         "(default 0: none)")
    ap.add_argument("--pin", action="store_true",
                    help="primed on CPUs 0..threads-1, HAProxy and the load on the last CPU (taskset)")
    ap.add_argument("--quiet-wait", type=float, default=60.0,
                    help="seconds to wait for a quiet machine before measuring anyway (default 60)")
    a = ap.parse_args()
    quiet.guard("benchmarks/knative-single-pod.py", max_wait=a.quiet_wait, table=sys.stdout)
    bench.need_wrk()
    exe = bench.built(a.binary)
    ol = a.openloop or bench.openloop()
    if not ol or not os.access(ol, os.X_OK):
        bench.die("%s: no such executable (ninja -C build benchmarks/openloop, or --openloop)" % (ol or "benchmarks/openloop"))
    levels = [int(x) for x in a.levels.split(",") if x]
    fracs = [float(x) for x in a.rates.split(",") if x]
    env = {"PRIMED_THREADS": str(a.threads), "PRIMED_DISPATCH": a.dispatch}
    ncpu = os.cpu_count() or 1
    if a.pin and ncpu <= a.threads:
        bench.die("--pin needs more CPUs than --threads (%d here)" % ncpu)
    load_cpu = ncpu - 1 if a.pin else None
    with bench.start_clean(exe, env, a.server_args.split()) as srv, contextlib.ExitStack() as stack:
        if a.pin:
            subprocess.run(["taskset", "-a", "-p", "-c", "0-%d" % (a.threads - 1), str(srv.proc.pid)],
                           check=True, capture_output=True)
        cal = bench.wrk_checks(srv.url(), 1, a.calibrate)      # calibrated on primed alone, no breaker
        brk = breaker(stack, srv.port, a.breaker, load_cpu) if a.breaker else None
        url = "http://127.0.0.1:%d/example" % brk.port if brk else srv.url()
        bench.wrk_checks(url, 2, 1)                                            # warm-up, not reported
        mean_ms, p50_ms = cal["mean_us"] / 1e3, cal["p50_us"] / 1e3
        cap = a.threads * 1e3 / mean_ms
        rows = []
        recals = []   # "row mean" of each --recalibrate run, for the header

        def targets(name):
            """The model as asked (--service) and the other one beside it, from the calibration, or
            with --recalibrate from a short wrk -c1 on primed alone just before the row."""
            c = cal
            if a.recalibrate > 0:
                c = bench.wrk_checks(srv.url(), 1, a.recalibrate)
                recals.append("%s %.2f ms" % (name, c["mean_us"] / 1e3))
            qs = tuple(v / 1e3 for v in c["quantiles_us"])
            return tuple(ksim.Target(name="primed here", service_ms_mean=c["mean_us"] / 1e3,
                                     service_ms_median=c["p50_us"] / 1e3, service_ms_quantiles=q)
                         for q in ((qs, None) if a.service == "measured" else (None, qs)))

        def models(tgs, **load):
            return [model(x, a.threads, secs=a.duration, seed=a.seed, breaker=a.breaker, **load)
                    for x in tgs]

        for c in levels:
            tgs = targets("wrk -c%d" % c)
            m = bench.wrk_checks(url, c, a.duration)
            rows.append(("wrk -c%d" % c, m["p50_us"] / 1e3, m["p95_us"] / 1e3, m["req_per_s"], None,
                         *models(tgs, closed=c)))
        for f in fracs:
            rate = cap * f / 100.0
            tgs = targets("openloop %g%%" % f)
            m = openloop(ol, url, rate, a.duration, load_cpu)
            rows.append(("openloop %g%% (%.1f/s)" % (f, rate), m["p50_us"] / 1e3, m["p95_us"] / 1e3,
                         m["achieved_rps"], int(m.get("non2xx", 0)), *models(tgs, rate=rate)))
        breaker_cpu = spawn.cpu_s(brk.pid) if brk else None
    cv = cal["stdev_us"] / cal["mean_us"]
    cv_lognormal = math.sqrt(mean_ms / p50_ms * mean_ms / p50_ms - 1) if mean_ms > p50_ms else 0.0
    print(f"# knative-single-pod  {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC  {bench.machine()}")
    print(f"# command: {' '.join([os.path.relpath(sys.argv[0]).removesuffix('.py')] + sys.argv[1:])}")
    print(f"# server: PRIMED_THREADS={a.threads} PRIMED_DISPATCH={a.dispatch} {exe} {a.server_args}")
    print(f"#   {srv.ready_line}")
    print(f"# calibration (wrk -c1 {a.calibrate}s): mean {mean_ms:.2f} ms, p50 {p50_ms:.2f} ms, p99 "
          f"{cal['p99_us'] / 1e3:.2f} ms, coefficient of variation {cv:.2f} (a lognormal of that p50 and mean: "
          f"{cv_lognormal:.2f}); capacity {a.threads} / mean = {cap:.1f} req/s")
    if recals:
        print("# recalibrated before each row (wrk -c1 %d s, mean): %s" % (a.recalibrate, ", ".join(recals)))
    print("# the model's service time per request: " + (
        "drawn from the calibration's distribution (wrk's 101 quantiles)" if a.service == "measured" else
        "lognormal with the calibration's p50 and mean"))
    if a.breaker:
        print(f"# breaker: HAProxy maxconn {a.breaker}, queue {10 * a.breaker} (503 past it), "
              f"{'on CPU %d with the load' % load_cpu if a.pin else 'unpinned'}; its CPU over the runs: "
              f"{breaker_cpu:.2f} s")
    print(f"# pinning: {'primed on CPUs 0-%d, the load on CPU %d' % (a.threads - 1, load_cpu) if a.pin else 'none'}")
    print(f"# model: knative/model/ksim.py, one pod of {a.threads} worker(s), FIFO, "
          f"{'containerConcurrency %d, queue-proxy queue %d, activator out of the path' % (a.breaker, 10 * a.breaker) if a.breaker else 'no cap'}, seed {a.seed}")
    bench.print_table("One pod: measured against the model",
                      ["load", "measured p50 ms", "model p50 ms", "diff", "measured p95 ms", "model p95 ms", "diff",
                       "measured req/s", "model req/s", "diff", "measured 503s", "model 503s"],
                      [[name, "%.2f" % m50, "%.2f" % p["p50_ms"], diff(p["p50_ms"], m50), "%.2f" % m95,
                        "%.2f" % p["p95_ms"], diff(p["p95_ms"], m95), "%.1f" % mx, "%.1f" % p["throughput_rps"],
                        diff(p["throughput_rps"], mx), "n/a" if e503 is None else e503, p["errors_503"]]
                       for name, m50, m95, mx, e503, p, _ in rows])
    other = "a lognormal of the calibration's p50 and mean" if a.service == "measured" else "the calibration's distribution"
    bench.print_table("The same runs, the model's service times from %s instead" % other,
                      ["load", "measured p95 ms", "model p95 ms", "diff", "measured 503s", "model 503s"],
                      [[name, "%.2f" % m95, "%.2f" % q["p95_ms"], diff(q["p95_ms"], m95),
                        "n/a" if e503 is None else e503, q["errors_503"]] for name, _, m95, _, e503, _, q in rows])
    print()
    print("diff = (model - measured) / measured. The check: within 15 % at p50 and p95 below "
          "saturation (the open-loop rows and the levels below the capacity's knee).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
