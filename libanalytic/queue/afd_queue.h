/* libanalytic/queue/: how long a request waits for a server, and how many
 * servers a wait target needs.  M/D/1 and M/D/c exactly, with the classical
 * approximations and the tail bounds (afd_queue.h); queues with a deadline
 * on the wait (afd_deadline.h); FCFS against shortest-job-first orderings
 * (afd_priority.h). */

/* afd_queue.h: exact M/D/1 and M/D/c queues for prefill (TTFT) sizing, with
 * the classical approximations beside them.
 *
 * Model: FCFS, Poisson arrivals at rate lambda, deterministic service time D
 * ("service"), c identical servers; a = lambda D is the offered load and
 * rho = a / c the utilization.  The queue is stable iff rho < 1.  "Wait" is
 * the wait in queue W (arrival to start of service) of an arriving customer;
 * by PASTA it has the time-stationary law.  BestServe (Section 3.1, 3.4,
 * Section 7) models the prefill stage of disaggregated serving as M/D/1 or
 * M/D/c; the P90 of W plus the prefill time is the P90 TTFT it checks against
 * the SLO (Algorithm 9).
 *
 * Types: a number of servers c is `unsigned` in every afdkit function and
 * struct (montecarlo included), a micro-batch size B likewise `unsigned`.
 *
 * Statuses: AFD_EINVAL for lambda <= 0, D <= 0, c < 1, a percentile outside
 * (0, 1), NaN or infinite arguments; AFD_EUNSTABLE for rho >= 1;
 * AFD_ENUMERIC when a method does not reach its tolerance; AFD_ELIMIT when
 * the truncated chain would exceed its size limit (rho very close to 1).
 * Outputs are NaN on error.  Natural forms return NaN on error.
 *
 * ---- The exact method (Crommelin 1932; Kendall 1953)
 * Look at the system every D time units.  Everyone in service at time t has
 * left by t + D, nobody waiting at t has, and nobody arriving in (t, t + D]
 * has, so the number in system Q satisfies
 *     Q(t + D) = max(Q(t) - c, 0) + A,   A ~ Poisson(a),
 * for every t.  The number waiting X = max(Q - c, 0) is therefore a Markov
 * chain, X' = max(X + A - c, 0), whose stationary law is the time-stationary
 * law of the number waiting, and Q = X + A with A independent of X.
 * Crommelin's observation: a customer arriving at time s waits at most
 * k D + u (0 <= u < D) iff fewer than (k + 1) c of the customers ahead of it
 * are still there at s + u, and those are the X customers waiting at
 * s + u - D plus the arrivals in (s + u - D, s), so
 *     P(W <= k D + u) = P(X + A_u <= (k + 1) c - 1),  A_u ~ Poisson(lambda (D - u)),
 * in particular P(W <= k D) = P(Q <= (k + 1) c - 1) and P(W > 0) = P(Q >= c).
 * Little's law gives the mean: Wq = E[W] = E[X] / lambda.
 */
#ifndef AFD_QUEUE_H
#define AFD_QUEUE_H

#include <stddef.h>

#include "afd_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ M/D/1 */

/* Mean wait in queue of M/D/1 by Pollaczek-Khinchine:
 *     Wq = rho D / (2 (1 - rho)),  rho = lambda D
 * (Pollaczek 1930, Khinchine 1932; Kleinrock, Queueing Systems I, 1975,
 * Section 5.6, with E[S^2] = D^2).  err covers rounding; the condition number
 * of Wq in lambda is 1/(1 - rho). */
AFD_API afd_status afd_md1_wq_e(double lambda, double service, afd_result *result);
AFD_API double afd_md1_wq(double lambda, double service);

