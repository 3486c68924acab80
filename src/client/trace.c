/* trace.c - W3C traceparent and B3 parsing: strict, allocation-free.
 *
 * Rules from the W3C Trace Context spec: lower-case hex only, an all-zero
 * trace id or parent id is invalid, version ff is invalid, version 00 has
 * exactly four fields.
 */
#include "trace.h"

#include <stdio.h>
#include <string.h>

#include "strout.h"

static bool is_lhex(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

static bool hexrun(const char *s, size_t n, bool allow_upper)
{
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!(is_lhex(c) || (allow_upper && c >= 'A' && c <= 'F')))
            return false;
    }
    return true;
}

static bool all_zero(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != '0')
            return false;
    return true;
}

static unsigned hexval(char c)
{
    return c <= '9' ? (unsigned)(c - '0') : (unsigned)((c | 0x20) - 'a' + 10);
}

/* Drops optional whitespace (OWS) around a value: moves *s, returns the new length. */
static size_t trim(const char **s, size_t len)
{
    while (len && (**s == ' ' || **s == '\t')) {
        (*s)++;
        len--;
    }
    while (len && ((*s)[len - 1] == ' ' || (*s)[len - 1] == '\t'))
        len--;
    return len;
}

bool trace_parse_traceparent(const char *s, size_t len, struct trace *t)
{
    memset(t, 0, sizeof(*t));
    len = trim(&s, len);
    if (len < 55 || !hexrun(s, 2, false) || s[2] != '-' || s[35] != '-' || s[52] != '-')
        return false;
    if (s[0] == 'f' && s[1] == 'f')
        return false;
    bool v00 = s[0] == '0' && s[1] == '0';
    if (v00 && len != 55)
        return false;
    if (!v00 && len > 55 && s[55] != '-')
        return false;
    if (!hexrun(s + 3, 32, false) || !hexrun(s + 36, 16, false) || !hexrun(s + 53, 2, false))
        return false;
    if (all_zero(s + 3, 32) || all_zero(s + 36, 16))
        return false;
    memcpy(t->trace_id, s + 3, 32);
    memcpy(t->parent_id, s + 36, 16);
    t->flags = (uint8_t)(hexval(s[53]) << 4 | hexval(s[54]));
    t->valid = true;
    return true;
}

/* A B3 trace id (16 or 32 hex, either case, not all zero) into t->trace_id;
 * a 64-bit id becomes a W3C id by left-padding with zeros. */
static bool b3_trace_id(const char *s, size_t n, struct trace *t)
{
    if ((n != 16 && n != 32) || !hexrun(s, n, true) || all_zero(s, n))
        return false;
    memset(t->trace_id, '0', 32);
    for (size_t i = 0; i < n; i++)
        t->trace_id[32 - n + i] = (char)(s[i] | 0x20);
    return true;
}

static bool b3_span_id(const char *s, size_t n, char out[17])
{
    if (n != 16 || !hexrun(s, n, true) || all_zero(s, n))
        return false;
    for (size_t i = 0; i < 16; i++)
        out[i] = (char)(s[i] | 0x20);
    out[16] = '\0';
    return true;
}

bool trace_parse_b3(const char *s, size_t len, struct trace *t)
{
    memset(t, 0, sizeof(*t));
    len = trim(&s, len);
    /* split into at most four '-'-separated fields */
    const char *f[4];
    size_t fl[4], nf = 0, start = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i == len || s[i] == '-') {
            if (nf == 4)
                return false;
            f[nf] = s + start;
            fl[nf++] = i - start;
            start = i + 1;
        }
    }
    if (nf < 2 || !b3_trace_id(f[0], fl[0], t) || !b3_span_id(f[1], fl[1], t->parent_id))
        return false;
    t->flags = 1; /* deferred: sampled */
    if (nf >= 3) {
        if (fl[2] != 1 || (f[2][0] != '0' && f[2][0] != '1' && f[2][0] != 'd'))
            return false;
        t->flags = f[2][0] == '0' ? 0 : 1;
    }
    if (nf == 4) {
        char parent[17];
        if (!b3_span_id(f[3], fl[3], parent))
            return false; /* the caller's parent: checked, not kept */
    }
    t->valid = true;
    return true;
}

static bool is_word(const char *s, size_t n, const char *w)
{
    return strlen(w) == n && memcmp(s, w, n) == 0;
}

bool trace_parse_b3_multi(const char *trace_id, size_t trace_len, const char *span_id, size_t span_len,
                          const char *sampled, size_t sampled_len, const char *flags, size_t flags_len, struct trace *t)
{
    memset(t, 0, sizeof(*t));
    trace_len = trim(&trace_id, trace_len);
    span_len = trim(&span_id, span_len);
    sampled_len = trim(&sampled, sampled_len);
    flags_len = trim(&flags, flags_len);
    if (!b3_trace_id(trace_id, trace_len, t))
        return false;
    if (span_len && !b3_span_id(span_id, span_len, t->parent_id))
        return false;
    t->flags = 1; /* deferred: sampled */
    if (sampled_len) {
        if (is_word(sampled, sampled_len, "0") || is_word(sampled, sampled_len, "false"))
            t->flags = 0;
        else if (!is_word(sampled, sampled_len, "1") && !is_word(sampled, sampled_len, "true"))
            return false;
    }
    if (flags_len) {
        if (!is_word(flags, flags_len, "1"))
            return false;
        t->flags = 1; /* debug implies sampled */
    }
    t->valid = true;
    return true;
}

