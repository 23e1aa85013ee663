/* afd_estimate.h: BestServe's estimator (Section 3.3, Algorithm 1,
 * Appendices A-B): the time of one forward pass from the model and the device.
 *
 * Every operator i of a module has a work W_i (FLOP) and a memory traffic Q_i
 * (bytes); its time is the adapted roofline (eq. 3, 5)
 *     t_i = max(W_i / (e_c S_c), Q_i / (e_m S_m)),
 * or, for a device with roofline_p = p and kernel_us (afd_device.h; fitted to
 * measured kernels, docs/estimator.md), afdkit's extension
 *     t_i = ((W_i / (e_c S_c))^p + (Q_i / (e_m S_m))^p)^(1/p) + k_i kernel_us,
 * k_i the GEMM kernels operator i launches (fused Q/K/V and gate/up
 * projections count once); the defaults (no roofline_p, kernel_us 0) give
 * eq. (3) exactly.
 * a module's compute time is the sum over its operators (eq. 7, 10-12), and
 * with tensor parallelism of size t each attention and MLP module adds an
 * all-reduce (eq. 8).  Algorithm 1 overlaps the CPU's dispatch of a module
 * with the device's computation of the previous ones.
 *
 * Two sets of operator forms:
 *   - afdkit's (default): Tables 1-2 and 6-13 with the tensor-parallel
 *     division applied consistently (each device holds h_q/t query heads,
 *     ceil(h_kv/t) key/value heads, h_0/t MLP columns, and reads the whole
 *     replicated activation), the score operators fused as FlashAttention
 *     runs them (Tables 8-9's work over the causal pairs, the traffic of
 *     reading Q, K, V once per key/value head and writing the output), the
 *     KV-cache update a write of the new token, an all-reduce moving
 *     2 (t-1)/t of the activation bytes, plus the output head; MoE and MLA
 *     modules for DeepSeek-V3-style models;
 *   - the paper's (paper_forms = 1, dense models): Tables 6, 10, 12, 7, 11,
 *     13 and eq. 8 exactly as printed, misprints included, the kappa terms
 *     of eq. 12 left out (the paper gives no kappa), no output head.
 * docs/reproduction.md compares both with BestServe's Table 3.
 */
#ifndef AFD_ESTIMATE_H
#define AFD_ESTIMATE_H

#include <stddef.h>

#include "afd_device.h"
#include "afd_hw.h"
#include "afd_model.h"
#include "afd_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct afd_estimate_options {
    double tp;           /* tensor-parallel size t >= 1 (integer) */
    afd_phase phase;     /* AFD_PREFILL or AFD_DECODE */
    double batch;        /* b >= 1 sequences */
    double seq;          /* s >= 1: prompt length (prefill) or context
                          * length including the new token (decode) */
    int paper_forms;     /* 1: the paper's printed tables (dense models) */
    int no_dispatch;     /* 1: ignore the device's dispatch times */
    int eager;           /* 1: launched op by op, not as one CUDA graph
                          * (kernel model, dense GQA models; the device's
                          * eager_op_us and eager_gap_us): Algorithm 1 with
                          * each module's dispatch its kernels x the ops per
                          * kernel of the measured torch pass (40 / 23
                          * decode, 42 / 22 prefill) x eager_op_us, and
                          * eager_gap_us more GPU time per kernel; the head's
                          * kernels dispatched after the last layer.  The
                          * device's per-module dispatch_*_ms are replaced. */
} afd_estimate_options;

enum { AFD_ESTIMATE_MAX_OPS = 48 };

typedef struct afd_estimate_op {
    char module[12];     /* "rmsnorm", "attention", "mlp", "moe", "head" */
    char name[16];       /* "q_proj", "qk", "gate_proj", ... */
    double work;         /* W, FLOP, per device */
    double traffic;      /* Q, bytes, per device */
    double time_s;       /* roofline time, seconds */
    int compute_bound;   /* W/Q above the critical intensity (eq. 4) */
} afd_estimate_op;

