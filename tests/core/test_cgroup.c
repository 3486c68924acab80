/* test_cgroup.c - CPU quota discovery over cgroup trees built in a temp dir:
 * v2, v1 (what podman --cpus gives on a v1 host), hybrid, nested limits, and
 * the container view where the listed path is not mounted. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup.h"

static char root[256];

static void put(const char *rel, const char *content)
{
    char path[512], dir[512];
    snprintf(path, sizeof(path), "%s/%s", root, rel);
    snprintf(dir, sizeof(dir), "%s", path);
    for (char *p = dir + strlen(root) + 1; (p = strchr(p, '/')); p++) {
        *p = '\0';
        mkdir(dir, 0755);
        *p = '/';
    }
    FILE *f = fopen(path, "w");
    cr_assert(f, "cannot write %s", path);
    fputs(content, f);
    fclose(f);
}

static unsigned quota(void)
{
    char pc[300], sys[300];
    snprintf(pc, sizeof(pc), "%s/proc_cgroup", root);
    snprintf(sys, sizeof(sys), "%s/sys", root);
    return cgroup_quota_cpus(pc, sys);
}

static void setup(void)
{
    snprintf(root, sizeof(root), "/tmp/primed-cgroup-XXXXXX");
    cr_assert(mkdtemp(root));
}

static void teardown(void)
{
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(cgroup, .init = setup, .fini = teardown);

Test(cgroup, v2_cpu_max)
{
    put("proc_cgroup", "0::/kubepods/pod1/c1\n");
    put("sys/kubepods/pod1/c1/cpu.max", "150000 100000\n");
    cr_assert_eq(quota(), 2); /* 1.5 CPUs, rounded up */
}

Test(cgroup, v2_max_is_no_quota)
{
    put("proc_cgroup", "0::/a\n");
    put("sys/a/cpu.max", "max 100000\n");
    cr_assert_eq(quota(), 0);
}

Test(cgroup, v2_tightest_ancestor_wins)
{
    put("proc_cgroup", "0::/a/b\n");
    put("sys/a/b/cpu.max", "400000 100000\n");
    put("sys/a/cpu.max", "100000 100000\n");
    cr_assert_eq(quota(), 1);
}

/* podman run --cpus=1 on a cgroup v1 host: 100000/100000 */
Test(cgroup, v1_cfs_quota)
{
    put("proc_cgroup", "9:pids:/x\n4:cpu,cpuacct:/libpod_parent/libpod-1\n0::/\n");
    put("sys/cpu,cpuacct/libpod_parent/libpod-1/cpu.cfs_quota_us", "100000\n");
    put("sys/cpu,cpuacct/libpod_parent/libpod-1/cpu.cfs_period_us", "100000\n");
    cr_assert_eq(quota(), 1);
}

Test(cgroup, v1_minus_one_is_no_quota)
{
    put("proc_cgroup", "1:cpu:/\n0::/\n");
    put("sys/cpu/cpu.cfs_quota_us", "-1\n");
    put("sys/cpu/cpu.cfs_period_us", "100000\n");
    cr_assert_eq(quota(), 0);
}

/* Inside a v1 container without a cgroup namespace: the listed path is the
 * host's, but the container's own cgroup is mounted at the root. */
Test(cgroup, v1_container_view_at_the_mount_root)
{
    put("proc_cgroup", "3:cpuacct:/libpod_parent/libpod-1\n2:cpu:/libpod_parent/libpod-1\n0::/\n");
    put("sys/cpu/cpu.cfs_quota_us", "250000\n");
    put("sys/cpu/cpu.cfs_period_us", "100000\n");
    cr_assert_eq(quota(), 3);
}

/* Hybrid host: v1 cpu controller and v2 at sys/unified; the tighter binds. */
Test(cgroup, hybrid_takes_the_tighter)
{
    put("proc_cgroup", "2:cpu:/a\n0::/a\n");
    put("sys/cpu/a/cpu.cfs_quota_us", "300000\n");
    put("sys/cpu/a/cpu.cfs_period_us", "100000\n");
    put("sys/unified/a/cpu.max", "200000 100000\n");
    cr_assert_eq(quota(), 2);
}

Test(cgroup, nothing_readable_is_no_quota)
{
    put("proc_cgroup", "garbage\n5:memory:/m\n");
    cr_assert_eq(quota(), 0);
    teardown();
    setup(); /* no proc_cgroup at all */
    cr_assert_eq(quota(), 0);
}
