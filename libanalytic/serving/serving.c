/* serving.c: closed forms for request-level serving (see afd_serving.h). */
#include <config.h>

#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_cdf.h>

#include "afd_queue.h"
#include "afd_serving.h"
#include "afd_taichi.h"
#include "bulk_internal.h"
#include "internal.h"

#define SOLVER_MAX_SERVERS 4096 /* M/D/c beyond this: not worth solving */

static void set_nan(afd_serving_result *out)
{
    out->ttft_mean = out->ttft_q = out->tpot_mean = out->tpot_q = NAN;
    out->prefill_rho = out->decode_rho = out->decode_batch = NAN;
    out->prefill_batch = 0;
    out->limit = AFD_SERVING_LIMIT_NONE;
}

/* A stage failed with st: every output NaN but the limit it set. */
static afd_status failed(afd_serving_result *out, afd_status st)
{
    int limit = out->limit;
    set_nan(out);
    out->limit = limit;
    return st;
}

const char *afd_serving_limit_name(int limit)
{
    return limit == AFD_SERVING_LIMIT_PREFILL  ? "prefill"
           : limit == AFD_SERVING_LIMIT_DECODE ? "decode"
           : limit == AFD_SERVING_LIMIT_TTFT   ? "ttft"
           : limit == AFD_SERVING_LIMIT_TPOT   ? "tpot"
                                               : "none";
}

static double batch_time(const afd_hw *hw, double k, double P)
{
    return hw->prefill_a + k * (hw->prefill_b * P + hw->prefill_c * P * P);
}

/* Sojourn quantile of M/D/s and its mean (wait + D).  AFD_OK or the solver's. */
static afd_status mds(double lambda, double d, int s, double q, double *mean, double *quant)
{
    afd_mdc *m;
    afd_status st = afd_mdc_alloc(lambda, d, s, &m);
    afd_result wq, wp;
    if (st != AFD_OK)
        return st;
    st = afd_mdc_wq_e(m, &wq);
    if (st == AFD_OK)
        st = afd_mdc_wait_quantile_e(m, q, &wp);
    afd_mdc_free(m);
    if (st != AFD_OK)
        return st;
    *mean = wq.val + d;
    *quant = wp.val + d;
    return AFD_OK;
}

/* Prefill TTFT behind a router at arrival (afd_serving_params.routed):
 * the routed wait of routed.c plus the request's own prefill.  Fixed
 * prompts: random is M/D/1 at lambda / c per instance (Kleinrock, Queueing
 * Systems I, Sec. 5.6), global M/D/c, and round-robin M/D/c too: with equal
 * constant services the shared FIFO queue hands its j-th arrival to server
 * j mod c, every c-th arrival, so E_c/D/1 waits are M/D/c's exactly (the
 * simulator's round-robin and global runs coincide request by request); the
 * least-load routers' tail is routed.c's wait law plus S.  Geometric
 * prompts (P's squared coefficient of variation 1 - 1/mu within 1% of an
 * exponential's 1): S = a + b P taken as a plus an exponential of mean
 * b E[P], convolved with the wait law (afd_routed_quantile, exact for
 * random, round-robin and global when a = 0); otherwise no tail (NaN). */
static afd_status routed_prefill(const afd_serving_params *p, unsigned c, afd_serving_result *out)
{
    const afd_hw *hw = p->hw;
    int vary = p->prompt_m2 > 0, exact_md = 0;
    double m2 = vary ? p->prompt_m2 : p->prompt * p->prompt, mean;
    double es = hw->prefill_a + hw->prefill_b * p->prompt + hw->prefill_c * m2;
    /* E[S^2] = a^2 + 2 a b E[P] + b^2 E[P^2] for c = 0 */
    double es2 = vary ? hw->prefill_a * hw->prefill_a + 2 * hw->prefill_a * hw->prefill_b * p->prompt +
                            hw->prefill_b * hw->prefill_b * m2
                      : es * es;
    double cv2 = m2 / (p->prompt * p->prompt) - 1;
    afd_routed_result w;
    afd_status st;
    out->prefill_rho = p->lambda * es / c;
    if (!(out->prefill_rho < 1))
        return AFD_EUNSTABLE;
    st = afd_routed_wait(p->router, p->lambda, es, es2, c, &w);
    if (st != AFD_OK)
        return st;
    out->ttft_mean = w.wq + es;
    out->ttft_q = NAN;
    if (!vary && (p->router == AFD_ROUTED_RANDOM || p->router == AFD_ROUTED_GLOBAL ||
                  p->router == AFD_ROUTED_ROUND_ROBIN)) {
        int random = p->router == AFD_ROUTED_RANDOM;
        if (random || c <= SOLVER_MAX_SERVERS) {
            st = mds(random ? p->lambda / c : p->lambda, es, random ? 1 : (int)c, p->quantile,
                     &mean, &out->ttft_q);
            if (st == AFD_ENOMEM)
                st = AFD_EUNSTABLE; /* rho too close to 1 to matter */
            if (st != AFD_OK)
                return st;
            out->ttft_mean = mean; /* the same mean, M/D/c's exactly */
            exact_md = 1;
        }
    }
    if (!exact_md && (!vary || (fabs(cv2 - 1) <= 0.01 && hw->prefill_c == 0)))
        return afd_routed_quantile(w.wq, w.pwait, vary ? hw->prefill_a : es,
                                   vary ? hw->prefill_b * p->prompt : 0, p->quantile, &out->ttft_q);
    return AFD_OK;
}

/* The law of a prompt's own prefill work s = pb P + pc P^2 over
 * p->workload (pd.c's afd_service_law_from_workload, model {0, pb, pc}).
 * *vary = 1 with *sl filled when the prompts' work varies, 0 when it is
 * fixed (no law, one value, or pb = pc = 0). */
static afd_status prompt_work(const afd_serving_params *p, afd_service_law *sl, int *vary)
{
    afd_prefill_model m = {0, p->hw->prefill_b, p->hw->prefill_c};
    afd_status st;
    *vary = 0;
    if (p->workload == NULL || !(m.b > 0 || m.c2 > 0))
        return AFD_OK;
    st = afd_service_law_from_workload(p->workload, &m, sl);
    if (st == AFD_OK)
        *vary = sl->n > 1 && sl->scv > 0;
    return st;
}

/* M/G/c TTFT for prompts of random work (B = 1): pd.c's afd_ttft_quantile
 * on S = a + s (the M/D/c wait at E[S] scaled by k = 1 + c_S^2, its tail
 * convolved with S's atoms); the mean the same scaling of M/D/c's wait,
 * k W(M/D/c) + E[S] (Pollaczek-Khinchine's exactly for c = 1). */
static afd_status prefill_mgc(const afd_serving_params *p, unsigned c, const afd_service_law *sl,
                              afd_serving_result *out)
{
    afd_service_law S = *sl;
    afd_ttft t;
    afd_status st;
    double a = p->hw->prefill_a, mean, quant;
    size_t j;
    for (j = 0; j < S.n; j++)
        S.t[j] += a;
    S.mean += a;
    S.max += a;
    S.scv = sl->scv * sl->mean * sl->mean / (S.mean * S.mean);
    out->prefill_rho = p->lambda * S.mean / c;
    if (!(out->prefill_rho < 1) || c > SOLVER_MAX_SERVERS)
        return AFD_EUNSTABLE;
    st = afd_ttft_quantile(p->lambda, &S, c, p->quantile, &t);
    if (st == AFD_OK)
        st = mds(p->lambda, S.mean, (int)c, p->quantile, &mean, &quant);
    if (st == AFD_ENOMEM || st == AFD_ELIMIT)
        st = AFD_EUNSTABLE; /* rho too close to 1 to matter */
    if (st != AFD_OK)
        return st;
    out->ttft_mean = (1 + S.scv) * (mean - S.mean) + S.mean;
    out->ttft_q = t.ttft_mg;
    return AFD_OK;
}

/* What the closed forms read of the requests' length law, which does not
 * depend on the rate: made once for a goodput search, whose every
 * evaluation reads it. */
typedef struct law_prep {
    afd_service_law sl; /* a prompt's own prefill work (prompt_work) */
    int vary;           /* 1: it varies, sl filled */
    afd_priv_greedy *g; /* its greedy batches (bulk_internal.h), or NULL */
    afd_taichi_lengths len; /* the output law (colloc; output_n 0: none) */
} law_prep;

