/* main.c - flags and environment into struct config; then server_run().
 *
 * Exit status: 0 after a clean drain, 1 when the server cannot start or the
 * drain times out, 2 for a bad flag or environment value.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "build_info.h"
#include "config.h"
#include "log.h"
#include "server.h"

/* What --version says of the CPU's vector unit: the eight-lane engine needs AVX-512 IFMA; other
 * architectures (arm64) have no vector engine and run the scalar one (docs/prime.md). */
#if defined(__x86_64__)
#define VECTOR_CPU(has) ((has) ? "this CPU has AVX-512 IFMA" : "this CPU lacks AVX-512 IFMA")
#else
#define VECTOR_CPU(has) ((void)(has), "no vector engine for this architecture")
#endif

static const char *env(const char *name)
{
    return getenv(name);
}

int main(int argc, char **argv)
{
    static struct config cfg;
    char err[256];
    config_defaults(&cfg);
    int r = config_parse(&cfg, argc, argv, env, err, sizeof(err));
    if (r == CONFIG_HELP) {
        config_usage(STDOUT_FILENO);
        return 0;
    }
    if (r == CONFIG_HELP_MARKDOWN) {
        config_usage_markdown(STDOUT_FILENO);
        return 0;
    }
    if (r == CONFIG_VERSION) {
        printf("primed %s\nprofile: %s\ndispatch: %s (built: %s)\nprime engine: %s\n"
               "prime vector: %s (%s)\ncompiler: %s\nbuild: %s\nflags: %s\n",
               PRIMED_VERSION, PRIMED_PROFILE, config_dispatch_name(cfg.dispatch), PRIMED_DISPATCH_BUILT,
               prime_engine_name(cfg.engine), config_vector_on(&cfg) ? "on, eight lanes" : "off, scalar",
               VECTOR_CPU(prime_vector_supported()), PRIMED_CC, PRIMED_BUILD, PRIMED_FLAGS);
        return 0;
    }
    if (r < 0) {
        log_msg("%s", err);
        return 2;
    }
    return server_run(&cfg);
}
