"""docs/publish/figures.py - the bodies of the generated blocks on the user pages, from one run.

owns: which blocks exist (BLOCKS: page -> block names), and for each name the Markdown its body
is, written from a published run's data (rundata.py's dict) and nothing else.
never: reads a page, measures, or decides which run is the latest (publish does both).

Every body says where its figures come from (the run's date, host and notebook entry), so a
reader of any page sees the conditions beside the figure. Links are written relative to the page
the block stands on (PAGES gives each page's folder).
"""
import re

from primedlab import scalingrun

PRIMED = ["default/inline", "default/steal", "minimal/inline", "pgo/inline", "pgo/steal",
          "lto-static/inline", "lto-static/steal"]
DYNAMIC = [t for t in PRIMED if not t.startswith("lto-static")]
STATIC = ["lto-static/inline", "lto-static/steal"]
JAVA = [("java-fixed", "JDK 17, 200 threads"), ("java21-fixed", "JDK 21, 200 threads"),
        ("java21-virtual", "JDK 21, virtual threads")]
# the Java that teams deploy, tuned (docs/java-peers.md); tomcat-appcds is a start-up row
STACKS = [("tomcat-platform", "Tomcat 10.1, 200 platform threads"),
          ("tomcat-tuned", "Tomcat 10.1, pool sized to the CPUs, no MBean registry"),
          ("tomcat-virtual", "Tomcat 10.1, virtual threads"),
          ("netty", "Netty 4.1, work off the event loop"), ("tomcat-appcds", "Tomcat 10.1 from an AppCDS archive")]
SCALAR = "primed-scalar"  # the first primed target with --prime-vector off
# One row per CPU class (benchmarks/load.py --peers engines): the first primed target with its
# base-2 engine forced; the cloud CPUs of each class are docs/prime.md's
ENGINES = [("primed-ifma", "AVX-512 IFMA", "Intel Ice Lake-SP and later, AMD Zen 4 and Zen 5"),
           ("primed-avx512", "AVX-512F, no IFMA", "Intel Skylake-SP, Cascade Lake"),
           ("primed-avx2", "AVX2 only", "AMD Zen 2, Zen 3; Intel Haswell, Broadwell"),
           (SCALAR, "none of them", "arm64 (AWS Graviton, Ampere Altra), older x86")]
CONTAINERS = ["ctr-static", "ctr-distroless", "ctr-slim"]
PROFILES = ["default", "minimal", "pgo", "lto-static"]


def num(cell):
    """The first number of a cell ('325.4 KiB + ...' -> 325.4, '486 @50' -> 486), or None."""
    m = re.search(r"-?\d+(?:\.\d+)?", cell or "")
    return float(m.group(0)) if m else None


def fmt(x, digits=None):
    if x is None:
        return "n/a"
    if digits is None:
        digits = 0 if abs(x) >= 100 else 1
    return "%.*f" % (digits, x)


def span(xs, unit="", digits=None):
    """'486-555 req/s' or '3.9 MiB' when every value prints the same."""
    xs = [x for x in xs if x is not None]
    if not xs:
        return "n/a"
    lo, hi = fmt(min(xs), digits), fmt(max(xs), digits)
    return (lo if lo == hi else "%s-%s" % (lo, hi)) + (" " + unit if unit else "")


