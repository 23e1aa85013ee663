/* test_queue.c: M/D/1 and M/D/c against independent references:
 * Pollaczek-Khinchine by hand, Erlang's alternating formula in long double
 * where it is safe, Crommelin's root formulas for E[X] and P(W = 0), a dense
 * LU solve of the chain of the number in system, the integral of the
 * waiting-time tail, light- and heavy-traffic limits, and a discrete-event
 * simulation (fixed seed, 5 standard errors). */
#include <config.h>

#include <complex.h>
#include <float.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_integration.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "test_util.h"

#include "afd_queue.h"
#include "internal.h"

static const long double PI_L = 3.141592653589793238462643383279502884L;

/* ---------------------------------------------------------- references */

/* Erlang (1909): P(W <= t) = (1 - rho) sum_{j <= t/D} (lambda (jD - t))^j / j! e^{-lambda (jD -
 * t)}, in long double.  *spread = sum |terms| / |result| measures the cancellation. */
static long double erlang_md1_cdf(double lambda, double service, double t, long double *spread)
{
    long double sum = 0, mag = 0, rho = (long double)lambda * service;
    int j;
    for (j = 0; j <= (int)floorl((long double)t / service); j++) {
        long double x = (long double)lambda * ((long double)j * service - t);
        long double term = expl(j * logl(fabsl(x)) - lgammal(j + 1.0L) - x);
        if (j == 0)
            term = expl(-x);
        else if (x < 0 && (j & 1))
            term = -term;
        sum += term;
        mag += fabsl(term);
    }
    *spread = mag / fabsl(sum);
    return (1 - rho) * sum;
}

/* Crommelin's roots: z_k = w_k exp(rho (z_k - 1)), w_k = e^{2 pi i k / c},
 * k = 1..c-1, the roots of z^c = e^{a (z - 1)} inside the unit disk.  With
 * them the generating function of X gives
 *   E[X]    = sum_k 1/(1 - z_k) - (c (c-1) - a^2) / (2 (c - a)),
 *   P(W = 0) = P(Q < c) = (c - a) / prod_k (1 - z_k).
 * *scale is the size of the terms that cancel in E[X]. */
static void crommelin_roots(int c, double rho, long double *ex, long double *scale,
                            long double *p_nowait)
{
    long double complex sum = 0, prod = 1;
    long double a = (long double)rho * c, mag = 0;
    int k, it;
    for (k = 1; k < c; k++) {
        long double complex w = cexpl(2 * PI_L * I * k / c), z = 0;
        for (it = 0; it < 60; it++) /* contraction with factor rho |z| */
            z = w * cexpl(rho * (z - 1));
        for (it = 0; it < 200; it++) { /* Newton on z - w e^{rho (z - 1)} */
            long double complex e = w * cexpl(rho * (z - 1));
            long double complex dz = (z - e) / (1 - rho * e);
            z -= dz;
            if (cabsl(dz) < 4 * LDBL_EPSILON)
                break;
        }
        sum += 1 / (1 - z);
        mag += cabsl(1 / (1 - z));
        prod *= 1 - z;
    }
    *ex = creall(sum) - ((long double)c * (c - 1) - a * a) / (2 * (c - a));
    *scale = mag + fabsl(((long double)c * (c - 1) - a * a) / (2 * (c - a)));
    *p_nowait = (c - a) / creall(prod);
}

/* Poisson(a) pmf in long double. */
static long double pois_l(long k, long double a)
{
    return expl(k * logl(a) - a - lgammal(k + 1.0L));
}

/* ---------------------------------------------------------------- M/D/1 */

static void pk_by_hand(void **state)
{
    (void)state;
    /* Wq = rho D / (2 (1 - rho)) worked by hand */
    assert_close(afd_md1_wq(0.5, 1), 0.5, 4 * DBL_EPSILON, 0);        /* 0.5/(2*0.5) */
    assert_close(afd_md1_wq(0.25, 2), 1.0, 4 * DBL_EPSILON, 0);       /* 0.5*2/(2*0.5) */
    assert_close(afd_md1_wq(0.9, 1), 4.5, 16 * DBL_EPSILON, 0);       /* 0.9/0.2 */
    assert_close(afd_md1_wq(1 / 3.0, 2.4), 4.8, 16 * DBL_EPSILON, 0); /* 0.8*2.4/0.4 */
    assert_close(afd_md1_wq(0.999, 1), 499.5, 1e-12, 0);              /* 0.999/0.002 */
}

static void md1_cdf_against_erlang(void **state)
{
    static const double rhos[] = {0.05, 0.3, 0.5, 0.7, 0.85};
    size_t i;
    (void)state;
    for (i = 0; i < sizeof rhos / sizeof rhos[0]; i++) {
        const double service = 2.385, lambda = rhos[i] / service;
        double t;
        afd_mdc *q;
        assert_int_equal(afd_mdc_alloc(lambda, service, 1, &q), AFD_OK);
        for (t = 0; t <= 6 * service; t += 0.1137 * service) {
            long double spread, ref = erlang_md1_cdf(lambda, service, t, &spread);
            afd_result r;
            /* the reference itself is only trusted while cancellation is mild */
            assert_true(spread < 1e3);
            assert_int_equal(afd_md1_wait_cdf_e(lambda, service, t, &r), AFD_OK);
            assert_close(r.val, (double)ref, 2e-15, 0);
            assert_true(fabs(r.val - (double)ref) <= r.err + 1e-18);
            /* the M/D/c solution with c = 1 */
            assert_int_equal(afd_mdc_wait_cdf_e(q, t, &r), AFD_OK);
            assert_close(r.val, (double)ref, 1e-14, 0);
            assert_true(fabs(r.val - (double)ref) <= r.err + 1e-18);
        }
        afd_mdc_free(q);
        /* the atom at zero */
        assert_close(afd_md1_wait_cdf(lambda, service, 0), 1 - rhos[i], 4 * DBL_EPSILON, 0);
        assert_close(afd_md1_wait_cdf(lambda, service, -1e-300), 0, 0, 0);
    }
}

/* int_0^inf P(W > t) dt = E[W]; the tail is integrated piecewise over
 * service periods (the distribution has kinks at multiples of D). */
struct sf_args {
    const afd_mdc *q;
    double lambda, service;
};

static double md1_sf(double t, void *p)
{
    const struct sf_args *a = p;
    return 1 - afd_md1_wait_cdf(a->lambda, a->service, t);
}

static double mdc_sf(double t, void *p)
{
    const struct sf_args *a = p;
    return afd_mdc_wait_sf(a->q, t);
}

static double integrate_tail(double (*f)(double, void *), struct sf_args *a, double cut)
{
    gsl_integration_workspace *w = gsl_integration_workspace_alloc(200);
    gsl_function fn = {f, a};
    double total = 0, lo;
    for (lo = 0;; lo += a->service) {
        double v, e;
        int rc = gsl_integration_qag(&fn, lo, lo + a->service, 1e-15, 1e-12, 200, GSL_INTEG_GAUSS31,
                                     w, &v, &e);
        assert_true(rc == GSL_SUCCESS || rc == GSL_EROUND);
        total += v;
        if (f(lo + a->service, a) < cut)
            break;
    }
    gsl_integration_workspace_free(w);
    return total;
}

static void md1_cdf_integrates_to_pk(void **state)
{
    struct sf_args a = {NULL, 0.9 / 1.7, 1.7};
    (void)state;
    /* rho = 0.9: Wq = 0.9 * 1.7 / 0.2 = 7.65 */
    assert_close(integrate_tail(md1_sf, &a, 1e-16), 7.65, 1e-10, 0);
}

