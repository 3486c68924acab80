/* cgroup.h - the CPU quota a process runs under, from cgroup v2 (cpu.max) and
 * cgroup v1 (cpu.cfs_quota_us / cpu.cfs_period_us), as the JVM's container
 * support reads it.
 */
#ifndef PRIMED_CGROUP_H
#define PRIMED_CGROUP_H

/* The tightest CPU quota over the process's cgroup and its ancestors, in CPUs
 * rounded up (at least 1), or 0 when there is none. proc_cgroup is the
 * process's cgroup list (/proc/self/cgroup), root where the hierarchies are
 * mounted (/sys/fs/cgroup; v1 controllers under root/cpu,cpuacct or root/cpu).
 * Both are parameters so that tests can point them at a tree of their own. */
unsigned cgroup_quota_cpus(const char *proc_cgroup, const char *root);

#endif