/* Waiting-time distribution P(W <= t) of M/D/1 (t < 0 gives 0).
 * Erlang's classical formula (1909)
 *     P(W <= t) = (1 - rho) sum_{j=0}^{floor(t/D)} (lambda (j D - t))^j / j! e^{-lambda (j D - t)}
 * alternates in sign and loses every digit at high load and large t/D, so it
 * is not used.  Instead Crommelin's form above with c = 1,
 *     P(W <= k D + u) = sum_{j=0}^{k} P(X = j) P(A_u <= k - j),
 * where X = max(Q - 1, 0) and the embedded M/G/1 probabilities p_n = P(Q = n)
 * come from the level-crossing recursion (all terms positive)
 *     p_0 = 1 - rho,
 *     p_n = (p_0 P(A >= n) + sum_{i=1}^{n-1} p_i P(A >= n - i + 1)) / P(A = 0),
 * A ~ Poisson(rho) (Kendall 1953; Tijms, A First Course in Stochastic
 * Models, 2003).  Positive sums carry relative errors forward
 * without amplification, so the result is accurate to about
 * (t/D) 40 DBL_EPSILON relative at any rho < 1 (err reports that bound);
 * Poisson tails beyond 40 (below 1e-48) are dropped.  Cost O(40 t/D), no
 * allocation; t/D above 5 10^7 is AFD_ELIMIT.  Once the Chernoff bound of the tail falls below 1e-17 the
 * value is 1 with that bound as err. */
AFD_API afd_status afd_md1_wait_cdf_e(double lambda, double service, double t, afd_result *result);
AFD_API double afd_md1_wait_cdf(double lambda, double service, double t);

/* p-quantile of the M/D/1 wait, inf{t : P(W <= t) >= p}, 0 < p < 1.  It is 0
 * when p <= 1 - rho (the atom at zero).  Otherwise the recursion above is
 * advanced to the interval [k D, (k + 1) D) that holds the quantile and the
 * root of P(W <= t) = p is found there by GSL's Brent solver to 1e-14
 * relative.  err = (CDF error) / (density at the root) + solver tolerance. */
AFD_API afd_status afd_md1_wait_quantile_e(double lambda, double service, double p,
                                           afd_result *result);
AFD_API double afd_md1_wait_quantile(double lambda, double service, double p);

/* ------------------------------------------------------------------ M/D/c */

/* The stationary law of the embedded chain, solved once; every M/D/c query
 * below reads it.  Opaque; thread-safe to read concurrently. */
typedef struct afd_mdc afd_mdc;

/* Solve the M/D/c embedded chain for lambda, service D and c servers.
 *
 * Method: the chain X' = max(X + A - c, 0) is truncated to {0, ..., N} by
 * folding every move above N into N, and the truncated chain is solved by
 * Grassmann-Taksar-Heyman state reduction (Grassmann, Taksar & Heyman,
 * Oper. Res. 33 (1985) 1107-1116), which involves no subtraction and keeps
 * small relative errors in every probability.  The transition matrix is
 * banded (X falls by at most c and rises by at most h = max(A) - c per
 * step), so the cost is O(N c h) and the memory O(N (c + h)).  The Poisson
 * law is cut where its tails carry less than 1e-30 P(A > c); that
 * perturbation is far below rounding.
 *
 * Error bound (computed, and carried in every err below).  The chain is
 * stochastically monotone and falls at most c per step, so the truncated
 * law lies between the exact law conditioned on X <= N and the exact law:
 *     P(X <= x) <= P_N(X <= x) <= P(X <= x) / P(X <= N),   x <= N.
 * The exact tail is bounded by Chernoff: with phi(z) = e^{a (z - 1)} z^{-c}
 * and 1 < z < z0 (z0 the root of phi(z) = 1 above 1),
 *     E[z^X] <= P(X = 0) / (1 - phi(z)),
 *     tau    = P(X > N)      <= min_z P(X = 0) z^{-(N+1)} / (1 - phi(z)),
 *     E[(X - N)+]            <= min_z P(X = 0) z^{-N} / ((1 - phi(z)) (z - 1))
 * (the computed P(X = 0), which is at least the exact one, stands in for
 * P(X = 0)).  Hence every probability below (P(W > 0), P(W <= t),
 * P(Q = n)) is within 2 tau / (1 - tau) of its exact value and E[X] within
 * N tau / (1 - tau) + E[(X - N)+].  N is the smallest integer that makes this
 * bound on E[X] at most 1e-17 P(A > c), a lower bound of both E[X] and
 * P(W > 0), so truncation stays below rounding even at very light load.
 * Rounding adds 4 (N + c + h) DBL_EPSILON relative (GTH sums positive terms).
 * N grows like 35 / (1 - rho) near rho = 1 (N = 517 for c = 64, rho = 0.95);
 * beyond 2^24 stored values (rho above about 0.9996 for c = 64, 0.9999 for
 * c = 1), or for c > INT_MAX, the status is AFD_ELIMIT.
 *
 * Returns AFD_OK and *q, or an error status and *q = NULL. */
