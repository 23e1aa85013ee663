/* test_plan.c: plan's search against independent derivations.  The afd
 * row of a system whose prefill is far faster than its decode is the AFD
 * pool worked out by hand (nu = 0: tau_G exact, see test_pool.c); colloc's
 * and disagg's choices against a search of every configuration with
 * afd_serving_goodput, one bisection each (the plan uses one per size or
 * per stage); the selection, the ranking and the table's rates by hand. */
#include <config.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

#include "afd_plan.h"
#include "afd_serving.h"

/* The AFD coefficients of test_pool.c (mu_A = B + 2 at theta 1000, FFN line
 * 0.5 r B + 5, communication 0.01 r B + 1), a prefill of 0.5 ms + 0.1 us
 * per token (a 1000-token prompt in 0.6 ms) and a decode step of
 * 2 ms + b (0.01 + 0.001 K). */
static afd_plan_tp tp_hand(void)
{
    afd_plan_tp t;
    memset(&t, 0, sizeof t);
    afd_hw_init(&t.hw);
    t.hw.alpha_a = 0.001;
    t.hw.beta_a = 2;
    t.hw.alpha_f = 0.5;
    t.hw.beta_f = 5;
    t.hw.alpha_c = 0.01;
    t.hw.beta_c = 1;
    t.hw.prefill_a = 0.5;
    t.hw.prefill_b = 1e-4;
    t.hw.prefill_c = 0;
    t.hw.decode_beta = 2;
    t.hw.decode_gamma = 0.01;
    t.hw.decode_alpha = 0.001;
    snprintf(t.hw.unit, sizeof t.hw.unit, "ms");
    t.tp = 2;
    t.bmax = 16;
    t.kv_capacity = 1101.0 * 200; /* 200 requests of 1000 + 101 tokens */
    t.kv_time_per_token = 0;
    return t;
}

static afd_taichi_lengths len_hand(void)
{
    afd_taichi_lengths l;
    memset(&l, 0, sizeof l);
    l.prompt_mean = 1000;
    l.prompt_m2 = 1e6;
    l.prompt_max = 1000;
    l.output_mean = 101;
    l.theta = 1000; /* nu = 0: every slot holds 1000 tokens */
    l.nu = 0;
    return l;
}

static afd_plan_params plan_hand(const afd_taichi_lengths *len)
{
    afd_plan_params p;
    memset(&p, 0, sizeof p);
    p.len = len;
    p.ttft = 1000;
    p.tpot = 20.5;
    p.tol = 0.02;
    p.moe = 1;
    return p;
}

/* n = 5 instances.  One prefill instance carries far more than the pools
 * below (about 4 requests per ms against 0.02), so the decode pool binds:
 * NP = 1 leaves 4 instances, whose best pool is 2A-2F with B = 18 (B + 2
 * <= 20.5 and 0.5 x 1 x B + 5 <= 20.5), tau = 20 ms, 2 x 18 / (100 x 20)
 * = 0.018 requests per ms; NP = 2 leaves 3, 2A-1F (B 15) at 0.015. */
static void afd_row_by_hand(void **state)
{
    afd_plan_tp t = tp_hand();
    afd_taichi_lengths len = len_hand();
    afd_plan_params pl = plan_hand(&len);
    afd_plan_row cand[AFD_PLAN_N_ARCH];
    const afd_plan_row *r = &cand[AFD_PLAN_AFD];
    (void)state;
    assert_int_equal(afd_plan_closed_best(&pl, &t, 5, NULL, 0, cand), AFD_OK);
    assert_int_equal(r->prefill, 1);
    assert_int_equal(r->decode, 2);
    assert_int_equal(r->ffn, 2);
    assert_int_equal(r->bmax, 18);
    assert_close(r->tau, 20, 1e-12, 0);
    assert_close(r->closed, 0.018, 1e-12, 0);
    assert_string_equal(r->limit, "decode");
    assert_int_equal(afd_plan_gpus(r), 10);
    /* not a MoE model: no afd configuration */
    pl.moe = 0;
    assert_int_equal(afd_plan_closed_best(&pl, &t, 5, NULL, 0, cand), AFD_OK);
    assert_close(cand[AFD_PLAN_AFD].closed, 0, 0, 0);
}

/* colloc's and disagg's choices: every instance count and every split,
 * each by its own bisection (afd_serving_goodput). */
