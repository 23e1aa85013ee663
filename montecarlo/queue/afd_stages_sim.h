/* afd_stages_sim.h: discrete-event simulation of a serving pipeline
 * (afd_stages.h), the check of its decomposition.
 *
 * Requests arrive as a Poisson process at rate lambda and visit the stages
 * in order.  Each request is a trace row drawn uniformly at random (with
 * replacement) when a stage depends on tokens.  At a stage every routing
 * rule is simulated as stated in afd_stages.h: fcfs and least-work by the
 * earliest-free server (Kiefer-Wolfowitz recursion with a heap of the
 * servers' free times; the two rules give the same start times), rr and jsq
 * with per-server FCFS queues (jsq counts the requests at each server when
 * the request arrives, ties to the lowest index), heavy-light by two pools.
 * A stage with repeat k serves the request k times in a row on one server,
 * drawing an exponential service afresh each time.
 *
 * Replications are independent: replication j draws from Philox streams
 * 1024 j (arrival gaps), 1024 j + 1 (trace rows) and 1024 j + 2 + i
 * (exponential services of stage i); each simulates warmup + customers
 * requests from empty and keeps the last `customers`.  The estimates are the
 * averages of the replications' statistics and their standard errors the
 * standard deviation across replications over sqrt(reps); replications run
 * in parallel with OpenMP and results are bit-identical for any number of
 * threads.  Quantiles are the replications' empirical quantiles averaged
 * (their bias is O(1/customers)).
 */
#ifndef AFD_STAGES_SIM_H
#define AFD_STAGES_SIM_H

#include <stddef.h>
#include <stdint.h>

#include "afd_stages.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct afd_stages_sim_options {
    uint64_t customers; /* kept per replication, >= 10 */
    uint64_t warmup;    /* discarded first, per replication */
    unsigned reps;      /* replications, >= 2 */
    uint64_t seed;
    unsigned threads; /* OpenMP team size, as afd_mc_threads (0: the default) */
} afd_stages_sim_options;

typedef struct afd_stages_sim_stat {
    double rho, rho_se; /* measured busy fraction of the servers */
    double wait_mean, wait_mean_se, wait_p, wait_p_se;
    double sojourn_mean, sojourn_mean_se, sojourn_p, sojourn_p_se;
} afd_stages_sim_stat;

/* Simulate; out[0..n) the stages, out[n] end to end.  AFD_EINVAL for bad
 * options or a token-dependent stage without requests; AFD_ENOMEM. */
AFD_API afd_status afd_stages_simulate(const afd_pipeline_problem *pb,
                                       const afd_stages_sim_options *o, afd_stages_sim_stat *out,
                                       afd_error *err);

#ifdef __cplusplus
}
#endif

#endif /* AFD_STAGES_SIM_H */
