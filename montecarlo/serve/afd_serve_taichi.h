/* afd_serve_taichi.h: the configuration of the "taichi" serving policy, a
 * hybrid of prefill-heavy and decode-heavy chunked-prefill instances
 * (TaiChi: Wang et al., "Prefill-Decode Aggregation or Disaggregation?
 * Unifying Both for Goodput-Optimized LLM Serving", Sections 3.1-3.4).
 * Pass a filled afd_serve_taichi_config as afd_serve_config.extra; the
 * policy ignores the other fields of afd_serve_config except
 * decode_bmax, kv_time_fixed and kv_time_per_token.
 *
 * Instances.  NP P-heavy instances with chunk SP and ND D-heavy instances
 * with chunk SD run the iterations of the chunked policy (policy_chunked.c:
 * one token per running decode, then prompt chunks, at most `chunk` tokens,
 * the same iteration time).  SD = 0 makes the D-heavy instances decode only
 * (no prefill); SP at least the longest prompt makes a P-heavy iteration
 * take whole prompts.
 *
 * Prefill routing (Algorithm 2).  At arrival the proxy estimates, for each
 * instance that prefills, TTFT = Q + E + T: Q the time to run the prompt
 * tokens queued there, E the time of this prompt, both at the instance's
 * current iteration shape (b running decodes, chunk - b prompt tokens per
 * iteration, each iteration costing the decode step of its b sequences, or
 * the prefill law's fixed part when b = 0, plus the prompt tokens' linear and
 * quadratic costs); T the KV transfer of the prompt for a P-heavy instance
 * (which hands the decode over); Q includes the rest of the iteration under
 * way.  Among the instances with TTFT < ttft_slo it picks the one with the
 * fewest queued prompt tokens (those of the iteration under way included);
 * on a tie, the smallest estimated TTFT, then D-heavy first.  With equal
 * prompts on alike instances this is the instance that frees first, the
 * choice of one shared FIFO queue.  If no instance qualifies, one
 * prefilling instance uniformly at random (the policy stream), as the
 * paper's experiments do.
 *
 * Decode (Algorithm 1).  A request prefilled on a P-heavy instance moves,
 * after the transfer of its KV cache over that instance's link (one transfer
 * at a time per link, FIFO, as disagg), to the D-heavy instance with the
 * least KV memory in use; one prefilled on a D-heavy instance decodes in
 * place.  At the start of every iteration of a D-heavy instance whose KV
 * memory in use (running and waiting decodes and prompt tokens already
 * prefilled) exceeds watermark x kv_capacity, the running decodes with the
 * longest output so far (since their last backflow) flow to the P-heavy
 * instance with the least memory in use until the usage is below the mark;
 * at the start of every iteration of a P-heavy instance, each running decode
 * whose TPOT so far (since its first token, or its last backflow) exceeds
 * backflow x tpot_slo flows back to the least-used D-heavy instance, and
 * counts as a new request from then on (output so far and TPOT reset).
 * Every move crosses the source instance's link like a hand-over.  A decode
 * waits for a slot when the instance already runs decode_bmax sequences
 * (decoding plus prefilling).
 *
 * Uniform instances.  With SP = SD (or NP = 0, or ND = 0) no instance is
 * faster than another and nothing moves: every request decodes where it was
 * prefilled, which is aggregation (the chunked policy, with requests routed
 * at arrival instead of drawn from one queue).
 */
#ifndef AFD_SERVE_TAICHI_H
#define AFD_SERVE_TAICHI_H

#include <stdint.h>

#include "afd_serve.h"
#include "afd_taichi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the policy did, filled as it runs (measured and warm-up requests
 * alike). */
typedef struct afd_serve_taichi_counts {
    uint64_t prefill_p, prefill_d; /* prefills routed to P-heavy, to D-heavy instances */
    uint64_t infeasible;           /* arrivals no instance could serve within the TTFT SLO */
    uint64_t handovers;            /* decodes moved P-heavy -> D-heavy after their prefill */
    uint64_t flows;                /* D-heavy -> P-heavy above the watermark */
    uint64_t backflows;            /* P-heavy -> D-heavy near the TPOT SLO */
} afd_serve_taichi_counts;

typedef struct afd_serve_taichi_config {
    unsigned p_heavy, d_heavy;       /* NP, ND >= 0, NP + ND >= 1 */
    unsigned chunk_p, chunk_d;       /* SP > decode_bmax; SD = 0 or > decode_bmax */
    double watermark;                /* M in (0, 1] (0.95) */
    double backflow;                 /* alpha in (0, 1] (0.96) */
    double kv_capacity;              /* KV tokens per instance, > 0 (+inf: no flows) */
    double ttft_slo, tpot_slo;       /* for Algorithms 2 and 1 (+inf: every instance feasible,
                                        no backflow); in the unit of the laws */
    afd_serve_taichi_counts *counts; /* may be NULL */
} afd_serve_taichi_config;

/* The limit that binds at a simulated goodput (afd_serve_goodput_attain_at's
 * goodput, *at and *unstable_above): AFD_TAICHI_BIND_CAPACITY when the goodput
 * is above 0 and the smallest rate found infeasible was unstable; else, at a
 * goodput above 0, AFD_TAICHI_BIND_TIE when the run at the goodput cannot
 * tell the two SLOs' attainments apart (afd_serve_attain_tie at
 * AFD_SERVE_TIE_Z); else afd_taichi_bind_of of its attainments. */
AFD_API afd_taichi_bind afd_serve_taichi_bind(double goodput, const afd_serve_result *at,
                                              int unstable_above);

#ifdef __cplusplus
}
#endif

#endif /* AFD_SERVE_TAICHI_H */
