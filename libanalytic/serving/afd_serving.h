/* libanalytic/serving/: what a serving architecture delivers, in closed
 * form.  Prefill and decode pool sizing and goodput (afd_pd.h); TTFT and
 * TPOT of collocated, chunked and disaggregated serving (afd_serving.h);
 * TaiChi's hybrid (afd_taichi.h); the two-tier LP/HP split (afd_twotier.h);
 * multi-stage pipelines (afd_stages.h) and KV-cache retrieval
 * (afd_kvretrieve.h). */

/* afd_serving.h: closed forms for request-level serving, beside the
 * simulator of montecarlo/serve (afdkit serve) that checks them.
 *
 * Requests arrive as a Poisson process at rate lambda, each with P prompt
 * tokens and G output tokens (fixed lengths, BestServe's operating points;
 * a workload enters through its mean lengths, and its length law through
 * afd_serving_params.workload: the prefill TTFT, the collocated TPOT's
 * prefill stalls and its quantile read the whole law, the decode step the
 * means).  The latency laws are those of afd_hw:
 *     prefill batch of k prompts     S(k) = pa + k (pb P + pc P^2)
 *     decode step of b sequences     t(b) = beta + b (gamma + alpha (P + G/2))
 * (a sequence holds P + j KV tokens at its j-th step, P + G/2 on average
 * over its G - 1 steps).  The decode forms (collocated and disaggregated:
 * the step, TPOT, the decode capacity) take instead the step the simulator
 * takes, afd_hw_decode_step at b sequences of P + G/2 tokens (hw's
 * estimator table where it has one, the law where not): the law is fitted
 * over the table's whole grid and its slope at the batches below the slot
 * cap can be twice the table's (Llama-3.1-70B on 2 H200, P = G = 500: 0.10
 * against 0.056 ms per sequence near b = 100), which made the collocated
 * TPOT 30-55% high there, and its step at the full batch 10% above the
 * table's (256 sequences), which made the disaggregated goodput 10-16%
 * low.
 *
 * ---- Prefill: greedy static batches.
 * c instances share one FIFO queue; a free one takes the first min(n, B) of
 * the n waiting requests as one batch of k, which runs S(k) and gives all k
 * their first token at its end (the simulator's policy).  For B = 1 it is
 * M/D/c, solved exactly (afd_queue.h): TTFT = W + S(1).  For B > 1,
 * afd_serving_prefill_greedy below: exact for c = 1, an approximation for
 * c > 1 whose error against the simulator is measured in
 * docs/reproduction.md, "Batched prefill" (never more than 5% low on its
 * grid; up to +39% on the mean, +53% on the P90 for B = 16 near saturation
 * with compute-bound prompts).
 *
 * ---- Decode: the step law at the slot occupancy.
 * A decode instance with arrival rate lambda_d runs steps back to back.  A
 * request that joins sees the others as an M/G/infinity population
 * (Poisson, by PASTA), so the mean step it experiences is
 *     T = t0 + t1 (1 + n),  t0 = beta,  t1 = gamma + alpha (P + G/2),
 * n the mean number of others; Little's law over the G - 1 steps gives
 * n = lambda_d (G - 1) T / (1 - f), f the fraction of time the instance
 * spends on other work (0 when disaggregated), and the steps are spread over
 * the time left, TPOT = T / (1 - f).  Solving,
 *     TPOT = (t0 + t1) / (1 - f - t1 lambda_d (G - 1)),
 * finite iff f + t1 lambda_d (G - 1) < 1; for the simulator's step t(b),
 * which is not linear, 1 + n is the root b of b = 1 + lambda_d (G - 1)
 * t(b) / (1 - f) and TPOT = t(1 + n) / (1 - f).  A request's TPOT averages the
 * step over its G - 1 steps, so its spread is small: the quantile is the
 * mean plus the wait for a slot when the running sequences approach the
 * batch limit, W_q / (G - 1), with W the wait of M/D/B with service
 * (G - 1) TPOT (B = decode_bmax slots).  If the mean occupancy 1 + n
 * exceeds B, the steps run at the full batch and the decode capacity is
 * (1 - f) B / ((G - 1) t(B)) requests per unit time: a larger lambda_d is
 * unstable (AFD_EUNSTABLE with limit decode; so is a rate so close to it
 * that the M/D/B solver's size limit is reached).
 *
 * ---- Collocated with prefill priority (vLLM; BestServe Section 3.4.4).
 * N instances share one prefill queue (the prefill form above with c = N)
 * and each decodes what it prefilled (lambda_d = lambda / N) in the time
 * prefills leave, f = lambda S(k) / (N k): prefill priority makes decode
 * lose exactly that fraction, so decode becomes unstable long before
 * prefill does when f is large (BestServe Table 5).  A prefill waits for
 * the decode step in flight, half a step on average while decoding, which
 * is added to TTFT.  The collocated TPOT is not the M/D/B wait above: the
 * prefills stall every decode slot at once and release their requests in
 * clusters, so near the slot cap the wait for a slot is longer.  It is a
 * birth-death chain of the slots (serving.c, "Collocated TPOT": the wait
 * at the cap scaled by the clusters' variability; a request's life starts
 * with the rest of the prefill run its own prefill ends in, decodes at the
 * step it sees in a batch that the clusters make swing, and spreads by the
 * runs of prefills that interrupt it and the requests they bring):
 * measured against the simulator on one to four instances up to 97% of
 * the decode capacity, the mean within -6% / +9% and the P90 within -12% /
 * +20%, and on one instance whose prefills take 47-74% of the time within
 * 4% (docs/reproduction.md, "Collocated TPOT"; high, the safe side, only
 * with several instances near the cap).
 */
