/* taichi.c: the affine interference model of chunked prefill (see
 * afd_taichi.h for the derivation and its error). */
#include <config.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>

#include "afd_queue.h"
#include "afd_serving.h"
#include "afd_taichi.h"
#include "internal.h"

double afd_intensity_limit(double intercept, double slope, double tpot_slo)
{
    if (!isfinite(intercept) || !isfinite(slope) || !isfinite(tpot_slo) || !(slope > 0))
        return NAN;
    return intercept >= tpot_slo ? 0 : (tpot_slo - intercept) / slope;
}

afd_status afd_chunked_interference(const afd_chunked_params *p, afd_chunked_result *out)
{
    const afd_hw *hw;
    double P, G, t1, s, f, load, T, n, budget;
    out->tpot = out->intercept = out->slope = out->intensity = NAN;
    out->decode_batch = out->prefill_share = out->chunk_rate = NAN;
    if (p == NULL || (hw = p->hw) == NULL || !afd_hw_has_prefill(hw) || !afd_hw_has_decode(hw))
        return AFD_EINVAL;
    P = p->prompt;
    G = p->output;
    if (!(p->lambda > 0) || !isfinite(p->lambda) || !(P >= 1) || !isfinite(P) || !(G >= 2) ||
        !isfinite(G) || !(p->chunk > 1) || !isfinite(p->chunk))
        return AFD_EINVAL;
    /* the mean TPOT of afd_serving.h (C1) with fixed prompts (E[P^2] = P^2):
     * cp P = pb P + pc P^2, so lam cp P is the prefill share f, and t1 = cd */
    f = p->lambda * (hw->prefill_b * P + hw->prefill_c * P * P);
    out->prefill_share = f;
    if (afd_priv_chunked_tpot(hw, p->lambda, p->lambda, P, P * P, G, P + G / 2, &t1, &s, &load,
                              &T) != 0)
        return AFD_EUNSTABLE;
    out->slope = s;
    n = p->lambda * (G - 1) * T;
    budget = p->chunk - (1 + n);
    if (!(p->lambda * P * T <= budget)) {
        out->slope = NAN;
        return AFD_EUNSTABLE;
    }
    out->tpot = T;
    out->decode_batch = 1 + n;
    out->intercept = hw->decode_beta + t1 * (1 + n);
    out->intensity = p->lambda * P * T;
    out->chunk_rate = budget / (out->intercept + out->slope * budget);
    return AFD_OK;
}

/* ==== The three modes (see afd_taichi.h for the model and its error). */

#define Z90 1.2815515655446004 /* the 0.9 quantile of the standard normal */

const char *afd_taichi_mode_name(afd_taichi_mode mode)
{
    return mode == AFD_TAICHI_AGG      ? "agg"
           : mode == AFD_TAICHI_DISAGG ? "disagg"
                                       : "hybrid";
}

/* (value, count) of the kept requests, ordered by value */
typedef struct valcount {
    uint64_t v, c;
} valcount;

static int cmp_valcount(const void *a, const void *b)
{
    uint64_t x = ((const valcount *)a)->v, y = ((const valcount *)b)->v;
    return (x > y) - (x < y);
}

/* q[i] = the value of row floor((i + 0.5) / nq n) (0-based) of the
 * n = sum c requests sorted by value, i < nq; vc is sorted here. */
static void count_quantiles(valcount *vc, size_t m, uint64_t n, double *q, size_t nq)
{
    size_t i, j = 0;
    uint64_t below = 0; /* requests in vc[0 .. j) */
    qsort(vc, m, sizeof *vc, cmp_valcount);
    for (i = 0; i < nq; i++) {
        uint64_t r = (uint64_t)((i + 0.5) / (double)nq * (double)n);
        while (j + 1 < m && below + vc[j].c <= r)
            below += vc[j++].c;
        q[i] = (double)vc[j].v;
    }
}

#define GEXACT (AFD_TAICHI_GN / 2) /* output lengths kept exactly */

/* The output law of the geometric model on {1, 2, ...} with mean mu: P(G = g)
 * = p (1 - p)^(g - 1), p = 1 / mu, exactly for g <= GEXACT; beyond, G - GEXACT
 * is again geometric with mean mu (memoryless), cut into GEXACT bins of equal
 * mass at its quantiles (i + 1/2) / GEXACT. */
static void output_law_geometric(double mu, afd_taichi_lengths *out)
{
    double p = 1 / mu, rest = 1;
    unsigned g, i;
    out->output_n = 0;
    if (!(mu > 1)) {
        out->output_v[0] = 1;
        out->output_w[0] = 1;
        out->output_n = 1;
        return;
    }
    for (g = 1; g <= GEXACT; g++) {
        out->output_v[out->output_n] = g;
        out->output_w[out->output_n++] = rest * p;
        rest *= 1 - p;
    }
    for (i = 0; i < GEXACT; i++) {
        double u = (i + 0.5) / GEXACT, k = ceil(log1p(-u) / log1p(-p));
        out->output_v[out->output_n] = GEXACT + (k < 1 ? 1 : k);
        out->output_w[out->output_n++] = rest / GEXACT;
    }
}

/* The output law of a trace's rows: each length <= GEXACT with its share of
 * the rows, the longer ones in GEXACT bins of equal mass at their quantiles.
 * AFD_ENOMEM. */
static afd_status output_law_trace(const afd_workload *w, afd_taichi_lengths *out)
{
    size_t i, m = afd_workload_entries(w), nl = 0;
    double cnt[GEXACT + 1], n = 0, nlong = 0;
    valcount *vc = m <= SIZE_MAX / sizeof *vc ? malloc(m * sizeof *vc) : NULL;
    if (vc == NULL)
        return AFD_ENOMEM;
    memset(cnt, 0, sizeof cnt);
    for (i = 0; i < m; i++) {
        afd_workload_pair e = afd_workload_entry(w, i);
        n += (double)e.count;
        if (e.decode <= GEXACT) {
            cnt[e.decode] += (double)e.count;
        } else {
            vc[nl].v = e.decode;
            vc[nl++].c = e.count;
            nlong += (double)e.count;
        }
    }
    out->output_n = 0;
    for (i = 0; i <= GEXACT; i++)
        if (cnt[i] > 0) {
            out->output_v[out->output_n] = i;
            out->output_w[out->output_n++] = cnt[i] / n;
        }
    if (nl > 0) {
        double q[GEXACT];
        count_quantiles(vc, nl, (uint64_t)nlong, q, GEXACT);
        for (i = 0; i < GEXACT; i++) {
            out->output_v[out->output_n] = q[i];
            out->output_w[out->output_n++] = nlong / n / GEXACT;
        }
    }
    free(vc);
    return AFD_OK;
}