static void md1_stable_at_high_load(void **state)
{
    static const double rhos[] = {0.99, 0.999};
    size_t i;
    (void)state;
    for (i = 0; i < 2; i++) {
        const double rho = rhos[i];
        afd_mdc *q;
        double t, prev = 0;
        assert_int_equal(afd_mdc_alloc(rho, 1, 1, &q), AFD_OK);
        /* Erlang's sum is useless here; compare with the GTH solution of the
         * embedded chain (a different algorithm) and check the shape. */
        for (t = 0; t < 40 / (1 - rho); t = t * 1.31 + 0.77) {
            afd_result r1, rc;
            assert_int_equal(afd_md1_wait_cdf_e(rho, 1, t, &r1), AFD_OK);
            assert_int_equal(afd_mdc_wait_cdf_e(q, t, &rc), AFD_OK);
            assert_true(r1.val >= prev && r1.val <= 1);
            assert_true(fabs(r1.val - rc.val) <= r1.err + rc.err);
            assert_close(r1.val, rc.val, 1e-11, 1e-13);
            prev = r1.val;
        }
        assert_close(afd_md1_wait_cdf(rho, 1, 0), 1 - rho, 4 * DBL_EPSILON, 0);
        assert_close(afd_md1_wait_cdf(rho, 1, 1e9), 1, 0, 1e-15);
        afd_mdc_free(q);
    }
}

static void md1_quantiles(void **state)
{
    static const double ps[] = {0.2, 0.5, 0.9, 0.95, 0.99, 0.999999};
    static const double rhos[] = {0.4, 0.8, 0.99, 0.999};
    size_t i, j;
    (void)state;
    for (i = 0; i < sizeof rhos / sizeof rhos[0]; i++) {
        const double service = 0.731, lambda = rhos[i] / service;
        double prev = 0;
        for (j = 0; j < sizeof ps / sizeof ps[0]; j++) {
            afd_result r;
            double p = ps[j];
            assert_int_equal(afd_md1_wait_quantile_e(lambda, service, p, &r), AFD_OK);
            assert_true(r.val >= prev);
            prev = r.val;
            if (p <= 1 - rhos[i]) {
                assert_close(r.val, 0, 0, 0); /* inside the atom at zero */
                continue;
            }
            /* round trip: the distribution at the quantile is p */
            assert_close(afd_md1_wait_cdf(lambda, service, r.val), p, 1e-12, 0);
        }
    }
    /* closed form inside the first period: (1 - rho) e^{lambda t} = p */
    assert_close(afd_md1_wait_quantile(0.5, 1, 0.6), log(0.6 / 0.5) / 0.5, 1e-13, 0);
}

/* ---------------------------------------------------------------- M/D/c */

static void mdc_c1_is_md1(void **state)
{
    static const double rhos[] = {1e-6, 0.05, 0.3, 0.7, 0.95, 0.999};
    static const double ps[] = {0.5, 0.9, 0.99};
    size_t i, j;
    (void)state;
    for (i = 0; i < sizeof rhos / sizeof rhos[0]; i++) {
        const double service = 1.618, rho = rhos[i], lambda = rho / service;
        afd_mdc *q;
        afd_result r;
        double t;
        assert_int_equal(afd_mdc_alloc(lambda, service, 1, &q), AFD_OK);
        assert_int_equal(afd_mdc_wq_e(q, &r), AFD_OK);
        /* Pollaczek-Khinchine */
        assert_close(r.val, rho * service / (2 * (1 - rho)), 1e-12, 0);
        assert_true(fabs(r.val - rho * service / (2 * (1 - rho))) <= r.err + 4e-16 * r.val);
        /* P(W > 0) = rho */
        assert_close(afd_mdc_p_wait(q), rho, 1e-13, 0);
        for (t = 0; t < 30 * service; t += 0.37 * service)
            assert_close(afd_mdc_wait_cdf(q, t), afd_md1_wait_cdf(lambda, service, t), 1e-12,
                         1e-15);
        for (j = 0; j < sizeof ps / sizeof ps[0]; j++)
            assert_close(afd_mdc_wait_quantile(q, ps[j]),
                         afd_md1_wait_quantile(lambda, service, ps[j]), 1e-10, 1e-13);
        afd_mdc_free(q);
    }
}

static void mdc_against_crommelin_roots(void **state)
{
    static const int cs[] = {2, 3, 5, 8, 16, 64};
    static const double rhos[] = {0.3, 0.6, 0.9, 0.95, 0.99, 0.999};
    size_t i, j;
    int compared = 0;
    (void)state;
    for (i = 0; i < sizeof cs / sizeof cs[0]; i++)
        for (j = 0; j < sizeof rhos / sizeof rhos[0]; j++) {
            const int c = cs[i];
            const double rho = rhos[j], service = 0.8125, lambda = rho * c / service;
            long double ex, scale, p0;
            double wq_ref, pw_ref, ref_rel, tol;
            afd_mdc *q;
            afd_result wq, pw;
            if (c > 16 && rho > 0.99)
                continue; /* 0.3 s; the c = 64, rho = 0.999 solve is the benchmark's business */
            crommelin_roots(c, rho, &ex, &scale, &p0);
            /* E[X] is a difference of terms of size scale: the reference is
             * only usable where that cancellation leaves digits (at light
             * load with many servers see mdc_light_traffic instead) */
            ref_rel = (double)(64 * LDBL_EPSILON * scale / fabsl(ex));
            if (ref_rel > 1e-9)
                continue;
            compared++;
            wq_ref = (double)(ex / lambda);
            pw_ref = (double)(1 - p0);
            assert_int_equal(afd_mdc_alloc(lambda, service, c, &q), AFD_OK);
            assert_int_equal(afd_mdc_wq_e(q, &wq), AFD_OK);
            assert_int_equal(afd_mdc_p_wait_e(q, &pw), AFD_OK);
            /* the reported bound is honest ... */
            tol = wq.err + (ref_rel + 1e-14) * wq_ref;
            if (!(fabs(wq.val - wq_ref) <= tol))
                fail_msg("c=%d rho=%g: Wq %.17g, roots %.17g, tol %.3g", c, rho, wq.val, wq_ref,
                         tol);
            tol = pw.err + 64 * c * LDBL_EPSILON + 1e-14 * pw_ref;
            if (!(fabs(pw.val - pw_ref) <= tol))
                fail_msg("c=%d rho=%g: P(W>0) %.17g, roots %.17g", c, rho, pw.val, pw_ref);
            /* ... and small */
            assert_close(wq.val, wq_ref, 1e-11, 0);
            assert_close(pw.val, pw_ref, 1e-12, 0);
            /* and through the distribution: P(W <= 0) = 1 - P(W > 0) */
            assert_close(afd_mdc_wait_cdf(q, 0), (double)p0, 1e-12, 1e-15);
            afd_mdc_free(q);
        }
    assert_true(compared >= 28);
}

/* Dense LU solve of the chain of the number in system,
 * Q' = max(Q - c, 0) + A on {0..M} (moves above M folded into M). */
