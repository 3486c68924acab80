/* metrics.c - merge and Prometheus text exposition (format 0.0.4).
 *
 * Nothing here runs on the request path except stats_observe(). The
 * exposition is written into one caller-provided buffer; process metrics come
 * from /proc/self at scrape time.
 */
#include "metrics.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>

static const double bounds[STATS_NBUCKETS] = {STATS_BUCKETS_S};

#define X_CODE(code, text) code,
static const int codes[STATUS_IDX__COUNT] = {HTTP_STATUSES(X_CODE)};
#undef X_CODE

int metrics_status_index(int status)
{
    for (int i = 0; i < STATUS_IDX__COUNT; i++)
        if (codes[i] == status)
            return i;
    return -1;
}

static uint64_t ld(mcounter *c)
{
    return atomic_load_explicit(c, memory_order_relaxed);
}

static void merge_histo(struct histo *h, uint64_t *cum, uint64_t *sum, uint64_t *count)
{
    for (int b = 0; b <= STATS_NBUCKETS; b++)
        cum[b] += ld(&h->bucket[b]);
    *sum += ld(&h->sum_ns);
    *count += ld(&h->count);
}

void metrics_histo_add(struct metrics_histo *v, struct histo *h)
{
    merge_histo(h, v->cum, &v->sum_ns, &v->count);
}

void metrics_histo_end(struct metrics_histo *v)
{
    for (int b = 1; b <= STATS_NBUCKETS; b++)
        v->cum[b] += v->cum[b - 1];
    v->count = v->cum[STATS_NBUCKETS];
}

void metrics_merge(struct metrics *const *ms, unsigned n, struct metrics_view *v)
{
    memset(v, 0, sizeof(*v));
    for (unsigned w = 0; w < n; w++) {
        struct metrics *m = ms[w];
        for (int r = 0; r < ROUTE__COUNT; r++) {
            for (int s = 0; s < STATUS_IDX__COUNT; s++)
                v->requests[r][s] += ld(&m->requests[r][s]);
            merge_histo(&m->req_seconds[r], v->req_bucket[r], &v->req_sum_ns[r], &v->req_count[r]);
        }
        merge_histo(&m->dispatch.job_seconds, v->prime_bucket, &v->prime_sum_ns, &v->prime_count);
        for (int b = 0; b < BAD__COUNT; b++)
            v->bad[b] += ld(&m->conn.bad[b]);
        v->steals += ld(&m->dispatch.steals);
        v->pieces_helped += ld(&m->dispatch.pieces_helped);
        v->accepts += ld(&m->conn.accepts);
        v->conns_open += atomic_load_explicit(&m->conn.conns_open, memory_order_relaxed);
        v->in_flight += atomic_load_explicit(&m->conn.in_flight, memory_order_relaxed);
    }
    /* Buckets were summed per bucket; make them cumulative. The +Inf bucket
     * then equals the count of the same snapshot, by construction. */
    for (int r = 0; r < ROUTE__COUNT; r++) {
        for (int b = 1; b <= STATS_NBUCKETS; b++)
            v->req_bucket[r][b] += v->req_bucket[r][b - 1];
        v->req_count[r] = v->req_bucket[r][STATS_NBUCKETS];
    }
    for (int b = 1; b <= STATS_NBUCKETS; b++)
        v->prime_bucket[b] += v->prime_bucket[b - 1];
    v->prime_count = v->prime_bucket[STATS_NBUCKETS];
}

size_t metrics_escape(char *out, size_t cap, const char *s)
{
    size_t n = 0;
    if (cap == 0)
        return 0;
    for (; s && *s && n + 2 < cap; s++) {
        if (*s == '\\' || *s == '"') {
            out[n++] = '\\';
            out[n++] = *s;
        } else if (*s == '\n') {
            out[n++] = '\\';
            out[n++] = 'n';
        } else {
            out[n++] = *s;
        }
    }
    out[n] = '\0';
    return n;
}

void metrics_put(struct metrics_out *o, const char *fmt, ...)
{
    if (o->overflow)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(o->buf + o->len, o->cap - o->len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= o->cap - o->len) {
        o->overflow = 1;
        return;
    }
    o->len += (size_t)n;
}

void metrics_put_histo(struct metrics_out *o, const char *name, const char *labels, const uint64_t *cum, uint64_t sum_ns,
                      uint64_t count)
{
    const char *sep = labels[0] ? "," : "";
    for (int b = 0; b < STATS_NBUCKETS; b++)
        metrics_put(o, "%s_bucket{%s%sle=\"%g\"} %" PRIu64 "\n", name, labels, sep, bounds[b], cum[b]);
    metrics_put(o, "%s_bucket{%s%sle=\"+Inf\"} %" PRIu64 "\n", name, labels, sep, cum[STATS_NBUCKETS]);
    if (labels[0]) {
        metrics_put(o, "%s_sum{%s} %.9f\n", name, labels, (double)sum_ns / 1e9);
        metrics_put(o, "%s_count{%s} %" PRIu64 "\n", name, labels, count);
    } else {
        metrics_put(o, "%s_sum %.9f\n", name, (double)sum_ns / 1e9);
        metrics_put(o, "%s_count %" PRIu64 "\n", name, count);
    }
}

