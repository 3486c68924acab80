/* example.c - GET /example: a prime on the worker's dispatch (inline, or a
 * task any worker may run), answered Hello_N when it is done. The prime is
 * the dispatch's work (struct dispatch_work): the core runs it knowing no
 * prime; with the sieve engine and --prime-split a prime is shared with idle
 * workers (prime.h's hunt).
 *
 * A job outlives its request when the client goes away while the job's task
 * is out (a task cannot be recalled once a worker runs it): jobs come from a
 * pool of their own (slots + queue_max, untouched until used), not from the
 * connection's record, so the connection's slot can be reused at once and
 * the late result finds its job, sees it cancelled and frees it.
 *
 * owns: the route's answer (Hello_N, or 500), its worker state (the job
 * pool, the prime state: app_worker.route_state[ROUTE_EXAMPLE]). never: the
 * dispatch's queue or threads (core/dispatch.h), how a prime is found
 * (prime.h).
 */
#include "app.h"

#include <stdlib.h>

#include "config.h"
#include "strout.h"

struct example_job {
    struct dispatch_job job;
    struct example_job *next; /* free list */
    struct app_req *q;        /* its request, or NULL once cancelled */
};

/* One worker's: app_worker.route_state[ROUTE_EXAMPLE]. */
struct example_worker {
    struct app_worker *aw;
    struct prime_state *prime; /* owned: this thread's prime state, the dispatch's work state */
    struct example_job *jobs;  /* owned pool: a job per connection slot and per queued task */
    struct example_job *job_free;
};

static struct example_worker *worker_of(struct app_worker *aw)
{
    return aw->route_state[ROUTE_EXAMPLE];
}

static void job_put(struct example_worker *ew, struct example_job *j)
{
    j->q = NULL;
    j->next = ew->job_free;
    ew->job_free = j;
}

/* bits=N, 64..4096 (its query hook); cfg's --bits when absent. */
static int example_query(const struct config *cfg, const char *q, size_t len, struct route_result *rt)
{
    static const char bad[] = "bits: must be a whole number from 64 to 4096";
    const char *v;
    size_t vlen;
    rt->arg = cfg->bits;
    int r = q ? route_query_param(q, len, "bits", &v, &vlen) : 0;
    if (r <= 0) {
        if (r < 0)
            rt->reason = "bits: given more than once";
        return r;
    }
    unsigned long n = 0;
    rt->reason = bad;
    if (vlen == 0 || vlen > 5)
        return -1;
    for (size_t k = 0; k < vlen; k++) {
        if (v[k] < '0' || v[k] > '9')
            return -1;
        n = n * 10 + (unsigned long)(v[k] - '0');
    }
    if (n < PRIME_BITS_MIN || n > PRIME_BITS_MAX)
        return -1;
    rt->reason = NULL;
    rt->arg = (unsigned)n;
    return 0;
}

/* "Hello_N" once the prime is done (result < 0: it failed: 500, and the
 * connection closes). N counts the process's answers: it never repeats. */
static void example_answer(const struct answer_env *env, const struct http *h, int result, struct resp *r,
                           char *body, size_t cap)
{
    if (result < 0) {
        answer_text(r, 500, "prime generation failed\n", false);
        return;
    }
    uint64_t n = atomic_fetch_add_explicit(env->example_n, 1, memory_order_relaxed) + 1;
    struct strout o = strout_init(body, cap);
    STROUT_LIT(&o, "Hello_");
    strout_uint(&o, n);
    size_t len = strout_end(&o);
    *r = (struct resp){
        .status = 200,
        .ctype = "text/plain",
        .body = body,
        .body_len = len,
        .keep_alive = answer_keep_alive(env, h),
    };
}

static void answer(struct app_worker *aw, struct app_req *q, int result)
{
    struct resp r;
    char body[ANSWER_BODY_MAX];
    example_answer(&aw->env, &q->conn->http, result, &r, body, sizeof(body));
    app_answer(q, &r);
}

/* dispatch's done hook: a queued job's task is back (tag: its index). */
static void on_done(void *ctx, uint64_t tag, int result)
{
    struct example_worker *ew = ctx;
    struct example_job *j = &ew->jobs[tag];
    struct app_req *q = j->q;
    j->job.where = DISPATCH_JOB_IDLE;
    j->job.task = NULL;
    job_put(ew, j);
    if (!q)
        return; /* its client went away */
    q->state = NULL;
    answer(ew->aw, q, result);
}

