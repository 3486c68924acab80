#!/usr/bin/python3
"""Writes the seed corpora of the client-side fuzz targets (tests/fuzz/run-client) into
tests/fuzz/{response,json,catalog,url,trace}/ (committed). Run it again after editing the lists;
file names are the seed names. Formats: the comment at the top of each tests/fuzz/fuzz_*.c.
"""
import pathlib
import shutil

HERE = pathlib.Path(__file__).resolve().parent


def resp(head, body=b"", status=b"200 OK", version=b"HTTP/1.1"):
    return version + b" " + status + b"\r\n" + head + b"\r\n" + body


CL2 = b"Content-Length: 2\r\n"
TE = b"Transfer-Encoding: chunked\r\n"
# fuzz_response: options byte (bit 0: close after; bits 1-7: body buffer 16 << (n % 8)), then the bytes
RESPONSE = {
    "cl": (0x0e, resp(CL2 + b"Content-Type: application/json\r\n", b"[]")),
    "cl_close_hdr": (0x0e, resp(CL2 + b"Connection: close\r\n", b"ok")),
    "cl_extra_bytes": (0x0e, resp(CL2, b"okHTTP/1.1 200 OK\r\n")),
    "cl_zero": (0x00, resp(b"Content-Length: 0\r\n")),
    "cl_too_large": (0x00, resp(b"Content-Length: 100\r\n", b"x" * 100)),
    "chunked": (0x0e, resp(TE, b"3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n")),
    "chunked_ext_trailer": (0x0e, resp(TE, b"3;a=b;c=\"d\"\r\nabc\r\n0\r\nX-T: t\r\n\r\n")),
    "chunked_upper_hex": (0x0e, resp(TE, b"A\r\n0123456789\r\n0\r\n\r\n")),
    "te_list_chunked": (0x0f, resp(b"Transfer-Encoding: gzip, chunked\r\n", b"1\r\nx\r\n0\r\n\r\n")),
    "te_not_chunked": (0x0f, resp(b"Transfer-Encoding: gzip\r\n", b"until close")),
    "close_delimited": (0x0f, resp(b"", b"until the close")),
    "close_delimited_10": (0x0f, resp(b"", b"body", version=b"HTTP/1.0")),
    "http10_keepalive": (0x0e, resp(b"Connection: keep-alive\r\n" + CL2, b"ok", version=b"HTTP/1.0")),
    "interim_100": (0x0e, resp(b"", status=b"100 Continue") + resp(CL2, b"ok")),
    "s204": (0x0e, resp(b"", status=b"204 No Content")),
    "s304": (0x0e, resp(b"ETag: x\r\n", status=b"304 Not Modified")),
    "s502": (0x0e, resp(b"Content-Length: 3\r\n", b"bad", status=b"502 Bad Gateway")),
    "no_reason": (0x0e, b"HTTP/1.1 200\r\nContent-Length: 2\r\n\r\nok"),
    "empty_reason": (0x0e, b"HTTP/1.1 200 \r\nContent-Length: 2\r\n\r\nok"),
    "ows_value": (0x0e, resp(b"X:  \t a b \t\r\nY:\r\n" + CL2, b"ok")),
    "obs_text": (0x0e, resp(b"X: caf\xc3\xa9\x80\xff\r\n" + CL2, b"ok")),
    # what a strict reading refuses
    "bad_obs_fold": (0x0e, resp(b"X: a\r\n b\r\n" + CL2, b"ok")),
    "bad_obs_fold_empty": (0x0e, resp(b"X:\r\n\tb\r\n" + CL2, b"ok")),
    "bad_obs_fold_ws": (0x0f, resp(b"Transfer-Encoding:\r\n \r\n\r\n gzip, chunked\r\n", b"\r1\x05\nx\r\n0\r\n\r\n")),
    "bad_trailer_fold": (0x0e, resp(TE, b"0\r\nT: a\r\n b\r\n\r\n")),
    "bad_bare_cr": (0x0e, resp(b"X: a\rb\r\n" + CL2, b"ok")),
    "bad_bare_lf": (0x0e, b"HTTP/1.1 200 OK\nContent-Length: 2\n\nok"),
    "bad_cl_cl": (0x0e, resp(CL2 + b"Content-Length: 3\r\n", b"ok!")),
    "bad_cl_same": (0x0e, resp(CL2 + CL2, b"ok")),
    "bad_cl_list": (0x0e, resp(b"Content-Length: 2, 2\r\n", b"ok")),
    "bad_cl_te": (0x0e, resp(CL2 + TE, b"2\r\nok\r\n0\r\n\r\n")),
    "bad_te_cl": (0x0e, resp(TE + CL2, b"2\r\nok\r\n0\r\n\r\n")),
    "bad_te_empty_cl": (0x0e, resp(b"Transfer-Encoding:\r\nY:\r\nContent-Length: 0\r\n")),
    "bad_space_colon": (0x0e, resp(b"Content-Length : 2\r\n", b"ok")),
    "bad_chunk_size": (0x0e, resp(TE, b"-1\r\nok\r\n0\r\n\r\n")),
    "bad_chunk_crlf": (0x0e, resp(TE, b"2\r\nokX\r\n0\r\n\r\n")),
    "bad_version": (0x0e, resp(CL2, b"ok", version=b"HTTP/2.0")),
    "bad_101": (0x0e, resp(b"Upgrade: h2c\r\nConnection: upgrade\r\n", status=b"101 Switching Protocols")),
    "bad_status": (0x0e, b"HTTP/1.1 2x0 OK\r\nContent-Length: 2\r\n\r\nok"),
    "bad_status_4digits": (0x0e, b"HTTP/1.1 0502 Bad Gateway\r\nContent-Length: 2\r\n\r\nok"),
    # llhttp reads any number of leading zeros
    "bad_cl_19_digits": (0x00, b"HTTP/1.1 200 OK\r\nContent-Length:" + b"0" * 62 + b"\r\n\r\n"),
    # and llhttp 8 misses "close" followed by a tab in a Connection list
    "close_after_tab": (0x0e, resp(CL2 + b"Connection: close \t , ,  0\r\n", b"ok")),
    "bad_garbage": (0x0f, b"\x00\xffnot http\r\n\r\n"),
    "bad_cut_mid_body": (0x0f, resp(b"Content-Length: 10\r\n", b"abc")),
}

