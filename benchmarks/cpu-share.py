#!/usr/bin/python3
"""benchmarks/cpu-share.py - where a plaintext request's server CPU goes, by kernel subsystem.

    benchmarks/cpu-share.py [--duration S] [--bin PATH] [--floor PATH] [--no-primed]

How much of the CPU per /healthz request could the
ring's own features (registered fds, multishot receive, fewer io_uring_enter calls) remove?
Each server (primed --threads 1, the floor, the floor --lean; benchmarks/floor.c) runs pinned
to CPU 0 under wrk -c100 pinned to CPU 1, as `benchmarks/modes.py plaintext` runs them, while
`perf record -g -p PID` samples it for S seconds (default 5) and `perf stat` counts its
io_uring_enter calls, context switches and CPU time over the S seconds before. Each sample is put in the subsystem of the first
frame, from the leaf up, that names one:

  user         the server's own code (and libraries: llhttp, liburing's inline helpers)
  tcp/ip       sockets, TCP, IP, the loopback device and its softirq (both ends of the
               loopback: a send delivers into wrk's socket on the server's CPU)
  wake/sched   waking wrk (sock_def_readable) and being woken: the scheduler, timers
  entry        system call entry and exit (in a paravirtualised guest, the hypercalls
               that enable interrupts on the way in land here)
  io_uring     the ring: submission, task work, completions, poll arming
  fd refs      file lookups and references (fget, fput): what registered fds remove
  memory       slab and page allocation (mostly socket buffers)
  other        kernel frames none of the above names

Prints one Markdown table (CPU µs per request, share of samples per subsystem,
io_uring_enter calls and context switches per request; requests at wrk's mean rate) and the contamination line of the quiet guard. Needs perf (Debian's
linux-perf) allowed to sample another process (root, or kernel.perf_event_paranoid <= 1), wrk
and taskset; exits 3 with a message when perf cannot sample. The attribution is by stack walk,
a guide to where the time goes, not an exact account.
"""
import argparse
import collections
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
import pathlib, sys  # noqa: E401  the scripts' one package: benchmarks/lib/primedlab, found from any folder
sys.path.insert(0, str(next(p for p in pathlib.Path(__file__).resolve().parents if (p / "benchmarks/lib/primedlab").is_dir()) / "benchmarks/lib"))
from primedlab import bench, quiet, spawn  # noqa: E402
from primedlab.pinned import LOAD_CPU, SERVER_CPU, Pinned  # noqa: E402  (a server on CPU 0, as modes plaintext)

ROOT = bench.REPO_ROOT
log = bench.logger("cpu-share")
CONNS = 100
FREQ = 999  # samples per second: enough for shares, little enough not to slow the server much
CATS = ["user", "tcp/ip", "wake/sched", "entry", "io_uring", "fd refs", "memory", "other"]
# Matched against each kernel frame's symbol, leaf first; the first category whose pattern
# matches wins for that frame, and the first frame with a category wins for the sample.
KERNEL = [
    ("fd refs", r"^(fget|fput|__fget|fdget|__fdget|fget_raw|__fput_sync|io_file_get_normal)"),
    ("io_uring", r"^(io_|__io_|__do_sys_io_uring_enter|__x64_sys_io_uring_enter|llist_reverse_order)"),
    ("wake/sched", r"^(__wake_up|wake_up|try_to_wake_up|ttwu_|default_wake_function|autoremove_wake|"
                   r"schedule|__schedule|finish_task_switch|pick_next|enqueue_|dequeue_|update_curr|"
                   r"select_task_rq|psi_|hrtimer|__hrtimer|tick_|update_load|set_next_entity|put_prev|"
                   r"sched_|__sched|resched|__smp_call|native_send_call_func|kick_process|sock_def_readable)"),
    ("tcp/ip", r"^(tcp_|__tcp_|tcp4_|ip_|__ip_|ipv4_|inet_|__inet_|inet6?_|sock_|__sock_|sk_|__sk_|skb_|__skb_|"
               r"kfree_skb|__kfree_skb|consume_skb|napi_|__napi|net_rx|netif_|__netif|process_backlog|"
               r"dev_|__dev_|loopback_|bbr_|cubic|dst_|nf_|security_sock|_copy_to_iter|_copy_from_iter|"
               r"kmalloc_reserve|release_sock|lock_sock|do_softirq|handle_softirqs|__local_bh_enable|"
               r"sock_def_readable|validate_xmit|eth_|raw_local_deliver|__netdev|netdev_|rps_)"),
    ("entry", r"^(do_syscall_64|entry_SYSCALL|syscall_exit|exit_to_user|__x64_sys_|syscall_trace|"
              r"__do_sys_|do_sys_|ksys_)"),
    ("memory", r"^(kmem_cache|kfree|__kmalloc|kmalloc|___slab|__slab|slab_|get_page_from_freelist|__alloc_pages|"
               r"alloc_pages|free_unref|__free_pages|mod_objcg|obj_cgroup|memcg|__memcg|refill_obj|page_frag|"
               r"__rmqueue|rmqueue|get_partial|__put_partials|put_cpu_partial|__mod_memcg)"),
]
KERNEL = [(c, re.compile(p)) for c, p in KERNEL]
IDLE = re.compile(r"(safe_halt|cpu_idle|do_idle|default_idle|poll_idle|intel_idle|acpi_idle)")


def category(frames):
    """frames: [(symbol, dso)] leaf first; the sample's category, or None for idle."""
    if not frames:
        return "other"
    sym, dso = frames[0]
    if "kernel" not in dso and "vmlinux" not in dso:
        return "user"
    if IDLE.search(sym):
        return None
    for s, d in frames:
        if "kernel" not in d and "vmlinux" not in d:
            break
        for cat, pat in KERNEL:
            if pat.match(s):
                return cat
    return "other"