/* traceparent's value: 00-TRACE-SPAN-FLAGS. */
static void put_traceparent(struct strout *o, const struct trace *t, uint64_t span)
{
    if (span == 0)
        span = 1; /* an all-zero span id is invalid */
    STROUT_LIT(o, "00-");
    strout_strn(o, t->trace_id, 32);
    STROUT_LIT(o, "-");
    strout_hex(o, span, 16);
    STROUT_LIT(o, "-");
    strout_hex(o, t->flags, 2);
}

int trace_format_traceparent(const struct trace *t, uint64_t span, char out[56])
{
    struct strout o = strout_init(out, 56);
    put_traceparent(&o, t, span);
    return (int)strout_end(&o);
}

void trace_start(struct trace *t, uint64_t hi, uint64_t lo)
{
    if ((hi | lo) == 0)
        lo = 1; /* an all-zero trace id is invalid */
    memset(t, 0, sizeof(*t));
    t->valid = true;
    struct strout o = strout_init(t->trace_id, sizeof(t->trace_id));
    strout_hex(&o, hi, 16);
    strout_hex(&o, lo, 16);
    strout_end(&o);
    t->flags = 1;
}

size_t trace_format_outbound(const struct trace *t, uint64_t parent, uint64_t span, char *out, size_t cap)
{
    if (span == 0)
        span = 1;
    struct strout o = strout_init(out, cap);
    STROUT_LIT(&o, "traceparent: ");
    put_traceparent(&o, t, span);
    STROUT_LIT(&o, "\r\nX-B3-TraceId: ");
    strout_strn(&o, t->trace_id, 32);
    STROUT_LIT(&o, "\r\nX-B3-SpanId: ");
    strout_hex(&o, span, 16);
    STROUT_LIT(&o, "\r\nX-B3-ParentSpanId: ");
    strout_hex(&o, parent, 16);
    STROUT_LIT(&o, "\r\nX-B3-Sampled: ");
    strout_put(&o, (t->flags & 1) ? "1" : "0", 1);
    STROUT_LIT(&o, "\r\n");
    return strout_end(&o);
}

/* Capacities of the kept values: a longer value is overlong, never truncated. */
#define KEEP_TRACEPARENT 64 /* version 00 is 55 characters */
#define KEEP_B3          72 /* traceid32-spanid16-s-parentspanid16: 68 */
#define KEEP_B3_ID       32 /* X-B3-TraceId (16 or 32 hex), X-B3-SpanId (16) */
#define KEEP_B3_FLAG     8  /* X-B3-Sampled ("1", "0", "true", "false"), X-B3-Flags ("1") */

/* Laid out as http_keep_init() lays it out (test_trace.c checks). */
const struct http_keep trace_keep = {
    .n = TRACE_KEEP_N,
    .h = {{"traceparent", KEEP_TRACEPARENT},
          {"b3", KEEP_B3},
          {"x-b3-traceid", KEEP_B3_ID},
          {"x-b3-spanid", KEEP_B3_ID},
          {"x-b3-sampled", KEEP_B3_FLAG},
          {"x-b3-flags", KEEP_B3_FLAG}},
    .off = {0, KEEP_TRACEPARENT, KEEP_TRACEPARENT + KEEP_B3, KEEP_TRACEPARENT + KEEP_B3 + KEEP_B3_ID,
            KEEP_TRACEPARENT + KEEP_B3 + 2 * KEEP_B3_ID, KEEP_TRACEPARENT + KEEP_B3 + 2 * KEEP_B3_ID + KEEP_B3_FLAG},
    .size = KEEP_TRACEPARENT + KEEP_B3 + 2 * KEEP_B3_ID + 2 * KEEP_B3_FLAG,
};

void trace_from_request(const struct http_req *rq, struct trace *t)
{
    memset(t, 0, sizeof(*t));
    const struct http_keep *k = &trace_keep;
    size_t len, ln[TRACE_KEEP_N];
    const char *v;
    if ((v = http_kept(rq, k, TRACE_KEEP_TRACEPARENT, &len)))
        trace_parse_traceparent(v, len, t);
    if (!t->valid && (v = http_kept(rq, k, TRACE_KEEP_B3, &len)))
        trace_parse_b3(v, len, t);
    if (t->valid || !rq->kept)
        return;
    /* the multi-header form: every part absent or valid in length, the trace id present */
    const char *part[TRACE_KEEP_N];
    for (unsigned i = TRACE_KEEP_XB3_TRACE; i < TRACE_KEEP_N; i++) {
        if (rq->kept_len[i] > k->h[i].cap)
            return; /* overlong: no trace */
        part[i] = rq->kept + k->off[i];
        ln[i] = rq->kept_len[i];
    }
    if (ln[TRACE_KEEP_XB3_TRACE])
        trace_parse_b3_multi(part[TRACE_KEEP_XB3_TRACE], ln[TRACE_KEEP_XB3_TRACE], part[TRACE_KEEP_XB3_SPAN],
                             ln[TRACE_KEEP_XB3_SPAN], part[TRACE_KEEP_XB3_SAMPLED], ln[TRACE_KEEP_XB3_SAMPLED],
                             part[TRACE_KEEP_XB3_FLAGS], ln[TRACE_KEEP_XB3_FLAGS], t);
}
