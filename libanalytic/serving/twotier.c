/* twotier.c: TTFT attainment and capacity of one pool and of LP/HP splits
 * from the queues with deadlines; see afd_twotier.h. */
#include <config.h>

#include <math.h>

#include <stdlib.h>

#include "afd_queue.h"
#include "afd_serving.h"
#include "afd_twotier.h"
#include "internal.h"
#include "svc_internal.h"

/* int_0^t e^{-k x} dx, k >= 0 */
static double e1(double k, double t)
{
    return k * t < 1e-300 ? t : -expm1(-k * t) / k;
}

/* A wait law: P(W <= t) for t >= 0. */
typedef struct wait_law {
    int kind; /* 0: M/M/c FCFS scaled; 1: M/M/c+D served, scaled; 2: always 0 (unstable) */
    double k; /* time scale */
    /* kind 0: 1 - C e^{-kappa t/k} */
    double cw, kappa;
    /* kind 1 (in the scaled time u = t/k, deadline dd = d/k):
     * P(V <= u) = (inv_b s + lambda g(u)) / den, served CDF = that / P(V <= dd) */
    double inv_b, lambda, cmu, dd, sigma, den, pvd;
    /* kind 1: the M/M/c+D model itself (c servers of mean service mean) */
    int c;
    double mean;
} wait_law;

static double law_cdf(const wait_law *w, double t)
{
    double u;
    if (t < 0)
        return 0;
    if (w->kind == 2)
        return 0;
    u = t / w->k;
    if (w->kind == 0)
        return 1 - w->cw * exp(-w->kappa * u);
    if (u >= w->dd)
        return 1;
    if (w->kappa >= 0) {
        return (w->inv_b + w->lambda * e1(w->kappa, u)) / w->den / w->pvd;
    } else {
        double ak = -w->kappa;
        return (w->inv_b * w->sigma + w->lambda * (exp(-ak * (w->dd - u)) - w->sigma) / ak) /
               w->den / w->pvd;
    }
}

static double scale_of(const afd_svc_law *l)
{
    return l->kind == LAW_EXP ? 1 : l->m2 / (l->mean * l->mean) / 2;
}

/* FCFS M/G/c wait (no deadline). */
static void fcfs_law(double lambda, const afd_svc_law *l, int c, wait_law *w)
{
    double a = lambda * l->mean;
    w->k = scale_of(l);
    if (!(a < c)) {
        w->kind = 2;
        return;
    }
    w->kind = 0;
    w->cw = afd_erlang_c(a, c);
    w->kappa = c / l->mean - lambda;
}

/* M/G/c+D served wait and p_off (M/M/c+D with deadline d/k). */
static void deadline_law(double lambda, const afd_svc_law *l, int c, double d, wait_law *w,
                         double *poff)
{
    double a = lambda * l->mean, bk = 1;
    int i;
    w->kind = 1;
    w->c = c;
    w->mean = l->mean;
    w->k = scale_of(l);
    w->dd = d / w->k;
    w->lambda = lambda;
    w->cmu = c / l->mean;
    w->kappa = w->cmu - lambda;
    for (i = 1; i <= c - 1; i++)
        bk = a * bk / (i + a * bk);
    w->inv_b = 1 / bk;
    if (w->kappa >= 0) {
        double e = exp(-w->kappa * w->dd);
        w->sigma = 1;
        w->den = w->inv_b + lambda * e1(w->kappa, w->dd) + lambda * e / w->cmu;
        *poff = lambda * e / w->cmu / w->den;
    } else {
        double ak = -w->kappa;
        w->sigma = exp(w->kappa * w->dd);
        w->den = w->inv_b * w->sigma + lambda * e1(ak, w->dd) + lambda / w->cmu;
        *poff = lambda / w->cmu / w->den;
    }
    w->pvd = 1 - *poff;
}

/* The offloaded stream's transform at s (afd_mmc_overflow_lst of the LP
 * pool's M/M/c+D model, deadline d/k). */
static afd_status lp_overflow(const wait_law *lp, double s, double *v)
{
    return afd_mmc_overflow_lst(lp->lambda, lp->mean, (unsigned)lp->c, lp->dd, s, v);
}

