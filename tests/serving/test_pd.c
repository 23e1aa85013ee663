/* test_pd.c: prefill/decode sizing against hand derivations and the exact
 * queue results. */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>

#include "test_util.h"

#include "afd_pd.h"
#include "afd_queue.h"

static afd_workload rows(const uint64_t *p, const uint64_t *d, size_t n)
{
    afd_workload w;
    memset(&w, 0, sizeof w);
    w.kind = AFD_WORKLOAD_TRACE;
    w.n_kept = n;
    w.prompt = malloc(n * sizeof *w.prompt);
    w.decode = malloc(n * sizeof *w.decode);
    memcpy(w.prompt, p, n * sizeof *p);
    memcpy(w.decode, d, n * sizeof *d);
    return w;
}

static void service_law(void **state)
{
    static const uint64_t p[] = {100, 300, 200}, d[] = {1, 1, 1};
    afd_workload w = rows(p, d, 3), g;
    afd_prefill_model m = {0.5, 0.01, 0};
    afd_service_law s;
    (void)state;
    /* S = 1.5, 3.5, 2.5: mean 2.5, variance 2/3, scv (2/3)/6.25 */
    assert_int_equal(afd_service_law_from_workload(&w, &m, &s), AFD_OK);
    assert_int_equal(s.n, 3);
    assert_close(s.t[0], 1.5, 1e-15, 0);
    assert_close(s.t[2], 3.5, 1e-15, 0);
    assert_close(s.w[1], 1.0 / 3, 1e-15, 0);
    assert_close(s.mean, 2.5, 1e-15, 0);
    assert_close(s.scv, (2.0 / 3) / 6.25, 1e-13, 0);
    assert_close(s.max, 3.5, 0, 0);
    afd_workload_free(&w);
    /* geometric P with mean 100: E[S] = a + b 100, Var S = b^2 100 99 */
    assert_int_equal(afd_workload_geometric(100, 500, &g), AFD_OK);
    assert_int_equal(afd_service_law_from_workload(&g, &m, &s), AFD_OK);
    /* values heavier than 1/256 each get their own atom: fewer atoms */
    assert_true(s.n <= AFD_SERVICE_ATOMS && s.n > 100);
    assert_close(s.mean, 0.5 + 0.01 * 100, 1e-9, 0);
    assert_close(s.scv, 0.01 * 0.01 * 9900 / (1.5 * 1.5), 1e-8, 0);
    m.a = m.b = 0;
    assert_int_equal(afd_service_law_from_workload(&g, &m, &s), AFD_EINVAL);
}

/* Every request the same: S = E[S] exactly, so the M/G/c correction is
 * void and TTFT = W + S for both models: the quantile is the exact M/D/c
 * wait quantile plus S. */
static void deterministic_service(void **state)
{
    static const uint64_t p[] = {1000, 1000}, d[] = {5, 5};
    afd_workload w = rows(p, d, 2);
    afd_prefill_model m = {0.02, 1e-4, 0};
    afd_service_law s;
    afd_ttft t;
    afd_mdc *q;
    int c;
    (void)state;
    assert_int_equal(afd_service_law_from_workload(&w, &m, &s), AFD_OK);
    assert_close(s.scv, 0, 0, 1e-30);
    for (c = 1; c <= 8; c *= 2) {
        double lambda = 0.8 * c / 0.12;
        assert_int_equal(afd_ttft_quantile(lambda, &s, c, 0.9, &t), AFD_OK);
        assert_int_equal(afd_mdc_alloc(lambda, 0.12, c, &q), AFD_OK);
        assert_close(t.ttft_md, afd_mdc_wait_quantile(q, 0.9) + 0.12, 1e-12, 0);
        assert_close(t.ttft_mg, t.ttft_md, 1e-9, 0);
        assert_close(t.rho, 0.8, 1e-14, 0);
        afd_mdc_free(q);
    }
    afd_workload_free(&w);
}

