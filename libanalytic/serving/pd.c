/* pd.c: prefill/decode pool sizing and goodput (see afd_pd.h). */
#include <config.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "afd_pd.h"
#include "afd_queue.h"
#include "internal.h"

#define GEOM_MAX_VALUES ((size_t)1 << 22)

static int model_ok(const afd_prefill_model *m)
{
    return m->a >= 0 && m->b >= 0 && m->c2 >= 0 && isfinite(m->a) && isfinite(m->b) &&
           isfinite(m->c2) && (m->a > 0 || m->b > 0 || m->c2 > 0);
}

static double service(const afd_prefill_model *m, double P)
{
    return m->a + m->b * P + m->c2 * P * P;
}

struct point {
    double s, w;
};

static int by_value(const void *a, const void *b)
{
    double x = ((const struct point *)a)->s, y = ((const struct point *)b)->s;
    return (x > y) - (x < y);
}

/* Bin sorted (value, weight) points into atoms of about equal weight. */
static void compress(const struct point *pt, size_t n, afd_service_law *out)
{
    long double mean = 0, m2 = 0, total = 0, bin_w = 0, bin_s = 0;
    const double per_bin = 1.0 / AFD_SERVICE_ATOMS;
    size_t i;

    for (i = 0; i < n; i++)
        total += pt[i].w;
    out->n = 0;
    for (i = 0; i < n; i++) {
        long double w = pt[i].w / total;
        mean += w * pt[i].s;
        m2 += w * pt[i].s * pt[i].s;
        bin_w += w;
        bin_s += w * pt[i].s;
        if ((bin_w >= per_bin * (1 - 1e-12) && out->n < AFD_SERVICE_ATOMS - 1) || i + 1 == n) {
            out->t[out->n] = (double)(bin_s / bin_w);
            out->w[out->n] = (double)bin_w;
            out->n++;
            bin_w = bin_s = 0;
        }
    }
    out->mean = (double)mean;
    out->scv = mean > 0 ? (double)((m2 - mean * mean) / (mean * mean)) : 0;
    if (out->scv < 0)
        out->scv = 0;
    out->max = pt[n - 1].s;
}

afd_status afd_service_law_from_workload(const afd_workload *w, const afd_prefill_model *m,
                                         afd_service_law *out)
{
    struct point *pt;
    size_t n, i;

    memset(out, 0, sizeof *out);
    out->mean = out->scv = out->max = NAN;
    if (!model_ok(m))
        return AFD_EINVAL;
    if (w->kind == AFD_WORKLOAD_TRACE) {
        /* the kept rows, or the distinct pairs weighted by their counts */
        n = w->pairs != NULL || w->prompt != NULL ? afd_workload_entries(w) : 0;
        if (n == 0)
            return AFD_EEMPTY;
        pt = malloc(n * sizeof *pt);
        if (pt == NULL)
            return AFD_ENOMEM;
        for (i = 0; i < n; i++) {
            afd_workload_pair e = afd_workload_entry(w, i);
            pt[i].s = service(m, (double)afd_workload_prompt_tokens(e));
            pt[i].w = (double)e.count;
        }
    } else if (w->kind == AFD_WORKLOAD_GEOMETRIC) {
        /* P ~ Geometric{1,2,...}(q = 1/mu_p), cut where the tail is below 1e-12 */
        double q = 1 / w->mu_p, tail = 1;
        n = w->mu_p == 1 ? 1 : (size_t)ceil(log(1e-12) / log1p(-q));
        if (!(w->mu_p >= 1) || n > GEOM_MAX_VALUES)
            return AFD_EINVAL;
        pt = malloc(n * sizeof *pt);
        if (pt == NULL)
            return AFD_ENOMEM;
        for (i = 0; i < n; i++) {
            pt[i].s = service(m, (double)(i + 1));
            pt[i].w = tail * q; /* P(P = i + 1) */
            tail *= 1 - q;
        }
        pt[n - 1].w += tail; /* the cut tail joins the last value */
    } else {
        return AFD_EINVAL;
    }
    qsort(pt, n, sizeof *pt, by_value);
    compress(pt, n, out);
    free(pt);
    return AFD_OK;
}

/* ---- TTFT */

/* A status of afd_ttft_quantile that means "the load is so close to 1 that
 * the exact M/D/c chain exceeds its size limit" (rho above about 0.9996 at
 * c = 64, 0.9999 at c = 1; see afd_mdc_alloc).  The mean wait there is at
 * least tens of mean service times (about E[S] / (2 c (1 - rho))), so sizing takes such a pool as
 * missing the SLO rather than failing. */
