#!/usr/bin/python3
"""benchmarks/containers.py: the container variants side by side, in one run.

Per variant (localhost/primed:<variant>, built by container/build) and for the
floor image (container/floor: a static do-nothing responder, podman's own cost):

  size, layers   podman image inspect (.Size, len .RootFS.Layers)
  build s        wall time of `container/build VARIANT` in this run, with how many
                 build steps podman took from its layer cache
  start ms       container start -> first 200 on /healthz, median of --runs
                 (benchmarks/startup's busy connect poller running
                 container/podman-run: podman run -d --network=host --read-only
                 --security-opt seccomp=container/seccomp.json); rounds alternate
                 the variant order so machine noise spreads evenly
  - floor ms     start ms minus the floor image's: what the variant itself adds
  first /example the first GET /example answered (same runs)
  RSS idle/load  VmRSS of the container's pid 1 (/proc/PID/status) after 1 s idle,
                 and after the wrk run (VmHWM = peak)
  req/s          wrk -t2 -c50 -d<S>s GET /example (one fresh container)
  stop ms        `podman stop` wall time (SIGTERM, drain, exit, runc clean-up), and
                 the server's exit status

Prints a Markdown table (and the raw lines) on stdout; --write-docs also puts
the table into docs/containers.md between its containers-table markers.
"""
import argparse
import datetime
import os
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import time

import psutil

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import pathlib, sys  # noqa: E401  the scripts' one package: benchmarks/lib/primedlab, found from any folder
sys.path.insert(0, str(next(p for p in pathlib.Path(__file__).resolve().parents if (p / "benchmarks/lib/primedlab").is_dir()) / "benchmarks/lib"))
from primedlab import bench, quiet, spawn  # noqa: E402

ROOT = bench.REPO_ROOT
CONTAINER = os.path.join(ROOT, "container")
ENV = dict(os.environ, CONTAINERS_CONF=os.environ.get(
    "CONTAINERS_CONF", os.path.join(CONTAINER, "containers.conf")))
VARIANTS = {"static": ("lto-static", "scratch"), "distroless": ("pgo", "Debian pkgs, distroless-style"),
            "slim": ("default", "debian:bookworm-slim"), "floor": ("-", "scratch")}  # (profile, base)
log = bench.logger("containers")


def sh(cmd, **kw):
    return subprocess.run(cmd, env=ENV, text=True, capture_output=True, **kw)


def build(variant, build_args):
    t0 = time.monotonic()
    p = sh([os.path.join(CONTAINER, "build"), *build_args, variant])
    dt = time.monotonic() - t0
    if p.returncode != 0:
        sys.exit(f"containers: container/build {variant} failed:\n{p.stderr[-4000:]}")
    steps = len(re.findall(r"^\[\d+/\d+\] STEP ", p.stderr, re.M)) or \
        len(re.findall(r"^STEP \d+/\d+", p.stderr, re.M))
    cached = p.stderr.count("Using cache")
    return {"build_s": dt, "build_cached": f"{cached}/{steps}", "build_line": p.stdout.strip()}


def inspect(image):
    p = sh(["podman", "image", "inspect", "--format", "{{.Size}} {{len .RootFS.Layers}}", image])
    if p.returncode != 0:
        sys.exit(f"containers: no image {image} (build it: container/build): {p.stderr.strip()}")
    size, layers = p.stdout.split()
    return {"size": int(size), "layers": int(layers)}


def startup(image, runs, port):
    """One benchmarks/startup call: the healthz and example ms of the runs that got one, its command."""
    cmd = [os.path.join(ROOT, "benchmarks", "startup"), "--runs", str(runs), "--port", str(port),
           "--timeout", "60", "--", os.path.join(CONTAINER, "podman-run"), image]
    p = sh(cmd, timeout=120 * runs)
    ms = re.findall(r"^run=\d+ healthz_ms=([-\d.]+) readyz_ms=[-\d.]+ example_ms=([-\d.]+)", p.stdout, re.M)
    h = [float(x) for x, _ in ms if float(x) > 0]
    e = [float(x) for _, x in ms if float(x) > 0]
    if p.returncode != 0 or not h:
        log(f"startup {image}: rc={p.returncode}\n{p.stdout[-1500:]}{p.stderr[-1500:]}")
    return h, e, " ".join(shlex.quote(c) for c in cmd)


