/* test_sampler.c: every sampler against its exact law (GSL's pmfs and cdfs,
 * or a direct enumeration of the definition), the slot-load moments against
 * Lemma 4.1 as computed by libanalytic, and the O(1) negative-binomial sum
 * against the O(B) per-slot sum. */
#include <config.h>

#include <float.h>
#include <stdlib.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_randist.h>

#include "mc_test_util.h"

#include "afd_philox.h"
#include "afd_sampler.h"
#include "mc_internal.h"

#define N_DRAWS (1 << 20)

static double *uniforms(uint64_t seed, uint64_t stream, size_t n)
{
    double *u = malloc(n * sizeof *u);
    assert_non_null(u);
    afd_philox_fill_u01(seed, stream, 0, n, u);
    return u;
}

/* ------------------------------------------------------------ geometric */

static double cdf_geometric(double k, const void *par)
{
    return k < 1 ? 0 : gsl_cdf_geometric_P((unsigned)k, *(const double *)par);
}

static void geometric_fits_pmf(void **state)
{
    static const double ps[] = {0.237, 0.9, 1.0 / 500};
    double *u = uniforms(11, 0, N_DRAWS), *x = malloc(N_DRAWS * sizeof *x), cuts[40];
    size_t i, j;
    (void)state;
    assert_non_null(x);
    for (j = 0; j < sizeof ps / sizeof ps[0]; j++) {
        afd_geometric g;
        int nb;
        assert_int_equal(afd_geometric_init(ps[j], &g), AFD_OK);
        afd_geometric_fill(&g, N_DRAWS, u, x);
        for (i = 0; i < N_DRAWS; i++)
            assert_true(x[i] >= 1 && x[i] == floor(x[i]));
        nb = equiprobable_cuts(cdf_geometric, &ps[j], 0, 40, cuts);
        assert_true(nb >= 3);
        assert_true(chi2_binned(x, N_DRAWS, cdf_geometric, &ps[j], cuts, nb) > CHI2_PMIN);
    }
    free(u);
    free(x);
}

static void geometric_extremes(void **state)
{
    afd_geometric g;
    (void)state;
    assert_int_equal(afd_geometric_init(1, &g), AFD_OK);
    assert_true(afd_geometric_draw(&g, 0x1p-53) == 1);
    assert_true(afd_geometric_draw(&g, 0.5) == 1);
    /* largest u: log u = -2^-53, so G = 1 unless p is tiny */
    assert_int_equal(afd_geometric_init(0.5, &g), AFD_OK);
    assert_true(afd_geometric_draw(&g, 1 - 0x1p-53) == 1);
    /* smallest u with the smallest p: finite and an exact integer */
    assert_int_equal(afd_geometric_init(AFD_GEOMETRIC_MIN_P, &g), AFD_OK);
    {
        double x = afd_geometric_draw(&g, 0x1p-53);
        assert_true(isfinite(x) && x < 0x1p53 && x == floor(x));
        assert_close(x, 53 * log(2) * 0x1p40, 1e-6, 0);
    }
    assert_int_equal(afd_geometric_init(0, &g), AFD_EINVAL);
    assert_true(isnan(g.p));
    assert_int_equal(afd_geometric_init(1.5, &g), AFD_EINVAL);
    assert_int_equal(afd_geometric_init(NAN, &g), AFD_EINVAL);
    assert_int_equal(afd_geometric_init(AFD_GEOMETRIC_MIN_P / 2, &g), AFD_EINVAL);
}

/* ---------------------------------------------------------------- alias */

