/* strict_json.h - an RFC 8259 decoder for the fuzz targets' oracles, written
 * apart from src/app/json.c on purpose: it decodes every string to code points
 * (UTF-8 by the well-formed byte ranges of Unicode's table 3-7, escapes with
 * surrogate pairs joined) instead of scanning them, so a bug the two shared
 * would have to be made twice. Header-only, static, no allocation.
 *
 * sj_check(s, n, &info) is true when s is one JSON text (whitespace around
 * it allowed); info says what its top level is, for the targets to compare
 * with what src/ made of the same bytes.
 */
#ifndef PRIMED_FUZZ_STRICT_JSON_H
#define PRIMED_FUZZ_STRICT_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define SJ_ITEMS 128

struct sj_info {
    char top;           /* '[', '{', '"', 'n' (number), 'l' (literal) */
    unsigned depth_max; /* deepest nesting of arrays and objects (the top one is 1) */
    unsigned count;     /* with '[': its elements */
    bool all_objects;   /* with '[': every element is an object */
    /* with '[' of objects, per element (the first SJ_ITEMS): the type of the value of the last
     * member whose key decodes to "itemId", 0 when none, and whether some such member's value
     * is not a string */
    char id_type[SJ_ITEMS];
    bool id_not_string[SJ_ITEMS];
    unsigned availability[SJ_ITEMS]; /* members whose key decodes to "availability" */
};

struct sj {
    const unsigned char *s;
    size_t n, i;
    unsigned depth;
    struct sj_info *info;
};

static void sj_ws(struct sj *p)
{
    while (p->i < p->n && (p->s[p->i] == ' ' || p->s[p->i] == '\t' || p->s[p->i] == '\n' || p->s[p->i] == '\r'))
        p->i++;
}

/* One code point of UTF-8 at p->i, by table 3-7's ranges; -1 when ill-formed. */
static long sj_utf8(struct sj *p)
{
    static const struct {
        unsigned char lo0, hi0, lo1, hi1;
        int len;
    } rows[] = {
        {0xc2, 0xdf, 0x80, 0xbf, 2}, {0xe0, 0xe0, 0xa0, 0xbf, 3}, {0xe1, 0xec, 0x80, 0xbf, 3},
        {0xed, 0xed, 0x80, 0x9f, 3}, {0xee, 0xef, 0x80, 0xbf, 3}, {0xf0, 0xf0, 0x90, 0xbf, 4},
        {0xf1, 0xf3, 0x80, 0xbf, 4}, {0xf4, 0xf4, 0x80, 0x8f, 4},
    };
    unsigned char b0 = p->s[p->i];
    for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
        if (b0 < rows[r].lo0 || b0 > rows[r].hi0)
            continue;
        int len = rows[r].len;
        if (p->n - p->i < (size_t)len)
            return -1;
        unsigned char b1 = p->s[p->i + 1];
        if (b1 < rows[r].lo1 || b1 > rows[r].hi1)
            return -1;
        long cp = b0 & (len == 2 ? 0x1f : len == 3 ? 0x0f : 0x07);
        for (int k = 1; k < len; k++) {
            unsigned char b = p->s[p->i + (size_t)k];
            if (b < 0x80 || b > 0xbf)
                return -1;
            cp = cp << 6 | (b & 0x3f);
        }
        p->i += (size_t)len;
        return cp;
    }
    return -1;
}

static long sj_hex4(struct sj *p)
{
    if (p->n - p->i < 4)
        return -1;
    long v = 0;
    for (int k = 0; k < 4; k++) {
        unsigned char c = p->s[p->i++];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0)
            return -1;
        v = v * 16 + d;
    }
    return v;
}

/* A string at p->i ('"'), decoded; with key, its code points are counted in *klen and the first
 * 16 written to key (those past 0x7f as 0xff). */
static bool sj_string(struct sj *p, char *key, size_t *klen)
{
    p->i++;
    size_t kn = 0;
#define SJ_KEY(cp) (key ? (void)(kn < 16 ? key[kn] = (char)((cp) < 0x80 ? (cp) : 0xff) : 0, kn++) : (void)0)
    for (;;) {
        if (p->i >= p->n)
            return false;
        unsigned char c = p->s[p->i];
        if (c == '"') {
            p->i++;
            if (klen)
                *klen = kn;
            return true;
        }
        if (c < 0x20)
            return false;
        if (c >= 0x80) {
            long cp = sj_utf8(p);
            if (cp < 0)
                return false;
            SJ_KEY(cp);
            continue;
        }
        p->i++;
        if (c != '\\') {
            SJ_KEY(c);
            continue;
        }
        if (p->i >= p->n)
            return false;
        c = p->s[p->i++];
        if (c != 'u') {
            static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
            const char *e = memchr(from, c, 8);
            if (!e)
                return false;
            SJ_KEY((unsigned char)to[e - from]);
            continue;
        }
        long u = sj_hex4(p);
        if (u < 0 || (u >= 0xdc00 && u <= 0xdfff))
            return false;
        if (u >= 0xd800 && u <= 0xdbff) {
            if (p->n - p->i < 2 || p->s[p->i] != '\\' || p->s[p->i + 1] != 'u')
                return false;
            p->i += 2;
            long lo = sj_hex4(p);
            if (lo < 0xdc00 || lo > 0xdfff)
                return false;
            u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
        }
        SJ_KEY(u);
    }
#undef SJ_KEY
}

