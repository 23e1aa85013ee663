/* test_serve.c: the request-level serving simulator against exact queues
 * and hand-computed timelines. */
#include <config.h>

#include <math.h>
#include <string.h>

#include "afd_queue.h"
#include "afd_serve.h"
#include "afd_serving.h"
#include "afd_serve_taichi.h"
#include "afd_serve_twotier.h"
#include "hw_test_util.h"
#include "serve_internal.h"
#include "test_util.h"

/* Latency laws in seconds; the six AFD coefficients are not used here. */
static afd_hw laws(double pa, double pb, double pc, double beta, double gamma, double alpha)
{
    return test_laws("s", pa, pb, pc, beta, gamma, alpha);
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
    /* the same run with its percentiles from histograms */
    assert_int_equal(afd_priv_serve_run(&p, 0, &r, NULL), AFD_OK);
    assert_within_se(r.ttft.mean, rho * D / (2 * (1 - rho)) + D, r.ttft.mean_se, 5);
    assert_within_se(r.ttft.p90, afd_md1_wait_quantile(p.lambda, D, 0.9) + D, r.ttft.p90_se, 4);
    assert_within_se(r.ttft.p50, afd_md1_wait_quantile(p.lambda, D, 0.5) + D, r.ttft.p50_se, 4);
    assert_true(isnan(r.tpot.mean) && isnan(r.tpot.p50) && isnan(r.tpot.p50_se));
    assert_int_equal(r.tpot_count, 0);
}

/* The simulated goodput does not depend on the top of its first bracket.
 * M/D/1 as above with a TTFT SLO of 4 D: its goodput is the rate whose exact
 * sojourn P90, afd_md1_wait_quantile + D, is 4 D (bisected here, about
 * 0.7 / D).  A first bracket whose top is a tenth of the capacity 1 / D
 * meets the SLO everywhere: afd_serve_goodput_limit stops at that top with
 * no limit, afd_serve_goodput_widen goes on to the goodput, within the
 * bisection's 2% and the run's noise, with the TTFT named; capped at 3 /
 * 10 D it stops there, limit none. */
static void goodput_widens_past_a_low_bracket(void **state)
{
    const double D = 2.385, slo = 4 * D, lo = 0.01 / D, hi = 0.1 / D;
    afd_hw hw = laws(D, 0, 0, 0.01, 0, 0);
    afd_serve_params p = base(&hw, "disagg");
    double a = 0.1 / D, b = 1 / D, g;
    int limit, k;
    (void)state;
    for (k = 0; k < 100; k++) {
        double m = (a + b) / 2;
        if (afd_md1_wait_quantile(m, D, 0.9) + D <= slo)
            a = m;
        else
            b = m;
    }
    p.prompt = 100;
    p.output = 1;
    p.requests = 20000;
    p.warmup = 1000;
    assert_int_equal(afd_serve_goodput_limit(&p, slo, 1, lo, hi, 0.02, &g, &limit), AFD_OK);
    assert_true(g <= hi && g >= 0.98 * hi);
    assert_int_equal(limit, AFD_SERVING_LIMIT_NONE);
    assert_int_equal(afd_serve_goodput_widen(&p, slo, 1, lo, hi, 64 * hi, 0.02, &g, &limit),
                     AFD_OK);
    assert_close(g, a, 0.05, 0);
    assert_int_equal(limit, AFD_SERVING_LIMIT_TTFT);
    assert_int_equal(afd_serve_goodput_widen(&p, slo, 1, lo, hi, 3 * hi, 0.02, &g, &limit),
                     AFD_OK);
    assert_true(g <= 3 * hi && g >= 0.98 * 3 * hi);
    assert_int_equal(limit, AFD_SERVING_LIMIT_NONE);
    assert_int_equal(afd_serve_goodput_widen(&p, slo, 1, lo, hi, 0.5 * hi, 0.02, &g, &limit),
                     AFD_EINVAL);
    assert_true(isnan(g));
}

/* Ties of the binding limit, built by hand.  Colloc at fixed lengths (every
 * request has a TPOT), one run with no SLOs at rate lambda0; SLOs set to its
 * own percentiles make the attainments known without the simulator: with n
 * measured requests, all values distinct, the empirical P90 (the ceil(0.9 n)-th
 * smallest) is met by exactly 0.9 n of them, the P50 by 0.5 n.  TTFT SLO =
 * TTFT P90 and TPOT SLO = TPOT P90: both attainments are 0.9 exactly, their
 * difference 0, a tie at any z; TTFT SLO = TTFT P50 instead: 0.5 against 0.9,
 * the TTFT binds by dozens of standard errors. */
static afd_serve_params tie_setting(const afd_hw *hw)
{
    afd_serve_params p = base(hw, "colloc");
    p.config.prefill_bmax = 4;
    p.config.decode_bmax = 32;
    p.prompt = 300;
    p.output = 40;
    p.lambda = 2.5;
    p.requests = 20000;
    p.warmup = 500;
    p.batches = 10;
    return p;
}

static void attainment_tie_by_hand(void **state)
{
    afd_hw hw = laws(0.02, 2e-5, 1e-9, 0.015, 2e-4, 1e-8);
    afd_serve_params p = tie_setting(&hw);
    afd_serve_result r0, r;
    (void)state;
    assert_int_equal(afd_serve_run(&p, &r0, NULL), AFD_OK);
    assert_int_equal(r0.unstable, 0);
    assert_int_equal(r0.tpot_count, p.requests);
    p.ttft_slo = r0.ttft.p90;
    p.tpot_slo = r0.tpot.p90;
    assert_int_equal(afd_serve_run(&p, &r, NULL), AFD_OK);
    assert_close(r.attain_ttft, 0.9, 0, 1e-12);
    assert_close(r.attain_tpot, 0.9, 0, 1e-12);
    assert_true(r.attain_diff_se > 0);
    assert_true(afd_serve_attain_tie(&r, AFD_SERVE_TIE_Z));
    assert_int_equal(afd_serve_taichi_bind(p.lambda, &r, 0), AFD_TAICHI_BIND_TIE);
    assert_string_equal(afd_taichi_bind_name(AFD_TAICHI_BIND_TIE), "ttft=tpot");
    /* the capacity still comes first, and a goodput of 0 names no tie */
    assert_int_equal(afd_serve_taichi_bind(p.lambda, &r, 1), AFD_TAICHI_BIND_CAPACITY);
    assert_int_equal(afd_serve_taichi_bind(0, &r, 0), AFD_TAICHI_BIND_TPOT);
    p.ttft_slo = r0.ttft.p50;
    assert_int_equal(afd_serve_run(&p, &r, NULL), AFD_OK);
    assert_close(r.attain_ttft, 0.5, 0, 1e-12);
    assert_close(r.attain_tpot, 0.9, 0, 1e-12);
    assert_false(afd_serve_attain_tie(&r, AFD_SERVE_TIE_Z));
    assert_int_equal(afd_serve_taichi_bind(p.lambda, &r, 0), AFD_TAICHI_BIND_TTFT);
}