/* prompt_work, with the greedy batches of the law made ready when greedy
 * and B > 1, and with colloc the output law of the collocated TPOT. */
static afd_status law_prep_init(const afd_serving_params *p, int colloc, int greedy,
                                law_prep *lp)
{
    afd_status st;
    lp->g = NULL;
    lp->len.output_n = 0;
    if ((st = prompt_work(p, &lp->sl, &lp->vary)) != AFD_OK)
        return st;
    if (colloc && p->workload != NULL && p->output > 1 &&
        (st = afd_taichi_lengths_of(p->workload, 0, 0, &lp->len)) != AFD_OK)
        return st;
    if (greedy && lp->vary && p->prefill_bmax > 1 && !p->routed)
        st = afd_priv_greedy_alloc(&lp->sl, p->hw->prefill_a, p->prefill_bmax, &lp->g);
    return st;
}

static void law_prep_free(law_prep *lp)
{
    afd_priv_greedy_free(lp->g);
    lp->g = NULL;
}

/* Prefill TTFT: exact M/D/c for B = 1, greedy static batches (bulk.c)
 * for B > 1, the routed forms above behind a router; with prompts of
 * random work (sl not NULL) pd.c's M/G/c for B = 1 and the greedy batches
 * of that work (afd_serving_prefill_greedy_law, or g where made ready:
 * the same) for B > 1. */
static afd_status prefill(const afd_serving_params *p, unsigned c, const afd_service_law *sl,
                          const afd_priv_greedy *g, afd_serving_result *out)
{
    const afd_hw *hw = p->hw;
    double s = hw->prefill_b * p->prompt + hw->prefill_c * p->prompt * p->prompt, batch = 1;
    afd_status st;
    if (p->routed) {
        st = routed_prefill(p, c, out);
    } else if (sl != NULL && p->prefill_bmax > 1 && g != NULL) {
        st = afd_priv_greedy_ttft(g, p->lambda, c, p->quantile, &out->ttft_mean, &out->ttft_q,
                                  &out->prefill_rho, &batch);
    } else if (sl != NULL && p->prefill_bmax > 1) {
        st = afd_serving_prefill_greedy_law(p->lambda, c, p->prefill_bmax, hw->prefill_a, sl,
                                            p->quantile, &out->ttft_mean, &out->ttft_q,
                                            &out->prefill_rho, &batch);
    } else if (sl != NULL) {
        st = prefill_mgc(p, c, sl, out);
    } else if (p->prefill_bmax > 1) {
        st = afd_serving_prefill_greedy(p->lambda, c, p->prefill_bmax, hw->prefill_a, s,
                                        p->quantile, &out->ttft_mean, &out->ttft_q,
                                        &out->prefill_rho, &batch);
    } else {
        out->prefill_rho = p->lambda * (hw->prefill_a + s) / c;
        st = out->prefill_rho < 1 && c <= SOLVER_MAX_SERVERS
                 ? mds(p->lambda, hw->prefill_a + s, (int)c, p->quantile, &out->ttft_mean,
                       &out->ttft_q)
                 : AFD_EUNSTABLE;
        if (st == AFD_ENOMEM)
            st = AFD_EUNSTABLE; /* rho too close to 1 to matter */
    }
    if (st == AFD_OK)
        out->prefill_batch = (unsigned)lround(batch);
    else if (st == AFD_EUNSTABLE)
        out->limit = AFD_SERVING_LIMIT_PREFILL;
    return st;
}

/* The decode step of b sequences of P + G/2 KV tokens each, the step the
 * simulator takes: afd_hw_decode_step, hw's estimator table where it has
 * one (exact at its points), else the law t(b) = t0 + t1 b of
 * afd_serving.h.  The law is a least-squares fit over the table's whole
 * grid (fit_max_rel_err); at the batches an instance runs at its slot cap
 * or below it can be 10% (disaggregated, Llama-3.1-70B on 2 H200, P = G =
 * 500, 256 slots) to 100% (collocated, its slope) above the table's, which
 * made the disaggregated goodput 10-16% low and the collocated TPOT 30-55%
 * high. */
static double step_time(const afd_serving_params *p, double b)
{
    return afd_hw_decode_step(p->hw, b, b * (p->prompt + p->output / 2));
}

/* The mean-value batch 1 + n of afd_serving.h for a step t(b) that is not
 * linear: the root of b = 1 + lambda_d m t(b) / (1 - f) on [1, B], found
 * by bisection (the right side exceeds b at b = 1, and not at b = B when
 * the caller checked it); for the law it is (t0 + t1) / (1 - f - t1
 * lambda_d m) in closed form. */
static double mean_batch(const afd_serving_params *p, double lambda_d, double f, double B)
{
    double lo = 1, hi = B;
    int i;
    for (i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
        double mid = (lo + hi) / 2;
        if (1 + lambda_d * (p->output - 1) * step_time(p, mid) / (1 - f) > mid)
            lo = mid;
        else
            hi = mid;
    }
    return (lo + hi) / 2;
}

/* The decode batch at the slot occupancy, at step_time's step; f =
 * fraction of time taken by other work.  Sets decode_rho, decode_batch
 * and *tpot, the mean-value step t(batch) / (1 - f) (t(B) / (1 - f) at the
 * cap); AFD_EUNSTABLE with the limit decode beyond the capacity (1 - f) B
 * / (m t(B)). */
static afd_status decode_batch(const afd_serving_params *p, double lambda_d, double f,
                               afd_serving_result *out, double *tpot_out)
{
    double m = p->output - 1;
    double B = p->decode_bmax, tpot, batch;
    if (f < 1 && 1 + lambda_d * m * step_time(p, B) / (1 - f) <= B) {
        batch = mean_batch(p, lambda_d, f, B);
        tpot = step_time(p, batch) / (1 - f);
        out->decode_rho = f + lambda_d * m * step_time(p, batch) / batch; /* busy fraction */
    } else {
        batch = tpot = INFINITY;
    }
    if (!(batch <= B)) { /* steps at the full batch; capacity (1 - f) B / (m t(B)) */
        double tb = step_time(p, B) / (1 - f);
        if (!(f < 1) || !(lambda_d * m * tb < B)) {
            out->decode_rho = lambda_d * m * tb / B;
            out->limit = AFD_SERVING_LIMIT_DECODE;
            return AFD_EUNSTABLE;
        }
        tpot = tb;
        batch = B;
        out->decode_rho = lambda_d * m * tb / B;
    }
    out->decode_batch = batch;
    *tpot_out = tpot;
    return AFD_OK;
}

/* Decode TPOT at the slot occupancy (decode_batch), and the wait for a
 * slot as M/D/B with service m tpot. */
static afd_status decode(const afd_serving_params *p, double lambda_d, double f,
                         afd_serving_result *out)
{
    double m = p->output - 1;
    double B = p->decode_bmax, tpot, d, mean, quant;
    afd_status st;
    if (m <= 0) { /* one output token: no decode */
        out->decode_rho = 0;
        out->decode_batch = 0;
        return AFD_OK;
    }
    if ((st = decode_batch(p, lambda_d, f, out, &tpot)) != AFD_OK)
        return st;
    /* the wait for a slot: M/D/B with service m tpot */
    d = m * tpot;
    if (lambda_d * d / B < 1 - 1e-9) {
        st = mds(lambda_d, d, (int)B, p->quantile, &mean, &quant);
        if (st == AFD_ENOMEM || st == AFD_ELIMIT) { /* rho too close to 1 to matter */
            out->limit = AFD_SERVING_LIMIT_DECODE;
            return AFD_EUNSTABLE;
        }
        if (st != AFD_OK)
            return st;
        out->tpot_mean = mean / m;
        out->tpot_q = quant / m;
    } else {
        out->limit = AFD_SERVING_LIMIT_DECODE;
        return AFD_EUNSTABLE;
    }
    return AFD_OK;
}

