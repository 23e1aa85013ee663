/* estimate.c: BestServe's estimator (Section 3.3, Algorithm 1, Appendices
 * A-B) and the serving laws fitted to it. */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_multifit.h>

#include "afd_estimate.h"
#include "internal.h"

enum { M_NORM1, M_ATTN, M_NORM2, M_FFN };

typedef struct ctx {
    const afd_model *m;
    const afd_device *d;
    double t;          /* tensor-parallel size */
    int ph;            /* afd_phase */
    int paper;         /* the paper's printed forms */
    int kernels;       /* the kernel model (dense GQA models on a device with one) */
    double b, s;       /* batch, sequence (prefill) or context (decode) */
    double csc, msm;   /* e_c S_c (FLOP/s), e_m S_m (B/s) */
    double e, ew;      /* bytes per activation element, per weight */
    afd_estimate *rec; /* where to record operators, or NULL */
    const char *module;
    double nk;         /* kernels of the kernel model so far */
    double mk[4];      /* kernels of each module of the last block */
} ctx;

/* Record one operator or kernel of the block (work W, traffic Q) and return
 * its time. */
static double record(ctx *c, const char *name, double W, double Q, double time,
                     int compute_bound)
{
    if (c->rec && c->rec->n_ops < AFD_ESTIMATE_MAX_OPS) {
        afd_estimate_op *o = &c->rec->ops[c->rec->n_ops++];
        snprintf(o->module, sizeof o->module, "%s", c->module);
        snprintf(o->name, sizeof o->name, "%s", name);
        o->work = W;
        o->traffic = Q;
        o->time_s = time;
        o->compute_bound = compute_bound;
    }
    return time;
}

/* The operator time from its compute time t_c = W / (e_c S_c) and its memory
 * time t_m = Q / (e_m S_m), plus k fixed kernel times:
 *     t = max(t_c, t_m) + k kernel_us                  (roofline_p infinite)
 *     t = (t_c^p + t_m^p)^(1/p) + k kernel_us          (roofline_p = p).
 * The first term is BestServe's adapted roofline, eq. (3)/(5).  The two
 * optional terms are afdkit's, fitted to measured kernels (docs/estimator.md):
 * kernel_us is the time a GEMM kernel takes beyond its bounds whatever its
 * size (launch, prologue and epilogue, the last partial wave), which makes
 * small weight reads slower than the bandwidth allows; the p-norm is a
 * smooth roofline, equal to the max far from the ridge point and above it
 * near the ridge (by 2^(1/p) where t_c = t_m), where a real kernel neither
 * overlaps its loads with its math perfectly nor serialises them (the
 * p = 1 sum).  With kernel_us = 0 and no roofline_p the time is eq. (3)
 * exactly. */
static double op_k(ctx *c, const char *name, double W, double Q, double kernels)
{
    double tc = W / c->csc, tm = Q / c->msm, hi = tc > tm ? tc : tm, lo = tc > tm ? tm : tc;
    double p = c->d->roofline_p, time = hi;
    if (isfinite(p) && hi > 0)
        time = hi * pow(1 + pow(lo / hi, p), 1 / p);
    time += kernels * c->d->kernel_us * 1e-6;
    return record(c, name, W, Q, time, tc > tm);
}

/* An operator that launches no GEMM kernel (element-wise, attention). */
static double op(ctx *c, const char *name, double W, double Q)
{
    return op_k(c, name, W, Q, 0);
}

/* RMSNorm, Tables 6 (prefill, n = bs) and 7 (decode, n = b); the bytes are
 * the paper's at 2 bytes per element, scaled to the model's dtype.  The
 * norm is replicated on every tensor-parallel device (Section B.1). */
static double rmsnorm(ctx *c, double n)
{
    double h = c->m->hidden, k = c->paper ? 1 : c->e / 2;
    c->module = "rmsnorm";
    return op(c, "pow", n * h, k * 4 * n * h) + op(c, "mean", n * h, k * (2 * n * h + 2 * n)) +
           op(c, "add", n, k * 4 * n) + op(c, "rsqrt", n, k * 4 * n) +
           op(c, "mul", n * h, k * (4 * n * h + 2 * n)) +
           op(c, "mul_w", n * h, k * (4 * n * h + 2 * h));
}

/* Attention exactly as Tables 10 (prefill) and 11 (decode) print it, with
 * kappa terms (update, repeat_kv, upcast) left out. */
static double attention_paper(ctx *c)
{
    double h = c->m->hidden, hq = c->m->heads, r = c->m->kv_heads / c->m->heads;
    double t = c->t, b = c->b, s = c->s;
    c->module = "attention";
    if (c->ph == AFD_PREFILL)
        return op(c, "q_proj", 2 * b * s * h * h / t, 2 * (2 * b * s * h + h * h) / t) +
               op(c, "k_proj", 2 * b * s * h * h * r / t,
                  2 * (b * s * h + h * h * r / t + b * s * h * r / t)) +
               op(c, "v_proj", 2 * b * s * h * h * r / t,
                  2 * (b * s * h + h * h * r / t + b * s * h * r / t)) +
               op(c, "rope", 3.5 * b * s * h * (1 + r), 2 * b * s * h * (8.5 + 8.5 * r + 2 / hq)) +
               op(c, "qk", 2 * b * s * s * h / t, 2 * (2 * b * s * h + b * hq * s * s) / t) +
               op(c, "div", b * hq * s * s / t, 4 * b * hq * s * s / t) +
               op(c, "mask", b * hq * s * s / t, 2 * (2 * b * hq * s * s / t + b * s * s)) +
               op(c, "softmax", 3 * b * hq * s * s / t, 4 * b * hq * s * s / t) +
               op(c, "av", 2 * b * s * s * h / t, 2 * (b * hq * s * s + 2 * b * s * h) / t) +
               op(c, "o_proj", 2 * b * s * h * h / t, 2 * (b * s * h + b * s * h / t + h * h));
    return op(c, "q_proj", 2 * b * h * h / t, 2 * (2 * b * h + h * h) / t) +
           op(c, "k_proj", 2 * b * h * h * r, 2 * (b * h + h * h * r / t + b * h * r / t)) +
           op(c, "v_proj", 2 * b * h * h * r / t, 2 * (b * h + h * h * r / t + b * h * r / t)) +
           op(c, "rope", 3.5 * b * h * (1 + r), 2 * b * h * (8.5 + 8.5 * r + 2 / hq)) +
           op(c, "qk", 2 * b * s * h / t, 2 * b * (h + h * s + hq * s) / t) +
           op(c, "div", b * hq * s / t, 4 * b * hq * s / t) +
           op(c, "mask", b * hq * s / t, 2 * (2 * b * hq * s / t + b * s)) +
           op(c, "softmax", 3 * b * hq * s, 4 * b * hq * s / t) +
           op(c, "av", 2 * b * s * h / t, 2 * b * (h + h * s + hq * s) / t) +
           op(c, "o_proj", 2 * b * h * h / t, 2 * (b * h + h * h / t + b * h / t));
}

/* MLP exactly as Tables 12 (prefill) and 13 (decode) print it. */
static double mlp_paper(ctx *c)
{
    double h = c->m->hidden, h0 = c->m->intermediate, t = c->t, b = c->b, s = c->s;
    double n = c->ph == AFD_PREFILL ? b * s : b;
    double gemm_q = 2 * (n * (h + h0) + h * h0) / t;
    c->module = "mlp";
    return op(c, "gate_proj", 2 * n * h * h0 / t, gemm_q) + op(c, "silu", 5 * n * h0 / t, 4 * n * h0 / t) +
           op(c, "up_proj", 2 * n * h * h0 / t, gemm_q) +
           op(c, "mul", n * h0 / t, 6 * b * s * h0 / t) +
           op(c, "down_proj", 2 * n * h * h0 / t, gemm_q) + op(c, "add", n * h / t, 4 * n * h0 / t);
}

