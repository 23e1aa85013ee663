/* renewal.c: stationary per-slot token load, Lemma 4.1 (see afd_renewal.h). */
#include <config.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "afd_renewal.h"

typedef unsigned __int128 u128;

/* Sums are capped at 2^125 so that 2 S_b6 S_d and 3 S_a2^2 fit in 256 bits. */
#define SUM_CAP ((u128)1 << 125)

struct afd_renewal_acc {
    uint64_t n;
    u128 s_d;  /* sum D */
    u128 s_p;  /* sum P */
    u128 s_a2; /* sum 2a = 2 D P + D (D-1) */
    u128 s_b6; /* sum 6b = 6 D P^2 + 6 P D (D-1) + D (D-1) (2D-1) */
    /* Welford means and co-moments of (a, b, D) for the standard errors. */
    long double m[3];
    long double c[3][3];
};

/* ---- 256-bit unsigned arithmetic, just enough for sum b sum D - (sum a)^2. */

typedef struct {
    u128 hi, lo;
} u256;

static u256 mul_128(u128 a, u128 b)
{
    const u128 mask = ((u128)1 << 64) - 1;
    u128 a0 = a & mask, a1 = a >> 64, b0 = b & mask, b1 = b >> 64;
    u128 p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    u128 mid = (p00 >> 64) + (p01 & mask) + (p10 & mask);
    u256 r;
    r.lo = (mid << 64) | (p00 & mask);
    r.hi = p11 + (p01 >> 64) + (p10 >> 64) + (mid >> 64);
    return r;
}

static u256 add_256(u256 a, u256 b)
{
    u256 r;
    r.lo = a.lo + b.lo;
    r.hi = a.hi + b.hi + (r.lo < a.lo);
    return r;
}

static u256 sub_256(u256 a, u256 b)
{
    u256 r;
    r.lo = a.lo - b.lo;
    r.hi = a.hi - b.hi - (a.lo < b.lo);
    return r;
}

static int less_256(u256 a, u256 b)
{
    return a.hi < b.hi || (a.hi == b.hi && a.lo < b.lo);
}

static long double ld_128(u128 x)
{
    return (long double)(uint64_t)(x >> 64) * 0x1p64L + (long double)(uint64_t)x;
}

static long double ld_256(u256 x)
{
    return ld_128(x.hi) * 0x1p128L + ld_128(x.lo);
}

/* ---- accumulator */

afd_renewal_acc *afd_renewal_acc_alloc(void)
{
    afd_renewal_acc *acc = malloc(sizeof *acc);
    if (acc != NULL)
        afd_renewal_acc_reset(acc);
    return acc;
}

void afd_renewal_acc_free(afd_renewal_acc *acc)
{
    free(acc);
}

void afd_renewal_acc_reset(afd_renewal_acc *acc)
{
    memset(acc, 0, sizeof *acc);
}

uint64_t afd_renewal_acc_count(const afd_renewal_acc *acc)
{
    return acc->n;
}

#define CHECK(expr)                                                                           \
    do {                                                                                      \
        if (expr)                                                                             \
            return AFD_ERANGE;                                                                \
    } while (0)

