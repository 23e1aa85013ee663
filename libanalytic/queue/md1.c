/* md1.c: the exact M/D/1 queue: Pollaczek-Khinchine mean, Crommelin's
 * waiting-time distribution from the level-crossing recursion, and its
 * quantiles (see afd_queue.h). */
#include <config.h>

#include <float.h>
#include <math.h>

#include <gsl/gsl_cdf.h>

#include "afd_queue.h"
#include "internal.h"

/* Poisson(rho) with rho < 1 puts less than 1/41! < 1e-48 above 40. */
#define K    40
#define RING (K + 2)
/* Beyond the point where the Chernoff bound of P(X > m) is below this, the
 * distribution function is 1 to within the bound. */
#define TAIL_TARGET 1e-17
/* Work limit: intervals of length D scanned before giving up. */
#define MAX_STEPS   50000000L
#define ROOT_EPSREL 1e-14

/* The embedded chain Q_n of M/D/1 and a window of its stationary law. */
typedef struct md1 {
    double lambda, service, rho;
    double p0, x0;      /* P(Q = 0) = 1 - rho; P(X = 0) = p0 + p1 */
    double a0;          /* P(A = 0) = e^-rho */
    double abar[K + 2]; /* abar[k] = P(A >= k), A ~ Poisson(rho) */
    double p[RING];     /* p[i % RING] = P(Q = i) for i in (n - RING, n] */
    double cum[RING];   /* cum[i % RING] = P(Q <= i), same i */
    long n;             /* highest index computed */
} md1;

static int bad_positive(double x)
{
    return !(x > 0) || !isfinite(x);
}

/* Level crossing between n-1 and n: P(A = 0) p_n = p_0 P(A >= n)
 * + sum_{i=1}^{n-1} p_i P(A >= n - i + 1); terms with P(A >= 42) dropped. */
static void step(md1 *m)
{
    long n1 = m->n + 1, i, lo = n1 - K > 1 ? n1 - K : 1;
    double s = 0, v;
    for (i = lo; i < n1; i++)
        s += m->p[i % RING] * m->abar[n1 - i + 1];
    if (n1 <= K + 1)
        s += m->p0 * m->abar[n1];
    v = s / m->a0;
    m->p[n1 % RING] = v;
    m->cum[n1 % RING] = m->cum[(n1 - 1) % RING] + v;
    m->n = n1;
}

static void init(md1 *m, double lambda, double service)
{
    int k;
    m->lambda = lambda;
    m->service = service;
    m->rho = lambda * service;
    m->p0 = 1 - m->rho;
    m->a0 = exp(-m->rho);
    m->abar[0] = 1;
    for (k = 1; k <= K + 1; k++)
        m->abar[k] = gsl_cdf_poisson_Q((unsigned int)(k - 1), m->rho);
    m->p[0] = m->p0;
    m->cum[0] = m->p0;
    m->n = 0;
    step(m);
    m->x0 = m->p0 + m->p[1];
}

/* P(X = j) for j in [n - RING, n - 1], X = max(Q - 1, 0). */
static double x_at(const md1 *m, long j)
{
    return j == 0 ? m->x0 : m->p[(j + 1) % RING];
}

/* P(W <= k D + u) and its density in t, with n = k + 1 computed:
 *   sum_{j <= k-K-1} P(X = j) + sum_{j = k-K}^{k} P(X = j) P(A_u <= k - j). */
static double eval(const md1 *m, long k, double u, double *dens)
{
    double mu = m->lambda * (m->service - u), pm = exp(-mu), cdf = 0, f = 0, d = 0;
    long i, j0 = k - K > 0 ? k - K : 0;
    if (mu < 0)
        mu = 0, pm = 1;
    if (k - K - 1 >= 0)
        f = m->cum[(k - K) % RING]; /* P(X <= k-K-1) = P(Q <= k-K) */
    /* i = k - j runs 0..k-j0 */
    for (i = 0; i <= k - j0; i++) {
        double x = x_at(m, k - i);
        if (i > 0)
            pm *= mu / (double)i;
        cdf += pm;
        f += x * cdf;
        d += x * pm;
    }
    if (dens != NULL)
        *dens = m->lambda * d;
    return f;
}

/* Relative rounding bound of the level-crossing sums after n steps. */
static double round_rel(long n)
{
    return (double)(n + 2) * (K + 3) * DBL_EPSILON;
}

afd_status afd_md1_wq_e(double lambda, double service, afd_result *result)
{
    double rho;
    result->val = NAN;
    result->err = NAN;
    if (bad_positive(lambda) || bad_positive(service))
        return AFD_EINVAL;
    rho = lambda * service;
    if (!(rho < 1))
        return AFD_EUNSTABLE;
    /* Pollaczek-Khinchine: Wq = lambda E[S^2] / (2 (1 - rho)) = rho D / (2 (1 - rho)) */
    result->val = rho * service / (2 * (1 - rho));
    result->err = 4 * DBL_EPSILON * result->val / (1 - rho);
    return AFD_OK;
}