class Run:
    def __init__(self, data, to_docs=""):
        self.d = data
        self.to_docs = to_docs  # the page's relative path to docs/: "docs/" from README.md, "" from docs/
        self.rows = {r["TYPE"]: r for r in data["summary"]}
        self.boot = {r["target"]: r for r in data.get("startup", [])}

    def link(self, path):
        """A link from the page to docs/PATH."""
        return self.to_docs + path

    def has(self, t):
        return t in self.rows

    def v(self, t, col):
        return num(self.rows.get(t, {}).get(col))

    def vs(self, ts, col):
        return [self.v(t, col) for t in ts if self.has(t)]

    def rps(self, t):
        return self.v(t, "RPS")

    def engine_rate(self):
        """One core with primed's own engine: primes/s of the engine the server runs (prime_bench's
        CPU mean per prime)."""
        e = self.d.get("engine", {}).get(self.server_engine())
        return 1e6 / e["cpu_mean_us"] if e else None

    def server_engine(self):
        """The engine the servers ran (every primed row of the lab names it); the default, sieve,
        for a run kept before rundata recorded it."""
        return self.d.get("server_engine") or "sieve"

    def with_features(self):
        """" with AVX-512 IFMA", " without AVX-512 IFMA", or "" when the run does not say."""
        f = self.d.get("features") or ""
        return (" without " + f[3:]) if f.startswith("no ") else (" with " + f) if f else ""

    def conditions(self):
        d = self.d
        feat = self.with_features()
        return ("Run of %s on %s%s, %s CPUs (each server pinned to one core, the load on another), "
                "commit %s: [notebook entry](%s)." % (d["date"], d.get("cpu", "?"), feat, d.get("cpus", "?"),
                                                    d.get("commit", "?"), self.link("lab/" + d["notebook"])))

    def best_java(self):
        """(target, label) of the tuned Java stack with the best /example rate, None when none ran."""
        return max(((t, label) for t, label in STACKS if self.rps(t)), key=lambda x: self.rps(x[0]), default=None)

    def scalar_base(self):
        """The target primed-scalar turns the engine off in (the lab's first primed row)."""
        return next((t for t in PRIMED if self.has(t)), PRIMED[0])

    def per_conn_kib(self, t):
        idle, held = self.v(t, "RAM idle"), self.v(t, "RAM @1000 conns")
        return None if idle is None or held is None else (held - idle) * 1024 / 1000


def table(head, rows):
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


# ---- the blocks -------------------------------------------------------------------------------

def b_per_core(r):
    ours = [x for x in r.vs(PRIMED, "RPS") if x]
    rows = [["primed (every build)", span(ours, "req/s"), "1", span(r.vs(PRIMED, "RESPONSE TIME p95"), "ms")]]
    for t, label in JAVA:
        if r.has(t) and ours and r.rps(t):
            best = max(ours)
            rows.append(["seed's Java service, " + label, fmt(r.rps(t), 0) + " req/s",
                         "%s-%s" % (fmt(min(r.vs(PRIMED, "RPS")) / r.rps(t)), fmt(best / r.rps(t))),
                         fmt(r.v(t, "RESPONSE TIME p95")) + " ms"])
    e = r.engine_rate()
    return (table(["/example (one 1000-bit prime) on one core", "best req/s", "primed ÷ it", "p95 at that load"], rows)
            + "\n\nprimed's engine alone on one core (prime_bench, same run): %s primes/s." % fmt(e))


def b_startup(r):
    rows = [["primed, static build", span(r.vs(STATIC, "BOOT UP"), "ms")],
            ["primed, dynamic builds", span(r.vs(DYNAMIC, "BOOT UP"), "ms")],
            ["primed in a container (podman)", span(r.vs(CONTAINERS, "BOOT UP"), "ms")]]
    rows += [["nginx", span(r.vs(["nginx"], "BOOT UP"), "ms")]] if r.has("nginx") else []
    rows += [["Java, " + label, span(r.vs([t], "BOOT UP"), "ms")] for t, label in JAVA if r.has(t)]
    return table(["start-up: exec to the first /healthz 200 (median of 10)", "time"], rows)


def b_memory(r):
    def row(label, ts):
        return [label, span(r.vs(ts, "RAM idle"), "MiB"), span(r.vs(ts, "RAM @1000 conns"), "MiB"),
                span([r.per_conn_kib(t) for t in ts if r.has(t)], "KiB")]
    rows = [row("primed, static build", STATIC), row("primed, dynamic builds", DYNAMIC)]
    rows += [row("nginx", ["nginx"])] if r.has("nginx") else []
    rows += [row("Java, " + label, [t]) for t, label in JAVA if r.has(t)]
    return table(["RSS", "idle", "holding 1000 connections", "per held connection"], rows) + (
        "\n\nPer held connection: (RSS holding 1000 keep-alive connections − RSS idle) ÷ 1000, read "
        "after the run's load, so it includes what the load left in the heap.")


