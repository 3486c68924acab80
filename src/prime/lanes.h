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
 * A residue is D digits of W bits (R = 2^(W D), 16 n < R), each digit in a
 * 64-bit lane of its own vector (digit-major: digit j of lane l at
 * [j * lanes + l]); vpmuludq multiplies the low 32 bits of each lane, so a
 * product of two digits is below 2^(2W). A column sums up to D + 1 such
 * products in each of two accumulators, below 2^64: W = 29 up to 62 digits
 * (1793 bits: 1000-bit primes take 35 digits where 28 bits take 36, 5 % fewer
 * products), W = 28 above, up to LANES_DIGITS.
 */
#ifndef PRIMED_LANES_H
#define PRIMED_LANES_H

#include <stddef.h>
#include <stdint.h>

#define LANES_MAX    8
#define LANES_DIGITS 148 /* 28 * 148 = 4144 >= the largest n (4101 bits) + 5 */
#define LANES_D29    62  /* the most digits of 29 bits: (62 + 1) 2^58 < 2^64 */

struct lanes {
    _Alignas(64) uint64_t n[LANES_DIGITS * LANES_MAX]; /* the moduli */
    _Alignas(64) uint64_t x[LANES_DIGITS * LANES_MAX]; /* 2^(top bits of d) R, then 2^d R, then 2^d */
    _Alignas(64) uint64_t m[LANES_DIGITS * LANES_MAX]; /* a product's Montgomery factors (scratch) */
    _Alignas(64) uint64_t k0[LANES_MAX];               /* -1/n mod 2^w per lane */
    /* lanes whose exponent has bit i set, for the ladder's bits (PRIME_BITS_MAX + 8) */
    uint8_t bit[4104];
    unsigned d;     /* digits in use: 16 n < 2^(w d) */
    unsigned w;     /* bits per digit: lanes_width() */
    unsigned lanes; /* 8 (AVX-512F) or 4 (AVX2) */
};

/* Bits per digit for n of `bits` bits: 29 where the digits are few enough. */
static inline unsigned lanes_width(size_t bits)
{
    return (bits + 5 + 28) / 29 <= LANES_D29 ? 29 : 28;
}

/* Digits of lanes_width() bits for n of `bits` bits: 16 n < R = 2^(w d). */
static inline unsigned lanes_digits(size_t bits)
{
    unsigned w = lanes_width(bits);
    return (unsigned)((bits + 5 + w - 1) / w);
}

/* The ladder's steps for exponent bits hi - 1 down to lo: x = x^2 / R mod n,
 * then doubled in the lanes whose bit is set (v->bit[i]); x < 4n before and
 * after each step (an "almost" Montgomery product, never a final
 * subtraction). With lo == hi and out != 0: x = x / R mod n instead, out of
 * Montgomery form, at most n. v->w is 28 or 29, v->lanes the kernel's (8 for
 * avx512, 4 for avx2). Call only where the CPU has the kernel's extension. */
void lanes_ladder_avx512(struct lanes *v, size_t hi, size_t lo, int out);
void lanes_ladder_avx2(struct lanes *v, size_t hi, size_t lo, int out);

#endif
