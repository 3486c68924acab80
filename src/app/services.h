/* services.h - the services table: what the routes use that lives longer
 * than a request (the event store, the catalog, the events, the upstream
 * client, the span exporter, the gateway's settings, the fault delay), one
 * row a service, beside route.h's table of routes.
 *
 *   X(ID, MODULE)
 *
 *   ID      enum service_id: the index of the service's state in struct
 *           app.service[] (its process state) and struct app_worker.service[]
 *           (its worker state); only the service's own file reads its entry
 *   MODULE  the service's struct app_service (below), in its own file
 *
 * The rows are in the order of their dependencies: a service may use the
 * ones above it (the catalog is written into the store's tables; the events
 * commit into the store; the span exporter and the gateway call through the
 * upstream client). Every hook runs in the table's order; fini too (the
 * upstream client cancels its calls before the exporter and the gateway let
 * go of theirs).
 *
 * Adding a service: its file (its struct app_service and its state), one row
 * here, its line in src/meson.build. app.c and process.c loop over the table
 * and name no service (docs/architecture.md, "Adding a service").
 */
#ifndef PRIMED_SERVICES_H
#define PRIMED_SERVICES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SERVICES(X)                         \
    X(SERVICE_STORE, store_service)         \
    X(SERVICE_CATALOG, catalog_service)     \
    X(SERVICE_EVENTS, events_service)       \
    X(SERVICE_UPSTREAMS, upstreams_service) \
    X(SERVICE_SPANS, spans_service)         \
    X(SERVICE_GATEWAY, gateway_service)     \
    X(SERVICE_FAULT_DELAY, fault_delay_service)

#define X_ENUM(id, module) id,
enum service_id { SERVICES(X_ENUM) SERVICE__COUNT };
#undef X_ENUM

struct app;
struct app_worker;
struct metrics_out;

/* A service's module. Every member may be NULL. */
struct app_service {
    const char *name; /* for the messages of a failed set-up */

    /* The process, on the main thread before the workers start: start in
     * the table's order (a failure is one line on stderr and an exit:
     * die()), then run in the same order once every service has started
     * (the threads a service runs; what needs every start done). stop,
     * after the workers are joined. */
    void (*start)(struct app *a);
    void (*run)(struct app *a);
    void (*stop)(struct app *a);

    /* One worker, on its thread. A service's worker state
     * (app_worker.service[ID]) is one malloc'd block or NULL: fini lets go
     * of what it holds, the block stays until app_free() (another worker's
     * scrape may read its counters until the process ends). init in the table's order, then open in
     * the same order once every init is done (what needs the other
     * services' init: the upstream client opens once every service has
     * added its upstreams). Each returns 0, or -errno with aw->w->init_why
     * set. fini also after a failed init, and must cope with what init
     * did not get to. */
    int (*init)(struct app_worker *aw);
    int (*open)(struct app_worker *aw);
    void (*fini)(struct app_worker *aw);
    /* After each batch of completions; second: once a second. */
    void (*poll)(struct app_worker *aw, bool second);
    /* The earliest of next and the service's next deadline. */
    uint64_t (*next_deadline)(struct app_worker *aw, uint64_t next);
    /* The worker drains (SIGTERM): let go of what only waits. */
    void (*drain)(struct app_worker *aw);
    /* Drained: whether it still has work out (the worker waits for it). */
    bool (*busy)(struct app_worker *aw);

    /* Whether it can serve now (/readyz, any worker): false with why (one
     * line, "\n"-terminated) into why. */
    bool (*ready)(const struct app *a, char *why, size_t cap);
    /* Its series of /metrics, every worker's summed (a scrape: cold). */
    void (*metrics)(const struct app *a, struct metrics_out *o);
    /* Its words of the ready line (" key=value ..."): their length. */
    size_t (*describe)(const struct app *a, char *out, size_t cap);
};

#define X_DECL(id, module) extern const struct app_service module;
SERVICES(X_DECL)
#undef X_DECL

/* The table, indexed by enum service_id. */
extern const struct app_service *const app_services[SERVICE__COUNT];

#define each_service(sv) \
    for (const struct app_service *const *sv = app_services; sv < app_services + SERVICE__COUNT; sv++)

#endif