CATALOG = (b'[{"itemId":"329299","name":"Red Fedora","description":"Official Red Hat Fedora","price":34.99},'
           b'{"itemId":"329199","name":"Forge Laptop Sticker","price":8.50}]')
INV = b'{"itemId":"329299","quantity":35}'
# fuzz_json: options byte (bit 0 sequential, bit 1 a trace, bits 2-7 the completion order's seed),
# then the catalog's body, then NUL-separated inventory answers ("!..." a 503, "T" a timeout)
JSON = {
    "builtin": (0x00, CATALOG, [INV]),
    "sequential_traced": (0x03, CATALOG, [INV, b"T"]),
    "empty_array": (0x00, b"[]", []),
    "empty_objects": (0x04, b"[{},{} ,{}]", [b"{}"]),
    "nested": (0x08, b'[{"itemId":"a","x":{"y":[1,2,{"z":null}],"w":"v"},"t":true,"f":false}]', [b' {"q":-1.5e+3} ']),
    "escapes": (0x00, b'[{"itemId":"a","name":"\\"\\\\\\/\\b\\f\\n\\r\\t\\u0000\\u00e9\\ud83d\\ude00"}]', [INV]),
    "utf8": (0x00, '[{"itemId":"a","name":"caf\u00e9 \u2603 \U0001f600 \uffff"}]'.encode(), [INV]),
    "inventory_503": (0x00, CATALOG, [b"!" + INV]),
    "inventory_not_object": (0x00, CATALOG, [b"[1]", b"nope"]),
    "bad_ids": (0x00, b'[{"itemId":"a/b"},{"itemId":"a\\r\\nb"},{"itemId":""},{"itemId":"..\\/x"},{"name":"no id"}]', [INV]),
    "bad_id_number": (0x00, b'[{"itemId":1e999999}]', [INV]),
    "bad_id_null": (0x00, b'[{"itemId":"a"},{"itemId":null}]', [INV]),
    "bad_id_escaped_key": (0x00, b'[{"item\\u0049d":1}]', [INV]),
    "escaped_key": (0x00, b'[{"\\u0069temId":"329299"}]', [INV]),
    "bad_own_availability": (0x00, b'[{"itemId":"329299","availability":{"itemId":"329299","quantity":1}}]', [INV]),
    "bad_utf8": (0x00, b'[{"itemId":"a","name":"\xff\xfe"}]', [INV]),
    "bad_overlong": (0x00, b'[{"itemId":"a","name":"\xc0\xaf"}]', [INV]),
    "bad_lone_surrogate": (0x00, b'[{"itemId":"a","name":"\\ud800"}]', [INV]),
    "bad_low_surrogate": (0x00, b'[{"itemId":"a","name":"\\udc00"}]', [INV]),
    "bad_inventory_utf8": (0x00, CATALOG, [b'{"itemId":"329299","n":"\xed\xa0\x80"}']),
    "bad_trailing_comma": (0x00, b'[{"itemId":"a"},]', []),
    "bad_deep": (0x00, b'[{"a":' + b"[" * 20 + b"]" * 20 + b"}]", []),
    "too_many": (0x00, b"[" + b",".join([b"{}"] * 65) + b"]", []),
}