def b_images(r):
    rows = [[t[4:], r.rows[t]["ARTIFACT SIZE"].replace(" (image)", ""), span(r.vs([t], "BOOT UP"), "ms"),
             fmt(r.rps(t), 0) + " req/s", span(r.vs([t], "RAM idle"), "MiB")] for t in CONTAINERS if r.has(t)]
    return table(["image", "size", "start-up (podman run to /healthz)", "/example on one core", "RSS idle"], rows)


def profile_rows(r):
    rows = []
    for p in PROFILES:
        ts = [t for t in PRIMED if t.split("/")[0] == p and r.has(t)]
        if not ts:
            continue
        size = r.rows[ts[0]]["ARTIFACT SIZE"].replace(" shared libs", " of shared libraries")
        rows.append(["`%s`" % p, r.rows[ts[0]]["BUILD TIME"], size, span(r.vs(ts, "BOOT UP"), "ms"),
                     span(r.vs(ts, "RAM idle"), "MiB"), span(r.vs(ts, "RPS"), "req/s")])
    return table(["profile", "build", "binary", "start-up", "RSS idle", "/example, one core"], rows)


def b_profiles(r):
    return profile_rows(r) + "\n\n" + r.conditions()


def b_overload(r):
    ol = r.d.get("openloop", [])
    if not ol:
        return "This run has no open-loop figures."
    loads = sorted({num(x["load"]) for x in ol})
    top = max(loads)

    def p99(ts, load):
        ms = [num(x["p99 ms"]) for x in ol if x["target"] in ts and num(x["load"]) == load]
        if not ms:
            return "n/a"

        def one(m):
            return ("%.1f s" % (m / 1000)) if m >= 1000 else ("%.0f ms" % m)
        lo, hi = one(min(ms)), one(max(ms))
        if lo == hi:
            return lo
        if lo.split()[1] == hi.split()[1]:
            return "%s-%s %s" % (lo.split()[0], hi.split()[0], lo.split()[1])
        return "%s to %s" % (lo, hi)
    groups = [("primed, default build", ["default/inline", "default/steal"]),
              ("primed, every build", PRIMED), ("primed in a container", CONTAINERS)]
    groups += [("primed, %s engine forced" % t[7:], [t]) for t, _, _ in ENGINES if r.has(t)]
    groups += [("Java, " + label, [t]) for t, label in STACKS + JAVA if r.has(t)]
    rows = [[g] + [p99(ts, l) for l in loads] for g, ts in groups]
    fails = sum(int(num(x["server failures"]) or 0) + int(num(x["timeouts"]) or 0) for x in ol)
    fails += sum(int(num(x.get("SERVER FAILURES")) or 0) + int(num(x.get("CLIENT TIMEOUTS")) or 0)
                 for x in r.d["summary"] if x.get("SERVER FAILURES") not in (None, "-"))
    return (table(["open loop, p99 latency at % of capacity"] + ["%d %%" % l for l in loads], rows)
            + "\n\nCapacity: each target's best single closed-loop round on /example (the lab table's RPS "
            "is the median over rounds, so capacity is higher). Refused, reset, non-2xx and timed-out "
            "requests over every closed- and open-loop run of the run: %d. Past capacity the queue, "
            "and with it the latency, grows for as long as the load lasts (%d %% for the run's "
            "length): bound it in front of the pod (Knative's `containerConcurrency`)." % (fails, top))


def b_knative(r):
    return ("Pods, start-ups and latency per Knative target, from the autoscaler model: "
            "[autoscaling.md](%s)." % r.link("autoscaling.md"))