/* A linear layer of n tokens, k inputs to m outputs per device, run as
 * `kernels` GEMM kernels (0 when fused into the previous layer's kernel). */
static double gemm_k(ctx *c, const char *name, double n, double k, double m, double kernels)
{
    return op_k(c, name, 2 * n * k * m, c->e * n * k + c->ew * k * m + c->e * n * m, kernels);
}

static double gemm(ctx *c, const char *name, double n, double k, double m)
{
    return gemm_k(c, name, n, k, m, 1);
}

/* Grouped-query attention per device: h_q/t query heads, ceil(h_kv/t)
 * key/value heads (replicated when t > h_kv), the input replicated.  The
 * projections and RoPE follow Tables 8-11; the score operators (QK^T,
 * scaling, mask, softmax, @V) are one fused kernel as serving engines run
 * them (FlashAttention): their work is Tables 8-9's, over the causal pairs
 * s (s + 1) / 2 in prefill, and their traffic only reads Q, K, V once per
 * key/value head and writes the output (the s^2 score matrix never reaches
 * memory).  The decode update writes the new token's keys and values.
 * Serving engines run the Q, K and V projections as one fused GEMM (vLLM's
 * QKVParallelLinear; Vidur's profile times it as one), so the fixed kernel
 * time is charged once, on q_proj. */
static double attention_gqa(ctx *c)
{
    const afd_model *m = c->m;
    double h = m->hidden, d = m->head_dim, t = c->t, b = c->b, s = c->s, e = c->e;
    double hq = m->heads / t, q = hq * d, kv = ceil(m->kv_heads / t) * d;
    double n = c->ph == AFD_PREFILL ? b * s : b;
    double pairs = c->ph == AFD_PREFILL ? b * s * (s + 1) / 2 : b * s;
    double sum;
    c->module = "attention";
    sum = gemm(c, "q_proj", n, h, q) + gemm_k(c, "k_proj", n, h, kv, 0) +
          gemm_k(c, "v_proj", n, h, kv, 0) +
          op(c, "rope", 3.5 * n * (q + kv), e * n * (8.5 * (q + kv) + 2 * d));
    if (c->ph == AFD_PREFILL)
        sum += op(c, "attn", 4 * pairs * q + 5 * pairs * hq, e * (2 * n * q + 2 * n * kv));
    else
        sum += op(c, "update", 0, 2 * e * b * kv) +
               op(c, "attn", 4 * pairs * q + 5 * pairs * hq, e * (2 * b * q + 2 * pairs * kv));
    return sum + gemm(c, "o_proj", n, q, h);
}

/* Multi-head latent attention (DeepSeek-V2/V3) per device: h_q/t heads, the
 * latent projections and the latent cache replicated.  Prefill decompresses
 * keys and values and runs fused causal attention over h_q/t heads of
 * d_nope + d_rope (values d_v); decode absorbs W_UK and W_UV into the query
 * and output and attends over the latent, reading r_kv + d_rope bytes per
 * cached token once. */
static double attention_mla(ctx *c)
{
    const afd_model *m = c->m;
    double h = m->hidden, t = c->t, b = c->b, s = c->s, e = c->e;
    double hq = m->heads / t, dn = m->qk_nope_head_dim, dr = m->qk_rope_head_dim;
    double dv = m->v_head_dim, rq = m->q_lora_rank, rkv = m->kv_lora_rank;
    double n = c->ph == AFD_PREFILL ? b * s : b;
    double sum = 0;
    c->module = "attention";
    if (rq > 0)
        sum += gemm(c, "q_a", n, h, rq) + gemm(c, "q_b", n, rq, hq * (dn + dr));
    else
        sum += gemm(c, "q_proj", n, h, hq * (dn + dr));
    sum += gemm(c, "kv_a", n, h, rkv + dr) +
           op(c, "rope", 3.5 * n * (hq + 1) * dr, e * n * 8.5 * (hq + 1) * dr);
    if (c->ph == AFD_PREFILL) {
        double pairs = b * s * (s + 1) / 2;
        sum += gemm(c, "kv_b", n, rkv, hq * (dn + dv)) +
               op(c, "attn", 2 * pairs * hq * (dn + dr + dv) + 5 * pairs * hq,
                  e * n * hq * (2 * (dn + dr) + 2 * dv));
    } else {
        double pairs = b * s;
        sum += op(c, "update", 0, e * b * (rkv + dr)) + gemm(c, "q_absorb", b * hq, dn, rkv) +
               op(c, "attn", 2 * pairs * hq * (2 * rkv + dr) + 5 * pairs * hq,
                  e * (pairs * (rkv + dr) + b * hq * (2 * rkv + dr))) +
               gemm(c, "v_absorb", b * hq, rkv, dv);
    }
    return sum + gemm(c, "o_proj", n, hq * dv, h);
}

/* Gated MLP (Tables 1, 2, 12, 13) of width w per device: gate and up
 * projections, SiLU (read, write), product (two reads, a write), down
 * projection; the residual add after the all-reduce reads two and writes one.
 * The gate and up projections are one fused GEMM kernel (vLLM's
 * MergedColumnParallelLinear), charged once for the fixed kernel time. */
static double mlp(ctx *c, double n, double w, int residual)
{
    double h = c->m->hidden, e = c->e;
    double sum = gemm(c, "gate_proj", n, h, w) + op(c, "silu", 5 * n * w, 2 * e * n * w) +
                 gemm_k(c, "up_proj", n, h, w, 0) + op(c, "mul", n * w, 3 * e * n * w) +
                 gemm(c, "down_proj", n, w, h);
    if (residual)
        sum += op(c, "add", n * h, 3 * e * n * h);
    return sum;
}

/* MoE layer: router, the routed experts (each sliced over the t devices),
 * the shared experts, the weighted combination.  n tokens touch
 * N (1 - (1 - k/N)^n) distinct experts on average (uniform routing), whose
 * weights are read once.  The routed experts run as two grouped GEMM kernels
 * (gate and up, then down: vLLM's fused MoE). */
static double moe(ctx *c, double n)
{
    const afd_model *m = c->m;
    double h = m->hidden, e = c->e, N = m->n_routed_experts, k = m->experts_per_tok;
    double w = m->moe_intermediate / c->t, touched = N * -expm1(n * log1p(-k / N));
    double sum;
    if (k >= N)
        touched = N;
    c->module = "moe";
    sum = gemm(c, "router", n, h, N) +
          op_k(c, "experts", 6 * n * k * h * w,
               c->ew * touched * 3 * h * w + e * n * k * (2 * h + 3 * w), 2) +
          op(c, "expert_act", 6 * n * k * w, 5 * e * n * k * w);
    if (m->shared_intermediate > 0) /* Qwen2-MoE's h x 1 shared-expert gate is left out */
        sum += mlp(c, n, m->shared_intermediate / c->t, 0);
    c->module = "moe";
    return sum + op(c, "combine", n * k * h, e * n * h * (k + 1));
}

/* All-reduce after a module: eq. (8) as printed (b s h / t elements over
 * e_+ S_+), or a ring all-reduce moving 2 (t-1)/t of the activation bytes,
 * plus the device's fixed latency. */
