/* montecarlo/afd/: the simulations that check libanalytic/afd/.  The
 * barrier load, one decode slot, an FCFS queue and KV retrieval (afd_mc.h,
 * whose queue and KV-retrieval runs live in montecarlo/queue/), and the
 * rA-1F decode pipeline step by step (afd_pipeline.h). */

/* afd_mc.h: Monte Carlo experiments of the afd-provisioning paper.
 *
 *   afd_barrier_mc   the synchronization barrier W_{B,r} (Theorem 4.3,
 *                    Appendix A.3, Table 1)
 *   afd_slot_mc      one decode slot under continuous batching, as a
 *                    renewal process (Lemma 4.1)
 *   afd_queue_sim    an FCFS multi-server queue with Poisson arrivals and
 *                    deterministic (or per-request) service
 *
 * Every estimate comes with its standard error.  Random numbers are Philox
 * uniforms addressed by (seed, stream, index) (afd_philox.h); each function
 * documents which streams it reads, and results do not depend on the number
 * of OpenMP threads (bit for bit).  Errors are afd_status values; on error
 * every output field is NaN (counts 0).
 */
#ifndef AFD_MC_H
#define AFD_MC_H

#include <stddef.h>
#include <stdint.h>

#include "afd_kvretrieve.h"
#include "afd_status.h"
#include "afd_workload.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ----------------------------------------------------------------- threads */

#define AFD_MC_MAX_THREADS 256u

/* The OpenMP team size of a parallel run: `requested` if nonzero, else
 * OpenMP's default (OMP_NUM_THREADS, or the number of processors), at most
 * AFD_MC_MAX_THREADS (the OpenMP runtime overflows its stack starting a
 * team of a million threads); 1 without OpenMP.  Results never depend on
 * it. */
AFD_API unsigned afd_mc_threads(unsigned requested);

/* ------------------------------------------------------ barrier experiment */

/* Limits of afd_barrier_mc, refused up front with AFD_ELIMIT (a run at the
 * work limit takes hours on one core): */
#define AFD_BARRIER_MC_MAX_R      65536u /* largest r */
#define AFD_BARRIER_MC_MAX_TRIALS (UINT64_C(1) << 40)
#define AFD_BARRIER_MC_MAX_WORK   (UINT64_C(1) << 38) /* trials * max r * (B or 1) */

typedef struct afd_barrier_mc_params {
    const afd_workload *workload; /* TRACE with kept rows, or GEOMETRIC */
    unsigned B;                   /* slots per worker, >= 1 (B is unsigned across the API) */
    const unsigned *r;            /* worker counts, each in 1..AFD_BARRIER_MC_MAX_R */
    size_t n_r;                   /* >= 1 */
    uint64_t trials;              /* T >= 2 */
    uint64_t seed;
    int per_slot; /* nonzero: per-slot path for the geometric model too */
    int by_row;   /* nonzero: a trace's slots by row (two uniforms each)
                     rather than by value; the same law, for comparisons */
    unsigned threads; /* OpenMP team size, as afd_mc_threads (0: the default) */
    /* Optional: called on the calling thread after each round of trials with
     * the trials done so far and the total (the last call has done == total);
     * it only observes, the result is the same without it. */
    void (*progress)(void *ctx, uint64_t done, uint64_t total);
    void *progress_ctx;
} afd_barrier_mc_params;

typedef struct afd_barrier_mc_result {
    unsigned r;
    double mean_w, mean_w_se;     /* E[W_{B,r}] and its standard error */
    double sd_w;                  /* standard deviation of W_{B,r} */
    double overhead, overhead_se; /* E[W]/(B theta) - 1 */
} afd_barrier_mc_result;