typedef struct afd_estimate_module {
    char name[12];       /* rmsnorm, attention, rmsnorm, mlp | moe */
    double dispatch_s;   /* CPU dispatch time of the module */
    double compute_s;    /* sum of its operators' roofline times */
    double comm_s;       /* all-reduce after it (0 without TP) */
    double end_s;        /* when its work and all-reduce end in Algorithm 1,
                            from the start of the block (afd_estimate_algorithm1) */
} afd_estimate_module;

/* BestServe's Algorithm 1 for one block of four modules: the CPU's
 * dispatch of module i overlaps the device's work on the modules before it,
 * and communication follows computation, so with TD_i the dispatch time
 * summed over modules 0..i,
 *     end_i = max(TD_i, end_{i-1}) + compute_i + comm_i,   end_{-1} = 0.
 * Sets mod[i].end_s and returns end_3, the block's time. */
AFD_API double afd_estimate_algorithm1(afd_estimate_module mod[4]);

typedef struct afd_estimate {
    /* One block: the MoE block for MoE models, else the dense block. */
    afd_estimate_module module[4];
    double block_s;            /* Algorithm 1 for that block */
    /* One forward pass of the whole model: every layer (dense and MoE
     * blocks each with their own Algorithm 1 time) and the output head. */
    double forward_s;
    double forward_dispatch_s; /* dispatch summed over layers */
    double forward_compute_s;  /* compute summed over layers and the head */
    double forward_comm_s;     /* communication summed over layers */
    /* the share of forward_s in which the device waits for the CPU's
     * dispatch: 1 - (compute + communication) / forward_s */
    double dispatch_bound;
    size_t n_ops;              /* operators of the block shown, then the head */
    afd_estimate_op ops[AFD_ESTIMATE_MAX_OPS];
} afd_estimate;

/* Estimate one forward pass.  AFD_EINVAL (err names it) for t < 1 or not an
 * integer, b < 1, s < 1, heads not divisible by t, key/value heads (GQA)
 * neither divisible by t nor dividing it (a multiple of them replicates one
 * head per device), an intermediate size (dense or expert) not divisible by
 * t, paper_forms on a MoE/MLA model.  Outputs NAN on error.  Memory is not
 * checked (afd_kv_capacity_tokens does). */
AFD_API afd_status afd_estimate_forward(const afd_model *m, const afd_device *d,
                                        const afd_estimate_options *o, afd_estimate *out,
                                        afd_error *err);

/* Fill hw with laws fitted (GSL weighted least squares, weights 1/t^2 so the
 * fit minimises relative error, coefficients >= 0) to the estimator, in
 * milliseconds, for an instance of tp devices, each law over the range it
 * is used on:
 *   prefill batch, prompts P_i:  a + b sum P_i + c sum P_i^2
 *        (grid: b in {1, 2, 4, 8}, P in {128, ..., 16384});
 *   decode step, b sequences holding K tokens:  beta + gamma b + alpha K
 *        (grid: b in {1, 2, 4, ..., 2^k} and decode_batch_max, the largest
 *        batch whose KV cache fits at the shortest context, floor(KV
 *        capacity / 128) (at most AFD_ESTIMATE_DECODE_BATCH_MAX); context in
 *        {128, ..., 16384}, the points whose K fits in the KV cache): the
 *        slots a decode instance is sized at reach there, so the law is
 *        fitted up to there and hw->decode_batch_max records it;
 * fit_max_rel_err = the largest |fit - estimate| / estimate over both grids
 *        (a line over weight-read-bound and compute-bound batches: 0.16 to
 *        0.21 for the dense models on h100-sxm and a100-80g, docs/estimator.md).
 * The tables of the step times (afd_hw_table), exact at their grid points:
 *   decode_table: the estimator's decode step at b = 1 .. decode_batch_max
 *        and contexts s = 1 .. the KV capacity in tokens, each axis the
 *        integers nearest sqrt(2)^k (table_axis: coarser when more than
 *        AFD_HW_TABLE_MAX points would be needed) and its end;
 *   prefill_table: the estimator's prefill of b equal prompts of s tokens
 *        over the same axes.
 * The six AFD coefficients (afd_hw.h):
 *   alpha_a K + beta_a: the decode Attention side of the whole model (norms,
 *        attention, its all-reduce) against the token load K, on the decode
 *        grid's points of b <= 256 (an Attention instance's micro-batch; it
 *        holds at most its KV cache);
 *   alpha_f n + beta_f: the FFN side (MLP/MoE, its all-reduce, the output
 *        head) against the aggregated batch n = r B, which is hundreds to
 *        thousands of sequences (B up to a few hundred, r up to ~30), so the
 *        grid is n in {1, 2, 3, 4, 6, ..., AFD_ESTIMATE_FFN_BATCH_MAX} (2^k
 *        and 3 x 2^k): on a decode grid of b <= 256 the line would follow
 *        only the weight read and understate the compute-bound FFN at
 *        n = 2048 by ~45% (llama-3.1-70b on h100-sxm, TP 4);
 *   alpha_c n + beta_c: the Attention-FFN activation transfer, exact rather
 *        than fitted (2 h dtype bytes per sequence and layer each way over
 *        net_gbps x comm_eff_decode; beta_c = layers x comm_latency_ms).
 * afd_fit_max_rel_err = the larger error of the Attention and FFN fits.
 * One line cannot follow the roofline's kink (weight-read-bound below the
 * critical batch, compute-bound above) nor an MoE layer's expert reads,
 * min(k b, N_e) experts (concave in b): the errors say how far the laws are
 * from the estimator, and AFD_ESTIMATE_FIT_WARN is where afdkit warns.
 * unit = "ms", model and device named, tp and afd_tp recorded (both tp:
 * the laws and the six time instances of tp devices). */
