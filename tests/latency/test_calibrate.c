/* test_calibrate.c: least-squares and robust fits of t = alpha x + beta. */
#include <config.h>

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "test_util.h"

#include "afd_calibrate.h"

static void exact_line(void **state)
{
    double x[5] = {1, 2, 4, 8, 16}, t[5];
    afd_fit f;
    int i;
    (void)state;
    for (i = 0; i < 5; i++)
        t[i] = 2.385 * x[i] + 17;
    assert_int_equal(afd_fit_line(x, t, 5, &f, NULL, NULL), AFD_OK);
    assert_close(f.alpha, 2.385, 1e-13, 0);
    assert_close(f.beta, 17, 1e-13, 0);
    assert_close(f.r2, 1, 1e-13, 0);
    assert_true(f.alpha_se < 1e-12);
    assert_close(f.alpha_robust, 2.385, 1e-10, 0);
    assert_int_equal(f.outliers, 0);
}

/* OLS by the textbook closed forms: alpha = Sxy/Sxx, beta = mean t - alpha
 * mean x, se(alpha) = s / sqrt(Sxx), se(beta) = s sqrt(1/n + mean x^2 / Sxx). */
static void against_closed_forms(void **state)
{
    static const double x[] = {120, 950, 2200, 4000, 5100, 7400, 9900};
    static const double t[] = {50.6, 51.2, 53.9, 56.4, 58.1, 62.8, 66.0};
    const size_t n = 7;
    double mx = 0, mt = 0, sxx = 0, sxy = 0, stt = 0, a, b, rss = 0, s;
    afd_fit f;
    size_t i;
    (void)state;
    for (i = 0; i < n; i++) {
        mx += x[i] / n;
        mt += t[i] / n;
    }
    for (i = 0; i < n; i++) {
        sxx += (x[i] - mx) * (x[i] - mx);
        sxy += (x[i] - mx) * (t[i] - mt);
        stt += (t[i] - mt) * (t[i] - mt);
    }
    a = sxy / sxx;
    b = mt - a * mx;
    for (i = 0; i < n; i++)
        rss += (t[i] - a * x[i] - b) * (t[i] - a * x[i] - b);
    s = sqrt(rss / (n - 2));
    assert_int_equal(afd_fit_line(x, t, n, &f, NULL, NULL), AFD_OK);
    assert_close(f.alpha, a, 1e-12, 0);
    assert_close(f.beta, b, 1e-12, 0);
    assert_close(f.alpha_se, s / sqrt(sxx), 1e-10, 0);
    assert_close(f.beta_se, s * sqrt(1.0 / n + mx * mx / sxx), 1e-10, 0);
    assert_close(f.r2, 1 - rss / stt, 1e-12, 0);
    assert_close(f.sigma, s, 1e-12, 0);
}

/* Planted coefficients come back within their standard errors, and the
 * standard errors are calibrated across repetitions. */
static void recovers_planted(void **state)
{
    enum { N = 60, REPS = 400 };
    const double alpha = 0.00165, beta = 50, noise = 2.0;
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    double x[N], t[N], sa = 0, sa2 = 0, se = 0;
    afd_fit f;
    int rep, i;
    (void)state;
    gsl_rng_set(rng, 3);
    for (rep = 0; rep < REPS; rep++) {
        for (i = 0; i < N; i++) {
            x[i] = 1000 + 300000 * gsl_rng_uniform(rng);
            t[i] = alpha * x[i] + beta + gsl_ran_gaussian(rng, noise);
        }
        assert_int_equal(afd_fit_line(x, t, N, &f, NULL, NULL), AFD_OK);
        if (rep == 0) {
            assert_within_se(f.alpha, alpha, f.alpha_se, 5);
            assert_within_se(f.beta, beta, f.beta_se, 5);
        }
        sa += f.alpha;
        sa2 += f.alpha * f.alpha;
        se += f.alpha_se / REPS;
    }
    assert_close(se, sqrt((sa2 - sa * sa / REPS) / (REPS - 1)), 0.12, 0);
    gsl_rng_free(rng);
}