/* conn_cancel_fn: the client went away. A job that only waited for a task
 * is free at once; one whose task is out is freed when the task comes back. */
static void on_cancel(struct conn *c, void *arg)
{
    struct app_worker *aw = app_of(c);
    struct example_job *j = arg;
    j->q->state = NULL;
    j->q = NULL;
    if (dispatch_cancel(&aw->w->dispatch, &j->job))
        job_put(worker_of(aw), j);
}

static void example_serve(struct app_worker *aw, struct app_req *q)
{
    struct example_worker *ew = worker_of(aw);
    struct example_job *j = ew->job_free;
    if (!j) {
        /* cannot happen: slots + queue_max jobs, one per request plus one per task out */
        struct resp r;
        answer_text(&r, 503, "busy; retry\n", false);
        app_answer(q, &r);
        return;
    }
    ew->job_free = j->next;
    j->q = q;
    q->state = j;
    int result;
    if (dispatch_submit(&aw->w->dispatch, &j->job, (uint64_t)(j - ew->jobs), q->route.arg, &result)) {
        q->state = NULL;
        job_put(ew, j);
        answer(aw, q, result);
        return;
    }
    conn_wait(q->conn, on_cancel, j); /* answered in on_done() */
}

/* ---- the dispatch's work: a prime with this worker's state ---------------- */

static int prime_run(void *state, unsigned bits)
{
    struct example_worker *ew = state;
    return prime_generate(ew->prime, ew->aw->cfg->engine, bits, NULL, 0);
}

static void *prime_share_create(void)
{
    return prime_hunt_create();
}

static int prime_run_shared(void *state, void *share, unsigned bits)
{
    struct example_worker *ew = state;
    return prime_generate_shared(ew->prime, share, ew->aw->cfg->engine, bits, NULL, 0);
}

static bool prime_help(void *state, void *share)
{
    struct example_worker *ew = state;
    return prime_hunt_help(ew->prime, share);
}

/* FLINT's search is never split; the sieve's is, when --prime-split is on. */
static const struct dispatch_work prime_work = {.run = prime_run};
static const struct dispatch_work prime_work_split = {
    .run = prime_run, .share_create = prime_share_create, .run_shared = prime_run_shared, .help = prime_help};

/* The job pool (a job per connection slot and per queued task), the prime
 * state, the dispatch's work and done hook. */
static int example_init(struct app_worker *aw)
{
    unsigned n = aw->w->opts->max_open + aw->cfg->queue_max;
    struct example_worker *ew = calloc(1, sizeof(*ew));
    if (!ew)
        return -1;
    aw->route_state[ROUTE_EXAMPLE] = ew;
    ew->aw = aw;
    ew->prime = prime_state_create(aw->app->prime_seed);
    if (!ew->prime)
        return -1;
    /* --prime-vector: a forced engine the CPU lacks was refused at start-up; what fails here is memory */
    if (prime_state_vector(ew->prime, config_vector(aw->cfg)) < 0)
        return -1;
    const struct dispatch_work *work = aw->cfg->engine == PRIME_ENGINE_SIEVE ? &prime_work_split : &prime_work;
    if (dispatch_set_work(&aw->w->dispatch, work, ew))
        return -1;
    ew->jobs = calloc(n, sizeof(*ew->jobs)); /* mmap'd: touched when used */
    if (!ew->jobs)
        return -1;
    for (unsigned i = n; i-- > 0;) {
        ew->jobs[i].next = ew->job_free;
        ew->job_free = &ew->jobs[i];
    }
    aw->w->dispatch.hooks.done = on_done;
    aw->w->dispatch.hooks.done_ctx = ew;
    return 0;
}

static void example_fini(struct app_worker *aw)
{
    struct example_worker *ew = worker_of(aw);
    if (ew) {
        free(ew->jobs);
        prime_state_destroy(ew->prime);
        free(ew);
        aw->route_state[ROUTE_EXAMPLE] = NULL;
    }
    prime_thread_fini(); /* fini runs on the worker's own thread */
}

const struct app_route example_route = {
    .query = example_query, .serve = example_serve, .init = example_init, .fini = example_fini};