afd_status afd_taichi_lengths_of(const afd_workload *w, double prompt, double output,
                                 afd_taichi_lengths *out)
{
    size_t i;
    out->prompt_mean = out->prompt_m2 = out->prompt_max = NAN;
    out->output_mean = out->theta = out->nu = NAN;
    out->prompt_m3 = out->prompt_m4 = NAN;
    out->workload = w;
    out->output_n = 0;
    for (i = 0; i < AFD_TAICHI_PQ; i++)
        out->prompt_q[i] = out->output_q[i] = 0;
    if (w == NULL) {
        if (!(prompt >= 1 && output >= 1 && isfinite(prompt) && isfinite(output)))
            return AFD_EINVAL;
        out->prompt_mean = out->prompt_max = prompt;
        out->prompt_m2 = prompt * prompt;
        out->prompt_m3 = out->prompt_m2 * prompt;
        out->prompt_m4 = out->prompt_m2 * out->prompt_m2;
        out->output_mean = output;
        out->output_v[0] = output;
        out->output_w[0] = 1;
        out->output_n = 1;
        /* Lemma 4.1 with D = G fixed: Y = P + a, a uniform on 0 .. G - 1 */
        out->theta = prompt + (output - 1) / 2;
        out->nu = sqrt((output * output - 1) / 12);
        return AFD_OK;
    }
    if (w->kind == AFD_WORKLOAD_GEOMETRIC) {
        double mp = w->mu_p;
        if (!(mp >= 1 && w->mu_d >= 1))
            return AFD_EINVAL;
        /* Geometric on {1, 2, ...} with mean mu: Var = mu (mu - 1) */
        out->prompt_mean = mp;
        out->prompt_m2 = 2 * mp * mp - mp;
        {
            /* E[P^n] = p Li_{-n}(q) / q, q = 1 - p: (1 + 4q + q^2) / p^3 and
             * (1 + 11q + 11q^2 + q^3) / p^4 (the polylogarithm of negative
             * order, Eulerian numbers) */
            double pp = 1 / mp, q = 1 - pp;
            out->prompt_m3 = (1 + 4 * q + q * q) / (pp * pp * pp);
            out->prompt_m4 = (1 + 11 * q + 11 * q * q + q * q * q) / (pp * pp * pp * pp);
        }
        output_law_geometric(w->mu_d, out);
        /* the 0.999 quantile: P(P > k) = (1 - 1/mu)^k */
        out->prompt_max = mp > 1 ? ceil(log(1e-3) / log1p(-1 / mp)) : 1;
        out->output_mean = w->mu_d;
        for (i = 0; i < AFD_TAICHI_PQ; i++) {
            double u = (i + 0.5) / AFD_TAICHI_PQ, k = mp > 1 ? ceil(log1p(-u) / log1p(-1 / mp)) : 1;
            out->prompt_q[i] = k < 1 ? 1 : k;
            k = w->mu_d > 1 ? ceil(log1p(-u) / log1p(-1 / w->mu_d)) : 1;
            out->output_q[i] = k < 1 ? 1 : k;
        }
    } else if (w->kind == AFD_WORKLOAD_TRACE && afd_workload_entries(w) > 0) {
        /* the kept rows, or the distinct pairs each standing for count rows */
        double s1 = 0, s2 = 0, s3 = 0, s4 = 0, sg = 0, mx = 0, n = 0;
        afd_status st;
        size_t m = afd_workload_entries(w);
        valcount *vc = m <= SIZE_MAX / sizeof *vc ? malloc(m * sizeof *vc) : NULL;
        if (vc == NULL)
            return AFD_ENOMEM;
        for (i = 0; i < m; i++) {
            afd_workload_pair e = afd_workload_entry(w, i);
            double pp = (double)afd_workload_prompt_tokens(e), c = (double)e.count;
            s1 += c * pp;
            s2 += c * pp * pp;
            s3 += c * pp * pp * pp;
            s4 += c * pp * pp * pp * pp;
            sg += c * (double)e.decode;
            n += c;
            if (pp > mx)
                mx = pp;
            vc[i].v = afd_workload_prompt_tokens(e);
            vc[i].c = e.count;
        }
        count_quantiles(vc, m, (uint64_t)n, out->prompt_q, AFD_TAICHI_PQ);
        count_quantiles(vc, m, (uint64_t)n, out->prompt_fine, AFD_TAICHI_PF);
        for (i = 0; i < m; i++) {
            afd_workload_pair e = afd_workload_entry(w, i);
            vc[i].v = e.decode;
            vc[i].c = e.count;
        }
        count_quantiles(vc, m, (uint64_t)n, out->output_q, AFD_TAICHI_PQ);
        free(vc);
        out->prompt_mean = s1 / n;
        out->prompt_m2 = s2 / n;
        out->prompt_m3 = s3 / n;
        out->prompt_m4 = s4 / n;
        out->prompt_max = mx;
        if ((st = output_law_trace(w, out)) != AFD_OK)
            return st;
        out->output_mean = sg / n;
        if (!(out->prompt_mean >= 1))
            return AFD_EINVAL;
    } else {
        return AFD_EINVAL;
    }
    out->theta = w->stats.theta;
    out->nu = w->stats.nu;
    if (!(out->theta > 0) || !(out->nu >= 0))
        return AFD_EINVAL;
    return AFD_OK;
}

afd_status afd_decode_memory(double decodes, double decode_rate, double theta, double nu,
                             double z, double mark, double jump, afd_kv_memory *out)
{
    double u;
    out->mean = out->sd = out->margin = out->p_over = out->excess = NAN;
    out->flow_share = out->flow_rate = NAN;
    if (!(decodes >= 0 && isfinite(decodes)) || !(decode_rate >= 0 && isfinite(decode_rate)) ||
        !(theta > 0 && isfinite(theta)) || !(nu >= 0 && isfinite(nu)) || !isfinite(z) ||
        !(mark > 0) || !(jump >= 0 && isfinite(jump)))
        return AFD_EINVAL;
    /* compound Poisson: E[K] = n theta, Var K = n E[Y^2] */
    out->mean = decodes * theta;
    out->sd = sqrt(decodes * (nu * nu + theta * theta));
    out->margin = out->mean + z * out->sd;
    if (isinf(mark) || decodes == 0) {
        out->p_over = out->excess = out->flow_share = out->flow_rate = 0;
        return AFD_OK;
    }
    /* the Gaussian loss function E[(K - M)^+] = sd phi(u) - (M - E K) Q(u) */
    u = (mark - out->mean) / out->sd;
    out->p_over = gsl_cdf_ugaussian_Q(u);
    out->excess = out->sd * gsl_ran_ugaussian_pdf(u) - (mark - out->mean) * out->p_over;
    if (out->excess < 0)
        out->excess = 0;
    /* an arrival within a prompt of the mark pushes the instance over it */
    out->flow_share = gsl_cdf_ugaussian_Q((mark - jump - out->mean) / out->sd);
    out->flow_rate = out->flow_share * decode_rate;
    return AFD_OK;
}

double afd_taichi_prompt_tail(const afd_taichi_lengths *L, double k)
{
    const afd_workload *w;
    size_t i;
    double n = 0, tot = 0;
    if (L == NULL || isnan(k))
        return NAN;
    w = L->workload;
    if (w == NULL)
        return L->prompt_mean > k ? 1 : 0;
    if (k < 1)
        return 1; /* every length is at least 1 */
    if (w->kind == AFD_WORKLOAD_GEOMETRIC) /* P(P > k) = (1 - 1/mu)^k, k integer */
        return w->mu_p > 1 ? exp(floor(k) * log1p(-1 / w->mu_p)) : 0;
    if (w->kind != AFD_WORKLOAD_TRACE || afd_workload_entries(w) == 0)
        return NAN;
    /* the kept rows, or the distinct pairs each standing for count rows */
    for (i = 0; i < afd_workload_entries(w); i++) {
        afd_workload_pair e = afd_workload_entry(w, i);
        tot += (double)e.count;
        if ((double)e.prompt > k)
            n += (double)e.count;
    }
    return n / tot;
}

double afd_taichi_zero_load_miss(const afd_taichi_params *p)
{
    const afd_hw *hw;
    double f, slack, kmax;
    if (p == NULL || p->len == NULL || (hw = p->hw) == NULL || !(p->ttft_slo > 0) ||
        !afd_hw_has_prefill(hw) || !afd_hw_has_decode(hw))
        return NAN;
    f = hw->prefill_a < hw->decode_beta ? hw->prefill_a : hw->decode_beta;
    slack = p->ttft_slo - f;
    if (!(slack >= 0))
        return 1;
    /* the longest prompt within the SLO: the root of pc P^2 + pb P = slack,
     * in the cancellation-free form 2 slack / (pb + sqrt(pb^2 + 4 pc slack)) */
    if (hw->prefill_b > 0 || hw->prefill_c > 0)
        kmax = 2 * slack /
               (hw->prefill_b + sqrt(hw->prefill_b * hw->prefill_b + 4 * hw->prefill_c * slack));
    else
        kmax = INFINITY;
    return isinf(kmax) ? 0 : afd_taichi_prompt_tail(p->len, floor(kmax));
}

/* One kind of instance (T1): n instances of chunk S, prompts at lp and
 * decodes at ld per instance. */
struct kind {
    unsigned n, S, bmax;
    double lp, ld;
    double T, nbar, cd, cp, load, D, busy;
    double own;                   /* a prompt's own mean service (D shares the fixed time) */
    double batch;                 /* prompts sharing an iteration's fixed time, mean */
    double cs2;                   /* squared coefficient of variation of the service */
    double svc[AFD_TAICHI_PQ];    /* service of the prompt quantiles (NaN: none kept) */
    double per, fixed;            /* prompt tokens and fixed time of one iteration */
    const afd_hw *hw;             /* for the service of any prompt length */
    const afd_taichi_lengths *len;
    int limit;
};

/* The mean number of prompts that share an iteration's fixed time on an
 * instance that runs no decodes (a P-heavy one of disaggregation): an
 * iteration takes every prompt waiting when it starts (up to the chunk), so
 * under load the fixed time a is paid once for several.  Per instance, the
 * gated batch queue at rate lp (the embedded chain of M/G^[1,B]/1, Bailey,
 * J. R. Stat. Soc. B 16 (1954) 80-87, by its means): the iteration after
 * one of duration S takes the prompts that arrived during it, Poisson(lp S),
 * or, when none did, the next arrival alone after an idle time, so
 *     K = lp E[S] + q = lp (a + K E[X]) + q,  K = (lp a + q) / (1 - lp E[X]),
 * q = E[e^(-lp S)] the share of iterations that none follows, taken with
 * the batch as 1 + Poisson(K - 1) prompts of independent works X:
 *     q = e^(-lp a) phi e^(-(K - 1) (1 - phi)),  phi = E[e^(-lp X)]
 * (phi over the prompt quantiles), capped at the prompts of mean length a
 * chunk holds; a damped fixed point.  Against the exact chain (bulk.c, one
 * server, fixed prompts of work 110 ms, a = 20 ms): docs/taichi.md.  1 when
 * the prompts alone fill the instance. */