/* The se of the difference of the two attainments against independent
 * replications.  The same setting with SLOs near both P90s (about 0.9
 * each), R = 40 seeds: the standard deviation of attain_ttft - attain_tpot
 * over the replications against the root mean square of the runs' own
 * batch-means se (10 batches each).  The replications' sd has a relative
 * sampling error of about 1 / sqrt(2 (R - 1)) = 11%, the mean of 40
 * squared se (each with 9 degrees of freedom) about sqrt(2 / 9 / 40) = 7%,
 * 3.5% on its root: their ratio is within 0.7 and 1.4 (three standard
 * deviations of the ratio, 13%, each way and some room for the batch-means
 * bias of batches of 2000 requests). */
static void attain_diff_se_against_replications(void **state)
{
    enum { R = 40 };
    afd_hw hw = laws(0.02, 2e-5, 1e-9, 0.015, 2e-4, 1e-8);
    afd_serve_params p = tie_setting(&hw);
    afd_serve_result r;
    double d[R], se2 = 0, mean = 0, var = 0;
    int i;
    (void)state;
    assert_int_equal(afd_serve_run(&p, &r, NULL), AFD_OK);
    p.ttft_slo = r.ttft.p90;
    p.tpot_slo = r.tpot.p90;
    for (i = 0; i < R; i++) {
        p.seed = 7001 + 13 * (uint64_t)i;
        assert_int_equal(afd_serve_run(&p, &r, NULL), AFD_OK);
        assert_int_equal(r.unstable, 0);
        d[i] = r.attain_ttft - r.attain_tpot;
        se2 += r.attain_diff_se * r.attain_diff_se / R;
        mean += d[i] / R;
    }
    for (i = 0; i < R; i++)
        var += (d[i] - mean) * (d[i] - mean) / (R - 1);
    assert_true(sqrt(se2) > 0.7 * sqrt(var) && sqrt(se2) < 1.4 * sqrt(var));
}

/* The P90 tie of afd_serve_goodput_limit.  By hand first: P90s at x and y
 * times their SLOs with se sx and sy (relative to the SLOs) tie when both
 * are above 1 or |x - y| <= 2 sqrt(sx^2 + sy^2).  Then the setting above
 * with each SLO its own P90 at lambda0 = 2.5: the runs of the bisection
 * share their uniforms, so every rate above lambda0 has both P90s above
 * their SLOs and the limit read at the lowest infeasible rate is a tie, the
 * goodput lambda0 within the bisection's 2% (and the percentile's
 * granularity); with the TPOT SLO three times its P90 the TTFT binds alone,
 * with the TTFT SLO three times its P90 the TPOT. */
static void p90_tie(void **state)
{
    afd_hw hw = laws(0.02, 2e-5, 1e-9, 0.015, 2e-4, 1e-8);
    afd_serve_params p = tie_setting(&hw);
    afd_serve_result r;
    double g, t, s;
    int limit;
    (void)state;
    memset(&r, 0, sizeof r);
    r.ttft.p90 = 1.01, r.tpot.p90 = 0.975, r.ttft.p90_se = r.tpot.p90_se = 0.02;
    assert_true(afd_serve_p90_tie(&r, 1, 1, 2)); /* 0.035 <= 0.0566 */
    r.tpot.p90 = 0.95;                           /* 0.06 > 0.0566 */
    assert_false(afd_serve_p90_tie(&r, 1, 1, 2));
    assert_true(afd_serve_p90_tie(&r, 1, 1, 2.5)); /* 0.06 <= 0.0707 */
    r.ttft.p90 = 2.02, r.tpot.p90 = 3.9;           /* SLOs 2 and 3: both over by far */
    assert_true(afd_serve_p90_tie(&r, 2, 3, 2));
    r.tpot.p90 = NAN;
    assert_false(afd_serve_p90_tie(&r, 2, 3, 2));
    assert_string_equal(afd_serve_limit_name(AFD_SERVE_LIMIT_TIE), "ttft=tpot");
    assert_string_equal(afd_serve_limit_name(AFD_SERVE_LIMIT_UNSTABLE), "capacity");
    assert_string_equal(afd_serve_limit_name(AFD_SERVING_LIMIT_TTFT), "ttft");
    assert_int_equal(afd_serve_run(&p, &r, NULL), AFD_OK);
    t = r.ttft.p90, s = r.tpot.p90;
    assert_int_equal(afd_serve_goodput_limit(&p, t, s, 0.5, 5, 0.02, &g, &limit), AFD_OK);
    assert_close(g, p.lambda, 0.03, 0);
    assert_int_equal(limit, AFD_SERVE_LIMIT_TIE);
    assert_int_equal(afd_serve_goodput_limit(&p, t, 3 * s, 0.5, 5, 0.02, &g, &limit), AFD_OK);
    assert_int_equal(limit, AFD_SERVING_LIMIT_TTFT);
    assert_int_equal(afd_serve_goodput_limit(&p, 3 * t, s, 0.5, 5, 0.02, &g, &limit), AFD_OK);
    assert_int_equal(limit, AFD_SERVING_LIMIT_TPOT);
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
    assert_int_equal(afd_priv_serve_run(&p, 0, &r, NULL), AFD_OK); /* histograms */
    assert_within_se(r.ttft.mean, afd_mdc_wq(q) + D, r.ttft.mean_se, 5);
    assert_within_se(r.ttft.p90, afd_mdc_wait_quantile(q, 0.9) + D, r.ttft.p90_se, 4);
    assert_within_se(r.ttft.p99, afd_mdc_wait_quantile(q, 0.99) + D, r.ttft.p99_se, 4);
    afd_mdc_free(q);
}

