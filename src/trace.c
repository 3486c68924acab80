/* trace.c - W3C traceparent and B3 parsing: strict, allocation-free.
 *
 * Rules from the W3C Trace Context spec: lower-case hex only, an all-zero
 * trace id or parent id is invalid, version ff is invalid, version 00 has
 * exactly four fields.
 */
#include "trace.h"

#include <stdio.h>
#include <string.h>

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

bool trace_parse_traceparent(const char *s, size_t len, struct trace *t)
{
    memset(t, 0, sizeof(*t));
    /* trim optional whitespace (OWS) */
    while (len && (*s == ' ' || *s == '\t')) {
        s++;
        len--;
    }
    while (len && (s[len - 1] == ' ' || s[len - 1] == '\t'))
        len--;
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

bool trace_parse_b3(const char *s, size_t len, struct trace *t)
{
    memset(t, 0, sizeof(*t));
    size_t n = 0;
    while (n < len && s[n] != '-')
        n++;
    if ((n != 16 && n != 32) || !hexrun(s, n, true) || all_zero(s, n))
        return false;
    /* a 64-bit B3 id becomes a W3C id by left-padding with zeros */
    memset(t->trace_id, '0', 32);
    for (size_t i = 0; i < n; i++)
        t->trace_id[32 - n + i] = (char)(s[i] | 0x20);
    if (n < len && len - n - 1 >= 16 && hexrun(s + n + 1, 16, true)) {
        for (size_t i = 0; i < 16; i++)
            t->parent_id[i] = (char)(s[n + 1 + i] | 0x20);
    }
    t->flags = 1;
    t->valid = true;
    return true;
}

int trace_format_traceparent(const struct trace *t, uint64_t span, char out[56])
{
    if (span == 0)
        span = 1; /* an all-zero span id is invalid */
    return snprintf(out, 56, "00-%.32s-%016llx-%02x", t->trace_id, (unsigned long long)span, t->flags);
}
