/* route.c - the path -> handler table and the /example query.
 *
 * Paths match exactly (no decoding, no trailing-slash folding): anything else
 * is 404, which keeps the table a handful of memcmp()s. Only GET and HEAD are
 * served; the query of /example is the only one read.
 */
#include "route.h"

#include <stdbool.h>
#include <string.h>

#include <llhttp.h>

#include "prime.h"

#define X_NAME(id, path, allow) path,
static const char *const names[] = {ROUTES(X_NAME)};
#undef X_NAME
#define X_ALLOW(id, path, allow) allow,
static const char *const allows[] = {ROUTES(X_ALLOW)};
#undef X_ALLOW

const char *route_name(enum route_id id)
{
    return id < ROUTE__COUNT ? names[id] : "other";
}

const char *route_allow(enum route_id id)
{
    return id < ROUTE__COUNT ? allows[id] : NULL;
}

/* bits=N in a query string; other parameters are ignored. */
static int parse_bits(const char *q, size_t len, unsigned *bits, const char **reason)
{
    bool seen = false;
    size_t i = 0;
    while (i < len) {
        size_t j = i;
        while (j < len && q[j] != '&')
            j++;
        if (j - i >= 5 && memcmp(q + i, "bits=", 5) == 0) {
            if (seen) {
                *reason = "bits: given more than once";
                return -1;
            }
            seen = true;
            const char *v = q + i + 5;
            size_t vlen = j - i - 5;
            unsigned long n = 0;
            if (vlen == 0 || vlen > 5) {
                *reason = "bits: must be a whole number from 64 to 4096";
                return -1;
            }
            for (size_t k = 0; k < vlen; k++) {
                if (v[k] < '0' || v[k] > '9') {
                    *reason = "bits: must be a whole number from 64 to 4096";
                    return -1;
                }
                n = n * 10 + (unsigned long)(v[k] - '0');
            }
            if (n < PRIME_BITS_MIN || n > PRIME_BITS_MAX) {
                *reason = "bits: must be a whole number from 64 to 4096";
                return -1;
            }
            *bits = (unsigned)n;
        } else if (j - i == 4 && memcmp(q + i, "bits", 4) == 0) {
            *reason = "bits: must be a whole number from 64 to 4096";
            return -1;
        }
        i = j + 1;
    }
    return 0;
}

void route_match(int method, const char *url, size_t len, unsigned default_bits, struct route_result *out)
{
    out->id = ROUTE_OTHER;
    out->status = 0;
    out->bits = default_bits;
    out->reason = NULL;

    /* absolute-form (RFC 9112 3.2.2): skip scheme and authority */
    if (len > 7 && (memcmp(url, "http://", 7) == 0 || (len > 8 && memcmp(url, "https://", 8) == 0))) {
        const char *p = memchr(url + 8, '/', len - 8);
        if (!p) {
            url = "/";
            len = 1;
        } else {
            len -= (size_t)(p - url);
            url = p;
        }
    }

    const char *q = memchr(url, '?', len);
    size_t plen = q ? (size_t)(q - url) : len;

    for (int id = ROUTE_OTHER + 1; id < ROUTE__COUNT; id++) {
        size_t n = strlen(names[id]);
        if (n == plen && memcmp(url, names[id], n) == 0) {
            out->id = (uint8_t)id;
            break;
        }
    }
    if (out->id == ROUTE_OTHER) {
        out->status = 404;
        return;
    }
    if (method != HTTP_GET && method != HTTP_HEAD) {
        out->status = 405;
        return;
    }
    if (out->id == ROUTE_EXAMPLE && q) {
        if (parse_bits(q + 1, len - plen - 1, &out->bits, &out->reason))
            out->status = 400;
    }
}
