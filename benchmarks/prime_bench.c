/* prime_bench.c - microseconds per random probable prime, per engine, on one core.
 *
 * Engines: flint (fmpz_randprime), sieve (prime.c's sieve, its base-2 tests as the
 * CPU's best engine runs them), gmp (a random start + mpz_nextprime), and the sieve
 * with each way of running its base-2 tests forced: scalar (one at a time), avx2,
 * avx512 and ifma (batches of four or eight; --engine all runs those the CPU has).
 * The engines run round-robin, one prime each per round, so a noisy neighbour slows
 * them alike; flint and the sieve engines share a seed and so find the very same
 * primes (a paired comparison). Prints median, p10/p90 and min/max of
 * wall and thread-CPU time; --csv prints one `key=value` line per engine for
 * scripts; --sweep prints the sieve tuning curve (primes x window -> us).
 * --split spin|idle compares the sieve engine serial with the split search
 * (prime_generate_shared() and one helper thread on --helper-cpu), one prime
 * each in turn from the same seed (the same primes): how much of the split's
 * gain is the algorithm, with no server, no wake-up and no I/O around it. The
 * helper calls prime_hunt_help() without pause during every split prime; during
 * the serial ones it goes on polling (spin: the other CPU busy, as it is at
 * load) or waits on a condition variable (idle: the other CPU halted, as it is
 * at concurrency 1 in primed, and woken for each split prime, the wake-up timed).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <gmp.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "prime.h"

/* scalar, avx2, avx512, ifma: the sieve engine with its base-2 tests run that way
 * (prime_state_vector()); the same primes as sieve, which runs the CPU's best. */
enum { ENG_FLINT, ENG_SIEVE, ENG_GMP, ENG_SCALAR, ENG_AVX2, ENG_AVX512, ENG_IFMA, ENG_N };
static const char *const eng_names[ENG_N] = {"flint", "sieve", "gmp", "scalar", "avx2", "avx512", "ifma"};

/* The base-2 engine a sieve row forces; PRIME_VECTOR_N for sieve (the best). */
static enum prime_vector eng_vector(int e)
{
    switch (e) {
    case ENG_SCALAR:
        return PRIME_VECTOR_SCALAR;
    case ENG_AVX2:
        return PRIME_VECTOR_AVX2;
    case ENG_AVX512:
        return PRIME_VECTOR_AVX512;
    case ENG_IFMA:
        return PRIME_VECTOR_IFMA;
    }
    return PRIME_VECTOR_N;
}

struct opts {
    unsigned bits, count;
    int engines[ENG_N];
    int csv, sweep, checks, cpu, helper_cpu;
    int vector; /* --vector: the sieve states' base-2 engine for --sweep, --split; -1: the best */
    int split; /* 0: off, 1: spin, 2: idle */
    uint64_t seed;
    unsigned sieve_primes, window; /* 0 = automatic */
    unsigned sweep_primes[16], n_sweep_primes; /* --sweep-primes a,b,... */
    unsigned sweep_windows[16], n_sweep_windows; /* --sweep-windows a,b,... */
};

/* Parses "a,b,c" into v (at most 16 values); returns the count or -EINVAL. */
static int parse_list(const char *s, unsigned *v)
{
    int n = 0;
    for (char *end; *s; s = end + (*end == ',')) {
        if (n == 16)
            return -EINVAL;
        v[n++] = (unsigned)strtoul(s, &end, 10);
        if (end == s)
            return -EINVAL;
    }
    return n;
}

