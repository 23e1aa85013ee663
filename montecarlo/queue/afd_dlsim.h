/* montecarlo/queue/: the simulations that check libanalytic/queue/ and the
 * pipelines of libanalytic/serving/.  The FCFS multi-server queue and
 * KV-cache retrieval (queue_sim.c, kv_mc.c; declared in afd_mc.h), the
 * queue with a deadline under four orderings (afd_dlsim.h) and the
 * multi-stage serving pipeline (afd_stages_sim.h). */

/* afd_dlsim.h: Monte Carlo of the c-server queue with a deadline on the
 * wait, under four orderings (the simulator beside afd_deadline.h and
 * afd_priority.h).
 *
 * Requests arrive as a Poisson process at rate lambda; request i needs
 * service S_i (deterministic, exponential, or the value of a uniformly drawn
 * sample row, e.g. the prefill time of a trace's prompt).  c servers take
 * waiting requests without preemption, in the order of the policy's key,
 * ties by arrival:
 *   FCFS   arrival time a_i;
 *   SJF    the row's key (the prompt length; S_i when no keys are given);
 *   EDF    the deadline a_i + slo;
 *   SLACK  least slack first: slack = a_i + slo - now - S_i, and since `now`
 *          is common to all waiting requests the order is that of a_i - S_i
 *          + slo (the predicted prefill time is S_i itself).
 * A request not started within `deadline` of its arrival leaves the queue
 * at that instant (offloaded, or dropped): it is served iff its wait is at
 * most the deadline.  deadline = +inf: nobody leaves (needs rho < 1).
 *
 * Replications: R independent runs, run r reading stream `stream + r` of the
 * seed: customer n of a run uses uniforms 2n (its interarrival time,
 * -log(u)/lambda) and 2n + 1 (its service: -log(u) E[S], or the row
 * floor(u rows)).  Each run simulates `warmup` customers from empty, then
 * measures the next `customers`; arrivals continue past the last measured
 * one until every measured request has been served or has left, so that
 * later arrivals still compete with it under a priority order.  Runs are
 * spread over OpenMP threads and combined in run order, so the result is
 * the same for any thread count.  Every estimate is the mean of the R
 * per-run values and its standard error the sd of those values / sqrt(R);
 * quantiles are the per-run empirical quantiles (the ceil(q n)-th smallest)
 * averaged, whose bias O(1/n) is far below the standard error for runs of
 * 10^4 or more.
 */
#ifndef AFD_DLSIM_H
#define AFD_DLSIM_H

#include <stdint.h>

#include "afdkit.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum afd_order {
    AFD_ORDER_FCFS = 0,
    AFD_ORDER_SJF,
    AFD_ORDER_EDF,
    AFD_ORDER_SLACK
} afd_order;

/* "fcfs", "sjf", "edf", "slack"; NULL for an unknown value. */
AFD_API const char *afd_order_name(afd_order order);
/* Parse a name; AFD_EINVAL if unknown. */
AFD_API afd_status afd_order_parse(const char *name, afd_order *order);

#define AFD_DLSIM_MAX_SERVERS   (1u << 20)
#define AFD_DLSIM_MAX_CUSTOMERS (UINT64_C(1) << 26) /* per run */

typedef struct afd_dlsim_params {
    unsigned c;      /* servers >= 1 */
    double lambda;   /* arrival rate > 0 */
    double deadline; /* >= 0, or +inf */
    /* service: exactly one of */
    double service;        /* deterministic time > 0 */
    double exp_mean;       /* exponential with this mean > 0 */
    const double *samples; /* or: rows' service times (>= 0, mean > 0) */
    const double *keys;    /*     their SJF keys (NULL: the service time) */
    uint64_t rows;
    afd_order order;
    double slo;            /* EDF/SLACK target a_i + slo (0: the deadline) */
    double long_threshold; /* S >= this is a "long" request (+inf: none) */
    uint64_t customers;    /* measured per run, >= 1 */
    uint64_t warmup;       /* discarded per run */
    unsigned replications; /* R >= 2 (0: 16) */
    double quantile;       /* order of the wait quantiles, in (0,1) (0: 0.9) */
    uint64_t seed, stream;
    unsigned threads; /* OpenMP team size, as afd_mc_threads (0: the default) */
    /* Optional: called after each run with the runs done and their total,
     * one call at a time (from any thread); it only observes, the result is
     * the same without it.  May be NULL. */
    void (*progress)(void *ctx, uint64_t done, uint64_t total);
    void *progress_ctx;
} afd_dlsim_params;

typedef struct afd_dlsim_result {
    double p_off, p_off_se;         /* fraction that left (offloaded) */
    double wait_mean, wait_mean_se; /* wait of those served */
    double wait_q, wait_q_se;       /* its quantile */
    double served_rate, served_rate_se;   /* lambda (1 - p_off) */
    double offload_rate, offload_rate_se; /* lambda p_off */
    double ttft_mean, ttft_mean_se; /* wait + own service, of those served */
    /* the requests with S >= long_threshold (NaN if there are none) */
    double long_fraction;
    double long_p_off, long_p_off_se;
    double long_wait_mean, long_wait_mean_se;
    double long_wait_q, long_wait_q_se;
    double service_mean; /* E[S] of the law */
    double rho;          /* lambda E[S] / c */
    uint64_t customers;  /* measured in all */
} afd_dlsim_result;

/* Errors: AFD_EINVAL (bad parameters, none or two service laws, a sample
 * negative or not finite), AFD_EUNSTABLE (deadline = +inf with rho >= 1),
 * AFD_ENOMEM (memory; customers above AFD_DLSIM_MAX_CUSTOMERS). */
AFD_API afd_status afd_dlsim(const afd_dlsim_params *p, afd_dlsim_result *out);

#ifdef __cplusplus
}
#endif

#endif /* AFD_DLSIM_H */
