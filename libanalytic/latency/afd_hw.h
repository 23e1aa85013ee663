/* libanalytic/latency/: how long a batch takes on a device.  The linear
 * latency coefficients of Appendix B, their files and presets (afd_hw.h);
 * transformer and accelerator descriptions (afd_model.h, afd_device.h); the
 * BestServe estimator built from them (afd_estimate.h) and its check against
 * measured kernel times (afd_profile.h); Ascendra's batch performance model
 * (afd_perfmodel.h); and fits of measured latencies (afd_calibrate.h). */

/* afd_hw.h: linear latency coefficients of the Attention, FFN and
 * communication stages (afd-provisioning paper, Section 3.1, Appendix B).
 *
 *   Attention      t_A(T)  = alpha_a T  + beta_a    T  = token load of a worker
 *   FFN            t_F(rB) = alpha_f rB + beta_f    rB = aggregated batch
 *   communication  t_C(rB) = alpha_c rB + beta_c    round trip per Attention instance
 *
 * Units are the caller's (the paper's Table 3 uses "cycles"; afdkit hw
 * derives seconds); every command keeps them consistent.  Coefficients come
 * from a preset, a key=value file, a derivation from model dimensions and
 * hardware specifications (Appendix B, eq. 17-31), or a fit to measured
 * latencies (afd_calibrate.h).
 */
#ifndef AFD_HW_H
#define AFD_HW_H

#include <stddef.h>

