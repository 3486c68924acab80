/* prime.h - random probable primes, the reference CPU-bound work of GET /example.
 *
 * prime.c is the only file that includes FLINT or GMP. Each thread owns one
 * struct prime_state (its random state); states are never shared between threads.
 */
#ifndef PRIMED_PRIME_H
#define PRIMED_PRIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PRIME_BITS_MIN     64
#define PRIME_BITS_MAX     4096
#define PRIME_BITS_DEFAULT 1000

enum prime_engine {
    PRIME_ENGINE_FLINT, /* fmpz_randprime(): the reference every comparison names */
    PRIME_ENGINE_SIEVE, /* random start + incremental sieve + Fermat + BPSW */
};

struct prime_state;

/* Parses "flint" or "sieve" into *out. Returns 0, or -EINVAL for anything else. */
int prime_engine_parse(const char *name, enum prime_engine *out);

/* Name of an engine ("flint", "sieve"); never NULL. */
const char *prime_engine_name(enum prime_engine e);

/* Creates a random state for the calling thread. seed 0 means "seed from
 * getrandom()"; any other seed makes the sequence of primes deterministic.
 * Returns NULL on allocation failure or when getrandom() fails. */
struct prime_state *prime_state_create(uint64_t seed);

/* Frees a state made by prime_state_create(); NULL is a no-op. */
void prime_state_destroy(struct prime_state *st);

/* Releases FLINT's per-thread caches; call once on each thread that used
 * prime_generate() before it exits. */
void prime_thread_fini(void);

/* Generates a random probable prime of exactly `bits` bits
 * (PRIME_BITS_MIN <= bits <= PRIME_BITS_MAX). When hex is not NULL the prime is
 * written there in lower-case hexadecimal, NUL-terminated (hexlen must be at
 * least bits/4 + 2). Returns the prime's bit length (== bits), -EINVAL for
 * bits out of range, -ENOSPC when hex is too small. */
int prime_generate(struct prime_state *st, enum prime_engine e, unsigned bits, char *hex, size_t hexlen);

/* ---- a search other threads can join ------------------------------------
 *
 * prime_generate_shared() is prime_generate() with each sieve window's work
 * cut into parts that other threads may take through prime_hunt_help() while
 * it runs: first its sieve, in chunks of sieving primes, then its candidate
 * tests, in pieces of PRIME_PIECE sieve survivors (a batch, at most
 * PRIME_PIECE_VECTOR, when the caller's state batches them: prime_state_vector()). The answer is the
 * smallest probable prime of the lowest window that has one: the very prime
 * prime_generate() returns for the same state (the start is drawn the same
 * way, from the caller's state only). A piece above an answer already found
 * is not tested, and a thread gives up the test it is in (within ~30 us at
 * 1000 bits) once an answer below its candidate is known. The caller returns
 * only when every helper has left the hunt, so its window is never read after
 * it changes. One hunt has one owner thread (the caller of
 * prime_generate_shared()); any number of threads may help it. The flint
 * engine is not split: it runs serially. */
#define PRIME_PIECE        1 /* sieve survivors per piece: one test */
#define PRIME_PIECE_VECTOR 8 /* the largest batch (eight lanes), the serial search's batch */

struct prime_hunt;

/* Returns a closed hunt, or NULL on allocation failure. */
struct prime_hunt *prime_hunt_create(void);
/* Frees h; no thread may be inside it (NULL is a no-op). */
void prime_hunt_destroy(struct prime_hunt *h);

/* prime_generate(), with pieces offered on h for the duration of the call.
 * Same arguments, same returns, same prime. */
int prime_generate_shared(struct prime_state *st, struct prime_hunt *h, enum prime_engine e, unsigned bits, char *hex,
                          size_t hexlen);

/* Sieves one chunk of h's open window, or tests one piece of it with st's
 * scratch (st belongs to the calling thread, not to h's owner); a call that
 * finds the sieve's chunks all taken but not all done waits for them (tens of
 * microseconds). Returns true when it took a chunk or a piece, false when h
 * had none to give. */
bool prime_hunt_help(struct prime_state *st, struct prime_hunt *h);

/* Counters of one state's work, for benchmarks and tests (sieve engine only,
 * except `primes`, which counts every prime_generate() success). */
struct prime_stats {
    uint64_t primes;    /* primes returned by prime_generate() */
    uint64_t starts;    /* random starts drawn (a start whose next prime spills
                           past `bits` bits is redrawn) */
    uint64_t windows;   /* sieve windows sieved */
    uint64_t survivors; /* offsets of those windows the sieve left unmarked */
    uint64_t tests;     /* strong base-2 tests run on sieve survivors (a batch's every lane) */
    uint64_t batches;   /* batches of up to four or eight of those tests run at once (prime_state_vector()) */
    uint64_t lucas;     /* Lucas tests run (survivors of the base-2 test) */
    uint64_t shared;    /* windows offered to helpers by prime_generate_shared() */
    uint64_t helped;    /* pieces of another thread's hunt tested with this state */
    uint64_t chunks;    /* sieve chunks of another thread's hunt marked by this state's thread */
    uint64_t stopped;   /* tests of a shared search given up midway: a lower answer was found */
};

