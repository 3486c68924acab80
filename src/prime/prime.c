/* prime.c - random probable primes: FLINT's fmpz_randprime() and a faster sieve.
 *
 * The only file that includes FLINT or GMP. A struct prime_state belongs to one
 * thread and holds everything a call needs (random state, preallocated mpz
 * scratch, the sieve window, the Lucas test's limbs), so the sieve engine
 * allocates nothing per prime (the flint engine's FLINT calls do).
 * Invariants: every candidate is > 2^63, far above the largest sieving prime, so
 * "divisible by a sieving prime" always means composite. Both engines draw the
 * start the same way from the same GMP state, so for one seed they return the
 * same sequence of primes (tests rely on it). See docs/prime.md for the tuning.
 */
#define _GNU_SOURCE
#include "prime.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <gmp.h>

#include "lanes.h"

/* FLINT 2.9 headers declare a few `f()` functions; not our warning to fix. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include "flint.h"
#include "fmpz.h"
#include "ulong_extras.h"
#pragma GCC diagnostic pop

/* Caps of the tuning knobs; the window is sized for its cap at
 * prime_state_create() so a retune never allocates. */
#define SIEVE_PRIMES_CAP (1u << 17)
#define WINDOW_CAP       (1u << 14)
/* Scratch limbs: the largest next prime has PRIME_BITS_MAX + 1 bits. */
#define SCRATCH_BITS     (PRIME_BITS_MAX + 2 * GMP_NUMB_BITS)
/* Limbs of lucas_aes()'s operands: n up to SCRATCH_BITS bits. */
#define LUCAS_LIMBS      (SCRATCH_BITS / GMP_NUMB_BITS)

/* The odd primes 3, 5, 7, ... shared read-only by all threads, filled once by
 * FLINT's prime iterator. Rejected: n_primes_arr_readonly(), which keeps a
 * thread-local table of 16 bytes per prime (2 MiB per worker thread at 2^17
 * primes, measured +4.2 MB RSS); this one is 4 bytes per prime per process
 * (512 KiB). */
static uint32_t odd_primes[SIEVE_PRIMES_CAP];
static pthread_once_t odd_primes_once = PTHREAD_ONCE_INIT;

static void fill_odd_primes(void)
{
    n_primes_t it;
    n_primes_init(it);
    n_primes_next(it); /* 2: only odd numbers are sieved */
    for (unsigned i = 0; i < SIEVE_PRIMES_CAP; i++)
        odd_primes[i] = (uint32_t)n_primes_next(it);
    n_primes_clear(it);
}

/* ---- eight strong base-2 tests at once (AVX-512 IFMA) ---------------------
 *
 * The sieve's survivors are tested in order and the first that passes BPSW is
 * the answer, so the next eight survivors may as well be tested together: one
 * lane of each 512-bit vector per candidate, each lane with its own modulus
 * and exponent. A residue is D digits of 52 bits (R = 2^(52 D), 16 n < R), one
 * vector per digit; vpmadd52luq/vpmadd52huq multiply-add the low and high 52
 * bits of eight 52 x 52-bit products at once. A product is an "almost"
 * Montgomery product (v8_mul(): no final subtraction; inputs below 4n give an
 * output below 2n, digits renormalised to 52 bits), so the ladder never
 * compares; a doubling (the base is 2) is a masked add of the lanes whose
 * exponent bit is set. Only the candidates' last steps (the squarings of the
 * strong test's tail, one or two on average) run per lane, on mpz. Same
 * answers as strong_base2(); used where the CPU has AVX-512 IFMA (Intel since
 * Ice Lake, AMD since Zen 4) and the candidates have >= V8_MIN_BITS bits.
 * One test across its digits (d20_mul2(), below) runs two products a step
 * in about half the time of one eight-lane product, so eight tests that way
 * would take about twice as long as here: it serves the Lucas test, which
 * has one candidate. */
#define V8_LANES    8
#define V8_DIGITS   80  /* 52 * 80 = 4160 >= the largest n (4101 bits) + 5 */
#define V8_MIN_BITS 200 /* below, one scalar test is cheaper than a batch: docs/prime.md */
/* A batch of fewer candidates runs them one by one: a batch costs ~1 strong_base2() test at
 * 20 digits (v8_mul_20()), ~2.5-3 at other sizes (docs/prime.md). min_lanes() for the others. */
#define V8_MIN_LANES(d) ((d) == 20 ? 2u : 4u)
#define V8_MASK52   ((1ull << 52) - 1)

struct v8 {
    _Alignas(64) uint64_t n[V8_DIGITS][V8_LANES]; /* the moduli, digit-major */
    _Alignas(64) uint64_t x[V8_DIGITS][V8_LANES]; /* 2^(top bits of d) R, then 2^d R, then 2^d */
    _Alignas(64) uint64_t e[V8_DIGITS][V8_LANES]; /* 1: the conversion out of Montgomery form */
    _Alignas(64) uint64_t t[2 * V8_DIGITS][V8_LANES]; /* v8_mul()'s product */
    _Alignas(64) uint64_t k0[V8_LANES];           /* -1/n mod 2^52 per lane */
    uint8_t bit[PRIME_BITS_MAX + 8];              /* lanes whose exponent has bit i set */
    unsigned d;                                   /* digits in use */
};

/* Digits of 52 bits for n of `bits` bits: 16 n < R = 2^(52 d). */
static inline unsigned v8_digits(size_t bits)
{
    return (unsigned)((bits + 5 + 51) / 52);
}

/* Under ThreadSanitizer the eight-lane code is left out: TSan instruments every lane's load and
 * store, which made a 2048-bit prime take ~13 s (the drain tests' requests behind it timed
 * out); that build checks the threads, and the ASan build and test_prime check the lanes. */
#if defined(__SANITIZE_THREAD__)
#define PRIME_V8_OFF 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define PRIME_V8_OFF 1
#endif
#endif

/* The engines this CPU runs, a bit per enum prime_vector (scalar always).
 * __builtin_cpu_supports() also checks that the kernel saves the vector
 * registers (XCR0), not only CPUID. Left out as the eight-lane code is under
 * ThreadSanitizer (above), and off x86-64. */
static unsigned vec_mask(void)
{
#if defined(__x86_64__) && defined(__GNUC__) && !defined(PRIME_V8_OFF)
    /* every worker asks at start-up, at once: relaxed atomics (each computes the same answer) */
    static _Atomic int ok = -1;
    int v = atomic_load_explicit(&ok, memory_order_relaxed);
    if (v < 0) {
        v = 1u << PRIME_VECTOR_SCALAR;
        if (__builtin_cpu_supports("avx2"))
            v |= 1u << PRIME_VECTOR_AVX2;
        if (__builtin_cpu_supports("avx512f"))
            v |= 1u << PRIME_VECTOR_AVX512;
        if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512ifma"))
            v |= 1u << PRIME_VECTOR_IFMA;
        atomic_store_explicit(&ok, v, memory_order_relaxed);
    }
    return (unsigned)v;
#else
    return 1u << PRIME_VECTOR_SCALAR;
#endif
}

static bool v8_supported(void)
{
    return vec_mask() & (1u << PRIME_VECTOR_IFMA);
}

/* Digit j (wd bits: 52, 29 or 28) of the nl limbs l. */
static inline uint64_t digit_of(const mp_limb_t *l, mp_size_t nl, unsigned j, unsigned wd)
{
    unsigned bit = wd * j, w = bit / 64, off = bit % 64;
    if ((mp_size_t)w >= nl)
        return 0;
    uint64_t v = l[w] >> off;
    if (off + wd > 64 && (mp_size_t)w + 1 < nl)
        v |= l[w + 1] << (64 - off);
    return v & ((1ull << wd) - 1);
}

/* The d digits of wd bits at a[0], a[stride], a[2 stride], ... into v (mpz,
 * normalised): one lane of the vectors (stride: the lanes), or a number
 * across the lanes (stride 1). */
static void digits_get_w(mpz_t v, const uint64_t *a, size_t stride, unsigned d, unsigned wd)
{
    mp_size_t nl = (mp_size_t)((wd * d + 63) / 64);
    mp_limb_t *l = mpz_limbs_write(v, nl);
    mpn_zero(l, nl);
    for (unsigned j = 0; j < d; j++) {
        uint64_t g = a[j * stride];
        unsigned bit = wd * j, w = bit / 64, off = bit % 64;
        l[w] |= g << off;
        if (off + wd > 64)
            l[w + 1] |= g >> (64 - off);
    }
    mpz_limbs_finish(v, nl);
}

/* a[0], a[stride], ... (d digits of wd bits) = the value v (< 2^(wd d)). */
static void digits_set_w(uint64_t *a, size_t stride, unsigned d, const mpz_t v, unsigned wd)
{
    const mp_limb_t *l = mpz_limbs_read(v);
    mp_size_t nl = (mp_size_t)mpz_size(v);
    for (unsigned j = 0; j < d; j++)
        a[j * stride] = digit_of(l, nl, j, wd);
}

static void digits_get(mpz_t v, const uint64_t *a, size_t stride, unsigned d)
{
    digits_get_w(v, a, stride, d, 52);
}

static void digits_set(uint64_t *a, size_t stride, unsigned d, const mpz_t v)
{
    digits_set_w(a, stride, d, v, 52);
}

/* Lane `lane` of the digits a[0..d) into v. */
static void v8_get(mpz_t v, uint64_t (*a)[V8_LANES], unsigned d, unsigned lane)
{
    digits_get(v, &a[0][lane], V8_LANES, d);
}