/* 1 - (g(x) - g(j)) / (x - j), g(x) = c (1 - psi(mu x)): the ratio
 * (c (1 - psi(j mu)) - j) / (c (1 - sigma) - j) of Takacs' sum, given
 * x = c (1 - sigma) = g(x).  Where x is within 1e-4 of j both sides vanish
 * together; the divided difference is then the central difference of g at
 * their midpoint with step 1e-4 (error O(1e-8)). */
static afd_status takacs_ratio(const wait_law *lp, double mu, int c, double x, int j, double gj,
                               double *r)
{
    double lo, hi, glo, ghi, h = 1e-4;
    afd_status st;
    if (fabs(x - j) > h) {
        *r = 1 - (x - gj) / (x - j);
        return AFD_OK;
    }
    lo = (x + j) / 2 - h;
    hi = lo + 2 * h;
    if ((st = lp_overflow(lp, mu * lo, &glo)) != AFD_OK ||
        (st = lp_overflow(lp, mu * hi, &ghi)) != AFD_OK)
        return st;
    *r = 1 - c * (glo - ghi) / (2 * h);
    return AFD_OK;
}

/* The HP pool's wait (hp servers, service law l) fed by the LP pool's
 * offloads.  The offloads are not Poisson: they come in runs while the LP
 * pool is congested.  They form a renewal process whose transform psi is
 * that of the LP model (afd_mmc_overflow_lst), so the HP pool is GI/M/c,
 * whose wait is exact (Takacs 1962; Gross and Harris, Fundamentals of
 * Queueing Theory, 3rd ed., Section 6.3):
 *     sigma in (0, 1) the root of sigma = psi(c mu (1 - sigma)),
 *     beta_j = psi(j mu),  C_j = prod_{i <= j} beta_i / (1 - beta_i),
 *     1/D = 1/(1 - sigma) + sum_{j=1}^{c} binom(c, j) / (C_j (1 - beta_j))
 *                          (c (1 - beta_j) - j) / (c (1 - sigma) - j),
 *     P(W > t) = D / (1 - sigma) e^{-c mu (1 - sigma) t}
 * (Poisson input: sigma = rho and D / (1 - sigma) is Erlang's C).  For
 * another service law the wait is stretched in time by
 *     k = (ca^2 + cs^2) / (ca^2 + 1),
 * ca^2 the offloads' squared coefficient of variation (afd_mmc_overflow_scv):
 * the GI/G/c wait's heavy-traffic mean is proportional to ca^2 + cs^2
 * (Kingman 1961; Kollerstrom, J. Appl. Prob. 11 (1974) 544-552), the ratio
 * of GI/G/c to GI/M/c (Whitt, Prod. Oper. Mgmt 2 (1993) 114-161); with
 * Poisson input k = (1 + cs^2)/2, the scaling of fcfs_law.
 * Offloads too rare for their moments (p_off below about e^{-700}) are taken
 * as Poisson: they then weigh nothing in the attainment. */
static afd_status offload_law(const wait_law *lp, double lh, const afd_svc_law *l, int c,
                              wait_law *w)
{
    double mu = 1 / l->mean, lo = 0, hi = 1, sg, x, sum, cj = 1, ca2, cs2, v;
    afd_status st;
    int j;
    if (!(lh * l->mean < c)) {
        w->kind = 2;
        return AFD_OK;
    }
    if (afd_mmc_overflow_scv(lp->lambda, lp->mean, (unsigned)lp->c, lp->dd, &ca2) != AFD_OK) {
        fcfs_law(lh, l, c, w);
        return AFD_OK;
    }
    /* f(sigma) = psi(c mu (1 - sigma)) - sigma: f(0) > 0, f(1-) < 0 when stable */
    while (hi - lo > 1e-15) {
        double mid = (lo + hi) / 2;
        if ((st = lp_overflow(lp, c * mu * (1 - mid), &v)) != AFD_OK)
            return st;
        if (v > mid)
            lo = mid;
        else
            hi = mid;
    }
    sg = (lo + hi) / 2;
    x = c * (1 - sg);
    sum = 1 / (1 - sg);
    for (j = 1; j <= c; j++) {
        double bj, r;
        if ((st = lp_overflow(lp, j * mu, &bj)) != AFD_OK)
            return st;
        cj *= bj / (1 - bj);
        if ((st = takacs_ratio(lp, mu, c, x, j, c * (1 - bj), &r)) != AFD_OK)
            return st;
        /* binom(c, j) by lgamma, finite for any c */
        sum += exp(lgamma(c + 1.0) - lgamma(j + 1.0) - lgamma(c - j + 1.0)) / cj / (1 - bj) * r;
    }
    cs2 = l->kind == LAW_EXP ? 1 : l->m2 / (l->mean * l->mean) - 1;
    w->kind = 0;
    w->k = (ca2 + cs2) / (ca2 + 1);
    w->cw = isfinite(sum) && sum > 0 ? 1 / sum / (1 - sg) : 0;
    w->kappa = c * mu * (1 - sg);
    if (!(w->cw >= 0 && w->cw <= 1 && w->k > 0))
        return AFD_ENUMERIC;
    return AFD_OK;
}

