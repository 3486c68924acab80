#!/usr/bin/python3
"""benchmarks/load.py - side-by-side load test of primed builds and their peers, in one run.

Every target runs at once on its own port; wrk visits them A B A B (per concurrency, per
round), so drift on a shared machine hits all alike. Then the open loop (benchmarks/openloop:
constant arrival rate at --open-loop % of each target's best closed-loop /example req/s) and
siege -r 10 -c 10 (as seed 003 ran it) visit them the same way. Prints progress on stderr and writes
table.md, results.csv, runs.csv, summary.csv, startup.csv, meta.txt and the charts
(benchmarks/plot.py) into --out (default benchmarks/results/<UTC date-time>/). benchmarks/run builds the primed
targets and calls this; call it directly to compare binaries you built yourself, e.g.
  benchmarks/load.py --primed mine=build/src/primed --cmd 'ctr=podman run --rm --net=host -e PORT img'
A --cmd command gets PORT in its environment and must answer GET /healthz.

Quiet machine (benchmarks/lib/primedlab/quiet.py): the run takes the machine-wide measurement lock
(another measurement waits, and says so); before each measurement it waits up to --quiet-wait
s for a window in which no other process used more than 5 % of a CPU; during each one it
records what else ran (other processes' CPU, steal, load average) in runs.csv and the
table headers. A run with a window above the threshold is marked CONTAMINATED and
docs/publish/publish.py refuses it.
"""
import argparse
import os
import re
import shlex
import shutil
import subprocess
import time

import pathlib, sys  # noqa: E401  the scripts' one package: benchmarks/lib/primedlab, found from any folder
sys.path.insert(0, str(next(p for p in pathlib.Path(__file__).resolve().parents if (p / "benchmarks/lib/primedlab").is_dir()) / "benchmarks/lib"))
from primedlab import lab, report_html, spawn  # noqa: E402
sys.path.insert(0, os.path.join(lab.BENCH_DIR, "peers", "java"))
import lab21  # noqa: E402  (--peers java21: java21-fixed, java21-virtual)
import labstacks  # noqa: E402  (--peers stacks: the Tomcat and Netty rows)


def sh(cmd, timeout=20):
    """stdout of cmd, stripped; "" when it fails, exits non-zero or outlives timeout."""
    try:
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             stdin=subprocess.DEVNULL, start_new_session=True)
    except OSError:
        return ""
    try:
        out = p.communicate(timeout=timeout)[0].strip()
        return out if p.returncode == 0 else ""
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, 9)
        p.communicate()
        return ""


def shared_libs_bytes(path):
    """Sum of the sizes of the shared libraries `path` loads (ldd), 0 when static."""
    out = subprocess.run(["ldd", path], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True).stdout
    total = 0
    for line in out.splitlines():
        parts = line.split()
        cand = parts[2] if len(parts) >= 3 and parts[1] == "=>" else (parts[0] if parts and parts[0].startswith("/") else None)
        if cand and os.path.exists(cand):
            total += os.path.getsize(os.path.realpath(cand))
    return total


def artifact(t, path):
    t.artifact_bytes = os.path.getsize(path)
    libs = shared_libs_bytes(path)
    t.artifact_note = ("+ %s shared libs" % lab.human_bytes(libs)) if libs else "(static)"


# The engine rows: (row, flag, value, what it stands for). One per CPU class (--prime-vector), and
# FLINT's reference prime in the same server (--prime-engine flint), the Java answer's first factor.
ENGINES = [("primed-ifma", "--prime-vector", "ifma", "the engine a CPU with AVX-512 IFMA runs"),
           ("primed-avx512", "--prime-vector", "avx512", "the engine a CPU with AVX-512F, no IFMA, runs"),
           ("primed-avx2", "--prime-vector", "avx2", "the engine a CPU with AVX2 only runs"),
           ("primed-scalar", "--prime-vector", "off", "the engine a CPU with none of them runs (arm64, older x86)"),
           ("primed-flint", "--prime-engine", "flint", "FLINT's reference fmpz_randprime instead of the sieve")]


