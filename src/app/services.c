/* services.c - the services table (services.h), indexed by enum service_id. */
#include "services.h"

#define X_MODULE(id, module) [id] = &module,
const struct app_service *const app_services[SERVICE__COUNT] = {SERVICES(X_MODULE)};
#undef X_MODULE
