/* test_renewal.c: Lemma 4.1 statistics against independent derivations. */
#include <config.h>

#include <float.h>
#include <stdlib.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "test_util.h"

#include "afd_renewal.h"

/* Brute force: walk every decode step of every request and average the load
 * and its square, exactly the definition of Y observed at a random step. */
static void brute_force(const uint64_t *p, const uint64_t *d, size_t n, long double *theta,
                        long double *ey2)
{
    long double s1 = 0, s2 = 0, steps = 0;
    size_t i;
    uint64_t a;
    for (i = 0; i < n; i++)
        for (a = 0; a < d[i]; a++) {
            long double y = (long double)(p[i] + a);
            s1 += y;
            s2 += y * y;
            steps += 1;
        }
    *theta = s1 / steps;
    *ey2 = s2 / steps;
}

static void matches_brute_force(void **state)
{
    static const uint64_t p[] = {0, 7, 1200, 3, 4808, 55, 0, 99};
    static const uint64_t d[] = {1, 44, 3, 700, 10, 1, 2, 1999};
    afd_renewal_acc *acc = afd_renewal_acc_alloc();
    afd_renewal_stats s;
    long double theta, ey2;
    size_t i, n = sizeof p / sizeof p[0];
    (void)state;
    for (i = 0; i < n; i++)
        assert_int_equal(afd_renewal_acc_add(acc, p[i], d[i]), AFD_OK);
    assert_int_equal(afd_renewal_acc_stats(acc, &s), AFD_OK);
    brute_force(p, d, n, &theta, &ey2);
    assert_true(s.n == n);
    assert_close(s.theta, (double)theta, 4 * DBL_EPSILON, 0);
    assert_close(s.ey2, (double)ey2, 4 * DBL_EPSILON, 0);
    assert_close(s.nu, (double)sqrtl(ey2 - theta * theta), 1e-13, 0);
    assert_close(s.mean_p, (0 + 7 + 1200 + 3 + 4808 + 55 + 0 + 99) / 8.0, 1e-15, 0);
    assert_close(s.mean_d, (1 + 44 + 3 + 700 + 10 + 1 + 2 + 1999) / 8.0, 1e-15, 0);
    afd_renewal_acc_free(acc);
}

static void geometric_closed_form(void **state)
{
    afd_renewal_stats s;
    (void)state;
    /* By hand: theta = 100 + 500 - 1 = 599; nu^2 = 100*99 + 500*499 = 259400. */
    assert_int_equal(afd_renewal_geometric(100, 500, &s), AFD_OK);
    assert_close(s.theta, 599, 0, 0);
    assert_close(s.nu, sqrt(259400.0), 1e-15, 0);
    assert_close(s.ey2, 259400.0 + 599.0 * 599.0, 1e-15, 0);
    assert_close(s.theta_se, 0, 0, 0);
    assert_true(s.n == 0);
    /* mu = 1 means P = D = 1 always: Y = 1, nu = 0 */
    assert_int_equal(afd_renewal_geometric(1, 1, &s), AFD_OK);
    assert_close(s.theta, 1, 0, 0);
    assert_close(s.nu, 0, 0, 0);
    assert_int_equal(afd_renewal_geometric(0.5, 500, &s), AFD_EINVAL);
    assert_true(isnan(s.theta));
    assert_int_equal(afd_renewal_geometric(100, NAN, &s), AFD_EINVAL);
    assert_int_equal(afd_renewal_geometric(100, INFINITY, &s), AFD_EINVAL);
    /* E[Y^2] = nu^2 + theta^2 about 2 mu_p^2 for a huge mu_p: 2e310 overflows,
     * while mu_p = mu_d = 5e153 gives about 6 (5e153)^2 = 1.5e308 < DBL_MAX */
    assert_int_equal(afd_renewal_geometric(1e155, 10, &s), AFD_ERANGE);
    assert_true(isnan(s.theta) && isnan(s.nu) && isnan(s.ey2));
    assert_int_equal(afd_renewal_geometric(5e153, 5e153, &s), AFD_OK);
    assert_close(s.ey2, 1.5e308, 1e-12, 0);
    assert_int_equal(afd_renewal_given(1e200, 1, &s), AFD_ERANGE);
    assert_true(isnan(s.theta));
    assert_int_equal(afd_renewal_given(1e150, 1e150, &s), AFD_OK);
}

