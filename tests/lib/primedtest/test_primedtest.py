"""Unit tests of the helpers the scripts share (pytest, run by meson as `primedtest`):
parts.closed_port(), the port the chain and gateway scripts point an upstream at to get
"connection refused", and zipkin.Collector, the span collector of tests/upstream/chain.
"""
import errno
import gzip
import http.client
import json
import os
import socket
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from primedtest import parts, zipkin  # noqa: E402


def listener(port):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    s.bind(("127.0.0.1", port))
    s.listen()
    return s


def test_closed_port_refuses_and_stays_taken():
    """connect is refused, and no later bind (as primed's listeners do it, SO_REUSEADDR +
    SO_REUSEPORT, to that port or to port 0) can take it while the script runs: a port closed
    again at once was taken by the next primed on --port 0, which answered its own upstream calls."""
    port = parts.closed_port()
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    with pytest.raises(OSError) as e:
        listener(port).close()
    assert e.value.errno == errno.EADDRINUSE
    got = set()
    for _ in range(2000):
        with listener(0) as s:
            got.add(s.getsockname()[1])
    assert port not in got


# A batch like tests/zipkin/sample.c prints (the spans primed exports: SERVER, its CLIENT, an error CLIENT).
VALID = [
    {"traceId": "4bf92f3577b34da6a3ce929d0e0e4736", "id": "00f067aa0ba902b7", "kind": "SERVER",
     "name": "get /caller/ping", "timestamp": 1764580000000000, "duration": 2100,
     "localEndpoint": {"serviceName": "caller"},
     "tags": {"http.method": "GET", "http.path": "/caller/ping", "http.status_code": "200"}},
    {"traceId": "4bf92f3577b34da6a3ce929d0e0e4736", "id": "1111111111111111", "parentId": "00f067aa0ba902b7",
     "kind": "CLIENT", "name": "get /callme/ping", "timestamp": 1764580000000100, "duration": 1800,
     "localEndpoint": {"serviceName": "caller"}, "remoteEndpoint": {"serviceName": "callme.default.svc.cluster.local"},
     "tags": {"http.method": "GET", "http.path": "/callme/ping", "http.status_code": "200"}},
    {"traceId": "00000000000000004bf92f3577b34da6", "id": "2222222222222222", "parentId": "00f067aa0ba902b7",
     "kind": "CLIENT", "name": "get /callme/ping", "timestamp": 1764580000005000, "duration": 1,
     "localEndpoint": {"serviceName": "caller"}, "remoteEndpoint": {"serviceName": "callme"},
     "tags": {"http.method": "GET", "http.path": "/callme/ping", "http.status_code": "504",
              "error": "upstream timeout"}},
]
# Each span breaks one rule of the schema: a short id, an unknown kind, duration 0, a tag that is not a string.
INVALID = [
    dict(VALID[0], id="00f067aa"),
    dict(VALID[1], kind="LOCAL"),
    dict(VALID[2], duration=0),
    dict(VALID[0], tags={"http.status_code": 200}),
]


def request(port, method, path, body=None, headers=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        c.request(method, path, body=body, headers=dict({"Content-Type": "application/json"}, **(headers or {})))
        r = c.getresponse()
        return r.status, r.read()
    finally:
        c.close()


@pytest.fixture
def collector():
    validator, why = zipkin.load_validator()
    if validator is None:
        pytest.skip(why)
    c = zipkin.Collector(validator=validator).start()
    yield c
    c.stop()


def test_collector(collector):
    c = collector
    valid = json.dumps(VALID).encode()
    sample = os.environ.get("ZIPKIN_SAMPLE")  # the real formatter's batch (tests/zipkin/sample.c)
    if sample:
        valid = subprocess.run([sample], capture_output=True, timeout=30, check=True).stdout.strip()
        assert json.loads(valid) == VALID, f"{sample} prints the batch this test holds"
    posts = [(valid, {}, 202), (gzip.compress(valid), {"Content-Encoding": "gzip"}, 202),
             (json.dumps(INVALID).encode(), {}, 400), (b"[{not json", {}, 400),
             (json.dumps({"traceId": "4bf92f3577b34da6"}).encode(), {}, 400)]
    for body, headers, status in posts:
        assert request(c.port, "POST", "/api/v2/spans", body, headers)[0] == status, body[:40]
    st, spans = request(c.port, "GET", "/_spans")
    assert st == 200 and json.loads(spans) == VALID + VALID == c.spans()
    st, errs = request(c.port, "GET", "/_errors")
    errs = json.loads(errs)
    assert st == 200 and len(errs) >= 6 and errs == c.errors()
    assert any("LOCAL" in e for e in errs) and any("not JSON" in e for e in errs)
    assert [p[0] for p in c.posts()] == [p[2] for p in posts]
    assert len(c.wait_for(lambda s: any(x["kind"] == "CLIENT" for x in s), 1)) == 6


def test_hostile_modes():
    """tests/upstream/hostile.py's own drive of every mode and control path (its self_test)."""
    sys.path.insert(0, str(parts.fl.ROOT / "tests" / "upstream"))
    import hostile
    assert hostile.self_test() == 0
