/* strout.h - formatting by appending: memcpy, a decimal and a hex writer, in
 * place of snprintf on the hot path (one snprintf per response head was 40 %
 * of primed's user time per /healthz; the chain's trace headers, upstream
 * request heads and bodies were the next ones).
 *
 * snprintf's contract: a piece fits only with a byte to spare, and the first
 * piece that does not fit fails the whole output for good (o->ok false), so
 * a truncated value is never sent as if it were whole.
 */
#ifndef PRIMED_STROUT_H
#define PRIMED_STROUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct strout {
    char *buf;
    size_t cap, len;
    bool ok;
};

static inline struct strout strout_init(char *buf, size_t cap)
{
    return (struct strout){.buf = buf, .cap = cap, .len = 0, .ok = cap > 0};
}

static inline void strout_put(struct strout *o, const char *s, size_t n)
{
    if (!o->ok || n >= o->cap - o->len) {
        o->ok = false;
        return;
    }
    memcpy(o->buf + o->len, s, n);
    o->len += n;
}

/* A string literal only: sizeof would take a pointer's size from anything else. */
#define STROUT_LIT(o, lit) strout_put((o), "" lit "", sizeof(lit) - 1)

static inline void strout_str(struct strout *o, const char *s)
{
    strout_put(o, s, strlen(s));
}

/* At most max bytes of s (printf's %.*s). */
static inline void strout_strn(struct strout *o, const char *s, size_t max)
{
    strout_put(o, s, strnlen(s, max));
}

static inline void strout_uint(struct strout *o, unsigned long long v)
{
    char d[24];
    size_t i = sizeof(d);
    do
        d[--i] = (char)('0' + v % 10);
    while (v /= 10);
    strout_put(o, d + i, sizeof(d) - i);
}

/* v as digits lower-case hex digits, zero-padded (printf's %0*llx, digits <= 16). */
static inline void strout_hex(struct strout *o, uint64_t v, unsigned digits)
{
    char d[16];
    for (unsigned i = digits; i-- > 0; v >>= 4)
        d[i] = "0123456789abcdef"[v & 15];
    strout_put(o, d, digits);
}

/* NUL-terminates what was written: its length, or 0 (buf[0] = NUL when cap > 0)
 * if any piece did not fit. */
static inline size_t strout_end(struct strout *o)
{
    if (!o->ok) {
        if (o->cap)
            o->buf[0] = '\0';
        return 0;
    }
    o->buf[o->len] = '\0';
    return o->len;
}

#endif