static void prefill_pool(void **state)
{
    static const uint64_t p[] = {100, 3000, 800, 50, 12000}, d[] = {1, 2, 3, 4, 5};
    afd_workload w = rows(p, d, 5);
    afd_prefill_model m = {0.02, 1e-4, 0};
    afd_service_law s;
    afd_ttft t, below;
    (void)state;
    assert_int_equal(afd_service_law_from_workload(&w, &m, &s), AFD_OK);
    assert_int_equal(afd_prefill_pool(20, &s, 0.9, 1.5, 1, 1024, &t), AFD_OK);
    /* smallest: the pool meets the SLO and one fewer does not */
    assert_true(t.ttft_mg <= 1.5);
    if (t.c - 1 > 20 * s.mean) {
        assert_int_equal(afd_ttft_quantile(20, &s, t.c - 1, 0.9, &below), AFD_OK);
        assert_true(below.ttft_mg > 1.5);
    }
    /* the largest request alone takes 1.22: a P90 SLO of 1.0 can be met
     * (90% of requests are faster), one of 0.5 not with S_max... */
    assert_int_equal(afd_prefill_pool(20, &s, 0.9, 0.01, 1, 1024, &t), AFD_EEMPTY);
    assert_int_equal(afd_ttft_quantile(20, &s, 1, 0.9, &t), AFD_EUNSTABLE);
    assert_int_equal(afd_ttft_quantile(20, &s, 4, 1.5, &t), AFD_EINVAL);
    afd_workload_free(&w);
}

static void decode_demand(void **state)
{
    afd_workload g;
    afd_decode_need n;
    double k;
    (void)state;
    assert_int_equal(afd_workload_geometric(100, 500, &g), AFD_OK);
    /* L = 20 * 500 * 0.03 = 300 slots, KV = 300 * 599 tokens */
    assert_int_equal(afd_decode_demand(20, &g, 0.03, 0.99, &n), AFD_OK);
    assert_close(n.slots_mean, 300, 1e-14, 0);
    assert_close(n.kv_tokens, 300 * 599.0, 1e-14, 0);
    /* the 99% quantile of Poisson(300): P(N <= k) >= 0.99 > P(N <= k - 1) */
    k = n.slots_q;
    assert_true(gsl_cdf_poisson_P((unsigned)k, 300) >= 0.99);
    assert_true(gsl_cdf_poisson_P((unsigned)k - 1, 300) < 0.99);
    assert_close(k, 341, 0, 0); /* 300 + 2.326 sqrt(300) + continuity, by hand */
    assert_int_equal(afd_decode_demand(0, &g, 0.03, 0.99, &n), AFD_OK);
    assert_close(n.slots_q, 0, 0, 0);
    assert_int_equal(afd_decode_demand(20, &g, 0, 0.99, &n), AFD_EINVAL);
}

static void goodput(void **state)
{
    afd_workload g;
    afd_prefill_model m = {0.02, 1e-4, 0};
    afd_service_law s;
    afd_pd_pool pool;
    afd_ttft t;
    afd_decode_need n;
    double lambda;
    int limit;
    (void)state;
    assert_int_equal(afd_workload_geometric(1000, 200, &g), AFD_OK);
    assert_int_equal(afd_service_law_from_workload(&g, &m, &s), AFD_OK);
    memset(&pool, 0, sizeof pool);
    pool.prefill = &s;
    pool.workload = &g;
    pool.prefill_instances = 4;
    pool.decode_instances = 4;
    pool.percentile = 0.9;
    pool.ttft_slo = 0.6;
    pool.mg = 1;
    pool.decode_step = 0.03;
    pool.tpot_slo = 0.05;
    pool.slots_per_instance = 256;
    pool.slot_quantile = 0.99;
    assert_int_equal(afd_pd_goodput(&pool, &lambda, &limit), AFD_OK);
    assert_true(lambda > 0);
    /* at the goodput the binding constraint is met with equality (to the
     * bisection tolerance) and the other one holds */
    if (limit == AFD_LIMIT_TTFT) {
        assert_int_equal(afd_ttft_quantile(lambda, &s, 4, 0.9, &t), AFD_OK);
        assert_close(t.ttft_mg, 0.6, 1e-4, 0);
        assert_int_equal(afd_decode_demand(lambda, &g, 0.03, 0.99, &n), AFD_OK);
        assert_true(n.slots_q <= 4 * 256);
    } else {
        assert_int_equal(limit, AFD_LIMIT_SLOTS);
        assert_int_equal(afd_decode_demand(lambda, &g, 0.03, 0.99, &n), AFD_OK);
        assert_true(n.slots_q <= 4 * 256);
        assert_int_equal(afd_decode_demand(lambda * 1.001, &g, 0.03, 0.99, &n), AFD_OK);
        assert_true(n.slots_q > 4 * 256);
    }
    /* one decode instance of 64 slots: L = 6 lambda, so the slots bind
     * near lambda = 8, far below the prefill capacity of 33 */
    pool.decode_instances = 1;
    pool.slots_per_instance = 64;
    assert_int_equal(afd_pd_goodput(&pool, &lambda, &limit), AFD_OK);
    assert_int_equal(limit, AFD_LIMIT_SLOTS);
    /* a step slower than the TPOT SLO: nothing is feasible */
    pool.decode_step = 0.06;
    assert_int_equal(afd_pd_goodput(&pool, &lambda, &limit), AFD_OK);
    assert_close(lambda, 0, 0, 0);
    assert_int_equal(limit, AFD_LIMIT_TPOT);
    assert_string_equal(afd_limit_name(limit), "tpot");
    pool.prefill_instances = 0;
    assert_int_equal(afd_pd_goodput(&pool, &lambda, &limit), AFD_EINVAL);
}

