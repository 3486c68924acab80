/* lanes_avx512.c - the eight-lane strong base-2 ladder with AVX-512F (lanes.h):
 * vpmuludq on 512-bit vectors, for CPUs with AVX-512F but no IFMA (Intel
 * Skylake-SP, Cascade Lake). The body is lanes_tmpl.h's; this file only names
 * the vector operations. x86-64 only: elsewhere it compiles to nothing.
 */
#include "lanes.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define LT_V           __m512i
#define LT_TARGET      __attribute__((target("avx512f")))
#define LT_LADDER      lanes_ladder_avx512
#define LT_ZERO()      _mm512_setzero_si512()
#define LT_SET1(x)     _mm512_set1_epi64((long long)(x))
#define LT_LOAD(p)     _mm512_load_si512((const void *)(p))
#define LT_ADD(a, b)   _mm512_add_epi64(a, b)
#define LT_AND(a, b)   _mm512_and_si512(a, b)
#define LT_SRLI(a, k)  _mm512_srli_epi64(a, k)
#define LT_MUL(a, b)   _mm512_mul_epu32(a, b)
#define LT_SLLV(a, c)  _mm512_sllv_epi64(a, c)
#define LT_BITS(b)     _mm512_maskz_set1_epi64((__mmask8)(b), 1)

#include "lanes_tmpl.h"
#endif
