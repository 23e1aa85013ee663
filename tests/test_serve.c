/* test_serve.c: the request-level serving simulator against exact queues
 * and hand-computed timelines. */
#include <config.h>

#include <math.h>
#include <string.h>

#include "afd_queue.h"
#include "afd_serve.h"
#include "test_util.h"

/* Latency laws in seconds; the six AFD coefficients are not used here. */
static afd_hw laws(double pa, double pb, double pc, double beta, double gamma, double alpha)
{
    afd_hw hw;
    afd_hw_init(&hw);
    hw.alpha_a = hw.alpha_f = 1;
    hw.beta_a = hw.beta_f = hw.alpha_c = hw.beta_c = 0;
    strcpy(hw.unit, "s");
    hw.prefill_a = pa;
    hw.prefill_b = pb;
    hw.prefill_c = pc;
    hw.decode_beta = beta;
    hw.decode_gamma = gamma;
    hw.decode_alpha = alpha;
    return hw;
}

static afd_serve_params base(const afd_hw *hw, const char *arch)
{
    afd_serve_params p;
    memset(&p, 0, sizeof p);
    p.policy = afd_serve_policy_find(arch);
    p.hw = hw;
    p.config.instances = p.config.prefill = p.config.decode = 1;
    p.config.prefill_bmax = 1;
    p.config.decode_bmax = 16;
    p.config.chunk = 512;
    p.ttft_slo = p.tpot_slo = INFINITY;
    p.seed = 20260501;
    return p;
}

/* One prefill instance, batch 1, constant prefill time D: TTFT is the
 * sojourn time of M/D/1, W + D, with W from afd_md1_* (exact). */
static void md1_ttft(void **state)
{
    const double D = 2.385, rho = 0.7;
    afd_hw hw = laws(D, 0, 0, 0.01, 0, 0);
    afd_serve_params p = base(&hw, "disagg");
    afd_serve_result r;
    (void)state;
    p.lambda = rho / D;
    p.prompt = 100;
    p.output = 1;
    p.requests = 200000;
    p.warmup = 2000;
    assert_int_equal(afd_serve_run(&p, &r, NULL), AFD_OK);
    assert_int_equal(r.completed, 200000);
    assert_int_equal(r.unstable, 0);
    /* Pollaczek-Khinchine: Wq = rho D / (2 (1 - rho)) */
    assert_within_se(r.ttft.mean, rho * D / (2 * (1 - rho)) + D, r.ttft.mean_se, 5);
    assert_within_se(r.ttft.p90, afd_md1_wait_quantile(p.lambda, D, 0.9) + D, r.ttft.p90_se, 4);
    assert_within_se(r.ttft.p50, afd_md1_wait_quantile(p.lambda, D, 0.5) + D, r.ttft.p50_se, 4);
    assert_true(isnan(r.tpot.mean)); /* one output token: no TPOT */
    assert_int_equal(r.tpot_count, 0);
    assert_close(r.throughput, p.lambda, 0.02, 0);
}

/* c prefill instances, batch 1: M/D/c, exact by the embedded chain. */
static void mdc_ttft(void **state)
{
    const double D = 1.5;
    const int c = 3;
    afd_hw hw = laws(D, 0, 0, 0.01, 0, 0);
    afd_serve_params p = base(&hw, "disagg");
    afd_serve_result r;
    afd_mdc *q;
    (void)state;
    p.config.prefill = c;
    p.lambda = 0.85 * c / D;
    p.prompt = 7;
    p.output = 1;
    p.requests = 200000;
    p.warmup = 2000;
    assert_int_equal(afd_serve_run(&p, &r, NULL), AFD_OK);
    assert_int_equal(afd_mdc_alloc(p.lambda, D, c, &q), AFD_OK);
    assert_within_se(r.ttft.mean, afd_mdc_wq(q) + D, r.ttft.mean_se, 5);
    assert_within_se(r.ttft.p90, afd_mdc_wait_quantile(q, 0.9) + D, r.ttft.p90_se, 4);
    assert_within_se(r.ttft.p99, afd_mdc_wait_quantile(q, 0.99) + D, r.ttft.p99_se, 4);
    afd_mdc_free(q);
}

/* Requests 1000 time units apart never meet: each sees an empty system.
 * TTFT = a + b P + c P^2; decode step j (j = 1 .. G-1) holds P + j tokens,
 * so TPOT = beta + gamma + alpha (P + G/2). */