static void dense_number_in_system(double a, int c, int m, double *pi)
{
    gsl_matrix *mat = gsl_matrix_calloc(m + 1, m + 1);
    gsl_vector *rhs = gsl_vector_calloc(m + 1);
    gsl_vector_view x = gsl_vector_view_array(pi, m + 1);
    gsl_permutation *perm = gsl_permutation_alloc(m + 1);
    int i, j, sign;
    /* mat = (I - P)^T, last row replaced by sum(pi) = 1 */
    for (i = 0; i <= m; i++) {
        int base = i > c ? i - c : 0;
        double left = 1;
        for (j = base; j < m; j++) {
            double pij = (double)pois_l(j - base, a);
            *gsl_matrix_ptr(mat, j, i) -= pij;
            left -= pij;
        }
        *gsl_matrix_ptr(mat, m, i) -= left;
        *gsl_matrix_ptr(mat, i, i) += 1;
    }
    for (i = 0; i <= m; i++)
        gsl_matrix_set(mat, m, i, 1);
    gsl_vector_set(rhs, m, 1);
    assert_int_equal(gsl_linalg_LU_decomp(mat, perm, &sign), GSL_SUCCESS);
    assert_int_equal(gsl_linalg_LU_solve(mat, perm, rhs, &x.vector), GSL_SUCCESS);
    gsl_permutation_free(perm);
    gsl_vector_free(rhs);
    gsl_matrix_free(mat);
}

static void mdc_against_dense_solve(void **state)
{
    static const struct {
        int c;
        double rho;
    } cases[] = {{3, 0.7}, {7, 0.45}, {2, 0.88}};
    enum { M = 260 };
    size_t k;
    (void)state;
    for (k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const int c = cases[k].c;
        const double service = 1.25, lambda = cases[k].rho * c / service;
        double pi[M + 1], lq = 0, pw = 0;
        afd_mdc *q;
        int n;
        dense_number_in_system(lambda * service, c, M, pi);
        assert_int_equal(afd_mdc_alloc(lambda, service, c, &q), AFD_OK);
        for (n = 0; n <= 60; n++) {
            afd_result r;
            assert_int_equal(afd_mdc_number_pmf_e(q, n, &r), AFD_OK);
            /* the LU reference is accurate to about M eps absolute */
            assert_close(r.val, pi[n], 1e-10, M * DBL_EPSILON);
        }
        for (n = 0; n <= M; n++) {
            lq += n > c ? (n - c) * pi[n] : 0;
            pw += n >= c ? pi[n] : 0;
        }
        assert_close(afd_mdc_wq(q), lq / lambda, 1e-10, 0);
        assert_close(afd_mdc_p_wait(q), pw, 1e-10, 0);
        afd_mdc_free(q);
    }
}

static void mdc_tail_integrates_to_mean(void **state)
{
    static const struct {
        int c;
        double rho;
    } cases[] = {{3, 0.9}, {12, 0.8}, {1, 0.6}};
    size_t k;
    (void)state;
    for (k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const int c = cases[k].c;
        const double service = 0.66, lambda = cases[k].rho * c / service;
        long double ex, scale, p0;
        struct sf_args a = {NULL, lambda, service};
        afd_mdc *q;
        crommelin_roots(c, cases[k].rho, &ex, &scale, &p0);
        assert_int_equal(afd_mdc_alloc(lambda, service, c, &q), AFD_OK);
        a.q = q;
        assert_close(integrate_tail(mdc_sf, &a, 1e-17), (double)(ex / lambda), 1e-10, 0);
        afd_mdc_free(q);
    }
}

static void mdc_distribution_shape(void **state)
{
    afd_mdc *q;
    double t, prevf = 0, prevs = 1;
    (void)state;
    assert_int_equal(afd_mdc_alloc(6.3, 1.1, 8, &q), AFD_OK); /* rho = 0.866 */
    for (t = 0; t < 40; t += 0.0913) {
        afd_result f, s;
        assert_int_equal(afd_mdc_wait_cdf_e(q, t, &f), AFD_OK);
        assert_int_equal(afd_mdc_wait_sf_e(q, t, &s), AFD_OK);
        assert_true(f.val >= prevf && s.val <= prevs);
        assert_close(f.val + s.val, 1, 0, 4e-15);
        prevf = f.val;
        prevs = s.val;
    }
    /* continuity at multiples of D (the only atom is at 0) */
    for (t = 1.1; t < 10; t += 1.1)
        assert_close(afd_mdc_wait_sf(q, t * (1 - 1e-15)), afd_mdc_wait_sf(q, t), 1e-12, 0);
    assert_close(afd_mdc_wait_cdf(q, -3), 0, 0, 0);
    assert_close(afd_mdc_wait_sf(q, -3), 1, 0, 0);
    assert_close(afd_mdc_wait_cdf(q, INFINITY), 1, 0, 0);
    assert_close(afd_mdc_wait_sf(q, INFINITY), 0, 0, 0);
    assert_close(afd_mdc_wait_cdf(q, 1e300), 1, 0, 1e-15);
    assert_true(afd_mdc_size(q) > 8 && afd_mdc_tail_bound(q) < 1e-17);
    afd_mdc_free(q);
}

static void mdc_quantile_round_trips(void **state)
{
    static const int cs[] = {2, 5, 40};
    static const double rhos[] = {0.5, 0.9, 0.99};
    static const double ps[] = {0.1, 0.5, 0.9, 0.95, 0.99, 0.9999};
    size_t i, j, k;
    (void)state;
    for (i = 0; i < sizeof cs / sizeof cs[0]; i++)
        for (j = 0; j < sizeof rhos / sizeof rhos[0]; j++) {
            const double service = 3.3, lambda = rhos[j] * cs[i] / service;
            afd_mdc *q;
            double prev = 0, pw;
            assert_int_equal(afd_mdc_alloc(lambda, service, cs[i], &q), AFD_OK);
            pw = afd_mdc_p_wait(q);
            for (k = 0; k < sizeof ps / sizeof ps[0]; k++) {
                afd_result r;
                const double p = ps[k];
                assert_int_equal(afd_mdc_wait_quantile_e(q, p, &r), AFD_OK);
                assert_true(r.val >= prev);
                prev = r.val;
                if (p < 1 - pw - 1e-12) {
                    assert_close(r.val, 0, 0, 0);
                    continue;
                }
                if (p > 0.5)
                    assert_close(afd_mdc_wait_sf(q, r.val), 1 - p, 1e-11, 1e-16);
                else
                    assert_close(afd_mdc_wait_cdf(q, r.val), p, 1e-12, 0);
                assert_true(r.err < 1e-8 * (r.val + service));
            }
            afd_mdc_free(q);
        }
}