static void alias_fits_weights(void **state)
{
    static const double w[] = {0.3, 0, 2.385, 1e-3, 7, 1, 1, 0.5};
    enum { K = sizeof w / sizeof w[0] };
    double *u = uniforms(12, 0, 2 * N_DRAWS), total = 0;
    afd_alias *a;
    size_t i;
    int pass;
    (void)state;
    for (i = 0; i < K; i++)
        total += w[i];
    assert_int_equal(afd_alias_alloc(w, K, &a), AFD_OK);
    assert_int_equal(afd_alias_size(a), K);
    for (pass = 0; pass < 2; pass++) {
        long count[K] = {0};
        double chi2 = 0;
        for (i = 0; i < N_DRAWS; i++) {
            size_t j =
                pass == 0 ? afd_alias_draw(a, u[i]) : afd_alias_draw2(a, u[2 * i], u[2 * i + 1]);
            assert_true(j < K);
            count[j]++;
        }
        assert_int_equal(count[1], 0); /* zero weight: never drawn */
        for (i = 0; i < K; i++)
            if (w[i] > 0) {
                double e = w[i] / total * N_DRAWS;
                chi2 += (count[i] - e) * (count[i] - e) / e;
            }
        assert_true(gsl_cdf_chisq_Q(chi2, K - 2) > CHI2_PMIN);
    }
    afd_alias_free(a);
    free(u);
}

/* Many columns: 1000 weights with a 4000:1 range, 2^22 draws. */
static void alias_many_columns(void **state)
{
    enum { K = 1000, N = 1 << 22 };
    double w[K], total = 0, chi2 = 0, *u = uniforms(13, 0, N);
    long *count = calloc(K, sizeof *count);
    size_t *idx = malloc(N * sizeof *idx);
    afd_alias *a;
    size_t i;
    (void)state;
    assert_non_null(count);
    assert_non_null(idx);
    for (i = 0; i < K; i++) {
        w[i] = (double)(i % 17) + 0.25 + (i == 500 ? 1000 : 0);
        total += w[i];
    }
    assert_int_equal(afd_alias_alloc(w, K, &a), AFD_OK);
    afd_alias_fill(a, N, u, idx);
    for (i = 0; i < N; i++)
        count[idx[i]]++;
    for (i = 0; i < K; i++) {
        double e = w[i] / total * N;
        chi2 += (count[i] - e) * (count[i] - e) / e;
    }
    assert_true(gsl_cdf_chisq_Q(chi2, K - 1) > CHI2_PMIN);
    afd_alias_free(a);
    free(u);
    free(count);
    free(idx);
}

static void alias_errors(void **state)
{
    double w[3] = {1, 2, 3};
    afd_alias *a = (afd_alias *)&w;
    (void)state;
    assert_int_equal(afd_alias_alloc(w, 0, &a), AFD_EEMPTY);
    assert_null(a);
    w[1] = -1;
    assert_int_equal(afd_alias_alloc(w, 3, &a), AFD_EINVAL);
    w[1] = NAN;
    assert_int_equal(afd_alias_alloc(w, 3, &a), AFD_EINVAL);
    w[1] = INFINITY;
    assert_int_equal(afd_alias_alloc(w, 3, &a), AFD_EINVAL);
    w[0] = w[1] = w[2] = 0;
    assert_int_equal(afd_alias_alloc(w, 3, &a), AFD_EEMPTY);
    assert_int_equal(afd_alias_alloc(NULL, 3, &a), AFD_EINVAL);
    afd_alias_free(NULL);
}

/* ------------------------------------------------------ slot-load sampler */

/* Y = P + A, P ~ Geometric{1,..}(p1), A ~ Geometric{0,..}(p2) independent:
 * P(Y <= y) = sum_{k=1}^{y} p1 (1-p1)^(k-1) (1 - (1-p2)^(y-k+1)). */
typedef struct {
    double p1, p2;
} geo_pair;

static double cdf_geo_slot(double y, const void *par)
{
    const geo_pair *g = par;
    double s = 0, k;
    for (k = 1; k <= y; k++)
        s += g->p1 * pow(1 - g->p1, k - 1) * (1 - pow(1 - g->p2, y - k + 1));
    return s;
}