/* Copies st's counters into *out. */
void prime_state_stats(const struct prime_state *st, struct prime_stats *out);

/* Overrides the sieve engine's tuning for st (benchmarks and tests): the number
 * of odd primes sieved with (3, 5, 7, ...; at most 131072) and the window in odd
 * offsets (at most 16384); 0 keeps the automatic choice for each. Returns 0, or
 * -EINVAL when a value is above its cap. */
int prime_state_tune(struct prime_state *st, unsigned sieve_primes, unsigned window);

/* How the sieve engine runs its strong base-2 tests: one by one (scalar, GMP's
 * mpn products), or a batch of survivors at once, one per lane of a vector:
 * eight with AVX-512 IFMA (52-bit digits, vpmadd52), eight with AVX-512F or
 * four with AVX2 (29- or 28-bit digits, vpmuludq). Same primes with each. Ordered
 * from the least to the most preferred. */
enum prime_vector {
    PRIME_VECTOR_SCALAR, /* one test at a time: every CPU */
    PRIME_VECTOR_AVX2,   /* four tests at once: AVX2 (Intel since Haswell, AMD since Zen) */
    PRIME_VECTOR_AVX512, /* eight tests at once: AVX-512F (Intel since Skylake-SP, AMD since Zen 4) */
    PRIME_VECTOR_IFMA,   /* eight tests at once: AVX-512F and IFMA (Intel since Ice Lake, AMD since Zen 4) */
};
#define PRIME_VECTOR_N (PRIME_VECTOR_IFMA + 1)

/* The engine's name ("scalar", "avx2", "avx512", "ifma"); never NULL. */
const char *prime_vector_name(enum prime_vector v);

/* Parses one of prime_vector_name()'s names into *out. Returns 0, or -EINVAL. */
int prime_vector_parse(const char *name, enum prime_vector *out);

/* Whether this CPU (and this build) runs v; PRIME_VECTOR_SCALAR always. */
bool prime_vector_has(enum prime_vector v);

/* The most preferred engine this CPU runs (PRIME_VECTOR_SCALAR where none). */
enum prime_vector prime_vector_best(void);

/* Sets how st's sieve engine runs its base-2 tests (the default is
 * prime_vector_best(); benchmarks and tests compare them). Batches start at
 * 200 bits; smaller candidates are tested one by one with every engine.
 * The AVX2 and AVX-512F engines' vectors are allocated on the first switch to
 * one (a new state of a CPU whose best is IFMA has none). Returns 0, -ENOTSUP
 * where this CPU lacks v, or -ENOMEM (st unchanged either way). */
int prime_state_vector(struct prime_state *st, enum prime_vector v);

/* The engine st's base-2 tests run with. */
enum prime_vector prime_state_vector_get(const struct prime_state *st);

/* Writes the smallest probable prime greater than start_hex (hexadecimal, no
 * prefix, PRIME_BITS_MIN..PRIME_BITS_MAX bits) as computed by engine e (flint:
 * fmpz_nextprime(..., 0), i.e. GMP's mpz_nextprime; sieve: the sieve and BPSW).
 * Both engines return the same prime for the same start. hex as for
 * prime_generate() (it must hold the result's digits and a NUL). Returns the
 * prime's bit length, -EINVAL for a malformed or out-of-range start, -ENOSPC
 * when hex is too small. */
int prime_next(struct prime_state *st, enum prime_engine e, const char *start_hex, char *hex, size_t hexlen);

/* The sieve engine's primality checks one by one, for tests and benchmarks. */
enum prime_check {
    PRIME_CHECK_BASE2,       /* the strong probable-prime test to base 2 (BPSW's first half) */
    PRIME_CHECK_LUCAS,       /* BPSW's second half: the almost extra strong Lucas test */
    PRIME_CHECK_FLINT_LUCAS, /* FLINT's Lucas test (Selfridge's parameters), which it replaced */
    PRIME_CHECK_BASE2_GMP,   /* the strong base-2 test by mpz_powm, which PRIME_CHECK_BASE2 replaced */
    PRIME_CHECK_BASE2_VECTOR, /* PRIME_CHECK_BASE2 by st's engine's batch (n in one lane, n + 2, n + 4,
                                 ... in the others); -ENOTSUP with the scalar engine */
};

/* Runs check c on the odd number n written in hex (hexadecimal, no prefix,
 * 3 <= n, at most PRIME_BITS_MAX / 4 + 1 digits). Unlike the engine, which
 * leaves a one-limb candidate to FLINT's n_is_prime(), every n takes the
 * multi-limb code here. Returns 1 when n passes, 0 when it fails (composite),
 * -EINVAL for a malformed, even or too small n. */
int prime_check(struct prime_state *st, enum prime_check c, const char *hex);

#endif