static void mdc_light_traffic(void **state)
{
    static const double as[] = {1e-2, 1e-4, 1e-6};
    size_t i;
    (void)state;
    /* As a -> 0, X = max(X + A - c, 0) is 0 with probability 1 - O(a^(c+1));
     * a period that starts with customers waiting overflows with a chance
     * larger by O(1/a) only, so E[X] = E[(A - c)+] (1 + O(a^c)) and
     * P(W > 0) = P(A >= c) (1 + O(a^c)). */
    for (i = 0; i < sizeof as / sizeof as[0]; i++) {
        const int c = 3;
        const double a = as[i], service = 2.0, lambda = a / service;
        long double ex = 0, pge = 0;
        afd_mdc *q;
        long k;
        for (k = 60; k >= c; k--) {
            ex += (k - c) * pois_l(k, a);
            pge += pois_l(k, a);
        }
        assert_int_equal(afd_mdc_alloc(lambda, service, c, &q), AFD_OK);
        assert_close(afd_mdc_wq(q), (double)(ex / lambda), a * a * a + 1e-13, 0);
        assert_close(afd_mdc_p_wait(q), (double)pge, a * a * a + 1e-13, 0);
        afd_mdc_free(q);
    }
    /* far below saturation the values are tiny but keep their digits:
     * c = 64, rho = 0.1, P(W > 0) = P(A >= 64) (1 + O(1e-40)) */
    {
        afd_mdc *q;
        long double pge = 0;
        long k;
        for (k = 200; k >= 64; k--)
            pge += pois_l(k, 6.4L);
        assert_int_equal(afd_mdc_alloc(6.4, 1, 64, &q), AFD_OK);
        assert_close(afd_mdc_p_wait(q), (double)pge, 1e-12, 0);
        assert_true(afd_mdc_wq(q) > 0 && afd_mdc_wq(q) < 1e-40);
        afd_mdc_free(q);
    }
    /* a = 0 to machine precision: no waiting at all */
    {
        afd_mdc *q;
        assert_int_equal(afd_mdc_alloc(1e-300, 1e-300, 2, &q), AFD_OK);
        assert_close(afd_mdc_wq(q), 0, 0, 1e-300);
        assert_close(afd_mdc_p_wait(q), 0, 0, 1e-300);
        assert_close(afd_mdc_wait_quantile(q, 0.99), 0, 0, 0);
        afd_mdc_free(q);
    }
    assert_close(afd_md1_wq(1e-9, 1), 0.5e-9, 1e-8, 0);
    assert_close(afd_md1_wait_quantile(1e-9, 1, 0.5), 0, 0, 0);
    /* P(A > c) underflows but E[W] does not: c = 1, a = 1e-200 is M/D/1,
     * E[W] = rho D / (2 (1 - rho)) = 5e-201 (Pollaczek-Khinchine); c = 2,
     * a = 1e-150: E[W] = E[(A - 2)+] / lambda = D a^2 / 3! (1 + O(a)),
     * the first term of the sum over A = 3, 4, ... */
    {
        afd_mdc *q;
        afd_result r;
        assert_int_equal(afd_mdc_alloc(1e-200, 1, 1, &q), AFD_OK);
        assert_int_equal(afd_mdc_wq_e(q, &r), AFD_OK);
        assert_close(r.val, 5e-201, 1e-15, 0);
        assert_true(r.err <= 1e-14 * r.val && r.err >= fabs(r.val - 5e-201));
        afd_mdc_free(q);
        assert_int_equal(afd_mdc_alloc(1e-150, 1, 2, &q), AFD_OK);
        assert_close(afd_mdc_wq(q), 1e-300 / 6, 1e-14, 0);
        afd_mdc_free(q);
        assert_int_equal(afd_mdc_alloc(0.5e-200, 2, 1, &q), AFD_OK);
        assert_close(afd_mdc_wq(q), 1e-200, 1e-15, 0); /* rho D / 2, rho = 1e-200, D = 2 */
        afd_mdc_free(q);
    }
}

/* E[(A - c)+] D / a for A ~ Poisson(a), summed from the definition
 * sum_{k > c} (k - c) P(A = k) in long double logarithms (lgammal). */
static long double excess_wait_l(long c, long double a, long double service)
{
    long double s = 0;
    long k;
    for (k = c + 1; k <= c + 20000; k++)
        s += (long double)(k - c) *
             expl(logl(service) - logl(a) + (long double)k * logl(a) - a - lgammal((long double)k + 1));
    return s;
}

/* Far below saturation with many servers P(A > c) underflows; the mean
 * wait is then its first term E[(A - c)+] / lambda (relative O(P(A >= c)),
 * far below rounding), which itself underflows at D = 1 from about
 * c = 3600 at rho = 0.5.  It must come out finite, never NaN: exact where
 * a double holds it, 0 below. */
static void mdc_many_servers(void **state)
{
    static const long cs[] = {4000, 5000, 10000, 1000000};
    afd_result r;
    afd_mdc *q;
    size_t i;
    (void)state;
    /* D = 1e100 lifts c = 4000, a = 2000 (1.85e-341 D) into the doubles */
    assert_int_equal(afd_mdc_alloc(2e-97, 1e100, 4000, &q), AFD_OK);
    assert_int_equal(afd_mdc_wq_e(q, &r), AFD_OK);
    assert_close(r.val, (double)excess_wait_l(4000, 2000, 1e100L), 1e-10, 0);
    assert_true(r.err >= 0 && r.err < 1e-10 * r.val);
    afd_mdc_free(q);
    /* c = 3000, a = 1500 still runs the chain (P(A > c) = 1.6e-254): the
     * first term agrees with it to O(P(A >= c)) */
    assert_int_equal(afd_mdc_alloc(1500, 1, 3000, &q), AFD_OK);
    assert_close(afd_mdc_wq(q), (double)excess_wait_l(3000, 1500, 1), 1e-10, 0);
    afd_mdc_free(q);
    for (i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        const double a = 0.5 * (double)cs[i];
        /* the exact value is below the smallest subnormal (4.9e-324):
         * e^-787 at c = 4000 and smaller beyond */
        assert_true(excess_wait_l(cs[i], a, 1) < 1e-330L);
        assert_int_equal(afd_mdc_alloc(a, 1, (unsigned)cs[i], &q), AFD_OK);
        assert_int_equal(afd_mdc_wq_e(q, &r), AFD_OK);
        assert_true(r.val == 0);
        assert_true(r.err == 0);
        afd_mdc_free(q);
        {
            afd_mdc_approx ap;
            assert_int_equal(afd_mdc_approx_compare(a, 1, (unsigned)cs[i], r.val, &ap), AFD_OK);
            /* Cosmetatos and Allen-Cunneen underflow as well: no error */
            assert_true(ap.wq_cosmetatos == 0 && ap.err_cosmetatos == 0);
            assert_true(ap.wq_allen_cunneen == 0 && ap.err_allen_cunneen == 0);
            assert_true(isinf(ap.err_kingman));
        }
    }
}

/* Where P(A > c) is subnormal the chain's terms have lost their relative
 * precision (c = 1, rho = 5e-162 came out 18.6% high under a bound of
 * 4e-16): the mean wait must match Pollaczek-Khinchine for c = 1 and a
 * direct long double sum for c = 2, within its reported bound, on either
 * side of the underflow of P(A > c). */
