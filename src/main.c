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
               "prime vector: %s (this CPU %s AVX-512 IFMA)\ncompiler: %s\nbuild: %s\nflags: %s\n",
               PRIMED_VERSION, PRIMED_PROFILE, config_dispatch_name(cfg.dispatch), PRIMED_DISPATCH_BUILT,
               prime_engine_name(cfg.engine), config_vector_on(&cfg) ? "on, eight lanes" : "off, scalar",
               prime_vector_supported() ? "has" : "lacks", PRIMED_CC, PRIMED_BUILD, PRIMED_FLAGS);
        return 0;
    }
    if (r < 0) {
        log_msg("%s", err);
        return 2;
    }
    return server_run(&cfg);
}
