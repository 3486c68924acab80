#!/usr/bin/python3
"""collector.py - a Zipkin v2 collector on 127.0.0.1 for tests/upstream/chain (issue 17).

    python3 collector.py [--port N]    prints `collector: ready port=N` on stdout, serves until killed
    python3 collector.py --self-test   posts a valid and an invalid batch to an in-process one; exit 0/1/77
    in-process:  c = Collector().start(); c.port; c.spans(); c.errors(); c.wait_for(pred, s); c.stop()

POST /api/v2/spans with a JSON body (Content-Length or chunked; Content-Encoding: gzip accepted):
the batch is validated against definitions.ListOfSpans of ../shared/zipkin/zipkin2-api.yaml with
jsonschema's Draft4Validator, as tests/zipkin/validate does. A valid batch is stored and answered
202 (Zipkin's answer); an invalid one (bad JSON, or schema errors) is answered 400, stored nowhere,
and each of its errors is kept as one string. Other paths answer 404.
    GET /_spans   JSON list of every stored span, in arrival order
    GET /_errors  JSON list of the validation error strings
load_validator() returns (validator, None) or (None, why) - why: ../shared absent, or
python3-jsonschema / python3-yaml missing (the suite then skips with 77).
"""
import gzip
import http.server
import json
import os
import sys
import threading
import time

sys.dont_write_bytecode = True
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
API = os.path.join(ROOT, "..", "shared", "zipkin", "zipkin2-api.yaml")
MAX_BODY = 16 << 20


def load_validator():
    """(Draft4Validator for ListOfSpans, None), or (None, reason) where it cannot be built."""
    if not os.path.isfile(API):
        return None, f"{API} is absent (a clone without ../shared)"
    try:
        import jsonschema
        import yaml
    except ImportError as e:
        return None, str(e)
    with open(API) as f:
        api = yaml.safe_load(f)
    schema = {"$ref": "#/definitions/ListOfSpans", "definitions": api["definitions"]}
    return jsonschema.Draft4Validator(schema), None


class Collector:
    """start() serves on 127.0.0.1:port (0: ephemeral) in daemon threads; .port; spans(),
    errors(), posts() (one (status, n spans) per POST) are copies taken under the lock."""

    def __init__(self, port=0, validator=None):
        if validator is None:
            validator, why = load_validator()
            if validator is None:
                raise RuntimeError(f"collector: no schema: {why}")
        self.validator = validator
        self.lock = threading.Lock()
        self._spans = []
        self._errors = []
        self._posts = []
        col = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as an exporter's pool expects
            timeout = 10                   # every socket op on a connection is bounded

            def log_message(self, *a):
                pass

            def reply(self, status, body, ctype="text/plain"):
                b = body.encode() if isinstance(body, str) else body
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(b)))
                self.end_headers()
                self.wfile.write(b)

            def read_body(self):
                if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
                    out = b""
                    while True:
                        size = int(self.rfile.readline(100).split(b";")[0].strip() or b"0", 16)
                        if size == 0:
                            while self.rfile.readline(8192) not in (b"\r\n", b"\n", b""):
                                pass
                            return out
                        if len(out) + size > MAX_BODY:
                            raise ValueError("body too large")
                        out += self.rfile.read(size)
                        self.rfile.readline(10)
                n = int(self.headers.get("Content-Length", "0"))
                if n > MAX_BODY:
                    raise ValueError("body too large")
                return self.rfile.read(n)

            def do_GET(self):
                if self.path == "/_spans":
                    self.reply(200, json.dumps(col.spans()), "application/json")
                elif self.path == "/_errors":
                    self.reply(200, json.dumps(col.errors()), "application/json")
                else:
                    self.reply(404, "not found\n")

            def do_POST(self):
                try:
                    body = self.read_body()
                except (ValueError, OSError) as e:
                    col._reject([f"unreadable body: {e}"])
                    self.close_connection = True
                    self.reply(400, "unreadable body\n")
                    return
                if self.path != "/api/v2/spans":
                    self.reply(404, "not found\n")
                    return
                status = col.accept(body, self.headers.get("Content-Encoding", ""))
                self.reply(status, "" if status == 202 else "invalid batch\n")

        class Server(http.server.ThreadingHTTPServer):
            daemon_threads = True
            allow_reuse_address = True

        self.httpd = Server(("127.0.0.1", port), Handler)
        self.port = self.httpd.server_address[1]

    def accept(self, body, encoding=""):
        """Validates and stores one batch; returns the HTTP status (202 or 400)."""
        try:
            if encoding.lower() == "gzip":
                body = gzip.decompress(body)
            batch = json.loads(body)
        except (ValueError, OSError, EOFError) as e:
            self._reject([f"not JSON: {e}"])
            return 400
        errs = [f"{list(e.absolute_path)}: {e.message}" for e in self.validator.iter_errors(batch)]
        if errs:
            self._reject(errs)
            return 400
        with self.lock:
            self._spans.extend(batch)
            self._posts.append((202, len(batch)))
        return 202

    def _reject(self, errs):
        with self.lock:
            self._errors.extend(errs)
            self._posts.append((400, 0))

    def start(self):
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.2},
                         name="collector", daemon=True).start()
        return self

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()

    def spans(self):
        with self.lock:
            return list(self._spans)

    def errors(self):
        with self.lock:
            return list(self._errors)

    def posts(self):
        with self.lock:
            return list(self._posts)

    def wait_for(self, pred, timeout):
        """Polls spans() until pred(spans) is true or timeout s pass; returns the last spans()."""
        deadline = time.monotonic() + timeout
        while True:
            s = self.spans()
            if pred(s) or time.monotonic() >= deadline:
                return s
            time.sleep(0.05)