static void mdc_subnormal_overflow(void **state)
{
    static const double rhos[] = {1e-170, 5e-162, 5e-161, 5e-158, 5e-150, 5e-140, 1e-20, 1e-14};
    static const double as2[] = {1e-110, 5e-108, 5e-107, 5e-104, 5e-100, 1e-60};
    afd_result r;
    afd_mdc *q;
    size_t i;
    (void)state;
    for (i = 0; i < sizeof rhos / sizeof rhos[0]; i++) {
        /* M/D/1, D = 1: Wq = rho / (2 (1 - rho)) */
        const long double ref = (long double)rhos[i] / (2 * (1 - (long double)rhos[i]));
        assert_int_equal(afd_mdc_alloc(rhos[i], 1, 1, &q), AFD_OK);
        assert_int_equal(afd_mdc_wq_e(q, &r), AFD_OK);
        if (!(fabsl(r.val - ref) <= r.err))
            fail_msg("rho=%g: Wq %.17g, P-K %.17Lg, bound %.3g", rhos[i], r.val, ref, r.err);
        assert_close(r.val, (double)ref, 1e-13, 0);
        afd_mdc_free(q);
    }
    for (i = 0; i < sizeof as2 / sizeof as2[0]; i++) {
        /* c = 2, D = 1, a = lambda: Wq = E[X] / lambda with E[X] =
         * E[(A - 2)+] (1 + O(a^2)), the O(a^2) below 1e-100 here; the sum
         * sum_{k > 2} (k - 2) a^k e^-a / k! in long double, term by term */
        const long double a = as2[i];
        long double term = expl(-a) * a * a / 2, ex = 0;
        long k;
        for (k = 3; k < 40; k++) {
            term *= a / k;
            ex += (k - 2) * term;
        }
        assert_int_equal(afd_mdc_alloc(as2[i], 1, 2, &q), AFD_OK);
        assert_int_equal(afd_mdc_wq_e(q, &r), AFD_OK);
        if (!(fabsl(r.val - ex / a) <= r.err))
            fail_msg("a=%g: Wq %.17g, sum %.17Lg, bound %.3g", as2[i], r.val, ex / a, r.err);
        assert_close(r.val, (double)(ex / a), 1e-13, 0);
        afd_mdc_free(q);
    }
    /* a = 5e-108 by hand, Wq = a^2 / 6 = 4.1667e-216 */
    assert_int_equal(afd_mdc_alloc(5e-108, 1, 2, &q), AFD_OK);
    assert_close(afd_mdc_wq(q), 25e-216 / 6, 1e-14, 0);
    afd_mdc_free(q);
}

static void mdc_heavy_traffic(void **state)
{
    static const int cs[] = {1, 4};
    size_t i;
    (void)state;
    /* Wq (1 - rho) -> D / (2c) as rho -> 1 (Kingman; Kollerstrom 1974),
     * approached monotonically; the values stay finite and accurate (see the
     * comparison with the roots at rho = 0.999 above). */
    for (i = 0; i < 2; i++) {
        const int c = cs[i];
        double prev_gap = 1, rho;
        for (rho = 0.9; rho < 0.9995; rho = 1 - (1 - rho) / 10) {
            afd_mdc *q;
            double ratio;
            assert_int_equal(afd_mdc_alloc(rho * c / 1.5, 1.5, c, &q), AFD_OK);
            ratio = afd_mdc_wq(q) * (1 - rho) * 2 * c / 1.5;
            assert_true(isfinite(ratio) && ratio < 1);
            assert_true(1 - ratio < prev_gap);
            prev_gap = 1 - ratio;
            afd_mdc_free(q);
        }
        assert_true(prev_gap < 0.003);
    }
}

/* FCFS with equal deterministic service: customer n starts at
 * max(arrival_n, start_{n-c} + D) (the server it takes is the one freed by
 * customer n - c).  Batch means give the standard errors. */
static void mdc_against_simulation(void **state)
{
    enum { C = 4, BATCHES = 40, PER_BATCH = 10000, WARMUP = 20000 };
    const double service = 1, lambda = 3.2, t1 = 0.5;
    double starts[C], arrival = 0, q90;
    double sum[4] = {0}, sum2[4] = {0}, acc[4] = {0};
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    afd_mdc *q;
    long n;
    int b, k;
    (void)state;
    gsl_rng_set(rng, 20240611);
    assert_int_equal(afd_mdc_alloc(lambda, service, C, &q), AFD_OK);
    q90 = afd_mdc_wait_quantile(q, 0.9);
    for (k = 0; k < C; k++)
        starts[k] = -INFINITY;
    for (n = 0; n < WARMUP + (long)BATCHES * PER_BATCH; n++) {
        double s, w;
        arrival += gsl_ran_exponential(rng, 1 / lambda);
        s = starts[n % C] + service;
        s = s > arrival ? s : arrival;
        starts[n % C] = s;
        w = s - arrival;
        if (n < WARMUP)
            continue;
        acc[0] += w;
        acc[1] += w > 0;
        acc[2] += w <= t1;
        acc[3] += w <= q90;
        if ((n - WARMUP + 1) % PER_BATCH == 0) {
            for (k = 0; k < 4; k++) {
                double m = acc[k] / PER_BATCH;
                sum[k] += m;
                sum2[k] += m * m;
                acc[k] = 0;
            }
        }
    }
    {
        const double exact[4] = {afd_mdc_wq(q), afd_mdc_p_wait(q), afd_mdc_wait_cdf(q, t1), 0.9};
        for (b = 0; b < 4; b++) {
            double mean = sum[b] / BATCHES;
            double var = (sum2[b] - BATCHES * mean * mean) / (BATCHES - 1);
            assert_within_se(mean, exact[b], sqrt(var / BATCHES), 5);
        }
    }
    afd_mdc_free(q);
    gsl_rng_free(rng);
}

/* ------------------------------------------------------- approximations */

static void erlang_c_closed_forms(void **state)
{
    static const double loads[] = {0.3, 1.3, 1.95};
    size_t i;
    int c;
    (void)state;
    /* c = 1: C = rho; c = 2: C = 2 rho^2 / (1 + rho) */
    assert_close(afd_erlang_c(0.37, 1), 0.37, 4 * DBL_EPSILON, 0);
    for (i = 0; i < 3; i++) {
        double rho = loads[i] / 2;
        assert_close(afd_erlang_c(loads[i], 2), 2 * rho * rho / (1 + rho), 1e-15, 0);
    }
    /* textbook form, summed in long double for c <= 30:
     * C = (a^c/c!)/(1-rho) / (sum_{k<c} a^k/k! + (a^c/c!)/(1-rho)) */
    for (c = 3; c <= 30; c += 3) {
        long double a = 0.83L * c, s = 0, top;
        int k;
        for (k = 0; k < c; k++)
            s += powl(a, k) / tgammal(k + 1);
        top = powl(a, c) / tgammal(c + 1) / (1 - a / c);
        assert_close(afd_erlang_c((double)a, c), (double)(top / (s + top)), 1e-13, 0);
    }
    /* no overflow for many servers: C stays in (0, 1) */
    assert_true(afd_erlang_c(9500, 10000) > 0 && afd_erlang_c(9500, 10000) < 1);
}

