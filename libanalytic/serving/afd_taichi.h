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
 * G = 11, the laws of tests/serving/test_taichi.c) by 3.8%, 7.3% and 8.4% at
 * prefill shares f = 0.11, 0.22 and 0.33 (docs/taichi.md).
 * It gives the mean TPOT only; the spread of TPOT across requests (a short
 * decode that meets a long prompt sees whole chunks) is not modelled.
 */
#ifndef AFD_TAICHI_H
#define AFD_TAICHI_H

#include <stddef.h>

#include "afd_hw.h"
#include "afd_status.h"
#include "afd_workload.h"

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


/* ==== The three modes in closed form: aggregation, disaggregation, hybrid.
 *
 * A configuration (afd_taichi_config) is TaiChi's three sliders on N
 * instances: NP P-heavy instances with chunk SP and ND D-heavy instances
 * with chunk SD (0: decode only).  Aggregation is one kind of instance
 * (ND = 0, or SP = SD), disaggregation SD = 0 with SP the longest prompt
 * (a P-heavy iteration takes whole prompts), anything else the hybrid.
 *
 * Lengths enter by E[P], E[P^2], E[G] and, for the KV memory, theta and nu
 * of Lemma 4.1 (afd-provisioning, eq. 3): the KV tokens a decoding sequence
 * holds at a random step. */
#define AFD_TAICHI_PQ 32 /* prompt quantiles kept for the spread of the prefill time */
#define AFD_TAICHI_GN 128 /* points of the output law kept for the TPOT tail */
#define AFD_TAICHI_PF 1024 /* prompt quantiles of a trace kept for the TPOT tail */

typedef struct afd_taichi_lengths {
    double prompt_mean, prompt_m2; /* E[P] >= 1, E[P^2] */
    double prompt_max;             /* the longest prompt (geometric: the 0.999 quantile) */
    double prompt_q[AFD_TAICHI_PQ]; /* P at the probabilities (i + 1/2) / AFD_TAICHI_PQ
                                       (0 everywhere: the prompts are all E[P]) */
    double output_q[AFD_TAICHI_PQ]; /* G at the same probabilities (0: all E[G]) */
    double output_mean;            /* E[G] >= 1 */
    double prompt_m3, prompt_m4;   /* E[P^3], E[P^4]: the spread of a prompt's prefill work */
    unsigned output_n;             /* points of the output law kept: */
    double output_v[AFD_TAICHI_GN]; /* G exactly for G <= AFD_TAICHI_GN / 2, then the */
    double output_w[AFD_TAICHI_GN]; /* rest of the law in equal-mass quantile bins */
    double prompt_fine[AFD_TAICHI_PF]; /* a trace's P at (i + 1/2) / AFD_TAICHI_PF, sorted
                                          (unused for the other laws) */
    double theta, nu;              /* Lemma 4.1, tokens */
    const afd_workload *workload;  /* the whole prompt-length law (NULL: all E[P]); not
                                      owned: it must outlive these lengths */
} afd_taichi_lengths;

/* The statistics above from a workload (a trace read with its rows kept, or
 * the geometric model: E[P^2] = 2 mu_p^2 - mu_p, theta and nu of Corollary
 * 4.5), or, with w NULL, fixed lengths P and G (theta = P + (G - 1)/2,
 * nu^2 = (G^2 - 1)/12: a sequence of G steps holds P + a tokens at age
 * a = 0 .. G - 1).  A trace's empty prompt counts one token, as simulated
 * (afd_workload_prompt_tokens).  AFD_EINVAL for a trace without kept rows
 * or bad lengths. */
AFD_API afd_status afd_taichi_lengths_of(const afd_workload *w, double prompt, double output,
                                         afd_taichi_lengths *out);

/* P(P > k), the prompt-length tail of the whole law: the geometric model on
 * {1, 2, ...} with mean mu exactly, (1 - 1/mu)^floor(k); a trace's kept rows
 * (the empirical law); fixed lengths, 1 if E[P] > k else 0.  NaN for NULL. */
AFD_API double afd_taichi_prompt_tail(const afd_taichi_lengths *L, double k);

