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

/* The ceil(q n)-th smallest of x[0..n) (1-based; the first for q n < 1),
 * by selection (gsl_stats_select), NaN for n = 0.  Reorders x. */
double afd_priv_quantile(double *x, size_t n, double q);

/* The mean of k batch values x[b] weighted by their sizes n_b (n_b NULL:
 * all 1) and its batch-means standard error (batch_stats.c derives it);
 * batches with n_b = 0 or x[b] NaN are left out.  One batch: its value and
 * se NaN; none: both NaN. */
void afd_priv_batch_mean_se(const double *x, const double *n_b, unsigned k, double *mean,
                            double *se);

/* A log-bucketed histogram of values >= 0 for quantiles within a stated
 * relative error, in memory that grows with the range of the values (the
 * octaves they span), not with their number.
 *
 * A finite x > 0 counts in the bucket named by the exponent and the top
 * AFD_QHIST_BITS = s bits of the mantissa of its binary64 encoding: for
 * x = 2^e (1 + f), the bucket [2^e (1 + j 2^-s), 2^e (1 + (j + 1) 2^-s)),
 * j = floor(f 2^s), whose width 2^(e - s) is at most 2^-s x.  Zeros and
 * +inf are counted apart and come out exactly.  The buckets held are those
 * of a window of whole octaves (2^s buckets of 4 bytes, 4 KiB for s = 10)
 * that widens as values arrive.
 *
 * A quantile is the k = ceil(q n)-th smallest value (1-based, clamped to
 * 1..n, as afd_priv_quantile): its bucket is found exactly from the
 * counts, and the value is interpolated linearly in rank: the bucket's c
 * values spread evenly over it, from its first to its last (r - 1)/(c - 1)
 * of the way, where a bucket holding the smallest or largest value held is
 * narrowed to it (a value alone in a bucket: its middle, or the smallest or
 * largest value).  Error bound: the k-th smallest x_(k) and the answer lie
 * in the same bucket, so |answer - x_(k)| <= 2^-s x_(k), 2^-10 = 0.098%
 * for every x_(k) >= 2^-1022 (a normal double; below, within 2^-1032
 * absolutely); exact for 0 and +inf, for the smallest and largest value
 * (q = 0, q = 1), and when the finite values > 0 held are all equal. */
#define AFD_QHIST_BITS 10
typedef struct afd_priv_qhist {
    uint64_t n;            /* values held (zeros and infinities included) */
    uint64_t zeros, infs;  /* of which 0 and +inf */
    uint32_t lo, len;      /* buckets lo .. lo + len - 1 held (keys) */
    uint32_t *count;       /* count[i]: values in bucket lo + i */
    double min, max;       /* smallest and largest finite value > 0 held */
} afd_priv_qhist;

/* An empty histogram (no memory held). */
void afd_priv_qhist_init(afd_priv_qhist *h);
void afd_priv_qhist_free(afd_priv_qhist *h);
/* Empty it, keeping its memory (and window) for the next values. */
void afd_priv_qhist_reset(afd_priv_qhist *h);
/* Count x.  AFD_EINVAL: x < 0 or NaN (not counted); AFD_ENOMEM; AFD_ELIMIT:
 * 2^32 - 1 values held already. */
afd_status afd_priv_qhist_add(afd_priv_qhist *h, double x);
/* The q-quantile (0 <= q <= 1) as above; NaN when empty or q outside. */
double afd_priv_qhist_quantile(const afd_priv_qhist *h, double q);
/* The bytes of buckets held. */
size_t afd_priv_qhist_bytes(const afd_priv_qhist *h);

#endif /* AFD_MC_INTERNAL_H */
