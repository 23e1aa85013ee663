/* montecarlo/serve/: the simulation that checks libanalytic/serving/.  A
 * request-level serving engine (engine.c) with one policy per architecture:
 * colloc, chunked, disagg, taichi, twotier (policy_*.c), and goodput by
 * simulation (goodput.c). */

/* afd_serve.h: a request-level discrete-event simulator of LLM serving.
 *
 * Design note
 * -----------
 * One engine, many architectures.  The engine owns time, the event heap
 * (afd_event.h: ordered by time, then by insertion sequence, so ties resolve
 * in the order they were scheduled), the request table, the arrival process, the latency
 * laws and the measurements.  It knows nothing of prefill, decode, chunks or
 * KV transfer.  An architecture is a *policy*: a table of four callbacks
 * (afd_serve_policy) that owns its instances and queues and decides what
 * each instance does next.
 *
 *   engine -> policy   init(engine, config) -> state
 *                      arrive(state, engine, request)      a request enters
 *                      event(state, engine, kind, id)      an event it scheduled fires
 *                      fini(state)
 *   policy -> engine   afd_serve_at(e, t, kind, id)        schedule an event
 *                      afd_serve_first_token(e, r)         TTFT of r is now
 *                      afd_serve_finish(e, r)              r's last token is now
 *                      afd_serve_drop(e, r)                r leaves unserved (dropped)
 *                      afd_serve_req(e, r)                 prompt, output, arrival, class,
 *                                                          deadline, one word for the policy
 *                      afd_serve_prefill_time, afd_serve_decode_step   the latency laws
 *                      afd_serve_u01(e)                    the policy's own random stream
 *
 * Every iteration of an instance is one event; a decode step costs O(1) plus
 * O(log b) per sequence that finishes in it (a heap of finishing steps), so
 * a request costs about (output tokens / batch) events, not one per token.
 * Later architectures are further policies with their own configuration
 * (afd_serve_config.extra): a hybrid of prefill-heavy and decode-heavy
 * chunked instances that hands decodes between them schedules its own
 * hand-over events; two-tier serving with deadlines and offloading reads
 * each request's class and deadline (afd_serve_request) and schedules its
 * own deadline events.  Neither needs a change to the engine beyond one
 * service: a request dropped (afd_serve_drop) leaves without its tokens;
 * it has no TTFT, TPOT or end-to-end time, counts as missing its SLOs in
 * the attainment, and is counted in `dropped` and `drop_frac`.  A policy
 * may mark a request by setting its class (afd_serve_request.cls) to a
 * nonzero value; the engine reports the fraction of measured requests with
 * a nonzero class when they left (`class_frac`: the two-tier policy marks
 * the requests it offloaded).
 *
 * Metrics.  Per request: TTFT = first token - arrival; TPOT = (last token -
 * first token) / (output - 1), the mean inter-token time of that request
 * (undefined, and not counted, for one output token); end-to-end = last token -
 * arrival.  The prefill produces the first output token, so a request with
 * G output tokens takes G - 1 decode steps.  The first `warmup` requests (in
 * arrival order) are simulated and discarded.  Means and the 50th, 90th and
 * 99th percentiles of the measured requests are reported with batch-means
 * standard errors: all the measured requests are cut into K consecutive
 * batches in arrival order, of floor(n / K) requests or one more, and se is
 * that of the batch values weighted by their sizes (the ratio estimate's,
 * Cochran 1977 Sec. 6.4; with equal sizes sd(batch values) / sqrt(K),
 * sectioning as afd_queue_sim; batch_stats.c derives it).  A percentile
 * estimates the empirical ceil(q n)-th smallest x_(k): exactly when at most
 * AFD_SERVE_EXACT_REQUESTS are measured (every value kept, 24 bytes a
 * request); beyond, from log-bucketed histograms (mc_internal.h,
 * afd_priv_qhist: 1024 buckets per octave, 4 KiB each) within a relative
 * error of 2^-10 (|p - x_(k)| <= 2^-10 x_(k), 0.098%; 0 and +inf exact), in
 * memory that grows with the octaves the values span, not with their
 * number.  Means stay exact (batch sums).  A batch's percentiles come from
 * histograms of its own, held from its first measured request's departure
 * to its last's and then reused; at most AFD_SERVE_OPEN_BATCHES batches
 * hold them at once (3 x 4 KiB per octave each).  A batch that starts
 * while that many are open gets none: it is left out of the percentiles'
 * standard errors (pct_batches_lost counts it; the others give the se, as
 * a batch-means se over fewer batches, larger than with all of them), and
 * not of the percentiles themselves, of the means or of any other
 * statistic.
 *
 * Instability.  A finite run of an unstable system always finishes, with
 * percentiles that grow with the run length.  The engine counts the requests
 * in the system at the arrivals that end the first, second and last third
 * of the run; it flags the run unstable when that backlog rises across both
 * thirds, each time by more than 1% of a third's arrivals and by more than
 * 50 requests.  A stable queue's backlog does not trend; an overloaded one
 * keeps the excess of every third (even when prefill priority starves the
 * decodes, so that early requests finish last).
 *
 * Random numbers (afd_philox.h), seed from the parameters:
 *   stream 0  interarrival time of request n: uniform n (-log(u) / lambda)
 *   stream 1  lengths of request n: uniform 2n (trace row, or P of the
 *             geometric model) and 2n + 1 (D of the geometric model)
 *   stream 2  the policy's own stream (afd_serve_u01), read in order.
 *   stream 3  the router's draws for request n: uniforms 2n and 2n + 1.
 *   stream 4  the decode router's draws for request n (disagg): the same.
 *
 * Times are in the unit of the latency laws (afd_hw.unit); rates in its
 * inverse.
 */