#ifndef AFD_SERVING_H
#define AFD_SERVING_H

#include "afd_hw.h"
#include "afd_pd.h"
#include "afd_queue.h"
#include "afd_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct afd_serving_params {
    const afd_hw *hw;      /* prefill and decode laws */
    double lambda;         /* Poisson rate, > 0, in the inverse unit of hw */
    double prompt, output; /* P >= 1, G >= 1 */
    unsigned instances;    /* colloc: N */
    unsigned prefill, decode; /* disagg: NP, ND */
    unsigned prefill_bmax, decode_bmax;
    double kv_time;        /* disagg: transfer time of one request's KV cache (>= 0) */
    double quantile;       /* of TTFT and TPOT, in (0, 1) (0: 0.9) */
    /* The prefill pool's queue.  routed 0: one queue all instances serve
     * (M/D/c, or the greedy batches of prefill_bmax > 1).  routed 1: a
     * router at arrival splits the Poisson stream into per-instance FIFO
     * queues (prefill_bmax 1 only, else AFD_EINVAL): TTFT = afd_routed_wq
     * (router; afd_queue.h, routed.c) + S, S = a + b P + c P^2 the
     * prefill; its quantile exact for random (M/D/1 at lambda / c) and
     * global (M/D/c), NaN for the others (no tail).  prompt_m2 > 0 (only
     * with routed 1, c = 0 and one output token, the decode forms taking
     * fixed lengths): prompts vary with E[P] = prompt, E[P^2] = prompt_m2
     * (>= prompt^2), S's moments enter the routed form, the quantile NaN. */
    int routed;
    afd_routed_kind router;
    double prompt_m2;
    /* The requests' length law (NULL: every request is `prompt`, `output`):
     * a trace's kept rows or pairs, or the geometric model (not GIVEN),
     * prompt and output its means.  The prefill forms read the law of a
     * prompt's own work s = pb P + pc P^2 over it
     * (afd_service_law_from_workload): B = 1, pd.c's M/G/c
     * (afd_ttft_quantile: the M/D/c wait at E[S] scaled by 1 + c_S^2, its
     * tail convolved with S's law; the mean the same scaling of M/D/c's);
     * B > 1, afd_serving_prefill_greedy_law.  The collocated TPOT reads the
     * second moment of the prefill batch that stalls the decodes, E[S(k)^2]
     * = (a + k E s)^2 + k Var(s), and its quantile is the mixture over the
     * output law (afd_taichi_lengths_of) of the requests' TPOTs, a request
     * of G tokens living (G - 1) / (E[G] - 1) of the mean life, its stalls'
     * spread scaled by the root of that, its wait for a slot the same (its
     * mean l0 / (E[G] - 1) + E[W] E[1 / (G - 1)], over the requests of G >=
     * 2).  The decode step and the disaggregated TPOT still read the means.
     * Not with routed (AFD_EINVAL). */
    const afd_workload *workload;
} afd_serving_params;