/* The barrier load W_{B,r} = max_{j<=r} sum_{b<=B} Y_{j,b} of Section 4.2
 * with iid stationary slot loads Y (Lemma 4.1), T trials; the relative
 * overhead E[W]/(B theta) - 1 is what Theorem 4.3 (eq. 7) predicts as
 * (nu/theta) kappa_r / sqrt(B) (afd_barrier_overhead_clt).  theta is the
 * workload's stats.theta: for a trace, the estimator of eq. (15), which is
 * the exact mean of the sampled law.
 *
 * Paths.  GEOMETRIC: each worker's load is drawn in O(1) as
 * B + NegBin(B, 1/mu_p) + NegBin(B, 1/mu_d) (afd_slot_sum_geometric).
 * TRACE (or per_slot): B slot loads per worker from the alias sampler
 * (afd_slot_sampler), kB uniforms with k = afd_slot_sampler_uniforms (1
 * for a trace sampled by value, 2 otherwise).
 *
 * Random numbers: trial t reads stream t of the seed only (per-slot path:
 * worker j takes uniforms kBj .. kB(j+1)-1; O(1) path: a cursor from index
 * 0, workers in order).  All r values share the trials: W for r is the
 * maximum over the first r workers of the same trial (common random
 * numbers), so the estimates for different r are positively correlated;
 * each is unbiased with the stated standard error.
 *
 * Reduction.  Trials are grouped in blocks of 256; each block's sums of
 * x = W - B theta and x^2 are formed in trial order and blocks are added in
 * block order, so the result is bit-identical for any number of threads.
 * mean_w_se = sd_w / sqrt(T), overhead_se = mean_w_se / (B theta).
 *
 * out[k] answers r[k].  Errors: AFD_EINVAL for bad parameters (mu_p or
 * mu_d outside [1, AFD_GEOMETRIC_MAX_MEAN] of afd_sampler.h included) or a GIVEN workload; AFD_EEMPTY for a
 * trace without kept rows; AFD_ELIMIT beyond the limits above or when B times
 * the largest slot load could reach 2^53, or when memory runs out. */
AFD_API afd_status afd_barrier_mc(const afd_barrier_mc_params *p, afd_barrier_mc_result *out);

/* ------------------------------------------------------------ one slot */

#define AFD_SLOT_MC_BATCHES 32u /* default number of batches */

typedef struct afd_slot_mc_params {
    const afd_workload *workload; /* TRACE with kept rows, or GEOMETRIC */
    uint64_t steps;               /* decode steps averaged, >= batches */
    uint64_t warmup;              /* steps simulated and discarded first */
    unsigned batches;             /* K >= 2 for batch means (0: AFD_SLOT_MC_BATCHES) */
    uint64_t seed, stream;
    /* Called about every 2^16 requests, and once at the end, with the steps
     * simulated so far (warm-up included) and their total; may be NULL. */
    void (*progress)(void *ctx, uint64_t done, uint64_t total);
    void *progress_ctx;
} afd_slot_mc_params;

typedef struct afd_slot_mc_result {
    double mean, mean_se;       /* time average of the load -> theta */
    double mean_sq, mean_sq_se; /* time average of the squared load -> E[Y^2] */
    uint64_t requests;          /* requests started (warm-up included) */
    uint64_t steps;             /* steps averaged: K * floor(steps / K) */
    double batch_lifetimes;     /* batch length / (E[D^2]/E[D]) */
    double batch_lag1;          /* lag-1 correlation of the batch means of the load */
} afd_slot_mc_result;

/* One decode slot under continuous batching (Section 3.2): request n has
 * (P_n, D_n), occupies the slot for D_n steps with load P_n + a at ages
 * a = 0..D_n-1, and is replaced at once.  Requests are drawn WITHOUT length
 * bias: a uniformly random trace row (one uniform) or P ~ Geometric(1/mu_p),
 * D ~ Geometric(1/mu_d) on {1,2,...} (two uniforms); the length bias of the
 * stationary load (Lemma 4.1, eq. 3) emerges from the renewal process.  The
 * slot starts with a fresh request at step 0.
 *
 * Sums over the steps of a request inside a batch are formed exactly, in
 * 128-bit integers (sum of P+a and of (P+a)^2 over a run of ages), which
 * gives the same numbers as a step-by-step loop in O(1) per request.
 *
 * Standard errors by batch means: the averaged steps are cut into K
 * consecutive batches of L = floor(steps/K) steps, and se = sd of the K
 * batch averages / sqrt(K).  K = 32 by default: Student's t with 31
 * degrees of freedom is within 4% of the normal at its 97.5% quantile (2.04
 * against 1.96), so se can be used as is, and batches stay long.  Batch
 * means are nearly
 * independent when L is much longer than the correlation time of the load,
 * about the length-biased lifetime E[D^2]/E[D]; batch_lifetimes reports the
 * ratio (aim for >= 100) and batch_lag1 the lag-1 correlation of the batch
 * means (near 0 when batches are long enough).
 *
 * Random numbers: stream `stream` of the seed, read in order.
 * Errors: AFD_EINVAL (bad parameters, GIVEN workload, a trace row with
 * P + D >= 2^40, geometric means above AFD_GEOMETRIC_MAX_MEAN, warm-up + steps above 2^46),
 * AFD_EEMPTY (trace without kept rows). */
