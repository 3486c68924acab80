/* profiles/cross/qemu-exec.c - preloaded into the arm64 test programs that qemu-user runs on an
 * x86-64 machine without binfmt_misc (a container, CI): an exec of an aarch64 program becomes an
 * exec of qemu-aarch64-static running it, in the same process (same pid).
 *
 * Why: Criterion runs each test in a sandbox that BoxFort makes by fork() and then
 * execl() of the test binary itself; without binfmt_misc the kernel refuses to exec an aarch64
 * file (ENOEXEC) and every test fails with "Could not spawn test instance". Registering binfmt_misc
 * needs privileges and changes the whole machine, which a build must not do.
 *
 * Loaded through QEMU_SET_ENV=LD_PRELOAD=... (the cross file's exe_wrapper), so that only the
 * guest sees LD_PRELOAD; it drops LD_PRELOAD from the environment once loaded, so host programs
 * the tests start (system("rm ...") runs the machine's /bin/sh) never see it. The new qemu reads
 * QEMU_SET_ENV and QEMU_LD_PREFIX, which stay in the environment, and loads this file again.
 * Programs that are not aarch64 ELF files (scripts, host programs) are exec'd unchanged. Built by
 * profiles/arm64-sysroot into the sysroot; never part of primed.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EM_AARCH64_ 183
#define QEMU_DEFAULT "/usr/bin/qemu-aarch64-static"
#define ARGS_MAX 256

extern char **environ;
typedef int execve_fn(const char *, char *const[], char *const[]);

__attribute__((constructor)) static void drop_preload(void)
{
    unsetenv("LD_PRELOAD");
}

static int is_aarch64_elf(const char *path)
{
    unsigned char h[20];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, h, sizeof(h));
    close(fd);
    return n == (ssize_t)sizeof(h) && memcmp(h, "\177ELF", 4) == 0 && (h[18] | h[19] << 8) == EM_AARCH64_;
}

/* execve(path, argv, envp), through qemu where path is an aarch64 program:
 * qemu -0 argv[0] path argv[1...]. Returns -1 with errno, as execve. */
int execve(const char *path, char *const argv[], char *const envp[])
{
    execve_fn *real = (execve_fn *)dlsym(RTLD_NEXT, "execve");
    if (!real) {
        errno = ENOSYS;
        return -1;
    }
    if (!is_aarch64_elf(path))
        return real(path, argv, envp);
    const char *qemu = getenv("PRIMED_QEMU");
    char *args[ARGS_MAX + 4];
    unsigned n = 0;
    args[n++] = (char *)(qemu && *qemu ? qemu : QEMU_DEFAULT);
    args[n++] = "-0";
    args[n++] = argv[0] ? argv[0] : (char *)path;
    args[n++] = (char *)path;
    for (unsigned i = 1; argv[0] && argv[i]; i++) {
        if (n == ARGS_MAX + 3) {
            errno = E2BIG;
            return -1;
        }
        args[n++] = argv[i];
    }
    args[n] = NULL;
    real(args[0], args, envp);
    return real(path, argv, envp); /* no qemu: the kernel's own answer (ENOEXEC) */
}

int execv(const char *path, char *const argv[])
{
    return execve(path, argv, environ);
}

/* execvp with a path (BoxFort and the tests exec by path); a bare name keeps its PATH search. */
int execvp(const char *file, char *const argv[])
{
    if (strchr(file, '/'))
        return execve(file, argv, environ);
    int (*real)(const char *, char *const[]) = (int (*)(const char *, char *const[]))dlsym(RTLD_NEXT, "execvp");
    if (!real) {
        errno = ENOSYS;
        return -1;
    }
    return real(file, argv);
}

int execl(const char *path, const char *arg, ...)
{
    char *argv[ARGS_MAX + 1];
    unsigned n = 0;
    va_list ap;
    va_start(ap, arg);
    for (const char *a = arg; a; a = va_arg(ap, const char *)) {
        if (n == ARGS_MAX) {
            va_end(ap);
            errno = E2BIG;
            return -1;
        }
        argv[n++] = (char *)a;
    }
    va_end(ap);
    argv[n] = NULL;
    return execve(path, argv, environ);
}