def b_glance(r):
    """One row per kind of server: what each question asks of it."""
    def size(ts):
        cells = sorted({r.rows[t]["ARTIFACT SIZE"].replace(" shared libs", " of libraries") for t in ts if r.has(t)})
        if len(cells) <= 1:
            return cells[0] if cells else "n/a"
        head = [c.split(" + ", 1) for c in cells]
        units = {h[0].split()[-1] for h in head}
        if len(units) == 1 and len({h[1] if len(h) > 1 else "" for h in head}) == 1:
            return span([num(h[0]) for h in head], units.pop()) + (" + " + head[0][1] if len(head[0]) > 1 else "")
        return " / ".join(cells)

    java17 = r.rps("java-fixed") if r.has("java-fixed") else None

    def row(label, ts, prime=True):
        ts = [t for t in ts if r.has(t)]
        if not ts:
            return None
        rps = [x for x in r.vs(ts, "RPS") if x]
        return [label, span(rps, "req/s", 0) if prime else "no prime (fixed body)" if "nginx" in ts else "-",
                span([x / java17 for x in rps], "×") if prime and java17 else "-",
                span(r.vs(ts, "BOOT UP"), "ms"), span(r.vs(ts, "RAM idle"), "MiB"),
                span([r.per_conn_kib(t) for t in ts], "KiB"), size(ts)]
    rows = [row("primed, `lto-static` (one static file)", STATIC), row("primed, dynamic builds", DYNAMIC)]
    rows += [row("primed, image `%s`" % t[4:], [t]) for t in CONTAINERS]
    rows += [row("primed `%s`, %s engine forced" % (r.scalar_base(), t[7:]), [t]) for t, _, _ in ENGINES[:-1]]
    rows += [row("primed `%s`, eight-lane engine off (the scalar engine)" % r.scalar_base(), [SCALAR])]
    rows += [row("nginx", ["nginx"], prime=False)]
    rows += [row(label, [t], prime=bool(r.rps(t))) for t, label in STACKS]
    rows += [row("seed's Java service, " + label, [t]) for t, label in JAVA]
    e = r.engine_rate()
    return (table(["server", "/example on one core", "÷ JDK 17", "start-up", "RSS idle", "per held connection",
                   "what ships"], [x for x in rows if x])
            + "\n\n/example: one random 1000-bit prime; best median req/s over 50, 100 and 200 connections. "
            "Start-up: exec (or `podman run`) to the first /healthz 200, median of 10. Per held connection: "
            "(RSS holding 1000 keep-alive connections − RSS idle) ÷ 1000, after the run's load (a JVM's both read "
            "after a full GC, where the run says so in its notes). primed's "
            "engine alone on one core (prime_bench, same run): %s primes/s." % fmt(e))


def b_classes(r, base, best):
    """Per core on each CPU class (the engine rows) against the best tuned Java stack of the run."""
    bt, blabel = best
    j17 = r.rps("java-fixed")
    rows = [["%s (`%s`)" % (cls, t), cpus, fmt(r.rps(t), 0), fmt(r.rps(t) / r.rps(bt)) + "×",
             fmt(r.rps(t) / j17) + "×" if j17 else "n/a"] for t, cls, cpus in ENGINES if r.rps(t)]
    return ("**Per core, per CPU class.** On this run's %s (%s), primed's `%s` build with each base-2 engine "
            "forced (`--prime-vector`), against the best tuned Java stack of the run (%s, %s req/s) and the "
            "seed's Java service on JDK 17; a CPU runs the first engine it has, top to bottom:\n\n"
            % (r.d.get("cpu", "?"), r.with_features().strip() or "its features not recorded", base, blabel,
               fmt(r.rps(bt), 0))
            + table(["CPU class (row)", "cloud CPUs", "/example req/s on one core", "÷ best tuned Java",
                     "÷ JDK 17 seed"], rows))


def b_headline(r):
    """Per core, with and without the eight-lane engine, against the best tuned Java stack of the run."""
    base, best = r.scalar_base(), r.best_java()
    if best and sum(1 for t, _, _ in ENGINES if r.rps(t)) > 1:
        return b_classes(r, base, best)
    if not (r.rps(base) and r.rps(SCALAR) and best):
        return "This run has no `%s` beside a tuned Java stack: no per-core headline." % SCALAR
    bt, blabel = best
    on = r.with_features().strip() or "its features not recorded"
    return ("**Per core, with and without IFMA.** On this run's %s (%s), primed's `%s` build answers /example "
            "at **%s×** the best tuned Java stack of the run (%s, %s req/s) with its eight-lane engine, and at "
            "**%s×** with the engine off (`--prime-vector off`: the scalar engine that a CPU without AVX-512 "
            "IFMA runs, %s req/s). Against the seed's Java service on JDK 17: %s× and %s×."
            % (r.d.get("cpu", "?"), on, base, fmt(r.rps(base) / r.rps(bt)), blabel, fmt(r.rps(bt), 0),
               fmt(r.rps(SCALAR) / r.rps(bt)), fmt(r.rps(SCALAR), 0),
               fmt(r.rps(base) / r.rps("java-fixed")) if r.rps("java-fixed") else "n/a",
               fmt(r.rps(SCALAR) / r.rps("java-fixed")) if r.rps("java-fixed") else "n/a"))