static double kind_batch(const afd_hw *hw, const afd_taichi_lengths *L, const struct kind *k)
{
    double ex = hw->prefill_b * L->prompt_mean + hw->prefill_c * L->prompt_m2;
    double a = k->fixed, rx = k->lp * ex, K = 1, cap = (double)k->S / L->prompt_mean, phi = 0;
    int it;
    size_t i;
    if (!(rx < 1) || !(a > 0) || !(cap > 1))
        return 1;
    if (L->prompt_q[0] >= 1)
        for (i = 0; i < AFD_TAICHI_PQ; i++) {
            double q = L->prompt_q[i];
            phi += exp(-k->lp * (hw->prefill_b * q + hw->prefill_c * q * q)) / AFD_TAICHI_PQ;
        }
    else
        phi = exp(-k->lp * ex);
    for (it = 0; it < 500; it++) {
        double q = exp(-k->lp * a - (K - 1) * (1 - phi)) * phi, nk = (k->lp * a + q) / (1 - rx);
        if (nk > cap)
            nk = cap;
        if (nk < 1)
            nk = 1;
        if (fabs(nk - K) < 1e-12)
            break;
        K = 0.5 * (K + nk);
    }
    return K;
}

static void kind_eval(const afd_hw *hw, const afd_taichi_lengths *L, unsigned bmax,
                      struct kind *k)
{
    double P = L->prompt_mean, P2 = L->prompt_m2, G = L->output_mean, m = G - 1;
    k->limit = AFD_TAICHI_LIMIT_NONE;
    k->bmax = bmax;
    k->nbar = k->busy = 0;
    k->D = k->own = NAN;
    k->batch = 1;
    /* the others in the iteration at the KV of a step, from Lemma 4.1's theta */
    if (afd_priv_chunked_tpot(hw, k->lp, k->ld, P, P2, G, afd_priv_chunked_kv(P, G, L->theta),
                              &k->cd, &k->cp, &k->load,
                              &k->T) != 0) {
        k->limit = k->ld > 0 ? AFD_TAICHI_LIMIT_DECODE : AFD_TAICHI_LIMIT_PREFILL;
        return;
    }
    if (m > 0 && k->ld > 0) {
        k->nbar = k->ld * m * k->T;
        if (1 + k->nbar > bmax) {
            k->limit = AFD_TAICHI_LIMIT_DECODE;
            return;
        }
        k->busy = 1 - exp(-k->nbar);
    }
    if (k->lp > 0) {
        double s = (double)k->S - k->nbar, idle = exp(-k->nbar), nit, a_eff;
        if (k->ld > 0 && m > 0 && k->lp * P * k->T > (double)k->S - 1 - k->nbar) {
            k->limit = AFD_TAICHI_LIMIT_PREFILL; /* the chunk's budget (C2) */
            return;
        }
        if (!(s >= 1)) {
            k->limit = AFD_TAICHI_LIMIT_PREFILL;
            return;
        }
        /* (C3), at each prompt quantile when they are kept (T2) */
        a_eff = hw->decode_beta * (1 - idle) + hw->prefill_a * idle;
        k->per = s;
        k->fixed = a_eff + k->nbar * k->cd;
        k->hw = hw;
        k->len = L;
        k->batch = k->ld > 0 ? 1 : kind_batch(hw, L, k);
        k->cs2 = 0;
        k->svc[0] = NAN;
        if (L->prompt_q[0] >= 1) {
            double m1 = 0, m2 = 0, nm = 0;
            size_t i;
            for (i = 0; i < AFD_TAICHI_PQ; i++) {
                double q = L->prompt_q[i], w = hw->prefill_b * q + hw->prefill_c * q * q, d;
                nit = ceil(q / s - 1e-9);
                nm += nit / AFD_TAICHI_PQ;
                k->svc[i] = nit * k->fixed + w;
                d = nit * k->fixed / k->batch + w; /* the queue's share of it */
                m1 += d / AFD_TAICHI_PQ;
                m2 += d * d / AFD_TAICHI_PQ;
            }
            k->cs2 = m2 > m1 * m1 ? (m2 - m1 * m1) / (m1 * m1) : 0;
            nit = nm;
        } else {
            nit = ceil(P / s - 1e-9);
        }
        k->own = nit * k->fixed + hw->prefill_b * P + hw->prefill_c * P2;
        k->D = nit * k->fixed / k->batch + hw->prefill_b * P + hw->prefill_c * P2;
        if (!(k->lp * k->D < 1)) {
            k->limit = AFD_TAICHI_LIMIT_PREFILL;
            return;
        }
    }
}

/* The service of a prompt of P tokens on kind k (C3): ceil(P / per)
 * iterations of the fixed time plus its prefill work. */
static double kind_svc(const struct kind *k, double P)
{
    return ceil(P / k->per - 1e-9) * k->fixed + k->hw->prefill_b * P + k->hw->prefill_c * P * P;
}

/* The share of the prompts whose own service on kind k exceeds budget, over
 * the whole prompt law (afd_taichi_prompt_tail at the longest prompt within
 * it, found by bisection: the service grows with P).  The quantiles carry
 * the rest of the TTFT law, but the share they cannot meet even without a
 * wait is a tail of a few percent where the SLO is tight, finer than a
 * quantile's 1/AFD_TAICHI_PQ: it is taken from the law itself. */
static double kind_svc_tail(const struct kind *k, double budget)
{
    double lo = 0, hi = 1;
    if (!(budget >= kind_svc(k, 1)))
        return 1;
    while (kind_svc(k, hi) <= budget && hi < 1e15)
        hi *= 2;
    while (hi - lo > 1) { /* svc(lo) <= budget < svc(hi), lo and hi integers */
        double mid = floor((lo + hi) / 2);
        if (kind_svc(k, mid) <= budget)
            lo = mid;
        else
            hi = mid;
    }
    return afd_taichi_prompt_tail(k->len, lo);
}

/* The prompt work of the mates that join a waiting prompt's iteration after
 * it on an instance that runs no decodes (kind_batch): an iteration takes
 * every prompt waiting when it starts, so a prompt that waits shares its
 * iteration with those that arrive during the rest of the one in service,
 * lp E[X] E[R] on average.  R is the residual of the iteration S = a + the
 * works of its K prompts that an arrival finds in service.  On one instance
 * it is length-biased: E[R] = E[S^2] / (2 E[S]) (the inspection paradox;
 * Kleinrock 1975, Queueing Systems I, 5.2), with the batch at its mean
 * Kbar, so Var S = Kbar Var X, the prompts' spread (E[S] / 2, the unbiased
 * half, left the long prompts' iterations out: the TTFT attainment of 1:3
 * at docs/taichi.md's 500/200 check 0.008 high; the spread of K as well,
 * 1 + Poisson(Kbar - 1), takes the mean TTFT of fixed prompts above the
 * exact chain's, batched_whole_prompts in test_taichi.c).  On several the
 * router sends a prompt to the fewest queued tokens, the instance whose
 * iteration tends to end first, and E[S] / 2 is what the simulator shows
 * (the biased residual made the TTFT attainment of 2:2 and 3:1 0.03 low at
 * both checks).  0 where the prompts are not batched. */
static double kind_mates(const struct kind *k)
{
    const afd_hw *hw = k->hw;
    const afd_taichi_lengths *L = k->len;
    double ex, ex2, es, vs;
    if (!(k->batch > 1))
        return 0;
    ex = hw->prefill_b * L->prompt_mean + hw->prefill_c * L->prompt_m2;
    ex2 = hw->prefill_b * hw->prefill_b * L->prompt_m2 +
          2 * hw->prefill_b * hw->prefill_c * L->prompt_m3 +
          hw->prefill_c * hw->prefill_c * L->prompt_m4;
    es = k->fixed + k->batch * ex;
    vs = k->batch * (ex2 - ex * ex);
    return k->lp * ex * (k->n == 1 ? (es * es + vs) / (2 * es) : es / 2);
}

#define SLOT_NQ 16 /* quantiles of the wait for a decode slot */

