/* afd_pool.h: the decode pool of Attention-FFN disaggregation sized for a
 * TPOT SLO on a budget of instances (afd-provisioning paper, Sections 3.1,
 * 4.3: the cycle time tau_G of eq. (9) and the xA-yF topology).
 *
 * x Attention instances of B slots each feed y FFN instances; every cycle
 * each slot advances its sequence by one token, so a sequence's TPOT is the
 * cycle time tau_G(x, y, B) of afd_cycle_topology, and the pool with every
 * slot busy generates x B tokens per tau_G.  A request decodes E[G] - 1
 * tokens in the pool (the prefill gives the first, as in the disaggregated
 * closed forms, afd_serving.h), so the pool carries at most
 *     rate = x B / ((E[G] - 1) tau_G)   requests per time unit.
 * This is the pool's saturated throughput: an upper bound of its goodput
 * (a request waiting for a free slot is not counted against the TTFT), with
 * tau_G's error, o(sqrt(B)) as B grows (Appendix A.4; exact with nu = 0).
 */
#ifndef AFD_POOL_H
#define AFD_POOL_H

#include "afd_hw.h"
#include "afd_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct afd_pool_params {
    const afd_hw *hw;      /* the six AFD coefficients of one instance, and the unit */
    double theta, nu;      /* a slot's KV load: mean and sd (Lemma 4.1), tokens */
    double output;         /* E[G] > 1: tokens generated per request */
    double request_tokens; /* KV tokens a request holds at its last step, > 0 */
    double kv_capacity;    /* KV tokens one Attention instance holds, > 0 */
    double tpot_slo;       /* in hw's unit, > 0 */
    unsigned bmax_limit;   /* the largest B tried (0: no limit but memory) */
} afd_pool_params;

typedef struct afd_pool {
    unsigned x, y, B; /* 0 when no pool meets the SLO */
    double tau;       /* tau_G(x, y, B) <= tpot_slo */
    double tau_err;   /* its quadrature error bound */
    double rate;      /* x B / ((E[G] - 1) tau), requests per time unit; 0 if none */
} afd_pool;

/* The pool of exactly x Attention and y FFN instances: B the largest slot
 * count with B request_tokens <= kv_capacity, B <= bmax_limit and
 * tau_G(x, y, B) <= tpot_slo (tau_G grows with B: bisection), and its rate.
 * out->B = 0 and rate 0 when B = 1 already breaks either.  AFD_EINVAL for
 * bad parameters (afd_system_check's, or those above), AFD_ENUMERIC when
 * the quadrature of tau_G fails. */
AFD_API afd_status afd_pool_eval(const afd_pool_params *p, unsigned x, unsigned y, afd_pool *out);

/* For every budget m = 1 .. n of instances, the pool with x + y <= m and
 * the largest rate (the fewest instances, then the fewest Attention
 * instances, on a tie): best[m - 1] (rate 0 for m = 1 and where no pool
 * meets the SLO).  O(n^2) afd_pool_eval calls.  Errors as afd_pool_eval;
 * on error every best[] is zeroed with rate NAN. */
AFD_API afd_status afd_pool_best(const afd_pool_params *p, unsigned n, afd_pool *best);

#ifdef __cplusplus
}
#endif

#endif /* AFD_POOL_H */