static double allreduce(const ctx *c, double n)
{
    double h = c->m->hidden, bw = c->d->comm_eff[c->ph] * c->d->net_gbps * 1e9;
    if (c->t <= 1)
        return 0;
    if (c->paper)
        return n * h / c->t / bw;
    return afd_estimate_allreduce_ms(c->d, (afd_phase)c->ph, c->t, n * h * c->e) * 1e-3;
}

/* The measured law of afd_device.h, t = L_P + bytes / B_P, at tp devices:
 * at a measured P exactly; between two, L and 1 / B interpolated linearly
 * in log2 P; outside them, the nearest P's law (one NVSwitch node's
 * latency does not grow with P: docs/estimator.md).  Returns NAN when the
 * device gives none. */
static double allreduce_measured_ms(const afd_device *d, double tp, double bytes)
{
    double lo_p = NAN, lo_l = NAN, lo_r = NAN, l, r;
    int i;
    for (i = 0; i < 3; i++) {
        double p = 2 << i, L = d->allreduce_us[i] * 1e-6, R = 1 / (d->allreduce_gbps[i] * 1e9);
        if (isnan(d->allreduce_us[i]))
            continue;
        if (tp <= p) {
            if (isnan(lo_p)) {
                l = L;
                r = R;
            } else {
                double w = (log2(tp) - log2(lo_p)) / (log2(p) - log2(lo_p));
                l = lo_l + w * (L - lo_l);
                r = lo_r + w * (R - lo_r);
            }
            return (l + bytes * r) * 1e3;
        }
        lo_p = p;
        lo_l = L;
        lo_r = R;
    }
    return isnan(lo_p) ? NAN : (lo_l + bytes * lo_r) * 1e3;
}

double afd_estimate_allreduce_ms(const afd_device *d, afd_phase phase, double tp, double bytes)
{
    double m;
    if (tp <= 1)
        return 0;
    m = allreduce_measured_ms(d, tp, bytes);
    if (!isnan(m))
        return m;
    return 2 * (tp - 1) / tp * bytes / (d->comm_eff[phase] * d->net_gbps * 1e9) * 1e3 +
           d->comm_latency_ms;
}

/* Algorithm 1 for one block (afd_estimate.h): dispatch of module i
 * overlaps the computation of modules before it; communication follows the
 * computation. */
double afd_estimate_algorithm1(afd_estimate_module mod[4])
{
    double td = 0, tc = 0;
    int i;
    for (i = 0; i < 4; i++) {
        td += mod[i].dispatch_s;
        if (td > tc)
            tc = td + mod[i].compute_s;
        else
            tc += mod[i].compute_s;
        tc += mod[i].comm_s;
        mod[i].end_s = tc;
    }
    return tc;
}

/* ---- the kernel model (afd_device.h kernel_floor_us; docs/estimator.md)
 *
 * A layer is the list of kernels the engine launches; in a CUDA graph each
 * costs the floor f = kernel_floor_us plus its roofline part.  The forms
 * and the h100-sxm values are fitted to one H100 SXM's measured GEMMs,
 * attention kernels and whole forward passes (data/h100-measured,
 * docs/estimator.md). */

/* The smooth maximum (a^p + b^p)^(1/p), written to avoid overflow. */
static double pnorm(double a, double b, double p)
{
    double hi = a > b ? a : b, lo = a > b ? b : a;
    return hi > 0 ? hi * pow(1 + pow(lo / hi, p), 1 / p) : 0;
}

/* Record one kernel (work W, traffic Q, time; compute-bound at the GEMM
 * rates) and return its time. */
static double kernel(ctx *c, const char *name, double W, double Q, double time)
{
    c->nk++;
    return record(c, name, W, Q, time,
                  W / (c->d->gemm_tflops * 1e12) > Q / (c->d->gemm_tbps * 1e12));
}

/* A GEMM of T tokens, k inputs, n outputs:
 *     f + (t_c^p + t_m^p)^(1/p),   t_c = 2 T k n / R_g,
 *     t_m = bytes / (B_g occ),     occ = min(1, ceil(n / tile) / occ_ctas)^occ_exp
 * cuBLAS picks tiles that avoid wave quantisation (the measured GEMMs run at
 * 730-820 TFLOP/s from 512 tokens up whatever the tile), so the compute
 * side is one rate; a skinny GEMM (T <= 64) runs ceil(n / 64) CTAs of its
 * 64-wide tile and streams its weight slower below occ_ctas of them. */
static double k_gemm(ctx *c, const char *name, double T, double k, double n)
{
    const afd_device *d = c->d;
    double W = 2 * T * k * n, Q = c->ew * k * n + c->e * T * k + c->e * T * n;
    double occ = pow(fmin(1, ceil(n / d->gemm_tile_n) / d->gemm_occ_ctas), d->gemm_occ_exp);
    double tc = W / (d->gemm_tflops * 1e12), tm = Q / (d->gemm_tbps * 1e12 * occ);
    return kernel(c, name, W, Q, d->kernel_floor_us * 1e-6 + pnorm(tc, tm, d->gemm_p));
}

/* A memory-bound kernel moving `bytes` (read + written): f + bytes / B_e. */
static double k_ew(ctx *c, const char *name, double bytes)
{
    return kernel(c, name, 0, bytes,
                  c->d->kernel_floor_us * 1e-6 + bytes / (c->d->elementwise_tbps * 1e12));
}

/* Causal flash attention of b sequences of s tokens, nh query heads of hd
 * (one kernel): per sequence, with C = nh ceil(s / 128) CTAs on S SMs,
 *     W / R_a (1 + k_tail S / C) + C a_cta / S,   W = 4 nh hd s (s + 1) / 2;
 * the second factor is the last wave's tail (fewer CTAs, longer tail). */
static double k_attn_prefill(ctx *c, double nh, double hd, double kv)
{
    const afd_device *d = c->d;
    double s = c->s, W = 4 * nh * hd * s * (s + 1) / 2, C = nh * ceil(s / 128);
    double one = W / (d->attn_prefill_tflops * 1e12) * (1 + d->attn_tail * d->sm_count / C) +
                 C * d->attn_cta_us * 1e-6 / d->sm_count;
    return kernel(c, "attention", c->b * W, c->e * c->b * s * (2 * nh * hd + 2 * kv),
                  d->kernel_floor_us * 1e-6 + c->b * one);
}

/* Decode attention of b sequences over a context of s tokens, nkv key/value
 * heads of hd: the KV stream t_m = 2 b nkv s hd E / B_a, and one (sequence,
 * head) CTA streaming its keys and values t_l = 2 s hd E / b_cta, combined
 * as f + (t_m^p + t_l^p)^(1/p). */
static double k_attn_decode(ctx *c, double nh, double nkv, double hd)
{
    const afd_device *d = c->d;
    double b = c->b, s = c->s, Q = 2 * b * nkv * s * hd * c->e;
    double tm = Q / (d->attn_decode_tbps * 1e12), tl = 2 * s * hd * c->e / (d->attn_cta_gbps * 1e9);
    return kernel(c, "attention", 4 * b * s * nh * hd, Q,
                  d->kernel_floor_us * 1e-6 + pnorm(tm, tl, d->attn_decode_p));
}

