/* test_twotier.c: TTFT attainment and capacity of one pool and LP/HP
 * splits (afd_twotier.h) against independent references:
 *   - M/M/1 FCFS: the sojourn time is Exp(mu - lambda), so attainment
 *     1 - e^{-(mu - lambda) T} and capacity mu - ln(10)/T at 90%;
 *   - the LP part against Barrer's M/M/1+D served-wait law integrated here
 *     by a midpoint sum; the HP part against the GI/M/1 sojourn law of the
 *     offloaded stream, and at d = 0 all of it by hand (the M/M/1/1
 *     overflow into GI/M/1);
 *   - limits: a threshold equal to the SLO sends everything the LP pool
 *     cannot start at once to HP. */
#include <config.h>

#include <string.h>

#include <gsl/gsl_errno.h>

#include "test_util.h"

#include "afdkit.h"

static void one_pool_mm1(void **state)
{
    afd_svc_law *e;
    afd_twotier m;
    afd_twotier_result r;
    double lam = 0.6, T = 2.385, cap;
    (void)state;
    assert_int_equal(afd_svc_law_exponential(1.0, &e), AFD_OK);
    m.law = e;
    m.lp = 1;
    m.hp = 0;
    m.ttft_slo = T;
    m.threshold = 0;
    assert_int_equal(afd_twotier_attainment(&m, lam, &r), AFD_OK);
    assert_close(r.attainment, 1 - exp(-(1 - lam) * T), 1e-9, 0);
    assert_close(r.p_off, 0, 0, 0);
    assert_int_equal(afd_twotier_capacity(&m, 0.9, &cap), AFD_OK);
    assert_close(cap, 1 - log(10) / T, 1e-8, 0);
    /* unstable: nobody meets it */
    assert_int_equal(afd_twotier_attainment(&m, 1.5, &r), AFD_OK);
    assert_close(r.attainment, 0, 0, 0);
    afd_svc_law_free(e);
}

static void two_tier_mm1(void **state)
{
    afd_svc_law *e;
    afd_twotier m;
    afd_twotier_result r;
    afd_deadline_result dl;
    double lam = 1.1, T = 3.0, X = 1.2, d = T - X, mu = 1.0, kappa = mu - lam;
    double p0, poff, a_lp = 0, a_hp, h = 1e-5, s, lh, sg;
    int i;
    (void)state;
    assert_int_equal(afd_svc_law_exponential(1.0, &e), AFD_OK);
    m = (afd_twotier){.law = e, .lp = 1, .hp = 1, .ttft_slo = T, .threshold = X};
    assert_int_equal(afd_twotier_attainment(&m, lam, &r), AFD_OK);
    /* Barrer: P0 = (1 - rho) / (1 - rho^2 E), density lambda P0 e^{-kappa x} on (0, d] */
    assert_int_equal(afd_mmc_deadline(lam, 1.0, 1, d, 0.9, &dl), AFD_OK);
    poff = dl.p_off;
    assert_close(r.p_off, poff, 1e-12, 0);
    p0 = (1 - lam) / (1 - lam * lam * exp(-kappa * d));
    /* A_LP = E_S[P(W <= T - S | served)] by a midpoint sum over S */
    for (s = h / 2; s < T; s += h) {
        double t = T - s, cdf = t >= d ? 1 - poff
                                       : p0 + lam * p0 * (-expm1(-kappa * t)) / kappa;
        a_lp += cdf / (1 - poff) * exp(-s) * h;
    }
    assert_close(r.attain_lp, a_lp, 1e-6, 0);
    /* HP: GI/M/1 fed by the offloads, whose transform psi is checked in
     * test_deadline; its sojourn is Exp(mu (1 - sigma)), sigma = psi(mu (1 -
     * sigma)) found here by fixed-point iteration (a contraction), so
     * A_HP = E_S[P(W <= X - S)] = P(sojourn <= X) = 1 - e^{-mu (1 - sigma) X} */
    sg = 0.5;
    for (i = 0; i < 2000; i++)
        assert_int_equal(afd_mmc_overflow_lst(lam, 1.0, 1, d, mu * (1 - sg), &sg), AFD_OK);
    lh = lam * poff;
    a_hp = 1 - exp(-mu * (1 - sg) * X);
    assert_close(r.attain_hp, a_hp, 1e-9, 0);
    /* below the Poisson stream's M/M/1 sojourn law at the same rate */
    assert_true(a_hp < 1 - exp(-(1 - lh) * X) - 0.02);
    assert_close(r.rho_hp, lh, 1e-12, 0);
    assert_close(r.attainment, (1 - poff) * a_lp + poff * a_hp, 1e-6, 0);
    afd_svc_law_free(e);
}

