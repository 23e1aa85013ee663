/* negbin.c: rejection samplers on a Philox cursor (normal, gamma, Poisson)
 * and the exact O(1) sum of B geometric-model slot loads through the
 * negative binomial law. */
#include <config.h>

#include <math.h>

#include <gsl/gsl_sf_gamma.h>

#include "afd_sampler.h"

#define TWO_PI           6.283185307179586476925286766559
#define POISSON_MAX_MEAN 0x1p50
#define NEGBIN_MAX_MEAN  0x1p46

double afd_normal_draw(afd_philox_cursor *c)
{
    double u1 = afd_philox_next(c), u2 = afd_philox_next(c);
    return sqrt(-2.0 * log(u1)) * cos(TWO_PI * u2);
}

/* Marsaglia and Tsang (2000), Section 4: d = a - 1/3, c = 1/sqrt(9d);
 * x normal, v = (1 + c x)^3 > 0; accept d v when u < 1 - 0.0331 x^4 (the
 * squeeze) or log u < x^2/2 + d (1 - v + log v). */
static double gamma_ge1(afd_philox_cursor *cur, double a)
{
    double d = a - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * d);
    for (;;) {
        double x, v, u;
        do {
            x = afd_normal_draw(cur);
            v = 1.0 + c * x;
        } while (v <= 0);
        v = v * v * v;
        u = afd_philox_next(cur);
        if (u < 1.0 - 0.0331 * (x * x) * (x * x))
            return d * v;
        if (log(u) < 0.5 * x * x + d * (1.0 - v + log(v)))
            return d * v;
    }
}

double afd_gamma_draw(afd_philox_cursor *c, double shape, double scale)
{
    if (!(shape > 0) || !isfinite(shape) || !(scale >= 0) || !isfinite(scale))
        return NAN;
    if (shape < 1) /* Marsaglia and Tsang, Section 6: boost the shape by 1 */
        return gamma_ge1(c, shape + 1.0) * pow(afd_philox_next(c), 1.0 / shape) * scale;
    return gamma_ge1(c, shape) * scale;
}

/* Inversion by sequential search: the smallest k with F(k) >= u.  The
 * search stops where the terms underflow (far beyond any reachable u). */
static double poisson_inversion(afd_philox_cursor *c, double mean)
{
    double u = afd_philox_next(c), p = exp(-mean), f = p, k = 0;
    while (u > f && p > 0) {
        k += 1;
        p *= mean / k;
        f += p;
    }
    return k;
}

/* PTRS, Hormann (1993), Table 1 (the constants as given there). */
static double poisson_ptrs(afd_philox_cursor *c, double mean)
{
    double slam = sqrt(mean), loglam = log(mean);
    double b = 0.931 + 2.53 * slam, a = -0.059 + 0.02483 * b;
    double inv_alpha = 1.1239 + 1.1328 / (b - 3.4), vr = 0.9277 - 3.6224 / (b - 2);
    for (;;) {
        double u = afd_philox_next(c) - 0.5, v = afd_philox_next(c);
        double us = 0.5 - fabs(u);
        double k = floor((2 * a / us + b) * u + mean + 0.43);
        if (us >= 0.07 && v <= vr)
            return k;
        if (k < 0 || (us < 0.013 && v > us))
            continue;
        if (log(v) + log(inv_alpha) - log(a / (us * us) + b) <=
            -mean + k * loglam - gsl_sf_lngamma(k + 1))
            return k;
    }
}

double afd_poisson_draw(afd_philox_cursor *c, double mean)
{
    if (!(mean >= 0 && mean <= POISSON_MAX_MEAN))
        return NAN;
    if (mean == 0)
        return 0;
    return mean < 10 ? poisson_inversion(c, mean) : poisson_ptrs(c, mean);
}

/* Gamma-Poisson mixture: given Lambda ~ Gamma(n, (1-p)/p), K ~ Poisson(Lambda)
 * is NegBin(n, p) (failure count). */
double afd_negbin_draw(afd_philox_cursor *c, double n, double p)
{
    double mean;
    if (!(n > 0 && p > 0 && p <= 1) || !isfinite(n))
        return NAN;
    mean = n * (1 - p) / p;
    if (!(mean <= NEGBIN_MAX_MEAN))
        return NAN;
    if (p == 1)
        return 0;
    return afd_poisson_draw(c, afd_gamma_draw(c, n, (1 - p) / p));
}

double afd_slot_sum_geometric(afd_philox_cursor *c, double mu_p, double mu_d, unsigned slots)
{
    double kp, kd, B = slots;
    if (slots < 1 || !(mu_p >= 1 && mu_p <= AFD_GEOMETRIC_MAX_MEAN) ||
        !(mu_d >= 1 && mu_d <= AFD_GEOMETRIC_MAX_MEAN) || !(B * (mu_p + mu_d) <= NEGBIN_MAX_MEAN))
        return NAN;
    kp = afd_negbin_draw(c, B, 1 / mu_p);
    kd = afd_negbin_draw(c, B, 1 / mu_d);
    return B + kp + kd;
}