typedef struct ectx {
    const wait_law *w;
    double budget, mean;
} ectx;

static double integrand(double s, void *p)
{
    const ectx *c = p;
    return law_cdf(c->w, c->budget - s) * exp(-s / c->mean) / c->mean;
}

/* E_S[ P(W <= budget - S) ]. */
static afd_status expect(const afd_svc_law *l, const wait_law *w, double budget, double *v)
{
    if (budget <= 0 || w->kind == 2) { /* no time left, or an unstable pool */
        *v = 0;
        return AFD_OK;
    }
    if (l->kind == LAW_EXP) {
        ectx c = {w, budget, l->mean};
        double e;
        /* the integrand has a kink where budget - s crosses the deadline: split there */
        double cut = w->kind == 1 ? budget - w->dd * w->k : 0;
        afd_status st;
        if (cut > 0 && cut < budget) {
            double v1 = 0, v2 = 0, e2;
            st = afd_priv_integrate(integrand, &c, 0, cut, 1e-14, 1e-10, &v1, &e);
            if (st == AFD_OK)
                st = afd_priv_integrate(integrand, &c, cut, budget, 1e-14, 1e-10, &v2, &e2);
            /* on failure the value is not used, but is defined */
            *v = st == AFD_OK ? v1 + v2 : NAN;
            return st;
        }
        return afd_priv_integrate(integrand, &c, 0, budget, 1e-14, 1e-10, v, &e);
    }
    {
        size_t j;
        double s = 0;
        for (j = 0; j < l->n && l->t[j] <= budget; j++)
            s += l->w[j] * law_cdf(w, budget - l->t[j]);
        *v = s;
    }
    return AFD_OK;
}

afd_status afd_twotier_attainment(const afd_twotier *m, double lambda, afd_twotier_result *out)
{
    wait_law w;
    afd_status st;
    if (out == NULL)
        return AFD_EINVAL;
    out->attainment = out->p_off = out->attain_lp = out->attain_hp = out->rho_hp = NAN;
    if (m == NULL || m->law == NULL || m->lp < 1 || m->hp < 0 || !(lambda > 0) ||
        !isfinite(lambda) || !(m->ttft_slo > 0) || !isfinite(m->ttft_slo) ||
        (m->hp > 0 && !(m->threshold > 0 && m->threshold <= m->ttft_slo)))
        return AFD_EINVAL;
    if (m->hp == 0) {
        fcfs_law(lambda, m->law, m->lp, &w);
        st = expect(m->law, &w, m->ttft_slo, &out->attain_lp);
        if (st != AFD_OK)
            return st;
        out->p_off = 0;
        out->attainment = out->attain_lp;
        return AFD_OK;
    }
    {
        double poff, a_lp, a_hp, lh;
        wait_law wh;
        deadline_law(lambda, m->law, m->lp, m->ttft_slo - m->threshold, &w, &poff);
        st = expect(m->law, &w, m->ttft_slo, &a_lp);
        if (st != AFD_OK)
            return st;
        lh = lambda * poff;
        out->rho_hp = lh * m->law->mean / m->hp;
        if (lh > 0) {
            if ((st = offload_law(&w, lh, m->law, m->hp, &wh)) != AFD_OK)
                return st;
        } else { /* nothing offloaded: an HP request would not wait */
            wh.kind = 0;
            wh.k = 1;
            wh.cw = 0;
            wh.kappa = 1;
        }
        st = expect(m->law, &wh, m->threshold, &a_hp);
        if (st != AFD_OK)
            return st;
        out->p_off = poff;
        out->attain_lp = a_lp;
        out->attain_hp = a_hp;
        out->attainment = (1 - poff) * a_lp + poff * a_hp;
    }
    return AFD_OK;
}

