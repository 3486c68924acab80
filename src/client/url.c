/* url.c - upstream URL parsing (url.h). Strict where a mistake would
 * otherwise show up at the first request instead of at start-up: a bad port,
 * https, user info, spaces or control bytes are refused with the reason. */
#include "url.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int bad(char *err, size_t errlen, const char *s, const char *why)
{
    /* the URL as given, its control bytes as '?': the reason stays one line */
    char shown[201];
    size_t n = 0;
    for (; s[n] && n < sizeof(shown) - 1; n++)
        shown[n] = (unsigned char)s[n] < 0x20 || s[n] == 0x7f ? '?' : s[n];
    shown[n] = '\0';
    snprintf(err, errlen, "'%s': %s", shown, why);
    return -EINVAL;
}

/* RFC 3986 reg-name / IPv4: letters, digits, '-', '.', '_' */
static bool host_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
           c == '_';
}

/* Bytes a request target may carry as given (no spaces, no controls, no '#'). */
static bool path_char(unsigned char c)
{
    return c > 0x20 && c < 0x7f && c != '#';
}

int url_parse(const char *s, struct url *u, char *err, size_t errlen)
{
    memset(u, 0, sizeof(*u));
    static const char scheme[] = "http://";
    if (strncmp(s, "https://", 8) == 0)
        return bad(err, errlen, s, "https is not supported (primed speaks cleartext HTTP/1.1; TLS is the mesh's)");
    if (strncmp(s, scheme, sizeof(scheme) - 1) != 0)
        return bad(err, errlen, s, "not an http:// URL");
    const char *a = s + sizeof(scheme) - 1;
    size_t alen = strcspn(a, "/?#");
    const char *rest = a + alen;
    if (memchr(a, '@', alen))
        return bad(err, errlen, s, "user info is not supported");
    const char *h = a, *colon = NULL;
    size_t hlen;
    if (*a == '[') {
        const char *close = memchr(a, ']', alen);
        if (!close)
            return bad(err, errlen, s, "unclosed '[' in the host");
        h = a + 1;
        hlen = (size_t)(close - h);
        for (size_t i = 0; i < hlen; i++)
            if (!((h[i] >= '0' && h[i] <= '9') || ((h[i] | 0x20) >= 'a' && (h[i] | 0x20) <= 'f') || h[i] == ':' ||
                  h[i] == '.'))
                return bad(err, errlen, s, "bad IPv6 address");
        if (close + 1 < a + alen) {
            if (close[1] != ':')
                return bad(err, errlen, s, "junk after the IPv6 address");
            colon = close + 1;
        }
    } else {
        colon = memchr(a, ':', alen);
        hlen = colon ? (size_t)(colon - a) : alen;
        for (size_t i = 0; i < hlen; i++)
            if (!host_char(h[i]))
                return bad(err, errlen, s, "bad character in the host");
    }
    if (hlen == 0)
        return bad(err, errlen, s, "no host");
    if (hlen > URL_HOST_MAX)
        return bad(err, errlen, s, "host longer than 253 characters");
    memcpy(u->host, h, hlen);
    u->port = 80;
    if (colon) {
        const char *p = colon + 1, *end = a + alen;
        if (p == end || end - p > 5)
            return bad(err, errlen, s, "bad port");
        unsigned long v = 0;
        for (; p < end; p++) {
            if (*p < '0' || *p > '9')
                return bad(err, errlen, s, "bad port");
            v = v * 10 + (unsigned long)(*p - '0');
        }
        if (v == 0 || v > 65535)
            return bad(err, errlen, s, "port not in 1..65535");
        u->port = (uint16_t)v;
    }
    snprintf(u->authority, sizeof(u->authority), "%.*s", (int)alen, a);
    size_t plen = strcspn(rest, "#");
    for (size_t i = 0; i < plen; i++)
        if (!path_char((unsigned char)rest[i]))
            return bad(err, errlen, s, "space or control character in the path");
    bool slash = plen == 0 || rest[0] == '?'; /* a '/' goes first, and counts */
    if (plen + slash > URL_PATH_MAX)
        return bad(err, errlen, s, "path longer than 1024 characters");
    if (slash) {
        u->path[0] = '/';
        memcpy(u->path + 1, rest, plen);
    } else {
        memcpy(u->path, rest, plen);
    }
    return 0;
}
