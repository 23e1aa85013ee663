/* afd_taichi.h: the affine interference model of chunked prefill (TaiChi,
 * Section 2.3.1, Figure 4), beside the simulator's chunked and taichi
 * policies (afdkit serve --arch chunked|taichi) that check it.
 *
 * Interference intensity I of a decoding request: the prompt tokens
 * computed in the iterations it shares, per output token.  An iteration
 * with b decodes holding K KV tokens and prompt chunks c_j (of prompts
 * already holding p_j tokens) takes
 *     beta + gamma b + alpha K + sum_j (pb c_j + pc ((p_j + c_j)^2 - p_j^2))
 * (afd_hw laws; policy_chunked.c), so the mean over a request's iterations,
 * its TPOT, is affine in I:
 *     TPOT = a + s I,  a = beta + t1 (1 + n),  s = pb + pc P,
 * with t1 = gamma + alpha (P + G/2) the cost of one decoding sequence (it
 * holds P + G/2 tokens on average), 1 + n the sequences decoding together
 * (the request and n others), and s the mean cost of a prompt token (the
 * chunks of a prompt of P tokens add up to pb P + pc P^2).  The line is the
 * one TaiChi fits in Figure 4 (44 ms + 0.2 ms x I at chunk 1024).
 *
 * Steady state of one instance (Poisson arrivals at lambda, fixed lengths
 * P and G): prompts bring lambda (pb P + pc P^2) of prefill time per unit
 * time, f = lambda (pb P + pc P^2), and as long as the prefill keeps up
 * every unit of time carries that share, so s I = f TPOT; Little's law over
 * the G - 1 steps gives n = lambda (G - 1) TPOT (by PASTA the others a
 * request finds are the mean population).  Solving,
 *     TPOT = (beta + t1) / (1 - f - t1 lambda (G - 1)),
 * the collocated form of afd_serving.h with the prefill share f (the same
 * equation as afd_serving_chunked's (C1) with E[P^2] = P^2: both compute it
 * through one internal function), and
 * independent of the chunk S: the chunk bounds the prompt tokens of one
 * iteration, S - (1 + n), so the prefill keeps up only while
 *     I = lambda P TPOT <= S - (1 + n),
 * which is where the chunk enters (a larger chunk sustains more load, a
 * smaller one bounds the interference of a single iteration).  A chunk of S
 * tokens at that batch is served at S / (a + s S) tokens per unit time
 * counting the decode tokens, (S - 1 - n) / (a + s (S - 1 - n)) prompt
 * tokens.
 *
 * Error.  The derivation spreads the prefill evenly over time; in fact the
 * prompts that queued behind a request while it waited are prefilled while
 * it decodes, so it meets more than the average interference, and the form
 * is low: against the chunked simulator (one instance, chunk 300, P = 1000,
 * G = 11, the laws of tests/test_taichi.c) by 3.8%, 7.3% and 8.4% at
 * prefill shares f = 0.11, 0.22 and 0.33 (docs/taichi.md).
 * It gives the mean TPOT only; the spread of TPOT across requests (a short
 * decode that meets a long prompt sees whole chunks) is not modelled.
 */
#ifndef AFD_TAICHI_H
#define AFD_TAICHI_H

#include "afd_hw.h"
#include "afd_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct afd_chunked_params {
    const afd_hw *hw;      /* prefill and decode laws */
    double lambda;         /* arrivals per unit time at this instance, > 0 */
    double prompt, output; /* P >= 1, G >= 2 */
    double chunk;          /* S, tokens per iteration, > 1 */
} afd_chunked_params;

typedef struct afd_chunked_result {
    double tpot;          /* mean TPOT, a + s I */
    double intercept;     /* a = beta + t1 (1 + n) */
    double slope;         /* s = pb + pc P, per prompt token of intensity */
    double intensity;     /* I = lambda P TPOT, prompt tokens per output token */
    double decode_batch;  /* 1 + n */
    double prefill_share; /* f */
    double chunk_rate;    /* prompt tokens per unit time at full chunks */
} afd_chunked_result;

/* The steady state above.  AFD_EINVAL for bad parameters (or laws missing);
 * AFD_EUNSTABLE when 1 - f - t1 lambda (G - 1) <= 0 (decode cannot keep up)
 * or the intensity exceeds the chunk's budget S - (1 + n) (prefill cannot
 * keep up); the result then holds NaN except prefill_share. */
AFD_API afd_status afd_chunked_interference(const afd_chunked_params *p, afd_chunked_result *out);

/* The largest intensity meeting a TPOT SLO on the line a + s I:
 * (tpot_slo - a) / s; 0 when a >= tpot_slo; NaN for s <= 0 or non-finite
 * arguments.  (TaiChi: "TPOT < 100 ms when intensity < 273.77".) */
AFD_API double afd_intensity_limit(double intercept, double slope, double tpot_slo);

#ifdef __cplusplus
}
#endif

#endif /* AFD_TAICHI_H */