/* One dense GQA layer as kernels, into mod[4] (norm, attention with its
 * residual add, norm, MLP with its residual add).
 *   torch (unfused, as a plain PyTorch Llama launches it; 23 kernels per
 *     decode layer, 22 per prefill layer): rms_norm (reads and writes
 *     n h), the fused QKV GEMM, rotary as five kernels each on q and k
 *     (multiply by cos, negate half, concatenate, multiply by sin, add:
 *     2, 1, 2, 2, 3 passes over the n q or n kv elements), decode: the K
 *     and V cache writes (two copies), attention, prefill: the attention
 *     output's transpose copy, o_proj, residual add (two reads, a write),
 *     rms_norm, the fused gate/up GEMM, SiLU on the gate half, the product,
 *     down, residual add;
 *   vllm (fused, 10 kernels per layer): fused_add_rms_norm twice (reads
 *     and writes the activation and the residual), QKV GEMM, rotary on q
 *     and k in place (one kernel), reshape_and_cache (the new tokens' K and
 *     V), attention, o_proj, gate_up, silu_and_mul, down. */
static void kernel_block(ctx *c, afd_estimate_module *mod)
{
    const afd_model *m = c->m;
    double h = m->hidden, hd = m->head_dim, t = c->t, e = c->e;
    double nh = m->heads / t, nkv = ceil(m->kv_heads / t), q = nh * hd, kv = nkv * hd;
    double w = m->intermediate / t, n = c->ph == AFD_PREFILL ? c->b * c->s : c->b;
    int vllm = c->d->engine == AFD_ENGINE_VLLM, i;
    double *a, k0 = c->nk;

    c->module = "rmsnorm";
    mod[M_NORM1].compute_s = vllm ? k_ew(c, "add_rmsnorm", 8 * e * n * h)
                                  : k_ew(c, "rmsnorm", 2 * e * n * h);
    c->mk[M_NORM1] = c->nk - k0;
    k0 = c->nk;
    c->module = "attention";
    a = &mod[M_ATTN].compute_s;
    *a = k_gemm(c, "qkv", n, h, q + 2 * kv);
    if (vllm) {
        *a += k_ew(c, "rope", 4 * e * n * (q + kv)) + k_ew(c, "cache_write", 4 * e * n * kv);
    } else {
        static const char *const rn[5] = {"rope_mul", "rope_neg", "rope_cat", "rope_mul",
                                          "rope_add"};
        static const double passes[5] = {2, 1, 2, 2, 3};
        for (i = 0; i < 10; i++)
            *a += k_ew(c, rn[i % 5], passes[i % 5] * e * n * (i < 5 ? q : kv));
        if (c->ph == AFD_DECODE)
            *a += k_ew(c, "k_write", 2 * e * n * kv) + k_ew(c, "v_write", 2 * e * n * kv);
    }
    *a += c->ph == AFD_PREFILL ? k_attn_prefill(c, nh, hd, kv) : k_attn_decode(c, nh, nkv, hd);
    if (!vllm && c->ph == AFD_PREFILL)
        *a += k_ew(c, "attn_out_copy", 2 * e * n * q);
    *a += k_gemm(c, "o_proj", n, q, h);
    if (!vllm)
        *a += k_ew(c, "add", 3 * e * n * h);
    c->mk[M_ATTN] = c->nk - k0;
    k0 = c->nk;
    c->module = "rmsnorm";
    mod[M_NORM2].compute_s = vllm ? k_ew(c, "add_rmsnorm", 8 * e * n * h)
                                  : k_ew(c, "rmsnorm", 2 * e * n * h);
    c->mk[M_NORM2] = c->nk - k0;
    k0 = c->nk;
    c->module = "mlp";
    a = &mod[M_FFN].compute_s;
    *a = k_gemm(c, "gate_up", n, h, 2 * w);
    if (vllm)
        *a += k_ew(c, "silu_and_mul", 3 * e * n * w);
    else
        *a += k_ew(c, "silu", 2 * e * n * w) + k_ew(c, "mul", 3 * e * n * w);
    *a += k_gemm(c, "down", n, w, h);
    if (!vllm)
        *a += k_ew(c, "add", 3 * e * n * h);
    c->mk[M_FFN] = c->nk - k0;
}

/* PyTorch ops the CPU dispatches per kernel of an eager pass: the measured
 * torch pass (data/h100-measured forward.csv, scripts/kernel_model.py
 * EAGER_OPS) issues 40 ops for its 23 decode kernels and 42 for its 22
 * prefill kernels per layer (views, splits and slices cost dispatch too). */
static double ops_per_kernel(afd_phase ph)
{
    return ph == AFD_DECODE ? 40.0 / 23 : 42.0 / 22;
}

/* Eager launch (BestServe's dispatch model, Algorithm 1, with the dispatch
 * per kernel): module i's CPU dispatch is its kernels x ops_per_kernel x
 * eager_op_us, and each kernel costs the GPU eager_gap_us more than in a
 * CUDA graph. */
static void eager_block(const ctx *c, afd_estimate_module *mod)
{
    int i;
    for (i = 0; i < 4; i++) {
        mod[i].dispatch_s = c->mk[i] * ops_per_kernel((afd_phase)c->ph) * c->d->eager_op_us * 1e-6;
        mod[i].compute_s += c->mk[i] * c->d->eager_gap_us * 1e-6;
    }
}

/* The output head on the last token of each sequence: the final norm and
 * the head GEMM over the vocabulary's slice. */
static double kernel_head(ctx *c)
{
    c->module = "head";
    return k_ew(c, "rmsnorm", 2 * c->e * c->b * c->m->hidden) +
           k_gemm(c, "lm_head", c->b, c->m->hidden, c->m->vocab / c->t);
}

/* One block's compute by operator rooflines (BestServe's forms). */
static void roofline_block(ctx *c, int moe_layer, double n, afd_estimate_module *mod)
{
    mod[M_NORM1].compute_s = rmsnorm(c, n);
    if (c->paper)
        mod[M_ATTN].compute_s = attention_paper(c);
    else
        mod[M_ATTN].compute_s = c->m->mla ? attention_mla(c) : attention_gqa(c);
    mod[M_NORM2].compute_s = rmsnorm(c, n);
    if (c->paper)
        mod[M_FFN].compute_s = mlp_paper(c);
    else if (moe_layer)
        mod[M_FFN].compute_s = moe(c, n);
    else {
        c->module = "mlp";
        mod[M_FFN].compute_s = mlp(c, n, c->m->intermediate / c->t, 1);
    }
}

/* One block (dense or MoE) into mod[4]. */
static void block(ctx *c, int moe_layer, int use_dispatch, int eager, afd_estimate_module *mod)
{
    double n = c->ph == AFD_PREFILL ? c->b * c->s : c->b;
    const char *names[4] = {"rmsnorm", "attention", "rmsnorm", moe_layer ? "moe" : "mlp"};
    int i;
    if (c->kernels)
        kernel_block(c, mod);
    else
        roofline_block(c, moe_layer, n, mod);
    for (i = 0; i < 4; i++) {
        snprintf(mod[i].name, sizeof mod[i].name, "%s", names[i]);
        mod[i].dispatch_s = use_dispatch ? c->d->dispatch_ms[i == M_FFN ? 2 : i == M_ATTN] * 1e-3 : 0;
        mod[i].comm_s = (i == M_ATTN || i == M_FFN) ? allreduce(c, n) : 0;
    }
    if (eager)
        eager_block(c, mod);
}

static void estimate_nan(afd_estimate *o)
{
    int i;
    memset(o, 0, sizeof *o);
    for (i = 0; i < 4; i++)
        o->module[i].dispatch_s = o->module[i].compute_s = o->module[i].comm_s =
            o->module[i].end_s = NAN;
    o->block_s = o->forward_s = o->forward_dispatch_s = o->forward_compute_s = NAN;
    o->forward_comm_s = o->dispatch_bound = NAN;
}

