/* test_ratio.c: cycle times and the provisioning rules against independent
 * evaluations (closed forms, the definition of eq. 9 integrated directly,
 * dense grids, brute force). */
#include <config.h>

#include <float.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_integration.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sf_erf.h>

#include "test_util.h"

#include "afd_barrier.h"
#include "afd_ratio.h"

static afd_system paper(double B)
{
    afd_system s;
    assert_int_equal(afd_hw_preset("paper-910c", &s.hw), AFD_OK);
    s.B = B;
    s.theta = 599;            /* geometric mu_P = 100, mu_D = 500 */
    s.nu = sqrt(259400.0);
    return s;
}

static afd_system custom(double aa, double ba, double af, double bf, double ac, double bc,
                         double B, double theta, double nu)
{
    afd_system s;
    s.hw = (afd_hw){.alpha_a = aa,
                    .beta_a = ba,
                    .alpha_f = af,
                    .beta_f = bf,
                    .alpha_c = ac,
                    .beta_c = bc,
                    .unit = "t"};
    s.B = B;
    s.theta = theta;
    s.nu = nu;
    return s;
}

/* Thr_mf written out from eq. (8) and (1), independently of the library. */
static double thr_mf(const afd_system *s, double r)
{
    const afd_hw *h = &s->hw;
    double mu = h->alpha_a * s->B * s->theta + h->beta_a;
    double tc = h->alpha_c * r * s->B + h->beta_c, tf = h->alpha_f * r * s->B + h->beta_f;
    double tau = mu > tc ? mu : tc;
    tau = tau > tf ? tau : tf;
    return r * s->B / ((r + 1) * tau);
}

/* ---- the paper's configuration */

static void paper_mean_field(void **state)
{
    static const double Bs[] = {128, 256, 512};
    /* Values from the paper's own eq. (10) (its printed 7.08,
     * 9.3 and 10.31 differ; see docs/reproduction.md). */
    static const double printed_formula[] = {7.2015, 9.5547, 10.7313};
    size_t k;
    (void)state;
    for (k = 0; k < 3; k++) {
        afd_system s = paper(Bs[k]);
        afd_mf_result mf;
        /* By hand: the attention region ends where mu_A meets the FFN line:
         * r = (alpha_a B theta + beta_a - beta_f) / (alpha_f B). */
        double hand = (0.00165 * Bs[k] * 599 + 50 - 100) / (0.083 * Bs[k]);
        assert_int_equal(afd_ratio_mf(&s, &mf, NULL), AFD_OK);
        assert_int_equal(mf.which, 0);
        assert_close(mf.r, hand, 1e-14, 0);
        assert_close(mf.r, printed_formula[k], 0, 5e-5);
        assert_close(mf.thr, thr_mf(&s, hand), 1e-14, 0);
    }
}

static void paper_barrier_aware(void **state)
{
    afd_system s = paper(256);
    double rs[128];
    afd_cycle g, c;
    int k;
    (void)state;
    for (k = 0; k < 128; k++)
        rs[k] = k + 1;
    assert_int_equal(afd_ratio_g(&s, rs, 128, &g), AFD_OK);
    /* an integer next to r*_mf = 9.55, with a throughput no mean-field
     * evaluation can beat */
    assert_true(g.r == 9 || g.r == 10);
    for (k = 1; k <= 128; k++) {
        assert_int_equal(afd_cycle_eval(&s, k, &c), AFD_OK);
        assert_true(c.thr_g <= g.thr_g);
        assert_true(c.tau_g >= c.tau_mf * (1 - 1e-12)); /* Jensen: the barrier only costs */
    }
}

/* ---- tau_G */