/* The wait for one of the bmax decode slots of kind k: a sequence holds a
 * slot for its decode life m T plus `extra` (its prefill, when it is
 * prefilled where it decodes), so the slots are M/M/bmax (geometric
 * outputs: lives near exponential) with offered load ld (m T + extra), and
 * a newcomer waits with Erlang's C probability *p, an exponential time of
 * mean *w = life / (bmax - a) (Kleinrock 1975, Queueing Systems I, 3.5).
 * While one waits every slot is held and the steps are those of a full
 * batch, so the wait's length takes the lives, and the offered load a, at
 * that step; the probability too with at_full (a decode handed over to a
 * decode-only instance: disagg_near_slots in test_taichi.c), else at the
 * mean step T (a prompt on an instance that also prefills: at the full
 * step the TTFT attainment of aggregation at docs/taichi.md's 500/200 check
 * came out 0.04 low at 28 requests/s). */
static void slot_wait(const struct kind *k, double m, double extra, int at_full, double *p,
                      double *w)
{
    double full, life, a;
    *p = *w = 0;
    if (!(k->nbar > 0 && m > 0))
        return;
    full = k->T + (k->bmax - 1 - k->nbar) * k->cd;
    life = m * full + extra;
    a = k->ld * life;
    if (!(a < k->bmax)) {
        *p = 1;
        *w = INFINITY;
        return;
    }
    *p = afd_erlang_c(at_full ? a : k->ld * (m * k->T + extra), k->bmax);
    *w = life / (k->bmax - a);
    if (!(*p > 1e-9))
        *p = 0;
}

static afd_status kind_ttft_cdf0(const struct kind *k, double t, double *cdf, double *mean);

/* P(TTFT <= t) of a kind: kind_ttft_cdf0, after the wait for a decode slot
 * when the kind's prompts decode where they are prefilled (an instance
 * admits a prompt only while its sequences, running or being prefilled,
 * number fewer than bmax): that wait is the slot_wait of a life m T plus the
 * prompt's own service, at SLOT_NQ midpoint quantiles of its exponential
 * law.  Near the slots' limit it is what makes the TTFT bind first. */
static afd_status kind_ttft_cdf(const struct kind *k, double t, double *cdf, double *mean)
{
    double ps = 0, ws = 0, m = k->len != NULL ? k->len->output_mean - 1 : 0, acc = 0, c, mu;
    afd_status st = kind_ttft_cdf0(k, t, cdf, mean);
    unsigned i;
    if (st != AFD_OK || !(k->ld > 0))
        return st;
    slot_wait(k, m, k->own, 0, &ps, &ws);
    if (!(ps > 0))
        return st;
    if (isinf(ws)) {
        *cdf = 0;
        *mean = INFINITY;
        return AFD_OK;
    }
    for (i = 0; i < SLOT_NQ && st == AFD_OK; i++) {
        st = kind_ttft_cdf0(k, t + ws * log1p(-(i + 0.5) / SLOT_NQ), &c, &mu);
        acc += c / SLOT_NQ;
    }
    if (st != AFD_OK)
        return st;
    *cdf = (1 - ps) * *cdf + ps * acc;
    *mean += ps * ws;
    return AFD_OK;
}

/* P(TTFT <= t) of a kind before any slot wait: the M/G/n wait (M/D/n's
 * stretched by 1 + cs^2) plus the prompt's service plus the mean rest of
 * the iteration in flight (C4), averaged over the prompt quantiles (T2). */
static afd_status kind_ttft_cdf0(const struct kind *k, double t, double *cdf, double *mean)
{
    afd_mdc *q;
    afd_result r, w;
    afd_status st;
    double rest = k->busy * k->T / 2, stretch = 1 + k->cs2, acc = 0, tail = 0, p0 = 1;
    double mates = kind_mates(k);
    size_t i, nq = isnan(k->svc[0]) ? 1 : AFD_TAICHI_PQ, kept = 0;
    st = afd_mdc_alloc(k->lp * k->n, k->D, (int)k->n, &q);
    if (st != AFD_OK)
        return st == AFD_ENOMEM ? AFD_EUNSTABLE : st;
    st = afd_mdc_wq_e(q, &w);
    if (st == AFD_OK && mates > 0 && (st = afd_mdc_wait_cdf_e(q, 0, &r)) == AFD_OK)
        p0 = r.val;
    *mean = st == AFD_OK ? w.val * stretch + (1 - p0) * mates + k->own + rest : NAN;
    if (nq > 1)
        tail = kind_svc_tail(k, t - rest);
    for (i = 0; i < nq && st == AFD_OK; i++) {
        double x = (t - (nq == 1 ? k->own : k->svc[i]) - rest) / stretch;
        r.val = 0;
        if (x < 0)
            continue; /* in the tail */
        if (mates > 0) {
            /* no wait: served at once, alone; a wait: the mates join, and
             * the wait, given that there is one, is taken exponential with
             * the queue's mean, E[W] / P(W > 0): M/D/n's law stretched
             * keeps the mean but not the tail, which the long prompts'
             * residuals make near exponential (M/G/1's conditional wait is
             * a geometric sum of residuals, Pollaczek-Khinchine: Kleinrock
             * 1975, Queueing Systems I, 5.7; its tail is exponential, the
             * Cramer-Lundberg approximation: Asmussen 2003, Applied
             * Probability and Queues).  Against the simulator:
             * docs/taichi.md. */
            double xm = x - mates / stretch, pw = 1 - p0, ew = w.val * stretch;
            if (xm < 0)
                acc += p0; /* met only without a wait */
            else
                acc += pw > 0 && ew > 0 ? 1 - pw * exp(-xm * stretch * pw / ew) : 1;
        } else {
            st = afd_mdc_wait_cdf_e(q, x, &r);
            acc += r.val;
        }
        kept++;
    }
    afd_mdc_free(q);
    /* the quantiles within the budget stand for the 1 - tail of the law
     * within it (with none left, the shortest prompt's wait) */
    if (st == AFD_OK && nq > 1 && kept == 0 && tail < 1) {
        st = afd_mdc_alloc(k->lp * k->n, k->D, (int)k->n, &q);
        if (st == AFD_OK) {
            r.val = 0;
            st = afd_mdc_wait_cdf_e(q, (t - kind_svc(k, 1) - rest) / stretch, &r);
            afd_mdc_free(q);
            acc = r.val;
            kept = 1;
        }
    }
    *cdf = st != AFD_OK ? NAN : nq == 1 ? acc : kept == 0 ? 0 : (1 - tail) * acc / (double)kept;
    return st == AFD_ENOMEM ? AFD_EUNSTABLE : st;
}

/* An upper bound of P(TTFT <= t) of a kind: no wait at all. */
static double kind_ttft_ub(const struct kind *k, double t)
{
    double rest = k->busy * k->T / 2, acc = 0;
    size_t i, nq = isnan(k->svc[0]) ? 1 : AFD_TAICHI_PQ;
    if (nq > 1)
        return 1 - kind_svc_tail(k, t - rest);
    for (i = 0; i < nq; i++)
        acc += (t - (nq == 1 ? k->own : k->svc[i]) - rest >= 0) / (double)nq;
    return acc;
}

/* The shortest TPOT any request can have: every iteration it takes part in
 * runs at least one sequence holding at least one KV token, so it costs at
 * least decode_beta + decode_gamma + decode_alpha (the decode step law), and
 * a TPOT is a mean of such iterations (plus transfers, which only add). */
static double tpot_floor(const afd_hw *hw)
{
    return hw->decode_beta + hw->decode_gamma + hw->decode_alpha;
}

/* The TPOT of one request on a kind (T5 of afd_taichi.h).  A request of
 * G = k + 1 tokens takes its first token from the prefill and then k
 * iterations; the simulator measures (finish - first token) / k, so
 *     TPOT = t_dec + Z + (once + R + Y) / k,
 * t_dec the mean decode part of an iteration, Z the batch's fluctuation
 * averaged over the k iterations, once the KV transfer, R the rest of the
 * iteration in flight when a handed-over decode arrives (0 when it is
 * prefilled where it decodes), Y the prefill work of the chunks in its
 * iterations. */
struct tpot_law {
    double t_dec;  /* T (1 - lp E[X]): the iteration's decode part */
    double t_iter; /* T, the mean iteration */
    double lp;     /* prompts prefilled per unit time on the instance */
    double ex, ex2; /* moments of a prompt's prefill work X = pb P + pc P^2 */
    double noise2; /* variance of the decode part of one iteration */
    double own2;   /* variance of the request's own share of it (its prompt) */
    double life;   /* the mean decode life m T: the batch's correlation time */
    double busy;   /* probability that R is drawn (the instance is busy) */
    double chunk_work; /* prefill work of one iteration's full chunk */
    double rest;   /* prefill work left undone when the window closes */
    double once;   /* time added once per request */
    double slot_p; /* probability that a handed-over decode waits for a slot */
    double slot_w; /* the mean of that wait (exponential) */
};

/* P(X <= y) for one prompt's prefill work X = pb P + pc P^2, over the whole
 * prompt law: P <= the root of pc P^2 + pb P = y. */
