/* test_cost.c: tokens per dollar and per joule as objectives of the A/F
 * ratio (afd_ratio.h, "cost and energy") and the deployment cost helpers
 * (afd_cost.h), against independent evaluations: hand arithmetic, the
 * definition of tau_G integrated directly, brute force over integer r and
 * dense grids over real r. */
#include <config.h>

#include <float.h>
#include <string.h>

#include <gsl/gsl_integration.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_sf_erf.h>

#include "test_util.h"

#include "afd_cost.h"
#include "afd_ratio.h"

enum { RMAX = 40 };

static afd_system paper(double B)
{
    afd_system s;
    assert_int_equal(afd_hw_preset("paper-910c", &s.hw), AFD_OK);
    s.B = B;
    s.theta = 599; /* geometric mu_P = 100, mu_D = 500 */
    s.nu = sqrt(259400.0);
    return s;
}

/* A system whose communication line binds first above the balance point. */
static afd_system comm_bound(void)
{
    afd_system s = paper(256);
    s.hw.alpha_c = 0.06; /* above the FFN line below r = 60/(0.023 * 256) = 10.19, */
    s.hw.beta_c = 160;   /* where the steeper FFN line takes over */
    return s;
}

/* tau_mf written out from eq. (8), independently of the library. */
static double tau_mf(const afd_system *s, double r)
{
    const afd_hw *h = &s->hw;
    double mu = h->alpha_a * s->B * s->theta + h->beta_a;
    double tc = h->alpha_c * r * s->B + h->beta_c, tf = h->alpha_f * r * s->B + h->beta_f;
    return fmax(mu, fmax(tc, tf));
}

/* tau_G by its definition (eq. 9): E[max(mu_A + sigma_A M_r, G)] against
 * the density r phi Phi^(r-1), adaptive QAG on short pieces. */
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

static double tau_g_def(const afd_system *s, double r, gsl_integration_workspace *w)
{
    const afd_hw *h = &s->hw;
    struct def d;
    gsl_function f = {def_integrand, &d};
    double total = 0, a;
    d.mu = h->alpha_a * s->B * s->theta + h->beta_a;
    d.sig = h->alpha_a * sqrt(s->B) * s->nu;
    d.g = fmax(h->alpha_c * r * s->B + h->beta_c, h->alpha_f * r * s->B + h->beta_f);
    d.r = r;
    for (a = -12; a < 12; a += 0.5) {
        double v, e;
        gsl_integration_qag(&f, a, a + 0.5, 0, 1e-12, 1000, GSL_INTEG_GAUSS61, w, &v, &e);
        total += v;
    }
    return total;
}

/* Brute force over r = 1..RMAX: the smallest maximiser of rB/((r+w) tau[r]). */
static int brute_force(const double *tau, double B, double w)
{
    int r, best = 1;
    double bestv = -1;
    for (r = 1; r <= RMAX; r++) {
        double v = r * B / ((r + w) * tau[r]);
        if (v > bestv * (1 + 1e-12)) {
            bestv = v;
            best = r;
        }
    }
    return best;
}

static void feasible(double *rs)
{
    int k;
    for (k = 0; k < RMAX; k++)
        rs[k] = k + 1;
}

/* ---- equal prices pick the throughput-per-instance ratio */

static void equal_prices_same_ratio(void **state)
{
    static const double Bs[] = {128, 256, 512};
    gsl_integration_workspace *ws = gsl_integration_workspace_alloc(1000);
    double rs[RMAX], tau[RMAX + 1];
    size_t k;
    int r;
    (void)state;
    feasible(rs);
    for (k = 0; k < 4; k++) {
        afd_system s = k < 3 ? paper(Bs[k]) : comm_bound();
        afd_cycle c;
        afd_mf_result mf, mf1;
        int best = 1;
        double bestthr = 0;
        /* per-instance throughput rB/((r+1) tau_G), eq. (11), by brute force */
        for (r = 1; r <= RMAX; r++) {
            double thr;
            tau[r] = tau_g_def(&s, r, ws);
            thr = r * s.B / ((r + 1) * tau[r]);
            if (thr > bestthr) {
                bestthr = thr;
                best = r;
            }
        }
        assert_int_equal(afd_ratio_cost_g(&s, 1, rs, RMAX, &c, NULL), AFD_OK);
        assert_close(c.r, best, 0, 0);
        /* the mean-field rule with w = 1 is Theorem 4.4 */
        assert_int_equal(afd_ratio_cost_mf(&s, 1, &mf, NULL), AFD_OK);
        assert_int_equal(afd_ratio_mf(&s, &mf1, NULL), AFD_OK);
        assert_close(mf.r, mf1.r, 0, 0);
        assert_close(mf.thr, mf1.thr, 0, 0);
    }
    gsl_integration_workspace_free(ws);
}