/* ---- Disaggregated TPOT: the decode slots of one instance.
 * The requests a decode instance holds (decoding, or transferred and
 * waiting for one of its B slots) number j; m = G - 1 steps each.
 * With one step time t for every batch the instance is M/D/B with service
 * D = m t exactly (a slot freed m steps after it was taken), solved by
 * afd_mdc (its number in system pi_D(j) and its wait W, Crommelin 1932).
 * The step grows with the batch, so below the cap the instance serves
 * faster than at t(B): with j <= B sequences each gets one token a step of
 * t(j), a processor-sharing queue of state-dependent speed, deaths at
 * mu(j) = j / (m t(j)) in place of j / (m t(B)), and such a queue's
 * occupancy does not depend on the law of the work (Kelly, Reversibility
 * and Stochastic Networks, 1979, Section 3.3): pi(j - 1) / pi(j) = mu(j) /
 * lambda_d.  The occupancy is M/D/B at D = m t(B) (the queue above the cap
 * exactly, whose number in system falls geometrically with the ratio of
 * its dominant root near saturation) reweighted below the cap by the
 * faster deaths:
 *   pi(j) ~ pi_D(j) prod_{i = j + 1}^{B} t(B) / t(i)   (j < B),
 *   P(j >= B) ~ P_D(W > 0),
 * normalized; for a constant step it is M/D/B, and for slots to spare (pi_D
 * Poisson) it is the birth-death chain of the step, whose mean for a
 * linear step t0 + t1 b is the mean-value form (t0 + t1) / (1 - t1 lambda_d
 * m) (negative binomial).  Where t(j) / j is nearly flat (a compute-bound
 * step) this law is far wider than the M/D/B occupancy at one mean step
 * and reaches the cap well below the capacity B / (m t(B)).  A request that
 * finds j < B (PASTA) decodes at the batch it joins, t(j + 1), for its m
 * steps (near the cap the batch moves slowly against a request's life:
 * the chain relaxes in time growing like 1 / (1 - rho)^2); one that finds
 * j >= B waits W for a slot, M/D/B's wait given W > 0, then decodes at
 * t(B): TPOT = t(j + 1), or t(B) + W / m.  Mean and q-quantile of that
 * mixture.  Against the simulator (Llama-3.1-70B on 2 H200, P = G = 500,
 * B = 256, 80% to 99.5% of the decode capacity, 400000 requests: docs/
 * queues.md, The wait for a decode slot) the P90 is +0.1% to +8% and the
 * mean -0.2% to +9.5% (+4.5% against two seeds' mean at 99.5%) off it; the
 * M/D/B wait at the mean step kept the P90 flat, up to 45% low.  The
 * join at a step boundary (t / (2 m) of TPOT on average) is left out. */
struct dslots {
    const afd_mdc *md;
    double *w, *v;   /* weight of j < B (times scale), its TPOT t(j + 1) */
    double pw, scale; /* P_D(W > 0), the weight of j >= B (times scale) */
    double z, tB, m; /* the normalizer (times scale) */
    unsigned B;
};

/* P(TPOT <= x) over struct dslots. */
static double dslots_cdf(const struct dslots *d, double x)
{
    double c = 0;
    unsigned j;
    for (j = 0; j < d->B; j++)
        if (d->v[j] <= x)
            c += d->w[j];
    /* P_D(0 < W <= m (x - tB)) */
    if (x > d->tB)
        c += d->scale * fmax(0, afd_mdc_wait_cdf(d->md, d->m * (x - d->tB)) - (1 - d->pw));
    return c / d->z;
}

static afd_status disagg_tpot(const afd_serving_params *p, double lambda_d, double *mean,
                              double *quant)
{
    struct dslots d;
    afd_mdc *md;
    afd_result r;
    double top = -INFINITY, lf = 0, wq, lo, hi = 0;
    unsigned j;
    int it;
    afd_status st;
    d.B = p->decode_bmax;
    d.m = p->output - 1;
    d.tB = step_time(p, d.B);
    if (!(lambda_d * d.m * d.tB / d.B < 1 - 1e-9) || d.B > SOLVER_MAX_SERVERS)
        return AFD_EUNSTABLE;
    st = afd_mdc_alloc(lambda_d, d.m * d.tB, d.B, &md);
    if (st == AFD_ENOMEM || st == AFD_ELIMIT) /* rho too close to 1 to matter */
        return AFD_EUNSTABLE;
    if (st != AFD_OK)
        return st;
    d.md = md;
    d.w = malloc(2 * d.B * sizeof *d.w);
    if (d.w == NULL) {
        afd_mdc_free(md);
        return AFD_ENOMEM;
    }
    d.v = d.w + d.B;
    st = afd_mdc_p_wait_e(md, &r);
    d.pw = r.val;
    if (st == AFD_OK)
        st = afd_mdc_wq_e(md, &r);
    wq = r.val;
    /* w(j) = log pi_D(j) + sum_{i > j} log(t(B) / t(i)), j = B - 1 .. 0 */
    for (j = d.B; st == AFD_OK && j-- > 0;) {
        afd_result pj;
        if (j + 1 < d.B)
            lf += log(d.tB / step_time(p, j + 1));
        st = afd_mdc_number_pmf_e(md, (long)j, &pj);
        d.w[j] = pj.val > 0 ? log(pj.val) + lf : -INFINITY;
        if (d.w[j] > top)
            top = d.w[j];
    }
    if (st == AFD_OK && !(top > -INFINITY || d.pw > 0))
        st = AFD_ENUMERIC;
    if (st != AFD_OK) {
        free(d.w);
        afd_mdc_free(md);
        return st;
    }
    /* every weight times scale = e^-top, the largest (the tail's
     * included) 1 */
    if (d.pw > 0 && log(d.pw) > top)
        top = log(d.pw);
    d.scale = exp(-top);
    d.z = d.scale * d.pw;
    *mean = d.scale * (d.pw * d.tB + wq / d.m); /* E[(t(B) + W / m) 1{W > 0}] */
    for (j = 0; j < d.B; j++) {
        double w = exp(d.w[j] - top);
        d.w[j] = w;
        d.v[j] = step_time(p, j + 1);
        d.z += w;
        *mean += w * d.v[j];
        if (d.v[j] > hi)
            hi = d.v[j];
    }
    *mean /= d.z;
    lo = 0;
    if (!(hi > d.tB))
        hi = d.tB;
    hi *= 2;
    for (it = 0; dslots_cdf(&d, hi) < p->quantile && it < 200; it++)
        hi *= 2;
    for (it = 0; it < 200 && hi - lo > 1e-12 * hi; it++) {
        double mid = (lo + hi) / 2;
        if (dslots_cdf(&d, mid) < p->quantile)
            lo = mid;
        else
            hi = mid;
    }
    *quant = hi;
    free(d.w);
    afd_mdc_free(md);
    return AFD_OK;
}

/* A disaggregated decode instance at lambda_d: its batch (decode_batch)
 * and its TPOT (disagg_tpot), without the KV transfer. */
static afd_status disagg_decode(const afd_serving_params *p, double lambda_d,
                                afd_serving_result *out)
{
    double tpot;
    afd_status st;
    if (p->output <= 1) { /* one output token: no decode */
        out->decode_rho = 0;
        out->decode_batch = 0;
        return AFD_OK;
    }
    st = decode_batch(p, lambda_d, 0, out, &tpot);
    if (st == AFD_OK)
        st = disagg_tpot(p, lambda_d, &out->tpot_mean, &out->tpot_q);
    if (st == AFD_EUNSTABLE)
        out->limit = AFD_SERVING_LIMIT_DECODE;
    return st;
}

static afd_status check(const afd_serving_params *p)
{
    const afd_hw *hw = p->hw;
    if (hw == NULL || !afd_hw_has_prefill(hw) || !afd_hw_has_decode(hw))
        return AFD_EINVAL;
    if (!(hw->prefill_a >= 0 && hw->prefill_b >= 0 && hw->prefill_c >= 0 &&
          hw->decode_beta >= 0 && hw->decode_gamma >= 0 && hw->decode_alpha >= 0) ||
        !(batch_time(hw, 1, p->prompt) > 0))
        return AFD_EINVAL;
    if (!(p->lambda > 0 && isfinite(p->lambda)) || !(p->prompt >= 1 && p->prompt < 1e9) ||
        !(p->output >= 1 && p->output < 1e9) || p->prefill_bmax < 1 || p->decode_bmax < 1 ||
        !(p->kv_time >= 0 && isfinite(p->kv_time)) ||
        !(p->quantile == 0 || (p->quantile > 0 && p->quantile < 1)))
        return AFD_EINVAL;
    if (p->routed && (p->prefill_bmax != 1 || (unsigned)p->router > AFD_ROUTED_POWER_OF_TWO ||
                      p->workload != NULL))
        return AFD_EINVAL;
    if (p->prompt_m2 != 0 && (!p->routed || !(p->prompt_m2 >= p->prompt * p->prompt) ||
                              !isfinite(p->prompt_m2) || hw->prefill_c != 0 || p->output != 1))
        return AFD_EINVAL;
    return AFD_OK;
}

