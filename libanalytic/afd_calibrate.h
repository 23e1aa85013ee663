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
    double alpha_round, beta_round; /* rounding bounds: 64 eps (max|t| + |alpha| max|x|)
                                       for beta, that over max x - min x for alpha */
} afd_fit;

/* Fit both lines.  weights, if not NULL, receives the n final robust weights
 * (1 = fully trusted, 0 = rejected).  The data are scaled by powers of two
 * (exactly) before fitting, so values up to DBL_MAX fit.  Errors: AFD_EINVAL
 * for n < 3 points, non-finite values, or all x equal (the slope is
 * undefined); AFD_ERANGE when a fitted figure is not a finite double (a slope
 * beyond DBL_MAX); AFD_ENUMERIC if GSL fails.  err->text says which. */
AFD_API afd_status afd_fit_line(const double *x, const double *t, size_t n, afd_fit *out,
                                double *weights, afd_error *err);

/* A coefficient that must be >= 0 (an intercept of a latency file, the
 * communication slope) but was fitted slightly negative: when -v is within
 * its standard error se or its rounding bound round (afd_fit's *_round) of
 * 0, set *v = 0 and return 1; otherwise leave it and return 0 (a clearly
 * negative coefficient, which the caller refuses). */
AFD_API int afd_fit_clamp(double *v, double se, double round);

#ifdef __cplusplus
}
#endif

#endif /* AFD_CALIBRATE_H */