/* Percentiles from histograms against the exact ones of the same run: each
 * within the stated bound 2^-10 of the exact value, everything else the
 * same but for the order of the sums.  The batches hold equal numbers of
 * TTFT and end-to-end values (weights 1), and each batch percentile moves
 * by d_b <= 2^-10 x_b, so the standard error moves by at most
 * max |d_b| / sqrt(K - 1) (centering is a projection: the centred batch
 * values move by at most |d| <= sqrt(K) max |d_b|, and se is their norm
 * over sqrt(K (K - 1))), with max x_b <= p + K se taken as a safe bound on
 * the largest batch percentile. */
/* colloc with geometric lengths (w), run with exact percentiles (ex) and
 * with histograms (hi). */
static void exact_and_histograms(afd_serve_params *p, afd_workload *w, double mu_p, double mu_d,
                                 afd_serve_result *ex, afd_serve_result *hi)
{
    assert_int_equal(afd_workload_geometric(mu_p, mu_d, w), AFD_OK);
    p->workload = w;
    assert_int_equal(afd_priv_serve_run(p, UINT64_MAX, ex, NULL), AFD_OK);
    assert_int_equal(afd_priv_serve_run(p, 0, hi, NULL), AFD_OK);
}

static void histograms_against_exact(void **state)
{
    const double bound = 0x1p-10;
    afd_hw hw = laws(0.02, 2e-5, 1e-9, 0.015, 2e-4, 1e-8);
    afd_serve_params p = base(&hw, "colloc");
    afd_serve_result ex, hi;
    afd_workload w;
    const afd_serve_stat *se[3], *sh[3];
    unsigned i, k = 32;
    (void)state;
    p.config.prefill_bmax = 4;
    p.config.decode_bmax = 32;
    p.lambda = 2.5;
    p.requests = 1536 * k;
    p.warmup = 500;
    p.batches = k;
    p.ttft_slo = 0.035;
    p.tpot_slo = 0.0165;
    exact_and_histograms(&p, &w, 300, 40, &ex, &hi);
    assert_int_equal(ex.unstable, 0);
    assert_int_equal(hi.pct_batches_lost, 0);
    assert_int_equal(hi.completed, ex.completed);
    assert_int_equal(hi.tpot_count, ex.tpot_count);
    assert_true(hi.tpot_count < hi.completed); /* some G = 1: no TPOT */
    assert_int_equal(hi.events, ex.events);
    assert_true(hi.throughput == ex.throughput && hi.end_time == ex.end_time);
    assert_true(hi.attainment == ex.attainment && hi.attainment_se == ex.attainment_se);
    assert_true(ex.attainment > 0.2 && ex.attainment < 0.95);
    se[0] = &ex.ttft, se[1] = &ex.tpot, se[2] = &ex.e2e;
    sh[0] = &hi.ttft, sh[1] = &hi.tpot, sh[2] = &hi.e2e;
    for (i = 0; i < 3; i++) {
        assert_close(sh[i]->mean, se[i]->mean, 1e-12, 0);
        assert_close(sh[i]->mean_se, se[i]->mean_se, 1e-9, 0);
        assert_close(sh[i]->p50, se[i]->p50, bound, 0);
        assert_close(sh[i]->p90, se[i]->p90, bound, 0);
        assert_close(sh[i]->p99, se[i]->p99, bound, 0);
        if (i == 1)
            continue; /* TPOT: unequal counts per batch */
        assert_close(sh[i]->p50_se, se[i]->p50_se, 0,
                     bound * (se[i]->p50 + k * se[i]->p50_se) / sqrt(k - 1));
        assert_close(sh[i]->p90_se, se[i]->p90_se, 0,
                     bound * (se[i]->p90 + k * se[i]->p90_se) / sqrt(k - 1));
        assert_close(sh[i]->p99_se, se[i]->p99_se, 0,
                     bound * (se[i]->p99 + k * se[i]->p99_se) / sqrt(k - 1));
    }
    assert_true(hi.tpot.p50_se > 0 && hi.tpot.p99_se > 0);
}

/* More batches open at once than hold histograms: 4000 requests in 2000
 * batches of two arrive within about 0.4 s, are prefilled first (colloc)
 * and decode together, each leaving after its own geometric number of
 * steps (mean 1000 of 1 ms), so batches close in random order and most are
 * open at the peak.  The batches past AFD_SERVE_OPEN_BATCHES lose only the
 * percentiles' standard errors; the percentiles, means and counts do not
 * change. */
static void open_batches_beyond_the_cap(void **state)
{
    afd_hw hw = laws(1e-4, 0, 0, 1e-3, 0, 0);
    afd_serve_params p = base(&hw, "colloc");
    afd_serve_result ex, hi;
    afd_workload w;
    (void)state;
    p.config.prefill_bmax = 64;
    p.config.decode_bmax = 8192;
    p.lambda = 10000;
    p.requests = 4000;
    p.warmup = 0;
    p.batches = 2000;
    exact_and_histograms(&p, &w, 10, 1000, &ex, &hi);
    assert_true(hi.pct_batches_lost > 0 && hi.pct_batches_lost < p.batches - 2);
    assert_int_equal(ex.pct_batches_lost, 0);
    assert_close(hi.e2e.p90, ex.e2e.p90, 0x1p-10, 0);
    assert_close(hi.e2e.mean, ex.e2e.mean, 1e-12, 0);
    assert_close(hi.e2e.mean_se, ex.e2e.mean_se, 1e-9, 0);
    assert_true(hi.e2e.p90_se > 0 && isfinite(hi.e2e.p90_se));
    assert_true(hi.attainment == ex.attainment);
}

