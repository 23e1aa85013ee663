/* test_pipeline.c: the decode-pipeline simulator against hand-derived
 * deterministic schedules, the closed forms of the paper where one side
 * clearly binds, and the invariants of the schedule itself. */
#include <config.h>

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>

#include "mc_test_util.h"

#include "afd_philox.h"
#include "afd_pipeline.h"
#include "afd_ratio.h"

#ifdef _OPENMP
#include <omp.h>
#endif

/* A trace whose requests are all (P, D = 1): every slot holds load P at
 * every step, so every Attention time is alpha_a B P + beta_a exactly. */
static afd_workload constant_trace(uint64_t P, size_t rows)
{
    afd_workload w;
    size_t i;
    memset(&w, 0, sizeof w);
    w.kind = AFD_WORKLOAD_TRACE;
    w.n_kept = rows;
    w.prompt = malloc(rows * sizeof *w.prompt);
    w.decode = malloc(rows * sizeof *w.decode);
    for (i = 0; i < rows; i++) {
        w.prompt[i] = P;
        w.decode[i] = 1;
    }
    w.stats.theta = (double)P;
    w.stats.nu = 0;
    return w;
}

static afd_pipeline_params params(const afd_workload *w, unsigned x, unsigned m)
{
    afd_pipeline_params p;
    memset(&p, 0, sizeof p);
    p.workload = w;
    assert_int_equal(afd_hw_preset("paper-910c", &p.hw), AFD_OK);
    p.x = x;
    p.y = 1;
    p.B = 256;
    p.microbatches = m;
    p.requests = 4000;
    p.start = AFD_START_STATIONARY;
    p.warmup = 0.2;
    p.batches = 20;
    p.seed = 7;
    return p;
}

/* With constant times A, F and round trip C, the steady state of the FIFO
 * pipeline repeats every m steps with period m * max(A, F, (A + F + C)/m)
 * (each side serves one micro-batch at a time; one micro-batch needs
 * A + C/2 + F + C/2 from start to return).  With D = 1 every slot finishes
 * every step, so B = 16 and 9600 requests per instance give 600 steps.
 * A = 0.00165 16 P + 50, F = 0.083 16 x + 100, C = 0.022 16 x + 20. */
static void deterministic_steady_state(void **state)
{
    static const struct {
        unsigned x, m;
        uint64_t P;
    } cases[] = {
        {4, 2, 10000},  /* A = 314, F = 105.3, C = 21.4: attention binds */
        {200, 2, 2000}, /* A = 102.8, F = 365.6, C = 90.4: FFN binds */
        {161, 2, 10000},/* A = 314, F = 313.8, C = 76.7: (A+F+C)/2 = 352.2 binds */
        {161, 3, 10000},/* the same with 3 micro-batches: A binds again */
        {6, 1, 10000},  /* no overlap: A + F + C */
    };
    size_t k;
    (void)state;
    for (k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        afd_workload w = constant_trace(cases[k].P, 3);
        afd_pipeline_params p = params(&w, cases[k].x, cases[k].m);
        afd_pipeline_result r;
        double rb = 16.0 * cases[k].x;
        double A = 0.00165 * 16 * (double)cases[k].P + 50;
        double F = 0.083 * rb + 100, C = 0.022 * rb + 20;
        double tau = fmax(fmax(A, F), (A + F + C) / cases[k].m);
        double thr = rb / ((cases[k].x + 1) * tau);
        p.B = 16;
        p.requests = 9600;
        assert_int_equal(afd_pipeline_run(&p, &r), AFD_OK);
        assert_close(r.tau, tau, 1e-9, 0);
        assert_close(r.thr_steady, thr, 5e-3, 0);
        assert_close(r.thr_sim, thr, 5e-3, 0);
        assert_close(r.barrier, 0, 0, 1e-12); /* identical workers: rounding only */
        /* D = 1: a request is admitted at one return of its micro-batch and
         * finishes at the next, m steps later */
        assert_close(r.tpot, cases[k].m * tau, 5e-3, 0);
        /* busy fractions: A/tau of the time on each worker, F/tau on the FFN */
        assert_close(r.eta_a, 1 - A / tau, 0, 5e-3);
        assert_close(r.eta_f, 1 - F / tau, 0, 5e-3);
        afd_workload_free(&w);
    }
}