/* Decode instances by hand: 37 slots of 8 per instance need ceil(4.625) =
 * 5; the KV quantile, 3.1e6 tokens of 2e5 bytes, is 6.2e11 bytes, which at
 * 8e10 per instance needs ceil(7.75) = 8 (the mean, 2.5e6 tokens = 5e11
 * bytes, would need only ceil(6.25) = 7). */
static void decode_pool(void **state)
{
    afd_decode_need need = {30.2, 37, 2.5e6, 3.1e6, 1, 30.2, NAN, NAN};
    afd_decode_instance inst = {8, NAN, NAN};
    afd_decode_pool pool;
    (void)state;
    assert_int_equal(afd_decode_pool_size(&need, &inst, &pool), AFD_OK);
    assert_close(pool.instances, 5, 0, 0);
    assert_true(isnan(pool.kv_bytes));
    inst.kv_bytes_per_token = 2e5;
    assert_int_equal(afd_decode_pool_size(&need, &inst, &pool), AFD_OK);
    assert_close(pool.kv_bytes, 5e11, 1e-15, 0);
    assert_close(pool.kv_bytes_q, 6.2e11, 1e-15, 0);
    assert_close(pool.instances, 5, 0, 0); /* no budget: memory does not count */
    inst.kv_budget = 8e10;
    assert_int_equal(afd_decode_pool_size(&need, &inst, &pool), AFD_OK);
    assert_close(pool.instances, 8, 0, 0); /* the KV quantile binds */
    inst.kv_budget = 2e11;                 /* ceil(3.1) = 4 < 5: the slots bind */
    assert_int_equal(afd_decode_pool_size(&need, &inst, &pool), AFD_OK);
    assert_close(pool.instances, 5, 0, 0);
    /* no demand still needs one instance; without slots no count */
    need.slots_q = need.kv_tokens = need.kv_tokens_q = 0;
    assert_int_equal(afd_decode_pool_size(&need, &inst, &pool), AFD_OK);
    assert_close(pool.instances, 1, 0, 0);
    assert_close(pool.kv_bytes, 0, 0, 0);
    inst.slots = NAN;
    assert_int_equal(afd_decode_pool_size(&need, &inst, &pool), AFD_OK);
    assert_true(isnan(pool.instances));
    /* errors */
    inst.slots = 0;
    assert_int_equal(afd_decode_pool_size(&need, &inst, &pool), AFD_EINVAL);
    assert_true(isnan(pool.instances) && isnan(pool.kv_bytes));
    inst.slots = 8;
    inst.kv_bytes_per_token = NAN; /* a budget needs bytes per token */
    assert_int_equal(afd_decode_pool_size(&need, &inst, &pool), AFD_EINVAL);
    inst.kv_bytes_per_token = INFINITY;
    assert_int_equal(afd_decode_pool_size(&need, &inst, &pool), AFD_EINVAL);
    inst.kv_bytes_per_token = 1;
    need.slots_q = NAN;
    assert_int_equal(afd_decode_pool_size(&need, &inst, &pool), AFD_EINVAL);
}

/* P(K <= x) of the compound Poisson K = Y_1 + ... + Y_N, N ~ Poisson(m),
 * Y uniform on {1, ..., 20}, exactly by Panjer's recursion (Panjer 1981):
 * f(0) = e^{-m}, f(x) = (m / x) sum_{k=1}^{min(x,20)} k P(Y = k) f(x - k).
 * Returns the smallest integer x with P(K <= x) >= q. */
static double panjer_uniform20(double m, double q)
{
    double f[4096], cdf;
    int x, k;
    f[0] = exp(-m);
    cdf = f[0];
    for (x = 1; cdf < q && x < 4096; x++) {
        double s = 0;
        for (k = 1; k <= 20 && k <= x; k++)
            s += k * (1.0 / 20) * f[x - k];
        f[x] = m / x * s;
        cdf += f[x];
    }
    return x - 1;
}