/* 10% gross outliers (a preempted kernel taking 5x): least squares is pulled
 * off, the bisquare fit is not, and flags the outliers; over repetitions the
 * spread of the robust slope matches its reported standard error. */
static void robust_to_outliers(void **state)
{
    enum { N = 100, REPS = 300 };
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    double x[N], t[N], w[N], sa = 0, sa2 = 0, se = 0;
    afd_fit f;
    int i, rep, flagged = 0;
    (void)state;
    gsl_rng_set(rng, 5);
    for (rep = 0; rep < REPS; rep++) {
        for (i = 0; i < N; i++) {
            x[i] = 32 + 4096 * gsl_rng_uniform(rng);
            t[i] = 0.083 * x[i] + 100 + gsl_ran_gaussian(rng, 1.0);
            if (i % 10 == 0)
                t[i] *= 5;
        }
        assert_int_equal(afd_fit_line(x, t, N, &f, w, NULL), AFD_OK);
        sa += f.alpha_robust;
        sa2 += f.alpha_robust * f.alpha_robust;
        se += f.alpha_robust_se / REPS;
        if (rep > 0)
            continue;
        assert_within_se(f.alpha_robust, 0.083, f.alpha_robust_se, 5);
        assert_within_se(f.beta_robust, 100, f.beta_robust_se, 5);
        /* clean-data standard error of the slope: sigma / (sqrt(n) sd(x)),
         * sd(x) = 4096/sqrt(12); the robust one is close to it */
        assert_close(f.alpha_robust_se, 1.0 / (sqrt(N * 0.9) * 4096 / sqrt(12.0)), 0.3, 0);
        assert_true(fabs(f.alpha - 0.083) > 100 * f.alpha_robust_se);
        for (i = 0; i < N; i++)
            if (i % 10 == 0)
                flagged += w[i] < 0.5;
        assert_int_equal(flagged, 10);
        assert_int_equal(f.outliers, 10);
    }
    assert_close(se, sqrt((sa2 - sa * sa / REPS) / (REPS - 1)), 0.15, 0);
    gsl_rng_free(rng);
}

/* (1, 1), (2, 3), (3, 1): symmetric about x = 2, so Sxt = 0 and the
 * least-squares line is flat, alpha = 0, beta = mean t = 5/3.  The bisquare
 * iteration on three points, one of them twice as far from the line as the
 * others, does not settle within GSL's default 100 iterations (its
 * gsl_multifit_robust_alloc): no robust figures, and the fit still stands. */
static void robust_not_converged(void **state)
{
    double x[3] = {1, 2, 3}, t[3] = {1, 3, 1}, w[3] = {0.5, 0.5, 0.5};
    afd_fit f;
    afd_error err;
    int i;
    (void)state;
    /* Whether the bisquare iteration settles here depends on rounding (the
     * least-squares slope is exactly 0, so GSL's relative step test compares
     * rounding errors with each other): the test holds for either outcome,
     * and checks what each must report. */
    assert_int_equal(afd_fit_line(x, t, 3, &f, w, &err), AFD_OK);
    assert_true(fabs(f.alpha) < 1e-14);
    assert_close(f.beta, 5.0 / 3.0, 1e-14, 0);
    if (!f.robust_converged) {
        assert_int_equal(f.robust_iter, 100);
        assert_true(isnan(f.alpha_robust) && isnan(f.beta_robust));
        assert_true(isnan(f.alpha_robust_se) && isnan(f.beta_robust_se) &&
                    isnan(f.sigma_robust));
        assert_int_equal(f.outliers, 0);
        for (i = 0; i < 3; i++)
            assert_true(isnan(w[i]));
    } else {
        assert_true(f.robust_iter >= 1 && f.robust_iter <= 100);
        assert_true(isfinite(f.alpha_robust) && isfinite(f.beta_robust));
        for (i = 0; i < 3; i++)
            assert_true(w[i] >= 0 && w[i] <= 1);
    }
    /* a converged fit says so: points on the line t = 2.385 x + 17 */
    for (i = 0; i < 3; i++)
        t[i] = 2.385 * x[i] + 17;
    assert_int_equal(afd_fit_line(x, t, 3, &f, w, &err), AFD_OK);
    assert_int_equal(f.robust_converged, 1);
    assert_true(f.robust_iter >= 1 && f.robust_iter <= 100);
    assert_close(f.alpha_robust, 2.385, 1e-10, 0);
    assert_close(f.beta_robust, 17, 1e-10, 0);
}

