/* lanes.h - strong base-2 ladders of four or eight candidates at once with
 * 32 x 32 -> 64-bit multiplies (vpmuludq): the AVX2 and AVX-512F engines.
 *
 * Private to src/prime: prime.c fills a struct lanes (moduli, start values,
 * exponent bits) from its mpz candidates and reads the results back; the
 * kernels (lanes_avx512.c, lanes_avx2.c, one template lanes_tmpl.h) see only
 * these arrays, never GMP. Both kernels are x86-64 only and compiled with
 * target attributes, so the default build needs no -march; elsewhere their
 * files compile to nothing and prime.c never calls them.
 *
 * A residue is D digits of 28 bits (R = 2^(28 D), 16 n < R), each digit in a
 * 64-bit lane of its own vector (digit-major: digit j of lane l at
 * [j * lanes + l]); vpmuludq multiplies the low 32 bits of each lane, so a
 * product of two digits is below 2^56 and a column of up to 2 D of them sums
 * without overflow (kept in two accumulators: any D up to LANES_DIGITS).
 */
#ifndef PRIMED_LANES_H
#define PRIMED_LANES_H

#include <stddef.h>
#include <stdint.h>

#define LANES_MAX    8
#define LANES_BITS   28
#define LANES_MASK   ((1ull << LANES_BITS) - 1)
#define LANES_DIGITS 148 /* 28 * 148 = 4144 >= the largest n (4101 bits) + 5 */

struct lanes {
    _Alignas(64) uint64_t n[LANES_DIGITS * LANES_MAX]; /* the moduli */
    _Alignas(64) uint64_t x[LANES_DIGITS * LANES_MAX]; /* 2^(top bits of d) R, then 2^d R, then 2^d */
    _Alignas(64) uint64_t m[LANES_DIGITS * LANES_MAX]; /* a product's Montgomery factors (scratch) */
    _Alignas(64) uint64_t k0[LANES_MAX];               /* -1/n mod 2^28 per lane */
    /* lanes whose exponent has bit i set, for the ladder's bits (PRIME_BITS_MAX + 8) */
    uint8_t bit[4104];
    unsigned d;     /* digits in use: 16 n < 2^(28 d) */
    unsigned lanes; /* 8 (AVX-512F) or 4 (AVX2) */
};

/* Digits of 28 bits for n of `bits` bits: 16 n < R = 2^(28 d). */
static inline unsigned lanes_digits(size_t bits)
{
    return (unsigned)((bits + 5 + LANES_BITS - 1) / LANES_BITS);
}

/* The ladder's steps for exponent bits hi - 1 down to lo: x = x^2 / R mod n,
 * then doubled in the lanes whose bit is set (v->bit[i]); x < 4n before and
 * after each step (an "almost" Montgomery product, never a final
 * subtraction). With lo == hi and out != 0: x = x / R mod n instead, out of
 * Montgomery form, at most n. v->lanes must be the kernel's (8 for
 * avx512, 4 for avx2). Call only where the CPU has the kernel's extension. */
void lanes_ladder_avx512(struct lanes *v, size_t hi, size_t lo, int out);
void lanes_ladder_avx2(struct lanes *v, size_t hi, size_t lo, int out);

#endif