/* Threshold = SLO (d = 0), exponential service of mean 1/2, lambda = 1,
 * one LP and one HP instance: the LP pool is M/M/1/1 (p_off = B(1, 1/2) =
 * 1/3) and its overflow alternates Exp(2) busy and Exp(1) idle periods, so
 * psi(s) = 1 / (3 + s - 2 / (1 + s)) = (1 + s) / (s^2 + 4 s + 1).  The HP
 * pool is GI/M/1: sigma = psi(2 (1 - sigma)); with x = 2 (1 - sigma),
 * (1 - x/2)(x^2 + 4x + 1) = 1 + x, i.e. x (x^2 + 2x - 5) = 0, x = sqrt(6) - 1.
 * The HP sojourn is Exp(x): A_HP = 1 - e^{-x T}; A_LP = P(S <= T) = 1 - e^{-2T}.
 * A Poisson stream at rate 1/3 (M/M/1) would give 1 - e^{-(5/3) T}. */
static void two_tier_loss_exact(void **state)
{
    afd_svc_law *e;
    afd_twotier m;
    afd_twotier_result r;
    double T = 1.3, x = sqrt(6.0) - 1;
    (void)state;
    assert_int_equal(afd_svc_law_exponential(0.5, &e), AFD_OK);
    m = (afd_twotier){.law = e, .lp = 1, .hp = 1, .ttft_slo = T, .threshold = T};
    assert_int_equal(afd_twotier_attainment(&m, 1.0, &r), AFD_OK);
    assert_close(r.p_off, 1.0 / 3, 1e-12, 0);
    assert_close(r.attain_lp, 1 - exp(-2 * T), 1e-9, 0);
    assert_close(r.attain_hp, 1 - exp(-x * T), 1e-9, 0);
    assert_close(r.attainment, 2.0 / 3 * (1 - exp(-2 * T)) + 1.0 / 3 * (1 - exp(-x * T)), 1e-9,
                 0);
    afd_svc_law_free(e);
}

static void splits_and_errors(void **state)
{
    afd_svc_law *dd;
    afd_twotier m;
    afd_twotier_result r;
    double cap_pool, cap_21, cap_12;
    (void)state;
    assert_int_equal(afd_svc_law_deterministic(0.3, &dd), AFD_OK);
    m.law = dd;
    m.ttft_slo = 1.0;
    m.threshold = 0.5;
    m.lp = 3;
    m.hp = 0;
    assert_int_equal(afd_twotier_capacity(&m, 0.9, &cap_pool), AFD_OK);
    m.lp = 2;
    m.hp = 1;
    assert_int_equal(afd_twotier_capacity(&m, 0.9, &cap_21), AFD_OK);
    m.lp = 1;
    m.hp = 2;
    assert_int_equal(afd_twotier_capacity(&m, 0.9, &cap_12), AFD_OK);
    /* three instances cannot serve more than 3 / 0.3 = 10 requests per second */
    assert_true(cap_pool > 0 && cap_pool < 10);
    assert_true(cap_21 > 0 && cap_21 < 10);
    assert_true(cap_12 > 0 && cap_12 < 10);
    /* at capacity the attainment is the target */
    m.lp = 2;
    m.hp = 1;
    assert_int_equal(afd_twotier_attainment(&m, cap_21, &r), AFD_OK);
    assert_close(r.attainment, 0.9, 0, 1e-7);
    /* an SLO below the service time: nobody meets it */
    m.ttft_slo = 0.2;
    m.threshold = 0.1;
    assert_int_equal(afd_twotier_capacity(&m, 0.9, &cap_21), AFD_OK);
    assert_close(cap_21, 0, 0, 0);
    m.threshold = 0.3; /* above the SLO */
    assert_int_equal(afd_twotier_attainment(&m, 1, &r), AFD_EINVAL);
    assert_true(isnan(r.attainment));
    m.lp = 0;
    assert_int_equal(afd_twotier_attainment(&m, 1, &r), AFD_EINVAL);
    afd_svc_law_free(dd);
}

