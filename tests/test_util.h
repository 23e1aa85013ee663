/* test_util.h: helpers shared by the cmocka unit tests.
 *
 * cmocka 1.1.5 has no assert for doubles (assert_float_equal casts to
 * float), so every numerical comparison goes through assert_close. */
#ifndef AFD_TEST_UTIL_H
#define AFD_TEST_UTIL_H

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

/* |actual - expected| <= atol + rtol |expected|; NaN never passes. */
#define assert_close(actual, expected, rtol, atol)                                            \
    assert_close_at((actual), (expected), (rtol), (atol), #actual, __FILE__, __LINE__)

static inline void assert_close_at(double actual, double expected, double rtol, double atol,
                                   const char *expr, const char *file, int line)
{
    double tol = atol + rtol * fabs(expected);
    if (!(fabs(actual - expected) <= tol)) {
        print_error("%s = %.17g, expected %.17g (|diff| %.3g > tol %.3g)\n", expr, actual,
                    expected, fabs(actual - expected), tol);
        _fail(file, line);
    }
}

/* |estimate - exact| < k standard errors (Monte Carlo and estimator tests). */
#define assert_within_se(estimate, exact, se, k)                                              \
    do {                                                                                      \
        double e_ = (estimate), x_ = (exact), s_ = (se);                                      \
        if (!(s_ > 0) || !(fabs(e_ - x_) < (k)*s_)) {                                         \
            print_error("%s = %.10g, exact %.10g, se %.3g: %.2f standard errors (limit %g)\n", \
                        #estimate, e_, x_, s_, fabs(e_ - x_) / s_, (double)(k));              \
            fail();                                                                           \
        }                                                                                     \
    } while (0)

/* Run the group and return 0/1 (never a raw failure count: 77 and 99 mean
 * "skipped" and "hard error" to the automake harness). */
#define RUN_TESTS(tests) return cmocka_run_group_tests(tests, NULL, NULL) == 0 ? 0 : 1

#endif /* AFD_TEST_UTIL_H */
