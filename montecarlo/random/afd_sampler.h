/* afd_sampler.h: transforms of Philox uniforms into the distributions of the
 * afd-provisioning model (Section 3.2, Lemma 4.1, Corollary 4.5).
 *
 * Two kinds of sampler:
 *
 * - FIXED-COST transforms (geometric, alias, slot load) turn a fixed number
 *   of uniforms into one draw, with no data-dependent loop.  Fill a buffer
 *   with afd_philox_fill_u01 and transform it; the draw at position i then
 *   depends only on the uniforms at i, which keeps results independent of
 *   how work is split between threads.
 *
 * - REJECTION samplers (gamma, Poisson, negative binomial) consume a
 *   variable number of uniforms from an afd_philox_cursor.  Give each
 *   independent unit of work (a Monte Carlo trial) its own stream so that its
 *   draws depend only on (seed, trial).
 *
 * Integer-valued draws are returned as doubles; they are exact integers
 * below 2^53 and every sampler keeps them below that bound.
 */
#ifndef AFD_SAMPLER_H
#define AFD_SAMPLER_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "afd_philox.h"
#include "afd_status.h"
#include "afd_workload.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------ geometric */

/* Geometric on {1,2,...} with success probability p, by inversion:
 *
 *   G = 1 + floor(log(u) / log1p(-p)),   P(G > k) = P(u <= (1-p)^k) = (1-p)^k.
 *
 * One uniform per draw.  u in (0,1) keeps log(u) finite; p = 1 gives G = 1.
 * Domain: AFD_GEOMETRIC_MIN_P <= p <= 1 (mean at most 2^40), which keeps
 * every draw below 37 / p < 2^46, exactly representable. */
#define AFD_GEOMETRIC_MIN_P 0x1p-40

/* The largest mean mu_p, mu_d of a geometric workload that every Monte
 * Carlo module accepts (the samplers, afd_slot_sum_geometric, the barrier
 * and slot experiments and the pipeline).  A draw is below 53 ln 2 mu <
 * 37 mu < 2^39, so P + D stays below the 2^40 that the slot and pipeline
 * simulators sum exactly. */
#define AFD_GEOMETRIC_MAX_MEAN 0x1p33
typedef struct afd_geometric {
    double p;
    double inv_log1m_p; /* 1 / log1p(-p), or 0 when p = 1 */
} afd_geometric;

/* AFD_EINVAL (and p = NaN) outside the domain. */
AFD_API afd_status afd_geometric_init(double p, afd_geometric *g);

static inline double afd_geometric_draw(const afd_geometric *g, double u)
{
    return 1.0 + floor(log(u) * g->inv_log1m_p);
}

/* out[i] = afd_geometric_draw(g, u[i]), i < n. */
AFD_API void afd_geometric_fill(const afd_geometric *g, size_t n, const double *u, double *out);

/* ---------------------------------------------------------------- alias */

/* Walker's alias method with Vose's O(n) construction (M. D. Vose, "A linear
 * algorithm for generating random numbers with a given distribution", IEEE
 * TSE 17(9), 1991): column j = floor(n u) is kept with probability prob[j],
 * else replaced by alias[j].
 *
 * One uniform per draw: x = n u, j = floor(x), and the fraction x - j is the
 * coin.  The coin then has 52 - log2(n) bits of resolution, so each
 * probability is quantized to about n 2^-52 (2e-9 for n = 10^7); use two
 * uniforms (afd_alias_draw2) where that matters. */
typedef struct afd_alias afd_alias;

/* Table for weights w[0..n-1] (finite, >= 0, not all 0; n < 2^32).
 * AFD_EINVAL for bad weights, AFD_EEMPTY for n = 0 or all-zero weights,
 * AFD_ELIMIT for n >= 2^32, AFD_ENOMEM.  *out is NULL on error. */
AFD_API afd_status afd_alias_alloc(const double *w, size_t n, afd_alias **out);
AFD_API void afd_alias_free(afd_alias *a);
AFD_API size_t afd_alias_size(const afd_alias *a);

/* Index drawn with probability w[j] / sum w, from one uniform. */
AFD_API size_t afd_alias_draw(const afd_alias *a, double u);
/* The same from two uniforms: u1 picks the column, u2 is the coin. */
AFD_API size_t afd_alias_draw2(const afd_alias *a, double u1, double u2);
/* out[i] = afd_alias_draw(a, u[i]), i < n. */
AFD_API void afd_alias_fill(const afd_alias *a, size_t n, const double *u, size_t *out);

/* ------------------------------------------------------ slot-load sampler */

