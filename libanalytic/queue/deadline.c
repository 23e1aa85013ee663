/* deadline.c: queues with a deadline on the wait: service laws, M/M/c+D in
 * closed form, M/G/1+D from the Volterra equation of the virtual wait, and
 * the M/G/c+D scaling (see afd_deadline.h). */
#include <config.h>

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "afd_deadline.h"
#include "afd_hw.h"
#include "svc_internal.h"

static int bad_pos(double x)
{
    return !(x > 0) || !isfinite(x);
}

/* ------------------------------------------------------------- the laws */

static afd_svc_law *law_new(int kind, size_t n)
{
    afd_svc_law *l = calloc(1, sizeof *l);
    if (l == NULL)
        return NULL;
    l->kind = kind;
    l->n = n;
    if (n > 0) {
        l->t = malloc(n * sizeof *l->t);
        l->w = malloc(n * sizeof *l->w);
        l->sw = malloc((n + 1) * sizeof *l->sw);
        l->sm1 = malloc((n + 1) * sizeof *l->sm1);
        l->pm1 = malloc((n + 1) * sizeof *l->pm1);
        l->pm2 = malloc((n + 1) * sizeof *l->pm2);
        if (!l->t || !l->w || !l->sw || !l->sm1 || !l->pm1 || !l->pm2) {
            afd_svc_law_free(l);
            return NULL;
        }
    }
    return l;
}

void afd_svc_law_free(afd_svc_law *law)
{
    if (law == NULL)
        return;
    free(law->t);
    free(law->w);
    free(law->sw);
    free(law->sm1);
    free(law->pm1);
    free(law->pm2);
    free(law);
}

/* Prefix and suffix sums; mean and second moment. */
static void law_finish(afd_svc_law *l)
{
    size_t i, n = l->n;
    long double s = 0, m1 = 0, m2 = 0;
    l->sw[n] = 0;
    l->sm1[n] = 0;
    for (i = n; i-- > 0;) {
        s += l->w[i];
        m1 += (long double)l->w[i] * l->t[i];
        l->sw[i] = (double)s;
        l->sm1[i] = (double)m1;
    }
    m1 = 0;
    l->pm1[0] = l->pm2[0] = 0;
    for (i = 0; i < n; i++) {
        m1 += (long double)l->w[i] * l->t[i];
        m2 += (long double)l->w[i] * l->t[i] * l->t[i];
        l->pm1[i + 1] = (double)m1;
        l->pm2[i + 1] = (double)m2;
    }
    l->mean = (double)m1;
    l->m2 = (double)m2;
}

afd_status afd_svc_law_deterministic(double service, afd_svc_law **law)
{
    afd_svc_law *l;
    if (law == NULL)
        return AFD_EINVAL;
    *law = NULL;
    if (bad_pos(service))
        return AFD_EINVAL;
    l = law_new(LAW_ATOMS, 1);
    if (l == NULL)
        return AFD_ENOMEM;
    l->t[0] = service;
    l->w[0] = 1;
    law_finish(l);
    *law = l;
    return AFD_OK;
}