# fuzz_catalog: a --catalog file's text
CATALOG_FILE = {
    "one": b"329299\tRed Fedora\tOfficial Red Hat Fedora, wool felt\t34.99\t35\n",
    "comments_crlf": b"# id name desc price qty\r\n\r\na-1.b_2\tA \"quoted\" \\ name\t\t0\t0\r\n",
    "utf8": "x\tcaf\u00e9 \u2603 \U0001f600\td\u00e9j\u00e0\t1.5\t1000000000\n".encode(),
    "bad_utf8": b"x\tn\xff\td\t1\t1\n",
    "bad_c1": "x\tn\u0085\td\t1\t1\n".encode(),
    "bad_fields": b"x\tn\td\t1\n",
    "bad_price": b"x\tn\td\t1.234\t1\n",
    "bad_dup": b"x\tn\td\t1\t1\nx\tm\td\t1\t1\n",
}

# fuzz_url: the URL text
URL = {
    "plain": b"http://callme.ns.svc.cluster.local",
    "port_path": b"http://127.0.0.1:8081/api/x?y=1#frag",
    "ipv6": b"http://[::1]:9411/api/v2/spans",
    "trailing_slash": b"http://h/",
    "query_1024": b"http://h?" + b"q" * 1023,
    "path_1024": b"http://h/" + b"p" * 1023,
    "bad_https": b"https://h",
    "bad_userinfo": b"http://u:p@h/",
    "bad_port": b"http://h:65536/",
    "bad_empty_host": b"http://:80/",
    "bad_ipv6": b"http://[::1/",
}

TP = b"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
# fuzz_trace: a selector byte (0 traceparent, 1 b3, 2 X-B3-*: four NUL-separated values), then the value
TRACE = {
    "traceparent": (0, TP),
    "traceparent_future": (0, b"cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra"),
    "traceparent_bad_zero": (0, b"00-00000000000000000000000000000000-00f067aa0ba902b7-01"),
    "traceparent_bad_upper": (0, b"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01"),
    "b3_single": (1, b"80f198ee56343ba864fe8b2a57d3eff7-e457b5a2e4d86bd1-1-05e3ac9a4f6e3b90"),
    "b3_short": (1, b"a3ce929d0e0e4736-00f067aa0ba902b7-d"),
    "b3_deny": (1, b"0"),
    "b3_multi": (2, b"80f198ee56343ba864fe8b2a57d3eff7\0e457b5a2e4d86bd1\0" + b"1\0"),
    "b3_multi_legacy": (2, b"a3ce929d0e0e4736\0\0true\0" + b"1"),
}


def write(name, seeds):
    """tests/fuzz/NAME/ holds seeds ({file name: bytes}) and nothing else."""
    shutil.rmtree(HERE / name, ignore_errors=True)
    (HERE / name).mkdir()
    for k, v in seeds.items():
        (HERE / name / k).write_bytes(v)


def main():
    write("response", {k: bytes([o]) + b for k, (o, b) in RESPONSE.items()})
    write("json", {k: bytes([o]) + c + b"".join(b"\0" + i for i in inv) for k, (o, c, inv) in JSON.items()})
    write("catalog", CATALOG_FILE)
    write("url", URL)
    write("trace", {k: bytes([s]) + v for k, (s, v) in TRACE.items()})


if __name__ == "__main__":
    main()
