/* catalog_service.h - the catalog as a service (services.h): the products
 * (catalog.h) loaded at start-up, the built-in set or --catalog's, handed to
 * the event store (which writes them into its tables) and rendered once.
 *
 * owns: the process's catalog. never: its parsing or its answers
 * (catalog.h), the routes that serve it (routes/plain.c).
 */
#ifndef PRIMED_CATALOG_SERVICE_H
#define PRIMED_CATALOG_SERVICE_H

#include "app.h"
#include "catalog.h"

/* The process's products, or NULL (none loaded: 404). */
static inline const struct catalog *catalog_of(const struct app *a)
{
    return a->service[SERVICE_CATALOG];
}

#endif