afd_status afd_svc_law_exponential(double mean, afd_svc_law **law)
{
    afd_svc_law *l;
    if (law == NULL)
        return AFD_EINVAL;
    *law = NULL;
    if (bad_pos(mean))
        return AFD_EINVAL;
    l = law_new(LAW_EXP, 0);
    if (l == NULL)
        return AFD_ENOMEM;
    l->mean = mean;
    l->m2 = 2 * mean * mean;
    *law = l;
    return AFD_OK;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

afd_status afd_prefill_times(const afd_hw *hw, const uint64_t *prompt, size_t n, double *out)
{
    size_t i;
    if (hw == NULL || !afd_hw_has_prefill(hw) || (n > 0 && (prompt == NULL || out == NULL)))
        return AFD_EINVAL;
    for (i = 0; i < n; i++) {
        double p = (double)prompt[i];
        /* BestServe's prefill law for a batch of one prompt (afd_hw.h). */
        out[i] = hw->prefill_a + hw->prefill_b * p + hw->prefill_c * p * p;
    }
    return AFD_OK;
}

afd_status afd_svc_law_prefill(const afd_hw *hw, const uint64_t *prompt, size_t n,
                               afd_svc_law **law)
{
    double *s;
    afd_status st;
    if (law == NULL)
        return AFD_EINVAL;
    *law = NULL;
    if (hw == NULL || !afd_hw_has_prefill(hw))
        return AFD_EINVAL;
    if (n == 0)
        return AFD_EEMPTY;
    if (prompt == NULL)
        return AFD_EINVAL;
    s = malloc(n * sizeof *s);
    if (s == NULL)
        return AFD_ENOMEM;
    st = afd_prefill_times(hw, prompt, n, s);
    if (st == AFD_OK)
        st = afd_svc_law_samples(s, n, law);
    free(s);
    return st;
}

afd_status afd_svc_law_samples(const double *s, size_t n, afd_svc_law **law)
{
    double *v;
    size_t i, k, distinct;
    long double m2_all = 0, sum = 0;
    afd_svc_law *l;
    if (law == NULL)
        return AFD_EINVAL;
    *law = NULL;
    if (n == 0)
        return AFD_EEMPTY;
    if (s == NULL)
        return AFD_EINVAL;
    for (i = 0; i < n; i++) {
        if (!(s[i] >= 0) || !isfinite(s[i]))
            return AFD_EINVAL;
        sum += s[i];
        m2_all += (long double)s[i] * s[i];
    }
    if (!(sum > 0))
        return AFD_EINVAL;
    v = malloc(n * sizeof *v);
    if (v == NULL)
        return AFD_ENOMEM;
    memcpy(v, s, n * sizeof *v);
    qsort(v, n, sizeof *v, cmp_double);
    for (distinct = 1, i = 1; i < n; i++)
        distinct += v[i] != v[i - 1];
    k = distinct <= AFD_SVC_MAX_ATOMS ? distinct : AFD_SVC_MAX_ATOMS;
    l = law_new(LAW_ATOMS, k);
    if (l == NULL) {
        free(v);
        return AFD_ENOMEM;
    }
    if (distinct <= AFD_SVC_MAX_ATOMS) {
        size_t j = 0, run = 1;
        for (i = 1; i <= n; i++) {
            if (i < n && v[i] == v[i - 1]) {
                run++;
                continue;
            }
            l->t[j] = v[i - 1];
            l->w[j] = (double)run / (double)n;
            j++;
            run = 1;
        }
    } else { /* k bins of n/k consecutive sorted values, at their means */
        size_t b;
        for (b = 0; b < k; b++) {
            size_t lo = b * n / k, hi = (b + 1) * n / k;
            long double m = 0;
            for (i = lo; i < hi; i++)
                m += v[i];
            l->t[b] = (double)(m / (long double)(hi - lo));
            l->w[b] = (double)(hi - lo) / (double)n;
        }
    }
    free(v);
    law_finish(l);
    l->bin_var = (double)(m2_all / (long double)n) - l->m2;
    if (l->bin_var < 0)
        l->bin_var = 0;
    *law = l;
    return AFD_OK;
}

double afd_svc_law_mean(const afd_svc_law *law)
{
    return law ? law->mean : NAN;
}

double afd_svc_law_m2(const afd_svc_law *law)
{
    return law ? law->m2 : NAN;
}

double afd_svc_law_bin_var(const afd_svc_law *law)
{
    return law ? law->bin_var : NAN;
}

size_t afd_svc_law_atoms(const afd_svc_law *law)
{
    return law && law->kind == LAW_ATOMS ? law->n : 0;
}

void afd_svc_law_atom(const afd_svc_law *law, size_t i, double *value, double *weight)
{
    int ok = law && law->kind == LAW_ATOMS && i < law->n;
    if (value)
        *value = ok ? law->t[i] : NAN;
    if (weight)
        *weight = ok ? law->w[i] : NAN;
}

/* Number of atoms with t <= z. */
size_t afd_priv_svc_upto(const afd_svc_law *l, double z)
{
    size_t lo = 0, hi = l->n;
    while (lo < hi) {
        size_t m = lo + (hi - lo) / 2;
        if (l->t[m] <= z)
            lo = m + 1;
        else
            hi = m;
    }
    return lo;
}

double afd_svc_law_sf(const afd_svc_law *law, double x)
{
    if (law == NULL || isnan(x))
        return NAN;
    if (x < 0)
        return 1;
    if (law->kind == LAW_EXP)
        return exp(-x / law->mean);
    return law->sw[afd_priv_svc_upto(law, x)];
}

double afd_svc_law_quantile(const afd_svc_law *law, double q)
{
    size_t i;
    double c = 0;
    if (law == NULL || !(q > 0 && q < 1))
        return NAN;
    if (law->kind == LAW_EXP)
        return -law->mean * log1p(-q);
    for (i = 0; i < law->n; i++) {
        c += law->w[i];
        if (c >= q * (1 - 1e-15))
            return law->t[i];
    }
    return law->t[law->n - 1];
}

/* B1(z) = E[min(S, z)] = int_0^z Bbar. */
static double law_b1(const afd_svc_law *l, double z)
{
    size_t k;
    if (!(z > 0))
        return 0;
    if (l->kind == LAW_EXP)
        return -l->mean * expm1(-z / l->mean);
    k = afd_priv_svc_upto(l, z);
    return l->pm1[k] + z * l->sw[k];
}

/* T(z) = E[(S - z)+] = int_z^inf Bbar. */
static double law_t(const afd_svc_law *l, double z)
{
    size_t k;
    if (z <= 0)
        return l->mean - z;
    if (l->kind == LAW_EXP)
        return l->mean * exp(-z / l->mean);
    k = afd_priv_svc_upto(l, z);
    return l->sm1[k] - z * l->sw[k];
}

/* T1(z) = int_0^z T = E[int_0^z (S - u)+ du]. */
static double law_t1(const afd_svc_law *l, double z)
{
    size_t k;
    if (!(z > 0))
        return 0;
    if (l->kind == LAW_EXP) {
        double m = l->mean;
        return -m * m * expm1(-z / m);
    }
    k = afd_priv_svc_upto(l, z);
    return z * l->sm1[k] - l->sw[k] * z * z / 2 + l->pm2[k] / 2;
}

/* j2(u) = 1 - e^{-u} (1 + u) = int_0^u x e^{-x} dx, u >= 0, without
 * cancellation. */
double afd_priv_j2(double u)
{
    if (u < 0.5) { /* sum_{n>=2} (-1)^n (n-1) u^n / n! */
        double term = u * u / 2, s = 0;
        int n;
        for (n = 2; n < 40; n++) {
            s += (n - 1) * term;
            term *= -u / (n + 1);
        }
        return s;
    }
    return -expm1(-u) - u * exp(-u);
}

/* int_0^d x Bbar(x) dx = E[min(S, d)^2] / 2. */
static double law_xbbar(const afd_svc_law *l, double d)
{
    size_t k;
    if (l->kind == LAW_EXP)
        return l->mean * l->mean * afd_priv_j2(d / l->mean);
    k = afd_priv_svc_upto(l, d);
    return l->pm2[k] / 2 + l->sw[k] * d * d / 2;
}

/* ------------------------------------------------------------ M/M/c+D */

/* e1(k, d) = int_0^d e^{-k x} dx, k >= 0. */
static double e1(double k, double d)
{
    return k * d < 1e-300 ? d : -expm1(-k * d) / k;
}

/* e2(k, d) = int_0^d x e^{-k x} dx, k >= 0. */
static double e2(double k, double d)
{
    return k * d < 1e-300 ? d * d / 2 : afd_priv_j2(k * d) / (k * k);
}

afd_status afd_mmc_deadline(double lambda, double mean, unsigned c, double d, double q,
                            afd_deadline_result *out)
{
    double mu, cmu, a, kappa, inv_b, bk, den, pv0, poff, dens0, jmean, y, t;
    unsigned k;
    if (out == NULL)
        return AFD_EINVAL;
    memset(out, 0, sizeof *out);
    out->p_off = out->p_zero = out->wait_mean = out->wait_q = NAN;
    out->served_rate = out->offload_rate = out->busy = NAN;
    out->p_off_err = out->p_zero_err = out->wait_mean_err = out->wait_q_err = NAN;
    if (bad_pos(lambda) || bad_pos(mean) || c < 1 || !(d >= 0) || !isfinite(d) ||
        !(q > 0 && q < 1))
        return AFD_EINVAL;
    mu = 1 / mean;
    cmu = c * mu;
    a = lambda * mean;
    kappa = cmu - lambda;
    /* Erlang B(c-1, a) by the positive recursion; 1/B >= 1 */
    bk = 1;
    for (k = 1; k <= c - 1; k++)
        bk = a * bk / (k + a * bk);
    inv_b = 1 / bk;
    if (kappa >= 0) {
        /* p_{c-1} = 1 / den; the density on (0, d] is lambda p_{c-1} e^{-kappa x} */
        double e = exp(-kappa * d);
        den = inv_b + lambda * e1(kappa, d) + lambda * e / cmu;
        pv0 = inv_b / den;
        poff = lambda * e / cmu / den;
        dens0 = lambda / den; /* the density at 0+ */
        jmean = dens0 * e2(kappa, d);
        y = q * (1 - poff) - pv0;
        if (y <= 0) {
            t = 0;
        } else {
            double yy = y / dens0; /* int_0^t e^{-kappa x} dx */
            t = kappa * d < 1e-300 ? yy : -log1p(-kappa * yy) / kappa;
        }
    } else {
        /* rho > 1: everything scaled by sigma = e^{kappa d} < 1, so that the
         * density lambda sigma e^{-kappa x} / den = lambda e^{-|kappa| (d - x)} / den */
        double ak = -kappa, sigma = exp(kappa * d);
        den = inv_b * sigma + lambda * e1(ak, d) + lambda / cmu;
        pv0 = inv_b * sigma / den;
        poff = lambda / cmu / den;
        dens0 = lambda * sigma / den;
        /* int_0^d x e^{-ak (d - x)} dx = d e1(ak, d) - e2(ak, d) */
        jmean = lambda / den * (d * e1(ak, d) - e2(ak, d));
        y = q * (1 - poff) - pv0;
        if (y <= 0)
            t = 0;
        else /* sigma (e^{ak t} - 1) / ak = y den / lambda */
            t = log(ak * y * den / lambda + sigma) / ak + d;
        (void)dens0;
    }
    if (t > d)
        t = d;
    out->p_off = poff;
    out->p_zero = pv0 / (1 - poff);
    out->wait_mean = jmean / (1 - poff);
    out->wait_q = t;
    out->served_rate = lambda * (1 - poff);
    out->offload_rate = lambda * poff;
    out->busy = 1 - pv0;
    out->p_off_err = 64 * DBL_EPSILON * poff;
    out->p_zero_err = 64 * DBL_EPSILON * out->p_zero;
    out->wait_mean_err = 64 * DBL_EPSILON * out->wait_mean;
    out->wait_q_err = 64 * DBL_EPSILON * (t + d);
    out->grid = 0;
    return AFD_OK;
}

/* ------------------------------------------------------------ M/G/1+D */

#define GRID_MIN 256
#define GRID_MAX (1 << 14)

typedef struct sol {
    double p_off, p_zero, wait_mean, wait_q, busy;
} sol;

/* Lambda(v) = int_{-1}^{min(1, v)} (1 - |s|) ds: the share of a hat on
 * [-1, 1] below v. */
static double hat_below(double v)
{
    if (v <= -1)
        return 0;
    if (v <= 0)
        return (1 + v) * (1 + v) / 2;
    if (v < 1)
        return 1 - (1 - v) * (1 - v) / 2;
    return 1;
}

/* int_0^{min(1,v)} (1 - s) ds. */
static double halfhat_below(double v)
{
    return v >= 1 ? 0.5 : v - v * v / 2;
}

/* Weights W_m = int (1 - |u - m h| / h)+ Bbar(u) du (m >= 1) and
 * W_0 = int_0^h (1 - u/h) Bbar(u) du: the kernel integrated exactly against
 * the hat functions. */
static void weights(const afd_svc_law *l, double h, size_t n, double *w)
{
    size_t m;
    if (l->kind == LAW_EXP) {
        double a = h / l->mean, sh = a < 1e-4 ? 1 + a * a / 24 : 2 * sinh(a / 2) / a;
        double phi = a < 1e-2 ? a * a * (0.5 - a / 6 + a * a / 24 - a * a * a / 120)
                              : a + expm1(-a);
        w[0] = h * phi / (a * a);
        for (m = 1; m <= n; m++)
            w[m] = h * exp(-a * (double)m) * sh * sh;
        return;
    }
    {
        double s = 0;
        size_t j;
        for (j = 0; j < l->n; j++)
            s += l->w[j] * halfhat_below(l->t[j] / h);
        w[0] = h * s;
    }
    for (m = 1; m <= n; m++) {
        double x = (double)m * h, s;
        size_t lo = afd_priv_svc_upto(l, x - h), j;
        /* atoms above x + h see the whole hat; those at x + h too (Lambda(1) = 1) */
        s = l->sw[afd_priv_svc_upto(l, x + h)];
        for (j = lo; j < l->n && l->t[j] <= x + h; j++)
            s += l->w[j] * hat_below((l->t[j] - x) / h);
        w[m] = h * s;
    }
}

/* K(x_i) = int_0^x Bbar(y) Bbar(x - y) dy = E[B1(x) - B1((x - S)+)] on the grid. */
static void forcing(const afd_svc_law *l, double h, size_t n, double *kf)
{
    size_t i, j;
    if (l->kind == LAW_EXP) {
        for (i = 0; i <= n; i++) {
            double x = (double)i * h;
            kf[i] = x * exp(-x / l->mean);
        }
        return;
    }
    for (i = 0; i <= n; i++)
        kf[i] = 0;
    for (j = 0; j < l->n; j++) {
        double tj = l->t[j], wj = l->w[j];
        size_t k = 0; /* atoms <= x - tj, moves up with i */
        for (i = 0; i <= n; i++) {
            double x = (double)i * h, z = x - tj, b1x, b1z;
            size_t kx;
            if (z <= 0) {
                kf[i] += wj * law_b1(l, x);
                continue;
            }
            while (k < l->n && l->t[k] <= z)
                k++;
            kx = afd_priv_svc_upto(l, x);
            b1x = l->pm1[kx] + x * l->sw[kx];
            b1z = l->pm1[k] + z * l->sw[k];
            kf[i] += wj * (b1x - b1z);
        }
    }
}

/* Solve on a grid of n intervals.  work holds 3 (n + 1) doubles. */
static afd_status solve(double lambda, const afd_svc_law *l, double d, double q, size_t n,
                        double *work, sol *s)
{
    double h = d / (double)n, *w = work, *kf = work + (n + 1), *r = work + 2 * (n + 1);
    double diag, rint = 0, xr = 0, tr, g, z, p0, y;
    size_t i, k;

    weights(l, h, n, w);
    forcing(l, h, n, kf);
    diag = 1 - lambda * w[0];
    if (!(diag > 0))
        return AFD_ENUMERIC;
    r[0] = 0;
    for (i = 1; i <= n; i++) {
        double acc = kf[i];
        for (k = 1; k < i; k++)
            acc += r[k] * w[i - k];
        r[i] = lambda * acc / diag;
        if (!isfinite(r[i]))
            return AFD_ERANGE;
    }
    /* integrals of the piecewise linear r */
    tr = 0;
    for (i = 0; i < n; i++) {
        double xa = (double)i * h;
        rint += h * (r[i] + r[i + 1]) / 2;
        xr += h * (r[i] * (xa / 2 + h / 6) + r[i + 1] * (xa / 2 + h / 3));
    }
    for (i = 0; i <= n; i++) {
        double wt = (i == 0 || i == n) ? h / 2 : h;
        tr += wt * r[i] * law_t(l, d - (double)i * h);
    }
    g = lambda * law_b1(l, d) + lambda * rint;
    /* int_0^d Bbar(y) T(d - y) dy */
    {
        double qd;
        if (l->kind == LAW_EXP) {
            qd = l->mean * d * exp(-d / l->mean);
        } else {
            size_t j;
            double t1d = law_t1(l, d);
            qd = 0;
            for (j = 0; j < l->n; j++) {
                double m = l->t[j] < d ? l->t[j] : d;
                qd += l->w[j] * (t1d - law_t1(l, d - m));
            }
        }
        z = law_t(l, d) + lambda * qd + lambda * tr;
    }
    if (!isfinite(g) || !isfinite(z))
        return AFD_ERANGE;
    p0 = 1 / (1 + g + lambda * z);
    s->p_off = lambda * p0 * z;
    s->busy = 1 - p0;
    s->p_zero = 1 / (1 + g);
    s->wait_mean = lambda * (law_xbbar(l, d) + xr) / (1 + g);
    /* q-quantile: lambda B1(t) + lambda R(t) = q (1 + g) - 1 */
    y = q * (1 + g) - 1;
    if (y <= 0) {
        s->wait_q = 0;
    } else {
        double rc = 0, hprev = 0, lo, hi;
        size_t cell = n;
        for (i = 0; i < n; i++) {
            double rnext = rc + h * (r[i] + r[i + 1]) / 2;
            double hv = lambda * law_b1(l, (double)(i + 1) * h) + lambda * rnext;
            if (hv >= y) {
                cell = i;
                break;
            }
            rc = rnext;
            hprev = hv;
        }
        (void)hprev;
        if (cell == n) {
            s->wait_q = d;
        } else {
            double xa = (double)cell * h, ra = r[cell], rb = r[cell + 1];
            int it;
            lo = 0;
            hi = h;
            for (it = 0; it < 200 && hi - lo > 1e-16 * (xa + h); it++) {
                double u = (lo + hi) / 2;
                double rcu = rc + ra * u + (rb - ra) * u * u / (2 * h);
                double hv = lambda * law_b1(l, xa + u) + lambda * rcu;
                if (hv >= y)
                    hi = u;
                else
                    lo = u;
            }
            s->wait_q = xa + hi;
        }
    }
    return AFD_OK;
}

afd_status afd_mg1_deadline(double lambda, const afd_svc_law *law, double d, double q,
                            double tol, afd_deadline_result *out)
{
    double *work;
    sol a, b, prev; /* prev: differences of the previous doubling */
    size_t n;
    afd_status st;
    if (out == NULL)
        return AFD_EINVAL;
    memset(out, 0, sizeof *out);
    out->p_off = out->p_zero = out->wait_mean = out->wait_q = NAN;
    out->served_rate = out->offload_rate = out->busy = NAN;
    out->p_off_err = out->p_zero_err = out->wait_mean_err = out->wait_q_err = NAN;
    if (law == NULL || bad_pos(lambda) || !(d >= 0) || !isfinite(d) || !(q > 0 && q < 1) ||
        !(tol >= 0))
        return AFD_EINVAL;
    if (tol == 0)
        tol = 1e-9;
    if (d == 0) { /* M/G/1/1: nobody waits */
        double es = law->mean;
        out->p_off = lambda * es / (1 + lambda * es);
        out->p_zero = 1;
        out->wait_mean = out->wait_q = 0;
        out->served_rate = lambda * (1 - out->p_off);
        out->offload_rate = lambda * out->p_off;
        out->busy = out->p_off;
        out->p_off_err = 4 * DBL_EPSILON * out->p_off;
        out->p_zero_err = out->wait_mean_err = out->wait_q_err = 0;
        return AFD_OK;
    }
    n = GRID_MIN;
    while ((double)n < 2 * lambda * d && n < GRID_MAX)
        n *= 2;
    if ((double)n < lambda * d)
        return AFD_ENUMERIC; /* the step would not resolve the arrivals */
    work = malloc(3 * (2 * (size_t)GRID_MAX + 1) * sizeof *work);
    if (work == NULL)
        return AFD_ENOMEM;
    st = solve(lambda, law, d, q, n, work, &a);
    prev.p_off = prev.p_zero = prev.wait_mean = prev.wait_q = prev.busy = 0;
    for (;;) {
        double e_off, e_zero, e_mean, e_q, scale;
        if (st != AFD_OK)
            break;
        st = solve(lambda, law, d, q, 2 * n, work, &b);
        if (st != AFD_OK)
            break;
        n *= 2;
        /* |difference|, or a quarter of the previous one if larger: the
         * error of a second-order method whose kinks (atoms between grid
         * points) make successive differences alternate in size */
        e_off = fmax(fabs(b.p_off - a.p_off), prev.p_off / 4);
        e_zero = fmax(fabs(b.p_zero - a.p_zero), prev.p_zero / 4);
        e_mean = fmax(fabs(b.wait_mean - a.wait_mean), prev.wait_mean / 4);
        e_q = fmax(fabs(b.wait_q - a.wait_q), prev.wait_q / 4);
        prev.p_off = fabs(b.p_off - a.p_off);
        prev.p_zero = fabs(b.p_zero - a.p_zero);
        prev.wait_mean = fabs(b.wait_mean - a.wait_mean);
        prev.wait_q = fabs(b.wait_q - a.wait_q);
        scale = law->mean;
        out->p_off = b.p_off;
        out->p_zero = b.p_zero;
        out->wait_mean = b.wait_mean;
        out->wait_q = b.wait_q;
        out->busy = b.busy;
        out->served_rate = lambda * (1 - b.p_off);
        out->offload_rate = lambda * b.p_off;
        out->p_off_err = e_off;
        out->p_zero_err = e_zero;
        out->wait_mean_err = e_mean;
        out->wait_q_err = e_q;
        out->grid = n;
        if ((e_off <= tol && e_zero <= tol && e_mean <= tol * scale) || n >= GRID_MAX) {
            if (e_off > (tol > 1e-6 ? tol : 1e-6))
                st = AFD_ENUMERIC;
            break;
        }
        a = b;
    }
    free(work);
    if (st != AFD_OK) {
        out->p_off = out->p_zero = out->wait_mean = out->wait_q = NAN;
        out->served_rate = out->offload_rate = out->busy = NAN;
    }
    return st;
}

/* ------------------------------------------------------------ M/G/c+D */

afd_status afd_mgc_deadline(double lambda, const afd_svc_law *law, unsigned c, double d, double q,
                            afd_deadline_result *out)
{
    afd_deadline_result mmc;
    afd_status st;
    double k;
    if (out == NULL)
        return AFD_EINVAL;
    if (law == NULL || c < 1) {
        afd_mmc_deadline(-1, 1, 1, 1, 0.5, out); /* NaN outputs */
        return AFD_EINVAL;
    }
    if (c == 1 && law->kind != LAW_EXP)
        return afd_mg1_deadline(lambda, law, d, q, 0, out);
    /* time scale of the wait: (1 + cs^2) / 2 */
    k = law->kind == LAW_EXP ? 1 : law->m2 / (law->mean * law->mean) / 2;
    st = afd_mmc_deadline(lambda, law->mean, c, d / k, q, &mmc);
    *out = mmc;
    if (st != AFD_OK)
        return st;
    out->wait_mean = k * mmc.wait_mean;
    out->wait_q = k * mmc.wait_q;
    out->wait_mean_err = k * mmc.wait_mean_err;
    out->wait_q_err = k * mmc.wait_q_err;
    return AFD_OK;
}
