/* lanes_avx2.c - the four-lane strong base-2 ladder with AVX2 (lanes.h):
 * vpmuludq on 256-bit vectors, for CPUs without AVX-512 (AMD Zen 2 and Zen 3,
 * Intel before Skylake-SP). The body is lanes_tmpl.h's; this file only names
 * the vector operations. x86-64 only: elsewhere it compiles to nothing.
 */
#include "lanes.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define LT_V           __m256i
#define LT_TARGET      __attribute__((target("avx2")))
#define LT_LADDER      lanes_ladder_avx2
#define LT_ZERO()      _mm256_setzero_si256()
#define LT_SET1(x)     _mm256_set1_epi64x((long long)(x))
#define LT_LOAD(p)     _mm256_load_si256((const void *)(p))
#define LT_ADD(a, b)   _mm256_add_epi64(a, b)
#define LT_AND(a, b)   _mm256_and_si256(a, b)
#define LT_SRLI(a, k)  _mm256_srli_epi64(a, k)
#define LT_MUL(a, b)   _mm256_mul_epu32(a, b)
#define LT_SLLV(a, c)  _mm256_sllv_epi64(a, c)
/* lane l gets bit l of b */
#define LT_BITS(b)     _mm256_and_si256(_mm256_srlv_epi64(_mm256_set1_epi64x((long long)(b)), \
                                                          _mm256_set_epi64x(3, 2, 1, 0)),      \
                                        _mm256_set1_epi64x(1))

#include "lanes_tmpl.h"
#endif