/* Mean and variance of y[0..n-1] with standard errors: se(mean) from the
 * known sd, se(var) = sqrt((m4 - var^2) / n) from the sample. */
static void moments(const double *y, size_t n, double *mean, double *var, double *var_se)
{
    long double s = 0, s2 = 0, s4 = 0, m;
    size_t i;
    for (i = 0; i < n; i++)
        s += y[i];
    m = s / n;
    for (i = 0; i < n; i++) {
        long double d = y[i] - m;
        s2 += d * d;
        s4 += d * d * d * d;
    }
    *mean = (double)m;
    *var = (double)(s2 / (n - 1));
    *var_se = (double)sqrtl((s4 / n - (s2 / n) * (s2 / n)) / n);
}

static void slot_geometric_matches_lemma(void **state)
{
    double *u = uniforms(14, 0, 2 * N_DRAWS), *y = malloc(N_DRAWS * sizeof *y);
    double mean, var, var_se, cuts[30];
    afd_workload w;
    afd_slot_sampler *s;
    geo_pair gp = {1 / 3.7, 1 / 12.4};
    int nb;
    (void)state;
    assert_non_null(y);
    /* Small means: the chi-square against the convolution pmf. */
    assert_int_equal(afd_workload_geometric(3.7, 12.4, &w), AFD_OK);
    assert_int_equal(afd_slot_sampler_alloc(&w, &s), AFD_OK);
    afd_slot_sampler_fill(s, N_DRAWS, u, y);
    nb = equiprobable_cuts(cdf_geo_slot, &gp, 0, 30, cuts);
    assert_true(chi2_binned(y, N_DRAWS, cdf_geo_slot, &gp, cuts, nb) > CHI2_PMIN);
    moments(y, N_DRAWS, &mean, &var, &var_se);
    assert_within_se(mean, w.stats.theta, w.stats.nu / sqrt(N_DRAWS), 5);
    assert_within_se(var, w.stats.nu * w.stats.nu, var_se, 5);
    /* fill and sum agree with the scalar draw */
    assert_true(afd_slot_sampler_draw(s, u + 2 * 77) == y[77]);
    {
        double sum = 0;
        size_t i;
        for (i = 0; i < 1000; i++)
            sum += y[i];
        assert_true(afd_slot_sampler_sum(s, 1000, u) == sum);
    }
    afd_slot_sampler_free(s);
    /* The paper's parameters (Table 1): theta = 599, nu^2 = 259400. */
    assert_int_equal(afd_workload_geometric(100, 500, &w), AFD_OK);
    assert_int_equal(afd_slot_sampler_alloc(&w, &s), AFD_OK);
    afd_slot_sampler_fill(s, N_DRAWS, u, y);
    moments(y, N_DRAWS, &mean, &var, &var_se);
    assert_within_se(mean, 599, sqrt(259400.0 / N_DRAWS), 5);
    assert_within_se(var, 259400, var_se, 5);
    afd_slot_sampler_free(s);
    free(u);
    free(y);
}

/* Trace: the exact law of Y enumerated from its definition (every age of
 * every request weighs 1 / sum D), with a strong P-D correlation so that
 * the covariance term of Lemma 4.1 matters. */
static const uint64_t tr_p[] = {5, 0, 1200, 37, 3, 640, 12, 99};
static const uint64_t tr_d[] = {1, 9, 400, 2, 60, 250, 7, 33};
enum { TR_N = sizeof tr_p / sizeof tr_p[0] };

/* The exact pmf of Y for tr_p, tr_d: t->cum[y] = P(Y <= y), the empty
 * prompt read as one token. */
