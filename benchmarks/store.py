#!/usr/bin/python3
"""benchmarks/store.py - what an event store costs /callme/ping.

    benchmarks/store.py sqlite --before BIN [--bin BIN] [--duration S] [--rounds N] [--db-sync fast|normal|full]
    benchmarks/store.py pg [--bin BIN] [--before BIN] [--floor BIN] [--duration S] [--rounds N] [--db-sync fast|normal|full] [--conns LIST]

sqlite: "answered means stored" against answered-at-once, side by side: /callme/ping on a
  SQLite file (WAL), --before (a binary that answers before the commit) and --bin, A B A B for
  --rounds rounds, at -c1 and -c64; primed --threads 1 pinned to CPU 0, wrk to CPU 1. Prints
  req/s (per core: one worker), p50, p99 and their ratios after/before.
pg: PostgreSQL (benchmarks/lib/primedlab/pglib.py: postgresql-15 in a temporary directory, fsync on)
  pinned to CPU 1; primed --threads 1 (one connection) pinned to CPU 0 with wrk beside it on
  CPU 0 (the client side on one core, the database on the other), /callme/ping at each of
  --conns (default 1,64); then, in the same run, pgbench on CPU 0 running the same INSERT
  ... RETURNING id (prepared, same synchronous_commit) with as many clients as primed has
  connections (1): the database's own ceiling for that statement on one connection. Rounds
  alternate primed and pgbench. Each round also runs /healthz at -c1 on the same primed and CPUs:
  the HTTP exchange alone, which every answer over HTTP adds to the INSERT's round trip; and the
  store floor at -c1 (--floor, default pg_floor in --bin's build: benchmarks/pg_floor.c, the same
  INSERT behind blocking sockets and no event loop, on CPU 0, the same wrk): what any HTTP answer
  over that INSERT costs on this host, the most primed / pgbench can be here. With
  --before BIN a second primed (e.g. the commit before a change of the store) on the same
  database is measured in the same rounds. Prints req/s (tps), p50/p99 (primed), primed's CPU per
  request, PostgreSQL's CPU % (POSTGRES CPU), primed / pgbench, and at -c1 where a request's time
  goes: the INSERT's round trip, the HTTP exchange, and what is left.

Takes the measurement lock and records each window's contamination (benchmarks/lib/primedlab/quiet.py,
the database's processes counted as ours). Markdown on stdout; progress on stderr.
"""
import argparse
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
from primedlab import bench, pglib, quiet, spawn  # noqa: E402

log = bench.logger("store")


def cpu_s(pids, reaper=None):
    """CPU seconds of pids (gone ones count 0), plus the children time reaper collected (a
    PostgreSQL backend that exited is in its postmaster's)."""
    return sum(spawn.cpu_s(p, children=p == reaper) or 0 for p in set(pids) | ({reaper} if reaper else set()))


def pg_cpu(pg, fn):
    """(fn(), PostgreSQL's CPU % while it ran; a backend that exited meanwhile counts through its
    postmaster's children time)."""
    pm, pids = pg.postmaster_pid(), pg.pids()
    c0, t0 = cpu_s(pids, pm), time.monotonic()
    r = fn()
    dt = time.monotonic() - t0
    return r, 100 * (cpu_s(set(pids) | set(pg.pids()), pm) - c0) / dt


def start(binary, cpu, args, env=None):
    return bench.start_pinned(binary, cpu, args, dict(POD_NAME="bench-pod", **(env or {})))


def wrk(port, conns, secs, cpu, path="/callme/ping"):
    return bench.wrk("http://127.0.0.1:%d%s" % (port, path), conns, secs, threads=1, timeout_s=10, cpus=cpu,
                     timeout=secs + 30)


med = bench.med