/* Four prefill instances, batch 1, prefill b P with P geometric of mean
 * m = 1000 on {1, 2, ...}, one output token, load rho = 0.8 per instance.
 * The engine draws P = ceil(E / theta), E ~ Exp(1), theta = -log(1 - 1/m),
 * so the service b P is an exponential of mean b / theta rounded up to a
 * whole token: within one token (1e-3 of the mean) of exponential, far
 * below the standard errors here.  Then (arrival rate L = 4 rho mu):
 *   random: each instance sees a Poisson stream L/4: M/G/1, exact by
 *     Pollaczek-Khinchine W = E[S] + (L/4) E[S^2] / (2 (1 - rho)), with
 *     E[P^2] = (2 - p) / p^2, p = 1/m, of the geometric law;
 *   round-robin: every 4th arrival, Erlang-4 interarrivals: E_4/M/1,
 *     W = 1 / (mu (1 - sigma)), sigma the root in (0, 1) of
 *     sigma = A*(mu (1 - sigma)), A*(s) = (L / (L + s))^4 (Kleinrock,
 *     Queueing Systems I, Section 6.4, the G/M/1 queue);
 *   global: one queue, M/M/4, W = C(4, a) / (4 mu - L) + 1 / mu with
 *     Erlang's C formula, a = L / mu (Kleinrock, Section 3.5).
 * least-requests and power-of-two see the queue lengths, so they lie
 * between global and round-robin.
 * The same holds for four colloc instances with prefill batch 1 (a request
 * of one output token leaves after its prefill) and for four chunked
 * instances with one sequence each: with no fixed cost the chunks of a
 * prompt add up to b P, so each instance serves one request at a time in
 * b P. */
static double routed_ttft(const char *arch, afd_serve_router how, double *se, double *imb)
{
    afd_hw hw = laws(0, 1e-3, 0, 0.01, 0, 0);
    afd_serve_params p = base(&hw, arch);
    afd_workload w;
    afd_serve_result r;
    assert_int_equal(afd_workload_geometric(1000, 1, &w), AFD_OK);
    p.workload = &w;
    p.config.prefill = p.config.instances = 4;
    p.config.decode_bmax = 1;
    p.config.router = how;
    p.lambda = 0.8 * 4 / 1.0;
    p.requests = 400000;
    p.warmup = 4000;
    assert_int_equal(afd_serve_run(&p, &r, NULL), AFD_OK);
    assert_int_equal(r.unstable, 0);
    *se = r.ttft.mean_se;
    if (imb != NULL)
        *imb = r.imbalance;
    return r.ttft.mean;
}

static void routers_against_exact_queues_of(const char *arch)
{
    const double m = 1000, pr = 1 / m, b = 1e-3, rho = 0.8, mu = 1 / (b * m), L = 4 * rho * mu;
    double es = b * m, es2 = b * b * (2 - pr) / (pr * pr);
    double sigma = 0.5, a = L / mu, sum = 0, term = 1, erlang_c, se, t_glob, t_rr, t, imb, wq;
    /* a Binomial(m, 1/4) count per instance: the share's sd over the mean */
    const double m_req = 400000, imb_sd = sqrt(m_req * 0.25 * 0.75) / (m_req / 4);
    int k;
    for (k = 0; k < 500; k++) /* a contraction on (0, 1) for rho < 1 */
        sigma = pow(L / (L + mu * (1 - sigma)), 4);
    for (k = 0; k < 4; k++) {
        sum += term;
        term *= a / (k + 1);
    } /* term = a^4 / 4! */
    erlang_c = term / (1 - rho) / (sum + term / (1 - rho));
    /* routed.c against the forms above: random's M/G/1 with the geometric
     * law's moments, round-robin's E_4/M/1 and global's M/M/4 */
    assert_int_equal(afd_routed_wq(AFD_ROUTED_RANDOM, L, es, es2, 4, &wq), AFD_OK);
    assert_close(wq, L / 4 * es2 / (2 * (1 - rho)), 1e-12, 0);
    assert_int_equal(afd_routed_wq(AFD_ROUTED_ROUND_ROBIN, L, es, 2 * es * es, 4, &wq), AFD_OK);
    assert_close(wq + es, 1 / (mu * (1 - sigma)), 1e-9, 0);
    assert_int_equal(afd_routed_wq(AFD_ROUTED_GLOBAL, L, es, 2 * es * es, 4, &wq), AFD_OK);
    assert_close(wq + es, erlang_c / (4 * mu - L) + 1 / mu, 1e-9, 0);
    t = routed_ttft(arch, AFD_SERVE_ROUTE_RANDOM, &se, &imb);
    /* the largest of four such counts: above the mean, within 5 sd */
    assert_true(imb > 1 && imb < 1 + 5 * imb_sd);
    assert_within_se(t, es + L / 4 * es2 / (2 * (1 - rho)), se, 5);
    t_rr = routed_ttft(arch, AFD_SERVE_ROUTE_ROUND_ROBIN, &se, &imb);
    /* the 4000 discarded and 400000 measured arrivals are multiples of 4:
     * every instance gets exactly 100000 measured requests */
    assert_true(imb == 1);
    assert_within_se(t_rr, 1 / (mu * (1 - sigma)), se, 5);
    t_glob = routed_ttft(arch, AFD_SERVE_ROUTE_GLOBAL, &se, &imb);
    assert_true(isnan(imb)); /* one queue: no instance is chosen at arrival */
    assert_within_se(t_glob, erlang_c / (4 * mu - L) + 1 / mu, se, 5);
    t = routed_ttft(arch, AFD_SERVE_ROUTE_LEAST_REQUESTS, &se, NULL);
    assert_true(t > t_glob && t < t_rr);
    /* routed.c's closed forms err high, the side that over-provisions:
     * join-the-shortest-queue's (the shared queue's M/M/4 plus a gap in
     * proportion to Erlang's C) measured 2.7% above the simulation here,
     * power-of-two's (the mean field moved toward the two-server form by
     * 2 / n) 5.4% above; each within 3 SE below and 4% above those. */
    assert_int_equal(afd_routed_wq(AFD_ROUTED_LEAST, L, es, 2 * es * es, 4, &wq), AFD_OK);
    assert_true(wq + es > t - 3 * se && (wq + es) / t < 1.067);
    t = routed_ttft(arch, AFD_SERVE_ROUTE_POWER_OF_TWO, &se, NULL);
    assert_true(t > t_glob && t < t_rr);
    assert_int_equal(afd_routed_wq(AFD_ROUTED_POWER_OF_TWO, L, es, 2 * es * es, 4, &wq), AFD_OK);
    assert_true(wq + es > t - 3 * se && (wq + es) / t < 1.094);
}

static void routers_against_exact_queues(void **state)
{
    (void)state;
    routers_against_exact_queues_of("disagg");
    routers_against_exact_queues_of("colloc");
    routers_against_exact_queues_of("chunked");
}