/* ---- Decode memory of an instance, and the flow across its watermark.
 * The decodes on an instance are an M/G/infinity population (Poisson with
 * mean n, PASTA), each holding Y tokens with mean theta and variance nu^2
 * (Lemma 4.1: Y is the load of a slot observed at a random step, which is
 * what the ages of an M/G/infinity population are).  Their KV tokens K are
 * compound Poisson: E[K] = n theta, Var K = n E[Y^2] = n (nu^2 + theta^2).
 * The Gaussian margin is E[K] + z sd(K).  Above the mark M = watermark x
 * capacity, Algorithm 1 flows decodes out.  An arriving decode brings its
 * prompt's KV cache, J = E[P] tokens (a jump of several standard deviations'
 * worth of growth), and an instance within J of the mark is pushed over it,
 * so one decode flows out: by PASTA the arrivals see the time-stationary K,
 * and the share of decodes that flow is P(K > M - J) = 1 - Phi(u),
 * u = (M - J - E K) / sd, the flow rate that times the decode arrival rate.
 * The expected excess above the mark, E[(K - M)^+] = sd phi(v) - (M - E K)
 * (1 - Phi(v)), v = (M - E K) / sd (the Gaussian loss function), is given
 * too.  Error against the simulator (one P-heavy instance of chunk 2048, one
 * decode-only D-heavy instance, the laws of tests/serving/test_taichi.c, P = 1000,
 * G = 101, 3 requests/s, E[K] = 10138, sd 3264): flow shares 0.607, 0.477,
 * 0.164, 0.0142 simulated at capacities 10672, 12000, 15000, 20000 tokens
 * against 0.620, 0.468, 0.170, 0.0080 (within 0.013 where flows are
 * common; in the far tail the Gaussian is light against the skewed
 * compound Poisson, and it is poor for fewer than about ten decodes). */
typedef struct afd_kv_memory {
    double mean, sd;    /* of K, tokens */
    double margin;      /* mean + z sd */
    double p_over;      /* P(K > mark) */
    double excess;      /* E[(K - mark)^+], tokens */
    double flow_share;  /* P(K > mark - jump): the share of decodes that flow */
    double flow_rate;   /* flow_share x decode_rate, decodes per unit time */
} afd_kv_memory;

/* decodes n >= 0 (mean population), decode_rate >= 0 (decodes arriving per
 * unit time), theta > 0, nu >= 0, z finite, mark > 0 (+inf: nothing
 * flows), jump >= 0 (tokens an arriving decode brings, E[P]).  AFD_EINVAL
 * otherwise. */
AFD_API afd_status afd_decode_memory(double decodes, double decode_rate, double theta, double nu,
                                     double z, double mark, double jump, afd_kv_memory *out);

typedef struct afd_taichi_config {
    unsigned p_heavy, d_heavy; /* NP, ND, NP + ND >= 1 */
    unsigned chunk_p, chunk_d; /* SP > decode_bmax (if NP > 0); SD = 0 or > decode_bmax */
} afd_taichi_config;

typedef struct afd_taichi_params {
    const afd_hw *hw;                /* prefill and decode laws */
    const afd_taichi_lengths *len;
    afd_taichi_config config;
    unsigned decode_bmax;            /* sequences per instance >= 1 */
    double kv_capacity;              /* KV tokens per instance (+inf: no flows) */
    double watermark;                /* (0, 1] (0: 0.95) */
    double kv_time;                  /* KV transfer of one request after a P-heavy prefill */
    double lambda;                   /* Poisson rate to the whole system, > 0 */
    double ttft_slo, tpot_slo;       /* > 0, in the unit of the laws */
} afd_taichi_params;

enum {
    AFD_TAICHI_LIMIT_NONE = 0,
    AFD_TAICHI_LIMIT_PREFILL, /* the prefill cannot keep up */
    AFD_TAICHI_LIMIT_DECODE   /* the decode cannot keep up (load or slots) */
};

typedef struct afd_taichi_result {
    double attainment;               /* fraction meeting both SLOs, attain_ttft x attain_tpot */
    double attain_ttft, attain_tpot;
    double share_p;                  /* share of prompts prefilled on P-heavy instances */
    double ttft_p, ttft_d;           /* mean TTFT on each kind (NaN if it prefills none) */
    double tpot_p, tpot_d;           /* mean TPOT of the decodes on each kind */
    double service_p, service_d;     /* prefill service time of a prompt on each kind */
    double decodes_d;                /* mean decodes on one D-heavy instance */
    afd_kv_memory kv;                /* KV tokens of one D-heavy instance (z = 1.2816) */
    int limit;                       /* on AFD_EUNSTABLE */
} afd_taichi_result;