static int saturated(afd_status st)
{
    return st == AFD_ELIMIT;
}

struct conv {
    const afd_mdc *q;
    const afd_service_law *s;
    double k;      /* time scale of the wait law */
    double target; /* p */
};

/* E_S[F_W((t - S)/k)] - p */
static double conv_minus_p(double t, void *vp)
{
    const struct conv *cv = vp;
    double g = 0;
    size_t j;
    for (j = 0; j < cv->s->n; j++)
        if (t >= cv->s->t[j])
            g += cv->s->w[j] * afd_mdc_wait_cdf(cv->q, (t - cv->s->t[j]) / cv->k);
    return g - cv->target;
}

afd_status afd_ttft_quantile(double lambda, const afd_service_law *s, unsigned c, double p,
                             afd_ttft *out)
{
    afd_mdc *q = NULL;
    afd_status st;
    struct conv cv;
    double lo, hi;
    int grow;

    out->c = c;
    out->rho = out->wq_md = out->ttft_md = out->ttft_mg = NAN;
    if (!(lambda > 0) || !isfinite(lambda) || c < 1 || !(p > 0 && p < 1) || s->n == 0 ||
        !(s->mean > 0))
        return AFD_EINVAL;
    out->rho = lambda * s->mean / c;
    if (!(out->rho < 1))
        return AFD_EUNSTABLE;
    st = afd_mdc_alloc(lambda, s->mean, c, &q);
    if (st != AFD_OK)
        return st;
    out->wq_md = afd_mdc_wait_quantile(q, p);
    out->ttft_md = out->wq_md + s->mean;

    /* M/G/c: the root of E_S[F_W((t - S)/k)] = p; the function is
     * non-decreasing with jumps (the atom of W at 0), bracketed by
     * [0, hi] with hi grown until it reaches p. */
    cv.q = q;
    cv.s = s;
    cv.k = 1 + s->scv;
    cv.target = p;
    lo = 0;
    hi = s->max + cv.k * (out->wq_md + s->mean);
    for (grow = 0; conv_minus_p(hi, &cv) < 0 && grow < 60; grow++)
        hi *= 2;
    if (grow == 60 || !isfinite(out->wq_md)) {
        afd_mdc_free(q);
        return AFD_ENUMERIC;
    }
    if (conv_minus_p(lo, &cv) >= 0) {
        out->ttft_mg = 0;
    } else {
        /* bisection: robust across the jumps, 1e-12 relative in 60 steps */
        int it;
        for (it = 0; it < 200 && hi - lo > 1e-12 * hi; it++) {
            double mid = 0.5 * (lo + hi);
            if (conv_minus_p(mid, &cv) >= 0)
                hi = mid;
            else
                lo = mid;
        }
        out->ttft_mg = hi;
    }
    afd_mdc_free(q);
    return AFD_OK;
}

afd_status afd_prefill_pool(double lambda, const afd_service_law *s, double p, double slo,
                            int mg, unsigned c_max, afd_ttft *out)
{
    double feasible_s = 0;
    size_t j;
    double c0;
    unsigned c;

    out->c = 0;
    out->rho = out->wq_md = out->ttft_md = out->ttft_mg = NAN;
    if (!(lambda > 0) || !(slo > 0) || c_max < 1 || !(p > 0 && p < 1) || s->n == 0)
        return AFD_EINVAL;
    /* As c grows the wait vanishes: TTFT tends to S (M/G/c) or E[S] (M/D/c).
     * If that limit misses the SLO, no pool meets it. */
    for (j = 0; j < s->n; j++)
        if (s->t[j] <= slo)
            feasible_s += s->w[j];
    if (mg ? feasible_s < p : !(s->mean < slo))
        return AFD_EEMPTY;
    /* the smallest stable pool, floor(lambda E[S]) + 1, up to c_max */
    c0 = floor(lambda * s->mean) + 1;
    if (!(c0 <= c_max))
        return AFD_EEMPTY;
    for (c = (unsigned)c0;; c++) {
        afd_status st = afd_ttft_quantile(lambda, s, c, p, out);
        if (!saturated(st)) { /* a load so close to 1 is taken as missing the SLO */
            if (st != AFD_OK)
                return st;
            if ((mg ? out->ttft_mg : out->ttft_md) <= slo)
                return AFD_OK;
        }
        if (c == c_max)
            break;
    }
    return AFD_EEMPTY;
}

/* ---- decode */

static double mean_d(const afd_workload *w)
{
    return w->kind == AFD_WORKLOAD_GEOMETRIC ? w->mu_d : w->stats.mean_d;
}