/* Reads up to n space-separated fields of a /proc stat line into v (a field that is not a
 * number, like the state letter, reads as 0); returns how many there were. strtoul rather
 * than sscanf: the static build then links no scanf machinery (tens of KiB of libc). */
static int stat_fields(const char *s, unsigned long *v, int n)
{
    int i = 0;
    for (; i < n; i++) {
        while (*s == ' ')
            s++;
        if (!*s || *s == '\n')
            break;
        char *end;
        v[i] = strtoul(s, &end, 10);
        if (end == s)
            for (v[i] = 0; *end && *end != ' ' && *end != '\n'; end++)
                ;
        s = end;
    }
    return i;
}

static void put_process(struct metrics_out *o, const struct metrics_info *info)
{
    long tck = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
    unsigned long utime = 0, stime = 0, vsize = 0;
    long rss = 0, threads = 0;
    FILE *f = fopen("/proc/self/stat", "re");
    if (f) {
        char line[1024];
        if (fgets(line, sizeof(line), f)) {
            /* fields after the ")" that ends comm: state is field 3 */
            char *p = strrchr(line, ')');
            unsigned long v[22];
            if (p && stat_fields(p + 1, v, 22) == 22) {
                utime = v[11], stime = v[12], vsize = v[20];
                threads = (long)v[17], rss = (long)v[21];
            }
        }
        fclose(f);
    }
    long fds = 0;
    DIR *d = opendir("/proc/self/fd");
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)))
            if (e->d_name[0] != '.')
                fds++;
        closedir(d);
        fds--; /* the directory's own fd */
    }
    struct rlimit rl = {0, 0};
    getrlimit(RLIMIT_NOFILE, &rl);

    metrics_put(o,
        "# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.\n"
        "# TYPE process_cpu_seconds_total counter\n"
        "process_cpu_seconds_total %.2f\n",
        tck > 0 ? (double)(utime + stime) / (double)tck : 0.0);
    metrics_put(o,
        "# HELP process_resident_memory_bytes Resident memory size in bytes.\n"
        "# TYPE process_resident_memory_bytes gauge\n"
        "process_resident_memory_bytes %ld\n",
        rss * page);
    metrics_put(o,
        "# HELP process_virtual_memory_bytes Virtual memory size in bytes.\n"
        "# TYPE process_virtual_memory_bytes gauge\n"
        "process_virtual_memory_bytes %lu\n",
        vsize);
    metrics_put(o,
        "# HELP process_open_fds Number of open file descriptors.\n"
        "# TYPE process_open_fds gauge\n"
        "process_open_fds %ld\n",
        fds);
    metrics_put(o,
        "# HELP process_max_fds Maximum number of open file descriptors.\n"
        "# TYPE process_max_fds gauge\n"
        "process_max_fds %llu\n",
        (unsigned long long)rl.rlim_cur);
    metrics_put(o,
        "# HELP process_start_time_seconds Start time of the process since unix epoch in seconds.\n"
        "# TYPE process_start_time_seconds gauge\n"
        "process_start_time_seconds %.3f\n",
        info->start_time);
    metrics_put(o,
        "# HELP process_threads Number of OS threads in the process.\n"
        "# TYPE process_threads gauge\n"
        "process_threads %ld\n",
        threads);
}