static double work_cdf(const afd_hw *hw, const afd_taichi_lengths *L, double y)
{
    double r;
    if (y < 0)
        return 0;
    if (!(hw->prefill_b > 0 || hw->prefill_c > 0))
        return 1;
    r = 2 * y / (hw->prefill_b + sqrt(hw->prefill_b * hw->prefill_b + 4 * hw->prefill_c * y));
    if (L->workload != NULL && L->workload->kind == AFD_WORKLOAD_TRACE) {
        /* the share of the fine quantiles <= floor(r), by bisection (the
         * trace's own tail is a pass over its rows: too slow here) */
        size_t lo = 0, hi = AFD_TAICHI_PF;
        r = floor(r);
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (L->prompt_fine[mid] <= r)
                lo = mid + 1;
            else
                hi = mid;
        }
        return (double)lo / AFD_TAICHI_PF;
    }
    return 1 - afd_taichi_prompt_tail(L, floor(r));
}

/* psi(y) = E[(y - Z)^+] for Z ~ Normal(0, sd): y Phi(y / sd) + sd phi(y / sd). */
static double normal_loss(double y, double sd)
{
    if (!(sd > 0))
        return y > 0 ? y : 0;
    return y * gsl_cdf_ugaussian_P(y / sd) + sd * gsl_ran_ugaussian_pdf(y / sd);
}

/* P(Z + a U <= x), Z ~ Normal(0, sd), U uniform on (0, 1) (the convolution:
 * (psi(x) - psi(x - a)) / a). */
static double normal_uniform_cdf(double x, double a, double sd)
{
    if (!(a > 0))
        return sd > 0 ? gsl_cdf_ugaussian_P(x / sd) : (x >= 0 ? 1 : 0);
    return (normal_loss(x, sd) - normal_loss(x - a, sd)) / a;
}

/* The variance of the mean over an interval of x correlation times of a
 * stationary process with autocorrelation e^(-u / tau), in units of its own
 * variance: (2 / x) int_0^x (1 - u / x) e^-u du = 2 / x (1 - (1 - e^-x) / x)
 * (the variance of a time average; Papoulis and Pillai, Probability, Random
 * Variables and Stochastic Processes, 4th ed., mean-ergodic processes). */
static double average_factor(double x)
{
    if (!(x > 1e-6))
        return 1;
    return 2 / x * (1 + expm1(-x) / x);
}

/* P(TPOT <= slo) of a request of k >= 1 iterations.  Y is compound Poisson
 * (the prompts arriving in the k iterations, N ~ Poisson(mu), mu = lp k T):
 * the term N = 0 is exact with Z and R (Normal convolved with uniform), N =
 * 1 is X's own law at the slack left after the mean of Z + R / k, N >= 2 a
 * gamma with the mean and variance of the N works plus Z + R / k's variance
 * (the sum of N >= 2 skewed works is near a gamma); past mu = 40 the whole
 * compound Poisson is that gamma. */
static double tpot_cdf_k(const afd_hw *hw, const afd_taichi_lengths *L,
                         const struct tpot_law *t, double k, double slo)
{
    double s = slo - t->t_dec - t->once / k, a = t->t_iter / k;
    double sz2 = t->noise2 * average_factor(k * t->t_iter / t->life) + t->own2, sz = sqrt(sz2);
    double ev = t->busy * a / 2, vv = sz2 + t->busy * a * a / 3 - ev * ev;
    double mu = t->lp * k * t->t_iter, y = k * (s - ev), vx = t->ex2 - t->ex * t->ex;
    double acc, pj, yr;
    unsigned j, jmax;
    if (!(mu > 0) || !(t->ex > 0))
        return (1 - t->busy) * normal_uniform_cdf(s, 0, sz) +
               t->busy * normal_uniform_cdf(s, a, sz);
    if (!(y > 0) && mu <= 40)
        return exp(-mu) * ((1 - t->busy) * normal_uniform_cdf(s, 0, sz) +
                           t->busy * normal_uniform_cdf(s, a, sz));
    yr = y + t->rest;
    if (mu > 40) {
        double mean = mu * t->ex, var = mu * t->ex2 + k * k * vv;
        return gsl_cdf_gamma_P(yr, mean * mean / var, var / mean);
    }
    acc = exp(-mu) * ((1 - t->busy) * normal_uniform_cdf(s, 0, sz) +
                      t->busy * normal_uniform_cdf(s, a, sz));
    pj = exp(-mu) * mu;
    /* one prompt, arriving at a uniform point of the window, is prefilled at
     * most a chunk per iteration: its share is min(X, U k x_c), so only a
     * prompt that arrives early enough can spend the slack */
    acc += pj * (1 - (1 - work_cdf(hw, L, y)) *
                         (t->chunk_work > y / k ? 1 - y / (k * t->chunk_work) : 0));
    jmax = (unsigned)(mu + 10 * sqrt(mu) + 10);
    for (j = 2; j <= jmax; j++) {
        double mean = j * t->ex, var = j * vx + k * k * vv, g;
        pj *= mu / j;
        g = gsl_cdf_gamma_P(yr, mean * mean / var, var / mean);
        acc += pj * g;
        if (g < 1e-12 && mean > yr)
            break; /* falls with j from here on */
    }
    return acc;
}

/* P(TPOT <= slo) over the output law (a request of one token has no TPOT
 * and counts as meeting it); an SLO below the floor is met by none. */
static double tpot_below(const afd_hw *hw, const afd_taichi_lengths *L, double slo,
                         const struct tpot_law *t)
{
    double acc = 0;
    unsigned j, i;
    if (slo < tpot_floor(hw))
        return 0;
    for (j = 0; j < L->output_n; j++) {
        double k = L->output_v[j] - 1, f;
        if (!(k >= 1)) {
            acc += L->output_w[j];
            continue;
        }
        f = tpot_cdf_k(hw, L, t, k, slo);
        if (t->slot_p > 0) {
            /* the wait for a slot, once: its exponential law at SLOT_NQ
             * midpoint quantiles */
            struct tpot_law tw = *t;
            double fw = 0;
            for (i = 0; i < SLOT_NQ; i++) {
                tw.once = t->once - t->slot_w * log1p(-(i + 0.5) / SLOT_NQ);
                fw += tpot_cdf_k(hw, L, &tw, k, slo) / SLOT_NQ;
            }
            f = (1 - t->slot_p) * f + t->slot_p * fw;
        }
        acc += L->output_w[j] * f;
    }
    return acc;
}

/* The TPOT law of the decodes of kind k: handed over (busy: they wait for
 * the iteration in flight) or prefilled there, with `once` added. */
static struct tpot_law kind_tpot_law(const afd_hw *hw, const afd_taichi_lengths *L,
                                     const struct kind *k, int handed, double once)
{
    struct tpot_law t;
    double y2 = L->theta * L->theta + L->nu * L->nu, m = L->output_mean - 1;
    double c2 = hw->decode_gamma * hw->decode_gamma +
                2 * hw->decode_gamma * hw->decode_alpha * L->theta +
                hw->decode_alpha * hw->decode_alpha * y2;
    double P = L->prompt_mean, pb = hw->prefill_b, pc = hw->prefill_c;
    t.ex = pb * P + pc * L->prompt_m2;
    t.ex2 = pb * pb * L->prompt_m2 + 2 * pb * pc * L->prompt_m3 + pc * pc * L->prompt_m4;
    t.lp = k->lp;
    t.t_iter = k->T;
    t.t_dec = k->T * (1 - k->lp * t.ex);
    /* the others decoding: Poisson(nbar) sequences (M/G/infinity, PASTA),
     * each costing gamma + alpha Y, Y the KV tokens of Lemma 4.1 */
    t.noise2 = k->nbar * c2;
    t.own2 = hw->decode_alpha * hw->decode_alpha * (L->prompt_m2 - P * P);
    t.life = m > 0 ? m * k->T : 1;
    t.busy = handed ? k->busy : 0;
    t.rest = 0;
    t.chunk_work = k->cp * ((double)k->S - 1 - k->nbar);
    if (!(t.chunk_work > 0))
        t.chunk_work = INFINITY;
    t.once = once;
    /* a decode handed over waits for one of the bmax slots when all hold a
     * sequence: the decodes are M/M/bmax with offered load nbar (their lives
     * m T, geometric outputs: near exponential), so it waits with Erlang's C
     * probability, an exponential time of mean m T / (bmax - nbar) (Kleinrock
     * 1975, Queueing Systems I, 3.5); a decode prefilled where it decodes
     * took its slot with its prompt */
    t.slot_p = t.slot_w = 0;
    if (handed)
        slot_wait(k, m, 0, 1, &t.slot_p, &t.slot_w);
    return t;
}

