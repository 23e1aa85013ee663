/* afd_stages.h: a serving pipeline as a tandem network of multi-server
 * queues (pre-processing, retrieval, KV-cache retrieval, prefill, decode,
 * reasoning loops, post-processing; the MIST paper, Sections III-B to III-F),
 * read from a JSON stage list and solved by decomposition.
 *
 * ---- The stage list
 *
 *   {"stages": [
 *      {"name": "rag", "servers": 2, "service": {"const": 0.4}},
 *      {"name": "prefill", "servers": 4,
 *       "service": {"affine": {"a": "20ms", "b": 1e-4, "tokens": "prompt"}}},
 *      {"name": "reason", "servers": 8, "service": {"exp": 1.5}, "repeat": 3},
 *      {"name": "decode", "servers": 8, "service": {"latency": "decode"},
 *       "routing": {"heavy-light": {"split": 2048, "light": 2}}}]}
 *
 * Times are seconds, as a JSON number or a string with a unit ("20ms").
 * service holds exactly one of
 *   const    a fixed time;
 *   exp      exponential with this mean;
 *   affine   a + b x seconds with x the request's prompt or output tokens
 *            ("tokens": "prompt" (default) or "output"; b in seconds per token);
 *   latency  "prefill" or "decode": a phase of the latency model, for one
 *            request alone on the server: a + b P + c P^2 (prefill law), or
 *            D (decode_beta + decode_gamma) + decode_alpha (D P + D (D - 1)/2)
 *            (D decode steps of one sequence whose KV cache grows from P).
 * routing (default "fcfs") says how a stage's servers share its requests:
 *   fcfs        one queue served first come, first served by the c servers;
 *   least-work  each request joins the server with the least unfinished work:
 *               the same waits as fcfs (each request starts when the first
 *               server frees up either way);
 *   rr          round robin over per-server FCFS queues;
 *   jsq         join the shortest per-server queue (ties: the lowest index);
 *   heavy-light {"split": N, "light": k, "tokens": "prompt"|"output"}:
 *               requests with at most N tokens go to a pool of k servers,
 *               the others to the remaining c - k, each pool one FCFS queue.
 * repeat k (default 1): the request is served k times in a row by the same
 * server (a reasoning loop that keeps its slot): its service is the sum of k
 * independent draws.
 *
 * ---- The decomposition (method "closed")
 *
 * Arrivals are Poisson at rate lambda.  Each stage is treated as a GI/G/c
 * queue fed by a renewal process whose squared coefficient of variation
 * (SCV) c_a^2 is passed on from the stage before, as in Whitt's Queueing
 * Network Analyzer (W. Whitt, "The Queueing Network Analyzer", Bell Syst.
 * Tech. J. 62 (1983) 2779-2815).  For a stage with c servers, service mean
 * m, SCV c_s^2, offered load a = lambda m, rho = a / c:
 *
 *   Poisson arrivals (c_a^2 = 1), constant service: the exact M/D/c wait
 *     (afd_queue.h: mean, distribution, quantiles);
 *   Poisson arrivals, exponential service: the exact M/M/c wait,
 *     P(W > t) = C(c, a) e^{-(c/m - lambda) t}, C Erlang's C formula;
 *   otherwise the mean wait
 *     W(M/G/c)  ~ (1 - c_s^2) W(M/D/c) + c_s^2 W(M/M/c)
 *       (the interpolation between the two exact endpoints: Cosmetatos;
 *        Tijms, A First Course in Stochastic Models, 2003, Section 5.2;
 *        exact for c = 1, where it is Pollaczek-Khinchine),
 *     W(GI/G/c) ~ (c_a^2 + c_s^2) / (1 + c_s^2) W(M/G/c)
 *       (W. Whitt, "Approximations for the GI/G/m queue", Prod. Oper. Manag.
 *        2 (1993) 114-161; exact when c_a^2 = 1),
 *     with P(W > 0) interpolated the same way between the exact M/D/c and
 *     M/M/c values and the wait, given it is positive, exponential with the
 *     matching mean (exact for M/M/c);
 *   departures, QNA eq. (39):
 *     c_d^2 = 1 + (1 - rho^2)(c_a^2 - 1) + rho^2 (c_s^2 - 1) / sqrt(c)
 *     (exact for M/M/c: Burke's theorem gives Poisson departures, c_d^2 = 1).
 * Round robin gives each server every c-th arrival: a GI/G/1 queue at rate
 * lambda / c with c_a^2 / c.  Join-the-shortest-queue has no such form and is
 * solved as fcfs (a central queue is what JSQ approximates; its mean wait is
 * a lower bound for JSQ).  Heavy-light splits the stream (QNA splitting:
 * c_a^2 -> p c_a^2 + 1 - p for the fraction p) into two FCFS pools, each with
 * the service law of its class, and merges their departures
 * (c_d^2 = sum_i p_i c_d,i^2).  The stage's sojourn is its wait plus its own
 * service, P(W + S <= t) = E_S[P(W <= t - S)], with the law of S: a point
 * mass (const), Erlang (exp, repeat k), the empirical law over the trace's
 * requests (token-dependent services), or for a token-dependent service
 * repeated k > 1 times a gamma law with the mean and SCV of the k-fold sum.
 *
 *
 * ---- Spacing: stages that never wait
 *
 * Let G(k) be a lower bound on a_n - a_{n-k} for the arrival times a_n of a
 * stage (G = 0 for Poisson arrivals).  A stage of c servers, FCFS (or
 * least-work, rr, jsq), whose every service is at most S_max <= G(c), never
 * queues: when request n arrives, the requests that may still be in service
 * arrived in (a_n - S_max, a_n), and there are at most c - 1 of them since
 * the c-th before n came G(c) >= S_max earlier; by induction on n no request
 * waits, so every server a request is routed to is free.  The stage is then
 * exact: W = 0, and for a constant service S its departures are its arrivals
 * shifted by S (c_d^2 = c_a^2, the same spacing; the stage adds the constant S
 * to the end-to-end law, which convolves only the other stages, so a tandem
 * with one random stage is exact end to end).  Whether it waits or not, a
 * constant-service FCFS stage starts request n no sooner than S after request
 * n - c (s_n = max(a_n, s_{n-c} + S)) and no sooner after request n - k than
 * the arrivals are apart (max(x, y) - max(u, v) >= min(x - u, y - v), by
 * induction), so its departures have
 *   G_out(k) = max(G_in(k), floor(k / c) S);
 * a stage with random service, per-server queues (rr, jsq) that wait, or a
 * heavy-light split may reorder or merge the stream, and resets G to 0.
 * Example: 1 x 0.1 s then 2 x 0.18 s then 1 x 0.08 s at any stable rate:
 * G(1) = 0.1, G(2) = 0.2 after the first stage, so the others never wait and
 * the sojourn is the M/D/1 sojourn at the first plus 0.26 s.
 *
 * The end-to-end row adds the stages: the mean sojourn is the sum of the
 * stage means; its distribution is the convolution of the stage sojourn laws
 * as if they were independent (exact for a tandem of M/M/1 queues, Reich
 * 1957, and where all but one stage are constant delays; an approximation
 * otherwise), computed on a grid of 4096 cells, which
 * adds up to (stages/2) cells of discretisation error to the quantile.
 * docs/pipeline.md measures every approximation against the simulator.
 */
