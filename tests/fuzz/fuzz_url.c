/* fuzz_url.c - libFuzzer target over src/client/url.c, the upstream URLs primed is
 * given (--callme-url, --catalog-url, --inventory-url, --zipkin-url).
 *
 * Input: the URL text (cut at a NUL). Checks on a URL taken: the host, the
 * authority and the path (which go into the request line and the Host
 * header) hold no byte <= 0x20 or 0x7f; the path starts with '/' and is the
 * URL's path and query as written (a '/' put first when absent), never cut;
 * the port is 1..65535; "http://" + authority + path parses back to the
 * same. On a refusal, the reason is one line.
 * abort() with a message on a failed check, so libFuzzer saves the input.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "url.h"

#define FUZZ_NAME "fuzz_url"
#include "fuzz_fail.h"

static void clean(const char *what, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p <= 0x20 || *p == 0x7f)
            FAIL("byte 0x%02x in the %s", *p, what);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char s[2048], again[2048];
    static struct url u, v;
    if (size >= sizeof(s))
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    char err[256] = "";
    if (url_parse(s, &u, err, sizeof(err)) != 0) {
        if (!err[0] || strchr(err, '\n'))
            FAIL("a refusal without a one-line reason: '%s'", err);
        return 0;
    }
    clean("host", u.host);
    clean("authority", u.authority);
    clean("path", u.path);
    if (!u.host[0] || u.path[0] != '/' || u.port == 0)
        FAIL("host '%s' port %u path '%s'", u.host, u.port, u.path);
    /* the path as written: from the first '/' or '?' after the authority to the '#' */
    const char *a = s + 7;
    const char *rest = a + strcspn(a, "/?#");
    size_t plen = strcspn(rest, "#");
    char want[2 * URL_PATH_MAX];
    snprintf(want, sizeof(want), "%s%.*s", plen == 0 || rest[0] == '?' ? "/" : "", (int)plen, rest);
    if (strcmp(want, u.path) != 0)
        FAIL("path '%s', written '%s'", u.path, want);
    snprintf(again, sizeof(again), "http://%s%s", u.authority, u.path);
    if (url_parse(again, &v, err, sizeof(err)) != 0)
        FAIL("'%s' does not parse back: %s", again, err);
    if (strcmp(u.host, v.host) != 0 || u.port != v.port || strcmp(u.path, v.path) != 0 ||
        strcmp(u.authority, v.authority) != 0)
        FAIL("'%s' parses back to %s %u %s", again, v.host, v.port, v.path);
    return 0;
}