/* The paper's setting (Section 5.2): where one side clearly binds, the
 * simulated throughput after a stationary start agrees with eq. (11)
 * within 2%, and the idle fractions with tau_G's within 0.01. */
static void agrees_with_theory_where_one_side_binds(void **state)
{
    static const unsigned rs[] = {1, 2, 4, 16, 24, 32};
    afd_workload w;
    size_t k;
    (void)state;
    assert_int_equal(afd_workload_geometric(100, 500, &w), AFD_OK);
    for (k = 0; k < sizeof rs / sizeof rs[0]; k++) {
        afd_pipeline_params p = params(&w, rs[k], 2);
        afd_pipeline_result r;
        afd_system s;
        afd_cycle c;
        p.requests = 10000;
        assert_int_equal(afd_pipeline_run(&p, &r), AFD_OK);
        s.hw = p.hw;
        s.B = 256;
        s.theta = w.stats.theta;
        s.nu = w.stats.nu;
        assert_int_equal(afd_cycle_topology(&s, rs[k], 1, &c), AFD_OK);
        if (!(fabs(r.thr_sim / c.thr_g - 1) < 0.02))
            fail_msg("r = %u: thr_sim %.5f, thr_g %.5f", rs[k], r.thr_sim, c.thr_g);
        assert_true(fabs(r.thr_steady - c.thr_g) < 0.02 * c.thr_g);
        /* and the idle fractions with those tau_G implies (afd_ratio.h) */
        if (!(fabs(r.eta_a - c.eta_a_g) < 0.01 && fabs(r.eta_f - c.eta_f_g) < 0.01))
            fail_msg("r = %u: eta_a %.4f eta_f %.4f, from tau_G %.4f %.4f", rs[k], r.eta_a,
                     r.eta_f, c.eta_a_g, c.eta_f_g);
        assert_true(r.completed == 10000ull * rs[k]);
    }
}

/* Figure 3 (right): the FFN idles more than half the time at r = 1, and the
 * idle ratios cross between r = 8 and r = 16, around the balance point. */
static void idle_ratios(void **state)
{
    afd_workload w;
    afd_pipeline_result r1, r8, r16;
    afd_pipeline_params p;
    (void)state;
    afd_workload_geometric(100, 500, &w);
    p = params(&w, 1, 2);
    assert_int_equal(afd_pipeline_run(&p, &r1), AFD_OK);
    p.x = 8;
    assert_int_equal(afd_pipeline_run(&p, &r8), AFD_OK);
    p.x = 16;
    assert_int_equal(afd_pipeline_run(&p, &r16), AFD_OK);
    assert_true(r1.eta_f > 0.5);
    assert_true(r1.eta_a < 0.01);
    assert_true(r8.eta_f > r8.eta_a);
    assert_true(r16.eta_a > r16.eta_f);
}

/* Same parameters, same numbers; the streams are addressed, not shared. */
static void deterministic_and_start_modes(void **state)
{
    afd_workload w, c;
    afd_pipeline_result a, b;
    afd_pipeline_params p;
    (void)state;
    afd_workload_geometric(100, 500, &w);
    p = params(&w, 6, 2);
    assert_int_equal(afd_pipeline_run(&p, &a), AFD_OK);
    assert_int_equal(afd_pipeline_run(&p, &b), AFD_OK);
    assert_true(memcmp(&a, &b, sizeof a) == 0);
    p.seed = 8;
    assert_int_equal(afd_pipeline_run(&p, &b), AFD_OK);
    assert_true(a.thr_sim != b.thr_sim);
    /* every request identical: the start mode cannot matter */
    c = constant_trace(300, 5);
    p = params(&c, 3, 2);
    assert_int_equal(afd_pipeline_run(&p, &a), AFD_OK);
    p.start = AFD_START_FRESH;
    assert_int_equal(afd_pipeline_run(&p, &b), AFD_OK);
    assert_close(a.thr_sim, b.thr_sim, 1e-14, 0);
    afd_workload_free(&c);
}