/* Eq. (4) with the moments of the geometric law must reproduce Corollary 4.5:
 * two different formulas for the same quantity. */
static void independent_matches_geometric(void **state)
{
    static const double mus[][2] = {{100, 500}, {2.385, 17.5}, {1, 1}, {4096, 3}};
    size_t k;
    (void)state;
    for (k = 0; k < sizeof mus / sizeof mus[0]; k++) {
        double mp = mus[k][0], md = mus[k][1];
        /* Geometric on {1,2,...} with mean m: Var = m(m-1), E[D^2] = 2m^2 - m,
         * E[D^3] = 6m^3 - 6m^2 + m. */
        afd_length_moments m = {mp, mp * (mp - 1), md, 2 * md * md - md,
                                6 * md * md * md - 6 * md * md + md};
        afd_renewal_stats a, b;
        assert_int_equal(afd_renewal_independent(&m, &a), AFD_OK);
        assert_int_equal(afd_renewal_geometric(mp, md, &b), AFD_OK);
        assert_close(a.theta, b.theta, 1e-14, 1e-14);
        assert_close(a.nu, b.nu, 1e-12, 1e-12);
    }
}

static void independent_deterministic(void **state)
{
    /* P = p, D = d fixed: Y is uniform on p..p+d-1, so theta = p + (d-1)/2
     * and nu^2 = (d^2 - 1)/12 (discrete uniform). */
    afd_length_moments m = {37, 0, 11, 121, 1331};
    afd_renewal_stats s;
    (void)state;
    assert_int_equal(afd_renewal_independent(&m, &s), AFD_OK);
    assert_close(s.theta, 37 + 5, 1e-15, 0);
    assert_close(s.nu, sqrt((121.0 - 1) / 12), 1e-13, 0);
    m.mean_d = 0.5;
    assert_int_equal(afd_renewal_independent(&m, &s), AFD_EINVAL);
    m.mean_d = 11;
    m.m2_d = 100; /* < E[D]^2 */
    assert_int_equal(afd_renewal_independent(&m, &s), AFD_EINVAL);
}

/* A trace drawn from the geometric model agrees with the closed form within
 * its own standard errors. */
static void synthetic_geometric_trace(void **state)
{
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    afd_renewal_acc *acc = afd_renewal_acc_alloc();
    afd_renewal_stats s, exact;
    long i;
    (void)state;
    gsl_rng_set(rng, 20231116);
    for (i = 0; i < 400000; i++) {
        uint64_t p = gsl_ran_geometric(rng, 1.0 / 100);
        uint64_t d = gsl_ran_geometric(rng, 1.0 / 500);
        assert_int_equal(afd_renewal_acc_add(acc, p, d), AFD_OK);
    }
    assert_int_equal(afd_renewal_acc_stats(acc, &s), AFD_OK);
    assert_int_equal(afd_renewal_geometric(100, 500, &exact), AFD_OK);
    assert_within_se(s.theta, exact.theta, s.theta_se, 5);
    assert_within_se(s.nu, exact.nu, s.nu_se, 5);
    afd_renewal_acc_free(acc);
    gsl_rng_free(rng);
}

/* Spread of theta_hat and nu_hat over independent traces against the mean
 * reported standard error. */
