/* test_deadline.c: queues with a deadline on the wait and the orderings,
 * against independent references:
 *   - M/M/1+D written out by hand from Barrer's density, its limits (d = 0:
 *     the M/M/1/1 loss system; rho = 1: 1/(2 + mu d); rho > 1, d -> inf:
 *     1 - 1/rho);
 *   - M/M/c+D at d = 0 against Erlang's loss formula computed from its
 *     definition, and at large d against the M/M/c wait (afd_mmc_wq);
 *   - the numerical M/G/1+D with exponential service against the closed
 *     form (1e-6), with deterministic service against the hand solution for
 *     d <= D (f = lambda P0 e^{lambda x}) and the M/D/1 limit d -> inf
 *     (Pollaczek-Khinchine, P(W = 0) = 1 - rho), and the server balance
 *     1 - P0 = lambda E[S] (1 - p_off) for an atomic law;
 *   - the offloaded stream: at d = 0 the peakedness of the M/M/c/c overflow
 *     against Riordan's formula and, c = 1, its scv by hand; at d > 0 its
 *     rate and scv against a simulated M/M/c queue (5 standard errors);
 *   - the simulator against all of these within 5 standard errors, the same
 *     for 1 and 2 threads, EDF = FCFS run by run, SJF against Phipps'
 *     formula and Kleinrock's conservation law. */
#include <config.h>

#include <float.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>

#include "mc_test_util.h"

#include "afd_dlsim.h"
#include "afdkit.h"

/* Barrer's M/M/1+D loss by hand: rho (1 - rho) E / (1 - rho^2 E). */
static double mm1_loss(double lambda, double mean, double d)
{
    double rho = lambda * mean, e = exp(-(1 - rho) * d / mean);
    return rho * (1 - rho) * e / (1 - rho * rho * e);
}

/* ------------------------------------------------------------ closed form */

static void mm1_closed_by_hand(void **state)
{
    static const double lam[] = {0.3, 0.77, 1.9, 4.2};
    size_t i;
    (void)state;
    for (i = 0; i < sizeof lam / sizeof lam[0]; i++) {
        afd_deadline_result r;
        double mean = 0.83, d = 2.385, rho = lam[i] * mean, kappa = 1 / mean - lam[i];
        double p0 = (1 - rho) / (1 - rho * rho * exp(-kappa * d)), poff, pz, wm;
        assert_int_equal(afd_mmc_deadline(lam[i], mean, 1, d, 0.9, &r), AFD_OK);
        poff = mm1_loss(lam[i], mean, d);
        assert_close(r.p_off, poff, 1e-12, 0);
        /* served: atom P0 / (1 - p_off), density lambda P0 e^{-kappa x} / (1 - p_off) */
        pz = p0 / (1 - poff);
        assert_close(r.p_zero, pz, 1e-12, 0);
        wm = lam[i] * p0 * (1 - exp(-kappa * d) * (1 + kappa * d)) / (kappa * kappa) / (1 - poff);
        assert_close(r.wait_mean, wm, 1e-10, 0);
        /* the quantile solves P0 + lambda P0 (1 - e^{-kappa t}) / kappa = 0.9 (1 - p_off) */
        assert_close(p0 + lam[i] * p0 * (-expm1(-kappa * r.wait_q)) / kappa, 0.9 * (1 - poff),
                     1e-12, 0);
        assert_close(r.served_rate + r.offload_rate, lam[i], 1e-14, 0);
        assert_close(r.busy, rho * (1 - poff), 1e-12, 0);
    }
}