/* The KV quantile of afd_decode_demand against the exact compound Poisson
 * quantile, Y uniform on {1..20}: theta = 10.5, nu^2 = (20^2 - 1) / 12 =
 * 33.25.  The Panjer quantiles are 125 (m = 5) and 733 (m = 50); the
 * mixture is within 0.25% of them (125.28 and 733.05 by an independent
 * evaluation), where the plain normal m theta + z sqrt(m (theta^2 + nu^2))
 * gives 114.8 (-8%) and 722.1 (-1.5%).  Tolerance 0.5%: the exact quantile
 * is an integer, the approximation continuous. */
static void kv_quantile(void **state)
{
    afd_workload g;
    afd_decode_need n;
    double m[] = {5, 50}, z = gsl_cdf_ugaussian_Pinv(0.99);
    size_t i;
    (void)state;
    assert_int_equal(afd_workload_given(10.5, sqrt(399.0 / 12), &g), AFD_OK);
    g.stats.mean_d = 1; /* L = lambda E[D] s_d = lambda */
    for (i = 0; i < 2; i++) {
        double exact = panjer_uniform20(m[i], 0.99);
        assert_int_equal(afd_decode_demand(m[i], &g, 1, 0.99, &n), AFD_OK);
        assert_close(n.kv_tokens, m[i] * 10.5, 1e-14, 0);
        assert_close(n.kv_tokens_q, exact, 5e-3, 0);
        /* the plain normal misses by more at m = 5: the mixture matters */
        if (m[i] == 5)
            assert_true(fabs(m[i] * 10.5 + z * sqrt(m[i] * (10.5 * 10.5 + 399.0 / 12)) - exact) >
                        0.05 * exact);
    }
    assert_close(panjer_uniform20(5, 0.99), 125, 0, 0);
    assert_close(panjer_uniform20(50, 0.99), 733, 0, 0);
    /* no load: no memory; a constant load (nu = 0): n theta at the slot
     * quantile, here Poisson(5)'s 0.99-quantile 11 times 10 tokens */
    assert_int_equal(afd_decode_demand(0, &g, 1, 0.99, &n), AFD_OK);
    assert_close(n.kv_tokens_q, 0, 0, 0);
    afd_workload_free(&g);
    assert_int_equal(afd_workload_given(10, 0, &g), AFD_OK);
    g.stats.mean_d = 1;
    assert_int_equal(afd_decode_demand(5, &g, 1, 0.99, &n), AFD_OK);
    assert_close(n.slots_q, 11, 0, 0);
    assert_close(n.kv_tokens_q, 110, 1e-11, 0);
    afd_workload_free(&g);
}

/* The step law S(b) = 0.01 + 1e-4 b + 1e-7 b theta on the geometric workload
 * of mean prompt 100 and output 500: theta = 100 + 500 - 1 = 599 (Lemma
 * 4.1), so S grows by 1e-4 + 599e-7 = 1.599e-4 a sequence.  At lambda 20
 * over N = 4 instances each takes l = 5, l E[D] = 2500 and x = 2500 x
 * 1.599e-4 = 0.39975; Little's law n = 2500 S(n) gives n = 2500 x 0.01 /
 * (1 - 0.39975) = 25 / 0.60025 = 41.6493127863..., the pool L = 4 n =
 * 166.597251145..., and the mean step S(n) = n / 2500 = 0.0166597251145...
 * One instance (x = 1.599) is unstable, two (x = 0.7995) hold 249.38 each. */
