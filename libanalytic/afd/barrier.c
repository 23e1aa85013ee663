/* barrier.c: Gaussian order statistics kappa_r and E[(M_r - z)+] (see afd_barrier.h). */
#include <config.h>

#include <float.h>
#include <math.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_math.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_sf_erf.h>

#include "afd_barrier.h"
#include "afd_parse.h"
#include "internal.h"

#define R_MAX AFD_KAPPA_R_MAX
#define PIECE 3.0
#define EPSREL 1e-12
#define EPSABS 1e-16    /* per piece */

/* Beyond TAIL_Z, Q(z) and phi(z) are below the smallest double (Q(38.5)
 * is about DBL_TRUE_MIN): GSL returns 0 there, and NaN once z*z
 * overflows (z above about 1e150), which is avoided by returning the 0
 * here. */
#define TAIL_Z 40.0

/* log Phi(z) without cancellation on either side.  For z < -1e8 the
 * asymptotic series of the Mills ratio (Abramowitz & Stegun 26.2.12),
 * Q(u) = phi(u)/u (1 - 1/u^2 + ...), to its first term: relative error
 * below 1e-16, and -inf once u^2 overflows (where GSL returns NaN). */
static double log_phi_cdf(double z)
{
    if (z >= TAIL_Z)
        return -0.0; /* log1p(-0), as GSL's Q(z) = 0 gives */
    if (z >= 0)
        return log1p(-gsl_sf_erf_Q(z));
    if (z < -1e8)
        return -0.5 * z * z - log(-z) - 0.5 * log(2 * M_PI);
    return gsl_sf_log_erfc(-z / M_SQRT2) - M_LN2;
}

/* The normal loss function L(z) = int_z^inf Q = phi(z) - z Q(z), z >= 0
 * (0 beyond TAIL_Z, where both terms are). */
static double normal_loss(double z)
{
    return z >= TAIL_Z ? 0 : gsl_ran_ugaussian_pdf(z) - z * gsl_sf_erf_Q(z);
}

/* 1 - Phi(z)^r */
static double upper(double z, void *p)
{
    double r = *(const double *)p;
    return -expm1(r * log_phi_cdf(z));
}

/* Phi(-u)^r = Q(u)^r */
static double lower(double u, void *p)
{
    double r = *(const double *)p;
    return exp(r * log_phi_cdf(-u));
}

/* Sum of piecewise integrals of f over [a, b]. */
static afd_status pieces(double (*f)(double, void *), double *r, double a, double b,
                         double *val, double *err)
{
    int n = (int)ceil((b - a) / PIECE);
    int k;
    *val = 0;
    *err = 0;
    if (!(b > a))
        return AFD_OK;
    if (n < 1)
        n = 1;
    for (k = 0; k < n; k++) {
        double lo = a + (b - a) * k / n, hi = k + 1 == n ? b : a + (b - a) * (k + 1) / n;
        double v, e;
        afd_status st = afd_priv_integrate(f, r, lo, hi, EPSABS, EPSREL, &v, &e);
        if (st != AFD_OK)
            return st;
        *val += v;
        *err += e;
    }
    return AFD_OK;
}

/* int_from^inf (1 - Phi(z)^r) dz for from >= 0.
 *  - Below z_lo, where r Q(z) >= 50, the integrand is 1 within e^-50: the
 *    interval contributes its length.
 *  - Above z_hi, where r Q(z) <= 1e-22, 1 - Phi^r = r Q (1 + O(rQ)), whose
 *    integral is r (phi(z) - z Q(z)) (the normal loss function). */
static afd_status upper_tail(double r, double from, double *val, double *err)
{
    double z_lo = r > 100 ? gsl_cdf_ugaussian_Qinv(50 / r) : 0;
    double z_hi = gsl_cdf_ugaussian_Qinv(1e-22 / r);
    double flat = 0, v = 0, e = 0, start = from, tail;
    afd_status st;

    if (start < z_lo) {
        flat = z_lo - start;
        start = z_lo;
    }
    if (start < z_hi) {
        st = pieces(upper, &r, start, z_hi, &v, &e);
        if (st != AFD_OK)
            return st;
        start = z_hi;
    }
    tail = r * normal_loss(start);
    *val = flat + v + tail;
    *err = e + flat * exp(-50.0) + fabs(tail) * 1e-20 + 4 * DBL_EPSILON * fabs(*val);
    return AFD_OK;
}