static void mm1_limits(void **state)
{
    afd_deadline_result r;
    (void)state;
    /* d = 0: M/M/1/1 loses rho / (1 + rho) */
    assert_int_equal(afd_mmc_deadline(1.7, 0.5, 1, 0, 0.9, &r), AFD_OK);
    assert_close(r.p_off, 0.85 / 1.85, 1e-14, 0);
    assert_close(r.wait_mean, 0, 0, 1e-300);
    /* rho = 1 exactly: 1 / (2 + mu d) */
    assert_int_equal(afd_mmc_deadline(2, 0.5, 1, 3.1, 0.9, &r), AFD_OK);
    assert_close(r.p_off, 1 / (2 + 2 * 3.1), 1e-13, 0);
    /* and continuous through it */
    assert_int_equal(afd_mmc_deadline(2 * (1 + 1e-9), 0.5, 1, 3.1, 0.9, &r), AFD_OK);
    assert_close(r.p_off, 1 / (2 + 2 * 3.1), 1e-8, 0);
    /* overload, long deadline: the server is always busy, 1 - 1/rho leave */
    assert_int_equal(afd_mmc_deadline(3, 1, 1, 5000, 0.9, &r), AFD_OK);
    assert_close(r.p_off, 2.0 / 3, 1e-12, 0);
    assert_true(r.wait_q <= 5000 && r.wait_q > 4990);
}

static double erlang_b_direct(double a, int c)
{
    long double num = 1, den = 1, term = 1;
    int k;
    for (k = 1; k <= c; k++) {
        term *= a / k;
        den += term;
    }
    num = term;
    return (double)(num / den);
}

static void mmc_limits(void **state)
{
    static const int cs[] = {2, 3, 7};
    size_t i;
    (void)state;
    for (i = 0; i < 3; i++) {
        afd_deadline_result r;
        double mean = 1.3, lam = 0.8 * cs[i] / mean;
        /* d = 0 is the Erlang loss system M/M/c/c */
        assert_int_equal(afd_mmc_deadline(lam, mean, cs[i], 0, 0.9, &r), AFD_OK);
        assert_close(r.p_off, erlang_b_direct(lam * mean, cs[i]), 1e-12, 0);
        /* d -> inf: the M/M/c queue, E[W] = C(c, a) D / (c - a) */
        assert_int_equal(afd_mmc_deadline(lam, mean, cs[i], 400, 0.9, &r), AFD_OK);
        assert_close(r.p_off, 0, 0, 1e-20);
        assert_close(r.wait_mean, afd_mmc_wq(lam, mean, cs[i]), 1e-12, 0);
        assert_close(1 - r.p_zero, afd_erlang_c(lam * mean, cs[i]), 1e-12, 0);
    }
}

/* ----------------------------------------------------------- numerical */

static void mg1_exponential_matches_closed(void **state)
{
    static const double lam[] = {0.45, 0.8, 0.95, 1.3, 2.2};
    afd_svc_law *e;
    size_t i;
    (void)state;
    assert_int_equal(afd_svc_law_exponential(1.13, &e), AFD_OK);
    for (i = 0; i < sizeof lam / sizeof lam[0]; i++) {
        afd_deadline_result c, n;
        assert_int_equal(afd_mmc_deadline(lam[i], 1.13, 1, 2.385, 0.9, &c), AFD_OK);
        assert_int_equal(afd_mg1_deadline(lam[i], e, 2.385, 0.9, 1e-8, &n), AFD_OK);
        assert_close(n.p_off, c.p_off, 0, 1e-6);
        assert_close(n.p_off, c.p_off, 0, n.p_off_err + 1e-12); /* the stated error holds */
        assert_close(n.wait_mean, c.wait_mean, 0, 1e-6);
        assert_close(n.wait_q, c.wait_q, 0, 1e-6);
        assert_close(n.p_zero, c.p_zero, 0, 1e-6);
        assert_true(n.p_off_err < 1e-6);
    }
    afd_svc_law_free(e);
}

static void md1_short_deadline_by_hand(void **state)
{
    /* d <= D: Bbar = 1 on [0, d], so f = lambda P0 e^{lambda x} there;
     * 1 - P0 = lambda D P0 e^{lambda d} gives P0 and p_off = 1 - P0 e^{lambda d}. */
    static const double ds[] = {0.25, 0.7, 1.0};
    afd_svc_law *dd;
    size_t i;
    (void)state;
    assert_int_equal(afd_svc_law_deterministic(1.0, &dd), AFD_OK);
    for (i = 0; i < 3; i++) {
        afd_deadline_result n;
        double lam = 0.8, d = ds[i], e = exp(lam * d), p0 = 1 / (1 + lam * e);
        assert_int_equal(afd_mg1_deadline(lam, dd, d, 0.9, 1e-9, &n), AFD_OK);
        assert_close(n.p_off, 1 - p0 * e, 0, 1e-7);
        assert_close(n.p_zero, 1 / e, 0, 1e-7);
        assert_close(n.wait_mean, d - (1 - 1 / e) / lam, 0, 1e-7);
        assert_close(n.busy, 1 - p0, 0, 1e-7);
    }
    afd_svc_law_free(dd);
}

