/* afd_perfmodel.h: the batch performance model of Ascendra (Appendix A):
 * memory traffic and FLOPs of a prefill, decode or hybrid (chunked) batch of
 * one transformer layer, and the five-term regression of the batch time on
 * them.
 *
 * Symbols (Appendix A.1), per tensor-parallel shard: h hidden size, n heads,
 * s head size (h = n s), m FFN intermediate size, b the attention kernel's
 * block size.  A batch holds B_p prefill requests, request i processing a
 * chunk of c_i prompt tokens with l_i tokens of its prompt processed once
 * this chunk is done (an unchunked prefill: c_i = l_i = p_i), and B_d
 * decode requests with l^_i tokens in context.  Counts are in elements
 * (multiply by the bytes per element for traffic) and multiply-accumulates
 * (the paper's Tables 3-4 count an (a,b)x(b,c) product as abc).
 *
 * Hybrid batch, eq. (8)-(9), which contains eq. (6) (B_d = 0, c_i = l_i =
 * p_i) and eq. (7) (B_p = 0) as special cases:
 *   M = 4h^2 + 2hm                                     weights
 *     + sum_i (8 c_i h + 2 c_i m)                      prefill activations
 *     + n sum_i (2 l_i s + 3 c_i s l_i / b)            prefill attention
 *     + 8 B_d h + 2 B_d m                              decode activations
 *     + n sum_j (2 l^_j s + 2 s)                       decode attention
 *   F = sum_i (4 c_i h^2 + 2 c_i h m + 2 n s l_i c_i) + 4 B_d h^2 + 2 B_d h m
 *     + n sum_j 2 l^_j s.
 * Three readings differ from the printed equations (docs/reproduction.md):
 * the attention terms carry the factor n (the paper derives them for one
 * head, Q, K, V in R^{p x s}, and sums them with whole-layer GEMM terms);
 * eq. (8) writes the prefill GEMM traffic with l_i where the GEMMs see only
 * the c_i tokens of the chunk (eq. (9) has c_i, and both reduce to eq. (6)
 * only with c_i); and the decode term "+ 2s" (the k, v of the new token) is
 * counted for every decode request, not once per batch.
 *
 * Regression, eq. (4)-(5), with t_M = M / M_H and t_F = F / F_H the memory
 * and compute times at the device's bandwidth and throughput:
 *   t = C1 (t_M + t_F) + C2 max(t_M, t_F) + C3 t_M + C4 t_F + C5.
 * Its first feature is the sum of the third and fourth, so C1, C3, C4 are
 * not identifiable: only a_M = C1 + C3, a_F = C1 + C4, C2 and C5 are.
 * afd_perf_fit fits t = C2 max(t_M, t_F) + a_M t_M + a_F t_F + C5 by least
 * squares, which also needs batches on both sides of t_M = t_F (otherwise
 * max equals one of the two and C2 is confounded as well).
 */
#ifndef AFD_PERFMODEL_H
#define AFD_PERFMODEL_H

#include <stddef.h>

#include "afd_model.h"
#include "afd_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct afd_perf_dims {
    double h, n, s, m; /* per tensor-parallel shard */
    double b;          /* attention block size */
} afd_perf_dims;

/* From a model description: h = hidden / tp, n = heads / tp, s = head_dim,
 * m = intermediate / tp; b = block.  AFD_EINVAL for tp < 1, block <= 0, or
 * a model without these sizes. */
AFD_API afd_status afd_perf_dims_from_model(const afd_model *model, double tp, double block,
                                            afd_perf_dims *out);

typedef struct afd_perf_batch {
    size_t n_prefill;
    const double *chunk; /* c_i */
    const double *done;  /* l_i (>= c_i) */
    size_t n_decode;
    const double *ctx;   /* l^_j */
} afd_perf_batch;

/* Memory elements M and multiply-accumulates F of one layer, eq. (8)-(9) as
 * read above.  AFD_EINVAL for negative or non-finite sizes, l_i < c_i, or an
 * empty batch. */
AFD_API afd_status afd_perf_count(const afd_perf_dims *d, const afd_perf_batch *batch,
                                  double *mem, double *flops);

typedef struct afd_perf_fit_result {
    size_t n;
    double c2, a_m, a_f, c5;             /* identifiable coefficients */
    double c2_se, a_m_se, a_f_se, c5_se; /* OLS standard errors */
    double max_rel_err;                  /* max |fit - t| / t over the points */
    double r2;
} afd_perf_fit_result;

/* Least squares of t on (max(t_M, t_F), t_M, t_F, 1) with GSL
 * (gsl_multifit_linear).  AFD_EINVAL for fewer than 5 points, non-finite or
 * negative times, or fewer than 2 points on either side of t_M = t_F (C2
 * not identifiable; err->text says which side is missing). */
AFD_API afd_status afd_perf_fit(const double *t_m, const double *t_f, const double *t, size_t n,
                                afd_perf_fit_result *out, afd_error *err);

#ifdef __cplusplus
}
#endif

#endif /* AFD_PERFMODEL_H */