/* SLO attainment of a configuration at rate lambda, the model:
 *  (T1) Instances of one kind with prompts arriving at lp and decodes at ld
 *       each have the mean TPOT of afd_serving.h (C1),
 *       T = (beta + cd) / (1 - ld m cd - lp E[P] cp),
 *       nbar = ld m T decodes per iteration, and serve a prompt in
 *       D = ceil(E[P] / (S - nbar)) (a_eff + nbar cd) + pb E[P] + pc E[P^2]
 *       ((C3); with S >= the longest prompt and no decodes, the prefill law).
 *       On a kind that runs no decodes (ld = 0: the P-heavy instances of
 *       disaggregation) an iteration takes every prompt waiting when it
 *       starts, up to the chunk, so its fixed time a is shared: the queue
 *       serves a prompt in D = a / K + pb E[P] + pc E[P^2], K the mean batch
 *       of the gated batch queue (Bailey 1954, by its means: K = (lp a + q) /
 *       (1 - lp E[X]), q = E[e^(-lp S)] the share of iterations no arrival
 *       follows, the batch taken as 1 + Poisson(K - 1) prompts), while a
 *       prompt's own TTFT keeps the whole a, and one that waits shares its
 *       iteration with those that arrive in the rest of the one in service,
 *       lp E[X] E[S] / 2 more (S = a + K E[X]).  Against the exact chain (one
 *       instance, fixed prompts of 110 ms of work, a = 20 ms, bulk.c) the mean
 *       TTFT is +0.5% to +5.3% up to a load of 0.74, +11% at 0.85, +35% at
 *       0.94 (high: the safe side); without the sharing the kind saturated at
 *       lp (a + E[X]) = 1 and the TTFT was 62% high at 0.85.
 *  (T2) Uniform instances (aggregation): lp = ld = lambda / N, one FIFO
 *       queue: TTFT = the wait of M/G/N plus the prompt's own service plus
 *       the rest of the iteration in flight ((C4)), TPOT of mean T with
 *       (T5)'s law.  The service of a prompt of P tokens is
 *       S(P) = ceil(P / (S - nbar)) (a_eff + nbar cd) + pb P + pc P^2, taken
 *       at the prompt quantiles prompt_q (D their mean, cs^2 their squared
 *       coefficient of variation), and the M/G/N wait is M/D/N's with D
 *       stretched by 1 + cs^2 (Allen-Cunneen: Wq(M/G/c) ~ Wq(M/M/c)
 *       (1 + cs^2) / 2 = Wq(M/D/c) (1 + cs^2)), so
 *       P(TTFT <= t) = (1 - P(S(P) > t - rest)) x mean over the quantiles
 *       P_i with S(P_i) <= t - rest of
 *       P(W_{M/D/N} <= (t - S(P_i) - rest) / (1 + cs^2)),
 *       the share whose own service exceeds the budget over the whole prompt
 *       law (a tail of a few percent where the SLO is tight, finer than a
 *       quantile).
 *       A long prompt can miss a TTFT SLO on an idle system: the spread of P
 *       is what makes tight TTFT SLOs hard.  TPOT: (T5).
 *  (T3) Two kinds: every decode moves to the D-heavy instances (Algorithm 1;
 *       the prefilled-on-P ones after the KV transfer and the rest of the
 *       iteration in flight, (T5)) except the share x that flows to P-heavy instances above
 *       the watermark (afd_decode_memory with n = (lambda / ND) m T_D); a
 *       flowed decode spends half its steps on each kind.  Prompts split
 *       between the kinds in proportion to their prefill capacities NP / D_P
 *       and ND / D_D (least-queued routing, Algorithm 2, equalises the
 *       queues' loads), each kind an M/D/n queue.  The split, x and the
 *       decode populations are solved by damped fixed-point iteration.
 *  (T4) attainment = P(TTFT <= ttft_slo) P(TPOT <= tpot_slo) (independent),
 *       with P(TTFT <= ttft_slo) at most 1 - afd_taichi_zero_load_miss (the
 *       requests whose own prefill misses the SLO, over the whole prompt
 *       law, not only the quantiles above).
 *  (T5) The TPOT tail.  The simulator's TPOT of a request of G = k + 1
 *       tokens is (finish - first token) / k: its k iterations plus, for a
 *       decode handed over from another instance, the KV transfer and the
 *       rest R of the iteration in flight when it arrives.  So
 *           TPOT = t_dec + Z + (kv_time + R + Y) / k,
 *       t_dec = T (1 - lp E[X]) the decode part of an iteration
 *       (beta + cd (1 + nbar)); Z the batch's fluctuation: the others are
 *       Poisson(nbar) sequences (M/G/infinity, PASTA) each costing
 *       c = gamma + alpha Y (Y of Lemma 4.1), and their mean over the k
 *       iterations has variance nbar E[c^2] 2/x (1 - (1 - e^-x)/x),
 *       x = k / m (an exponential autocorrelation over a decode life m T:
 *       the variance of a time average), plus alpha^2 Var P for the
 *       request's own prompt; R uniform on (0, T) with probability
 *       1 - e^-nbar (the instance is busy; R = 0 when the request was
 *       prefilled where it decodes); Y the prefill work in its iterations,
 *       compound Poisson: N ~ Poisson(lp k T) prompts of work X = pb P +
 *       pc P^2 each.  P(TPOT <= slo | k) sums over N: N = 0 exactly (the
 *       normal convolved with the uniform), N = 1 with X's own law over the
 *       whole prompt law, a prompt arriving at a uniform point of the window
 *       and prefilled at most a chunk (cp (S - 1 - nbar)) per iteration,
 *       N >= 2 a gamma with the works' mean and variance (past lp k T = 40
 *       the whole sum is).  With least-queued routing over N > 1 uniform
 *       instances the prompts that arrive during a request's prefill go
 *       elsewhere, so its window opens with no prefill queued and closes
 *       with the prompt in service part done: lp E[X^2] / 2 (the M/G/1
 *       residual work in service) is taken off Y; and Algorithm 2 sends a
 *       prompt, among the instances with no prefill queued, to the one whose
 *       TTFT estimate is smallest, the one with the fewest decodes, so lp is
 *       scaled by N E[floor(M / N) / M], M = 1 + Poisson(N nbar) (decode
 *       counts balanced by that choice: the request's instance is at the
 *       minimum floor(M / N) with probability (N - r) floor(M / N) / M,
 *       r = M mod N, then chosen with 1 / (N - r)), except the prompts no
 *       instance with decodes prefills within the TTFT SLO, which go to a
 *       random one (by their share of the prefill work over the quantiles).
 *       A decode handed over to a kind whose bmax slots are all held waits
 *       for one: the decodes are taken as M/M/bmax with offered load ld m
 *       T_full (T_full the step of a full batch, the step while anyone waits;
 *       geometric outputs make the lives near exponential), so it waits with
 *       Erlang's C probability an exponential time of mean m T_full / (bmax -
 *       ld m T_full), added once (the TPOT of a short output suffers most).
 *       The attainment averages
 *       over the output law (G exactly up to 64, then 64 quantile bins; a
 *       request of one token has no TPOT and meets it).  An SLO below the
 *       shortest possible TPOT, decode_beta + decode_gamma + decode_alpha
 *       (every iteration runs at least one sequence holding a KV token), is
 *       met by no request.
 * AFD_EUNSTABLE (limit set, attainment 0) when a kind cannot keep up
 * (load >= 1, more than decode_bmax decodes, prompt tokens beyond the
 * chunk's budget S - 1 - nbar, or rho >= 1); AFD_EINVAL for bad
 * parameters; AFD_ENUMERIC from the M/D/c solver.  Not modelled: backflow,
 * Algorithm 2's TTFT-feasibility test (short prompts to D-heavy), the
 * imbalance of the decode counts that departures leave (the routing factor
 * above assumes them balanced), the batching of prompts on kinds that also
 * decode.  Error against the simulator: docs/taichi.md and
 * docs/agreement.md. */