#ifndef AFD_SERVE_H
#define AFD_SERVE_H

#include <stddef.h>
#include <stdint.h>

#include "afd_hw.h"
#include "afd_status.h"
#include "afd_workload.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Requests measured are at most this many. */
#define AFD_SERVE_MAX_REQUESTS (UINT64_C(1) << 27)
/* Runs measuring at most this many requests keep their three values each
 * (24 bytes a request) for exact percentiles; longer runs count them in
 * log-bucketed histograms instead (see Metrics above). */
#define AFD_SERVE_EXACT_REQUESTS (UINT64_C(1) << 20)
/* Batches that hold histograms at once in such runs (see Metrics above). */
#define AFD_SERVE_OPEN_BATCHES 256u
/* Requests simulated and discarded first: at most as many as measured. */
#define AFD_SERVE_MAX_WARMUP AFD_SERVE_MAX_REQUESTS
#define AFD_SERVE_MAX_INSTANCES 4096u
#define AFD_SERVE_BATCHES 32u /* default number of batches for the standard errors */

typedef struct afd_serve_engine afd_serve_engine;

/* A request as the policy sees it. */
typedef struct afd_serve_request {
    double arrival;   /* time it entered */
    double first;     /* time of its first token (NaN before) */
    double deadline;  /* arrival + the class deadline (+inf if none) */
    uint32_t prompt;  /* P >= 1 */
    uint32_t output;  /* G >= 1 output tokens */
    int cls;          /* service class (0 unless a policy assigns one) */
    uint64_t word;    /* free for the policy */
    /* The prompt's KV blocks (afd_workload.blocks: a trace kept with its
     * block hashes), or NULL and 0; and the prompt tokens its instance's
     * prefix cache held when its prefill started (0 without a cache). */
    const uint32_t *blocks;
    uint32_t n_blocks;
    uint32_t cached;
} afd_serve_request;

/* How a pool of instances receives its requests (see serve_router.c for the
 * deployment each one models).  GLOBAL is one queue that every instance of
 * the pool serves: the ideal bound, not a deployment. */