static void trace_law(table_cdf *t)
{
    double sum_d = 0;
    size_t i, len = 0;
    uint64_t a;
    for (i = 0; i < TR_N; i++) {
        sum_d += (double)tr_d[i];
        if (tokens_of(tr_p[i]) + tr_d[i] > len)
            len = tokens_of(tr_p[i]) + tr_d[i];
    }
    t->len = len;
    t->cum = calloc(len, sizeof *t->cum);
    assert_non_null(t->cum);
    for (i = 0; i < TR_N; i++)
        for (a = 0; a < tr_d[i]; a++)
            t->cum[tokens_of(tr_p[i]) + a] += 1 / sum_d;
    for (i = 1; i < len; i++)
        t->cum[i] += t->cum[i - 1];
}

/* Both trace samplers (by value, one uniform; by row, two) against that
 * law, and fill, draw and sum against each other. */
static void slot_trace_matches_definition(void **state)
{
    double *u = uniforms(15, 3, 2 * N_DRAWS), *y = malloc(N_DRAWS * sizeof *y);
    double mean, var, var_se, cuts[40], sum;
    afd_workload w;
    afd_slot_sampler *s;
    table_cdf t;
    size_t i;
    int nb, by_value;
    (void)state;
    assert_non_null(y);
    trace_law(&t);
    make_trace(&w, tr_p, tr_d, TR_N);
    for (by_value = 1; by_value >= 0; by_value--) {
        unsigned k;
        assert_int_equal(afd_priv_slot_sampler_alloc(&w, by_value, &s), AFD_OK);
        k = afd_slot_sampler_uniforms(s);
        assert_int_equal(k, by_value ? 1 : 2);
        afd_slot_sampler_fill(s, N_DRAWS, u, y);
        for (i = 0; i < N_DRAWS; i++)
            assert_true(y[i] >= 0 && y[i] < (double)t.len);
        nb = equiprobable_cuts(cdf_table, &t, 0, 40, cuts);
        assert_true(chi2_binned(y, N_DRAWS, cdf_table, &t, cuts, nb) > CHI2_PMIN);
        moments(y, N_DRAWS, &mean, &var, &var_se);
        assert_within_se(mean, w.stats.theta, w.stats.nu / sqrt(N_DRAWS), 5);
        assert_within_se(var, w.stats.nu * w.stats.nu, var_se, 5);
        assert_true(afd_slot_sampler_draw(s, u + k * 77) == y[77]);
        for (sum = 0, i = 0; i < 1001; i++)
            sum += y[i];
        assert_true(afd_slot_sampler_sum(s, 1001, u) == sum);
        afd_slot_sampler_free(s);
    }
    /* The public constructor picks by value here (1600 loads), and by row
     * for two requests whose loads span 3,000,010 values (> 2^20). */
    assert_int_equal(afd_slot_sampler_alloc(&w, &s), AFD_OK);
    assert_int_equal(afd_slot_sampler_uniforms(s), 1);
    afd_slot_sampler_free(s);
    afd_workload_free(&w);
    {
        static const uint64_t wide_p[] = {0, 3000000}, wide_d[] = {4, 10};
        make_trace(&w, wide_p, wide_d, 2);
        assert_int_equal(afd_slot_sampler_alloc(&w, &s), AFD_OK);
        assert_int_equal(afd_slot_sampler_uniforms(s), 2);
        afd_slot_sampler_free(s);
        afd_workload_free(&w);
    }
    free(t.cum);
    free(u);
    free(y);
}

/* The by-value table, read deterministically: on the grid u = (i + 1/2)/M
 * with M = 4096 per column, each column's coin threshold is off by at most
 * 1/M of the mass, which moves at most 2/M in total variation per column
 * (counting both sides), so TV(grid frequencies, exact law) <= 2 len / M. */
