/* afd_calibrate.h: latency coefficients from measured latencies
 * (afd-provisioning paper, Appendix B: Table 3 "obtained via linear
 * regression on real execution traces").
 *
 * Fits t = alpha x + beta to points (x_i, t_i) by ordinary least squares
 * (GSL's gsl_multifit_linear, SVD on OpenBLAS) with the usual standard
 * errors sqrt(s^2 (X^T X)^-1), s^2 = RSS/(n - 2), and R^2 = 1 - RSS/TSS; and by
 * a robust M-estimator (gsl_multifit_robust, Tukey bisquare, iteratively
 * reweighted), which recovers the line when a few measurements are
 * outliers (a preempted kernel, a cold cache).
 */
#ifndef AFD_CALIBRATE_H
#define AFD_CALIBRATE_H

#include <stddef.h>

#include "afd_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct afd_points {
    size_t n;
    double *x;  /* load: token load T, or batch rB */
    double *t;  /* measured latency */
    long *line; /* source line of each point (CSV input), or NULL */
} afd_points;

/* Read columns x_col and t_col of a CSV file (afd_csv.h) as real numbers;
 * NaN, inf and empty values are errors naming the line.  AFD_EEMPTY for a
 * file with no data rows. */
AFD_API afd_status afd_points_read(const char *path, const char *x_col, const char *t_col,
                                   afd_points *out, afd_error *err);
AFD_API void afd_points_free(afd_points *p);

typedef struct afd_fit {
    size_t n;
    double alpha, beta;       /* OLS slope and intercept */
    double alpha_se, beta_se; /* their standard errors */
    double r2;                /* coefficient of determination */
    double sigma;             /* residual standard deviation sqrt(RSS/(n-2)) */
    double alpha_robust, beta_robust;       /* bisquare M-estimate */
    double alpha_robust_se, beta_robust_se; /* GSL's robust covariance, scaled to
                                               the robust scale sigma_robust */
    double sigma_robust;      /* robust scale estimate (GSL's sigma_rob) */
    size_t outliers;          /* points with final robust weight below 0.5 */
    int robust_converged;     /* 0 when the robust iteration stopped at GSL's limit
                                 (GSL_EMAXITER): the robust figures are then NaN */
    size_t robust_iter;       /* iterations the robust fit ran */
    double alpha_round, beta_round; /* rounding bounds: 64 eps (max|t| + |alpha| max|x|)
                                       for beta, that over max x - min x for alpha */
} afd_fit;

/* Fit both lines.  weights, if not NULL, receives the n final robust weights
 * (1 = fully trusted, 0 = rejected).  A robust fit that has not converged
 * when GSL's iteration limit is reached (gsl_multifit_robust returns
 * GSL_EMAXITER) is not a fit: robust_converged is 0, robust_iter says how
 * many iterations ran, alpha_robust, beta_robust, their errors, sigma_robust
 * and the weights are NaN and outliers is 0, while the least-squares figures
 * stand and the status is AFD_OK.  The data are scaled by powers of two
 * (exactly) before fitting, so values up to DBL_MAX fit.  Errors: AFD_EINVAL
 * for n < 3 points, non-finite values, or all x equal (the slope is
 * undefined); AFD_ERANGE when a fitted figure is not a finite double (a slope
 * beyond DBL_MAX); AFD_ENUMERIC if GSL fails.  err->text says which. */
AFD_API afd_status afd_fit_line(const double *x, const double *t, size_t n, afd_fit *out,
                                double *weights, afd_error *err);

/* A coefficient that must be >= 0 (an intercept of a latency file, the
 * communication slope): when |v| is within its rounding bound round
 * (afd_fit's *_round) of 0, whichever its sign (the sign of a rounding error
 * depends on the CPU's kernels), or v is negative by no more than its
 * standard error se, set *v = 0 and return 1; otherwise leave it (a -0 is
 * made 0) and return 0: a positive coefficient beyond its rounding bound is
 * kept, a clearly negative one is the caller's to refuse. */
AFD_API int afd_fit_clamp(double *v, double se, double round);