static void tau_g_r1_closed_form(void **state)
{
    static const double thetas[] = {50, 450, 599, 900, 2000};
    size_t k;
    (void)state;
    for (k = 0; k < 5; k++) {
        afd_system s = paper(256);
        afd_cycle c;
        double mu, sig, g, z, expect;
        s.theta = thetas[k];
        s.nu = 2.385 * thetas[k];
        assert_int_equal(afd_cycle_eval(&s, 1, &c), AFD_OK);
        mu = 0.00165 * 256 * s.theta + 50;
        sig = 0.00165 * 16 * s.nu;
        g = fmax(0.022 * 256 + 20, 0.083 * 256 + 100);
        z = (g - mu) / sig;
        /* Appendix A.4: r = 1 integral = phi(z) - z (1 - Phi(z)) */
        expect = g + sig * (gsl_ran_ugaussian_pdf(z) - z * gsl_sf_erf_Q(z));
        assert_close(c.tau_g, expect, 1e-12, 0);
    }
}

static void tau_g_to_tau_mf(void **state)
{
    double r;
    (void)state;
    for (r = 1; r <= 32; r *= 2) {
        afd_system s = paper(256);
        afd_cycle c, c0;
        s.nu = 1e-7; /* sigma_A -> 0 */
        assert_int_equal(afd_cycle_eval(&s, r, &c), AFD_OK);
        assert_close(c.tau_g, c.tau_mf, 1e-9, 0);
        s.nu = 0; /* exactly: Theorem 4.3, W = B theta */
        assert_int_equal(afd_cycle_eval(&s, r, &c0), AFD_OK);
        assert_close(c0.tau_g, c0.tau_mf, 0, 0);
    }
}

/* eq. (9) by its definition: E[max(mu_A + sigma_A M_r, G)] integrated
 * against the density r phi Phi^(r-1) with adaptive QAG on short pieces. */
struct def {
    double mu, sig, g, r;
};

static double def_integrand(double m, void *p)
{
    const struct def *d = p;
    double dens = d->r * gsl_ran_ugaussian_pdf(m) *
                  pow(m >= 0 ? 1 - gsl_sf_erf_Q(m) : gsl_sf_erf_Q(-m), d->r - 1);
    return fmax(d->mu + d->sig * m, d->g) * dens;
}

static void tau_g_against_definition(void **state)
{
    static const double rs[] = {2, 8, 12, 24, 64};
    gsl_integration_workspace *w = gsl_integration_workspace_alloc(1000);
    size_t k;
    (void)state;
    for (k = 0; k < sizeof rs / sizeof rs[0]; k++) {
        afd_system s = paper(256);
        afd_cycle c;
        struct def d;
        gsl_function f = {def_integrand, &d};
        double total = 0, a;
        assert_int_equal(afd_cycle_eval(&s, rs[k], &c), AFD_OK);
        d.mu = c.mu_a;
        d.sig = c.sigma_a;
        d.g = fmax(c.t_comm, c.t_ffn);
        d.r = rs[k];
        for (a = -12; a < 12; a += 0.25) {
            double v, e;
            gsl_integration_qag(&f, a, a + 0.25, 0, 1e-13, 1000, GSL_INTEG_GAUSS61, w, &v, &e);
            total += v;
        }
        assert_close(c.tau_g, total, 1e-11, 0);
        assert_true(c.tau_g_err < 1e-9 * c.tau_g);
    }
    gsl_integration_workspace_free(w);
}

/* ---- Theorem 4.4: each candidate of eq. (10) wins somewhere */

