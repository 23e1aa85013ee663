/* mc_test_util.h: goodness-of-fit helpers for the Monte Carlo tests.
 *
 * Chi-square tests use fixed seeds and pass when the p-value exceeds
 * CHI2_PMIN = 1e-6, about the two-sided tail of 5 standard errors that the
 * other Monte Carlo tests allow. */
#ifndef AFD_MC_TEST_UTIL_H
#define AFD_MC_TEST_UTIL_H

#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "test_util.h"

#include "afd_renewal.h"
#include "afd_workload.h"

#define CHI2_PMIN 1e-6

/* The OpenMP team size of the runs that follow (results must not depend on
 * it); nothing without OpenMP. */
static inline void set_threads(int n)
{
#ifdef _OPENMP
    omp_set_num_threads(n);
#else
    (void)n;
#endif
}

/* A prompt's tokens as every model counts them, written out: an empty
 * prompt is one token (afd_workload_prompt_tokens). */
static inline uint64_t tokens_of(uint64_t p)
{
    return p == 0 ? 1 : p;
}

/* A trace workload over the rows (p[i], d[i]) held in memory, with the
 * statistics of eq. (15)-(16) from libanalytic's accumulator, an empty
 * prompt counted as one token as the trace reader counts it. */
static inline void make_trace(afd_workload *w, const uint64_t *p, const uint64_t *d, size_t n)
{
    afd_renewal_acc *acc = afd_renewal_acc_alloc();
    size_t i;
    assert_non_null(acc);
    memset(w, 0, sizeof *w);
    w->kind = AFD_WORKLOAD_TRACE;
    w->mu_p = w->mu_d = NAN;
    w->prompt = malloc(n * sizeof *w->prompt);
    w->decode = malloc(n * sizeof *w->decode);
    assert_non_null(w->prompt);
    assert_non_null(w->decode);
    for (i = 0; i < n; i++) {
        w->prompt[i] = p[i];
        w->decode[i] = d[i];
        assert_int_equal(afd_renewal_acc_add(acc, tokens_of(p[i]), d[i]), AFD_OK);
    }
    w->n_kept = n;
    w->rows = n;
    assert_int_equal(afd_renewal_acc_stats(acc, &w->stats), AFD_OK);
    afd_renewal_acc_free(acc);
}

/* The same trace kept as distinct pairs: (p[i], d[i]) held by c[i] rows
 * (the pairs need not be sorted nor distinct for the samplers). */
static inline void make_pairs(afd_workload *w, const uint64_t *p, const uint64_t *d,
                              const uint64_t *c, size_t n)
{
    afd_renewal_acc *acc = afd_renewal_acc_alloc();
    size_t i;
    uint64_t k;
    assert_non_null(acc);
    memset(w, 0, sizeof *w);
    w->kind = AFD_WORKLOAD_TRACE;
    w->mu_p = w->mu_d = NAN;
    w->pairs = malloc(n * sizeof *w->pairs);
    assert_non_null(w->pairs);
    for (i = 0; i < n; i++) {
        w->pairs[i].prompt = p[i];
        w->pairs[i].decode = d[i];
        w->pairs[i].count = c[i];
        for (k = 0; k < c[i]; k++)
            assert_int_equal(afd_renewal_acc_add(acc, tokens_of(p[i]), d[i]), AFD_OK);
        w->rows += c[i];
    }
    w->n_pairs = n;
    assert_int_equal(afd_renewal_acc_stats(acc, &w->stats), AFD_OK);
    afd_renewal_acc_free(acc);
}

/* P(X <= k) of an integer law, for the binned tests. */
typedef double (*cdf_fn)(double k, const void *par);

/* Smallest integer k >= lo with cdf(k) >= q (cdf nondecreasing). */
static inline double cdf_quantile(cdf_fn cdf, const void *par, double q, double lo)
{
    double hi = lo > 0 ? 2 * lo : 1;
    while (cdf(hi, par) < q)
        hi = 2 * hi + 1;
    while (hi - lo > 0.5) {
        double mid = floor((lo + hi) / 2);
        if (cdf(mid, par) >= q)
            hi = mid;
        else
            lo = mid + 1;
    }
    return hi;
}

/* Integer cut points c[0] < c[1] < ... at about the quantiles i/nbins of the
 * law (bins (c[i-1], c[i]], the last one open); returns the number of bins
 * (duplicates merged). */
static inline int equiprobable_cuts(cdf_fn cdf, const void *par, double lo, int nbins, double *c)
{
    int i, m = 0;
    for (i = 1; i < nbins; i++) {
        double k = cdf_quantile(cdf, par, (double)i / nbins, lo);
        if (m == 0 || k > c[m - 1])
            c[m++] = k;
    }
    return m + 1;
}