afd_status afd_renewal_acc_add(afd_renewal_acc *acc, uint64_t p, uint64_t d)
{
    u128 P = p, D = d, dd1, t, a2, b6, s_d, s_p, s_a2, s_b6;
    long double x[3], delta[3], n;
    int i, j;

    if (d == 0)
        return AFD_EINVAL;
    dd1 = D * (D - 1); /* < 2^128 since D < 2^64 */

    /* 2a = 2 D P + D(D-1) */
    CHECK(__builtin_mul_overflow(D, P, &t));
    CHECK(__builtin_mul_overflow(t, (u128)2, &a2));
    CHECK(__builtin_add_overflow(a2, dd1, &a2));
    /* 6b = 6 D P^2 + 6 P D(D-1) + D(D-1)(2D-1) */
    CHECK(__builtin_mul_overflow(P, P, &t));
    CHECK(__builtin_mul_overflow(t, D, &t));
    CHECK(__builtin_mul_overflow(t, (u128)6, &b6));
    CHECK(__builtin_mul_overflow(P, dd1, &t));
    CHECK(__builtin_mul_overflow(t, (u128)6, &t));
    CHECK(__builtin_add_overflow(b6, t, &b6));
    CHECK(__builtin_mul_overflow(dd1, 2 * D - 1, &t));
    CHECK(__builtin_add_overflow(b6, t, &b6));

    CHECK(__builtin_add_overflow(acc->s_d, D, &s_d));
    CHECK(__builtin_add_overflow(acc->s_p, P, &s_p));
    CHECK(__builtin_add_overflow(acc->s_a2, a2, &s_a2));
    CHECK(__builtin_add_overflow(acc->s_b6, b6, &s_b6));
    CHECK(s_d >= SUM_CAP || s_p >= SUM_CAP || s_a2 >= SUM_CAP || s_b6 >= SUM_CAP);
    acc->s_d = s_d;
    acc->s_p = s_p;
    acc->s_a2 = s_a2;
    acc->s_b6 = s_b6;

    /* Welford: m += delta / n; C += delta (x - m_new)^T. */
    acc->n++;
    n = (long double)acc->n;
    x[0] = ld_128(a2) / 2;
    x[1] = ld_128(b6) / 6;
    x[2] = (long double)d;
    for (i = 0; i < 3; i++) {
        delta[i] = x[i] - acc->m[i];
        acc->m[i] += delta[i] / n;
    }
    for (i = 0; i < 3; i++)
        for (j = i; j < 3; j++)
            acc->c[i][j] += delta[i] * (x[j] - acc->m[j]);
    return AFD_OK;
}

static void set_nan(afd_renewal_stats *out)
{
    out->n = 0;
    out->theta = out->nu = out->theta_se = out->nu_se = out->cov_theta_nu = NAN;
    out->ey2 = out->mean_p = out->mean_d = NAN;
}

/* u^T C w for the symmetric co-moment matrix stored in the upper triangle. */
static long double bilinear(const long double c[3][3], const long double u[3],
                            const long double w[3])
{
    long double s = 0;
    int i, j;
    for (i = 0; i < 3; i++)
        for (j = 0; j < 3; j++)
            s += u[i] * w[j] * (i <= j ? c[i][j] : c[j][i]);
    return s;
}

afd_status afd_renewal_acc_stats(const afd_renewal_acc *acc, afd_renewal_stats *out)
{
    long double sd, theta, q, nu2, n, dbar;
    u256 num;

    set_nan(out);
    if (acc->n == 0)
        return AFD_EEMPTY;
    n = (long double)acc->n;
    sd = ld_128(acc->s_d);

    /* eq. (15): theta = sum a / sum D = S_a2 / (2 S_d) */
    theta = ld_128(acc->s_a2) / (2 * sd);
    /* eq. (16): q = sum b / sum D = S_b6 / (6 S_d) */
    q = ld_128(acc->s_b6) / (6 * sd);
    /* nu^2 = q - theta^2 = (2 S_b6 S_d - 3 S_a2^2) / (12 S_d^2), numerator exact.
     * It is >= 0 mathematically; guard against a logic error all the same. */
    {
        u256 x = mul_128(acc->s_b6, acc->s_d);
        u256 y = mul_128(acc->s_a2, acc->s_a2);
        u256 x2 = add_256(x, x), y3 = add_256(add_256(y, y), y);
        num = less_256(x2, y3) ? (u256){0, 0} : sub_256(x2, y3);
    }
    nu2 = ld_256(num) / (12 * sd * sd);

    out->n = acc->n;
    out->theta = (double)theta;
    out->ey2 = (double)q;
    out->nu = (double)sqrtl(nu2);
    out->mean_p = (double)(ld_128(acc->s_p) / n);
    out->mean_d = (double)(sd / n);

    if (acc->n < 2) {
        out->theta_se = out->nu_se = NAN;
        return AFD_OK;
    }
    dbar = sd / n;
    {
        /* influences, up to the factors 1/dbar and 1/(2 nu dbar):
         * theta: (a - theta D); nu^2: (b - 2 theta a + (2 theta^2 - q) D) */
        long double wt[3] = {1, 0, -theta};
        long double wn[3] = {-2 * theta, 1, 2 * theta * theta - q};
        long double vt = bilinear(acc->c, wt, wt) / (n - 1);
        long double vn = bilinear(acc->c, wn, wn) / (n - 1);
        long double ctn = bilinear(acc->c, wt, wn) / (n - 1);
        out->theta_se = (double)(sqrtl(vt > 0 ? vt : 0) / dbar / sqrtl(n));
        if (vn <= 0) {
            out->nu_se = 0;
            out->cov_theta_nu = 0;
        } else if (nu2 == 0) {
            out->nu_se = NAN;
            out->cov_theta_nu = NAN;
        } else {
            out->nu_se = (double)(sqrtl(vn) / dbar / sqrtl(n) / (2 * sqrtl(nu2)));
            out->cov_theta_nu = (double)(ctn / (dbar * dbar) / n / (2 * sqrtl(nu2)));
        }
    }
    return AFD_OK;
}