afd_status afd_estimate_forward(const afd_model *m, const afd_device *d,
                                const afd_estimate_options *o, afd_estimate *out, afd_error *err)
{
    ctx c;
    afd_estimate_module dense[4], moel[4];
    double n_moe, n_dense, head = 0, head_disp = 0;
    int i;

    afd_error_clear(err);
    estimate_nan(out);
    if (!(o->tp >= 1) || o->tp != floor(o->tp) || o->tp > 1024)
        return afd_priv_fail(err, AFD_EINVAL, 0, 0, "tensor-parallel size must be an integer in [1, 1024]: %g", o->tp);
    if (!(o->batch >= 1) || o->batch > 1e9)
        return afd_priv_fail(err, AFD_EINVAL, 0, 0, "batch must be in [1, 1e9]: %g", o->batch);
    if (!(o->seq >= 1) || o->seq > 1e8)
        return afd_priv_fail(err, AFD_EINVAL, 0, 0, "sequence length must be in [1, 1e8]: %g", o->seq);
    if (o->phase != AFD_PREFILL && o->phase != AFD_DECODE)
        return afd_priv_fail(err, AFD_EINVAL, 0, 0, "unknown phase %d", (int)o->phase);
    if (fmod(m->heads, o->tp) != 0)
        return afd_priv_fail(err, AFD_EINVAL, 0, 0,
                             "tensor-parallel size %g does not divide the %g attention heads",
                             o->tp, m->heads);
    /* Key/value heads split over the devices, or replicated when t is a
     * multiple of them (one head per device, as vLLM does); any other t
     * would give devices fractions of a head. */
    if (!m->mla && fmod(m->kv_heads, o->tp) != 0 && fmod(o->tp, m->kv_heads) != 0)
        return afd_priv_fail(err, AFD_EINVAL, 0, 0,
                             "tensor-parallel size %g neither divides nor is a multiple of the "
                             "%g key/value heads",
                             o->tp, m->kv_heads);
    if (m->intermediate > 0 && fmod(m->intermediate, o->tp) != 0)
        return afd_priv_fail(err, AFD_EINVAL, 0, 0,
                             "tensor-parallel size %g does not divide the intermediate size %g",
                             o->tp, m->intermediate);
    if (m->moe && fmod(m->moe_intermediate, o->tp) != 0)
        return afd_priv_fail(err, AFD_EINVAL, 0, 0,
                             "tensor-parallel size %g does not divide the expert intermediate "
                             "size %g",
                             o->tp, m->moe_intermediate);
    if (m->moe && fmod(m->shared_intermediate, o->tp) != 0)
        return afd_priv_fail(err, AFD_EINVAL, 0, 0,
                             "tensor-parallel size %g does not divide the shared-expert "
                             "intermediate size %g",
                             o->tp, m->shared_intermediate);
    if (o->paper_forms && (m->moe || m->mla))
        return afd_priv_fail(err, AFD_EINVAL, 0, 0,
                             "the paper's forms cover dense LLaMA-family models only");
    if (o->eager && (!d->kernel_model || m->moe || m->mla || o->paper_forms))
        return afd_priv_fail(err, AFD_EINVAL, 0, 0,
                             "eager launch is modelled per kernel: it needs the kernel model (a "
                             "device with kernel_floor_us) and a dense GQA model");
    if (o->eager && isnan(d->eager_op_us))
        return afd_priv_fail(err, AFD_EINVAL, 0, 0,
                             "eager launch needs the device's eager_op_us and eager_gap_us");
    c.m = m;
    c.d = d;
    c.t = o->tp;
    c.ph = o->phase;
    c.paper = o->paper_forms;
    c.kernels = d->kernel_model && !c.paper && !m->moe && !m->mla;
    c.b = o->batch;
    c.s = o->seq;
    c.csc = d->mfu[c.ph] * d->peak_tflops * 1e12;
    c.msm = d->mbu[c.ph] * d->hbm_tbps * 1e12;
    c.e = c.paper ? 2 : m->dtype_bytes;
    c.ew = c.paper ? 2 : m->weight_bytes_per_param;
    c.rec = NULL;
    c.nk = 0;
    n_moe = m->moe ? m->layers - m->dense_layers : 0;
    n_dense = m->layers - n_moe;
    if (n_dense > 0) {
        c.rec = n_moe > 0 ? NULL : out;
        block(&c, 0, !o->no_dispatch, o->eager, dense);
    }
    if (n_moe > 0) {
        c.rec = out;
        block(&c, 1, !o->no_dispatch, o->eager, moel);
    }
    c.rec = out;
    if (!c.paper) {
        /* Output head on the last token of each sequence, vocabulary split. */
        c.module = "head";
        if (c.kernels) {
            double k0 = c.nk;
            head = kernel_head(&c);
            /* eager: the head's kernels, dispatched after the last layer's */
            if (o->eager) {
                head += (c.nk - k0) * c.d->eager_gap_us * 1e-6;
                head_disp = (c.nk - k0) * ops_per_kernel(c.ph) * c.d->eager_op_us * 1e-6;
            }
        }
        else
            head = gemm(&c, "lm_head", c.b, m->hidden, m->vocab / c.t);
    }
    memcpy(out->module, n_moe > 0 ? moel : dense, sizeof out->module);
    out->block_s = afd_estimate_algorithm1(out->module);
    out->forward_s = head + head_disp;
    out->forward_dispatch_s = head_disp;
    out->forward_comm_s = 0;
    out->forward_compute_s = head;
    for (i = 0; i < 4; i++) {
        if (n_dense > 0) {
            out->forward_dispatch_s += n_dense * dense[i].dispatch_s;
            out->forward_compute_s += n_dense * dense[i].compute_s;
            out->forward_comm_s += n_dense * dense[i].comm_s;
        }
        if (n_moe > 0) {
            out->forward_dispatch_s += n_moe * moel[i].dispatch_s;
            out->forward_compute_s += n_moe * moel[i].compute_s;
            out->forward_comm_s += n_moe * moel[i].comm_s;
        }
    }
    if (o->eager) {
        /* Algorithm 1 over the whole pass: the CPU's dispatch runs ahead
         * of the device across layers (eager launch is asynchronous), so
         * TD accumulates over every module of every layer */
        double td = 0, end = 0, l;
        for (l = 0; l < n_dense; l++)
            for (i = 0; i < 4; i++) {
                td += dense[i].dispatch_s;
                end = (td > end ? td : end) + dense[i].compute_s + dense[i].comm_s;
            }
        /* and the head's kernels, dispatched after the last layer's */
        td += head_disp;
        out->forward_s = (td > end ? td : end) + head;
    } else if (n_dense > 0)
        out->forward_s += n_dense * afd_estimate_algorithm1(dense);
    if (n_moe > 0)
        out->forward_s += n_moe * afd_estimate_algorithm1(moel);
    out->dispatch_bound = out->forward_s > 0 ? 1 - (out->forward_compute_s + out->forward_comm_s) /
                                                       out->forward_s
                                             : 0;
    return AFD_OK;
}

/* ---- KV cache */

double afd_kv_bytes_per_token(const afd_model *m, double tp)
{
    if (m->mla)
        return tp * afd_model_kv_bytes_per_token(m);
    return 2 * m->layers * (m->kv_heads > tp ? m->kv_heads : tp) * m->head_dim * m->dtype_bytes;
}

