/* zipkin.c - Zipkin v2 JSON (zipkin.h). Strings are escaped per RFC 8259
 * (quote, backslash, control bytes); ids are copied only when they are hex of
 * the right length, so a span never carries what a request sent. */
#include "zipkin.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

struct out {
    char *buf;
    size_t cap, len;
    bool full;
};

static void put(struct out *o, const char *s, size_t n)
{
    if (o->full || n >= o->cap - o->len) {
        o->full = true;
        return;
    }
    memcpy(o->buf + o->len, s, n);
    o->len += n;
}

static void puts_(struct out *o, const char *s)
{
    put(o, s, strlen(s));
}

static void putf_u64(struct out *o, uint64_t v)
{
    char num[24];
    int n = snprintf(num, sizeof(num), "%" PRIu64, v);
    put(o, num, (size_t)n);
}

static void put_str(struct out *o, const char *s)
{
    put(o, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') {
            char e[2] = {'\\', (char)*p};
            put(o, e, 2);
        } else if (*p < 0x20) {
            char e[8];
            int n = snprintf(e, sizeof(e), "\\u%04x", *p);
            put(o, e, (size_t)n);
        } else {
            put(o, (const char *)p, 1);
        }
    }
    put(o, "\"", 1);
}

static bool is_hex(const char *s, size_t n)
{
    if (strlen(s) != n)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return false;
    return true;
}

static void field(struct out *o, bool *first, const char *name)
{
    if (!*first)
        put(o, ",", 1);
    *first = false;
    put_str(o, name);
    put(o, ":", 1);
}

static bool span(struct out *o, const struct zipkin_span *s)
{
    if (!is_hex(s->trace_id, 32) || !is_hex(s->id, 16) || (s->parent_id[0] && !is_hex(s->parent_id, 16)))
        return false;
    bool first = true;
    put(o, "{", 1);
    field(o, &first, "traceId");
    put_str(o, s->trace_id);
    field(o, &first, "id");
    put_str(o, s->id);
    if (s->parent_id[0]) {
        field(o, &first, "parentId");
        put_str(o, s->parent_id);
    }
    field(o, &first, "kind");
    put_str(o, s->kind == ZIPKIN_SERVER ? "SERVER" : "CLIENT");
    if (s->name) {
        field(o, &first, "name");
        put_str(o, s->name);
    }
    field(o, &first, "timestamp");
    putf_u64(o, s->timestamp_us);
    field(o, &first, "duration");
    putf_u64(o, s->duration_us ? s->duration_us : 1); /* Zipkin: at least 1 µs */
    if (s->service) {
        field(o, &first, "localEndpoint");
        puts_(o, "{\"serviceName\":");
        put_str(o, s->service);
        put(o, "}", 1);
    }
    if (s->remote) {
        field(o, &first, "remoteEndpoint");
        puts_(o, "{\"serviceName\":");
        put_str(o, s->remote);
        put(o, "}", 1);
    }
    bool tfirst = true;
    field(o, &first, "tags");
    put(o, "{", 1);
    if (s->method) {
        field(o, &tfirst, "http.method");
        put_str(o, s->method);
    }
    if (s->path) {
        field(o, &tfirst, "http.path");
        put_str(o, s->path);
    }
    if (s->status > 0) {
        char st[12];
        snprintf(st, sizeof(st), "%d", s->status);
        field(o, &tfirst, "http.status_code");
        put_str(o, st);
    }
    if (s->error) {
        field(o, &tfirst, "error");
        put_str(o, s->error);
    }
    put(o, "}}", 2);
    return true;
}

size_t zipkin_format(char *buf, size_t cap, const struct zipkin_span *spans, size_t n)
{
    if (cap == 0)
        return 0;
    struct out o = {buf, cap, 0, false};
    put(&o, "[", 1);
    bool first = true;
    for (size_t i = 0; i < n; i++) {
        size_t mark = o.len;
        if (!first)
            put(&o, ",", 1);
        if (!span(&o, &spans[i])) {
            o.len = mark; /* a span with a bad id is left out, not sent broken */
            continue;
        }
        first = false;
    }
    put(&o, "]", 1);
    if (o.full)
        return 0;
    buf[o.len] = '\0';
    return o.len;
}
