"""primedtest.zipkin - a Zipkin v2 collector on 127.0.0.1 for tests/upstream/chain, in-process:
c = Collector(v).start(); c.port; c.spans(); c.errors(); c.posts(); c.wait_for(pred, s); c.stop().

POST /api/v2/spans with a JSON body (Content-Length or chunked; Content-Encoding: gzip accepted):
the batch is validated against definitions.ListOfSpans of ../shared/zipkin/zipkin2-api.yaml with
jsonschema's Draft4Validator (as tests/zipkin/validate does). A valid batch is stored and answered
202 (Zipkin's answer); an invalid one (bad JSON, or schema errors) is answered 400, stored nowhere,
and each of its errors is kept as one string. Other paths answer 404.
    GET /_spans   JSON list of every stored span, in arrival order
    GET /_errors  JSON list of the validation error strings
v = load_validator()[0], None without ../shared or python3-jsonschema / python3-yaml (the suites
then skip with 77). Checked by test_primedtest.py.
"""
import gzip
import http.server
import json
import threading

from primedtest import SHARED, wait_until

API = SHARED / "zipkin" / "zipkin2-api.yaml"
MAX_BODY = 16 << 20


def load_validator():
    """(Draft4Validator for ListOfSpans, None), or (None, reason) where it cannot be built."""
    if not API.is_file():
        return None, f"{API} is absent (a clone without ../shared)"
    try:
        import jsonschema
        import yaml
    except ImportError as e:
        return None, str(e)
    api = yaml.safe_load(API.read_text())
    schema = {"$ref": "#/definitions/ListOfSpans", "definitions": api["definitions"]}
    return jsonschema.Draft4Validator(schema), None


class Collector:
    """Batches checked by validator (load_validator()'s); start() serves on 127.0.0.1:port (0:
    ephemeral) in daemon threads; .port; spans(), errors(), posts() (one (status, n spans) per
    POST) are copies taken under the lock."""

    def __init__(self, validator, port=0):
        self.validator = validator
        self.lock = threading.Lock()
        self._spans, self._errors, self._posts = [], [], []
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
                if "chunked" not in self.headers.get("Transfer-Encoding", "").lower():
                    n = int(self.headers.get("Content-Length", "0"))
                    if n > MAX_BODY:
                        raise ValueError("body too large")
                    return self.rfile.read(n)
                out = b""
                while size := int(self.rfile.readline(100).split(b";")[0].strip() or b"0", 16):
                    if len(out) + size > MAX_BODY:
                        raise ValueError("body too large")
                    out += self.rfile.read(size)
                    self.rfile.readline(10)   # the chunk's CRLF
                while self.rfile.readline(8192) not in (b"\r\n", b"\n", b""):
                    pass                      # trailers, up to the blank line
                return out

            def do_GET(self):
                get = {"/_spans": col.spans, "/_errors": col.errors}.get(self.path)
                if get:
                    self.reply(200, json.dumps(get()), "application/json")
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

        # daemon threads, SO_REUSEADDR: ThreadingHTTPServer's own defaults
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
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
        wait_until(lambda: pred(self.spans()), timeout)
        return self.spans()