static double now_us(clockid_t clk)
{
    struct timespec t;
    clock_gettime(clk, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Nearest-rank percentile of a sorted array. */
static double pct(const double *v, unsigned n, double p)
{
    unsigned i = (unsigned)(p / 100.0 * (n - 1) + 0.5);
    return v[i < n ? i : n - 1];
}

struct series {
    double *wall, *cpu;
};

struct summary {
    double med, p10, p90, min, max, cpu_med, mean, cpu_mean;
};

static struct summary summarize(struct series *s, unsigned n)
{
    double sw = 0, sc = 0;
    for (unsigned i = 0; i < n; i++)
        sw += s->wall[i], sc += s->cpu[i];
    qsort(s->wall, n, sizeof(double), cmp_double);
    qsort(s->cpu, n, sizeof(double), cmp_double);
    return (struct summary){pct(s->wall, n, 50), pct(s->wall, n, 10), pct(s->wall, n, 90),
                            s->wall[0], s->wall[n - 1], pct(s->cpu, n, 50), sw / n, sc / n};
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: prime_bench [--bits N] [--count N] [--engine flint|sieve|gmp|scalar|avx2|avx512|ifma|all]\n"
            "                   [--csv] [--sweep] [--seed N] [--cpu N] [--vector scalar|avx2|avx512|ifma]\n"
            "                   [--sieve-primes N] [--window N] [--split spin|idle [--helper-cpu N]] [--checks]\n"
            "  --bits N          prime size (default 1000)\n"
            "  --count N         primes per engine (default 200)\n"
            "  --engine E        one engine, or all (default): flint, sieve (the CPU's best base-2 engine),\n"
            "                    gmp, and the sieve with its base-2 tests forced: scalar, avx2, avx512,\n"
            "                    ifma (all: those the CPU has); each sieve engine prints a line\n"
            "                    `ratio <engine>/flint median=... mean=... cpu_mean=...`\n"
            "  --csv             one line per engine: engine=... bits=... median_us=...\n"
            "  --vector V        the base-2 engine of --sweep's, --split's and --checks' sieve (default: the best)\n"
            "  --sweep           sieve tuning curve: sieve primes x window -> us\n"
            "  --sweep-primes a,b,...   sieve prime counts to sweep (default 64..32768)\n"
            "  --sweep-windows a,b,...  windows (odd offsets) to sweep (default 1,2,4 x bits)\n"
            "  --seed N          seed for flint/sieve (default: one random seed shared)\n"
            "  --cpu N           pin to CPU N (default: the CPU it starts on)\n"
            "  --sieve-primes N, --window N   fixed sieve tuning (default automatic)\n"
            "  --split spin|idle  sieve serial against split with one helper thread (spin: it polls\n"
            "                    between split primes too; idle: it sleeps and is woken for each)\n"
            "  --helper-cpu N    the helper's CPU (default: the lowest allowed CPU other than --cpu's;\n"
            "                    with one CPU, that one); exit 1 when a split prime differs from its serial twin\n"
            "  --checks          the primality checks one by one on --count sieve primes: strong base 2\n"
            "                    (the engine's, then mpz_powm's), the Lucas test the engine runs, FLINT's\n"
            "                    (thread CPU us; exit 1 if one fails)\n");
}

static int parse_args(int argc, char **argv, struct opts *o)
{
    *o = (struct opts){.bits = PRIME_BITS_DEFAULT, .count = 200, .cpu = -1, .helper_cpu = -1, .vector = -1};
    for (int e = 0; e < ENG_N; e++)
        o->engines[e] = eng_vector(e) == PRIME_VECTOR_N || prime_vector_has(eng_vector(e));
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--csv") == 0) {
            o->csv = 1;
        } else if (strcmp(a, "--sweep") == 0) {
            o->sweep = 1;
        } else if (strcmp(a, "--checks") == 0) {
            o->checks = 1;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            exit(0);
        } else if (v && strcmp(a, "--bits") == 0) {
            o->bits = (unsigned)strtoul(v, NULL, 10), i++;
        } else if (v && strcmp(a, "--count") == 0) {
            o->count = (unsigned)strtoul(v, NULL, 10), i++;
        } else if (v && strcmp(a, "--seed") == 0) {
            o->seed = strtoull(v, NULL, 10), i++;
        } else if (v && strcmp(a, "--cpu") == 0) {
            o->cpu = atoi(v), i++;
        } else if (v && strcmp(a, "--helper-cpu") == 0) {
            o->helper_cpu = atoi(v), i++;
        } else if (v && strcmp(a, "--split") == 0) {
            o->split = strcmp(v, "spin") == 0 ? 1 : strcmp(v, "idle") == 0 ? 2 : -1, i++;
            if (o->split < 0)
                return -EINVAL;
        } else if (v && strcmp(a, "--sieve-primes") == 0) {
            o->sieve_primes = (unsigned)strtoul(v, NULL, 10), i++;
        } else if (v && strcmp(a, "--window") == 0) {
            o->window = (unsigned)strtoul(v, NULL, 10), i++;
        } else if (v && strcmp(a, "--sweep-primes") == 0) {
            int n = parse_list(v, o->sweep_primes);
            if (n <= 0)
                return -EINVAL;
            o->n_sweep_primes = (unsigned)n, i++;
        } else if (v && strcmp(a, "--sweep-windows") == 0) {
            int n = parse_list(v, o->sweep_windows);
            if (n <= 0)
                return -EINVAL;
            o->n_sweep_windows = (unsigned)n, i++;
        } else if (v && strcmp(a, "--vector") == 0) {
            enum prime_vector pv;
            if (prime_vector_parse(v, &pv) < 0)
                return -EINVAL;
            o->vector = (int)pv, i++;
        } else if (v && strcmp(a, "--engine") == 0) {
            i++;
            memset(o->engines, 0, sizeof(o->engines));
            int all = strcmp(v, "all") == 0, found = all;
            for (int e = 0; e < ENG_N; e++) {
                bool has = eng_vector(e) == PRIME_VECTOR_N || prime_vector_has(eng_vector(e));
                if ((all && has) || strcmp(v, eng_names[e]) == 0)
                    o->engines[e] = found = 1;
                if (all && !has)
                    fprintf(stderr, "prime_bench: this CPU lacks the %s engine: not run\n", eng_names[e]);
            }
            if (!found)
                return -EINVAL;
        } else {
            return -EINVAL;
        }
    }
    if (o->bits < PRIME_BITS_MIN || o->bits > PRIME_BITS_MAX || o->count < 2)
        return -EINVAL;
    return 0;
}