/* ---- the barrier-aware cost optimum against brute force, and monotone in w */

static void cost_rule_against_brute_force(void **state)
{
    gsl_integration_workspace *ws = gsl_integration_workspace_alloc(1000);
    double rs[RMAX], tau[RMAX + 1];
    size_t k;
    int r;
    (void)state;
    feasible(rs);
    for (k = 0; k < 2; k++) {
        afd_system s = k == 0 ? paper(256) : comm_bound();
        double w, prev_r = 0, prev_mf = 0;
        for (r = 1; r <= RMAX; r++)
            tau[r] = tau_g_def(&s, r, ws);
        for (w = 0.01; w < 1000; w *= 1.25) {
            afd_cycle c;
            afd_mf_result mf;
            double value;
            int bf = brute_force(tau, s.B, w);
            assert_int_equal(afd_ratio_cost_g(&s, w, rs, RMAX, &c, &value), AFD_OK);
            if (c.r != bf)
                fail_msg("system %zu, w = %g: rule r = %g, brute force %d", k, w, c.r, bf);
            assert_close(value, bf * s.B / ((bf + w) * tau[bf]), 1e-10, 0);
            /* Topkis: never moves down as the FFN gets dearer */
            assert_true(c.r >= prev_r);
            prev_r = c.r;
            assert_int_equal(afd_ratio_cost_mf(&s, w, &mf, NULL), AFD_OK);
            assert_true(mf.r >= prev_mf * (1 - 1e-15));
            prev_mf = mf.r;
        }
        /* both grow without bound: at w = 1000 the FFN-bound stationary
         * point sqrt(w beta_f / (alpha_f B)) is far above the balance point */
        assert_true(prev_r > 20);
    }
    gsl_integration_workspace_free(ws);
}

/* ---- the mean-field optimum against a dense grid of real r */

static void cost_mf_against_grid(void **state)
{
    static const double ws[] = {0.05, 0.5, 1, 3, 19, 20, 40, 200, 3000};
    size_t k, j;
    (void)state;
    for (j = 0; j < 2; j++) {
        afd_system s = j == 0 ? paper(256) : comm_bound();
        for (k = 0; k < sizeof ws / sizeof ws[0]; k++) {
            double w = ws[k], best = 0, best_r = 0, r, hi;
            afd_mf_result mf;
            assert_int_equal(afd_ratio_cost_mf(&s, w, &mf, NULL), AFD_OK);
            hi = 3 * mf.r + 10;
            for (r = hi / 400000; r <= hi; r += hi / 400000) {
                double v = r * s.B / ((r + w) * tau_mf(&s, r));
                if (v > best) {
                    best = v;
                    best_r = r;
                }
            }
            if (best > mf.thr * (1 + 1e-12))
                fail_msg("w = %g: grid %.17g at r = %g beats rule %.17g at r = %g", w, best, best_r,
                         mf.thr, mf.r);
            assert_close(mf.thr, best, 1e-6, 0);
            assert_close(mf.r, best_r, 0, 2 * hi / 400000 + 1e-3 * mf.r);
        }
    }
}

/* ---- where the optimum leaves the balance point */