#include "afd_device.h"
#include "afd_model.h"
#include "afd_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A step time tabulated over a grid (afd_hw_table_eval): t[i ns + j] at
 * b[i] and s[j], both axes strictly increasing from >= 1.
 *   decode:  b = sequences in the batch, s = K / b, the mean KV tokens per
 *            sequence (K the batch's KV tokens): at a given b the step is
 *            a + c s (the weights' read, the KV's), and every roofline
 *            kink lies along b;
 *   prefill: b = (sum P_i)^2 / sum P_i^2 and s = sum P_i, the batch of
 *            prompts P_i taken as the b equal prompts with the same sum
 *            P_i and sum P_i^2 (one prompt of P tokens: b = 1, s = P): the
 *            GEMMs depend on s alone (their kink lies along s), causal
 *            attention on s^2 / b.  Points of b > s (prompts under one
 *            token) hold the value at b = s.
 * nb = ns = 0: no table (the fitted laws are used). */
#define AFD_HW_TABLE_MAX 96
#define AFD_HW_TABLE_POINTS 4096
typedef struct afd_hw_table {
    unsigned nb, ns; /* nb, ns <= AFD_HW_TABLE_MAX, nb ns <= AFD_HW_TABLE_POINTS */
    double b[AFD_HW_TABLE_MAX], s[AFD_HW_TABLE_MAX];
    double t[AFD_HW_TABLE_POINTS];
} afd_hw_table;

typedef struct afd_hw {
    double alpha_a, beta_a; /* Attention: per token, fixed */
    double alpha_f, beta_f; /* FFN: per request of the aggregated batch, fixed */
    double alpha_c, beta_c; /* communication round trip: per request, fixed */
    char unit[16];          /* "cycles", "s", "ms", "us", "ns" */
    /* Serving latency laws, in the same unit (NAN when the file has none):
     *   prefill batch with prompts P_i:   a + b sum P_i + c sum P_i^2
     *   decode step, b sequences holding K KV tokens in all:  beta + gamma b + alpha K */
    double prefill_a, prefill_b, prefill_c;
    double decode_beta, decode_gamma, decode_alpha;
    double fit_max_rel_err; /* largest relative error of the fit over its grid; NAN if unknown */
    char model[64];         /* provenance: model and device it came from, "" if unknown */
    char device[64];
    /* largest relative error of the six AFD coefficients' fits over the
     * ranges they are used on (afd_estimate.h); NAN if unknown */
    double afd_fit_max_rel_err;
    /* provenance: tensor-parallel size of the instance the laws time, 0 if
     * unknown (so that a zeroed struct states none).  A command sizing an
     * instance of another size from these laws would mix two systems. */
    unsigned tp;
    /* the largest batch the decode law was fitted on (its range is 1 to
     * this), 0 if unknown: a decode batch above it extrapolates the law */
    unsigned decode_batch_max;
    /* provenance: devices per Attention and per FFN instance that the six
     * AFD coefficients time, 0 if unknown.  Not tp: estimate fits the six at
     * its tp (afd_tp = tp), Appendix B derives them per card (afd_tp = 1)
     * whatever size the serving laws time. */
    unsigned afd_tp;
    /* the step times the laws were fitted to, tabulated (afd_hw_table; in
     * the same unit): exact where the laws are fitted */
    afd_hw_table decode_table, prefill_table;
} afd_hw;

/* Every coefficient NAN, every string empty: the start of an afd_hw built by
 * hand (a zeroed struct would claim serving laws of 0). */
AFD_API void afd_hw_init(afd_hw *hw);
/* 1 when all three prefill (resp. decode) law coefficients are present. */
AFD_API int afd_hw_has_prefill(const afd_hw *hw);
AFD_API int afd_hw_has_decode(const afd_hw *hw);

/* Interpolate a table at (b, s): bilinear in (log b, log s) of log t, that
 * is a power law b^x s^y through the four grid points around (b, s) (exact
 * at the grid points; a sum of power laws such as a + c s is followed
 * within 0.5% on a grid of ratio sqrt 2, a roofline's kink within 1-2% on
 * one of ratio 2^(1/4));
 * outside the grid the power law of the last cell is extended.  NAN for
 * b or s below 1 or not finite, or an empty table. */
AFD_API double afd_hw_table_eval(const afd_hw_table *t, double b, double s);

/* The decode step of b sequences holding K KV tokens in all: the decode
 * table at (b, K / b) when hw has one, else the law decode_beta +
 * decode_gamma b + decode_alpha K (exactly as computed before tables). */
AFD_API double afd_hw_decode_step(const afd_hw *hw, double b, double K);
/* The prefill of a batch with sum_p = sum P_i and sum_p2 = sum P_i^2: the
 * prefill table at (sum_p^2 / sum_p2, sum_p) when hw has one,
 * else prefill_a + prefill_b sum_p + prefill_c sum_p2. */
AFD_API double afd_hw_prefill_time(const afd_hw *hw, double sum_p, double sum_p2);
/* 1 when hw carries the decode (resp. prefill) table. */
AFD_API int afd_hw_has_decode_table(const afd_hw *hw);
AFD_API int afd_hw_has_prefill_table(const afd_hw *hw);

/* Presets by name: "paper-910c" is Table 3 of the paper (DeepSeek-V3 on
 * Ascend 910C, in cycles): alpha_a = 0.00165, beta_a = 50, alpha_f = 0.083,
 * beta_f = 100, alpha_c = 0.022, beta_c = 20.  AFD_EINVAL if unknown. */
AFD_API afd_status afd_hw_preset(const char *name, afd_hw *out);
/* Name of the i-th preset, NULL past the last. */
AFD_API const char *afd_hw_preset_name(size_t i);

/* Largest tensor-parallel size (tp, afd_tp) a latency file may state. */
#define AFD_HW_TP_MAX 1024
/* Largest decode_batch_max a latency file may state (the decode slots'
 * own limit, afd_decode_slots_from_law). */
#define AFD_HW_BATCH_MAX 1000000000u

/* Validate: every coefficient finite; alpha_a > 0 and alpha_f > 0 (the model
 * needs a load-dependent Attention and FFN); alpha_c >= 0; betas >= 0; the
 * serving laws, where present, finite and >= 0; tp and afd_tp at most
 * AFD_HW_TP_MAX; decode_batch_max at most AFD_HW_BATCH_MAX and, when not
 * 0, with a decode law.
 * On failure err->text names the coefficient. */
AFD_API afd_status afd_hw_check(const afd_hw *hw, afd_error *err);

/* Key=value text: "alpha_a = 0.00165" lines for the six coefficients (all
 * required, each once); optional "unit = s", "model = NAME", "device = NAME",
 * "tp = T" (a positive integer up to AFD_HW_TP_MAX: the tensor-parallel
 * size the laws time), "afd_tp = T" (likewise: the devices per instance
 * the six coefficients time), the serving laws (prefill_a prefill_b prefill_c,
 * all three or none; decode_beta decode_gamma decode_alpha, likewise; each
 * >= 0), "decode_batch_max = B" (a positive integer up to AFD_HW_BATCH_MAX:
 * the largest batch the decode law was fitted on; needs the decode law) and
 * fit_max_rel_err and afd_fit_max_rel_err; "decode_table = nb ns b_1 .. b_nb
 * s_1 .. s_ns t_11 t_12 .. t_nb,ns" and likewise "prefill_table" (afd_hw_table:
 * nb, ns in [1, AFD_HW_TABLE_MAX], nb ns <= AFD_HW_TABLE_POINTS, the axes finite, >= 1 and increasing,
 * the times row by row, each finite and > 0); '#' starts a comment; blank
 * lines are ignored.  Errors name the line: unknown or repeated key, bad
 * number, tp, afd_tp or decode_batch_max not a positive integer, missing
 * coefficient; the result is also checked with afd_hw_check. */
AFD_API afd_status afd_hw_parse(const char *text, size_t len, afd_hw *out, afd_error *err);
/* Read a key=value file (at most AFD_HW_TEXT_MAX bytes). */
AFD_API afd_status afd_hw_read(const char *path, afd_hw *out, afd_error *err);
/* Largest latency file afd_hw_read reads, and the buffer afd_hw_format
 * needs for any hw (its tables at 17 significant digits included). */
#define AFD_HW_TEXT_MAX (256 * 1024)

/* Format hw as key=value text with 17 significant digits (so that reading
 * it back gives the same doubles) after an optional comment line: unit,
 * model, device, tp and afd_tp (each when known), then the coefficients,
 * the decode law followed by decode_batch_max when known, then the tables
 * when present (one line each).
 * AFD_ERANGE if cap is too small. */
AFD_API afd_status afd_hw_format(const afd_hw *hw, const char *comment, char *buf, size_t cap);

/* ---- Appendix B: coefficients from model dimensions and hardware specs
 *
 * What the coefficients mean for the AFD pipeline: Section 3.1 times one
 * decode step of a micro-batch, in which every request advances by one token
 * through the whole model.  Appendix B derives each slope for one layer
 * (eq. 19 reads one layer's latent KV, eq. 26 runs one MoE layer's experts,
 * eq. 31 moves one MoE layer's activations); a step runs them once per
 * layer, so the whole-model slopes are the per-layer ones times the layer
 * counts: alpha_a over every attention layer, alpha_f and alpha_c over the
 * layers whose MLP is on the FFN side (the MoE layers; every layer of a dense
 * model).  The first_k_dense_replace dense MLPs of a MoE model stay with the
 * Attention instance: at decode batch sizes they read their weights once per
 * step whatever the load, a fixed cost inside the empirical intercept
 * beta_a.  Shared experts and the multi-token-prediction module's own layer
 * are not in Appendix B and are not counted. */

typedef struct afd_model_dims {
    double hidden;    /* H */
    double kv_dim;    /* cached elements per token and layer: d_c + d_rope (MLA),
                       * 2 h_kv d_head (K and V under GQA) */
    double kv_bytes;  /* bytes per cached element (2 for BF16) */
    double d_expert;  /* expert intermediate dimension (dense: intermediate_size) */
    double n_experts; /* N_expert, routed experts in the system (dense: 1) */
    double top_k;     /* k, experts per token (dense: 1) */
    double mtp_depth; /* multi-token-prediction depth */
    double attn_layers; /* layers with attention: num_hidden_layers */
    double ffn_layers;  /* layers whose MLP runs on the FFN side: the MoE layers,
                         * num_hidden_layers - first_k_dense_replace (dense: all) */
} afd_model_dims;

/* "deepseek-v3" (Appendix B.1), ONE layer as the appendix derives it:
 * H = 7168, d_c + d_rope = 512 + 64 = 576, BF16, d_expert = 2048,
 * N_expert = 256, k = 8, MTP depth 1, attn_layers = ffn_layers = 1.
 * AFD_EINVAL if unknown.  For a whole model use afd_model_dims_from_model. */
AFD_API afd_status afd_model_preset(const char *name, afd_model_dims *out);

/* The whole model's dimensions from its description (afd_model.h):
 *   MLA: kv_dim = kv_lora_rank + qk_rope_head_dim;  GQA: 2 kv_heads head_dim;
 *   kv_bytes = dtype_bytes;  MoE: d_expert = moe_intermediate_size,
 *   N_expert = n_routed_experts, k = num_experts_per_tok;  dense: the MLP
 *   as one expert every token reaches (d_expert = intermediate_size,
 *   N_expert = k = 1);  mtp_depth = num_nextn_predict_layers;
 *   attn_layers = num_hidden_layers, ffn_layers = num_hidden_layers -
 *   first_k_dense_replace (MoE) or num_hidden_layers (dense).
 * AFD_EINVAL if the description gives no positive dimension. */
AFD_API afd_status afd_model_dims_from_model(const afd_model *m, afd_model_dims *out);

typedef struct afd_hw_specs {
    double hbm_bw;           /* beta_HBM, bytes per second */
    double mem_eff;          /* eta_mem in (0, 1] */
    double peak_flops;       /* pi_peak, operations per second */
    double compute_eff;      /* eta_compute in (0, 1] */
    double net_bw;           /* beta_net, effective network bytes per second */
    double experts_per_card; /* N_expert/card */
    double beta_a, beta_f, beta_c; /* intercepts in seconds (empirical, B.2.1) */
} afd_hw_specs;

/* The device numbers of Table 2, in Table 2's units, with plausibility
 * ranges generous enough for any accelerator of 2015-2030 but not for a
 * number in the wrong unit (3350 meant as GB/s given as TB/s):
 *   hbm_tbps          [0.05, 50]    TB/s (10^12 B/s)   as afd_device's
 *   mem_eff           (0, 1]
 *   peak_tflops       [1, 20000]    TFLOP/s (10^12)    as afd_device's
 *   compute_eff       (0, 1]
 *   net_gbps          [0.1, 10000]  GB/s (10^9 B/s), effective
 *   experts_per_card  [1, 1024]     (and at most N_expert, checked by derive) */
typedef enum afd_hw_spec {
    AFD_HW_HBM_TBPS = 0,
    AFD_HW_MEM_EFF,
    AFD_HW_PEAK_TFLOPS,
    AFD_HW_COMPUTE_EFF,
    AFD_HW_NET_GBPS,
    AFD_HW_EXPERTS_PER_CARD,
    AFD_HW_N_SPECS
} afd_hw_spec;

/* Range of one specification: v is plausible when lo <= v <= hi (lo < v when
 * *lo_open); *name is its key ("hbm_tbps"), *unit its unit ("TB/s", "" for
 * ratios and counts).  0, or -1 for an unknown k. */
AFD_API int afd_hw_spec_range(afd_hw_spec k, double *lo, double *hi, int *lo_open,
                              const char **name, const char **unit);
/* Table 2 units to SI (TB/s x 10^12, TFLOP/s x 10^12, GB/s x 10^9), each
 * value checked against its range first: v[k] indexed by afd_hw_spec; the
 * intercepts in seconds, each finite and >= 0.  AFD_EINVAL with err->text
 * naming the key, the value and the range. */
AFD_API afd_status afd_hw_specs_from_table2(const double v[AFD_HW_N_SPECS], double beta_a,
                                            double beta_f, double beta_c, afd_hw_specs *out,
                                            afd_error *err);

/* The device's numbers in Table 2's units, for the entries of v that are
 * NaN (the others, given apart, are kept): hbm_tbps, mbu and mfu of the
 * decode phase (the phase the coefficients time), peak_tflops, and the
 * effective network bandwidth net_gbps x comm_eff (decode).
 * experts_per_card is not the device's and is left as it is.  AFD_EINVAL
 * for a NULL argument. */
AFD_API afd_status afd_hw_specs_from_device(const afd_device *d, double v[AFD_HW_N_SPECS]);

/* Whole-model coefficients in seconds, per decode step (see above):
 *   alpha_a = L_attn (d_c + d_rope) kv_bytes / (beta_HBM eta_mem)                      eq. (19)
 *   alpha_f = L_ffn N_e/card 6 H d_expert / (pi_peak eta_compute) k (1 + MTP) / N_e    eq. (26)
 *   alpha_c = L_ffn N_e/card 3 H / beta_net k (1 + MTP) / N_e                          eq. (31)
 * with the batch mapping B_e = B_F k (1 + MTP) / N_e of eq. (24).  The
 * printed eq. (29) drops the factor N_e/card in its second form; eq. (31),
 * which follows from the first form, keeps it, and so does afdkit.
 * Each stage is timed on one card: eq. (19) reads the whole token load's KV
 * through one card's HBM, eq. (23) runs the N_e/card experts of one card
 * (the N_e / N_e/card cards of the FFN side in parallel).  So afd_tp = 1
 * (one card per Attention and per FFN instance) when one card holds every
 * expert (N_e/card = N_e: every dense model); otherwise an FFN instance
 * spans N_e / N_e/card cards against one for Attention, no one size, and
 * afd_tp = 0 (unknown).
 * AFD_EINVAL for non-positive dimensions or specs, efficiencies above 1, or
 * more experts per card than experts. */
AFD_API afd_status afd_hw_derive(const afd_model_dims *m, const afd_hw_specs *s, afd_hw *out);

/* Coefficients in seconds (every time-valued field: the six and the serving
 * laws) to unit "s", "ms", "us" or "ns" (x 1, 1e3, 1e6, 1e9), recorded in
 * hw->unit.  AFD_EINVAL (hw unchanged) for another unit or an hw not in s. */
AFD_API afd_status afd_hw_seconds_to_unit(afd_hw *hw, const char *unit);

/* Copy the serving laws (prefill_a ... decode_alpha) and their tables, fit_max_rel_err, tp
 * (the size of the instance the laws time) and decode_batch_max (the
 * batches the decode law was fitted on) of src into dst, the laws
 * converted from src->unit to dst->unit (each "s", "ms", "us" or "ns": a
 * law coefficient is a time, or a time per token or per squared token, so
 * every one scales by the ratio of the units, an exact power of ten applied
 * by one multiplication or division; equal units copy exactly).  dst's six
 * coefficients, their afd_tp, unit and names are kept.  AFD_EINVAL (dst
 * unchanged) when a
 * unit is not one of the four and the two differ. */
AFD_API afd_status afd_hw_copy_laws(afd_hw *dst, const afd_hw *src);

#ifdef __cplusplus
}
#endif

#endif /* AFD_HW_H */
