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
 */
#include "app.h"

#include <stdlib.h>

struct example_job {
    struct dispatch_job job;
    struct example_job *next; /* free list */
    struct app_req *q;        /* its request, or NULL once cancelled */
};

static void job_put(struct app_worker *aw, struct example_job *j)
{
    j->q = NULL;
    j->next = aw->job_free;
    aw->job_free = j;
}

static void answer(struct app_worker *aw, struct app_req *q, int result)
{
    struct resp r;
    char body[HANDLERS_BODY_MAX];
    handlers_example(&aw->env, &q->conn->http, result, &r, body, sizeof(body));
    app_answer(q, &r);
}

/* dispatch's done hook: a queued job's task is back (tag: its index). */
static void on_done(void *ctx, uint64_t tag, int result)
{
    struct app_worker *aw = ctx;
    struct example_job *j = &aw->jobs[tag];
    struct app_req *q = j->q;
    j->job.where = DISPATCH_JOB_IDLE;
    j->job.task = NULL;
    job_put(aw, j);
    if (!q)
        return; /* its client went away */
    q->state = NULL;
    answer(aw, q, result);
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
        job_put(aw, j);
}

static void example_serve(struct app_worker *aw, struct app_req *q)
{
    struct example_job *j = aw->job_free;
    if (!j) {
        /* cannot happen: slots + queue_max jobs, one per request plus one per task out */
        struct resp r = {.status = 503, .ctype = "text/plain; charset=utf-8", .body = "busy; retry\n",
                         .body_len = 12, .keep_alive = false};
        app_answer(q, &r);
        return;
    }
    aw->job_free = j->next;
    j->q = q;
    q->state = j;
    int result;
    if (dispatch_submit(&aw->w->dispatch, &j->job, (uint64_t)(j - aw->jobs), q->route.bits, &result)) {
        q->state = NULL;
        job_put(aw, j);
        answer(aw, q, result);
        return;
    }
    conn_wait(q->conn, on_cancel, j); /* answered in on_done() */
}

/* ---- the dispatch's work: a prime with this worker's state ---------------- */

static int prime_run(void *state, unsigned bits)
{
    struct app_worker *aw = state;
    return prime_generate(aw->prime, aw->cfg->engine, bits, NULL, 0);
}

static void *prime_share_create(void)
{
    return prime_hunt_create();
}

static int prime_run_shared(void *state, void *share, unsigned bits)
{
    struct app_worker *aw = state;
    return prime_generate_shared(aw->prime, share, aw->cfg->engine, bits, NULL, 0);
}

static bool prime_help(void *state, void *share)
{
    struct app_worker *aw = state;
    return prime_hunt_help(aw->prime, share);
}

/* FLINT's search is never split; the sieve's is, when --prime-split is on. */
static const struct dispatch_work prime_work = {.run = prime_run};
static const struct dispatch_work prime_work_split = {
    .run = prime_run, .share_create = prime_share_create, .run_shared = prime_run_shared, .help = prime_help};

bool example_vector_on(const struct config *cfg)
{
    return cfg->engine == PRIME_ENGINE_SIEVE && cfg->prime_vector != CONFIG_VECTOR_OFF && prime_vector_supported();
}

/* The job pool (a job per connection slot and per queued task), the prime
 * state, the dispatch's work and done hook. */
static int example_init(struct app_worker *aw)
{
    unsigned n = aw->w->opts->max_open + aw->cfg->queue_max;
    aw->prime = prime_state_create(aw->app->prime_seed);
    if (!aw->prime)
        return -1;
    /* --prime-vector off: the scalar engine, as on a CPU without IFMA (on
     * without IFMA was refused at start-up) */
    if (!example_vector_on(aw->cfg))
        prime_state_vector(aw->prime, false);
    const struct dispatch_work *work = aw->cfg->engine == PRIME_ENGINE_SIEVE ? &prime_work_split : &prime_work;
    if (dispatch_set_work(&aw->w->dispatch, work, aw))
        return -1;
    aw->jobs = calloc(n, sizeof(*aw->jobs)); /* mmap'd: touched when used */
    if (!aw->jobs)
        return -1;
    for (unsigned i = n; i-- > 0;) {
        aw->jobs[i].next = aw->job_free;
        aw->job_free = &aw->jobs[i];
    }
    aw->w->dispatch.hooks.done = on_done;
    aw->w->dispatch.hooks.done_ctx = aw;
    return 0;
}

static void example_fini(struct app_worker *aw)
{
    free(aw->jobs);
    aw->jobs = aw->job_free = NULL;
    prime_state_destroy(aw->prime);
    aw->prime = NULL;
    prime_thread_fini(); /* fini runs on the worker's own thread */
}

const struct app_route example_route = {.serve = example_serve, .init = example_init, .fini = example_fini};
