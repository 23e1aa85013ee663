/* overflow.c: the stream of requests an M/M/c+D queue offloads, its
 * Laplace-Stieltjes transform and its variability (see afd_deadline.h). */
#include <config.h>

#include <math.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_matrix.h>

#include "afd_deadline.h"

static int bad_args(double lambda, double mean, unsigned c, double d)
{
    return !(lambda > 0) || !isfinite(lambda) || !(mean > 0) || !isfinite(mean) || c < 1 ||
           !(d >= 0) || !isfinite(d);
}

/* E[e^{-s I}], I the time from V reaching 0 (c - 1 busy) until an arrival
 * finds c - 1 busy: the passage i -> i + 1 of the birth and death chain
 * (births lambda, deaths i mu) has the transform
 * eta_i = lambda / (lambda + i mu + s - i mu eta_{i-1}), eta_0 = lambda / (lambda + s)
 * (first step analysis). */
static double idle_lst(double lambda, double mu, unsigned c, double s)
{
    double e = lambda / (lambda + s);
    unsigned i;
    for (i = 1; i < c; i++)
        e = lambda / (lambda + i * mu + s - i * mu * e);
    return e;
}

/* The mean and second moment of the same passage, from the same first step:
 * T_i = X + [death] (T_{i-1} + T_i'), X ~ Exp(lambda + i mu) independent of
 * which event comes first. */
static void idle_moments(double lambda, double mu, unsigned c, double *m1, double *m2)
{
    double e1 = 1 / lambda, e2 = 2 / (lambda * lambda);
    unsigned i;
    for (i = 1; i < c; i++) {
        double r = lambda + i * mu, n1 = (1 + i * mu * e1) / lambda;
        double n2 = (2 / r + 2 * i * mu * (e1 + n1) / r + i * mu * (e2 + 2 * e1 * n1)) / lambda;
        e1 = n1;
        e2 = n2;
    }
    *m1 = e1;
    *m2 = e2;
}

/* E[e^{-s OFF}], OFF the time from V falling to d until it next exceeds d.
 * h(v) = E_v[e^{-s T}] (T the passage above d from V = v <= d) satisfies,
 * V falling at rate 1 and an arrival at rate lambda adding Exp(gamma),
 *     -h'(v) + lambda (int_0^{d-v} gamma e^{-gamma x} h(v+x) dx + e^{-gamma (d-v)})
 *         = (lambda + s) h(v);
 * differentiating once more removes the integral:
 *     h'' + (lambda + s - gamma) h' - gamma s h = 0,
 * with h'(d) + (lambda + s) h(d) = lambda (the equation at v = d) and, at
 * v = 0, lambda h(0) = eta(s) (h'(0) + (lambda + s) h(0)) (the integral
 * term at 0 is reached after the idle passage).  h = A e^{r1 (v - d)} +
 * B e^{r2 v}, r1 >= 0 >= r2 the roots of r^2 + (lambda + s - gamma) r -
 * gamma s, so that no exponential exceeds 1. */
static double off_lst(double lambda, double mu, unsigned c, double d, double s)
{
    double g = c * mu, b = lambda + s - g, disc = sqrt(b * b + 4 * g * s);
    double r1 = b > 0 ? 2 * g * s / (b + disc) : (disc - b) / 2;
    double r2 = b > 0 ? -(b + disc) / 2 : -2 * g * s / (disc - b);
    double eta = idle_lst(lambda, mu, c, s), e1 = exp(-r1 * d), e2 = exp(r2 * d);
    double a11 = r1 + lambda + s, a12 = e2 * (r2 + lambda + s);
    double a21 = e1 * (lambda - eta * (r1 + lambda + s)), a22 = lambda - eta * (r2 + lambda + s);
    double det = a11 * a22 - a12 * a21;
    return (lambda * a22 - lambda * a21 * e2) / det;
}

afd_status afd_mmc_overflow_lst(double lambda, double mean, unsigned c, double d, double s,
                                double *lst)
{
    double g, v;
    if (lst == NULL)
        return AFD_EINVAL;
    *lst = NAN;
    if (bad_args(lambda, mean, c, d) || !(s > 0) || !isfinite(s))
        return AFD_EINVAL;
    g = c / mean;
    /* from an offload: the next arrival (rate lambda) is offloaded if it
     * comes before V falls to d (rate gamma, lack of memory); else an OFF
     * period and the same again */
    v = lambda / (lambda + g + s - g * off_lst(lambda, 1 / mean, c, d, s));
    if (!isfinite(v))
        return AFD_ENUMERIC;
    *lst = v;
    return AFD_OK;
}