static void slot_trace_by_value_is_exact(void **state)
{
    enum { PER_COL = 4096 };
    afd_workload w;
    afd_slot_sampler *s;
    table_cdf t;
    double *count, tv = 0, prev = 0;
    size_t i, m;
    (void)state;
    trace_law(&t);
    make_trace(&w, tr_p, tr_d, TR_N);
    assert_int_equal(afd_slot_sampler_alloc(&w, &s), AFD_OK);
    assert_int_equal(afd_slot_sampler_uniforms(s), 1);
    count = calloc(t.len, sizeof *count);
    assert_non_null(count);
    /* the loads span 1 .. len-1 here (a row has P = 0, read as 1), so len - 1
     * columns of at least PER_COL grid points each */
    m = t.len * PER_COL;
    for (i = 0; i < m; i++) {
        double u = ((double)i + 0.5) / (double)m, y = afd_slot_sampler_draw(s, &u);
        assert_true(y >= 0 && y < (double)t.len && y == floor(y));
        count[(size_t)y] += 1;
    }
    for (i = 0; i < t.len; i++) {
        tv += fabs(count[i] / (double)m - (t.cum[i] - prev));
        prev = t.cum[i];
    }
    assert_true(tv <= 2.0 * (double)t.len / (double)m);
    afd_slot_sampler_free(s);
    afd_workload_free(&w);
    free(count);
    free(t.cum);
}

/* A trace kept as distinct pairs with counts tr_c: the rows it stands for
 * are the pairs repeated count times (in an order of their own, to show
 * that the order of the rows does not matter).  By value the table is the
 * same, so every draw is the same; by row the columns differ, and the draws
 * are tested against the law of Y enumerated from the expanded rows. */
static const uint64_t tr_c[] = {3, 1, 2, 1, 5, 1, 1, 4};

static void slot_trace_pairs_same_law_as_rows(void **state)
{
    uint64_t rp[64], rd[64], a;
    double *u = uniforms(16, 5, 2 * N_DRAWS), *y = malloc(N_DRAWS * sizeof *y),
           *z = malloc(N_DRAWS * sizeof *z), cuts[40], sum_d = 0;
    afd_workload rows, pairs;
    afd_slot_sampler *s;
    table_cdf t;
    size_t i, n = 0, k;
    int nb;
    (void)state;
    assert_non_null(y);
    assert_non_null(z);
    for (k = 0; k < 5; k++) /* round k holds the pairs with count > k */
        for (i = TR_N; i-- > 0;)
            if (tr_c[i] > k) {
                rp[n] = tr_p[i];
                rd[n++] = tr_d[i];
            }
    make_trace(&rows, rp, rd, n);
    make_pairs(&pairs, tr_p, tr_d, tr_c, TR_N);
    assert_int_equal(n, 18);
    assert_true(rows.stats.theta == pairs.stats.theta);
    /* by value: the same table, the same draws */
    assert_int_equal(afd_priv_slot_sampler_alloc(&rows, 1, &s), AFD_OK);
    afd_slot_sampler_fill(s, N_DRAWS, u, y);
    afd_slot_sampler_free(s);
    assert_int_equal(afd_priv_slot_sampler_alloc(&pairs, 1, &s), AFD_OK);
    assert_int_equal(afd_slot_sampler_uniforms(s), 1);
    afd_slot_sampler_fill(s, N_DRAWS, u, z);
    afd_slot_sampler_free(s);
    assert_memory_equal(y, z, N_DRAWS * sizeof *y);
    /* by row: the law of Y over the 18 rows, every age weighing 1 / sum D */
    t.len = 1600;
    t.cum = calloc(t.len, sizeof *t.cum);
    assert_non_null(t.cum);
    for (i = 0; i < n; i++)
        sum_d += (double)rd[i];
    for (i = 0; i < n; i++)
        for (a = 0; a < rd[i]; a++)
            t.cum[rp[i] + a] += 1 / sum_d;
    for (i = 1; i < t.len; i++)
        t.cum[i] += t.cum[i - 1];
    assert_int_equal(afd_priv_slot_sampler_alloc(&pairs, 0, &s), AFD_OK);
    assert_int_equal(afd_slot_sampler_uniforms(s), 2);
    afd_slot_sampler_fill(s, N_DRAWS, u, z);
    afd_slot_sampler_free(s);
    nb = equiprobable_cuts(cdf_table, &t, 0, 40, cuts);
    assert_true(chi2_binned(z, N_DRAWS, cdf_table, &t, cuts, nb) > CHI2_PMIN);
    afd_workload_free(&rows);
    afd_workload_free(&pairs);
    free(t.cum);
    free(u);
    free(y);
    free(z);
}