def sqlite_cmd(a):
    tmp = tempfile.mkdtemp(prefix="primed-store-bench-")
    bins = [("before", a.before), ("after", a.bin)]
    res, conts = {}, []
    for r in range(a.rounds):
        for name, binary in bins:
            db = os.path.join(tmp, "%s-%d.db" % (name, r))
            args = ["--db", db] + (["--db-sync", a.db_sync] if name == "after" else [])
            with start(binary, 0, args) as srv:
                spawn.http_get(srv.port, "/callme/ping")
                for conns in (1, 64):
                    log("round %d: %s -c%d" % (r + 1, name, conns))
                    w = quiet.Window(pgids=[os.getpgid(srv.proc.pid)])
                    res.setdefault((name, conns), []).append(wrk(srv.port, conns, a.duration, 1))
                    conts.append(w.stop())
    print("<!-- benchmarks/store.py sqlite --duration %d --rounds %d --db-sync %s; before %s; commit %s; %s -->" % (
        a.duration, a.rounds, a.db_sync, a.before, bench.commit(), time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())))
    bench.print_table("/callme/ping on a SQLite file, one worker (CPU 0), wrk on CPU 1",
                      ["load", "binary", "req/s", "p50 ms", "p99 ms", "errors"],
                      [["-c%d" % c, name, bench.wrk_cells(res[(name, c)])] for c in (1, 64) for name, _ in bins])
    bench.print_table("SQLite: after over before", ["load", "req/s after/before", "p50 after/before",
                                                    "p99 after/before"],
                      [["-c%d" % c] + ["%.2f" % (med(res[("after", c)], k) / med(res[("before", c)], k))
                                       for k in ("rps", "p50_us", "p99_us")] for c in (1, 64)])
    print("\n" + quiet.header(conts))
    shutil.rmtree(tmp, ignore_errors=True)


def client_env(sync_on):
    """The environment of a libpq client beside primed (pgbench, the floor): the password and
    primed's synchronous_commit."""
    return dict(os.environ, PGPASSWORD=pglib.PASSWORD,
                PGOPTIONS="-c synchronous_commit=%s" % ("on" if sync_on else "off"))


def pgbench(pg, secs, clients, sync_on):
    """pgbench's tps for the INSERT primed runs, on CPU 0; its database's CPU in the window."""
    script = os.path.join(pg.root, "insert.sql")
    with open(script, "w") as f:
        f.write("\\set t random(1, 2000000000)\nINSERT INTO event (time_ms, pod) VALUES (:t, 'bench-pod') "
                "RETURNING id;\n")
    os.chmod(script, 0o644)
    cmd = bench.taskset(0) + [os.path.join(pg.bin, "pgbench"), "-h", "127.0.0.1", "-p", str(pg.port), "-U",
           "primed", "-n", "-M", "prepared", "-f", script, "-c", str(clients), "-j", "1", "-T", str(secs), "events"]
    out, pg_pct = pg_cpu(pg, lambda: subprocess.run(cmd, capture_output=True, text=True, env=client_env(sync_on),
                                                    timeout=secs + 60))
    tps = re.findall(r"^tps = ([0-9.]+)", out.stdout, re.M)
    if not tps:
        raise RuntimeError("pgbench gave no tps: " + (out.stdout + out.stderr)[-400:])
    return {"rps": float(tps[-1]), "pg_cpu_pct": pg_pct}


def start_floor(floor, pg, sync_on):
    """The store floor on 127.0.0.1:ephemeral, pinned to CPU 0, on pg with primed's sync level."""
    cmd = bench.taskset(0) + [floor, "--db", pg.url()]
    return spawn.Primed(cmd[0], cmd[1:], env=client_env(sync_on), args_first=True, listen=["--port", "0"],
                        ready=re.compile(r"pg_floor: port=(\d+)"))