static void pin(int cpu)
{
    if (cpu < 0)
        cpu = sched_getcpu();
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof(set), &set) != 0)
        perror("prime_bench: sched_setaffinity (running unpinned)");
}

static uint64_t random_seed(void)
{
    uint64_t s = 0;
    while (s == 0)
        if (getrandom(&s, sizeof(s), 0) != sizeof(s))
            s = (uint64_t)time(NULL);
    return s;
}

/* The n-th odd prime (n >= 1: 3, 5, 7, ...), for printing sieve bounds. */
static unsigned long nth_odd_prime(unsigned n)
{
    unsigned long p = 1;
    for (unsigned found = 0; found < n;) {
        p += 2;
        int prime = 1;
        for (unsigned long d = 3; d * d <= p; d += 2)
            if (p % d == 0) {
                prime = 0;
                break;
            }
        found += prime;
    }
    return p;
}

struct gmp_engine {
    gmp_randstate_t rnd;
    mpz_t start, p;
};

static void gmp_generate(struct gmp_engine *g, unsigned bits)
{
    do {
        mpz_urandomb(g->start, g->rnd, bits - 1);
        mpz_setbit(g->start, bits - 1);
        mpz_nextprime(g->p, g->start);
    } while (mpz_sizeinbase(g->p, 2) != bits);
}

/* One timed prime; returns 0 or the negative error of prime_generate(). */
static int time_one(int eng, struct prime_state *st, struct gmp_engine *g,
                    unsigned bits, double *wall, double *cpu)
{
    char hex[PRIME_BITS_MAX / 4 + 2];
    double w0 = now_us(CLOCK_MONOTONIC), c0 = now_us(CLOCK_THREAD_CPUTIME_ID);
    int r = 0;
    if (eng == ENG_GMP)
        gmp_generate(g, bits);
    else
        r = prime_generate(st, eng == ENG_FLINT ? PRIME_ENGINE_FLINT : PRIME_ENGINE_SIEVE, /* the sieve rows */
                           bits, hex, sizeof(hex));
    *cpu = now_us(CLOCK_THREAD_CPUTIME_ID) - c0;
    *wall = now_us(CLOCK_MONOTONIC) - w0;
    return r < 0 ? r : 0;
}

