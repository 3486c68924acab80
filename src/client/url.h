/* url.h - the upstream URLs primed is given (--callme-url, --catalog-url,
 * --inventory-url, --zipkin-url): http://HOST[:PORT][/PATH[?QUERY]].
 *
 * Pure parsing, fixed buffers, no allocation and no name resolution.
 */
#ifndef PRIMED_URL_H
#define PRIMED_URL_H

#include <stddef.h>
#include <stdint.h>

#define URL_HOST_MAX 253  /* a DNS name (cluster-local names are ~60) */
#define URL_PATH_MAX 1024 /* path and query, as sent in the request line */

struct url {
    char host[URL_HOST_MAX + 1];      /* a name, an IPv4 address, or an IPv6 one without brackets */
    char authority[URL_HOST_MAX + 9]; /* for the Host header: host[:port] as given, IPv6 in brackets */
    uint16_t port;                    /* 80 when absent */
    char path[URL_PATH_MAX + 1];      /* "/" when absent */
};

/* Parses s into *u. Only http:// (TLS is the mesh's or the ingress's job);
 * no user info; a fragment is dropped. Returns 0, or -EINVAL with a one-line
 * reason in err (for the start-up message). */
int url_parse(const char *s, struct url *u, char *err, size_t errlen);

#endif