/* The prompts' rate on a decoding request's instance over lp, under
 * Algorithm 2's routing on N uniform instances: among the instances whose
 * estimate meets the TTFT SLO, the fewest queued prompt tokens, ties (every
 * prefill queue empty, the common case) to the smallest estimate, that is
 * to the fewest running decodes.  With the decode counts kept balanced by
 * that choice (they differ by at most one), M decodes in all (the request
 * and Poisson(N nbar) others, PASTA), an instance holding the request is
 * the one chosen with probability floor(M / N) / M: it is among the N - r
 * at the minimum q = floor(M / N) (r = M mod N) with probability
 * (N - r) q / M, a random decode lying on an instance in proportion to its
 * count, and is then one of N - r.  Against 1 / N for an even split:
 *     f = N E[floor(M / N) / M].
 * A prompt that no instance can prefill within the SLO even without decodes
 * (ceil(P / S) prefill_a + pb P + pc P^2 > ttft_slo) goes to a random one:
 * those keep the factor 1, weighted by their share of the prefill work
 * (over the prompt quantiles). */
static double route_share(const afd_hw *hw, const afd_taichi_lengths *L, const struct kind *k,
                          unsigned N, double ttft_slo)
{
    double lam = N * k->nbar, pj = exp(-lam), f = 0, w = 0, wi = 0;
    unsigned j, jmax = (unsigned)(lam + 12 * sqrt(lam) + 20);
    size_t i;
    if (N < 2 || !(k->nbar > 0))
        return 1;
    for (j = 0; j <= jmax; j++) {
        double M = j + 1.0;
        if (j > 0)
            pj *= lam / j;
        f += pj * floor(M / N) / M;
    }
    f *= N;
    if (L->prompt_q[0] >= 1)
        for (i = 0; i < AFD_TAICHI_PQ; i++) {
            double q = L->prompt_q[i], x = hw->prefill_b * q + hw->prefill_c * q * q;
            w += x;
            if (ceil(q / ((double)k->S - k->nbar)) * (hw->decode_beta + k->nbar * k->cd) + x >
                ttft_slo)
                wi += x;
        }
    if (w > 0)
        f += (1 - f) * wi / w;
    return f;
}

static void taichi_nan(afd_taichi_result *out)
{
    out->attainment = out->attain_ttft = out->attain_tpot = NAN;
    out->share_p = out->ttft_p = out->ttft_d = out->tpot_p = out->tpot_d = NAN;
    out->service_p = out->service_d = out->decodes_d = NAN;
    out->kv.mean = out->kv.sd = out->kv.margin = out->kv.p_over = out->kv.excess = NAN;
    out->kv.flow_share = out->kv.flow_rate = NAN;
    out->limit = AFD_TAICHI_LIMIT_NONE;
}

static int taichi_check(const afd_taichi_params *p)
{
    const afd_hw *hw;
    const afd_taichi_lengths *L = p->len;
    const afd_taichi_config *c = &p->config;
    if ((hw = p->hw) == NULL || L == NULL || !afd_hw_has_prefill(hw) || !afd_hw_has_decode(hw))
        return 0;
    if (!(hw->prefill_a >= 0 && hw->prefill_b >= 0 && hw->prefill_c >= 0 &&
          hw->decode_beta >= 0 && hw->decode_gamma >= 0 && hw->decode_alpha >= 0))
        return 0;
    if (!(L->prompt_mean >= 1 && L->prompt_mean < 1e9) ||
        !(L->prompt_m2 >= L->prompt_mean * L->prompt_mean * (1 - 1e-12)) ||
        !isfinite(L->prompt_m2) || !(L->output_mean >= 1 && L->output_mean < 1e9) ||
        !(L->theta > 0 && isfinite(L->theta)) || !(L->nu >= 0 && isfinite(L->nu)))
        return 0;
    if (c->p_heavy + c->d_heavy < 1 || c->p_heavy + c->d_heavy > 4096 || p->decode_bmax < 1)
        return 0;
    if (c->p_heavy > 0 && c->chunk_p <= p->decode_bmax)
        return 0;
    if (c->d_heavy > 0 && c->chunk_d != 0 && c->chunk_d <= p->decode_bmax)
        return 0;
    if (c->p_heavy == 0 && c->chunk_d == 0)
        return 0; /* nothing prefills */
    if (!(p->kv_capacity > 0) || !(p->watermark >= 0 && p->watermark <= 1) ||
        !(p->kv_time >= 0 && isfinite(p->kv_time)) || !(p->ttft_slo > 0) ||
        !(p->tpot_slo > 0))
        return 0;
    return 1;
}

/* The attainment of the model (T1)-(T4); with need > 0, it may stop early
 * with an upper bound of the attainment below need (no M/D/c solved), for
 * the goodput search. */
