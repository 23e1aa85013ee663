/* afd_plan.h: the search of afdkit plan.  For a model's laws at each
 * tensor-parallel size, a workload and two SLOs, the best configuration of
 * each serving architecture on at most N devices: the closed forms of
 * libanalytic/serving/ (afd_serving.h, afd_taichi.h) and of the AFD pool
 * (afd_pool.h) rank the configurations, the simulator of
 * montecarlo/serve/ (afd_serve.h) measures the best few.
 *
 * Architectures: colloc (prefill-priority collocation), chunked (TaiChi's
 * aggregation: chunked prefill on every instance), disagg (prefill and
 * decode pools), taichi (TaiChi's hybrid: P-heavy and D-heavy instances),
 * afd (models with experts: disagg's prefill pool in front of an xA-yF
 * Attention-FFN decode pool).
 */
#ifndef AFD_PLAN_H
#define AFD_PLAN_H

#include <stddef.h>

#include "afd_device.h"
#include "afd_hw.h"
#include "afd_model.h"
#include "afd_serve.h"
#include "afd_serve_taichi.h"
#include "afd_status.h"
#include "afd_taichi.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
    AFD_PLAN_COLLOC = 0,
    AFD_PLAN_CHUNKED,
    AFD_PLAN_DISAGG,
    AFD_PLAN_TAICHI,
    AFD_PLAN_AFD,
    AFD_PLAN_N_ARCH
};
/* "colloc", "chunked", "disagg", "taichi", "afd"; "?" out of range. */
AFD_API const char *afd_plan_arch_name(int arch);
/* The routing the plan simulates: "global" (colloc, chunked: one queue per
 * pool; afd's closed forms), "least-requests" (disagg's prefill pool),
 * "ttft-estimate" (TaiChi's Algorithm 2). */
AFD_API const char *afd_plan_router_name(int arch);
/* The same as the simulator's router (disagg: least-requests; the others
 * global), given explicitly rather than taken from its default. */
AFD_API afd_serve_router afd_plan_serve_router(int arch);

/* requests per prefill batch of colloc and disagg (afdkit serve's default) */
#define AFD_PLAN_PREFILL_BMAX 4u
/* the fraction of requests meeting both SLOs that defines the goodput */
#define AFD_PLAN_TARGET 0.9

/* The laws of an instance of tp devices and what they allow. */
typedef struct afd_plan_tp {
    unsigned tp, bmax;        /* bmax: decode batch cap (afd_plan_tp_bmax) */
    afd_hw hw;                /* afd_estimate_laws at tp, unit ms */
    double kv_capacity;       /* KV tokens per instance (afd_kv_capacity_tokens) */
    double kv_time_per_token; /* KV transfer per prompt token, ms */
} afd_plan_tp;

/* The laws of tp devices of d for m: afd_estimate_laws, the KV capacity,
 * and the KV transfer of a prompt token, afd_kv_bytes_per_token over tp
 * links of net_gbps: bytes / (tp net_gbps 10^9) x 10^3 ms.  bmax is left
 * 0.  Errors (err says why) as afd_kv_capacity_tokens and
 * afd_estimate_laws: the weights do not fit, an estimate fails. */
AFD_API afd_status afd_plan_tp_laws(const afd_model *m, const afd_device *d, unsigned tp,
                                    afd_plan_tp *out, afd_error *err);

/* ts->bmax from afd_decode_bmax (KV memory for E[P] + E[G] tokens per
 * request, the TPOT SLO at the mean KV load theta, at most the batches the
 * decode law was fitted on); *why as afd_decode_bmax's. */
AFD_API afd_status afd_plan_tp_bmax(afd_plan_tp *ts, const afd_taichi_lengths *len, double tpot_slo,
                                    int *why);