static int run_engines(const struct opts *o)
{
    struct prime_state *st[ENG_N] = {0};
    struct series s[ENG_N];
    struct gmp_engine g;
    gmp_randinit_default(g.rnd);
    gmp_randseed_ui(g.rnd, (unsigned long)o->seed);
    mpz_inits(g.start, g.p, NULL);
    for (int e = 0; e < ENG_N; e++) {
        s[e].wall = calloc(o->count, sizeof(double));
        s[e].cpu = calloc(o->count, sizeof(double));
        st[e] = prime_state_create(o->seed);
        if (!st[e] || !s[e].wall || !s[e].cpu) {
            fprintf(stderr, "prime_bench: out of memory\n");
            return 1;
        }
        if (eng_vector(e) != PRIME_VECTOR_N && o->engines[e] && prime_state_vector(st[e], eng_vector(e)) < 0) {
            fprintf(stderr, "prime_bench: this CPU lacks the %s engine\n", eng_names[e]);
            return 2;
        }
        if (prime_state_tune(st[e], o->sieve_primes, o->window) < 0) {
            fprintf(stderr, "prime_bench: --sieve-primes/--window above cap\n");
            return 2;
        }
    }
    /* Warm-up: FLINT's prime tables, page faults, caches. */
    for (int e = 0; e < ENG_N; e++) {
        double w, c;
        if (o->engines[e])
            time_one(e, st[e], &g, o->bits, &w, &c);
    }
    struct prime_stats before;
    prime_state_stats(st[ENG_SIEVE], &before);
    for (unsigned i = 0; i < o->count; i++)
        for (int e = 0; e < ENG_N; e++)
            if (o->engines[e] &&
                time_one(e, st[e], &g, o->bits, &s[e].wall[i], &s[e].cpu[i]) < 0) {
                fprintf(stderr, "prime_bench: prime_generate failed\n");
                return 1;
            }
    struct prime_stats after;
    prime_state_stats(st[ENG_SIEVE], &after);

    struct summary sum[ENG_N];
    for (int e = 0; e < ENG_N; e++)
        if (o->engines[e])
            sum[e] = summarize(&s[e], o->count);
    if (!o->csv)
        printf("%-6s %5s %6s %10s %10s %10s %10s %10s %10s %10s\n", "engine", "bits", "count",
               "median_us", "p10_us", "p90_us", "min_us", "max_us", "mean_us", "cpu_mean");
    for (int e = 0; e < ENG_N; e++) {
        if (!o->engines[e])
            continue;
        struct summary *m = &sum[e];
        if (o->csv)
            printf("engine=%s bits=%u count=%u median_us=%.1f p10_us=%.1f p90_us=%.1f "
                   "min_us=%.1f max_us=%.1f mean_us=%.1f cpu_median_us=%.1f cpu_mean_us=%.1f\n",
                   eng_names[e], o->bits, o->count, m->med, m->p10, m->p90, m->min, m->max,
                   m->mean, m->cpu_med, m->cpu_mean);
        else
            printf("%-6s %5u %6u %10.1f %10.1f %10.1f %10.1f %10.1f %10.1f %10.1f\n",
                   eng_names[e], o->bits, o->count, m->med, m->p10, m->p90, m->min, m->max,
                   m->mean, m->cpu_mean);
    }
    if (o->engines[ENG_SIEVE]) {
        double n = (double)(after.primes - before.primes);
        printf("%ssieve_tests_per_prime=%.1f batches_per_prime=%.2f lucas_per_prime=%.2f windows_per_prime=%.3f "
               "starts_per_prime=%.3f\n",
               o->csv ? "" : "# ", (double)(after.tests - before.tests) / n,
               (double)(after.batches - before.batches) / n,
               (double)(after.lucas - before.lucas) / n,
               (double)(after.windows - before.windows) / n,
               (double)(after.starts - before.starts) / n);
    }
    for (int r = ENG_FLINT; r <= ENG_GMP; r += ENG_GMP - ENG_FLINT)
        if (o->engines[ENG_SIEVE] && o->engines[r])
            printf("%sratio sieve/%s median=%.3f mean=%.3f cpu_mean=%.3f\n", o->csv ? "" : "# ",
                   eng_names[r], sum[ENG_SIEVE].med / sum[r].med,
                   sum[ENG_SIEVE].mean / sum[r].mean, sum[ENG_SIEVE].cpu_mean / sum[r].cpu_mean);
    for (int e = ENG_SCALAR; e < ENG_N; e++) /* each forced base-2 engine against the reference */
        if (o->engines[e] && o->engines[ENG_FLINT])
            printf("%sratio %s/flint median=%.3f mean=%.3f cpu_mean=%.3f\n", o->csv ? "" : "# ", eng_names[e],
                   sum[e].med / sum[ENG_FLINT].med, sum[e].mean / sum[ENG_FLINT].mean,
                   sum[e].cpu_mean / sum[ENG_FLINT].cpu_mean);
    if (o->engines[ENG_SIEVE] && o->engines[ENG_SCALAR])
        printf("%sratio sieve/scalar median=%.3f mean=%.3f cpu_mean=%.3f vector=%s\n", o->csv ? "" : "# ",
               sum[ENG_SIEVE].med / sum[ENG_SCALAR].med, sum[ENG_SIEVE].mean / sum[ENG_SCALAR].mean,
               sum[ENG_SIEVE].cpu_mean / sum[ENG_SCALAR].cpu_mean, prime_vector_name(prime_vector_best()));
    for (int e = 0; e < ENG_N; e++) {
        prime_state_destroy(st[e]);
        free(s[e].wall);
        free(s[e].cpu);
    }
    mpz_clears(g.start, g.p, NULL);
    gmp_randclear(g.rnd);
    return 0;
}

