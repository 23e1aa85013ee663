/* afd_deadline.h: single- and multi-server queues with a deadline on the
 * wait (M/M/c+D exact, M/G/1+D numerical, M/G/c+D approximate).
 *
 * Model.  Requests arrive as a Poisson process at rate lambda and are served
 * first come first served by c servers; request i needs service S_i, drawn
 * independently from a service law.  A request whose wait in queue would
 * exceed the deadline d leaves without service: it is offloaded (to another
 * pool) or dropped.  Under FCFS the start of a request's service depends only
 * on the requests ahead of it, so "leaves at arrival when the wait it would
 * get exceeds d" (balking on the known wait) and "leaves at time d if not yet
 * started" (reneging) give the same workload process, the same offload
 * fraction and the same waits for those served.  This is the prefill queue of
 * an LP instance that offloads a request before its prefill once its wait
 * reaches d = TTFT SLO - offload threshold (Ascendra, Section 5.3).
 *
 * V(t) is the virtual wait: the wait a request arriving at t would get.  With
 * one server it is the unfinished work.  By PASTA an arrival sees the
 * time-stationary law of V: an atom P0 = P(V = 0) and a density f on (0, inf).
 * The arrival joins iff V <= d, and then waits exactly V, so
 *     p_off            = P(V > d),
 *     P(W <= t | served) = P(V <= t) / (1 - p_off),  0 <= t <= d,
 *     served rate      = lambda (1 - p_off),  offload rate = lambda p_off.
 *
 * Level crossing (Brill & Posner 1977; for the deadline queue Baccelli,
 * Boyer & Hebuterne, J. Appl. Prob. 21 (1984) 887-900): in steady state the
 * rate at which V crosses level x > 0 downwards, f(x) (V falls at rate 1),
 * equals the rate of up-crossings, arrivals that see V = y <= min(x, d),
 * join, and jump over x:
 *     f(x) = lambda P0 Bbar(x) + lambda int_0^min(x,d) f(y) Bbar(x - y) dy,  (V)
 * Bbar(x) = P(S > x).  On [0, d] this is a Volterra equation of the second
 * kind for g = f / P0.  Server balance (busy fraction = served rate x E[S])
 * closes it: 1 - P0 = lambda E[S] (1 - p_off).
 *
 * Statuses: AFD_EINVAL (lambda <= 0, d < 0, c < 1, NaN, a bad law, a
 * percentile outside (0,1)); AFD_ENUMERIC (the numerical solution does not
 * reach its tolerance); AFD_ERANGE (the density overflows: rho > 1 with a
 * deadline of thousands of service times); AFD_ENOMEM.  Outputs NaN on error.
 * A queue with deadlines is stable at every load: rho >= 1 is allowed.
 */
#ifndef AFD_DEADLINE_H
#define AFD_DEADLINE_H

#include <stddef.h>
#include <stdint.h>

#include "afd_status.h"

