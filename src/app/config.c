/* config.c - flags and environment into struct config.
 *
 * Every value is range-checked here, before anything starts, so the rest of
 * the server never sees a bad one. A flag always wins over its environment
 * variable. No allocation: the struct holds everything by value.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "build_info.h"
#include "log.h"
#include "resp.h"
#include "route.h"
#include "upstream.h"

/* What --fault-abort may answer: the statuses of resp.h's table from 400 up
 * (each has its reason phrase and its metric label). */
#define X_CODE(code, text) code,
static const int statuses[] = {HTTP_STATUSES(X_CODE)};
#undef X_CODE

static bool abort_code(unsigned long u)
{
    for (size_t i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++)
        if (statuses[i] >= 400 && (unsigned long)statuses[i] == u)
            return true;
    return false;
}

/* Those statuses as "400 401 ..." into out. */
static const char *abort_codes(char *out, size_t cap)
{
    size_t n = 0;
    out[0] = '\0';
    for (size_t i = 0; i < sizeof(statuses) / sizeof(statuses[0]) && n + 5 < cap; i++)
        if (statuses[i] >= 400)
            n += (size_t)snprintf(out + n, cap - n, "%s%d", n ? " " : "", statuses[i]);
    return out;
}

#define DISPATCH_DEFAULT_NAME (PRIMED_HAVE_STEAL ? "steal" : "inline")

bool config_has_dispatch(enum dispatch_mode m)
{
    return m == DISPATCH_INLINE ? PRIMED_HAVE_INLINE : PRIMED_HAVE_STEAL;
}

const char *config_dispatch_name(enum dispatch_mode m)
{
    return m == DISPATCH_INLINE ? "inline" : "steal";
}

/* The engine a forced --prime-vector names; PRIME_VECTOR_N for auto and on. */
static enum prime_vector vector_forced(enum config_vector v)
{
    switch (v) {
    case CONFIG_VECTOR_OFF:
        return PRIME_VECTOR_SCALAR;
    case CONFIG_VECTOR_IFMA:
        return PRIME_VECTOR_IFMA;
    case CONFIG_VECTOR_AVX512:
        return PRIME_VECTOR_AVX512;
    case CONFIG_VECTOR_AVX2:
        return PRIME_VECTOR_AVX2;
    case CONFIG_VECTOR_AUTO:
    case CONFIG_VECTOR_ON:
        break;
    }
    return PRIME_VECTOR_N;
}

enum prime_vector config_vector(const struct config *cfg)
{
    if (cfg->engine != PRIME_ENGINE_SIEVE)
        return PRIME_VECTOR_SCALAR;
    enum prime_vector v = vector_forced(cfg->prime_vector);
    return v != PRIME_VECTOR_N && prime_vector_has(v) ? v : prime_vector_best();
}

const char *config_vector_refusal(const struct config *cfg, char *why, size_t len)
{
    static const char *const ext[PRIME_VECTOR_N] = {"", "AVX2", "AVX-512F", "AVX-512 IFMA"};
    enum prime_vector v = vector_forced(cfg->prime_vector), best = prime_vector_best();
    if (cfg->prime_vector == CONFIG_VECTOR_ON && best == PRIME_VECTOR_SCALAR)
        snprintf(why, len, "--prime-vector on: this CPU lacks AVX2, AVX-512F and AVX-512 IFMA, one of which a vector "
                           "engine needs (auto or off run the scalar engine)");
    else if (v != PRIME_VECTOR_N && !prime_vector_has(v))
        snprintf(why, len, "--prime-vector %s: this CPU lacks %s, which that engine needs (auto runs the best it has: %s)",
                 prime_vector_name(v), ext[v], prime_vector_name(best));
    else
        return NULL;
    return why;
}

/* Unsigned decimal in [lo, hi]; no sign, no trailing garbage. */
/* "on" or "off" into *out. Returns 0, or -1 for anything else. */
static int parse_onoff(const char *v, bool *out)
{
    if (strcmp(v, "on") != 0 && strcmp(v, "off") != 0)
        return -1;
    *out = v[1] == 'n';
    return 0;
}