enum {
    AFD_SERVING_LIMIT_NONE = 0,
    AFD_SERVING_LIMIT_PREFILL, /* the prefill stage cannot keep up */
    AFD_SERVING_LIMIT_DECODE,  /* the decode stage cannot keep up */
    AFD_SERVING_LIMIT_TTFT,    /* the TTFT SLO binds */
    AFD_SERVING_LIMIT_TPOT     /* the TPOT SLO binds */
};

typedef struct afd_serving_result {
    double ttft_mean, ttft_q;  /* time to first token, mean and quantile */
    double tpot_mean, tpot_q;  /* time per output token */
    double prefill_rho;        /* busy fraction of a prefill instance */
    unsigned prefill_batch;    /* mean prefill batch, rounded */
    double decode_rho;         /* f + lambda_d (G - 1) t(1 + n) / (1 + n), or the slot load */
    double decode_batch;       /* mean sequences per decode step, 1 + n */
    int limit;                 /* on AFD_EUNSTABLE: the stage that cannot keep up */
} afd_serving_result;

/* ---- Prefill: greedy static batches (montecarlo/serve's colloc and disagg).
 * c servers; whenever one is free it takes the first min(n, B) of the n
 * waiting requests as one batch of k, which runs S(k) = a + k s (s = pb P +
 * pc P^2) and gives all k their first token at its end.  TTFT mean and
 * quantile, the busy fraction of a server (*rho) and the mean batch
 * (*batch, per batch).  An approximation (bulk.c): the queue at batch
 * starts is the embedded chain of the bulk-service queue M/G^[1,B]/1 (Bailey
 * 1954) whose interval to the next start is either S(k) / c (one virtual
 * server of speed c, (V)) or the first of the other c - 1 servers to free at
 * uniform phases ((P)), exact for c = 1; the probability that an arrival
 * finds a real server idle (and is served alone at once, TTFT = S(1)) is
 * M/M/c's, 1 - C(c, c rho).  The TTFT is (V) + w max(0, (P) - (V)), w =
 * min(1, 2 a / s) (c > 1, B > 1); *rho and *batch are (V)'s.  Measured
 * against the simulator: docs/reproduction.md, "Batched prefill".  AFD_EINVAL for bad
 * arguments (lambda > 0, c, B >= 1, a >= 0, s > 0, quantile in (0, 1)),
 * AFD_EUNSTABLE when lambda S(B) / (c B) >= 0.98 (saturated, or too close
 * to saturation to resolve: the TTFT there is tens of S(B)) or the chain
 * does not settle, AFD_ENOMEM. */
AFD_API afd_status afd_serving_prefill_greedy(double lambda, unsigned c, unsigned bmax, double a,
                                              double s, double quantile, double *mean,
                                              double *quant, double *rho, double *batch);

/* The same with prompts of random length: s, a prompt's own work pb P +
 * pc P^2, has the law *s (atoms, mean, scv; afd_service_law_from_workload
 * with the model {0, pb, pc}), and a batch of k runs S_k = a + s_1 + ... +
 * s_k.  bulk.c, (4)-(6): the chain's intervals at S_k's atoms (the
 * embedded chain of M/G^[1,B]/1 for c = 1), the full batches ahead of a
 * request at their mean, and the TTFT its wait convolved with its own
 * batch's S_K given K (the K-fold convolution of s).  With scv 0 (or one
 * atom) it is afd_serving_prefill_greedy at s->mean.  Errors as above,
 * AFD_EINVAL for a law without atoms or a bad scv. */
AFD_API afd_status afd_serving_prefill_greedy_law(double lambda, unsigned c, unsigned bmax,
                                                  double a, const afd_service_law *s,
                                                  double quantile, double *mean, double *quant,
                                                  double *rho, double *batch);

/* Disaggregated serving, NP prefill and ND decode instances.  TPOT adds the
 * KV transfer spread over the G - 1 steps, kv_time / (G - 1).
 * AFD_EINVAL for bad parameters, AFD_EUNSTABLE (limit set, the rest NaN)
 * when a stage cannot keep up, AFD_ENOMEM/AFD_ENUMERIC from the M/D/c
 * solver. */
AFD_API afd_status afd_serving_disagg(const afd_serving_params *p, afd_serving_result *out);

/* Collocated serving with prefill priority, N instances.  Errors as above. */
AFD_API afd_status afd_serving_colloc(const afd_serving_params *p, afd_serving_result *out);