/* Lane `lane` of a[0..d) = the value v (< 2^(52 d)). */
static void v8_set(uint64_t (*a)[V8_LANES], unsigned d, unsigned lane, const mpz_t v)
{
    digits_set(&a[0][lane], V8_LANES, d, v);
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define V8_TARGET __attribute__((target("avx512f,avx512ifma")))

/* r = a b / R mod n per lane, below 2n when a, b < 4n, digits < 2^52; r may
 * be a or b. Each row adds a_i b (low halves at i + j, high at i + j + 1),
 * then m n with m = t_i k0 mod 2^52, which clears t_i's low 52 bits; t_i's
 * carry moves up. A digit of t collects at most 4 d terms below 2^52, and
 * d <= 80: no overflow before the final carry pass. */
V8_TARGET static void v8_mul_mem(struct v8 *v, uint64_t (*r)[V8_LANES], uint64_t (*a)[V8_LANES],
                                 uint64_t (*b)[V8_LANES])
{
    unsigned d = v->d;
    __m512i *t = (__m512i *)v->t;
    const __m512i *n = (const __m512i *)v->n, *bv = (const __m512i *)b;
    const __m512i zero = _mm512_setzero_si512(), k0 = _mm512_load_si512(v->k0);
    for (unsigned k = 0; k < 2 * d; k++)
        t[k] = zero;
    for (unsigned i = 0; i < d; i++) {
        __m512i ai = _mm512_load_si512(a[i]);
        __m512i *ti = t + i;
        for (unsigned j = 0; j < d; j++)
            ti[j] = _mm512_madd52lo_epu64(ti[j], ai, bv[j]);
        for (unsigned j = 0; j < d; j++)
            ti[j + 1] = _mm512_madd52hi_epu64(ti[j + 1], ai, bv[j]);
        __m512i m = _mm512_madd52lo_epu64(zero, ti[0], k0);
        for (unsigned j = 0; j < d; j++)
            ti[j] = _mm512_madd52lo_epu64(ti[j], m, n[j]);
        for (unsigned j = 0; j < d; j++)
            ti[j + 1] = _mm512_madd52hi_epu64(ti[j + 1], m, n[j]);
        ti[1] = _mm512_add_epi64(ti[1], _mm512_srli_epi64(ti[0], 52));
    }
    const __m512i mask = _mm512_set1_epi64((long long)V8_MASK52);
    __m512i c = zero;
    for (unsigned j = 0; j < d; j++) {
        __m512i s = _mm512_add_epi64(t[d + j], c);
        _mm512_store_si512(r[j], _mm512_and_si512(s, mask));
        c = _mm512_srli_epi64(s, 52);
    }
}

/* acc[0..d] += x y[0..d) (x one digit per lane): the low halves at j, the
 * high halves at j + 1. */
V8_TARGET static inline __attribute__((always_inline)) void v8_row(__m512i *acc, __m512i x, const __m512i *y,
                                                                     const unsigned d)
{
#pragma GCC unroll 80
    for (unsigned j = 0; j < d; j++)
        acc[j] = _mm512_madd52lo_epu64(acc[j], x, y[j]);
#pragma GCC unroll 80
    for (unsigned j = 0; j < d; j++)
        acc[j + 1] = _mm512_madd52hi_epu64(acc[j + 1], x, y[j]);
}

/* v8_mul() for a digit count known at compile time: the D + 1 digits a row
 * touches live in registers (acc, shifted down one digit per row by
 * renaming once the loops are unrolled) instead of t in memory, where each
 * multiply-add was a load and a store. Same product, same bounds. */
V8_TARGET static inline __attribute__((always_inline)) void v8_mul_regs(struct v8 *v, uint64_t (*r)[V8_LANES],
                                                                          uint64_t (*a)[V8_LANES],
                                                                          uint64_t (*b)[V8_LANES], const unsigned d)
{
    const __m512i *n = (const __m512i *)v->n, *bv = (const __m512i *)b;
    const __m512i zero = _mm512_setzero_si512(), k0 = _mm512_load_si512(v->k0);
    const __m512i mask = _mm512_set1_epi64((long long)V8_MASK52);
    __m512i acc[V8_DIGITS + 1];
#pragma GCC unroll 80
    for (unsigned k = 0; k <= d; k++)
        acc[k] = zero;
#pragma GCC unroll 80
    for (unsigned i = 0; i < d; i++) {
        __m512i ai = _mm512_load_si512(a[i]);
        v8_row(acc, ai, bv, d);
        v8_row(acc, _mm512_madd52lo_epu64(zero, acc[0], k0), n, d);
        __m512i carry = _mm512_srli_epi64(acc[0], 52);
#pragma GCC unroll 80
        for (unsigned j = 0; j < d; j++)
            acc[j] = acc[j + 1];
        acc[d] = zero;
        acc[0] = _mm512_add_epi64(acc[0], carry);
    }
    __m512i c = zero;
#pragma GCC unroll 80
    for (unsigned j = 0; j < d; j++) {
        __m512i s = _mm512_add_epi64(acc[j], c);
        _mm512_store_si512(r[j], _mm512_and_si512(s, mask));
        c = _mm512_srli_epi64(s, 52);
    }
}

/* 1000-bit candidates (984-1035 bits) have 20 digits: the engine's default size. */
V8_TARGET static void v8_mul_20(struct v8 *v, uint64_t (*r)[V8_LANES], uint64_t (*a)[V8_LANES],
                                uint64_t (*b)[V8_LANES])
{
    v8_mul_regs(v, r, a, b, 20);
}

/* r = a b / R mod n per lane (v8_mul_mem()'s contract), by the unrolled
 * version where there is one for the size. */
static void v8_mul(struct v8 *v, uint64_t (*r)[V8_LANES], uint64_t (*a)[V8_LANES], uint64_t (*b)[V8_LANES])
{
    if (v->d == 20)
        v8_mul_20(v, r, a, b);
    else
        v8_mul_mem(v, r, a, b);
}

/* x = 2x in the lanes of `lanes` (x < 2n there: below 4n after). */
V8_TARGET static void v8_double(struct v8 *v, __mmask8 lanes)
{
    const __m512i mask = _mm512_set1_epi64((long long)V8_MASK52);
    __m512i c = _mm512_setzero_si512();
    for (unsigned j = 0; j < v->d; j++) {
        __m512i x = _mm512_load_si512(v->x[j]);
        __m512i s = _mm512_add_epi64(_mm512_mask_add_epi64(x, lanes, x, x), c);
        _mm512_store_si512(v->x[j], _mm512_and_si512(s, mask));
        c = _mm512_srli_epi64(s, 52);
    }
}
#else
static void v8_mul(struct v8 *v, uint64_t (*r)[V8_LANES], uint64_t (*a)[V8_LANES], uint64_t (*b)[V8_LANES])
{
    (void)v, (void)r, (void)a, (void)b;
    abort(); /* v8_supported() is false */
}
static void v8_double(struct v8 *v, unsigned char lanes)
{
    (void)v, (void)lanes;
    abort();
}
#endif

/* ---- one 20-digit residue across the lanes (the Lucas test) ---------------
 *
 * The Lucas test has one candidate, so eight candidates a product (above)
 * does not fit it. Here one residue of 20 digits of 52 bits lies across three
 * vectors, digit j in lane j (lanes 20-23 zero), and the two products of a
 * ladder step run together (d20_mul2()): the word-by-word Montgomery product
 * of the eight-lane code, a row per digit b_i of b (a b_i, then m n with m =
 * t_0 k0 mod 2^52 clearing the lowest digit t_0, then everything one lane
 * down). High halves go one digit up: they are multiply-added from copies of
 * a and n shifted up one lane, into the row's own lanes. The next row's m
 * waits only on the lowest digit, so that digit is kept on the scalar side:
 * the digit above it as it stood before m's row (read from the vector, whose
 * rows then run off the critical path) plus m's share of it, from two scalar
 * products. Same bounds as v8_mul(): inputs below 4n, outputs below 2n, here
 * plus a constant c <= 2n, digits renormalised. ~105 ns a step against ~230
 * for the two lanes of an eight-lane product it replaced (docs/prime.md). */
#define D20_DIGITS 20
#define D20_LANES  24 /* three vectors */

struct d20 {
    _Alignas(64) uint64_t n[D20_LANES];  /* the modulus */
    _Alignas(64) uint64_t nu[D20_LANES]; /* n one lane up: n_j in lane j + 1 */
    uint64_t k0;                         /* -1/n mod 2^52 */
};

#if defined(__x86_64__) && defined(__GNUC__)
#define LO52(x, y) (((x) * (y)) & V8_MASK52)
#define HI52(x, y) ((uint64_t)(((unsigned __int128)(x) * (y)) >> 52))

/* x's digits below 2^52 (carries up until no lane holds more). */
V8_TARGET static inline __attribute__((always_inline)) void d20_carry(__m512i *x)
{
    const __m512i mask = _mm512_set1_epi64((long long)V8_MASK52), zero = _mm512_setzero_si512();
    while (_mm512_cmpgt_epu64_mask(x[0], mask) | _mm512_cmpgt_epu64_mask(x[1], mask) |
           _mm512_cmpgt_epu64_mask(x[2], mask)) {
        __m512i c0 = _mm512_srli_epi64(x[0], 52), c1 = _mm512_srli_epi64(x[1], 52), c2 = _mm512_srli_epi64(x[2], 52);
        x[0] = _mm512_add_epi64(_mm512_and_si512(x[0], mask), _mm512_alignr_epi64(c0, zero, 7));
        x[1] = _mm512_add_epi64(_mm512_and_si512(x[1], mask), _mm512_alignr_epi64(c1, c0, 7));
        x[2] = _mm512_add_epi64(_mm512_and_si512(x[2], mask), _mm512_alignr_epi64(c2, c1, 7));
    }
}

/* r1 = a1 b1 / R + c1 and r2 = a2 b2 / R + c2 mod m->n (R = 2^1040), each
 * below 4n for a, b < 4n and c <= 2n; r may be a or b (written last). */
V8_TARGET static void d20_mul2(const struct d20 *m, uint64_t *r1, const uint64_t *a1, const uint64_t *b1,
                               const uint64_t *c1, uint64_t *r2, const uint64_t *a2, const uint64_t *b2,
                               const uint64_t *c2)
{
    const __m512i zero = _mm512_setzero_si512();
    __m512i x[3], y[3], xa[3], ya[3], xu[3], yu[3], n[3], nu[3];
    for (int k = 0; k < 3; k++) {
        x[k] = y[k] = zero;
        xa[k] = _mm512_load_si512(a1 + 8 * k);
        ya[k] = _mm512_load_si512(a2 + 8 * k);
        n[k] = _mm512_load_si512(m->n + 8 * k);
        nu[k] = _mm512_load_si512(m->nu + 8 * k);
    }
    for (int k = 0; k < 3; k++) { /* a one lane up */
        xu[k] = _mm512_alignr_epi64(xa[k], k ? xa[k - 1] : zero, 7);
        yu[k] = _mm512_alignr_epi64(ya[k], k ? ya[k - 1] : zero, 7);
    }
    const uint64_t k0 = m->k0, n0 = m->n[0], n1 = m->n[1];
    uint64_t tx = LO52(a1[0], b1[0]), ty = LO52(a2[0], b2[0]); /* the lowest digit */
    /* unrolled by two, not twenty: 10 KB less code (the lto-static binary's budget), the same
     * time a Lucas test (prime_bench --checks lucas_median_us, interleaved, on a shared host) */
#pragma GCC unroll 2
    for (int i = 0; i < D20_DIGITS; i++) {
        const __m512i bx = _mm512_set1_epi64((long long)b1[i]), by = _mm512_set1_epi64((long long)b2[i]);
        for (int k = 0; k < 3; k++) { /* + a b_i, summed apart so that x waits only for the add */
            x[k] = _mm512_add_epi64(x[k], _mm512_madd52hi_epu64(_mm512_madd52lo_epu64(zero, xa[k], bx), xu[k], bx));
            y[k] = _mm512_add_epi64(y[k], _mm512_madd52hi_epu64(_mm512_madd52lo_epu64(zero, ya[k], by), yu[k], by));
        }
        const uint64_t mx = (tx * k0) & V8_MASK52, my = (ty * k0) & V8_MASK52;
        if (i + 1 < D20_DIGITS) { /* the next lowest digit: digit 1 now, m's share, t_0's carry, a_0 b_i+1 */
            uint64_t ux = (uint64_t)_mm_extract_epi64(_mm512_castsi512_si128(x[0]), 1);
            uint64_t uy = (uint64_t)_mm_extract_epi64(_mm512_castsi512_si128(y[0]), 1);
            uint64_t cx = (tx + LO52(n0, mx)) >> 52, cy = (ty + LO52(n0, my)) >> 52;
            tx = ux + LO52(n1, mx) + HI52(n0, mx) + cx + LO52(a1[0], b1[i + 1]);
            ty = uy + LO52(n1, my) + HI52(n0, my) + cy + LO52(a2[0], b2[i + 1]);
        } else { /* the last carry, for digit 20 (lane 0 after the shift) */
            tx = (tx + LO52(n0, mx)) >> 52;
            ty = (ty + LO52(n0, my)) >> 52;
        }
        const __m512i mvx = _mm512_set1_epi64((long long)mx), mvy = _mm512_set1_epi64((long long)my);
        for (int k = 0; k < 3; k++) {
            x[k] = _mm512_add_epi64(_mm512_madd52lo_epu64(x[k], n[k], mvx), _mm512_madd52hi_epu64(zero, nu[k], mvx));
            y[k] = _mm512_add_epi64(_mm512_madd52lo_epu64(y[k], n[k], mvy), _mm512_madd52hi_epu64(zero, nu[k], mvy));
        }
        for (int k = 0; k < 3; k++) { /* one lane down; lane 0 (kept on the scalar side) drops out */
            x[k] = _mm512_alignr_epi64(k < 2 ? x[k + 1] : zero, x[k], 1);
            y[k] = _mm512_alignr_epi64(k < 2 ? y[k + 1] : zero, y[k], 1);
        }
    }
    x[0] = _mm512_add_epi64(x[0], _mm512_maskz_set1_epi64(1, (long long)tx));
    y[0] = _mm512_add_epi64(y[0], _mm512_maskz_set1_epi64(1, (long long)ty));
    for (int k = 0; k < 3; k++) {
        x[k] = _mm512_add_epi64(x[k], _mm512_load_si512(c1 + 8 * k));
        y[k] = _mm512_add_epi64(y[k], _mm512_load_si512(c2 + 8 * k));
    }
    d20_carry(x);
    d20_carry(y);
    for (int k = 0; k < 3; k++) {
        _mm512_store_si512(r1 + 8 * k, x[k]);
        _mm512_store_si512(r2 + 8 * k, y[k]);
    }
}
#else
static void d20_mul2(const struct d20 *m, uint64_t *r1, const uint64_t *a1, const uint64_t *b1, const uint64_t *c1,
                     uint64_t *r2, const uint64_t *a2, const uint64_t *b2, const uint64_t *c2)
{
    (void)m, (void)r1, (void)a1, (void)b1, (void)c1, (void)r2, (void)a2, (void)b2, (void)c2;
    abort(); /* v8_supported() is false */
}
#endif

struct prime_state {
    flint_rand_t rnd;     /* owned; its gmp_state is seeded at create */
    mpz_t start;          /* random start (or prime_next's argument) */
    mpz_t base;           /* first odd number > start, then window bases */
    mpz_t cand;           /* candidate under test; the result */
    mpz_t nm1, d, x, two; /* strong base-2 test scratch */
    fmpz_t f;             /* flint engine result (an mpz from FLINT's pool) */
    unsigned tune_primes; /* 0 = automatic (sieve_primes_for()) */
    unsigned tune_window; /* 0 = automatic (window_for()) */
    struct prime_stats stats;
    uint64_t seed_words[4];                     /* getrandom()'s words, or the fixed seed's */
    uint64_t fixed_seed;                        /* prime_state_create()'s seed; 0: seed_words */
    bool gmp_seeded;                            /* seed_gmp() ran */
    mp_limb_t lv[LUCAS_LIMBS], lw[LUCAS_LIMBS]; /* lucas_aes(): V_k, V_k+1; strong_base2(): x */
    mp_limb_t l2[LUCAS_LIMBS], lp[LUCAS_LIMBS]; /* lucas_aes(): 2R, PR; strong_base2(): R, -R mod n */
    mp_limb_t lt[2 * LUCAS_LIMBS];              /* both: a product */
    uint8_t sieve[WINDOW_CAP];                  /* 1 = offset k (base + 2k) is composite */
    uint16_t surv[WINDOW_CAP];                  /* a shared window's survivors, in order (hunt_list()) */
    mpz_t vn[8];                                /* test_offsets()' batch of candidates */
    struct v8 *v8;                              /* owned; NULL without AVX-512 IFMA */
    struct lanes *ln;                           /* owned; NULL until an AVX2 or AVX-512F engine runs */
    enum prime_vector vec;                      /* how the base-2 tests run (prime_state_vector()) */
};

static const char *const vector_names[PRIME_VECTOR_N] = {"scalar", "avx2", "avx512", "ifma"};

const char *prime_vector_name(enum prime_vector v)
{
    return (unsigned)v < PRIME_VECTOR_N ? vector_names[v] : "unknown";
}

int prime_vector_parse(const char *name, enum prime_vector *out)
{
    for (unsigned v = 0; name && v < PRIME_VECTOR_N; v++)
        if (strcmp(name, vector_names[v]) == 0) {
            *out = (enum prime_vector)v;
            return 0;
        }
    return -EINVAL;
}

bool prime_vector_has(enum prime_vector v)
{
    return (unsigned)v < PRIME_VECTOR_N && (vec_mask() & (1u << v));
}

enum prime_vector prime_vector_best(void)
{
    unsigned m = vec_mask();
    return (enum prime_vector)(31 - __builtin_clz(m));
}

/* Tests per batch with st's engine: 1 for the scalar one. */
static unsigned vec_lanes(const struct prime_state *st)
{
    return st->vec == PRIME_VECTOR_SCALAR ? 1 : st->vec == PRIME_VECTOR_AVX2 ? 4 : 8;
}

int prime_engine_parse(const char *name, enum prime_engine *out)
{
    if (name && strcmp(name, "flint") == 0) {
        *out = PRIME_ENGINE_FLINT;
        return 0;
    }
    if (name && strcmp(name, "sieve") == 0) {
        *out = PRIME_ENGINE_SIEVE;
        return 0;
    }
    return -EINVAL;
}

const char *prime_engine_name(enum prime_engine e)
{
    switch (e) {
    case PRIME_ENGINE_FLINT:
        return "flint";
    case PRIME_ENGINE_SIEVE:
        return "sieve";
    }
    return "unknown";
}

/* Automatic sieve size: odd primes 3..B used to sieve a `bits`-bit window.
 * Fitted to the --sweep measurements in docs/prime.md: the optimum B grows
 * roughly like bits^2 because a test costs ~bits^2.x and a residue ~bits. */
static unsigned sieve_primes_for(unsigned bits)
{
    if (bits <= 96)
        return 64; /* B = 313 */
    if (bits <= 192)
        return 256; /* B = 1621 */
    if (bits <= 384)
        return 2048; /* B = 17881 */
    if (bits <= 768)
        return 8192; /* B = 84047 */
    if (bits <= 1536)
        return 32768; /* B = 386117 */
    return 131072;    /* B = 1742539 */
}

/* Automatic window: odd offsets sieved at once. The next prime lies on average
 * ln(2^bits) = 0.69*bits away (0.35*bits odd offsets); a window of ~2*bits
 * offsets misses only with probability ~e^-5.8, and then the sieve moves on. */
static unsigned window_for(unsigned bits)
{
    unsigned w = (2 * bits + 63) & ~63u;
    return w > WINDOW_CAP ? WINDOW_CAP : w;
}

static int getrandom_all(void *buf, size_t len)
{
    unsigned char *p = buf;
    while (len > 0) {
        ssize_t n = getrandom(p, len, 0);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

struct prime_state *prime_state_create(uint64_t seed)
{
    struct prime_state *st = calloc(1, sizeof(*st));
    if (!st)
        return NULL;
    if (v8_supported()) {
        st->v8 = aligned_alloc(64, sizeof(*st->v8));
        if (!st->v8) {
            free(st);
            return NULL;
        }
        memset(st->v8, 0, sizeof(*st->v8));
    }
    if (prime_state_vector(st, prime_vector_best()) < 0) { /* the lanes' vectors, for AVX2 or AVX-512F */
        free(st->v8);
        free(st);
        return NULL;
    }

    uint64_t words[4];
    if (seed == 0) {
        if (getrandom_all(words, sizeof(words)) < 0) {
            free(st->v8);
            free(st->ln);
            free(st);
            return NULL;
        }
    } else {
        for (int i = 0; i < 4; i++)
            words[i] = seed;
    }

    /* FLINT 2.9: flint_randseed() seeds only the xorshift words, never the GMP
     * Mersenne Twister that fmpz_randprime() draws from; without this two
     * threads would produce the same primes. */
    flint_randinit(st->rnd);
    _flint_rand_init_gmp(st->rnd);
    memcpy(st->seed_words, words, sizeof(words));
    st->fixed_seed = seed; /* the Twister is seeded on the first prime (seed_gmp()) */
    flint_randseed(st->rnd, words[0], words[1] ^ 0x9e3779b97f4a7c15ull);

    mpz_init2(st->start, SCRATCH_BITS);
    mpz_init2(st->base, SCRATCH_BITS);
    mpz_init2(st->cand, SCRATCH_BITS);
    mpz_init2(st->nm1, SCRATCH_BITS);
    mpz_init2(st->d, SCRATCH_BITS);
    mpz_init2(st->x, 2 * SCRATCH_BITS);
    mpz_init_set_ui(st->two, 2);
    for (int i = 0; i < V8_LANES; i++)
        mpz_init2(st->vn[i], SCRATCH_BITS);
    fmpz_init(st->f);
    return st;
}

void prime_state_destroy(struct prime_state *st)
{
    if (!st)
        return;
    fmpz_clear(st->f);
    mpz_clears(st->start, st->base, st->cand, st->nm1, st->d, st->x, st->two, NULL);
    for (int i = 0; i < V8_LANES; i++)
        mpz_clear(st->vn[i]);
    free(st->v8);
    free(st->ln);
    flint_randclear(st->rnd);
    free(st);
}

void prime_thread_fini(void)
{
    flint_cleanup();
}

int prime_state_tune(struct prime_state *st, unsigned sieve_primes, unsigned window)
{
    if (sieve_primes > SIEVE_PRIMES_CAP || window > WINDOW_CAP)
        return -EINVAL;
    st->tune_primes = sieve_primes;
    st->tune_window = window;
    return 0;
}

int prime_state_vector(struct prime_state *st, enum prime_vector v)
{
    if (!prime_vector_has(v))
        return -ENOTSUP;
    if ((v == PRIME_VECTOR_AVX2 || v == PRIME_VECTOR_AVX512) && !st->ln) {
        /* cold: at create, or when a benchmark or test switches an IFMA state to these engines */
        st->ln = aligned_alloc(64, sizeof(*st->ln));
        if (!st->ln)
            return -ENOMEM;
        memset(st->ln, 0, sizeof(*st->ln));
    }
    st->vec = v;
    return 0;
}

enum prime_vector prime_state_vector_get(const struct prime_state *st)
{
    return st->vec;
}

void prime_state_stats(const struct prime_state *st, struct prime_stats *out)
{
    *out = st->stats;
}

/* The end of a strong base-2 test of n, n - 1 = d 2^s, once st->x = 2^d mod n
 * (st->nm1 = n - 1): 1 when n passes, 0 when it fails. */
static int strong_tail(struct prime_state *st, const mpz_t n, mp_bitcnt_t s)
{
    if (mpz_cmp_ui(st->x, 1) == 0 || mpz_cmp(st->x, st->nm1) == 0)
        return 1;
    for (mp_bitcnt_t i = 1; i < s; i++) {
        mpz_mul(st->x, st->x, st->x);
        mpz_tdiv_r(st->x, st->x, n);
        if (mpz_cmp(st->x, st->nm1) == 0)
            return 1;
        if (mpz_cmp_ui(st->x, 1) == 0)
            return 0;
    }
    return 0;
}

/* The strong probable-prime test to base 2 (BPSW's first half) by mpz_powm:
 * what strong_base2() below replaced, kept as the reference the tests and
 * prime_bench --checks compare it with (PRIME_CHECK_BASE2_GMP). */
static int strong_base2_gmp(struct prime_state *st, const mpz_t n)
{
    mpz_sub_ui(st->nm1, n, 1);
    mp_bitcnt_t s = mpz_scan1(st->nm1, 0);
    mpz_tdiv_q_2exp(st->d, st->nm1, s);
    mpz_powm(st->x, st->two, st->d, n);
    return strong_tail(st, n, s);
}

/* ---- BPSW's two halves in Montgomery form --------------------------------
 *
 * Both tests square (and multiply) residues mod n, reduced in Montgomery form
 * (R = 2^(64 nn)) by the word-by-word REDC that GMP's own mpz_powm uses, on
 * GMP's public mpn functions. */

/* When a test of the shared search may give up: once an answer below `key`
 * is known in *found (the candidate cannot be the answer then). Checked every
 * STOP_EVERY + 1 bits of the exponent (~30 us at 1000 bits), so the thread
 * that found the answer does not wait out a whole test of a candidate above
 * it (~0.5 ms) before it may answer. found == NULL: never. */
struct stop {
    const _Atomic uint32_t *found;
    uint32_t key;
};
#define STOP_EVERY 63u

static inline bool stopped(const struct stop *s)
{
    return s && s->found && atomic_load_explicit(s->found, memory_order_relaxed) < s->key;
}

struct mont {
    const mp_limb_t *n;
    mp_size_t nn;
    mp_limb_t ninv; /* -1/n mod 2^64 */
    mp_limb_t *t;   /* 2 nn limbs of product */
};

/* r = t / R mod n, r < n; t (2 nn limbs, < n R) is destroyed. After the step
 * for limb i, t[i] is 0 and keeps that step's carry, added in at the end. */
static void mont_redc(const struct mont *m, mp_limb_t *r)
{
    mp_limb_t *t = m->t;
    for (mp_size_t i = 0; i < m->nn; i++)
        t[i] = mpn_addmul_1(t + i, m->n, m->nn, t[i] * m->ninv);
    if (mpn_add_n(r, t + m->nn, t, m->nn) || mpn_cmp(r, m->n, m->nn) >= 0)
        mpn_sub_n(r, r, m->n, m->nn);
}

#if GMP_NUMB_BITS == 64 && defined(__x86_64__) && defined(__GNUC__)
/* ---- a square and its reduction in one pass (product scanning) -----------
 *
 * mpn_sqr() then mont_redc() write the 2 nn limbs of the square and read them
 * back nn times, one mpn_addmul_1() call per limb: about half of a scalar
 * prime's time went to those calls and a third to mpn_sqr() (perf, 1000-bit
 * primes). Here column k of the square and of the reduction are summed
 * together in three limbs (c2:c1:c0) held in registers, as the lanes kernels
 * do (lanes_tmpl.h): the square's cross terms once, doubled, then its middle
 * term; m_k = c0 ninv fixed at column k < nn; result limb k - nn written
 * after column k >= nn (no later column reads x_i for i <= k - nn, so r may
 * be x). A column sums at most 2 nn + 1 products below 2^128: three limbs
 * never overflow. The same value as mont_redc() (the result below n), so the
 * same primes. x86-64 only, where it was measured: elsewhere (arm64) GMP's
 * functions serve, as before. */
typedef unsigned __int128 u128;

/* (c2:c1:c0) += a b, the carries kept in the flags: GCC's code for the same
 * sum in C (unsigned __int128, compared for the carry) took about twice the
 * instructions, and the loops were slower than GMP's. */
static inline __attribute__((always_inline)) void mac(mp_limb_t *c0, mp_limb_t *c1, mp_limb_t *c2, mp_limb_t a,
                                                      mp_limb_t b)
{
    mp_limb_t h;
    __asm__("mulq %[b]\n\taddq %%rax, %[c0]\n\tadcq %%rdx, %[c1]\n\tadcq $0, %[c2]"
            : [c0] "+r"(*c0), [c1] "+r"(*c1), [c2] "+r"(*c2), "+a"(a), "=d"(h)
            : [b] "rm"(b)
            : "cc");
}

/* r = (x^2 / R mod n) 2^dbl, dbl 0 or 1, for nn limbs known at compile time
 * (every loop unrolled); m->t holds the m_k. Not reduced: the value is
 * x^2 / R + (some m) n / R, below (x^2 / n R + 1) n, doubled; returns the
 * bit above r's nn limbs. So x < n gives r < 2n, r < n after one
 * subtraction (mont_mul()); x < 4n with 16 n < R gives r < 2n, 4n doubled,
 * the bit 0 (strong_base2()'s ladder: no comparison, the doubling free). */
static inline __attribute__((always_inline)) mp_limb_t mont_sqr_fixed(const struct mont *m, mp_limb_t *r,
                                                                      const mp_limb_t *x, const mp_size_t nn,
                                                                      mp_limb_t dbl)
{
    const mp_limb_t *n = m->n, ninv = m->ninv;
    mp_limb_t *q = m->t;
    mp_limb_t c0 = 0, c1 = 0, c2 = 0, hb = 0; /* hb: the bit the doubling moves up a limb */
#pragma GCC unroll 64
    for (mp_size_t k = 0; k < 2 * nn - 1; k++) {
        mp_size_t lo = k >= nn ? k - nn + 1 : 0, qe = k < nn ? k : nn;
        mp_limb_t s0 = 0, s1 = 0, s2 = 0;
        mp_size_t i = lo, j = k - lo;
#pragma GCC unroll 32
        for (; i < j; i++, j--)
            mac(&s0, &s1, &s2, x[i], x[j]);
        s2 = (s2 << 1) | (s1 >> 63);
        s1 = (s1 << 1) | (s0 >> 63);
        s0 <<= 1;
        if (i == j)
            mac(&s0, &s1, &s2, x[i], x[i]);
        u128 s = ((u128)s1 << 64) | s0, t = (((u128)c1 << 64) | c0) + s;
        c2 += s2 + (t < s);
        c0 = (mp_limb_t)t;
        c1 = (mp_limb_t)(t >> 64);
#pragma GCC unroll 32
        for (i = lo; i < qe; i++)
            mac(&c0, &c1, &c2, q[i], n[k - i]);
        if (k < nn) {
            mp_limb_t mk = c0 * ninv;
            q[k] = mk;
            mac(&c0, &c1, &c2, mk, n[0]); /* c0 becomes 0 */
        } else {
            r[k - nn] = (c0 << dbl) | hb;
            hb = (c0 >> 63) & dbl;
        }
        c0 = c1;
        c1 = c2;
        c2 = 0;
    }
    r[nn - 1] = (c0 << dbl) | hb; /* column 2 nn - 1 has no terms: the carry */
    return (c1 << dbl) | ((c0 >> 63) & dbl);
}

/* The square of a 16-limb residue (961 to 1024 bits: the default 1000-bit
 * primes). Other sizes, and the Lucas test's products of two residues, stay
 * on GMP's functions: the same loops not unrolled, for any nn, measured
 * slower than those (prime_bench --checks), and each size unrolled costs
 * ~10 KB of code. */
static __attribute__((noinline)) mp_limb_t mont_sqr_16(const struct mont *m, mp_limb_t *r, const mp_limb_t *x,
                                                       mp_limb_t dbl)
{
    return mont_sqr_fixed(m, r, x, 16, dbl);
}

/* r = a b, in Montgomery form and < n (a square when a == b); r may be a or b. */
static void mont_mul(const struct mont *m, mp_limb_t *r, const mp_limb_t *a, const mp_limb_t *b)
{
    if (a == b && m->nn == 16) {
        if (mont_sqr_16(m, r, a, 0) || mpn_cmp(r, m->n, 16) >= 0)
            mpn_sub_n(r, r, m->n, 16);
        return;
    }
    if (a == b)
        mpn_sqr(m->t, a, m->nn);
    else
        mpn_mul_n(m->t, a, b, m->nn);
    mont_redc(m, r);
}

/* strong_base2()'s ladder in mont_sqr_16(), unreduced (x < 4n): n of 16 limbs
 * below 2^1020 (16 n < R). */
static bool lazy_16(const struct mont *m)
{
    return m->nn == 16 && m->n[15] >> 60 == 0;
}
#else
static bool lazy_16(const struct mont *m)
{
    (void)m;
    return false;
}

static mp_limb_t mont_sqr_16(const struct mont *m, mp_limb_t *r, const mp_limb_t *x, mp_limb_t dbl)
{
    (void)m, (void)r, (void)x, (void)dbl;
    abort(); /* lazy_16() is false */
}

/* r = a b, in Montgomery form and < n (a square when a == b); r may be a or b. */
static void mont_mul(const struct mont *m, mp_limb_t *r, const mp_limb_t *a, const mp_limb_t *b)
{
    if (a == b)
        mpn_sqr(m->t, a, m->nn);
    else
        mpn_mul_n(m->t, a, b, m->nn);
    mont_redc(m, r);
}
#endif

/* r = a b - c, all in Montgomery form and < n; r may be a or b. */
static void mont_mul_sub(const struct mont *m, mp_limb_t *r, const mp_limb_t *a, const mp_limb_t *b, const mp_limb_t *c)
{
    mont_mul(m, r, a, b);
    if (mpn_sub_n(r, r, c, m->nn))
        mpn_add_n(r, r, m->n, m->nn);
}

/* The nn limbs of (v R mod n), zero-padded, with st->x as scratch. */
static void mont_const(struct prime_state *st, const mpz_t n, unsigned long v, mp_limb_t *out, mp_size_t nn)
{
    mpz_set_ui(st->x, v);
    mpz_mul_2exp(st->x, st->x, (mp_bitcnt_t)nn * GMP_NUMB_BITS);
    mpz_tdiv_r(st->x, st->x, n);
    mp_size_t k = (mp_size_t)mpz_size(st->x);
    mpn_copyi(out, mpz_limbs_read(st->x), k);
    mpn_zero(out + k, nn - k);
}

static mp_limb_t limb_inverse(mp_limb_t n0)
{
    mp_limb_t x = n0; /* n0 n0 = 1 mod 8: 3 bits; each step doubles them */
    for (int i = 0; i < 5; i++)
        x *= 2 - n0 * x;
    return x;
}

/* Arithmetic mod the odd n, with st's product scratch. */
static struct mont mont_of(struct prime_state *st, const mpz_t n)
{
    const mp_limb_t *limbs = mpz_limbs_read(n);
    return (struct mont){.n = limbs, .nn = (mp_size_t)mpz_size(n), .ninv = -limb_inverse(limbs[0]), .t = st->lt};
}

/* The strong probable-prime test to base 2 of an odd n > 2 (any size up
 * to LUCAS_LIMBS limbs), in Montgomery form: with n - 1 = d 2^s, d odd, n
 * passes when 2^d = 1 or 2^(d 2^r) = -1 (mod n) for some 0 <= r < s. The
 * base being 2, a multiplication by it is a doubling (a shift and at most
 * one subtraction), so 2^d costs one squaring per bit of d; mpz_powm, which
 * cannot know its base is 2, multiplies by a window of odd powers besides
 * (~1/6 more products at 1000 bits). Same answers as strong_base2_gmp(), or
 * -1 when `stop` says so. */
static int strong_base2(struct prime_state *st, const mpz_t n, const struct stop *stop)
{
    struct mont m = mont_of(st, n);
    mp_size_t nn = m.nn;
    mp_limb_t *x = st->lv, *one = st->l2, *minus_one = st->lp;

    mpz_sub_ui(st->nm1, n, 1);
    mp_bitcnt_t s = mpz_scan1(st->nm1, 0);
    mpz_tdiv_q_2exp(st->d, st->nm1, s);
    /* d's top (up to 6) bits at once: x = 2^e R mod n, e < 64 */
    size_t bits = mpz_sizeinbase(st->d, 2), i = bits > 6 ? bits - 6 : 0;
    unsigned long e = 0;
    for (size_t b = bits; b-- > i;)
        e = 2 * e + (unsigned long)mpz_tstbit(st->d, b);
    mont_const(st, n, 1ul << e, x, nn);
    mont_const(st, n, 1, one, nn);
    mpn_sub_n(minus_one, m.n, one, nn);
    if (lazy_16(&m)) {
        /* x < 4n throughout, each doubling inside the square; bit i of d is
         * bit i + s of n (s >= 1) */
        const mp_limb_t *nl = m.n;
        while (i-- > 0) {
            if ((i & STOP_EVERY) == 0 && stopped(stop))
                return -1;
            size_t b = i + s;
            mont_sqr_16(&m, x, x, (nl[b / GMP_NUMB_BITS] >> (b % GMP_NUMB_BITS)) & 1);
        }
        while (mpn_cmp(x, m.n, nn) >= 0)
            mpn_sub_n(x, x, m.n, nn);
    } else {
        while (i-- > 0) {
            if ((i & STOP_EVERY) == 0 && stopped(stop))
                return -1;
            mont_mul(&m, x, x, x);
            if (mpz_tstbit(st->d, i) && (mpn_lshift(x, x, nn, 1) || mpn_cmp(x, m.n, nn) >= 0))
                mpn_sub_n(x, x, m.n, nn); /* x < n, so 2x < 2n: once is enough */
        }
    }
    if (mpn_cmp(x, one, nn) == 0 || mpn_cmp(x, minus_one, nn) == 0)
        return 1;
    for (mp_bitcnt_t r = 1; r < s; r++) {
        mont_mul(&m, x, x, x);
        if (mpn_cmp(x, minus_one, nn) == 0)
            return 1;
        if (mpn_cmp(x, one, nn) == 0)
            return 0;
    }
    return 0;
}

/* Strong base-2 tests of the odd numbers st->vn[0..cnt) (1 <= cnt <= 8, each
 * >= 3 and below 2^(52 V8_DIGITS - 5)), eight lanes at once (the comment
 * above struct v8): res[j] = 1 when vn[j] passes, 0 when it fails. The lanes
 * from cnt up test a copy of vn[0]. Same answers as strong_base2(); returns 0,
 * or -1 when `stop` says so (its key is the lowest lane's). Needs st->v8. */
static int strong_base2_v8(struct prime_state *st, unsigned cnt, int *res, const struct stop *stop)
{
    struct v8 *v = st->v8;
    mpz_t *n = st->vn;
    mp_bitcnt_t s[V8_LANES];
    size_t maxbits = 0, maxd = 0;
    for (unsigned j = 0; j < V8_LANES; j++) {
        if (j >= cnt)
            mpz_set(n[j], n[0]);
        size_t b = mpz_sizeinbase(n[j], 2);
        s[j] = mpz_scan1(n[j], 1); /* n odd: the zeros at the bottom of n - 1 */
        maxbits = b > maxbits ? b : maxbits;
        maxd = b - s[j] > maxd ? b - s[j] : maxd; /* d = (n - 1) / 2^s = n >> s has b - s bits */
    }
    unsigned dg = v8_digits(maxbits);
    v->d = dg;
    /* the ladder runs over the exponents' low `low` bits; the bits above it
     * (at most 6) give each lane's start x = 2^h R mod n at once */
    size_t low = maxd > 6 ? maxd - 6 : 0;
    memset(v->bit, 0, low);
    memset(v->e, 0, sizeof(v->e[0]) * dg);
    for (unsigned j = 0; j < V8_LANES; j++) {
        const mp_limb_t *l = mpz_limbs_read(n[j]);
        v->k0[j] = -limb_inverse(l[0]) & V8_MASK52;
        v->e[0][j] = 1;
        v8_set(v->n, dg, j, n[j]);
        mpz_fdiv_q_2exp(st->x, n[j], s[j] + low);
        unsigned long h = mpz_get_ui(st->x);
        mpz_set_ui(st->x, 1);
        mpz_mul_2exp(st->x, st->x, h + 52ul * dg);
        mpz_tdiv_r(st->x, st->x, n[j]);
        v8_set(v->x, dg, j, st->x);
        /* bit i of d is bit i + s of n (s >= 1); a shorter d's bits above its
         * top are 0 (the limbs past mpz_size() are not n's) */
        size_t top = mpz_sizeinbase(n[j], 2) - s[j];
        for (size_t i = 0; i < low && i < top; i++) {
            size_t b = i + s[j];
            v->bit[i] |= (uint8_t)(((l[b / GMP_NUMB_BITS] >> (b % GMP_NUMB_BITS)) & 1) << j);
        }
    }
    for (size_t i = low; i-- > 0;) {
        if ((i & STOP_EVERY) == 0 && stopped(stop))
            return -1;
        v8_mul(v, v->x, v->x, v->x);
        if (v->bit[i])
            v8_double(v, v->bit[i]);
    }
    v8_mul(v, v->x, v->x, v->e); /* out of Montgomery form: 2^d mod n (below n + 1) */
    for (unsigned j = 0; j < cnt; j++) {
        v8_get(st->x, v->x, dg, j);
        if (mpz_cmp(st->x, n[j]) >= 0)
            mpz_sub(st->x, st->x, n[j]);
        mpz_sub_ui(st->nm1, n[j], 1);
        res[j] = strong_tail(st, n[j], s[j]);
    }
    return 0;
}

/* The lanes kernel of st's engine (lanes.h): x86-64 only, where
 * prime_vector_has() can be true for AVX2 and AVX-512F. */
static void lanes_ladder(const struct prime_state *st, size_t hi, size_t lo, int out)
{
#if defined(__x86_64__) && defined(__GNUC__)
    if (st->vec == PRIME_VECTOR_AVX512)
        lanes_ladder_avx512(st->ln, hi, lo, out);
    else
        lanes_ladder_avx2(st->ln, hi, lo, out);
#else
    (void)st, (void)hi, (void)lo, (void)out;
    abort(); /* prime_vector_has() is false for both */
#endif
}

/* strong_base2_v8() with the AVX-512F (eight lanes) or AVX2 (four lanes)
 * kernel of lanes.h: the same preparation in digits of 29 or 28 bits, the ladder in
 * pieces of STOP_EVERY + 1 bits between two looks at `stop`. Strong base-2
 * tests of st->vn[0..cnt) (1 <= cnt <= the engine's lanes); the lanes from
 * cnt up test a copy of vn[0]. Same answers as strong_base2(); returns 0, or
 * -1 when `stop` says so. Needs st->ln and an engine that has it. */
static int strong_base2_lanes(struct prime_state *st, unsigned cnt, int *res, const struct stop *stop)
{
    struct lanes *v = st->ln;
    const unsigned nl = vec_lanes(st);
    mpz_t *n = st->vn;
    mp_bitcnt_t s[LANES_MAX];
    size_t maxbits = 0, maxd = 0;
    for (unsigned j = 0; j < nl; j++) {
        if (j >= cnt)
            mpz_set(n[j], n[0]);
        size_t b = mpz_sizeinbase(n[j], 2);
        s[j] = mpz_scan1(n[j], 1);
        maxbits = b > maxbits ? b : maxbits;
        maxd = b - s[j] > maxd ? b - s[j] : maxd;
    }
    unsigned dg = lanes_digits(maxbits), wd = lanes_width(maxbits);
    v->d = dg;
    v->w = wd;
    v->lanes = nl;
    size_t low = maxd > 6 ? maxd - 6 : 0;
    memset(v->bit, 0, low);
    for (unsigned j = 0; j < nl; j++) {
        const mp_limb_t *l = mpz_limbs_read(n[j]);
        v->k0[j] = -limb_inverse(l[0]) & ((1ull << wd) - 1);
        digits_set_w(v->n + j, nl, dg, n[j], wd);
        mpz_fdiv_q_2exp(st->x, n[j], s[j] + low);
        unsigned long h = mpz_get_ui(st->x);
        mpz_set_ui(st->x, 1);
        mpz_mul_2exp(st->x, st->x, h + (unsigned long)wd * dg);
        mpz_tdiv_r(st->x, st->x, n[j]);
        digits_set_w(v->x + j, nl, dg, st->x, wd);
        size_t top = mpz_sizeinbase(n[j], 2) - s[j];
        for (size_t i = 0; i < low && i < top; i++) {
            size_t b = i + s[j];
            v->bit[i] |= (uint8_t)(((l[b / GMP_NUMB_BITS] >> (b % GMP_NUMB_BITS)) & 1) << j);
        }
    }
    for (size_t i = low; i > 0;) {
        if (stopped(stop))
            return -1;
        size_t lo = (i - 1) & ~(size_t)STOP_EVERY;
        lanes_ladder(st, i, lo, 0);
        i = lo;
    }
    lanes_ladder(st, 0, 0, 1); /* out of Montgomery form: 2^d mod n (at most n) */
    for (unsigned j = 0; j < cnt; j++) {
        digits_get_w(st->x, v->x + j, nl, dg, wd);
        if (mpz_cmp(st->x, n[j]) >= 0)
            mpz_sub(st->x, st->x, n[j]);
        mpz_sub_ui(st->nm1, n[j], 1);
        res[j] = strong_tail(st, n[j], s[j]);
    }
    return 0;
}

/* The batch of st's engine: strong_base2_v8() or strong_base2_lanes(). */
static int strong_base2_batch(struct prime_state *st, unsigned cnt, int *res, const struct stop *stop)
{
    return st->vec == PRIME_VECTOR_IFMA ? strong_base2_v8(st, cnt, res, stop) : strong_base2_lanes(st, cnt, res, stop);
}

/* val = c R mod n and minus = 2n - val, as digits across the lanes (st->x
 * and st->d as scratch). */
static void d20_const(struct prime_state *st, const mpz_t n, unsigned long c, uint64_t *val, uint64_t *minus)
{
    mpz_set_ui(st->x, c);
    mpz_mul_2exp(st->x, st->x, 52ul * D20_DIGITS);
    mpz_tdiv_r(st->x, st->x, n);
    digits_set(val, 1, D20_LANES, st->x);
    mpz_mul_2exp(st->d, n, 1);
    mpz_sub(st->x, st->d, st->x);
    digits_set(minus, 1, D20_LANES, st->x);
}

/* lucas_aes()'s ladder on the vector unit, for n of 20 digits: a bit's two
 * products (V_k V_k+1, and V_k^2 or V_k+1^2) are independent, so they are
 * d20_mul2()'s pair, each then plus 2n - P R or 2n - 2 R (Montgomery form,
 * below 4n). The checks after the ladder run on mpz. Same answers as the
 * scalar ladder; -1 when `stop` says so. */
static int lucas_d20(struct prime_state *st, const mpz_t n, unsigned long p, const struct stop *stop)
{
    struct d20 m;
    _Alignas(64) uint64_t v[D20_LANES], w[D20_LANES], cp[D20_LANES], c2[D20_LANES], one[D20_LANES];
    memset(&m, 0, sizeof(m));
    digits_set(m.n, 1, D20_LANES, n);
    digits_set(m.nu + 1, 1, D20_LANES - 1, n);
    m.k0 = -limb_inverse(mpz_getlimbn(n, 0)) & V8_MASK52;
    memset(one, 0, sizeof(one));
    one[0] = 1;
    d20_const(st, n, 2, v, c2); /* V_0 = 2 */
    d20_const(st, n, p, w, cp); /* V_1 = P */
    /* n + 1 = d 2^s; (v, w) = (V_k, V_k+1) from (V_0, V_1) along d's bits */
    mpz_add_ui(st->nm1, n, 1);
    mp_bitcnt_t s = mpz_scan1(st->nm1, 0);
    mpz_tdiv_q_2exp(st->d, st->nm1, s);
    for (size_t i = mpz_sizeinbase(st->d, 2); i-- > 0;) {
        if ((i & STOP_EVERY) == 0 && stopped(stop))
            return -1;
        if (mpz_tstbit(st->d, i))
            d20_mul2(&m, v, v, w, cp, w, w, w, c2); /* V_2k+1 = V_k V_k+1 - P, V_2k+2 = V_k+1^2 - 2 */
        else
            d20_mul2(&m, w, v, w, cp, v, v, v, c2); /* V_2k+1, V_2k = V_k^2 - 2 */
    }
    memset(cp, 0, sizeof(cp));
    d20_mul2(&m, v, v, one, cp, w, w, one, cp); /* out of Montgomery form (below 2n) */
    digits_get(st->x, v, 1, D20_DIGITS);         /* V_d */
    if (mpz_cmp(st->x, n) >= 0)
        mpz_sub(st->x, st->x, n);
    mpz_sub_ui(st->nm1, n, 2);
    if (mpz_cmp_ui(st->x, 2) == 0 || mpz_cmp(st->x, st->nm1) == 0)
        return 1;
    for (mp_bitcnt_t r = 0; r + 1 < s; r++) {
        if (mpz_sgn(st->x) == 0)
            return 1;
        mpz_mul(st->x, st->x, st->x);
        mpz_sub_ui(st->x, st->x, 2);
        mpz_mod(st->x, st->x, n);
    }
    return 0;
}

/* The almost extra strong Lucas test (Grantham, "Frobenius pseudoprimes",
 * 2001) of an odd n > 2 (any size up to LUCAS_LIMBS limbs): Q = 1 and P the
 * first of 3, 4, 5, ... with Jacobi(P^2 - 4 | n) = -1; with n + 1 = d 2^s,
 * d odd, n passes when V_d = +-2 (mod n) or V_(d 2^r) = 0 (mod n) for some
 * 0 <= r < s - 1. A prime always passes (with the Jacobi symbol -1,
 * V_(n+1) = 2 and V_2k = V_k^2 - 2 force one of them). With Q = 1 the ladder
 * needs V only: one squaring and one product per bit of d, where FLINT's
 * Lucas test with Selfridge's Q tracks U, V and Q^k (three products per bit,
 * and a division after each): ~3x mpz_powm's strong base-2 test there
 * against ~2x here (docs/prime.md). Returns 1 for a probable prime, 0 for a
 * composite, -1 when `stop` says so. */
static int lucas_aes(struct prime_state *st, const mpz_t n, const struct stop *stop)
{
    if (mpz_perfect_square_p(n))
        return 0; /* no P has Jacobi -1 for a square */
    unsigned long p = 3;
    for (;; p++) {
        int j = mpz_ui_kronecker(p * p - 4, n);
        if (j == -1)
            break;
        if (j == 0) /* n shares a factor with p^2 - 4: only a tiny n may be that factor */
            return mpz_cmp_ui(n, p * p - 4) <= 0 && n_is_prime(mpz_get_ui(n));
    }
    if (st->vec == PRIME_VECTOR_IFMA && v8_digits(mpz_sizeinbase(n, 2)) == 20)
        return lucas_d20(st, n, p, stop);
    struct mont m = mont_of(st, n);
    mp_size_t nn = m.nn;
    mp_limb_t *v = st->lv, *w = st->lw, *two = st->l2, *pr = st->lp;
    mont_const(st, n, 2, two, nn);
    mont_const(st, n, p, pr, nn);

    /* n + 1 = d 2^s; (V_k, V_(k+1)) from (V_0, V_1) = (2, P) along d's bits */
    mpz_add_ui(st->nm1, n, 1);
    mp_bitcnt_t s = mpz_scan1(st->nm1, 0);
    mpz_tdiv_q_2exp(st->d, st->nm1, s);
    mpn_copyi(v, two, nn);
    mpn_copyi(w, pr, nn);
    for (size_t i = mpz_sizeinbase(st->d, 2); i-- > 0;) {
        if ((i & STOP_EVERY) == 0 && stopped(stop))
            return -1;
        if (mpz_tstbit(st->d, i)) {
            mont_mul_sub(&m, v, v, w, pr);  /* V_2k+1 = V_k V_k+1 - P */
            mont_mul_sub(&m, w, w, w, two); /* V_2k+2 = V_k+1^2 - 2 */
        } else {
            mont_mul_sub(&m, w, v, w, pr);  /* V_2k+1 */
            mont_mul_sub(&m, v, v, v, two); /* V_2k = V_k^2 - 2 */
        }
    }
    if (mpn_cmp(v, two, nn) == 0)
        return 1;
    mpn_sub_n(w, m.n, two, nn); /* -2 */
    if (mpn_cmp(v, w, nn) == 0)
        return 1;
    for (mp_bitcnt_t r = 0; r + 1 < s; r++) {
        if (mpn_zero_p(v, nn))
            return 1;
        mont_mul_sub(&m, v, v, v, two);
    }
    return 0;
}

/* The Lucas half of BPSW for a sieve candidate. A one-limb n goes to
 * n_is_prime() instead: BPSW is deterministic below 2^64 and costs ~1 us
 * there. */
static int lucas(struct prime_state *st, const mpz_t n, const struct stop *stop)
{
    if (mpz_size(n) == 1)
        return n_is_prime(mpz_getlimbn(n, 0));
    return lucas_aes(st, n, stop);
}

/* Marks in s[0..w) the odd offsets k with base + 2k divisible by one of
 * primes[i..end) (limbs, n: the base). The residue of the base mod each prime
 * is computed once per window and used at once, so no per-prime table is kept
 * (a second window is rare: see window_for()). Primes are packed into products
 * that fit a limb, so one mpn_mod_1() over the base serves 3-5 of them; the
 * rest is one 64-bit remainder per prime. `shared`: other threads mark the same
 * window at the same time (the hunt's sieve chunks), so each mark is a relaxed
 * atomic store (a plain byte store on x86 and arm64); marks are idempotent, so
 * the order does not matter. Inlined into its two callers: each gets its own
 * copy with `shared` fixed. */
static inline __attribute__((always_inline)) void sieve_marks(const mp_limb_t *limbs, mp_size_t n, uint8_t *s,
                                                              const uint32_t *primes, unsigned i, unsigned end,
                                                              unsigned w, bool shared)
{
    while (i < end) {
        mp_limb_t prod = primes[i];
        unsigned j = i + 1;
        while (j < end) {
            mp_limb_t next;
            if (__builtin_mul_overflow(prod, primes[j], &next))
                break;
            prod = next;
            j++;
        }
        mp_limb_t r = mpn_mod_1(limbs, n, prod);
        for (; i < j; i++) {
            uint32_t p = primes[i];
            uint32_t rp = (uint32_t)(r % p);
            uint32_t t = rp ? p - rp : 0;                 /* base + t = 0 mod p */
            uint32_t k = (t & 1) ? (t + p) >> 1 : t >> 1; /* 2k = t mod p */
            for (; k < w; k += p) {
                if (shared)
                    __atomic_store_n(&s[k], 1, __ATOMIC_RELAXED);
                else
                    s[k] = 1;
            }
        }
    }
}

/* Sieves the window [base, base + 2w) of odd numbers: sieve[k] = 1 when
 * base + 2k has a factor among primes[0..np). */
static void sieve_window(struct prime_state *st, const uint32_t *primes, unsigned np, unsigned w)
{
    memset(st->sieve, 0, w);
    sieve_marks(mpz_limbs_read(st->base), (mp_size_t)mpz_size(st->base), st->sieve, primes, 0, np, w, false);
}

/* Offsets of s[0..w) left unmarked: the window's candidates. */
static unsigned survivors(const uint8_t *s, unsigned w)
{
    unsigned n = 0;
    for (unsigned k = 0; k < w; k++)
        n += !s[k];
    return n;
}

/* The fewest candidates of `bits` bits worth a batch of st's engine (fewer run
 * one by one): about what a batch costs in strong_base2() tests, rounded up
 * (prime_bench --checks: base2_batch_per_base2). */
static unsigned min_lanes(const struct prime_state *st, size_t bits)
{
    switch (st->vec) {
    case PRIME_VECTOR_IFMA:
        return V8_MIN_LANES(v8_digits(bits));
    case PRIME_VECTOR_AVX512:
        return 4;
    default:
        return 3;
    }
}

/* The key of an answer at odd offset k: 2k for a probable prime, 2k + 1 when
 * base + 2k is already past max_bits bits. Keys order as offsets do. */
#define HUNT_NONE UINT32_MAX /* no answer */

/* Tests the sieve survivors among offsets [lo, hi) of o's window (o's base
 * and sieve) with st's scratch, in order. Returns the first answer's key, the
 * answer left in st->cand; HUNT_NONE when there is none, or as soon as *found
 * (NULL when nobody else searches) holds a lower one. With st->vector the
 * survivors go in batches of eight to strong_base2_v8() (a batch of fewer than
 * V8_MIN_LANES, at a range's end, one by one to strong_base2()): the
 * survivors after the answer in its batch are tested for nothing, and the
 * answer is the same. */
static uint32_t test_offsets(struct prime_state *st, const struct prime_state *o, unsigned lo, unsigned hi,
                             unsigned max_bits, _Atomic uint32_t *found)
{
    unsigned lanes = max_bits >= V8_MIN_BITS ? vec_lanes(st) : 1;
    unsigned k = lo;
    for (;;) {
        unsigned ks[V8_LANES], cnt = 0;
        uint32_t past = HUNT_NONE;
        for (; k < hi && cnt < lanes; k++) {
            if (o->sieve[k])
                continue;
            mpz_add_ui(st->vn[cnt], o->base, 2ul * k);
            if (mpz_sizeinbase(st->vn[cnt], 2) > max_bits) {
                past = 2 * k + 1; /* and every offset after it */
                k = hi;
                break;
            }
            ks[cnt++] = k;
        }
        if (cnt == 0)
            return past;
        if (found && atomic_load_explicit(found, memory_order_relaxed) < 2 * ks[0])
            return HUNT_NONE;
        int res[V8_LANES] = {0}; /* set by a batch; {0} for compilers that cannot see it (arm64: no batch) */
        size_t nbits = mpz_sizeinbase(st->vn[cnt - 1], 2); /* the largest sets the digits */
        bool batch = lanes > 1 && nbits >= V8_MIN_BITS && cnt >= min_lanes(st, nbits);
        if (batch) {
            struct stop stop = {found, 2 * ks[0]};
            st->stats.batches++;
            if (strong_base2_batch(st, cnt, res, &stop) < 0) {
                st->stats.stopped++;
                return HUNT_NONE;
            }
        }
        for (unsigned j = 0; j < cnt; j++) {
            struct stop stop = {found, 2 * ks[j]};
            st->stats.tests++;
            int r = batch ? res[j] : strong_base2(st, st->vn[j], &stop);
            if (r > 0) {
                st->stats.lucas++;
                r = lucas(st, st->vn[j], &stop);
            }
            if (r > 0) {
                mpz_set(st->cand, st->vn[j]);
                return 2 * ks[j];
            }
            if (r < 0) {
                st->stats.stopped++;
                return HUNT_NONE;
            }
        }
        if (past != HUNT_NONE)
            return past;
    }
}

static uint32_t hunt_window(struct prime_state *st, struct prime_hunt *h, unsigned np, unsigned w, unsigned max_bits);

/* Smallest BPSW probable prime > st->start, left in st->cand. Returns 1 when
 * found, 0 when the next candidate would exceed max_bits bits. With h, each
 * window's sieve and tests are offered to helpers (hunt_window()): the same
 * answer. */
static int sieve_next(struct prime_state *st, struct prime_hunt *h, unsigned max_bits)
{
    unsigned bits = (unsigned)mpz_sizeinbase(st->start, 2);
    unsigned np = st->tune_primes ? st->tune_primes : sieve_primes_for(bits);
    if (!st->tune_primes && st->vec != PRIME_VECTOR_SCALAR && bits >= V8_MIN_BITS)
        np /= st->vec == PRIME_VECTOR_IFMA ? 4 : 2; /* cheaper tests: the balance point moves down (docs/prime.md) */
    unsigned w = st->tune_window ? st->tune_window : window_for(bits);
    /* Filled on the first sieve call, so a flint-only process never pays. */
    pthread_once(&odd_primes_once, fill_odd_primes);

    mpz_add_ui(st->base, st->start, mpz_odd_p(st->start) ? 2 : 1);
    for (;;) {
        st->stats.windows++;
        uint32_t key;
        if (h) {
            key = hunt_window(st, h, np, w, max_bits);
        } else {
            sieve_window(st, odd_primes, np, w);
            st->stats.survivors += survivors(st->sieve, w);
            key = test_offsets(st, st, 0, w, max_bits, NULL);
        }
        if (key != HUNT_NONE) {
            if (key & 1)
                return 0;
            mpz_add_ui(st->cand, st->base, key); /* a helper's answer is in its own scratch */
            return 1;
        }
        mpz_add_ui(st->base, st->base, 2ul * w);
    }
}

/* ---- the shared search (prime.h) ----------------------------------------
 *
 * Protocol. The owner writes the window (its base, a zeroed sieve, w,
 * max_bits) and resets the counters and `found` while the hunt is closed
 * (epoch even), then opens it with a release store of an odd epoch. A helper
 * reads the epoch (acquire), announces itself in `helpers` (seq_cst), and goes
 * on only if the epoch is still the one it read; the owner closes by storing
 * the next even epoch (seq_cst) and waits for `helpers` to drop to 0 (seq_cst)
 * before it reads `found` or touches the window again. Of the two (Dekker) at
 * least one sees the other: the helper leaves, or the owner waits for it.
 *
 * An open window has two phases. First its sieve, cut into chunks of
 * SIEVE_CHUNK sieving primes claimed with a fetch-add on `chunk`; each chunk
 * is counted in `sieved` (release) when its marks are in. Once `sieved`
 * counts every chunk (acquire: every mark is visible), the owner lists the
 * window's survivors in order (its `surv`, `nsurv` of them) and raises `listed`
 * (release). Then its tests, pieces of `piece` survivors (PRIME_PIECE, or
 * PRIME_PIECE_VECTOR when the owner batches its tests: exactly the serial
 * search's batches) claimed with a fetch-add on `next`, which a helper starts
 * only once it sees `listed` (acquire). A thread that finds the chunks all
 * claimed but the list not out waits for it (a few tens of microseconds).
 * `found` only decreases (CAS), so a stale read of it costs a needless test,
 * never a skipped one. */
#define SIEVE_CHUNK 2048 /* sieving primes per chunk: at 1000 bits 16 chunks (scalar), 8 (avx2, avx512), 4 (ifma) */

struct prime_hunt {
    _Alignas(64) _Atomic uint64_t epoch; /* odd while a window is open */
    _Atomic unsigned helpers;            /* threads between entry and exit */
    _Alignas(64) _Atomic unsigned chunk; /* the next sieve chunk to claim */
    _Atomic unsigned sieved;             /* sieve chunks whose marks are in */
    _Atomic unsigned listed;             /* 1: the owner's surv and nsurv are out */
    _Atomic unsigned next;               /* the next piece to claim */
    _Atomic uint32_t found;              /* lowest key: 2 * offset, + 1 past max_bits */
    /* written by the owner while closed, read-only while open */
    struct prime_state *owner; /* its sieve is marked by every thread in the sieve phase */
    unsigned np, chunks, w, piece, max_bits;
    unsigned nsurv; /* written by the owner before `listed`, read-only after */
};

static inline void spin_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ volatile("yield");
#endif
}

struct prime_hunt *prime_hunt_create(void)
{
    struct prime_hunt *h = aligned_alloc(64, sizeof(*h));
    if (!h)
        return NULL;
    memset(h, 0, sizeof(*h));
    atomic_init(&h->found, HUNT_NONE);
    return h;
}

void prime_hunt_destroy(struct prime_hunt *h)
{
    free(h);
}

static void found_min(struct prime_hunt *h, uint32_t key)
{
    uint32_t cur = atomic_load_explicit(&h->found, memory_order_relaxed);
    while (key < cur &&
           !atomic_compare_exchange_weak_explicit(&h->found, &cur, key, memory_order_relaxed, memory_order_relaxed))
        ;
}

/* Claims the next sieve chunk and marks it in the owner's sieve; false when
 * every chunk is claimed. */
static bool hunt_sieve_chunk(struct prime_hunt *h)
{
    unsigned c = atomic_fetch_add_explicit(&h->chunk, 1, memory_order_relaxed);
    if (c >= h->chunks)
        return false;
    struct prime_state *o = h->owner;
    unsigned end = (c + 1) * SIEVE_CHUNK < h->np ? (c + 1) * SIEVE_CHUNK : h->np;
    sieve_marks(mpz_limbs_read(o->base), (mp_size_t)mpz_size(o->base), o->sieve, odd_primes, c * SIEVE_CHUNK, end, h->w,
                true);
    atomic_fetch_add_explicit(&h->sieved, 1, memory_order_release);
    return true;
}

/* The owner, once the marks of every chunk are in (the chunks still in
 * progress are other threads'): lists the window's survivors and opens the
 * test phase. Returns how many survived. */
static unsigned hunt_list(struct prime_hunt *h)
{
    while (atomic_load_explicit(&h->sieved, memory_order_acquire) < h->chunks)
        spin_pause();
    struct prime_state *o = h->owner;
    unsigned n = 0;
    for (unsigned k = 0; k < h->w; k++)
        if (!o->sieve[k])
            o->surv[n++] = (uint16_t)k;
    h->nsurv = n;
    atomic_store_explicit(&h->listed, 1, memory_order_release);
    return n;
}

/* A helper: waits until the owner has listed the survivors. */
static void hunt_listed(struct prime_hunt *h)
{
    while (!atomic_load_explicit(&h->listed, memory_order_acquire))
        spin_pause();
}

/* The offsets [*lo, *hi) of piece p: from its first survivor to the next
 * piece's (the window's end for the last). */
static void hunt_span(const struct prime_hunt *h, unsigned p, unsigned *lo, unsigned *hi)
{
    const uint16_t *surv = h->owner->surv;
    unsigned next = (p + 1) * h->piece;
    *lo = surv[p * h->piece];
    *hi = next < h->nsurv ? surv[next] : h->w;
}

/* Claims the next piece, unless the window is used up or an answer below the
 * piece is known. */
static bool hunt_claim(struct prime_hunt *h, unsigned *piece)
{
    unsigned p = atomic_fetch_add_explicit(&h->next, 1, memory_order_relaxed);
    if (p * h->piece >= h->nsurv ||
        atomic_load_explicit(&h->found, memory_order_relaxed) < 2u * h->owner->surv[p * h->piece])
        return false;
    *piece = p;
    return true;
}

/* Tests one piece of the owner's window with st's scratch. */
static void hunt_piece(struct prime_state *st, struct prime_hunt *h, unsigned piece)
{
    unsigned lo, hi;
    hunt_span(h, piece, &lo, &hi);
    uint32_t key = test_offsets(st, h->owner, lo, hi, h->max_bits, &h->found);
    if (key != HUNT_NONE)
        found_min(h, key);
}

bool prime_hunt_help(struct prime_state *st, struct prime_hunt *h)
{
    uint64_t e = atomic_load_explicit(&h->epoch, memory_order_acquire);
    if (!(e & 1))
        return false;
    bool took = false;
    atomic_fetch_add_explicit(&h->helpers, 1, memory_order_seq_cst);
    unsigned piece;
    if (atomic_load_explicit(&h->epoch, memory_order_seq_cst) == e) {
        if (hunt_sieve_chunk(h)) {
            st->stats.chunks++;
            took = true;
        } else {
            hunt_listed(h);
            if (hunt_claim(h, &piece)) {
                hunt_piece(st, h, piece);
                st->stats.helped++;
                took = true;
            }
        }
    }
    atomic_fetch_sub_explicit(&h->helpers, 1, memory_order_seq_cst);
    return took;
}

/* Offers the window at st->base (w offsets, np sieving primes) to helpers,
 * sieves and tests it alongside them; returns the lowest answer's key, or
 * HUNT_NONE, once no helper is left inside. */
static uint32_t hunt_window(struct prime_state *st, struct prime_hunt *h, unsigned np, unsigned w, unsigned max_bits)
{
    st->stats.shared++;
    memset(st->sieve, 0, w);
    h->owner = st;
    h->np = np;
    h->chunks = (np + SIEVE_CHUNK - 1) / SIEVE_CHUNK;
    h->w = w;
    h->piece = max_bits >= V8_MIN_BITS ? vec_lanes(st) : PRIME_PIECE;
    h->max_bits = max_bits;
    atomic_store_explicit(&h->chunk, 0, memory_order_relaxed);
    atomic_store_explicit(&h->sieved, 0, memory_order_relaxed);
    atomic_store_explicit(&h->listed, 0, memory_order_relaxed);
    atomic_store_explicit(&h->next, 0, memory_order_relaxed);
    atomic_store_explicit(&h->found, HUNT_NONE, memory_order_relaxed);
    uint64_t e = atomic_load_explicit(&h->epoch, memory_order_relaxed) + 1;
    atomic_store_explicit(&h->epoch, e, memory_order_release); /* open */
    while (hunt_sieve_chunk(h))
        ;
    st->stats.survivors += hunt_list(h);
    unsigned piece;
    while (hunt_claim(h, &piece))
        hunt_piece(st, h, piece);
    atomic_store_explicit(&h->epoch, e + 1, memory_order_seq_cst); /* closed */
    while (atomic_load_explicit(&h->helpers, memory_order_seq_cst))
        spin_pause(); /* a helper leaves the test it is in (stopped(): within ~30 us) */
    return atomic_load_explicit(&h->found, memory_order_relaxed);
}

static int write_hex(const mpz_t v, char *hex, size_t hexlen)
{
    if (!hex)
        return 0;
    if (mpz_sizeinbase(v, 16) + 1 > hexlen)
        return -ENOSPC;
    mpz_get_str(hex, 16, v);
    return 0;
}

/* Seeds GMP's Mersenne Twister, once, before its first draw. It costs about
 * 350 us (gmp_randseed mangles the seed with a modular power to the 19937-bit
 * modulus), which used to sit on every worker's start-up; the first prime pays
 * it now. Same seed, same sequence as seeding at create. Out of line: cold. */
__attribute__((cold, noinline)) static void seed_gmp_once(struct prime_state *st)
{
    st->gmp_seeded = true;
    if (st->fixed_seed == 0) {
        mpz_t s;
        mpz_init2(s, 256);
        mpz_import(s, 4, -1, sizeof(st->seed_words[0]), 0, 0, st->seed_words);
        gmp_randseed(st->rnd->gmp_state, s);
        mpz_clear(s);
    } else {
        gmp_randseed_ui(st->rnd->gmp_state, (unsigned long)st->fixed_seed);
    }
}

static inline void seed_gmp(struct prime_state *st)
{
    if (!st->gmp_seeded)
        seed_gmp_once(st);
}

/* Same draw as fmpz_randprime(): bits-1 random bits under a set top bit (the
 * next prime above is the answer; one that spills past `bits` bits redraws). */
static void draw_start(struct prime_state *st, unsigned bits)
{
    seed_gmp(st);
    st->stats.starts++;
    mpz_urandomb(st->start, st->rnd->gmp_state, bits - 1);
    mpz_setbit(st->start, bits - 1);
}

static int check_args(unsigned bits, const char *hex, size_t hexlen)
{
    if (bits < PRIME_BITS_MIN || bits > PRIME_BITS_MAX)
        return -EINVAL;
    if (hex && hexlen < bits / 4 + 2)
        return -ENOSPC;
    return 0;
}

static int answer(struct prime_state *st, char *hex, size_t hexlen)
{
    st->stats.primes++;
    int r = write_hex(st->cand, hex, hexlen);
    return r < 0 ? r : (int)mpz_sizeinbase(st->cand, 2);
}

int prime_generate(struct prime_state *st, enum prime_engine e, unsigned bits, char *hex, size_t hexlen)
{
    int r = check_args(bits, hex, hexlen);
    if (r < 0)
        return r;
    if (e == PRIME_ENGINE_FLINT) {
        seed_gmp(st);
        fmpz_randprime(st->f, st->rnd, bits, 0);
        fmpz_get_mpz(st->cand, st->f);
    } else if (e == PRIME_ENGINE_SIEVE) {
        do
            draw_start(st, bits);
        while (!sieve_next(st, NULL, bits));
    } else {
        return -EINVAL;
    }
    return answer(st, hex, hexlen);
}

int prime_generate_shared(struct prime_state *st, struct prime_hunt *h, enum prime_engine e, unsigned bits, char *hex,
                          size_t hexlen)
{
    if (e != PRIME_ENGINE_SIEVE || !h)
        return prime_generate(st, e, bits, hex, hexlen);
    int r = check_args(bits, hex, hexlen);
    if (r < 0)
        return r;
    do
        draw_start(st, bits);
    while (!sieve_next(st, h, bits));
    return answer(st, hex, hexlen);
}

/* Reads hex (digits only, no prefix, at most max_digits of them) into v.
 * Returns 0, or -EINVAL. */
static int read_hex(mpz_t v, const char *hex, size_t max_digits)
{
    if (!hex || !*hex || strlen(hex) > max_digits)
        return -EINVAL;
    for (const char *c = hex; *c; c++)
        if (!((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'f') || (*c >= 'A' && *c <= 'F')))
            return -EINVAL;
    return mpz_set_str(v, hex, 16) == 0 ? 0 : -EINVAL;
}

int prime_check(struct prime_state *st, enum prime_check c, const char *hex)
{
    if (read_hex(st->cand, hex, PRIME_BITS_MAX / 4 + 1) < 0 || mpz_cmp_ui(st->cand, 3) < 0 || mpz_even_p(st->cand))
        return -EINVAL;
    switch (c) {
    case PRIME_CHECK_BASE2:
        return strong_base2(st, st->cand, NULL);
    case PRIME_CHECK_BASE2_GMP:
        return strong_base2_gmp(st, st->cand);
    case PRIME_CHECK_BASE2_VECTOR: {
        unsigned nl = vec_lanes(st);
        if (nl == 1)
            return -ENOTSUP;
        /* n in lane (n >> 1) mod lanes, so each lane has its turn; n + 2, n + 4, ...
         * (other sizes, other exponents) in the others */
        unsigned at = (unsigned)(mpz_getlimbn(st->cand, 0) >> 1) % nl;
        int res[V8_LANES] = {0};
        for (unsigned j = 0; j < nl; j++)
            mpz_add_ui(st->vn[j], st->cand, 2ul * ((j - at) % nl));
        strong_base2_batch(st, nl, res, NULL);
        return res[at];
    }
    case PRIME_CHECK_LUCAS:
        return lucas_aes(st, st->cand, NULL);
    case PRIME_CHECK_FLINT_LUCAS: {
        fmpz_t f;
        fmpz_init_set_readonly(f, st->cand);
        int r = fmpz_is_probabprime_lucas(f);
        fmpz_clear_readonly(f);
        return r;
    }
    }
    return -EINVAL;
}

int prime_next(struct prime_state *st, enum prime_engine e, const char *start_hex, char *hex, size_t hexlen)
{
    if (read_hex(st->start, start_hex, PRIME_BITS_MAX / 4) < 0)
        return -EINVAL;
    size_t sbits = mpz_sizeinbase(st->start, 2);
    if (mpz_sgn(st->start) <= 0 || sbits < PRIME_BITS_MIN || sbits > PRIME_BITS_MAX)
        return -EINVAL;

    if (e == PRIME_ENGINE_FLINT) {
        fmpz_t s;
        fmpz_init_set_readonly(s, st->start);
        fmpz_nextprime(st->f, s, 0);
        fmpz_clear_readonly(s);
        fmpz_get_mpz(st->cand, st->f);
    } else if (e == PRIME_ENGINE_SIEVE) {
        sieve_next(st, NULL, PRIME_BITS_MAX + 1);
    } else {
        return -EINVAL;
    }
    int r = write_hex(st->cand, hex, hexlen);
    return r < 0 ? r : (int)mpz_sizeinbase(st->cand, 2);
}