/* afd_serving_disagg with the length law lp made (checked p). */
static afd_status disagg_at(const afd_serving_params *p, const law_prep *lp,
                            afd_serving_result *out)
{
    afd_serving_params q;
    afd_status st;
    q = *p;
    if (q.quantile == 0)
        q.quantile = 0.9;
    st = prefill(&q, q.prefill, lp->vary ? &lp->sl : NULL, lp->g, out);
    if (st == AFD_OK)
        st = disagg_decode(&q, q.lambda / q.decode, out);
    if (st != AFD_OK)
        return failed(out, st);
    if (q.output > 1) {
        out->tpot_mean += q.kv_time / (q.output - 1);
        out->tpot_q += q.kv_time / (q.output - 1);
    } else {
        out->tpot_mean = out->tpot_q = NAN;
    }
    return AFD_OK;
}

/* ---- Collocated TPOT: the decode slots as a birth-death chain.
 * A collocated instance's requests between first token and last (decoding,
 * or prefilled and waiting for one of the B slots) form a chain with births
 * at lambda_d and, with j of them, b = min(j, B) decoding in steps of
 * t(b) (step_time's: the simulator's step, the law t0 + t1 b where hw has
 * no table) slowed by the prefills to t(b) / (1 - f): deaths at
 * mu(j) = b (1 - f) / ((G - 1) t(b)).  Below the cap this is a processor-
 * sharing queue of state-dependent speed, whose occupancy does not depend
 * on the law of the work (Kelly, Reversibility and Stochastic Networks,
 * 1979, Section 3.3): pi(j) = pi(0) prod_{i <= j} lambda_d / mu(i), and
 * its mean, for the law, is exactly that of the mean-value form TPOT =
 * (t0 + t1) / (1 - f - t1 lambda_d (G - 1)).  At the cap, the wait for a slot is that of the
 * chain scaled by kappa, the variability of the slots' arrivals and
 * services against the Poisson and exponential ones the chain assumes
 * (the heavy-traffic queue grows with (c_a^2 + c_s^2) / 2: Kingman, 1961).
 * The prefills that run between two steps form an M/D/1 busy period, so
 * the decode slots receive requests in clusters (index of dispersion
 * k / (1 - f)^2 for batches of k) and lose their service in the same
 * bursts (index mu(B) (lambda_d / k) S(k)^2 / (1 - f)^2, the busy period's
 * variance per unit of decode time, Takacs 1962), against 1 + 1 for the
 * chain: kappa = (k / (1 - f)^2 + mu(B) (lambda_d / k) S(k)^2 / (1 - f)^2)
 * / 2, at least 1.  A request's life L0 = (G - 1) TPOT without the wait
 * is spread by the prefill batches that interrupt it, Poisson at
 * lambda_d / k and each a busy period of S(k) / (1 - f) on average: the
 * variance (lambda_d / k) L0 S(k)^2 / (1 - f)^2 (compound Poisson of busy
 * periods).  TPOT's q-quantile is that of (W + R + L0 + normal) / (G - 1),
 * W the wait that a request finding j >= B waits, kappa (j - B + 1) /
 * mu(B).  Three things the chain leaves out, which at a high prefill load
 * on one instance (f = 0.7) made the form 21% low on the mean and 32% on
 * P90: (1) R, the rest of the prefill run the request's own prefill ends
 * in, before its first step (prefill_run); (2) the batch's spread: the
 * clusters make the batch swing far more than the chain's (variance about
 * index = k / (1 - f)^2 times its mean, 10-20 where the chain has 1), and
 * a request, in the large batches for more of its steps, sees a longer
 * step than t(mean), by t' (index - 1) (spread_dt); (3) the life's spread
 * is more than the stalls' compound Poisson: the stalls bring requests
 * that lengthen the rest of the life's steps, and the batch the life
 * starts among swings slowly (colloc_tpot).
 * Measured against the simulator in docs/reproduction.md, "Collocated
 * TPOT". */
/* The decode batch's spread (colloc_tpot, "the batch a request decodes
 * in"): index, the dispersion of the batch (its variance over its mean,
 * the chain's 1); at the mean batch b, the slope t' of the step, e = b t' /
 * t(b), and room, the share of the batch's swings the slot cap B leaves. */
typedef struct spread {
    double index, b, slope, e, room;
} spread;

/* The step a request sees in a batch of j, over the chain's t(j): t' (v -
 * 1) for a batch of variance v j about j (the request-weighted step of a
 * linear t is t(E b) + t' Var(b) / E[b] over the steps), v the index but
 * at most B - j (a batch below the cap swings at most up to it; none at
 * it), less the chain's own 1. */
static double spread_dt(const spread *sp, double j, unsigned B)
{
    double v = (double)B - j < sp->index ? (double)B - j : sp->index;
    return v > 1 ? sp->slope * (v - 1) : 0;
}

typedef struct slots {
    double *pi; /* pi(0) .. pi(n - 1), normalized */
    size_t n;
    double mean_n, mean_w; /* E[j], E[W] */
} slots;

static afd_status slots_solve(const afd_serving_params *p, double lambda_d, double f, unsigned B,
                              double kappa, const spread *sp, slots *sl)
{
    double m = p->output - 1, tB = step_time(p, B);
    double r = lambda_d * m * tB / (B * (1 - f)), sum = 0, mu_b, *pi, top = 1, ratio;
    size_t j, cap = 1024;
    sl->pi = NULL;
    if (!(f < 1) || !(r < 1 - 1e-9))
        return AFD_EUNSTABLE;
    mu_b = B * (1 - f) / (m * tB);
    pi = malloc(cap * sizeof *pi);
    if (pi == NULL)
        return AFD_ENOMEM;
    pi[0] = 1;
    for (j = 1;; j++) {
        double b = j < B ? (double)j : (double)B;
        if (j == cap) {
            double *np;
            if (cap >= ((size_t)1 << 24)) { /* rho too close to 1 to matter */
                free(pi);
                return AFD_EUNSTABLE;
            }
            np = realloc(pi, 2 * cap * sizeof *pi);
            if (np == NULL) {
                free(pi);
                return AFD_ENOMEM;
            }
            pi = np;
            cap *= 2;
        }
        ratio = j < B ? lambda_d * m * (step_time(p, b) + spread_dt(sp, b, B)) / (b * (1 - f)) : r;
        pi[j] = pi[j - 1] * ratio;
        if (pi[j] > top)
            top = pi[j];
        /* the ratio is t(b) / b, which for a convex step falls and then
         * rises with b up to B (its derivative's numerator b t' - t grows),
         * then stays r: the later ratios are below max(ratio, r), and the
         * rest of the sum below pi(j) x / (1 - x) for that x */
        if (ratio < r + lambda_d * m * spread_dt(sp, b, B) / (b * (1 - f)))
            ratio = r + lambda_d * m * spread_dt(sp, b, B) / (b * (1 - f));
        if (ratio < 1 && pi[j] < 1e-16 * top * (1 - ratio))
            break;
    }
    sl->n = j + 1;
    for (j = 0; j < sl->n; j++)
        sum += pi[j];
    sl->mean_n = sl->mean_w = 0;
    for (j = 0; j < sl->n; j++) {
        pi[j] /= sum;
        sl->mean_n += (double)j * pi[j];
        if (j >= B)
            sl->mean_w += pi[j] * kappa * (double)(j - B + 1) / mu_b;
    }
    sl->pi = pi;
    return AFD_OK;
}

/* P(W + L0 + sd Z <= x), the wait as in slots_solve. */
static double slots_cdf(const slots *sl, unsigned B, double kappa, double mu_b, double l0,
                        double sd, double x)
{
    double c = 0;
    size_t j;
    for (j = 0; j < sl->n; j++) {
        double w = j >= B ? kappa * (double)(j - B + 1) / mu_b : 0;
        c += sl->pi[j] * (sd > 0 ? gsl_cdf_ugaussian_P((x - w - l0) / sd) : x >= w + l0);
    }
    return c;
}

/* The start and the spread of a request's life (colloc_tpot): it starts
 * with the rest of the prefill run its own prefill ended in, of mean run
 * and variance run_var, then decodes, for l0 on average (m steps) with the
 * variance var spread over its steps. */