/* ---- Chunked prefill (Sarathi-Serve), N instances with chunk S.
 * Requests arrive at rate lambda to N instances sharing one FIFO queue
 * (lambda_i = lambda / N each); an iteration carries at most S tokens: one
 * per running decode, the rest prompt chunks (montecarlo/serve's chunked
 * policy).  Prompt lengths enter by E[P] and E[P^2], outputs by E[G]
 * (m = E[G] - 1 decode steps).  Per-token costs, the affine law of the
 * tokens in an iteration:
 *     decode token   cd = gamma + alpha (E[P] + E[G (G - 1)] / (2 (E[G] - 1)))
 *                    (the mean KV of a step: the others in an iteration are
 *                    a time-stationary sample, which favours long outputs;
 *                    from theta, E[P] + E[G] for geometric outputs), the
 *                    request's own at its life's mean KV,
 *                    c_own = gamma + alpha (E[P] + E[G]/2)
 *     prefill token  cp = pb + pc E[P^2] / E[P]   (the chunks of a prompt add
 *                    up to pb P + pc P^2, the quadratic term against the
 *                    tokens before each chunk)
 * (C1) TPOT.  A decoding request's iteration holds it, the n = lambda_i m T
 *      others (Little, PASTA) and the prefill tokens arriving per
 *      iteration, lambda_i E[P] T, so T = beta + c_own + n cd + lambda_i E[P] T cp:
 *          TPOT = T = (beta + c_own) / (1 - lambda_i m cd - lambda_i E[P] cp).
 * (C2) nbar = lambda_i m T decodes per iteration on average; the iteration
 *      must hold them: 1 + nbar <= decode_bmax and lambda_i E[P] T <=
 *      S - 1 - nbar, else AFD_EUNSTABLE (limit decode or prefill).
 * (C3) Prefill service of one prompt: ceil(P / (S - nbar)) iterations, each
 *      costing its fixed part a_eff = beta (1 - e^-nbar) + pa e^-nbar (no
 *      decode running with probability e^-nbar, the M/G/inf law) and nbar
 *      decode tokens, plus the prompt's own work:
 *          D = ceil(P / (S - nbar)) (a_eff + nbar cd) + pb E[P] + pc E[P^2],
 *      prefill_rho = lambda_i D < 1 (else AFD_EUNSTABLE, limit prefill).
 * (C4) TTFT = M/D/N sojourn with service D (afd_queue.h), plus the rest of
 *      the iteration in flight when the instance is decoding (probability
 *      1 - e^-nbar, uniform on (0, T)).
 * (C5) TPOT quantile: T plus the spread of the prefill work that other
 *      arrivals bring during the request's decode life L = m T (compound
 *      Poisson at rate lambda_i, each pb E[P] + pc E[P^2]): z_q sqrt(lambda_i
 *      L) (pb E[P] + pc E[P^2]) / m.
 * Exact with one request at a time (nbar -> 0: TTFT = ceil(P/S) pa + pb P +
 * pc P^2, TPOT the step law).  It treats prefills as one at a time per
 * instance (several short prompts share an iteration in the simulator) and
 * the spread of P (fixed or not) only through E[P^2].  Error against the
 * simulator: docs/reproduction.md, "Chunked prefill: closed form against the
 * simulator". */
typedef struct afd_serving_chunked_params {
    const afd_hw *hw;        /* prefill and decode laws */
    double lambda;           /* Poisson rate to the N instances, > 0 */
    unsigned instances;      /* N >= 1 */
    unsigned chunk;          /* S tokens per iteration, > decode_bmax */
    unsigned decode_bmax;    /* sequences per instance (decoding and prefilling) */
    double prompt_mean;      /* E[P] >= 1 */
    double prompt_m2;        /* E[P^2] >= E[P]^2 (0: E[P]^2, fixed prompts) */
    double output_mean;      /* E[G] >= 1 */
    double quantile;         /* of TTFT and TPOT, in (0, 1) (0: 0.9) */
    double theta;            /* Lemma 4.1's theta of the lengths (afd_workload.h;
                                0: fixed outputs) */
} afd_serving_chunked_params;

/* Fills ttft_mean, ttft_q, tpot_mean, tpot_q (NaN for E[G] = 1),
 * prefill_rho (lambda_i D), prefill_batch (1), decode_rho (lambda_i (m cd +
 * E[P] cp)), decode_batch (1 + nbar).  AFD_EINVAL for bad parameters,
 * AFD_EUNSTABLE (limit set, the rest NaN but the two rhos) when the
 * instances cannot keep up, AFD_ENUMERIC from the M/D/c solver. */