typedef enum afd_serve_router {
    AFD_SERVE_ROUTE_GLOBAL = 0,
    AFD_SERVE_ROUTE_RANDOM,
    AFD_SERVE_ROUTE_ROUND_ROBIN,
    AFD_SERVE_ROUTE_LEAST_REQUESTS,
    AFD_SERVE_ROUTE_LEAST_TOKENS,
    AFD_SERVE_ROUTE_POWER_OF_TWO,
    AFD_SERVE_ROUTE_SESSION,
    AFD_SERVE_ROUTE_CACHE_AWARE
} afd_serve_router;

/* Architecture-level knobs shared by the built-in policies.  A policy reads
 * the ones it needs and checks them in init; `extra` carries what a later
 * policy needs beyond these. */
typedef struct afd_serve_config {
    unsigned instances;    /* colloc, chunked: N >= 1 */
    unsigned prefill;      /* disagg: prefill instances >= 1 */
    unsigned decode;       /* disagg: decode instances >= 1 */
    unsigned prefill_bmax; /* requests per prefill batch >= 1 */
    unsigned decode_bmax;  /* sequences decoded together >= 1 */
    unsigned chunk;        /* chunked: tokens per iteration, > decode_bmax */
    double pseudo_tau;     /* disagg: > 0 selects BestServe's per-request decode with
                              pseudo batch size max(floor((b + 1) / tau), 1); 0: per step */
    double kv_time_per_token; /* disagg: KV transfer time per prompt token (>= 0) */
    double kv_time_fixed;     /* disagg: fixed part of a transfer (>= 0) */
    afd_serve_router router;  /* colloc, chunked, disagg prefill pool: queue per
                                 instance, chosen at arrival */
    afd_serve_router decode_router; /* disagg decode pool (per-step decode): queue per
                                       instance, chosen when the prefill ends (the KV
                                       transfer needs its destination); GLOBAL to
                                       POWER_OF_TWO */
    /* Prefix cache (prefix_cache.c) of every instance that prefills (colloc,
     * chunked, disagg's prefill pool): prefix_blocks > 0 blocks of
     * block_size >= 1 tokens each, LRU; needs a workload with blocks.
     * 0: none. */
    uint32_t prefix_blocks;
    uint32_t block_size;
    /* > 0: the KV tokens of each such instance (the memory left for the
     * KV cache); its prefix cache then holds at each moment at most the
     * blocks its running requests leave free, floor((prefix_kv_tokens -
     * held) / block_size) and at most prefix_blocks, held the KV tokens of
     * the requests in its prefill (their prompts), prefilled and waiting
     * for or in its decode (prompt + tokens generated; colloc, chunked).
     * A running request's cached blocks are counted in held and in the
     * cache both (no block shared), so the cache holds less than an engine
     * sharing them by at most the running requests' cached blocks.  With
     * prefix_blocks 0, at most the blocks of the whole memory.  0:
     * prefix_blocks throughout. */
    double prefix_kv_tokens;
    const void *extra;        /* policy-specific, NULL for the built-in ones */
} afd_serve_config;

typedef struct afd_serve_policy {
    const char *name;
    const char *summary;
    /* Check cfg, allocate the state.  AFD_EINVAL with err->text naming the
     * knob when cfg does not suit the policy. */
    afd_status (*init)(afd_serve_engine *e, const afd_serve_config *cfg, void **state,
                       afd_error *err);
    void (*arrive)(void *state, afd_serve_engine *e, uint32_t r);
    void (*event)(void *state, afd_serve_engine *e, unsigned kind, uint64_t id);
    void (*fini)(void *state);
} afd_serve_policy;

/* Built-in policies: "colloc", "chunked", "disagg", "taichi", "twotier".
 * NULL if unknown. */
AFD_API const afd_serve_policy *afd_serve_policy_find(const char *name);
/* The i-th built-in policy, NULL past the last. */
AFD_API const afd_serve_policy *afd_serve_policy_at(size_t i);