static void balance_limit(void **state)
{
    afd_system s = paper(256);
    afd_mf_result mf;
    /* by hand: r_0 = (0.00165*256*599 + 50 - 100)/(0.083*256) = 9.5546687,
     * w_max = r_0^2 * 0.083 * 256 / 100 */
    double r0 = (0.00165 * 256 * 599 + 50 - 100) / (0.083 * 256);
    double wmax = r0 * r0 * 0.083 * 256 / 100, w;
    (void)state;
    assert_int_equal(afd_cost_balance_limit(&s, &w, NULL), AFD_OK);
    assert_close(w, wmax, 1e-14, 0);
    assert_close(w, 19.398, 0, 1e-3);
    /* at and below w_max: the balance point */
    assert_int_equal(afd_ratio_cost_mf(&s, 0.999 * wmax, &mf, NULL), AFD_OK);
    assert_int_equal(mf.which, 0);
    assert_close(mf.r, r0, 1e-14, 0);
    assert_int_equal(afd_ratio_cost_mf(&s, 1e-3, &mf, NULL), AFD_OK);
    assert_close(mf.r, r0, 1e-14, 0);
    /* above: the FFN line's stationary point sqrt(w beta_f/(alpha_f B)) */
    w = 1.2 * wmax;
    assert_int_equal(afd_ratio_cost_mf(&s, w, &mf, NULL), AFD_OK);
    assert_int_equal(mf.which, 2);
    assert_close(mf.r, sqrt(w * 100 / (0.083 * 256)), 1e-14, 0);
    assert_true(mf.r > r0);

    /* communication binds first above r_0 = (mu_A - 160)/(0.06 * 256) = 9.31:
     * w_max = r_0^2 0.06 * 256 / 160 = 8.32 */
    s = comm_bound();
    r0 = (0.00165 * 256 * 599 + 50 - 160) / (0.06 * 256);
    assert_int_equal(afd_cost_balance_limit(&s, &w, NULL), AFD_OK);
    assert_close(w, r0 * r0 * 0.06 * 256 / 160, 1e-14, 0);
    assert_int_equal(afd_ratio_cost_mf(&s, 0.99 * w, &mf, NULL), AFD_OK);
    assert_close(mf.r, r0, 1e-14, 0);
    assert_int_equal(afd_ratio_cost_mf(&s, 1.01 * w, &mf, NULL), AFD_OK);
    assert_true(mf.r > r0);

    /* no balance point: mu_A below the FFN's fixed cost */
    s = paper(256);
    s.hw.beta_f = 1000;
    assert_int_equal(afd_cost_balance_limit(&s, &w, NULL), AFD_EEMPTY);
    assert_true(isnan(w));
    /* a binding line through the origin: never leaves */
    s = paper(256);
    s.hw.beta_f = 0;
    s.hw.beta_c = 0;
    assert_int_equal(afd_cost_balance_limit(&s, &w, NULL), AFD_OK);
    assert_true(isinf(w));
}

/* ---- the continuous optimum and its standard error */

static void continuous_and_se(void **state)
{
    afd_system s = paper(256);
    double rc, r1, se, w = 30;
    afd_cycle c;
    double rs[RMAX], v_lo, v_hi, v_0, B = s.B;
    afd_cycle cl, ch, c0;
    (void)state;
    feasible(rs);
    assert_int_equal(afd_ratio_cost_g(&s, w, rs, RMAX, &c, NULL), AFD_OK);
    assert_int_equal(afd_ratio_cost_g_continuous(&s, w, 1, RMAX, &rc), AFD_OK);
    assert_true(fabs(rc - c.r) < 1);
    /* a maximum: V_w at rc beats its neighbours 0.01 away */
    assert_int_equal(afd_cycle_eval(&s, rc, &c0), AFD_OK);
    assert_int_equal(afd_cycle_eval(&s, rc - 0.01, &cl), AFD_OK);
    assert_int_equal(afd_cycle_eval(&s, rc + 0.01, &ch), AFD_OK);
    v_0 = rc * B / ((rc + w) * c0.tau_g);
    v_lo = (rc - 0.01) * B / ((rc - 0.01 + w) * cl.tau_g);
    v_hi = (rc + 0.01) * B / ((rc + 0.01 + w) * ch.tau_g);
    assert_true(v_0 >= v_lo && v_0 >= v_hi);
    /* with w = 1 it is the per-instance continuous optimum */
    assert_int_equal(afd_ratio_cost_g_continuous(&s, 1, 1, RMAX, &r1), AFD_OK);
    assert_int_equal(afd_ratio_g_continuous(&s, 1, RMAX, &rc), AFD_OK);
    assert_close(r1, rc, 0, 0);
    /* the mean-field cost rule depends on theta only through r_0 (w below
     * w_max): dr/dtheta = alpha_a / alpha_f, as for Theorem 4.4 */
    assert_int_equal(afd_ratio_cost_se(&s, 5, 'm', 0, 1, RMAX, 2.0, 0, 0, &rc, &se), AFD_OK);
    assert_close(se, 0.00165 / 0.083 * 2.0, 1e-6, 0);
    assert_int_equal(afd_ratio_cost_se(&s, 0, 'm', 0, 1, RMAX, 2.0, 0, 0, &rc, &se), AFD_EINVAL);
}

