/* afd_pd.h: prefill/decode pool sizing and goodput (BestServe, Sections 2.3,
 * 3.4-3.5; afd-provisioning paper, Lemma 4.1).
 *
 * Prefill.  Requests arrive as a Poisson process at rate lambda and are
 * served first come first served by c prefill instances; request i takes
 * S_i = a + b P_i + c2 P_i^2 (its prompt length P_i).  The time to first
 * token is TTFT = W + S, W the wait in queue.  Under FCFS a customer's wait
 * depends only on those ahead of it, so W is independent of its own S and
 *     P(TTFT <= t) = E_S[ F_W(t - S) ].
 * Two laws for W:
 *   M/D/c  the exact wait of M/D/c with the mean service time E[S]
 *          (afd_queue.h; BestServe's model);
 *   M/G/c  the same law with time scaled by 1 + cs^2 (cs the coefficient of
 *          variation of S): for c = 1 this makes the mean exact
 *          (Pollaczek-Khinchine), for c > 1 it is the Allen-Cunneen relation
 *          Wq(M/G/c) ~ (1 + cs^2) Wq(M/D/c).  It is an approximation:
 *          checked against afdkit mc mdc --service-trace (docs/reproduction.md).
 * The expectation over S runs over an empirical law of at most
 * AFD_SERVICE_ATOMS atoms (quantile bins of the exact law, each at its bin
 * mean); E[S] and cs are computed from every request.
 *
 * Decode.  A request occupies a decode slot for D steps of s_d seconds, so
 * the slots in use form an M/G/infinity system: their number is exactly
 * Poisson with mean L = lambda E[D] s_d (Little's law gives the mean for any
 * arrival process; Poisson arrivals make the law Poisson).  The KV cache
 * they hold is on average L theta tokens: a slot in use at a random time
 * holds the stationary load Y of Lemma 4.1 (mean theta, sd nu), the slots
 * independently, so the KV tokens in use are the compound Poisson sum
 * K = Y_1 + ... + Y_N, N ~ Poisson(L): mean L theta, variance
 * L (theta^2 + nu^2).  Memory is provisioned at the same quantile as the
 * slots (afd_decode_demand).  TPOT is s_d.
 *
 * A step that grows with the batch (afd_decode_demand_law).  With the step
 * law S(b) = beta + gamma b + alpha b theta of afd_estimate.h (b sequences
 * holding theta KV tokens each on average, Lemma 4.1) and N instances
 * sharing the rate, Little's law for one instance (rate l = lambda / N)
 * gives its mean occupancy as the fixed point
 *     n = l E[D] S(n) = l E[D] (beta + (gamma + alpha theta) n),
 * linear in n, so
 *     n = l E[D] beta / (1 - l E[D] (gamma + alpha theta)),
 * stable only while l E[D] (gamma + alpha theta) < 1 (otherwise every step
 * adds more work than it serves and the batch grows without bound).  The
 * pool holds N n sequences on average, Poisson as above (M/G/infinity), and
 * TPOT is the mean step S(n).  How far from exact: counting steps makes the
 * fixed point exact for the averages over steps.  An instance that never
 * idles and serves M requests in time T runs K steps holding E[D] M
 * sequence-steps in all, so T = K beta + (gamma + alpha theta) E[D] M with
 * M = lambda T: the mean batch per step is exactly n and the mean step
 * exactly S(n), E[S(N)] = S(E[N]) because S is linear, with no term in the
 * variance of the batch.  Idle time (probability about e^-n) lowers the
 * step rate and raises the batch per step by the factor 1 / (1 - idle /
 * (T (1 - x))), x = l E[D] (gamma + alpha theta).  What the fixed point
 * leaves out is that a request sees the batches it is in: its TPOT is the
 * token-weighted step S(n) + (gamma + alpha theta) Var(N) / n, above S(n)
 * by the slope times the batch's index of dispersion (1 for Poisson, about
 * 1 / (1 - x) for one instance, whose long steps let more requests join),
 * so about S(n) (1 + (gamma + alpha theta) / beta); and the time-averaged
 * occupancy is n + (gamma + alpha theta) Var(N) / S(n).  docs/queues.md
 * measures both against the serving simulator.  A constant step is
 * gamma = alpha = 0: n = l E[D] beta, the formula above, exactly.
 */