AFD_API afd_status afd_mdc_alloc(double lambda, double service, unsigned c, afd_mdc **q);
AFD_API void afd_mdc_free(afd_mdc *q);

/* Truncation level N (the chain is solved on {0..N}) and the bound tau on
 * the neglected tail P(X > N). */
AFD_API size_t afd_mdc_size(const afd_mdc *q);
AFD_API double afd_mdc_tail_bound(const afd_mdc *q);

/* Mean wait in queue Wq = E[X] / lambda (Little's law), exact up to the
 * bound stated at afd_mdc_alloc.  For c = 1 it equals Pollaczek-Khinchine.
 * Far below saturation Wq = D e^-a a^c / (c+1)! S (1 + O(P(A >= c))),
 * S = sum_{j>=0} (j+1) a^j (c+1)! / (c+1+j)! (the first term of the chain,
 * X' >= (A - c)+, relative error bound 4 P(A >= c) + O(DBL_EPSILON)),
 * formed in logarithms: a finite value, 0 or subnormal when it underflows
 * (c = 4000 at rho = 0.5: Wq = 1.85e-341 D).  It is returned wherever
 * P(A > c) < DBL_MIN / DBL_EPSILON (about 1e-292: the chain's terms that
 * matter are subnormal there and have lost their relative precision) and
 * wherever its bound is below the chain's (P(A >= c) below about 1e-14). */
AFD_API afd_status afd_mdc_wq_e(const afd_mdc *q, afd_result *result);
AFD_API double afd_mdc_wq(const afd_mdc *q);

/* Probability of waiting P(W > 0) = P(Q >= c)
 *     = sum_j P(X = j) P(A >= c - j)
 * (PASTA), a sum of positive terms accurate in relative terms even when it
 * is tiny.  For c = 1 it is rho. */
AFD_API afd_status afd_mdc_p_wait_e(const afd_mdc *q, afd_result *result);
AFD_API double afd_mdc_p_wait(const afd_mdc *q);

/* P(W <= t) and P(W > t) by Crommelin's formula (see the top of this file):
 *     P(W <= k D + u) = sum_j P(X = j) P(A_u <= (k + 1) c - 1 - j),
 *     P(W >  k D + u) = P(X > (k + 1) c - 1) + sum_j P(X = j) P(A_u > (k + 1) c - 1 - j),
 * both sums of positive terms, so the second keeps relative accuracy deep in
 * the tail.  t < 0 gives 0 and 1; t = +inf gives 1 and 0. */
AFD_API afd_status afd_mdc_wait_cdf_e(const afd_mdc *q, double t, afd_result *result);
AFD_API double afd_mdc_wait_cdf(const afd_mdc *q, double t);
AFD_API afd_status afd_mdc_wait_sf_e(const afd_mdc *q, double t, afd_result *result);
AFD_API double afd_mdc_wait_sf(const afd_mdc *q, double t);

/* p-quantile of the wait, inf{t : P(W <= t) >= p}, 0 < p < 1: 0 when
 * p <= 1 - P(W > 0) (to within the error bound); otherwise the interval
 * [k D, (k + 1) D) holding it is found by bisection on k and the root of
 * P(W <= t) = p (for p > 1/2: P(W > t) = 1 - p) by GSL's Brent solver to
 * 1e-14 relative.
 * err = (distribution error) / (density at the root) + solver tolerance. */
AFD_API afd_status afd_mdc_wait_quantile_e(const afd_mdc *q, double p, afd_result *result);
AFD_API double afd_mdc_wait_quantile(const afd_mdc *q, double p);