AFD_API afd_status afd_serving_chunked(const afd_serving_chunked_params *p, afd_serving_result *out);

/* Name of a limit: "none", "prefill", "decode", "ttft", "tpot". */
AFD_API const char *afd_serving_limit_name(int limit);

/* The largest arrival rate the configuration sustains at all (colloc != 0:
 * collocated, N instances; else disaggregated):
 *   prefill     c max_k k / S(k)  (k = 1 .. B)
 *   decode      ND B / ((G - 1) t(B))
 *   collocated  N / (S(k)/k + (G - 1) t(B) / B), the best k
 * (every instance busy, every batch full).  +inf for a stage that has no
 * work (G = 1); NaN for bad parameters. */
AFD_API double afd_serving_capacity(const afd_serving_params *p, int colloc);

/* Feasibility of a rate for afd_goodput_bisect: 1 feasible, 0 not, negative
 * on failure (the search stops with AFD_ENUMERIC). */
typedef int (*afd_feasible_fn)(double lambda, void *ctx);

/* Goodput by bisection, BestServe's Algorithm 8 with its loop test the right
 * way round: the printed "while lambda_u - lambda_l < eps" never runs (the
 * initial gap is wide), so the bracket [lo, hi] is halved while
 * hi - lo > rel_tol hi, keeping lo feasible and hi infeasible.  hi is not
 * tested (it should be a capacity, infeasible by construction); if lo is not
 * feasible the goodput is 0.  Feasibility is assumed monotone in lambda
 * (a simulator with common random numbers is nearly so).  AFD_EINVAL for
 * 0 < lo < hi violated or rel_tol outside (0, 1). */
AFD_API afd_status afd_goodput_bisect(afd_feasible_fn feasible, void *ctx, double lo, double hi,
                                      double rel_tol, double *goodput);

/* The goodput of the closed forms: the largest rate whose TTFT and TPOT
 * quantiles (p->quantile, P90 by default) meet ttft_slo and tpot_slo, by
 * afd_goodput_bisect from capacity 1e-4 up to the capacity, to rel_tol.
 * *limit tells what fails just above it (an SLO, or a stage's stability);
 * AFD_SERVING_LIMIT_TTFT or _TPOT with goodput 0 when the SLO cannot be met
 * even at the lightest load.  lambda in p is ignored. */
AFD_API afd_status afd_serving_goodput(const afd_serving_params *p, int colloc, double ttft_slo,
                                       double tpot_slo, double rel_tol, double *goodput,
                                       int *limit);

/* The disaggregated goodput of every split at once.  In afd_serving_disagg
 * the prefill stage's TTFT depends on NP (and lambda) only and the decode
 * stage's TPOT on lambda / ND only, so a rate is feasible for (NP, ND) iff
 * it is for NP prefill instances alone and lambda / ND is for one decode
 * instance alone; with feasibility monotone in lambda (as
 * afd_serving_goodput assumes),
 *     goodput(NP, ND) = min(G_P(NP), ND G_D),
 * G_P(NP) the largest rate whose TTFT quantile NP prefill instances keep
 * within ttft_slo (stable), G_D the largest rate whose TPOT quantile (with
 * the KV transfer, p->kv_time / (G - 1)) one decode instance keeps within
 * tpot_slo (+inf for G = 1).  Fills prefill_goodput[i] = G_P(i + 1) for
 * i < n and *decode_goodput = G_D: at most n + 1 bisections
 * (afd_goodput_bisect up to the stage's capacity, to rel_tol, 0 if the
 * lightest load fails; the prefill sizes by pooling as in
 * afd_serving_goodput_colloc_sizes) where a search of every split needs one
 * per split, n (n + 1) / 2.  p->prefill and p->decode are ignored.  Errors
 * as afd_serving_goodput. */
AFD_API afd_status afd_serving_goodput_stages(const afd_serving_params *p, double ttft_slo,
                                              double tpot_slo, double rel_tol, unsigned n,
                                              double *prefill_goodput, double *decode_goodput);

