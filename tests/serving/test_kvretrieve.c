/* test_kvretrieve.c: KV-cache retrieval through a memory hierarchy: the
 * closed form against the MIST recursion evaluated literally, the
 * break-even length against the equation it solves, and a Monte Carlo of
 * tier hits. */
#include <config.h>

#include <float.h>

#include "test_util.h"

#include "afd_kvretrieve.h"
#include "afd_mc.h"
#include "afd_philox.h"

/* f_n = H_n (T_n + S/BW_n) + (1 - H_n) f_{n+1}, f_{N+1} = R, from the bottom up */
static double recursion(const afd_kv_tier *t, size_t n, double S, double R)
{
    double f = R;
    size_t k = n;
    while (k-- > 0)
        f = t[k].hit * (t[k].latency + S / t[k].bw) + (1 - t[k].hit) * f;
    return f;
}

static const afd_kv_tier tiers[3] = {
    {"local", 0.2, 1e-6, 128e9},    /* Table V case A */
    {"platform", 0.35, 5e-6, 32e9}, /* case B */
    {"rack", 0.7, 20e-3, 2e9},      /* case C behind a 20 ms link */
};

static void recursion_and_closed_form(void **state)
{
    static const double sizes[] = {0, 1e6, 1.3e9, 8e9};
    size_t k;
    (void)state;
    for (k = 0; k < 4; k++) {
        double f, M;
        assert_int_equal(afd_kv_retrieval_time(tiers, 3, sizes[k], 2.5, &f, &M), AFD_OK);
        assert_close(f, recursion(tiers, 3, sizes[k], 2.5), 1e-14, 0);
        assert_close(M, 0.8 * 0.65 * 0.3, 1e-15, 0);
    }
    /* one tier that always hits: T + S/BW */
    {
        afd_kv_tier one = {"hbm", 1, 2e-6, 3e12};
        double f, M;
        assert_int_equal(afd_kv_retrieval_time(&one, 1, 6e9, 99, &f, &M), AFD_OK);
        assert_close(f, 2e-6 + 2e-3, 1e-15, 0);
        assert_close(M, 0, 0, 0);
    }
}

static void break_even(void **state)
{
    const double k = 327680; /* bytes per token */
    afd_kv_law law = {0.02, 1e-4, 1e-9};
    double L, f, R, M;
    (void)state;
    /* the rack tier alone: 1e-9 L^2 + (1e-4 - k/2e9) L + (0.02 - 0.02) = 0
     * -> L = (k/2e9 - 1e-4) / 1e-9 = 63840 */
    assert_int_equal(afd_kv_break_even(tiers, 3, 2, k, &law, &L), AFD_OK);
    assert_close(L, (k / 2e9 - 1e-4) / 1e-9, 1e-12, 0);
    /* with the fast tiers in front, fetching wins at every length */
    assert_int_equal(afd_kv_break_even(tiers, 3, 3, k, &law, &L), AFD_OK);
    assert_close(L, 0, 0, 0);
    /* a slow hierarchy (rack, then remote): at L*, f_1 = R exactly, and
     * fetching wins just above and loses just below */
    {
        static const afd_kv_tier slow[2] = {{"rack", 0.5, 20e-3, 2e9}, {"remote", 0.9, 50e-3, 1e9}};
        afd_kv_law l2 = {0.005, 1e-4, 1e-9};
        double L2, R2, f2;
        assert_int_equal(afd_kv_break_even(slow, 2, 2, k, &l2, &L), AFD_OK);
        assert_true(L > 1000 && isfinite(L));
        R = l2.a + l2.b * L + l2.c * L * L;
        assert_int_equal(afd_kv_retrieval_time(slow, 2, k * L, R, &f, &M), AFD_OK);
        assert_close(f, R, 1e-12, 0);
        L2 = 1.01 * L;
        R2 = l2.a + l2.b * L2 + l2.c * L2 * L2;
        assert_int_equal(afd_kv_retrieval_time(slow, 2, k * L2, R2, &f2, NULL), AFD_OK);
        assert_true(f2 < R2);
        L2 = 0.99 * L;
        R2 = l2.a + l2.b * L2 + l2.c * L2 * L2;
        assert_int_equal(afd_kv_retrieval_time(slow, 2, k * L2, R2, &f2, NULL), AFD_OK);
        assert_true(f2 > R2);
    }
    /* a linear law: L* = (A - (1 - M) a) / ((1 - M) b - k G) by hand for a
     * single tier: (T - H a) / (H b - H k / BW) */
    {
        afd_kv_tier one = {"dram", 0.6, 0.05, 150e9};
        afd_kv_law lin = {0.01, 1e-4, 0};
        assert_int_equal(afd_kv_break_even(&one, 1, 1, k, &lin, &L), AFD_OK);
        assert_close(L, (0.6 * 0.05 - 0.6 * 0.01) / (0.6 * 1e-4 - 0.6 * k / 150e9), 1e-12, 0);
        /* slower per token than recomputing: never */
        one.bw = 1e9;
        assert_int_equal(afd_kv_break_even(&one, 1, 1, k, &lin, &L), AFD_OK);
        assert_true(isinf(L));
        /* faster and no fixed cost: always (0) */
        one.bw = 150e9;
        one.latency = 0;
        assert_int_equal(afd_kv_break_even(&one, 1, 0, k, &lin, &L), AFD_OK);
        assert_close(L, 0, 0, 0);
    }
}