/* P(Q = n), the stationary number in system (time average and as seen by
 * arrivals): sum_j P(X = j) P(A = n - j).  n >= 0. */
AFD_API afd_status afd_mdc_number_pmf_e(const afd_mdc *q, long n, afd_result *result);

/* ---------------------------------------------------------- approximations
 * Each is exact for c = 1 except Kingman's.  Their distance from the exact
 * Wq was measured with afd_mdc_wq on the grid c in {1, 2, 4, 8, 16, 32, 64,
 * 128, 256}, rho in {0.1, 0.2, ..., 0.9, 0.95, 0.99, 0.999}, as the signed
 * relative error (approx - exact) / exact:
 *   Cosmetatos     rho >= 0.9: within +-2.4% (worst c = 256, rho = 0.9);
 *                  0.7 <= rho < 0.9: within +-6.6%; lighter loads: too high,
 *                  +11% at c = 64, rho = 0.5 and up to 9x at c = 256,
 *                  rho = 0.1, where Wq itself is below 1e-150 D.
 *   Allen-Cunneen  always too low: -0.7% .. -21% at rho = 0.9 (c = 2 .. 256),
 *                  -0.07% .. -1.5% at rho = 0.99; tends to -50% at light load
 *                  with many servers.
 *   Kingman        always too high: +0.2% .. +2% at rho = 0.999, +2% .. +22%
 *                  at rho = 0.99, +24% (c = 1) .. 13x (c = 256) at rho = 0.9;
 *                  meaningless at light load (it stays of order D/(2c) while
 *                  Wq vanishes).
 * err in these functions covers rounding only, not the approximation. */

/* Erlang's C formula, the M/M/c probability of waiting, for offered load
 * a = lambda D < c, computed from the Erlang B recursion
 *     B_0 = 1,  B_k = a B_{k-1} / (k + a B_{k-1}),
 *     C = B_c / (1 - rho (1 - B_c)),
 * whose terms are all positive (no overflow, no cancellation; Jagerman,
 * Bell Syst. Tech. J. 53 (1974) 525-551).  Cost O(c). */
AFD_API afd_status afd_erlang_c_e(double a, unsigned c, afd_result *result);
AFD_API double afd_erlang_c(double a, unsigned c);

/* Mean wait of M/M/c with mean service time D: Wq = C(c, a) D / (c - a). */
AFD_API afd_status afd_mmc_wq_e(double lambda, double service, unsigned c, afd_result *result);
AFD_API double afd_mmc_wq(double lambda, double service, unsigned c);

/* Cosmetatos' approximation (G. P. Cosmetatos, "Approximate explicit
 * formulae for the average queueing time in the processes (M/D/r) and
 * (D/M/r)", INFOR 13 (1975) 328-331):
 *     Wq(M/D/c) ~ 1/2 Wq(M/M/c) [1 + (1 - rho) (c - 1) (sqrt(4 + 5c) - 2) / (16 rho c)]. */
AFD_API afd_status afd_mdc_wq_cosmetatos_e(double lambda, double service, unsigned c,
                                           afd_result *result);
AFD_API double afd_mdc_wq_cosmetatos(double lambda, double service, unsigned c);

/* Allen-Cunneen (A. O. Allen, Probability, Statistics and Queueing Theory,
 * 2nd ed., 1990, Section 6.3) for G/G/c, Wq ~ Wq(M/M/c) (ca^2 + cs^2) / 2,
 * with ca^2 = 1 (Poisson) and cs^2 = 0 (deterministic):
 *     Wq(M/D/c) ~ 1/2 Wq(M/M/c). */
AFD_API afd_status afd_mdc_wq_allen_cunneen_e(double lambda, double service, unsigned c,
                                              afd_result *result);
AFD_API double afd_mdc_wq_allen_cunneen(double lambda, double service, unsigned c);