/* Largest L for the Poisson mixture of kv_quantile; above it the plain
 * normal (skewness (theta^3 + 3 theta nu^2 + E[(Y - theta)^3]) / (L^1/2
 * (theta^2 + nu^2)^3/2), below 0.01 for the loads of a trace). */
#define KV_MIXTURE_MAX_L 1e5

/* P(K <= x) for the compound Poisson K of afd_decode_demand, the sum of n
 * loads normal: sum_n p[n] Phi((x - n theta) / (sqrt(n) nu)), n from n0. */
static double kv_cdf(double x, const double *p, size_t n0, size_t count, double theta, double nu)
{
    double f = 0;
    size_t i;
    for (i = 0; i < count; i++) {
        double n = (double)(n0 + i);
        if (n == 0)
            f += x >= 0 ? p[i] : 0;
        else if (nu > 0)
            f += p[i] * gsl_cdf_ugaussian_P((x - n * theta) / (sqrt(n) * nu));
        else
            f += x >= n * theta ? p[i] : 0;
    }
    return f;
}

/* q-quantile of K = Y_1 + ... + Y_N, N ~ Poisson(L) (see afd_pd.h). */
static afd_status kv_quantile(double L, double theta, double nu, double q, double *out)
{
    double z = gsl_cdf_ugaussian_Pinv(q), sd = sqrt(L * (theta * theta + nu * nu));
    double lo, hi, *p;
    size_t n0, n1, i, count;
    int grow;
    if (L == 0 || theta == 0) {
        *out = 0;
        return AFD_OK;
    }
    if (L > KV_MIXTURE_MAX_L) {
        *out = fmax(0, L * theta + z * sd);
        return AFD_OK;
    }
    /* the Poisson terms within 12 sd of the mean (tails below 1e-30) */
    n0 = (size_t)fmax(0, floor(L - 12 * sqrt(L) - 12));
    n1 = (size_t)ceil(L + 12 * sqrt(L) + 12);
    count = n1 - n0 + 1;
    p = malloc(count * sizeof *p);
    if (p == NULL)
        return AFD_ENOMEM;
    for (i = 0; i < count; i++)
        p[i] = afd_priv_poisson_pmf((double)(n0 + i), L);
    lo = 0;
    if (kv_cdf(lo, p, n0, count, theta, nu) >= q) {
        free(p);
        *out = 0;
        return AFD_OK;
    }
    hi = L * theta + (fabs(z) + 10) * sd + theta;
    for (grow = 0; kv_cdf(hi, p, n0, count, theta, nu) < q && grow < 60; grow++)
        hi *= 2;
    if (grow == 60) {
        free(p);
        return AFD_ENUMERIC;
    }
    /* the cdf is non-decreasing: keep F(lo) < q <= F(hi) */
    while (hi - lo > 1e-12 * hi) {
        double mid = 0.5 * (lo + hi);
        if (kv_cdf(mid, p, n0, count, theta, nu) >= q)
            hi = mid;
        else
            lo = mid;
    }
    free(p);
    *out = hi;
    return AFD_OK;
}

/* P(Poisson(L) <= k) for any integer k >= 0 as a double: Q(k + 1, L), the
 * identity gsl_cdf_poisson_P itself evaluates, whose unsigned k would wrap
 * past 2^32 - 1 (an occupancy L above ~4.29e9 then never reached q). */
static double poisson_P(double k, double L)
{
    return gsl_cdf_gamma_Q(L, k + 1, 1.0);
}

static int law_ok(const afd_decode_law *law)
{
    return law != NULL && law->beta > 0 && isfinite(law->beta) && law->gamma >= 0 &&
           isfinite(law->gamma) && law->alpha >= 0 && isfinite(law->alpha);
}