typedef struct colloc_life {
    double run, run_var; /* the rest of the prefill run after the first token */
    double l0, var;      /* the decode life (m steps, stalls included) */
} colloc_life;

/* The TPOT over the output law (gn atoms gv, gw of G; gn = 0: every G is
 * p->output): a request of m_j = G_j - 1 steps lives run + l0_j, l0_j =
 * l0 m_j / m, spread by sd_j^2 = run_var + var m_j / m (the run, then the
 * stalls and steps of its life, their variance proportional to its
 * length), and waits W for a slot as the others: TPOT_j = (W + run + l0_j +
 * sd_j Z) / m_j, the law the mixture over the requests with G_j >= 2 (one
 * token has no TPOT, as simulated); mean l0 / m + (E[W] + run) E[1 / m_j]. */
static void tpot_mixture(const slots *sl, unsigned B, double kappa, double mu_b, double m,
                         const colloc_life *lf, const double *gv, const double *gw, unsigned gn,
                         double q, double *mean, double *quant)
{
    double w0 = 0, tot = 0, inv = 0, lo = 0, hi = 0, wmax = 0;
    size_t j;
    unsigned g;
    int it;
    for (j = 0; j < sl->n && j < B; j++)
        w0 += sl->pi[j];
    if (sl->n > B)
        wmax = kappa * (double)(sl->n - B) / mu_b;
    for (g = 0; g < gn; g++)
        if (gv[g] >= 2) {
            double mj = gv[g] - 1;
            double h =
                (lf->run + lf->l0 * mj / m + 10 * sqrt(lf->run_var + lf->var * mj / m) + wmax) / mj;
            tot += gw[g];
            inv += gw[g] / mj;
            if (h > hi)
                hi = h;
        }
    *mean = lf->l0 / m + (sl->mean_w + lf->run) * inv / tot;
    for (it = 0; it < 100 && hi - lo > 1e-10 * hi; it++) {
        double x = (lo + hi) / 2, F = 0;
        for (g = 0; g < gn; g++) {
            double mj = gv[g] - 1, lj, sj, c;
            if (!(gv[g] >= 2))
                continue;
            lj = lf->run + lf->l0 * mj / m;
            sj = sqrt(lf->run_var + lf->var * mj / m);
            c = w0 * (sj > 0 ? gsl_cdf_ugaussian_P((x * mj - lj) / sj) : x * mj >= lj);
            for (j = B; j < sl->n; j++) {
                double w = kappa * (double)(j - B + 1) / mu_b;
                if (sl->pi[j] < 1e-15)
                    continue;
                c += sl->pi[j] *
                     (sj > 0 ? gsl_cdf_ugaussian_P((x * mj - w - lj) / sj) : x * mj >= w + lj);
            }
            F += gw[g] * c;
        }
        if (F < q * tot)
            lo = x;
        else
            hi = x;
    }
    *quant = (lo + hi) / 2;
}

/* What a collocated instance's prefills do to its decodes (colloc_tpot):
 * lambda_d its arrival rate, k its prefill batch, s2 = E[S(k)^2] (S(k)^2
 * for fixed prompts; with a prompt law the batch's work varies, and the
 * compound Poisson variances read its second moment), f the time its
 * prefills take, run and run_var the rest of the prefill run after a
 * request's first token (afd_serving_colloc). */
typedef struct colloc_load {
    double lambda_d, k, s2, f;
    double s1; /* a prompt's share of its batch, S(k) / k */
    double g;  /* the chance a prompt waits, at which a run goes on */
    double run, run_var;
} colloc_load;

/* The spread at the mean batch b: b = lambda_d m (t(b) + dt(b)) / (1 -
 * f), Little's law over the steps a request sees (by damped iteration
 * from 1, capped at B), t' its slope there (the table's, piecewise, by a
 * central difference), e at most 0.9 (a steeper step has no stable mean
 * batch to swing about). */
static spread batch_spread(const afd_serving_params *p, const colloc_load *c, double index,
                           unsigned B)
{
    double m = p->output - 1, b = 1;
    spread sp = {index, 0, 0, 0, 0};
    int i;
    for (i = 0; i < 100; i++) { /* b = lambda_d m (t(b) + dt(b)) / (1 - f), Little */
        double h = b > 1.5 ? 0.5 : 0, t = step_time(p, b), nb;
        sp.slope = (step_time(p, b + 0.5) - step_time(p, b - h)) / (0.5 + h);
        if (!(sp.slope > 0))
            sp.slope = 0;
        nb = c->lambda_d * m * (t + spread_dt(&sp, b, B)) / (1 - c->f);
        if (nb > B)
            nb = B;
        if (nb < 1)
            nb = 1;
        if (fabs(nb - b) < 1e-9 * b)
            break;
        b = (b + nb) / 2;
    }
    sp.b = b;
    sp.e = b * sp.slope / step_time(p, b);
    if (sp.e > 0.9)
        sp.e = 0.9;
    /* the share of the batch's swings, index / (1 - e) times its mean
     * (the feedback below), that fit under the cap */
    sp.room = (B - b) * (1 - sp.e) / index;
    if (sp.room > 1)
        sp.room = 1;
    return sp;
}

/* TPOT mean and q-quantile of a collocated instance (the model above);
 * gv, gw, gn the output law (tpot_mixture; gn = 0: none).  h = 1 - g, g
 * the chance that a prompt waits (Erlang C at N f on N instances: f on
 * one, where the runs are M/G/1 busy periods), in place of 1 - f in what
 * the runs' lengths set: the clusters' dispersion k / h^2, the runs'
 * second moment s2 / h^3 and their rate. */
static afd_status colloc_tpot(const afd_serving_params *p, const colloc_load *c, const double *gv,
                              const double *gw, unsigned gn, double *mean, double *quant)
{
    double m = p->output - 1, f = c->f, lambda_d = c->lambda_d, k = c->k, s2 = c->s2;
    unsigned B = p->decode_bmax;
    double h = 1 - c->g, index = k / (h * h), amp, x, dvar;
    spread sp = batch_spread(p, c, index, B);
    double mu_b = B * (1 - f) / (m * step_time(p, B));
    double kappa = (k + mu_b * lambda_d / k * s2) / (2 * (1 - f) * (1 - f));
    double tot, lo, hi;
    colloc_life lf;
    slots sl;
    afd_status st;
    int i;
    if (kappa < 1)
        kappa = 1;
    st = slots_solve(p, lambda_d, f, B, kappa, &sp, &sl);
    if (st != AFD_OK)
        return st;
    /* Little's law over the chain, and the wait scaled by kappa */
    tot = sl.mean_n / lambda_d + (kappa - 1) * sl.mean_w / kappa;
    lf.run = c->run;
    lf.run_var = c->run_var;
    lf.l0 = tot - sl.mean_w;
    /* the stalls of a life, compound Poisson: runs of prefills opened
     * at lambda_d h / (k (1 - f)) per unit of its decode time l0 (1 - f)
     * (which makes the stalls f of the time), of second moment s2 / h^3
     * (the M/G/1 busy period's, Takacs 1962, on one instance, h = 1 -
     * f; one batch each, Poisson at lambda_d / k over the whole life, on
     * many, h = 1): the variance (lambda_d / k) l0 s2 / h^2.  They are
     * not independent of the life's
     * steps: a stall longer by y at the fraction u of the life prefills y
     * / s1 more prompts, which decode beside the request for the rest of
     * it, (1 - u) m steps each t' longer, with f / (1 - f) of stalls more
     * (and 1 / (1 - e) for the steps that stretch in turn): the life grows
     * by y (1 + x (1 - u)), x = room t' m / (s1 (1 - e) (1 - f)), and the
     * stalls' variance by E_u[(1 + x (1 - u))^2] = 1 + x + x^2 / 3 */
    x = sp.room * sp.slope * m / (c->s1 * (1 - sp.e) * (1 - f));
    amp = 1 + x + x * x / 3;
    /* the batch the life starts among: the requests that came in the m
     * steps before, clusters of dispersion index each staying m steps
     * (M^X/D/infinity in steps: its variance b index), of which the life
     * sees a triangular window (the mean of (1 - v / m)^2 over its m
     * steps, 1 / 3), fed back by 1 / (1 - e)^2 (a swing as slow as a life
     * sees the gain at zero frequency): Var(steps) = room m^2 t'^2 b
     * index / (3 (1 - e)^2), its stalls f / (1 - f) of it more */
    dvar = sp.room * m * m * sp.slope * sp.slope * sp.b * index / (3 * (1 - sp.e) * (1 - sp.e));
    lf.var = amp * lambda_d / k * lf.l0 * s2 / (h * h) + dvar / ((1 - f) * (1 - f));
    if (gn > 0) {
        tpot_mixture(&sl, B, kappa, mu_b, m, &lf, gv, gw, gn, p->quantile, mean, quant);
        free(sl.pi);
        return AFD_OK;
    }
    {
        double sd = sqrt(lf.var + lf.run_var), l0 = lf.l0 + lf.run;
        lo = l0 - 10 * sd;
        hi = l0 + 10 * sd + kappa * (double)sl.n / mu_b;
        for (i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
            double mid = (lo + hi) / 2;
            if (slots_cdf(&sl, B, kappa, mu_b, l0, sd, mid) < p->quantile)
                lo = mid;
            else
                hi = mid;
        }
    }
    free(sl.pi);
    *mean = (tot + lf.run) / m;
    *quant = (lo + hi) / 2 / m;
    return AFD_OK;
}