AFD_API afd_status afd_slot_mc(const afd_slot_mc_params *p, afd_slot_mc_result *out);

/* ------------------------------------------------------- M/D/c queue */

#define AFD_QUEUE_SIM_BATCHES       32u                 /* default number of batches */
#define AFD_QUEUE_SIM_MAX_CUSTOMERS (UINT64_C(1) << 27) /* waits and sojourns kept: 2 GiB */
#define AFD_QUEUE_SIM_MAX_SERVERS   (1u << 24)

/* Service time of a request with prompt length `prompt` (e.g. a + b P);
 * must return a finite value >= 0. */
typedef double (*afd_service_fn)(uint64_t prompt, void *ctx);

/* The quadratic service law of a prompt served alone, S = a + b P + c P^2
 * (BestServe's prefill law for a batch of one prompt, afd_hw.h; the same
 * values as afd_prefill_times): afd_quad_service_time is an afd_service_fn
 * whose ctx points to an afd_quad_service. */
typedef struct afd_quad_service {
    double a, b, c;
} afd_quad_service;
AFD_API double afd_quad_service_time(uint64_t prompt, void *ctx);

typedef struct afd_queue_sim_params {
    unsigned c;                /* servers, 1..AFD_QUEUE_SIM_MAX_SERVERS */
    double lambda;             /* Poisson arrival rate > 0 */
    double service;            /* deterministic service time > 0 (trace == NULL) */
    const afd_workload *trace; /* or: TRACE with kept rows, drawn uniformly, */
    afd_service_fn service_fn; /*     service time service_fn(P, service_ctx) */
    void *service_ctx;
    uint64_t customers; /* customers measured, >= batches */
    uint64_t warmup;    /* customers simulated and discarded first */
    unsigned batches;   /* K >= 2 (0: AFD_QUEUE_SIM_BATCHES) */
    double quantile;    /* order of the wait quantile, in (0,1) (0: 0.9) */
    uint64_t seed, stream;
    /* Replay (replay != 0): the trace's own arrivals instead of Poisson ones.
     * Customer n is row n of trace (which must keep its times, sorted),
     * arriving at (time[n] - time[0]) * time_scale in the unit of the service
     * times, with its own service time service_fn(P_n); lambda and customers
     * are ignored: every row after the warm-up is measured (at least batches). */
    int replay;
    double time_scale; /* > 0: seconds to the service unit, times any stretch */
    /* Optional: called about every 2^16 customers and once at the end with the
     * customers simulated so far (warm-up included) and their total; it only
     * observes, the result is the same without it.  May be NULL. */
    void (*progress)(void *ctx, uint64_t done, uint64_t total);
    void *progress_ctx;
} afd_queue_sim_params;

typedef struct afd_queue_sim_result {
    double wait_mean, wait_mean_se; /* mean wait in queue */
    double p_wait, p_wait_se;       /* P(wait > 0) */
    double wait_q, wait_q_se;       /* the `quantile` of the wait */
    double sojourn_mean, sojourn_mean_se; /* mean time in system, wait + own service
                                             (the TTFT of a prefill queue) */
    double sojourn_q, sojourn_q_se;       /* its `quantile` */
    double service_mean;            /* E[S] of the service law (exact) */
    double rho;                     /* lambda E[S] / c */
    uint64_t customers;             /* measured: K * floor(customers / K) */
} afd_queue_sim_result;