typedef struct afd_plan_row {
    int arch;
    const afd_plan_tp *ts; /* NULL: no configuration */
    unsigned instances, prefill, decode, chunk, chunk_d;
    unsigned ffn;               /* afd: FFN instances (decode: Attention instances) */
    unsigned bmax;              /* decode batch cap (afd: slots per Attention instance) */
    double tau;                 /* afd: the pool's cycle time tau_G, ms */
    double closed;              /* closed-form goodput per ms (NAN: the closed forms
                                   failed, closed_st says why) */
    double goodput, goodput_se; /* per ms: simulated, or closed (afd_plan_closed_numbers) */
    int se_resolution;          /* 1: goodput_se is the bisection's resolution, not a
                                   standard error (afd_plan_simulate) */
    double ttft_p90, tpot_p90, tpot_mean;
    double attain, attain_se; /* at the plan's rate */
    double rate_ttft_p90, rate_tpot_p90;
    const char *limit;    /* what fails first above the goodput, "nan" unknown */
    afd_status st;        /* the simulator's */
    afd_status closed_st; /* the closed forms' (closed NAN) */
} afd_plan_row;

typedef struct afd_plan_params {
    const afd_serve_params *base;  /* workload, requests, warm-up, batches, seed */
    const afd_taichi_lengths *len; /* the workload's length statistics */
    double ttft, tpot;             /* SLOs, ms */
    double rate;                   /* > 0: also simulate each row at this rate, per ms */
    double tol;                    /* relative width of the goodput bracket */
    int moe;                       /* the model has experts: the afd row */
    unsigned pool_bmax;            /* afd: the most slots per Attention instance (0: the
                                      KV memory and the laws' fitted range only) */
} afd_plan_params;

/* Every number NAN, counts 0, limit "nan", bmax ts's (0 without ts). */
AFD_API void afd_plan_row_init(afd_plan_row *r, int arch, const afd_plan_tp *ts);
/* Devices of the row: tp x its instances (0 without ts). */
AFD_API unsigned afd_plan_gpus(const afd_plan_row *r);

/* The best configuration of each architecture at one tp on n = N / tp
 * instances by the closed forms, cand[arch] (closed 0 when none sustains a
 * rate):
 *   colloc  1 .. n instances (afd_serving_goodput_colloc_sizes), the most
 *           goodput, the fewest instances on a tie;
 *   disagg  every split NP + ND <= n (afd_serving_goodput_stages and
 *           afd_serving_goodput_split), the fewest instances on a tie;
 *   chunked, taichi  afd_taichi_best on n instances over chunks[] at
 *           attainment AFD_PLAN_TARGET;
 *   afd     (pl->moe) max over NP of min(disagg's prefill goodput of NP
 *           instances, the rate of afd_pool_best on n - NP instances).
 * A closed form stopped by its solver's limits (AFD_ELIMIT, AFD_ENUMERIC)
 * leaves its architecture with closed NAN, closed_st the status and limit
 * "size-limit" or "numeric"; other failures are returned. */
AFD_API afd_status afd_plan_closed_best(const afd_plan_params *pl, const afd_plan_tp *ts,
                                        unsigned n, const unsigned *chunks, size_t n_chunks,
                                        afd_plan_row cand[AFD_PLAN_N_ARCH]);

/* The simulator's parameters of r's configuration (tc holds taichi's). */
AFD_API void afd_plan_serve_params(const afd_plan_params *pl, const afd_plan_row *r,
                                   afd_serve_params *p, afd_serve_taichi_config *tc);

/* The closed forms' numbers: goodput = closed; colloc and disagg also their
 * P90s, mean TPOT and limit at it (afd_serving_colloc, _disagg); afd its
 * mean TPOT, the cycle tau_G. */
AFD_API void afd_plan_closed_numbers(const afd_plan_params *pl, afd_plan_row *r);

/* The simulator's goodput of r: the largest Poisson rate with attainment
 * >= AFD_PLAN_TARGET (afd_serve_goodput_attain, bracket from half the
 * closed-form goodput to 1.5 times the closed forms' bound of the stable
 * rate, to pl->tol), its P90s and mean TPOT there, limit what fails at 1.1
 * times it (unstable, or the SLO whose P90 exceeds it by the larger
 * factor), and with pl->rate the attainment and P90s there.  goodput_se is
 * the delta-method standard error of afd_serve_goodput_attain where that is
 * positive; where it is 0 or NaN (the attainment has no spread at the
 * goodput: a cliff) the bisection's resolution tol g / (1 - tol), the most
 * the last bracket [g, hi) can hold above g, with se_resolution set; NaN
 * for a goodput of 0.  r->st gets the simulator's status. */
