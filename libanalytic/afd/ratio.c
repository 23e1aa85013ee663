/* ratio.c: cycle times and the A/F provisioning rules (see afd_ratio.h). */
#include <config.h>

#include <float.h>
#include <math.h>
#include <string.h>

#include "afd_barrier.h"
#include "afd_ratio.h"
#include "internal.h"

afd_status afd_system_check(const afd_system *s, afd_error *err)
{
    afd_status st = afd_hw_check(&s->hw, err);
    if (st != AFD_OK)
        return st;
    if (s->B < 1)
        return afd_priv_fail(err, AFD_EINVAL, 0, 0, "B must be >= 1: %u", s->B);
    if (!(s->theta >= 0) || !isfinite(s->theta))
        return afd_priv_fail(err, AFD_EINVAL, 0, 0, "theta must be >= 0: %g", s->theta);
    if (!(s->nu >= 0) || !isfinite(s->nu))
        return afd_priv_fail(err, AFD_EINVAL, 0, 0, "nu must be >= 0: %g", s->nu);
    return AFD_OK;
}

const char *afd_bind_name(unsigned bind)
{
    static const char *const names[8] = {
        "none", "attention", "communication", "attention+communication",
        "ffn",  "attention+ffn", "communication+ffn", "attention+communication+ffn"};
    return names[bind & 7];
}

static void cycle_nan(afd_cycle *c)
{
    c->r = c->x = c->mu_a = c->sigma_a = c->t_comm = c->t_ffn = NAN;
    c->tau_mf = c->thr_mf = c->tau_g = c->thr_g = c->tau_g_err = NAN;
    c->p_attention = c->barrier = NAN;
    c->eta_a_mf = c->eta_f_mf = c->eta_a_g = c->eta_f_g = NAN;
    c->bind = 0;
}

/* The shared evaluation: r = x/y sets G, x the barrier. */
static afd_status evaluate(const afd_system *s, double r, double x, afd_cycle *c)
{
    const afd_hw *h = &s->hw;
    double rb = r * s->B, g, top;
    afd_result kappa;
    afd_status st;

    cycle_nan(c);
    if (afd_system_check(s, NULL) != AFD_OK || !(r > 0) || !isfinite(r) || !(x >= 1))
        return AFD_EINVAL;
    c->r = r;
    c->x = x;
    c->mu_a = h->alpha_a * s->B * s->theta + h->beta_a;
    c->sigma_a = h->alpha_a * sqrt(s->B) * s->nu;
    c->t_comm = h->alpha_c * rb + h->beta_c;
    c->t_ffn = h->alpha_f * rb + h->beta_f;
    g = c->t_comm > c->t_ffn ? c->t_comm : c->t_ffn;

    /* eq. (8) and which terms bind */
    top = c->mu_a > g ? c->mu_a : g;
    c->tau_mf = top;
    c->thr_mf = rb / ((r + 1) * top);
    if (c->mu_a >= top * (1 - 1e-9))
        c->bind |= AFD_BIND_ATTENTION;
    if (c->t_comm >= top * (1 - 1e-9))
        c->bind |= AFD_BIND_COMM;
    if (c->t_ffn >= top * (1 - 1e-9))
        c->bind |= AFD_BIND_FFN;

    st = afd_kappa_e(x, &kappa);
    if (st != AFD_OK)
        return st;
    c->barrier = s->theta > 0 ? s->nu / s->theta * kappa.val / sqrt(s->B) : NAN;

    /* eq. (9); Theorem 4.3: with nu = 0 the barrier load is B theta exactly */
    if (c->sigma_a == 0) {
        c->tau_g = c->tau_mf;
        c->tau_g_err = 0;
        c->p_attention = c->mu_a > g ? 1 : 0;
    } else {
        double z = (g - c->mu_a) / c->sigma_a;
        afd_result ex;
        if (!isfinite(z)) {
            cycle_nan(c);
            return AFD_ENUMERIC;
        }
        st = afd_priv_max_normal_excess(x, z, &kappa, &ex);
        if (st != AFD_OK)
            return st;
        c->tau_g = g + c->sigma_a * ex.val;
        c->tau_g_err = c->sigma_a * ex.err;
        c->p_attention = afd_max_normal_sf(x, z);
    }
    c->thr_g = rb / ((r + 1) * c->tau_g);

    /* Busy time per cycle over the cycle (afd_ratio.h); tau >= t_ffn > 0. */
    c->eta_a_mf = 1 - c->mu_a / c->tau_mf;
    c->eta_f_mf = 1 - c->t_ffn / c->tau_mf;
    c->eta_a_g = 1 - c->mu_a / c->tau_g;
    c->eta_f_g = 1 - c->t_ffn / c->tau_g;

    /* A product beyond a double (alpha B theta, alpha rB) leaves infinite
     * or NaN times: a numerical failure, reported as such by every caller
     * rather than printed as nan (barrier is NaN by definition at theta =
     * 0). */
    if (!isfinite(c->mu_a) || !isfinite(c->sigma_a) || !isfinite(c->t_comm) ||
        !isfinite(c->t_ffn) || !isfinite(c->tau_mf) || !isfinite(c->tau_g) ||
        !isfinite(c->thr_mf) || !isfinite(c->thr_g) || isnan(c->p_attention) ||
        isnan(c->eta_a_mf) || isnan(c->eta_f_mf) || isnan(c->eta_a_g) || isnan(c->eta_f_g)) {
        cycle_nan(c);
        return AFD_ENUMERIC;
    }
    return AFD_OK;
}

