/* fuzz_trace.c - libFuzzer target over src/client/trace.c, the trace headers that
 * arrive from anyone: traceparent, b3 and the X-B3-* set.
 *
 * Input: a selector byte (% 3: 0 traceparent, 1 b3, 2 X-B3-TraceId, -SpanId,
 * -Sampled and -Flags as four NUL-separated values), then the value(s).
 * Checks on a trace taken: its id is 32 lower-case hex digits, not all zero;
 * its parent "" or 16 lower-case hex digits; the traceparent and the
 * outbound lines formatted from it are printable ASCII lines "Name: value"
 * ending CRLF (nothing of the input but the checked ids reaches them), and
 * the traceparent written parses back to the same trace id and sampled bit.
 * abort() with a message on a failed check, so libFuzzer saves the input.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace.h"

#define FUZZ_NAME "fuzz_trace"
#include "fuzz_fail.h"

static bool lower_hex(const char *s, size_t n)
{
    bool nonzero = false;
    for (size_t i = 0; i < n; i++) {
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return false;
        nonzero |= s[i] != '0';
    }
    return nonzero && s[n] == '\0';
}

/* out holds lines "Name: value\r\n" of printable ASCII, and nothing else */
static void lines_ok(const char *out, size_t n)
{
    size_t start = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)out[i];
        if (c == '\r') {
            if (i + 1 >= n || out[i + 1] != '\n' || !memchr(out + start, ':', i - start))
                FAIL("a line that is not 'Name: value' CRLF at %zu: %.*s", i, (int)n, out);
            start = ++i + 1;
        } else if (c < 0x20 || c > 0x7e) {
            FAIL("byte 0x%02x in the outbound lines", c);
        }
    }
    if (start != n)
        FAIL("outbound lines end without CRLF");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const char *s = (const char *)data + 1;
    size_t n = size - 1;
    struct trace t;
    memset(&t, 0x55, sizeof(t));
    bool ok;
    switch (data[0] % 3) {
    case 0:
        ok = trace_parse_traceparent(s, n, &t);
        break;
    case 1:
        ok = trace_parse_b3(s, n, &t);
        break;
    default: {
        const char *v[4] = {"", "", "", ""};
        size_t l[4] = {0, 0, 0, 0};
        const char *p = s, *end = s + n;
        for (int k = 0; k < 4 && p <= end; k++) {
            const char *e = memchr(p, '\0', (size_t)(end - p));
            v[k] = p;
            l[k] = (size_t)((e ? e : end) - p);
            if (!e)
                break;
            p = e + 1;
        }
        ok = trace_parse_b3_multi(v[0], l[0], v[1], l[1], v[2], l[2], v[3], l[3], &t);
    }
    }
    if (!ok)
        return 0;
    if (!t.valid || !lower_hex(t.trace_id, 32))
        FAIL("trace id '%.33s'", t.trace_id);
    if (t.parent_id[0] && !lower_hex(t.parent_id, 16))
        FAIL("parent id '%.17s'", t.parent_id);
    char tp[56];
    if (trace_format_traceparent(&t, 0x1234, tp) != 55 || strlen(tp) != 55)
        FAIL("traceparent of %zu bytes", strlen(tp));
    struct trace back;
    if (!trace_parse_traceparent(tp, 55, &back) || strcmp(back.trace_id, t.trace_id) != 0 ||
        (back.flags & 1) != (t.flags & 1) || strcmp(back.parent_id, "0000000000001234") != 0)
        FAIL("'%s' does not parse back", tp);
    char out[TRACE_OUTBOUND_MAX];
    size_t on = trace_format_outbound(&t, 0x99, 0x1234, out, sizeof(out));
    if (on == 0)
        FAIL("outbound lines over TRACE_OUTBOUND_MAX");
    lines_ok(out, on);
    return 0;
}