/* ---- serving laws from measured batches
 *
 * The laws of a latency file (afd_hw.h), fitted to measured batch times:
 *   prefill batch with prompts P_i:       t = a + b S1 + c S2,
 *        S1 = sum P_i, S2 = sum P_i^2     (prefill_a, prefill_b, prefill_c)
 *   decode step, b sequences, K KV tokens: t = beta + gamma b + alpha K
 *                                          (decode_beta, decode_gamma, decode_alpha)
 * Both are linear in their three coefficients: ordinary least squares on
 * the design [1, x1, x2] (x1, x2 = S1, S2 or b, K) with GSL's
 * gsl_multifit_linear, standard errors sqrt(s^2 (X^T X)^-1), s^2 = RSS/(n - 3).
 * Ordinary least squares weighs every batch alike, so batches with long
 * times dominate; max_rel_err says how well the short ones are met. */

typedef enum afd_law_kind { AFD_LAW_PREFILL = 0, AFD_LAW_DECODE = 1 } afd_law_kind;

typedef struct afd_law_points {
    afd_law_kind kind; /* which law, for the coefficient names in messages */
    size_t n;
    double *x1, *x2; /* prefill: S1, S2; decode: b, K */
    double *t;       /* measured time, > 0 */
    long *line;      /* source line of each point (CSV input), or NULL */
    char x1_name[24], x2_name[24]; /* what x1 and x2 were read from, for messages:
                                      "sum_p", "batch x prompt", "batch", "kv", ... */
} afd_law_points;

/* Read measured batches from a CSV file (afd_csv.h), the time in column t_col:
 *   prefill: columns sum_p and sum_p2 (S1 and S2 of each batch), or batch and
 *            prompt (batch prompts of prompt tokens each: S1 = batch prompt,
 *            S2 = batch prompt^2);
 *   decode:  columns batch (b) and kv (K, the KV tokens the b sequences hold
 *            in all), or batch and context (tokens per sequence: K = batch
 *            context).
 * Every value finite; batch >= 1, prompt >= 1, sum_p >= 1, kv and context
 * >= 0, t > 0; and sum_p <= sum_p2 <= sum_p^2 (the sums of one batch's
 * prompt lengths, each at least 1, and of their squares).  Errors name the
 * line, the column and the value; a header with both forms, or neither, is
 * an error naming the header.  AFD_EEMPTY for no data rows. */
AFD_API afd_status afd_law_points_read(const char *path, afd_law_kind kind, const char *t_col,
                                       afd_law_points *out, afd_error *err);
AFD_API void afd_law_points_free(afd_law_points *p);

typedef struct afd_law_fit {
    size_t n;
    double coef[3];     /* prefill: a, b, c; decode: beta, gamma, alpha */
    double se[3];       /* their standard errors */
    double r2;          /* 1 - RSS/TSS */
    double sigma;       /* residual standard deviation sqrt(RSS/(n - 3)) */
    double max_rel_err; /* max_i |fit_i - t_i| / t_i */
    size_t worst;       /* index of the point with that error */
} afd_law_fit;

/* Fit one law.  Errors (AFD_EINVAL, err->text one line naming the lines,
 * values and coefficients): fewer than 4 points (three coefficients and their errors need
 * n - 3 >= 1); x1 or x2 the same on every row (its coefficient cannot be
 * told from the intercept: e.g. every decode row at one batch size); x2 a
 * linear function of x1 on every row (e.g. one context length for every
 * decode batch, or every prompt of one length: K = context b, S2 = P S1),
 * found as a smallest singular value below 1e-9 of the largest of the
 * design with its columns scaled to unit length.  AFD_ENUMERIC if GSL fails. */
AFD_API afd_status afd_fit_law(const afd_law_points *p, afd_law_fit *out, afd_error *err);

/* max_i |c0 + c1 x1_i + c2 x2_i - t_i| / t_i over the points, and its index
 * in *worst (may be NULL); NAN for no points. */
AFD_API double afd_law_max_rel_err(const afd_law_points *p, const double coef[3], size_t *worst);

#ifdef __cplusplus
}
#endif

#endif /* AFD_CALIBRATE_H */
