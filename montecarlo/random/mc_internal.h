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

/* Draw of one kept request of a trace workload (afd_workload_entry), with
 * probability proportional to count (weight_by_decode = 0: a request drawn
 * uniformly, without length bias) or to count D (1: length-biased).
 *
 * By inversion: k = floor(u W) is uniform on 0..W-1, W the total weight, and
 * the entry is the one whose range [cum_{j-1}, cum_j) of the cumulative
 * weights holds k, which happens with probability weight_j / W.  For rows
 * kept one by one, each request weighing 1 is drawn without a table as
 * entry floor(u n).  Identity of the two forms: a distinct pair held by
 * count rows owns count (count D) consecutive values of k, exactly the
 * values that select those rows when the rows are sorted by (P, D), so a
 * workload of kept pairs draws, uniform for uniform, the very requests that
 * the same trace with its rows sorted draws. */
struct afd_workload;
typedef struct afd_priv_picker {
    const struct afd_workload *w;
    size_t n;      /* entries */
    double total;  /* W, an integer below 2^53 */
    uint64_t *cum; /* cum[j] = weight_0 + .. + weight_j, or NULL (unit weights) */
} afd_priv_picker;

/* AFD_EEMPTY without entries, AFD_EINVAL when W >= 2^53, AFD_ENOMEM. */
afd_status afd_priv_picker_init(afd_priv_picker *pk, const struct afd_workload *w,
                                int weight_by_decode);
void afd_priv_picker_free(afd_priv_picker *pk);
/* The entry index drawn by one uniform u in (0, 1). */
size_t afd_priv_picker_draw(const afd_priv_picker *pk, double u);

#endif /* AFD_MC_INTERNAL_H */