/* TPOT percentiles, worked by hand.  One worker, one FFN instance, one
 * micro-batch of B = 3 slots, every request (P, D) = (100, 4), fresh start:
 * the three slots start together and finish together, each step starts when
 * the previous one returns, and the step at age a takes
 *   alpha_a 3 (100 + a) + beta_a + (alpha_c 3 + beta_c) + alpha_f 3 + beta_f.
 * Every request's TPOT is the mean over a = 0..3:
 *   0.00165 * 3 * 101.5 + 50 + 20.066 + 100.249 = 170.817425 cycles,
 * so every percentile is that value and its standard error 0. */
static void tpot_percentiles_by_hand(void **state)
{
    afd_workload w;
    afd_pipeline_result r;
    afd_pipeline_params p;
    size_t i;
    int q;
    (void)state;
    w = constant_trace(100, 2);
    for (i = 0; i < w.n_kept; i++)
        w.decode[i] = 4;
    p = params(&w, 1, 1);
    p.B = 3;
    p.requests = 300;
    p.start = AFD_START_FRESH;
    assert_int_equal(afd_pipeline_run(&p, &r), AFD_OK);
    assert_close(afd_pipeline_tpot_levels[0], 0.5, 0, 0);
    assert_close(afd_pipeline_tpot_levels[1], 0.9, 0, 0);
    assert_close(afd_pipeline_tpot_levels[2], 0.99, 0, 0);
    assert_close(r.tpot, 170.817425, 1e-12, 0);
    for (q = 0; q < AFD_PIPELINE_TPOT_NQ; q++) {
        assert_close(r.tpot_q[q], 170.817425, 1e-12, 0);
        assert_close(r.tpot_q_se[q], 0, 0, 1e-9);
    }
    /* too few requests for two per batch: nan */
    p.requests = 30;
    assert_int_equal(afd_pipeline_run(&p, &r), AFD_OK);
    assert_true(isnan(r.tpot_q[0]) && isnan(r.tpot_q_se[2]));
    afd_workload_free(&w);
}

/* P(X <= x) for X = P + (D - 1)/2, P and D independent geometric on
 * {1, 2, ...} with means mp and md, by summing over D. */
static double cdf_x(double x, double mp, double md)
{
    double f = 0, pd = 1 / md, pp = 1 / mp, w = pd;
    int d;
    for (d = 1; d < 5000 && w > 1e-18; d++, w *= 1 - pd) {
        double k = floor(x - 0.5 * (d - 1));
        if (k >= 1)
            f += w * (1 - pow(1 - pp, k));
    }
    return f;
}

/* TPOT percentiles against an exact distribution.  With one slot (B = 1,
 * one worker, one micro-batch) each request runs alone and its TPOT is
 *   alpha_a (P + (D - 1)/2) + beta_a + alpha_c + beta_c + alpha_f + beta_f
 * (the mean of alpha_a (P + a) over its ages a = 0..D-1), the requests
 * independent draws: the exact p-quantile is the smallest half-integer x with
 * P(X <= x) >= p.  The estimates lie within 5 standard errors of it, and the
 * batch-means standard error is within a factor 2 of the large-sample
 * standard error of a quantile of n independent draws, sqrt(p (1 - p) / n) /
 * f(x_p) (f from the exact CDF over +-20 tokens). */
