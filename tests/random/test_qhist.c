/* test_qhist.c: the log-bucketed quantile histogram against sorting (the
 * k = ceil(q n)-th smallest, found by qsort here), within its stated bound
 * |answer - x_(k)| <= 2^-10 x_(k), on several laws and the edge cases
 * (zeros, +inf, one value, the ends of the double range, rejected values);
 * the order statistic by selection against sorting; the batch-means
 * standard error against hand-worked values. */
#include <config.h>

#include <float.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>

#include "test_util.h"

#include "afd_philox.h"
#include "mc_internal.h"

#define N     100003 /* not a power of two */
#define BOUND 0x1p-10

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The k = ceil(q n)-th smallest of sorted s[0..n), k clamped to 1..n. */
static double order_stat(const double *s, size_t n, double q)
{
    double r = ceil(q * (double)n);
    size_t k = r < 1 ? 1 : r > (double)n ? n : (size_t)r;
    return s[k - 1];
}

static const double qs[] = {0, 1e-6, 0.01, 0.25, 0.5, 0.9, 0.99, 0.999, 0.99999, 1};

/* Every quantile of qs from a histogram of x[0..n) within the bound of the
 * sorted values', and the selection's equal to them. */
static void check_against_sorting(double *x, size_t n)
{
    afd_priv_qhist h;
    double *s = malloc(n * sizeof *s), *w = malloc(n * sizeof *w);
    size_t i, j;
    assert_non_null(s);
    assert_non_null(w);
    afd_priv_qhist_init(&h);
    for (i = 0; i < n; i++)
        assert_int_equal(afd_priv_qhist_add(&h, x[i]), AFD_OK);
    memcpy(s, x, n * sizeof *s);
    qsort(s, n, sizeof *s, by_value);
    for (j = 0; j < sizeof qs / sizeof qs[0]; j++) {
        double exact = order_stat(s, n, qs[j]), got = afd_priv_qhist_quantile(&h, qs[j]);
        if (exact == 0 || isinf(exact))
            assert_true(got == exact);
        else
            assert_close(got, exact, BOUND, 0);
        memcpy(w, x, n * sizeof *w);
        assert_true(afd_priv_quantile(w, n, qs[j]) == exact);
    }
    afd_priv_qhist_free(&h);
    free(s);
    free(w);
}

static double *draws(uint64_t stream, size_t n)
{
    double *u = malloc(n * sizeof *u);
    assert_non_null(u);
    afd_philox_fill_u01(2385, stream, 0, n, u);
    return u;
}

static void matches_sorting_on_several_laws(void **state)
{
    double *u = draws(1, 2 * N), *x = malloc(N * sizeof *x);
    size_t i;
    (void)state;
    assert_non_null(x);
    /* exponential, mean 0.37 */
    for (i = 0; i < N; i++)
        x[i] = -0.37 * log(u[i]);
    check_against_sorting(x, N);
    /* lognormal with sigma 2.5 (Box-Muller): some 30 octaves */
    for (i = 0; i < N; i++)
        x[i] = exp(2.5 * sqrt(-2 * log(u[i])) * cos(6.283185307179586 * u[N + i]));
    check_against_sorting(x, N);
    /* Pareto with tail index 1.1 from 1e-3: a heavy tail over many octaves */
    for (i = 0; i < N; i++)
        x[i] = 1e-3 * pow(u[i], -1 / 1.1);
    check_against_sorting(x, N);
    /* uniform on [1, 1.001): every value in one or two buckets */
    for (i = 0; i < N; i++)
        x[i] = 1 + 0.001 * u[i];
    check_against_sorting(x, N);
    /* atoms (a fixed-size service time) with zeros and a continuous part */
    for (i = 0; i < N; i++)
        x[i] = u[i] < 0.2 ? 0 : u[i] < 0.7 ? 12.345 : u[i] < 0.75 ? 12.347 : 12 * u[N + i];
    check_against_sorting(x, N);
    /* a few infinities on top of an exponential */
    for (i = 0; i < N; i++)
        x[i] = u[i] < 0.005 ? INFINITY : -log(u[N + i]);
    check_against_sorting(x, N);
    free(u);
    free(x);
}

/* Values piled at a bucket's lower edge: the interpolated median lies half
 * a bucket above them, within the bound. */
static void bound_within_one_bucket(void **state)
{
    double x[1000];
    size_t i;
    (void)state;
    for (i = 0; i < 999; i++)
        x[i] = 1; /* the lower edge of bucket [1, 1 + 2^-10) */
    x[999] = 1 + 0x1p-11;
    check_against_sorting(x, 1000);
}