AFD_API void afd_plan_simulate(const afd_plan_params *pl, afd_plan_row *r);

/* One candidate's numbers: afd rows by the closed forms (no serve
 * architecture simulates the pool), the others by the simulator when
 * simulate and their closed goodput is positive (else goodput = closed:
 * 0, or NAN when the closed forms failed), by the closed forms otherwise. */
AFD_API void afd_plan_measure(const afd_plan_params *pl, afd_plan_row *r, int simulate);

/* qsort comparators: by goodput (NAN as 0), largest first, then fewer
 * devices, then architecture; by closed (NAN last), largest first, then
 * fewer devices. */
AFD_API int afd_plan_by_goodput(const void *a, const void *b);
AFD_API int afd_plan_by_closed(const void *a, const void *b);

/* From cand[tp index x AFD_PLAN_N_ARCH + arch] (n_tp sizes), per
 * architecture below n_arch its `verify` best sizes by closed goodput
 * (those with none positive: the first): sel[] (room for n_tp x n_arch),
 * *n_sel of them. */
AFD_API void afd_plan_select(const afd_plan_row *cand, size_t n_tp, int n_arch, size_t verify,
                             afd_plan_row *sel, size_t *n_sel);

/* One row per architecture below n_arch: its best measured candidate of
 * rows[0..n) (afd_plan_by_goodput), best[arch] (ts NULL when it has none);
 * then best[0..n_arch) sorted by afd_plan_by_goodput. */
AFD_API void afd_plan_best_rows(const afd_plan_row *rows, size_t n, int n_arch, afd_plan_row *best);

/* A row's rates for the table: generated tokens per second per device
 * (goodput x E[G] / gpus), per user (1 / mean TPOT) and dollars per million
 * generated tokens (gpus x price_per_hour / (3600 x tokens/s) x 10^6);
 * unit_seconds the seconds of the laws' unit (10^-3 for ms).  NAN where
 * undefined (no devices, no price). */
AFD_API void afd_plan_row_rates(const afd_plan_row *r, const afd_taichi_lengths *len,
                                double unit_seconds, double price_per_hour, double *tokens_per_gpu,
                                double *tokens_per_user, double *usd_per_mtok);

/* A point of the tokens-per-GPU / tokens-per-user plane. */
typedef struct afd_plan_point {
    int arch;
    unsigned tp, bmax; /* the decode cap the configuration was found at */
    double per_gpu;    /* generated tokens/s per device at the goodput */
    double per_user;   /* tokens/s of one user, 1 / mean TPOT */
    int frontier;      /* 1: no point of its architecture has both at least as
                          large and one larger (afd_pareto_front) */
} afd_plan_point;

/* The frontier of each architecture below n_arch: for every size ts[0..n_tp)
 * and every decode cap b = bmax, bmax / 2, bmax / 4, ... >= 1 (the pool's
 * slots for afd), the best configuration at that cap on gpus devices
 * (afd_plan_closed_best, chunks above b), measured as afd_plan_measure
 * (simulate) does, then afd_plan_row_rates.  A smaller cap gives each user
 * a faster decode step and each device fewer tokens, which traces the
 * trade-off.  Points without both rates (no rate meets the SLOs; the closed
 * forms of chunked and taichi give no mean TPOT) are left out.  *points
 * (malloc'd, the caller frees) gets *n_points of them, by architecture,
 * tp, cap descending.  Errors as afd_plan_closed_best, AFD_ENOMEM. */
AFD_API afd_status afd_plan_frontier(const afd_plan_params *pl, const afd_plan_tp *ts,
                                     size_t n_tp, unsigned gpus, const unsigned *chunks,
                                     size_t n_chunks, int n_arch, int simulate,
                                     double unit_seconds, afd_plan_point **points,
                                     size_t *n_points);

#ifdef __cplusplus
}
#endif

#endif /* AFD_PLAN_H */
