/* afd_pipeline.h: discrete-event simulation of the xA-yF decode pipeline
 * (afd-provisioning paper, Sections 2, 3 and 5).
 *
 * Model.  x Attention workers each hold m micro-batches of B slots.  One
 * decode step of micro-batch k runs
 *   1. Attention on every worker j: alpha_a T_jk + beta_a, T_jk the token
 *      load of worker j's micro-batch k (sum over its B slots of P + age);
 *      the workers start together and the step continues when the slowest
 *      is done (the barrier);
 *   2. A->F transfer: (alpha_c rB + beta_c) / 2;
 *   3. FFN on each of the y instances, in parallel, on its share of xB/y
 *      requests: alpha_f rB + beta_f;
 *   4. F->A transfer: the other half of the round trip.
 * The round-trip communication cost of the latency model (Section 3.1) is
 * split evenly between the two directions; transfers are delays, not
 * resources (DMA overlaps compute), so only enough micro-batches in flight
 * hide them.  Each Attention worker and the FFN side work on one
 * micro-batch at a time, first come first served, so micro-batches overlap
 * as in Figure 2.  Every slot generates one token per step; a request with
 * decode lifetime D leaves after its D-th step and its slot takes a new
 * request at once (continuous batching), drawn without length bias from the
 * workload (a uniform trace row, or P, D geometric).
 *
 * Event order.  Both sides are FIFO and the transfer delays are constant, so
 * micro-batches return from the FFN side in the order they left it: the
 * event sequence is the round-robin sequence of micro-batch steps
 * s = 0, 1, 2, ... (micro-batch s mod m).  The simulation therefore runs
 * the exact recurrence of that event order,
 *   a_start(s) = max(ret(s - m), a_end(s - 1)),
 *   a_end(s)   = a_start(s) + max_j (alpha_a T_j(s) + beta_a),
 *   f_start(s) = max(a_end(s) + t_af, f_end(s - 1)),
 *   ret(s)     = f_end(s) + t_fa,
 * with ties broken by s (the insertion sequence), and is deterministic.
 * With async_attention each worker is its own resource instead:
 * a_start_j(s) = max(ret(s - m), a_end_j(s - 1)) and a_end(s) = max_j
 * a_end_j(s); a worker that was slow on one micro-batch can then catch up on
 * the next, and the barrier costs less than max_j per step.
 *
 * Cost.  Per-worker loads are running sums that change only when a request
 * finishes (a step adds B: every slot ages by one); finishing requests come
 * from a per-micro-batch calendar of buckets indexed by finishing step,
 * first in first out (an overflow heap holds lifetimes above 4096 steps).
 * A step costs O(x + completions), not O(xB).
 *
 * Randomness.  Slot group (worker j, micro-batch k) draws its requests from
 * Philox stream afd_pipeline_stream(p, j, k) = stream_base + j m + k of the
 * seed (afd_philox.h), in the order its requests finish: its initial slots
 * b = 0 .. B-1 first, then one request per completion (two uniforms per
 * request for the geometric model, one per trace request, two for a
 * stationary initial slot).  A run reads nothing else, so its result
 * depends neither on threads nor on other runs; the layout below is part
 * of the reproducibility contract (a seed and a configuration give the
 * same numbers in every release).
 */
#ifndef AFD_PIPELINE_H
#define AFD_PIPELINE_H

#include <stddef.h>
#include <stdint.h>

#include "afd_hw.h"
#include "afd_status.h"
#include "afd_workload.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Most slots (x m B) one simulation keeps. */
#define AFD_PIPELINE_MAX_SLOTS ((uint64_t)1 << 26)

typedef enum afd_start {
    AFD_START_FRESH = 0,     /* every slot starts a new request at time 0 (cold start) */
    AFD_START_STATIONARY = 1 /* slots start in the stationary state: a length-biased
                                request at a uniform age */
} afd_start;

enum { AFD_STAGE_ATTENTION = 0, AFD_STAGE_A2F, AFD_STAGE_FFN, AFD_STAGE_F2A };

/* Called for every stage of the first gantt_steps steps (worker -1 for the
 * stages that are not per Attention worker). */
typedef void (*afd_gantt_fn)(void *ctx, uint64_t step, unsigned microbatch, int stage,
                             int worker, double start, double end);