afd_status afd_cycle_eval(const afd_system *s, double r, afd_cycle *out)
{
    return evaluate(s, r, r >= 1 ? r : 1, out);
}

afd_status afd_cycle_topology(const afd_system *s, unsigned x, unsigned y, afd_cycle *out)
{
    if (x < 1 || y < 1) {
        cycle_nan(out);
        return AFD_EINVAL;
    }
    return evaluate(s, (double)x / (double)y, (double)x, out);
}

/* ---- Theorem 4.4 */

static double positive_finite(double v)
{
    return v > 0 && isfinite(v) ? v : NAN;
}

/* The objective of the weighted rules, rB / ((r + w) tau): tokens per time
 * unit per unit of Attention-device price when an FFN device costs w times
 * an Attention device.  For w = 1 it is the throughput per instance, eq. (1). */
static double weighted(double r, double B, double w, double tau)
{
    return r * B / ((r + w) * tau);
}

static int weight_ok(double w)
{
    return w > 0 && isfinite(w);
}

afd_status afd_ratio_cost_mf(const afd_system *s, double w, afd_mf_result *out, afd_error *err)
{
    const afd_hw *h = &s->hw;
    double mu_a, B = s->B, c0c, c0f;
    afd_status st;
    int k;

    memset(out, 0, sizeof *out);
    out->r = out->thr = out->tau = NAN;
    out->which = -1;
    for (k = 0; k < 4; k++)
        out->candidate[k] = out->thr_candidate[k] = NAN;
    st = afd_system_check(s, err);
    if (st != AFD_OK)
        return st;
    if (!weight_ok(w))
        return afd_priv_fail(err, AFD_EINVAL, 0, 0,
                             "the FFN-to-Attention price ratio must be > 0 and finite: %g", w);
    mu_a = h->alpha_a * B * s->theta + h->beta_a;

    /* eq. (10), the square-root candidates scaled by sqrt(w) (afd_ratio.h) */
    if (h->alpha_c > 0)
        c0c = (mu_a - h->beta_c) / (h->alpha_c * B);
    else /* flat communication line: it never crosses mu_A, or always exceeds it */
        c0c = mu_a >= h->beta_c ? INFINITY : -INFINITY;
    c0f = (mu_a - h->beta_f) / (h->alpha_f * B);
    out->candidate[0] = positive_finite(c0c < c0f ? c0c : c0f);
    out->candidate[1] =
        h->alpha_c > 0 ? positive_finite(sqrt(w * h->beta_c / (h->alpha_c * B))) : NAN;
    out->candidate[2] = positive_finite(sqrt(w * h->beta_f / (h->alpha_f * B)));
    out->candidate[3] = h->alpha_f != h->alpha_c
                            ? positive_finite((h->beta_c - h->beta_f) / (B * (h->alpha_f - h->alpha_c)))
                            : NAN;

    for (k = 0; k < 4; k++) {
        afd_cycle c;
        double v;
        if (isnan(out->candidate[k]))
            continue;
        st = afd_cycle_eval(s, out->candidate[k], &c);
        if (st != AFD_OK)
            return afd_priv_fail(err, st, 0, 0, "r = %g: %s", out->candidate[k],
                                 afd_strerror(st));
        v = weighted(c.r, B, w, c.tau_mf);
        out->thr_candidate[k] = v;
        if (out->which < 0 || v > out->thr) {
            out->which = k;
            out->r = out->candidate[k];
            out->thr = v;
            out->tau = c.tau_mf;
        }
    }
    if (out->which < 0)
        return afd_priv_fail(err, AFD_EEMPTY, 0, 0,
                             "no candidate of eq. (10) is positive and finite: throughput "
                             "grows as r -> 0 (are all costs zero?)");
    return AFD_OK;
}

