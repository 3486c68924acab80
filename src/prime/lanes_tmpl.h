/* lanes_tmpl.h - the body of one lanes kernel (lanes.h), included once by
 * lanes_avx512.c (eight lanes) and once by lanes_avx2.c (four lanes) after
 * they define:
 *
 *   LT_V                  the vector type (__m512i, __m256i)
 *   LT_TARGET             the function attribute naming the extension
 *   LT_LADDER             the exported function's name
 *   LT_ZERO() LT_SET1(x) LT_LOAD(p) LT_ADD(a, b) LT_AND(a, b) LT_SRLI(a, k)
 *   LT_MUL(a, b)          lanes' low 32 bits times low 32 bits, 64-bit results
 *   LT_SLLV(a, c)         a shifted left by c, lane by lane
 *   LT_BITS(b)            1 in the lanes whose bit of the byte b is set, else 0
 *
 * No header guard: each includer gets its own copy.
 */

/* One Montgomery step on v->x, in place (a Montgomery product in product
 * scanning, the columns of the square and of the reduction summed together,
 * "FIPS" in Koc, Acar and Kaliski's survey): with sq, x = x^2 / R mod n,
 * then doubled in the lanes where dbl is 1; without, x = x / R mod n.
 * Column k gathers the square's terms x_i x_k-i (the cross terms once, then
 * doubled) in s and the reduction's m_i n_k-i in r; below column d it fixes
 * m_k = (column mod 2^w) k0, which clears the column's low w bits, and from
 * column d on it is the result's digit k - d. Bounds: x < 4n, 16 n < R give
 * a result below 2n; s and r each stay below (d + 1) 2^(2w) < 2^64 (lanes.h:
 * s at most d/2 cross terms, doubled, and a square; r at most d terms), and
 * are added as split halves so that their sum never overflows.
 * Result digit k - d is written after column k, which was the last to read
 * x_k-d (column k reads x_i for i >= k - d + 1 only). */
LT_TARGET static inline __attribute__((always_inline)) void lt_step(struct lanes *v, LT_V dbl, const int sq,
                                                                   const unsigned w)
{
    const size_t d = v->d;
    LT_V *x = (LT_V *)v->x, *m = (LT_V *)v->m;
    const LT_V *n = (const LT_V *)v->n;
    const LT_V mask = LT_SET1((1ull << w) - 1), k0 = LT_LOAD(v->k0), n0 = n[0];
    LT_V c = LT_ZERO(), dc = LT_ZERO();
    for (size_t k = 0; k + 1 < 2 * d; k++) {
        size_t lo = k >= d ? k - d + 1 : 0, hi = k < d ? k : d;
        LT_V s = LT_ZERO(), r = LT_ZERO();
        /* pointers, not indices: the loops are a load, a multiply and an add a term */
        const LT_V *mi = m + lo, *mend = m + hi, *nj = n + (k - lo);
        if (sq) {
            const LT_V *xi = x + lo, *xj = x + (k - lo);
            /* the cross terms x_i x_j, i < j, beside the reduction's first terms: two chains */
#pragma GCC unroll 2
            for (; xi < xj; xi++, xj--, mi++, nj--) {
                s = LT_ADD(s, LT_MUL(*xi, *xj));
                r = LT_ADD(r, LT_MUL(*mi, *nj));
            }
            /* mi is not past mend: i < k / 2 <= min(k, d) = hi for every column */
            s = LT_ADD(s, s);
            if (xi == xj)
                s = LT_ADD(s, LT_MUL(*xi, *xi));
        } else if (k < d) {
            s = x[k];
        }
#pragma GCC unroll 4
        for (; mi < mend; mi++, nj--)
            r = LT_ADD(r, LT_MUL(*mi, *nj));
        LT_V low = LT_ADD(LT_ADD(LT_AND(s, mask), LT_AND(r, mask)), c);
        LT_V high = LT_ADD(LT_SRLI(s, w), LT_SRLI(r, w));
        if (k < d) {
            LT_V mk = LT_AND(LT_MUL(low, k0), mask); /* low's bits above 32 do not matter mod 2^w */
            m[k] = mk;
            low = LT_ADD(low, LT_MUL(mk, n0));
        } else {
            LT_V o = LT_ADD(LT_SLLV(LT_AND(low, mask), dbl), dc);
            x[k - d] = LT_AND(o, mask);
            dc = LT_SRLI(o, w);
        }
        c = LT_ADD(high, LT_SRLI(low, w));
    }
    /* column 2d - 1 has no terms: its carry is the top digit (the result is below R) */
    LT_V o = LT_ADD(LT_SLLV(c, dbl), dc);
    x[d - 1] = LT_AND(o, mask);
}

LT_TARGET void LT_LADDER(struct lanes *v, size_t hi, size_t lo, int out)
{
    /* the digit width a constant of each copy: shifts by an immediate */
    if (out && lo == hi) {
        if (v->w == 29)
            lt_step(v, LT_ZERO(), 0, 29);
        else
            lt_step(v, LT_ZERO(), 0, 28);
    } else if (v->w == 29) {
        for (size_t i = hi; i-- > lo;)
            lt_step(v, LT_BITS(v->bit[i]), 1, 29);
    } else {
        for (size_t i = hi; i-- > lo;)
            lt_step(v, LT_BITS(v->bit[i]), 1, 28);
    }
}