static void calibration(int model, int n, int reps, double *se_t, double *sd_t, double *se_n,
                        double *sd_n)
{
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    afd_renewal_acc *acc = afd_renewal_acc_alloc();
    double st = 0, st2 = 0, sn = 0, sn2 = 0;
    int rep, i;
    gsl_rng_set(rng, 7);
    *se_t = *se_n = 0;
    for (rep = 0; rep < reps; rep++) {
        afd_renewal_stats s;
        afd_renewal_acc_reset(acc);
        for (i = 0; i < n; i++) {
            uint64_t p, d;
            if (model == 0) {
                /* capped lengths, long prompts make long answers */
                p = 1 + gsl_rng_uniform_int(rng, 200);
                d = 1 + gsl_rng_uniform_int(rng, 100 + p);
            } else {
                /* unbounded geometric lengths, dependent */
                p = gsl_ran_geometric(rng, 1.0 / 50);
                d = gsl_ran_geometric(rng, 1.0 / (20 + 0.5 * (double)p));
            }
            assert_int_equal(afd_renewal_acc_add(acc, p, d), AFD_OK);
        }
        assert_int_equal(afd_renewal_acc_stats(acc, &s), AFD_OK);
        st += s.theta;
        st2 += s.theta * s.theta;
        sn += s.nu;
        sn2 += s.nu * s.nu;
        *se_t += s.theta_se / reps;
        *se_n += s.nu_se / reps;
    }
    *sd_t = sqrt((st2 - st * st / reps) / (reps - 1));
    *sd_n = sqrt((sn2 - sn * sn / reps) / (reps - 1));
    afd_renewal_acc_free(acc);
    gsl_rng_free(rng);
}

/* The delta-method standard errors are right: over many independent traces
 * the spread of the estimates matches the reported standard error.  The sd
 * of an sd estimated from 300 replicates is about 4%; the tolerance of 12%
 * covers that and the O(1/n) bias of the delta method.  For unbounded
 * geometric lengths the nu error involves E[D^6]-like moments and the
 * reported SE is optimistic for short traces (measured: 24% low at n = 3000,
 * 4% at n = 30000), so that case runs at n = 30000. */
static void standard_errors_are_calibrated(void **state)
{
    double se_t, sd_t, se_n, sd_n;
    (void)state;
    calibration(0, 3000, 300, &se_t, &sd_t, &se_n, &sd_n);
    assert_close(se_t, sd_t, 0.12, 0);
    assert_close(se_n, sd_n, 0.12, 0);
    calibration(1, 30000, 300, &se_t, &sd_t, &se_n, &sd_n);
    assert_close(se_t, sd_t, 0.12, 0);
    assert_close(se_n, sd_n, 0.12, 0);
}

/* 10^7 requests with P up to 10^6 and D up to 10^5: the estimator must be
 * exact to rounding.  Two request types in equal numbers give closed forms
 * independent of n, derived by hand:
 *   type 1: P = 10^6, D = 10^5;  type 2: P = 0, D = 1 (load 0).
 *   theta = (D1 P1 + D1(D1-1)/2) / (D1 + 1)
 *   E[Y^2] = (D1 P1^2 + P1 D1(D1-1) + D1(D1-1)(2 D1-1)/6) / (D1 + 1). */
static void ten_million_rows_exact(void **state)
{
    const long double P1 = 1e6L, D1 = 1e5L;
    afd_renewal_acc *acc = afd_renewal_acc_alloc();
    afd_renewal_stats s;
    long double theta, ey2;
    long i;
    (void)state;
    for (i = 0; i < 5000000; i++) {
        assert_true(afd_renewal_acc_add(acc, 1000000, 100000) == AFD_OK);
        assert_true(afd_renewal_acc_add(acc, 0, 1) == AFD_OK);
    }
    assert_int_equal(afd_renewal_acc_stats(acc, &s), AFD_OK);
    theta = (D1 * P1 + D1 * (D1 - 1) / 2) / (D1 + 1);
    ey2 = (D1 * P1 * P1 + P1 * D1 * (D1 - 1) + D1 * (D1 - 1) * (2 * D1 - 1) / 6) / (D1 + 1);
    assert_true(s.n == 10000000);
    assert_close(s.theta, (double)theta, 2 * DBL_EPSILON, 0);
    assert_close(s.ey2, (double)ey2, 2 * DBL_EPSILON, 0);
    assert_close(s.nu, (double)sqrtl(ey2 - theta * theta), 8 * DBL_EPSILON, 0);
    afd_renewal_acc_free(acc);
}

/* nu << theta: Y = P with P in {10^12, 10^12 + 2}: theta = 10^12 + 1 and
 * nu = 1 exactly, although E[Y^2] - theta^2 cancels 24 digits. */
