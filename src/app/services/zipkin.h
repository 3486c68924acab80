/* zipkin.h - Zipkin v2 spans (the JSON of POST /api/v2/spans) for the spans
 * primed exports with --zipkin-url: a SERVER span per traced request and a
 * CLIENT span per upstream call.
 *
 * Pure formatting into a caller's buffer: no allocation, no syscalls.
 */
#ifndef PRIMED_ZIPKIN_H
#define PRIMED_ZIPKIN_H

#include <stddef.h>
#include <stdint.h>

enum zipkin_kind { ZIPKIN_SERVER, ZIPKIN_CLIENT };

struct zipkin_span {
    char trace_id[33];  /* 32 lower-case hex, NUL-terminated */
    char id[17];        /* 16 lower-case hex */
    char parent_id[17]; /* 16 hex, or "" for a root span */
    enum zipkin_kind kind;
    const char *name;      /* low-cardinality operation: the route ("get /caller/ping") */
    const char *service;   /* localEndpoint.serviceName (APP_NAME) */
    const char *remote;    /* remoteEndpoint.serviceName (the upstream's host), or NULL */
    uint64_t timestamp_us; /* epoch microseconds of the start */
    uint64_t duration_us;
    const char *method; /* tag http.method, or NULL */
    const char *path;   /* tag http.path (a route name, never a raw path), or NULL */
    int status;         /* tag http.status_code when > 0 */
    const char *error;  /* tag error (e.g. "upstream timeout"), or NULL */
};

/* Formats spans[0, n) as a JSON array (Zipkin's ListOfSpans) into buf (cap
 * bytes, NUL-terminated). Returns the length, or 0 when it does not fit. */
size_t zipkin_format(char *buf, size_t cap, const struct zipkin_span *spans, size_t n);

#endif