/* FCFS c-server queue by the Kiefer-Wolfowitz recursion (J. Kiefer and
 * J. Wolfowitz, "On the theory of queues with many servers", Trans. AMS 78,
 * 1955): with the servers' workloads V sorted, customer n waits
 * W_n = V_(1), the smallest one becomes V_(1) + S_n, and all decrease by the
 * next interarrival time (floored at 0).  Kept here as the absolute times at
 * which the servers free up, in an event heap (afd_event.h; O(log c) per customer):
 * W_n = max(0, min_i F_i - t_n), then min F <- t_n + W_n + S_n.  The
 * system starts empty; the first `warmup` customers are discarded.
 *
 * Customer n (counting the warm-up) uses uniforms 2n (its interarrival
 * time, -log(u)/lambda) and 2n+1 (its trace row, uniform) of the stream.
 *
 * Standard errors by batch means over K consecutive batches of customers
 * (se = sd of the K batch values / sqrt(K)).  The quantile is the empirical
 * one of the measured waits, the ceil(q n)-th smallest (inverse of the
 * empirical distribution function), found by selection; its standard error
 * is by sectioning: the sd of the K per-batch quantiles / sqrt(K).
 *
 * Errors: AFD_EINVAL (bad parameters, a service_fn value that is negative or
 * not finite), AFD_EEMPTY (trace without kept rows), AFD_EUNSTABLE
 * (rho >= 1), AFD_ELIMIT (customers or servers beyond their limits),
 * AFD_ENOMEM.
 *
 * With replay there is no randomness: the standard errors are those of batch
 * means over the trace in time order, which take the batches as nearly
 * independent (optimistic when the load drifts over the trace); rho is the
 * trace's rate (n - 1) / span times E[S] / c.  Replay adds AFD_EINVAL for
 * missing or unsorted times and AFD_EEMPTY for fewer rows than batches. */
AFD_API afd_status afd_queue_sim(const afd_queue_sim_params *p, afd_queue_sim_result *out);

/* E[S] of the service law of p, the service_mean afd_queue_sim reports:
 * p->service without a trace, else the mean of service_fn(P) over the
 * trace's kept rows, each weight 1/n (rows are drawn uniformly, or replayed
 * once each), summed in long double.  Only the service fields are read.
 * AFD_EINVAL (service <= 0 or not finite without a trace; a trace that is
 * not TRACE or has no service_fn; a service time that is negative or not
 * finite), AFD_EEMPTY (no kept rows), AFD_ENOMEM; *es is NaN on error. */
AFD_API afd_status afd_queue_sim_service_mean(const afd_queue_sim_params *p, double *es);

/* Smallest c in [c_lo, c_max] whose replayed `quantile` of the time in
 * system (p->quantile; the TTFT of a prefill pool) is at most slo, by
 * afd_queue_sim with p->replay set (p->c is ignored); *res gets that run.
 * Counts up from c_lo (the quantile falls as c grows).  AFD_EEMPTY when no
 * c up to c_max qualifies; errors of afd_queue_sim. */
AFD_API afd_status afd_queue_replay_pool(const afd_queue_sim_params *p, double slo,
                                         unsigned c_lo, unsigned c_max, unsigned *c,
                                         afd_queue_sim_result *res);

/* ---- KV-cache retrieval through a memory hierarchy (afd_kvretrieve.h)
 *
 * Each trial walks the tiers in order, tier k holding the prefix with
 * probability H_k (one uniform per tier: trial i reads (seed, stream 0,
 * index i n + k)); the first holder serves it in T_k + S / BW_k, and if none
 * does it is recomputed in `recompute`.  *mean is the average time over the
 * trials and *se its standard error (sample sd / sqrt(trials)); the same for
 * any `threads`, the OpenMP team size as afd_mc_threads (0: the default).
 * AFD_EINVAL as afd_kv_retrieval_time, or trials < 2; AFD_ENOMEM. */
AFD_API afd_status afd_mc_kv_retrieval(const afd_kv_tier *tiers, size_t n, double bytes,
                                       double recompute, uint64_t trials, uint64_t seed,
                                       unsigned threads, double *mean, double *se);

#ifdef __cplusplus
}
#endif

#endif /* AFD_MC_H */
