/* test_pool.c: the AFD decode pool against hand derivations.  With nu = 0
 * the barrier vanishes and tau_G = max(mu_A, alpha_c r B + beta_c,
 * alpha_f r B + beta_f) exactly (afd_ratio.h), so the largest B meeting a
 * TPOT SLO and the pool's rate x B / ((E[G] - 1) tau) are worked out by
 * hand below. */
#include <config.h>

#include <math.h>

#include "test_util.h"

#include "afd_pool.h"
#include "afd_ratio.h"

/* mu_A = 0.001 x 1000 B + 2 = B + 2; the FFN line 0.5 r B + 5 is above the
 * communication line 0.01 r B + 1 everywhere. */
static afd_hw hw_hand(void)
{
    afd_hw h;
    afd_hw_init(&h);
    h.alpha_a = 0.001;
    h.beta_a = 2;
    h.alpha_f = 0.5;
    h.beta_f = 5;
    h.alpha_c = 0.01;
    h.beta_c = 1;
    snprintf(h.unit, sizeof h.unit, "ms");
    return h;
}

static afd_pool_params params(const afd_hw *h)
{
    afd_pool_params p = {.hw = h,
                         .theta = 1000,
                         .nu = 0,
                         .output = 101, /* 100 decode steps per request */
                         .request_tokens = 1200,
                         .kv_capacity = 1200 * 200, /* memory allows 200 slots */
                         .tpot_slo = 20.5,          /* off every boundary below */
                         .bmax_limit = 0};
    return p;
}

/* tau <= 20.5: B + 2 <= 20.5 (B <= 18) and 0.5 r B + 5 <= 20.5 (B <= 31 / r). */
static void hand_topologies(void **state)
{
    static const struct {
        unsigned x, y, B;
        double tau;
    } want[] = {
        {1, 1, 18, 20}, /* r 1: B <= 18 and 31; tau max(20, 14) */
        {2, 1, 15, 20}, /* r 2: B <= 15.5; tau max(17, 20) */
        {1, 2, 18, 20}, /* r 0.5: B <= 18 and 62; tau max(20, 9.5) */
        {4, 1, 7, 19},  /* r 4: B <= 7.75; tau max(9, 19) */
        {3, 2, 18, 20}, /* r 1.5: B <= 18 and 20.7; tau max(20, 18.5) */
    };
    afd_hw h = hw_hand();
    afd_pool_params p = params(&h);
    afd_pool o;
    size_t i;
    (void)state;
    for (i = 0; i < sizeof want / sizeof want[0]; i++) {
        assert_int_equal(afd_pool_eval(&p, want[i].x, want[i].y, &o), AFD_OK);
        assert_int_equal(o.B, want[i].B);
        assert_close(o.tau, want[i].tau, 1e-12, 0);
        assert_close(o.rate, want[i].x * want[i].B / (100 * want[i].tau), 1e-12, 0);
    }
}

/* The best pool per budget: m = 2 (1,1) 18/2000; m = 3 (2,1) 30/2000 above
 * (1,2)'s 18/2000; m = 4 (2,2) (r 1, B 18) 36/2000 above (3,1) (B 10,
 * 30/2000) and (1,3); m = 5 (3,2) 54/2000 above (4,1) 28/1900, (2,3)
 * 36/2000, (1,4) 18/2000. */
static void hand_budgets(void **state)
{
    afd_hw h = hw_hand();
    afd_pool_params p = params(&h);
    afd_pool best[5];
    (void)state;
    assert_int_equal(afd_pool_best(&p, 5, best), AFD_OK);
    assert_close(best[0].rate, 0, 0, 0);
    assert_int_equal(best[1].x, 1);
    assert_int_equal(best[1].y, 1);
    assert_close(best[1].rate, 18.0 / 2000, 1e-12, 0);
    assert_int_equal(best[2].x, 2);
    assert_int_equal(best[2].y, 1);
    assert_close(best[2].rate, 30.0 / 2000, 1e-12, 0);
    assert_int_equal(best[3].x, 2);
    assert_int_equal(best[3].y, 2);
    assert_close(best[3].rate, 36.0 / 2000, 1e-12, 0);
    assert_int_equal(best[4].x, 3);
    assert_int_equal(best[4].y, 2);
    assert_int_equal(best[4].B, 18);
    assert_close(best[4].rate, 54.0 / 2000, 1e-12, 0);
}