static int parse_ulong(const char *s, unsigned long lo, unsigned long hi, unsigned long *out)
{
    if (!s || *s < '0' || *s > '9')
        return -EINVAL;
    errno = 0;
    char *end;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return -EINVAL;
    *out = v;
    return 0;
}

/* A percentage: a decimal number from 0 to 100 ("0.5", "50", "100"). */
static int parse_pct(const char *s, double *out)
{
    if (!s || ((*s < '0' || *s > '9') && *s != '.'))
        return -EINVAL;
    errno = 0;
    char *end;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= 0.0 && v <= 100.0))
        return -EINVAL;
    *out = v;
    return 0;
}

/* A duration: "1.5", "1.5s" or "250ms"; result in ms within [lo, hi]. */
static int parse_ms(const char *s, unsigned lo, unsigned hi, unsigned *out)
{
    if (!s || ((*s < '0' || *s > '9') && *s != '.'))
        return -EINVAL;
    errno = 0;
    char *end;
    double v = strtod(s, &end);
    if (errno || end == s)
        return -EINVAL;
    double ms;
    if (strcmp(end, "ms") == 0)
        ms = v;
    else if (*end == '\0' || strcmp(end, "s") == 0)
        ms = v * 1000.0;
    else
        return -EINVAL;
    if (!(ms >= lo && ms <= hi))
        return -EINVAL;
    *out = (unsigned)(ms + 0.5);
    return 0;
}

/* ---- the rows' own checks and parsers ----------------------------------- */

/* A text's check: NULL when v is fine, else what it should be. */
typedef const char *text_check_fn(const char *v);

static const char *check_host(const char *v)
{
    unsigned char tmp[16];
    return inet_pton(AF_INET, v, tmp) == 1 || inet_pton(AF_INET6, v, tmp) == 1 ? NULL
                                                                               : "a numeric IPv4 or IPv6 address";
}

static const char *check_db(const char *v)
{
    return *v ? NULL : "a path (:memory: or a file) or a PostgreSQL URL";
}

static const char *check_fault_path(const char *v)
{
    return v[0] == '/' ? NULL : "a path prefix (starts with /)";
}

/* A custom row: parse returns 0, or -1 with what it takes in why; show
 * writes the value as the ready line says it. */
struct config_custom {
    int (*parse)(void *field, const char *v, char *why, size_t whylen);
    void (*show)(const void *field, char *out, size_t cap);
};

static int parse_dispatch(void *field, const char *v, char *why, size_t whylen)
{
    enum dispatch_mode m;
    if (strcmp(v, "inline") == 0)
        m = DISPATCH_INLINE;
    else if (strcmp(v, "steal") == 0)
        m = DISPATCH_STEAL;
    else
        return snprintf(why, whylen, "a dispatch mode (inline or steal)"), -1;
    if (!config_has_dispatch(m))
        return snprintf(why, whylen, "a dispatch built into this binary (built: %s)", PRIMED_DISPATCH_BUILT), -1;
    *(enum dispatch_mode *)field = m;
    return 0;
}

static void show_dispatch(const void *field, char *out, size_t cap)
{
    snprintf(out, cap, "%s", config_dispatch_name(*(const enum dispatch_mode *)field));
}

static int parse_access_log(void *field, const char *v, char *why, size_t whylen)
{
    if (strcmp(v, "1") == 0 || strcmp(v, "true") == 0)
        *(bool *)field = true;
    else if (strcmp(v, "0") == 0 || strcmp(v, "false") == 0 || *v == '\0')
        *(bool *)field = false;
    else
        return snprintf(why, whylen, "0 or 1"), -1;
    return 0;
}

static void show_onoff(const void *field, char *out, size_t cap)
{
    snprintf(out, cap, "%s", *(const bool *)field ? "on" : "off");
}

static int parse_fault_abort(void *field, const char *v, char *why, size_t whylen)
{
    unsigned long u;
    if (*v == '\0') {
        *(unsigned *)field = 0;
        return 0;
    }
    if (parse_ulong(v, 400, 599, &u) || !abort_code(u)) {
        char codes[128];
        return snprintf(why, whylen, "a status primed answers (one of %s)", abort_codes(codes, sizeof(codes))), -1;
    }
    *(unsigned *)field = (unsigned)u;
    return 0;
}