static void approximations(void **state)
{
    static const int cs[] = {2, 8, 64};
    static const double rhos[] = {0.9, 0.95, 0.99};
    size_t i, j;
    (void)state;
    /* c = 1: Cosmetatos and Allen-Cunneen are Pollaczek-Khinchine, Kingman
     * is Pollaczek-Khinchine / rho^2 */
    assert_close(afd_mdc_wq_cosmetatos(0.6, 1, 1), 0.75, 1e-15, 0);
    assert_close(afd_mdc_wq_allen_cunneen(0.6, 1, 1), 0.75, 1e-15, 0);
    assert_close(afd_mdc_wq_kingman(0.6, 1, 1), 0.75 / 0.36, 1e-15, 0);
    /* M/M/1: Wq = rho D / (1 - rho) */
    assert_close(afd_mmc_wq(0.6, 1, 1), 1.5, 1e-15, 0);
    /* c = 2 transcribed by hand: Wq(M/M/2) = C D / (2 - a), C = 2 rho^2/(1 + rho) */
    {
        const double rho = 0.7, a = 1.4, service = 0.5, lambda = a / service;
        const double mm2 = 2 * rho * rho / (1 + rho) * service / (2 - a);
        assert_close(afd_mmc_wq(lambda, service, 2), mm2, 1e-14, 0);
        assert_close(afd_mdc_wq_allen_cunneen(lambda, service, 2), mm2 / 2, 1e-14, 0);
        assert_close(afd_mdc_wq_cosmetatos(lambda, service, 2),
                     mm2 / 2 * (1 + (1 - rho) * (sqrt(14.0) - 2) / (32 * rho)), 1e-14, 0);
        assert_close(afd_mdc_wq_kingman(lambda, service, 2), 1 / (2 * lambda * (1 - rho)), 1e-14,
                     0);
    }
    /* the errors documented in afd_queue.h, at rho >= 0.9 */
    for (i = 0; i < 3; i++)
        for (j = 0; j < 3; j++) {
            const int c = cs[i];
            const double lambda = rhos[j] * c, king = afd_mdc_wq_kingman(lambda, 1, c);
            afd_mdc *q;
            double wq;
            assert_int_equal(afd_mdc_alloc(lambda, 1, c, &q), AFD_OK);
            wq = afd_mdc_wq(q);
            afd_mdc_free(q);
            assert_close(afd_mdc_wq_cosmetatos(lambda, 1, c), wq, 0.024, 0);
            assert_true(afd_mdc_wq_allen_cunneen(lambda, 1, c) < wq);
            assert_true(afd_mdc_wq_allen_cunneen(lambda, 1, c) > 0.79 * wq);
            assert_true(king > wq);
        }
}

/* ---------------------------------------------------------- error paths */

static double not_finite_inside(double x, void *p)
{
    (void)p;
    return x < 0.3 ? -1 : x > 0.7 ? 1 : NAN; /* GSL's Brent refuses NaN */
}

static void error_paths(void **state)
{
    afd_result r;
    afd_mdc *q = (afd_mdc *)&r;
    double n, root, tau, excess;
    (void)state;

    /* M/D/1 */
    assert_int_equal(afd_md1_wq_e(0, 1, &r), AFD_EINVAL);
    assert_true(isnan(r.val) && isnan(r.err));
    assert_int_equal(afd_md1_wq_e(1, -2, &r), AFD_EINVAL);
    assert_int_equal(afd_md1_wq_e(NAN, 1, &r), AFD_EINVAL);
    assert_int_equal(afd_md1_wq_e(1, INFINITY, &r), AFD_EINVAL);
    assert_int_equal(afd_md1_wq_e(1, 1, &r), AFD_EUNSTABLE);
    assert_int_equal(afd_md1_wq_e(2, 0.75, &r), AFD_EUNSTABLE);
    assert_true(isnan(afd_md1_wq(1.5, 1)));
    assert_int_equal(afd_md1_wait_cdf_e(0.5, 1, NAN, &r), AFD_EINVAL);
    assert_true(isnan(r.val));
    assert_int_equal(afd_md1_wait_cdf_e(-0.5, 1, 1, &r), AFD_EINVAL);
    assert_int_equal(afd_md1_wait_cdf_e(1.5, 1, 1, &r), AFD_EUNSTABLE);
    assert_true(isnan(afd_md1_wait_cdf(1, 1, 1)));
    /* work limit: rho = 1 - 1e-9 and t = 1e8 D */
    assert_int_equal(afd_md1_wait_cdf_e(1 - 1e-9, 1, 1e8, &r), AFD_ELIMIT);
    assert_int_equal(afd_md1_wait_quantile_e(0.5, 1, 0, &r), AFD_EINVAL);
    assert_int_equal(afd_md1_wait_quantile_e(0.5, 1, 1, &r), AFD_EINVAL);
    assert_int_equal(afd_md1_wait_quantile_e(0.5, 1, -0.2, &r), AFD_EINVAL);
    assert_int_equal(afd_md1_wait_quantile_e(0.5, 1, NAN, &r), AFD_EINVAL);
    assert_int_equal(afd_md1_wait_quantile_e(0, 1, 0.5, &r), AFD_EINVAL);
    assert_int_equal(afd_md1_wait_quantile_e(1, 1, 0.5, &r), AFD_EUNSTABLE);
    assert_true(isnan(r.val));
    assert_true(isnan(afd_md1_wait_quantile(0.5, 1, 2)));

    /* M/D/c allocation */
    assert_int_equal(afd_mdc_alloc(0, 1, 2, &q), AFD_EINVAL);
    assert_null(q);
    assert_int_equal(afd_mdc_alloc(1, 0, 2, &q), AFD_EINVAL);
    assert_int_equal(afd_mdc_alloc(1, NAN, 2, &q), AFD_EINVAL);
    assert_int_equal(afd_mdc_alloc(NAN, 1, 2, &q), AFD_EINVAL);
    assert_int_equal(afd_mdc_alloc(1, 1, 0, &q), AFD_EINVAL);
    assert_int_equal(afd_mdc_alloc(1, 1, (unsigned)INT_MAX + 1, &q), AFD_ELIMIT); /* c > INT_MAX */
    assert_int_equal(afd_mdc_alloc(2, 1, 2, &q), AFD_EUNSTABLE); /* rho = 1 */
    assert_int_equal(afd_mdc_alloc(1e300, 1e300, 2, &q), AFD_EUNSTABLE);
    assert_null(q);
    /* rho = 0.99999 with 64 servers needs ~3.5e6 states of width ~190 */
    assert_int_equal(afd_mdc_alloc(0.99999 * 64, 1, 64, &q), AFD_ELIMIT);
    assert_null(q);

    /* M/D/c queries */
    assert_int_equal(afd_mdc_wq_e(NULL, &r), AFD_EINVAL);
    assert_true(isnan(r.val));
    assert_int_equal(afd_mdc_p_wait_e(NULL, &r), AFD_EINVAL);
    assert_int_equal(afd_mdc_wait_cdf_e(NULL, 1, &r), AFD_EINVAL);
    assert_int_equal(afd_mdc_wait_sf_e(NULL, 1, &r), AFD_EINVAL);
    assert_int_equal(afd_mdc_wait_quantile_e(NULL, 0.5, &r), AFD_EINVAL);
    assert_int_equal(afd_mdc_number_pmf_e(NULL, 0, &r), AFD_EINVAL);
    assert_true(isnan(afd_mdc_wq(NULL)) && isnan(afd_mdc_p_wait(NULL)));
    assert_true(isnan(afd_mdc_tail_bound(NULL)) && afd_mdc_size(NULL) == 0);
    afd_mdc_free(NULL);
    assert_int_equal(afd_mdc_alloc(1.5, 1, 2, &q), AFD_OK);
    assert_int_equal(afd_mdc_wait_cdf_e(q, NAN, &r), AFD_EINVAL);
    assert_true(isnan(r.val));
    assert_true(isnan(afd_mdc_wait_cdf(q, NAN)) && isnan(afd_mdc_wait_sf(q, NAN)));
    assert_int_equal(afd_mdc_wait_quantile_e(q, 0, &r), AFD_EINVAL);
    assert_int_equal(afd_mdc_wait_quantile_e(q, 1, &r), AFD_EINVAL);
    assert_int_equal(afd_mdc_wait_quantile_e(q, NAN, &r), AFD_EINVAL);
    assert_true(isnan(afd_mdc_wait_quantile(q, 1.5)));
    assert_int_equal(afd_mdc_number_pmf_e(q, -1, &r), AFD_EINVAL);
    afd_mdc_free(q);

    /* approximations */
    assert_int_equal(afd_erlang_c_e(0, 2, &r), AFD_EINVAL);
    assert_int_equal(afd_erlang_c_e(NAN, 2, &r), AFD_EINVAL);
    assert_int_equal(afd_erlang_c_e(1, 0, &r), AFD_EINVAL);
    assert_int_equal(afd_erlang_c_e(2, 2, &r), AFD_EUNSTABLE);
    assert_true(isnan(r.val) && isnan(afd_erlang_c(3, 2)));
    assert_int_equal(afd_mmc_wq_e(-1, 1, 2, &r), AFD_EINVAL);
    assert_int_equal(afd_mmc_wq_e(3, 1, 2, &r), AFD_EUNSTABLE);
    assert_true(isnan(afd_mmc_wq(1, 1, 0)));
    assert_int_equal(afd_mdc_wq_cosmetatos_e(1, 0, 2, &r), AFD_EINVAL);
    assert_int_equal(afd_mdc_wq_cosmetatos_e(2, 1, 2, &r), AFD_EUNSTABLE);
    assert_true(isnan(r.val) && isnan(afd_mdc_wq_cosmetatos(2, 1, 1)));
    assert_int_equal(afd_mdc_wq_allen_cunneen_e(1, 1, 0, &r), AFD_EINVAL);
    assert_int_equal(afd_mdc_wq_allen_cunneen_e(5, 1, 2, &r), AFD_EUNSTABLE);
    assert_true(isnan(r.val) && isnan(afd_mdc_wq_allen_cunneen(NAN, 1, 1)));
    assert_int_equal(afd_mdc_wq_kingman_e(INFINITY, 1, 2, &r), AFD_EINVAL);
    assert_int_equal(afd_mdc_wq_kingman_e(2, 1, 2, &r), AFD_EUNSTABLE);
    assert_true(isnan(r.val) && isnan(afd_mdc_wq_kingman(1, 1, 1)));

    /* internal helpers (compiled into this test): the numerical failures */
    assert_int_equal(afd_priv_brent(not_finite_inside, NULL, 0, 1, 0, 1e-12, &root), AFD_ENUMERIC);
    assert_true(isnan(root));
    assert_int_equal(afd_priv_brent(not_finite_inside, NULL, 1, 0, 0, 1e-12, &root), AFD_ENUMERIC);
    assert_int_equal(afd_priv_queue_tail(2, 2, 5, 1, &tau, &excess), AFD_EINVAL);
    assert_true(tau == 1 && excess == INFINITY);
    assert_int_equal(afd_priv_queue_truncation(0.999, 1, 1e-300, 1, 1000, &n), AFD_ELIMIT);
    assert_true(isnan(n));
    assert_true(isnan(afd_priv_poisson_pmf(-1, 1)));
}