static void md1_long_deadline_is_md1(void **state)
{
    afd_svc_law *dd;
    afd_deadline_result n;
    double rho = 0.6;
    (void)state;
    assert_int_equal(afd_svc_law_deterministic(1.7, &dd), AFD_OK);
    assert_int_equal(afd_mg1_deadline(rho / 1.7, dd, 60, 0.9, 1e-8, &n), AFD_OK);
    assert_close(n.p_off, 0, 0, 1e-8);
    assert_close(n.wait_mean, rho * 1.7 / (2 * (1 - rho)), 1e-6, 0);
    assert_close(n.p_zero, 1 - rho, 1e-6, 0);
    assert_close(n.wait_q, afd_md1_wait_quantile(rho / 1.7, 1.7, 0.9), 1e-5, 0);
    afd_svc_law_free(dd);
}

/* A trace's prefill law: prompts 10, 20, 10 under a + b P + c P^2 with a = 1,
 * b = 0.5, c = 0.01 take 7, 15 and 7 by hand, so E[S] = 29/3 and
 * E[S^2] = (49 + 225 + 49)/3 = 323/3, with two atoms (7 w.p. 2/3, 15). */
static void prefill_law_by_hand(void **state)
{
    afd_hw hw;
    afd_svc_law *law;
    const uint64_t prompt[] = {10, 20, 10};
    double t[3];
    (void)state;
    afd_hw_init(&hw);
    assert_int_equal(afd_prefill_times(&hw, prompt, 3, t), AFD_EINVAL); /* no prefill law */
    assert_int_equal(afd_svc_law_prefill(&hw, prompt, 3, &law), AFD_EINVAL);
    assert_null(law);
    hw.prefill_a = 1;
    hw.prefill_b = 0.5;
    hw.prefill_c = 0.01;
    assert_int_equal(afd_prefill_times(&hw, prompt, 3, t), AFD_OK);
    assert_true(t[0] == 7 && t[1] == 15 && t[2] == 7);
    assert_int_equal(afd_svc_law_prefill(&hw, prompt, 0, &law), AFD_EEMPTY);
    assert_int_equal(afd_svc_law_prefill(&hw, prompt, 3, &law), AFD_OK);
    assert_close(afd_svc_law_mean(law), 29.0 / 3, 1e-15, 0);
    assert_close(afd_svc_law_m2(law), 323.0 / 3, 1e-15, 0);
    assert_int_equal(afd_svc_law_atoms(law), 2);
    afd_svc_law_free(law);
}

static void atoms_balance(void **state)
{
    /* the server balance is not imposed by the solver: it checks it */
    static const double s[] = {0.2, 0.2, 1.5, 0.7, 3.1, 0.2, 0.9};
    afd_svc_law *l;
    afd_deadline_result n;
    double es = (0.2 * 3 + 1.5 + 0.7 + 3.1 + 0.9) / 7;
    (void)state;
    assert_int_equal(afd_svc_law_samples(s, 7, &l), AFD_OK);
    assert_int_equal(afd_svc_law_atoms(l), 5);
    assert_close(afd_svc_law_mean(l), es, 1e-15, 0);
    assert_close(afd_svc_law_sf(l, 0.2), 4.0 / 7, 1e-15, 0);
    assert_close(afd_svc_law_bin_var(l), 0, 0, 1e-15);
    assert_close(afd_svc_law_quantile(l, 0.5), 0.7, 0, 0);
    assert_int_equal(afd_mg1_deadline(1.1 / es, l, 2.2, 0.9, 1e-9, &n), AFD_OK);
    assert_close(n.busy, 1.1 * (1 - n.p_off), 0, 1e-7);
    afd_svc_law_free(l);
}