def engine_targets(primed, port, names):
    """The rows of `names` (ENGINES' first column): the first primed target's binary with its prime
    engine forced (FLAG VALUE, and the flag's environment variable). A row whose vector engine this
    CPU lacks (the binary's --version names the ones it runs), or a binary without the flag, is
    skipped with why."""
    if not primed:
        lab.log("%s skipped: no primed target to force an engine in" % ", ".join(names))
        return []
    base = primed[0]
    helptext = sh([base.cmd[0], "--help"], timeout=5) or ""
    runs = re.search(r"this CPU runs: ([a-z0-9 ]+)", sh([base.cmd[0], "--version"], timeout=5) or "")
    runs = runs.group(1).split() if runs else ["scalar"]
    out = []
    for name, flag, value, what in ENGINES:
        if name not in names:
            continue
        if flag not in helptext:
            lab.log("%s skipped: %s --help has no %s" % (name, base.cmd[0], flag))
            continue
        if flag == "--prime-vector" and value != "off" and value not in runs:
            lab.log("%s skipped: this CPU has no %s (it runs %s)" % (name, value, " ".join(runs)))
            continue
        var = "PRIMED_" + flag[2:].replace("-", "_").upper()
        t = lab.Target(name=name, kind="primed", cmd=base.cmd + [flag, value], env=dict(base.env, **{var: value}),
                       port=port + len(out))
        t.build, t.build_s = base.build, base.build_s
        t.artifact_bytes, t.artifact_note = base.artifact_bytes, base.artifact_note
        t.note = "%s with %s %s: %s" % (base.name, flag, value, what)
        out.append(t)
    return out