static void decode_demand_law(void **state)
{
    afd_workload g;
    afd_decode_need n, c;
    afd_decode_law law = {0.01, 1e-4, 1e-7}, flat = {0.03, 0, 0};
    double k;
    (void)state;
    assert_int_equal(afd_workload_geometric(100, 500, &g), AFD_OK);
    assert_close(g.stats.theta, 599, 1e-12, 0);
    assert_int_equal(afd_decode_demand_law(20, &g, &law, 4, 0.99, &n), AFD_OK);
    assert_close(n.occupancy, 25 / 0.60025, 1e-13, 0);
    assert_close(n.slots_mean, 100 / 0.60025, 1e-13, 0);
    assert_close(n.step, 0.01 / 0.60025, 1e-13, 0);
    assert_close(n.step, n.occupancy / 2500, 1e-13, 0); /* n = l E[D] S(n) */
    assert_close(n.kv_tokens, 599 * 100 / 0.60025, 1e-13, 0);
    assert_close(n.instances, 4, 0, 0);
    /* the quantile of Poisson(L) and the step at a quarter of it */
    k = n.slots_q;
    assert_true(gsl_cdf_poisson_P((unsigned)k, 100 / 0.60025) >= 0.99);
    assert_true(gsl_cdf_poisson_P((unsigned)k - 1, 100 / 0.60025) < 0.99);
    assert_close(n.step_q, 0.01 + 1.599e-4 * k / 4, 1e-13, 0);
    /* two instances: x = 0.7995, n = 2 x 5000 x 0.01 / ... per instance 50 / 0.2005 */
    assert_int_equal(afd_decode_demand_law(20, &g, &law, 2, 0.99, &n), AFD_OK);
    assert_close(n.occupancy, 50 / 0.2005, 1e-12, 0);
    /* one: every step adds more work than it serves */
    assert_int_equal(afd_decode_demand_law(20, &g, &law, 1, 0.99, &n), AFD_EUNSTABLE);
    assert_true(isinf(n.occupancy) && isinf(n.step) && isinf(n.slots_q));
    /* a constant step is afd_decode_demand to the last bit, whatever N */
    assert_int_equal(afd_decode_demand(20, &g, 0.03, 0.99, &c), AFD_OK);
    assert_int_equal(afd_decode_demand_law(20, &g, &flat, 7, 0.99, &n), AFD_OK);
    assert_true(n.slots_mean == c.slots_mean && n.slots_q == c.slots_q &&
                n.kv_tokens == c.kv_tokens && n.kv_tokens_q == c.kv_tokens_q);
    assert_true(n.step == 0.03 && n.step_q == 0.03 && c.step == 0.03);
    assert_close(n.occupancy, 300.0 / 7, 1e-14, 0);
    /* errors */
    law.gamma = -1;
    assert_int_equal(afd_decode_demand_law(20, &g, &law, 4, 0.99, &n), AFD_EINVAL);
    law.gamma = 1e-4;
    assert_int_equal(afd_decode_demand_law(20, &g, &law, 0.5, 0.99, &n), AFD_EINVAL);
    assert_int_equal(afd_decode_demand_law(20, &g, NULL, 4, 0.99, &n), AFD_EINVAL);
    afd_workload_free(&g);
}

/* The smallest pool N whose demand fits N instances of 64 slots, for the
 * law above at lambda 20.  By hand: N = 2, 3 and 4 hold L = 498.75,
 * 214.13 and 166.60 (100 / (1 - 20 / N 500 1.599e-4)); the 0.99 quantile
 * of Poisson(214.13) is about 214.13 + 2.326 sqrt(214.13) = 248 > 3 x 64,
 * that of Poisson(166.60) about 197 <= 4 x 64: N = 4.  Then against a
 * plain scan over N at other rates, with a KV budget as well. */
static void decode_pool_law(void **state)
{
    afd_workload g;
    afd_decode_need n, m;
    afd_decode_pool pool, p2;
    afd_decode_law law = {0.01, 1e-4, 1e-7}, flat = {0.03, 0, 0};
    afd_decode_instance inst = {64, NAN, NAN};
    double lambda;
    (void)state;
    assert_int_equal(afd_workload_geometric(100, 500, &g), AFD_OK);
    assert_int_equal(afd_decode_pool_law(20, &g, &law, 0.99, &inst, &n, &pool), AFD_OK);
    assert_close(pool.instances, 4, 0, 0);
    assert_close(n.instances, 4, 0, 0);
    assert_close(n.slots_mean, 100 / 0.60025, 1e-13, 0);
    assert_true(n.step_q <= 0.01 + 1.599e-4 * 64);
    inst.kv_bytes_per_token = 1000;
    inst.kv_budget = 2e7; /* 20000 tokens: 8.3 sequences of 599 at the mean */
    for (lambda = 0.5; lambda < 200; lambda *= 1.7) {
        double want = 0;
        int fits;
        for (want = 1;; want++) {
            afd_status st = afd_decode_demand_law(lambda, &g, &law, want, 0.99, &m);
            if (st == AFD_EUNSTABLE)
                continue;
            assert_int_equal(st, AFD_OK);
            fits = m.slots_q <= 64 * want && m.kv_tokens_q * 1000 <= 2e7 * want;
            if (fits)
                break;
        }
        assert_int_equal(afd_decode_pool_law(lambda, &g, &law, 0.99, &inst, &n, &pool), AFD_OK);
        assert_close(pool.instances, want, 0, 0);
        assert_true(n.slots_mean == m.slots_mean && n.kv_tokens_q == m.kv_tokens_q);
    }
    /* a constant step: afd_decode_demand and afd_decode_pool_size, unchanged */
    inst.kv_bytes_per_token = inst.kv_budget = NAN;
    assert_int_equal(afd_decode_pool_law(20, &g, &flat, 0.99, &inst, &n, &pool), AFD_OK);
    assert_int_equal(afd_decode_demand(20, &g, 0.03, 0.99, &m), AFD_OK);
    assert_int_equal(afd_decode_pool_size(&m, &inst, &p2), AFD_OK);
    assert_close(pool.instances, 6, 0, 0); /* ceil(341 / 64), as decode_demand */
    assert_true(pool.instances == p2.instances && n.slots_q == m.slots_q);
    /* without slots: the demand of one instance, a law needs a count */
    inst.slots = NAN;
    assert_int_equal(afd_decode_pool_law(20, &g, &flat, 0.99, &inst, &n, &pool), AFD_OK);
    assert_true(isnan(pool.instances));
    assert_int_equal(afd_decode_pool_law(20, &g, &law, 0.99, &inst, &n, &pool), AFD_EINVAL);
    /* a rate that is no number is a bad argument, not a pool past 10^9 */
    inst.slots = 64;
    assert_int_equal(afd_decode_pool_law(NAN, &g, &law, 0.99, &inst, &n, &pool), AFD_EINVAL);
    assert_true(isnan(n.slots_mean) && isnan(pool.instances));
    assert_int_equal(afd_decode_pool_law(INFINITY, &g, &law, 0.99, &inst, &n, &pool),
                     AFD_EINVAL);
    afd_workload_free(&g);
}

