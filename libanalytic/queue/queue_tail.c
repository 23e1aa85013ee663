/* queue_tail.c: what the M/D/1 and M/D/c modules share: the Poisson law,
 * the Chernoff bound on the stationary number waiting, and an
 * allocation-free Brent root finder (see internal.h and afd_queue.h). */
#include <config.h>

#include <float.h>
#include <math.h>
#include <stddef.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_min.h>
#include <gsl/gsl_roots.h>
#include <gsl/gsl_sf_gamma.h>

#include "internal.h"

#define BRENT_MAX_ITER 200
#define FMIN_MAX_ITER  200
#define GOLDEN_SHRINKS 200 /* 0.618^200 < 1e-41 of the interval */
#define GOLDEN         0.6180339887498949

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

static double log_bound_fn(double s, void *t)
{
    return log_bound(s, t);
}

/* The minimum of the convex bound on (lo, hi); it is +inf at both ends. */
static double bound_min(const struct tail_args *t, double lo, double hi)
{
    double x, f, xl, xu;
    if (afd_priv_fmin(log_bound_fn, (void *)t, lo, INFINITY, hi, INFINITY, 1e-10, &x, &f, &xl,
                      &xu) != AFD_OK)
        return INFINITY;
    return f;
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
        v = p0 * exp(bound_min(&t, 0, s0));
        *tau = v < 1 ? v : 1;
    }
    if (excess != NULL) {
        t.excess = 1;
        *excess = p0 * exp(bound_min(&t, 0, s0));
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

/* GSL's solvers raise GSL_ERROR (call the error handler, which aborts by
 * default) when a function value is not finite.  The library promises never
 * to reach the handler, so they see f through this guard: +-inf becomes
 * +-DBL_MAX (the order is kept, and an infinite value is never the answer),
 * NaN becomes 0 and marks the run as failed. */
struct guard {
    double (*f)(double, void *);
    void *params;
    int bad;
};

static double guarded(double x, void *vg)
{
    struct guard *g = vg;
    double v = g->f(x, g->params);
    if (isnan(v)) {
        g->bad = 1;
        return 0;
    }
    return isinf(v) ? (v > 0 ? DBL_MAX : -DBL_MAX) : v;
}

/* The state of GSL's solvers lives in a stack buffer instead of coming from
 * gsl_root_fsolver_alloc / gsl_min_fminimizer_alloc: those report a failed
 * malloc through GSL_ERROR_VAL, that is through the error handler, which this
 * library promises never to call (afd_status.h).  The buffer is checked
 * against the type's size at run time. */
typedef union solver_state {
    max_align_t align;
    unsigned char bytes[256];
} solver_state;

afd_status afd_priv_brent(double (*f)(double, void *), void *params, double lo, double hi,
                          double epsabs, double epsrel, double *root)
{
    solver_state state;
    gsl_root_fsolver s;
    gsl_function fn;
    struct guard g = {f, params, 0};
    double flo, fhi;
    int k;

    *root = NAN;
    if (gsl_root_fsolver_brent->size > sizeof state.bytes || !(lo <= hi))
        return AFD_ENUMERIC;
    /* gsl_root_fsolver_set raises GSL_ERROR unless f(lo), f(hi) straddle 0 */
    flo = guarded(lo, &g);
    fhi = guarded(hi, &g);
    if (g.bad || (flo > 0 && fhi > 0) || (flo < 0 && fhi < 0))
        return AFD_ENUMERIC;
    fn.function = guarded;
    fn.params = &g;
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
        if (gsl_root_fsolver_iterate(&s) != GSL_SUCCESS || g.bad)
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

afd_status afd_priv_fmin(double (*f)(double, void *), void *params, double lo, double f_lo,
                         double hi, double f_hi, double epsrel, double *x_min, double *f_min,
                         double *x_lower, double *x_upper)
{
    solver_state state;
    gsl_min_fminimizer s;
    gsl_function fn;
    struct guard g = {f, params, 0};
    double a = lo, b = hi, fa = f_lo, fb = f_hi, m = NAN, fm = NAN;
    int k;

    *x_min = *f_min = *x_lower = *x_upper = NAN;
    if (gsl_min_fminimizer_brent->size > sizeof state.bytes || !(lo < hi) || isnan(f_lo) ||
        isnan(f_hi))
        return AFD_ENUMERIC;
    /* A bracket: an interior point below both ends, which
       gsl_min_fminimizer_set_with_values needs (else GSL_ERROR).  Look at the
       two golden-section points; when neither is below both ends, the
       minimum of a unimodal f lies between the lower end and the nearer
       point, so shrink to that side and look again. */
    for (k = 0; k < GOLDEN_SHRINKS && isnan(m); k++) {
        double x1 = b - GOLDEN * (b - a), x2 = a + GOLDEN * (b - a);
        double f1 = f(x1, params), f2 = f(x2, params);
        if (isnan(f1) || isnan(f2))
            return AFD_ENUMERIC;
        if (f1 < fa && f1 < fb && f1 <= f2) {
            m = x1;
            fm = f1;
        } else if (f2 < fa && f2 < fb) {
            m = x2;
            fm = f2;
        } else if (fa <= fb) {
            b = x1;
            fb = f1;
        } else {
            a = x2;
            fa = f2;
        }
    }
    if (isnan(m)) { /* the minimum is at an end, to within 0.618^200 */
        *x_min = fa <= fb ? a : b;
        *f_min = fa <= fb ? fa : fb;
        *x_lower = a;
        *x_upper = b;
        return AFD_OK;
    }
    fn.function = guarded;
    fn.params = &g;
    s.type = gsl_min_fminimizer_brent;
    s.state = state.bytes;
    if (gsl_min_fminimizer_set_with_values(&s, &fn, m, fm, a, isinf(fa) ? DBL_MAX : fa, b,
                                           isinf(fb) ? DBL_MAX : fb) != GSL_SUCCESS)
        return AFD_ENUMERIC;
    for (k = 0; k < FMIN_MAX_ITER; k++) {
        double xl, xu;
        if (gsl_min_fminimizer_iterate(&s) != GSL_SUCCESS || g.bad)
            return AFD_ENUMERIC;
        xl = gsl_min_fminimizer_x_lower(&s);
        xu = gsl_min_fminimizer_x_upper(&s);
        if (xu - xl <= epsrel * fmin(fabs(xl), fabs(xu)))
            break;
    }
    /* at the iteration cap the minimum found so far stands: below about
       sqrt(DBL_EPSILON) relative the values no longer order the points */
    *x_min = gsl_min_fminimizer_x_minimum(&s);
    *f_min = gsl_min_fminimizer_f_minimum(&s);
    *x_lower = gsl_min_fminimizer_x_lower(&s);
    *x_upper = gsl_min_fminimizer_x_upper(&s);
    if (*f_min == DBL_MAX)
        *f_min = INFINITY;
    return AFD_OK;
}
