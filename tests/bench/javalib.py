"""tests/bench/javalib.py - what the smokes of the Java peers (java-stacks, java21) and of
benchmarks/gateway.py (gateway, gateway-java) share: the paths, primed as gateway and as chain, the
gateway's null fallback, a peer that must not start, one gateway.py --quick run and the checks on
its siege rows. A script sets sys.dont_write_bytecode before it imports this.
"""
import contextlib
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from primedtest import req, skip  # noqa: E402,F401
from primedtest.bench import ROOT, BIN, T, check, need_bin, primed, install_java  # noqa: E402,F401
sys.path.insert(0, os.path.join(ROOT, "benchmarks", "peers", "java"))
from primedlab import lab, spawn  # noqa: E402,F401
import peer21  # noqa: E402,F401

ENV = {"POD_NAME": "pod-a", "POD_NAMESPACE": "ns-b"}
LOCK_WAIT = 240   # below meson's timeout: a held measurement lock is a skip, not a hang


def url(port, path=""):
    return "http://127.0.0.1:%d%s" % (port, path)


@contextlib.contextmanager
def primed_gateway():
    """primed as catalog, inventory and the gateway over them: (catalog, inventory, the gateway's
    /api/products answer), checked to carry availability; all stopped on leaving."""
    with primed() as catalog, primed() as inv, \
            primed("--catalog-url", url(catalog.port), "--inventory-url", url(inv.port)) as gw:
        st, products = spawn.http_get(gw.port, "/api/products")
        check(st == 200 and '"availability":{' in products,
              "primed's gateway answers with availability")
        yield catalog, inv, products


@contextlib.contextmanager
def primed_chain():
    """primed as callme and as the caller calling it: their two bodies, as pair() reads them."""
    with primed(env=dict(ENV, APP_NAME="callme")) as callme, \
            primed("--callme-url", url(callme.port, "/callme/ping"),
                   env=dict(ENV, APP_NAME="caller")) as caller:
        yield pair(caller.port, callme.port)


def pair(caller, callme):
    """[GET /caller/ping on caller, GET /callme/ping on callme], each (status, body)."""
    return [spawn.http_get(caller, "/caller/ping"), spawn.http_get(callme, "/callme/ping")]


def fallback(name, port, products):
    """Checks that the gateway on port, its inventory dead or late, answers /api/products 200 with
    each of primed's products (its answer: products) null, and counts them in /metrics."""
    nproducts = len(json.loads(products))
    st, body = spawn.http_get(port, "/api/products", timeout=20)
    items = json.loads(body) if st == 200 else []
    check(st == 200 and len(items) == nproducts and all(i["availability"] is None for i in items),
          "%s: 200, every product's availability null (%d, %s...)" % (name, st, body[:80]))
    m = spawn.parse_metrics(spawn.http_get(port, "/metrics")[1])
    check(m.get("primed_gateway_fallbacks_total") == nproducts,
          "%s: /metrics counts %d fallbacks (%s)" % (name, nproducts, m))


def refuses(what, cmd, env, rc, says):
    """Checks that cmd, given env and PORT=0, exits rc before it serves, its stderr matching the
    pattern says: a peer that cannot start says why, and never starts half-way."""
    try:
        p = subprocess.run(cmd, env=dict(os.environ, PORT="0", **env), capture_output=True,
                           text=True, timeout=60)
        got, err = p.returncode, p.stderr.strip()
    except subprocess.TimeoutExpired:
        got, err = None, "still running after 60 s"
    check(got == rc and re.search(says, err),
          "%s: exit %d naming it (%s %r)" % (what, rc, got, err[-200:]))


def run_gateway(args, csv_name, timeout, deps=None):
    """benchmarks/gateway.py --quick ARGS against this build's primed, after profiles/deps DEPS:
    (table.md, the rows of csv_name or None when it was not written), a check line for each exit
    status. Exits 77 (skip) without siege or when the measurement lock stays held, 1 when the run
    takes over timeout s."""
    if not shutil.which("siege"):
        skip("siege is not installed")
    need_bin()
    if deps:
        p = subprocess.run([os.path.join(ROOT, "profiles", "deps"), deps], capture_output=True,
                           text=True)
        check(p.returncode == 0, "profiles/deps %s: %s" % (deps, p.stderr[-200:]))
    what = " ".join(["benchmarks/gateway.py --quick", *args])
    with tempfile.TemporaryDirectory(prefix="primed-bench-gateway.") as out:
        cmd = [os.path.join(ROOT, "benchmarks", "gateway.py"), "--quick", *args, "--bin", BIN,
               "--out", out, "--lock-wait", str(LOCK_WAIT)]
        print("# " + " ".join(cmd))
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=LOCK_WAIT + timeout)
        except subprocess.TimeoutExpired:
            sys.exit("FAIL: %s ran over %d s" % (what, LOCK_WAIT + timeout))
        sys.stderr.write("\n".join(p.stderr.splitlines()[-15:]) + "\n")
        if p.returncode == 3 and "gave up waiting for the measurement lock" in p.stderr:
            skip("another measurement held the lock for %d s" % LOCK_WAIT)
        check(p.returncode == 0, "%s exits 0 (rc %d)" % (what, p.returncode))
        path = os.path.join(out, "table.md")
        table = open(path).read() if os.path.exists(path) else ""
        print(table)
        path = os.path.join(out, csv_name)
        if not check(os.path.exists(path), "%s written beside table.md" % csv_name):
            return table, None
        with open(path) as f:
            return table, list(csv.DictReader(f))


def siege_ran(name, r, transactions=None):
    """The checks every row of gateway.py's CSV passes: siege ran (else no more checks: False),
    availability 100 %, no failed transaction, each of its transactions (as many as given) 200."""
    if not check(not r["error"], "%s: siege ran (%s)" % (name, r["error"] or "no error")):
        return False
    check(float(r["availability"]) == 100.0,
          "%s: availability 100 %% (%s)" % (name, r["availability"]))
    check(int(r["failed_transactions"]) == 0,
          "%s: no failed transaction (%s)" % (name, r["failed_transactions"]))
    n = int(r["transactions"])
    due = "%d transactions" % transactions if transactions else "some transactions"
    check(n == (transactions or n) > 0 and int(r["answered_200"]) == n,
          "%s: %s, each /api/products answered 200 (%d, %s)" % (name, due, n, r["answered_200"]))
    return True


def nulls(name, r, due):
    """Checks the products the deadline left null: some but not all when due, else none."""
    if due:
        check(r["fallback_share"] != "" and 0 < float(r["fallback_share"]) < 100,
              "%s: calls in turn pass the deadline: some products null, not all (%s %%)"
              % (name, r["fallback_share"]))
    else:
        check(r["fallbacks"] == "0",
              "%s: no product fell back to null (%s)" % (name, r["fallbacks"]))