typedef struct afd_pipeline_params {
    const afd_workload *workload; /* TRACE with kept rows, or GEOMETRIC */
    afd_hw hw;
    unsigned x, y;        /* Attention workers, FFN instances (r = x/y) */
    unsigned B;           /* slots per micro-batch (B is unsigned across the API) */
    unsigned microbatches;/* m >= 1 micro-batches per Attention worker */
    uint64_t requests;    /* stop after x * requests completions */
    afd_start start;
    double warmup;        /* fraction of the simulated time discarded before the
                             steady-state estimate, in [0, 1) (0.2 suggested) */
    unsigned batches;     /* batch means of the steady-state estimate, >= 2 */
    int async_attention;  /* workers start independently (see Event order) */
    int no_barrier;       /* ablation: every worker takes the mean Attention time */
    int no_comm;          /* ablation: transfers take no time */
    uint64_t seed, stream_base;
    afd_gantt_fn gantt;   /* may be NULL */
    void *gantt_ctx;
    uint64_t gantt_steps;
} afd_pipeline_params;

typedef struct afd_pipeline_result {
    double thr_sim;       /* throughput per instance over the first ceil(0.8 N)
                             completions (Section 5.2): sum of their D_i / T_80%
                             / (x + y) (after a stationary start, tokens generated
                             before time 0 balance those in flight at T_80%) */
    double tpot;          /* mean over requests admitted during the run of
                             (completion - admission) / D */
    double eta_a;         /* mean over Attention workers of idle time / T_end */
    double eta_f;         /* FFN idle time / T_end */
    double thr_steady;    /* throughput per instance after the warm-up fraction */
    double thr_steady_se; /* its standard error, by batch means over time */
    double tau;           /* mean time between step completions after the warm-up */
    double barrier;       /* mean of (slowest - mean) Attention time over mean,
                             over all steps: the barrier's relative cost */
    double t_end;         /* simulated time */
    uint64_t completed;   /* requests completed */
    uint64_t steps;       /* micro-batch steps simulated */
    /* TPOT percentiles across the requests of tpot (levels
     * afd_pipeline_tpot_levels: 0.5, 0.9, 0.99): the sample quantile of all
     * of them (linear interpolation between order statistics, as
     * gsl_stats_quantile_from_sorted_data), and its standard error by batch
     * means: the requests in completion order cut into `batches` equal
     * groups, sd of the groups' quantiles / sqrt(batches).  NaN with fewer
     * than 2 requests per batch. */
    double tpot_q[3];
    double tpot_q_se[3];
} afd_pipeline_result;

/* The levels of afd_pipeline_result.tpot_q. */
#define AFD_PIPELINE_TPOT_NQ 3
AFD_API extern const double afd_pipeline_tpot_levels[AFD_PIPELINE_TPOT_NQ];

/* The Philox stream layout of the simulator.
 *
 *   afd_pipeline_stream_base(x, y) = (x << 44) XOR (y << 24)   (mod 2^64)
 *   afd_pipeline_stream(p, j, k)   = p->stream_base + j m + k
 *
 * with m = p->microbatches, 0 <= j < x, 0 <= k < m.  Configurations of one
 * experiment (one y, several x = r y, as `afdkit sim --r LIST`) set
 * stream_base = afd_pipeline_stream_base(x, y) and then read disjoint
 * streams: x m B <= 2^26 (AFD_PIPELINE_MAX_SLOTS) bounds the offsets
 * j m + k below 2^26, and for y < 2^19 the sum (y << 24) + j m + k stays
 * below 2^44, so bits 44..63 of every stream of (x, y) are x mod 2^20.
 * Two x of the same y therefore never share a stream when they differ
 * modulo 2^20 (always when x < 2^20).  Beyond that the layout wraps: x and
 * x + 2^20 read the same streams.  Different y are different experiments
 * and may share streams.  The streams do not depend on the thread that
 * runs a configuration, so results are identical for any thread count. */
AFD_API uint64_t afd_pipeline_stream_base(unsigned x, unsigned y);
AFD_API uint64_t afd_pipeline_stream(const afd_pipeline_params *p, unsigned worker,
                                     unsigned microbatch);

/* Check the parameters of a run without running it (afd_pipeline_run
 * starts with this check).  AFD_ELIMIT beyond AFD_PIPELINE_MAX_SLOTS
 * (x m B); AFD_EINVAL for bad parameters (x, y, B, m, requests < 1, warm-up
 * outside [0, 1), batches < 2, invalid coefficients, a GIVEN workload);
 * AFD_EEMPTY for a trace without kept rows. */
AFD_API afd_status afd_pipeline_check(const afd_pipeline_params *p);

/* Run one simulation.  The statuses of afd_pipeline_check, and AFD_ENOMEM
 * when memory runs out.  On error every field is NaN. */
AFD_API afd_status afd_pipeline_run(const afd_pipeline_params *p, afd_pipeline_result *out);

#ifdef __cplusplus
}
#endif

#endif /* AFD_PIPELINE_H */