afd_status afd_decode_demand_law(double lambda, const afd_workload *w, const afd_decode_law *law,
                                 double instances, double q, afd_decode_need *out)
{
    double L, k, x, slope, theta = w->stats.theta, nu = w->stats.nu;
    afd_status st;
    out->slots_mean = out->slots_q = out->kv_tokens = out->kv_tokens_q = NAN;
    out->instances = instances;
    out->occupancy = out->step = out->step_q = NAN;
    if (!(lambda >= 0) || !isfinite(lambda) || !law_ok(law) || !(instances >= 1) ||
        !isfinite(instances) || !(q > 0 && q < 1) || !(mean_d(w) >= 1) || !(theta >= 0) ||
        !isfinite(theta) || !(nu >= 0) || !isfinite(nu))
        return AFD_EINVAL;
    /* Little's law for one instance with the step law (afd_pd.h):
     * n = l E[D] (beta + slope n), l = lambda / N, so n = l E[D] beta /
     * (1 - l E[D] slope) and the pool holds L = N n = lambda E[D] beta /
     * (1 - x), x = l E[D] slope (x = 0 exactly for a constant step: then
     * L = lambda E[D] beta, bit for bit). */
    slope = law->gamma + law->alpha * theta;
    x = lambda / instances * mean_d(w) * slope;
    if (!(x < 1)) {
        out->slots_mean = out->slots_q = out->kv_tokens = out->kv_tokens_q = INFINITY;
        out->occupancy = out->step = out->step_q = INFINITY;
        return AFD_EUNSTABLE;
    }
    L = lambda * mean_d(w) * law->beta / (1 - x);
    out->slots_mean = L;
    out->kv_tokens = L * theta;
    out->occupancy = L / instances;
    out->step = law->beta + slope * out->occupancy;
    if (L == 0) {
        out->slots_q = 0;
        out->kv_tokens_q = 0;
        out->step_q = law->beta;
        return AFD_OK;
    }
    if (L > 1e15)
        return AFD_ERANGE;
    /* smallest k with P(Poisson(L) <= k) >= q, from the normal guess */
    k = floor(L + gsl_cdf_ugaussian_Pinv(q) * sqrt(L));
    if (k < 0)
        k = 0;
    while (k > 0 && poisson_P(k - 1, L) >= q)
        k--;
    while (poisson_P(k, L) < q)
        k++;
    out->slots_q = k;
    out->step_q = law->beta + slope * (k / instances);
    if ((st = kv_quantile(L, theta, nu, q, &out->kv_tokens_q)) != AFD_OK)
        return st;
    return AFD_OK;
}

afd_status afd_decode_demand(double lambda, const afd_workload *w, double step, double q,
                           afd_decode_need *out)
{
    afd_decode_law law = {step, 0, 0};
    return afd_decode_demand_law(lambda, w, &law, 1, q, out);
}

static int given_ok(double v)
{
    return isnan(v) || (v > 0 && isfinite(v));
}

afd_status afd_decode_pool_size(const afd_decode_need *need, const afd_decode_instance *inst,
                                afd_decode_pool *out)
{
    double n;
    out->kv_bytes = out->instances = out->kv_bytes_q = NAN;
    if (!given_ok(inst->slots) || !given_ok(inst->kv_bytes_per_token) ||
        !given_ok(inst->kv_budget) || (!isnan(inst->kv_budget) && isnan(inst->kv_bytes_per_token)) ||
        !(need->slots_q >= 0) || !(need->kv_tokens >= 0) || !(need->kv_tokens_q >= 0))
        return AFD_EINVAL;
    if (!isnan(inst->kv_bytes_per_token)) {
        out->kv_bytes = need->kv_tokens * inst->kv_bytes_per_token;
        out->kv_bytes_q = need->kv_tokens_q * inst->kv_bytes_per_token;
    }
    if (isnan(inst->slots))
        return AFD_OK;
    n = ceil(need->slots_q / inst->slots);
    /* memory at the same quantile as the slots */
    if (!isnan(inst->kv_budget) && ceil(out->kv_bytes_q / inst->kv_budget) > n)
        n = ceil(out->kv_bytes_q / inst->kv_budget);
    out->instances = n < 1 ? 1 : n;
    return AFD_OK;
}

/* Pool of N instances: AFD_OK with *fits 1 when need(N) fits N of them. */
static afd_status pool_at(double lambda, const afd_workload *w, const afd_decode_law *law,
                          double q, const afd_decode_instance *inst, double n, int *fits,
                          afd_decode_need *need, afd_decode_pool *out)
{
    afd_status st = afd_decode_demand_law(lambda, w, law, n, q, need);
    *fits = 0;
    if (st == AFD_EUNSTABLE)
        return AFD_OK;
    if (st != AFD_OK)
        return st;
    if ((st = afd_decode_pool_size(need, inst, out)) != AFD_OK)
        return st;
    *fits = out->instances <= n;
    return AFD_OK;
}