/* disagg's decode pool: one prefill instance of zero time, four decode
 * instances of one sequence each, a step of beta, output G geometric of
 * mean m = 100 on {1, 2, ...} (100 steps a request keep the run short; the
 * geometric number of steps is within one step, about 1%, of exponential,
 * which moves round-robin's and global's means by well under their 5 SE).  A request with G = 1 leaves at its
 * prefill; the others (a Poisson stream of rate L (1 - p), p = 1/m) reach
 * the decode router at once and need G - 1 steps, which given G >= 2 is
 * again geometric of mean m (memoryless): service S = beta (G - 1), within
 * one step of exponential.  So random is M/G/1 per instance
 * (Pollaczek-Khinchine, E[S^2] = beta^2 (2 - p) / p^2), round-robin E_4/M/1
 * (W = 1 / (mu (1 - sigma)), sigma = (Ld / (Ld + mu (1 - sigma)))^4) and
 * global M/M/4 (Erlang's C; Kleinrock, Sections 3.5 and 4.4); the mean E2E
 * is (1 - p) W.  least-requests and power-of-two lie between global and
 * round-robin. */
static double decode_routed_e2e(afd_serve_router how, double L, double *se)
{
    afd_hw hw = laws(0, 0, 0, 1e-3, 0, 0);
    afd_serve_params p = base(&hw, "disagg");
    afd_workload w;
    afd_serve_result r;
    assert_int_equal(afd_workload_geometric(1, 100, &w), AFD_OK);
    p.workload = &w;
    p.config.decode = 4;
    p.config.decode_bmax = 1;
    p.config.decode_router = how;
    p.lambda = L;
    p.requests = 200000;
    p.warmup = 4000;
    assert_int_equal(afd_serve_run(&p, &r, NULL), AFD_OK);
    assert_int_equal(r.unstable, 0);
    assert_true(isnan(r.imbalance)); /* the prefill pool's, which is global */
    *se = r.e2e.mean_se;
    return r.e2e.mean;
}

static void decode_routers_against_exact_queues(void **state)
{
    const double m = 100, pr = 1 / m, beta = 1e-3, rho = 0.8, mu = 1 / (beta * m);
    const double Ld = 4 * rho * mu, L = Ld / (1 - pr), es = beta * m;
    const double es2 = beta * beta * (2 - pr) / (pr * pr), a = Ld / mu;
    double sigma = 0.5, sum = 0, term = 1, erlang_c, se, t, t_rr, t_glob;
    afd_serve_params p;
    afd_serve_result r;
    afd_hw hw = laws(0, 0, 0, 1e-3, 0, 0);
    int k;
    (void)state;
    for (k = 0; k < 500; k++)
        sigma = pow(Ld / (Ld + mu * (1 - sigma)), 4);
    for (k = 0; k < 4; k++) {
        sum += term;
        term *= a / (k + 1);
    }
    erlang_c = term / (1 - rho) / (sum + term / (1 - rho));
    t = decode_routed_e2e(AFD_SERVE_ROUTE_RANDOM, L, &se);
    assert_within_se(t, (1 - pr) * (es + Ld / 4 * es2 / (2 * (1 - rho))), se, 5);
    t_rr = decode_routed_e2e(AFD_SERVE_ROUTE_ROUND_ROBIN, L, &se);
    assert_within_se(t_rr, (1 - pr) / (mu * (1 - sigma)), se, 5);
    t_glob = decode_routed_e2e(AFD_SERVE_ROUTE_GLOBAL, L, &se);
    assert_within_se(t_glob, (1 - pr) * (erlang_c / (4 * mu - Ld) + 1 / mu), se, 5);
    t = decode_routed_e2e(AFD_SERVE_ROUTE_LEAST_REQUESTS, L, &se);
    assert_true(t > t_glob && t < t_rr);
    t = decode_routed_e2e(AFD_SERVE_ROUTE_POWER_OF_TWO, L, &se);
    assert_true(t > t_glob && t < t_rr);
    /* the keyed routers read prefix caches, which decode instances lack;
     * the pseudo-batch decode keeps its own placement */
    p = base(&hw, "disagg");
    p.lambda = 1;
    p.requests = 100;
    p.prompt = 10;
    p.output = 10;
    p.config.decode_router = AFD_SERVE_ROUTE_SESSION;
    assert_int_equal(afd_serve_run(&p, &r, NULL), AFD_EINVAL);
    p.config.decode_router = AFD_SERVE_ROUTE_ROUND_ROBIN;
    p.config.pseudo_tau = 1;
    assert_int_equal(afd_serve_run(&p, &r, NULL), AFD_EINVAL);
}

/* The decode pool's balance: ten requests 10^6 time units apart (each
 * leaves before the next arrives) go round-robin to three decode
 * instances 0, 1, 2, 0, 1, 2, 0, 1, 2, 0: shares 4, 3, 3 of a mean 10/3,
 * so decode_imbalance = 4 / (10/3) = 1.2.  Two batches of five: (2, 2, 1)
 * and (2, 1, 2), each 2 / (5/3) = 1.2, so its se is exactly 0.
 * least-requests sends all ten to instance 0 (ties to the lowest): 3.
 * The prefill pool is one instance, unrouted: imbalance NaN; global
 * decode: decode_imbalance NaN. */