static void errors(void **state)
{
    double x[3] = {4, 4, 4}, t[3] = {1, 2, 3};
    afd_fit f;
    afd_error err;
    (void)state;
    assert_int_equal(afd_fit_line(x, t, 2, &f, NULL, &err), AFD_EINVAL);
    assert_string_equal(err.text, "need at least 3 points to fit a line with errors, got 2");
    assert_int_equal(afd_fit_line(x, t, 3, &f, NULL, &err), AFD_EINVAL);
    assert_string_equal(err.text, "all 3 points have x = 4: the slope is undefined");
    assert_true(isnan(f.alpha));
    x[1] = NAN;
    assert_int_equal(afd_fit_line(x, t, 3, &f, NULL, &err), AFD_EINVAL);
    assert_string_equal(err.text, "point 2 is not finite");
}

/* Values near DBL_MAX: the textbook closed forms on x' = x/1e308,
 * t' = t/1e308 (x' = 1, 1.2, 1.5, 1.7; t' = 1, 1.3, 1.4, 1.7) give
 * Sxx = 0.29, Sxt = 0.26, Stt = 0.25, alpha = 0.26/0.29,
 * beta = 1e308 (1.35 - 1.35 alpha), r2 = 0.26^2/(0.29 * 0.25). */
static void huge_values(void **state)
{
    double x[4] = {1e308, 1.2e308, 1.5e308, 1.7e308}, t[4] = {1e308, 1.3e308, 1.4e308, 1.7e308};
    double xs[4] = {1e-300, 2e-300, 3e-300, 4e-300};
    afd_fit f;
    afd_error err;
    (void)state;
    assert_int_equal(afd_fit_line(x, t, 4, &f, NULL, &err), AFD_OK);
    assert_close(f.alpha, 0.26 / 0.29, 1e-13, 0);
    assert_close(f.beta, 1e308 * (1.35 - 1.35 * 0.26 / 0.29), 1e-12, 0);
    assert_close(f.r2, 0.26 * 0.26 / (0.29 * 0.25), 1e-13, 0);
    assert_true(isfinite(f.alpha_se) && isfinite(f.beta_se) && isfinite(f.sigma));
    assert_true(isfinite(f.alpha_robust) && isfinite(f.beta_robust));
    /* a slope of about 1e608 is no double */
    assert_int_equal(afd_fit_line(xs, t, 4, &f, NULL, &err), AFD_ERANGE);
    assert_true(strstr(err.text, "does not fit in double precision") != NULL);
    assert_true(isnan(f.alpha));
}

/* An exact line through the origin fits an intercept that is a rounding
 * error, of either sign depending on the CPU's kernels: within the rounding
 * bound it is 0 whichever its sign; a negative one within its standard error
 * is 0; beyond both it is kept. */