def pg_cmd(a):
    conns_list = [int(x) for x in a.conns.split(",")]
    bins = [("primed", a.bin)] + ([("before", a.before)] if a.before else [])
    res, conts = {}, []
    with pglib.Postgres(fsync=True, cpu=1) as pg:
        srvs, floor = {}, None
        try:
            for name, binary in bins:
                srvs[name] = start(binary, 0, ["--db", pg.url(), "--db-sync", a.db_sync],
                                   {"PGPASSWORD": pglib.PASSWORD})
            for srv in srvs.values():
                spawn.wait_ok(srv.port, "/readyz", 5)
            floor = start_floor(a.floor, pg, a.db_sync != "fast") if a.floor else None
            ours = [os.getpgid(s.proc.pid) for s in srvs.values()] + [os.getpgid(pg.postmaster_pid())]
            for r in range(a.rounds):
                for name, srv in srvs.items():
                    for conns in conns_list:
                        log("round %d: %s -c%d" % (r + 1, name, conns))
                        w = quiet.Window(pgids=ours)
                        p0 = cpu_s([srv.proc.pid])
                        st, st_pg = pg_cpu(pg, lambda: wrk(srv.port, conns, a.duration, 0))
                        st["primed_us_per_req"] = 1e6 * (cpu_s([srv.proc.pid]) - p0) / max(st["requests"], 1)
                        st["pg_cpu_pct"] = st_pg
                        conts.append(w.stop())
                        res.setdefault((name, conns), []).append(st)
                # the HTTP exchange alone, same server and CPUs: what any answer over HTTP adds to
                # the INSERT's round trip at -c1
                log("round %d: /healthz -c1" % (r + 1))
                w = quiet.Window(pgids=ours)
                res.setdefault(("healthz", 1), []).append(wrk(srvs["primed"].port, 1, a.duration, 0, "/healthz"))
                conts.append(w.stop())
                if floor:
                    log("round %d: the store floor -c1" % (r + 1))
                    w = quiet.Window(pgids=ours + [os.getpgid(floor.pid)])
                    res.setdefault(("floor", 1), []).append(wrk(floor.port, 1, a.duration, 0))
                    conts.append(w.stop())
                log("round %d: pgbench -c1" % (r + 1))
                w = quiet.Window(pgids=[os.getpgid(pg.postmaster_pid())])
                res.setdefault(("pgbench", 1), []).append(pgbench(pg, a.duration, 1, a.db_sync != "fast"))
                conts.append(w.stop())
        finally:
            for srv in list(srvs.values()) + ([floor] if floor else []):
                srv.stop()
        rows = pg.psql("SELECT count(*) FROM event", db="events")
    print("<!-- benchmarks/store.py pg --duration %d --rounds %d --db-sync %s --conns %s%s; commit %s; %s; %s rows -->" % (
        a.duration, a.rounds, a.db_sync, a.conns, " --before " + a.before if a.before else "", bench.commit(),
        time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), rows))
    print("\n### /callme/ping on PostgreSQL (CPU 1), primed --threads 1 + wrk on CPU 0; pgbench on CPU 0\n")
    print("| client | load | req/s (tps) | p50 ms | p99 ms | primed CPU µs/req | POSTGRES CPU % | errors |")
    print("|---|---|---|---|---|---|---|---|")
    for name, _ in bins:
        label = "primed /callme/ping" + (" (--before)" if name == "before" else "")
        for conns in conns_list:
            rs = res[(name, conns)]
            print("| %s | -c%d | %.0f | %.3f | %.3f | %.1f | %.0f | %d |" % (
                label, conns, med(rs, "rps"), med(rs, "p50_us") / 1e3, med(rs, "p99_us") / 1e3,
                med(rs, "primed_us_per_req"), med(rs, "pg_cpu_pct"), sum(x["errors"] for x in rs)))
    hz, fl = res[("healthz", 1)], res.get(("floor", 1))
    for label, rs in [("primed /healthz (no store: the HTTP exchange alone)", hz)] + (
            [("the store floor (same INSERT, blocking, no event loop)", fl)] if fl else []):
        print("| %s | -c1 | %.0f | %.3f | %.3f | | | %d |" % (
            label, med(rs, "rps"), med(rs, "p50_us") / 1e3, med(rs, "p99_us") / 1e3, sum(x["errors"] for x in rs)))
    pb = res[("pgbench", 1)]
    print("| pgbench (same INSERT, prepared) | -c1 | %.0f | | | | %.0f | |" % (med(pb, "rps"), med(pb, "pg_cpu_pct")))
    bench.print_table("PostgreSQL: primed over pgbench", ["load", "binary", "primed req/s / pgbench tps"],
                      [["-c%d" % c, "--before" if name == "before" else "--bin",
                        "%.2f" % (med(res[(name, c)], "rps") / med(pb, "rps"))] for c in conns_list for name, _ in bins]
                      + ([["-c1", "the store floor", "%.2f" % (med(fl, "rps") / med(pb, "rps"))]] if fl else []))
    if 1 in conns_list:
        # at -c1 every request waits for the one before: times per request add up
        ins, ping, http = 1e6 / med(pb, "rps"), 1e6 / med(res[("primed", 1)], "rps"), 1e6 / med(hz, "rps")
        print("\nWhere a request's time goes at -c1 (µs per request, from the medians above): pgbench's INSERT "
              "round trip %.1f; primed's /callme/ping %.1f, that is %.1f beyond the INSERT; the HTTP exchange "
              "alone (/healthz, same server and CPUs) %.1f. What primed adds beyond an HTTP exchange and the "
              "INSERT: %.1f." % (ins, ping, ping - ins, http, ping - ins - http))
        if fl:
            f = 1e6 / med(fl, "rps")
            print("\nThe store floor's answer %.1f µs, %.1f beyond the INSERT: the least an HTTP answer over this "
                  "INSERT costs here. primed's /callme/ping minus the floor's: %.1f µs (primed / floor %.2f)." % (
                      f, f - ins, ping - f, f / ping))
        # rounds alternate, so each round's figures are side by side: the spread of a ratio
        per = [("primed", res[("primed", 1)])] + ([("the store floor", fl)] if fl else [])
        ratios = ("%s %s" % (name, " ".join("%.2f" % (x["rps"] / p["rps"]) for x, p in zip(rs, pb)))
                  for name, rs in per)
        print("\nEach round at -c1 over its pgbench: " + "; ".join(ratios) + ".")
    print("\n" + quiet.header(conts))