AFD_API afd_status afd_estimate_laws(const afd_model *m, const afd_device *d, double tp,
                                     afd_hw *hw, afd_error *err);

/* Largest aggregated batch of the FFN fit, and the relative error above
 * which a fitted law is reported as unfit for its range. */
#define AFD_ESTIMATE_FFN_BATCH_MAX 8192
/* Largest batch of the decode law's grid (its memory bound caps there). */
#define AFD_ESTIMATE_DECODE_BATCH_MAX 1048576
#define AFD_ESTIMATE_FIT_WARN 0.15

/* How well each law fits the estimator on its grid (afd_estimate_laws). */
enum { AFD_FIT_PREFILL, AFD_FIT_DECODE, AFD_FIT_ATTENTION, AFD_FIT_FFN, AFD_FIT_N };
typedef struct afd_estimate_fit_law {
    char law[16];         /* "prefill", "decode", "attention", "ffn" */
    double max_rel_err;   /* largest |law - estimate| / estimate; NAN if not fitted */
    double at_batch;      /* where it is largest: batch (ffn: aggregated batch n) */
    double at_seq;        /* and prompt or context length (NAN for ffn) */
    double lo_batch, hi_batch; /* the grid's batch range */
} afd_estimate_fit_law;

typedef struct afd_estimate_fit {
    afd_estimate_fit_law law[AFD_FIT_N];
    /* the decode [0] and prefill [1] tables' largest relative error against
     * the estimator at their cells' centres; NAN if not tabulated */
    double table_cell_err[2];
} afd_estimate_fit;

/* afd_estimate_laws, and each law's fit in *fit. */
AFD_API afd_status afd_estimate_laws_fit(const afd_model *m, const afd_device *d, double tp,
                                         afd_hw *hw, afd_estimate_fit *fit, afd_error *err);

