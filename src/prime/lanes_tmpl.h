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

/* The carry state of a step between its columns. */
struct lt_carry {
    LT_V c;  /* the column's carry into the next */
    LT_V dc; /* the doubling's carry (dbl lanes), from the result's digits */
};

/* Ends column k of a step: s (the square's terms) and r (the reduction's)
 * plus the carry; below column d it fixes and stores m_k, from column d on
 * it writes the result's digit k - d (doubled where dbl is 1). */
LT_TARGET static inline __attribute__((always_inline)) void lt_end(struct lanes *v, struct lt_carry *cr, size_t k,
                                                                  LT_V s, LT_V r, LT_V dbl, const unsigned w)
{
    const size_t d = v->d;
    const LT_V mask = LT_SET1((1ull << w) - 1);
    /* only s is split: r (at most d products below 2^(2w) with m_k n_0, lanes.h's bound) plus s's
     * low w bits and the carry (below 2^(w + 7)) stays below 2^64 */
    LT_V low = LT_ADD(LT_ADD(LT_AND(s, mask), r), cr->c);
    LT_V high = LT_SRLI(s, w);
    if (k < d) {
        LT_V mk = LT_AND(LT_MUL(low, LT_LOAD(v->k0)), mask); /* low's bits above 32 do not matter mod 2^w */
        ((LT_V *)v->m)[k] = mk;
        low = LT_ADD(low, LT_MUL(mk, ((const LT_V *)v->n)[0]));
    } else {
        LT_V o = LT_ADD(LT_SLLV(LT_AND(low, mask), dbl), cr->dc);
        ((LT_V *)v->x)[k - d] = LT_AND(o, mask);
        cr->dc = LT_SRLI(o, w);
    }
    cr->c = LT_ADD(high, LT_SRLI(low, w));
}

/* One column k of a step, alone (lt_step()'s comment): the step out of
 * Montgomery form (sq = 0), and a squaring's last column. */
LT_TARGET static inline __attribute__((always_inline)) void lt_col(struct lanes *v, struct lt_carry *cr, size_t k,
                                                                  LT_V dbl, const int sq, const unsigned w)
{
    const size_t d = v->d;
    const LT_V *x = (const LT_V *)v->x, *m = (const LT_V *)v->m, *n = (const LT_V *)v->n;
    size_t lo = k >= d ? k - d + 1 : 0, hi = k < d ? k : d;
    LT_V s = LT_ZERO(), r = LT_ZERO();
    const LT_V *mi = m + lo, *mend = m + hi, *nj = n + (k - lo);
    if (sq) {
        const LT_V *xi = x + lo, *xj = x + (k - lo);
        for (; xi < xj; xi++, xj--, mi++, nj--) { /* mi stays below mend: i < k / 2 <= min(k, d) */
            s = LT_ADD(s, LT_MUL(*xi, *xj));
            r = LT_ADD(r, LT_MUL(*mi, *nj));
        }
        s = LT_ADD(s, s);
        if (xi == xj)
            s = LT_ADD(s, LT_MUL(*xi, *xi));
    } else if (k < d) {
        s = x[k];
    }
    for (; mi < mend; mi++, nj--)
        r = LT_ADD(r, LT_MUL(*mi, *nj));
    lt_end(v, cr, k, s, r, dbl, w);
}

/* Columns k and k + 1 of a squaring (k even, k <= 2d - 4) in one pass: each
 * x_i and m_i is loaded once for both, and x_k-i and n_k-i serve column k
 * here and column k + 1 at the next i (k + 1 - (i + 1) = k - i), so a term
 * costs a multiply, an add and a load where one column alone costs two
 * loads; the loops' exits are half as many. Column k + 1's term m_k n_1
 * waits for column k's end. Ranges (lo_k = max(0, k - d + 1), half = k / 2):
 * cross terms of column k over [lo_k, half), of column k + 1 over
 * [lo_k+1, half]; reduction terms over [lo_k, min(k, d)) and
 * [lo_k+1, min(k + 1, d)); lo_k+1 is lo_k or lo_k + 1. */