static void bad_arguments(void **state)
{
    afd_svc_law *l = NULL;
    afd_deadline_result r;
    double s[] = {1, -1};
    (void)state;
    assert_int_equal(afd_svc_law_deterministic(0, &l), AFD_EINVAL);
    assert_null(l);
    assert_int_equal(afd_svc_law_exponential(NAN, &l), AFD_EINVAL);
    assert_int_equal(afd_svc_law_samples(s, 2, &l), AFD_EINVAL);
    assert_int_equal(afd_svc_law_samples(s, 0, &l), AFD_EEMPTY);
    assert_int_equal(afd_mmc_deadline(0, 1, 1, 1, 0.9, &r), AFD_EINVAL);
    assert_true(isnan(r.p_off));
    assert_int_equal(afd_mmc_deadline(1, 1, 0, 1, 0.9, &r), AFD_EINVAL);
    assert_int_equal(afd_mmc_deadline(1, 1, 1, -1, 0.9, &r), AFD_EINVAL);
    assert_int_equal(afd_mmc_deadline(1, 1, 1, INFINITY, 0.9, &r), AFD_EINVAL);
    assert_int_equal(afd_mmc_deadline(1, 1, 1, 1, 1, &r), AFD_EINVAL);
    assert_int_equal(afd_svc_law_deterministic(1, &l), AFD_OK);
    assert_int_equal(afd_mg1_deadline(1, NULL, 1, 0.9, 0, &r), AFD_EINVAL);
    assert_int_equal(afd_mg1_deadline(1, l, NAN, 0.9, 0, &r), AFD_EINVAL);
    assert_true(isnan(r.p_off));
    /* a deadline of 10^6 arrivals is beyond the finest grid: said, not hidden */
    assert_int_equal(afd_mg1_deadline(1.5, l, 1e6, 0.9, 0, &r), AFD_ENUMERIC);
    assert_int_equal(afd_mgc_deadline(1, l, 0, 1, 0.9, &r), AFD_EINVAL);
    afd_svc_law_free(l);
}

/* ----------------------------------------------------------- simulator */

static afd_dlsim_params base(double lambda, double d)
{
    afd_dlsim_params p;
    memset(&p, 0, sizeof p);
    p.c = 1;
    p.lambda = lambda;
    p.deadline = d;
    p.customers = 20000;
    p.warmup = 2000;
    p.replications = 16;
    p.long_threshold = INFINITY;
    p.seed = 20240917;
    return p;
}

static void sim_mm1(void **state)
{
    static const double lam[] = {0.8, 1.3};
    size_t i;
    (void)state;
    for (i = 0; i < 2; i++) {
        afd_dlsim_params p = base(lam[i], 2.385);
        afd_dlsim_result s;
        afd_deadline_result c;
        p.exp_mean = 1.13;
        assert_int_equal(afd_dlsim(&p, &s), AFD_OK);
        assert_int_equal(afd_mmc_deadline(lam[i], 1.13, 1, 2.385, 0.9, &c), AFD_OK);
        assert_within_se(s.p_off, c.p_off, s.p_off_se, 5);
        assert_within_se(s.wait_mean, c.wait_mean, s.wait_mean_se, 5);
        assert_within_se(s.wait_q, c.wait_q, s.wait_q_se, 5);
        assert_within_se(s.served_rate, c.served_rate, s.served_rate_se, 5);
        assert_within_se(s.ttft_mean, c.wait_mean + 1.13, s.ttft_mean_se, 5);
    }
}

struct runs_log {
    uint64_t calls, max_done, total;
};

static void log_runs(void *ctx, uint64_t done, uint64_t total)
{
    struct runs_log *l = ctx;
    l->calls++;
    if (done > l->max_done)
        l->max_done = done;
    l->total = total;
}

/* The progress callback is called once per run, the last with all 16 done,
 * and changes nothing in the result. */
static void sim_progress_observes_only(void **state)
{
    afd_dlsim_params p = base(1.3, 2.385);
    afd_dlsim_result plain, seen;
    struct runs_log l = {0, 0, 0};
    (void)state;
    p.exp_mean = 1;
    p.customers = 2000;
    p.warmup = 200;
    assert_int_equal(afd_dlsim(&p, &plain), AFD_OK);
    p.progress = log_runs;
    p.progress_ctx = &l;
    assert_int_equal(afd_dlsim(&p, &seen), AFD_OK);
    assert_int_equal(l.calls, 16);
    assert_int_equal(l.max_done, 16);
    assert_int_equal(l.total, 16);
    assert_true(plain.p_off == seen.p_off && plain.p_off_se == seen.p_off_se);
    assert_true(plain.wait_q == seen.wait_q);
}

