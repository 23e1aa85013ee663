/* priority.c: M/G/1 waits under FCFS and SJF (Phipps' formula); see
 * afd_priority.h. */
#include <config.h>

#include <float.h>
#include <math.h>

#include "afd_priority.h"
#include "internal.h"
#include "svc_internal.h"

static afd_status check(double lambda, const afd_svc_law *law, afd_result *out)
{
    if (out != NULL)
        out->val = out->err = NAN;
    if (out == NULL || law == NULL || !(lambda > 0) || !isfinite(lambda))
        return AFD_EINVAL;
    if (!(lambda * law->mean < 1))
        return AFD_EUNSTABLE;
    return AFD_OK;
}

afd_status afd_fcfs_wait_mean(double lambda, const afd_svc_law *law, afd_result *out)
{
    afd_status st = check(lambda, law, out);
    double rho;
    if (st != AFD_OK)
        return st;
    rho = lambda * law->mean;
    out->val = lambda * law->m2 / 2 / (1 - rho);
    out->err = 8 * DBL_EPSILON * out->val / (1 - rho);
    return AFD_OK;
}

/* rho(x) = lambda E[S; S <= x] (incl = 1) or E[S; S < x] (incl = 0). */
static double rho_upto(double lambda, const afd_svc_law *l, double x, int incl)
{
    size_t k;
    if (l->kind == LAW_EXP) {
        double u = x / l->mean;
        /* E[S; S <= x] = m (1 - e^{-u} (1 + u)) */
        return lambda * l->mean * afd_priv_j2(u);
    }
    k = afd_priv_svc_upto(l, x);
    if (!incl)
        while (k > 0 && l->t[k - 1] == x)
            k--;
    return lambda * l->pm1[k];
}

static double phipps(double lambda, const afd_svc_law *l, double x)
{
    double w0 = lambda * l->m2 / 2;
    return w0 / ((1 - rho_upto(lambda, l, x, 0)) * (1 - rho_upto(lambda, l, x, 1)));
}

afd_status afd_sjf_wait(double lambda, const afd_svc_law *law, double x, afd_result *out)
{
    afd_status st = check(lambda, law, out);
    if (st != AFD_OK)
        return st;
    if (!(x >= 0) || isnan(x)) {
        return AFD_EINVAL;
    }
    out->val = phipps(lambda, law, x);
    out->err = 16 * DBL_EPSILON * out->val / (1 - lambda * law->mean);
    return AFD_OK;
}

typedef struct ctx {
    double lambda;
    const afd_svc_law *l;
} ctx;

/* W(x) times the exponential density, in u = x / m. */
static double integrand(double u, void *p)
{
    const ctx *c = p;
    return phipps(c->lambda, c->l, u * c->l->mean) * exp(-u);
}

afd_status afd_sjf_wait_mean(double lambda, const afd_svc_law *law, afd_result *out)
{
    afd_status st = check(lambda, law, out);
    if (st != AFD_OK)
        return st;
    if (law->kind == LAW_EXP) {
        ctx c = {lambda, law};
        double v, e;
        /* the integrand is below W0/(1-rho)^2 e^{-u}: beyond u = 60 less than 1e-26 of it */
        st = afd_priv_integrate(integrand, &c, 0, 60, 0, 1e-12, &v, &e);
        if (st != AFD_OK)
            return st;
        out->val = v;
        out->err = e + v * 1e-25;
        return AFD_OK;
    }
    {
        size_t j;
        double s = 0;
        for (j = 0; j < law->n; j++)
            s += law->w[j] * phipps(lambda, law, law->t[j]);
        out->val = s;
        out->err = 16 * (double)law->n * DBL_EPSILON * s / (1 - lambda * law->mean);
    }
    return AFD_OK;
}

afd_status afd_sjf_wait_mean_above(double lambda, const afd_svc_law *law, double x,
                                   afd_result *out, double *share)
{
    afd_status st = check(lambda, law, out);
    size_t j;
    double s = 0, wsum = 0;
    if (share)
        *share = NAN;
    if (st != AFD_OK)
        return st;
    if (law->kind != LAW_ATOMS || isnan(x))
        return AFD_EINVAL;
    for (j = 0; j < law->n; j++)
        if (law->t[j] >= x) {
            s += law->w[j] * phipps(lambda, law, law->t[j]);
            wsum += law->w[j];
        }
    if (!(wsum > 0))
        return AFD_EINVAL;
    out->val = s / wsum;
    out->err = 16 * (double)law->n * DBL_EPSILON * out->val / (1 - lambda * law->mean);
    if (share)
        *share = wsum;
    return AFD_OK;
}