static void slot_sampler_errors(void **state)
{
    afd_workload w;
    afd_slot_sampler *s;
    (void)state;
    assert_int_equal(afd_workload_given(600, 500, &w), AFD_OK);
    assert_int_equal(afd_slot_sampler_alloc(&w, &s), AFD_EINVAL);
    assert_null(s);
    assert_int_equal(afd_slot_sampler_alloc(NULL, &s), AFD_EINVAL);
    make_trace(&w, tr_p, tr_d, TR_N);
    w.n_kept = 0;
    assert_int_equal(afd_slot_sampler_alloc(&w, &s), AFD_EEMPTY);
    w.n_kept = TR_N;
    w.decode[3] = 0;
    assert_int_equal(afd_slot_sampler_alloc(&w, &s), AFD_EINVAL);
    w.decode[3] = 1;
    w.prompt[2] = UINT64_C(1) << 53;
    assert_int_equal(afd_slot_sampler_alloc(&w, &s), AFD_EINVAL);
    afd_workload_free(&w);
    assert_int_equal(afd_workload_geometric(100, 500, &w), AFD_OK);
    w.mu_d = 0x1p41;
    assert_int_equal(afd_slot_sampler_alloc(&w, &s), AFD_EINVAL);
    w.mu_d = 0.5;
    assert_int_equal(afd_slot_sampler_alloc(&w, &s), AFD_EINVAL);
    afd_slot_sampler_free(NULL);
}

/* -------------------------------------------------- rejection samplers */

typedef struct {
    double a, b;
} two_par;

static double cdf_gamma(double x, const void *par)
{
    const two_par *g = par;
    return gsl_cdf_gamma_P(x, g->a, g->b);
}

static void gamma_fits_cdf(void **state)
{
    static const two_par cases[] = {{0.37, 2.0}, {2.385, 1.0}, {256, 499.0}};
    enum { N = 1 << 19, NB = 40 };
    double *x = malloc(N * sizeof *x), cuts[NB];
    size_t c, i;
    (void)state;
    assert_non_null(x);
    for (c = 0; c < 3; c++) {
        afd_philox_cursor cur;
        afd_philox_cursor_init(&cur, 16, c, 0);
        for (i = 0; i < N; i++)
            x[i] = afd_gamma_draw(&cur, cases[c].a, cases[c].b);
        for (i = 0; i + 1 < NB; i++)
            cuts[i] = gsl_cdf_gamma_Pinv((i + 1.0) / NB, cases[c].a, cases[c].b);
        assert_true(chi2_binned(x, N, cdf_gamma, &cases[c], cuts, NB) > CHI2_PMIN);
    }
    free(x);
}

static double cdf_poisson(double k, const void *par)
{
    return k < 0 ? 0 : gsl_cdf_poisson_P((unsigned)k, *(const double *)par);
}

static void poisson_fits_pmf(void **state)
{
    /* inversion (< 10), PTRS near its threshold, PTRS at the Table 1 scale */
    static const double means[] = {0.07, 3.3, 10, 27.5, 127744.6};
    enum { N = 1 << 19 };
    double *x = malloc(N * sizeof *x), cuts[40];
    size_t c, i;
    (void)state;
    assert_non_null(x);
    for (c = 0; c < sizeof means / sizeof means[0]; c++) {
        afd_philox_cursor cur;
        int nb;
        afd_philox_cursor_init(&cur, 17, c, 0);
        for (i = 0; i < N; i++) {
            x[i] = afd_poisson_draw(&cur, means[c]);
            assert_true(x[i] >= 0 && x[i] == floor(x[i]));
        }
        nb = equiprobable_cuts(cdf_poisson, &means[c], 0, 40, cuts);
        assert_true(nb >= 2);
        assert_true(chi2_binned(x, N, cdf_poisson, &means[c], cuts, nb) > CHI2_PMIN);
    }
    free(x);
}