/* Memory for 16 slots: (1,1) B 16, tau max(18, 13) = 18; a cap of 12:
 * tau max(14, 11) = 14; a TPOT of 2.5 below mu_A(1) = 3: no pool. */
static void memory_cap_and_none(void **state)
{
    afd_hw h = hw_hand();
    afd_pool_params p = params(&h);
    afd_pool o, best[3];
    (void)state;
    p.kv_capacity = 1200 * 16.5;
    assert_int_equal(afd_pool_eval(&p, 1, 1, &o), AFD_OK);
    assert_int_equal(o.B, 16);
    assert_close(o.rate, 16 / (100 * 18.0), 1e-12, 0);
    p.bmax_limit = 12;
    assert_int_equal(afd_pool_eval(&p, 1, 1, &o), AFD_OK);
    assert_int_equal(o.B, 12);
    assert_close(o.rate, 12 / (100 * 14.0), 1e-12, 0);
    p = params(&h);
    p.tpot_slo = 2.5;
    assert_int_equal(afd_pool_best(&p, 3, best), AFD_OK);
    assert_int_equal(best[2].B, 0);
    assert_close(best[2].rate, 0, 0, 0);
}

/* With a spread load (nu > 0) the barrier adds to the cycle: B is still the
 * largest slot count whose tau_G, evaluated directly, meets the SLO. */
static void barrier_largest_b(void **state)
{
    afd_hw h = hw_hand();
    afd_pool_params p = params(&h);
    afd_system s = {.hw = h, .B = 1, .theta = 1000, .nu = 400};
    afd_cycle c;
    afd_pool o;
    (void)state;
    p.nu = 400;
    assert_int_equal(afd_pool_eval(&p, 3, 2, &o), AFD_OK);
    assert_true(o.B >= 1 && o.B < 18);
    s.B = o.B;
    assert_int_equal(afd_cycle_topology(&s, 3, 2, &c), AFD_OK);
    assert_true(c.tau_g <= 20.5);
    s.B = o.B + 1;
    assert_int_equal(afd_cycle_topology(&s, 3, 2, &c), AFD_OK);
    assert_true(c.tau_g > 20.5);
}

static void bad_input(void **state)
{
    afd_hw h = hw_hand();
    afd_pool_params p = params(&h);
    afd_pool o, best[2];
    (void)state;
    assert_int_equal(afd_pool_eval(&p, 0, 1, &o), AFD_EINVAL);
    assert_true(isnan(o.rate));
    p.output = 1;
    assert_int_equal(afd_pool_eval(&p, 1, 1, &o), AFD_EINVAL);
    assert_int_equal(afd_pool_best(&p, 2, best), AFD_EINVAL);
    assert_true(isnan(best[1].rate));
    p = params(&h);
    p.tpot_slo = NAN;
    assert_int_equal(afd_pool_eval(&p, 1, 1, &o), AFD_EINVAL);
    h.alpha_f = -1;
    p = params(&h);
    assert_int_equal(afd_pool_eval(&p, 1, 1, &o), AFD_EINVAL);
    assert_int_equal(afd_pool_best(NULL, 2, best), AFD_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hand_topologies),     cmocka_unit_test(hand_budgets),
        cmocka_unit_test(memory_cap_and_none), cmocka_unit_test(barrier_largest_b),
        cmocka_unit_test(bad_input),
    };
    RUN_TESTS(tests);
}