#ifndef AFD_PD_H
#define AFD_PD_H

#include <stddef.h>

#include "afd_status.h"
#include "afd_workload.h"

#ifdef __cplusplus
extern "C" {
#endif

#define AFD_SERVICE_ATOMS 256

typedef struct afd_prefill_model {
    double a, b, c2; /* S = a + b P + c2 P^2, each >= 0, not all zero */
} afd_prefill_model;

/* Empirical law of the prefill time S. */
typedef struct afd_service_law {
    size_t n;            /* atoms */
    double t[AFD_SERVICE_ATOMS];
    double w[AFD_SERVICE_ATOMS]; /* weights, summing to 1 */
    double mean;         /* E[S] */
    double scv;          /* Var(S) / E[S]^2 */
    double max;          /* largest S */
} afd_service_law;

/* The law of S over the requests of a workload: a trace's kept rows or its
 * distinct (P, D) pairs weighted by their counts (afd_workload_entry; an
 * empty prompt is one token, afd_workload_prompt_tokens), or the geometric
 * law of P (truncated where its tail is below 1e-12).  AFD_EINVAL for a bad
 * model or a GIVEN workload, AFD_EEMPTY for a trace with neither rows nor
 * pairs kept, AFD_ENOMEM. */
AFD_API afd_status afd_service_law_from_workload(const afd_workload *w,
                                                 const afd_prefill_model *m,
                                                 afd_service_law *out);

typedef struct afd_ttft {
    unsigned c;       /* prefill instances (servers are unsigned across the API) */
    double rho;       /* lambda E[S] / c */
    double wq_md;     /* p-quantile of the M/D/c wait */
    double ttft_md;   /* p-quantile of TTFT with the M/D/c wait */
    double ttft_mg;   /* p-quantile of TTFT with the M/G/c correction */
} afd_ttft;

/* TTFT p-quantiles with c prefill instances.  AFD_EUNSTABLE if
 * lambda E[S] >= c; AFD_EINVAL for bad arguments; AFD_ENUMERIC,
 * AFD_ENOMEM, AFD_ELIMIT as afd_mdc_alloc. */
AFD_API afd_status afd_ttft_quantile(double lambda, const afd_service_law *s, unsigned c, double p,
                                     afd_ttft *out);

/* The smallest c <= c_max whose TTFT p-quantile (M/G/c if mg, else M/D/c)
 * is at most slo; its figures in *out.  AFD_EEMPTY if none is, or if slo
 * is below E[S] (no pool can meet it).  A pool whose load is so close to 1
 * that the exact M/D/c solution exceeds its size limit (afd_ttft_quantile
 * fails with AFD_ELIMIT) is taken as missing the SLO and skipped. */
AFD_API afd_status afd_prefill_pool(double lambda, const afd_service_law *s, double p, double slo,
                                    int mg, unsigned c_max, afd_ttft *out);

typedef struct afd_decode_need {
    double slots_mean; /* L = lambda E[D] s_d (all instances) */
    double slots_q;    /* q-quantile of Poisson(L) */
    double kv_tokens;  /* L theta, mean KV tokens held */
    double kv_tokens_q; /* q-quantile of the KV tokens held (below) */
    /* afd_decode_demand_law (afd_decode_demand: one instance, a constant step) */
    double instances;  /* N the demand is for */
    double occupancy;  /* n = L / N, mean sequences per instance */
    double step;       /* S(n), the mean step: TPOT */
    double step_q;     /* S(slots_q / N): the step when the pool holds its
                          q-quantile occupancy, spread evenly */
} afd_decode_need;

/* The decode step of an instance holding b sequences (afd_estimate.h):
 *     S(b) = beta + gamma b + alpha b theta;
 * a constant step is gamma = alpha = 0. */
typedef struct afd_decode_law {
    double beta, gamma, alpha; /* each >= 0 and finite, beta > 0 */
} afd_decode_law;

/* Decode demand at rate lambda for a workload (E[D] = stats.mean_d, or mu_d;
 * theta = stats.theta, nu = stats.nu) and step time s_d; q in (0, 1).
 *
 * kv_tokens_q is the q-quantile of K = Y_1 + ... + Y_N, N ~ Poisson(L), the
 * Y_i i.i.d. with mean theta and sd nu (Lemma 4.1).  The count N is kept
 * exact and only the sum of n loads is taken as normal (the central limit
 * theorem, as afd_decode_slots_from_law sizes one instance):
 *     P(K <= x) ~ sum_n e^{-L} L^n / n! Phi((x - n theta) / (sqrt(n) nu)),
 * the n = 0 term a unit step at 0; x is found by bisection to 1e-12
 * relative.  For L > 10^5 the plain normal L theta + z_q sqrt(L (theta^2 +
 * nu^2)) is used (the mixture's skewness is then below 0.01).  How far
 * from exact at q = 0.99 (docs/queues.md): for Y uniform on {1..20} against
 * Panjer's recursion (test_pd.c) +0.2% at L = 5 and +0.01% at L = 50 (the
 * plain normal: -8% and -1.5%); for the conversation trace's own loads
 * against 200,000 Monte Carlo draws (scripts/kv-quantile-mc.py) -0.5% at
 * L = 52.8 and -0.3% at L = 126.7, 4 standard errors (the plain normal: -2%
 * and -1%). */
AFD_API afd_status afd_decode_demand(double lambda, const afd_workload *w, double step, double q,
                                   afd_decode_need *out);

/* Decode demand of N = instances decode instances sharing the rate lambda
 * when the step follows law (see the top of this file):
 *     L = lambda E[D] beta / (1 - (lambda / N) E[D] (gamma + alpha theta)),
 * the pool's mean occupancy N n; the slot and KV quantiles of Poisson(L) as
 * afd_decode_demand, the step S(n) and S(slots_q / N).  With gamma = alpha = 0
 * it is afd_decode_demand with step beta, the same numbers to the last bit.
 * AFD_EUNSTABLE (the figures +inf) when (lambda / N) E[D] (gamma + alpha
 * theta) >= 1; AFD_EINVAL as afd_decode_demand, for a bad law or N < 1. */
AFD_API afd_status afd_decode_demand_law(double lambda, const afd_workload *w,
                                         const afd_decode_law *law, double instances, double q,
                                         afd_decode_need *out);

/* Per-request TPOT in a decode pool of N = instances instances sharing the
 * rate lambda under the step law (afd_decode_demand_law).  A request of D
 * output tokens (the first from its prefill) joins a decode instance at the
 * first step boundary and runs m = D - 1 steps; its TPOT is the mean of
 * those steps plus the join wait J spread over them:
 *     TPOT = (J + S_1 + ... + S_m) / m,
 *     S_k = beta + gamma b_k + alpha K_k,
 * b_k the batch and K_k the KV tokens it holds at step k.  The closed form:
 *   batch  the others in the batch at a step: mean n + (d - 1), the
 *          token-weighted batch less the request itself (afd_decode_demand_law's
 *          occupancy n and index of dispersion d = 1 / (1 - x)), each holding
 *          theta KV tokens (sd nu, Lemma 4.1); the request itself adds
 *          gamma + alpha (P + (m + 1) / 2).  One step's variance over the
 *          batch is d n ((gamma + alpha theta)^2 + alpha^2 nu^2);
 *   life   the others form an M/G/inf population whose stays last M steps
 *          (M = D - 1 over the requests), with autocorrelation r(u) =
 *          E[(M - u)^+] / E[M] at lag u steps, so the mean of t consecutive
 *          steps has that variance times
 *              phi(t) = (2 / t^2) int_0^t (t - u) r(u) du
 *                     = 2 E[g(M, t)] / (t^2 E[M]),
 *          g(M, t) = M t^2 / 2 - t^3 / 6 (M >= t), t M^2 / 2 - M^3 / 6
 *          (M < t): 1 for one step, E[M^2] / (t E[M]) for long lives;
 *   join   J is the first of the N instances' step boundaries, each uniform
 *          over a step S(n) when busy (probability 1 - e^-n): mean S(n) /
 *          (N + 1), variance N S(n)^2 / ((N + 1)^2 (N + 2)).
 * Given m and P the TPOT is taken as normal with those moments, and its
 * p-quantile over the requests is that of the mixture over the workload's
 * (P, D) (a trace's kept rows, or the geometric laws, D and P independent),
 * in at most AFD_SERVICE_ATOMS bins of m of equal weight, found by bisection
 * to 1e-12 relative.  Requests of one output token have no TPOT and are
 * left out.  How far from exact: docs/queues.md (The P90 of TPOT).
 * AFD_EINVAL as afd_decode_demand_law, for p outside (0, 1), or a trace
 * without its kept rows; AFD_EEMPTY when no request has two output tokens;
 * AFD_EUNSTABLE as afd_decode_demand_law. */
typedef struct afd_decode_tpot {
    double step; /* S(n), the mean step at the load */
    double join; /* E[J], the mean join wait */
    double mean; /* the mean of per-request TPOT */
    double q;    /* its p-quantile */
} afd_decode_tpot;
AFD_API afd_status afd_decode_tpot_quantile(double lambda, const afd_workload *w,
                                            const afd_decode_law *law, double instances,
                                            double p, afd_decode_tpot *out);

/* One decode instance.  NaN marks a figure that is not given. */
typedef struct afd_decode_instance {
    double slots;              /* concurrent decode requests per instance, > 0 */
    double kv_bytes_per_token; /* KV-cache bytes per token (all layers), > 0 */
    double kv_budget;          /* KV-cache bytes per instance, > 0 (needs
                                  kv_bytes_per_token) */
} afd_decode_instance;

typedef struct afd_decode_pool {
    double kv_bytes;  /* need->kv_tokens * kv_bytes_per_token (NaN if not given) */
    double instances; /* decode instances (NaN without slots) */
    double kv_bytes_q; /* need->kv_tokens_q * kv_bytes_per_token (NaN if not given) */
} afd_decode_pool;

/* Decode instances for a demand: enough for the provisioned occupancy,
 *     n = max(ceil(slots_q / slots), ceil(kv_bytes_q / kv_budget), 1),
 * the KV term only when kv_budget is given.  Both terms provision the same
 * q-quantile: of the (Poisson) occupancy, and of the KV cache it holds
 * (kv_tokens_q of afd_decode_demand).  AFD_EINVAL for a figure
 * that is neither NaN nor positive and finite, or a kv_budget without
 * kv_bytes_per_token. */
AFD_API afd_status afd_decode_pool_size(const afd_decode_need *need,
                                        const afd_decode_instance *inst, afd_decode_pool *out);

/* The decode pool for rate lambda under a step law: the smallest N for
 * which the demand of N instances (afd_decode_demand_law) fits N of them,
 * afd_decode_pool_size(need(N)) <= N, i.e. the q-quantile of the pool's
 * occupancy within N slots and of its KV cache within N budgets; *need is
 * the demand at that N, *out its pool.  A larger pool spreads the rate, so
 * each instance holds fewer sequences at a shorter step and the demand
 * shrinks: feasibility is monotone in N, found by doubling and bisection
 * from the smallest stable N, floor(lambda E[D] (gamma + alpha theta)) + 1.
 * With a constant step the demand does not depend on N and this is
 * afd_decode_demand and afd_decode_pool_size at step beta.  Without
 * inst->slots (NaN) a constant step gives the demand of one instance and
 * out->instances NaN; a step that grows with the batch needs the slots to
 * size the pool (AFD_EINVAL).  AFD_EINVAL as those two, or for a rate that
 * is not finite and >= 0; AFD_ERANGE past 10^9 instances. */
AFD_API afd_status afd_decode_pool_law(double lambda, const afd_workload *w,
                                       const afd_decode_law *law, double q,
                                       const afd_decode_instance *inst, afd_decode_need *need,
                                       afd_decode_pool *out);

typedef struct afd_pd_pool {
    const afd_service_law *prefill; /* service law of S */
    const afd_workload *workload;   /* for E[D] and theta */
    unsigned prefill_instances; /* c of the prefill pool (servers are unsigned across the API) */
    unsigned decode_instances;
    double percentile;      /* of TTFT, e.g. 0.9 */
    double ttft_slo;
    int mg;                 /* use the M/G/c correction */
    double decode_step;     /* s_d = TPOT; with decode_gamma or decode_alpha, the
                               law's beta (afd_decode_law) */
    double tpot_slo;
    double slots_per_instance; /* decode slots per instance */
    double slot_quantile;   /* quantile of the occupancy to provision, e.g. 0.99 */
    double kv_budget_tokens;/* KV tokens per decode instance (0: no limit), held
                               against the slot_quantile of the KV in use */
    double decode_gamma, decode_alpha; /* the step law's (0, 0: a constant step) */
    double tpot_percentile; /* in (0, 1): the TPOT SLO holds that quantile of
                               per-request TPOT (afd_decode_tpot_quantile);
                               0: the mean step S(n) */
} afd_pd_pool;

/* AFD_LIMIT_SATURATION: the prefill load is too close to 1 for the exact
 * M/D/c solution (its size limit), so the goodput found is a lower bound. */
enum {
    AFD_LIMIT_NONE = 0,
    AFD_LIMIT_TTFT,
    AFD_LIMIT_SLOTS,
    AFD_LIMIT_KV,
    AFD_LIMIT_TPOT,
    AFD_LIMIT_SATURATION
};
AFD_API const char *afd_limit_name(int limit);

/* Goodput: the largest arrival rate whose TTFT p-quantile meets the SLO on
 * the prefill pool and whose decode demand (slot and KV quantiles) fits
 * the decode pool, by bisection to 1e-9 relative (BestServe Algorithm 8, with
 * its loop test the right way round: bisect while lambda_u - lambda_l > eps;
 * no relaxation factor is needed, the closed forms have no sampling noise).
 * *limit says which constraint binds at the goodput (AFD_LIMIT_TPOT: the step
 * time alone breaks the TPOT SLO, goodput 0).  A rate that loads the prefill
 * pool too close to 1 for the exact solution counts as infeasible, as in
 * afd_prefill_pool; when that binds, *limit is AFD_LIMIT_SATURATION.
 * With a step law (decode_gamma or decode_alpha > 0) the decode demand at
 * each rate is afd_decode_demand_law's for the decode_instances: the step,
 * and so the occupancy, grows with the rate; the step of one sequence,
 * S(1), above the TPOT SLO is AFD_LIMIT_TPOT with goodput 0, and a rate
 * whose mean step S(n) = beta / (1 - x) exceeds it is infeasible (limit
 * AFD_LIMIT_TPOT when that binds).  With tpot_percentile in (0, 1) a rate is
 * also infeasible (AFD_LIMIT_TPOT) when that quantile of per-request TPOT
 * (afd_decode_tpot_quantile for the decode_instances, the quantile the
 * simulator's SLO reads) exceeds the TPOT SLO; a workload without a request
 * of two output tokens has no TPOT and passes.  The bisection's upper end is
 * the rate at which the mean occupancy fills every slot,
 *     N slots / (E[D] S(slots)),
 * below the rate at which the decode pool turns unstable, so every rate it
 * tries has a finite demand. */
AFD_API afd_status afd_pd_goodput(const afd_pd_pool *pool, double *lambda, int *limit);

/* The relative error with which a ranking by afd_pd_goodput is read: 0.05,
 * its largest gap to the simulator in docs/agreement.bounds (goodput: within
 * 5% where the P90 TTFT binds, and where the TPOT binds with tpot_percentile
 * 0.9: -2.7% on the table's cell, to -4.5% on more cells of docs/queues.md,
 * with the 2% of the simulated rate's bisection).  A reading of those
 * measurements, not a bound. */
#define AFD_PD_GOODPUT_ERROR 0.05

#ifdef __cplusplus
}
#endif

#endif /* AFD_PD_H */
