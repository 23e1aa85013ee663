/* queue_tail.c: what the M/D/1 and M/D/c modules share: the Poisson law,
 * the Chernoff bound on the stationary number waiting, and an
 * allocation-free Brent root finder (see internal.h and afd_queue.h). */
#include <config.h>

#include <float.h>
#include <math.h>
#include <stddef.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_roots.h>
#include <gsl/gsl_sf_gamma.h>

#include "internal.h"

#define BRENT_MAX_ITER 200
#define GOLDEN_ITER    90 /* shrinks the bracket by 0.618^90 < 1e-18 */

double afd_priv_poisson_pmf(double k, double mu)
{
    if (!(k >= 0) || !(mu >= 0))
        return NAN;
    if (mu == 0)
        return k == 0 ? 1 : 0;
    if (k == 0)
        return exp(-mu);
    if (k > 4e9)
        return 0; /* beyond gsl_sf_lnfact; only reached for absurd loads */
    return exp(k * log(mu) - mu - gsl_sf_lnfact((unsigned int)k));
}

/* log(e^s - 1), s > 0, without overflow. */
static double log_expm1(double s)
{
    return s > 1 ? s + log1p(-exp(-s)) : log(expm1(s));
}

/* ---- z0: phi(z0) = 1 above 1.  With z = e^s and rho = a/c, phi(e^s) = 1 is
 * rho (e^s - 1) = s, i.e. r(s) = log rho + log((e^s - 1)/s) = 0; r increases
 * from log rho < 0 at s = 0+. */
static double r_of_s(double s, void *p)
{
    double log_rho = *(const double *)p, l;
    if (s < 1e-8)
        l = s / 2 + s * s / 24;
    else if (s <= 1)
        l = log(expm1(s) / s);
    else
        l = s + log1p(-exp(-s)) - log(s);
    return log_rho + l;
}

static afd_status find_s0(double rho, double *s0)
{
    double log_rho = log(rho), hi = 1;
    *s0 = NAN;
    if (!(rho > 0 && rho < 1))
        return AFD_EINVAL;
    while (r_of_s(hi, &log_rho) <= 0) {
        hi *= 2;
        if (hi > 1e6)
            return AFD_ENUMERIC;
    }
    /* r(0+) = log rho < 0 */
    return afd_priv_brent(r_of_s, &log_rho, 0, hi, 0, 1e-15, s0);
}

/* ---- the bounds as functions of s = log z on (0, s0) */
struct tail_args {
    double rho, c, n;
    int excess; /* 0: log of z^{-(n+1)}/(1-phi); 1: log of z^{-n}/((1-phi)(z-1)) */
};

static double log_bound(double s, const struct tail_args *t)
{
    /* log phi(e^s) = c (rho (e^s - 1) - s) */
    double rho_em1 = s < 700 ? t->rho * expm1(s) : exp(log(t->rho) + log_expm1(s));
    double lphi = t->c * (rho_em1 - s);
    double l1mphi;
    if (!(lphi < 0))
        return INFINITY;
    l1mphi = log(-expm1(lphi));
    if (t->excess)
        return -t->n * s - l1mphi - log_expm1(s);
    return -(t->n + 1) * s - l1mphi;
}

/* Golden-section search for the minimum of a convex function on (lo, hi). */
static double golden_min(const struct tail_args *t, double lo, double hi)
{
    const double g = 0.6180339887498949;
    double x1 = hi - g * (hi - lo), x2 = lo + g * (hi - lo);
    double f1 = log_bound(x1, t), f2 = log_bound(x2, t);
    int k;
    for (k = 0; k < GOLDEN_ITER; k++) {
        if (f1 <= f2) {
            hi = x2;
            x2 = x1;
            f2 = f1;
            x1 = hi - g * (hi - lo);
            f1 = log_bound(x1, t);
        } else {
            lo = x1;
            x1 = x2;
            f1 = f2;
            x2 = lo + g * (hi - lo);
            f2 = log_bound(x2, t);
        }
    }
    return f1 < f2 ? f1 : f2;
}

afd_status afd_priv_queue_tail(double a, double c, double n, double p0, double *tau, double *excess)
{
    struct tail_args t;
    double s0;
    afd_status st;

    if (tau != NULL)
        *tau = 1;
    if (excess != NULL)
        *excess = INFINITY;
    if (!(a > 0) || !(a < c) || !(n >= 0) || !(p0 >= 0))
        return AFD_EINVAL;
    st = find_s0(a / c, &s0);
    if (st != AFD_OK)
        return AFD_ENUMERIC;
    t.rho = a / c;
    t.c = c;
    t.n = n;
    if (tau != NULL) {
        double v;
        t.excess = 0;
        v = p0 * exp(golden_min(&t, 0, s0));
        *tau = v < 1 ? v : 1;
    }
    if (excess != NULL) {
        t.excess = 1;
        *excess = p0 * exp(golden_min(&t, 0, s0));
    }
    return AFD_OK;
}

static double truncation_bound(double a, double c, double n, int with_mean)
{
    double tau, excess;
    if (afd_priv_queue_tail(a, c, n, 1, &tau, with_mean ? &excess : NULL) != AFD_OK)
        return INFINITY;
    if (!with_mean)
        return tau;
    if (!(tau < 1))
        return INFINITY;
    return n * tau / (1 - tau) + excess;
}

afd_status afd_priv_queue_truncation(double a, double c, double target, int with_mean, double nmax,
                                     double *n)
{
    double lo, hi;
    *n = NAN;
    if (truncation_bound(a, c, 0, with_mean) <= target) {
        *n = 0;
        return AFD_OK;
    }
    /* The bound decreases once it is small: grow, then bisect. */
    lo = 0;
    hi = 1;
    while (!(truncation_bound(a, c, hi, with_mean) <= target)) {
        if (hi >= nmax)
            return AFD_ELIMIT;
        lo = hi;
        hi = 2 * hi < nmax ? 2 * hi : nmax;
    }
    while (hi - lo > 1) {
        double mid = floor(0.5 * (lo + hi));
        if (truncation_bound(a, c, mid, with_mean) <= target)
            hi = mid;
        else
            lo = mid;
    }
    *n = hi;
    return AFD_OK;
}

afd_status afd_priv_brent(double (*f)(double, void *), void *params, double lo, double hi,
                          double epsabs, double epsrel, double *root)
{
    union {
        max_align_t align;
        unsigned char bytes[256];
    } state;
    gsl_root_fsolver s;
    gsl_function fn;
    int k;

    *root = NAN;
    if (gsl_root_fsolver_brent->size > sizeof state.bytes || !(lo <= hi))
        return AFD_ENUMERIC;
    fn.function = f;
    fn.params = params;
    s.type = gsl_root_fsolver_brent;
    s.function = NULL;
    s.root = NAN;
    s.x_lower = lo;
    s.x_upper = hi;
    s.state = state.bytes;
    if (gsl_root_fsolver_set(&s, &fn, lo, hi) != GSL_SUCCESS)
        return AFD_ENUMERIC;
    for (k = 0; k < BRENT_MAX_ITER; k++) {
        double xl, xu;
        if (gsl_root_fsolver_iterate(&s) != GSL_SUCCESS)
            return AFD_ENUMERIC;
        xl = gsl_root_fsolver_x_lower(&s);
        xu = gsl_root_fsolver_x_upper(&s);
        if (xu - xl <= epsabs + epsrel * fmax(fabs(xl), fabs(xu))) {
            *root = gsl_root_fsolver_root(&s);
            return AFD_OK;
        }
    }
    return AFD_ENUMERIC;
}
