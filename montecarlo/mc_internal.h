/* mc_internal.h: helpers shared by the Monte Carlo engine's translation
 * units.  Not part of the API. */
#ifndef AFD_MC_INTERNAL_H
#define AFD_MC_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "afd_status.h"

/* OpenMP directives that vanish without OpenMP (an unknown #pragma would
 * be a warning, an error under --enable-werror). */
#if defined(_OPENMP)
#define AFD_OMP(directive) _Pragma(directive)
#else
#define AFD_OMP(directive)
#endif
#define AFD_SIMD AFD_OMP("omp simd")

/* The alias table behind afd_alias (afd_sampler.h): column j keeps j with
 * probability prob[j], else gives alias[j].  Visible here so that the
 * slot-load sampler can lay its columns out for one memory access. */
struct afd_alias {
    size_t n;
    double *prob;
    uint32_t *alias;
};

/* Vose's construction into caller arrays of n entries (n >= 1, n < 2^32):
 * prob[j] in [0, 1], alias[j] < n.  work holds 2n indices.  The weights must
 * be finite and >= 0 with a positive sum (checked by the caller). */
void afd_priv_alias_build(const double *w, size_t n, double *prob, uint32_t *alias, uint32_t *work);

/* Check weights: AFD_EINVAL if one is negative or not finite, AFD_EEMPTY if
 * n = 0 or they sum to 0.  *sum receives the sum. */
afd_status afd_priv_check_weights(const double *w, size_t n, double *sum);

/* afd_slot_sampler_alloc, with by_value = 0 forcing the by-row sampler of a
 * trace (tests compare the two). */
struct afd_workload;
struct afd_slot_sampler;
afd_status afd_priv_slot_sampler_alloc(const struct afd_workload *w, int by_value,
                                       struct afd_slot_sampler **out);

#endif /* AFD_MC_INTERNAL_H */
