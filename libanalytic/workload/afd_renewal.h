/* afd_renewal.h: the stationary per-slot token load Y of Lemma 4.1
 * (afd-provisioning paper, Section 4.1 and Appendix A.1, A.6).
 *
 * A decode slot serves requests one after another; request n has prompt
 * length P_n and decode lifetime D_n >= 1 and contributes the load P_n + a at
 * ages a = 0..D_n-1.  Observed at a uniformly random decode step the load is
 * Y, with (eq. 3)
 *
 *   theta  = E[Y]   = E[D P + D(D-1)/2] / E[D]
 *   E[Y^2]          = E[D P^2 + P D(D-1) + D(D-1)(2D-1)/6] / E[D]
 *   nu^2   = Var(Y) = E[Y^2] - theta^2.
 *
 * Three sources give the same statistics: a request trace (the ratio
 * estimators of eq. 15-16, with standard errors), independent P and D given
 * by their moments (eq. 4), and the geometric model of Corollary 4.5.
 */
#ifndef AFD_RENEWAL_H
#define AFD_RENEWAL_H

#include <stdint.h>

#include "afd_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct afd_renewal_stats {
    uint64_t n;      /* requests used (0 for closed forms) */
    double theta;    /* E[Y] */
    double nu;       /* sqrt(Var Y) */
    double theta_se; /* standard error of theta (0 for closed forms, NaN if n < 2) */
    double nu_se;    /* standard error of nu (likewise) */
    double cov_theta_nu; /* covariance of the two estimates (0 for closed forms) */
    double ey2;      /* E[Y^2] */
    double mean_p;   /* arithmetic mean of P over the requests (NaN if unknown) */
    double mean_d;   /* arithmetic mean of D (NaN if unknown) */
} afd_renewal_stats;

/* Streaming accumulator of the trace estimator (eq. 15-16).
 *
 * Per request it adds the cycle rewards a = D P + D(D-1)/2,
 * b = D P^2 + P D(D-1) + D(D-1)(2D-1)/6 and the cycle length D, as exact
 * integers (2a and 6b in 128 bits), so theta = sum a / sum D and
 * nu^2 = (sum b sum D - (sum a)^2) / (sum D)^2 are each rounded once, at the
 * end, whatever the number of rows.  Co-moments of (a, b, D) for the
 * standard errors are kept with Welford's update in long double. */
typedef struct afd_renewal_acc afd_renewal_acc;

AFD_API afd_renewal_acc *afd_renewal_acc_alloc(void);
AFD_API void afd_renewal_acc_free(afd_renewal_acc *acc);
AFD_API void afd_renewal_acc_reset(afd_renewal_acc *acc);

/* Add one request.  d must be >= 1 (AFD_EINVAL otherwise; the caller decides
 * what to do with D = 0 rows).  AFD_ERANGE if a reward or a running sum would
 * exceed 2^125 (e.g. P near 2^63): the accumulator is then left unchanged. */
AFD_API afd_status afd_renewal_acc_add(afd_renewal_acc *acc, uint64_t p, uint64_t d);

/* Requests added so far. */
AFD_API uint64_t afd_renewal_acc_count(const afd_renewal_acc *acc);

/* Estimates and standard errors (AFD_EEMPTY if no request was added).
 *
 * Standard errors, by the delta method for ratio estimators: with
 * dbar = mean D, theta_hat - theta ~ mean of psi_i = (a_i - theta D_i)/dbar,
 * and nu^2_hat - nu^2 ~ mean of (b_i - q D_i - 2 theta (a_i - theta D_i))/dbar
 * with q = E[Y^2], so nu_hat - nu has influence that over 2 nu.  The standard
 * error is the sample standard deviation of the influence over sqrt(n); it
 * needs finite second moments of a and b (fourth moment of Y's cycle reward),
 * and is NaN for n < 2.  nu_se is 0 when every request is identical.
 * cov_theta_nu is the covariance of the two influences over n, so that
 * functions of both (the A/F ratio) get their delta-method error too. */
AFD_API afd_status afd_renewal_acc_stats(const afd_renewal_acc *acc, afd_renewal_stats *out);

/* Moments of independent P and D for eq. (4). */
typedef struct afd_length_moments {
    double mean_p; /* E[P]    >= 0 */
    double var_p;  /* Var(P)  >= 0 */
    double mean_d; /* E[D]    >= 1 */
    double m2_d;   /* E[D^2]  >= E[D]^2 */
    double m3_d;   /* E[D^3] */
} afd_length_moments;

/* Lemma 4.1 for independent P and D (eq. 4 and the second identity of eq. 3):
 *   theta = E[P] + (E[D] - 1)/2 + Var(D)/(2 E[D]),
 *   E[Y^2] = (E[D] E[P^2] + E[P] E[D(D-1)] + E[D(D-1)(2D-1)]/6) / E[D].
 * AFD_EINVAL for moments outside their domain. */
AFD_API afd_status afd_renewal_independent(const afd_length_moments *m, afd_renewal_stats *out);

/* Corollary 4.5 in the parametrisation of the command-line contract:
 * P ~ Geometric on {1,2,...} with mean mu_p and D ~ Geometric on {1,2,...}
 * with mean mu_d, independent; then theta = mu_p + mu_d - 1 and
 * nu^2 = mu_p (mu_p - 1) + mu_d (mu_d - 1).  Needs mu_p, mu_d >= 1
 * (AFD_EINVAL); AFD_ERANGE when E[Y^2] = nu^2 + theta^2 overflows a double
 * (means beyond about 5e153). */
AFD_API afd_status afd_renewal_geometric(double mu_p, double mu_d, afd_renewal_stats *out);

/* theta and nu given directly (theta > 0, nu >= 0); AFD_ERANGE when
 * E[Y^2] = nu^2 + theta^2 overflows a double. */
AFD_API afd_status afd_renewal_given(double theta, double nu, afd_renewal_stats *out);

#ifdef __cplusplus
}
#endif

#endif /* AFD_RENEWAL_H */