/* Tuning curve: every (sieve primes, window) pair runs round-robin, one prime
 * each per round, all from the same seed (so the same primes: only the sieve
 * differs). A flint state runs alongside as the yardstick. */
/* st with --vector's base-2 engine (none: the best); false when the CPU lacks it. */
static bool set_vector(const struct opts *o, struct prime_state *st)
{
    if (o->vector >= 0 && prime_state_vector(st, (enum prime_vector)o->vector) < 0) {
        fprintf(stderr, "prime_bench: --vector %s: this CPU lacks it\n", prime_vector_name((enum prime_vector)o->vector));
        return false;
    }
    return true;
}

static int run_sweep(const struct opts *o)
{
    static const unsigned def_primes[] = {64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768};
    unsigned np = o->n_sweep_primes ? o->n_sweep_primes : sizeof(def_primes) / sizeof(unsigned);
    const unsigned *pl = o->n_sweep_primes ? o->sweep_primes : def_primes;
    unsigned def_w[3] = {o->bits, 2 * o->bits, 4 * o->bits};
    unsigned nw = o->n_sweep_windows ? o->n_sweep_windows : 3;
    const unsigned *wl = o->n_sweep_windows ? o->sweep_windows : def_w;
    unsigned nc = np * nw + 1; /* the last one is flint */
    struct prime_state *st[16 * 16 + 1];
    struct series s[16 * 16 + 1];
    unsigned cfg_p[16 * 16 + 1], cfg_w[16 * 16 + 1];
    for (unsigned c = 0; c < nc; c++) {
        st[c] = prime_state_create(o->seed);
        s[c].wall = calloc(o->count, sizeof(double));
        s[c].cpu = calloc(o->count, sizeof(double));
        if (!st[c] || !s[c].wall || !s[c].cpu)
            return 1;
        cfg_p[c] = c < nc - 1 ? pl[c / nw] : 0;
        cfg_w[c] = c < nc - 1 ? wl[c % nw] : 0;
        if (prime_state_tune(st[c], cfg_p[c], cfg_w[c]) < 0) {
            fprintf(stderr, "prime_bench: sweep value above cap\n");
            return 2;
        }
        if (!set_vector(o, st[c]))
            return 2;
    }
    struct gmp_engine g; /* unused: flint and sieve only */
    for (unsigned i = 0; i < o->count; i++)
        for (unsigned c = 0; c < nc; c++) {
            int eng = c == nc - 1 ? ENG_FLINT : ENG_SIEVE;
            if (time_one(eng, st[c], &g, o->bits, &s[c].wall[i], &s[c].cpu[i]) < 0)
                return 1;
        }
    struct summary flint = summarize(&s[nc - 1], o->count);
    printf("sweep bits=%u count=%u engine=flint median_us=%.1f mean_us=%.1f cpu_mean_us=%.1f\n",
           o->bits, o->count, flint.med, flint.mean, flint.cpu_mean);
    for (unsigned c = 0; c < nc - 1; c++) {
        struct prime_stats ps;
        prime_state_stats(st[c], &ps);
        struct summary m = summarize(&s[c], o->count);
        printf("sweep bits=%u count=%u sieve_primes=%u bound=%lu window=%u median_us=%.1f "
               "mean_us=%.1f cpu_mean_us=%.1f tests_per_prime=%.1f ratio_flint_cpu_mean=%.3f\n",
               o->bits, o->count, cfg_p[c], nth_odd_prime(cfg_p[c]), cfg_w[c], m.med, m.mean,
               m.cpu_mean, (double)ps.tests / (double)ps.primes, m.cpu_mean / flint.cpu_mean);
    }
    for (unsigned c = 0; c < nc; c++) {
        prime_state_destroy(st[c]);
        free(s[c].wall);
        free(s[c].cpu);
    }
    return 0;
}

