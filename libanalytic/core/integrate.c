/* integrate.c: allocation-free quadrature and error reports shared inside
 * libanalytic (see internal.h). */
#include <config.h>

#include <math.h>
#include <stdio.h>

#include <gsl/gsl_integration.h>

#include "internal.h"

afd_status afd_priv_fail(afd_error *err, afd_status st, long line, long column,
                         const char *fmt, ...)
{
    va_list ap;
    if (err == NULL)
        return st;
    err->line = line;
    err->column = column;
    va_start(ap, fmt);
    vsnprintf(err->text, sizeof err->text, fmt, ap);
    va_end(ap);
    return st;
}

#define MAX_DEPTH 24

/* The 21-point Gauss-Kronrod rule (the first rule of gsl_integration_qng),
 * bisecting where its error estimate misses the tolerance.  The fixed
 * rules only return an estimate; unlike qng, which raises GSL_ETOL through
 * GSL's error handler when it does not converge, they never reach the
 * handler, so a program that keeps GSL's aborting default handler is safe. */
static afd_status integrate(const gsl_function *fn, double a, double b, double epsabs,
                            double epsrel, int depth, double *result, double *abserr)
{
    double resabs, resasc;
    gsl_integration_qk21(fn, a, b, result, abserr, &resabs, &resasc);
    if (!isfinite(*result) || !isfinite(*abserr))
        return AFD_ENUMERIC;
    if (*abserr < epsabs || *abserr < epsrel * fabs(*result))
        return AFD_OK;
    if (depth < MAX_DEPTH) {
        double m = 0.5 * (a + b), r1, r2, e1, e2;
        afd_status s1 = integrate(fn, a, m, 0.5 * epsabs, epsrel, depth + 1, &r1, &e1);
        afd_status s2 = integrate(fn, m, b, 0.5 * epsabs, epsrel, depth + 1, &r2, &e2);
        *result = r1 + r2;
        *abserr = e1 + e2;
        return s1 != AFD_OK ? s1 : s2;
    }
    return AFD_ENUMERIC;
}

afd_status afd_priv_integrate(double (*f)(double, void *), void *params, double a, double b,
                              double epsabs, double epsrel, double *result, double *abserr)
{
    gsl_function fn;
    fn.function = f;
    fn.params = params;
    *result = 0;
    *abserr = 0;
    if (a == b)
        return AFD_OK;
    return integrate(&fn, a, b, epsabs, epsrel, 0, result, abserr);
}