AFD_API afd_status afd_taichi_attainment(const afd_taichi_params *p, afd_taichi_result *out);

/* The zero-load miss: the fraction of requests whose own prefill alone
 * takes longer than ttft_slo in every mode, P(f + pb P + pc P^2 > ttft_slo)
 * with f = min(prefill_a, decode_beta) (a request's prompt tokens cost
 * pb P + pc P^2 whether in one batch or in chunks, which telescope, plus at
 * least one iteration's fixed time: a prefill batch's prefill_a or a mixed
 * step's decode_beta), over the whole prompt-length law.  No request that
 * misses alone can meet the SLO under load, so the TTFT attainment is at most
 * 1 - this at every rate, and the goodput at a target above it is 0.  NaN
 * for bad parameters. */
AFD_API double afd_taichi_zero_load_miss(const afd_taichi_params *p);

/* An upper bound of the stable rate: N / (pb E[P] + pc E[P^2] + m cd)
 * (every instance busy with no fixed costs).  NaN for bad parameters. */
AFD_API double afd_taichi_capacity(const afd_taichi_params *p);

/* Goodput of a configuration: the largest rate with attainment >= target
 * (TaiChi: 0.9), by afd_goodput_bisect from 1e-4 x the capacity bound up to
 * it, to rel_tol; 0 when even the lightest load misses.  lambda in p is
 * ignored.  Errors as afd_taichi_attainment (AFD_EUNSTABLE is not one). */
