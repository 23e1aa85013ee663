/* test_gsl_handler.c: the library never reaches GSL's error handler.
 *
 * afd_status.h promises that libafdkit never aborts.  GSL's default error
 * handler aborts, and a program linking the library may keep it; so every
 * public routine that runs GSL code (quadrature, root finding, special
 * functions) is called here over a grid of hard arguments, first with a
 * handler that counts calls (there must be none), then with GSL's default
 * handler installed (an abort fails the test). */
#include <config.h>

#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_errno.h>

#include "afd_barrier.h"
#include "afd_queue.h"
#include "afd_ratio.h"
#include "internal.h"
#include "test_util.h"

static int calls;

static void counting_handler(const char *reason, const char *file, int line, int gsl_errno)
{
    (void)reason;
    (void)file;
    (void)line;
    (void)gsl_errno;
    calls++;
}

/* Every public entry point that integrates, solves or evaluates special
 * functions, over awkward arguments. */
static void exercise(void)
{
    static const double rs[] = {1, 1.5, 2, 3, 7.25, 64, 1000, 65536, 1e9, 1e15};
    static const double zs[] = {-40, -8.5, -3, -0.7, 0, 0.3, 2.385, 6, 12, 38};
    static const double rhos[] = {0.05, 0.5, 0.9, 0.99, 0.999};
    static const int cs[] = {1, 2, 7, 64};
    afd_result res;
    size_t i, j;
    for (i = 0; i < sizeof rs / sizeof rs[0]; i++) {
        (void)afd_kappa_e(rs[i], &res);
        for (j = 0; j < sizeof zs / sizeof zs[0]; j++) {
            (void)afd_max_normal_excess_e(rs[i], zs[j], &res);
            (void)afd_max_normal_sf(rs[i], zs[j]);
        }
    }
    for (i = 0; i < sizeof rhos / sizeof rhos[0]; i++) {
        (void)afd_md1_wait_cdf_e(rhos[i], 1, 3.7, &res);
        (void)afd_md1_wait_quantile_e(rhos[i], 1, 0.9, &res);
        (void)afd_md1_wait_quantile_e(rhos[i], 1, 0.999999, &res);
        for (j = 0; j < sizeof cs / sizeof cs[0]; j++) {
            afd_mdc *q = NULL;
            if (afd_mdc_alloc(rhos[i] * cs[j], 1, cs[j], &q) != AFD_OK)
                continue;
            (void)afd_mdc_wq_e(q, &res);
            (void)afd_mdc_p_wait_e(q, &res);
            (void)afd_mdc_wait_quantile_e(q, 0.5, &res);
            (void)afd_mdc_wait_quantile_e(q, 0.99999, &res);
            (void)afd_mdc_wait_sf_e(q, 25.5, &res);
            afd_mdc_free(q);
        }
    }
    {
        afd_system s;
        afd_cycle cy;
        double r;
        afd_hw_init(&s.hw);
        s.hw.alpha_a = 1e-3;
        s.hw.beta_a = 0.5;
        s.hw.alpha_c = 1e-4;
        s.hw.beta_c = 0.2;
        s.hw.alpha_f = 2e-4;
        s.hw.beta_f = 3;
        s.B = 256;
        s.theta = 600;
        s.nu = 500;
        for (i = 0; i < sizeof rs / sizeof rs[0]; i++)
            (void)afd_cycle_eval(&s, rs[i], &cy);
        (void)afd_ratio_g_continuous(&s, 1, 200, &r);
    }
}

static void no_handler_calls(void **state)
{
    gsl_error_handler_t *old = gsl_set_error_handler(counting_handler);
    (void)state;
    calls = 0;
    exercise();
    gsl_set_error_handler(old);
    assert_int_equal(calls, 0);
}

static void default_handler_installed(void **state)
{
    gsl_error_handler_t *old = gsl_set_error_handler(NULL); /* GSL's default: abort */
    (void)state;
    exercise();
    gsl_set_error_handler(old);
}

static double inv_sqrt(double x, void *p)
{
    (void)p;
    return 1 / sqrt(x);
}

static double sine(double x, void *p)
{
    (void)p;
    return sin(x);
}

static double nan_fn(double x, void *p)
{
    (void)p;
    (void)x;
    return NAN;
}

/* The shared quadrature (compiled into this test: it is not exported).  An
 * integrand no Gauss-Kronrod rule resolves at the tolerance made
 * gsl_integration_qng raise GSL_ETOL through the handler; now it is a status. */
static void quadrature(void **state)
{
    gsl_error_handler_t *old = gsl_set_error_handler(counting_handler);
    double v, e;
    afd_status st;
    (void)state;
    calls = 0;
    /* int_0^pi sin = 2 */
    assert_int_equal(afd_priv_integrate(sine, NULL, 0, M_PI, 0, 1e-12, &v, &e), AFD_OK);
    assert_close(v, 2, 1e-12, 0);
    assert_true(e <= 1e-12 * 2);
    /* int_0^1 x^(-1/2) = 2: the singularity defeats 24 bisections at 1e-12 */
    st = afd_priv_integrate(inv_sqrt, NULL, 0, 1, 0, 1e-12, &v, &e);
    assert_true(st == AFD_OK || st == AFD_ENUMERIC);
    assert_close(v, 2, 1e-3, 0);
    assert_true(fabs(v - 2) <= e + 1e-12); /* the error estimate covers the error */
    assert_int_equal(afd_priv_integrate(nan_fn, NULL, 0, 1, 0, 1e-12, &v, &e), AFD_ENUMERIC);
    assert_int_equal(calls, 0);
    gsl_set_error_handler(NULL); /* GSL's default: abort */
    st = afd_priv_integrate(inv_sqrt, NULL, 0, 1, 0, 1e-12, &v, &e);
    assert_true(st == AFD_OK || st == AFD_ENUMERIC);
    gsl_set_error_handler(old);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(no_handler_calls),
        cmocka_unit_test(default_handler_installed),
        cmocka_unit_test(quadrature),
    };
    RUN_TESTS(tests);
}