afd_status afd_decode_pool_law(double lambda, const afd_workload *w, const afd_decode_law *law,
                               double q, const afd_decode_instance *inst, afd_decode_need *need,
                               afd_decode_pool *out)
{
    const double n_max = 1e9;
    double slope, lo, hi;
    afd_status st;
    int fits;

    out->kv_bytes = out->instances = out->kv_bytes_q = NAN;
    if (!law_ok(law) || !(w->stats.theta >= 0) || !isfinite(w->stats.theta) ||
        !(lambda >= 0) || !isfinite(lambda)) {
        afd_decode_demand_law(lambda, w, law, 1, q, need); /* NaN figures */
        return AFD_EINVAL;
    }
    slope = law->gamma + law->alpha * w->stats.theta;
    if (slope == 0 || isnan(inst->slots)) {
        /* the demand does not depend on N (or no N is asked for) */
        if (slope > 0) {
            afd_decode_demand_law(lambda, w, law, 1, q, need);
            return AFD_EINVAL;
        }
        if ((st = afd_decode_demand_law(lambda, w, law, 1, q, need)) != AFD_OK)
            return st;
        return afd_decode_pool_size(need, inst, out);
    }
    /* the smallest stable pool: (lambda / N) E[D] slope < 1 */
    lo = floor(lambda * mean_d(w) * slope) + 1;
    if (!(lo <= n_max))
        return AFD_ERANGE;
    if ((st = pool_at(lambda, w, law, q, inst, lo, &fits, need, out)) != AFD_OK)
        return st;
    if (fits) {
        out->instances = lo; /* pool_size asks for at most lo; the pool is lo */
        return AFD_OK;
    }
    /* lo fails; double to a pool that fits, then bisect on integers */
    hi = lo;
    do {
        lo = hi;
        hi = fmin(2 * hi, n_max);
        if ((st = pool_at(lambda, w, law, q, inst, hi, &fits, need, out)) != AFD_OK)
            return st;
    } while (!fits && hi < n_max);
    if (!fits)
        return AFD_ERANGE;
    while (hi - lo > 1) {
        double mid = floor((lo + hi) / 2);
        if ((st = pool_at(lambda, w, law, q, inst, mid, &fits, need, out)) != AFD_OK)
            return st;
        if (fits)
            hi = mid;
        else
            lo = mid;
    }
    if ((st = pool_at(lambda, w, law, q, inst, hi, &fits, need, out)) != AFD_OK)
        return st;
    /* pool_size asks for at most hi; the pool is hi instances */
    out->instances = hi;
    return AFD_OK;
}

/* ---- the P90 of per-request TPOT in a decode pool (see afd_pd.h) */

/* One atom of the requests' decode lengths: weight, E[m], E[m^2], E[m^3]
 * (m = D - 1 steps after the first token), E[1/m], E[1/m^2], E[P], Var P. */
struct tpot_atom {
    double w, m1, m2, m3, inv1, inv2, p1, pvar;
};

struct mp {
    double m, p, w;
};

/* The values of a geometric law of D that tpot_atoms takes one by one,
 * and about as many runs beyond them (it runs at every rate a goodput
 * bisection tries). */
#define TPOT_EXACT_VALUES 32768.0

static int by_m(const void *a, const void *b)
{
    double x = ((const struct mp *)a)->m, y = ((const struct mp *)b)->m;
    return (x > y) - (x < y);
}

/* The requests with m >= 1, sorted by m, in at most AFD_SERVICE_ATOMS bins of
 * about equal weight; *n atoms.  AFD_EEMPTY when no request has m >= 1. */