/* ---- --split ---------------------------------------------------------- */

struct helper {
    struct prime_hunt *hunt;
    struct prime_state *st;
    int cpu;
    bool idle;             /* wait on cv between split primes */
    pthread_mutex_t mu;    /* with cv: the idle helper's sleep */
    pthread_cond_t cv;
    _Atomic bool active;   /* a split prime is running */
    _Atomic bool stop;
};

static void *helper_main(void *arg)
{
    struct helper *h = arg;
    pin(h->cpu);
    while (!atomic_load(&h->stop)) {
        if (h->idle && !atomic_load(&h->active)) {
            pthread_mutex_lock(&h->mu);
            while (!atomic_load(&h->active) && !atomic_load(&h->stop))
                pthread_cond_wait(&h->cv, &h->mu);
            pthread_mutex_unlock(&h->mu);
            continue;
        }
        for (unsigned k = 0; k < 64; k++)
            prime_hunt_help(h->st, h->hunt);
    }
    return NULL;
}

/* Sets one of h's flags under the lock the idle helper sleeps on, and wakes it. */
static void helper_set(struct helper *h, _Atomic bool *flag, bool v)
{
    pthread_mutex_lock(&h->mu);
    atomic_store(flag, v);
    pthread_cond_signal(&h->cv);
    pthread_mutex_unlock(&h->mu);
}

static int other_cpu(int cpu)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) != 0)
        return -1;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &set) && c != cpu)
            return c;
    return -1;
}