static void each_candidate_wins(void **state)
{
    afd_mf_result mf;
    afd_system s;
    (void)state;
    /* 0: Attention meets FFN at (mu_A - beta_f)/(alpha_f B) (the paper) */
    s = paper(256);
    assert_int_equal(afd_ratio_mf(&s, &mf, NULL), AFD_OK);
    assert_int_equal(mf.which, 0);
    /* 1: communication-bound everywhere (comm line above FFN for all r > 0,
     * Attention negligible): Thr = r/((r+1)(r + 4)) peaks at sqrt(4/1) = 2 */
    s = custom(1e-6, 0, 0.5, 1, 1, 4, 1, 1, 1);
    assert_int_equal(afd_ratio_mf(&s, &mf, NULL), AFD_OK);
    assert_int_equal(mf.which, 1);
    assert_close(mf.r, 2, 1e-15, 0);
    assert_close(mf.thr, 2.0 / (3 * 6), 1e-12, 0);
    /* 2: FFN-bound everywhere: Thr = r/((r+1)(r + 9)) peaks at 3 */
    s = custom(1e-6, 0, 1, 9, 0.1, 0.5, 1, 1, 1);
    assert_int_equal(afd_ratio_mf(&s, &mf, NULL), AFD_OK);
    assert_int_equal(mf.which, 2);
    assert_close(mf.r, 3, 1e-15, 0);
    assert_close(mf.thr, 3.0 / (4 * 12), 1e-12, 0);
    /* 3: a flat, high communication line crossed by a steep FFN line at
     * (10 - 0.5)/(2 - 0.1) = 5; both stationary points lie on the wrong
     * side of the kink (sqrt(100) = 10 > 5, sqrt(0.25) = 0.5 < 5) */
    s = custom(1e-6, 0, 2, 0.5, 0.1, 10, 1, 1, 1);
    assert_int_equal(afd_ratio_mf(&s, &mf, NULL), AFD_OK);
    assert_int_equal(mf.which, 3);
    assert_close(mf.r, 5, 1e-14, 0);
    assert_close(mf.thr, 5.0 / (6 * 10.5), 1e-12, 0);
}

/* The rule against a dense grid of Thr_mf over random systems: no r beats
 * the chosen candidate, and the grid's best approaches it. */
static void mean_field_against_grid(void **state)
{
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    int trial;
    (void)state;
    gsl_rng_set(rng, 11);
    for (trial = 0; trial < 300; trial++) {
        afd_system s;
        afd_mf_result mf;
        double best = 0, hi, r;
        afd_hw_init(&s.hw);
        s.hw.alpha_a = gsl_ran_exponential(rng, 1e-3);
        s.hw.beta_a = gsl_ran_exponential(rng, 50);
        s.hw.alpha_f = gsl_ran_exponential(rng, 0.1);
        s.hw.beta_f = gsl_ran_exponential(rng, 100);
        s.hw.alpha_c = gsl_rng_uniform(rng) < 0.2 ? 0 : gsl_ran_exponential(rng, 0.05);
        s.hw.beta_c = gsl_ran_exponential(rng, 30);
        s.B = 1 + gsl_rng_uniform_int(rng, 512);
        s.theta = gsl_ran_exponential(rng, 800);
        s.nu = 0;
        if (afd_ratio_mf(&s, &mf, NULL) != AFD_OK)
            continue;
        hi = 4 * mf.r + 4;
        for (r = hi / 200000; r <= hi; r += hi / 200000) {
            double t = thr_mf(&s, r);
            if (t > best)
                best = t;
        }
        if (best > mf.thr * (1 + 1e-12))
            fail_msg("trial %d: grid %.17g beats rule %.17g (r* = %g)", trial, best, mf.thr,
                     mf.r);
        assert_close(best, mf.thr, 1e-4, 0);
    }
    gsl_rng_free(rng);
}

static void barrier_free_rule_picks_best_integer(void **state)
{
    afd_system s = paper(256);
    double rs[64], best = 0, best_r = 0;
    afd_cycle g;
    int k;
    (void)state;
    s.nu = 0;
    for (k = 0; k < 64; k++) {
        rs[k] = k + 1;
        if (thr_mf(&s, k + 1) > best) {
            best = thr_mf(&s, k + 1);
            best_r = k + 1;
        }
    }
    assert_int_equal(afd_ratio_g(&s, rs, 64, &g), AFD_OK);
    assert_close(g.r, best_r, 0, 0);
    assert_close(g.thr_g, best, 1e-14, 0);
    assert_int_equal(afd_ratio_g(&s, rs, 0, &g), AFD_EEMPTY);
}

/* ---- xA-yF */