/* The rest of the prefill run a request's first token ends in, before
 * its first decode step: the instance prefills while prompts wait (prefill
 * first), so a request prefilled in a run waits for the prompts it leaves
 * behind.  A departure leaves behind what an arrival finds (one at a time;
 * Kleinrock, Queueing Systems I, 1975, Sec. 5.6), lambda E[TTFT] by
 * Little's law, less its own batch's later members, (k - 1) / 2, and, with
 * N instances, the (N - 1) f k in the others' batches, the rest shared by
 * the N: n prompts.  Each prompt of work s1 (mean s1, variance v1) opens a
 * busy period of mean s1 / h and second moment E[s1^2] / h^3 (M/G/1,
 * h = 1 - f; Kleinrock, Sec. 5.8, Takacs 1962; h = 1 - g on N instances,
 * colloc_tpot): the run's mean n s1 / h, its variance n Var(BP) + Var(n)
 * (s1 / h)^2, Var(n) taken as n (1 + n), the geometric count's (M/M/1;
 * higher than M/D/1's).  Exact in the mean for N = 1, k = 1
 * [tests/serving/test_serving.c, colloc_run_exact]. */
static void prefill_run(const afd_serving_params *p, const afd_serving_result *r, double s1,
                        double v1, colloc_load *c)
{
    double N = p->instances, f = c->f, h = 1 - c->g, bp = s1 / h;
    double n = (p->lambda * r->ttft_mean - (c->k - 1) / 2 - (N - 1) * f * c->k) / N;
    if (!(n > 0))
        n = 0;
    c->run = n * bp;
    c->run_var = n * ((s1 * s1 + v1) / (h * h * h) - bp * bp) + n * (1 + n) * bp * bp;
}

/* afd_serving_colloc with the length law lp made (checked p). */
static afd_status colloc_at(const afd_serving_params *p, const law_prep *lp,
                            afd_serving_result *out)
{
    afd_serving_params q;
    const afd_service_law *sl = lp->vary ? &lp->sl : NULL;
    const afd_taichi_lengths *len = &lp->len;
    colloc_load load;
    afd_status st;
    double f, step, busy;
    q = *p;
    if (q.quantile == 0)
        q.quantile = 0.9;
    st = prefill(&q, q.instances, sl, lp->g, out);
    if (st == AFD_OK) {
        f = out->prefill_rho; /* lambda S(k) / (N k): the time prefills take */
        st = decode(&q, q.lambda / q.instances, f, out);
    }
    if (st != AFD_OK)
        return failed(out, st);
    if (q.output > 1) {
        double lam_i = q.lambda / q.instances, k = out->prefill_batch, r;
        double s = batch_time(q.hw, k, q.prompt), s2 = s * s;
        if (sl != NULL) { /* E[S(k)^2] = (a + k E s)^2 + k Var(s) */
            s = q.hw->prefill_a + k * sl->mean;
            s2 = s * s + k * sl->scv * sl->mean * sl->mean;
        }
        /* a prefill waits for the step in flight: the instance is decoding
         * with probability busy, the residual step uniform on (0, step) */
        step = step_time(&q, out->decode_batch);
        busy = lam_i * (q.output - 1) * step;
        if (busy > 1 - out->prefill_rho)
            busy = 1 - out->prefill_rho;
        r = 1 - (1 - q.quantile) / busy; /* q-quantile of the residual / step */
        out->ttft_mean += busy * step / 2;
        out->ttft_q += r > 0 ? r * step : 0;
        load.lambda_d = lam_i;
        load.k = k;
        load.s2 = s2;
        load.f = out->prefill_rho;
        load.s1 = s / k;
        load.g = afd_erlang_c(q.instances * load.f, q.instances);
        if (!(load.g >= 0 && load.g < 1)) /* not reached: f < 1 */
            load.g = load.f;
        prefill_run(&q, out, s / k, sl != NULL ? sl->scv * sl->mean * sl->mean : 0, &load);
        st = colloc_tpot(&q, &load, len->output_v, len->output_w, len->output_n, &out->tpot_mean,
                         &out->tpot_q);
        if (st != AFD_OK) {
            out->limit = AFD_SERVING_LIMIT_DECODE;
            return failed(out, st == AFD_ENOMEM ? AFD_ENOMEM : AFD_EUNSTABLE);
        }
    } else {
        out->tpot_mean = out->tpot_q = NAN;
    }
    return AFD_OK;
}

/* One evaluation of the collocated (colloc != 0) or disaggregated closed
 * form: p checked, its length law made (lp NULL: here, for this one call),
 * then colloc_at or disagg_at. */
static afd_status serving_at(const afd_serving_params *p, int colloc, const law_prep *lp,
                             afd_serving_result *out)
{
    law_prep own;
    afd_status st;
    set_nan(out);
    if (p == NULL || check(p) != AFD_OK ||
        (colloc ? p->instances < 1 : p->prefill < 1 || p->decode < 1))
        return AFD_EINVAL;
    if (lp != NULL)
        return colloc ? colloc_at(p, lp, out) : disagg_at(p, lp, out);
    if ((st = law_prep_init(p, colloc, 0, &own)) != AFD_OK)
        return st;
    st = colloc ? colloc_at(p, &own, out) : disagg_at(p, &own, out);
    law_prep_free(&own);
    return st;
}

afd_status afd_serving_disagg(const afd_serving_params *p, afd_serving_result *out)
{
    return serving_at(p, 0, NULL, out);
}

afd_status afd_serving_colloc(const afd_serving_params *p, afd_serving_result *out)
{
    return serving_at(p, 1, NULL, out);
}

/* Decode time per request at the full batch, (G - 1) t(B) / B (step_time's
 * t: the simulator's step). */
static double decode_per_request(const afd_serving_params *p)
{
    return (p->output - 1) * step_time(p, p->decode_bmax) / p->decode_bmax;
}

double afd_serving_capacity(const afd_serving_params *p, int colloc)
{
    double best = 0, m, dec;
    unsigned k;
    if (p == NULL || check(p) != AFD_OK || (colloc ? p->instances < 1 : p->prefill < 1 ||
                                                                           p->decode < 1))
        return NAN;
    m = p->output - 1;
    dec = decode_per_request(p);
    for (k = 1; k <= p->prefill_bmax; k++) {
        double s = batch_time(p->hw, k, p->prompt) / k, rate;
        rate = colloc ? p->instances / (s + dec) : p->prefill / s;
        if (rate > best)
            best = rate;
    }
    if (!colloc && m > 0 && p->decode / dec < best)
        best = p->decode / dec;
    return best;
}

struct cf_ctx {
    afd_serving_params p;
    const law_prep *lp; /* p's length law, made once for the search */
    int colloc;
    double ttft_slo, tpot_slo;
    int limit;   /* why the last infeasible rate failed */
    afd_status failure;
};

static int cf_feasible(double lambda, void *ctx)
{
    struct cf_ctx *c = ctx;
    afd_serving_result r;
    afd_status st;
    c->p.lambda = lambda;
    st = serving_at(&c->p, c->colloc, c->lp, &r);
    if (st == AFD_EUNSTABLE) {
        c->limit = r.limit;
        return 0;
    }
    if (st != AFD_OK) {
        c->failure = st;
        return -1;
    }
    if (r.ttft_q > c->ttft_slo) {
        c->limit = AFD_SERVING_LIMIT_TTFT;
        return 0;
    }
    if (r.tpot_q > c->tpot_slo) { /* NaN (one output token) passes */
        c->limit = AFD_SERVING_LIMIT_TPOT;
        return 0;
    }
    return 1;
}