afd_status afd_twotier_capacity(const afd_twotier *m, double target, double *lambda)
{
    afd_twotier_result r;
    afd_status st;
    double lo, hi;
    int i;
    if (lambda == NULL)
        return AFD_EINVAL;
    *lambda = NAN;
    if (m == NULL || m->law == NULL || !(target > 0 && target < 1))
        return AFD_EINVAL;
    lo = 1e-9 / m->law->mean;
    st = afd_twotier_attainment(m, lo, &r);
    if (st != AFD_OK)
        return st;
    if (r.attainment < target) {
        *lambda = 0;
        return AFD_OK;
    }
    hi = lo;
    for (i = 0; i < 200; i++) {
        hi *= 2;
        st = afd_twotier_attainment(m, hi, &r);
        if (st != AFD_OK)
            return st;
        if (r.attainment < target)
            break;
        lo = hi;
    }
    if (i == 200)
        return AFD_ENUMERIC;
    while (hi - lo > 1e-9 * hi) {
        double mid = (lo + hi) / 2;
        st = afd_twotier_attainment(m, mid, &r);
        if (st != AFD_OK)
            return st;
        if (r.attainment >= target)
            lo = mid;
        else
            hi = mid;
    }
    *lambda = lo;
    return AFD_OK;
}

/* ---------------------------------------------- the simulator's two tiers */

/* E[P] over the prompts, each 1/n. */
static double pi_prompt_mean(const afd_twotier_serve_params *p)
{
    double P = 0;
    size_t i;
    for (i = 0; i < p->n; i++)
        P += p->prompts[i] / (double)p->n;
    return P;
}

/* The LP service law at LP rate lam_lp (see afd_twotier.h). */
static afd_status lp_law(const afd_twotier_serve_params *p, double lam_lp, double *v,
                         afd_svc_law **law)
{
    const afd_hw *hw = p->hw;
    double P = 0, P2 = 0, nbar = 0, a_eff = hw->prefill_a, cd = 0, per = p->chunk;
    size_t i;
    afd_status st;
    for (i = 0; i < p->n; i++) {
        P += p->prompts[i] / (double)p->n;
        P2 += p->prompts[i] * p->prompts[i] / (double)p->n;
    }
    if (p->output_mean > 1 && lam_lp > 0) {
        afd_serving_chunked_params q;
        afd_serving_result r;
        q.hw = hw;
        q.lambda = lam_lp;
        q.instances = p->lp;
        q.chunk = p->chunk;
        q.decode_bmax = p->decode_bmax;
        q.prompt_mean = P;
        q.prompt_m2 = P2 < P * P ? P * P : P2;
        q.output_mean = p->output_mean;
        q.quantile = 0.9;
        q.theta = 0;
        st = afd_serving_chunked(&q, &r);
        /* a prefill overload is no failure here: the LP queue sheds it */
        if (st != AFD_OK && !(st == AFD_EUNSTABLE && r.limit == AFD_SERVING_LIMIT_PREFILL &&
                              r.decode_batch >= 1))
            return st;
        nbar = r.decode_batch - 1;
        per = p->chunk - nbar;
        if (!(per >= 1))
            return AFD_EUNSTABLE;
        a_eff = hw->decode_beta * (1 - exp(-nbar)) + hw->prefill_a * exp(-nbar);
        cd = hw->decode_gamma + hw->decode_alpha * (P + p->output_mean / 2);
    }
    for (i = 0; i < p->n; i++) {
        double x = p->prompts[i];
        v[i] = ceil(x / per - 1e-9) * (a_eff + nbar * cd) + hw->prefill_b * x +
               hw->prefill_c * x * x;
    }
    return afd_svc_law_samples(v, p->n, law);
}

