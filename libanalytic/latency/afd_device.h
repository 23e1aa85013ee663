/* afd_device.h: an accelerator's specifications and efficiencies, for the
 * adapted roofline of BestServe (Section 2.3, eq. 3-5, and Section 3.3).
 *
 * A device file is key = value text ('#' starts a comment):
 *   peak_tflops   dense 16-bit peak, 10^12 FLOP/s           S_c
 *   hbm_tbps      memory bandwidth, 10^12 B/s                S_m
 *   hbm_gb        memory per device, 10^9 B
 *   net_gbps      tensor-parallel link bandwidth, 10^9 B/s   S_+
 *   mfu mbu comm_eff              e_c, e_m, e_+ for both phases
 *   mfu_prefill mbu_prefill comm_eff_prefill   optional, per phase
 *   mfu_decode mbu_decode comm_eff_decode      (default: the shared value)
 *   dispatch_rmsnorm_ms dispatch_attention_ms dispatch_mlp_ms
 *                 CPU dispatch time per module (0: no dispatch model)
 *   comm_latency_ms  fixed cost of one all-reduce (default 0)
 *   kernel_us     fixed time of one GEMM kernel, microseconds (default 0)
 *   roofline_p    exponent p of the smooth roofline
 *                 t = (t_c^p + t_m^p)^(1/p) (default: none, t = max(t_c, t_m));
 *                 afd_estimate.h gives both terms' sources
 *   mem_util      fraction of hbm_gb the server may use (default 0.9)
 *   price_per_hour power_w   optional, for cost tables
 * The kernel model (docs/estimator.md), present when kernel_floor_us is
 * given; then every key below but gemm_tile_n and engine is required, and
 * afd_estimate_forward times a dense model's forward pass as the kernels
 * the engine launches, each kernel_floor_us plus its roofline:
 *   sm_count           streaming multiprocessors (prefill attention waves)
 *   kernel_floor_us    fixed time of one kernel in a CUDA graph, us
 *   gemm_tflops gemm_tbps gemm_p      GEMM compute rate (10^12 FLOP/s),
 *                      weight-stream bandwidth (10^12 B/s), smooth-roofline
 *                      exponent
 *   gemm_tile_n gemm_occ_ctas gemm_occ_exp   skinny-GEMM occupancy: tile
 *                      width along the outputs (default 64), CTAs that
 *                      saturate the memory system, exponent
 *   attn_prefill_tflops attn_tail attn_cta_us   causal flash prefill: rate,
 *                      tail-wave factor, per-CTA cost (us)
 *   attn_decode_tbps attn_cta_gbps attn_decode_p   decode attention: KV
 *                      stream (10^12 B/s), one CTA's stream (10^9 B/s),
 *                      smooth-max exponent
 *   elementwise_tbps   bandwidth of norm, rotary, add, activation and copy
 *                      kernels (bytes read + written, 10^12 B/s)
 *   engine             torch (default: unfused, 23 kernels per decode
 *                      layer) or vllm (fused, 10 kernels per layer)
 * All-reduce per call, measured (optional, any device; docs/estimator.md):
 *   allreduce_P_us allreduce_P_gbps   for P = 2, 4, 8 devices: the latency
 *                      (launch included, us) and the effective bandwidth
 *                      (message bytes / time above the latency, 10^9 B/s) of
 *                      t = L_P + bytes / B_P; given in pairs.  With at least
 *                      one pair the all-reduce follows them instead of
 *                      net_gbps, comm_eff and comm_latency_ms
 *                      (afd_estimate_allreduce_ms).
 * Eager launch (optional; afd_estimate_options.eager):
 *   eager_op_us eager_gap_us   the CPU's dispatch of one PyTorch op and the
 *                      GPU's extra time per kernel when a pass is launched op
 *                      by op instead of as one CUDA graph (us); given as a pair.
 * Every number is checked against a plausibility range (afd_device_check), so
 * that 3350 meant as GB/s is refused as TB/s with the range in the message.
 */
#ifndef AFD_DEVICE_H
#define AFD_DEVICE_H

#include <stddef.h>

#include "afd_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum afd_phase { AFD_PREFILL = 0, AFD_DECODE = 1 } afd_phase;

/* The kernels an engine launches per layer (afd_estimate.h). */
typedef enum afd_engine { AFD_ENGINE_TORCH = 0, AFD_ENGINE_VLLM = 1 } afd_engine;

