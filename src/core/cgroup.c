/* cgroup.c - CPU quota discovery (cgroup.h). Reads a few small files at
 * start-up; never fails: what it cannot read is "no quota".
 *
 * A path in /proc/self/cgroup is the host's view; inside a container without a
 * cgroup namespace (cgroup v1 under podman or Docker) the container's own
 * cgroup is mounted at the hierarchy's root instead. Walking from the listed
 * path up to the root finds the quota in both cases, and the tightest one
 * along the way is the one that binds.
 */
#define _GNU_SOURCE
#include "cgroup.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* CPUs of quota/period, rounded up, at least 1. */
static unsigned cpus_of(long long quota, long long period)
{
    if (quota <= 0 || period <= 0)
        return 0;
    long long n = (quota + period - 1) / period;
    return n < 1 ? 1 : (unsigned)n;
}

static unsigned tighter(unsigned best, unsigned n)
{
    return n && (!best || n < best) ? n : best;
}

static unsigned v2_quota(const char *dir)
{
    char file[2300];
    snprintf(file, sizeof(file), "%s/cpu.max", dir);
    FILE *f = fopen(file, "re");
    if (!f)
        return 0;
    unsigned n = 0;
    char line[80], *end;
    if (fgets(line, sizeof(line), f) && strncmp(line, "max", 3) != 0) {
        long long quota = strtoll(line, &end, 10);
        if (end != line && *end == ' ')
            n = cpus_of(quota, strtoll(end + 1, NULL, 10));
    }
    fclose(f);
    return n;
}

static long long read_ll(const char *dir, const char *name)
{
    char file[2300];
    snprintf(file, sizeof(file), "%s/%s", dir, name);
    FILE *f = fopen(file, "re");
    if (!f)
        return -1;
    char line[40], *end;
    long long v = -1;
    if (fgets(line, sizeof(line), f)) {
        v = strtoll(line, &end, 10);
        if (end == line)
            v = -1;
    }
    fclose(f);
    return v;
}

static unsigned v1_quota(const char *dir)
{
    return cpus_of(read_ll(dir, "cpu.cfs_quota_us"), read_ll(dir, "cpu.cfs_period_us")); /* -1: none */
}

/* Applies quota() to mount + path and each of its ancestors up to mount. */
static unsigned walk(const char *mount, const char *path, unsigned (*quota)(const char *))
{
    char p[1024], dir[2200];
    snprintf(p, sizeof(p), "%s", path);
    unsigned best = 0;
    for (;;) {
        snprintf(dir, sizeof(dir), "%s%s", mount, strcmp(p, "/") == 0 ? "" : p);
        best = tighter(best, quota(dir));
        char *slash = strrchr(p, '/');
        if (!slash || strcmp(p, "/") == 0)
            break;
        if (slash == p)
            strcpy(p, "/");
        else
            *slash = '\0';
    }
    return best;
}

/* Whether a v1 controller list ("cpu,cpuacct") names cpu. */
static bool has_cpu(const char *list)
{
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", list);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
        if (strcmp(t, "cpu") == 0)
            return true;
    return false;
}

unsigned cgroup_quota_cpus(const char *proc_cgroup, const char *root)
{
    FILE *f = fopen(proc_cgroup, "re");
    if (!f)
        return 0;
    unsigned best = 0;
    char line[1200];
    while (fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\n")] = '\0';
        /* "ID:CONTROLLERS:PATH"; v2 is "0::PATH" */
        char *c1 = strchr(line, ':');
        char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2 || c2[1] != '/')
            continue;
        *c1 = *c2 = '\0';
        const char *controllers = c1 + 1, *path = c2 + 1;
        char mount[1100];
        if (strcmp(line, "0") == 0 && !*controllers) {
            snprintf(mount, sizeof(mount), "%s", root);
            best = tighter(best, walk(mount, path, v2_quota));
            /* hybrid hosts mount v2 at root/unified */
            snprintf(mount, sizeof(mount), "%s/unified", root);
            best = tighter(best, walk(mount, path, v2_quota));
        } else if (has_cpu(controllers)) {
            static const char *const names[] = {"cpu,cpuacct", "cpuacct,cpu", "cpu"};
            for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
                snprintf(mount, sizeof(mount), "%s/%s", root, names[i]);
                best = tighter(best, walk(mount, path, v1_quota));
            }
        }
    }
    fclose(f);
    return best;
}