static afd_status attainment_model(const afd_taichi_params *p, afd_taichi_result *out,
                                   double need)
{
    const afd_taichi_config *c;
    const afd_taichi_lengths *L;
    struct kind kp, kd;
    double lam, m, mark, sp, x, ft_p = 0, ft_d = 0;
    unsigned N, it;
    afd_status st;

    taichi_nan(out);
    if (p == NULL || !taichi_check(p) || !(p->lambda > 0 && isfinite(p->lambda)))
        return AFD_EINVAL;
    c = &p->config;
    L = p->len;
    lam = p->lambda;
    m = L->output_mean - 1;
    N = c->p_heavy + c->d_heavy;
    mark = (p->watermark > 0 ? p->watermark : 0.95) * p->kv_capacity;
    memset(&kp, 0, sizeof kp);
    memset(&kd, 0, sizeof kd);

    if (c->p_heavy == 0 || c->d_heavy == 0 || c->chunk_p == c->chunk_d) {
        /* (T2) uniform instances: aggregation */
        kp.n = N;
        kp.S = c->p_heavy > 0 ? c->chunk_p : c->chunk_d;
        kp.lp = kp.ld = lam / N;
        kind_eval(p->hw, L, p->decode_bmax, &kp);
        if (kp.limit != AFD_TAICHI_LIMIT_NONE) {
            out->limit = kp.limit;
            out->attainment = 0;
            return AFD_EUNSTABLE;
        }
        out->share_p = 1;
        out->service_p = kp.own;
        out->tpot_p = m > 0 ? kp.T : NAN;
        if (m > 0) {
            struct tpot_law tl = kind_tpot_law(p->hw, L, &kp, 0, 0);
            if (N > 1) {
                /* least-queued routing (Algorithm 2) sends the prompts that
                 * arrive while a request is prefilled to the other instances,
                 * so its window opens with no prefill queued but closes with
                 * the prompt in service left partly undone: its rest,
                 * lp E[X^2] / 2 on average (the M/G/1 residual work in
                 * service: Kleinrock 1975, Queueing Systems I, the mean
                 * residual service time seen at a random instant), is not in
                 * the window.
                 * (On one instance the prompts queued behind the request
                 * balance it.)  The router's preference for decode-idle
                 * instances is not modelled: that keeps the form low (see
                 * afd_taichi.h, Error). */
                tl.rest = kp.lp * tl.ex2 / 2;
                tl.lp *= route_share(p->hw, L, &kp, N, p->ttft_slo);
            }
            out->attain_tpot = tpot_below(p->hw, L, p->tpot_slo, &tl);
        } else {
            out->attain_tpot = 1;
        }
        if (need > 0 && out->attain_tpot * kind_ttft_ub(&kp, p->ttft_slo) < need) {
            out->attainment = out->attain_tpot * kind_ttft_ub(&kp, p->ttft_slo);
            return AFD_OK; /* an upper bound below need */
        }
        if ((st = kind_ttft_cdf(&kp, p->ttft_slo, &ft_p, &out->ttft_p)) != AFD_OK) {
            out->limit = AFD_TAICHI_LIMIT_PREFILL;
            out->attainment = 0;
            return st;
        }
        out->attain_ttft = ft_p;
        out->attainment = out->attain_ttft * out->attain_tpot;
        afd_decode_memory(kp.nbar, kp.ld, L->theta, L->nu, Z90, INFINITY, L->prompt_mean,
                          &out->kv);
        return AFD_OK;
    }

    /* (T3) two kinds: damped fixed point of the prompt split sp and the
     * flowing share x */
    kp.n = c->p_heavy;
    kp.S = c->chunk_p;
    kd.n = c->d_heavy;
    kd.S = c->chunk_d;
    sp = c->chunk_d == 0 ? 1
                         : (double)c->p_heavy * c->chunk_p /
                               ((double)c->p_heavy * c->chunk_p + (double)c->d_heavy * c->chunk_d);
    x = 0;
    for (it = 0; it < 200; it++) {
        double nsp, nx;
        kp.lp = lam * sp / kp.n;
        kp.ld = lam * x / kp.n;
        kd.lp = lam * (1 - sp) / kd.n;
        kd.ld = lam * (1 - x) / kd.n;
        kind_eval(p->hw, L, p->decode_bmax, &kp);
        kind_eval(p->hw, L, p->decode_bmax, &kd);
        if (kd.limit == AFD_TAICHI_LIMIT_DECODE && kd.lp == 0) {
            /* the decodes alone overload the D-heavy instances */
            break;
        }
        /* prompt split in proportion to the prefill capacities n / D */
        if (c->chunk_d == 0) {
            nsp = 1;
        } else {
            double cap_p = isfinite(kp.D) && kp.limit == 0 ? kp.n / kp.D : 0;
            double cap_d = isfinite(kd.D) && kd.limit == 0 ? kd.n / kd.D : 0;
            if (kp.lp == 0 && !(isfinite(kp.D)))
                cap_p = kp.n / (p->hw->prefill_a + p->hw->prefill_b * L->prompt_mean +
                                p->hw->prefill_c * L->prompt_m2);
            if (kd.lp == 0 && !(isfinite(kd.D)))
                cap_d = 0.5 * kd.n / (p->hw->decode_beta + p->hw->prefill_b * L->prompt_mean +
                                      p->hw->prefill_c * L->prompt_m2);
            nsp = cap_p + cap_d > 0 ? cap_p / (cap_p + cap_d) : sp;
        }
        /* flows across the watermark of a D-heavy instance (before flows,
         * every decode comes to the D-heavy instances) */
        nx = 0;
        if (isfinite(mark) && m > 0) {
            afd_kv_memory kv;
            struct kind kf = kd;
            kf.ld = lam / kd.n; /* the population the watermark sees: no flows yet */
            kind_eval(p->hw, L, p->decode_bmax, &kf);
            if (isfinite(kf.T) &&
                afd_decode_memory(lam / kd.n * m * kf.T, lam / kd.n, L->theta, L->nu, Z90, mark,
                                  L->prompt_mean, &kv) == AFD_OK)
                nx = kv.flow_share;
        }
        if (fabs(nsp - sp) < 1e-10 && fabs(nx - x) < 1e-10)
            break;
        sp = 0.5 * (sp + nsp);
        x = 0.5 * (x + nx);
    }
    kp.lp = lam * sp / kp.n;
    kp.ld = lam * x / kp.n;
    kd.lp = lam * (1 - sp) / kd.n;
    kd.ld = lam * (1 - x) / kd.n;
    kind_eval(p->hw, L, p->decode_bmax, &kp);
    kind_eval(p->hw, L, p->decode_bmax, &kd);
    out->share_p = sp;
    if (kp.limit != AFD_TAICHI_LIMIT_NONE || kd.limit != AFD_TAICHI_LIMIT_NONE) {
        out->limit = kd.limit == AFD_TAICHI_LIMIT_DECODE || kp.limit == AFD_TAICHI_LIMIT_DECODE
                         ? AFD_TAICHI_LIMIT_DECODE
                         : AFD_TAICHI_LIMIT_PREFILL;
        out->attainment = 0;
        return AFD_EUNSTABLE;
    }
    out->service_p = kp.lp > 0 ? kp.own : NAN;
    out->service_d = kd.lp > 0 ? kd.own : NAN;
    out->decodes_d = kd.nbar;
    {
        struct kind kf = kd;
        kf.ld = lam / kd.n;
        kind_eval(p->hw, L, p->decode_bmax, &kf);
        afd_decode_memory(isfinite(kf.T) && m > 0 ? lam / kd.n * m * kf.T : 0, lam / kd.n,
                          L->theta, L->nu, Z90, mark, L->prompt_mean, &out->kv);
    }
    if (m > 0) {
        /* not flowed: on a D-heavy instance, after a KV transfer when
         * prefilled on a P-heavy one; flowed: half the steps on each kind,
         * one more transfer */
        struct tpot_law handed = kind_tpot_law(p->hw, L, &kd, 1, p->kv_time);
        struct tpot_law local = kind_tpot_law(p->hw, L, &kd, 0, 0);
        double stay = sp * tpot_below(p->hw, L, p->tpot_slo, &handed) +
                      (1 - sp) * tpot_below(p->hw, L, p->tpot_slo, &local);
        double flow = 0;
        if (x > 0) {
            /* half the steps on each kind, one more transfer */
            struct tpot_law on_p = kind_tpot_law(p->hw, L, &kp, 1, 0), fl = handed;
            fl.t_dec = 0.5 * (handed.t_dec + on_p.t_dec);
            fl.t_iter = 0.5 * (handed.t_iter + on_p.t_iter);
            fl.lp = 0.5 * (handed.lp + on_p.lp);
            fl.noise2 = 0.5 * (handed.noise2 + on_p.noise2);
            fl.once = (sp + 1) * p->kv_time;
            flow = tpot_below(p->hw, L, p->tpot_slo, &fl);
        }
        out->tpot_d = kd.T;
        out->tpot_p = x > 0 ? kp.T : NAN;
        out->attain_tpot = (1 - x) * stay + x * flow;
    } else {
        out->attain_tpot = 1;
    }
    if (need > 0) {
        double ub = sp * (kp.lp > 0 ? kind_ttft_ub(&kp, p->ttft_slo) : 0) +
                    (1 - sp) * (kd.lp > 0 ? kind_ttft_ub(&kd, p->ttft_slo) : 0);
        if (out->attain_tpot * ub < need) {
            out->attainment = out->attain_tpot * ub;
            return AFD_OK; /* an upper bound below need */
        }
    }
    if (kp.lp > 0 && (st = kind_ttft_cdf(&kp, p->ttft_slo, &ft_p, &out->ttft_p)) != AFD_OK) {
        out->limit = AFD_TAICHI_LIMIT_PREFILL;
        out->attainment = 0;
        return st;
    }
    if (kd.lp > 0 && (st = kind_ttft_cdf(&kd, p->ttft_slo, &ft_d, &out->ttft_d)) != AFD_OK) {
        out->limit = AFD_TAICHI_LIMIT_PREFILL;
        out->attainment = 0;
        return st;
    }
    out->attain_ttft = sp * ft_p + (1 - sp) * ft_d;
    out->attainment = out->attain_ttft * out->attain_tpot;
    return AFD_OK;
}

/* The model's attainment with its TTFT part capped by the zero-load bound:
 * a request whose own prefill misses the SLO misses it at any load. */
static afd_status attainment(const afd_taichi_params *p, afd_taichi_result *out, double need)
{
    double ok0, miss;
    afd_status st;
    if (p == NULL || !taichi_check(p) || !(p->lambda > 0 && isfinite(p->lambda))) {
        taichi_nan(out);
        return AFD_EINVAL;
    }
    miss = afd_taichi_zero_load_miss(p);
    if (isnan(miss)) {
        taichi_nan(out);
        return AFD_EINVAL;
    }
    ok0 = 1 - miss;
    if (need > 0 && ok0 < need) { /* an upper bound below need, at any rate */
        taichi_nan(out);
        out->attainment = ok0;
        return AFD_OK;
    }
    st = attainment_model(p, out, need);
    if (st != AFD_OK)
        return st;
    if (isnan(out->attain_ttft)) { /* stopped early: an upper bound */
        if (out->attain_tpot * ok0 < out->attainment)
            out->attainment = out->attain_tpot * ok0;
    } else if (out->attain_ttft > ok0) {
        out->attain_ttft = ok0;
        out->attainment = out->attain_ttft * out->attain_tpot;
    }
    return AFD_OK;
}

afd_status afd_taichi_attainment(const afd_taichi_params *p, afd_taichi_result *out)
{
    return attainment(p, out, 0);
}

double afd_taichi_capacity(const afd_taichi_params *p)
{
    const afd_taichi_lengths *L;
    const afd_hw *hw;
    double cd;
    if (p == NULL || !taichi_check(p))
        return NAN;
    L = p->len;
    hw = p->hw;
    cd = hw->decode_gamma + hw->decode_alpha * (L->prompt_mean + L->output_mean / 2);
    return (double)(p->config.p_heavy + p->config.d_heavy) /
           (hw->prefill_b * L->prompt_mean + hw->prefill_c * L->prompt_m2 +
            (L->output_mean - 1) * cd);
}

const char *afd_taichi_bind_name(afd_taichi_bind b)
{
    return b == AFD_TAICHI_BIND_TTFT        ? "ttft"
           : b == AFD_TAICHI_BIND_TPOT      ? "tpot"
           : b == AFD_TAICHI_BIND_ZERO_LOAD ? "zero-load"
           : b == AFD_TAICHI_BIND_CAPACITY  ? "capacity"
           : b == AFD_TAICHI_BIND_TIE       ? "ttft=tpot"
                                            : "none";
}