static void sim_md1(void **state)
{
    static const double rho[] = {0.8, 0.95, 1.3};
    afd_svc_law *dd;
    size_t i;
    (void)state;
    assert_int_equal(afd_svc_law_deterministic(1.0, &dd), AFD_OK);
    for (i = 0; i < 3; i++) {
        afd_dlsim_params p = base(rho[i], 2.385);
        afd_dlsim_result s;
        afd_deadline_result n;
        p.service = 1.0;
        p.stream = 100 * i;
        assert_int_equal(afd_dlsim(&p, &s), AFD_OK);
        assert_int_equal(afd_mg1_deadline(rho[i], dd, 2.385, 0.9, 1e-8, &n), AFD_OK);
        assert_within_se(s.p_off, n.p_off, s.p_off_se, 5);
        assert_within_se(s.wait_mean, n.wait_mean, s.wait_mean_se, 5);
        assert_within_se(s.wait_q, n.wait_q, s.wait_q_se, 5);
    }
    afd_svc_law_free(dd);
}

static void sim_mmc(void **state)
{
    afd_dlsim_params p = base(3.1, 0.9);
    afd_dlsim_result s;
    afd_deadline_result c;
    (void)state;
    p.c = 3;
    p.exp_mean = 1.0;
    assert_int_equal(afd_dlsim(&p, &s), AFD_OK);
    assert_int_equal(afd_mmc_deadline(3.1, 1.0, 3, 0.9, 0.9, &c), AFD_OK);
    assert_within_se(s.p_off, c.p_off, s.p_off_se, 5);
    assert_within_se(s.wait_mean, c.wait_mean, s.wait_mean_se, 5);
    assert_within_se(s.wait_q, c.wait_q, s.wait_q_se, 5);
}

static int same_result(const afd_dlsim_result *a, const afd_dlsim_result *b)
{
    return memcmp(a, b, sizeof *a) == 0;
}

static void sim_threads_invariant(void **state)
{
    afd_dlsim_params p = base(1.2, 1.5);
    afd_dlsim_result a, b;
    (void)state;
    p.service = 0.9;
    p.order = AFD_ORDER_SJF;
    p.customers = 5000;
    set_threads(1);
    assert_int_equal(afd_dlsim(&p, &a), AFD_OK);
    set_threads(2);
    assert_int_equal(afd_dlsim(&p, &b), AFD_OK);
    assert_true(same_result(&a, &b));
    /* an explicit team size, whatever OpenMP's default */
    p.threads = 3;
    assert_int_equal(afd_dlsim(&p, &b), AFD_OK);
    assert_true(same_result(&a, &b));
    p.threads = 256;
    assert_int_equal(afd_dlsim(&p, &b), AFD_OK);
    assert_true(same_result(&a, &b));
}

/* EDF with one SLO for every request orders by a_i + SLO, i.e. by arrival:
 * the same waits as FCFS request by request, so equal results bit for bit,
 * with and without a deadline, for one and several servers. */
static void sim_edf_is_fcfs(void **state)
{
    static const double svc[] = {0.1, 0.3, 0.3, 1.9, 0.6};
    static const double d[] = {1.4, INFINITY};
    static const unsigned c[] = {1, 3};
    size_t i, j;
    (void)state;
    for (i = 0; i < 2; i++)
        for (j = 0; j < 2; j++) {
            afd_dlsim_params p = base(0.85 * c[j] / 0.64, d[i]);
            afd_dlsim_result f, e, s;
            p.c = c[j];
            p.samples = svc;
            p.rows = 5;
            p.customers = 5000;
            p.slo = 2.0; /* TTFT SLO; the offload deadline is separate */
            assert_int_equal(afd_dlsim(&p, &f), AFD_OK);
            p.order = AFD_ORDER_EDF;
            assert_int_equal(afd_dlsim(&p, &e), AFD_OK);
            assert_true(same_result(&f, &e));
            /* and a different order is not: the comparison can fail */
            p.order = AFD_ORDER_SJF;
            assert_int_equal(afd_dlsim(&p, &s), AFD_OK);
            assert_false(same_result(&f, &s));
        }
}