def b_decomposition(r, base, best):
    """Where the headline's factor comes from: the server, FLINT's reference prime against BigInteger,
    primed's sieve and tests, the vector engine; each step two rows of this run. None without the
    primed-flint row."""
    flint, scalar, bt = r.rps("primed-flint"), r.rps(SCALAR), best[0]
    if not (flint and scalar and r.rps(base) and r.rps(bt)):
        return None
    top = next((t for t, _, _ in ENGINES[:-1] if r.rps(t)), base)
    steps = [["the same server with FLINT's reference prime, against %s" % best[1], "`primed-flint` ÷ `%s`" % bt,
              fmt(flint / r.rps(bt)) + "×"],
             ["primed's sieve and its own tests in place of FLINT's (the scalar engine)",
              "`%s` ÷ `primed-flint`" % SCALAR, fmt(scalar / flint) + "×"],
             ["the vector engine this CPU has", "`%s` ÷ `%s`" % (top, SCALAR), fmt(r.rps(top) / scalar) + "×"],
             ["**together**", "`%s` ÷ `%s`" % (top, bt), "**%s×**" % fmt(r.rps(top) / r.rps(bt))]]
    out = ("**Where the factor comes from.** /example on one core, row against row of this run:\n\n"
           + table(["step", "rows", "factor"], steps))
    jp, fl = r.d.get("java_prime"), r.d.get("engine", {}).get("flint")
    if jp and fl:
        out += ("\n\nThe prime alone, on one core: `BigInteger(1000, 3, rnd)` %s ms of CPU (JDK %s, warmed, median "
                "of %s rounds; min %s, max %s), FLINT's `fmpz_randprime` %s ms (prime_bench's CPU mean): %s× in "
                "FLINT's favour before any server is involved." % (
                    jp["cpu_ms_median"], jp["java"], jp["rounds"], jp["cpu_ms_min"], jp["cpu_ms_max"],
                    fmt(fl["cpu_mean_us"] / 1000, 2), fmt(float(jp["cpu_ms_median"]) * 1000 / fl["cpu_mean_us"])))
    per_cpu = {x["target"]: num(x.get("req per CPU-s")) for x in r.d.get("runs", []) if x.get("path") == "/healthz"}
    jv = [(t, label) for t, label in STACKS if per_cpu.get(t) and t != "tomcat-appcds"]
    if per_cpu.get(base) and jv:
        out += ("\n\nThe server alone: /healthz answers per CPU-second, primed `%s` %s; %s." % (
            base, fmt(per_cpu[base], 0), "; ".join("%s %s (primed %s×)" % (label, fmt(per_cpu[t], 0),
                                                                         fmt(per_cpu[base] / per_cpu[t]))
                                                     for t, label in jv)))
    return out


def b_answer(r):
    parts = [r.conditions(), b_headline(r)]
    if r.best_java():
        parts.append(b_decomposition(r, r.scalar_base(), r.best_java()))
    return "\n\n".join([x for x in parts if x] + [b_glance(r), "**What each build profile buys**", profile_rows(r),
                        "**Pods and latency per Knative target**: the autoscaler model's answers for each "
                        "target are on [autoscaling.md](%s)." % r.link("autoscaling.md")])


def b_overload_block(r):
    return b_overload(r) + "\n\n" + r.conditions()