/* The approximations beside an exact value, by hand.  c = 1, lambda = 1/2,
 * D = 1: M/M/1 waits rho D / (1 - rho) = 1; Cosmetatos' correction is 1 at
 * c = 1 and Allen-Cunneen halves it, so both give 1/2, the exact M/D/1 mean
 * wait rho D / (2 (1 - rho)) (errors 0); Kingman gives c / (2 lambda (c - a))
 * = 2, error 3 = 1/rho^2 - 1.  c = 2, lambda = 1, D = 1: Erlang B_1 = 1/2,
 * B_2 = 1/5, C = (1/5) / (1 - (1/2)(4/5)) = 1/3, Wq(M/M/2) = C D / (c - a) =
 * 1/3; Allen-Cunneen 1/6, Cosmetatos (1/6) (1 + (sqrt 14 - 2) / 32), Kingman
 * 2 / (2 (2 - 1)) = 1; against wq_exact = 1/8 the errors are
 * (approx - 1/8) / (1/8). */
static void approx_compare_by_hand(void **state)
{
    afd_mdc_approx ap;
    double cos2 = (1.0 / 6) * (1 + (sqrt(14) - 2) / 32);
    (void)state;
    assert_int_equal(afd_mdc_approx_compare(0.5, 1, 1, 0.5, &ap), AFD_OK);
    assert_close(ap.wq_cosmetatos, 0.5, 1e-15, 0);
    assert_close(ap.wq_allen_cunneen, 0.5, 1e-15, 0);
    assert_close(ap.wq_kingman, 2, 1e-15, 0);
    assert_close(ap.err_cosmetatos, 0, 0, 4e-16);
    assert_close(ap.err_allen_cunneen, 0, 0, 4e-16);
    assert_close(ap.err_kingman, 3, 1e-15, 0);
    assert_int_equal(afd_mdc_approx_compare(1, 1, 2, 0.125, &ap), AFD_OK);
    assert_close(ap.wq_cosmetatos, cos2, 1e-15, 0);
    assert_close(ap.wq_allen_cunneen, 1.0 / 6, 1e-15, 0);
    assert_close(ap.wq_kingman, 1, 1e-15, 0);
    assert_close(ap.err_cosmetatos, cos2 * 8 - 1, 1e-14, 0);
    assert_close(ap.err_allen_cunneen, 1.0 / 3, 1e-14, 0);
    assert_close(ap.err_kingman, 7, 1e-15, 0);
    /* an exact wait of 0 or NaN, an unstable queue, no output */
    assert_int_equal(afd_mdc_approx_compare(1, 1, 2, 0, &ap), AFD_OK);
    assert_true(isinf(ap.err_kingman) && ap.err_kingman > 0);
    assert_int_equal(afd_mdc_approx_compare(1, 1, 2, NAN, &ap), AFD_OK);
    assert_true(isnan(ap.err_cosmetatos) && ap.wq_kingman == 1);
    assert_int_equal(afd_mdc_approx_compare(2, 1, 2, 0.5, &ap), AFD_EUNSTABLE);
    assert_true(isnan(ap.wq_cosmetatos) && isnan(ap.err_kingman));
    assert_int_equal(afd_mdc_approx_compare(1, 1, 0, 0.5, &ap), AFD_EINVAL);
    assert_int_equal(afd_mdc_approx_compare(1, 1, 2, 0.5, NULL), AFD_EINVAL);
}

/* routed.c's least-load forms against the formulas written out here: on
 * two servers at rho = 0.73, es = 2.385, Erlang's C is 2 rho^2 / (1 + rho)
 * and M/M/2's wait C es / (2 (1 - rho)); least adds 0.6 (1 - 1/2) C es, all
 * scaled by (1 + cs2) / 2.  power-of-two on two servers is least (both are
 * drawn), on n servers the mean field sum_{i>=2} rho^(2^i - 2) es moved
 * toward it by 2 / n; on one server both are Pollaczek-Khinchine. */