static void colloc_disagg_by_search(void **state)
{
    afd_plan_tp t = tp_hand();
    afd_taichi_lengths len = len_hand();
    afd_plan_params pl = plan_hand(&len);
    afd_plan_row cand[AFD_PLAN_N_ARCH];
    afd_serving_params q;
    double best_c = 0, best_d = 0, g;
    unsigned n = 6, i, np, nd;
    int limit;
    (void)state;
    pl.tpot = 40;
    assert_int_equal(afd_plan_closed_best(&pl, &t, n, NULL, 0, cand), AFD_OK);
    memset(&q, 0, sizeof q);
    q.hw = &t.hw;
    q.prompt = len.prompt_mean;
    q.output = len.output_mean;
    q.prefill_bmax = AFD_PLAN_PREFILL_BMAX;
    q.decode_bmax = t.bmax;
    q.quantile = 0.9;
    q.lambda = 1;
    for (i = 1; i <= n; i++) {
        q.instances = i;
        assert_int_equal(afd_serving_goodput(&q, 1, pl.ttft, pl.tpot, 0.001, &g, &limit), AFD_OK);
        if (g > best_c)
            best_c = g;
    }
    q.instances = 0;
    for (np = 1; np < n; np++)
        for (nd = 1; np + nd <= n; nd++) {
            q.prefill = np;
            q.decode = nd;
            assert_int_equal(afd_serving_goodput(&q, 0, pl.ttft, pl.tpot, 0.001, &g, &limit),
                             AFD_OK);
            if (g > best_d)
                best_d = g;
        }
    assert_true(best_c > 0 && best_d > 0);
    /* both searches bisect to 1% (the plan) and 0.1% (here) */
    assert_close(cand[AFD_PLAN_COLLOC].closed, best_c, 0.015, 0);
    assert_close(cand[AFD_PLAN_DISAGG].closed, best_d, 0.015, 0);
    assert_true(cand[AFD_PLAN_COLLOC].instances >= 1 && cand[AFD_PLAN_COLLOC].instances <= n);
    assert_true(cand[AFD_PLAN_DISAGG].prefill + cand[AFD_PLAN_DISAGG].decode <= n);
}

/* A goodput at a cliff: with SLOs no request can miss (10^9 ms), every
 * request of a stable run meets them, so the attainment is 1 with standard
 * error 0 up to the stable rate, and the delta method has no spread to
 * divide (0 / slope, or no slope at all).  The goodput's uncertainty is then
 * the bisection's: the last bracket [g, hi) has hi - g <= tol hi, so
 * hi - g < tol g / (1 - tol) = 0.02 g / 0.98. */
static void simulated_goodput_at_a_cliff(void **state)
{
    afd_plan_tp t = tp_hand();
    afd_taichi_lengths len = len_hand();
    afd_plan_params pl = plan_hand(&len);
    const afd_serve_params base = {
        .prompt = 1000, .output = 101, .requests = 2000, .warmup = 200, .batches = 8, .seed = 3};
    afd_serve_params p;
    afd_serve_taichi_config tc;
    afd_serve_result res;
    afd_plan_row r;
    (void)state;
    pl.base = &base;
    pl.ttft = pl.tpot = 1e9;
    afd_plan_row_init(&r, AFD_PLAN_COLLOC, &t);
    r.instances = 1;
    afd_plan_simulate(&pl, &r);
    assert_int_equal(r.st, AFD_OK);
    assert_true(r.goodput > 0);
    /* the premise: at the goodput every batch meets the SLOs */
    afd_plan_serve_params(&pl, &r, &p, &tc);
    p.lambda = r.goodput;
    assert_int_equal(afd_serve_run(&p, &res, NULL), AFD_OK);
    assert_true(res.attainment == 1 && res.attainment_se == 0);
    assert_close(r.goodput_se, 0.02 * r.goodput / 0.98, 1e-12, 0);
    assert_int_equal(r.se_resolution, 1);
}

static afd_plan_row fake(int arch, const afd_plan_tp *ts, unsigned instances, double closed,
                         double goodput)
{
    afd_plan_row r;
    afd_plan_row_init(&r, arch, ts);
    r.instances = instances;
    r.closed = closed;
    r.goodput = goodput;
    return r;
}

/* Two tp sizes, two architectures: select keeps each one's `verify` best
 * by closed goodput (a failed closed form, NAN, last; a size with none
 * positive only when it is the first); best_rows the best measured of
 * each, sorted. */