static void topology_against_brute_force(void **state)
{
    afd_system s = paper(256);
    afd_topology best[5];
    size_t found;
    unsigned x, y, bx = 0, by = 0;
    double bthr = 0;
    (void)state;
    s.hw.beta_f = 400; /* a configuration whose optimum is not an integer ratio */
    assert_int_equal(afd_topology_search(&s, 40, best, 5, &found), AFD_OK);
    assert_int_equal(found, 5);
    /* every pair, reduced or not */
    for (y = 1; y < 40; y++)
        for (x = 1; x + y <= 40; x++) {
            afd_cycle c;
            assert_int_equal(afd_cycle_topology(&s, x, y, &c), AFD_OK);
            if (c.thr_g > bthr) {
                bthr = c.thr_g;
                bx = x;
                by = y;
            }
        }
    assert_int_equal(best[0].x, bx);
    assert_int_equal(best[0].y, by);
    assert_close(best[0].cycle.thr_g, bthr, 0, 0);
    assert_true(best[0].y > 1); /* not an rA-1F bundle */
    assert_true(best[1].cycle.thr_g <= best[0].cycle.thr_g);
    assert_true(best[4].cycle.thr_g <= best[3].cycle.thr_g);
    /* same r, bigger barrier: 2x-2y never beats x-y; strictly worse where
     * the Attention barrier binds (paper coefficients at r = 2) */
    {
        afd_cycle a, b;
        afd_cycle_topology(&s, 7, 2, &a);
        afd_cycle_topology(&s, 14, 4, &b);
        assert_close(a.r, b.r, 0, 0);
        assert_true(a.thr_g >= b.thr_g);
        s = paper(256);
        afd_cycle_topology(&s, 2, 1, &a);
        afd_cycle_topology(&s, 4, 2, &b);
        assert_true(a.thr_g > b.thr_g * (1 + 1e-3));
    }
}

/* ---- delta-method standard error */

static void standard_error_of_r(void **state)
{
    afd_system s = paper(256);
    double r_cont, se;
    (void)state;
    /* r*_mf = (alpha_a B theta + beta_a - beta_f)/(alpha_f B): dr/dtheta =
     * alpha_a / alpha_f, independent of nu */
    assert_int_equal(afd_ratio_se(&s, 'm', 0, 1, 128, 4.0, 7.0, 3.0, &r_cont, &se), AFD_OK);
    assert_close(se, 0.00165 / 0.083 * 4.0, 1e-6, 0);
    assert_close(r_cont, 9.5546686746987952, 1e-12, 0);
    /* closed-form workloads: no error */
    assert_int_equal(afd_ratio_se(&s, 'g', 10, 1, 128, 0, 0, 0, &r_cont, &se), AFD_OK);
    assert_close(se, 0, 0, 0);
    assert_true(r_cont > 9 && r_cont < 11);
    /* the g rule moves with theta like the mean-field one does, to first order */
    assert_int_equal(afd_ratio_se(&s, 'g', 10, 1, 128, 4.0, 0, 0, &r_cont, &se), AFD_OK);
    assert_close(se, 0.00165 / 0.083 * 4.0, 0.3, 0);
    /* the continuous optimum stays inside the feasible set */
    assert_int_equal(afd_ratio_se(&s, 'g', 12, 12, 128, 4.0, 0, 0, &r_cont, &se), AFD_OK);
    assert_true(r_cont >= 12 && r_cont <= 13);
    assert_int_equal(afd_ratio_se(&s, 'x', 10, 1, 128, 4.0, 0, 0, &r_cont, &se), AFD_EINVAL);
    /* unknown standard errors (one request): the optimum, with se NaN */
    {
        double r0, se0;
        assert_int_equal(afd_ratio_se(&s, 'g', 10, 1, 128, 0, 0, 0, &r0, &se0), AFD_OK);
        assert_int_equal(afd_ratio_se(&s, 'g', 10, 1, 128, NAN, NAN, NAN, &r_cont, &se), AFD_OK);
        assert_close(r_cont, r0, 0, 0);
        assert_true(isnan(se));
        assert_int_equal(afd_ratio_se(&s, 'm', 0, 1, 128, NAN, 0, 0, &r_cont, &se), AFD_OK);
        assert_close(r_cont, 9.5546686746987952, 1e-12, 0);
        assert_true(isnan(se));
        assert_int_equal(afd_ratio_cost_se(&s, 5, 'g', 10, 1, 128, NAN, NAN, NAN, &r_cont, &se),
                         AFD_OK);
        assert_true(isfinite(r_cont) && isnan(se));
    }
    /* negative or infinite ones are errors */
    assert_int_equal(afd_ratio_se(&s, 'm', 0, 1, 128, -1, 0, 0, &r_cont, &se), AFD_EINVAL);
    assert_int_equal(afd_ratio_se(&s, 'm', 0, 1, 128, INFINITY, 0, 0, &r_cont, &se), AFD_EINVAL);
    assert_int_equal(afd_ratio_se(&s, 'g', 10, 1, 128, 0, 0, -INFINITY, &r_cont, &se),
                     AFD_EINVAL);
}