/* Goodput with the law: at the rate found, the demand of the pool's decode
 * instances fits and 0.1% more does not; S(1) above the SLO is tpot. */
static void goodput_law(void **state)
{
    afd_workload g;
    afd_prefill_model m = {0.02, 1e-4, 0};
    afd_service_law s;
    afd_pd_pool pool;
    afd_decode_need n;
    afd_decode_law law = {0.01, 1e-4, 1e-7};
    double lambda, cap;
    int limit;
    (void)state;
    assert_int_equal(afd_workload_geometric(100, 500, &g), AFD_OK);
    assert_int_equal(afd_service_law_from_workload(&g, &m, &s), AFD_OK);
    memset(&pool, 0, sizeof pool);
    pool.prefill = &s;
    pool.workload = &g;
    pool.prefill_instances = 64;
    pool.decode_instances = 4;
    pool.percentile = 0.9;
    pool.ttft_slo = 10;
    pool.mg = 1;
    pool.decode_step = 0.01;
    pool.decode_gamma = 1e-4;
    pool.decode_alpha = 1e-7;
    pool.tpot_slo = 0.05;
    pool.slots_per_instance = 64;
    pool.slot_quantile = 0.99;
    assert_int_equal(afd_pd_goodput(&pool, &lambda, &limit), AFD_OK);
    assert_int_equal(limit, AFD_LIMIT_SLOTS);
    assert_int_equal(afd_decode_demand_law(lambda, &g, &law, 4, 0.99, &n), AFD_OK);
    assert_true(n.slots_q <= 4 * 64);
    assert_int_equal(afd_decode_demand_law(lambda * 1.001, &g, &law, 4, 0.99, &n), AFD_OK);
    assert_true(n.slots_q > 4 * 64);
    /* below the rate where the mean fills the slots: 256 / (500 S(64)) */
    cap = 256 / (500 * (0.01 + 1.599e-4 * 64));
    assert_true(lambda < cap && lambda > 0.8 * cap);
    /* one sequence alone: 0.01 + 1.599e-4 > 0.0101 */
    pool.tpot_slo = 0.0101;
    assert_int_equal(afd_pd_goodput(&pool, &lambda, &limit), AFD_OK);
    assert_close(lambda, 0, 0, 0);
    assert_int_equal(limit, AFD_LIMIT_TPOT);
    /* The mean step binds: S(n) = beta / (1 - x), x = (lambda / N) E[D]
     * gamma, reaches the SLO at 1 - x = beta / slo, i.e. lambda = N (1 -
     * beta / slo) / (E[D] gamma) = 4 (1 - 0.01 / 0.02) / (500 x 1e-3) = 4 /s.
     * There the pool holds L = 4 x 500 x 0.01 / 0.5 = 40 sequences, far from
     * its 256 slots, and the prefill pool (capacity ~2000 /s) is idle. */
    pool.decode_gamma = 1e-3;
    pool.decode_alpha = 0;
    pool.tpot_slo = 0.02;
    assert_int_equal(afd_pd_goodput(&pool, &lambda, &limit), AFD_OK);
    assert_close(lambda, 4, 4e-9, 0);
    assert_int_equal(limit, AFD_LIMIT_TPOT);
    pool.decode_alpha = -1;
    assert_int_equal(afd_pd_goodput(&pool, &lambda, &limit), AFD_EINVAL);
    afd_workload_free(&g);
}

