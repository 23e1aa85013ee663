/* afd_profile.h: the estimator (afd_estimate.h) against measured kernel
 * times, and the device efficiencies fitted to them.
 *
 * Measurements come in the CSV layout of Vidur's profiler (Agrawal et al.,
 * "Vidur: A Large-Scale Simulation Framework for LLM Inference", MLSys
 * 2024; microsoft/vidur, data/profiling/, MIT License): one row per
 * (tensor-parallel size, number of tokens) of one transformer layer, with
 * the columns
 *   n_head n_kv_head n_embd n_expanded_embd num_tokens
 *   num_tensor_parallel_workers
 *   time_stats.attn_pre_proj.median    fused QKV projection, ms
 *   time_stats.attn_post_proj.median   output projection, ms
 *   time_stats.mlp_up_proj.median      fused gate and up projections, ms
 *   time_stats.mlp_act.median          SiLU and product, ms
 *   time_stats.mlp_down_proj.median    down projection, ms
 * and, for collectives, one row per (workers, message size):
 *   num_workers size time_stats.all_reduce.median   (bytes, ms).
 *
 * Three modules are compared, each the sum of the estimator's operators
 * (afd_estimate_forward with b = 1 sequence of s = num_tokens tokens, so
 * n = num_tokens rows enter every linear layer; dispatch off):
 *   qkv    q_proj + k_proj + v_proj                    vs attn_pre_proj
 *   o_proj o_proj                                      vs attn_post_proj
 *   mlp    gate_proj + silu + up_proj + mul + down_proj
 *                                   vs mlp_up_proj + mlp_act + mlp_down_proj
 * each operator's time being the adapted roofline of BestServe (eq. 3, 5)
 *   t = max(W / (mfu S_c), Q / (mbu S_m))
 * with the device's kernel_us and roofline_p when it has them
 * (afd_estimate.h).
 */
#ifndef AFD_PROFILE_H
#define AFD_PROFILE_H

#include <stddef.h>

#include "afd_device.h"
#include "afd_model.h"
#include "afd_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum afd_profile_module {
    AFD_PROFILE_QKV = 0,
    AFD_PROFILE_OPROJ = 1,
    AFD_PROFILE_MLP = 2,
    AFD_PROFILE_NMOD = 3
} afd_profile_module;

/* "qkv", "o_proj", "mlp"; NULL out of range. */
AFD_API const char *afd_profile_module_name(afd_profile_module k);

typedef struct afd_profile_row {
    long line;                 /* 1-based line in the file */
    double heads, kv_heads;    /* n_head, n_kv_head */
    double hidden;             /* n_embd */
    double intermediate;       /* n_expanded_embd */
    double tokens;             /* num_tokens */
    double tp;                 /* num_tensor_parallel_workers */
    double ms[AFD_PROFILE_NMOD]; /* measured medians, ms, by afd_profile_module */
} afd_profile_row;

typedef struct afd_profile {
    size_t n;
    afd_profile_row *row;
} afd_profile;

/* Read a compute profile.  Errors name the line and column: AFD_EPARSE for
 * a missing column or a value that is not a number, AFD_EINVAL for a value
 * out of its domain (counts must be positive integers, times > 0),
 * AFD_EEMPTY for no rows, AFD_EIO, AFD_ENOMEM.  out is empty on error. */
AFD_API afd_status afd_profile_read(const char *path, afd_profile *out, afd_error *err);
AFD_API void afd_profile_free(afd_profile *p);

typedef struct afd_allreduce_row {
    long line;
    double workers; /* num_workers */
    double bytes;   /* size */
    double ms;      /* time_stats.all_reduce.median */
} afd_allreduce_row;

typedef struct afd_allreduce_profile {
    size_t n;
    afd_allreduce_row *row;
} afd_allreduce_profile;

/* Read an all-reduce profile; errors as afd_profile_read. */
AFD_API afd_status afd_allreduce_read(const char *path, afd_allreduce_profile *out,
                                      afd_error *err);
AFD_API void afd_allreduce_free(afd_allreduce_profile *p);

/* Does the row describe the model (n_embd = hidden_size, n_head,
 * n_kv_head, n_expanded_embd = intermediate_size)?  AFD_EINVAL with the
 * first mismatch named otherwise, or for a model that is not a dense
 * LLaMA-family one. */
AFD_API afd_status afd_profile_row_matches(const afd_profile_row *r, const afd_model *m,
                                           afd_error *err);

/* The estimator's time (ms) of module k at tp devices and n tokens, and
 * whether every operator of it is memory-bound (*memory_bound = 1: the
 * weight-read-bound regime), compute-bound (-1) or mixed (0); memory_bound
 * may be NULL.  Errors of afd_estimate_forward. */
AFD_API afd_status afd_profile_estimate(const afd_model *m, const afd_device *d, double tp,
                                        double tokens, afd_profile_module k, double *ms,
                                        int *memory_bound, afd_error *err);

/* Fit mfu and mbu (one constant each, both phases) to the rows of p whose
 * tensor-parallel size is tp (tp = 0: every row): GSL's trust-region
 * nonlinear least squares (gsl_multifit_nlinear, Levenberg-Marquardt) of
 *     sum over rows r and modules k of  ln^2(t_est(r, k) / t_meas(r, k)),
 * the relative error of the estimate, symmetric in over- and
 * underestimation.  Of d only peak_tflops, hbm_tbps, kernel_us and
 * roofline_p are used.  Every row
 * must match the model (afd_profile_row_matches).  AFD_EINVAL when no row
 * is left, when the fitted rows do not reach both bounds (no compute-bound
 * or no memory-bound operator at the fit: the efficiency on the other side
 * is then not determined), or when a fitted efficiency exceeds 1 (the
 * device's peak is below what the kernels reached); AFD_ENUMERIC when the
 * solver fails.  *mfu, *mbu NAN on error; *rms (may be NULL) gets the
 * root-mean-square of the log errors.  d's kernel_us and roofline_p enter
 * the estimate as they are. */