static void show_unsigned(const void *field, char *out, size_t cap)
{
    snprintf(out, cap, "%u", *(const unsigned *)field);
}

static const struct config_custom custom_dispatch = {parse_dispatch, show_dispatch};
static const struct config_custom custom_access_log = {parse_access_log, show_onoff};
static const struct config_custom custom_fault_abort = {parse_fault_abort, show_unsigned};

/* ---- the list as a table ---------------------------------------------------- */

enum opt_id {
#define X_ID(id, ...) OPT_##id,
    CONFIG_FLAGS(X_ID)
#undef X_ID
    /* the commands: no value, no environment */
    OPT_HELP,
    OPT_HELP_MARKDOWN,
    OPT_VERSION,
};

struct config_opt {
    const char *flag; /* without the leading "--" */
    const char *env;  /* NULL: a command */
    enum opt_id id;
    const char *def;     /* "": none, the field stays zero; NULL: a command */
    const char *shown;   /* the default as --help and README.md show it; NULL: def */
    const char *ready;   /* its key on the ready line, or NULL */
    const char *meaning; /* Markdown */
    enum config_kind kind;
    size_t off, size; /* the field in struct config */
    unsigned long lo, hi;
    const char *what;    /* the noun of its error message: "a port" */
    const char *choices; /* CK_CHOICE: "a|b|c", index i is value i */
    text_check_fn *check;
    const struct config_custom *custom;
};

#define CONFIG_UNPAREN(...) __VA_ARGS__
#define X_OPT(id_, type, field, dim, kind_, lo_, hi_, extra, flag_, env_, def_, shown_, ready_, meaning_)          \
    {.flag = flag_, .env = env_, .id = OPT_##id_, .def = def_, .shown = shown_, .ready = ready_,                    \
     .meaning = meaning_, .kind = kind_, .off = offsetof(struct config, field),                                    \
     .size = sizeof(((struct config *)0)->field), .lo = lo_, .hi = hi_, CONFIG_UNPAREN extra},
static const struct config_opt opts[] = {
    CONFIG_FLAGS(X_OPT)
    {.flag = "help", .id = OPT_HELP, .meaning = "print this help and exit"},
    {.flag = "help-markdown", .id = OPT_HELP_MARKDOWN, .meaning = "print this list as README.md's flag table and exit"},
    {.flag = "version", .id = OPT_VERSION,
     .meaning = "print the version, build profile, dispatch, prime engine and its vector unit, compiler and flags and exit"},
};
#undef X_OPT

