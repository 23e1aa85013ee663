/* afd_barrier.h: Gaussian order statistics for the cross-worker barrier
 * (afd-provisioning paper, Section 4.2, Theorem 4.3, eq. 5, 7, 9).
 *
 * M_r is the maximum of r iid N(0,1) variables, with CDF Phi(m)^r.  Both
 * quantities below are computed from that CDF by integration by parts, which
 * keeps the integrands positive and free of cancellation:
 *
 *   kappa_r        = E[M_r]        = int_0^inf (1 - Phi^r) - int_0^inf Phi(-z)^r dz
 *   E[(M_r - z)+]                  = int_z^inf (1 - Phi(m)^r) dm
 *
 * (the second is the integral of eq. 9 after one integration by parts).
 * Integrals run over a partition adapted to r, each piece by GSL's
 * Gauss-Kronrod-Patterson rule; neglected tails are bounded analytically and
 * included in the reported error.  Accuracy: relative error below 1e-12 for
 * 1 <= r <= 1e9 (checked against exact values for r <= 5 and an independent
 * quadrature of eq. 5).  r may be real (Phi^r is a CDF for any r > 0); the
 * paper uses integer r.
 */
#ifndef AFD_BARRIER_H
#define AFD_BARRIER_H

#include "afd_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The largest r of kappa_r and of the functions below. */
#define AFD_KAPPA_R_MAX 1e15

/* r within [1, AFD_KAPPA_R_MAX]: afd_check_range's status and message. */
AFD_API afd_status afd_kappa_check_r(double r, afd_error *err);

/* kappa_r = E[max of r iid N(0,1)], eq. (5).  r >= 1 (AFD_EINVAL otherwise).
 * kappa_1 = 0, kappa_2 = 1/sqrt(pi), kappa_3 = 3/(2 sqrt(pi)); kappa_r ~
 * sqrt(2 log r) for large r. */
AFD_API afd_status afd_kappa_e(double r, afd_result *result);
AFD_API double afd_kappa(double r);

/* E[(M_r - z)_+] = int_z^inf (m - z) r phi(m) Phi(m)^(r-1) dm, the integral
 * in the Gaussian cycle time (eq. 9).  r >= 1, z finite.
 * For r = 1 it equals phi(z) - z (1 - Phi(z)) (Appendix A.4). */
AFD_API afd_status afd_max_normal_excess_e(double r, double z, afd_result *result);
AFD_API double afd_max_normal_excess(double r, double z);

/* P(M_r > z) = 1 - Phi(z)^r, computed without cancellation.  NaN if r < 1
 * or z is NaN. */
AFD_API double afd_max_normal_sf(double r, double z);

/* Relative synchronization overhead predicted by the CLT (Theorem 4.3, eq. 7):
 * E[W_{B,r}]/(B theta) - 1 = (nu/theta) kappa_r / sqrt(B).  NaN if theta <= 0,
 * B < 1 or r < 1. */
AFD_API double afd_barrier_overhead_clt(double theta, double nu, double B, double r);

#ifdef __cplusplus
}
#endif

#endif /* AFD_BARRIER_H */