/* int_from^inf Q(u)^r du for from >= 0, where Q(u)^r <= 2^-r. */
static afd_status lower_tail(double r, double from, double *val, double *err)
{
    /* Q(u)^r = 1e-30 at u_hi. */
    double q_hi = exp(log(1e-30) / r);
    double u_hi = q_hi < 0.5 ? gsl_cdf_ugaussian_Qinv(q_hi) : 0;
    double bound;
    afd_status st;

    *val = 0;
    *err = 0;
    if (from >= u_hi) {
        /* int_from^inf Q^r <= Q(from)^(r-1) int_from^inf Q = Q(from)^(r-1) L(from) */
        bound = (r > 1 ? exp((r - 1) * log_phi_cdf(-from)) : 1) * normal_loss(from);
        *err = bound;
        return AFD_OK;
    }
    st = pieces(lower, &r, from, u_hi, val, err);
    if (st != AFD_OK)
        return st;
    bound = exp((r - 1) * log_phi_cdf(-u_hi)) * normal_loss(u_hi);
    *err += bound + 4 * DBL_EPSILON * *val;
    return AFD_OK;
}

static int bad_r(double r)
{
    return !(r >= 1) || !(r <= R_MAX);
}

afd_status afd_kappa_check_r(double r, afd_error *err)
{
    return afd_check_range(r, 1, R_MAX, err);
}

afd_status afd_kappa_e(double r, afd_result *result)
{
    double v1, e1, v2, e2;
    afd_status st;

    result->val = NAN;
    result->err = NAN;
    if (bad_r(r))
        return AFD_EINVAL;
    if (r == 1) {
        result->val = 0;
        result->err = 0;
        return AFD_OK;
    }
    /* kappa_r = int_0^inf (1 - Phi^r) dz - int_0^inf Phi(-z)^r dz */
    st = upper_tail(r, 0, &v1, &e1);
    if (st == AFD_OK)
        st = lower_tail(r, 0, &v2, &e2);
    if (st != AFD_OK)
        return st;
    result->val = v1 - v2;
    result->err = e1 + e2 + 2 * DBL_EPSILON * (v1 + v2);
    return AFD_OK;
}

double afd_kappa(double r)
{
    afd_result res;
    return afd_kappa_e(r, &res) == AFD_OK ? res.val : NAN;
}

afd_status afd_priv_max_normal_excess(double r, double z, const afd_result *kappa,
                                      afd_result *result)
{
    afd_status st;
    double v, e;

    result->val = NAN;
    result->err = NAN;
    if (bad_r(r) || !isfinite(z))
        return AFD_EINVAL;
    if (z >= 0) {
        st = upper_tail(r, z, &v, &e);
        if (st != AFD_OK)
            return st;
        result->val = v;
        result->err = e;
        return AFD_OK;
    }
    /* z < 0: E[(M - z)+] = E[M] - z + E[(z - M)+]
     *                    = kappa_r - z + int_{-inf}^z Phi(m)^r dm
     *                    = kappa_r - z + int_{-z}^inf Q(u)^r du. */
    {
        afd_result k;
        if (kappa != NULL)
            k = *kappa;
        else if ((st = afd_kappa_e(r, &k)) != AFD_OK)
            return st;
        st = lower_tail(r, -z, &v, &e);
        if (st != AFD_OK)
            return st;
        result->val = k.val - z + v;
        result->err = k.err + e + 2 * DBL_EPSILON * fabs(result->val);
    }
    return AFD_OK;
}

afd_status afd_max_normal_excess_e(double r, double z, afd_result *result)
{
    return afd_priv_max_normal_excess(r, z, NULL, result);
}

double afd_max_normal_excess(double r, double z)
{
    afd_result res;
    return afd_max_normal_excess_e(r, z, &res) == AFD_OK ? res.val : NAN;
}

double afd_max_normal_sf(double r, double z)
{
    if (bad_r(r) || isnan(z))
        return NAN;
    if (z == INFINITY)
        return 0;
    if (z == -INFINITY)
        return 1;
    return -expm1(r * log_phi_cdf(z));
}

double afd_barrier_overhead_clt(double theta, double nu, double B, double r)
{
    if (!(theta > 0) || !(nu >= 0) || !(B >= 1) || !isfinite(theta) || !isfinite(nu))
        return NAN;
    /* Theorem 4.3, eq. (7): E[W] = B theta + sqrt(B) nu kappa_r + o(sqrt(B)) */
    return nu / theta * afd_kappa(r) / sqrt(B);
}