static void errors(void **state)
{
    afd_system s = paper(256);
    afd_mf_result mf;
    afd_cycle c;
    afd_error err;
    (void)state;
    s.B = 0;
    assert_int_equal(afd_system_check(&s, &err), AFD_EINVAL);
    assert_string_equal(err.text, "B must be >= 1: 0");
    assert_int_equal(afd_cycle_eval(&s, 4, &c), AFD_EINVAL);
    assert_true(isnan(c.tau_g));
    s = paper(256);
    s.hw.alpha_f = 0;
    assert_int_equal(afd_ratio_mf(&s, &mf, &err), AFD_EINVAL);
    assert_string_equal(err.text, "alpha_f must be > 0: FFN time must grow with the batch");
    s = paper(256);
    s.hw.beta_c = -1;
    assert_int_equal(afd_system_check(&s, &err), AFD_EINVAL);
    assert_string_equal(err.text, "beta_c must be >= 0: -1");
    s = paper(256);
    s.theta = NAN;
    assert_int_equal(afd_system_check(&s, &err), AFD_EINVAL);
    s = paper(256);
    assert_int_equal(afd_cycle_eval(&s, 0, &c), AFD_EINVAL);
    assert_int_equal(afd_cycle_topology(&s, 0, 1, &c), AFD_EINVAL);
    /* nothing costs anything: no positive candidate */
    s = custom(1e-3, 0, 0.1, 0, 0.1, 0, 256, 0, 0);
    assert_int_equal(afd_ratio_mf(&s, &mf, &err), AFD_EEMPTY);
    assert_true(isnan(mf.r));
}

static void edge_cases(void **state)
{
    afd_mf_result mf;
    afd_cycle c;
    afd_system s;
    (void)state;
    /* zero intercepts: Attention meets FFN at r = alpha_a theta / alpha_f */
    s = custom(0.00165, 0, 0.083, 0, 0.022, 0, 256, 599, 0);
    assert_int_equal(afd_ratio_mf(&s, &mf, NULL), AFD_OK);
    assert_close(mf.r, 0.00165 * 599 / 0.083, 1e-14, 0);
    /* an FFN so slow that r* < 1: the attention region ends at
     * (mu_A - beta_f)/(alpha_f B) = 0.079, past it the FFN branch peaks at
     * sqrt(beta_f/(alpha_f B)) = sqrt(100/2560) = 0.198, which wins */
    s = paper(256);
    s.hw.alpha_f = 10;
    assert_int_equal(afd_ratio_mf(&s, &mf, NULL), AFD_OK);
    assert_int_equal(mf.which, 2);
    assert_close(mf.r, sqrt(100.0 / 2560), 1e-15, 0);
    assert_close(mf.candidate[0], (0.00165 * 256 * 599 + 50 - 100) / (10 * 256), 1e-14, 0);
    assert_true(mf.thr > mf.thr_candidate[0]);
    /* B = 1 */
    s = paper(1);
    assert_int_equal(afd_cycle_eval(&s, 3, &c), AFD_OK);
    assert_close(c.mu_a, 0.00165 * 599 + 50, 1e-15, 0);
    assert_true(c.tau_g >= c.tau_mf);
    /* a tie at the balance point is reported as such */
    s = paper(256);
    assert_int_equal(afd_ratio_mf(&s, &mf, NULL), AFD_OK);
    assert_int_equal(afd_cycle_eval(&s, mf.r, &c), AFD_OK);
    assert_int_equal(c.bind, AFD_BIND_ATTENTION | AFD_BIND_FFN);
    assert_string_equal(afd_bind_name(c.bind), "attention+ffn");
    assert_string_equal(afd_bind_name(AFD_BIND_COMM), "communication");
}