#ifndef AFD_STAGES_H
#define AFD_STAGES_H

#include <stddef.h>
#include <stdint.h>

#include "afd_hw.h"
#include "afd_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum afd_service_kind {
    AFD_SERVICE_CONST = 0,
    AFD_SERVICE_EXP,
    AFD_SERVICE_AFFINE,
    AFD_SERVICE_LATENCY
} afd_service_kind;

typedef enum afd_routing {
    AFD_ROUTE_FCFS = 0,
    AFD_ROUTE_LEAST_WORK,
    AFD_ROUTE_RR,
    AFD_ROUTE_JSQ,
    AFD_ROUTE_HEAVY_LIGHT
} afd_routing;

typedef struct afd_stage {
    char name[32];
    unsigned servers; /* c >= 1 (servers are unsigned across the API) */
    afd_service_kind kind;
    double time;       /* const: seconds; exp: mean seconds */
    double a, b;       /* affine: a + b x seconds */
    int output_tokens; /* affine: x = output tokens (else prompt) */
    int decode_phase;  /* latency: 1 decode, 0 prefill */
    afd_routing routing;
    double split;      /* heavy-light: light if tokens <= split */
    unsigned light_servers; /* heavy-light: servers of the light pool */
    int split_output;  /* heavy-light: split on output tokens */
    int repeat;        /* >= 1 */
    long line, column; /* where the stage starts in the document */
} afd_stage;