/* Heterogeneous AFD: Attention instances of tp devices dev_a, FFN instances
 * of tp devices dev_f.  The six coefficients of afd_estimate_laws, each side
 * timed on its own device: alpha_a and beta_a fitted to the Attention side
 * (norms, attention, its all-reduce) on dev_a, alpha_f and beta_f to the FFN
 * side (MLP/MoE, its all-reduce, the head) on dev_f, over the grids of
 * afd_estimate_laws (the decode grid that fits in dev_a's KV cache, where
 * the KV cache lives; the aggregated batches); alpha_c is the
 * same activation transfer over the slower end of the link,
 * min(net_gbps x comm_eff_decode) of the two, and beta_c = layers x the
 * larger comm_latency_ms.  With dev_a identical to dev_f the six equal
 * afd_estimate_laws' exactly.  A pair serves no collocated instance, so
 * the prefill and decode laws are left NAN; fit_max_rel_err and
 * afd_fit_max_rel_err are the larger of the two sides' fits; device reads
 * "A+F".  Both devices must hold the
 * model's weights at tp (the estimator times a whole forward pass on each,
 * then takes its side: conservative for memory).  Errors as
 * afd_estimate_laws. */
AFD_API afd_status afd_estimate_laws_afd(const afd_model *m, const afd_device *dev_a,
                                         const afd_device *dev_f, double tp, afd_hw *hw,
                                         afd_error *err);

/* Time (ms) of one ring all-reduce of a message of the given bytes among
 * tp devices (afdkit's form; the paper's eq. 8 divides b s h by t instead):
 *     2 (tp - 1) / tp x bytes / (comm_eff[phase] net_gbps) + comm_latency_ms,
 * each device sending and receiving 2 (tp - 1) / tp of the message; 0 for
 * tp <= 1.  A device with measured all-reduce laws (allreduce_P_us,
 * allreduce_P_gbps, afd_device.h) gives L_P + bytes / B_P instead: exact at
 * a measured P, L and 1 / B interpolated linearly in log2 P between two,
 * the nearest measured P's law outside them. */
AFD_API double afd_estimate_allreduce_ms(const afd_device *d, afd_phase phase, double tp,
                                         double bytes);

/* KV-cache bytes per token of context held by one instance of tp devices:
 * GQA heads are split over the devices but never below one head per device
 * (2 layers d dtype max(h_kv, t)); the MLA latent is replicated on each. */
AFD_API double afd_kv_bytes_per_token(const afd_model *m, double tp);

/* KV-cache capacity of one instance, in tokens: (mem_util hbm_gb 10^9 tp -
 * weight bytes) / afd_kv_bytes_per_token.  AFD_EINVAL when the weights do
 * not fit (err says how much memory they need); *tokens NAN then. */
AFD_API afd_status afd_kv_capacity_tokens(const afd_model *m, const afd_device *d, double tp,
                                          double *tokens, afd_error *err);


/* Decode slots per instance from a latency file's decode law.  With b
 * sequences in the batch the step takes (afd_hw.h, Lemma 4.1 for the mean
 * KV load theta of a slot)
 *     step(b) = decode_beta + decode_gamma b + decode_alpha b theta,
 * and the b slots hold K(b) KV tokens, of mean b theta and standard
 * deviation sqrt(b) nu (independent slots); memory is sized at the same
 * quantile q as the slots, by the normal approximation
 *     K_q(b) = b theta + z_q sqrt(b) nu,   z_q = Phi^{-1}(q)
 * (exact as b grows; for b = 1 it is the normal quantile of one slot).
 * slots is the largest integer b >= 1 with step(b) <= tpot_slo and
 * K_q(b) <= kv_capacity (INFINITY: memory unlimited), 0 if b = 1 fails;
 * binding says which limit stops it: 1 TPOT, 2 KV memory, 0 none below
 * 10^9.  AFD_EINVAL when hw has no decode law or an argument is out of its
 * domain (theta > 0, nu >= 0, 0 < q < 1, tpot_slo > 0, kv_capacity > 0). */
typedef struct afd_decode_slots {
    double slots;     /* largest feasible b (0: none) */
    double step;      /* step(slots), in hw's unit (step(1) when slots = 0) */
    double kv_tokens; /* K_q(slots) */
    int binding;      /* 1 TPOT, 2 KV memory, 0 neither */
} afd_decode_slots;

AFD_API afd_status afd_decode_slots_from_law(const afd_hw *hw, double theta, double nu, double q,
                                             double tpot_slo, double kv_capacity,
                                             afd_decode_slots *out);

#ifdef __cplusplus
}
#endif

#endif /* AFD_ESTIMATE_H */