static void clamp(void **state)
{
    double x[4] = {0.3, 0.6, 0.9, 1.2}, t[4] = {0.1, 0.2, 0.3, 0.4}, v;
    afd_fit f;
    (void)state;
    assert_int_equal(afd_fit_line(x, t, 4, &f, NULL, NULL), AFD_OK);
    assert_true(fabs(f.beta) < 1e-15);
    /* 64 eps (max t + alpha max x) = 64 eps (0.4 + 0.4) */
    assert_close(f.beta_round, 64 * DBL_EPSILON * 0.8, 1e-12, 0);
    v = -3e-17;
    assert_int_equal(afd_fit_clamp(&v, 0, f.beta_round), 1);
    assert_true(v == 0);
    v = -0.5;
    assert_int_equal(afd_fit_clamp(&v, 0.6, 0), 1);
    assert_true(v == 0);
    v = -0.5;
    assert_int_equal(afd_fit_clamp(&v, 0.4, 1e-15), 0);
    assert_true(v == -0.5);
    v = 3e-17; /* the same error with the other sign */
    assert_int_equal(afd_fit_clamp(&v, 0, f.beta_round), 1);
    assert_true(v == 0 && !signbit(v));
    v = -0.0; /* already 0: no message, but not written as -0 */
    assert_int_equal(afd_fit_clamp(&v, 0, f.beta_round), 0);
    assert_true(v == 0 && !signbit(v));
    /* a positive value within its standard error but beyond rounding is a
     * fitted intercept, kept */
    v = 2.385;
    assert_int_equal(afd_fit_clamp(&v, 10, 1e-15), 0);
    assert_true(v == 2.385);
    v = 2.385;
    assert_int_equal(afd_fit_clamp(&v, 10, 2.4), 1);
    assert_true(v == 0);
}

static void read_points(void **state)
{
    char path[] = "/tmp/afdkit-test-points-XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fdopen(fd, "w");
    afd_points p;
    afd_error err;
    (void)state;
    fputs("batch,latency_us,note\r\n256,121.5,a\r\n512,142.25,\"b, c\"\r\n", f);
    fclose(f);
    assert_int_equal(afd_points_read(path, "batch", "latency_us", &p, &err), AFD_OK);
    assert_int_equal(p.n, 2);
    assert_close(p.x[1], 512, 0, 0);
    assert_close(p.t[1], 142.25, 0, 0);
    assert_int_equal(p.line[1], 3);
    afd_points_free(&p);
    assert_int_equal(afd_points_read(path, "batch", "t", &p, &err), AFD_EPARSE);
    assert_string_equal(err.text,
                        "unknown column 't' (header has 'batch', 'latency_us', 'note')");
    f = fopen(path, "w");
    fputs("x,t\n1,2\n3,fast\n", f);
    fclose(f);
    assert_int_equal(afd_points_read(path, "x", "t", &p, &err), AFD_EPARSE);
    assert_int_equal(err.line, 3);
    assert_string_equal(err.text, "column 't' is not a number: 'fast'");
    f = fopen(path, "w");
    fputs("x,t\n", f);
    fclose(f);
    assert_int_equal(afd_points_read(path, "x", "t", &p, &err), AFD_EEMPTY);
    unlink(path);
}

/* ---- serving laws */

static afd_law_points law_points(size_t n, double *x1, double *x2, double *t, const char *n1,
                                 const char *n2)
{
    afd_law_points p;
    memset(&p, 0, sizeof p);
    p.n = n;
    p.kind = strcmp(n1, "batch") == 0 ? AFD_LAW_DECODE : AFD_LAW_PREFILL;
    p.x1 = x1;
    p.x2 = x2;
    p.t = t;
    snprintf(p.x1_name, sizeof p.x1_name, "%s", n1);
    snprintf(p.x2_name, sizeof p.x2_name, "%s", n2);
    return p;
}

/* Batch times generated from known coefficients, no noise: the fit gives
 * them back (to rounding), with zero residuals.  Prefill: batches of b
 * prompts of P tokens, S1 = b P, S2 = b P^2, the estimator's grid; decode:
 * b sequences of s tokens each, K = b s. */