static void tpot_percentiles_exact(void **state)
{
    const double mp = 1000, md = 20;
    afd_workload w;
    afd_pipeline_result r;
    afd_pipeline_params p;
    double c0;
    int q;
    (void)state;
    afd_workload_geometric(mp, md, &w);
    p = params(&w, 1, 1);
    p.B = 1;
    p.requests = 20000;
    p.start = AFD_START_FRESH;
    p.seed = 11;
    assert_int_equal(afd_pipeline_run(&p, &r), AFD_OK);
    c0 = p.hw.beta_a + p.hw.alpha_c + p.hw.beta_c + p.hw.alpha_f + p.hw.beta_f;
    for (q = 0; q < AFD_PIPELINE_TPOT_NQ; q++) {
        double lv = afd_pipeline_tpot_levels[q], exact, dens, se_iid;
        long lo = 2, hi = 400000; /* 2x, bisected: F(lo/2) < lv <= F(hi/2) */
        while (hi - lo > 1) {
            long mid = (lo + hi) / 2;
            if (cdf_x(0.5 * (double)mid, mp, md) >= lv)
                hi = mid;
            else
                lo = mid;
        }
        exact = c0 + p.hw.alpha_a * 0.5 * (double)hi;
        dens = (cdf_x(0.5 * (double)hi + 20, mp, md) - cdf_x(0.5 * (double)hi - 20, mp, md)) / 40;
        se_iid = p.hw.alpha_a * sqrt(lv * (1 - lv) / (double)r.completed) / dens;
        assert_true(fabs(r.tpot_q[q] - exact) < 5 * r.tpot_q_se[q]);
        assert_true(r.tpot_q_se[q] > 0.5 * se_iid && r.tpot_q_se[q] < 2 * se_iid);
    }
}

/* Removing the barrier can only help where Attention binds; removing the
 * transfers can only help. */
static void ablations(void **state)
{
    afd_workload w;
    afd_pipeline_result base, nb, nc;
    afd_pipeline_params p;
    (void)state;
    afd_workload_geometric(100, 500, &w);
    p = params(&w, 8, 2);
    assert_int_equal(afd_pipeline_run(&p, &base), AFD_OK);
    p.no_barrier = 1;
    assert_int_equal(afd_pipeline_run(&p, &nb), AFD_OK);
    p.no_barrier = 0;
    p.no_comm = 1;
    assert_int_equal(afd_pipeline_run(&p, &nc), AFD_OK);
    assert_true(base.barrier > 0.03);
    assert_true(nb.thr_steady > base.thr_steady);
    assert_true(nc.thr_steady > base.thr_steady);
}

/* The schedule written to the Gantt callback respects the resources: no
 * worker runs two Attention tasks at once, nor the FFN two micro-batches,
 * and every stage of a step follows the previous one. */
/* Attention time and end of worker (< 4) at step (< 64), from the gantt. */
static double att_dur[64][4], att_end[64][4];

struct gantt_check {
    double a_end[4], f_end, a_done[64], stage_end[64][4];
    int bad;
};

static void on_stage(void *ctx, uint64_t step, unsigned mb, int stage, int worker, double start,
                     double end)
{
    struct gantt_check *g = ctx;
    (void)mb;
    if (end < start)
        g->bad = 1;
    if (stage == AFD_STAGE_ATTENTION) {
        if (step < 64 && worker < 4) {
            att_dur[step][worker] = end - start;
            att_end[step][worker] = end;
        }
        if (start < g->a_end[worker] - 1e-9)
            g->bad = 1;
        g->a_end[worker] = end;
        if (end > g->a_done[step])
            g->a_done[step] = end;
    } else if (stage == AFD_STAGE_A2F) {
        if (start < g->a_done[step] - 1e-9)
            g->bad = 1;
    } else if (stage == AFD_STAGE_FFN) {
        if (start < g->f_end - 1e-9 || start < g->stage_end[step][AFD_STAGE_A2F] - 1e-9)
            g->bad = 1;
        g->f_end = end;
    } else if (start < g->stage_end[step][AFD_STAGE_FFN] - 1e-9) {
        g->bad = 1;
    }
    g->stage_end[step][stage] = end;
}