# -- self-test ------------------------------------------------------------------------------
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


def _post(port, body, headers=None):
    import http.client
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        c.request("POST", "/api/v2/spans", body=body, headers=dict({"Content-Type": "application/json"}, **(headers or {})))
        r = c.getresponse()
        return r.status, r.read()
    finally:
        c.close()


def _get_json(port, path):
    import http.client
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        c.request("GET", path)
        r = c.getresponse()
        return r.status, json.loads(r.read())
    finally:
        c.close()


def self_test(sample_bin=None):
    validator, why = load_validator()
    if validator is None:
        print(f"SKIP collector self-test: {why}")
        return 77
    failed = 0

    def ok(cond, msg):
        nonlocal failed
        print(("ok   " if cond else "FAIL ") + msg, flush=True)
        failed += 0 if cond else 1

    c = Collector(validator=validator).start()
    try:
        valid = json.dumps(VALID).encode()
        if sample_bin:  # the real formatter's batch, when built (build/tests/zipkin_sample)
            import subprocess
            valid = subprocess.run([sample_bin], capture_output=True, timeout=30, check=True).stdout.strip()
            ok(json.loads(valid) == VALID, f"{sample_bin} prints the batch this self-test holds")
        st, _ = _post(c.port, valid)
        ok(st == 202, f"valid batch of 3 (sample.c's spans) -> {st}")
        st, _ = _post(c.port, gzip.compress(valid), {"Content-Encoding": "gzip"})
        ok(st == 202, f"the same batch gzip-encoded -> {st}")
        st, _ = _post(c.port, json.dumps(INVALID).encode())
        ok(st == 400, f"invalid batch (short id, kind LOCAL, duration 0, non-string tag) -> {st}")
        st, _ = _post(c.port, b"[{not json")
        ok(st == 400, f"not JSON -> {st}")
        st, _ = _post(c.port, json.dumps({"traceId": "4bf92f3577b34da6"}).encode())
        ok(st == 400, f"an object, not a list -> {st}")
        st, spans = _get_json(c.port, "/_spans")
        ok(st == 200 and spans == VALID + VALID and c.spans() == spans,
           f"/_spans: {len(spans)} stored (the valid batch twice), none of the invalid ones")
        st, errs = _get_json(c.port, "/_errors")
        ok(st == 200 and len(errs) >= 6 and any("LOCAL" in e for e in errs) and any("not JSON" in e for e in errs)
           and errs == c.errors(), f"/_errors: {len(errs)} strings, e.g. {errs[0]!r}")
        ok([p[0] for p in c.posts()] == [202, 202, 400, 400, 400], f"posts: {c.posts()}")
        got = c.wait_for(lambda s: any(x["kind"] == "CLIENT" for x in s), 1)
        ok(len(got) == 6, "wait_for returns once its predicate holds")
    finally:
        c.stop()
    print(f"collector self-test: {'FAIL' if failed else 'PASS'} ({failed} failed)", flush=True)
    return 1 if failed else 0


def main(argv):
    if "--self-test" in argv:
        rest = [a for a in argv if a != "--self-test"]
        return self_test(rest[0] if rest else None)
    port = int(argv[argv.index("--port") + 1]) if "--port" in argv else 0
    try:
        c = Collector(port).start()
    except RuntimeError as e:
        print(e)
        return 77
    print(f"collector: ready port={c.port}", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        c.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
