/* afd_tail.h: tail index of the decode lifetime D (afd-provisioning paper,
 * Appendix A.7).
 *
 * If P(D > x) ~ C x^-alpha, the stationary age is length-biased and has tail
 * exponent alpha - 1, so nu^2 < inf needs alpha > 3 and theta < inf needs
 * alpha > 2.  The Hill estimator over the k largest of n observations,
 *   alpha_hat = k / sum_{i=1..k} log(X_(i) / X_(k+1)),
 * is asymptotically normal with standard error alpha_hat / sqrt(k) when k
 * grows slower than n.  Ties at the top (a length cap) make the sum zero:
 * the estimate is then +inf, "no power-law tail".
 */
#ifndef AFD_TAIL_H
#define AFD_TAIL_H

#include <stddef.h>
#include <stdint.h>

#include "afd_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest k the streaming estimator keeps (k + 1 values in a heap). */
#define AFD_HILL_KMAX 1000

typedef struct afd_hill afd_hill;

/* Keep the kmax + 1 largest values seen (kmax >= 1). */
AFD_API afd_hill *afd_hill_alloc(size_t kmax);
AFD_API void afd_hill_free(afd_hill *h);
/* Offer one observation (> 0; others are ignored). */
AFD_API void afd_hill_add(afd_hill *h, double x);

/* The default k for n observations: floor(sqrt(n)), at least 10, at most
 * kmax and n - 1. */
AFD_API size_t afd_hill_default_k(uint64_t n, size_t kmax);

/* Hill estimate over the k largest values (1 <= k <= kept - 1): alpha and
 * its standard error alpha / sqrt(k); +inf and NaN when the top k + 1 values
 * are all equal.  AFD_EINVAL if fewer than k + 1 values were kept.  Sorts
 * the kept values in place (the accumulator stays usable). */
AFD_API afd_status afd_hill_estimate(afd_hill *h, size_t k, double *alpha, double *se);

#ifdef __cplusplus
}
#endif

#endif /* AFD_TAIL_H */