/* The 95% interval: x -+ 1.96 se by hand, and 1.96 is the normal 0.975
 * quantile (gsl_cdf_ugaussian_Pinv, 1.959964) to its three digits. */
/* A cycle whose times overflow a double is a numerical failure in every
 * function that evaluates one, never a cycle of NaN or infinite times:
 * theta = 1e306 at B = 2^20 makes mu_A = 0.00165 * 2^20 * 1e306 + 50,
 * about 1.7e309, beyond DBL_MAX. */
static void overflow_is_a_numerical_failure(void **state)
{
    afd_system s = paper(1u << 20);
    afd_mf_result mf;
    afd_cycle c;
    afd_error err;
    const double rs[2] = {1, 2};
    (void)state;
    s.theta = 1e306;
    s.nu = 0;
    assert_int_equal(afd_system_check(&s, &err), AFD_OK);
    assert_int_equal(afd_cycle_eval(&s, 2, &c), AFD_ENUMERIC);
    assert_true(isnan(c.tau_mf) && isnan(c.tau_g) && isnan(c.thr_g));
    assert_int_equal(afd_cycle_topology(&s, 2, 1, &c), AFD_ENUMERIC);
    assert_int_equal(afd_ratio_g(&s, rs, 2, &c), AFD_ENUMERIC);
    assert_int_equal(afd_ratio_mf(&s, &mf, &err), AFD_ENUMERIC);
    assert_non_null(strstr(err.text, ": numerical method failed to converge"));
    /* with a spread, through the Gaussian barrier's path */
    s.nu = 1e3;
    assert_int_equal(afd_cycle_eval(&s, 2, &c), AFD_ENUMERIC);
}

static void interval95_by_hand(void **state)
{
    double lo, hi;
    (void)state;
    afd_interval95(10, 0.5, &lo, &hi);
    assert_close(lo, 9.02, 1e-15, 0);
    assert_close(hi, 10.98, 1e-15, 0);
    afd_interval95(-3, 0, &lo, &hi);
    assert_true(lo == -3 && hi == -3);
    afd_interval95(1, NAN, &lo, &hi);
    assert_true(isnan(lo) && isnan(hi));
    assert_close(AFD_Z95, gsl_cdf_ugaussian_Pinv(0.975), 0, 5e-5);
    assert_true(fabs(AFD_Z95 - gsl_cdf_ugaussian_Pinv(0.975)) > 3e-5); /* rounded, not exact */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(paper_mean_field),
        cmocka_unit_test(paper_barrier_aware),
        cmocka_unit_test(tau_g_r1_closed_form),
        cmocka_unit_test(tau_g_to_tau_mf),
        cmocka_unit_test(tau_g_against_definition),
        cmocka_unit_test(each_candidate_wins),
        cmocka_unit_test(mean_field_against_grid),
        cmocka_unit_test(barrier_free_rule_picks_best_integer),
        cmocka_unit_test(topology_against_brute_force),
        cmocka_unit_test(standard_error_of_r),
        cmocka_unit_test(errors),
        cmocka_unit_test(edge_cases),
        cmocka_unit_test(interval95_by_hand),
        cmocka_unit_test(overflow_is_a_numerical_failure),
    };
    gsl_set_error_handler_off();
    RUN_TESTS(tests);
}