AFD_API afd_status afd_taichi_goodput(const afd_taichi_params *p, double target, double rel_tol,
                                      double *goodput);

/* The limit that binds at a goodput: the SLO whose attainment is the lower
 * one there (each SLO alone), or, at goodput 0 with the TTFT's the lower,
 * the zero-load bound (afd_taichi_zero_load_miss: the prompts' own prefill
 * misses the SLO at any rate). */
typedef enum afd_taichi_bind {
    AFD_TAICHI_BIND_NONE = 0, /* unknown (an attainment is NaN) */
    AFD_TAICHI_BIND_TTFT,
    AFD_TAICHI_BIND_TPOT,
    AFD_TAICHI_BIND_ZERO_LOAD,
    AFD_TAICHI_BIND_CAPACITY, /* the rate just above is unstable */
    AFD_TAICHI_BIND_TIE       /* a simulation that cannot tell the TTFT and
                                 TPOT attainments apart (afd_serve_taichi_bind) */
} afd_taichi_bind;

/* "none", "ttft", "tpot", "zero-load", "capacity", "ttft=tpot". */
AFD_API const char *afd_taichi_bind_name(afd_taichi_bind b);

/* The rule above from the attainments of each SLO alone at the goodput (at
 * the lowest rate tried when the goodput is 0); ties name the TPOT. */
AFD_API afd_taichi_bind afd_taichi_bind_of(double goodput, double attain_ttft,
                                           double attain_tpot);

/* The limit that binds in the closed forms of a configuration (p->config) at
 * its goodput (afd_taichi_goodput's, at target): the attainments of
 * afd_taichi_attainment at that rate (the capacity when the model is unstable
 * at goodput x (1 + rel_tol), the goodput search's bracket), or, at goodput
 * 0, the zero-load bound
 * when it alone keeps the TTFT attainment below target, else the
 * attainments at 1e-4 x the capacity bound (the lowest rate the goodput
 * search tries).  AFD_EINVAL for bad parameters; an unstable rate gives
 * AFD_TAICHI_BIND_NONE. */
AFD_API afd_status afd_taichi_binding(const afd_taichi_params *p, double goodput, double target,
                                      double rel_tol, afd_taichi_bind *out);

typedef enum afd_taichi_mode {
    AFD_TAICHI_AGG = 0,  /* NP = N, SP = SD = S for S in chunks */
    AFD_TAICHI_DISAGG,   /* NP = 1 .. N - 1, SP = the longest prompt, SD = 0 */
    AFD_TAICHI_HYBRID    /* the two above and every NP = 1 .. N - 1, SP in chunks
                            and the longest prompt, SD in 0 and chunks, SD < SP */
} afd_taichi_mode;

/* The configuration of each mode on N instances with the largest goodput
 * (best[mode], goodput[mode], indexed by afd_taichi_mode).  Ties keep the
 * first found, aggregation and disaggregation before the rest of the
 * hybrid's space, so the hybrid's goodput is at least both by construction
 * and a proper hybrid is reported only when it is strictly better.  p gives
 * everything but config and lambda; chunks (> decode_bmax each) are the
 * chunk sizes tried.  A mode that sustains no rate gets goodput 0 and an
 * all-zero configuration (disaggregation always does for N = 1).
 * AFD_EINVAL for bad parameters or no chunk; the errors of
 * afd_taichi_goodput. */
AFD_API afd_status afd_taichi_best(const afd_taichi_params *p, unsigned instances,
                                   const unsigned *chunks, size_t n_chunks, double target,
                                   double rel_tol, afd_taichi_config best[3], double goodput[3]);

/* The same search by SLO attainment at the rate lambda: best[mode] is the
 * configuration of the mode with the largest afd_taichi_attainment at lambda
 * (unstable ones count 0), attainment[mode] that value (TaiChi's Table 2).
 * AFD_EINVAL for lambda not > 0 and the errors above. */
AFD_API afd_status afd_taichi_best_at(const afd_taichi_params *p, unsigned instances,
                                      const unsigned *chunks, size_t n_chunks, double lambda,
                                      afd_taichi_config best[3], double attainment[3]);

/* "agg", "disagg", "hybrid". */
AFD_API const char *afd_taichi_mode_name(afd_taichi_mode mode);

#ifdef __cplusplus
}
#endif

#endif /* AFD_TAICHI_H */