LT_TARGET static inline __attribute__((always_inline)) void lt_pair(struct lanes *v, struct lt_carry *cr, size_t k,
                                                                   LT_V dbl, const unsigned w)
{
    const size_t d = v->d, half = k / 2;
    const LT_V *x = (const LT_V *)v->x, *m = (const LT_V *)v->m, *n = (const LT_V *)v->n;
    size_t lo0 = k >= d ? k - d + 1 : 0, lo1 = k + 1 >= d ? k + 2 - d : 0, rend = k < d ? k : d;
    LT_V s0 = LT_ZERO(), s1 = LT_ZERO(), r0 = LT_ZERO(), r1 = LT_ZERO();
    LT_V xp = x[k + 1 - lo1], np = n[k + 1 - lo1]; /* x_k+1-i and n_k+1-i, for i = lo1 */
    size_t i = lo1;
#pragma GCC unroll 4
    for (; i < half; i++) {
        LT_V xi = x[i], xj = x[k - i], mi = m[i], nj = n[k - i];
        s0 = LT_ADD(s0, LT_MUL(xi, xj));
        s1 = LT_ADD(s1, LT_MUL(xi, xp));
        r0 = LT_ADD(r0, LT_MUL(mi, nj));
        r1 = LT_ADD(r1, LT_MUL(mi, np));
        xp = xj;
        np = nj;
    }
    s1 = LT_ADD(s1, LT_MUL(x[half], xp)); /* i = half: x_half x_half+1, column k + 1's last cross term */
#pragma GCC unroll 4
    for (; i < rend; i++) {
        LT_V mi = m[i], nj = n[k - i];
        r0 = LT_ADD(r0, LT_MUL(mi, nj));
        r1 = LT_ADD(r1, LT_MUL(mi, np));
        np = nj;
    }
    if (lo0 < lo1) { /* column k's first terms, i = lo0 = k - d + 1 (k - i = d - 1) */
        s0 = LT_ADD(s0, LT_MUL(x[lo0], x[d - 1]));
        r0 = LT_ADD(r0, LT_MUL(m[lo0], n[d - 1]));
    }
    s0 = LT_ADD(s0, s0);
    s0 = LT_ADD(s0, LT_MUL(x[half], x[half]));
    s1 = LT_ADD(s1, s1);
    lt_end(v, cr, k, s0, r0, dbl, w);
    if (k < d)
        r1 = LT_ADD(r1, LT_MUL(m[k], n[1]));
    lt_end(v, cr, k + 1, s1, r1, dbl, w);
}

/* One Montgomery step on v->x, in place (a Montgomery product in product
 * scanning, the columns of the square and of the reduction summed together,
 * "FIPS" in Koc, Acar and Kaliski's survey): with sq, x = x^2 / R mod n,
 * then doubled in the lanes where dbl is 1; without, x = x / R mod n.
 * Column k gathers the square's terms x_i x_k-i (the cross terms once, then
 * doubled) in s and the reduction's m_i n_k-i in r; below column d it fixes
 * m_k = (column mod 2^w) k0, which clears the column's low w bits, and from
 * column d on it is the result's digit k - d. Bounds: x < 4n, 16 n < R give
 * a result below 2n; s and r each stay below (d + 1) 2^(2w) < 2^64 (lanes.h:
 * s at most d/2 cross terms, doubled, and a square; r at most d terms); s
 * alone is split, its low w bits added to r, so that no sum overflows (two
 * split halves took three more operations a column, ~4 % of an AVX2 step).
 * Result digit k - d is written after column k, which was the last to read
 * x_k-d (column k reads x_i for i >= k - d + 1 only). A squaring runs its
 * columns in pairs (lt_pair()), the last alone. */
LT_TARGET static inline __attribute__((always_inline)) void lt_step(struct lanes *v, LT_V dbl, const int sq,
                                                                   const unsigned w)
{
    const size_t d = v->d;
    struct lt_carry cr = {LT_ZERO(), LT_ZERO()};
    size_t k = 0;
    if (sq)
        for (; k + 4 <= 2 * d; k += 2)
            lt_pair(v, &cr, k, dbl, w);
    for (; k + 1 < 2 * d; k++)
        lt_col(v, &cr, k, dbl, sq, w);
    /* column 2d - 1 has no terms: its carry is the top digit (the result is below R) */
    const LT_V mask = LT_SET1((1ull << w) - 1);
    LT_V o = LT_ADD(LT_SLLV(cr.c, dbl), cr.dc);
    ((LT_V *)v->x)[d - 1] = LT_AND(o, mask);
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