afd_taichi_bind afd_taichi_bind_of(double goodput, double attain_ttft, double attain_tpot)
{
    if (isnan(goodput) || isnan(attain_ttft) || isnan(attain_tpot))
        return AFD_TAICHI_BIND_NONE;
    if (attain_ttft < attain_tpot)
        return goodput > 0 ? AFD_TAICHI_BIND_TTFT : AFD_TAICHI_BIND_ZERO_LOAD;
    return AFD_TAICHI_BIND_TPOT;
}

afd_status afd_taichi_binding(const afd_taichi_params *p, double goodput, double target,
                              double rel_tol, afd_taichi_bind *out)
{
    afd_taichi_params q;
    afd_taichi_result r;
    afd_status st;
    *out = AFD_TAICHI_BIND_NONE;
    if (p == NULL || !taichi_check(p) || !(goodput >= 0 && isfinite(goodput)) ||
        !(target > 0 && target < 1) || !(rel_tol > 0 && rel_tol < 1))
        return AFD_EINVAL;
    q = *p;
    if (goodput > 0) {
        q.lambda = goodput * (1 + rel_tol);
        st = afd_taichi_attainment(&q, &r);
        if (st == AFD_EUNSTABLE) {
            *out = AFD_TAICHI_BIND_CAPACITY;
            return AFD_OK;
        }
        if (st != AFD_OK)
            return st;
        q.lambda = goodput;
    } else {
        if (1 - afd_taichi_zero_load_miss(p) < target) {
            *out = AFD_TAICHI_BIND_ZERO_LOAD;
            return AFD_OK;
        }
        q.lambda = 1e-4 * afd_taichi_capacity(p);
    }
    st = afd_taichi_attainment(&q, &r);
    if (st == AFD_EUNSTABLE)
        return AFD_OK;
    if (st != AFD_OK)
        return st;
    *out = afd_taichi_bind_of(goodput, r.attain_ttft, r.attain_tpot);
    return AFD_OK;
}

struct tg_ctx {
    afd_taichi_params p;
    double target;
    afd_status failure;
};

static int tg_feasible(double lambda, void *vctx)
{
    struct tg_ctx *c = vctx;
    afd_taichi_result r;
    afd_status st;
    c->p.lambda = lambda;
    st = attainment(&c->p, &r, c->target);
    if (st == AFD_EUNSTABLE)
        return 0;
    if (st != AFD_OK) {
        c->failure = st;
        return -1;
    }
    return r.attainment >= c->target;
}

afd_status afd_taichi_goodput(const afd_taichi_params *p, double target, double rel_tol,
                              double *goodput)
{
    struct tg_ctx c;
    double cap;
    afd_status st;
    *goodput = NAN;
    if (p == NULL || !taichi_check(p) || !(target > 0 && target < 1) ||
        !(rel_tol > 0 && rel_tol < 1))
        return AFD_EINVAL;
    cap = afd_taichi_capacity(p);
    if (!(cap > 0 && isfinite(cap)))
        return AFD_EINVAL;
    c.p = *p;
    c.target = target;
    c.failure = AFD_OK;
    st = afd_goodput_bisect(tg_feasible, &c, cap * 1e-4, cap, rel_tol, goodput);
    return st == AFD_ENUMERIC ? c.failure : st;
}

/* Keep cfg if its score beats *g (strictly): the goodput, or with
 * at_lambda > 0 the attainment at that rate. */
static afd_status try_config(const afd_taichi_params *p, afd_taichi_config cfg, double target,
                             double rel_tol, double at_lambda, afd_taichi_config *best,
                             double *g)
{
    afd_taichi_params q = *p;
    afd_taichi_result r;
    double v;
    afd_status st;
    q.config = cfg;
    if (!taichi_check(&q))
        return AFD_OK; /* a chunk that does not suit this decode_bmax */
    if (at_lambda > 0) {
        q.lambda = at_lambda;
        st = afd_taichi_attainment(&q, &r);
        if (st != AFD_OK && st != AFD_EUNSTABLE)
            return st;
        v = r.attainment;
    } else {
        if (*g > 0) {
            /* attainment falls with the rate: a configuration that misses the
             * target just above the incumbent's goodput cannot beat it by more
             * than the tolerance (one evaluation instead of a bisection) */
            q.lambda = *g * (1 + rel_tol);
            st = attainment(&q, &r, target);
            if (st != AFD_OK && st != AFD_EUNSTABLE)
                return st;
            if (!(r.attainment >= target))
                return AFD_OK;
        }
        if ((st = afd_taichi_goodput(&q, target, rel_tol, &v)) != AFD_OK)
            return st;
    }
    if (v > *g) {
        *g = v;
        *best = cfg;
    }
    return AFD_OK;
}

static afd_status best_of(const afd_taichi_params *p, unsigned instances, const unsigned *chunks,
                          size_t n_chunks, double target, double rel_tol, double at_lambda,
                          afd_taichi_config best[3], double goodput[3])
{
    afd_taichi_config cfg, z;
    afd_taichi_params q;
    unsigned whole, np;
    size_t i, j;
    afd_status st;
    memset(&z, 0, sizeof z);
    for (i = 0; i < 3; i++) {
        best[i] = z;
        goodput[i] = NAN;
    }
    if (p == NULL || p->len == NULL || chunks == NULL || n_chunks == 0 || instances < 1 ||
        instances > 4096 || !(p->len->prompt_max >= 1) || !(target > 0 && target < 1) ||
        !(rel_tol > 0 && rel_tol < 1))
        return AFD_EINVAL;
    q = *p;
    q.config.p_heavy = instances;
    q.config.d_heavy = 0;
    q.config.chunk_p = chunks[0];
    q.config.chunk_d = 0;
    if (!taichi_check(&q))
        return AFD_EINVAL;
    for (i = 0; i < n_chunks; i++)
        if (chunks[i] <= p->decode_bmax)
            return AFD_EINVAL;
    for (i = 0; i < 3; i++)
        goodput[i] = 0;
    /* aggregation */
    for (i = 0; i < n_chunks; i++) {
        cfg = z;
        cfg.p_heavy = instances;
        cfg.chunk_p = cfg.chunk_d = chunks[i];
        if ((st = try_config(p, cfg, target, rel_tol, at_lambda, &best[0], &goodput[0])) !=
            AFD_OK)
            return st;
    }
    /* disaggregation: P-heavy iterations take whole prompts */
    whole = p->len->prompt_max > p->decode_bmax ? (unsigned)ceil(p->len->prompt_max)
                                                 : p->decode_bmax + 1;
    for (np = 1; np < instances; np++) {
        cfg = z;
        cfg.p_heavy = np;
        cfg.d_heavy = instances - np;
        cfg.chunk_p = whole;
        if ((st = try_config(p, cfg, target, rel_tol, at_lambda, &best[1], &goodput[1])) !=
            AFD_OK)
            return st;
    }
    /* the hybrid contains both, then the rest of its space */
    best[2] = goodput[1] > goodput[0] ? best[1] : best[0];
    goodput[2] = goodput[1] > goodput[0] ? goodput[1] : goodput[0];
    for (np = 1; np < instances; np++)
        for (i = 0; i <= n_chunks; i++) {
            unsigned sp = i < n_chunks ? chunks[i] : whole;
            for (j = 0; j <= n_chunks; j++) {
                unsigned sd = j < n_chunks ? chunks[j] : 0;
                if (!(sd < sp) || (sp == whole && sd == 0))
                    continue;
                cfg.p_heavy = np;
                cfg.d_heavy = instances - np;
                cfg.chunk_p = sp;
                cfg.chunk_d = sd;
                if ((st = try_config(p, cfg, target, rel_tol, at_lambda, &best[2],
                                     &goodput[2])) != AFD_OK)
                    return st;
            }
        }
    return AFD_OK;
}

afd_status afd_taichi_best(const afd_taichi_params *p, unsigned instances, const unsigned *chunks,
                           size_t n_chunks, double target, double rel_tol,
                           afd_taichi_config best[3], double goodput[3])
{
    return best_of(p, instances, chunks, n_chunks, target, rel_tol, 0, best, goodput);
}

afd_status afd_taichi_best_at(const afd_taichi_params *p, unsigned instances,
                              const unsigned *chunks, size_t n_chunks, double lambda,
                              afd_taichi_config best[3], double attainment[3])
{
    if (!(lambda > 0 && isfinite(lambda))) {
        afd_taichi_config z;
        size_t i;
        memset(&z, 0, sizeof z);
        for (i = 0; i < 3; i++) {
            best[i] = z;
            attainment[i] = NAN;
        }
        return AFD_EINVAL;
    }
    return best_of(p, instances, chunks, n_chunks, 0.9, 0.5, lambda, best, attainment);
}