/* Kingman's heavy-traffic form for GI/G/c (J. F. C. Kingman, "The heavy
 * traffic approximation in the theory of queues", Proc. Symp. Congestion
 * Theory, 1965, 137-169; Kollerstrom, J. Appl. Prob. 11 (1974) 544-552):
 *     Wq ~ (sigma_A^2 + sigma_S^2 / c^2) / (2 (1/lambda - D/c)),
 * with sigma_A = 1/lambda (Poisson) and sigma_S = 0 (deterministic):
 *     Wq(M/D/c) ~ 1 / (2 lambda (1 - rho)) = D / (2 c rho (1 - rho)).
 * Exact as rho -> 1 for fixed c, and far too large at light load (it ignores
 * idle servers); for c = 1 it is Pollaczek-Khinchine divided by rho^2. */
AFD_API afd_status afd_mdc_wq_kingman_e(double lambda, double service, unsigned c, afd_result *result);
AFD_API double afd_mdc_wq_kingman(double lambda, double service, unsigned c);

/* The three approximations above beside an exact mean wait wq_exact (the
 * afd_mdc_wq_e of the same queue): each value and its relative error
 * err = (approximation - wq_exact) / wq_exact: 0 when the two are equal
 * (both 0 far below saturation, where they underflow), +-inf when only
 * wq_exact is 0, NaN when it is NaN.  AFD_OK, or the status of the approximations
 * (AFD_EINVAL, AFD_EUNSTABLE), every field then NaN. */
typedef struct afd_mdc_approx {
    double wq_cosmetatos, wq_allen_cunneen, wq_kingman;
    double err_cosmetatos, err_allen_cunneen, err_kingman;
} afd_mdc_approx;
AFD_API afd_status afd_mdc_approx_compare(double lambda, double service, unsigned c,
                                          double wq_exact, afd_mdc_approx *out);

#ifdef __cplusplus
}
#endif

/* ----------------------------------------------------------- routed pools
 * Mean wait in queue of n identical FIFO servers fed by a Poisson stream of
 * rate lambda as a router at arrival splits it, service S with E[S] = es
 * and E[S^2] = es2 (>= es^2).  Sources and which forms are exact: routed.c.
 * AFD_EINVAL for bad arguments, AFD_EUNSTABLE when lambda es >= n. */
typedef enum afd_routed_kind {
    AFD_ROUTED_RANDOM,       /* M/G/1 per server at lambda / n: exact */
    AFD_ROUTED_ROUND_ROBIN,  /* E_n/G/1: exact for exponential service */
    AFD_ROUTED_GLOBAL,       /* one shared queue, M/G/c: exact for exponential */
    AFD_ROUTED_LEAST,        /* join the shortest queue: M/G/c, a lower bound */
    AFD_ROUTED_POWER_OF_TWO  /* the supermarket model's mean field, d = 2 */
} afd_routed_kind;
AFD_API afd_status afd_routed_wq(afd_routed_kind how, double lambda, double es, double es2,
                                 unsigned n, double *wq);

/* The same wait with its chance of being positive, pwait = P(W > 0)
 * (routed.c: exact for random, for round-robin with exponential service,
 * for global with exponential service; the least-load routers'
 * approximations). */
typedef struct afd_routed_result {
    double wq, pwait;
} afd_routed_result;
AFD_API afd_status afd_routed_wait(afd_routed_kind how, double lambda, double es, double es2,
                                   unsigned n, afd_routed_result *out);

/* The q-quantile t of shift + W + X: W an atom 1 - pwait at 0 and, beyond
 * it, exponential of mean wq / pwait (the G/M/1 and M/M/c waits' law,
 * Kleinrock, Queueing Systems I, Secs. 3.5 and 6.4), X exponential of mean
 * xmean (0: none), independent: P(W + X > u) = (1 - p) e^{-u / xmean} + p
 * (the convolution of the two exponentials), solved by bisection.  With
 * pwait = sigma, wq = sigma / (mu (1 - sigma)), xmean = 1 / mu it is
 * E_n/M/1's sojourn, exponential of rate mu (1 - sigma).  AFD_EINVAL for
 * q outside (0, 1), negative or non-finite arguments, pwait outside
 * [0, 1], or one of wq, pwait zero and not the other. */
AFD_API afd_status afd_routed_quantile(double wq, double pwait, double shift, double xmean, double q,
                                       double *t);

#endif /* AFD_QUEUE_H */