/* Each row's field has the type its kind writes. */
#define X_TYPE(id, type, field, dim, kind, ...)                                                                    \
    _Static_assert(kind != CK_UINT || sizeof(((struct config *)0)->field) == sizeof(unsigned), #field);            \
    _Static_assert(kind != CK_MS || sizeof(((struct config *)0)->field) == sizeof(unsigned), #field);              \
    _Static_assert(kind != CK_ULONG || sizeof(((struct config *)0)->field) == sizeof(unsigned long), #field);      \
    _Static_assert(kind != CK_PCT || sizeof(((struct config *)0)->field) == sizeof(double), #field);               \
    _Static_assert(kind != CK_ONOFF || sizeof(((struct config *)0)->field) == sizeof(bool), #field);               \
    _Static_assert(kind != CK_CHOICE || sizeof(((struct config *)0)->field) == sizeof(bool) ||                     \
                       sizeof(((struct config *)0)->field) == sizeof(int), #field);                               \
    _Static_assert((kind != CK_URL && kind != CK_BASE_URL) || sizeof(((struct config *)0)->field) == sizeof(struct url), #field);
CONFIG_FLAGS(X_TYPE)
#undef X_TYPE

#define NOPTS (sizeof(opts) / sizeof(opts[0]))

static bool is_command(const struct config_opt *o)
{
    return o->id >= OPT_HELP;
}

/* A duration in ms as the help says it: "0.1", "30", "3600". */
static void format_seconds(char *out, size_t cap, unsigned long ms)
{
    snprintf(out, cap, "%g", (double)ms / 1000.0);
}

/* A bound as the help says it: 2^N for the large powers of two. */
static void format_bound(char *out, size_t cap, unsigned long v)
{
    if (v >= (1UL << 20) && (v & (v - 1)) == 0)
        snprintf(out, cap, "2^%d", __builtin_ctzl(v));
    else
        snprintf(out, cap, "%lu", v);
}

/* The range of a numeric row ("1..65536", "0.1..3600 s"), or "" for the others. */
static const char *range_text(const struct config_opt *o, char *out, size_t cap)
{
    char lo[24], hi[24];
    out[0] = '\0';
    if (o->kind == CK_UINT || o->kind == CK_ULONG) {
        format_bound(lo, sizeof(lo), o->lo);
        format_bound(hi, sizeof(hi), o->hi);
        snprintf(out, cap, "%s..%s", lo, hi);
    } else if (o->kind == CK_MS) {
        format_seconds(lo, sizeof(lo), o->lo);
        format_seconds(hi, sizeof(hi), o->hi);
        snprintf(out, cap, "%s..%s s", lo, hi);
    } else if (o->kind == CK_PCT) {
        snprintf(out, cap, "%lu..%lu", o->lo, o->hi);
    }
    return out;
}

/* The meaning with its range appended: what --help and README.md say. */
static const char *meaning_text(const struct config_opt *o, char *out, size_t cap)
{
    char range[64];
    if (*range_text(o, range, sizeof(range)))
        snprintf(out, cap, "%s; %s", o->meaning, range);
    else
        snprintf(out, cap, "%s", o->meaning);
    return out;
}

/* Columns of s up to its end, a UTF-8 character (the list's "≥", "×") as one. */
static size_t columns(const char *s, size_t n)
{
    size_t w = 0;
    for (size_t i = 0; i < n; i++)
        w += ((unsigned char)s[i] & 0xC0) != 0x80;
    return w;
}

/* Markdown text as plain words: backticks dropped, wrapped at 80 columns, each line indented. */
static void write_wrapped(int fd, const char *text, int indent)
{
    char line[256];
    size_t n = 0, width = 0;
    const char *p = text;
    while (*p) {
        while (*p == ' ')
            p++;
        const char *w = p;
        while (*p && *p != ' ')
            p++;
        char word[256];
        size_t wn = 0;
        for (const char *q = w; q < p && wn + 1 < sizeof(word); q++)
            if (*q != '`')
                word[wn++] = *q;
        if (wn == 0)
            continue;
        size_t ww = columns(word, wn);
        if (n > 0 && (size_t)indent + width + 1 + ww > 80) {
            dprintf(fd, "%*s%.*s\n", indent, "", (int)n, line);
            n = width = 0;
        }
        if (n + 1 + wn >= sizeof(line))
            wn = sizeof(line) - n - 2; /* no meaning has such a word */
        if (n > 0) {
            line[n++] = ' ';
            width++;
        }
        memcpy(line + n, word, wn);
        n += wn;
        width += ww;
    }
    if (n > 0)
        dprintf(fd, "%*s%.*s\n", indent, "", (int)n, line);
}

/* A default as --help shows it: shown without its backticks, or def. */
static void write_default(int fd, const struct config_opt *o)
{
    if (!o->shown) {
        dprintf(fd, "%s", o->def);
        return;
    }
    for (const char *s = o->shown; *s; s++)
        if (*s != '`')
            dprintf(fd, "%c", *s);
}

void config_usage(int fd)
{
    dprintf(fd, "usage: primed [options]\n\n"
                "A thread-per-core io_uring HTTP/1.1 server; GET /example answers with a\n"
                "random probable prime's worth of work. Every option is --NAME V or\n"
                "--NAME=V, or its environment variable; flags win over environment.\n"
                "Durations take 30, 1.5s or 250ms.\n\n");
    for (size_t i = 0; i < NOPTS; i++) {
        const struct config_opt *o = &opts[i];
        if (is_command(o)) {
            dprintf(fd, "  --%s\n", o->flag);
        } else {
            dprintf(fd, "  --%s V, $%s (default ", o->flag, o->env);
            write_default(fd, o);
            dprintf(fd, ")\n");
        }
        char text[1024];
        write_wrapped(fd, meaning_text(o, text, sizeof(text)), 6);
    }
    /* the route table's rows: methods (OPTIONS aside), path, what the row's HELP adds */
    static const struct {
        const char *path, *allow, *help;
    } routes[] = {
#define X_HELP(id, path, allow, module, flags, help) {path, allow, help},
        ROUTES(X_HELP)
#undef X_HELP
    };
    dprintf(fd, "\nEndpoints (each answers OPTIONS too, and so does OPTIONS *):\n");
    static const char options[] = ", OPTIONS";
    for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
        if (!routes[i].allow)
            continue; /* "other": the unknown paths */
        size_t n = strlen(routes[i].allow), k = sizeof(options) - 1;
        if (n >= k && strcmp(routes[i].allow + n - k, options) == 0)
            n -= k;
        dprintf(fd, "  %.*s %s%s\n", (int)n, routes[i].allow, routes[i].path, routes[i].help);
    }
}

void config_usage_markdown(int fd)
{
    dprintf(fd, "| flag | environment | default | meaning |\n|---|---|---|---|\n");
    for (size_t i = 0; i < NOPTS; i++) {
        const struct config_opt *o = &opts[i];
        char text[1024];
        meaning_text(o, text, sizeof(text));
        if (is_command(o))
            dprintf(fd, "| `--%s` | | | %s |\n", o->flag, text);
        else if (o->shown)
            dprintf(fd, "| `--%s` | `%s` | %s | %s |\n", o->flag, o->env, o->shown, text);
        else
            dprintf(fd, "| `--%s` | `%s` | `%s` | %s |\n", o->flag, o->env, o->def, text);
    }
}

static void *field_of(struct config *c, const struct config_opt *o)
{
    return (char *)c + o->off;
}

/* CK_CHOICE: the index of v among o->choices, or -1. */
static int choice_index(const struct config_opt *o, const char *v)
{
    size_t n = strlen(v);
    int i = 0;
    for (const char *p = o->choices; *p; i++) {
        size_t len = strcspn(p, "|");
        if (len == n && n && strncmp(p, v, n) == 0)
            return i;
        p += len + (p[len] == '|');
    }
    return -1;
}

/* CK_CHOICE: name i of o->choices into out. */
static void choice_name(const struct config_opt *o, int i, char *out, size_t cap)
{
    const char *p = o->choices;
    for (; i > 0 && *p; i--)
        p += strcspn(p, "|") + 1;
    snprintf(out, cap, "%.*s", (int)strcspn(p, "|"), p);
}

/* "a, b or c" of o->choices. */
static const char *choice_list(const struct config_opt *o, char *out, size_t cap)
{
    size_t n = 0;
    int count = 1;
    for (const char *p = o->choices; *p; p++)
        count += *p == '|';
    out[0] = '\0';
    for (int i = 0; i < count && n < cap; i++) {
        char name[32];
        choice_name(o, i, name, sizeof(name));
        n += (size_t)snprintf(out + n, cap - n, "%s%s", i == 0 ? "" : i == count - 1 ? " or " : ", ", name);
    }
    return out;
}

static int base_url_fix(struct url *u, char *why, size_t whylen)
{
    if (strchr(u->path, '?'))
        return snprintf(why, whylen, "a base URL has no query (/api/... is appended to it)"), -1;
    size_t n = strlen(u->path);
    while (n > 0 && u->path[n - 1] == '/')
        u->path[--n] = '\0'; /* "http://h/" and "http://h" are one base */
    if (n + sizeof("/api/inventory/") + 32 > sizeof(u->path))
        return snprintf(why, whylen, "the base path is too long"), -1;
    return 0;
}

/* Parses v into o's field: one parser and one range check per kind. */
static int apply(struct config *c, const struct config_opt *o, const char *v, const char *src, char *err, size_t errlen)
{
    void *f = field_of(c, o);
    char range[64], why[200];
    unsigned long u;
    switch (o->kind) {
    case CK_UINT:
    case CK_ULONG:
        if (parse_ulong(v, o->lo, o->hi, &u))
            return log_einval(err, errlen, "%s: '%.300s' is not %s (%s)", src, v, o->what, range_text(o, range, sizeof(range)));
        if (o->kind == CK_UINT)
            *(unsigned *)f = (unsigned)u;
        else
            *(unsigned long *)f = u;
        return 0;
    case CK_MS:
        if (parse_ms(v, (unsigned)o->lo, (unsigned)o->hi, f))
            return log_einval(err, errlen, "%s: '%.300s' is not %s (%s, e.g. 30, 1.5s or 500ms)", src, v, o->what,
                              range_text(o, range, sizeof(range)));
        return 0;
    case CK_PCT:
        if (parse_pct(v, f))
            return log_einval(err, errlen, "%s: '%.300s' is not %s (%s)", src, v, o->what, range_text(o, range, sizeof(range)));
        return 0;
    case CK_ONOFF:
        if (parse_onoff(v, f))
            return log_einval(err, errlen, "%s: '%.300s' is not on or off", src, v);
        return 0;
    case CK_CHOICE: {
        int i = choice_index(o, v);
        if (i < 0)
            return log_einval(err, errlen, "%s: '%.300s' is not %s (%s)", src, v, o->what, choice_list(o, why, sizeof(why)));
        if (o->size == sizeof(bool))
            *(bool *)f = i != 0;
        else
            *(int *)f = i;
        return 0;
    }
    case CK_TEXT: {
        const char *bad = strlen(v) >= o->size ? NULL : o->check ? o->check(v) : NULL;
        if (strlen(v) >= o->size)
            return log_einval(err, errlen, "%s: '%.300s' is too long (at most %zu bytes)", src, v, o->size - 1);
        if (bad)
            return log_einval(err, errlen, "%s: '%.300s' is not %s", src, v, bad);
        memcpy(f, v, strlen(v) + 1);
        return 0;
    }
    case CK_URL:
    case CK_BASE_URL: {
        struct url *dst = f;
        if (*v == '\0') {
            dst->host[0] = '\0'; /* an empty variable is unset */
            return 0;
        }
        if (url_parse(v, dst, why, sizeof(why)) || (o->kind == CK_BASE_URL && base_url_fix(dst, why, sizeof(why))))
            return log_einval(err, errlen, "%s: '%.300s': %s", src, v, why);
        return 0;
    }
    case CK_CUSTOM:
        if (o->custom->parse(f, v, why, sizeof(why)))
            return log_einval(err, errlen, "%s: '%.300s' is not %s", src, v, why);
        return 0;
    }
    return 0;
}

/* o's value as the ready line writes it. */
static void show(const struct config *c, const struct config_opt *o, char *out, size_t cap)
{
    const void *f = (const char *)c + o->off;
    const struct url *url = f;
    switch (o->kind) {
    case CK_UINT:
        snprintf(out, cap, "%u", *(const unsigned *)f);
        break;
    case CK_ULONG:
        snprintf(out, cap, "%lu", *(const unsigned long *)f);
        break;
    case CK_MS:
        snprintf(out, cap, "%ums", *(const unsigned *)f);
        break;
    case CK_PCT:
        snprintf(out, cap, "%g", *(const double *)f);
        break;
    case CK_ONOFF:
        show_onoff(f, out, cap);
        break;
    case CK_CHOICE:
        choice_name(o, o->size == sizeof(bool) ? *(const bool *)f : *(const int *)f, out, cap);
        break;
    case CK_TEXT:
        snprintf(out, cap, "%s", *(const char *)f ? (const char *)f : "none");
        break;
    case CK_URL:
        snprintf(out, cap, "%s", url->host[0] ? url->authority : "none");
        break;
    case CK_BASE_URL:
        if (url->host[0])
            snprintf(out, cap, "http://%s%s", url->authority, url->path);
        else
            snprintf(out, cap, "none");
        break;
    case CK_CUSTOM:
        o->custom->show(f, out, cap);
        break;
    }
}

size_t config_ready(const struct config *c, char *out, size_t cap)
{
    size_t n = 0;
    if (cap)
        out[0] = '\0';
    for (size_t i = 0; i < NOPTS && n + 1 < cap; i++) {
        if (!opts[i].ready)
            continue;
        char v[sizeof(struct url) + 16];
        show(c, &opts[i], v, sizeof(v));
        int w = snprintf(out + n, cap - n, " %s=%s", opts[i].ready, v);
        n = w < 0 ? n : n + (size_t)w < cap ? n + (size_t)w : cap - 1;
    }
    return n;
}

void config_defaults(struct config *c)
{
    memset(c, 0, sizeof(*c));
    for (size_t i = 0; i < NOPTS; i++) {
        char err[256];
        if (opts[i].def && opts[i].def[0] && apply(c, &opts[i], opts[i].def, "default", err, sizeof(err))) {
            dprintf(STDERR_FILENO, "primed: bad default in config.c's list: %s\n", err);
            abort(); /* the list is wrong: test_config's defaults test says which */
        }
    }
}

int config_parse(struct config *c, int argc, char **argv, const char *(*getenv_fn)(const char *), char *err,
                 size_t errlen)
{
    err[0] = '\0';
    for (size_t i = 0; getenv_fn && i < NOPTS; i++) {
        if (!opts[i].env)
            continue;
        const char *v = getenv_fn(opts[i].env);
        if (!v)
            continue;
        int r = apply(c, &opts[i], v, opts[i].env, err, errlen);
        if (r)
            return r;
    }

    for (int a = 1; a < argc; a++) {
        const char *arg = argv[a];
        if (strncmp(arg, "--", 2) != 0 || arg[2] == '\0')
            return log_einval(err, errlen, "unexpected argument '%s' (see --help)", arg);
        const char *name = arg + 2;
        const char *eq = strchr(name, '=');
        size_t nlen = eq ? (size_t)(eq - name) : strlen(name);
        const struct config_opt *o = NULL;
        for (size_t i = 0; i < NOPTS; i++)
            if (strlen(opts[i].flag) == nlen && strncmp(opts[i].flag, name, nlen) == 0)
                o = &opts[i];
        if (!o)
            return log_einval(err, errlen, "unknown option '%.*s' (see --help)", (int)(nlen + 2), arg);
        if (o->id == OPT_HELP)
            return CONFIG_HELP;
        if (o->id == OPT_HELP_MARKDOWN)
            return CONFIG_HELP_MARKDOWN;
        if (o->id == OPT_VERSION)
            return CONFIG_VERSION;
        const char *v;
        if (eq)
            v = eq + 1;
        else if (a + 1 < argc)
            v = argv[++a];
        else
            return log_einval(err, errlen, "option '--%s' needs a value", o->flag);
        char src[40];
        snprintf(src, sizeof(src), "--%s", o->flag);
        int r = apply(c, o, v, src, err, errlen);
        if (r)
            return r;
    }
    if (!c->catalog_url.host[0] != !c->inventory_url.host[0])
        return log_einval(err, errlen,
                    "--catalog-url and --inventory-url go together: /api/products needs both (%s is unset)",
                    c->catalog_url.host[0] ? "--inventory-url" : "--catalog-url");
    return CONFIG_OK;
}

void config_worker_opts(const struct config *cfg, unsigned listening, struct worker_opts *o)
{
    *o = (struct worker_opts){
        .io = cfg->io,
        .io_tune = (cfg->uring_poll_first ? IO_TUNE_POLL_FIRST : 0) | (cfg->uring_single_send ? IO_TUNE_SINGLE_SEND : 0) |
                   (cfg->uring_provided ? 0 : IO_TUNE_OWN_BUFFERS),
        /* a receive and a send per upstream connection */
        .app_ops = 2 * UPSTREAM_MAX * cfg->upstream_conns,
        .max_open = (cfg->max_conns + listening - 1) / listening,
        .lim = {.max_header = cfg->max_header, .max_url = cfg->max_url, .max_body = cfg->max_body,
                .header_timeout_ms = cfg->header_timeout_ms, .idle_timeout_ms = cfg->idle_timeout_ms},
        .dispatch = cfg->dispatch,
        .queue_max = cfg->queue_max,
        .split = cfg->prime_split,
        .shared_listener = cfg->shared_listener,
    };
}