static void decode_pool_imbalance(void **state)
{
    afd_hw hw = laws(1e-3, 0, 0, 1e-3, 0, 0);
    afd_serve_params p = base(&hw, "disagg");
    afd_serve_result r;
    (void)state;
    p.lambda = 1e-6;
    p.requests = 10;
    p.batches = 2;
    p.prompt = 10;
    p.output = 5;
    p.config.decode = 3;
    p.config.decode_router = AFD_SERVE_ROUTE_ROUND_ROBIN;
    assert_int_equal(afd_serve_run(&p, &r, NULL), AFD_OK);
    assert_close(r.decode_imbalance, 1.2, 1e-12, 0);
    assert_true(r.decode_imbalance_se == 0);
    assert_true(isnan(r.imbalance));
    p.config.decode_router = AFD_SERVE_ROUTE_LEAST_REQUESTS;
    assert_int_equal(afd_serve_run(&p, &r, NULL), AFD_OK);
    assert_close(r.decode_imbalance, 3, 1e-12, 0);
    p.config.decode_router = AFD_SERVE_ROUTE_GLOBAL;
    assert_int_equal(afd_serve_run(&p, &r, NULL), AFD_OK);
    assert_true(isnan(r.decode_imbalance));
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
    /* each SLO alone: every TTFT within 1 s, no TPOT within BETA */
    assert_close(r.attain_ttft, 1, 0, 0);
    assert_close(r.attain_tpot, 0, 0, 0);
    p.tpot_slo = 1;
    assert_int_equal(afd_serve_run(&p, &r, NULL), AFD_OK);
    assert_close(r.attainment, 1, 0, 0);
    assert_close(r.attain_tpot, 1, 0, 0);
    /* the other way round: a TTFT SLO below the prefill t1 */
    p.ttft_slo = 0.5 * t1;
    assert_int_equal(afd_serve_run(&p, &r, NULL), AFD_OK);
    assert_close(r.attain_ttft, 0, 0, 0);
    assert_close(r.attain_tpot, 1, 0, 0);
    assert_close(r.attainment, 0, 0, 0);
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
        /* stop_unstable: the same verdict from the same backlog counts at
         * the last arrival, without draining (fewer events), no statistics */
        p.stop_unstable = 1;
        assert_int_equal(afd_serve_run(&p, &r2, NULL), AFD_OK);
        assert_int_equal(r2.unstable, 1);
        assert_true(r2.growth == r.growth);
        assert_int_equal(r2.backlog, r.backlog);
        assert_true(r2.events < r.events);
        assert_true(isnan(r2.ttft.p90) && isnan(r2.throughput));
        /* and a stable run is the run without it, bit for bit */
        p.lambda = 5;
        assert_int_equal(afd_serve_run(&p, &r2, NULL), AFD_OK);
        p.stop_unstable = 0;
        assert_int_equal(afd_serve_run(&p, &r, NULL), AFD_OK);
        assert_true(memcmp(&r, &r2, sizeof r) == 0);
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
    p.warmup = AFD_SERVE_MAX_WARMUP + 1; /* more than can be measured */
    assert_int_equal(afd_serve_run(&p, &r, &err), AFD_EINVAL);
    assert_non_null(strstr(err.text, "warm-up"));
    p.warmup = 0;
    afd_hw_init(&none);
    p.hw = &none;
    assert_int_equal(afd_serve_run(&p, &r, &err), AFD_EINVAL);
    assert_non_null(strstr(err.text, "prefill"));
    p.hw = &hw;
    p.policy = afd_serve_policy_find("disagg");
    p.config.decode = 0;
    assert_int_equal(afd_serve_run(&p, &r, &err), AFD_EINVAL);
    assert_null(afd_serve_policy_find("hybrid"));
    assert_non_null(afd_serve_policy_at(4));
    assert_null(afd_serve_policy_at(5));
}

/* ---- two tiers.  Hand-worked timelines with prefill 0.1 + 0.001 P s (no
 * quadratic term), one output token (no decode), decode_bmax 1 so that an
 * LP iteration takes one whole prompt (chunk 10000): P = 400 takes 0.5 s,
 * P = 100 0.2 s, P = 800 0.9 s. */
static afd_serve_params tt_base(const afd_hw *hw, afd_serve_twotier_config *tc, double *times,
                                size_t n, const uint32_t *unused)
{
    afd_serve_params p = base(hw, "twotier");
    (void)unused;
    memset(tc, 0, sizeof *tc);
    tc->lp = 1;
    tc->hp = 1;
    tc->order = AFD_ORDER_FCFS;
    tc->ttft_slo = 1;
    tc->threshold = 0.2;
    tc->kv_capacity = INFINITY;
    p.config.extra = tc;
    p.config.decode_bmax = 1;
    p.config.chunk = 10000;
    p.times = times;
    p.n_times = n;
    p.requests = n;
    p.batches = (unsigned)n;
    p.prompt = 400;
    p.output = 1;
    return p;
}

/* Request 0 (t = 0) is prefilled on LP over [0, 0.5]; request 1 (t = 0.01)
 * waits behind it, and its slack 0.01 + 1 - t - 0.5 falls to X = 0.2 at
 * t = 0.31, still waiting: offloaded, prefilled on the idle HP instance over
 * [0.31, 0.81], TTFT 0.8.  Request 0's slack reaches 0.2 at 0.3, but its
 * prefill has started: it stays.  In one pool request 1 would wait until
 * 0.5: TTFT 0.99. */
static void twotier_offload_timeline(void **state)
{
    double times[2] = {0, 0.01};
    afd_hw hw = laws(0.1, 0.001, 0, 0.05, 0, 0);
    afd_serve_twotier_config tc;
    afd_serve_twotier_counts cnt;
    afd_serve_params p = tt_base(&hw, &tc, times, 2, NULL);
    afd_serve_result r;
    (void)state;
    tc.tickets = 0;
    tc.counts = &cnt;
    assert_int_equal(afd_serve_run(&p, &r, NULL), AFD_OK);
    assert_close(r.ttft.mean, (0.5 + 0.8) / 2, 1e-12, 0);
    assert_close(r.ttft.p99, 0.8, 1e-12, 0); /* the larger of two */
    assert_int_equal(cnt.offloads, 1);
    assert_int_equal(cnt.drops, 0);
    assert_int_equal(cnt.tickets, 0);
    assert_close(r.class_frac, 0.5, 0, 0);
    /* a threshold of 0.45 moves the offload to 0.06: HP [0.06, 0.56] */
    tc.threshold = 0.45;
    assert_int_equal(afd_serve_run(&p, &r, NULL), AFD_OK);
    assert_int_equal(cnt.offloads, 1);
    assert_close(r.ttft.mean, (0.5 + 0.55) / 2, 1e-12, 0);
    /* no HP instance: one pool, request 1 waits until 0.5 */
    tc.hp = 0;
    assert_int_equal(afd_serve_run(&p, &r, NULL), AFD_OK);
    assert_int_equal(cnt.offloads, 0);
    assert_close(r.ttft.mean, (0.5 + 0.99) / 2, 1e-12, 0);
    /* with SLO 0.9 the pool misses request 1, two tiers do not */
    p.ttft_slo = 0.9;
    assert_int_equal(afd_serve_run(&p, &r, NULL), AFD_OK);
    assert_close(r.attainment, 0.5, 0, 0);
    tc.hp = 1;
    tc.threshold = 0.2;
    assert_int_equal(afd_serve_run(&p, &r, NULL), AFD_OK);
    assert_close(r.attainment, 1, 0, 0);
}