static void tiny_spread_no_cancellation(void **state)
{
    afd_renewal_acc *acc = afd_renewal_acc_alloc();
    afd_renewal_stats s;
    long i;
    (void)state;
    for (i = 0; i < 100000; i++) {
        assert_int_equal(afd_renewal_acc_add(acc, 1000000000000ULL, 1), AFD_OK);
        assert_int_equal(afd_renewal_acc_add(acc, 1000000000002ULL, 1), AFD_OK);
    }
    assert_int_equal(afd_renewal_acc_stats(acc, &s), AFD_OK);
    assert_close(s.theta, 1000000000001.0, 0, 0);
    assert_close(s.nu, 1.0, 4 * DBL_EPSILON, 0);
    /* SE of a mean of +-1 values over 2e5 draws: 1/sqrt(2e5) * (2e5/(2e5-1))^0.5 */
    assert_close(s.theta_se, sqrt(1.0 / 199999.0), 1e-6, 0);
    afd_renewal_acc_free(acc);
}

static void identical_requests(void **state)
{
    afd_renewal_acc *acc = afd_renewal_acc_alloc();
    afd_renewal_stats s;
    int i;
    (void)state;
    for (i = 0; i < 10; i++)
        assert_int_equal(afd_renewal_acc_add(acc, 42, 1), AFD_OK);
    assert_int_equal(afd_renewal_acc_stats(acc, &s), AFD_OK);
    assert_close(s.theta, 42, 0, 0);
    assert_close(s.nu, 0, 0, 0);
    assert_close(s.theta_se, 0, 0, 0);
    assert_close(s.nu_se, 0, 0, 0);
    afd_renewal_acc_free(acc);
}

static void accumulator_limits(void **state)
{
    afd_renewal_acc *acc = afd_renewal_acc_alloc();
    afd_renewal_stats s;
    (void)state;
    assert_int_equal(afd_renewal_acc_stats(acc, &s), AFD_EEMPTY);
    assert_true(isnan(s.theta));
    assert_int_equal(afd_renewal_acc_add(acc, 5, 0), AFD_EINVAL);
    /* one request: estimates but no standard errors */
    assert_int_equal(afd_renewal_acc_add(acc, 5, 3), AFD_OK);
    assert_int_equal(afd_renewal_acc_stats(acc, &s), AFD_OK);
    assert_close(s.theta, 6, 0, 0);              /* loads 5, 6, 7 */
    assert_close(s.nu, sqrt(2.0 / 3.0), 1e-15, 0); /* variance of {5,6,7} */
    assert_true(isnan(s.theta_se));
    /* values near 2^63 do not fit: refused, accumulator unchanged */
    assert_int_equal(afd_renewal_acc_add(acc, 1ULL << 63, 1), AFD_ERANGE);
    assert_int_equal(afd_renewal_acc_add(acc, 1ULL << 42, 1ULL << 42), AFD_ERANGE);
    assert_int_equal(afd_renewal_acc_add(acc, 1, UINT64_MAX), AFD_ERANGE);
    assert_true(afd_renewal_acc_count(acc) == 1);
    assert_int_equal(afd_renewal_acc_stats(acc, &s), AFD_OK);
    assert_close(s.theta, 6, 0, 0);
    afd_renewal_acc_free(acc);
}

static void given(void **state)
{
    afd_renewal_stats s;
    (void)state;
    assert_int_equal(afd_renewal_given(599, 509.3, &s), AFD_OK);
    assert_close(s.theta, 599, 0, 0);
    assert_close(s.nu, 509.3, 0, 0);
    assert_int_equal(afd_renewal_given(-1, 1, &s), AFD_EINVAL);
    assert_int_equal(afd_renewal_given(1, -1, &s), AFD_EINVAL);
    assert_int_equal(afd_renewal_given(NAN, 1, &s), AFD_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(matches_brute_force),
        cmocka_unit_test(geometric_closed_form),
        cmocka_unit_test(independent_matches_geometric),
        cmocka_unit_test(independent_deterministic),
        cmocka_unit_test(synthetic_geometric_trace),
        cmocka_unit_test(standard_errors_are_calibrated),
        cmocka_unit_test(ten_million_rows_exact),
        cmocka_unit_test(tiny_spread_no_cancellation),
        cmocka_unit_test(identical_requests),
        cmocka_unit_test(accumulator_limits),
        cmocka_unit_test(given),
    };
    gsl_set_error_handler_off();
    RUN_TESTS(tests);
}