afd_status afd_ratio_mf(const afd_system *s, afd_mf_result *out, afd_error *err)
{
    return afd_ratio_cost_mf(s, 1, out, err);
}

afd_status afd_cost_balance_limit(const afd_system *s, double *w_max, afd_error *err)
{
    const afd_hw *h = &s->hw;
    double mu_a, B = s->B, rc, rf, r0, alpha, beta;
    afd_status st;

    *w_max = NAN;
    if ((st = afd_system_check(s, err)) != AFD_OK)
        return st;
    mu_a = h->alpha_a * B * s->theta + h->beta_a;
    rc = h->alpha_c > 0 ? (mu_a - h->beta_c) / (h->alpha_c * B)
                        : (mu_a >= h->beta_c ? INFINITY : -INFINITY);
    rf = (mu_a - h->beta_f) / (h->alpha_f * B);
    /* the line that meets mu_A first binds just above the balance point */
    if (rc < rf) {
        r0 = rc;
        alpha = h->alpha_c;
        beta = h->beta_c;
    } else {
        r0 = rf;
        alpha = h->alpha_f;
        beta = h->beta_f;
    }
    if (!(r0 > 0) || !isfinite(r0))
        return afd_priv_fail(err, AFD_EEMPTY, 0, 0,
                             "no balance point: the Attention time never meets the "
                             "communication or FFN line at a positive r");
    /* V_w decreases just above r0 iff r0 >= sqrt(w beta / (alpha B)) */
    *w_max = beta > 0 ? r0 * r0 * alpha * B / beta : INFINITY;
    return AFD_OK;
}

/* ---- eq. (12) */

afd_status afd_ratio_cost_g(const afd_system *s, double w, const double *rs, size_t n,
                            afd_cycle *best, double *value)
{
    size_t k;
    double bestv = NAN;
    cycle_nan(best);
    if (value != NULL)
        *value = NAN;
    if (!weight_ok(w))
        return AFD_EINVAL;
    if (n == 0)
        return AFD_EEMPTY;
    for (k = 0; k < n; k++) {
        afd_cycle c;
        double v;
        afd_status st = afd_cycle_eval(s, rs[k], &c);
        if (st != AFD_OK) {
            cycle_nan(best);
            return st;
        }
        v = weighted(c.r, s->B, w, c.tau_g);
        if (k == 0 || v > bestv || (v == bestv && c.r < best->r)) {
            *best = c;
            bestv = v;
        }
    }
    if (value != NULL)
        *value = bestv;
    return AFD_OK;
}

afd_status afd_ratio_g(const afd_system *s, const double *rs, size_t n, afd_cycle *best)
{
    return afd_ratio_cost_g(s, 1, rs, n, best, NULL);
}

