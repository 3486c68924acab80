/* flint_nompfr.c - the one MPFR symbol a static FLINT needs, without MPFR.
 *
 * Linked only with a FLINT built by profiles/flint-static (meson's
 * flint_prefix). FLINT 2.9's flint_cleanup(), which prime_thread_fini() calls,
 * ends with mpfr_free_cache(); nothing else in the 13 modules primed links
 * refers to MPFR (the link has --no-undefined: any other MPFR symbol would
 * fail it). MPFR's caches (its constants pi, log 2, Euler's, Catalan's and the
 * Bernoulli numbers) are filled only by MPFR's own functions, which this
 * process never calls, so freeing them is a no-op. Linking libmpfr.a for that
 * call costs 179 KB of the static binary (free_cache.o pulls every constant's
 * code). If libmpfr.a is ever linked as well, the linker reports this symbol
 * as defined twice: drop this file then. Never built against a shared
 * libflint, which brings libmpfr.so itself.
 */
void mpfr_free_cache(void);

void mpfr_free_cache(void)
{
}
