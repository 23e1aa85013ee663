/* afd_twotier.h: TTFT attainment and capacity of one prefill pool against a
 * two-tier LP/HP split (Ascendra, Sections 4-6), from the closed forms of
 * afd_deadline.h.  A prefill-only model: decode interference and TBT are not
 * in it.
 *
 * Requests arrive as a Poisson process at rate lambda with service (prefill
 * time) S from a law; the TTFT SLO is T.
 *
 * One pool (hp = 0): lp instances, FCFS, no offload.  The wait W is that of
 * M/G/c, approximated by M/M/c stretched in time by k = (1 + cs^2)/2
 * (exact for exponential service; for c = 1 it keeps the Pollaczek-Khinchine
 * mean): P(W > t) = C(c, a) e^{-(c mu - lambda) t / k}, C Erlang's C.
 * Under FCFS a request's wait does not depend on its own S, so
 *     A = E_S[ P(W <= T - S) ].
 * rho >= 1: A = 0.
 *
 * Two tiers (hp >= 1): lp LP instances offload a request once it has waited
 * d = T - X (X the offload threshold), so the LP pool is M/G/c+D with
 * deadline d, approximated as in afd_mgc_deadline (M/M/c+D with deadline
 * d/k, waits times k); a request served there meets the SLO iff W + S <= T:
 *     A_LP = E_S[ P(W <= T - S | served) ].
 * Offloaded requests reach the HP pool at rate lambda p_off with X left; the
 * HP pool is taken as M/G/hp FCFS fed by a Poisson stream (the thinning is
 * not exactly Poisson), with the same wait law as one pool:
 *     A_HP = E_S[ P(W_HP <= X - S) ],
 *     A    = (1 - p_off) A_LP + p_off A_HP.
 * Expectations over S are sums over the atoms of the law, or for the
 * exponential law quadratures to 1e-10 (GSL QNG with bisection).
 */
#ifndef AFD_TWOTIER_H
#define AFD_TWOTIER_H

#include "afd_deadline.h"
#include "afd_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct afd_twotier {
    const afd_svc_law *law;
    int lp;           /* LP instances (the pool when hp = 0), >= 1 */
    int hp;           /* HP instances, >= 0 */
    double ttft_slo;  /* T > 0 */
    double threshold; /* X in (0, T]: offload after waiting T - X (hp >= 1) */
} afd_twotier;

typedef struct afd_twotier_result {
    double attainment; /* fraction of requests meeting the TTFT SLO */
    double p_off;      /* fraction offloaded to HP (0 for one pool) */
    double attain_lp;  /* among those served on LP (the pool) */
    double attain_hp;  /* among those offloaded (NaN for one pool) */
    double rho_hp;     /* HP utilization lambda p_off E[S] / hp (NaN for one pool) */
} afd_twotier_result;

/* AFD_EINVAL for bad arguments; AFD_ENUMERIC if a quadrature fails. */
AFD_API afd_status afd_twotier_attainment(const afd_twotier *m, double lambda,
                                          afd_twotier_result *out);

/* The largest lambda whose attainment is at least target (0 < target < 1),
 * by bisection to 1e-9 relative (attainment falls with lambda in this
 * model); 0 when even light load misses the target (T too short for the
 * service law). */
AFD_API afd_status afd_twotier_capacity(const afd_twotier *m, double target, double *lambda);

#ifdef __cplusplus
}
#endif

#endif /* AFD_TWOTIER_H */