static void law_exact_recovery(void **state)
{
    static const double B[] = {1, 2, 4, 8}, P[] = {128, 512, 2048, 8192};
    static const double DB[] = {1, 8, 64, 256}, DS[] = {256, 1024, 4096};
    double x1[16], x2[16], t[16];
    afd_law_points p;
    afd_law_fit f;
    afd_error err;
    size_t i, j, n = 0;
    (void)state;
    for (i = 0; i < 4; i++)
        for (j = 0; j < 4; j++) {
            x1[n] = B[i] * P[j];
            x2[n] = B[i] * P[j] * P[j];
            t[n] = 8.5 + 0.071 * x1[n] + 6.5e-7 * x2[n];
            n++;
        }
    p = law_points(n, x1, x2, t, "sum_p", "sum_p2");
    assert_int_equal(afd_fit_law(&p, &f, &err), AFD_OK);
    assert_int_equal(f.n, 16);
    assert_close(f.coef[0], 8.5, 1e-9, 0);
    assert_close(f.coef[1], 0.071, 1e-12, 0);
    assert_close(f.coef[2], 6.5e-7, 1e-12, 0);
    assert_close(f.r2, 1, 1e-13, 0);
    assert_true(f.max_rel_err < 1e-12);
    assert_true(f.se[1] < 1e-12 * 0.071);
    n = 0;
    for (i = 0; i < 4; i++)
        for (j = 0; j < 3; j++) {
            x1[n] = DB[i];
            x2[n] = DB[i] * DS[j];
            t[n] = 15 + 0.041 * x1[n] + 2.7e-5 * x2[n];
            n++;
        }
    p = law_points(n, x1, x2, t, "batch", "kv");
    assert_int_equal(afd_fit_law(&p, &f, &err), AFD_OK);
    assert_close(f.coef[0], 15, 1e-12, 0);
    assert_close(f.coef[1], 0.041, 1e-11, 0);
    assert_close(f.coef[2], 2.7e-5, 1e-12, 0);
    assert_true(f.max_rel_err < 1e-12);
}

/* A fit worked by hand.  Decode steps at b in {1, 2} and K in {100, 300}:
 *     b   K    t
 *     1  100  10
 *     2  100  12
 *     1  300  13
 *     2  300  16
 * Normal equations (X^T X) c = X^T t for c = (beta, gamma, alpha), with
 * sum b = 6, sum K = 800, sum b^2 = 10, sum b K = 1200, sum K^2 = 200000,
 * sum t = 51, sum b t = 10 + 24 + 13 + 32 = 79,
 * sum K t = 1000 + 1200 + 3900 + 4800 = 10900:
 *     4 beta +    6 gamma +    800 alpha =    51
 *     6 beta +   10 gamma +   1200 alpha =    79
 *   800 beta + 1200 gamma + 200000 alpha = 10900
 * Row 2 - 1.5 row 1:  gamma + 0 alpha = 79 - 76.5, gamma = 2.5.
 * Row 3 - 200 row 1:  0 gamma + 40000 alpha = 10900 - 10200, alpha = 0.0175.
 * Row 1:  beta = (51 - 6 x 2.5 - 800 x 0.0175) / 4 = (51 - 15 - 14) / 4 = 5.5.
 * Fitted: 9.75, 12.25, 13.25, 15.75; residuals +0.25, -0.25, -0.25, +0.25,
 * RSS = 0.25, s^2 = RSS / (4 - 3) = 0.25, sigma = 0.5.
 * (X^T X)^-1 (the design is orthogonal once centred, b - 1.5 = +-0.5 and
 * K - 200 = +-100): var(gamma) = s^2 / sum (b - 1.5)^2 = 0.25 / 1,
 * var(alpha) = s^2 / sum (K - 200)^2 = 0.25 / 40000, var(beta) = s^2 / 4 +
 * 1.5^2 var(gamma) + 200^2 var(alpha) = 0.0625 + 0.5625 + 0.25 = 0.875.
 * TSS = sum (t - 12.75)^2 = 7.5625 + 0.5625 + 0.0625 + 10.5625 = 18.75,
 * r2 = 1 - 0.25 / 18.75.  Largest relative error 0.25 / 10 at the first row. */