static int run_split(const struct opts *o, int cpu)
{
    struct helper h = {.cpu = o->helper_cpu, .idle = o->split == 2};
    if (h.cpu < 0) {
        h.cpu = cpu; /* a single CPU: the figures then say what sharing it costs */
        fprintf(stderr, "prime_bench: one CPU only: the helper shares CPU %d\n", cpu);
    }
    struct prime_state *serial = prime_state_create(o->seed), *owner = prime_state_create(o->seed);
    h.st = prime_state_create(o->seed ^ 1);
    h.hunt = prime_hunt_create();
    struct series s[2] = {{calloc(o->count, sizeof(double)), calloc(o->count, sizeof(double))},
                          {calloc(o->count, sizeof(double)), calloc(o->count, sizeof(double))}};
    if (!serial || !owner || !h.st || !h.hunt || !s[0].wall || !s[0].cpu || !s[1].wall || !s[1].cpu) {
        fprintf(stderr, "prime_bench: out of memory\n");
        return 1;
    }
    prime_state_tune(serial, o->sieve_primes, o->window);
    prime_state_tune(owner, o->sieve_primes, o->window);
    if (!set_vector(o, serial) || !set_vector(o, owner) || !set_vector(o, h.st))
        return 2;
    pthread_mutex_init(&h.mu, NULL);
    pthread_cond_init(&h.cv, NULL);
    pthread_t t;
    if (pthread_create(&t, NULL, helper_main, &h) != 0) {
        fprintf(stderr, "prime_bench: cannot start the helper thread\n");
        return 1;
    }
    char a[PRIME_BITS_MAX / 4 + 2], b[PRIME_BITS_MAX / 4 + 2];
    unsigned differ = 0;
    for (unsigned i = 0; i < o->count; i++) {
        double w0 = now_us(CLOCK_MONOTONIC), c0 = now_us(CLOCK_THREAD_CPUTIME_ID);
        int r1 = prime_generate(serial, PRIME_ENGINE_SIEVE, o->bits, a, sizeof(a));
        s[0].cpu[i] = now_us(CLOCK_THREAD_CPUTIME_ID) - c0;
        s[0].wall[i] = now_us(CLOCK_MONOTONIC) - w0;
        w0 = now_us(CLOCK_MONOTONIC), c0 = now_us(CLOCK_THREAD_CPUTIME_ID);
        helper_set(&h, &h.active, true); /* idle: the wake-up is in the split time */
        int r2 = prime_generate_shared(owner, h.hunt, PRIME_ENGINE_SIEVE, o->bits, b, sizeof(b));
        helper_set(&h, &h.active, false);
        s[1].cpu[i] = now_us(CLOCK_THREAD_CPUTIME_ID) - c0;
        s[1].wall[i] = now_us(CLOCK_MONOTONIC) - w0;
        if (r1 < 0 || r2 < 0) {
            fprintf(stderr, "prime_bench: prime_generate failed\n");
            return 1;
        }
        differ += strcmp(a, b) != 0;
    }
    helper_set(&h, &h.stop, true);
    pthread_join(t, NULL);
    struct summary m0 = summarize(&s[0], o->count), m1 = summarize(&s[1], o->count);
    struct prime_stats hs, os, ss;
    prime_state_stats(h.st, &hs);
    prime_state_stats(owner, &os);
    prime_state_stats(serial, &ss);
    printf("split=%s bits=%u count=%u cpu=%d helper_cpu=%d serial_mean_us=%.1f serial_median_us=%.1f "
           "serial_p90_us=%.1f split_mean_us=%.1f split_median_us=%.1f split_p90_us=%.1f "
           "ratio_mean=%.3f ratio_median=%.3f ratio_p90=%.3f owner_cpu_mean_us=%.1f pieces_helped_per_prime=%.1f "
           "chunks_helped_per_prime=%.1f stopped_per_prime=%.2f serial_tests_per_prime=%.1f serial_batches_per_prime=%.2f "
           "split_tests_per_prime=%.1f split_batches_per_prime=%.2f different_primes=%u\n",
           h.idle ? "idle" : "spin", o->bits, o->count, cpu, h.cpu, m0.mean, m0.med, m0.p90, m1.mean, m1.med,
           m1.p90, m1.mean / m0.mean, m1.med / m0.med, m1.p90 / m0.p90, m1.cpu_mean,
           (double)hs.helped / o->count, (double)hs.chunks / o->count,
           (double)(hs.stopped + os.stopped) / o->count, (double)ss.tests / o->count, (double)ss.batches / o->count,
           (double)(hs.tests + os.tests) / o->count, (double)(hs.batches + os.batches) / o->count, differ);
    prime_state_destroy(serial);
    prime_state_destroy(owner);
    prime_state_destroy(h.st);
    prime_hunt_destroy(h.hunt);
    for (int k = 0; k < 2; k++) {
        free(s[k].wall);
        free(s[k].cpu);
    }
    return differ ? 1 : 0;
}

/* ---- --checks --------------------------------------------------------- */

/* Thread CPU time of each of BPSW's checks on o->count primes of the sieve
 * engine (all must pass them), the checks in turn on each prime; then the
 * base-2 test as a batch of each engine the CPU has (four or eight tests at
 * once: `base2_<engine>_per_base2` is what a batch costs in one-by-one tests). */
