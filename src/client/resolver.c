/* resolver.c - upstream names to addresses (resolver.h).
 *
 * getaddrinfo() may block for seconds (a DNS server that does not answer):
 * it runs only here, at start-up or on the resolver thread, never on a
 * worker. The first address of the lookup is used (a Knative cluster-local
 * name is one ClusterIP). A failed lookup keeps the previous address.
 */
#define _GNU_SOURCE
#include "resolver.h"

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <netinet/in.h>

#include "clock.h"

void resolver_init(struct resolver *r)
{
    memset(r, 0, sizeof(*r));
    pthread_mutex_init(&r->mu, NULL);
    clock_cond_init(&r->cv);
}

static void lookup(struct resolver_target *t)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_ADDRCONFIG};
    struct addrinfo *res = NULL;
    char port[8];
    snprintf(port, sizeof(port), "%u", t->url->port);
    int rc = getaddrinfo(t->url->host, port, &hints, &res);
    pthread_mutex_lock(&t->mu);
    t->looked = true;
    if (rc == 0 && res && res->ai_addrlen <= sizeof(t->addr)) {
        memcpy(&t->addr, res->ai_addr, res->ai_addrlen);
        t->len = res->ai_addrlen;
        t->resolved = true;
        t->err[0] = '\0';
    } else {
        snprintf(t->err, sizeof(t->err), "%s", rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc));
    }
    pthread_mutex_unlock(&t->mu);
    if (res)
        freeaddrinfo(res);
}

struct resolver_target *resolver_add(struct resolver *r, const struct url *url)
{
    if (r->n >= RESOLVER_MAX)
        return NULL;
    struct resolver_target *t = &r->targets[r->n++];
    t->url = url;
    pthread_mutex_init(&t->mu, NULL);
    lookup(t);
    return t;
}

struct resolver_target *resolver_add_later(struct resolver *r, const struct url *url)
{
    if (r->n >= RESOLVER_MAX)
        return NULL;
    struct resolver_target *t = &r->targets[r->n++];
    t->url = url;
    pthread_mutex_init(&t->mu, NULL);
    snprintf(t->err, sizeof(t->err), "not looked up yet");
    return t;
}

static void *resolver_main(void *arg)
{
    struct resolver *r = arg;
    uint64_t next[RESOLVER_MAX], last[RESOLVER_MAX];
    uint64_t now = clock_mono_ms();
    for (unsigned i = 0; i < r->n; i++) {
        last[i] = now;
        const struct resolver_target *t = &r->targets[i];
        next[i] = t->resolved ? now + RESOLVER_REFRESH_MS : t->looked ? now + RESOLVER_RETRY_MS : now;
    }
    pthread_mutex_lock(&r->mu);
    while (!r->stop) {
        struct timespec ts = clock_mono_after(200); /* stale marks are polled: a worker never takes this lock */
        pthread_cond_timedwait(&r->cv, &r->mu, &ts);
        if (r->stop)
            break;
        pthread_mutex_unlock(&r->mu);
        now = clock_mono_ms();
        for (unsigned i = 0; i < r->n; i++) {
            struct resolver_target *t = &r->targets[i];
            bool stale = atomic_exchange(&t->stale, false);
            bool due = now >= next[i] || (stale && now >= last[i] + RESOLVER_RETRY_MS);
            if (!due) {
                if (stale)
                    atomic_store(&t->stale, true); /* at most one lookup per RETRY_MS */
                continue;
            }
            lookup(t);
            last[i] = now;
            next[i] = now + (t->err[0] ? RESOLVER_RETRY_MS : RESOLVER_REFRESH_MS);
        }
        pthread_mutex_lock(&r->mu);
    }
    pthread_mutex_unlock(&r->mu);
    return NULL;
}

int resolver_start(struct resolver *r)
{
    if (r->n == 0)
        return 0;
    int rc = pthread_create(&r->thread, NULL, resolver_main, r);
    if (rc)
        return -rc;
    pthread_setname_np(r->thread, "primed-resolve");
    r->running = true;
    return 0;
}

void resolver_fini(struct resolver *r)
{
    if (r->running) {
        pthread_mutex_lock(&r->mu);
        r->stop = true;
        pthread_cond_signal(&r->cv);
        pthread_mutex_unlock(&r->mu);
        pthread_join(r->thread, NULL);
        r->running = false;
    }
    for (unsigned i = 0; i < r->n; i++)
        pthread_mutex_destroy(&r->targets[i].mu);
    pthread_mutex_destroy(&r->mu);
    pthread_cond_destroy(&r->cv);
    r->n = 0;
}

bool resolver_get(struct resolver_target *t, struct sockaddr_storage *out, socklen_t *len)
{
    pthread_mutex_lock(&t->mu);
    bool ok = t->resolved;
    if (ok) {
        memcpy(out, &t->addr, t->len);
        *len = t->len;
    }
    pthread_mutex_unlock(&t->mu);
    return ok;
}

void resolver_why(struct resolver_target *t, char *out, size_t cap)
{
    pthread_mutex_lock(&t->mu);
    snprintf(out, cap, "%s", t->resolved ? "" : t->err);
    pthread_mutex_unlock(&t->mu);
}

void resolver_stale(struct resolver_target *t)
{
    atomic_store(&t->stale, true);
}