static afd_status value_g_at(const afd_system *s, double w, double r, double *v)
{
    afd_cycle c;
    afd_status st = afd_cycle_eval(s, r, &c);
    *v = weighted(c.r, s->B, w, c.tau_g);
    return st;
}

struct neg_value_g {
    const afd_system *s;
    double w;
    afd_status st; /* the first failure */
};

/* -weighted Thr_G at r, for the minimizer */
static double neg_value_g(double r, void *vc)
{
    struct neg_value_g *c = vc;
    double v;
    afd_status st = value_g_at(c->s, c->w, r, &v);
    if (st != AFD_OK) {
        if (c->st == AFD_OK)
            c->st = st;
        return NAN;
    }
    return -v;
}

afd_status afd_ratio_cost_g_continuous(const afd_system *s, double w, double lo, double hi,
                                       double *r_star)
{
    struct neg_value_g ctx;
    double a, b, f1, f2, x, fx, flo, fhi;
    afd_status st;
    int it;

    *r_star = NAN;
    if (!(lo > 0) || !(hi >= lo) || !isfinite(hi) || !weight_ok(w))
        return AFD_EINVAL;
    if (hi == lo) {
        *r_star = lo;
        return AFD_OK;
    }
    ctx.s = s;
    ctx.w = w;
    ctx.st = AFD_OK;
    /* GSL's Brent minimizer on -Thr_G to 1e-5 relative (see afd_priv_fmin
       for the bracket), then the refinement below */
    flo = neg_value_g(lo, &ctx);
    fhi = neg_value_g(hi, &ctx);
    st = ctx.st != AFD_OK ? ctx.st
                          : afd_priv_fmin(neg_value_g, &ctx, lo, flo, hi, fhi, 1e-5, &x, &fx, &a,
                                          &b);
    if (ctx.st != AFD_OK)
        return ctx.st;
    if (st != AFD_OK)
        return st;
    /* The minimizer compares function values, which near a flat
     * maximum resolves r only to about sqrt(noise) ~ 3e-7 relative.  Finish
     * by bisecting on the sign of the central-difference derivative, which
     * is reliable until |r - r*| ~ 1e-9 r. */
    a = a - 1e-5 * b > lo ? a - 1e-5 * b : lo;
    b = b + 1e-5 * b < hi ? b + 1e-5 * b : hi;
    for (it = 0; it < 100 && b - a > 1e-12 * b; it++) {
        double m = 0.5 * (a + b), h = 1e-4 * m;
        if ((st = value_g_at(s, w, m + h, &f1)) != AFD_OK ||
            (st = value_g_at(s, w, m - h, &f2)) != AFD_OK)
            return st;
        if (f1 > f2)
            a = m;
        else
            b = m;
    }
    *r_star = 0.5 * (a + b);
    return AFD_OK;
}

afd_status afd_ratio_g_continuous(const afd_system *s, double lo, double hi, double *r_star)
{
    return afd_ratio_cost_g_continuous(s, 1, lo, hi, r_star);
}

/* The optimal ratio of a rule as a function of (theta, nu); for 'g' within
 * [lo, hi]. */
static afd_status rule_r(const afd_system *s, double w, char rule, double lo, double hi, double *r)
{
    if (rule == 'm') {
        afd_mf_result mf;
        afd_status st = afd_ratio_cost_mf(s, w, &mf, NULL);
        *r = mf.r;
        return st;
    }
    return afd_ratio_cost_g_continuous(s, w, lo, hi, r);
}