static void edge_cases(void **state)
{
    afd_priv_qhist h;
    size_t i;
    (void)state;
    afd_priv_qhist_init(&h);
    assert_true(isnan(afd_priv_qhist_quantile(&h, 0.5))); /* empty */
    assert_int_equal(afd_priv_qhist_add(&h, -1e-300), AFD_EINVAL);
    assert_int_equal(afd_priv_qhist_add(&h, NAN), AFD_EINVAL);
    assert_int_equal(afd_priv_qhist_add(&h, -INFINITY), AFD_EINVAL);
    assert_true(h.n == 0 && isnan(afd_priv_qhist_quantile(&h, 0.5)));
    /* one value, and the same value many times: exact */
    assert_int_equal(afd_priv_qhist_add(&h, 2.385), AFD_OK);
    assert_true(afd_priv_qhist_quantile(&h, 0) == 2.385);
    assert_true(afd_priv_qhist_quantile(&h, 1) == 2.385);
    for (i = 0; i < 5000; i++)
        assert_int_equal(afd_priv_qhist_add(&h, 2.385), AFD_OK);
    assert_true(afd_priv_qhist_quantile(&h, 0.37) == 2.385);
    assert_true(isnan(afd_priv_qhist_quantile(&h, -0.1)));
    assert_true(isnan(afd_priv_qhist_quantile(&h, 1.5)));
    assert_true(isnan(afd_priv_qhist_quantile(&h, NAN)));
    /* reset empties it and keeps its memory */
    {
        size_t bytes = afd_priv_qhist_bytes(&h);
        afd_priv_qhist_reset(&h);
        assert_true(h.n == 0 && isnan(afd_priv_qhist_quantile(&h, 0.5)));
        assert_true(afd_priv_qhist_bytes(&h) == bytes && bytes > 0);
    }
    /* zeros (-0 among them) and infinities only */
    assert_int_equal(afd_priv_qhist_add(&h, 0.0), AFD_OK);
    assert_int_equal(afd_priv_qhist_add(&h, -0.0), AFD_OK);
    assert_int_equal(afd_priv_qhist_add(&h, INFINITY), AFD_OK);
    assert_true(afd_priv_qhist_quantile(&h, 0.5) == 0);     /* k = 2 of 3 */
    assert_true(afd_priv_qhist_quantile(&h, 0.67) == INFINITY); /* k = 3 */
    afd_priv_qhist_free(&h);
    /* the ends of the double range: the smallest normal and the largest
     * finite value held at once, in buckets of 2047 octaves at most */
    afd_priv_qhist_init(&h);
    assert_int_equal(afd_priv_qhist_add(&h, DBL_MAX), AFD_OK);
    assert_int_equal(afd_priv_qhist_add(&h, DBL_MIN), AFD_OK);
    assert_int_equal(afd_priv_qhist_add(&h, 1.0), AFD_OK);
    assert_true(afd_priv_qhist_quantile(&h, 0) == DBL_MIN);
    assert_true(afd_priv_qhist_quantile(&h, 1) == DBL_MAX);
    assert_close(afd_priv_qhist_quantile(&h, 0.5), 1.0, BOUND, 0);
    assert_true(afd_priv_qhist_bytes(&h) <= (size_t)2047 * 4096);
    /* a subnormal: within 2^-1032 */
    afd_priv_qhist_reset(&h);
    assert_int_equal(afd_priv_qhist_add(&h, 5e-324), AFD_OK);
    assert_int_equal(afd_priv_qhist_add(&h, 3e-310), AFD_OK);
    assert_close(afd_priv_qhist_quantile(&h, 1), 3e-310, 0, 0x1p-1032);
    afd_priv_qhist_free(&h);
}

/* Memory follows the octaves spanned, not the count: 10^6 values over
 * [1e-3, 1e3) (20 octaves) in at most 20 + 3 octaves of 4 KiB. */
static void memory_follows_the_range(void **state)
{
    afd_priv_qhist h;
    double *u = draws(2, 1000000);
    size_t i;
    (void)state;
    afd_priv_qhist_init(&h);
    for (i = 0; i < 1000000; i++)
        assert_int_equal(afd_priv_qhist_add(&h, 1e-3 * pow(1e6, u[i])), AFD_OK);
    assert_true(afd_priv_qhist_bytes(&h) <= 23 * 4096);
    assert_true(h.n == 1000000);
    afd_priv_qhist_free(&h);
    free(u);
}

/* Hand-worked: equal weights, x = 1, 2, 3, 4: mean 2.5, sample variance
 * 5/3, se = sqrt(5/3 / 4).  Sizes 1 and 3 with means 1 and 3: the ratio
 * estimate (1 + 9) / 4 = 2.5; nbar = 2, weights 1/2 and 3/2, se^2 =
 * ((1/2 (1 - 2.5))^2 + (3/2 (3 - 2.5))^2) / (2 x 1) = 0.5625. */
static void batch_mean_se_by_hand(void **state)
{
    static const double x[] = {1, 2, 3, 4}, xw[] = {1, NAN, 3, 7}, nw[] = {1, 5, 3, 0};
    double m, se;
    (void)state;
    afd_priv_batch_mean_se(x, NULL, 4, &m, &se);
    assert_close(m, 2.5, 4 * DBL_EPSILON, 0);
    assert_close(se, sqrt(5.0 / 3 / 4), 4 * DBL_EPSILON, 0);
    afd_priv_batch_mean_se(xw, nw, 4, &m, &se); /* NaN and empty batches left out */
    assert_close(m, 2.5, 4 * DBL_EPSILON, 0);
    assert_close(se, 0.75, 4 * DBL_EPSILON, 0);
    afd_priv_batch_mean_se(xw, nw, 2, &m, &se); /* one batch: its value, no se */
    assert_true(m == 1 && isnan(se));
    afd_priv_batch_mean_se(xw + 1, nw + 1, 1, &m, &se); /* none */
    assert_true(isnan(m) && isnan(se));
    assert_true(isnan(afd_priv_quantile(NULL, 0, 0.5)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(matches_sorting_on_several_laws),
        cmocka_unit_test(bound_within_one_bucket),
        cmocka_unit_test(edge_cases),
        cmocka_unit_test(memory_follows_the_range),
        cmocka_unit_test(batch_mean_se_by_hand),
    };
    gsl_set_error_handler_off();
    RUN_TESTS(tests);
}