/* The stream layout, written out by hand: (x << 44) XOR (y << 24), then
 * worker j, micro-batch k at offset j m + k. */
static void stream_layout_by_hand(void **state)
{
    afd_pipeline_params p;
    (void)state;
    assert_true(afd_pipeline_stream_base(3, 1) == UINT64_C(0x0000300001000000));
    assert_true(afd_pipeline_stream_base(1, 65536) == UINT64_C(0x0000110000000000));
    assert_true(afd_pipeline_stream_base(0xfffff, 7) == UINT64_C(0xfffff00007000000));
    memset(&p, 0, sizeof p);
    p.x = 3;
    p.y = 1;
    p.microbatches = 2;
    p.stream_base = afd_pipeline_stream_base(3, 1);
    assert_true(afd_pipeline_stream(&p, 0, 0) == UINT64_C(0x0000300001000000));
    assert_true(afd_pipeline_stream(&p, 2, 1) == UINT64_C(0x0000300001000005));
    /* the documented wrap: x and x + 2^20 share their streams */
    assert_true(afd_pipeline_stream_base(5 + (1u << 20), 2) == afd_pipeline_stream_base(5, 2));
}

/* For one y, the stream ranges [base, base + x m) of different x below
 * 2^20 are disjoint, at the largest m the slot limit allows (B = 1), and
 * each stream carries x in its top 20 bits. */
static void streams_of_configurations_disjoint(void **state)
{
    static const unsigned ys[] = {1, 7, 65536, (1u << 19) - 1};
    static const unsigned xs[] = {1, 2, 3, 64, 1000, 4095, 65535, 65536, 262143, (1u << 20) - 1};
    enum { NX = sizeof xs / sizeof xs[0] };
    size_t a, b, iy;
    (void)state;
    for (iy = 0; iy < sizeof ys / sizeof ys[0]; iy++) {
        uint64_t lo[NX], hi[NX];
        for (a = 0; a < NX; a++) {
            afd_pipeline_params p;
            memset(&p, 0, sizeof p);
            p.x = xs[a];
            p.y = ys[iy];
            p.microbatches = (unsigned)(AFD_PIPELINE_MAX_SLOTS / xs[a]); /* x m <= 2^26 */
            p.stream_base = afd_pipeline_stream_base(p.x, p.y);
            lo[a] = afd_pipeline_stream(&p, 0, 0);
            hi[a] = afd_pipeline_stream(&p, p.x - 1, p.microbatches - 1);
            assert_true(hi[a] - lo[a] == (uint64_t)p.x * p.microbatches - 1);
            assert_true(lo[a] >> 44 == xs[a] && hi[a] >> 44 == xs[a]);
        }
        for (a = 0; a < NX; a++)
            for (b = a + 1; b < NX; b++)
                assert_true(hi[a] < lo[b] || hi[b] < lo[a]);
    }
}

/* The simulator reads the streams of the layout: with D = 1 every request
 * lasts one step, with alpha_a = 1 and beta_a = 0 worker j's Attention time
 * at step s is the prompt of its current request, and with B = 1 and a
 * fresh start that request is the (s div m)-th draw of slot group
 * (j, s mod m): row floor(u n) of the trace, u the uniform at index s div m
 * of stream (x << 44 XOR y << 24) + j m + k, computed here by Philox
 * directly. */