/* ---- deployment cost helpers, by hand */

static void fleet_and_rates(void **state)
{
    afd_fleet_item items[3] = {
        {.count = 6, .price_per_hour = 2.5, .power_w = 700},
        {.count = 2, .price_per_hour = 1.25, .power_w = 350},
        {.count = 0, .price_per_hour = NAN, .power_w = NAN},
    };
    double price, power;
    (void)state;
    assert_int_equal(afd_fleet_cost(items, 3, &price, &power), AFD_OK);
    assert_close(price, 6 * 2.5 + 2 * 1.25, 0, 0);
    assert_close(power, 6 * 700 + 2 * 350, 0, 0);
    items[2].count = 1; /* in use with an unknown price: unknown total */
    assert_int_equal(afd_fleet_cost(items, 3, &price, &power), AFD_OK);
    assert_true(isnan(price) && isnan(power));
    items[2].count = -1;
    assert_int_equal(afd_fleet_cost(items, 3, &price, NULL), AFD_EINVAL);
    assert_true(isnan(price));
    items[2].count = 1;
    items[2].price_per_hour = -3;
    assert_int_equal(afd_fleet_cost(items, 3, NULL, &power), AFD_EINVAL);
    assert_int_equal(afd_fleet_cost(NULL, 0, &price, &power), AFD_OK);
    assert_close(price, 0, 0, 0);

    /* 1 token/s for 3.6 $/h: 3600 tokens per 3.6 dollars = 1000 per dollar */
    assert_close(afd_per_dollar(1, 3.6), 1000, 1e-15, 0);
    assert_close(afd_per_joule(2100, 700), 3, 1e-15, 0);
    assert_true(isnan(afd_per_dollar(1, 0)));
    assert_true(isnan(afd_per_dollar(-1, 1)));
    assert_true(isnan(afd_per_joule(1, NAN)));
    /* a bundle of 8 Attention devices at 2 $/h and one FFN device at 4 $/h
     * making 8 * 256 tokens every 50 ms: 40960 tokens/s for 20 $/h */
    assert_close(afd_bundle_per_cost(8, 256, 50, 1e-3, 2, 4, 1), 40960.0 * 3600 / 20, 1e-14, 0);
    assert_close(afd_bundle_per_cost(8, 256, 50, 1e-3, 300, 600, 0), 40960.0 / 3000, 1e-14, 0);
    assert_true(isnan(afd_bundle_per_cost(0, 256, 50, 1e-3, 2, 4, 1)));
    assert_true(isnan(afd_bundle_per_cost(8, 256, 50, 1e-3, 0, 0, 1)));
}

static void errors(void **state)
{
    afd_system s = paper(256);
    afd_mf_result mf;
    afd_cycle c;
    afd_error err;
    double rs[2] = {1, 2}, r;
    (void)state;
    assert_int_equal(afd_ratio_cost_mf(&s, 0, &mf, &err), AFD_EINVAL);
    assert_non_null(strstr(err.text, "price ratio"));
    assert_true(isnan(mf.r));
    assert_int_equal(afd_ratio_cost_mf(&s, NAN, &mf, NULL), AFD_EINVAL);
    assert_int_equal(afd_ratio_cost_mf(&s, INFINITY, &mf, NULL), AFD_EINVAL);
    assert_int_equal(afd_ratio_cost_g(&s, -1, rs, 2, &c, NULL), AFD_EINVAL);
    assert_true(isnan(c.r));
    assert_int_equal(afd_ratio_cost_g(&s, 1, rs, 0, &c, NULL), AFD_EEMPTY);
    assert_int_equal(afd_ratio_cost_g_continuous(&s, 0, 1, 2, &r), AFD_EINVAL);
    assert_true(isnan(r));
    s.B = 0;
    assert_int_equal(afd_cost_balance_limit(&s, &r, &err), AFD_EINVAL);
    assert_int_equal(afd_ratio_cost_mf(&s, 1, &mf, NULL), AFD_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(equal_prices_same_ratio),
        cmocka_unit_test(cost_rule_against_brute_force),
        cmocka_unit_test(cost_mf_against_grid),
        cmocka_unit_test(balance_limit),
        cmocka_unit_test(continuous_and_se),
        cmocka_unit_test(fleet_and_rates),
        cmocka_unit_test(errors),
    };
    RUN_TESTS(tests);
}