FRAME = re.compile(r"^\s+[0-9a-f]+\s+(\S+?)(?:\+0x[0-9a-f]+)?\s+\((.*)\)\s*$")


def shares(script_out):
    """perf script text -> (Counter of categories, samples counted)."""
    counts = collections.Counter()
    for block in script_out.split("\n\n"):
        frames = [m.groups() for m in map(FRAME.match, block.split("\n")[1:]) if m]
        c = category(frames) if frames else None
        if c:
            counts[c] += 1
    return counts, sum(counts.values())


def profile(name, kind, binary, args, secs):
    """The table row of one server under wrk -cCONNS: perf stat over a first window of secs, perf
    record over a second."""
    srv = Pinned(kind, binary, args)
    pid = str(srv.proc.pid)
    try:
        with tempfile.TemporaryDirectory(prefix="primed-cpu-share-") as tmp, \
                concurrent.futures.ThreadPoolExecutor(1) as pool:
            data = os.path.join(tmp, "perf.data")
            url = "http://127.0.0.1:%d/healthz" % srv.port
            bench.run_wrk(url, CONNS, 1, 1, cpus=LOAD_CPU)  # warm-up
            log("%s: %d s under wrk -c%d" % (name, secs, CONNS))
            wrk = pool.submit(bench.run_wrk, url, CONNS, 2 * secs + 2, 1, cpus=LOAD_CPU)
            time.sleep(1)
            # first window: counts and CPU time, without sampling (perf record slows the server,
            # which then finds more completions per io_uring_enter)
            u0 = sum(srv.times())
            stat = subprocess.run(["perf", "stat", "-x", ",", "-e", "syscalls:sys_enter_io_uring_enter,"
                                   "context-switches", "-p", pid, "--", "sleep", str(secs)],
                                  capture_output=True, text=True)
            u1 = sum(srv.times())
            rec = subprocess.run(["perf", "record", "-q", "-F", str(FREQ), "-g", "-o", data, "-p", pid,
                                  "--", "sleep", str(secs)], capture_output=True, text=True)
            st = wrk.result()[0]
            if rec.returncode != 0 or not os.path.exists(data):
                why = rec.stderr.strip()[-300:] or "exit %d" % rec.returncode
                raise PermissionError("perf record: %s" % why)
            script = subprocess.run(["perf", "script", "-i", data, "-F", "comm,tid,ip,sym,dso"],
                                    capture_output=True, text=True).stdout
    finally:
        srv.stop()
    rps = st["rps"] if st else 0.0
    counts, n = shares(script)
    fields = [line.split(",") for line in stat.stderr.splitlines()]
    ev = {f[2]: int(f[0]) for f in fields if len(f) > 2 and f[0].strip().isdigit()}
    reqs = rps * secs  # requests in the first window, at the run's mean rate
    per = (lambda k: "%.2f" % (ev[k] / reqs) if k in ev and reqs > 0 else "n/a")
    cpu_us = (u1 - u0) * 1e6 / reqs if reqs > 0 else 0.0
    return [name, "%.0f" % rps, "%.2f" % cpu_us, str(n)] + ["%.1f %%" % (100.0 * counts[c] / n if n else 0) for c in CATS] + [
        per("syscalls:sys_enter_io_uring_enter"), per("context-switches")]


def main():
    spawn.exit_on_sigterm()
    ap = argparse.ArgumentParser(prog="benchmarks/cpu-share.py", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--duration", type=int, default=5, help="seconds sampled per server (default 5)")
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "src", "primed"))
    ap.add_argument("--floor", default=os.path.join(ROOT, "build", "benchmarks", "plaintext_floor"))
    ap.add_argument("--no-primed", action="store_true", help="the two floors only")
    a = ap.parse_args()
    if a.duration < 1:
        sys.exit("cpu-share: --duration must be at least 1")
    for prog in ("perf", "wrk", "taskset"):
        if not shutil.which(prog):
            sys.stderr.write("cpu-share: %s is missing%s\n" % (prog, " (apt-get install linux-perf)" if prog == "perf" else ""))
            sys.exit(3 if prog == "perf" else 2)
    for path in ([a.floor] + ([] if a.no_primed else [a.bin])):
        if not os.access(path, os.X_OK):
            sys.exit("cpu-share: %s is not built (ninja -C build)" % path)
    if not {0, 1} <= os.sched_getaffinity(0):
        sys.exit("cpu-share: needs CPUs 0 and 1 (server on 0, wrk on 1)")
    quiet.guard("benchmarks/cpu-share.py", table=sys.stdout)
    targets = ([] if a.no_primed else [("primed", "primed", a.bin, [])]) + [
        ("floor", "floor", a.floor, []), ("floor lean", "floor", a.floor, ["--lean"])]
    try:
        rows = [profile(name, kind, binary, args, a.duration) for name, kind, binary, args in targets]
    except PermissionError as e:
        sys.stderr.write("cpu-share: perf cannot sample the server (%s); run as root or set "
                         "kernel.perf_event_paranoid to 1\n" % e)
        sys.exit(3)
    print(bench.stamp("benchmarks/cpu-share.py --duration %d" % a.duration))
    bench.print_table("Server CPU per /healthz request by subsystem (-c%d, server on CPU %s, wrk on CPU %s; perf samples of "
                      "the server)" % (CONNS, SERVER_CPU, LOAD_CPU),
                      ["server", "req/s", "CPU µs/req", "samples"] + CATS + ["io_uring_enter/req", "context switches/req"], rows)


if __name__ == "__main__":
    main()