/* Two classes of prompts, no deadline: Cobham/Phipps per class. */
static void sjf_vs_fcfs(void **state)
{
    static const double svc[] = {0.2, 0.2, 0.2, 2.0};
    afd_svc_law *l;
    afd_dlsim_params p;
    afd_dlsim_result f, s;
    afd_result wf, ws, wl, wshort;
    double share, lam = 0.8 / 0.65, w0, rho_s;
    (void)state;
    assert_int_equal(afd_svc_law_samples(svc, 4, &l), AFD_OK);
    /* Phipps by hand: W0 = lambda E[S^2]/2, rho_short = lambda 0.75 0.2 */
    w0 = lam * (0.75 * 0.04 + 0.25 * 4.0) / 2;
    rho_s = lam * 0.75 * 0.2;
    assert_int_equal(afd_sjf_wait(lam, l, 0.2, &wshort), AFD_OK);
    assert_close(wshort.val, w0 / (1 - rho_s), 1e-14, 0);
    assert_int_equal(afd_sjf_wait_mean_above(lam, l, 1.0, &wl, &share), AFD_OK);
    assert_close(share, 0.25, 1e-15, 0);
    assert_close(wl.val, w0 / ((1 - rho_s) * (1 - 0.8)), 1e-14, 0);
    assert_int_equal(afd_fcfs_wait_mean(lam, l, &wf), AFD_OK);
    assert_close(wf.val, w0 / (1 - 0.8), 1e-14, 0);
    assert_int_equal(afd_sjf_wait_mean(lam, l, &ws), AFD_OK);
    /* conservation: sum_j lambda t_j w_j W(t_j) = rho W_FCFS */
    assert_close(lam * (0.75 * 0.2 * wshort.val + 0.25 * 2.0 * wl.val), 0.8 * wf.val, 1e-13, 0);
    /* SJF: lower mean, higher wait for the long prompts */
    assert_true(ws.val < wf.val);
    assert_true(wl.val > wf.val);

    p = base(lam, INFINITY);
    p.samples = svc;
    p.rows = 4;
    p.long_threshold = 1.0;
    p.customers = 40000;
    p.warmup = 4000;
    assert_int_equal(afd_dlsim(&p, &f), AFD_OK);
    p.order = AFD_ORDER_SJF;
    assert_int_equal(afd_dlsim(&p, &s), AFD_OK);
    assert_within_se(f.wait_mean, wf.val, f.wait_mean_se, 5);
    assert_within_se(f.long_wait_mean, wf.val, f.long_wait_mean_se, 5);
    assert_within_se(s.wait_mean, ws.val, s.wait_mean_se, 5);
    assert_within_se(s.long_wait_mean, wl.val, s.long_wait_mean_se, 5);
    assert_close(s.long_fraction, 0.25, 0, 0.01);
    /* the simulated contrast, beyond noise */
    assert_true(s.wait_mean + 5 * s.wait_mean_se < f.wait_mean - 5 * f.wait_mean_se);
    assert_true(s.long_wait_mean - 5 * s.long_wait_mean_se >
                f.long_wait_mean + 5 * f.long_wait_mean_se);
    assert_true(s.long_wait_q > f.long_wait_q);
    afd_svc_law_free(l);
}

static void sjf_exponential(void **state)
{
    /* exponential service: the quadrature of Phipps' W(x) against the
     * density, checked by the conservation law int lambda x W(x) dB(x) =
     * rho W_FCFS, evaluated here by an independent midpoint sum */
    afd_svc_law *e;
    afd_result wf, ws, w;
    double lam = 0.7, h = 1e-3, s = 0, u;
    (void)state;
    assert_int_equal(afd_svc_law_exponential(1.0, &e), AFD_OK);
    assert_int_equal(afd_fcfs_wait_mean(lam, e, &wf), AFD_OK);
    assert_close(wf.val, 0.7 / 0.3, 1e-14, 0);
    assert_int_equal(afd_sjf_wait_mean(lam, e, &ws), AFD_OK);
    for (u = h / 2; u < 50; u += h) {
        assert_int_equal(afd_sjf_wait(lam, e, u, &w), AFD_OK);
        s += lam * u * w.val * exp(-u) * h;
    }
    assert_close(s, lam * wf.val, 1e-5, 0);
    assert_true(ws.val < wf.val);
    assert_int_equal(afd_sjf_wait_mean(1.0, e, &ws), AFD_EUNSTABLE);
    afd_svc_law_free(e);
}