/* A_HP of the simulator's HP pool, offloads at rate lh (each with X left):
 * the fraction whose prefill ends within X of the offload.
 * The wait.  The offloads reach the hp instances' shared queue as the
 * renewal stream of the LP model (offload_law: GI/G/hp), wait W.
 * Elastic batches.  An HP instance prefills every waiting offload in one
 * batch, and all have their first token at its end: a request is prefilled
 * with those that join the queue while it waits, N of them, of mean lh W,
 * each adding pi to its batch.  Its prefill ends W + pi + N pi after its
 * offload, taken as (1 + a) W + pi, a = lh E[pi] the HP load in Erlangs
 * (the mean of N for each W; the batch's fixed part, paid once, is left in
 * every pi).  Against the simulator with one output token: docs/twotier.md.
 * Decode steps.  Prefills go first at every step boundary, but a step under
 * way is not interrupted (a non-preemptive priority queue: Cobham, Oper.
 * Res. 2 (1954) 70-76; Kleinrock, Queueing Systems II, Section 3.6): an
 * offload that finds the pool not prefilling (P(W = 0)) finds an instance
 * in a decode step with probability 1 - e^{-n} (M/G/inf, n sequences) and
 * waits R uniform on (0, tau) for its end, stretched as W.  The steps run
 * only while no prefill is pending, so a sequence lives m tau / (1 - rho_1)
 * (m = E[G] - 1 steps, rho_1 = a / hp) and by Little's law n = lambda_1 m
 * tau(n) / (1 - rho_1), lambda_1 = lh / hp, tau(n) the step of n sequences
 * of E[P] + E[G]/2 KV tokens each (hp_sequences).  No such n: the decodes
 * cannot keep up, A_HP = 0.
 * Then, with u = X / (1 + a) and tau = tau(n):
 *     A_HP = P(W <= u) - P(W = 0) (1 - e^{-n}) (1 - min(1, u / tau)). */
/* The step of n sequences of kv KV tokens each on an HP instance, the step
 * the simulator takes (afd_hw_decode_step): hw's decode table where it has
 * one, at one sequence at least (an instance decoding steps one sequence or
 * more), else the law beta + n cd, cd = gamma + alpha kv. */
static double hp_step(const afd_hw *hw, double n, double kv)
{
    if (afd_hw_has_decode_table(hw) && n < 1)
        n = 1;
    return afd_hw_decode_step(hw, n, n * kv);
}

/* The HP sequences per instance: the least n >= 0 with
 *     n = demand tau(n) / free,   demand = lambda_1 m, free = 1 - rho_1,
 * tau = hp_step (Little's law, hp_attainment); 0 when there is none, the
 * decodes do not keep up.  For the law it is
 *     n = demand beta / (free - demand cd)   (stable iff free > demand cd).
 * For a table, n / tau(n) (sequences served per unit of time) grows with
 * n, so the decodes keep up iff demand tau(B) <= free B at the table's
 * largest batch B (beyond it the table is extrapolated: not trusted), and
 * n is then the root on [0, B], by bisection to 1e-12 relative. */
static int hp_sequences(const afd_hw *hw, double demand, double free_, double kv, double *n)
{
    double lo = 0, hi;
    int i;
    if (!afd_hw_has_decode_table(hw)) {
        double den = free_ - demand * (hw->decode_gamma + hw->decode_alpha * kv);
        if (!(den > 0))
            return 0;
        *n = demand * hw->decode_beta / den;
        return 1;
    }
    hi = hw->decode_table.b[hw->decode_table.nb - 1];
    if (!(demand * hp_step(hw, hi, kv) <= free_ * hi))
        return 0;
    for (i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
        double mid = (lo + hi) / 2;
        if (demand * hp_step(hw, mid, kv) > free_ * mid)
            lo = mid;
        else
            hi = mid;
    }
    *n = (lo + hi) / 2;
    return 1;
}

static afd_status hp_attainment(const afd_twotier_serve_params *p, const wait_law *lpw, double lh,
                                const afd_svc_law *pi, double *a)
{
    const afd_hw *hw = p->hw;
    wait_law wh;
    double load, l1, m, kv, n = 0, tau, u;
    afd_status st;
    if (!(lh > 0)) { /* nothing offloaded: an HP request would not wait */
        *a = 1;
        return AFD_OK;
    }
    load = lh * pi->mean;
    l1 = lh / p->hp;
    if ((st = offload_law(lpw, lh, pi, (int)p->hp, &wh)) != AFD_OK)
        return st;
    m = p->output_mean - 1;
    kv = pi_prompt_mean(p) + p->output_mean / 2;
    if (wh.kind == 2 || (m > 0 && !hp_sequences(hw, l1 * m, 1 - load / p->hp, kv, &n))) {
        *a = 0; /* prefills or decodes cannot keep up */
        return AFD_OK;
    }
    tau = hp_step(hw, n, kv);
    u = p->threshold / (1 + load);
    *a = law_cdf(&wh, u) - law_cdf(&wh, 0) * -expm1(-n) * (tau > u ? 1 - u / tau : 0);
    if (*a < 0)
        *a = 0;
    return AFD_OK;
}