def b_choose(r):
    def row(want, choice, ts, ships=None):
        ts = [t for t in ts if r.has(t)]
        if not ts:
            return None
        return [want, choice, span(r.vs(ts, "BOOT UP"), "ms"), span(r.vs(ts, "RAM idle"), "MiB"),
                ships or r.rows[ts[0]]["ARTIFACT SIZE"].replace(" shared libs", " of shared libraries"),
                span([x for x in r.vs(ts, "RPS") if x], "req/s", 0)]
    rows = [row("the fastest start and least memory, one file to ship", "`lto-static`", STATIC),
            row("a container for Knative: the smallest pull", "the `static` image", ["ctr-static"]),
            row("Debian's shared libraries, the usual build", "`default`", ["default/inline", "default/steal"]),
            row("the smallest binary of its own (beside the same libraries)", "`minimal`", ["minimal/inline"]),
            row("(for scale: the seed's Java service)", "JDK 17, 200 threads", ["java-fixed"])]
    return (table(["you want", "choose", "start-up", "RSS idle", "what ships", "/example on one core"],
                  [x for x in rows if x])
            + "\n\nFrom the run of %s on %s%s, %s CPUs, one core per server; every question with its "
            "conditions: [Results](%s)." % (r.d["date"], r.d.get("cpu", "?"), r.with_features(),
                                           r.d.get("cpus", "?"), r.link("benchmarks.md")))


def b_java(r):
    ts = ["lto-static/inline", SCALAR] + [t for t, _ in STACKS] + [t for t, _ in JAVA]
    # p95 at one concurrency for every row (the lowest /example one the run has), not each row's best
    ex = [x for x in r.d.get("runs", []) if x.get("path") == "/example" and num(x.get("conns")) is not None]
    at = min((int(num(x["conns"])) for x in ex), default=None)
    p95_at = {x["target"]: "%.1f ms" % num(x["p95 ms"]) for x in ex if int(num(x["conns"])) == at}
    rows = []
    for t in ts:
        if not r.has(t):
            continue
        x = r.rows[t]
        rows.append([t, x["BOOT UP"], x["RAM idle"], x["RAM @1000 conns"], x["RPS"], p95_at.get(t, "n/a"), x["THREADS"]])
    note = ""
    if r.has("java21-fixed") and r.has("java21-virtual") and r.rps("java21-fixed"):
        v, f = r.rps("java21-virtual"), r.rps("java21-fixed")
        note = ("\n\nVirtual threads give JDK 21 %+.0f %% requests/s over its pool of 200 threads, with %s "
                "threads instead of %s; primed's builds answer %s the JVM rows' primes per core."
                % (100 * (v / f - 1), r.rows["java21-virtual"]["THREADS"], r.rows["java21-fixed"]["THREADS"],
                   span([a / j for a in r.vs(PRIMED, "RPS") if a for j in (r.rps(t) for t, _ in JAVA if r.has(t))
                         if j], "×")))
    tuned = [r.rps(t) for t, _ in STACKS if r.rps(t)]
    if tuned:
        note += (" Against the tuned Tomcat and Netty rows: %s; with the eight-lane engine off (`%s`): %s."
                 % (span([a / j for a in r.vs(PRIMED, "RPS") if a for j in tuned], "×"), SCALAR,
                    span([r.rps(SCALAR) / j for j in tuned], "×") if r.rps(SCALAR) else "not in this run"))
    return (table(["target", "start-up (p10-p90)", "RSS idle", "RSS, 1000 connections", "/example req/s @conns",
                   "p95 @%s" % at, "threads"], rows) + note + "\n\n" + r.conditions())


def b_engine(r):
    e = r.d.get("engine", {})
    if "flint" not in e:
        return "This run has no prime_bench figures."
    rows = [[k, fmt(v["median_us"] / 1000, 2) + " ms", fmt(v["cpu_mean_us"] / 1000, 2) + " ms",
             fmt(v["cpu_mean_us"] / e["flint"]["cpu_mean_us"], 3), fmt(1e6 / v["cpu_mean_us"]) + " primes/s"]
            for k, v in e.items()]
    return (table(["engine", "median per prime", "CPU mean per prime", "÷ flint", "one core"], rows)
            + "\n\n" + r.conditions())


