/* test_services.c - the services table (src/app/services.h, services.c):
 * every row a module with a name at its id, in the order of the services'
 * dependencies; and through the app's hooks (tests/lib/route_fixture.c), a
 * service that is not configured leaves the request path nothing to do
 * (no span function, no gate), while one that is sets its hook and its
 * state.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "fault_delay.h"
#include "route_fixture.h"
#include "services.h"
#include "spans.h"
#include "upstreams.h"

Test(services, each_row_is_its_module_at_its_id)
{
#define X_CHECK(id, module)                                                               \
    cr_assert_eq(app_services[id], &module, "row %s is not at its id", #id);              \
    cr_assert(module.name && module.name[0], "%s has no name (a failed set-up says it)", #id);
    SERVICES(X_CHECK)
#undef X_CHECK
    for (int i = 0; i < SERVICE__COUNT; i++)
        for (int j = i + 1; j < SERVICE__COUNT; j++)
            cr_assert(strcmp(app_services[i]->name, app_services[j]->name) != 0, "two services named %s",
                      app_services[i]->name);
}

/* A service may use those above it: the hooks run in the table's order. */
Test(services, rows_in_the_order_of_their_dependencies)
{
    cr_assert_lt(SERVICE_STORE, SERVICE_CATALOG, "the store opens before the catalog loads; its run writes it before the catalog renders");
    cr_assert_lt(SERVICE_STORE, SERVICE_EVENTS, "events commit into the store");
    cr_assert_lt(SERVICE_UPSTREAMS, SERVICE_SPANS, "the exporter adds its pool to the upstream client");
    cr_assert_lt(SERVICE_UPSTREAMS, SERVICE_GATEWAY, "the gateway adds its pools to the upstream client");
}

Test(services, nothing_configured_leaves_the_request_path_alone, .fini = route_fixture_stop)
{
    route_fixture_init();
    route_fixture_start();
    cr_assert_null(F.aw->span, "no --zipkin-url: no span function");
    cr_assert_null(F.aw->gate, "no --fault-*: no gate");
    cr_assert_null(F.aw->service[SERVICE_SPANS]);
    cr_assert_null(F.aw->service[SERVICE_FAULT_DELAY]);
    cr_assert_null(F.aw->service[SERVICE_GATEWAY]);
    cr_assert_not_null(F.aw->service[SERVICE_UPSTREAMS], "the client is there, with no pool");
    cr_assert_eq(upstreams_of(F.aw)->client.nups, 0);
    cr_assert_eq(upstreams_of(F.aw)->callme, -1);
}

Test(services, a_configured_service_sets_its_hook, .fini = route_fixture_stop)
{
    route_fixture_init();
    F.cfg.fault_delay_ms = 100;
    F.cfg.fault_delay_pct = 50;
    route_fixture_start();
    cr_assert_not_null(F.aw->gate, "the fault delay takes requests before they are served");
    cr_assert_eq(F.aw->gate_ctx, F.aw->service[SERVICE_FAULT_DELAY]);
    cr_assert_str_eq(F.aw->gate_path, F.cfg.fault_path);
    cr_assert_null(F.aw->span);
}