/* The laws of the afd_twotier_serve tests: prefill 0.02 + 1e-4 P + 1e-8 P^2
 * s, decode beta s with nothing per sequence. */
static void prefill_hw(afd_hw *hw, double beta)
{
    afd_hw_init(hw);
    hw->prefill_a = 0.02;
    hw->prefill_b = 1e-4;
    hw->prefill_c = 1e-8;
    hw->decode_beta = beta;
    hw->decode_gamma = hw->decode_alpha = 0;
}

/* afd_twotier_serve with one output token and a chunk holding the prompt:
 * the LP service is the prefill law S = a + b P + c P^2 and the LP deadline
 * T - X - S: p_off and A_LP are those of afd_twotier_attainment with a
 * deterministic law and threshold X + S.  No decode step on HP: an offload
 * meets the SLO iff its batch ends within X, i.e. (1 + a) W_HP <= X
 * (a = lambda p_off S, the offloads joining its batch while it waits),
 * which is A_HP of afd_twotier_attainment with threshold X2 = X / (1 + a)
 * + S and T2 = T - X - S + X2 (the same LP deadline, so the same
 * offloads); hp = 0 is its one pool.  With a chunk of a quarter of the
 * prompt the service takes the fixed cost four times. */
static void serve_model(void **state)
{
    afd_hw hw;
    afd_svc_law *law;
    afd_twotier m;
    afd_twotier_result a, b;
    afd_twotier_serve_params q;
    double P = 1000, S = 0.02 + 1e-4 * P + 1e-8 * P * P;
    (void)state;
    prefill_hw(&hw, 0.03);
    memset(&q, 0, sizeof q);
    q.hw = &hw;
    q.lambda = 12;
    q.lp = 2;
    q.hp = 1;
    q.chunk = 1000;
    q.decode_bmax = 16;
    q.prompts = &P;
    q.n = 1;
    q.output_mean = 1;
    q.ttft_slo = 0.5;
    q.threshold = 0.15;
    assert_int_equal(afd_twotier_serve(&q, &a), AFD_OK);
    assert_int_equal(afd_svc_law_deterministic(S, &law), AFD_OK);
    m.law = law;
    m.lp = 2;
    m.hp = 1;
    m.ttft_slo = 0.5;
    m.threshold = 0.15 + S;
    assert_int_equal(afd_twotier_attainment(&m, 12, &b), AFD_OK);
    assert_close(a.p_off, b.p_off, 1e-12, 0);
    assert_close(a.attain_lp, b.attain_lp, 1e-12, 0);
    assert_close(a.rho_hp, b.rho_hp, 1e-12, 0);
    assert_true(a.p_off > 0.01 && a.p_off < 0.5);
    m.threshold = 0.15 / (1 + 12 * b.p_off * S) + S;
    m.ttft_slo = 0.5 - 0.15 - S + m.threshold;
    assert_int_equal(afd_twotier_attainment(&m, 12, &b), AFD_OK);
    assert_close(a.p_off, b.p_off, 1e-12, 0);
    assert_close(a.attain_hp, b.attain_hp, 1e-12, 0);
    assert_true(a.attain_hp > 0.05 && a.attain_hp < 0.95);
    assert_close(a.attainment, (1 - a.p_off) * a.attain_lp + a.p_off * b.attain_hp, 1e-12, 0);
    m.ttft_slo = 0.5;
    m.threshold = 0.15 + S;
    q.hp = m.hp = 0;
    assert_int_equal(afd_twotier_serve(&q, &a), AFD_OK);
    assert_int_equal(afd_twotier_attainment(&m, 12, &b), AFD_OK);
    assert_close(a.attainment, b.attainment, 1e-12, 0);
    afd_svc_law_free(law);
    q.chunk = 250;
    assert_int_equal(afd_svc_law_deterministic(S + 3 * 0.02, &law), AFD_OK);
    m.law = law;
    assert_int_equal(afd_twotier_serve(&q, &a), AFD_OK);
    assert_int_equal(afd_twotier_attainment(&m, 12, &b), AFD_OK);
    assert_close(a.attainment, b.attainment, 1e-12, 0);
    afd_svc_law_free(law);
    /* with decodes the offload fraction is a fixed point: it must satisfy
     * p = F(p), checked by its bounds: more decodes, more offloads */
    q.chunk = 1000;
    q.hp = 1;
    q.output_mean = 50;
    hw.decode_gamma = 1e-4;
    hw.decode_alpha = 1e-7;
    assert_int_equal(afd_twotier_serve(&q, &b), AFD_OK);
    q.output_mean = 1;
    assert_int_equal(afd_twotier_serve(&q, &a), AFD_OK);
    assert_true(b.p_off > a.p_off && b.attainment < a.attainment);
    q.threshold = -1;
    assert_int_equal(afd_twotier_serve(&q, &a), AFD_EINVAL);
    assert_true(isnan(a.attainment));
}