def b_prime_cost(r):
    e = r.d.get("engine", {}).get(r.server_engine())
    return ("A 1000-bit prime costs the server's engine %s of CPU on one core (prime_bench's mean, "
            "%s)." % (fmt(e["cpu_mean_us"] / 1000, 1) + " ms" if e else "n/a", r.d["date"]))


def b_lab_table(r):
    cols = ["TYPE", "BUILD TIME", "ARTIFACT SIZE", "BOOT UP", "RPS", "RESPONSE TIME p95", "RAM idle",
            "RAM @1000 conns", "RAM", "THREADS", "SERVER FAILURES", "AVAILABILITY"]
    e = r.engine_rate()
    rows = [[x.get(c, "") for c in cols] + [fmt(100 * num(x["RPS"]) / e) + " %" if e and num(x.get("RPS"))
                                              and x["TYPE"] not in ("nginx",) else "-"]
            for x in r.d["summary"] if not x["TYPE"].startswith("physical")]
    return (r.conditions() + " Every measurement window of the run was under the quiet-machine threshold "
            "(publish refuses a run with one over it)." + "\n\n" + table(cols + ["÷ engine alone"], rows) +
            "\n\nRPS: the median over rounds of the best concurrency (@connections); p95 from that run. "
            "÷ engine alone: RPS ÷ the %s primes/s that one core makes with the server's engine and no "
            "server (prime_bench in the same run): the gap to 100 %% is what serving costs; above 100 %% "
            "means the run's primes came out cheaper than prime_bench's mean. nginx answers a fixed body "
            "(no prime)." % fmt(e))


def b_charts(r):
    base = "lab/runs/%s/" % r.d["id"]
    names = [n for n in r.d.get("charts", [])]
    return "\n".join("![%s](%s)" % (n, r.link(base + n + ".png")) for n in names) or "This run kept no charts."


# ---- the scaling sweep's block: from the latest published sweep (scalingrun.py), not the lab run --

def _ms(x):
    return "n/a" if x is None else ("%.2f s" % (x / 1000)) if x >= 1000 else ("%.1f ms" % x) if x >= 10 else \
        ("%.2f ms" % x)


def _us(x):
    return "n/a" if x is None else ("%.0f µs" % x) if x >= 100 else ("%.1f µs" % x)


def _ratio(a, b):
    return "%.2f" % (a / b) if a is not None and b else "–"


def _groups(rows, servers):
    """scalingrun.by_server_n's groups by N, then in the sweep's server order."""
    g = scalingrun.by_server_n(rows)
    return {k: g[k] for k in sorted(g, key=lambda k: (k[1], servers.index(k[0]) if k[0] in servers else len(servers)))}