def main():
    ap = argparse.ArgumentParser(prog="store", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=["sqlite", "pg"])
    ap.add_argument("--bin", default=os.path.join(bench.REPO_ROOT, "build", "src", "primed"))
    ap.add_argument("--before", help="sqlite: the binary that answers before the commit; pg: a second binary "
                    "measured in the same rounds")
    ap.add_argument("--duration", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--db-sync", default="normal", choices=["fast", "normal", "full"])
    ap.add_argument("--conns", default="1,64", help="pg: wrk connections, comma-separated")
    ap.add_argument("--floor", help="pg: the store floor (default: benchmarks/pg_floor in --bin's build; "
                    "'' leaves it out)")
    a = ap.parse_args()
    if a.floor is None:
        a.floor = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(a.bin))), "benchmarks", "pg_floor")
        if not os.access(a.floor, os.X_OK):
            log("no store floor at %s (a build without libpq): left out" % a.floor)
            a.floor = ""
    elif a.floor and not os.access(a.floor, os.X_OK):
        sys.exit("store pg: --floor %s is not an executable" % a.floor)
    if not os.access(a.bin, os.X_OK):
        sys.exit("store: %s is not built (meson setup build && ninja -C build)" % a.bin)
    if (os.cpu_count() or 1) < 2:
        sys.exit("store: needs two CPUs (the server and the database, or the server and the load)")
    if a.what == "sqlite" and not (a.before and os.access(a.before, os.X_OK)):
        sys.exit("store sqlite: --before BIN (a binary that answers before the commit) is required")
    if a.what == "pg" and not pglib.bindir():
        sys.exit("store pg: no PostgreSQL installed (profiles/deps @test installs postgresql-15)")
    if a.what == "pg" and a.before and not os.access(a.before, os.X_OK):
        sys.exit("store pg: --before %s is not an executable" % a.before)
    quiet.lock("benchmarks/store.py")
    quiet.wait_quiet(60, what="benchmarks/store.py")
    (sqlite_cmd if a.what == "sqlite" else pg_cmd)(a)


if __name__ == "__main__":
    main()