/* The HP decodes at the simulator's step (hw's decode table) against the
 * law.  One LP instance, two HP, P = 1000 (pi = 0.13 s), E[G] = 50 (m =
 * 49 decode steps), X = T: the LP deadline is 0, so an arrival the LP
 * instance cannot start at once is offloaded (M/M/1/1 in the model):
 * p_off = a / (1 + a), a = lambda E[S] >= lambda (b P + c P^2) = 0.44,
 * p_off >= 0.3056.  By Little's law an HP instance holds n = c tau(n)
 * sequences, c = lambda_1 m / (1 - rho_1) >= lambda p_off m / 2 = 29.9.
 * With the step tau(n) = 0.05 n of the table below (a power law, exact
 * between its points) c tau(n) >= 1.49 n > n for every n: the HP decodes
 * cannot keep up and an offload never meets the SLO, while the law (beta =
 * 1 ms, nothing per sequence) keeps up.  At tau(n) = 0.005 n, c <= (4 / 2)
 * m / (1 - 4 x 0.13 / 2) = 132.4 (p_off <= 1) gives c tau(n) <= 0.66 n:
 * they keep up.  A flat table equal to the law gives the law's result. */
static void serve_decode_table(void **state)
{
    afd_hw hw, law;
    afd_twotier_result a, b;
    double P = 1000, pmin = 4 * (1e-4 * P + 1e-8 * P * P);
    afd_twotier_serve_params q = {.hw = &law, .lambda = 4, .lp = 1, .hp = 2, .chunk = 2000,
                                  .decode_bmax = 64, .prompts = &P, .n = 1, .output_mean = 50,
                                  .ttft_slo = 0.5, .threshold = 0.5};
    (void)state;
    pmin /= 1 + pmin;
    prefill_hw(&law, 1e-3);
    hw = law;
    hw.decode_table.nb = 2;
    hw.decode_table.ns = 1;
    hw.decode_table.b[0] = 1;
    hw.decode_table.b[1] = 1024;
    hw.decode_table.s[0] = 1;
    hw.decode_table.t[0] = 0.05;
    hw.decode_table.t[1] = 0.05 * 1024;
    assert_int_equal(afd_twotier_serve(&q, &a), AFD_OK);
    assert_true(a.attain_hp > 0.5);
    q.hw = &hw;
    assert_int_equal(afd_twotier_serve(&q, &a), AFD_OK);
    assert_true(a.p_off >= pmin * (1 - 1e-12) && a.p_off <= 1);
    assert_true(4 * pmin / 2 * 49 * 0.05 > 1.4);
    assert_true(a.attain_hp == 0);
    assert_close(a.attainment, (1 - a.p_off) * a.attain_lp, 1e-12, 0);
    hw.decode_table.t[0] = 0.005;
    hw.decode_table.t[1] = 0.005 * 1024;
    assert_int_equal(afd_twotier_serve(&q, &a), AFD_OK);
    assert_true(2.0 * 49 / (1 - 4 * 0.13 / 2) * 0.005 < 0.67);
    assert_true(a.attain_hp > 0.5);
    hw.decode_table.t[0] = hw.decode_table.t[1] = 1e-3;
    assert_int_equal(afd_twotier_serve(&q, &a), AFD_OK);
    q.hw = &law;
    assert_int_equal(afd_twotier_serve(&q, &b), AFD_OK);
    assert_close(a.p_off, b.p_off, 1e-9, 0);
    assert_close(a.attain_hp, b.attain_hp, 1e-9, 0);
    assert_close(a.attainment, b.attainment, 1e-9, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(one_pool_mm1),
        cmocka_unit_test(two_tier_mm1),
        cmocka_unit_test(two_tier_loss_exact),
        cmocka_unit_test(splits_and_errors),
        cmocka_unit_test(serve_model),
        cmocka_unit_test(serve_decode_table),
    };
    gsl_set_error_handler_off();
    RUN_TESTS(tests);
}