/* ------------------------------------------------------ the offloaded stream */

/* Erlang's loss formula from its definition: (a^c / c!) / sum_{k<=c} a^k / k!. */
static double erlang_b_def(double a, unsigned c)
{
    double t = 1, sum = 1;
    unsigned k;
    for (k = 1; k <= c; k++) {
        t *= a / k;
        sum += t;
    }
    return t / sum;
}

/* d = 0: the overflow of M/M/c/c.  Its peakedness with respect to the
 * service rate, 1/(1 - psi(mu)) - lambda B / mu for a renewal stream, is
 * Riordan's Z = 1 - m + a / (c + 1 + m - a), m = a B (Wilkinson 1956).  For
 * c = 1 the stream alternates Exp(mu) busy and Exp(lambda) idle periods:
 * scv = 1 + 2 lambda mu / (lambda + mu)^2 by hand. */
static void overflow_loss(void **state)
{
    static const double lam[] = {0.37, 2.385, 7.1};
    static const unsigned cs[] = {1, 2, 3, 7};
    double mean = 0.83, mu = 1 / mean, v, scv;
    size_t i, j;
    (void)state;
    for (i = 0; i < sizeof lam / sizeof *lam; i++)
        for (j = 0; j < sizeof cs / sizeof *cs; j++) {
            double a = lam[i] * mean, b = erlang_b_def(a, cs[j]), m = a * b;
            double z = 1 - m + a / (cs[j] + 1 + m - a);
            assert_int_equal(afd_mmc_overflow_lst(lam[i], mean, cs[j], 0, mu, &v), AFD_OK);
            assert_close(1 / (1 - v) - lam[i] * b / mu, z, 1e-10, 0);
        }
    for (i = 0; i < sizeof lam / sizeof *lam; i++) {
        double l = lam[i], sum = l + mu;
        assert_int_equal(afd_mmc_overflow_scv(l, mean, 1, 0, &scv), AFD_OK);
        assert_close(scv, 1 + 2 * l * mu / (sum * sum), 1e-10, 0);
    }
    assert_int_equal(afd_mmc_overflow_lst(1, 1, 0, 0, 1, &v), AFD_EINVAL);
    assert_true(isnan(v));
    assert_int_equal(afd_mmc_overflow_lst(1, 1, 1, -1, 1, &v), AFD_EINVAL);
    assert_int_equal(afd_mmc_overflow_lst(1, 1, 1, 1, 0, &v), AFD_EINVAL);
    assert_int_equal(afd_mmc_overflow_scv(-1, 1, 1, 1, &scv), AFD_EINVAL);
    assert_true(isnan(scv));
    assert_int_equal(afd_mmc_overflow_scv(1, 1, 1, 1, NULL), AFD_EINVAL);
}

/* d > 0: M/M/c FCFS simulated (a request is offloaded when its wait would
 * exceed d); the times between offloads are i.i.d. (a renewal stream), so
 * their scv and their mean's reciprocal (lambda p_off, afd_mmc_deadline) are
 * checked within 5 standard errors of 40 batch means.  Loads below, at and
 * above 1. */