static void routed_least_load_forms(void **state)
{
    const double rho = 0.73, es = 2.385, c2 = 2 * rho * rho / (1 + rho);
    const double mm2 = c2 * es / (2 * (1 - rho)), least2 = mm2 + 0.6 * 0.5 * c2 * es;
    double mf = 0, wq, wq2;
    afd_routed_result r;
    int i;
    (void)state;
    for (i = 2; i < 12; i++)
        mf += pow(rho, pow(2, i) - 2) * es;
    assert_int_equal(afd_routed_wait(AFD_ROUTED_LEAST, 2 * rho / es, es, 2 * es * es, 2, &r),
                     AFD_OK);
    assert_close(r.wq, least2, 1e-12, 0);
    assert_close(r.pwait, c2, 1e-12, 0);
    /* deterministic service (cs2 = 0): half of it */
    assert_int_equal(afd_routed_wq(AFD_ROUTED_LEAST, 2 * rho / es, es, es * es, 2, &wq), AFD_OK);
    assert_close(wq, least2 / 2, 1e-12, 0);
    assert_int_equal(afd_routed_wq(AFD_ROUTED_POWER_OF_TWO, 2 * rho / es, es, 2 * es * es, 2, &wq2),
                     AFD_OK);
    assert_close(wq2, least2, 1e-12, 0);
    /* eight servers: the mean field plus a quarter of the gap to least(2) */
    assert_int_equal(afd_routed_wait(AFD_ROUTED_POWER_OF_TWO, 8 * rho / es, es, 2 * es * es, 8, &r),
                     AFD_OK);
    assert_close(r.wq, mf + 0.25 * (least2 - mf), 1e-12, 0);
    assert_close(r.pwait, rho * rho + 0.25 * (c2 - rho * rho), 1e-12, 0);
    /* one server: M/G/1, Wq = lambda E[S^2] / (2 (1 - rho)) */
    assert_int_equal(afd_routed_wq(AFD_ROUTED_LEAST, rho / es, es, 1.5 * es * es, 1, &wq), AFD_OK);
    assert_close(wq, rho / es * 1.5 * es * es / (2 * (1 - rho)), 1e-12, 0);
    assert_int_equal(afd_routed_wq(AFD_ROUTED_POWER_OF_TWO, rho / es, es, 1.5 * es * es, 1, &wq),
                     AFD_OK);
    assert_close(wq, rho / es * 1.5 * es * es / (2 * (1 - rho)), 1e-12, 0);
    /* least lies between the shared queue and round-robin */
    assert_int_equal(afd_routed_wq(AFD_ROUTED_LEAST, 4 * rho / es, es, 2 * es * es, 4, &wq), AFD_OK);
    assert_int_equal(afd_routed_wq(AFD_ROUTED_GLOBAL, 4 * rho / es, es, 2 * es * es, 4, &wq2),
                     AFD_OK);
    assert_true(wq > wq2);
    assert_int_equal(afd_routed_wq(AFD_ROUTED_ROUND_ROBIN, 4 * rho / es, es, 2 * es * es, 4, &wq2),
                     AFD_OK);
    assert_true(wq < wq2);
}

/* E_4/M/1's sojourn is exponential of rate mu (1 - sigma) (Kleinrock,
 * Sec. 6.4), so its P90 is ln 10 / (mu (1 - sigma)), sigma the root of
 * sigma = (L / (L + mu (1 - sigma)))^4 found here by bisection; M/M/1's
 * (random) ln 10 / (mu - lambda / n).  afd_routed_quantile convolves
 * routed.c's wait law with the exponential service numerically. */
static void routed_tails_exact(void **state)
{
    const double es = 1.37, mu = 1 / es, L = 4 * 0.83 * mu;
    double lo = 0, hi = 1, s = 0.5, t;
    afd_routed_result r;
    int k;
    (void)state;
    for (k = 0; k < 200; k++) {
        s = (lo + hi) / 2;
        if (s < pow(L / (L + mu * (1 - s)), 4))
            lo = s;
        else
            hi = s;
    }
    assert_int_equal(afd_routed_wait(AFD_ROUTED_ROUND_ROBIN, L, es, 2 * es * es, 4, &r), AFD_OK);
    assert_close(r.pwait, s, 1e-12, 0);
    assert_int_equal(afd_routed_quantile(r.wq, r.pwait, 0, es, 0.9, &t), AFD_OK);
    assert_close(t, log(10) / (mu * (1 - s)), 1e-10, 0);
    assert_int_equal(afd_routed_quantile(r.wq, r.pwait, 0, es, 0.99, &t), AFD_OK);
    assert_close(t, log(100) / (mu * (1 - s)), 1e-10, 0);
    assert_int_equal(afd_routed_wait(AFD_ROUTED_RANDOM, L, es, 2 * es * es, 4, &r), AFD_OK);
    assert_int_equal(afd_routed_quantile(r.wq, r.pwait, 0.5, es, 0.9, &t), AFD_OK);
    assert_close(t, 0.5 + log(10) / (mu - L / 4), 1e-10, 0);
    /* no service time: the wait's own quantile, p e^{-p t / wq} = 0.1 */
    assert_int_equal(afd_routed_quantile(2.0, 0.4, 1.0, 0, 0.9, &t), AFD_OK);
    assert_close(t, 1.0 + 5 * log(4), 1e-14, 0);
    assert_int_equal(afd_routed_quantile(2.0, 0.05, 1.0, 0, 0.9, &t), AFD_OK);
    assert_close(t, 1.0, 0, 0); /* inside the atom at zero */
    /* no wait: the exponential's quantile */
    assert_int_equal(afd_routed_quantile(0, 0, 0, 3.0, 0.9, &t), AFD_OK);
    assert_close(t, 3 * log(10), 1e-14, 0);
    /* wait and service of the same rate: P(T > u) = (1 - p) e^{-u} + p (1 + u) e^{-u} */
    assert_int_equal(afd_routed_quantile(0.5, 0.5, 0, 1.0, 0.9, &t), AFD_OK);
    assert_close(0.5 * exp(-t) + 0.5 * (1 + t) * exp(-t), 0.1, 1e-10, 0);
    assert_int_equal(afd_routed_quantile(1, 0.5, 0, 1, 1, &t), AFD_EINVAL);
    assert_true(isnan(t));
    assert_int_equal(afd_routed_quantile(1, 0, 0, 1, 0.9, &t), AFD_EINVAL);
    assert_int_equal(afd_routed_quantile(1, 1.5, 0, 1, 0.9, &t), AFD_EINVAL);
    assert_int_equal(afd_routed_quantile(NAN, 0.5, 0, 1, 0.9, &t), AFD_EINVAL);
    assert_int_equal(afd_routed_wait(AFD_ROUTED_LEAST, 4, 1, 1, 4, &r), AFD_EUNSTABLE);
    assert_true(isnan(r.wq) && isnan(r.pwait));
    assert_int_equal(afd_routed_wait((afd_routed_kind)99, 1, 1, 1, 4, &r), AFD_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pk_by_hand),
        cmocka_unit_test(md1_cdf_against_erlang),
        cmocka_unit_test(md1_cdf_integrates_to_pk),
        cmocka_unit_test(md1_stable_at_high_load),
        cmocka_unit_test(md1_quantiles),
        cmocka_unit_test(mdc_c1_is_md1),
        cmocka_unit_test(mdc_against_crommelin_roots),
        cmocka_unit_test(mdc_against_dense_solve),
        cmocka_unit_test(mdc_tail_integrates_to_mean),
        cmocka_unit_test(mdc_distribution_shape),
        cmocka_unit_test(mdc_quantile_round_trips),
        cmocka_unit_test(mdc_light_traffic),
        cmocka_unit_test(mdc_many_servers),
        cmocka_unit_test(mdc_subnormal_overflow),
        cmocka_unit_test(mdc_heavy_traffic),
        cmocka_unit_test(mdc_against_simulation),
        cmocka_unit_test(erlang_c_closed_forms),
        cmocka_unit_test(approximations),
        cmocka_unit_test(error_paths),
        cmocka_unit_test(approx_compare_by_hand),
        cmocka_unit_test(routed_least_load_forms),
        cmocka_unit_test(routed_tails_exact),
    };
    gsl_set_error_handler_off();
    RUN_TESTS(tests);
}