static void law_by_hand(void **state)
{
    double b[4] = {1, 2, 1, 2}, K[4] = {100, 100, 300, 300}, t[4] = {10, 12, 13, 16};
    afd_law_points p = law_points(4, b, K, t, "batch", "kv");
    afd_law_fit f;
    afd_error err;
    (void)state;
    assert_int_equal(afd_fit_law(&p, &f, &err), AFD_OK);
    assert_close(f.coef[0], 5.5, 1e-13, 0);
    assert_close(f.coef[1], 2.5, 1e-13, 0);
    assert_close(f.coef[2], 0.0175, 1e-13, 0);
    assert_close(f.se[0], sqrt(0.875), 1e-12, 0);
    assert_close(f.se[1], 0.5, 1e-12, 0);
    assert_close(f.se[2], 0.5 / 200, 1e-12, 0);
    assert_close(f.sigma, 0.5, 1e-12, 0);
    assert_close(f.r2, 1 - 0.25 / 18.75, 1e-13, 0);
    assert_close(f.max_rel_err, 0.025, 1e-12, 0);
    assert_int_equal(f.worst, 0);
}

static void law_errors(void **state)
{
    double b[5] = {4, 4, 4, 4, 4}, K[5] = {100, 200, 300, 400, 500}, t[5] = {1, 2, 3, 4, 5};
    long line[5] = {2, 3, 4, 5, 6};
    afd_law_points p = law_points(3, b, K, t, "batch", "kv");
    afd_law_fit f;
    afd_error err;
    (void)state;
    assert_int_equal(afd_fit_law(&p, &f, &err), AFD_EINVAL);
    assert_string_equal(err.text,
                        "need at least 4 batches to fit 3 coefficients with standard errors, "
                        "got 3");
    assert_true(isnan(f.coef[0]));
    p.n = 5;
    p.line = line;
    assert_int_equal(afd_fit_law(&p, &f, &err), AFD_EINVAL);
    assert_string_equal(err.text, "every row (lines 2-6) has batch = 4: decode_gamma cannot be "
                                  "told from decode_beta; measure at two values or more");
    /* one context for every batch: K = 64 b */
    b[0] = 1, b[1] = 2, b[2] = 4, b[3] = 8, b[4] = 16;
    for (int i = 0; i < 5; i++)
        K[i] = 64 * b[i];
    snprintf(p.x2_name, sizeof p.x2_name, "batch x context");
    assert_int_equal(afd_fit_law(&p, &f, &err), AFD_EINVAL);
    assert_string_equal(err.text, "batch x context is a linear function of batch on every row "
                                  "(lines 2-6): decode_gamma and decode_alpha cannot be told "
                                  "apart; vary one at a fixed value of the other");
    /* K = 1000 - 64 b: dependent with the intercept as well */
    for (int i = 0; i < 5; i++)
        K[i] = 1000 - 64 * b[i];
    assert_int_equal(afd_fit_law(&p, &f, &err), AFD_EINVAL);
    assert_true(strstr(err.text, "is a linear function of batch") != NULL);
    /* the same with one point off the line is a fit */
    K[4] += 1;
    assert_int_equal(afd_fit_law(&p, &f, &err), AFD_OK);
    t[2] = 0;
    assert_int_equal(afd_fit_law(&p, &f, &err), AFD_EINVAL);
    assert_int_equal(err.line, 4);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void law_read(void **state)
{
    char path[] = "/tmp/afdkit-test-law-XXXXXX";
    int fd = mkstemp(path);
    afd_law_points p;
    afd_error err;
    (void)state;
    close(fd);
    /* prefill, batch and prompt: S1 = b P, S2 = b P^2 */
    write_text(path, "batch,prompt,ms\n2,100,30\n4,512,90.5\n");
    assert_int_equal(afd_law_points_read(path, AFD_LAW_PREFILL, "ms", &p, &err), AFD_OK);
    assert_int_equal(p.n, 2);
    assert_close(p.x1[1], 4 * 512, 0, 0);
    assert_close(p.x2[1], 4 * 512 * 512, 0, 0);
    assert_close(p.t[1], 90.5, 0, 0);
    assert_int_equal(p.line[1], 3);
    assert_string_equal(p.x1_name, "batch x prompt");
    afd_law_points_free(&p);
    /* prefill, the sums themselves */
    write_text(path, "t,sum_p,sum_p2\n30,300,50000\n");
    assert_int_equal(afd_law_points_read(path, AFD_LAW_PREFILL, "t", &p, &err), AFD_OK);
    assert_close(p.x2[0], 50000, 0, 0);
    assert_string_equal(p.x2_name, "sum_p2");
    afd_law_points_free(&p);
    /* S2 outside [S1, S1^2]: not sums of one batch */
    write_text(path, "sum_p,sum_p2,t\n300,50000,30\n300,200,31\n");
    assert_int_equal(afd_law_points_read(path, AFD_LAW_PREFILL, "t", &p, &err), AFD_EPARSE);
    assert_int_equal(err.line, 3);
    assert_string_equal(err.text, "sum_p2 = 200 is not between sum_p = 300 and sum_p^2: not the "
                                  "sums of one batch's prompt lengths (each >= 1) and of their "
                                  "squares");
    /* decode, batch and context: K = b s */
    write_text(path, "batch,context,t\n8,1000,20\n");
    assert_int_equal(afd_law_points_read(path, AFD_LAW_DECODE, "t", &p, &err), AFD_OK);
    assert_close(p.x1[0], 8, 0, 0);
    assert_close(p.x2[0], 8000, 0, 0);
    afd_law_points_free(&p);
    write_text(path, "batch,kv,t\n8,1000,20\n0,1000,20\n");
    assert_int_equal(afd_law_points_read(path, AFD_LAW_DECODE, "t", &p, &err), AFD_EPARSE);
    assert_int_equal(err.line, 3);
    assert_string_equal(err.text, "batch must be >= 1: '0'");
    write_text(path, "batch,kv,t\n8,1000,-2\n");
    assert_int_equal(afd_law_points_read(path, AFD_LAW_DECODE, "t", &p, &err), AFD_EPARSE);
    assert_string_equal(err.text, "t must be > 0: '-2'");
    write_text(path, "batch,kv,t\n8,nan,2\n");
    assert_int_equal(afd_law_points_read(path, AFD_LAW_DECODE, "t", &p, &err), AFD_EPARSE);
    assert_string_equal(err.text, "column 'kv' is not a finite number: 'nan'");
    /* a missing column names the forms and the header */
    write_text(path, "batch,t\n8,2\n");
    assert_int_equal(afd_law_points_read(path, AFD_LAW_DECODE, "t", &p, &err), AFD_EPARSE);
    assert_int_equal(err.line, 1);
    assert_string_equal(err.text, "a decode file needs columns batch and kv, or batch and "
                                  "context (header has 'batch', 't')");
    write_text(path, "batch,kv,context,t\n8,1,2,2\n");
    assert_int_equal(afd_law_points_read(path, AFD_LAW_DECODE, "t", &p, &err), AFD_EPARSE);
    assert_string_equal(err.text, "both batch, kv and batch, context columns: give one form");
    write_text(path, "batch,kv,time\n8,1,2\n");
    assert_int_equal(afd_law_points_read(path, AFD_LAW_DECODE, "t", &p, &err), AFD_EPARSE);
    assert_string_equal(err.text, "unknown column 't' (header has 'batch', 'kv', 'time')");
    write_text(path, "batch,kv,t\n");
    assert_int_equal(afd_law_points_read(path, AFD_LAW_DECODE, "t", &p, &err), AFD_EEMPTY);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exact_line),        cmocka_unit_test(against_closed_forms),
        cmocka_unit_test(recovers_planted),  cmocka_unit_test(robust_to_outliers),
        cmocka_unit_test(errors),            cmocka_unit_test(read_points),
        cmocka_unit_test(robust_not_converged),
        cmocka_unit_test(huge_values),       cmocka_unit_test(clamp),
        cmocka_unit_test(law_exact_recovery), cmocka_unit_test(law_by_hand),
        cmocka_unit_test(law_errors),        cmocka_unit_test(law_read),
    };
    gsl_set_error_handler_off();
    RUN_TESTS(tests);
}