static void overflow_sim(void **state)
{
    static const struct {
        double lambda, mean, d;
        unsigned c;
    } k[] = {{0.9, 1.0, 1.3, 1}, {2.7, 0.7, 0.9, 2}, {3.3, 1.1, 2.385, 3}, {4.2, 0.9, 0.6, 3}};
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    size_t i;
    (void)state;
    assert_non_null(r);
    for (i = 0; i < sizeof k / sizeof *k; i++) {
        enum { NB = 40, PER = 20000 };
        double free_at[8] = {0}, t = 0, last = -1, scv, bs[NB], bm[NB], sm = 0, sv = 0, ms = 0,
               mv = 0;
        afd_deadline_result dl;
        int b;
        assert_int_equal(afd_mmc_overflow_scv(k[i].lambda, k[i].mean, k[i].c, k[i].d, &scv),
                         AFD_OK);
        assert_int_equal(afd_mmc_deadline(k[i].lambda, k[i].mean, k[i].c, k[i].d, 0.9, &dl),
                         AFD_OK);
        gsl_rng_set(r, 2385 + i);
        for (b = -1; b < NB; b++) { /* batch -1 warms up */
            double s1 = 0, s2 = 0;
            int n = 0;
            while (n < PER) {
                unsigned j, f = 0;
                t += gsl_ran_exponential(r, 1 / k[i].lambda);
                for (j = 1; j < k[i].c; j++)
                    if (free_at[j] < free_at[f])
                        f = j;
                if (free_at[f] - t > k[i].d) {
                    if (last >= 0) {
                        s1 += t - last;
                        s2 += (t - last) * (t - last);
                        n++;
                    }
                    last = t;
                } else {
                    free_at[f] = (free_at[f] > t ? free_at[f] : t) +
                                 gsl_ran_exponential(r, k[i].mean);
                }
            }
            if (b >= 0) {
                double m = s1 / PER;
                bm[b] = m;
                bs[b] = (s2 / PER - m * m) / (m * m);
            }
        }
        for (b = 0; b < NB; b++) {
            sm += bs[b] / NB;
            ms += bm[b] / NB;
        }
        for (b = 0; b < NB; b++) {
            sv += (bs[b] - sm) * (bs[b] - sm) / (NB - 1);
            mv += (bm[b] - ms) * (bm[b] - ms) / (NB - 1);
        }
        assert_close(ms, 1 / (k[i].lambda * dl.p_off), 0, 5 * sqrt(mv / NB));
        assert_close(sm, scv, 0, 5 * sqrt(sv / NB));
        /* bursty: well above a Poisson stream's 1 */
        assert_true(scv > 1.2);
    }
    gsl_rng_free(r);
}

static void sim_errors(void **state)
{
    afd_dlsim_params p = base(1, 1);
    afd_dlsim_result s;
    afd_order o;
    (void)state;
    assert_int_equal(afd_dlsim(&p, &s), AFD_EINVAL); /* no service law */
    assert_true(isnan(s.p_off));
    p.service = 1;
    p.exp_mean = 1;
    assert_int_equal(afd_dlsim(&p, &s), AFD_EINVAL); /* two */
    p.exp_mean = 0;
    p.deadline = INFINITY;
    assert_int_equal(afd_dlsim(&p, &s), AFD_EUNSTABLE);
    p.deadline = -1;
    assert_int_equal(afd_dlsim(&p, &s), AFD_EINVAL);
    assert_int_equal(afd_order_parse("slack", &o), AFD_OK);
    assert_int_equal(o, AFD_ORDER_SLACK);
    assert_string_equal(afd_order_name(AFD_ORDER_EDF), "edf");
    assert_int_equal(afd_order_parse("lifo", &o), AFD_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(mm1_closed_by_hand),
        cmocka_unit_test(mm1_limits),
        cmocka_unit_test(mmc_limits),
        cmocka_unit_test(mg1_exponential_matches_closed),
        cmocka_unit_test(md1_short_deadline_by_hand),
        cmocka_unit_test(md1_long_deadline_is_md1),
        cmocka_unit_test(prefill_law_by_hand),
        cmocka_unit_test(atoms_balance),
        cmocka_unit_test(bad_arguments),
        cmocka_unit_test(sim_mm1),
        cmocka_unit_test(sim_md1),
        cmocka_unit_test(sim_mmc),
        cmocka_unit_test(sim_threads_invariant),
        cmocka_unit_test(sim_edf_is_fcfs),
        cmocka_unit_test(sjf_vs_fcfs),
        cmocka_unit_test(sjf_exponential),
        cmocka_unit_test(overflow_loss),
        cmocka_unit_test(overflow_sim),
        cmocka_unit_test(sim_errors),
        cmocka_unit_test(sim_progress_observes_only),
    };
    gsl_set_error_handler_off();
    RUN_TESTS(tests);
}