static void draws_follow_the_layout(void **state)
{
    enum { X = 3, M = 2, ROWS = 8, STEPS = 16 };
    struct gantt_check g;
    afd_workload w;
    afd_pipeline_params p;
    afd_pipeline_result r;
    uint64_t P[ROWS];
    double D[ROWS];
    unsigned i, j, s;
    (void)state;
    for (i = 0; i < ROWS; i++) {
        P[i] = (uint64_t)1 << i;
        D[i] = 1;
    }
    memset(&w, 0, sizeof w);
    w.kind = AFD_WORKLOAD_TRACE;
    w.n_kept = ROWS;
    w.prompt = P;
    w.decode = malloc(ROWS * sizeof *w.decode);
    assert_non_null(w.decode);
    for (i = 0; i < ROWS; i++)
        w.decode[i] = (uint64_t)D[i];
    p = params(&w, X, M);
    p.B = 1;
    p.requests = 40;
    p.start = AFD_START_FRESH;
    p.seed = 12345;
    p.hw.alpha_a = 1;
    p.hw.beta_a = 0;
    p.stream_base = afd_pipeline_stream_base(X, 1);
    memset(&g, 0, sizeof g);
    p.gantt = on_stage;
    p.gantt_ctx = &g;
    p.gantt_steps = STEPS;
    memset(att_dur, 0, sizeof att_dur);
    assert_int_equal(afd_pipeline_run(&p, &r), AFD_OK);
    assert_int_equal(g.bad, 0);
    for (s = 0; s < STEPS; s++)
        for (j = 0; j < X; j++) {
            uint64_t stream = (((uint64_t)X << 44) ^ ((uint64_t)1 << 24)) + j * M + s % M;
            double u = afd_philox_u01(12345, stream, s / M);
            double want = (double)P[(size_t)(u * ROWS)];
            assert_close(att_dur[s][j], want, 0, 4 * DBL_EPSILON * att_end[s][j]);
        }
    free(w.decode);
}

/* Configurations run in parallel give the results they give one by one,
 * bit for bit, for 1 to 4 threads. */
static void thread_count_does_not_matter(void **state)
{
    enum { N = 6 };
    static const unsigned xs[N] = {1, 2, 3, 5, 8, 13};
    afd_workload w;
    afd_pipeline_result ser[N], par[N];
    int nt, k;
    (void)state;
    afd_workload_geometric(100, 500, &w);
    for (k = 0; k < N; k++) {
        afd_pipeline_params p = params(&w, xs[k], 2);
        p.B = 16;
        p.requests = 300;
        p.stream_base = afd_pipeline_stream_base(p.x, p.y);
        assert_int_equal(afd_pipeline_run(&p, &ser[k]), AFD_OK);
    }
    for (nt = 1; nt <= 4; nt++) {
        afd_status st[N];
        memset(par, 0, sizeof par);
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
#endif
        for (k = 0; k < N; k++) {
            afd_pipeline_params p = params(&w, xs[k], 2);
            p.B = 16;
            p.requests = 300;
            p.stream_base = afd_pipeline_stream_base(p.x, p.y);
            st[k] = afd_pipeline_run(&p, &par[k]);
        }
        for (k = 0; k < N; k++)
            assert_int_equal(st[k], AFD_OK);
        assert_memory_equal(ser, par, sizeof ser);
    }
}

static void gantt_respects_resources(void **state)
{
    afd_workload w;
    afd_pipeline_params p;
    afd_pipeline_result r;
    struct gantt_check g;
    (void)state;
    memset(&g, 0, sizeof g);
    afd_workload_geometric(100, 500, &w);
    p = params(&w, 4, 2);
    p.gantt = on_stage;
    p.gantt_ctx = &g;
    p.gantt_steps = 64;
    assert_int_equal(afd_pipeline_run(&p, &r), AFD_OK);
    assert_int_equal(g.bad, 0);
    assert_true(g.f_end > 0);
}