int metrics_render(const struct metrics_view *v, const struct metrics_info *info, char *buf, size_t cap)
{
    struct metrics_out o = {buf, cap, 0, 0};
    char e[6][128];
    metrics_escape(e[0], sizeof(e[0]), info->version);
    metrics_escape(e[1], sizeof(e[1]), info->profile);
    metrics_escape(e[2], sizeof(e[2]), info->dispatch);
    metrics_escape(e[3], sizeof(e[3]), info->cc);
    metrics_escape(e[4], sizeof(e[4]), info->engine);
    metrics_escape(e[5], sizeof(e[5]), info->io);
    metrics_put(&o,
        "# HELP primed_build_info Build and run-time choices of this process.\n"
        "# TYPE primed_build_info gauge\n"
        "primed_build_info{version=\"%s\",profile=\"%s\",dispatch=\"%s\",cc=\"%s\",engine=\"%s\",io=\"%s\"} 1\n",
        e[0], e[1], e[2], e[3], e[4], e[5]);

    metrics_put(&o, "# HELP primed_http_requests_total HTTP requests answered, by path and status code.\n"
            "# TYPE primed_http_requests_total counter\n");
    for (int r = 0; r < ROUTE__COUNT; r++)
        for (int s = 0; s < STATUS_IDX__COUNT; s++)
            if (v->requests[r][s])
                metrics_put(&o, "primed_http_requests_total{path=\"%s\",code=\"%d\"} %" PRIu64 "\n",
                    route_name((enum route_id)r), codes[s], v->requests[r][s]);

    metrics_put(&o, "# HELP primed_http_request_duration_seconds Time from a request's head being parsed to its response being "
            "queued.\n"
            "# TYPE primed_http_request_duration_seconds histogram\n");
    for (int r = 0; r < ROUTE__COUNT; r++) {
        char labels[64];
        snprintf(labels, sizeof(labels), "path=\"%s\"", route_name((enum route_id)r));
        metrics_put_histo(&o, "primed_http_request_duration_seconds", labels, v->req_bucket[r], v->req_sum_ns[r],
                  v->req_count[r]);
    }

    metrics_put(&o, "# HELP primed_prime_duration_seconds CPU time of one prime generation on the thread that ran it (split: without the helpers' share).\n"
            "# TYPE primed_prime_duration_seconds histogram\n");
    metrics_put_histo(&o, "primed_prime_duration_seconds", "", v->prime_bucket, v->prime_sum_ns, v->prime_count);

    metrics_put(&o, "# HELP primed_bad_requests_total Requests refused before routing, by reason.\n"
            "# TYPE primed_bad_requests_total counter\n");
    for (int b = 1; b < BAD__COUNT; b++)
        metrics_put(&o, "primed_bad_requests_total{reason=\"%s\"} %" PRIu64 "\n", http_bad_reason_name((enum bad_reason)b),
            v->bad[b]);

    metrics_put(&o,
        "# HELP primed_connections_open Open client connections.\n"
        "# TYPE primed_connections_open gauge\n"
        "primed_connections_open %" PRId64 "\n",
        v->conns_open);
    metrics_put(&o,
        "# HELP primed_connections_accepted_total Client connections accepted.\n"
        "# TYPE primed_connections_accepted_total counter\n"
        "primed_connections_accepted_total %" PRIu64 "\n",
        v->accepts);
    metrics_put(&o,
        "# HELP primed_requests_in_flight Requests parsed and not yet answered.\n"
        "# TYPE primed_requests_in_flight gauge\n"
        "primed_requests_in_flight %" PRId64 "\n",
        v->in_flight);
    /* In both dispatch modes (0 under inline), so that a dashboard's queries
     * return data whichever mode a pod runs. */
    metrics_put(&o,
        "# HELP primed_queue_depth /example tasks queued on the work-stealing deques (0: inline dispatch).\n"
        "# TYPE primed_queue_depth gauge\n"
        "primed_queue_depth %" PRId64 "\n",
        info->queue_depth < 0 ? 0 : info->queue_depth);
    metrics_put(&o,
        "# HELP primed_steals_total Tasks run by a worker other than the one that queued them (0: inline dispatch).\n"
        "# TYPE primed_steals_total counter\n"
        "primed_steals_total %" PRIu64 "\n",
        v->steals);
    metrics_put(&o,
        "# HELP primed_prime_pieces_helped_total Parts of one worker's prime search (sieve chunks, test pieces) taken "
        "by an idle worker "
        "(--prime-split; 0: inline dispatch).\n"
        "# TYPE primed_prime_pieces_helped_total counter\n"
        "primed_prime_pieces_helped_total %" PRIu64 "\n",
        v->pieces_helped);
    if (info->services)
        info->services(info->services_ctx, &o);
    put_process(&o, info);
    if (o.overflow)
        return -ENOSPC;
    return (int)o.len;
}

int metrics_scrape(struct metrics *const *ms, unsigned n, const struct metrics_info *info, char **out)
{
    struct metrics_view *v = malloc(sizeof(*v)); /* cold: one scrape */
    if (!v)
        return -ENOMEM;
    metrics_merge(ms, n, v);
    /* 64 KiB holds a scrape of every series today; should the series outgrow
     * it, the render is redone in twice the room rather than failing the scrape */
    size_t cap = 64 * 1024;
    char *buf = NULL;
    int len = -ENOSPC;
    while (len == -ENOSPC && cap <= 1024 * 1024) {
        free(buf);
        buf = malloc(cap);
        len = buf ? metrics_render(v, info, buf, cap) : -ENOMEM;
        cap *= 2;
    }
    free(v);
    if (len < 0) {
        free(buf);
        return len;
    }
    *out = buf;
    return len;
}
