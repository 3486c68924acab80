/* json.c - the scanner (json.h): a recursive descent over the caller's
 * bytes, depth-bounded, that records only where objects begin and end and
 * each top-level object's "itemId" (its key as a decoder reads it). Strings
 * are checked to decode, not decoded: the gateway passes the text on as it
 * came, so whatever it passes is JSON by a strict reading. Never allocates.
 */
#include "json.h"

#include <errno.h>
#include <string.h>

struct scan {
    const char *s;
    size_t len, pos;
};

static void ws(struct scan *sc)
{
    while (sc->pos < sc->len) {
        char ch = sc->s[sc->pos];
        if (ch != ' ' && ch != '\t' && ch != '\n' && ch != '\r')
            return;
        sc->pos++;
    }
}

static bool hex(char ch)
{
    return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F');
}

static unsigned hex4(const char *p)
{
    unsigned v = 0;
    for (int k = 0; k < 4; k++) {
        char ch = p[k];
        v = v << 4 | (unsigned)(ch <= '9' ? ch - '0' : (ch | 0x20) - 'a' + 10);
    }
    return v;
}

size_t json_utf8_len(const unsigned char *s, size_t n, uint32_t *cp)
{
    unsigned char b = s[0];
    if (b < 0x80) {
        *cp = b;
        return 1;
    }
    size_t len;
    uint32_t c, min;
    if (b >= 0xc2 && b <= 0xdf) {
        len = 2, c = b & 0x1f, min = 0x80;
    } else if (b >= 0xe0 && b <= 0xef) {
        len = 3, c = b & 0x0f, min = 0x800;
    } else if (b >= 0xf0 && b <= 0xf4) {
        len = 4, c = b & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    if (len > n)
        return 0;
    for (size_t k = 1; k < len; k++) {
        if ((s[k] & 0xc0) != 0x80)
            return 0;
        c = c << 6 | (s[k] & 0x3f);
    }
    if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
        return 0;
    *cp = c;
    return len;
}

/* A string at pos (its '"'); *raw_ok: no escapes in it. The content's
 * offset and length into *off, *n. The gateway copies strings into its
 * answer as they came, so a string is refused unless it decodes: well-formed
 * UTF-8 (RFC 8259 8.1: JSON text is UTF-8), and a \u escape of a surrogate
 * only as a high one followed by a low one (8.2 leaves a lone one to
 * "unpredictable" decoders; we refuse it rather than pass it on). */
static bool string(struct scan *sc, size_t *off, size_t *n, bool *raw_ok)
{
    if (sc->pos >= sc->len || sc->s[sc->pos] != '"')
        return false;
    size_t start = ++sc->pos;
    bool raw = true;
    while (sc->pos < sc->len) {
        unsigned char ch = (unsigned char)sc->s[sc->pos];
        if (ch == '"') {
            *off = start;
            *n = sc->pos - start;
            *raw_ok = raw;
            sc->pos++;
            return true;
        }
        if (ch < 0x20)
            return false;
        if (ch >= 0x80) {
            uint32_t cp;
            size_t k = json_utf8_len((const unsigned char *)sc->s + sc->pos, sc->len - sc->pos, &cp);
            if (!k)
                return false;
            sc->pos += k;
            continue;
        }
        if (ch == '\\') {
            raw = false;
            if (++sc->pos >= sc->len)
                return false;
            char e = sc->s[sc->pos];
            if (e == 'u') {
                if (sc->pos + 4 >= sc->len)
                    return false;
                for (int k = 1; k <= 4; k++)
                    if (!hex(sc->s[sc->pos + (size_t)k]))
                        return false;
                unsigned u = hex4(sc->s + sc->pos + 1);
                sc->pos += 4;
                if (u >= 0xdc00 && u <= 0xdfff)
                    return false; /* a low surrogate first */
                if (u >= 0xd800 && u <= 0xdbff) {
                    /* "\uDxxx" must follow: 6 more bytes, then at least the closing quote */
                    const char *p = sc->s + sc->pos + 1;
                    if (sc->len - sc->pos < 8 || p[0] != '\\' || p[1] != 'u')
                        return false;
                    for (int k = 2; k < 6; k++)
                        if (!hex(p[k]))
                            return false;
                    unsigned lo = hex4(p + 2);
                    if (lo < 0xdc00 || lo > 0xdfff)
                        return false;
                    sc->pos += 6;
                }
            } else if (!strchr("\"\\/bfnrt", e) || e == '\0') {
                return false;
            }
        }
        sc->pos++;
    }
    return false;
}

static bool digits(struct scan *sc)
{
    size_t start = sc->pos;
    while (sc->pos < sc->len && sc->s[sc->pos] >= '0' && sc->s[sc->pos] <= '9')
        sc->pos++;
    return sc->pos > start;
}

static bool number(struct scan *sc)
{
    if (sc->pos < sc->len && sc->s[sc->pos] == '-')
        sc->pos++;
    if (sc->pos < sc->len && sc->s[sc->pos] == '0')
        sc->pos++;
    else if (!digits(sc))
        return false;
    if (sc->pos < sc->len && sc->s[sc->pos] == '.') {
        sc->pos++;
        if (!digits(sc))
            return false;
    }
    if (sc->pos < sc->len && (sc->s[sc->pos] == 'e' || sc->s[sc->pos] == 'E')) {
        sc->pos++;
        if (sc->pos < sc->len && (sc->s[sc->pos] == '+' || sc->s[sc->pos] == '-'))
            sc->pos++;
        if (!digits(sc))
            return false;
    }
    return true;
}

static bool literal(struct scan *sc, const char *word)
{
    size_t n = strlen(word);
    if (sc->len - sc->pos < n || memcmp(sc->s + sc->pos, word, n) != 0)
        return false;
    sc->pos += n;
    return true;
}

/* Whether the string content s[0, n) (already checked by string()) decodes
 * to word (ASCII): a reader that decodes keys takes "item\u0049d" for
 * "itemId", so the contract is checked on what it decodes to. */
static bool key_is(const char *s, size_t n, const char *word)
{
    size_t i = 0, k = 0;
    while (i < n) {
        unsigned c = (unsigned char)s[i++];
        if (c == '\\') {
            char e = s[i++];
            if (e == 'u') {
                c = hex4(s + i);
                i += 4;
            } else {
                c = (unsigned char)(e == 'b' ? '\b' : e == 'f' ? '\f' : e == 'n' ? '\n' : e == 'r' ? '\r' : e == 't' ? '\t' : e);
            }
        }
        if (!word[k] || c != (unsigned char)word[k])
            return false;
        k++;
    }
    return !word[k];
}

static bool value(struct scan *sc, unsigned depth, struct json_obj *top);

/* An object at pos; with top, its "itemId" is recorded there. */
static bool object(struct scan *sc, unsigned depth, struct json_obj *top)
{
    if (depth >= JSON_DEPTH_MAX)
        return false;
    sc->pos++; /* '{' */
    ws(sc);
    if (sc->pos < sc->len && sc->s[sc->pos] == '}') {
        sc->pos++;
        if (top)
            top->empty = true;
        return true;
    }
    for (;;) {
        size_t koff, kn;
        bool raw;
        ws(sc);
        if (!string(sc, &koff, &kn, &raw))
            return false;
        ws(sc);
        if (sc->pos >= sc->len || sc->s[sc->pos] != ':')
            return false;
        sc->pos++;
        ws(sc);
        bool is_id = top && (raw ? kn == 6 && memcmp(sc->s + koff, "itemId", 6) == 0 : key_is(sc->s + koff, kn, "itemId"));
        if (top && (raw ? kn == 12 && memcmp(sc->s + koff, "availability", 12) == 0
                        : key_is(sc->s + koff, kn, "availability")))
            top->has_availability = true;
        size_t vstart = sc->pos;
        if (!value(sc, depth + 1, NULL))
            return false;
        if (is_id) {
            /* the contract's string, of path-segment bytes; a number
             * ("1e999999", "1.0", "-0") would need a spelling chosen for it,
             * so any other type is flagged for the gateway to refuse */
            const char *v = sc->s + vstart + 1;
            size_t vn = sc->pos - vstart - 2;
            bool str = sc->s[vstart] == '"';
            top->id_not_string |= !str;
            bool ok = str && vn >= 1 && vn <= ITEM_ID_MAX;
            for (size_t k = 0; ok && k < vn; k++)
                ok = item_id_char(v[k]);
            top->has_id = ok;
            if (ok) {
                memcpy(top->id, v, vn);
                top->id[vn] = '\0';
            }
        }
        ws(sc);
        if (sc->pos >= sc->len)
            return false;
        if (sc->s[sc->pos] == '}') {
            sc->pos++;
            return true;
        }
        if (sc->s[sc->pos] != ',')
            return false;
        sc->pos++;
    }
}

static bool array(struct scan *sc, unsigned depth)
{
    if (depth >= JSON_DEPTH_MAX)
        return false;
    sc->pos++; /* '[' */
    ws(sc);
    if (sc->pos < sc->len && sc->s[sc->pos] == ']') {
        sc->pos++;
        return true;
    }
    for (;;) {
        ws(sc);
        if (!value(sc, depth + 1, NULL))
            return false;
        ws(sc);
        if (sc->pos >= sc->len)
            return false;
        if (sc->s[sc->pos] == ']') {
            sc->pos++;
            return true;
        }
        if (sc->s[sc->pos] != ',')
            return false;
        sc->pos++;
    }
}

static bool value(struct scan *sc, unsigned depth, struct json_obj *top)
{
    if (sc->pos >= sc->len)
        return false;
    size_t off, n;
    bool raw;
    switch (sc->s[sc->pos]) {
    case '{':
        return object(sc, depth, top);
    case '[':
        return array(sc, depth);
    case '"':
        return string(sc, &off, &n, &raw);
    case 't':
        return literal(sc, "true");
    case 'f':
        return literal(sc, "false");
    case 'n':
        return literal(sc, "null");
    default:
        return number(sc);
    }
}

int json_objects(const char *s, size_t len, struct json_obj *out, unsigned max)
{
    struct scan sc = {s, len, 0};
    ws(&sc);
    if (sc.pos >= len || s[sc.pos] != '[')
        return -EINVAL;
    sc.pos++;
    unsigned n = 0;
    ws(&sc);
    if (sc.pos < len && s[sc.pos] == ']') {
        sc.pos++;
    } else {
        for (;;) {
            ws(&sc);
            if (sc.pos >= len || s[sc.pos] != '{')
                return -EINVAL;
            if (n == max)
                return -E2BIG;
            struct json_obj *o = &out[n];
            memset(o, 0, sizeof(*o));
            o->off = (uint32_t)sc.pos;
            if (!object(&sc, 1, o))
                return -EINVAL;
            o->len = (uint32_t)(sc.pos - o->off);
            n++;
            ws(&sc);
            if (sc.pos >= len)
                return -EINVAL;
            if (s[sc.pos] == ']') {
                sc.pos++;
                break;
            }
            if (s[sc.pos] != ',')
                return -EINVAL;
            sc.pos++;
        }
    }
    ws(&sc);
    return sc.pos == len ? (int)n : -EINVAL;
}

bool json_object(const char *s, size_t len, uint32_t *off, uint32_t *olen)
{
    struct scan sc = {s, len, 0};
    ws(&sc);
    if (sc.pos >= len || s[sc.pos] != '{')
        return false;
    size_t start = sc.pos;
    if (!object(&sc, 0, NULL))
        return false;
    size_t end = sc.pos;
    ws(&sc);
    if (sc.pos != len)
        return false;
    *off = (uint32_t)start;
    *olen = (uint32_t)(end - start);
    return true;
}