typedef struct afd_device {
    char name[64];
    double peak_tflops, hbm_tbps, hbm_gb, net_gbps;
    double mfu[2], mbu[2], comm_eff[2]; /* indexed by afd_phase */
    double dispatch_ms[3];              /* rmsnorm, attention, mlp */
    double comm_latency_ms;
    double mem_util;
    double price_per_hour, power_w;     /* NAN when not given */
    double kernel_us;                   /* fixed time per GEMM kernel, us (0: none) */
    double roofline_p;                  /* INFINITY: the roofline's max */
    /* The kernel model (see above); kernel_model 0: the roofline path,
     * the fields below NAN. */
    int kernel_model;
    afd_engine engine;
    double sm_count, kernel_floor_us;
    double gemm_tflops, gemm_tbps, gemm_p, gemm_tile_n, gemm_occ_ctas, gemm_occ_exp;
    double attn_prefill_tflops, attn_tail, attn_cta_us;
    double attn_decode_tbps, attn_cta_gbps, attn_decode_p;
    double elementwise_tbps;
    /* measured all-reduce laws for 2, 4, 8 devices (NAN: not given) */
    double allreduce_us[3], allreduce_gbps[3];
    /* eager launch (NAN: not given): CPU dispatch per PyTorch op and the
     * GPU's extra time per kernel launched op by op, us */
    double eager_op_us, eager_gap_us;
} afd_device;

/* Plausibility: peak_tflops in [1, 20000], hbm_tbps in [0.05, 50],
 * hbm_gb in [1, 2000], net_gbps in [1, 10000], efficiencies in (0, 1],
 * dispatch times in [0, 100] ms, comm_latency_ms in [0, 100],
 * mem_util in (0, 1], price_per_hour in [0, 1000], power_w in [1, 10000],
 * kernel_us in [0, 1000], roofline_p in [1, 1000] or INFINITY; with the
 * kernel model: sm_count in [1, 10000], kernel_floor_us, attn_cta_us in
 * [0, 1000], gemm_tflops, attn_prefill_tflops in [1, 20000], gemm_tbps,
 * attn_decode_tbps, elementwise_tbps in [0.05, 50], attn_cta_gbps in
 * [0.1, 10000], gemm_p, attn_decode_p in [1, 1000], gemm_tile_n in
 * [1, 4096], gemm_occ_ctas in [1, 100000], gemm_occ_exp in [0, 10],
 * attn_tail in [0, 100]; allreduce_P_us in [0, 10000], allreduce_P_gbps in
 * [0.1, 10000]; eager_op_us and eager_gap_us in [0, 1000].
 * err->text names the key, the value and the range. */
AFD_API afd_status afd_device_check(const afd_device *d, afd_error *err);
/* Parse key = value text; errors name the line.  Required: peak_tflops,
 * hbm_tbps, hbm_gb, net_gbps, and mfu, mbu, comm_eff unless both phase
 * values are given.  name may be NULL. */
AFD_API afd_status afd_device_parse(const char *text, size_t len, const char *name,
                                    afd_device *out, afd_error *err);
AFD_API afd_status afd_device_read(const char *path, afd_device *out, afd_error *err);
/* Write d as a device file into buf (cap bytes, NUL-terminated): each line
 * of comment (may be NULL) as a '#' line, then every key with its value
 * (in the fewest significant digits, 15 to 17, that read back exactly; a
 * phase pair as mfu, mbu, comm_eff when both phases agree, else the
 * _prefill and _decode keys; price_per_hour and power_w only when given,
 * kernel_us when not 0, roofline_p when finite, the kernel model's keys
 * when it has one, the all-reduce and eager keys when given).  afd_device_parse reads
 * it back to d, bit for bit.  AFD_ELIMIT (buf emptied) when cap is too
 * small. */
AFD_API afd_status afd_device_format(const afd_device *d, const char *comment, char *buf,
                                     size_t cap);
/* A bundled preset by name ("h100-sxm"); AFD_EINVAL if unknown. */
AFD_API afd_status afd_device_preset_load(const char *name, afd_device *out, afd_error *err);
/* A preset name if one matches, else a device file. */
AFD_API afd_status afd_device_load(const char *name_or_path, afd_device *out, afd_error *err);
/* Name and key = value text (with its source comments) of the i-th preset;
 * NULL past the last. */
AFD_API const char *afd_device_preset_name(size_t i);
AFD_API const char *afd_device_preset_text(size_t i);

#ifdef __cplusplus
}
#endif

#endif /* AFD_DEVICE_H */