typedef struct afd_serve_params {
    const afd_serve_policy *policy;
    afd_serve_config config;
    const afd_hw *hw;            /* prefill and decode laws required */
    /* Arrivals: Poisson at lambda > 0, or the given nondecreasing times
     * (times != NULL, n_times >= warmup + requests; lambda ignored). */
    double lambda;
    const double *times;
    size_t n_times;
    /* Lengths: fixed (prompt, output >= 1, workload == NULL), or drawn from
     * a workload: TRACE with kept rows (row uniform; with `times`, row n in
     * order, cycling), GEOMETRIC (P, D ~ Geometric on {1, 2, ...}). */
    uint32_t prompt, output;
    const afd_workload *workload;
    uint64_t requests;     /* measured, >= batches */
    uint64_t warmup;       /* simulated first and discarded, <= AFD_SERVE_MAX_WARMUP */
    unsigned batches;      /* K >= 2 (0: AFD_SERVE_BATCHES) */
    double ttft_slo, tpot_slo; /* for the attainment; +inf or NaN: none */
    uint64_t seed;
    /* Nonzero: end the run at the last arrival when the backlog trend (see
     * Instability above) already flags it unstable, without draining the
     * backlog (which takes time in proportion to the work piled up): the
     * result then has unstable, growth, backlog, events and end_time set and
     * every statistic NaN.  0: always run to the end. */
    int stop_unstable;
    /* When not NULL, called with the requests arrived so far (warmup
     * included) and their total, every AFD_SERVE_PROGRESS_EVERY arrivals and
     * at the last one; it must not touch the run. */
    void (*progress)(void *ctx, uint64_t done, uint64_t total);
    void *progress_ctx;
} afd_serve_params;

#define AFD_SERVE_PROGRESS_EVERY 16384u

typedef struct afd_serve_stat {
    double mean, mean_se;
    double p50, p50_se, p90, p90_se, p99, p99_se;
} afd_serve_stat;

typedef struct afd_serve_result {
    afd_serve_stat ttft, tpot, e2e;
    double throughput;                /* measured completions per unit time (dropped
                                         requests excluded) */
    double attainment, attainment_se; /* fraction meeting both SLOs (a dropped
                                         request meets neither) */
    double attain_ttft, attain_ttft_se; /* fraction meeting the TTFT SLO, */
    double attain_tpot, attain_tpot_se; /* the TPOT SLO (each alone; batch
                                           means se) */
    double attain_diff_se;            /* batch-means se of attain_ttft -
                                         attain_tpot: the batch values of the
                                         difference, so that the two
                                         attainments' correlation (the same
                                         requests, the same queue) counts */
    uint64_t completed;               /* measured requests (= requests) */
    uint64_t tpot_count;              /* of which with output >= 2 */
    int unstable;                     /* see the design note */
    double growth;                    /* fraction of the arrivals of the last two
                                         thirds still in the system at the end of arrivals */
    uint64_t backlog;                 /* requests in the system when the last arrived */
    uint64_t events;                  /* events processed */
    double end_time;                  /* time of the last event */
    uint64_t dropped;                 /* measured requests dropped (afd_serve_drop) */
    double drop_frac, drop_frac_se;   /* dropped / completed, batch-means se */
    double class_frac, class_frac_se; /* fraction of measured requests with a
                                         nonzero class when they left */
    double prefix_hit, prefix_hit_se; /* prompt tokens of the measured requests
                                         found in the prefix cache over all their
                                         prompt tokens, batch-means se (NaN
                                         without a cache) */
    unsigned pct_batches_lost;        /* batches left out of the percentiles' se
                                         (see Metrics) */
    double imbalance, imbalance_se;   /* routed pool (router != global): the
                                         largest instance's share of the measured
                                         requests over the mean share (1: even),
                                         batch-means se; NaN with global */
    double decode_imbalance, decode_imbalance_se; /* disagg's decode pool
                                         (decode_router != global, per-step
                                         decode): the same over its instances;
                                         NaN otherwise */
} afd_serve_result;

/* Run one simulation.  Errors: AFD_EINVAL (bad parameters, or the policy
 * refuses its configuration: err->text says which knob), AFD_EEMPTY (a
 * workload without kept rows), AFD_ENOMEM.  On error the result is NaN. */