/* Tickets: request 0 finds the HP instance with no prefill pending and goes
 * there ([0, 0.5]); request 1 (0.01) finds it prefilling: LP [0.01, 0.51];
 * request 2 (0.02) waits on LP, is offloaded at 0.32 and waits for the HP
 * prefill to end: [0.5, 1.0], TTFT 0.98; request 3 (0.6) finds the HP
 * instance prefilling again and LP idle: [0.6, 1.1].  Elastic batch without
 * tickets: requests 1, 2, 3 (0.01, 0.02, 0.03) all offloaded at 0.31, 0.32,
 * 0.33; 1 alone over [0.31, 0.81], then 2 and 3 in one batch of 800 tokens
 * over [0.81, 1.71]. */
static void twotier_tickets_and_batch(void **state)
{
    double times[4] = {0, 0.01, 0.02, 0.6};
    afd_hw hw = laws(0.1, 0.001, 0, 0.05, 0, 0);
    afd_serve_twotier_config tc;
    afd_serve_twotier_counts cnt;
    afd_serve_params p = tt_base(&hw, &tc, times, 4, NULL);
    afd_serve_result r;
    (void)state;
    tc.tickets = 1;
    tc.counts = &cnt;
    assert_int_equal(afd_serve_run(&p, &r, NULL), AFD_OK);
    assert_int_equal(cnt.tickets, 1);
    assert_int_equal(cnt.offloads, 1);
    assert_close(r.ttft.mean, (0.5 + 0.5 + 0.98 + 0.5) / 4, 1e-12, 0);
    times[3] = 0.03;
    tc.tickets = 0;
    assert_int_equal(afd_serve_run(&p, &r, NULL), AFD_OK);
    assert_int_equal(cnt.tickets, 0);
    assert_int_equal(cnt.offloads, 3);
    assert_close(r.ttft.mean, (0.5 + 0.8 + 1.69 + 1.68) / 4, 1e-12, 0);
    /* a KV capacity of 500 tokens splits the batch: 2 over [0.81, 1.31],
     * 3 over [1.31, 1.81] */
    tc.kv_capacity = 500;
    assert_int_equal(afd_serve_run(&p, &r, NULL), AFD_OK);
    assert_close(r.ttft.mean, (0.5 + 0.8 + 1.29 + 1.78) / 4, 1e-12, 0);
}

/* Orders on one LP instance, no HP: request 0 (P = 400) at 0 holds it over
 * [0, 0.5]; request 1 (P = 100) at 0.1, request 2 (P = 800) at 0.2.
 *   fcfs, edf, sjf: 1 over [0.5, 0.7], 2 over [0.7, 1.6]: TTFT 0.5, 0.6, 1.4
 *   slack (T = 2): keys 0.1 + 2 - 0.2 = 1.9 and 0.2 + 2 - 0.9 = 1.3, so 2
 *   first, over [0.5, 1.4], then 1 over [1.4, 1.6]: TTFT 0.5, 1.5, 1.2.
 * With request 1 of P = 800 and request 2 of P = 100, sjf takes 2 first:
 * [0.5, 0.7], then 1 over [0.7, 1.6]: TTFT 0.5, 1.5, 0.5 (fcfs: 0.5, 1.3,
 * 1.4). */
static void twotier_orders(void **state)
{
    static const afd_order orders[4] = {AFD_ORDER_FCFS, AFD_ORDER_EDF, AFD_ORDER_SJF,
                                        AFD_ORDER_SLACK};
    static const double want[4] = {2.5 / 3, 2.5 / 3, 2.5 / 3, 3.2 / 3};
    double times[3] = {0, 0.1, 0.2};
    uint32_t prompts[3] = {400, 100, 800};
    afd_hw hw = laws(0.1, 0.001, 0, 0.05, 0, 0);
    afd_serve_twotier_config tc;
    afd_serve_params p = tt_base(&hw, &tc, times, 3, NULL);
    afd_workload w;
    afd_serve_result r;
    uint64_t pr[3], de[3] = {1, 1, 1};
    int k;
    (void)state;
    memset(&w, 0, sizeof w);
    w.kind = AFD_WORKLOAD_TRACE;
    w.n_kept = 3;
    w.prompt = pr;
    w.decode = de;
    p.workload = &w; /* with `times`, row n is request n */
    tc.hp = 0;
    tc.ttft_slo = 2;
    for (k = 0; k < 3; k++)
        pr[k] = prompts[k];
    for (k = 0; k < 4; k++) {
        tc.order = orders[k];
        assert_int_equal(afd_serve_run(&p, &r, NULL), AFD_OK);
        assert_close(r.ttft.mean, want[k], 1e-12, 0);
    }
    pr[1] = 800;
    pr[2] = 100;
    tc.order = AFD_ORDER_SJF;
    assert_int_equal(afd_serve_run(&p, &r, NULL), AFD_OK);
    assert_close(r.ttft.mean, (0.5 + 1.5 + 0.5) / 3, 1e-12, 0);
    tc.order = AFD_ORDER_FCFS;
    assert_int_equal(afd_serve_run(&p, &r, NULL), AFD_OK);
    assert_close(r.ttft.mean, (0.5 + 1.3 + 1.4) / 3, 1e-12, 0);
}

/* Dropping, one LP instance, T = 0.6: request 0 [0, 0.5] meets it;
 * request 1 (0.01) starts at 0.5, before its deadline 0.61, and gets TTFT
 * 0.99 (missed, served); request 2 (0.02) still waits at 0.62: dropped.
 * Attainment 1/3, mean TTFT over the served (0.5 + 0.99) / 2, throughput
 * 2 served over [0, 1.0]. */
static void twotier_drop(void **state)
{
    double times[3] = {0, 0.01, 0.02};
    afd_hw hw = laws(0.1, 0.001, 0, 0.05, 0, 0);
    afd_serve_twotier_config tc;
    afd_serve_twotier_counts cnt;
    afd_serve_params p = tt_base(&hw, &tc, times, 3, NULL);
    afd_serve_result r;
    (void)state;
    tc.hp = 0;
    tc.ttft_slo = p.ttft_slo = 0.6;
    tc.drop = 1;
    tc.counts = &cnt;
    assert_int_equal(afd_serve_run(&p, &r, NULL), AFD_OK);
    assert_int_equal(cnt.drops, 1);
    assert_int_equal(r.dropped, 1);
    assert_int_equal(r.completed, 3);
    assert_close(r.drop_frac, 1.0 / 3, 1e-15, 0);
    assert_close(r.attainment, 1.0 / 3, 1e-15, 0);
    assert_close(r.ttft.mean, (0.5 + 0.99) / 2, 1e-12, 0);
    assert_close(r.throughput, 2 / 1.0, 1e-12, 0);
    /* without --drop request 2 is served over [1.0, 1.5]: TTFT 1.48 */
    tc.drop = 0;
    assert_int_equal(afd_serve_run(&p, &r, NULL), AFD_OK);
    assert_int_equal(r.dropped, 0);
    assert_close(r.ttft.mean, (0.5 + 0.99 + 1.48) / 3, 1e-12, 0);
    assert_close(r.attainment, 1.0 / 3, 1e-15, 0);
}