static void monte_carlo(void **state)
{
    double mean, se, f;
    const double S = 1.3e9, R = 2.5;
    (void)state;
    assert_int_equal(afd_kv_retrieval_time(tiers, 3, S, R, &f, NULL), AFD_OK);
    assert_int_equal(afd_mc_kv_retrieval(tiers, 3, S, R, 200000, 17, 0, &mean, &se), AFD_OK);
    assert_within_se(mean, f, se, 5);
    /* the same for any number of threads */
    {
        unsigned threads[] = {1, 3, 256};
        size_t j;
        for (j = 0; j < sizeof threads / sizeof *threads; j++) {
            double m1, s1;
            assert_int_equal(afd_mc_kv_retrieval(tiers, 3, S, R, 200000, 17, threads[j], &m1, &s1),
                             AFD_OK);
            assert_close(m1, mean, 0, 0);
            assert_close(s1, se, 0, 0);
        }
    }
    assert_int_equal(afd_mc_kv_retrieval(tiers, 3, S, R, 1, 17, 0, &mean, &se), AFD_EINVAL);
    assert_true(isnan(mean));
}

/* Two outcomes with a small spread beside a large mean: the tier serves in
 * 2^20 + 2^-10 s, recomputing takes 2^20 + 3 2^-10 s, both exact in binary.
 * With cR of the T trials recomputed (counted here from the trial's uniform,
 * (seed, 0, i)), the sample mean is t0 + Delta cR / T and the sample
 * variance of two values Delta^2 cH cR / (T (T - 1)).  One-pass sums of
 * t and t^2 lose it: the squares round at 2^-12, the spread is 2^-9. */
static void monte_carlo_small_spread(void **state)
{
    const afd_kv_tier one[1] = {{"far", 0.5, 1048576, 1024}};
    const double t0 = 1048576 + 1.0 / 1024, t1 = 1048576 + 3.0 / 1024, delta = t1 - t0;
    const uint64_t T = 100000, seed = 17;
    double mean, se, cR = 0, cH;
    uint64_t i;
    (void)state;
    for (i = 0; i < T; i++)
        cR += afd_philox_u01(seed, 0, i) >= 0.5;
    cH = (double)T - cR;
    assert_true(cR > 0 && cH > 0);
    assert_int_equal(afd_mc_kv_retrieval(one, 1, 1, t1, T, seed, 0, &mean, &se), AFD_OK);
    assert_close(mean, t0 + delta * cR / (double)T, 1e-15, 0);
    assert_close(se, delta * sqrt(cH * cR / ((double)T * (double)(T - 1)) / (double)T), 1e-12, 0);
}

static void errors(void **state)
{
    afd_kv_tier bad[1] = {{"x", 1.5, 0, 1e9}};
    afd_kv_law law = {0.02, 1e-4, 0};
    double f, L;
    (void)state;
    assert_int_equal(afd_kv_retrieval_time(bad, 1, 1, 1, &f, NULL), AFD_EINVAL);
    assert_true(isnan(f));
    bad[0].hit = 0.5;
    bad[0].bw = 0;
    assert_int_equal(afd_kv_retrieval_time(bad, 1, 1, 1, &f, NULL), AFD_EINVAL);
    assert_int_equal(afd_kv_retrieval_time(tiers, 0, 1, 1, &f, NULL), AFD_EINVAL);
    assert_int_equal(afd_kv_retrieval_time(tiers, 3, -1, 1, &f, NULL), AFD_EINVAL);
    assert_int_equal(afd_kv_retrieval_time(tiers, 3, 1, NAN, &f, NULL), AFD_EINVAL);
    assert_int_equal(afd_kv_break_even(tiers, 3, 4, 1, &law, &L), AFD_EINVAL);
    assert_true(isnan(L));
    assert_int_equal(afd_kv_break_even(tiers, 3, 3, 0, &law, &L), AFD_EINVAL);
    law.b = -1;
    assert_int_equal(afd_kv_break_even(tiers, 3, 3, 1, &law, &L), AFD_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(recursion_and_closed_form),
        cmocka_unit_test(break_even),
        cmocka_unit_test(monte_carlo),
        cmocka_unit_test(monte_carlo_small_spread),
        cmocka_unit_test(errors),
    };
    RUN_TESTS(tests);
}
