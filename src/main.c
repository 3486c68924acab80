/* main.c - flags and environment into struct config; then server_run().
 *
 * Exit status: 0 after a clean drain, 1 when the server cannot start or the
 * drain times out, 2 for a bad flag or environment value.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "build_info.h"
#include "config.h"
#include "log.h"
#include "process.h"

/* What --version adds where no vector engine is built: other architectures
 * (arm64) run the scalar one (docs/prime.md). */
#if defined(__x86_64__)
#define VECTOR_NOTE ""
#else
#define VECTOR_NOTE "; no vector engine for this architecture"
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
        static const char *const lanes[PRIME_VECTOR_N] = {"one test at a time", "four lanes", "eight lanes",
                                                          "eight lanes"};
        char has[64] = "";
        for (int v = PRIME_VECTOR_N; v-- > 0;) /* the best first */
            if (prime_vector_has((enum prime_vector)v))
                snprintf(has + strlen(has), sizeof(has) - strlen(has), "%s%s", *has ? " " : "",
                         prime_vector_name((enum prime_vector)v));
        enum prime_vector v = config_vector(&cfg);
        printf("primed %s\nprofile: %s\ndispatch: %s (built: %s)\nprime engine: %s\n"
               "prime vector: %s, %s (this CPU runs: %s%s)\ncompiler: %s\nbuild: %s\nflags: %s\n",
               PRIMED_VERSION, PRIMED_PROFILE, config_dispatch_name(cfg.dispatch), PRIMED_DISPATCH_BUILT,
               prime_engine_name(cfg.engine), prime_vector_name(v), lanes[v], has, VECTOR_NOTE, PRIMED_CC, PRIMED_BUILD,
               PRIMED_FLAGS);
        return 0;
    }
    if (r < 0) {
        log_msg("%s", err);
        return 2;
    }
    return server_run(&cfg);
}