afd_status afd_ratio_cost_se(const afd_system *s, double w, char rule, double r_g, double lo,
                             double hi, double theta_se, double nu_se, double cov, double *r_cont,
                             double *se)
{
    afd_system p = *s, m = *s;
    double r0, rp, rm, d_theta = 0, d_nu = 0, h, v;
    afd_status st;

    /* NaN standard errors are unknown ones (a one-request trace): the
     * optimum is still defined, its standard error is NaN */
    int unknown = isnan(theta_se) || isnan(nu_se) || isnan(cov);
    *r_cont = *se = NAN;
    if ((rule != 'm' && rule != 'g') || !weight_ok(w) || theta_se < 0 || nu_se < 0 ||
        isinf(theta_se) || isinf(nu_se) || isinf(cov))
        return AFD_EINVAL;
    if (rule == 'g') {
        lo = r_g - 1 > lo ? r_g - 1 : lo;
        lo = lo > 1 ? lo : 1;
        hi = r_g + 1 < hi ? r_g + 1 : hi;
        if (!(hi >= lo))
            return AFD_EINVAL;
    }
    if ((st = rule_r(s, w, rule, lo, hi, &r0)) != AFD_OK)
        return st;
    *r_cont = r0;
    if (unknown)
        return AFD_OK;
    if (theta_se > 0) {
        h = 1e-3 * (s->theta > 0 ? s->theta : 1);
        p.theta = s->theta + h;
        m.theta = s->theta - h > 0 ? s->theta - h : 0;
        if ((st = rule_r(&p, w, rule, lo, hi, &rp)) != AFD_OK ||
            (st = rule_r(&m, w, rule, lo, hi, &rm)) != AFD_OK)
            return st;
        d_theta = (rp - rm) / (p.theta - m.theta);
        p.theta = m.theta = s->theta;
    }
    if (nu_se > 0 && rule == 'g') {
        h = 1e-3 * (s->nu > 0 ? s->nu : 1);
        p.nu = s->nu + h;
        m.nu = s->nu - h > 0 ? s->nu - h : 0;
        if ((st = rule_r(&p, w, rule, lo, hi, &rp)) != AFD_OK ||
            (st = rule_r(&m, w, rule, lo, hi, &rm)) != AFD_OK)
            return st;
        d_nu = (rp - rm) / (p.nu - m.nu);
    }
    v = d_theta * d_theta * theta_se * theta_se + d_nu * d_nu * nu_se * nu_se +
        2 * d_theta * d_nu * cov;
    *se = sqrt(v > 0 ? v : 0);
    return AFD_OK;
}

afd_status afd_ratio_se(const afd_system *s, char rule, double r_g, double lo, double hi,
                        double theta_se, double nu_se, double cov, double *r_cont, double *se)
{
    return afd_ratio_cost_se(s, 1, rule, r_g, lo, hi, theta_se, nu_se, cov, r_cont, se);
}

/* ---- xA-yF */

static unsigned gcd(unsigned a, unsigned b)
{
    while (b != 0) {
        unsigned t = a % b;
        a = b;
        b = t;
    }
    return a;
}

static int better(const afd_topology *a, const afd_topology *b)
{
    if (a->cycle.thr_g != b->cycle.thr_g)
        return a->cycle.thr_g > b->cycle.thr_g;
    if (a->x + a->y != b->x + b->y)
        return a->x + a->y < b->x + b->y;
    return a->x < b->x;
}

afd_status afd_topology_search(const afd_system *s, unsigned max_n, afd_topology *best,
                               size_t k, size_t *found)
{
    unsigned x, y;
    *found = 0;
    if (k == 0 || max_n < 2)
        return AFD_EINVAL;
    if (afd_system_check(s, NULL) != AFD_OK)
        return AFD_EINVAL;
    for (y = 1; y < max_n; y++)
        for (x = 1; x + y <= max_n; x++) {
            afd_topology t;
            size_t i;
            afd_status st;
            if (gcd(x, y) != 1)
                continue;
            t.x = x;
            t.y = y;
            st = afd_cycle_topology(s, x, y, &t.cycle);
            if (st != AFD_OK)
                return st;
            /* insert into the sorted best[0..*found) */
            if (*found == k && !better(&t, &best[k - 1]))
                continue;
            i = *found < k ? (*found)++ : k - 1;
            while (i > 0 && better(&t, &best[i - 1])) {
                best[i] = best[i - 1];
                i--;
            }
            best[i] = t;
        }
    return AFD_OK;
}

void afd_interval95(double x, double se, double *lo, double *hi)
{
    *lo = x - AFD_Z95 * se;
    *hi = x + AFD_Z95 * se;
}