static afd_status tpot_atoms(const afd_workload *w, struct tpot_atom *a, size_t *n)
{
    struct mp *pt;
    size_t k = 0, i, cap;
    long double total = 0, bw = 0, s[7] = {0};
    const double per_bin = 1.0 / AFD_SERVICE_ATOMS;

    *n = 0;
    if (w->kind == AFD_WORKLOAD_TRACE) {
        if (w->n_kept == 0 || w->prompt == NULL || w->decode == NULL)
            return AFD_EINVAL;
        pt = malloc(w->n_kept * sizeof *pt);
        if (pt == NULL)
            return AFD_ENOMEM;
        for (i = 0; i < w->n_kept; i++)
            if (w->decode[i] >= 2) {
                pt[k].m = (double)(w->decode[i] - 1);
                pt[k].p = (double)w->prompt[i];
                pt[k++].w = 1;
            }
    } else if (w->kind == AFD_WORKLOAD_GEOMETRIC) {
        /* D ~ Geometric{1,2,...}(1 / mu_d), cut where the tail is below 1e-12;
         * m = D - 1 one point a value up to TPOT_EXACT_VALUES, beyond it in
         * runs of `run` values (about as many again), each run a point at
         * its mean m (1/m then varies within a run by run / m, under
         * cut / TPOT_EXACT_VALUES^2); P independent of D, its mean mu_p and
         * variance mu_p (mu_p - 1) */
        double q = 1 / w->mu_d, tail, cut, run, first;
        if (!(w->mu_d >= 1) || !(w->mu_p >= 1) || !isfinite(w->mu_d))
            return AFD_EINVAL;
        cut = w->mu_d == 1 ? 1 : ceil(log(1e-12) / log1p(-q));
        run = cut > TPOT_EXACT_VALUES ? ceil((cut - TPOT_EXACT_VALUES) / TPOT_EXACT_VALUES) : 1;
        cap = 2 * TPOT_EXACT_VALUES + 2;
        pt = malloc(cap * sizeof *pt);
        if (pt == NULL)
            return AFD_ENOMEM;
        tail = 1 - q; /* P(D >= 2) = P(m >= 1) */
        for (first = 1; first <= cut && k < cap && q < 1;) {
            double r = first <= TPOT_EXACT_VALUES ? 1 : run;
            double keep = pow(1 - q, r); /* P(m >= first + r | m >= first) */
            /* the mean of m over the run: first + (1 - q) / q - r keep / (1 - keep) */
            pt[k].m = r == 1 ? first : first + (1 - q) / q - r * keep / (1 - keep);
            pt[k].p = w->mu_p;
            pt[k++].w = tail * (1 - keep); /* P(the run) */
            tail *= keep;
            first += r;
        }
        if (k > 0)
            pt[k - 1].w += tail;
    } else {
        return AFD_EINVAL;
    }
    if (k == 0) {
        free(pt);
        return AFD_EEMPTY;
    }
    qsort(pt, k, sizeof *pt, by_m);
    for (i = 0; i < k; i++)
        total += pt[i].w;
    for (i = 0; i < k; i++) {
        long double x = pt[i].w / total, m = pt[i].m;
        bw += x;
        s[0] += x * m;
        s[1] += x * m * m;
        s[2] += x * m * m * m;
        s[3] += x / m;
        s[4] += x / (m * m);
        s[5] += x * pt[i].p;
        s[6] += x * pt[i].p * pt[i].p;
        if ((bw >= per_bin * (1 - 1e-12) && *n < AFD_SERVICE_ATOMS - 1) || i + 1 == k) {
            struct tpot_atom *t = &a[(*n)++];
            t->w = (double)bw;
            t->m1 = (double)(s[0] / bw);
            t->m2 = (double)(s[1] / bw);
            t->m3 = (double)(s[2] / bw);
            t->inv1 = (double)(s[3] / bw);
            t->inv2 = (double)(s[4] / bw);
            t->p1 = (double)(s[5] / bw);
            t->pvar = fmax(0, (double)(s[6] / bw - (s[5] / bw) * (s[5] / bw)));
            bw = 0;
            memset(s, 0, sizeof s);
        }
    }
    if (w->kind == AFD_WORKLOAD_GEOMETRIC)
        for (i = 0; i < *n; i++)
            a[i].pvar = w->mu_p * (w->mu_p - 1);
    free(pt);
    return AFD_OK;
}

/* phi(t) = 2 E[g(M, t)] / (t^2 E[M]) of afd_pd.h: the variance of the mean
 * over t steps of an M/G/inf occupancy whose stays last M steps, as a
 * fraction of the variance at one step.  g(M, t) = M t^2 / 2 - t^3 / 6 for
 * M >= t, t M^2 / 2 - M^3 / 6 for M < t; per atom, the side of its mean. */
static double tpot_phi(const struct tpot_atom *a, size_t n, double t)
{
    double g = 0, em = 0;
    size_t j;
    for (j = 0; j < n; j++) {
        em += a[j].w * a[j].m1;
        if (a[j].m1 >= t)
            g += a[j].w * (a[j].m1 * t * t / 2 - t * t * t / 6);
        else
            g += a[j].w * (t * a[j].m2 / 2 - a[j].m3 / 6);
    }
    return fmin(1, 2 * g / (t * t * em));
}

struct tpot_mix {
    const struct tpot_atom *a;
    const double *mu, *sd;
    size_t n;
};

/* the mixture's P(TPOT <= t) */
static double tpot_cdf(double t, const struct tpot_mix *x)
{
    double f = 0, tw = 0;
    size_t j;
    for (j = 0; j < x->n; j++) {
        tw += x->a[j].w;
        f += x->a[j].w * (x->sd[j] > 0 ? gsl_cdf_ugaussian_P((t - x->mu[j]) / x->sd[j])
                                       : (t >= x->mu[j] ? 1.0 : 0.0));
    }
    return f / tw;
}