#ifdef __cplusplus
extern "C" {
#endif

struct afd_hw;

/* ----------------------------------------------------------- service laws */

/* A service-time law: deterministic, exponential, or finitely many atoms
 * (a trace's prefill times).  Opaque; read-only after construction. */
typedef struct afd_svc_law afd_svc_law;

/* Most atoms kept: more distinct values are merged into this many bins of
 * equal probability, each at its bin mean (E[S] is kept exactly; the second
 * moment falls by the within-bin variance, reported by afd_svc_law_bin_var). */
#define AFD_SVC_MAX_ATOMS 1024

AFD_API afd_status afd_svc_law_deterministic(double service, afd_svc_law **law);
AFD_API afd_status afd_svc_law_exponential(double mean, afd_svc_law **law);
/* The empirical law of s[0..n): each value weight 1/n, equal values merged.
 * AFD_EINVAL for a negative or non-finite value or a zero mean; AFD_EEMPTY
 * for n = 0. */
AFD_API afd_status afd_svc_law_samples(const double *s, size_t n, afd_svc_law **law);
/* The prefill time of each prompt served alone, out[i] = a + b P[i] +
 * c P[i]^2 by the prefill law of hw (afd_hw.h, in hw's unit).  AFD_EINVAL
 * when hw has no prefill law. */
AFD_API afd_status afd_prefill_times(const struct afd_hw *hw, const uint64_t *prompt, size_t n,
                                     double *out);
/* The law of a trace's prefill times: afd_prefill_times, each weight 1/n,
 * then as afd_svc_law_samples.  AFD_EINVAL when hw has no prefill law or the
 * law gives a negative or non-finite time; AFD_EEMPTY for n = 0. */
AFD_API afd_status afd_svc_law_prefill(const struct afd_hw *hw, const uint64_t *prompt, size_t n,
                                       afd_svc_law **law);
AFD_API void afd_svc_law_free(afd_svc_law *law);

AFD_API double afd_svc_law_mean(const afd_svc_law *law);
/* Second moment E[S^2] of the law as stored (after binning). */
AFD_API double afd_svc_law_m2(const afd_svc_law *law);
/* Variance lost to binning: E[S^2](samples) - E[S^2](stored), 0 if exact. */
AFD_API double afd_svc_law_bin_var(const afd_svc_law *law);
/* P(S > x), and the q-quantile of S (0 < q < 1). */
AFD_API double afd_svc_law_sf(const afd_svc_law *law, double x);
AFD_API double afd_svc_law_quantile(const afd_svc_law *law, double q);
/* Atoms of an atomic law (0 for the exponential): their count, and the i-th
 * value and weight in increasing order of value. */
AFD_API size_t afd_svc_law_atoms(const afd_svc_law *law);
AFD_API void afd_svc_law_atom(const afd_svc_law *law, size_t i, double *value, double *weight);

/* ----------------------------------------------------------------- results */

typedef struct afd_deadline_result {
    double p_off;       /* P(offload) = P(V > d) */
    double p_zero;      /* P(W = 0 | served) */
    double wait_mean;   /* E[W | served] */
    double wait_q;      /* q-quantile of W given served */
    double served_rate; /* lambda (1 - p_off) */
    double offload_rate;/* lambda p_off */
    double busy;        /* fraction of time all servers are busy (c = 1: 1 - P0) */
    /* absolute error estimates of the four first fields (0 for closed forms
     * but for rounding, which is below 1e-13 relative) */
    double p_off_err, p_zero_err, wait_mean_err, wait_q_err;
    size_t grid;        /* intervals of the finest grid (numerical solver) */
} afd_deadline_result;

/* ----------------------------------------------- M/M/c+D, exact closed form
 *
 * Barrer (Oper. Res. 5 (1957) 650-656, "Queuing with impatient customers and
 * indifferent clerks").  Service Exp(mu), mu = 1/mean, a = lambda / mu.
 * While fewer than c servers are busy V = 0 and the number busy n is a birth
 * and death chain, p_n = p_{c-1} (c-1)! / (n! a^{c-1-n}), n < c, so
 * sum_{n<c} p_n = p_{c-1} / B(c-1, a) with Erlang's B.  While all are busy
 * the next server frees after Exp(c mu) and, by lack of memory, a joining
 * request raises V by Exp(c mu); (V) with Bbar(x) = e^{-c mu x} and P0
 * replaced by p_{c-1} (the only state from which an arrival lifts V off 0)
 * gives, differentiating in x,
 *     f(x) = lambda p_{c-1} e^{-kappa x}               0 < x <= d,
 *     f(x) = f(d) e^{-c mu (x - d)}                   x > d,
 * kappa = c mu - lambda (any sign).  With E = e^{-kappa d}:
 *     p_{c-1} = 1 / (1/B(c-1, a) + lambda (1 - E)/kappa + (lambda / (c mu)) E),
 *     p_off   = p_{c-1} (lambda / (c mu)) E,
 *     P(W <= t | served) = (P(V = 0) + lambda p_{c-1} (1 - e^{-kappa t}) / kappa) / (1 - p_off),
 *     E[W | served] = lambda p_{c-1} int_0^d x e^{-kappa x} dx / (1 - p_off).
 * For c = 1 (M/M/1+D), rho = lambda mean:
 *     p_off = (1 - rho) rho E / (1 - rho^2 E),   E = e^{-mu (1 - rho) d},
 * and 1 / (2 + mu d) at rho = 1.  (1 - E)/kappa is computed as
 * -expm1(-kappa d)/kappa, so kappa -> 0 is continuous.  q is the order of
 * wait_q (0.9 for P90). */
AFD_API afd_status afd_mmc_deadline(double lambda, double mean, unsigned c, double d, double q,
                                    afd_deadline_result *out);

/* ------------------------------------------------- M/G/1+D, numerical
 *
 * Equation (V) on [0, d] is solved for r = (g - lambda Bbar) / lambda, the
 * convolution part of g = f / P0, which is continuous even where Bbar jumps
 * (deterministic and atomic laws):
 *     r(x) = lambda K(x) + lambda int_0^x r(y) Bbar(x - y) dy,
 *     K(x) = int_0^x Bbar(y) Bbar(x - y) dy,
 * by product integration: r piecewise linear on a uniform grid of N
 * intervals, the kernel Bbar integrated exactly against each hat function
 * (exact for any law, jumps included), which is second order in h = d/N.
 * Then, with T(z) = E[(S - z)+], B1(z) = E[min(S, z)]:
 *     G      = int_0^d g = lambda B1(d) + lambda int_0^d r,
 *     p_off / P0 = lambda [T(d) + lambda int_0^d Bbar(y) T(d-y) dy
 *                          + lambda int_0^d r(y) T(d - y) dy],
 *     P0 (1 + G) + p_off = 1,
 * sums of positive terms, so a small p_off keeps its relative accuracy.
 * P(W = 0 | served) = 1/(1 + G); the mean and the q-quantile of the served
 * wait integrate g.
 * Error: the solution is computed on grids of N and 2N intervals, N doubling
 * from max(256, 2 lambda d) until the two agree in every output to
 * tol (absolute; 1e-9 when tol = 0) or N reaches 2^14; each *_err is that
 * difference, which overstates the error of the finer solution about three
 * times for a second-order method.  AFD_ENUMERIC if p_off_err stays above
 * max(tol, 1e-6).  Cost O(N^2 + N atoms log atoms); about 0.1 s at N = 2^14. */
AFD_API afd_status afd_mg1_deadline(double lambda, const afd_svc_law *law, double d, double q,
                                    double tol, afd_deadline_result *out);

/* ------------------------------------------------- M/G/c+D, approximation
 *
 * The diffusion (heavy-traffic) time scaling: the wait of M/G/c is close to
 * that of M/M/c with the same mean service, stretched by k = (1 + cs^2)/2,
 * cs^2 = Var(S)/E[S]^2 (the Allen-Cunneen / Kingman factor; Whitt, "Approximations
 * for the GI/G/m queue", Prod. Oper. Mgmt 2 (1993) 114-161).  A deadline d
 * on the M/G/c wait is then a deadline d/k on the M/M/c wait:
 *     p_off(M/G/c+D; d) ~ p_off(M/M/c+D; d / k),
 *     W(M/G/c+D; d)     ~ k W(M/M/c+D; d / k)   (mean and quantiles),
 * computed with afd_mmc_deadline.  Exact for exponential service, for d = 0
 * (the Erlang loss formula is insensitive to the service law) and in the
 * limit rho > 1, d -> inf (p_off -> 1 - 1/rho).  c = 1 with a non-exponential
 * law is handed to afd_mg1_deadline (exact).  Against the simulator with
 * deterministic service (docs/queues.md, "Deadlines", c = 2, 4, 8): p_off
 * within 5% of the simulated value for rho >= 0.95 and d >= 2 E[S], within
 * 15% for rho >= 0.95 at d = E[S]/2, but 20-50% low at light load with
 * short deadlines (where p_off itself is small); the served mean wait within
 * 17% (up to 21% low at rho = 0.5 with c = 8), the served P90 within 6% for
 * rho >= 0.8.  The *_err
 * fields cover rounding only, not the approximation. */
AFD_API afd_status afd_mgc_deadline(double lambda, const afd_svc_law *law, unsigned c, double d,
                                    double q, afd_deadline_result *out);

/* ------------------------------------- the stream M/M/c+D offloads
 *
 * The requests afd_mmc_deadline offloads (V > d at arrival) form a renewal
 * process: while V > d every arrival is offloaded, and V falls back to d
 * after Exp(c mu) (lack of memory, as above); from there the OFF period (V
 * <= d, every arrival served) always starts alike.  So after an offload the
 * next arrival is offloaded if it comes before V falls to d, else an OFF
 * period passes and the same again:
 *     psi(s) = E[e^{-s tau}] = lambda / (lambda + c mu + s - c mu phi(s)),
 * phi the transform of OFF, the first passage of V above d from V = d (V
 * falling at rate 1, an arrival adding Exp(c mu), the birth and death chain
 * of afd_mmc_deadline while V = 0).  phi solves a second-order linear
 * equation with constant coefficients (overflow.c derives it), so psi is in
 * closed form; its moments give the squared coefficient of variation
 *     scv = Var(tau) / E[tau]^2 = 1 + lambda c mu m2 / (1 + c mu m1)^2,
 * m1, m2 the moments of OFF, with 1 / E[tau] = lambda p_off.  At d = 0 this
 * is the overflow of the Erlang loss system M/M/c/c, a renewal process whose
 * peakedness 1 / (1 - psi(mu)) - lambda p_off / mu is Riordan's
 *     Z = 1 - m + a / (c + 1 + m - a),   m = a B(c, a)
 * (Wilkinson, Bell Syst. Tech. J. 35 (1956) 421-514).  Offloads are
 * bursty (scv > 1): they come in runs while the queue is congested.
 * AFD_EINVAL for lambda, mean <= 0, c < 1, d < 0 or s <= 0; AFD_ENUMERIC
 * where the moments overflow (p_off below about e^{-700}). */
AFD_API afd_status afd_mmc_overflow_lst(double lambda, double mean, unsigned c, double d, double s,
                                        double *lst);
AFD_API afd_status afd_mmc_overflow_scv(double lambda, double mean, unsigned c, double d,
                                        double *scv);

#ifdef __cplusplus
}
#endif

#endif /* AFD_DEADLINE_H */