def load(image, wrk_s, port):
    """Fresh container: RSS at idle, wrk on /example, RSS after, stop time."""
    name = f"primed-bench-{os.getpid()}-{port}"
    env = dict(ENV, PORT=str(port), PODMAN_RUN_NAME=name)
    w = subprocess.Popen([os.path.join(CONTAINER, "podman-run"), image], env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    res = {}
    try:
        if not spawn.wait_ok(port, "/healthz", 60, proc=w):
            log(f"{image}: never healthy for the load run")
            return res
        pid1 = psutil.Process(int(sh(["podman", "inspect", "-f", "{{.State.Pid}}", name]).stdout))
        time.sleep(1.0)
        idle_kb, uid, threads = pid1.memory_info().rss // 1024, pid1.uids().real, pid1.num_threads()
        st = bench.run_wrk(f"http://127.0.0.1:{port}/example", 50, wrk_s, timeout_s=5)[0]
        res = {"rss_idle_kb": idle_kb, "rss_load_kb": pid1.memory_info().rss // 1024,
               "hwm_kb": spawn.status_kib(pid1.pid, "VmHWM"), "uid": uid, "threads": threads,
               "rps": st["rps"] if st else 0.0, "non2xx": st["non2xx"] if st else 0}
    finally:
        # `podman stop` timed on its own (SIGTERM, primed drains, conmon/runc reap);
        # the wrapper then only removes the stopped container.
        if w.poll() is None:
            t0 = time.monotonic()
            sh(["podman", "stop", "-t", "10", name], timeout=60)
            res["stop_ms"] = (time.monotonic() - t0) * 1e3
            w.send_signal(signal.SIGTERM)
        res["exit"] = w.wait(timeout=60)
    return res


def table(rows, floor_ms, runs, wrk_s):
    hdr = ("| variant | profile | base | image MB | layers | build s (cached steps) | start→/healthz ms "
           f"(median of {runs}) | minus floor ms | first /example ms | RSS idle MiB | RSS after load MiB "
           f"(peak) | /example req/s (wrk -c50 {wrk_s}s) | stop ms (exit) |")
    out = [hdr, "|" + "---|" * hdr.count(" |")]
    for v, r in rows:
        fmt = lambda k, f="{:.0f}": f.format(r[k]) if r.get(k) is not None else "n/a"  # noqa: E731
        minus = f"{r['start_ms'] - floor_ms:+.0f}" if r.get("start_ms") is not None and v != "floor" else "—"
        mib = lambda k: f"{r[k] / 1024:.1f}" if k in r else "n/a"  # noqa: E731
        out.append(
            f"| {v} | {' | '.join(VARIANTS[v])} | {r['size'] / 1e6:.1f} | {r['layers']} | "
            f"{fmt('build_s', '{:.1f}')} ({r.get('build_cached', 'n/a')}) | {fmt('start_ms')} | {minus} | "
            f"{fmt('example_ms')} | {mib('rss_idle_kb')} | {mib('rss_load_kb')} ({mib('hwm_kb')}) | "
            f"{fmt('rps')}{' (' + str(r['non2xx']) + ' non-2xx)' if r.get('non2xx') else ''} | "
            f"{fmt('stop_ms')} ({r.get('exit', 'n/a')}) |")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(prog="benchmarks/containers.py", description=__doc__.split("\n")[0])
    ap.add_argument("--variants", default="static,distroless,slim")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--wrk-seconds", type=int, default=10)
    ap.add_argument("--build-args", default="", help='passed to container/build, e.g. "--from-host"')
    ap.add_argument("--no-build", action="store_true", help="use the existing images")
    ap.add_argument("--write-docs", action="store_true")
    a = ap.parse_args()
    quiet.guard("benchmarks/containers.py", table=sys.stdout, adopt=("conmon",))  # its containers are ours
    if os.geteuid() != 0:
        sys.exit("containers: needs root (rootful podman)")
    variants = [v for v in a.variants.split(",") if v] + ["floor"]
    for v in variants:
        if v not in VARIANTS:
            sys.exit(f"containers: unknown variant {v}")
    if not shutil.which("wrk"):
        subprocess.run([os.path.join(ROOT, "profiles", "deps"), "wrk"], check=True, stdout=sys.stderr)
    rows = {v: {} for v in variants}
    for v in variants:
        if not a.no_build:
            log(f"building {v}")
            rows[v].update(build(v, a.build_args.split()))
        rows[v].update(inspect(f"localhost/primed:{v}"))
    # Start-up: two rounds in opposite orders, half the runs each.
    starts = {v: ([], []) for v in variants}
    port = spawn.free_port()
    cmds = {}
    half = max(1, a.runs // 2)
    for v in variants + variants[::-1]:
        log(f"start-up {v} ({half} runs)")
        h, e, cmds[v] = startup(f"localhost/primed:{v}", half, port)
        starts[v][0].extend(h)
        starts[v][1].extend(e)
    for v, (h, e) in starts.items():
        rows[v]["start_ms"] = statistics.median(h) if h else None
        rows[v]["example_ms"] = statistics.median(e) if e and v != "floor" else None
    for v in variants:
        log(f"load {v}")
        rows[v].update(load(f"localhost/primed:{v}", a.wrk_seconds, spawn.free_port()))
    floor_ms = rows["floor"].get("start_ms") or 0.0
    podman_v = sh(["podman", "--version"]).stdout.strip()
    md = [f"Measured {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC on {os.cpu_count()} CPUs, "
          f"kernel {os.uname().release}, {podman_v} (runc), by:",
          "", "```", "benchmarks/containers.py " + " ".join(shlex.quote(x) for x in sys.argv[1:]), "```", "",
          table([(v, rows[v]) for v in variants], floor_ms, a.runs, a.wrk_seconds), "",
          f"Start-up command per run: `{cmds.get(variants[0], '')}` (PORT set by the probe)."]
    md = "\n".join(md)
    print(md)
    print("\nraw:")
    for v in variants:
        print(f"variant={v} " + " ".join(f"{k}={x}" for k, x in rows[v].items()) +
              " start_ms_all=" + ",".join(f"{x:.0f}" for x in starts[v][0]))
    if a.write_docs:
        path = os.path.join(ROOT, "docs", "containers.md")
        doc = open(path).read()
        new, n = re.subn(r"(<!-- containers-table:begin -->\n).*?(<!-- containers-table:end -->)",
                         lambda m: m.group(1) + md + "\n" + m.group(2), doc, flags=re.S)
        if n != 1:
            sys.exit("containers: docs/containers.md has no containers-table markers")
        open(path, "w").write(new)
        log("docs/containers.md updated")
    return 1 if any(not r.get("start_ms") or not r.get("rps") for r in rows.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
