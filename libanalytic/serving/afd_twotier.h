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
 * Offloaded requests reach the HP pool at rate lambda p_off with X left.
 * They are not Poisson: the LP pool offloads in runs while it is congested.
 * In the M/M/c+D model they form a renewal stream (afd_mmc_overflow_lst,
 * afd_deadline.h), so the HP pool is GI/M/hp FCFS, whose wait is exact
 * (Takacs): P(W_HP > t) = D/(1 - sigma) e^{-hp mu (1 - sigma) t}, sigma =
 * psi(hp mu (1 - sigma)); for another law stretched in time by (ca^2 +
 * cs^2)/(ca^2 + 1), ca^2 the stream's scv (afd_mmc_overflow_scv):
 *     A_HP = E_S[ P(W_HP <= X - S) ],
 *     A    = (1 - p_off) A_LP + p_off A_HP.
 * Expectations over S are sums over the atoms of the law, or for the
 * exponential law quadratures to 1e-10 (GSL QNG with bisection).
 */
#ifndef AFD_TWOTIER_H
#define AFD_TWOTIER_H

#include <stddef.h>

#include "afd_deadline.h"
#include "afd_hw.h"
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

/* ---- the serving simulator's two tiers (afdkit serve --arch twotier)
 *
 * The same decomposition for the policy of montecarlo/serve/afd_serve_twotier.h,
 * FCFS on both tiers, no tickets, no drops, TTFT attainment only.
 * Request r has prompt P_r (uniform over prompts[0..n)), predicted prefill
 * pi_r = a + b P_r + c P_r^2 (the prefill law), and is offloaded once its
 * slack T - wait - pi_r falls to X, i.e. after waiting d_r = T - X - pi_r;
 * the model uses one deadline d = max(T - X - E[pi], 0) (exact for fixed
 * prompts).
 * LP service.  An LP instance prefills in chunked iterations shared with its
 * decodes.  With E[G] = 1 (no decode) a prompt takes ceil(P / S) iterations:
 *     S_r = ceil(P_r / S) a + b P_r + c P_r^2      (exact alone).
 * With decodes, the chunked closed form (afd_serving_chunked, (C1)-(C3)) at
 * the LP rate lambda (1 - p_off) gives the mean number nbar of decodes in
 * an iteration; each of the ceil(P_r / (S - nbar)) iterations of the prompt
 * costs a_eff + nbar cd (a_eff = beta (1 - e^-nbar) + a e^-nbar, cd = gamma
 * + alpha (E[P] + E[G]/2)):
 *     S_r = ceil(P_r / (S - nbar)) (a_eff + nbar cd) + b P_r + c P_r^2.
 * p_off depends on the LP rate and the LP rate on p_off: a fixed point,
 * found by bisection to 1e-12 (where F jumps, at the jump).
 * HP.  Offloads reach the hp instances at lambda p_off (the renewal stream
 * of the LP model, as above: GI/G/hp, wait W_HP with the law of pi) and are
 * prefilled first, every waiting one in one batch.  The request had X +
 * pi_r left at its offload.  The offloads that arrive while it waits join
 * its batch (a = lambda p_off E[pi] of them per unit of wait, each adding
 * pi), and when it finds no prefill it waits for the end of the decode step
 * under way (probability 1 - e^-n, n the HP sequences per instance by
 * Little's law, R uniform on the step tau(n), the step the simulator takes:
 * hw's decode table where it has one, else beta + n cd; no such n, the
 * decodes do not keep up: A_HP = 0); with u = X / (1 + a):
 *     A_HP = P(W_HP <= u) - P(W_HP = 0) (1 - e^-n) (1 - min(1, u / tau)),
 *     A    = (1 - p_off) E_S[P(W_LP <= T - S) | served] + p_off A_HP
 * (twotier.c, hp_attainment, for the sources).
 * hp = 0: one chunked pool, A = E_S[P(W <= T - S)] with the M/G/lp wait.
 * Errors of the model against the simulator: docs/twotier.md. */
typedef struct afd_twotier_serve_params {
    const afd_hw *hw;       /* prefill and decode laws */
    double lambda;          /* Poisson arrival rate > 0 */
    unsigned lp, hp;        /* lp >= 1, hp >= 0 */
    unsigned chunk;         /* LP tokens per iteration, > decode_bmax */
    unsigned decode_bmax;   /* LP sequences per instance */
    const double *prompts;  /* prompt lengths >= 1, each weight 1/n */
    size_t n;               /* >= 1 */
    double output_mean;     /* E[G] >= 1 */
    double ttft_slo;        /* T > 0 */
    double threshold;       /* X >= 0 (hp >= 1) */
} afd_twotier_serve_params;

/* Fills attainment, p_off, attain_lp, attain_hp, rho_hp (as
 * afd_twotier_attainment).  AFD_EINVAL for bad parameters; AFD_EUNSTABLE
 * when the LP instances cannot keep up with their decodes (the chunked
 * closed form's decode limit); AFD_ENUMERIC if the fixed point or a
 * quadrature fails. */
AFD_API afd_status afd_twotier_serve(const afd_twotier_serve_params *p, afd_twotier_result *out);

#ifdef __cplusplus
}
#endif

#endif /* AFD_TWOTIER_H */
