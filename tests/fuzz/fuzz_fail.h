/* fuzz_fail.h - FAIL(fmt, ...) for the client-side fuzz targets: the message,
 * prefixed with FUZZ_NAME (defined before the include), then abort(), so
 * libFuzzer saves the input. */
#ifndef PRIMED_FUZZ_FAIL_H
#define PRIMED_FUZZ_FAIL_H

#include <stdio.h>
#include <stdlib.h>

#define FAIL(...)                                    \
    do {                                             \
        fprintf(stderr, FUZZ_NAME ": " __VA_ARGS__); \
        fputc('\n', stderr);                         \
        abort();                                     \
    } while (0)

#endif