static double cdf_negbin(double k, const void *par)
{
    const two_par *g = par; /* a = n, b = p */
    return k < 0 ? 0 : gsl_cdf_negative_binomial_P((unsigned)k, g->b, g->a);
}

static void negbin_fits_pmf(void **state)
{
    static const two_par cases[] = {{3, 0.31}, {0.5, 0.8}, {256, 1.0 / 500}};
    enum { N = 1 << 19 };
    double *x = malloc(N * sizeof *x), cuts[40];
    size_t c, i;
    (void)state;
    assert_non_null(x);
    for (c = 0; c < 3; c++) {
        afd_philox_cursor cur;
        int nb;
        afd_philox_cursor_init(&cur, 18, c, 0);
        for (i = 0; i < N; i++)
            x[i] = afd_negbin_draw(&cur, cases[c].a, cases[c].b);
        nb = equiprobable_cuts(cdf_negbin, &cases[c], 0, 40, cuts);
        assert_true(chi2_binned(x, N, cdf_negbin, &cases[c], cuts, nb) > CHI2_PMIN);
    }
    free(x);
}

static void rejection_domain(void **state)
{
    afd_philox_cursor cur;
    (void)state;
    afd_philox_cursor_init(&cur, 1, 1, 0);
    assert_true(isnan(afd_gamma_draw(&cur, 0, 1)));
    assert_true(isnan(afd_gamma_draw(&cur, 1, -1)));
    assert_true(isnan(afd_gamma_draw(&cur, INFINITY, 1)));
    assert_true(afd_gamma_draw(&cur, 2, 0) == 0);
    assert_true(isnan(afd_poisson_draw(&cur, -1)));
    assert_true(isnan(afd_poisson_draw(&cur, NAN)));
    assert_true(isnan(afd_poisson_draw(&cur, 0x1p51)));
    assert_true(afd_poisson_draw(&cur, 0) == 0);
    assert_true(isnan(afd_negbin_draw(&cur, 0, 0.5)));
    assert_true(isnan(afd_negbin_draw(&cur, 3, 0)));
    assert_true(isnan(afd_negbin_draw(&cur, 3, 1.5)));
    assert_true(afd_negbin_draw(&cur, 3, 1) == 0);
    assert_true(isnan(afd_slot_sum_geometric(&cur, 100, 500, 0)));
    assert_true(isnan(afd_slot_sum_geometric(&cur, 0.5, 500, 4)));
    assert_true(isnan(afd_slot_sum_geometric(&cur, 100, 0x1p41, 4)));
    /* one cap for every module: the largest mean is accepted, twice it is not */
    assert_true(afd_slot_sum_geometric(&cur, 100, AFD_GEOMETRIC_MAX_MEAN, 4) >= 4);
    assert_true(isnan(afd_slot_sum_geometric(&cur, 100, 2 * AFD_GEOMETRIC_MAX_MEAN, 4)));
    assert_true(afd_slot_sum_geometric(&cur, 1, 1, 7) == 7); /* P = D = 1: Y = 1 */
}

/* ------------------------------------- O(1) sum against the per-slot sum */