static const double PA = 0.02, PB = 1e-4, PC = 2e-9, BETA = 0.03, GAMMA = 0.002, ALPHA = 1e-6;
enum { P = 1000, G = 11 };

static void alone(const char *arch, double *ttft, double *tpot, afd_serve_config *cfg)
{
    static double times[4] = {0, 1e3, 2e3, 3e3};
    afd_hw hw = laws(PA, PB, PC, BETA, GAMMA, ALPHA);
    afd_serve_params p = base(&hw, arch);
    afd_serve_result r;
    if (cfg != NULL)
        p.config = *cfg;
    p.times = times;
    p.n_times = 4;
    p.prompt = P;
    p.output = G;
    p.requests = 4;
    p.batches = 2;
    assert_int_equal(afd_serve_run(&p, &r, NULL), AFD_OK);
    assert_close(r.ttft.p99 - r.ttft.p50, 0, 0, 1e-9); /* all alike */
    *ttft = r.ttft.mean;
    *tpot = r.tpot.mean;
}

static void single_request_timelines(void **state)
{
    double ttft, tpot, prefill = PA + PB * P + PC * P * P;
    double step = BETA + GAMMA + ALPHA * (P + G / 2.0);
    afd_serve_config cfg;
    (void)state;
    alone("disagg", &ttft, &tpot, NULL);
    assert_close(ttft, prefill, 1e-12, 0);
    assert_close(tpot, step, 1e-12, 0);
    alone("colloc", &ttft, &tpot, NULL);
    assert_close(ttft, prefill, 1e-12, 0);
    assert_close(tpot, step, 1e-12, 0);
    /* chunked, S = 300: ceil(1000 / 300) = 4 prefill-only iterations, each
     * with the fixed cost a; the chunks add up to b P + c P^2 */
    memset(&cfg, 0, sizeof cfg);
    cfg.instances = 1;
    cfg.decode_bmax = 8;
    cfg.chunk = 300;
    alone("chunked", &ttft, &tpot, &cfg);
    assert_close(ttft, 4 * PA + PB * P + PC * P * P, 1e-12, 0);
    assert_close(tpot, step, 1e-12, 0);
    /* disagg with a KV transfer of 0.5 + 1e-4 P before the first decode step */
    memset(&cfg, 0, sizeof cfg);
    cfg.prefill = cfg.decode = 1;
    cfg.prefill_bmax = 4;
    cfg.decode_bmax = 4;
    cfg.kv_time_fixed = 0.5;
    cfg.kv_time_per_token = 1e-4;
    alone("disagg", &ttft, &tpot, &cfg);
    assert_close(ttft, prefill, 1e-12, 0);
    assert_close(tpot, step + (0.5 + 1e-4 * P) / (G - 1), 1e-12, 0);
    /* BestServe's pseudo batch size, tau = 0.5: b = 0 busy boxes gives
     * b' = floor(1 / 0.5) = 2, priced as two sequences */
    cfg.kv_time_fixed = cfg.kv_time_per_token = 0;
    cfg.pseudo_tau = 0.5;
    alone("disagg", &ttft, &tpot, &cfg);
    assert_close(tpot, BETA + 2 * GAMMA + 2 * ALPHA * (P + G / 2.0), 1e-12, 0);
}

/* Request 0 arrives at 0 and is prefilled alone over [0, T1], T1 = a + b P
 * + c P^2; requests 1 and 2 arrive at 0.001 and share the next prefill
 * batch, over [T1, T1 + T2] with T2 = a + 2 b P + 2 c P^2, so their TTFT is
 * T1 + T2 - 0.001 (disagg and colloc alike).  Collocated, request 0's
 * decode waits for that prefill (prefill first), then all three decode
 * together: every step of requests 1 and 2 holds b = 3 sequences of
 * P + j tokens, TPOT = beta + 3 gamma + 3 alpha (P + G/2). */
