/* mdc.c: the exact M/D/c queue from the embedded chain of the number
 * waiting, X' = max(X + A - c, 0), solved by GTH state reduction on a
 * truncation with a computed error bound (see afd_queue.h). */
#include <config.h>

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_sf_gamma.h>

#include "afd_queue.h"
#include "internal.h"

/* Poisson tails carrying less than CUT_REL P(A > c) are folded into the
 * last kept value. */
#define CUT_REL 1e-30
/* The truncation bound on E[X] is at most TRUNC_REL P(A > c). */
#define TRUNC_REL 1e-17
/* Size limit of the banded transition matrix, in doubles. */
#define MAX_DOUBLES ((double)(1L << 24))
#define ROOT_EPSREL 1e-14

struct afd_mdc {
    double lambda, service, a;
    int c;
    long n;          /* N: the chain is solved on {0..N} */
    long kmax;       /* P(A > kmax) <= CUT_REL P(A > c) */
    double *x;       /* x[j] = P(X = j) */
    double *cdf;     /* cdf[j] = P(X <= j) */
    double *sf;      /* sf[j] = P(X > j) */
    double mean_x;   /* E[X] */
    double mean_err; /* bound on |E[X] - mean_x| */
    double tau;      /* bound on P(X > N) */
    double prob_err; /* truncation bound on any probability */
    double rel_err;  /* relative rounding of the solution and Poisson terms */
    int light;       /* P(A > c) underflowed: E[W] from its light-load form */
    double p_up;     /* P(A > c) */
    double p_ge;     /* P(A >= c), to a relative few DBL_EPSILON */
};

static int bad_positive(double x)
{
    return !(x > 0) || !isfinite(x);
}

/* P(A > k) and P(A <= k) for A ~ Poisson(a); k >= 0. */
static double pois_q(double k, double a)
{
    return k > 4e9 ? 0 : gsl_cdf_poisson_Q((unsigned int)k, a);
}

static double pois_p(double k, double a)
{
    return k > 4e9 ? 1 : gsl_cdf_poisson_P((unsigned int)k, a);
}

/* Smallest k >= c with P(A > k) <= delta (P(A > c) > delta). */
static long upper_cut(double a, long c, double delta)
{
    long lo = c, step = 1, hi;
    for (;;) {
        hi = c + step;
        if (pois_q((double)hi, a) <= delta)
            break;
        lo = hi;
        step *= 2;
    }
    while (hi - lo > 1) {
        long mid = lo + (hi - lo) / 2;
        if (pois_q((double)mid, a) <= delta)
            hi = mid;
        else
            lo = mid;
    }
    return hi;
}