typedef struct afd_stages {
    size_t n;
    afd_stage *stage;
} afd_stages;

/* Parse a stage list (at most 64 stages).  Syntax errors carry jansson's
 * line and column; every other error (unknown key, wrong type, a value out
 * of range, two service kinds) the line and column of the offending value.
 * AFD_EPARSE, AFD_EINVAL; AFD_ENOMEM. */
AFD_API afd_status afd_stages_parse(const char *text, size_t len, afd_stages *out, afd_error *err);
/* Read and parse a file (at most 1 MiB).  AFD_EIO if it cannot be read. */
AFD_API afd_status afd_stages_read(const char *path, afd_stages *out, afd_error *err);
AFD_API void afd_stages_free(afd_stages *s);

/* 1 if the stage's service or routing depends on the request's tokens
 * (affine, latency, heavy-light). */
AFD_API int afd_stage_needs_tokens(const afd_stage *st);

/* One visit's service time in seconds of a request with prompt P and D
 * decode steps, for the deterministic kinds (const, affine, latency; hw
 * with sec = seconds per unit of its laws).  exp returns its mean.
 * AFD_EINVAL when a latency stage has no law of that phase in hw. */
AFD_API afd_status afd_stage_service(const afd_stage *st, const afd_hw *hw, double hw_sec, double P,
                                     double D, double *seconds);

/* The requests behind token-dependent services: n rows of (P, D). */
typedef struct afd_stage_requests {
    const uint64_t *prompt, *decode;
    size_t n;
} afd_stage_requests;

typedef struct afd_stage_result {
    double rho;                     /* utilisation lambda E[S] / c (total: the largest) */
    double wait_mean, wait_p;       /* mean and p-quantile of the wait in queue */
    double sojourn_mean, sojourn_p; /* wait + own service (repeat: all k) */
    double service_mean, service_scv;
    double ca2, cd2; /* SCV of the arrivals and departures (decomposition) */
    int exact;       /* 1: an exact M/D/c or M/M/c stage fed by Poisson arrivals */
} afd_stage_result;

typedef struct afd_pipeline_problem {
    const afd_stages *stages;
    double lambda;               /* arrivals per second, > 0 */
    double p;                    /* quantile level, 0 < p < 1 (0.9) */
    const afd_hw *hw;            /* for latency stages (may be NULL) */
    double hw_sec;               /* seconds per unit of hw */
    afd_stage_requests requests; /* for token-dependent stages */
} afd_pipeline_problem;

/* The decomposition above.  out[0..n) the stages, out[n] the end-to-end
 * row.  AFD_EUNSTABLE (err names the stage and its rho) when a stage or a
 * heavy-light pool has rho >= 1; AFD_EINVAL for a token-dependent stage
 * without requests or a latency stage without its law; AFD_ENUMERIC,
 * AFD_ENOMEM.  Outputs NAN on error. */
AFD_API afd_status afd_pipeline_solve(const afd_pipeline_problem *pb, afd_stage_result *out,
                                      afd_error *err);

#ifdef __cplusplus
}
#endif

#endif /* AFD_STAGES_H */