afd_status afd_serving_goodput(const afd_serving_params *p, int colloc, double ttft_slo,
                               double tpot_slo, double rel_tol, double *goodput, int *limit)
{
    struct cf_ctx c;
    law_prep lp;
    double cap;
    afd_status st;
    *goodput = NAN;
    *limit = AFD_SERVING_LIMIT_NONE;
    if (p == NULL || !(ttft_slo > 0) || !(tpot_slo > 0))
        return AFD_EINVAL;
    c.p = *p;
    c.p.lambda = 1; /* for the check only */
    cap = afd_serving_capacity(&c.p, colloc);
    if (!(cap > 0) || !isfinite(cap))
        return AFD_EINVAL;
    if ((st = law_prep_init(&c.p, colloc, 1, &lp)) != AFD_OK)
        return st;
    c.lp = &lp;
    c.colloc = colloc;
    c.ttft_slo = ttft_slo;
    c.tpot_slo = tpot_slo;
    c.limit = AFD_SERVING_LIMIT_NONE;
    c.failure = AFD_OK;
    st = afd_goodput_bisect(cf_feasible, &c, cap * 1e-4, cap, rel_tol, goodput);
    if (st == AFD_ENUMERIC)
        st = c.failure;
    if (st == AFD_OK && c.limit == AFD_SERVING_LIMIT_NONE) {
        /* the capacity itself is not tested: above the goodput a stage saturates */
        c.p.lambda = cap;
        cf_feasible(cap * (1 - 1e-9), &c);
    }
    law_prep_free(&lp);
    *limit = c.limit;
    return st;
}

/* One stage of the disaggregated system alone (afd_serving_goodput_stages). */
struct stage_ctx {
    afd_serving_params p;
    law_prep lp; /* a prompt's prefill work and its greedy batches */
    int decode_stage;
    double slo;
    afd_status failure;
};

static int stage_feasible(double lambda, void *ctx)
{
    struct stage_ctx *c = ctx;
    afd_serving_result r;
    afd_status st;
    set_nan(&r);
    c->p.lambda = lambda;
    if (c->decode_stage)
        st = disagg_decode(&c->p, lambda, &r);
    else
        st = prefill(&c->p, c->p.prefill, c->lp.vary ? &c->lp.sl : NULL, c->lp.g, &r);
    if (st == AFD_EUNSTABLE)
        return 0;
    if (st != AFD_OK) {
        c->failure = st;
        return -1;
    }
    if (c->decode_stage) /* as afd_serving_disagg: the transfer spread over G - 1 steps */
        return !(r.tpot_q + c->p.kv_time / (c->p.output - 1) > c->slo);
    return !(r.ttft_q > c->slo);
}

static afd_status stage_goodput(struct stage_ctx *c, double cap, double rel_tol, double *g)
{
    afd_status st;
    c->failure = AFD_OK;
    st = afd_goodput_bisect(stage_feasible, c, cap * 1e-4, cap, rel_tol, g);
    return st == AFD_ENUMERIC ? c->failure : st;
}

/* The goodput of 1 .. n instances (*size set before each search), each of
 * capacity rate: out[i] for i + 1.  Pooling: at the same load per server
 * the prefill wait quantile falls as c grows (and what else the closed
 * forms compute depends on the load per instance only), so i + 1 instances
 * keep the SLOs at i + 1 times the per-instance goodput of i; the search
 * starts there, and needs no evaluation once that is within rel_tol of the
 * capacity.  Should the start fail (the pooling premise broken: the greedy
 * batches' form is an approximation for c > 1), the search starts from 1e-4
 * of the capacity. */
static afd_status by_size(afd_feasible_fn feasible, void *ctx, unsigned *size,
                          afd_status *failure, double rate, double rel_tol, unsigned n,
                          double *out)
{
    unsigned i;
    afd_status st;
    for (i = 0; i < n; i++) {
        double hi = (i + 1) * rate, lo = i > 0 ? out[i - 1] * (i + 1) / i : 0;
        *size = i + 1;
        *failure = AFD_OK;
        if (lo > 0 && hi - lo <= rel_tol * hi) {
            out[i] = lo;
            continue;
        }
        if (lo > 0) {
            /* upward from lo in steps that double, the first one just
             * beyond rel_tol, then the bisection between the last two */
            double step = rel_tol / (1 - rel_tol), up = lo;
            int f = feasible(lo, ctx);
            while (f == 1) {
                lo = up;
                up = lo * (1 + step);
                if (!(up < hi)) {
                    up = hi;
                    break;
                }
                f = feasible(up, ctx);
                step *= 2;
            }
            if (f < 0)
                return *failure;
            if (up > lo) {
                st = afd_goodput_bisect(feasible, ctx, lo, up, rel_tol, &out[i]);
                if (st != AFD_OK)
                    return st == AFD_ENUMERIC ? *failure : st;
                if (out[i] > 0)
                    continue;
            }
        }
        st = afd_goodput_bisect(feasible, ctx, hi * 1e-4, hi, rel_tol, &out[i]);
        if (st != AFD_OK)
            return st == AFD_ENUMERIC ? *failure : st;
    }
    return AFD_OK;
}

afd_status afd_serving_goodput_stages(const afd_serving_params *p, double ttft_slo,
                                      double tpot_slo, double rel_tol, unsigned n,
                                      double *prefill_goodput, double *decode_goodput)
{
    struct stage_ctx c;
    double rate = 0;
    afd_status st;
    unsigned i, k;
    *decode_goodput = NAN;
    for (i = 0; prefill_goodput != NULL && i < n; i++)
        prefill_goodput[i] = NAN;
    if (p == NULL || (n > 0 && prefill_goodput == NULL) || !(ttft_slo > 0) || !(tpot_slo > 0))
        return AFD_EINVAL;
    c.p = *p;
    c.p.lambda = 1; /* for the check only */
    c.p.prefill = c.p.decode = 1;
    if (c.p.quantile == 0)
        c.p.quantile = 0.9;
    if (check(&c.p) != AFD_OK)
        return AFD_EINVAL;
    if ((st = law_prep_init(&c.p, 0, 1, &c.lp)) != AFD_OK)
        return st;
    /* decode: one instance, capacity 1 / ((G - 1) t(B) / B) (afd_serving_capacity) */
    if (c.p.output > 1) {
        c.decode_stage = 1;
        c.slo = tpot_slo;
        st = stage_goodput(&c, 1 / decode_per_request(&c.p), rel_tol, decode_goodput);
    } else {
        *decode_goodput = INFINITY;
    }
    /* prefill: i + 1 instances, capacity (i + 1) max_k k / S(k) */
    c.decode_stage = 0;
    c.slo = ttft_slo;
    for (k = 1; k <= c.p.prefill_bmax; k++)
        if (k / batch_time(c.p.hw, k, c.p.prompt) > rate)
            rate = k / batch_time(c.p.hw, k, c.p.prompt);
    if (st == AFD_OK)
        st = by_size(stage_feasible, &c, &c.p.prefill, &c.failure, rate, rel_tol, n,
                     prefill_goodput);
    law_prep_free(&c.lp);
    return st;
}

afd_status afd_serving_goodput_colloc_sizes(const afd_serving_params *p, double ttft_slo,
                                            double tpot_slo, double rel_tol, unsigned n,
                                            double *goodput)
{
    struct cf_ctx c;
    law_prep lp;
    double rate;
    afd_status st;
    unsigned i;
    for (i = 0; goodput != NULL && i < n; i++)
        goodput[i] = NAN;
    if (p == NULL || (n > 0 && goodput == NULL) || !(ttft_slo > 0) || !(tpot_slo > 0))
        return AFD_EINVAL;
    c.p = *p;
    c.p.lambda = 1; /* for the check only */
    c.p.instances = 1;
    rate = afd_serving_capacity(&c.p, 1); /* N instances: N times one's */
    if (!(rate > 0) || !isfinite(rate))
        return AFD_EINVAL;
    if ((st = law_prep_init(&c.p, 1, 1, &lp)) != AFD_OK)
        return st;
    c.lp = &lp;
    c.colloc = 1;
    c.ttft_slo = ttft_slo;
    c.tpot_slo = tpot_slo;
    c.limit = AFD_SERVING_LIMIT_NONE;
    st = by_size(cf_feasible, &c, &c.p.instances, &c.failure, rate, rel_tol, n, goodput);
    law_prep_free(&lp);
    return st;
}