def b_scaling(sc, to_docs=""):
    """The Results page's Across cores block: the sweep's throughput against N (each mode over the
    first), the overload and lone-request comparisons, and what the host could not show."""
    if not sc:
        return ("No scaling sweep is published yet: `benchmarks/scaling.py` measures one and "
                "`docs/publish/publish.py --scaling DIR` puts it here ([how](%sbenchmarking.md#scaling-across-cores))."
                % to_docs)
    m, cfg = sc["meta"], sc["config"]
    engine = next((l.split(":", 1)[1].strip() for l in m.get("build", "").splitlines()
                   if l.startswith("prime vector:")), "?")
    out = ["Sweep of %s on %s; primed's prime vector %s; commit %s: [notebook entry](%slab/%s)."
           % (m["date"], m.get("host", "?"), engine, m.get("commit", "?"), to_docs, sc["notebook"])]
    servers = scalingrun.servers(sc["summary"])
    first = servers[0]
    shared = sorted({s["n"] for s in sc["summary"] if s.get("loader_shared")})
    for path in cfg["paths"]:
        rows = sorted((s for s in sc["summary"] if s["path"] == path), key=lambda s: (s["n"], servers.index(s["server"])))
        if not rows:
            continue
        cells = []
        for s in rows:
            rps = "n/a" if s["rps_med"] is None else ("≥ %.0f (loader-bound)" if s["loader_bound"] else "%.0f") % s["rps_med"]
            cells.append([s["server"], s["n"], rps, _ratio(s["rps_med"], next(
                (x["rps_med"] for x in rows if x["n"] == s["n"] and x["server"] == first and not x["loader_bound"]), None))
                if not s["loader_bound"] else "–",
                "%.2f" % s["speedup"] if s.get("speedup") is not None else "–",
                "%.0f %%" % (100 * s["efficiency"]) if s.get("efficiency") is not None else "–",
                _us(s.get("server_cpu_us_med"))])
        out += ["", table(["%s, %d connections per server CPU" % (path, cfg["conns_per_cpu"][path.strip("/")]),
                           "N", "req/s", "÷ " + first, "speedup", "efficiency", "server CPU per request"], cells)]
    ov = _groups(sc.get("overload"), servers)
    if ov:
        def p99(server, n):
            return scalingrun.med([r["p99_ms"] for r in ov.get((server, n), [])])
        cells = [[server, n, "%.0f req/s" % scalingrun.med([r["rate"] for r in rs]), _ms(p99(server, n)),
                  _ratio(p99(server, n), p99(first, n)), _ms(scalingrun.med([r["max_ms"] for r in rs])),
                  sum(r["timeouts"] + r["refused"] + r["reset"] for r in rs)] for (server, n), rs in ov.items()]
        out += ["", table(["open loop at %g× the best mode's capacity" % cfg["overload_factor"], "N", "rate",
                           "p99 (answered)", "÷ " + first, "oldest served", "timeouts, refused, reset"], cells)]
    lo = _groups(sc.get("lone"), servers)
    if lo:
        def mean(server, n):
            return scalingrun.med([r["mean_ms"] for r in lo.get((server, n), [])])
        cells = [[server, n, _ms(mean(server, n)), _ms(scalingrun.med([r["p99_ms"] for r in rs])),
                  _ratio(mean(server, n), mean(server, 1))] for (server, n), rs in lo.items()]
        out += ["", table(["a lone request (one connection)", "N", "mean", "p99", "÷ N=1"], cells)]
    notes = ["Medians of %d interleaved rounds (A B A B); N: the server's CPUs (`--threads N`, pinned)." % cfg["rounds"]]
    if shared:
        notes.append("At N=%s the loader shares the server's CPUs (the host has no CPU to spare for it): "
                     "those rows compare the modes, with no speedup or efficiency." % ", ".join(map(str, shared)))
    top = max(s["n"] for s in sc["summary"])
    if top < 12:
        notes.append("The largest N here is %d: the figures at 8 and 12 cores need a sweep on a bigger host, "
                     "with the bundle ([how](%sbenchmarking.md#on-a-bigger-host-the-bundle))." % (top, to_docs))
    return "\n".join(out + ["", " ".join(notes)])


SCALING_BLOCKS = {"docs/benchmarks.md": {"scaling": b_scaling}}


def scaling_body(page, name, sc):
    """The Markdown of scaling block NAME on PAGE from sweep SC (scalingrun.latest(), or None)."""
    return SCALING_BLOCKS[page][name](sc, to_docs(page))


BLOCKS = {  # page (relative to the repository) -> {block name: producer}
    "README.md": {"choose": b_choose},
    "docs/benchmarks.md": {"answer": b_answer, "overload": b_overload_block, "lab-table": b_lab_table,
                           "charts": b_charts},
    "docs/profiles.md": {"profiles": b_profiles},
    "docs/containers.md": {"images": lambda r: b_images(r) + "\n\n" + r.conditions()},
    "docs/java-peers.md": {"java": b_java},
    "docs/prime.md": {"engine": b_engine},
    "docs/architecture.md": {"prime-cost": b_prime_cost},
}


def body(page, name, data):
    """The Markdown of block NAME on PAGE from run DATA. KeyError for a block nobody produces."""
    return BLOCKS[page][name](Run(data, to_docs(page)))


def to_docs(page):
    """The relative path from PAGE (relative to the repository) to docs/: "docs/" from README.md,
    "" from docs/x.md."""
    depth = page.count("/") - 1  # pages under docs/: 0 for docs/x.md
    return "docs/" if depth < 0 else "../" * depth