afd_status afd_decode_tpot_quantile(double lambda, const afd_workload *w,
                                    const afd_decode_law *law, double instances, double p,
                                    afd_decode_tpot *out)
{
    struct tpot_atom a[AFD_SERVICE_ATOMS];
    double mu[AFD_SERVICE_ATOMS], sd[AFD_SERVICE_ATOMS];
    struct tpot_mix mix;
    afd_decode_need d;
    double slope, disp, busy, ej, vj, vstep, lo, hi, theta = w->stats.theta, nu = w->stats.nu;
    size_t n, j;
    afd_status st;
    int grow, it;

    out->mean = out->q = out->step = out->join = NAN;
    if (!(p > 0 && p < 1) || !law_ok(law) || !(instances >= 1) || !isfinite(instances))
        return AFD_EINVAL;
    if ((st = afd_decode_demand_law(lambda, w, law, instances, 0.5, &d)) != AFD_OK)
        return st;
    if ((st = tpot_atoms(w, a, &n)) != AFD_OK)
        return st;
    out->step = d.step;
    slope = law->gamma + law->alpha * theta;
    /* the index of dispersion of one instance's batch, 1 / (1 - x) */
    disp = 1 / (1 - lambda / instances * mean_d(w) * slope);
    /* the join wait: the first of the instances' step boundaries, each
     * uniform over a step when the instance is busy (probability 1 - e^-n) */
    busy = 1 - exp(-d.occupancy);
    ej = busy * d.step / (instances + 1);
    vj = busy * d.step * d.step * instances / ((instances + 1) * (instances + 1) * (instances + 2)) +
         busy * (1 - busy) * (d.step / (instances + 1)) * (d.step / (instances + 1));
    out->join = ej;
    /* the variance of one step over the batch: the others' count and KV */
    vstep = disp * d.occupancy * (slope * slope + law->alpha * law->alpha * nu * nu);
    out->mean = 0;
    for (j = 0; j < n; j++) {
        double own = law->gamma + law->alpha * (a[j].p1 + (a[j].m1 + 1) / 2);
        mu[j] = law->beta + slope * (d.occupancy + disp - 1) + own + ej * a[j].inv1;
        sd[j] = sqrt(tpot_phi(a, n, a[j].m1) * vstep + vj * a[j].inv2 +
                     ej * ej * fmax(0, a[j].inv2 - a[j].inv1 * a[j].inv1) +
                     law->alpha * law->alpha * a[j].pvar);
        out->mean += a[j].w * mu[j];
    }
    mix.a = a;
    mix.mu = mu;
    mix.sd = sd;
    mix.n = n;
    lo = law->beta;
    hi = 2 * d.step + ej + law->beta;
    for (grow = 0; tpot_cdf(hi, &mix) < p && grow < 60; grow++)
        hi *= 2;
    if (grow == 60)
        return AFD_ENUMERIC;
    for (it = 0; it < 200 && hi - lo > 1e-12 * hi; it++) {
        double mid = 0.5 * (lo + hi);
        if (tpot_cdf(mid, &mix) >= p)
            hi = mid;
        else
            lo = mid;
    }
    out->q = hi;
    return AFD_OK;
}

/* ---- goodput */

const char *afd_limit_name(int limit)
{
    switch (limit) {
    case AFD_LIMIT_TTFT: return "ttft";
    case AFD_LIMIT_SLOTS: return "decode-slots";
    case AFD_LIMIT_KV: return "kv-cache";
    case AFD_LIMIT_TPOT: return "tpot";
    case AFD_LIMIT_SATURATION:
        return "saturation";
    }
    return "none";
}