/* Four requests of P = 100, D = 11 (theta and nu as the rows have them,
 * read by the KV term only, which the tests below leave at alpha = 0). */
static afd_workload eleven(void)
{
    static const uint64_t p[] = {100, 100, 100, 100}, d[] = {11, 11, 11, 11};
    afd_workload w = rows(p, d, 4);
    w.stats.mean_d = 11;
    w.stats.theta = 105;
    w.stats.nu = 0;
    return w;
}

/* The P90 of per-request TPOT, every request of 11 output tokens (m = 10
 * steps after the first), one decode instance at 5 /s, z = 1.2815515655446
 * the normal's 0.9 quantile.
 * A constant step of 30 ms: every step is beta whatever the batch, so TPOT =
 * beta + J / 10 with J the join wait.  The instance holds n = 5 x 11 x 0.03
 * = 1.65 sequences, busy 1 - e^-1.65 = 0.80795009, and J is uniform over a
 * step when busy, 0 when idle: E[J] = busy beta / 2, Var J = busy beta^2 /
 * 12 + busy (1 - busy) (beta / 2)^2, so the P90 is 0.03 + (E[J] + z sd(J)) /
 * 10 = 0.0324643674 s.
 * A step 0.03 + 0.001 b: x = 5 x 11 x 0.001 = 0.055, n = 1.65 / (1 - x) =
 * 1.74603175, index of dispersion d = 1 / (1 - x); the request sees d n
 * gamma^2 of step variance over its batch, of which the mean of 10 steps
 * keeps phi = 2/3 (lives of exactly 10 steps: r(u) = 1 - u / 10, and (2 /
 * t^2) int_0^t (t - u)(1 - u / t) du = 2/3 at t = 10); its mean is beta +
 * gamma (n + d - 1) + gamma + E[J] / 10 with J uniform over S(n) =
 * 0.03174603 when busy: P90 0.0360530844 s. */
static void tpot_quantile(void **state)
{
    afd_workload w = eleven();
    afd_decode_law law = {0.03, 0, 0};
    afd_decode_tpot t;
    (void)state;
    assert_int_equal(afd_decode_tpot_quantile(5, &w, &law, 1, 0.9, &t), AFD_OK);
    assert_close(t.step, 0.03, 1e-15, 0);
    assert_close(t.join, 0.80795009 * 0.015, 1e-8, 0);
    assert_close(t.mean, 0.03 + 0.80795009 * 0.0015, 1e-8, 0);
    assert_close(t.q, 0.0324643674161, 1e-9, 0);
    law.gamma = 0.001;
    assert_int_equal(afd_decode_tpot_quantile(5, &w, &law, 1, 0.9, &t), AFD_OK);
    assert_close(t.step, 0.03174603175, 1e-9, 0);
    assert_close(t.q, 0.0360530844322, 1e-9, 0);
    /* errors: p outside (0, 1); a trace without its rows; no request with a
     * second token */
    assert_int_equal(afd_decode_tpot_quantile(5, &w, &law, 1, 1, &t), AFD_EINVAL);
    assert_true(isnan(t.q));
    {
        uint64_t *kept = w.decode, ones[4] = {1, 1, 1, 1};
        w.decode = ones;
        assert_int_equal(afd_decode_tpot_quantile(5, &w, &law, 1, 0.9, &t), AFD_EEMPTY);
        w.decode = NULL;
        assert_int_equal(afd_decode_tpot_quantile(5, &w, &law, 1, 0.9, &t), AFD_EINVAL);
        w.decode = kept;
    }
    afd_workload_free(&w);
}

/* The geometric law of D: m = D - 1 given m >= 1 is geometric on {1, 2, ...}
 * with the same q = 1 / mu_d, so E[1/m] = sum q (1 - q)^(k-1) / k = -q ln q /
 * (1 - q), and with a constant 30 ms step the mean TPOT is beta + E[J] E[1/m],
 * E[J] = (1 - e^-n) beta / 2 on one instance, n = lambda mu_d beta.
 * mu_d = 2 at 10 /s: n = 0.6, E[1/m] = ln 2, mean 0.03 + 0.006767825459 ln 2
 * = 0.03469109914 s.  mu_d = 1e5 at 1e-3 /s (D cut at 2.76e6 values, most of
 * them taken in runs): n = 3, E[J] = 0.01425319397, E[1/m] = 1.15130406e-4,
 * the mean 0.03 + 1.640976e-6 s. */