/* The collocated goodput (afd_serving_goodput, colloc) of 1 .. n
 * instances: goodput[i] for i + 1 (p->instances ignored).  The closed form
 * depends on N only through the prefill wait at the load per instance,
 * whose quantile falls as N grows at the same load (pooling), so
 * goodput(N + 1) >= (N + 1) goodput(N) / N (where that fails, the search
 * starts from 1e-4 of the capacity): each search starts there and is
 * skipped once that is within rel_tol of the capacity, which makes the cost
 * of all n nearly that of the few smallest.  Errors as afd_serving_goodput. */
AFD_API afd_status afd_serving_goodput_colloc_sizes(const afd_serving_params *p, double ttft_slo,
                                                    double tpot_slo, double rel_tol, unsigned n,
                                                    double *goodput);

/* min(prefill_goodput[np - 1], nd decode_goodput): the goodput of np prefill
 * and nd decode instances from afd_serving_goodput_stages (np, nd >= 1). */
AFD_API double afd_serving_goodput_split(const double *prefill_goodput, double decode_goodput,
                                         unsigned np, unsigned nd);

/* The relative error with which a ranking by the closed forms alone is
 * read: 0.15, the largest error docs/reproduction.md measures for the forms
 * a ranking usually binds on (greedy prefill batches, TTFT P90 within 16%
 * for B <= 4 and c <= 3; the collocated TPOT P90, -15% / +20%).  It
 * is a reading of those measurements, not a bound on the goodput. */
#define AFD_SERVING_CLOSED_ERROR 0.15

/* 1 when two closed-form goodputs, first >= second > 0, are within err of
 * each other, second >= (1 - err) first: the closed forms cannot order
 * them.  0 otherwise (either not positive, err outside [0, 1)). */
AFD_API int afd_closed_too_close(double first, double second, double err);

/* The gap of a closed form against the simulation that checks it:
 * closed / simulated - 1 (0: they agree; +0.1: the closed form 10% high).
 * NaN unless both are finite and simulated > 0. */
AFD_API double afd_closed_gap(double closed, double simulated);

/* ---- The decode batch cap of an instance.
 * The largest b >= 1 with
 *   (M) b x request_tokens <= kv_capacity: b sequences each holding the KV
 *       cache of a whole request (E[P] + E[G] tokens at its last step) fit
 *       in the memory the weights leave (afd_kv_capacity_tokens);
 *   (T) t(b) = beta + gamma b + alpha b kv_mean <= tpot_slo: one decode
 *       step of b sequences holding kv_mean tokens each on average (the
 *       step law of afd_hw, decode_beta + decode_gamma b + decode_alpha K
 *       with K = b kv_mean; kv_mean = theta of Lemma 4.1, the KV tokens a
 *       decoding sequence holds at a random step) meets the TPOT SLO;
 *   (L) b <= limit (0: AFD_DECODE_BMAX_MAX).
 * Both (M) and (T) are monotone in b, so
 *   b = min(floor(kv_capacity / request_tokens),
 *           floor((tpot_slo - beta) / (gamma + alpha kv_mean)), limit),
 * each floor checked against its inequality.  *bmax = 0 when b = 1 breaks
 * (M) or (T); *binds (may be NULL) says which of AFD_DECODE_BMAX_MEMORY,
 * _TPOT, _LIMIT gives the cap (_LIMIT when b reaches it, else _MEMORY on a
 * tie of (M) and (T)).  kv_capacity
 * and tpot_slo may be +inf.  AFD_EINVAL (bmax 0) for a hw without decode
 * law, kv_capacity or tpot_slo not > 0, request_tokens < 1 or kv_mean not
 * > 0. */
#define AFD_DECODE_BMAX_MAX 65536u
enum { AFD_DECODE_BMAX_MEMORY = 1, AFD_DECODE_BMAX_TPOT, AFD_DECODE_BMAX_LIMIT };
typedef struct afd_decode_bmax_params {
    const afd_hw *hw;      /* the decode law */
    double kv_capacity;    /* KV tokens per instance, > 0 (+inf: memory never binds) */
    double request_tokens; /* KV tokens of a finished request, E[P] + E[G] >= 1 */
    double kv_mean;        /* mean KV tokens of a decoding sequence, > 0 */
    double tpot_slo;       /* > 0, in the unit of hw (+inf: never binds) */
    unsigned limit;        /* the largest b considered (0: AFD_DECODE_BMAX_MAX) */
} afd_decode_bmax_params;

AFD_API afd_status afd_decode_bmax(const afd_decode_bmax_params *p, unsigned *bmax, int *binds);

#ifdef __cplusplus
}
#endif

#endif /* AFD_SERVING_H */