AFD_API afd_status afd_profile_fit(const afd_model *m, const afd_device *d, const afd_profile *p,
                                   double tp, double *mfu, double *mbu, double *rms,
                                   afd_error *err);

/* Terms fitted with mfu and mbu by afd_profile_fit_terms. */
enum { AFD_PROFILE_FIT_KERNEL = 1, AFD_PROFILE_FIT_ROOFLINE_P = 2 };

/* afd_profile_fit with more of the device's terms (afd_estimate.h's
 * operator time t = (t_c^p + t_m^p)^(1/p) + kernels x kernel_us):
 * terms | AFD_PROFILE_FIT_KERNEL also fits kernel_us (us, >= 0),
 * terms | AFD_PROFILE_FIT_ROOFLINE_P also fits roofline_p (in (1, 1000]);
 * a term not fitted keeps d's value.  The same least squares of the log
 * ratios, over mfu, mbu and the terms together.  *out is d with the
 * fitted values (unrounded); errors as afd_profile_fit, and AFD_EINVAL for
 * a negative kernel_us or a roofline_p above 1000 (the measurements follow
 * the max), or unknown bits in terms. */
AFD_API afd_status afd_profile_fit_terms(const afd_model *m, const afd_device *d,
                                         const afd_profile *p, double tp, int terms,
                                         afd_device *out, double *rms, afd_error *err);

/* Fit comm_eff and comm_latency_ms to all-reduce measurements among tp
 * workers (tp = 0: all rows with at least two workers): the estimator's
 * all-reduce (afd_estimate_allreduce_ms) is L + x / comm_eff with
 * x = 2 (w - 1) / w bytes / net_gbps, so GSL weighted linear least squares
 * (weights 1 / t^2: relative errors) of t on x gives 1 / comm_eff and L;
 * a negative intercept is refitted through the origin (L = 0).  Only d's
 * net_gbps is used.  AFD_EINVAL when fewer than two rows are left, the
 * sizes do not vary, or comm_eff is outside (0, 1]. */
AFD_API afd_status afd_profile_fit_allreduce(const afd_device *d, const afd_allreduce_profile *p,
                                             double tp, double *comm_eff, double *latency_ms,
                                             afd_error *err);

/* The median and the largest of |rel_err[i]| over n values (n >= 1); NAN
 * for n = 0.  The median of an even count is the mean of the middle two. */
AFD_API void afd_profile_error_stats(const double *rel_err, size_t n, double *median_abs,
                                     double *max_abs);

/* ---- whole forward passes and the kernel model (afd_device.h)
 *
 * A forward-pass file is a CSV with the columns (data/h100-measured's
 * forward.csv; any engine's latency benchmark gives them)
 *   model   a model preset name, or a config.json path (relative paths are
 *           taken from the CSV file's directory)
 *   tp      tensor-parallel size of the shard measured (one GPU's share of
 *           the pass, without the all-reduce)
 *   phase   prefill (one pass over batch sequences of tokens tokens) or
 *           decode (one step of batch sequences over tokens KV tokens)
 *   batch tokens
 *   ms      the pass's time in milliseconds
 *   lm_head_ms   optional: the output head timed apart, added to ms
 * and any other columns (ignored). */
typedef struct afd_forward_row {
    long line;
    afd_model model;
    double tp, batch, tokens;
    afd_phase phase;
    double ms; /* ms + lm_head_ms: the pass's computation */
} afd_forward_row;

typedef struct afd_forward {
    size_t n;
    afd_forward_row *row;
} afd_forward;

/* Read a forward-pass file.  Errors name the line and column (AFD_EPARSE,
 * AFD_EINVAL for a value out of its domain or a model that cannot be
 * loaded, AFD_EEMPTY, AFD_EIO, AFD_ENOMEM); out is empty on error. */
AFD_API afd_status afd_forward_read(const char *path, afd_forward *out, afd_error *err);
AFD_API void afd_forward_free(afd_forward *f);

/* The estimator's computation time (ms, forward compute: every layer and
 * the head, no all-reduce, no dispatch) of the row's pass on d.  Errors of
 * afd_estimate_forward. */
AFD_API afd_status afd_forward_estimate(const afd_device *d, const afd_forward_row *r,
                                        double *ms, afd_error *err);

/* Fit d's kernel model to the passes of f: the floor kernel_floor_us, the
 * elementwise bandwidth, one factor on the compute rates (gemm_tflops,
 * attn_prefill_tflops) and one on the memory rates (gemm_tbps,
 * attn_decode_tbps, attn_cta_gbps); the shape terms (exponents, occupancy,
 * tail, per-CTA costs) stay, being what whole passes cannot separate (the
 * kernel-level CSVs do: scripts/kernel_model.py).  A device without a
 * kernel model starts from h100-sxm's, its rates scaled by the device's
 * peak_tflops and hbm_tbps.  Minimises the sum over rows of Huber(0.1) of
 * ln(estimate / measured) by GSL's Nelder-Mead simplex (nmsimplex2) on the
 * log-parameters.  *out is d with the fitted kernel model; *loss (may be
 * NULL) the loss reached.  AFD_EINVAL for fewer than 5 rows or a row the
 * estimator refuses; AFD_ENUMERIC when the fit leaves the plausible ranges
 * (afd_device_check). */
AFD_API afd_status afd_forward_fit(const afd_device *d, const afd_forward *f, afd_device *out,
                                   double *loss, afd_error *err);

#ifdef __cplusplus
}
#endif

#endif /* AFD_PROFILE_H */