static void select_and_rank(void **state)
{
    afd_plan_tp t1 = tp_hand(), t2 = tp_hand();
    afd_plan_row cand[2 * AFD_PLAN_N_ARCH], sel[2 * AFD_PLAN_N_ARCH], best[2];
    size_t n_sel;
    (void)state;
    t2.tp = 4;
    memset(cand, 0, sizeof cand);
    cand[0 * AFD_PLAN_N_ARCH + AFD_PLAN_COLLOC] = fake(AFD_PLAN_COLLOC, &t1, 2, 3, NAN);
    cand[1 * AFD_PLAN_N_ARCH + AFD_PLAN_COLLOC] = fake(AFD_PLAN_COLLOC, &t2, 1, 5, NAN);
    cand[0 * AFD_PLAN_N_ARCH + AFD_PLAN_CHUNKED] = fake(AFD_PLAN_CHUNKED, &t1, 2, NAN, NAN);
    cand[1 * AFD_PLAN_N_ARCH + AFD_PLAN_CHUNKED] = fake(AFD_PLAN_CHUNKED, &t2, 1, 0, NAN);
    afd_plan_select(cand, 2, 2, 1, sel, &n_sel);
    assert_int_equal(n_sel, 2);
    assert_int_equal(sel[0].ts->tp, 4); /* colloc: 5 above 3 */
    assert_int_equal(sel[1].ts->tp, 4); /* chunked: 0 above NAN */
    afd_plan_select(cand, 2, 2, 2, sel, &n_sel);
    assert_int_equal(n_sel, 3); /* colloc both; chunked only its first, none positive */
    assert_int_equal(sel[1].ts->tp, 2);
    /* measured: colloc tp 2 better than tp 4 despite its closed form */
    sel[0].goodput = 4;
    sel[1].goodput = 4.5;
    sel[2].goodput = 6;
    afd_plan_best_rows(sel, 3, 2, best);
    assert_int_equal(best[0].arch, AFD_PLAN_CHUNKED);
    assert_int_equal(best[1].arch, AFD_PLAN_COLLOC);
    assert_int_equal(best[1].ts->tp, 2);
    assert_close(best[1].goodput, 4.5, 0, 0);
}

/* 0.01 requests per ms on 5 instances of 2 devices, 101 tokens each, a mean
 * TPOT of 20 ms, 2 USD per device-hour: 1010 tokens/s, 101 per device, 50
 * per user, 20 USD/h over 3.636e6 tokens/h = 5.50055 USD per million. */
static void rates_by_hand(void **state)
{
    afd_plan_tp t = tp_hand();
    afd_taichi_lengths len = len_hand();
    afd_plan_row r = fake(AFD_PLAN_COLLOC, &t, 5, 0.01, 0.01);
    double g, u, d;
    (void)state;
    r.tpot_mean = 20;
    afd_plan_row_rates(&r, &len, 1e-3, 2, &g, &u, &d);
    assert_close(g, 101, 1e-12, 0);
    assert_close(u, 50, 1e-12, 0);
    assert_close(d, 20 / (1010 * 3600.0) * 1e6, 1e-12, 0);
    afd_plan_row_rates(&r, &len, 1e-3, NAN, &g, &u, &d);
    assert_true(isnan(d));
    assert_string_equal(afd_plan_arch_name(AFD_PLAN_AFD), "afd");
    assert_string_equal(afd_plan_arch_name(99), "?");
}

/* The afd points of the hand system on 5 instances (NP = 1 throughout: the
 * prefill instance carries far more), per cap on the slots, with
 * tau = max(B + 2, 0.5 (x / y) B + 5) and rate x B / (100 tau) per ms,
 * 101 tokens each on 10 devices:
 *   first (the plan's pool): 2A-2F, B 18, tau 20: 181.8 tokens/s/GPU, 50 per user
 *   8: 2A-2F tau 10 (3A-1F: 17): 0.016/ms, 161.6 and 100
 *   4: 2A-2F tau 7 (3A-1F: 11): 8 / 700, 115.43 and 142.86
 *   2: 3A-1F tau 8 (2A-2F: 6, 4/600 < 6/800): 0.0075, 75.75 and 125,
 *      dominated by cap 4's
 *   1: 3A-1F tau 6.5: 3 / 650, 46.6 and 153.8. */
static void afd_frontier_by_hand(void **state)
{
    static const double want[5][3] = {{181.8, 50, 1},
                                      {161.6, 100, 1},
                                      {8.0 / 700 * 10100, 1000 / 7.0, 1},
                                      {75.75, 125, 0},
                                      {3.0 / 650 * 10100, 1000 / 6.5, 1}};
    afd_plan_tp t = tp_hand();
    afd_taichi_lengths len = len_hand();
    afd_plan_params pl = plan_hand(&len);
    afd_plan_point *pts;
    size_t n, i, k = 0;
    (void)state;
    assert_int_equal(afd_plan_frontier(&pl, &t, 1, 10, NULL, 0, AFD_PLAN_N_ARCH, 0, 1e-3, &pts, &n),
                     AFD_OK);
    for (i = 0; i < n; i++) {
        if (pts[i].arch != AFD_PLAN_AFD)
            continue;
        assert_true(k < 5);
        assert_close(pts[i].per_gpu, want[k][0], 1e-12, 0);
        assert_close(pts[i].per_user, want[k][1], 1e-12, 0);
        assert_int_equal(pts[i].frontier, (int)want[k][2]);
        k++;
    }
    assert_int_equal(k, 5);
    free(pts);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(afd_row_by_hand),      cmocka_unit_test(colloc_disagg_by_search),
        cmocka_unit_test(select_and_rank),      cmocka_unit_test(rates_by_hand),
        cmocka_unit_test(afd_frontier_by_hand), cmocka_unit_test(simulated_goodput_at_a_cliff),
    };
    RUN_TESTS(tests);
}