/* Pearson chi-square of integer draws x[0..n-1] against the law, over the
 * bins given by cuts c[0..nb-2]; returns the p-value (nb - 1 degrees of
 * freedom). */
static inline double chi2_binned(const double *x, size_t n, cdf_fn cdf, const void *par,
                                 const double *c, int nb)
{
    long *count = calloc((size_t)nb, sizeof *count);
    double chi2 = 0, prev = 0;
    size_t i;
    int b;
    assert_non_null(count);
    for (i = 0; i < n; i++) {
        int lo = 0, hi = nb - 1; /* first bin b with x <= c[b] (or the last) */
        while (lo < hi) {
            int mid = (lo + hi) / 2;
            if (x[i] <= c[mid])
                hi = mid;
            else
                lo = mid + 1;
        }
        count[lo]++;
    }
    for (b = 0; b < nb; b++) {
        double f = b < nb - 1 ? cdf(c[b], par) : 1.0, e = (f - prev) * (double)n;
        chi2 += (count[b] - e) * (count[b] - e) / e;
        prev = f;
    }
    free(count);
    return gsl_cdf_chisq_Q(chi2, nb - 1);
}

/* Two-sample chi-square (equal bins from the pooled sample's quantiles):
 * sum over bins of (sqrt(m/n) a - sqrt(n/m) b)^2 / (a + b), chi-square with
 * bins - 1 degrees of freedom under equal laws. */
static inline int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static inline double chi2_two_sample(const double *x, size_t n, const double *y, size_t m,
                                     int nbins)
{
    double *pool = malloc((n + m) * sizeof *pool), *cut = malloc((size_t)nbins * sizeof *cut);
    long *a = calloc((size_t)nbins, sizeof *a), *b = calloc((size_t)nbins, sizeof *b);
    double chi2 = 0, rn = sqrt((double)m / n), rm = sqrt((double)n / m);
    int nb = 0, k;
    size_t i;
    assert_non_null(pool);
    memcpy(pool, x, n * sizeof *x);
    memcpy(pool + n, y, m * sizeof *y);
    qsort(pool, n + m, sizeof *pool, cmp_double);
    for (k = 1; k < nbins; k++) {
        double q = pool[(size_t)((double)k / nbins * (n + m))];
        if (nb == 0 || q > cut[nb - 1])
            cut[nb++] = q;
    }
    nb++;
    for (i = 0; i < n + m; i++) {
        double v = i < n ? x[i] : y[i - n];
        int lo = 0, hi = nb - 1;
        while (lo < hi) {
            int mid = (lo + hi) / 2;
            if (v <= cut[mid])
                hi = mid;
            else
                lo = mid + 1;
        }
        if (i < n)
            a[lo]++;
        else
            b[lo]++;
    }
    for (k = 0; k < nb; k++)
        if (a[k] + b[k] > 0)
            chi2 += (rn * a[k] - rm * b[k]) * (rn * a[k] - rm * b[k]) / (double)(a[k] + b[k]);
    free(pool);
    free(cut);
    free(a);
    free(b);
    return gsl_cdf_chisq_Q(chi2, nb - 1);
}

/* An integer law on 0..len-1 by its cumulative table. */
typedef struct {
    double *cum; /* cum[y] = P(Y <= y) */
    size_t len;
} table_cdf;

static inline double cdf_table(double y, const void *par)
{
    const table_cdf *t = par;
    if (y < 0)
        return 0;
    return y >= (double)t->len ? 1.0 : t->cum[(size_t)y];
}

/* Exact law of B + NegBin(B, p1) + NegBin(B, p2) by convolution of GSL's
 * negative binomial pmfs. */
static inline void sum_law(double B, double p1, double p2, table_cdf *t)
{
    size_t len = 4096, k, j;
    double *f1 = malloc(len * sizeof *f1), *f2 = malloc(len * sizeof *f2);
    assert_non_null(f1);
    assert_non_null(f2);
    for (k = 0; k < len; k++) {
        f1[k] = gsl_ran_negative_binomial_pdf((unsigned)k, p1, B);
        f2[k] = gsl_ran_negative_binomial_pdf((unsigned)k, p2, B);
    }
    t->len = len + (size_t)B;
    t->cum = calloc(t->len, sizeof *t->cum);
    assert_non_null(t->cum);
    for (k = 0; k < len; k++)
        for (j = 0; j + k < len; j++)
            t->cum[(size_t)B + k + j] += f1[k] * f2[j];
    for (k = 1; k < t->len; k++)
        t->cum[k] += t->cum[k - 1];
    assert_close(t->cum[t->len - 1], 1, 1e-12, 0); /* the table holds the mass */
    free(f1);
    free(f2);
}

#endif /* AFD_MC_TEST_UTIL_H */