/* Largest k in [0, top] with P(A < k) <= delta. */
static long lower_cut(double a, long top, double delta)
{
    long lo = 0, hi = top + 1;
    /* invariant: P(A < lo) <= delta, P(A < hi) > delta or hi = top + 1 */
    while (hi - lo > 1) {
        long mid = lo + (hi - lo) / 2;
        if (pois_p((double)(mid - 1), a) <= delta)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

void afd_mdc_free(afd_mdc *q)
{
    if (q == NULL)
        return;
    free(q->x);
    free(q->cdf);
    free(q->sf);
    free(q);
}

/* Solve the truncated chain on {0..N} by GTH; x receives the stationary
 * law.  Band storage: row i holds columns i - lo .. i + hi. */
static afd_status solve(afd_mdc *q, long kmin, long kmax, double *x)
{
    const long n = q->n, c = q->c;
    const long lo = c - kmin < n ? c - kmin : n, hi = kmax - c < n ? kmax - c : n;
    const long w = lo + hi + 1;
    double *band, *s, *wt, total = 0;
    long i, j, k;

    band = calloc((size_t)(n + 1) * (size_t)w, sizeof *band);
    s = malloc((size_t)(n + 1) * sizeof *s);
    wt = malloc((size_t)(kmax - kmin + 1) * sizeof *wt);
    if (band == NULL || s == NULL || wt == NULL) {
        free(band);
        free(s);
        free(wt);
        return AFD_ENOMEM;
    }
#define B(r, col) band[(size_t)(r) * (size_t)w + (size_t)((col) - (r) + lo)]

    /* Poisson weights with both tails folded in. */
    for (k = kmin; k <= kmax; k++)
        wt[k - kmin] = afd_priv_poisson_pmf((double)k, q->a);
    wt[0] = pois_p((double)kmin, q->a);
    if (kmax > kmin)
        wt[kmax - kmin] = pois_q((double)(kmax - 1), q->a);

    /* Row i: X' = min(N, max(0, i + k - c)) with probability wt[k]. */
    for (i = 0; i <= n; i++)
        for (k = kmin; k <= kmax; k++) {
            j = i + k - c;
            j = j < 0 ? 0 : j > n ? n : j;
            B(i, j) += wt[k - kmin];
        }

    /* State reduction from the top: censor state m onto {0..m-1}. */
    for (long m = n; m >= 1; m--) {
        const long jlo = m - lo > 0 ? m - lo : 0, ilo = m - hi > 0 ? m - hi : 0;
        double sm = 0;
        for (j = jlo; j < m; j++)
            sm += B(m, j);
        s[m] = sm;
        if (!(sm > 0)) {
            free(band);
            free(s);
            free(wt);
            return AFD_ENUMERIC;
        }
        for (i = ilo; i < m; i++) {
            const double f = B(i, m) / sm;
            double *ri;
            const double *rm;
            if (f == 0)
                continue;
            ri = &B(i, jlo);
            rm = &B(m, jlo);
            for (j = 0; j < m - jlo; j++)
                ri[j] += f * rm[j];
        }
    }
    /* Back substitution: x_m s_m = sum_{i<m} x_i P'(i, m). */
    x[0] = 1;
    for (long m = 1; m <= n; m++) {
        const long ilo = m - hi > 0 ? m - hi : 0;
        double v = 0;
        for (i = ilo; i < m; i++)
            v += x[i] * B(i, m);
        x[m] = v / s[m];
    }
#undef B
    for (i = n; i >= 0; i--)
        total += x[i];
    for (i = 0; i <= n; i++)
        x[i] /= total;
    q->rel_err = 4 * (double)(n + w) * DBL_EPSILON;
    free(band);
    free(s);
    free(wt);
    return AFD_OK;
}

afd_status afd_mdc_alloc(double lambda, double service, unsigned servers, afd_mdc **out)
{
    afd_mdc *q;
    double a, p_up, nd, excess = 0;
    long kmin, j;
    int c;
    afd_status st;

    *out = NULL;
    if (bad_positive(lambda) || bad_positive(service) || servers < 1)
        return AFD_EINVAL;
    if (servers > INT_MAX)
        return AFD_ELIMIT;
    c = (int)servers;
    a = lambda * service;
    if (!(a < c))
        return AFD_EUNSTABLE;
    q = calloc(1, sizeof *q);
    if (q == NULL)
        return AFD_ENOMEM;
    q->lambda = lambda;
    q->service = service;
    q->a = a;
    q->c = c;

    /* P(A > c) bounds E[X] and P(W > 0) from below (X' >= (A - c)+). */
    p_up = a > 0 ? pois_q((double)c, a) : 0;
    q->p_up = p_up;
    q->p_ge = a > 0 ? exp((double)c * log(a) - a - gsl_sf_lngamma(c + 1.0)) + p_up : 0;
    if (p_up > 0) {
        const double delta = CUT_REL * p_up;
        q->kmax = upper_cut(a, c, delta);
        kmin = lower_cut(a, (long)floor(a) < c - 1 ? (long)floor(a) : c - 1, delta);
        st = afd_priv_queue_truncation(a, c, TRUNC_REL * p_up, 1, MAX_DOUBLES, &nd);
        if (st == AFD_OK) {
            long lo = c - kmin < (long)nd ? c - kmin : (long)nd;
            long hi = q->kmax - c < (long)nd ? q->kmax - c : (long)nd;
            if ((nd + 1) * (double)(lo + hi + 1) > MAX_DOUBLES)
                st = AFD_ELIMIT;
        }
    } else {
        /* P(A > c) underflows: X = 0 to within 1e-308. */
        q->kmax = c;
        q->light = a > 0;
        kmin = 0;
        nd = 0;
        st = AFD_OK;
    }
    if (st != AFD_OK) {
        afd_mdc_free(q);
        return st;
    }
    q->n = (long)nd;
    q->x = malloc((size_t)(q->n + 1) * sizeof *q->x);
    q->cdf = malloc((size_t)(q->n + 1) * sizeof *q->cdf);
    q->sf = malloc((size_t)(q->n + 1) * sizeof *q->sf);
    if (q->x == NULL || q->cdf == NULL || q->sf == NULL) {
        afd_mdc_free(q);
        return AFD_ENOMEM;
    }
    if (q->n > 0) {
        st = solve(q, kmin, q->kmax, q->x);
        if (st != AFD_OK) {
            afd_mdc_free(q);
            return st;
        }
    } else {
        q->x[0] = 1;
        q->rel_err = 4 * DBL_EPSILON;
    }
    q->cdf[0] = q->x[0];
    for (j = 1; j <= q->n; j++)
        q->cdf[j] = q->cdf[j - 1] + q->x[j];
    q->sf[q->n] = 0;
    q->mean_x = 0;
    for (j = q->n; j >= 1; j--) {
        q->sf[j - 1] = q->sf[j] + q->x[j];
        q->mean_x += (double)j * q->x[j];
    }

    /* The truncation bound, with P(X = 0) <= x[0] (the truncated law is
     * stochastically smaller than the exact one). */
    q->tau = 0;
    if (a > 0) {
        st = afd_priv_queue_tail(a, c, (double)q->n, q->x[0], &q->tau, &excess);
        if (st != AFD_OK) {
            afd_mdc_free(q);
            return st;
        }
    }
    q->prob_err = q->tau < 1 ? 2 * q->tau / (1 - q->tau) : 1;
    /* Poisson terms: P(A = k) = exp(k log a - a - log k!) carries the
     * rounding of its exponent, DBL_EPSILON (k |log a| + a + log k!), as a
     * relative error (k <= kmax; 1e-13 at c = 1, a = 1e-150) */
    q->rel_err += 8 * (a + (double)(q->kmax - c) + 10) * DBL_EPSILON;
    if (a > 0)
        q->rel_err += 4 * DBL_EPSILON *
                      ((double)q->kmax * fabs(log(a)) + a + gsl_sf_lngamma((double)q->kmax + 1));
    /* E[X] carries the Poisson terms' rounding too (before it was left out:
     * c = 1, rho = 5e-143 came out 1e-13 high under a bound of 5e-15) */
    q->mean_err = (q->tau < 1 ? (double)q->n * q->tau / (1 - q->tau) : INFINITY) + excess +
                  q->rel_err * q->mean_x;
    *out = q;
    return AFD_OK;
}

size_t afd_mdc_size(const afd_mdc *q)
{
    return q != NULL ? (size_t)q->n : 0;
}

double afd_mdc_tail_bound(const afd_mdc *q)
{
    return q != NULL ? q->tau : NAN;
}

/* E[W] from the first term of the chain, E[(A - c)+] / lambda, and its
 * bound. */
static void light_wq(const afd_mdc *q, double *val, double *err)
{
    /* Far below saturation (P(A >= c) tiny) E[X] = E[(A - c)+] (1 +
     * O(P(A >= c))) may underflow while E[W] = E[X] / lambda does not
     * (c = 1: rho D / 2).  With
     * t_j = a^j (c+1)! / (c+1+j)!,
     *   E[(A - c)+] = sum_{j>=0} (j+1) P(A = c+1+j)
     *               = e^-a a^(c+1) / (c+1)! * S,  S = sum_{j>=0} (j+1) t_j,
     * so E[W] = D e^-a a^c / (c+1)! * S.  The prefactor is formed in
     * logarithms once c is large (a^c and (c+1)! overflow separately
     * while their ratio times e^-a underflows to 0 or a subnormal: at
     * c = 4000, a = 2000 it is e^-787); S in [1, 1/(1 - a/(c+2))^2] is
     * summed to a relative DBL_EPSILON. */
    const double a = q->a, c = (double)q->c;
    double log_lead = c * log(a) - a - gsl_sf_lngamma(c + 2.0);
    /* D times the prefactor: D may lift a prefactor below DBL_MIN */
    const int direct = q->c <= 150 && pow(a, c) >= DBL_MIN;
    double lead = direct ? q->service * pow(a, c) / gsl_sf_fact((unsigned)q->c + 1) * exp(-a)
                         : exp(log_lead + log(q->service));
    double s = 1, t = 1, ratio, tail;
    long j;
    for (j = 1; j < 100000000L; j++) {
        ratio = a / (c + 1 + (double)j);
        t *= ratio;
        s += (double)(j + 1) * t;
        /* the rest is below (j+2) t sum_k ((j+1+k)/(j+1)) ratio^k
         * <= (j+2) t ratio / (1 - ratio)^2 */
        tail = (double)(j + 2) * t * ratio / ((1 - ratio) * (1 - ratio));
        if (tail <= 0.5 * DBL_EPSILON * s)
            break;
    }
    ratio = a / (c + 1 + (double)j);
    tail = (double)(j + 2) * t * ratio / ((1 - ratio) * (1 - ratio));
    /* the relative correction E[X] / E[(A - c)+] - 1 is O(P(A >= c)),
     * P(A >= c) = P(A = c) + P(A > c) (+ DBL_MIN where both underflow) */
    *val = lead * s;
    *err = *val * (tail / s + 4 * (q->p_ge + DBL_MIN) + 8 * DBL_EPSILON * ((double)j + 4) +
                   (direct ? 0 : 4 * DBL_EPSILON * (fabs(log_lead) + 1)));
}

afd_status afd_mdc_wq_e(const afd_mdc *q, afd_result *result)
{
    result->val = NAN;
    result->err = NAN;
    if (q == NULL)
        return AFD_EINVAL;
    if (q->light) {
        light_wq(q, &result->val, &result->err);
        return AFD_OK;
    }
    result->val = q->mean_x / q->lambda;
    result->err = q->mean_err / q->lambda + 2 * DBL_EPSILON * result->val;
    /* Far below saturation the chain keeps only the relative precision of
     * its smallest terms: E[X] >= P(A > c) is built from values of that
     * order, so once P(A > c) < DBL_MIN / DBL_EPSILON the terms that matter
     * to a relative DBL_EPSILON are subnormal and carry an absolute error of
     * 2^-1075 instead of a relative one, which its bound does not count
     * (c = 1, rho = 5e-162: 18.6% high).  There the first term's bound,
     * 4 P(A >= c) + O(DBL_EPSILON), is below 1e-90 relative; elsewhere the
     * value with the smaller bound is returned (the first term wins once
     * P(A >= c) is below about the chain's Poisson rounding, 1e-13). */
    if (q->p_up < DBL_MIN / DBL_EPSILON || q->p_ge < 1e-6) {
        double v, e;
        light_wq(q, &v, &e);
        if (q->p_up < DBL_MIN / DBL_EPSILON || e < result->err) {
            result->val = v;
            result->err = e;
        }
    }
    return AFD_OK;
}

double afd_mdc_wq(const afd_mdc *q)
{
    afd_result r;
    return afd_mdc_wq_e(q, &r) == AFD_OK ? r.val : NAN;
}

afd_status afd_mdc_p_wait_e(const afd_mdc *q, afd_result *result)
{
    double v = 0;
    long j, top;
    result->val = NAN;
    result->err = NAN;
    if (q == NULL)
        return AFD_EINVAL;
    /* P(Q >= c) = sum_{j < c} P(X = j) P(A >= c - j) + P(X >= c) */
    top = q->n < (long)q->c - 1 ? q->n : (long)q->c - 1;
    if (q->a > 0)
        for (j = top; j >= 0; j--)
            v += q->x[j] * pois_q((double)(q->c - j - 1), q->a);
    if (q->n >= q->c)
        v += q->sf[q->c - 1];
    result->val = v;
    result->err = q->prob_err + q->rel_err * v;
    return AFD_OK;
}

double afd_mdc_p_wait(const afd_mdc *q)
{
    afd_result r;
    return afd_mdc_p_wait_e(q, &r) == AFD_OK ? r.val : NAN;
}

/* ---- the waiting-time distribution at t = k D + u (0 <= u <= D):
 * m = (k + 1) c - 1, A_u ~ Poisson(lambda (D - u)),
 *   S = P(X + A_u >  m) = sum_{i <= m} P(A_u = i) P(X > m - i) + P(A_u > m),
 *   F = P(X + A_u <= m) = sum_{i <= m} P(A_u = i) P(X <= m - i),
 *   dF/dt = lambda sum_{i <= m} P(A_u = i) P(X = m - i),
 * sums of positive terms over i <= kmax (P(A_u > kmax) <= P(A > kmax) is
 * below CUT_REL P(A > c)).  In the truncated chain X + A - c is capped at N
 * like every other move, so for m - c >= N the wait is below t: S = 0,
 * F = 1 (the exact S is below tau there).  This keeps S and F monotone
 * across periods, where stationarity of the truncated chain joins them.  F
 * is returned as 1 - S once S < 1/2, so that it is monotone near 1 too. */
struct wait_point {
    double f, s, dens;
};

static void wait_eval(const afd_mdc *q, double k, double u, struct wait_point *w)
{
    const double mu = u >= q->service ? 0 : q->lambda * (q->service - u);
    const double m = (k + 1) * q->c - 1;
    long i, ilo, ihi, itop;
    double f = 0, s = 0, d = 0, spread;

    if (m - q->c >= (double)q->n) {
        w->f = 1;
        w->s = 0;
        w->dens = 0;
        return;
    }
    /* Poisson(mu) puts less than e^-700 outside [mu - 40 sqrt(mu) - 40,
     * mu + 40 sqrt(mu) + 200] (Chernoff); summing only there keeps large
     * loads (c up to 10^9) cheap. */
    spread = 40 * sqrt(mu) + 40;
    ilo = mu - spread > 0 ? (long)floor(mu - spread) : 0;
    itop = mu + spread + 160 < (double)q->kmax ? (long)ceil(mu + spread + 160) : q->kmax;
    ihi = m < (double)itop ? (long)m : itop;
    for (i = ilo; i <= ihi; i++) {
        const double pm = afd_priv_poisson_pmf((double)i, mu);
        const long j = (long)m - i;
        if (j > q->n) {
            f += pm; /* P(X <= j) = 1 */
            continue;
        }
        f += pm * q->cdf[j];
        s += pm * q->sf[j];
        d += pm * q->x[j];
    }
    for (i = itop; i > ihi; i--)
        s += afd_priv_poisson_pmf((double)i, mu);
    s = s > 1 ? 1 : s;
    w->s = s;
    w->f = s < 0.5 ? 1 - s : f > 1 ? 1 : f;
    w->dens = q->lambda * d;
}

/* t = k D + u with 0 <= u <= D */
static void split(const afd_mdc *q, double t, double *k, double *u)
{
    *k = floor(t / q->service);
    *u = t - *k * q->service;
    if (*u < 0)
        *u = 0;
    if (*u > q->service)
        *u = q->service;
}

static afd_status wait_dist(const afd_mdc *q, double t, int upper, afd_result *result)
{
    struct wait_point w;
    double k, u, v;
    result->val = NAN;
    result->err = NAN;
    if (q == NULL || isnan(t))
        return AFD_EINVAL;
    if (t < 0 || t == INFINITY) {
        result->val = (t < 0) == (upper != 0) ? 1 : 0;
        result->err = 0;
        return AFD_OK;
    }
    split(q, t, &k, &u);
    wait_eval(q, k, u, &w);
    v = upper ? w.s : w.f;
    result->val = v;
    result->err = q->prob_err + q->rel_err * v + CUT_REL;
    return AFD_OK;
}

afd_status afd_mdc_wait_cdf_e(const afd_mdc *q, double t, afd_result *result)
{
    return wait_dist(q, t, 0, result);
}

double afd_mdc_wait_cdf(const afd_mdc *q, double t)
{
    afd_result r;
    return afd_mdc_wait_cdf_e(q, t, &r) == AFD_OK ? r.val : NAN;
}

afd_status afd_mdc_wait_sf_e(const afd_mdc *q, double t, afd_result *result)
{
    return wait_dist(q, t, 1, result);
}

double afd_mdc_wait_sf(const afd_mdc *q, double t)
{
    afd_result r;
    return afd_mdc_wait_sf_e(q, t, &r) == AFD_OK ? r.val : NAN;
}

/* G(t) >= 0 iff P(W <= t) >= p; for p > 1/2 through P(W > t) <= 1 - p,
 * which keeps its digits near p = 1. */
struct quantile_args {
    const afd_mdc *q;
    double p, k;
};

static double g_at(const afd_mdc *q, double p, double k, double u)
{
    struct wait_point w;
    wait_eval(q, k, u, &w);
    return p > 0.5 ? (1 - p) - w.s : w.f - p;
}

static double g_root(double t, void *params)
{
    const struct quantile_args *a = params;
    double u = t - a->k * a->q->service;
    u = u < 0 ? 0 : u > a->q->service ? a->q->service : u;
    return g_at(a->q, a->p, a->k, u);
}

afd_status afd_mdc_wait_quantile_e(const afd_mdc *q, double p, afd_result *result)
{
    struct quantile_args qa;
    struct wait_point w;
    double jlo, jhi, lo, hi, t, u, perr;
    afd_status st;

    result->val = NAN;
    result->err = NAN;
    if (q == NULL || !(p > 0 && p < 1))
        return AFD_EINVAL;
    perr = q->prob_err + q->rel_err * (p > 0.5 ? 1 - p : p) + CUT_REL;
    if (g_at(q, p, 0, 0) >= -perr) {
        /* the atom P(W = 0) (within the error bound of the distribution) */
        result->val = 0;
        result->err = 0;
        return AFD_OK;
    }
    /* Smallest integer j >= 1 with G(j D) >= 0.  At j D with
     * (j + 1) c - 1 > N + kmax, S = 0 and F = 1. */
    jlo = 0;
    jhi = 1;
    while (g_at(q, p, jhi, 0) < 0) {
        jlo = jhi;
        if (jhi * q->c > (double)q->n + (double)q->kmax + 2 * (double)q->c)
            return AFD_ENUMERIC; /* unreachable unless rounding kept F below p */
        jhi *= 2;
    }
    while (jhi - jlo > 1) {
        double mid = floor(0.5 * (jlo + jhi));
        if (g_at(q, p, mid, 0) >= 0)
            jhi = mid;
        else
            jlo = mid;
    }
    /* the quantile lies in [k D, (k + 1) D], k = jhi - 1 */
    qa.q = q;
    qa.p = p;
    qa.k = jhi - 1;
    lo = qa.k * q->service;
    hi = jhi * q->service;
    if (g_root(hi, &qa) <= 0) {
        t = hi; /* rounding: the limit from the left is the value at the next point */
    } else {
        st = afd_priv_brent(g_root, &qa, lo, hi, 0, ROOT_EPSREL, &t);
        if (st != AFD_OK)
            return st;
    }
    u = t - lo;
    wait_eval(q, qa.k, u < 0 ? 0 : u > q->service ? q->service : u, &w);
    result->val = t;
    result->err = (w.dens > 0 ? perr / w.dens : q->service) + 2 * ROOT_EPSREL * t;
    return AFD_OK;
}

double afd_mdc_wait_quantile(const afd_mdc *q, double p)
{
    afd_result r;
    return afd_mdc_wait_quantile_e(q, p, &r) == AFD_OK ? r.val : NAN;
}

afd_status afd_mdc_number_pmf_e(const afd_mdc *q, long n, afd_result *result)
{
    double v = 0;
    long j, jlo;
    result->val = NAN;
    result->err = NAN;
    if (q == NULL || n < 0)
        return AFD_EINVAL;
    /* P(Q = n) = sum_j P(X = j) P(A = n - j) */
    jlo = n - q->kmax > 0 ? n - q->kmax : 0;
    for (j = jlo; j <= n && j <= q->n; j++)
        v += q->x[j] * afd_priv_poisson_pmf((double)(n - j), q->a);
    result->val = v;
    result->err = q->prob_err + q->rel_err * v + CUT_REL;
    return AFD_OK;
}