double afd_md1_wq(double lambda, double service)
{
    afd_result r;
    return afd_md1_wq_e(lambda, service, &r) == AFD_OK ? r.val : NAN;
}

/* Common checks; *trivial set when rho underflows to 0 (the wait is 0). */
static afd_status check(double lambda, double service, int *trivial)
{
    double rho;
    if (bad_positive(lambda) || bad_positive(service))
        return AFD_EINVAL;
    rho = lambda * service;
    if (!(rho < 1))
        return AFD_EUNSTABLE;
    *trivial = !(rho > 0);
    return AFD_OK;
}

afd_status afd_md1_wait_cdf_e(double lambda, double service, double t, afd_result *result)
{
    md1 m;
    long k;
    double u, kd, f;
    int trivial;
    afd_status st;

    result->val = NAN;
    result->err = NAN;
    st = check(lambda, service, &trivial);
    if (st != AFD_OK)
        return st;
    if (isnan(t))
        return AFD_EINVAL;
    if (t < 0 || trivial || t == INFINITY) {
        result->val = t < 0 ? 0 : 1;
        result->err = 0;
        return AFD_OK;
    }
    kd = floor(t / service);
    if (kd > K + 1) {
        /* F(t) >= P(X <= k - K - 1) P(A_u <= K) >= 1 - tau - 1e-48 */
        double tau;
        st = afd_priv_queue_tail(lambda * service, 1, kd - K - 1, 1, &tau, NULL);
        if (st == AFD_OK && tau <= TAIL_TARGET) {
            result->val = 1;
            result->err = tau + 1e-48;
            return AFD_OK;
        }
    }
    if (kd > MAX_STEPS)
        return AFD_ELIMIT;
    k = (long)kd;
    u = t - kd * service;
    if (u < 0)
        u = 0;
    if (u > service)
        u = service;
    init(&m, lambda, service);
    while (m.n < k + 1)
        step(&m);
    f = eval(&m, k, u, NULL);
    result->val = f > 1 ? 1 : f;
    result->err = round_rel(k) * f + 1e-48;
    return AFD_OK;
}

double afd_md1_wait_cdf(double lambda, double service, double t)
{
    afd_result r;
    return afd_md1_wait_cdf_e(lambda, service, t, &r) == AFD_OK ? r.val : NAN;
}

struct root_args {
    const md1 *m;
    long k;
    double p;
};

/* F(t) - p for t in [k D, (k+1) D] */
static double root_fn(double t, void *params)
{
    const struct root_args *a = params;
    double u = t - (double)a->k * a->m->service;
    u = u < 0 ? 0 : u > a->m->service ? a->m->service : u;
    return eval(a->m, a->k, u, NULL) - a->p;
}

afd_status afd_md1_wait_quantile_e(double lambda, double service, double p, afd_result *result)
{
    md1 m;
    struct root_args ra;
    double glo, ghi, lo, hi, u, dens, t;
    long k;
    int trivial;
    afd_status st;

    result->val = NAN;
    result->err = NAN;
    st = check(lambda, service, &trivial);
    if (st != AFD_OK)
        return st;
    if (!(p > 0 && p < 1))
        return AFD_EINVAL;
    if (trivial || p <= 1 - lambda * service) {
        /* the atom P(W = 0) = 1 - rho */
        result->val = 0;
        result->err = 0;
        return AFD_OK;
    }
    init(&m, lambda, service);
    /* Smallest k with F((k+1) D) = P(Q <= k+1) >= p; F(k D) = P(Q <= k). */
    for (k = 0;; k++) {
        while (m.n < k + 1)
            step(&m);
        if (m.cum[(k + 1) % RING] >= p)
            break;
        if (k > MAX_STEPS)
            return AFD_ELIMIT;
        if ((k & 1023) == 1023) {
            /* Rounding can keep the sum below a p very close to 1. */
            double tau;
            if (afd_priv_queue_tail(lambda * service, 1, (double)k, 1, &tau, NULL) == AFD_OK &&
                tau < 1e-6 * (1 - p))
                return AFD_ENUMERIC;
        }
    }
    ra.m = &m;
    ra.k = k;
    ra.p = p;
    lo = (double)k * service;
    hi = (double)(k + 1) * service;
    glo = root_fn(lo, &ra);
    ghi = root_fn(hi, &ra);
    if (glo >= 0) {
        t = lo;
    } else if (ghi <= 0) {
        t = hi;
    } else {
        st = afd_priv_brent(root_fn, &ra, lo, hi, 0, ROOT_EPSREL, &t);
        if (st != AFD_OK)
            return st;
    }
    u = t - lo;
    eval(&m, k, u < 0 ? 0 : u > service ? service : u, &dens);
    result->val = t;
    result->err = (round_rel(k) * p + 1e-48) / dens + 2 * ROOT_EPSREL * t;
    return AFD_OK;
}

double afd_md1_wait_quantile(double lambda, double service, double p)
{
    afd_result r;
    return afd_md1_wait_quantile_e(lambda, service, p, &r) == AFD_OK ? r.val : NAN;
}