/* Which constraint fails at lambda (AFD_LIMIT_NONE if it is feasible). */
static afd_status check_rate(const afd_pd_pool *pl, double lambda, int *limit)
{
    afd_ttft t;
    afd_decode_need d;
    afd_decode_law law = {pl->decode_step, pl->decode_gamma, pl->decode_alpha};
    afd_status st;

    *limit = AFD_LIMIT_NONE;
    if (lambda * pl->prefill->mean >= pl->prefill_instances) {
        *limit = AFD_LIMIT_TTFT;
        return AFD_OK;
    }
    st = afd_ttft_quantile(lambda, pl->prefill, pl->prefill_instances, pl->percentile, &t);
    if (saturated(st)) {
        *limit = AFD_LIMIT_SATURATION; /* as afd_prefill_pool skips it */
        return AFD_OK;
    }
    if (st != AFD_OK)
        return st;
    if ((pl->mg ? t.ttft_mg : t.ttft_md) > pl->ttft_slo) {
        *limit = AFD_LIMIT_TTFT;
        return AFD_OK;
    }
    st = afd_decode_demand_law(lambda, pl->workload, &law, pl->decode_instances,
                               pl->slot_quantile, &d);
    if (st == AFD_EUNSTABLE) { /* the occupancy grows without bound */
        *limit = AFD_LIMIT_SLOTS;
        return AFD_OK;
    }
    if (st != AFD_OK)
        return st;
    if (d.slots_q > pl->decode_instances * pl->slots_per_instance)
        *limit = AFD_LIMIT_SLOTS;
    else if (pl->kv_budget_tokens > 0 &&
             d.kv_tokens_q > pl->decode_instances * pl->kv_budget_tokens)
        *limit = AFD_LIMIT_KV;
    else if (d.step > pl->tpot_slo) /* the step law's TPOT S(n) grows with the rate */
        *limit = AFD_LIMIT_TPOT;
    else if (pl->tpot_percentile > 0) { /* the quantile of per-request TPOT */
        afd_decode_tpot tp;
        st = afd_decode_tpot_quantile(lambda, pl->workload, &law, pl->decode_instances,
                                      pl->tpot_percentile, &tp);
        if (st == AFD_EEMPTY) /* no request has a TPOT */
            return AFD_OK;
        if (st != AFD_OK)
            return st;
        if (tp.q > pl->tpot_slo)
            *limit = AFD_LIMIT_TPOT;
    }
    return AFD_OK;
}

afd_status afd_pd_goodput(const afd_pd_pool *pl, double *lambda, int *limit)
{
    double lo, hi, cap_p, cap_d, slope;
    afd_status st;
    int lim;

    *lambda = NAN;
    *limit = AFD_LIMIT_NONE;
    if (pl->prefill == NULL || pl->workload == NULL || pl->prefill_instances < 1 ||
        pl->decode_instances < 1 || !(pl->ttft_slo > 0) || !(pl->tpot_slo > 0) ||
        !(pl->decode_step > 0) || !(pl->slots_per_instance > 0) ||
        !(pl->percentile > 0 && pl->percentile < 1) ||
        !(pl->slot_quantile > 0 && pl->slot_quantile < 1) || !(pl->kv_budget_tokens >= 0) ||
        !(pl->tpot_percentile >= 0 && pl->tpot_percentile < 1) ||
        !(pl->prefill->mean > 0) || !(mean_d(pl->workload) >= 1) ||
        !(pl->decode_gamma >= 0) || !isfinite(pl->decode_gamma) || !(pl->decode_alpha >= 0) ||
        !isfinite(pl->decode_alpha) || !(pl->workload->stats.theta >= 0) ||
        !isfinite(pl->workload->stats.theta))
        return AFD_EINVAL;
    /* the step law's growth per sequence (0 for a constant step) */
    slope = pl->decode_gamma + pl->decode_alpha * pl->workload->stats.theta;
    if (pl->decode_step + slope > pl->tpot_slo) { /* S(1): one sequence alone */
        *lambda = 0;
        *limit = AFD_LIMIT_TPOT;
        return AFD_OK;
    }
    /* Upper bound: prefill stability and the mean decode occupancy.  The
     * pool holds N slots on average when lambda E[D] beta / (1 - (lambda /
     * N) E[D] slope) = N slots, i.e. lambda = N slots / (E[D] S(slots)):
     * there (lambda / N) E[D] slope = slope slots / S(slots) < 1, stable. */
    cap_p = pl->prefill_instances / pl->prefill->mean;
    cap_d = pl->decode_instances * pl->slots_per_instance /
            (mean_d(pl->workload) * (pl->decode_step + slope * pl->slots_per_instance));
    hi = cap_p < cap_d ? cap_p : cap_d;
    lo = hi * 1e-9;
    if ((st = check_rate(pl, lo, &lim)) != AFD_OK)
        return st;
    if (lim != AFD_LIMIT_NONE) {
        *lambda = 0;
        *limit = lim;
        return AFD_OK;
    }
    /* Algorithm 8, corrected: keep lo feasible, hi infeasible, and bisect
     * while the bracket is wider than the tolerance. */
    while (hi - lo > 1e-9 * hi) {
        double mid = 0.5 * (lo + hi);
        if ((st = check_rate(pl, mid, &lim)) != AFD_OK)
            return st;
        if (lim == AFD_LIMIT_NONE)
            lo = mid;
        else
            hi = mid;
    }
    *lambda = lo;
    if ((st = check_rate(pl, hi, &lim)) != AFD_OK)
        return st;
    *limit = lim != AFD_LIMIT_NONE ? lim : AFD_LIMIT_TTFT;
    return AFD_OK;
}
