/* test_tail.c: the Hill estimator against exact Pareto tails. */
#include <config.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "test_util.h"

#include "afd_tail.h"

/* Exact Pareto(alpha) data: the Hill estimator is unbiased for k/(k-1)
 * scaling and its standard error is alpha/sqrt(k). */
static void pareto_index(void **state)
{
    static const double alphas[] = {1.5, 2.5, 3.5};
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    size_t j;
    (void)state;
    gsl_rng_set(rng, 17);
    for (j = 0; j < 3; j++) {
        afd_hill *h = afd_hill_alloc(AFD_HILL_KMAX);
        double alpha, se;
        long i;
        for (i = 0; i < 1000000; i++)
            afd_hill_add(h, gsl_ran_pareto(rng, alphas[j], 1.0));
        assert_int_equal(afd_hill_default_k(1000000, AFD_HILL_KMAX), 1000);
        assert_int_equal(afd_hill_estimate(h, 1000, &alpha, &se), AFD_OK);
        assert_close(se, alpha / sqrt(1000.0), 1e-15, 0);
        assert_within_se(alpha, alphas[j], se, 5);
        afd_hill_free(h);
    }
    gsl_rng_free(rng);
}

static void small_and_tied(void **state)
{
    afd_hill *h = afd_hill_alloc(3);
    double alpha, se;
    (void)state;
    /* keeps the 4 largest: 10, 8, 4, 2 of {1, 2, 4, 8, 10} */
    afd_hill_add(h, 4);
    afd_hill_add(h, 1);
    afd_hill_add(h, 10);
    afd_hill_add(h, 2);
    afd_hill_add(h, 8);
    afd_hill_add(h, 0);   /* ignored */
    afd_hill_add(h, NAN); /* ignored */
    /* k = 3 over threshold X_(4) = 2: 3 / (log 5 + log 4 + log 2) */
    assert_int_equal(afd_hill_estimate(h, 3, &alpha, &se), AFD_OK);
    assert_close(alpha, 3 / log(40.0), 1e-15, 0);
    /* the accumulator stays usable after estimating */
    afd_hill_add(h, 20);
    assert_int_equal(afd_hill_estimate(h, 3, &alpha, &se), AFD_OK);
    assert_close(alpha, 3 / (log(20.0 / 4) + log(10.0 / 4) + log(8.0 / 4)), 1e-15, 0);
    assert_int_equal(afd_hill_estimate(h, 4, &alpha, &se), AFD_EINVAL);
    afd_hill_free(h);
    /* a length cap: all top values tied, no power-law tail */
    h = afd_hill_alloc(10);
    {
        int i;
        for (i = 0; i < 100; i++)
            afd_hill_add(h, 1000);
    }
    assert_int_equal(afd_hill_estimate(h, 10, &alpha, &se), AFD_OK);
    assert_true(isinf(alpha));
    afd_hill_free(h);
    assert_int_equal(afd_hill_default_k(30, 1000), 10);
    assert_int_equal(afd_hill_default_k(5, 1000), 4);
    assert_null(afd_hill_alloc(0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pareto_index),
        cmocka_unit_test(small_and_tied),
    };
    RUN_TESTS(tests);
}