static int run_checks(const struct opts *o)
{
    enum { NV = PRIME_VECTOR_N - 1 };
    static const enum prime_check checks[] = {PRIME_CHECK_BASE2, PRIME_CHECK_BASE2_GMP, PRIME_CHECK_LUCAS,
                                              PRIME_CHECK_FLINT_LUCAS};
    static const char *const names[] = {"base2", "base2_gmp", "lucas", "flint_lucas"};
    enum { NC = sizeof(checks) / sizeof(checks[0]) };
    struct prime_state *st = prime_state_create(o->seed), *vs[NV] = {0};
    double *us[NC + NV] = {0};
    bool ok = st != NULL && set_vector(o, st);
    for (int c = 0; c < NC + NV; c++) {
        if (c >= NC && !prime_vector_has((enum prime_vector)(c - NC + 1)))
            continue;
        us[c] = calloc(o->count, sizeof(double));
        ok = ok && us[c];
        if (c >= NC) {
            vs[c - NC] = prime_state_create(o->seed);
            ok = ok && vs[c - NC] && prime_state_vector(vs[c - NC], (enum prime_vector)(c - NC + 1)) == 0;
        }
    }
    if (!ok) {
        fprintf(stderr, "prime_bench: out of memory\n");
        return 1;
    }
    char hex[PRIME_BITS_MAX / 4 + 2];
    for (unsigned i = 0; i < o->count; i++) {
        if (prime_generate(st, PRIME_ENGINE_SIEVE, o->bits, hex, sizeof(hex)) < 0)
            return 1;
        for (int c = 0; c < NC + NV; c++) {
            if (!us[c])
                continue;
            double c0 = now_us(CLOCK_THREAD_CPUTIME_ID);
            int r = c < NC ? prime_check(st, checks[c], hex) : prime_check(vs[c - NC], PRIME_CHECK_BASE2_VECTOR, hex);
            us[c][i] = now_us(CLOCK_THREAD_CPUTIME_ID) - c0;
            if (r != 1) {
                fprintf(stderr, "prime_bench: %s fails the prime %s\n",
                        c < NC ? names[c] : prime_vector_name((enum prime_vector)(c - NC + 1)), hex);
                return 1;
            }
        }
    }
    double med[NC + NV];
    printf("checks bits=%u count=%u", o->bits, o->count);
    for (int c = 0; c < NC + NV; c++) {
        if (!us[c])
            continue;
        qsort(us[c], o->count, sizeof(double), cmp_double);
        med[c] = pct(us[c], o->count, 50);
        if (c < NC)
            printf(" %s_median_us=%.1f", names[c], med[c]);
        else
            printf(" base2_%s_median_us=%.1f", prime_vector_name((enum prime_vector)(c - NC + 1)), med[c]);
        free(us[c]);
    }
    printf(" base2_gmp_per_base2=%.2f lucas_per_base2=%.2f flint_lucas_per_base2=%.2f", med[1] / med[0],
           med[2] / med[0], med[3] / med[0]);
    for (int c = NC; c < NC + NV; c++)
        if (us[c])
            printf(" base2_%s_per_base2=%.2f", prime_vector_name((enum prime_vector)(c - NC + 1)), med[c] / med[0]);
    printf("\n");
    prime_state_destroy(st);
    for (int v = 0; v < NV; v++)
        prime_state_destroy(vs[v]);
    return 0;
}

int main(int argc, char **argv)
{
    struct opts o;
    if (parse_args(argc, argv, &o) < 0) {
        usage(stderr);
        return 2;
    }
    if (o.seed == 0)
        o.seed = random_seed();
    if (o.split && o.helper_cpu < 0)
        o.helper_cpu = other_cpu(o.cpu >= 0 ? o.cpu : sched_getcpu()); /* before pin() narrows the mask */
    pin(o.cpu);
    int r = o.split    ? run_split(&o, sched_getcpu())
            : o.checks ? run_checks(&o)
            : o.sweep  ? run_sweep(&o)
                       : run_engines(&o);
    prime_thread_fini();
    return r;
}