AFD_API afd_status afd_serve_run(const afd_serve_params *p, afd_serve_result *out,
                                 afd_error *err);

/* Ties of the binding limit.  A simulation names the SLO that binds only
 * when the run tells the two apart by more than AFD_SERVE_TIE_Z standard
 * errors of their difference; within that they tie (two-sided, about 95%
 * for a normal estimate: a tie is the run's "cannot say", not a claim that
 * the two are equal). */
#define AFD_SERVE_TIE_Z 2.0

/* Whether run r cannot tell which SLO its attainment binds on:
 * |attain_ttft - attain_tpot| <= z attain_diff_se (the batch-means se of
 * the difference).  0 when any of them is NaN. */
AFD_API int afd_serve_attain_tie(const afd_serve_result *r, double z);

/* Whether run r cannot tell which P90 binds against the SLOs T (TTFT) and
 * S (TPOT): both miss (ttft.p90 > T and tpot.p90 > S), or the ratios
 * x = ttft.p90 / T and y = tpot.p90 / S are within z standard errors,
 * |x - y| <= z sqrt((ttft.p90_se / T)^2 + (tpot.p90_se / S)^2), the two
 * batch-means se taken as independent (the P90s of the same batches rise
 * together with the load, so this overstates the se of the difference and
 * calls a tie a little more often).  0 when a value is NaN. */
AFD_API int afd_serve_p90_tie(const afd_serve_result *r, double ttft_slo, double tpot_slo,
                              double z);

/* Goodput by simulation: the largest Poisson rate in [lo, hi] whose run
 * (p with lambda replaced; the same seed at every rate, so the runs share
 * their uniforms) is stable with P90 TTFT <= ttft_slo and P90 TPOT <=
 * tpot_slo, found by afd_goodput_bisect (afd_serving.h) to rel_tol; 0 if lo
 * fails.  Errors: those of afd_serve_run and afd_goodput_bisect. */
AFD_API afd_status afd_serve_goodput(const afd_serve_params *p, double ttft_slo, double tpot_slo,
                                     double lo, double hi, double rel_tol, double *goodput);

/* afd_serve_goodput, and what fails at the lowest infeasible rate it tried,
 * in the order of the closed forms (afd_serving_goodput): the run is
 * unstable (AFD_SERVE_LIMIT_UNSTABLE: a stage cannot keep up), else, when
 * the run cannot tell the two SLOs apart there (afd_serve_p90_tie at
 * AFD_SERVE_TIE_Z), AFD_SERVE_LIMIT_TIE, else the P90 TTFT misses its SLO
 * (AFD_SERVING_LIMIT_TTFT), else the P90 TPOT (AFD_SERVING_LIMIT_TPOT);
 * AFD_SERVING_LIMIT_NONE when every rate tried met both (the goodput is
 * hi).  limit may be NULL. */
enum { AFD_SERVE_LIMIT_UNSTABLE = -1, AFD_SERVE_LIMIT_TIE = -2 };
AFD_API afd_status afd_serve_goodput_limit(const afd_serve_params *p, double ttft_slo,
                                           double tpot_slo, double lo, double hi, double rel_tol,
                                           double *goodput, int *limit);

/* The name of a limit of afd_serve_goodput_limit: "capacity"
 * (AFD_SERVE_LIMIT_UNSTABLE), "ttft=tpot" (AFD_SERVE_LIMIT_TIE), else
 * afd_serving_limit_name's ("ttft", "tpot", "none"). */
AFD_API const char *afd_serve_limit_name(int limit);

/* afd_serve_goodput_limit over a bracket that grows: while every rate tried
 * up to hi meets both SLOs (limit AFD_SERVING_LIMIT_NONE), the search goes on
 * from the last rate tried over a bracket twice as high, up to hi_max, so
 * that a first hi set too low (a closed-form capacity below the simulator's)
 * does not cap the goodput.  *limit is AFD_SERVING_LIMIT_NONE only when the
 * bracket reached hi_max with every rate tried meeting both.  AFD_EINVAL
 * when hi_max < hi; otherwise the errors of afd_serve_goodput_limit. */
