#!/usr/bin/python3
"""Parse a primed /metrics body with the Prometheus client's own parser.

usage: metrics_parse.py FILE [example_200=N] [example_400=N]

Checks that the text parses (prometheus_client.parser.text_string_to_metric_families),
that the families primed documents are there with the right types, that every
histogram is consistent (cumulative buckets, +Inf == _count), and optionally the
/example request counts. Exit 0 when all hold, 1 with one line per problem.
Run with Debian's /usr/bin/python3 (python3-prometheus-client).
"""
import collections
import math
import sys

from prometheus_client.parser import text_string_to_metric_families

EXPECTED = {
    # family name as the parser reports it (counters lose "_total") -> type
    "primed_build_info": "gauge",
    "primed_http_requests": "counter",
    "primed_http_request_duration_seconds": "histogram",
    "primed_prime_duration_seconds": "histogram",
    "primed_connections_open": "gauge",
    "primed_requests_in_flight": "gauge",
}


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[2])
        return 2
    with open(argv[1], encoding="utf-8") as f:
        text = f.read()
    want = dict(a.split("=", 1) for a in argv[2:])
    problems = []
    try:
        families = {fam.name: fam for fam in text_string_to_metric_families(text)}
    except Exception as e:  # the parser raises ValueError and friends
        print(f"unparsable /metrics: {e!r}")
        return 1

    for name, typ in EXPECTED.items():
        fam = families.get(name)
        if fam is None:
            problems.append(f"missing family {name}")
        elif fam.type != typ:
            problems.append(f"{name}: type {fam.type}, want {typ}")

    for fam in families.values():
        if fam.type != "histogram":
            continue
        series = collections.defaultdict(lambda: {"buckets": [], "count": None, "sum": None})
        for s in fam.samples:
            d = series[tuple(sorted((k, v) for k, v in s.labels.items() if k != "le"))]
            suffix = s.name.rsplit("_", 1)[-1]
            if suffix == "bucket":
                d["buckets"].append((float(s.labels["le"]), s.value))
            elif suffix in ("count", "sum"):
                d[suffix] = s.value
        for key, d in series.items():
            where, b = f"{fam.name}{dict(key)}", sorted(d["buckets"])
            if not b or not math.isinf(b[-1][0]):
                problems.append(f"{where}: no +Inf bucket")
                continue
            if any(b[i][1] > b[i + 1][1] for i in range(len(b) - 1)):
                problems.append(f"{where}: buckets not cumulative")
            if d["count"] != b[-1][1]:
                problems.append(f"{where}: _count {d['count']} != +Inf bucket {b[-1][1]}")
            if d["sum"] is None or d["sum"] < 0:
                problems.append(f"{where}: bad _sum {d['sum']}")

    reqs = families.get("primed_http_requests")
    counts = {(s.labels.get("path"), s.labels.get("code")): s.value
              for s in (reqs.samples if reqs else [])}
    for key, n in want.items():
        path, code = key.split("_", 1)
        got = counts.get(("/" + path, code), 0)
        if got != float(n):
            problems.append(f'primed_http_requests_total{{path="/{path}",code="{code}"}} = {got}, want {n}')

    for p in problems:
        print(p)
    if not problems:
        print(f"ok: {len(families)} families parsed")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