double afd_serving_goodput_split(const double *prefill_goodput, double decode_goodput,
                                 unsigned np, unsigned nd)
{
    double d = nd * decode_goodput;
    if (prefill_goodput == NULL || np < 1 || nd < 1)
        return NAN;
    return prefill_goodput[np - 1] < d ? prefill_goodput[np - 1] : d;
}

/* ------------------------------------------------ chunked prefill (Sarathi)
 * See afd_serving.h for the model and its stated error. */
afd_status afd_serving_chunked(const afd_serving_chunked_params *p, afd_serving_result *out)
{
    const afd_hw *hw;
    double lam, q, P, P2, G, m, cd, cp, load, tbar, nbar, s, nit, a_eff, idle, D, rho, mean,
        quant;
    double busy, r, life, sd, kv;
    afd_status st;

    set_nan(out);
    if (p == NULL || (hw = p->hw) == NULL || !afd_hw_has_prefill(hw) || !afd_hw_has_decode(hw))
        return AFD_EINVAL;
    if (!(hw->prefill_a >= 0 && hw->prefill_b >= 0 && hw->prefill_c >= 0 &&
          hw->decode_beta >= 0 && hw->decode_gamma >= 0 && hw->decode_alpha >= 0))
        return AFD_EINVAL;
    P = p->prompt_mean;
    P2 = p->prompt_m2 > 0 ? p->prompt_m2 : P * P;
    G = p->output_mean;
    q = p->quantile == 0 ? 0.9 : p->quantile;
    if (!(p->lambda > 0 && isfinite(p->lambda)) || p->instances < 1 || p->decode_bmax < 1 ||
        p->chunk <= p->decode_bmax || !(P >= 1 && P < 1e9) || !(P2 >= P * P * (1 - 1e-12)) ||
        !isfinite(P2) || !(G >= 1 && G < 1e9) || !(q > 0 && q < 1) ||
        !(p->theta >= 0 && p->theta < 1e18))
        return AFD_EINVAL;
    kv = afd_priv_chunked_kv(P, G, p->theta);
    lam = p->lambda / p->instances; /* per instance */
    m = G - 1;
    /* (C1) mean iteration seen by a decoding request: it, n = lam m T others,
     * and the prefill tokens arriving meanwhile, lam E[P] T (internal.h; the
     * equation of afd_chunked_interference too) */
    if (afd_priv_chunked_tpot(hw, lam, lam, P, P2, G, kv, &cd, &cp, &load, &tbar) != 0) {
        out->limit = AFD_SERVING_LIMIT_DECODE;
        out->decode_rho = load;
        return AFD_EUNSTABLE;
    }
    nbar = lam * m * tbar; /* (C2) time-average decoding sequences */
    out->decode_rho = load;
    out->decode_batch = m > 0 ? 1 + nbar : 0;
    if (m > 0 && (1 + nbar > p->decode_bmax || lam * P * tbar > p->chunk - (1 + nbar))) {
        /* the iteration cannot hold the mean decode and prefill tokens */
        out->limit = 1 + nbar > p->decode_bmax ? AFD_SERVING_LIMIT_DECODE
                                               : AFD_SERVING_LIMIT_PREFILL;
        return AFD_EUNSTABLE;
    }
    /* (C3) prefill service: ceil(P / (S - nbar)) iterations, each with its
     * fixed cost (beta with decodes, prefill_a without: P(none) = e^-nbar,
     * the M/G/inf population) and nbar decode tokens, plus the prompt's
     * own prefill work pb P + pc P^2 */
    s = p->chunk - nbar;
    nit = ceil(P / s - 1e-9);
    idle = exp(-nbar);
    a_eff = hw->decode_beta * (1 - idle) + hw->prefill_a * idle;
    D = nit * (a_eff + nbar * cd) + hw->prefill_b * P + hw->prefill_c * P2;
    rho = lam * D;
    out->prefill_rho = rho;
    out->prefill_batch = 1;
    if (!(rho < 1)) {
        out->limit = AFD_SERVING_LIMIT_PREFILL;
        return AFD_EUNSTABLE;
    }
    /* (C4) TTFT: M/D/N sojourn with service D, plus the residual of the
     * iteration in flight when the instance is decoding (uniform on (0, T)) */
    st = mds(p->lambda, D, (int)p->instances, q, &mean, &quant);
    if (st == AFD_ENOMEM) {
        out->limit = AFD_SERVING_LIMIT_PREFILL;
        return AFD_EUNSTABLE;
    }
    if (st != AFD_OK)
        return st;
    busy = m > 0 ? 1 - idle : 0;
    out->ttft_mean = mean + busy * tbar / 2;
    r = busy > 0 ? 1 - (1 - q) / busy : 0;
    out->ttft_q = quant + (r > 0 ? r * tbar : 0);
    if (m <= 0) {
        out->tpot_mean = out->tpot_q = NAN;
        return AFD_OK;
    }
    /* (C5) TPOT: mean T; its spread over a request's decode life L = m T is
     * that of the prefill work other arrivals bring in it, compound Poisson
     * at rate lam with size pb P + pc P^2: variance lam L E[size^2] */
    out->tpot_mean = tbar;
    life = m * tbar;
    sd = sqrt(lam * life) * (hw->prefill_b * P + hw->prefill_c * P2);
    out->tpot_q = tbar + gsl_cdf_ugaussian_Pinv(q) * sd / m;
    return AFD_OK;
}

double afd_closed_gap(double closed, double simulated)
{
    if (!isfinite(closed) || !isfinite(simulated) || !(simulated > 0))
        return NAN;
    return closed / simulated - 1;
}

int afd_closed_too_close(double first, double second, double err)
{
    if (!(first > 0) || !(second > 0) || !(second <= first) || !(err >= 0 && err < 1) ||
        !isfinite(first))
        return 0;
    return second >= (1 - err) * first;
}

/* the largest b in [0, cap] with b x per + fixed <= budget (per > 0),
 * the floor checked against the inequality itself */
static double largest_within(double budget, double fixed, double per, double cap)
{
    double b;
    if (!isfinite(budget))
        return cap;
    b = floor((budget - fixed) / per);
    if (!(b > 0))
        return 0;
    if (b > cap)
        return cap;
    while (b > 0 && b * per + fixed > budget)
        b--;
    while (b < cap && (b + 1) * per + fixed <= budget)
        b++;
    return b;
}

afd_status afd_decode_bmax(const afd_decode_bmax_params *p, unsigned *bmax, int *binds)
{
    double cap, bm, bt, step;
    int which;
    *bmax = 0;
    if (binds != NULL)
        *binds = 0;
    if (p == NULL || p->hw == NULL || !afd_hw_has_decode(p->hw) || !(p->kv_capacity > 0) ||
        !(p->tpot_slo > 0) || !(p->request_tokens >= 1) || !isfinite(p->request_tokens) ||
        !(p->kv_mean > 0) || !isfinite(p->kv_mean))
        return AFD_EINVAL;
    cap = p->limit > 0 ? (double)p->limit : (double)AFD_DECODE_BMAX_MAX;
    /* (M) b request_tokens <= kv_capacity; (T) beta + b (gamma + alpha kv_mean) <= slo */
    bm = largest_within(p->kv_capacity, 0, p->request_tokens, cap);
    step = p->hw->decode_gamma + p->hw->decode_alpha * p->kv_mean;
    bt = step > 0 ? largest_within(p->tpot_slo, p->hw->decode_beta, step, cap)
                  : (p->hw->decode_beta <= p->tpot_slo ? cap : 0);
    /* the smallest of the three: the limit when reached, else (M) before (T) */
    which = bm < cap && bm <= bt ? AFD_DECODE_BMAX_MEMORY
            : bt < cap           ? AFD_DECODE_BMAX_TPOT
                                 : AFD_DECODE_BMAX_LIMIT;
    cap = fmin(cap, fmin(bm, bt));
    *bmax = (unsigned)cap;
    if (binds != NULL)
        *binds = which;
    return AFD_OK;
}
