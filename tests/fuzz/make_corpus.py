#!/usr/bin/python3
"""Writes the seed corpus of fuzz_request into tests/fuzz/corpus/ (committed).

Each seed is: one byte of limits (bits 0-1 max_header 8192/1024/1500/4096,
2-3 max_url 2048/16/100/1000, 4-5 max_body 1M/0/10/1000, 6 K-Revision header),
one byte with the number of split sizes (0-15), the split sizes (each byte + 1
bytes per receive, cycled), then the bytes a client sends.
Run it again after editing the list; file names are the seed names.
"""
import os
import sys

H = b"Host: x\r\n"
TE = b"Transfer-Encoding: chunked\r\n"
TP = b"traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\r\n"


def req(target=b"/example", method=b"GET", headers=H, body=b""):
    return method + b" " + target + b" HTTP/1.1\r\n" + headers + b"\r\n" + body


def healthz(headers):
    """GET /healthz with Host: x and headers."""
    return req(b"/healthz", headers=H + headers)


def post(headers, body=b""):
    """POST /healthz with Host: x, headers and body."""
    return req(b"/healthz", b"POST", H + headers, body)


SEEDS = {
    "valid_example": (0, [], req()),
    "valid_bits": (0, [], req(b"/example?bits=64")),
    "valid_head": (0, [], req(b"/healthz", b"HEAD")),
    "valid_readyz_close": (0, [], req(b"/readyz", headers=H + b"Connection: close\r\n")),
    "http10": (0, [], b"GET /healthz HTTP/1.0\r\n\r\n"),
    "pipelined3": (0, [], req(b"/healthz") + req(b"/example?bits=100") + req(b"/nope")),
    "pipelined_split1": (0, [0], req(b"/healthz") + req(b"/readyz")),
    "pipelined_split7": (0, [6, 2, 30], req(b"/example") + req(b"/example", b"HEAD") + req(b"/healthz")),
    "chunked_post": (0, [], req(b"/example", b"POST", H + TE, b"5\r\nhello\r\n0\r\n\r\n")
                     + req(b"/healthz")),
    "chunked_split": (0, [3], post(TE, b"3;ext=1\r\nabc\r\n0\r\nTrailer: t\r\n\r\n") + req()),
    "content_length_body": (0, [10], req(b"/healthz", b"PUT", H + b"Content-Length: 5\r\n", b"abcde") + req()),
    "body_too_large": (0x20, [], post(b"Content-Length: 11\r\n", b"x" * 11)),
    "chunked_too_large": (0x20, [], post(TE, b"b\r\nxxxxxxxxxxx\r\n0\r\n\r\n")),
    "smuggle_cl_te": (0, [], post(b"Content-Length: 4\r\n" + TE,
                                  b"0\r\n\r\nGET /example HTTP/1.1\r\nHost: x\r\n\r\n")),
    "smuggle_te_cl": (0, [], post(TE + b"Content-Length: 3\r\n", b"0\r\n\r\n")),
    "smuggle_cl_cl": (0, [], post(b"Content-Length: 3\r\nContent-Length: 4\r\n", b"abcd")),
    "smuggle_te_te": (0, [], post(TE + b"Transfer-Encoding: identity\r\n", b"0\r\n\r\n")),
    "smuggle_te_space": (0, [], post(b"Transfer-Encoding : chunked\r\n", b"0\r\n\r\n")),
    "smuggle_te_obs_fold": (0, [], post(b"Transfer-Encoding:\r\n chunked\r\n", b"0\r\n\r\n")),
    "smuggle_te_xchunked": (0, [], post(b"Transfer-Encoding: xchunked\r\n", b"0\r\n\r\n")),
    "header_name_space": (0, [], req(b"/healthz", headers=b"Ho st: x\r\n")),
    "header_nul": (0, [], req(b"/healthz", headers=b"X-A: a\x00b\r\n")),
    "url_nul": (0, [], b"GET /healthz\x00/x HTTP/1.1\r\nHost: x\r\n\r\n"),
    "bare_lf": (0, [], b"GET /healthz HTTP/1.1\nHost: x\n\n"),
    "bare_cr": (0, [], b"GET /healthz HTTP/1.1\rHost: x\r\r"),
    "leading_crlf": (0, [1], b"\r\n" + req(b"/healthz")),
    "crlf_between": (0, [], req(b"/healthz") + b"\r\n\r\n" + req(b"/readyz")),
    "huge_header": (1, [200], healthz(b"X-Big: " + b"a" * 1100 + b"\r\n")),
    "huge_header_8k": (0, [255], healthz(b"X-Big: " + b"a" * 8300 + b"\r\n")),
    "many_headers": (1, [100], healthz(b"".join(b"X-%d: v\r\n" % i for i in range(150)))),
    "long_url": (0x04, [], req(b"/example?" + b"a" * 40)),
    "long_url_2k": (0, [255], req(b"/" + b"a" * 2100)),
    "huge_header_17k": (0, [255], healthz(b"X-Big: " + b"a" * 17000 + b"\r\n")),
    "long_url_9k": (0, [255], req(b"/" + b"a" * 9000)),
    "absolute_form": (0, [], req(b"http://example.com/example?bits=64")),
    "absolute_form_https": (0, [], req(b"https://h:443/healthz")),
    "absolute_form_noslash": (0, [], req(b"http://example.com")),
    "absolute_form_short": (0, [], req(b"https://")),
    "asterisk_options": (0, [], req(b"*", b"OPTIONS")),
    "connect": (0, [], b"CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n" + req()),
    "upgrade": (0, [], healthz(b"Connection: Upgrade\r\nUpgrade: websocket\r\n") + req()),
    "bits_bad": (0, [], req(b"/example?bits=abc") + req(b"/example?bits=63") + req(b"/example?bits=4097")),
    "bits_twice": (0, [], req(b"/example?bits=64&bits=65") + req(b"/example?bits") + req(b"/example?x=1&bits=")),
    "method_post_405": (0, [], req(b"/example", b"DELETE")
                        + req(b"/metrics", b"POST", H + b"Content-Length: 0\r\n")),
    "traceparent": (0x40, [], healthz(TP)),
    "traceparent_split": (0, [5, 9], req(b"/example", headers=H + TP)),
    "traceparent_future": (0, [], healthz(b"traceparent: cc-4bf92f3577b34da6a3ce929d0e0e4736"
                                          b"-00f067aa0ba902b7-01-what-the-future\r\n")),
    "traceparent_bad": (0, [], healthz(b"traceparent: 00-" + b"0" * 32 + b"-00f067aa0ba902b7-01\r\n")
                        + healthz(b"TraceParent: ff-4bf92f3577b34da6a3ce929d0e0e4736"
                                  b"-00f067aa0ba902b7-01\r\n")
                        + healthz(b"traceparent: 00-4BF92F3577B34DA6A3CE929D0E0E4736"
                                  b"-00f067aa0ba902b7-01\r\n")),
    "traceparent_long": (0, [], healthz(b"traceparent: " + b"0" * 200 + b"\r\n")),
    "traceparent_twice": (0, [], healthz(TP + TP)),
    "b3_single": (0, [], healthz(b"b3: 80f198ee56343ba864fe8b2a57d3eff7-e457b5a2e4d86bd1-1\r\n")),
    "b3_multi": (0, [], healthz(b"X-B3-TraceId: 463ac35c9f6413ad\r\nX-B3-SpanId: a2fb4a1d1a96d312\r\n")),
    "b3_bad": (0, [], healthz(b"b3: 0000000000000000\r\n") + healthz(b"b3: 463ac35c9f6413adZ\r\n")),
    "garbage": (0, [], b"\xff\xfe\x00\x01GET / HTTP/9.9\r\n\r\n"),
    "version_bad": (0, [], b"GET /healthz HTTP/1.2\r\nHost: x\r\n\r\n" + b"GET /healthz HTTP/2.0\r\nHost: x\r\n\r\n"),
    "lowercase_method": (0, [], b"get /healthz HTTP/1.1\r\nHost: x\r\n\r\n"),
    "eof_midhead": (0, [], b"GET /healthz HTTP/1.1\r\nHost:"),
    # Bare CR and bare LF where RFC 9112 wants CRLF (each answered 400, then close:
    # tests/fault/hostile asserts it). The first is CVE-2023-30589's shape.
    "framing_cr_hides_te": (0, [], b"POST /healthz HTTP/1.1\r\nHost: a\r\nX: \rxTransfer-Encoding: chunked\r\n\r\n"
                                   b"0\r\n\r\n" + req(b"/readyz")),
    "framing_cr_end_of_head": (0, [], b"GET /healthz HTTP/1.1\r\nHost: a\r\n\rZ"),
    "framing_lf_end_of_head": (0, [3], b"GET /healthz HTTP/1.1\r\nHost: a\r\n\n"),
    "framing_lf_request_line": (0, [], b"GET /healthz HTTP/1.1\nHost: a\r\n\r\n"),
    "framing_lf_field": (0, [], b"GET /healthz HTTP/1.1\r\nHost: a\n\r\n"),
    "framing_cr_in_head": (0, [7], b"GET /healthz HTTP/1.1\r\nHost: a\rX: b\r\n\r\n"),
    "framing_obs_fold": (0, [], b"GET /healthz HTTP/1.1\r\nHost: a\r\nX: a\r\n b\r\n\r\n"),
    "framing_space_first_field": (0, [], b"GET /healthz HTTP/1.1\r\n Host: a\r\n\r\n"),
    "framing_lf_leading": (0, [], b"\n" + req(b"/healthz")),
    "framing_cr_leading": (0, [], b"\r\r" + req(b"/healthz")),
    "framing_lf_between": (0, [], req(b"/healthz") + b"\n" + req(b"/readyz")),
    "framing_chunk_size_cr": (0, [], post(TE, b"1\rx\r\n0\r\n\r\n")),
    "framing_chunk_size_lf": (0, [], post(TE, b"1\nx\r\n0\r\n\r\n")),
    "framing_chunk_data_cr": (0, [], post(TE, b"1\r\nx\rX0\r\n\r\n")),
    "framing_chunk_data_lf": (0, [], post(TE, b"1\r\nx\n0\r\n\r\n")),
    "framing_trailer_end_lf": (0, [2], post(TE, b"1\r\nx\r\n0\r\n\n")),
    "framing_trailer_lf": (0, [], post(TE, b"0\r\nT: t\n\r\n")),
    "framing_trailer_fold": (0, [], post(TE, b"0\r\nT: t\r\n u\r\n\r\n")),
    "host_missing": (0, [], b"GET /healthz HTTP/1.1\r\n\r\n"),
    "host_twice": (0, [], healthz(b"Host: y\r\n")),
    # RFC 9112 3.2 / 5 / 6.1 and RFC 9110 2.5 (docs/http.md): each answered 400 (505, 501) and closed
    "host_userinfo": (0, [], req(b"/healthz", headers=b"Host: user@host\r\n")),
    "host_path": (0, [], req(b"/healthz", headers=b"Host: host/path\r\n")),
    "host_list": (0, [], req(b"/healthz", headers=b"Host: a, b\r\n")),
    "host_empty": (0, [], req(b"/healthz", headers=b"Host:\r\n")),
    "host_ipv6": (0, [4], req(b"/healthz", headers=b"Host: [::1]:8080\r\n")),
    "field_name_empty": (0, [], healthz(b": empty-name\r\n")),
    "te_empty_cl": (0, [], post(b"Transfer-Encoding:\r\nContent-Length: 5\r\n", b"hello")),
    "te_http10": (0, [], b"POST /healthz HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
    "target_fragment": (0, [], req(b"/healthz#frag")),
    "target_asterisk_get": (0, [], req(b"*")),
    "options_route": (0, [], req(b"/healthz", b"OPTIONS") + req(b"/nope", b"OPTIONS")),
    "version_2": (0, [], b"GET /healthz HTTP/2.0\r\nHost: x\r\n\r\n"),
    "chunk_ext_long": (0, [9], post(TE, b"1;" + b"e" * 300 + b"\r\nx\r\n0\r\n\r\n")),
    "trailer_long": (0x01, [30], post(TE, b"0\r\nT: " + b"t" * 1100 + b"\r\n\r\n")),
    "expect_continue": (0, [], req(b"/example", b"POST", H + b"Content-Length: 5\r\nExpect: 100-continue\r\n")),
    "expect_other": (0, [], req(b"/example", b"POST", H + b"Content-Length: 5\r\nExpect: 200-ok\r\n", b"hello")),
    "b3_single_full": (0, [], healthz(b"b3: 80f198ee56343ba864fe8b2a57d3eff7-e457b5a2e4d86bd1-0-"
                                      b"05e3ac9a4f6e3b90\r\nX-B3-TraceId: 463ac35c9f6413ad\r\n")),
    "chain_routes": (0, [], req(b"/callme/ping") + req(b"/caller/ping")
                     + req(b"/caller/ping", headers=H + TP)),
    "gateway_routes": (0, [5, 40], req(b"/api/catalog") + req(b"/api/inventory/329299") + req(b"/api/inventory/")
                       + req(b"/api/inventory/a%2Fb") + req(b"/api/inventory/" + b"x" * 33)
                       + req(b"/api/products?fanout=sequential") + req(b"/api/products?fanout=bogus")
                       + req(b"/api/catalog", b"HEAD") + req(b"/api/catalog", b"POST", H + b"Content-Length: 0\r\n")),
}


def main():
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
    os.makedirs(out, exist_ok=True)
    for name, (cfg, splits, payload) in SEEDS.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(bytes([cfg, len(splits)] + splits) + payload)
    print(f"{len(SEEDS)} seeds in {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