static void negbin_sum_equals_per_slot_sum(void **state)
{
    enum { B = 16, N = 1 << 17, NB = 40 };
    const double mu_p = 3.7, mu_d = 12.4;
    double *fast = malloc(N * sizeof *fast), *slow = malloc(N * sizeof *slow), cuts[NB];
    double *u = malloc(2 * B * sizeof *u);
    afd_workload w;
    afd_slot_sampler *s;
    table_cdf t;
    size_t i;
    int nb;
    (void)state;
    assert_non_null(fast);
    assert_non_null(slow);
    assert_non_null(u);
    assert_int_equal(afd_workload_geometric(mu_p, mu_d, &w), AFD_OK);
    assert_int_equal(afd_slot_sampler_alloc(&w, &s), AFD_OK);
    for (i = 0; i < N; i++) {
        afd_philox_cursor cur;
        afd_philox_cursor_init(&cur, 19, i, 0);
        fast[i] = afd_slot_sum_geometric(&cur, mu_p, mu_d, B);
        afd_philox_fill_u01(20, i, 0, 2 * B, u);
        slow[i] = afd_slot_sampler_sum(s, B, u);
    }
    /* two-sample chi-square over 40 pooled-quantile bins */
    assert_true(chi2_two_sample(fast, N, slow, N, NB) > CHI2_PMIN);
    /* and each path against the exact law */
    sum_law(B, 1 / mu_p, 1 / mu_d, &t);
    nb = equiprobable_cuts(cdf_table, &t, 0, NB, cuts);
    assert_true(chi2_binned(fast, N, cdf_table, &t, cuts, nb) > CHI2_PMIN);
    assert_true(chi2_binned(slow, N, cdf_table, &t, cuts, nb) > CHI2_PMIN);
    afd_slot_sampler_free(s);
    free(t.cum);
    free(fast);
    free(slow);
    free(u);
}

/* The two-sample test has power: a per-slot sum over B + 1 slots (a shift
 * of one slot load, about 0.3 standard deviations) is rejected. */
static void two_sample_test_detects_one_slot(void **state)
{
    enum { B = 16, N = 1 << 17 };
    double *fast = malloc(N * sizeof *fast), *slow = malloc(N * sizeof *slow);
    double *u = malloc(2 * (B + 1) * sizeof *u);
    afd_workload w;
    afd_slot_sampler *s;
    size_t i;
    (void)state;
    assert_non_null(fast);
    assert_non_null(slow);
    assert_non_null(u);
    assert_int_equal(afd_workload_geometric(3.7, 12.4, &w), AFD_OK);
    assert_int_equal(afd_slot_sampler_alloc(&w, &s), AFD_OK);
    for (i = 0; i < N; i++) {
        afd_philox_cursor cur;
        afd_philox_cursor_init(&cur, 19, i, 0);
        fast[i] = afd_slot_sum_geometric(&cur, 3.7, 12.4, B);
        afd_philox_fill_u01(20, i, 0, 2 * (B + 1), u);
        slow[i] = afd_slot_sampler_sum(s, B + 1, u);
    }
    assert_true(chi2_two_sample(fast, N, slow, N, 40) < CHI2_PMIN);
    afd_slot_sampler_free(s);
    free(fast);
    free(slow);
    free(u);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(geometric_fits_pmf),
        cmocka_unit_test(geometric_extremes),
        cmocka_unit_test(alias_fits_weights),
        cmocka_unit_test(alias_many_columns),
        cmocka_unit_test(alias_errors),
        cmocka_unit_test(slot_geometric_matches_lemma),
        cmocka_unit_test(slot_trace_matches_definition),
        cmocka_unit_test(slot_trace_by_value_is_exact),
        cmocka_unit_test(slot_trace_pairs_same_law_as_rows),
        cmocka_unit_test(slot_sampler_errors),
        cmocka_unit_test(gamma_fits_cdf),
        cmocka_unit_test(poisson_fits_pmf),
        cmocka_unit_test(negbin_fits_pmf),
        cmocka_unit_test(rejection_domain),
        cmocka_unit_test(negbin_sum_equals_per_slot_sum),
        cmocka_unit_test(two_sample_test_detects_one_slot),
    };
    gsl_set_error_handler_off();
    RUN_TESTS(tests);
}