/* ---- closed forms */

afd_status afd_renewal_independent(const afd_length_moments *m, afd_renewal_stats *out)
{
    double ep2, edd1, edd1_2d1, theta, ey2, nu2;

    set_nan(out);
    if (!(m->mean_p >= 0) || !(m->var_p >= 0) || !(m->mean_d >= 1) ||
        !(m->m2_d >= m->mean_d * m->mean_d * (1 - 1e-15)) || !isfinite(m->mean_p) ||
        !isfinite(m->var_p) || !isfinite(m->m2_d) || !isfinite(m->m3_d))
        return AFD_EINVAL;
    ep2 = m->var_p + m->mean_p * m->mean_p;
    edd1 = m->m2_d - m->mean_d;                             /* E[D(D-1)] */
    edd1_2d1 = 2 * m->m3_d - 3 * m->m2_d + m->mean_d;        /* E[D(D-1)(2D-1)] */
    theta = m->mean_p + edd1 / (2 * m->mean_d);             /* eq. (4) */
    ey2 = (m->mean_d * ep2 + m->mean_p * edd1 + edd1_2d1 / 6) / m->mean_d; /* eq. (3) */
    nu2 = ey2 - theta * theta;
    if (!(nu2 >= -1e-12 * ey2))
        return AFD_EINVAL; /* inconsistent moments (e.g. E[D^3] too small) */
    out->theta = theta;
    out->ey2 = ey2;
    out->nu = nu2 > 0 ? sqrt(nu2) : 0;
    out->theta_se = out->nu_se = out->cov_theta_nu = 0;
    out->mean_p = m->mean_p;
    out->mean_d = m->mean_d;
    return AFD_OK;
}

afd_status afd_renewal_geometric(double mu_p, double mu_d, afd_renewal_stats *out)
{
    double nu2;

    set_nan(out);
    if (!(mu_p >= 1) || !(mu_d >= 1) || !isfinite(mu_p) || !isfinite(mu_d))
        return AFD_EINVAL;
    /* Corollary 4.5: with mu_out = mu_d - 1, theta = mu_p + mu_out and
     * nu^2 = sigma_P^2 + mu_out (mu_out + 1), sigma_P^2 = mu_p (mu_p - 1). */
    nu2 = mu_p * (mu_p - 1) + mu_d * (mu_d - 1);
    out->theta = mu_p + mu_d - 1;
    out->nu = sqrt(nu2);
    out->ey2 = nu2 + out->theta * out->theta;
    out->theta_se = out->nu_se = out->cov_theta_nu = 0;
    out->mean_p = mu_p;
    out->mean_d = mu_d;
    if (!isfinite(out->ey2)) {
        set_nan(out);
        return AFD_ERANGE;
    }
    return AFD_OK;
}

afd_status afd_renewal_given(double theta, double nu, afd_renewal_stats *out)
{
    set_nan(out);
    if (!(theta >= 0) || !(nu >= 0) || !isfinite(theta) || !isfinite(nu))
        return AFD_EINVAL;
    out->theta = theta;
    out->nu = nu;
    out->ey2 = nu * nu + theta * theta;
    out->theta_se = out->nu_se = out->cov_theta_nu = 0;
    if (!isfinite(out->ey2)) {
        set_nan(out);
        return AFD_ERANGE;
    }
    return AFD_OK;
}