def java_targets(args):
    if not shutil.which("java") or not shutil.which("javac"):
        lab.log("java peer skipped: java/javac missing (apt-get install openjdk-17-jdk-headless)")
        return []
    runner = os.path.join(lab.BENCH_DIR, "peers", "java", "run")
    p = subprocess.run([runner, "--compile-only"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    kv = dict(x.split("=", 1) for x in p.stdout.split() if "=" in x)
    if p.returncode != 0 or "javac_s" not in kv:
        lab.log("java peer skipped: javac failed: %s" % p.stdout.strip()[-300:])
        return []
    cache = os.path.join(os.environ.get("BENCH_CACHE", os.path.join(lab.BENCH_DIR, ".cache")), "java")
    java = os.path.realpath(shutil.which("java"))
    home = os.path.dirname(os.path.dirname(java))
    ver = subprocess.run(["java", "-version"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True).stdout
    major = int((ver.split('"')[1].split(".")[0]) if '"' in ver else 0)
    out = []
    # (name, THREAD_TYPE, extra JVM flags). java-nodelay is opt-in: the seed ran without it,
    # and without it the JDK's HttpServer waits on delayed ACKs (~40 ms per keep-alive reply).
    variants = [("java-fixed", "fixed", [])]
    if "java-nodelay" in args.peers.split(","):
        variants.append(("java-fixed-nodelay", "fixed", ["-Dsun.net.httpserver.nodelay=true"]))
    if major >= 21:
        variants.append(("java-virtual", "virtual", []))
    for name, tt, flags in variants:
        t = lab.Target(name=name, kind="java", cmd=[java] + shlex.split(os.environ.get("JAVA_OPTS", "")) + flags +
                       ["-cp", cache, "Example"], env={"THREAD_TYPE": tt})
        t.build_s = float(kv["javac_s"])
        t.build = "%.1f s (javac)" % t.build_s
        t.artifact_bytes = int(kv["class_bytes"])
        t.artifact_note = "+ %s JDK %d" % (lab.human_bytes(lab.dir_bytes(home)), major)
        t.note = ("com.sun.net.httpserver, Executors.newFixedThreadPool(200), INFO log per request, JDK %d, %s"
                  % (major, " ".join(flags) or "untuned JVM (as the seed ran it)") if tt == "fixed"
                  else "virtual thread per task, JDK %d" % major)
        out.append(t)
    if major < 21:
        out[0].note += "; THREAD_TYPE=virtual not measured: JDK %d has no virtual threads (needs 21+)" % major
    return out


def nginx_targets(args, port):
    """[nginx on port] (its configuration names the port), or [] when it is not installed."""
    if not os.access("/usr/sbin/nginx", os.X_OK):
        lab.log("nginx peer skipped: /usr/sbin/nginx missing (apt-get install nginx)")
        return []
    runner = os.path.join(lab.BENCH_DIR, "peers", "nginx-run")
    env = dict(os.environ, PORT=str(port), NGINX_WORKERS=str(lab_ncpu(args)))
    cmd = subprocess.run([runner, "--prepare"], env=env, stdout=subprocess.PIPE, text=True).stdout.split()
    t = lab.Target(name="nginx", kind="nginx", cmd=cmd, port=port, does_prime=False)
    t.build = "n/a (Debian package)"
    artifact(t, "/usr/sbin/nginx")
    ver = subprocess.run(["/usr/sbin/nginx", "-v"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True).stdout
    t.note = ("%s, %d worker(s), fixed body Hello_1 on /example (no prime: the plaintext ceiling), no access log"
              % (ver.strip().replace("nginx version: ", ""), lab_ncpu(args)))
    return [t]


def container_targets(args):
    """One target per container variant whose image localhost/primed:VARIANT exists (built by
    container/build), run through container/podman-run like benchmarks/containers.py does."""
    runner = os.path.join(lab.REPO_ROOT, "container", "podman-run")
    if args.containers == "none" or not shutil.which("podman") or not os.access(runner, os.X_OK):
        if args.containers not in ("none", "auto"):
            lab.log("container targets skipped: podman or container/podman-run missing")
        return []
    want = ["static", "distroless", "slim"] if args.containers == "auto" else args.containers.split(",")
    out = []
    for v in want:
        image = "%s:%s" % (os.environ.get("BENCH_IMAGE_REPO", "localhost/primed"), v)
        size = sh(["podman", "image", "inspect", "-f", "{{.Size}}", image], timeout=30)
        if not size.isdigit():
            if args.containers != "auto":
                lab.log("container %s skipped: no image %s (container/build %s)" % (v, image, v))
            continue
        name = "primed-lab-%s-%d" % (v, os.getpid())
        opts = "-e PRIMED_THREADS -e PRIMED_HOST"
        if args.server_cpus:
            opts += " --cpuset-cpus=%s" % ",".join(map(str, args.server_cpus))
        t = lab.Target(name="ctr-%s" % v, kind="container", cmd=[runner, image],
                       env={"PRIMED_THREADS": str(lab_ncpu(args)), "PRIMED_HOST": "127.0.0.1",
                            "PODMAN_RUN_NAME": name, "PODMAN_RUN_OPTS": opts}, container=name)
        t.build = "see benchmarks/containers.py"
        t.artifact_bytes = int(size)
        t.artifact_note = "(image)"
        t.note = "%s via container/podman-run (podman, --network=host, --read-only, seccomp); %s" % (image, opts)
        out.append(t)
    return out


def primed_targets(args):
    """One target per --primed binary and dispatch."""
    out = []
    btimes = dict(x.split("=", 1) for x in args.build_time)
    for spec in args.primed:
        name, _, path = spec.partition("=")
        path, _, disp = path.partition("@")
        path = os.path.abspath(path)
        if not os.access(path, os.X_OK):
            lab.log("primed %s skipped: %s is not an executable" % (name, path))
            continue
        disps = [x for x in (disp or args.dispatch).split(",") if x]
        for d in disps:
            env = {"PRIMED_HOST": "127.0.0.1", "PRIMED_THREADS": str(lab_ncpu(args))}
            if len(disps) > 1:
                env["PRIMED_DISPATCH"] = d  # a build with one dispatch compiled in needs no choice
            t = lab.Target(name="%s/%s" % (name, d), kind="primed", cmd=[path], env=env)
            if name in btimes:
                t.build_s = float(btimes[name])
                t.build = "%.1f s" % t.build_s
            artifact(t, path)
            ver = sh([path, "--version"], timeout=5)
            t.note = "%s; %s; %d worker thread(s)" % (
                "; ".join(l.strip() for l in ver.splitlines()[:7]
                          if l.strip() and not l.startswith(("flags", "dispatch")))
                if ver else path, ("PRIMED_DISPATCH=" + d) if len(disps) > 1 else "dispatch " + d, lab_ncpu(args))
            out.append(t)
    return out


def lab_ncpu(args):
    return len(args.server_cpus) if args.server_cpus else len(os.sched_getaffinity(0))


def ints(s):
    return [int(x) for x in s.split(",") if x.strip()]


def main():
    lab.spawn.exit_on_sigterm()
    ap = argparse.ArgumentParser(prog="benchmarks/load.py", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="~1-minute smoke run: short runs, 1 round (figures not quoted)")
    ap.add_argument("--primed", action="append", default=[], metavar="NAME=BINARY[@DISPATCH,...]",
                    help="a primed binary; one target per dispatch (PRIMED_DISPATCH set only when >1 given)")
    ap.add_argument("--build-time", action="append", default=[], metavar="NAME=SECONDS",
                    help="build wall time of a --primed NAME, shown as BUILD TIME")
    ap.add_argument("--dispatch", default="inline,steal", help="dispatch list for a --primed without @...")
    ap.add_argument("--peers", default="java,nginx",
                    help="comma list of java, java-nodelay (JDK HttpServer with TCP_NODELAY), java21 (JDK 21: "
                         "java21-fixed, java21-virtual), stacks (tomcat-platform, tomcat-tuned, tomcat-virtual, netty, "
                         "tomcat-appcds; docs/java-peers.md), engines (primed-ifma, primed-avx512, primed-avx2, primed-scalar: the first primed "
                         "with each base-2 engine this CPU has forced by --prime-vector; primed-flint: with "
                         "--prime-engine flint) or one of those rows, nginx; or none")
    ap.add_argument("--cmd", action="append", default=[], metavar="NAME=COMMAND", help="any other server command")
    ap.add_argument("--containers", default="auto",
                    help="container variants to add (images localhost/primed:VARIANT): auto (those built), none, "
                         "or a list such as static,slim")
    ap.add_argument("--pin", choices=["split", "none"], default=None,
                    help="split: server on the first half of the CPUs, wrk and the probe on the rest (default when "
                         ">= 2 CPUs); none: everything shares every CPU")
    ap.add_argument("--duration", type=int, default=None, help="seconds per wrk run (default 10, quick 2)")
    ap.add_argument("--rounds", type=int, default=None, help="interleaved rounds (default 2, quick 1)")
    ap.add_argument("--warmup", type=int, default=None, help="unrecorded warm-up seconds per target (default 3, quick 1)")
    ap.add_argument("--warmup-max", type=int, default=None,
                    help="JVM targets warm up until the per-second series settles, at most this many s (default 120, "
                         "quick 20)")
    ap.add_argument("--conns", default="50,100,200")
    ap.add_argument("--healthz-conns", default="200")
    ap.add_argument("--startup-runs", type=int, default=None, help="start-up runs per target (default 10, quick 3)")
    ap.add_argument("--rss-conns", type=int, default=None,
                    help="keep-alive connections held for the RAM @N conns column, after the load (default 1000, "
                         "quick 100; 0 skips)")
    ap.add_argument("--prime-bench", default=os.path.join(lab.REPO_ROOT, "build", "benchmarks", "prime_bench"))
    ap.add_argument("--prime-count", type=int, default=None)
    ap.add_argument("--quiet-wait", type=float, default=None,
                    help="seconds to wait for a quiet machine before each measurement (default 60, quick 2); "
                         "the run's contamination is recorded either way")
    ap.add_argument("--remeasure", type=int, default=None,
                    help="times a window that comes out contaminated is measured again (default 2, quick 0)")
    ap.add_argument("--open-loop", default="50,80,95,110",
                    help="open-loop loads in %% of each target's measured capacity, or none")
    ap.add_argument("--open-duration", type=int, default=None, help="seconds per open-loop run (default --duration)")
    ap.add_argument("--openloop", default=None, help="the openloop binary (default: built by meson, else with cc)")
    ap.add_argument("--siege", choices=["auto", "yes", "no"], default="auto",
                    help="siege -r 10 -c 10 per target (auto: when siege is installed)")
    ap.add_argument("--base-port", type=int, default=18100,
                    help="the first target's port, the next one's +1, and so on (0: a block of free ports below "
                         "the kernel's ephemeral range, as the tests use)")
    ap.add_argument("--out", default=None)
    ap.add_argument("--no-plot", action="store_true")
    args = ap.parse_args()

    q = args.quick
    lab.bench.defaults(args, q, duration=(10, 2), rounds=(2, 1), warmup=(3, 1), warmup_max=(120, 20), startup_runs=(10, 3),
                       rss_conns=(1000, 100), prime_count=(300, 50), quiet_wait=(60, 2), remeasure=(2, 0))
    if args.rss_conns < 0:
        sys.exit("load: --rss-conns must be 0 or more")
    args.open_loop = [] if args.open_loop == "none" else ints(args.open_loop)
    args.open_duration = args.open_duration or args.duration
    if args.siege == "yes" and not shutil.which("siege"):
        sys.exit("load: siege missing (apt-get install siege, or use benchmarks/run)")
    args.siege = args.siege == "yes" or (args.siege == "auto" and bool(shutil.which("siege")))
    if args.open_loop and not args.openloop:
        args.openloop = lab.bench.openloop()
    args.conns = ints(args.conns)
    args.healthz_conns = ints(args.healthz_conns)

    if not shutil.which("wrk"):
        sys.exit("load: wrk missing (apt-get install wrk, or use benchmarks/run)")

    cpus = sorted(os.sched_getaffinity(0))
    if (args.pin or "split") == "split" and len(cpus) >= 2 and shutil.which("taskset"):
        half = len(cpus) // 2
        args.server_cpus, args.wrk_cpus = cpus[:half], cpus[half:]
        pinning = ("server on CPU %s, wrk and the start-up probe on CPU %s (taskset, the probe's --cpu/--server-cpus; with %d CPUs the server "
                   "gets %d: a trade-off, --pin none shares all)" % (
                       ",".join(map(str, args.server_cpus)), ",".join(map(str, args.wrk_cpus)), len(cpus),
                       len(args.server_cpus)))
    else:
        args.server_cpus, args.wrk_cpus = [], []
        pinning = "none: server, wrk and probe share CPUs %s" % ",".join(map(str, cpus))
    args.probe = sh([os.path.join(lab.BENCH_DIR, "lib", "probe-path")])
    if not args.probe or not os.access(args.probe, os.X_OK):
        sys.exit("load: cannot find or build startup_probe (need cc)")

    port = args.base_port or spawn.port_block(64)
    targets = []

    def add(ts):    # each target on the next port
        for t in ts:
            t.port = port + len(targets)
            targets.append(t)
    add(primed_targets(args))
    peers = [] if args.peers == "none" else args.peers.split(",")
    engines = [n for n, _, _, _ in ENGINES if "engines" in peers or n in peers]
    if engines:
        add(engine_targets([t for t in targets if t.kind == "primed"], port, engines))
    if "java" in peers or "java-nodelay" in peers:
        add(java_targets(args))
    if "java21" in peers:   # java21-fixed, java21-virtual
        add(lab21.targets(lab))
    if "stacks" in peers:   # tomcat-platform, -tuned, -virtual, netty, tomcat-appcds
        add(labstacks.targets(lab, cpus=args.server_cpus))
    if "nginx" in peers:
        add(nginx_targets(args, port + len(targets)))
    add(container_targets(args))
    add(lab.Target(name=name, kind="custom", cmd=shlex.split(cmd), note=cmd)
        for name, _, cmd in (spec.partition("=") for spec in args.cmd))
    if not targets:
        sys.exit("load: no targets (give --primed NAME=BINARY, --peers or --cmd)")

    lab.quiet.lock("benchmarks/load.py")    # before the date: a run that waited is dated when it measured
    date = time.strftime("%Y-%m-%dT%H%M%SZ", time.gmtime())
    out = os.path.abspath(args.out or os.path.join(lab.BENCH_DIR, "results", date))
    commit = lab.bench.commit() or "none (no commit yet)"
    if lab.bench.dirty():
        commit += " (+ uncommitted changes)"
    models = [l.split(":", 1)[1].strip() for l in sh(["lscpu"]).splitlines() if l.startswith("Model name:")]
    with open("/proc/meminfo") as f:
        mem = "%.0f GiB" % (int(f.readline().split()[1]) / (1 << 20))
    meta = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": "%s, %d CPUs, %s RAM" % ((models or [""])[-1] or "unknown CPU", len(cpus), mem),
        "kernel": os.uname().release,
        "commit": commit,
        "command": os.environ.get("BENCH_COMMAND") or " ".join(shlex.quote(a) for a in
                                                                 ["benchmarks/load.py"] + sys.argv[1:]),
        "pinning": pinning,
        "quick": str(q).lower(),
        "wrk": (subprocess.run(["wrk", "--version"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                .stdout.splitlines() or ["wrk"])[0].strip(),
    }
    lab.log("results in %s; %d targets: %s" % (out, len(targets), ", ".join(t.name for t in targets)))
    lab.log("pinning: %s" % pinning)
    summary, detail = lab.lab(args, targets, out, meta)
    if not args.no_plot:
        rc = subprocess.run([os.path.join(lab.BENCH_DIR, "plot.py"), out]).returncode
        if rc != 0:
            lab.log("plot failed (rc %d); table and CSV are still there" % rc)
    try:
        lab.log("wrote %s" % report_html.write(out))
    except (OSError, ValueError, KeyError) as e:
        lab.log("report.html failed: %s; table and CSV are still there" % e)
    print(open(os.path.join(out, "table.md")).read())
    lab.log("wrote %s/{table.md,results.csv,summary.csv,startup.csv,meta.txt,*.png}" % out)
    ok = [s for s in summary if s["status"] == "ok"]
    return 0 if ok and len(ok) == len(summary) else 1


if __name__ == "__main__":
    sys.exit(main())
