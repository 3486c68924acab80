/* catalog_service.c - the catalog service (catalog_service.h). */
#include "catalog_service.h"

#include <stdio.h>
#include <stdlib.h>

#include "config.h"
#include "log.h"

/* The products: the built-in set or --catalog's. */
static void catalog_start(struct app *a)
{
    const struct config *cfg = a->cfg;
    struct catalog *c = calloc(1, sizeof(*c));
    if (!c)
        die(1, "cannot allocate the catalog: out of memory");
    a->service[SERVICE_CATALOG] = c;
    char cerr[300];
    if (cfg->catalog_file[0]) {
        if (catalog_load(c, cfg->catalog_file, cerr, sizeof(cerr)))
            die(2, "--catalog %s", cerr);
    } else {
        catalog_builtin(c);
    }
}

/* After the store's run: what is served is what its tables hold. */
static void catalog_run(struct app *a)
{
    if (catalog_render(a->service[SERVICE_CATALOG]))
        die(1, "cannot render the catalog: out of memory");
}

static void catalog_stop(struct app *a)
{
    catalog_free(a->service[SERVICE_CATALOG]);
    free(a->service[SERVICE_CATALOG]);
    a->service[SERVICE_CATALOG] = NULL;
}

static size_t catalog_describe(const struct app *a, char *out, size_t cap)
{
    const struct catalog *c = catalog_of(a);
    int n = snprintf(out, cap, " catalog=%s products=%u", a->cfg->catalog_file[0] ? a->cfg->catalog_file : "built-in",
                     c->n);
    return n < 0 ? 0 : (size_t)n;
}

const struct app_service catalog_service = {
    .name = "catalog",
    .start = catalog_start,
    .run = catalog_run,
    .stop = catalog_stop,
    .describe = catalog_describe,
};