afd_status afd_mmc_overflow_scv(double lambda, double mean, unsigned c, double d, double *scv)
{
    double mu, g, beta, i1, i2, b1, z0[5], za[5], m1, m2, v;
    gsl_matrix *a = NULL, *ea = NULL;
    afd_status st = AFD_OK;
    int i, j;
    if (scv == NULL)
        return AFD_EINVAL;
    *scv = NAN;
    if (bad_args(lambda, mean, c, d))
        return AFD_EINVAL;
    mu = 1 / mean;
    g = c * mu;
    beta = lambda - g;
    idle_moments(lambda, mu, c, &i1, &i2);
    /* The moments M1(v), M2(v) of T: expanding h = 1 - s M1 + s^2 M2 / 2
     * in the equation and its boundary conditions,
     *     M1'' = -beta M1' - gamma,             M2'' = -beta M2' + 2 M1' - 2 gamma M1,
     *     M1'(0) = 1 - lambda i1 =: b1,         M2'(0) = 2 b1 M1(0) + 2 lambda i1^2 - lambda i2,
     *     M1'(d) + lambda M1(d) = 1,            M2'(d) + lambda M2(d) = 2 M1(d).
     * z = (M1, M1', M2, M2', 1) solves z' = A z: z(d) = e^{A d} z(0), the
     * matrix exponential exact for any beta (beta = 0 included), and z(0)
     * is affine in the unknown M1(0), M2(0); M2(0) is not needed, as
     * M2(d) = (2 M1(d) - M2'(d)) / lambda. */
    b1 = 1 - lambda * i1;
    a = gsl_matrix_calloc(5, 5);
    ea = gsl_matrix_alloc(5, 5);
    if (a == NULL || ea == NULL) {
        st = AFD_ENOMEM;
        goto done;
    }
    gsl_matrix_set(a, 0, 1, d);
    gsl_matrix_set(a, 1, 1, -beta * d);
    gsl_matrix_set(a, 1, 4, -g * d);
    gsl_matrix_set(a, 2, 3, d);
    gsl_matrix_set(a, 3, 0, -2 * g * d);
    gsl_matrix_set(a, 3, 1, 2 * d);
    gsl_matrix_set(a, 3, 3, -beta * d);
    if (gsl_linalg_exponential_ss(a, ea, GSL_PREC_DOUBLE) != GSL_SUCCESS) {
        st = AFD_ENUMERIC;
        goto done;
    }
    {
        /* z(0) = z0 + M1(0) za (+ M2(0) e_3) */
        const double x0[5] = {0, b1, 0, 2 * lambda * i1 * i1 - lambda * i2, 1};
        const double xa[5] = {1, 0, 0, 2 * b1, 0};
        double a1;
        for (i = 0; i < 5; i++) {
            z0[i] = za[i] = 0;
            for (j = 0; j < 5; j++) {
                z0[i] += gsl_matrix_get(ea, i, j) * x0[j];
                za[i] += gsl_matrix_get(ea, i, j) * xa[j];
            }
        }
        /* M1'(d) + lambda M1(d) = 1 */
        a1 = (1 - z0[1] - lambda * z0[0]) / (za[1] + lambda * za[0]);
        m1 = z0[0] + a1 * za[0];
        m2 = (2 * m1 - (z0[3] + a1 * za[3])) / lambda;
    }
    /* The offloads form a renewal process: after an offload the rest of the
     * ON period (V > d) is Exp(gamma) by lack of memory, and each OFF period
     * starts at V = d.  The time tau to the next offload has the transform
     * psi(s) = lambda / (lambda + gamma + s - gamma phi(s)), phi that of OFF;
     * differentiating twice at 0,
     *     E tau = (1 + gamma m1) / lambda,
     *     scv   = 1 + lambda gamma m2 / (1 + gamma m1)^2,
     * m1, m2 the moments of OFF (= M1(d), M2(d)). */
    v = 1 + lambda * g * m2 / ((1 + g * m1) * (1 + g * m1));
    if (!isfinite(v) || !(v > 0)) {
        st = AFD_ENUMERIC;
        goto done;
    }
    *scv = v;
done:
    gsl_matrix_free(a);
    gsl_matrix_free(ea);
    return st;
}