afd_status afd_kv_capacity_tokens(const afd_model *m, const afd_device *d, double tp,
                                  double *tokens, afd_error *err)
{
    double mem = d->mem_util * d->hbm_gb * 1e9 * tp, w = afd_model_weight_bytes(m);
    afd_error_clear(err);
    *tokens = NAN;
    if (!(tp >= 1))
        return afd_priv_fail(err, AFD_EINVAL, 0, 0, "tensor-parallel size must be >= 1: %g", tp);
    if (w >= mem)
        return afd_priv_fail(err, AFD_EINVAL, 0, 0,
                             "the weights (%.1f GB) do not fit in %g x %.3g GB x mem_util %g "
                             "= %.1f GB", w / 1e9, tp, d->hbm_gb, d->mem_util, mem / 1e9);
    *tokens = floor((mem - w) / afd_kv_bytes_per_token(m, tp));
    return AFD_OK;
}

/* ---- serving laws */

enum { MAX_GRID = 256 };

typedef struct grid {
    size_t n;
    double x[MAX_GRID][3]; /* regressors */
    double y[MAX_GRID];
    double b[MAX_GRID], s[MAX_GRID]; /* the point: batch, sequence */
} grid;

/* Non-negative weighted least squares of y on the columns of x (3 or fewer
 * used), weights 1/y^2: every subset of the columns is fitted with GSL and
 * the best fit whose coefficients are all >= 0 is kept (the exact
 * non-negative solution for three unknowns).  Returns the largest relative
 * error of the kept fit, or NAN if none. */
static double fit_nonneg(const grid *g, int ncol, double *coef, size_t *worst)
{
    double best = INFINITY, best_err = NAN;
    size_t best_at = 0;
    int mask, j;
    for (j = 0; j < 3; j++)
        coef[j] = 0;
    for (mask = 1; mask < (1 << ncol); mask++) {
        int cols[3], p = 0, ok = 1;
        gsl_matrix *X, *cov;
        gsl_vector *y, *w, *cf;
        gsl_multifit_linear_workspace *ws;
        double chisq, c[3] = {0, 0, 0}, maxe = 0;
        size_t i, at = 0;
        for (j = 0; j < ncol; j++)
            if (mask & (1 << j))
                cols[p++] = j;
        if ((size_t)p > g->n)
            continue;
        X = gsl_matrix_alloc(g->n, (size_t)p);
        y = gsl_vector_alloc(g->n);
        w = gsl_vector_alloc(g->n);
        cf = gsl_vector_alloc((size_t)p);
        cov = gsl_matrix_alloc((size_t)p, (size_t)p);
        ws = gsl_multifit_linear_alloc(g->n, (size_t)p);
        if (!X || !y || !w || !cf || !cov || !ws)
            ok = 0;
        if (ok) {
            for (i = 0; i < g->n; i++) {
                for (j = 0; j < p; j++)
                    gsl_matrix_set(X, i, (size_t)j, g->x[i][cols[j]]);
                gsl_vector_set(y, i, g->y[i]);
                gsl_vector_set(w, i, 1 / (g->y[i] * g->y[i]));
            }
            ok = gsl_multifit_wlinear(X, w, y, cf, cov, &chisq, ws) == GSL_SUCCESS;
        }
        if (ok)
            for (j = 0; j < p; j++) {
                c[cols[j]] = gsl_vector_get(cf, (size_t)j);
                if (!(c[cols[j]] >= 0))
                    ok = 0;
            }
        if (ok && chisq < best) {
            for (i = 0; i < g->n; i++) {
                double f = c[0] * g->x[i][0] + c[1] * g->x[i][1] + c[2] * g->x[i][2];
                double r = fabs(f - g->y[i]) / g->y[i];
                if (r > maxe) {
                    maxe = r;
                    at = i;
                }
            }
            best = chisq;
            best_err = maxe;
            best_at = at;
            memcpy(coef, c, sizeof c);
        }
        gsl_multifit_linear_free(ws);
        gsl_matrix_free(cov);
        gsl_vector_free(cf);
        gsl_vector_free(w);
        gsl_vector_free(y);
        gsl_matrix_free(X);
    }
    if (worst)
        *worst = best_at;
    return best_err;
}

/* Per-module decode times of the whole model (ms): attention side (norms,
 * attention, its all-reduce) and FFN side (MLP/MoE, its all-reduce, head). */
static afd_status decode_split(const afd_model *m, const afd_device *d, double tp, double b,
                               double s, double *attn, double *ffn, afd_error *err)
{
    afd_estimate e;
    afd_estimate_options o = {.tp = tp, .phase = AFD_DECODE, .batch = b, .seq = s, .no_dispatch = 1};
    afd_status st = afd_estimate_forward(m, d, &o, &e, err);
    if (st != AFD_OK)
        return st;
    /* Attention is the same in every layer; the FFN side (dense and MoE
     * layers, the head) is the rest of the forward pass. */
    *attn = m->layers * (e.module[M_NORM1].compute_s + e.module[M_ATTN].compute_s +
                         e.module[M_NORM2].compute_s + e.module[M_ATTN].comm_s);
    *ffn = e.forward_compute_s + e.forward_comm_s - *attn;
    *attn *= 1e3;
    *ffn *= 1e3;
    return AFD_OK;
}

/* An axis from 1 to hi (>= 1): the integers nearest r^k, or the ratio
 * that keeps it within maxn points, duplicates dropped, and hi itself
 * last.  Returns the number of points. */
static unsigned table_axis(double hi, double r, unsigned maxn, double *x)
{
    double v;
    unsigned n = 0;
    if (log(hi) / log(r) + 2 > maxn)
        r = pow(hi, 1.0 / (maxn - 2));
    for (v = 1; n < maxn - 1 && floor(v + 0.5) < hi; v *= r) {
        double p = floor(v + 0.5);
        if (n == 0 || p > x[n - 1])
            x[n++] = p;
    }
    x[n++] = hi;
    return n;
}

/* The estimator's forward time (ms) at a table's point (afd_hw_table):
 * decode, b sequences of context s; prefill, b prompts of s tokens in
 * all (b > s: s prompts of one token). */
static afd_status table_point(const afd_model *m, const afd_device *d, double tp, afd_phase ph,
                              double b, double s, double *ms, afd_error *err)
{
    afd_estimate e;
    afd_estimate_options o = {.tp = tp, .phase = ph, .batch = b, .seq = s};
    if (ph == AFD_PREFILL) {
        o.batch = b < s ? b : s;
        o.seq = s / o.batch;
    }
    afd_status st = afd_estimate_forward(m, d, &o, &e, err);
    *ms = e.forward_s * 1e3;
    return st;
}

/* Tabulate the estimator (ms) in phase ph over b = 1..bmax and s =
 * 1..smax (afd_hw_table; table_axis: decode b at ratio 2^(1/4), s at
 * sqrt 2; prefill b at 2, s at 2^(1/4): the finer axis the one along which
 * the roofline bends), and its largest relative error at the cells'
 * centres (the geometric means of their corners' b and s, where
 * interpolation is furthest from the grid; prefill cells whose prompts are
 * all at least one token) in *cell_err. */