static void shared_batch(void **state)
{
    static double times[3] = {0, 0.001, 0.001};
    const double t1 = PA + PB * P + PC * P * P, t2 = PA + 2 * PB * P + 2 * PC * P * P;
    afd_hw hw = laws(PA, PB, PC, BETA, GAMMA, ALPHA);
    afd_serve_params p = base(&hw, "disagg");
    afd_serve_result r;
    (void)state;
    p.config.prefill_bmax = 2;
    p.times = times;
    p.n_times = 3;
    p.prompt = P;
    p.output = G;
    p.warmup = 1;
    p.requests = 2;
    p.batches = 2;
    assert_int_equal(afd_serve_run(&p, &r, NULL), AFD_OK);
    assert_close(r.ttft.mean, t1 + t2 - 0.001, 1e-12, 0);
    p.policy = afd_serve_policy_find("colloc");
    assert_int_equal(afd_serve_run(&p, &r, NULL), AFD_OK);
    assert_close(r.ttft.mean, t1 + t2 - 0.001, 1e-12, 0);
    assert_close(r.tpot.mean, BETA + 3 * GAMMA + 3 * ALPHA * (P + G / 2.0), 1e-12, 0);
    /* SLOs between the two metrics: TTFT met, TPOT missed, attainment 0 */
    p.ttft_slo = 1;
    p.tpot_slo = BETA;
    assert_int_equal(afd_serve_run(&p, &r, NULL), AFD_OK);
    assert_close(r.attainment, 0, 0, 0);
    p.tpot_slo = 1;
    assert_int_equal(afd_serve_run(&p, &r, NULL), AFD_OK);
    assert_close(r.attainment, 1, 0, 0);
}

/* Every architecture serves what arrives when stable (throughput = lambda),
 * and flags an overload; runs are reproducible bit for bit. */
static void stability(void **state)
{
    static const char *arch[3] = {"colloc", "chunked", "disagg"};
    afd_hw hw = laws(0.01, 1e-4, 0, 0.02, 0.001, 1e-7);
    int k;
    (void)state;
    for (k = 0; k < 3; k++) {
        afd_serve_params p = base(&hw, arch[k]);
        afd_serve_result r, r2;
        p.config.prefill_bmax = 4;
        p.prompt = 500;
        p.output = 20;
        p.requests = 20000;
        p.warmup = 1000;
        /* prefill 0.06 s per request: 5/s loads one prefill instance to 0.3 */
        p.lambda = 5;
        assert_int_equal(afd_serve_run(&p, &r, NULL), AFD_OK);
        assert_int_equal(r.unstable, 0);
        assert_close(r.throughput, 5, 0.03, 0);
        assert_int_equal(afd_serve_run(&p, &r2, NULL), AFD_OK);
        assert_true(memcmp(&r.ttft, &r2.ttft, sizeof r.ttft) == 0);
        /* 40/s needs 2.4 s of prefill per second */
        p.lambda = 40;
        assert_int_equal(afd_serve_run(&p, &r, NULL), AFD_OK);
        if (!r.unstable)
            print_error("%s: growth %g backlog %llu\n", arch[k], r.growth,
                        (unsigned long long)r.backlog);
        assert_int_equal(r.unstable, 1);
        assert_true(r.growth > 0.1);
    }
}

static void errors(void **state)
{
    afd_hw hw = laws(1, 0, 0, 1, 0, 0), none;
    afd_serve_params p = base(&hw, "chunked");
    afd_serve_result r;
    afd_error err;
    (void)state;
    p.lambda = 1;
    p.prompt = 10;
    p.output = 2;
    p.requests = 100;
    p.config.decode_bmax = 512;
    assert_int_equal(afd_serve_run(&p, &r, &err), AFD_EINVAL);
    assert_non_null(strstr(err.text, "chunk"));
    assert_true(isnan(r.ttft.p90));
    p.config.decode_bmax = 16;
    p.output = 0;
    assert_int_equal(afd_serve_run(&p, &r, &err), AFD_EINVAL);
    p.output = 2;
    p.lambda = 0;
    assert_int_equal(afd_serve_run(&p, &r, &err), AFD_EINVAL);
    p.lambda = 1;
    p.requests = 1;
    assert_int_equal(afd_serve_run(&p, &r, &err), AFD_EINVAL);
    p.requests = 100;
    afd_hw_init(&none);
    p.hw = &none;
    assert_int_equal(afd_serve_run(&p, &r, &err), AFD_EINVAL);
    assert_non_null(strstr(err.text, "prefill"));
    p.hw = &hw;
    p.policy = afd_serve_policy_find("disagg");
    p.config.decode = 0;
    assert_int_equal(afd_serve_run(&p, &r, &err), AFD_EINVAL);
    assert_null(afd_serve_policy_find("hybrid"));
    assert_non_null(afd_serve_policy_at(3));
    assert_null(afd_serve_policy_at(4));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(md1_ttft),
        cmocka_unit_test(mdc_ttft),
        cmocka_unit_test(single_request_timelines),
        cmocka_unit_test(shared_batch),
        cmocka_unit_test(stability),
        cmocka_unit_test(errors),
    };
    RUN_TESTS(tests);
}