static bool sj_number(struct sj *p)
{
    size_t start = p->i;
    if (p->i < p->n && p->s[p->i] == '-')
        p->i++;
    size_t d = p->i;
    while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9')
        p->i++;
    if (p->i == d || (p->s[d] == '0' && p->i - d > 1))
        return false;
    if (p->i < p->n && p->s[p->i] == '.') {
        d = ++p->i;
        while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9')
            p->i++;
        if (p->i == d)
            return false;
    }
    if (p->i < p->n && (p->s[p->i] | 0x20) == 'e') {
        p->i++;
        if (p->i < p->n && (p->s[p->i] == '+' || p->s[p->i] == '-'))
            p->i++;
        d = p->i;
        while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9')
            p->i++;
        if (p->i == d)
            return false;
    }
    return p->i > start;
}

/* One value; *type gets '{', '[', '"', 'n' or 'l'; elem: the top array's element index, or -1. */
static bool sj_value(struct sj *p, char *type, int elem);

static bool sj_container(struct sj *p, char open, int elem)
{
    p->depth++;
    if (p->depth > p->info->depth_max)
        p->info->depth_max = p->depth;
    if (p->depth > 512) /* the stack's, not the grammar's */
        return false;
    bool top = p->depth == 1;
    char close = open == '{' ? '}' : ']';
    p->i++;
    sj_ws(p);
    if (p->i < p->n && p->s[p->i] == close) {
        p->i++;
        p->depth--;
        return true;
    }
    for (unsigned k = 0;; k++) {
        sj_ws(p);
        bool is_id = false;
        if (open == '{') {
            char key[16];
            size_t kn;
            if (p->i >= p->n || p->s[p->i] != '"' || !sj_string(p, key, &kn))
                return false;
            is_id = elem >= 0 && elem < SJ_ITEMS && kn == 6 && !memcmp(key, "itemId", 6);
            if (elem >= 0 && elem < SJ_ITEMS && kn == 12 && !memcmp(key, "availability", 12))
                p->info->availability[elem]++;
            sj_ws(p);
            if (p->i >= p->n || p->s[p->i++] != ':')
                return false;
            sj_ws(p);
        }
        char t;
        if (!sj_value(p, &t, top && open == '[' ? (int)k : -1))
            return false;
        if (top && open == '[') {
            p->info->count++;
            if (t != '{')
                p->info->all_objects = false;
        }
        if (is_id) {
            p->info->id_type[elem] = t;
            if (t != '"')
                p->info->id_not_string[elem] = true;
        }
        sj_ws(p);
        if (p->i >= p->n)
            return false;
        if (p->s[p->i] == close) {
            p->i++;
            p->depth--;
            return true;
        }
        if (p->s[p->i++] != ',')
            return false;
    }
}

static bool sj_value(struct sj *p, char *type, int elem)
{
    sj_ws(p);
    if (p->i >= p->n)
        return false;
    unsigned char c = p->s[p->i];
    *type = (char)c;
    if (c == '{' || c == '[')
        return sj_container(p, (char)c, elem);
    if (c == '"')
        return sj_string(p, NULL, NULL);
    static const char *const lits[] = {"true", "false", "null"};
    for (int k = 0; k < 3; k++) {
        size_t l = strlen(lits[k]);
        if (p->n - p->i >= l && !memcmp(p->s + p->i, lits[k], l)) {
            p->i += l;
            *type = 'l';
            return true;
        }
    }
    *type = 'n';
    return sj_number(p);
}

static bool sj_check(const void *s, size_t n, struct sj_info *info)
{
    memset(info, 0, sizeof(*info));
    info->all_objects = true;
    struct sj p = {(const unsigned char *)s, n, 0, 0, info};
    char t;
    if (!sj_value(&p, &t, -1))
        return false;
    info->top = t;
    sj_ws(&p);
    return p.i == n;
}

#endif