AFD_API afd_status afd_serve_goodput_widen(const afd_serve_params *p, double ttft_slo,
                                           double tpot_slo, double lo, double hi, double hi_max,
                                           double rel_tol, double *goodput, int *limit);
/* How far callers let afd_serve_goodput_widen grow a bracket whose first hi
 * is a closed-form capacity: this many times it. */
#define AFD_SERVE_GOODPUT_WIDEN 64.0

/* Goodput by SLO attainment (TaiChi's definition): the largest Poisson rate
 * in [lo, hi] whose run (p with lambda replaced, the same seed at every rate)
 * is stable with at least the fraction target of its measured requests
 * meeting both SLOs (p->ttft_slo, p->tpot_slo; afd_serve_result.attainment),
 * found by afd_goodput_bisect to rel_tol; 0 if lo fails.  *goodput_se (may
 * be NULL) is the delta-method standard error of that root: the
 * attainment's standard error at the goodput over the slope of the
 * attainment, measured by two more runs at 0.9 and 1.1 times the goodput
 * (NaN when the slope is not negative or the goodput is 0).  Errors: those
 * of afd_serve_run and afd_goodput_bisect. */
AFD_API afd_status afd_serve_goodput_attain(const afd_serve_params *p, double target, double lo,
                                            double hi, double rel_tol, double *goodput,
                                            double *goodput_se);

/* The same, with *at (may be NULL) the run at the goodput (at lo when the
 * goodput is 0): its attainment of each SLO alone names the limit that
 * binds there; *unstable_above (may be NULL) is 1 when the smallest rate the
 * search found infeasible failed by instability (the capacity binds), else
 * 0. */
AFD_API afd_status afd_serve_goodput_attain_at(const afd_serve_params *p, double target,
                                               double lo, double hi, double rel_tol,
                                               double *goodput, double *goodput_se,
                                               afd_serve_result *at, int *unstable_above);

/* ---- the engine's services to policies */

/* Current simulated time. */
AFD_API double afd_serve_now(const afd_serve_engine *e);
/* Schedule an event for the policy at time t >= now; kind and id are the
 * policy's.  AFD_ENOMEM if the heap cannot grow (the run then fails). */
AFD_API afd_status afd_serve_at(afd_serve_engine *e, double t, unsigned kind, uint64_t id);
AFD_API afd_serve_request *afd_serve_req(afd_serve_engine *e, uint32_t r);
/* Record the first token of r at the current time. */
AFD_API void afd_serve_first_token(afd_serve_engine *e, uint32_t r);
/* Record the last token of r at the current time and free r. */
AFD_API void afd_serve_finish(afd_serve_engine *e, uint32_t r);
/* Drop r now, unserved (no first token needed), and free r: it misses its
 * SLOs.  Call it at most once per request and never after afd_serve_finish;
 * a policy must not keep r's id afterwards (the slot is reused). */
AFD_API void afd_serve_drop(afd_serve_engine *e, uint32_t r);
/* Fail the run with status st (memory); the engine stops at the next event. */
AFD_API void afd_serve_fail(afd_serve_engine *e, afd_status st);
/* Next uniform of the policy stream (stream 2). */
AFD_API double afd_serve_u01(afd_serve_engine *e);
/* The latency laws of afd_hw:
 *   prefill of a batch of n prompts:  a + b sum P + c sum P^2   (n >= 1)
 *   one decode step of b sequences holding K KV tokens: beta + gamma b + alpha K */
AFD_API double afd_serve_prefill_time(const afd_serve_engine *e, double sum_p, double sum_p2);
AFD_API double afd_serve_decode_step(const afd_serve_engine *e, double b, double k);
AFD_API const afd_hw *afd_serve_hw(const afd_serve_engine *e);

#ifdef __cplusplus
}
#endif

#endif /* AFD_SERVE_H */