static void tpot_quantile_geometric(void **state)
{
    afd_workload g;
    afd_decode_law law = {0.03, 0, 0};
    afd_decode_tpot t;
    (void)state;
    assert_int_equal(afd_workload_geometric(100, 2, &g), AFD_OK);
    assert_int_equal(afd_decode_tpot_quantile(10, &g, &law, 1, 0.9, &t), AFD_OK);
    assert_close(t.mean, 0.03469109914, 1e-9, 0);
    assert_true(t.q > t.mean);
    assert_int_equal(afd_workload_geometric(100, 1e5, &g), AFD_OK);
    assert_int_equal(afd_decode_tpot_quantile(1e-3, &g, &law, 1, 0.9, &t), AFD_OK);
    assert_close(t.mean - 0.03, 1.640976e-6, 1e-5, 0);
    /* every request of one output token: no TPOT */
    assert_int_equal(afd_workload_geometric(100, 1, &g), AFD_OK);
    assert_int_equal(afd_decode_tpot_quantile(1e-3, &g, &law, 1, 0.9, &t), AFD_EEMPTY);
}

/* goodput holds the P90 of per-request TPOT (afd_decode_tpot_quantile) to
 * the SLO, not the mean step: the constant 30 ms step of tpot_quantile
 * meets a 32.4643674 ms SLO at every rate, but its P90 reaches it at 5 /s
 * exactly (the prefill pool, four instances of 10 ms, and the slots are far
 * from binding there). */
static void goodput_tpot_quantile(void **state)
{
    afd_workload w = eleven();
    afd_prefill_model m = {0.01, 0, 0};
    afd_service_law s;
    afd_pd_pool pool = {.prefill = &s, .workload = &w, .prefill_instances = 4,
                        .decode_instances = 1, .percentile = 0.9, .ttft_slo = 1, .mg = 1,
                        .decode_step = 0.03, .tpot_slo = 0.0324643674161,
                        .slots_per_instance = 256, .slot_quantile = 0.99,
                        .tpot_percentile = 0.9};
    double lambda;
    int limit;
    (void)state;
    assert_int_equal(afd_service_law_from_workload(&w, &m, &s), AFD_OK);
    assert_int_equal(afd_pd_goodput(&pool, &lambda, &limit), AFD_OK);
    assert_close(lambda, 5, 1e-7, 0);
    assert_int_equal(limit, AFD_LIMIT_TPOT);
    pool.tpot_percentile = 1;
    assert_int_equal(afd_pd_goodput(&pool, &lambda, &limit), AFD_EINVAL);
    afd_workload_free(&w);
}

/* An occupancy past 2^32: lambda 5e6 /s, E[D] 1000, a 1 s step hold
 * L = 5e9 sequences.  The 0.99 quantile by Cornish-Fisher with the
 * continuity correction, L + z sqrt(L) + (z^2 - 1) / 6 - 1/2 with
 * z = 2.3263479 (the next term is O(L^-1/2), 1e-5 here), is
 * 5000164497.87: the smallest k with P(Poisson(L) <= k) >= 0.99 is
 * 5000164498. */
static void decode_demand_huge(void **state)
{
    afd_workload g;
    afd_decode_need n;
    (void)state;
    assert_int_equal(afd_workload_geometric(100, 1000, &g), AFD_OK);
    assert_int_equal(afd_decode_demand(5e6, &g, 1, 0.99, &n), AFD_OK);
    assert_close(n.slots_mean, 5e9, 0, 0);
    assert_close(n.slots_q, 5000164498.0, 0, 0);
    afd_workload_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(service_law),   cmocka_unit_test(deterministic_service),
        cmocka_unit_test(prefill_pool),  cmocka_unit_test(decode_demand),
        cmocka_unit_test(goodput),       cmocka_unit_test(decode_pool),
        cmocka_unit_test(kv_quantile),
        cmocka_unit_test(decode_demand_law), cmocka_unit_test(decode_pool_law),
        cmocka_unit_test(goodput_law),   cmocka_unit_test(decode_demand_huge),
        cmocka_unit_test(tpot_quantile), cmocka_unit_test(tpot_quantile_geometric),
        cmocka_unit_test(goodput_tpot_quantile),
    };
    gsl_set_error_handler_off();
    RUN_TESTS(tests);
}