/* The stationary per-slot token load Y of Lemma 4.1: the load of one slot
 * observed at a uniformly random decode step.
 *
 * Trace.  By the renewal-reward identity (Appendix A.1, eq. 13) a random
 * step falls in request i at age a with probability 1 / sum_k D_k for each
 * a < D_i, so P(Y = y) = #{(i, a) : P_i + a = y, a < D_i} / sum_k D_k.
 * Two exact samplers of that law:
 *   - by value (the default when the loads span at most 2^20 values, or
 *     no more than 2.5 values per row): an alias table over the loads
 *     y_min..y_max with those integer counts as weights; ONE uniform per
 *     draw.
 *   - by row (otherwise): pick row i with probability D_i / sum D (alias
 *     table over the rows weighted by D), then the age uniformly on
 *     0..D_i-1, and Y = P_i + age; TWO uniforms per draw.
 * Either alias draw takes the column from u n and the coin from the
 * fractional part, which keeps 53 - log2(columns) bits: each probability is
 * exact to within columns * 2^-53 (below 1e-9 for 2^23 columns).
 *
 * Geometric model (Corollary 4.5).  With P independent of D the pair
 * (P, A) at a random step has P(P = k, A = a) = P(P = k) P(D > a) / E[D]
 * (eq. 13 with g = indicator), so P keeps its law and is independent of the
 * stationary age A, whose law is
 *
 *   P(A = a) = P(D > a) / E[D] = (1-p)^a / (1/p) = p (1-p)^a,  a = 0, 1, ...,
 *
 * with p = 1/mu_d: the geometric law on {0,1,...} with the SAME p
 * (memorylessness).  So Y = P + A with P ~ Geometric{1,..}(1/mu_p) and
 * A = Geometric{1,..}(1/mu_d) - 1, independent; TWO uniforms per draw,
 * u[0] for P and u[1] for the age. */
typedef struct afd_slot_sampler afd_slot_sampler;

/* Sampler for a TRACE workload with kept rows or kept distinct pairs
 * (afd_workload_entries >= 1, sum D < 2^53, P + D < 2^53) or a GEOMETRIC one
 * (mu_p, mu_d in [1, AFD_GEOMETRIC_MAX_MEAN]).  Kept pairs give the same law
 * as the rows they count, and by value the very same table (see sampler.c).
 * AFD_EINVAL for a GIVEN workload (theta and nu alone define no law) or
 * values outside those bounds, AFD_EEMPTY for a trace without kept requests,
 * AFD_ELIMIT for 2^32 or more entries, AFD_ENOMEM.  *out is NULL on error. */
AFD_API afd_status afd_slot_sampler_alloc(const afd_workload *w, afd_slot_sampler **out);
AFD_API void afd_slot_sampler_free(afd_slot_sampler *s);

/* k = uniforms per draw, 1 or 2 (see above). */
AFD_API unsigned afd_slot_sampler_uniforms(const afd_slot_sampler *s);
/* One slot load from u[0 .. k-1]. */
AFD_API double afd_slot_sampler_draw(const afd_slot_sampler *s, const double *u);
/* y[i] = afd_slot_sampler_draw(s, u + k i), i < n. */
AFD_API void afd_slot_sampler_fill(const afd_slot_sampler *s, size_t n, const double *u, double *y);
/* Sum of the n slot loads drawn from u[0 .. k n - 1] (exact below 2^53). */
AFD_API double afd_slot_sampler_sum(const afd_slot_sampler *s, size_t n, const double *u);

/* -------------------------------------------------- rejection samplers */

/* Standard normal by Box-Muller (two uniforms, one of the pair kept). */
AFD_API double afd_normal_draw(afd_philox_cursor *c);

/* Gamma(shape, scale), mean shape*scale, by Marsaglia and Tsang ("A simple
 * method for generating gamma variables", ACM TOMS 26(3), 2000); for
 * shape < 1, Gamma(shape + 1) u^(1/shape).  NaN unless shape > 0 and
 * scale >= 0 (both finite). */
AFD_API double afd_gamma_draw(afd_philox_cursor *c, double shape, double scale);

/* Poisson(mean): inversion by sequential search for mean < 10; for
 * mean >= 10 the transformed rejection PTRS of W. Hormann ("The transformed
 * rejection method for generating Poisson random variables", Insurance:
 * Mathematics and Economics 12, 1993).  NaN unless 0 <= mean <= 2^50. */
AFD_API double afd_poisson_draw(afd_philox_cursor *c, double mean);

/* Negative binomial: failures before the n-th success, success probability
 * p, P(K = k) = C(k+n-1, k) p^n (1-p)^k, mean n(1-p)/p; drawn as the
 * gamma-Poisson mixture Poisson(Gamma(n, (1-p)/p)).  NaN unless n > 0 and
 * 0 < p <= 1 with n(1-p)/p <= 2^46. */
AFD_API double afd_negbin_draw(afd_philox_cursor *c, double n, double p);

/* EXACT O(1) draw of the sum of B iid geometric-model slot loads (see the
 * slot-load sampler): a sum of B iid Geometric{1,..}(p) is B plus a
 * NegBin(B, p) failure count and a sum of B iid Geometric{0,..}(p) is a
 * NegBin(B, p) failure count, so
 *
 *   T = sum_{b=1}^{B} Y_b  ~  B + NegBin(B, 1/mu_p) + NegBin(B, 1/mu_d).
 *
 * NaN unless B >= 1 and mu_p, mu_d in [1, AFD_GEOMETRIC_MAX_MEAN] with
 * B (mu_p + mu_d) <= 2^46. */
AFD_API double afd_slot_sum_geometric(afd_philox_cursor *c, double mu_p, double mu_d,
                                      unsigned B);

#ifdef __cplusplus
}
#endif

#endif /* AFD_SAMPLER_H */