static void errors(void **state)
{
    afd_workload w, given, empty;
    afd_pipeline_params p;
    afd_pipeline_result r;
    (void)state;
    afd_workload_geometric(100, 500, &w);
    p = params(&w, 4, 2);
    p.microbatches = 0;
    assert_int_equal(afd_pipeline_run(&p, &r), AFD_EINVAL);
    assert_true(isnan(r.thr_sim));
    p = params(&w, 4, 2);
    p.B = 0;
    assert_int_equal(afd_pipeline_run(&p, &r), AFD_EINVAL);
    p = params(&w, 4, 2);
    p.requests = 0;
    assert_int_equal(afd_pipeline_run(&p, &r), AFD_EINVAL);
    p = params(&w, 0, 2);
    assert_int_equal(afd_pipeline_run(&p, &r), AFD_EINVAL);
    p = params(&w, 4, 2);
    p.warmup = 1;
    assert_int_equal(afd_pipeline_run(&p, &r), AFD_EINVAL);
    p = params(&w, 4, 2);
    p.hw.alpha_f = 0;
    assert_int_equal(afd_pipeline_run(&p, &r), AFD_EINVAL);
    afd_workload_given(599, 509, &given);
    p = params(&given, 4, 2);
    assert_int_equal(afd_pipeline_run(&p, &r), AFD_EINVAL);
    memset(&empty, 0, sizeof empty);
    empty.kind = AFD_WORKLOAD_TRACE;
    p = params(&empty, 4, 2);
    assert_int_equal(afd_pipeline_run(&p, &r), AFD_EEMPTY);
    p = params(&w, 4096, 64);
    p.B = 1024; /* 2^28 slots */
    assert_int_equal(afd_pipeline_run(&p, &r), AFD_ELIMIT);
}

/* A trace kept as distinct pairs draws, uniform for uniform, the requests
 * that the same trace with its rows sorted by (P, D) draws (the inversion of
 * the picker in mc_internal.h), so both starts give bit-identical results;
 * the counts and the P-D correlation make a wrong weight show. */
static void pairs_same_as_sorted_rows(void **state)
{
    static const uint64_t pp[] = {0, 3, 3, 40, 200, 700}, pd[] = {9, 1, 30, 12, 4, 90},
                          pc[] = {2, 5, 1, 7, 3, 2};
    uint64_t rp[20], rd[20], k;
    afd_workload rows, pairs;
    size_t i, n = 0;
    int start;
    (void)state;
    for (i = 0; i < 6; i++)
        for (k = 0; k < pc[i]; k++) {
            rp[n] = pp[i];
            rd[n++] = pd[i];
        }
    make_trace(&rows, rp, rd, n);
    make_pairs(&pairs, pp, pd, pc, 6);
    for (start = 0; start < 2; start++) {
        afd_pipeline_params p = params(&rows, 4, 2), q;
        afd_pipeline_result a, b;
        p.B = 16;
        p.requests = 3000;
        p.start = start ? AFD_START_STATIONARY : AFD_START_FRESH;
        q = p;
        q.workload = &pairs;
        assert_int_equal(afd_pipeline_run(&p, &a), AFD_OK);
        assert_int_equal(afd_pipeline_run(&q, &b), AFD_OK);
        assert_true(a.completed >= 4 * 3000);
        assert_memory_equal(&a, &b, sizeof a);
    }
    afd_workload_free(&rows);
    afd_workload_free(&pairs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(deterministic_steady_state),
        cmocka_unit_test(agrees_with_theory_where_one_side_binds),
        cmocka_unit_test(idle_ratios),
        cmocka_unit_test(deterministic_and_start_modes),
        cmocka_unit_test(ablations),
        cmocka_unit_test(gantt_respects_resources),
        cmocka_unit_test(errors),
        cmocka_unit_test(tpot_percentiles_by_hand),
        cmocka_unit_test(tpot_percentiles_exact),
        cmocka_unit_test(pairs_same_as_sorted_rows),
        cmocka_unit_test(stream_layout_by_hand),
        cmocka_unit_test(streams_of_configurations_disjoint),
        cmocka_unit_test(draws_follow_the_layout),
        cmocka_unit_test(thread_count_does_not_matter),
    };
    gsl_set_error_handler_off();
    RUN_TESTS(tests);
}