/* Poisson arrivals, geometric lengths, decodes on both tiers: EDF with one
 * SLO is FCFS request by request (identical results); with no HP instance
 * and no drop the policy is `chunked` run for run. */
static void twotier_identities(void **state)
{
    afd_hw hw = laws(0.02, 1e-4, 1e-8, 0.03, 0.002, 1e-6);
    afd_serve_twotier_config tc;
    afd_serve_twotier_counts c1, c2;
    afd_serve_params p = tt_base(&hw, &tc, NULL, 0, NULL);
    afd_serve_result r1, r2;
    afd_workload w;
    (void)state;
    memset(&w, 0, sizeof w);
    w.kind = AFD_WORKLOAD_GEOMETRIC;
    w.mu_p = 500;
    w.mu_d = 20;
    p.workload = &w;
    p.times = NULL;
    p.n_times = 0;
    p.lambda = 20;
    p.requests = 4000;
    p.warmup = 400;
    p.batches = 16;
    p.config.decode_bmax = 16;
    p.config.chunk = 512;
    tc.lp = 2;
    tc.hp = 1;
    tc.ttft_slo = p.ttft_slo = 0.4;
    tc.threshold = 0.1;
    tc.drop = 1;
    tc.tickets = 1;
    tc.counts = &c1;
    assert_int_equal(afd_serve_run(&p, &r1, NULL), AFD_OK);
    tc.order = AFD_ORDER_EDF;
    tc.counts = &c2;
    assert_int_equal(afd_serve_run(&p, &r2, NULL), AFD_OK);
    if (!(c1.offloads > 100 && c1.tickets > 100 && c1.drops > 0))
        print_error("offloads %llu tickets %llu drops %llu\n", (unsigned long long)c1.offloads,
                    (unsigned long long)c1.tickets, (unsigned long long)c1.drops);
    assert_true(c1.offloads > 100 && c1.tickets > 100 && c1.drops > 0);
    assert_true(memcmp(&c1, &c2, sizeof c1) == 0);
    assert_true(memcmp(&r1.ttft, &r2.ttft, sizeof r1.ttft) == 0);
    assert_true(memcmp(&r1.tpot, &r2.tpot, sizeof r1.tpot) == 0);
    assert_true(r1.attainment == r2.attainment && r1.dropped == r2.dropped);
    /* SJF differs */
    tc.order = AFD_ORDER_SJF;
    assert_int_equal(afd_serve_run(&p, &r2, NULL), AFD_OK);
    assert_true(r1.ttft.mean != r2.ttft.mean);
    /* one pool, no drop: chunked with 2 instances */
    tc.order = AFD_ORDER_FCFS;
    tc.hp = 0;
    tc.drop = 0;
    p.lambda = 6;
    assert_int_equal(afd_serve_run(&p, &r1, NULL), AFD_OK);
    p.policy = afd_serve_policy_find("chunked");
    p.config.instances = 2;
    assert_int_equal(afd_serve_run(&p, &r2, NULL), AFD_OK);
    assert_true(memcmp(&r1.ttft, &r2.ttft, sizeof r1.ttft) == 0);
    assert_true(memcmp(&r1.tpot, &r2.tpot, sizeof r1.tpot) == 0);
    assert_true(memcmp(&r1.e2e, &r2.e2e, sizeof r1.e2e) == 0);
    assert_true(r1.throughput == r2.throughput && r1.events == r2.events);
}

static void twotier_errors(void **state)
{
    afd_hw hw = laws(0.1, 0.001, 0, 0.05, 0, 0);
    afd_serve_twotier_config tc;
    afd_serve_params p = tt_base(&hw, &tc, NULL, 0, NULL);
    afd_serve_result r;
    afd_error err;
    (void)state;
    p.times = NULL;
    p.lambda = 1;
    p.requests = 10;
    p.batches = 2;
    p.config.extra = NULL;
    assert_int_equal(afd_serve_run(&p, &r, &err), AFD_EINVAL);
    p.config.extra = &tc;
    tc.lp = 0;
    assert_int_equal(afd_serve_run(&p, &r, &err), AFD_EINVAL);
    assert_non_null(strstr(err.text, "LP"));
    tc.lp = 1;
    tc.threshold = NAN;
    assert_int_equal(afd_serve_run(&p, &r, &err), AFD_EINVAL);
    assert_non_null(strstr(err.text, "threshold"));
    tc.threshold = 0.1;
    tc.order = (afd_order)7;
    assert_int_equal(afd_serve_run(&p, &r, &err), AFD_EINVAL);
    tc.order = AFD_ORDER_SLACK;
    assert_int_equal(afd_serve_run(&p, &r, &err), AFD_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(md1_ttft),
        cmocka_unit_test(goodput_widens_past_a_low_bracket),
        cmocka_unit_test(attainment_tie_by_hand),
        cmocka_unit_test(attain_diff_se_against_replications),
        cmocka_unit_test(p90_tie),
        cmocka_unit_test(mdc_ttft),
        cmocka_unit_test(histograms_against_exact),
        cmocka_unit_test(open_batches_beyond_the_cap),
        cmocka_unit_test(routers_against_exact_queues),
        cmocka_unit_test(decode_routers_against_exact_queues),
        cmocka_unit_test(decode_pool_imbalance),
        cmocka_unit_test(single_request_timelines),
        cmocka_unit_test(shared_batch),
        cmocka_unit_test(stability),
        cmocka_unit_test(errors),
        cmocka_unit_test(twotier_offload_timeline),
        cmocka_unit_test(twotier_tickets_and_batch),
        cmocka_unit_test(twotier_orders),
        cmocka_unit_test(twotier_drop),
        cmocka_unit_test(twotier_identities),
        cmocka_unit_test(twotier_errors),
    };
    RUN_TESTS(tests);
}
