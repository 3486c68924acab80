/* route.c - the path -> route table.
 *
 * Paths match exactly (no decoding, no trailing-slash folding): anything else
 * is 404, which keeps the table a handful of memcmp()s; a "/{name}" route
 * matches by its prefix, its rest the item id. A route serves the methods its
 * row allows (405 for the rest); its query is its own file's to read.
 */
#include "route.h"

#include <stdbool.h>
#include <string.h>

#include <llhttp.h>


#define X_NAME(id, path, allow, module, flags, help) path,
static const char *const names[] = {ROUTES(X_NAME)};
#undef X_NAME
#define X_ALLOW(id, path, allow, module, flags, help) allow,
static const char *const allows[] = {ROUTES(X_ALLOW)};
#undef X_ALLOW
#define X_FLAGS(id, path, allow, module, flags, help) flags,
static const unsigned flag_bits[] = {ROUTES(X_FLAGS)};
#undef X_FLAGS

const char *route_name(enum route_id id)
{
    return id < ROUTE__COUNT ? names[id] : "other";
}

const char *route_allow(enum route_id id)
{
    return id < ROUTE__COUNT ? allows[id] : NULL;
}

unsigned route_flags(enum route_id id)
{
    return id < ROUTE__COUNT ? flag_bits[id] : 0;
}

/* The name of a method an ALLOW column may name besides GET, HEAD and
 * OPTIONS, or NULL (llhttp's own table is in its library, which the
 * fuzzers of catalog.c and json.c, linking this file, do without). */
static const char *method_word(int method)
{
    switch (method) {
    case HTTP_POST:
        return "POST";
    case HTTP_PUT:
        return "PUT";
    case HTTP_DELETE:
        return "DELETE";
    case HTTP_PATCH:
        return "PATCH";
    default:
        return NULL;
    }
}

bool route_allows(enum route_id id, int method)
{
    if (method == HTTP_GET || method == HTTP_HEAD || method == HTTP_OPTIONS)
        return id > ROUTE_OTHER && id < ROUTE__COUNT; /* every row allows them */
    const char *a = route_allow(id), *m = method_word(method);
    if (!m)
        return false;
    size_t n = strlen(m);
    for (const char *p = a; p && (p = strstr(p, m)); p += n)
        if ((p == a || p[-1] == ' ') && (p[n] == ',' || p[n] == '\0'))
            return true;
    return false;
}

/* The prefix of a "/{name}" route's path ("/api/inventory/" of
 * "/api/inventory/{itemId}"), its length into *n; NULL for an exact path. */
static const char *param_prefix(const char *path, size_t *n)
{
    size_t len = strlen(path);
    const char *open = len && path[len - 1] == '}' ? strrchr(path, '{') : NULL;
    if (!open || open == path || open[-1] != '/')
        return NULL;
    *n = (size_t)(open - path);
    return path;
}

int route_query_param(const char *q, size_t len, const char *name, const char **v, size_t *vlen)
{
    size_t nl = strlen(name);
    int found = 0;
    for (size_t i = 0; i < len;) {
        size_t j = i;
        while (j < len && q[j] != '&')
            j++;
        if (j - i >= nl && memcmp(q + i, name, nl) == 0 && (j - i == nl || q[i + nl] == '=')) {
            if (found)
                return -1;
            found = 1;
            *v = j - i > nl ? q + i + nl + 1 : q + j;
            *vlen = j - i > nl ? j - i - nl - 1 : 0;
        }
        i = j + 1;
    }
    return found;
}

bool route_item_char(char ch)
{
    return item_id_char(ch);
}

/* The origin-form part of a request target: absolute-form (RFC 9112 3.2.2)
 * skips scheme and authority. */
static const char *origin_form(const char *url, size_t *len)
{
    size_t skip = *len > 7 && memcmp(url, "http://", 7) == 0 ? 7 : *len > 8 && memcmp(url, "https://", 8) == 0 ? 8 : 0;
    if (skip) {
        const char *p = memchr(url + skip, '/', *len - skip);
        if (!p) {
            *len = 1;
            return "/";
        }
        *len -= (size_t)(p - url);
        return p;
    }
    return url;
}

bool route_has_prefix(const char *url, size_t len, const char *prefix)
{
    url = origin_form(url, &len);
    const char *q = memchr(url, '?', len);
    size_t plen = q ? (size_t)(q - url) : len;
    size_t n = strlen(prefix);
    return n <= plen && memcmp(url, prefix, n) == 0;
}

void route_match(int method, const char *url, size_t len, struct route_result *out, const char **query,
                 size_t *query_len)
{
    out->id = ROUTE_OTHER;
    out->status = 0;
    out->arg = 0;
    out->reason = NULL;
    out->item_len = 0;
    out->item[0] = '\0';
    *query = NULL;
    *query_len = 0;

    if (len == 1 && url[0] == '*')
        return; /* the server as a whole (OPTIONS *) */
    url = origin_form(url, &len);
    const char *q = memchr(url, '?', len);
    size_t plen = q ? (size_t)(q - url) : len;

    /* an exact path first, then a "/{name}" route's prefix with an id after it */
    for (int id = ROUTE_OTHER + 1; id < ROUTE__COUNT && out->id == ROUTE_OTHER; id++) {
        size_t n = strlen(names[id]);
        if (!param_prefix(names[id], &n) && n == plen && memcmp(url, names[id], n) == 0)
            out->id = (uint8_t)id;
    }
    for (int id = ROUTE_OTHER + 1; id < ROUTE__COUNT && out->id == ROUTE_OTHER; id++) {
        size_t ip;
        if (!param_prefix(names[id], &ip) || plen <= ip || memcmp(url, names[id], ip) != 0)
            continue;
        /* one label for every item (the metrics' path stays bounded); an id
         * primed cannot hold is an unknown item */
        out->id = (uint8_t)id;
        size_t n = plen - ip;
        bool ok = n <= ROUTE_ITEM_MAX;
        for (size_t k = 0; ok && k < n; k++)
            ok = route_item_char(url[ip + k]);
        if (ok) {
            memcpy(out->item, url + ip, n);
            out->item[n] = '\0';
            out->item_len = (uint8_t)n;
        }
    }
    if (out->id == ROUTE_OTHER) {
        out->status = 404;
        return;
    }
    if (!route_allows((enum route_id)out->id, method)) {
        out->status = 405;
        return;
    }
    if (q) {
        *query = q + 1;
        *query_len = len - plen - 1;
    }
}