static afd_status table_fill(const afd_model *m, const afd_device *d, double tp, afd_phase ph,
                             double bmax, double smax, afd_hw_table *t, double *cell_err,
                             afd_error *err)
{
    unsigned i, j;
    afd_status st;
    int dec = ph == AFD_DECODE;
    t->nb = table_axis(bmax, dec ? pow(2, 0.25) : 2, dec ? 64 : 32, t->b);
    t->ns = table_axis(smax, dec ? sqrt(2) : pow(2, 0.25), dec ? 64 : 96, t->s);
    for (i = 0; i < t->nb; i++)
        for (j = 0; j < t->ns; j++)
            if ((st = table_point(m, d, tp, ph, t->b[i], t->s[j], &t->t[i * t->ns + j], err)) !=
                AFD_OK)
                return st;
    *cell_err = 0;
    for (i = 0; i + 1 < t->nb; i++)
        for (j = 0; j + 1 < t->ns; j++) {
            double b = sqrt(t->b[i] * t->b[i + 1]), s = sqrt(t->s[j] * t->s[j + 1]), y, r;
            if (!dec && t->b[i + 1] > t->s[j])
                continue;
            if ((st = table_point(m, d, tp, ph, b, s, &y, err)) != AFD_OK)
                return st;
            r = fabs(afd_hw_table_eval(t, b, s) - y) / y;
            if (r > *cell_err)
                *cell_err = r;
        }
    return AFD_OK;
}

/* Record law k's fit error, where it is largest and its grid's batch range. */
static void fit_note(afd_estimate_fit *fit, int k, const char *name, const grid *g, double err,
                     size_t worst)
{
    afd_estimate_fit_law *l;
    size_t i;
    if (!fit)
        return;
    l = &fit->law[k];
    snprintf(l->law, sizeof l->law, "%s", name);
    l->max_rel_err = err;
    l->at_batch = g->n > 0 ? g->b[worst] : NAN;
    l->at_seq = g->n > 0 ? g->s[worst] : NAN;
    l->lo_batch = l->hi_batch = NAN;
    for (i = 0; i < g->n; i++) {
        if (!(g->b[i] >= l->lo_batch))
            l->lo_batch = g->b[i];
        if (!(g->b[i] <= l->hi_batch))
            l->hi_batch = g->b[i];
    }
}

/* The laws of afd_estimate_laws (pair = 0, da == df) or of
 * afd_estimate_laws_afd (pair = 1): the Attention side timed on da over the
 * decode grid that fits in da's KV cache, the FFN side on df over the
 * aggregated batches of AFD_ESTIMATE_FFN_BATCH_MAX and below. */
static afd_status laws(const afd_model *m, const afd_device *da, const afd_device *df, double tp,
                       int pair, afd_hw *hw, afd_estimate_fit *fit, afd_error *err)
{
    static const double P[] = {128, 256, 512, 1024, 2048, 4096, 8192, 16384};
    static const double B[] = {1, 2, 4, 8};
    static const double DS[] = {128, 256, 512, 1024, 2048, 4096, 8192, 16384};
    grid g, ga, gf;
    afd_estimate e;
    afd_status st;
    double coef[3], cap, err_p, err_d, err_a, err_f, n, dbmax, bb;
    size_t i, j, w_p = 0, w_d = 0, w_a = 0, w_f = 0;

    afd_error_clear(err);
    afd_hw_init(hw);
    if (fit) {
        for (i = 0; i < 4; i++) {
            grid none = {.n = 0};
            fit_note(fit, (int)i, "", &none, NAN, 0);
        }
        fit->table_cell_err[0] = fit->table_cell_err[1] = NAN;
    }
    err_p = err_d = NAN;
    st = afd_kv_capacity_tokens(m, da, tp, &cap, err);
    if (st == AFD_OK && pair) {
        double cap_f;
        st = afd_kv_capacity_tokens(m, df, tp, &cap_f, err);
    }
    if (st != AFD_OK)
        goto done;
    /* Prefill: a + b sum P + c sum P^2 over batches of equal prompts. */
    g.n = 0;
    for (i = 0; !pair && i < sizeof B / sizeof B[0]; i++)
        for (j = 0; j < sizeof P / sizeof P[0]; j++) {
            afd_estimate_options o = {.tp = tp, .phase = AFD_PREFILL, .batch = B[i], .seq = P[j]};
            st = afd_estimate_forward(m, da, &o, &e, err);
            if (st != AFD_OK)
                goto done;
            g.x[g.n][0] = 1;
            g.x[g.n][1] = B[i] * P[j];
            g.x[g.n][2] = B[i] * P[j] * P[j];
            g.b[g.n] = B[i];
            g.s[g.n] = P[j];
            g.y[g.n++] = e.forward_s * 1e3;
        }
    if (!pair) {
        err_p = fit_nonneg(&g, 3, coef, &w_p);
        fit_note(fit, AFD_FIT_PREFILL, "prefill", &g, err_p, w_p);
        hw->prefill_a = coef[0];
        hw->prefill_b = coef[1];
        hw->prefill_c = coef[2];
    }
    /* Decode: beta + gamma b + alpha K, K = b s, over the batches a decode
     * instance can hold: every b up to dbmax, the largest batch whose KV
     * cache fits at the grid's shortest context (K = b DS[0] <= cap), at
     * 2^k and at dbmax, each at the contexts that fit (K <= cap).  The
     * decode law sizes slots (afd_decode_slots_from_law) up to where the KV
     * cache or the TPOT SLO stops them, so it is fitted up to there.  The
     * Attention side alpha_a K + beta_a is fitted on the points of b <= 256
     * (an AFD Attention instance's micro-batches). */
    g.n = ga.n = 0;
    dbmax = floor(cap / DS[0]);
    if (!(dbmax >= 1))
        dbmax = 1;
    if (dbmax > AFD_ESTIMATE_DECODE_BATCH_MAX)
        dbmax = AFD_ESTIMATE_DECODE_BATCH_MAX;
    for (bb = 1; bb <= dbmax; bb = bb < dbmax && bb * 2 > dbmax ? dbmax : bb * 2) {
        /* the Attention side on the batches 2^k <= 256 */
        int attn = bb <= 256 && bb == ldexp(1, ilogb(bb));
        for (j = 0; j < sizeof DS / sizeof DS[0]; j++) {
            afd_estimate_options o = {.tp = tp, .phase = AFD_DECODE, .batch = bb, .seq = DS[j]};
            double K = bb * DS[j], ta, tf;
            if (K > cap && g.n > 0)
                continue;
            e.forward_s = NAN;
            st = pair ? AFD_OK : afd_estimate_forward(m, da, &o, &e, err);
            if (st == AFD_OK && attn)
                st = decode_split(m, da, tp, bb, DS[j], &ta, &tf, err);
            if (st != AFD_OK)
                goto done;
            g.x[g.n][0] = 1;
            g.x[g.n][1] = bb;
            g.x[g.n][2] = K;
            g.b[g.n] = bb;
            g.s[g.n] = DS[j];
            g.y[g.n++] = e.forward_s * 1e3;
            if (!attn)
                continue;
            ga.x[ga.n][0] = 1;
            ga.x[ga.n][1] = K;
            ga.x[ga.n][2] = 0;
            ga.b[ga.n] = bb;
            ga.s[ga.n] = DS[j];
            ga.y[ga.n++] = ta;
        }
        if (bb == dbmax)
            break;
    }
    if (!pair) {
        /* the tables the laws are fitted to: decode over the same batches,
         * prefill over as many prompts, every context up to the KV cache */
        double ce_d = NAN, ce_p = NAN, smax = cap > 1 ? cap : 1;
        st = table_fill(m, da, tp, AFD_DECODE, dbmax, smax, &hw->decode_table, &ce_d, err);
        if (st == AFD_OK)
            st = table_fill(m, da, tp, AFD_PREFILL, dbmax, smax, &hw->prefill_table, &ce_p, err);
        if (st != AFD_OK)
            goto done;
        if (fit) {
            fit->table_cell_err[0] = ce_d;
            fit->table_cell_err[1] = ce_p;
        }
        err_d = fit_nonneg(&g, 3, coef, &w_d);
        fit_note(fit, AFD_FIT_DECODE, "decode", &g, err_d, w_d);
        hw->decode_beta = coef[0];
        hw->decode_gamma = coef[1];
        hw->decode_alpha = coef[2];
        hw->decode_batch_max = (unsigned)g.b[g.n - 1];
    }
    err_a = fit_nonneg(&ga, 2, coef, &w_a);
    fit_note(fit, AFD_FIT_ATTENTION, "attention", &ga, err_a, w_a);
    hw->beta_a = coef[0];
    hw->alpha_a = coef[1];
    /* FFN: alpha_f n + beta_f over the aggregated batches n = r B the FFN
     * runs, 1 to AFD_ESTIMATE_FFN_BATCH_MAX at 2^k and 3 x 2^k (the FFN
     * side does not depend on the context length: timed at s = 1). */
    gf.n = 0;
    for (i = 0; (n = i == 0 ? 1 : ldexp((i - 1) % 2 ? 3 : 2, (int)(i - 1) / 2)) <=
                AFD_ESTIMATE_FFN_BATCH_MAX;
         i++) {
        double ta, tf;
        st = decode_split(m, df, tp, n, 1, &ta, &tf, err);
        if (st != AFD_OK)
            goto done;
        gf.x[gf.n][0] = 1;
        gf.x[gf.n][1] = n;
        gf.x[gf.n][2] = 0;
        gf.b[gf.n] = n;
        gf.s[gf.n] = NAN;
        gf.y[gf.n++] = tf;
    }
    err_f = fit_nonneg(&gf, 2, coef, &w_f);
    fit_note(fit, AFD_FIT_FFN, "ffn", &gf, err_f, w_f);
    hw->beta_f = coef[0];
    hw->alpha_f = coef[1];
    if ((!pair && (isnan(err_p) || isnan(err_d))) || isnan(err_a) || isnan(err_f) ||
        !(hw->alpha_a > 0) || !(hw->alpha_f > 0)) {
        st = afd_priv_fail(err, AFD_ENUMERIC, 0, 0, "no non-negative least-squares fit of the laws");
        goto done;
    }
    {
        /* the activations cross the link at the slower end's rate */
        double link_a = da->comm_eff[AFD_DECODE] * da->net_gbps;
        double link_f = df->comm_eff[AFD_DECODE] * df->net_gbps;
        double lat = da->comm_latency_ms > df->comm_latency_ms ? da->comm_latency_ms
                                                               : df->comm_latency_ms;
        hw->alpha_c = m->layers * 2 * 2 * m->hidden * m->dtype_bytes /
                      ((link_a < link_f ? link_a : link_f) * 1e9) * 1e3;
        hw->beta_c = m->layers * lat;
    }
    hw->afd_fit_max_rel_err = err_a > err_f ? err_a : err_f;
    /* a pair has no serving laws: its fit error is that of the two sides */
    if (pair)
        hw->fit_max_rel_err = hw->afd_fit_max_rel_err;
    else
        hw->fit_max_rel_err = err_p > err_d ? err_p : err_d;
    snprintf(hw->unit, sizeof hw->unit, "ms");
    snprintf(hw->model, sizeof hw->model, "%s", m->name);
    hw->tp = (unsigned)tp; /* the laws time an instance of tp devices (checked above) */
    hw->afd_tp = (unsigned)tp; /* and so do the six: each side fitted at tp */
    if (pair)
        snprintf(hw->device, sizeof hw->device, "%.31s+%.31s", da->name, df->name);
    else
        snprintf(hw->device, sizeof hw->device, "%s", da->name);
    st = afd_hw_check(hw, err);
done:
    if (st != AFD_OK) {
        afd_error saved = err ? *err : (afd_error){0};
        afd_hw_init(hw);
        if (err)
            *err = saved;
    }
    return st;
}