afd_status afd_twotier_serve(const afd_twotier_serve_params *p, afd_twotier_result *out)
{
    const afd_hw *hw;
    afd_svc_law *hp_law = NULL, *law = NULL;
    double *v = NULL, pi_mean = 0, poff = 0, d = 0;
    afd_status st;
    size_t i;
    int it;
    if (out == NULL)
        return AFD_EINVAL;
    out->attainment = out->p_off = out->attain_lp = out->attain_hp = out->rho_hp = NAN;
    if (p == NULL || (hw = p->hw) == NULL || !afd_hw_has_prefill(hw) ||
        !afd_hw_has_decode(hw) || !(p->lambda > 0) || !isfinite(p->lambda) || p->lp < 1 ||
        p->chunk <= p->decode_bmax || p->decode_bmax < 1 || p->prompts == NULL || p->n < 1 ||
        !(p->output_mean >= 1) || !isfinite(p->output_mean) || !(p->ttft_slo > 0) ||
        !isfinite(p->ttft_slo) || (p->hp > 0 && !(p->threshold >= 0 && isfinite(p->threshold))))
        return AFD_EINVAL;
    for (i = 0; i < p->n; i++)
        if (!(p->prompts[i] >= 1 && p->prompts[i] < 1e9))
            return AFD_EINVAL;
    v = malloc(p->n * sizeof *v);
    if (v == NULL)
        return AFD_ENOMEM;
    for (i = 0; i < p->n; i++) {
        double x = p->prompts[i];
        v[i] = hw->prefill_a + hw->prefill_b * x + hw->prefill_c * x * x;
        pi_mean += v[i] / (double)p->n;
    }
    if (p->hp > 0) {
        if ((st = afd_svc_law_samples(v, p->n, &hp_law)) != AFD_OK)
            goto done;
        d = p->ttft_slo - p->threshold - pi_mean;
        if (d < 0)
            d = 0;
    }
    if (p->hp == 0) {
        wait_law w;
        if ((st = lp_law(p, p->lambda, v, &law)) != AFD_OK)
            goto done;
        fcfs_law(p->lambda, law, (int)p->lp, &w);
        if ((st = expect(law, &w, p->ttft_slo, &out->attain_lp)) == AFD_OK) {
            out->p_off = 0;
            out->attainment = out->attain_lp;
        }
        goto done;
    }
    {
        /* p -> F(p), the offload fraction of the LP pool at rate lambda (1 - p),
         * falls as p grows (fewer decodes, shorter prefills): bisect F(p) = p
         * (F jumps where ceil(P / (S - nbar)) does; the bisection then stops
         * at the jump).  An LP pool that cannot keep up with its decodes at
         * (1 - p) lambda needs a larger p. */
        double lo = 0, hi = p->output_mean > 1 ? 1 : 0, f;
        wait_law w;
        for (it = 0; it < 200 && hi - lo > 1e-12; it++) {
            double mid = (lo + hi) / 2;
            afd_svc_law_free(law);
            law = NULL;
            st = lp_law(p, p->lambda * (1 - mid), v, &law);
            if (st == AFD_EUNSTABLE) {
                lo = mid;
                continue;
            }
            if (st != AFD_OK)
                goto done;
            deadline_law(p->lambda, law, (int)p->lp, d, &w, &f);
            if (f > mid)
                lo = mid;
            else
                hi = mid;
        }
        afd_svc_law_free(law);
        law = NULL;
        if ((st = lp_law(p, p->lambda * (1 - hi), v, &law)) != AFD_OK)
            goto done;
        deadline_law(p->lambda, law, (int)p->lp, d, &w, &poff);
        if ((st = expect(law, &w, p->ttft_slo, &out->attain_lp)) != AFD_OK)
            goto done;
        if ((st = hp_attainment(p, &w, p->lambda * poff, hp_law, &out->attain_hp)) != AFD_OK)
            goto done;
        out->p_off = poff;
        out->rho_hp = p->lambda * poff * hp_law->mean / p->hp;
        out->attainment = (1 - poff) * out->attain_lp + poff * out->attain_hp;
        goto done;
    }
    st = AFD_ENUMERIC;
done:
    if (st != AFD_OK)
        out->attainment = out->p_off = out->attain_lp = out->attain_hp = out->rho_hp = NAN;
    afd_svc_law_free(law);
    afd_svc_law_free(hp_law);
    free(v);
    return st;
}
