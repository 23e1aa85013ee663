/* queue_approx.c: Erlang C, the M/M/c mean wait and the M/D/c
 * approximations of Cosmetatos, Allen-Cunneen and Kingman (see afd_queue.h). */
#include <config.h>

#include <float.h>
#include <math.h>

#include "afd_queue.h"

static int bad_positive(double x)
{
    return !(x > 0) || !isfinite(x);
}

/* Shared checks: lambda, D > 0 finite, c >= 1, a = lambda D < c. */
static afd_status check(double lambda, double service, unsigned c, afd_result *result)
{
    result->val = NAN;
    result->err = NAN;
    if (bad_positive(lambda) || bad_positive(service) || c < 1)
        return AFD_EINVAL;
    if (!(lambda * service < c))
        return AFD_EUNSTABLE;
    return AFD_OK;
}

afd_status afd_erlang_c_e(double a, unsigned c, afd_result *result)
{
    double b = 1, rho;
    unsigned k;
    result->val = NAN;
    result->err = NAN;
    if (!(a > 0) || !isfinite(a) || c < 1)
        return AFD_EINVAL;
    if (!(a < c))
        return AFD_EUNSTABLE;
    /* Erlang B: B_k = a B_{k-1} / (k + a B_{k-1}), every term positive */
    for (k = 1; k <= c; k++)
        b = a * b / (k + a * b);
    /* C = B / (1 - rho (1 - B)) = B / ((1 - rho) + rho B), 1 - rho = (c - a)/c */
    rho = a / c;
    result->val = b / ((c - a) / c + rho * b);
    result->err = (3.0 * c + 8) * DBL_EPSILON * result->val;
    return AFD_OK;
}

double afd_erlang_c(double a, unsigned c)
{
    afd_result r;
    return afd_erlang_c_e(a, c, &r) == AFD_OK ? r.val : NAN;
}

afd_status afd_mmc_wq_e(double lambda, double service, unsigned c, afd_result *result)
{
    afd_result ec;
    double a;
    afd_status st = check(lambda, service, c, result);
    if (st != AFD_OK)
        return st;
    a = lambda * service;
    st = afd_erlang_c_e(a, c, &ec);
    if (st != AFD_OK)
        return st;
    /* Wq = C / (c mu - lambda) with mu = 1/D */
    result->val = ec.val * service / (c - a);
    result->err = ec.err * service / (c - a) + 4 * DBL_EPSILON * result->val * c / (c - a);
    return AFD_OK;
}

double afd_mmc_wq(double lambda, double service, unsigned c)
{
    afd_result r;
    return afd_mmc_wq_e(lambda, service, c, &r) == AFD_OK ? r.val : NAN;
}

afd_status afd_mdc_wq_cosmetatos_e(double lambda, double service, unsigned c, afd_result *result)
{
    afd_result mmc;
    double rho, corr;
    afd_status st = afd_mmc_wq_e(lambda, service, c, &mmc);
    if (st != AFD_OK) {
        result->val = NAN;
        result->err = NAN;
        return st;
    }
    /* Cosmetatos (1975): 1/2 Wq(M/M/c) [1 + (1-rho)(c-1)(sqrt(4+5c) - 2)/(16 rho c)] */
    rho = lambda * service / c;
    corr = 1 + (1 - rho) * (c - 1.0) * (sqrt(4 + 5.0 * c) - 2) / (16 * rho * c);
    result->val = 0.5 * mmc.val * corr;
    result->err = 0.5 * mmc.err * corr + 8 * DBL_EPSILON * result->val;
    return AFD_OK;
}

double afd_mdc_wq_cosmetatos(double lambda, double service, unsigned c)
{
    afd_result r;
    return afd_mdc_wq_cosmetatos_e(lambda, service, c, &r) == AFD_OK ? r.val : NAN;
}

afd_status afd_mdc_wq_allen_cunneen_e(double lambda, double service, unsigned c, afd_result *result)
{
    afd_result mmc;
    afd_status st = afd_mmc_wq_e(lambda, service, c, &mmc);
    if (st != AFD_OK) {
        result->val = NAN;
        result->err = NAN;
        return st;
    }
    /* Allen-Cunneen: Wq(M/M/c) (ca^2 + cs^2) / 2 with ca^2 = 1, cs^2 = 0 */
    result->val = 0.5 * mmc.val;
    result->err = 0.5 * mmc.err;
    return AFD_OK;
}

double afd_mdc_wq_allen_cunneen(double lambda, double service, unsigned c)
{
    afd_result r;
    return afd_mdc_wq_allen_cunneen_e(lambda, service, c, &r) == AFD_OK ? r.val : NAN;
}

afd_status afd_mdc_wq_kingman_e(double lambda, double service, unsigned c, afd_result *result)
{
    double a;
    afd_status st = check(lambda, service, c, result);
    if (st != AFD_OK)
        return st;
    a = lambda * service;
    /* Kingman (1965): (1/lambda^2) / (2 (1/lambda - D/c)) = c / (2 lambda (c - a)) */
    result->val = c / (2 * lambda * (c - a));
    result->err = 4 * DBL_EPSILON * result->val * c / (c - a);
    return AFD_OK;
}

double afd_mdc_wq_kingman(double lambda, double service, unsigned c)
{
    afd_result r;
    return afd_mdc_wq_kingman_e(lambda, service, c, &r) == AFD_OK ? r.val : NAN;
}

static double rel_err(double approx, double exact)
{
    /* 0 when both are 0 (far below saturation both underflow); +-inf when
     * only the exact value is 0 */
    return approx == exact ? 0 : (approx - exact) / exact;
}

afd_status afd_mdc_approx_compare(double lambda, double service, unsigned c, double wq_exact,
                                  afd_mdc_approx *out)
{
    afd_result cos, ac, king;
    afd_status st;
    if (out == NULL)
        return AFD_EINVAL;
    out->wq_cosmetatos = out->wq_allen_cunneen = out->wq_kingman = NAN;
    out->err_cosmetatos = out->err_allen_cunneen = out->err_kingman = NAN;
    st = afd_mdc_wq_cosmetatos_e(lambda, service, c, &cos);
    if (st == AFD_OK)
        st = afd_mdc_wq_allen_cunneen_e(lambda, service, c, &ac);
    if (st == AFD_OK)
        st = afd_mdc_wq_kingman_e(lambda, service, c, &king);
    if (st != AFD_OK)
        return st;
    out->wq_cosmetatos = cos.val;
    out->wq_allen_cunneen = ac.val;
    out->wq_kingman = king.val;
    out->err_cosmetatos = rel_err(cos.val, wq_exact);
    out->err_allen_cunneen = rel_err(ac.val, wq_exact);
    out->err_kingman = rel_err(king.val, wq_exact);
    return AFD_OK;
}