afd_status afd_estimate_laws(const afd_model *m, const afd_device *d, double tp, afd_hw *hw,
                             afd_error *err)
{
    return laws(m, d, d, tp, 0, hw, NULL, err);
}

afd_status afd_estimate_laws_fit(const afd_model *m, const afd_device *d, double tp, afd_hw *hw,
                                 afd_estimate_fit *fit, afd_error *err)
{
    return laws(m, d, d, tp, 0, hw, fit, err);
}

afd_status afd_estimate_laws_afd(const afd_model *m, const afd_device *dev_a,
                                 const afd_device *dev_f, double tp, afd_hw *hw, afd_error *err)
{
    return laws(m, dev_a, dev_f, tp, 1, hw, NULL, err);
}

/* ---- decode slots from the decode law */

static double kv_q(double b, double theta, double nu, double z)
{
    return b * theta + z * sqrt(b) * nu;
}

afd_status afd_decode_slots_from_law(const afd_hw *hw, double theta, double nu, double q,
                                     double tpot_slo, double kv_capacity, afd_decode_slots *out)
{
    const double bmax = 1e9;
    double z, lo, hi, b_tpot, b_kv;
    out->slots = out->step = out->kv_tokens = NAN;
    out->binding = 0;
    if (!afd_hw_has_decode(hw) || !(theta > 0) || !(nu >= 0) || !(q > 0 && q < 1) ||
        !(tpot_slo > 0) || !(kv_capacity > 0) || isinf(theta) || isinf(nu))
        return AFD_EINVAL;
    z = gsl_cdf_ugaussian_Pinv(q);
    /* step(b) is affine increasing in b: the TPOT limit in closed form. */
    {
        double slope = hw->decode_gamma + hw->decode_alpha * theta;
        if (hw->decode_beta + slope > tpot_slo)
            b_tpot = 0;
        else if (slope <= 0)
            b_tpot = bmax;
        else
            b_tpot = fmin(bmax, floor((tpot_slo - hw->decode_beta) / slope));
    }
    /* K_q(b) increases for b >= 1 once theta + z nu / (2 sqrt b) > 0; find
     * the largest b with K_q(b) <= capacity by bisection on integers. */
    if (isinf(kv_capacity))
        b_kv = bmax;
    else if (kv_q(1, theta, nu, z) > kv_capacity)
        b_kv = 0;
    else {
        lo = 1;
        hi = 2;
        while (hi < bmax && kv_q(hi, theta, nu, z) <= kv_capacity) {
            lo = hi;
            hi *= 2;
        }
        if (hi >= bmax && kv_q(bmax, theta, nu, z) <= kv_capacity)
            lo = hi = bmax;
        while (hi - lo > 1) {
            double mid = floor((lo + hi) / 2);
            if (kv_q(mid, theta, nu, z) <= kv_capacity)
                lo = mid;
            else
                hi = mid;
        }
        b_kv = lo;
    }
    out->slots = fmin(b_tpot, b_kv);
    out->binding = out->slots >= bmax ? 0 : b_tpot <= b_kv ? 1 : 2;
    {
        double b = out->slots > 0 ? out->slots : 1;
        out->step = hw->decode_beta + hw->decode_gamma * b + hw->decode_alpha * b * theta;
        out->kv_tokens = out->slots > 0 ? kv_q(b, theta, nu, z) : 0;
    }
    return AFD_OK;
}
