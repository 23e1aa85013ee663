/* bench_mc.c: cost of the Monte Carlo engine.
 *
 *   1. the floor: Philox uniforms per second (afd_philox_fill_u01 into an
 *      L1-resident buffer), on 1 and 2 threads;
 *   2. the barrier experiment on the per-slot path (trace workload, alias
 *      sampler by value and by row): time per slot sample, and its ratio
 *      to the floor;
 *   3. the paper's Table 1 experiment (geometric model, B = 256, 50,000
 *      trials, r = 2, 4, 8, 12, 16, 24) on 2 threads, O(1) path.
 *
 * Usage: bench_mc TRACE.csv [RUNS]   (best of RUNS timings, default 3) */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <gsl/gsl_errno.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "afdkit.h"
#include "afd_mc.h"
#include "afd_philox.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void set_threads(int n)
{
#ifdef _OPENMP
    omp_set_num_threads(n);
#else
    (void)n;
#endif
}

/* Wall seconds per uniform with nt threads, each filling its own stream. */
static double floor_ns(int nt, int runs)
{
    enum { BUF = 4096, REPS = 1 << 14 };
    double best = 1e300, sink = 0;
    int k;
    for (k = 0; k < runs; k++) {
        double t0 = now();
        int th;
        set_threads(nt);
#ifdef _OPENMP
#pragma omp parallel for reduction(+ : sink) schedule(static, 1)
#endif
        for (th = 0; th < nt; th++) {
            double buf[BUF];
            long i;
            for (i = 0; i < REPS; i++) {
                afd_philox_fill_u01(1, (uint64_t)th, (uint64_t)i * BUF, BUF, buf);
                sink += buf[i % BUF];
            }
        }
        if (now() - t0 < best)
            best = now() - t0;
    }
    if (sink < 0) /* keep the fills */
        printf("%g\n", sink);
    return best / ((double)nt * BUF * REPS) * 1e9;
}

/* The per-slot path on a trace, with each of its two samplers: by value
 * (one uniform per slot, the default) and by row (two uniforms). */
static int barrier_per_slot(const afd_workload *w, int runs, double floor1, double floor2)
{
    static const unsigned r[] = {8};
    afd_barrier_mc_params p = {
        .workload = w, .B = 256, .r = r, .n_r = 1, .trials = 20000, .seed = 3};
    afd_barrier_mc_result res;
    double slots = (double)p.trials * r[0] * (double)p.B;
    int nt;
    for (p.by_row = 0; p.by_row <= 1; p.by_row++)
        for (nt = 1; nt <= 2; nt++) {
            double best = 1e300, ns, fl = nt == 1 ? floor1 : floor2;
            int k, uniforms = p.by_row ? 2 : 1;
            set_threads(nt);
            for (k = 0; k < runs; k++) {
                double t0 = now();
                afd_status st = afd_barrier_mc(&p, &res);
                if (st != AFD_OK) {
                    fprintf(stderr, "bench_mc: barrier: %s\n", afd_strerror(st));
                    return 1;
                }
                if (now() - t0 < best)
                    best = now() - t0;
            }
            ns = best / slots * 1e9;
            printf("per-slot barrier by %s (%d uniform%s per slot), %d thread%s: %.0f slot "
                   "samples in %.3f s = %.2f ns/slot = %.2fx the floor per uniform; "
                   "overhead r=8 %.3f%% +- %.3f%%\n",
                   p.by_row ? "row" : "value", uniforms, uniforms > 1 ? "s" : "", nt,
                   nt > 1 ? "s" : "", slots, best, ns, ns / fl, 100 * res.overhead,
                   100 * res.overhead_se);
        }
    return 0;
}

static int table1(int runs)
{
    static const unsigned r[] = {2, 4, 8, 12, 16, 24};
    afd_barrier_mc_result res[6];
    afd_workload w;
    double best = 1e300;
    int k;
    afd_workload_geometric(100, 500, &w);
    set_threads(2);
    for (k = 0; k < runs; k++) {
        afd_barrier_mc_params p = {
            .workload = &w, .B = 256, .r = r, .n_r = 6, .trials = 50000, .seed = 2024};
        double t0 = now();
        afd_status st = afd_barrier_mc(&p, res);
        if (st != AFD_OK) {
            fprintf(stderr, "bench_mc: table 1: %s\n", afd_strerror(st));
            return 1;
        }
        if (now() - t0 < best)
            best = now() - t0;
    }
    printf("Table 1 (geometric mu_P=100 mu_D=500, B=256, 50000 trials, r=2..24), 2 threads: "
           "%.3f s\n",
           best);
    printf("  r   MC overhead %%   se %%    CLT %%\n");
    for (k = 0; k < 6; k++)
        printf("  %-3u %8.3f       %.3f   %.3f\n", r[k], 100 * res[k].overhead,
               100 * res[k].overhead_se,
               100 * afd_barrier_overhead_clt(w.stats.theta, w.stats.nu, 256, r[k]));
    return 0;
}

int main(int argc, char **argv)
{
    int runs = argc > 2 ? atoi(argv[2]) : 3;
    afd_workload_trace_options topt = {.keep_rows = 1};
    afd_workload w;
    afd_error err;
    double f1, f2;

    gsl_set_error_handler_off();
    if (argc < 2) {
        fprintf(stderr, "usage: bench_mc TRACE.csv [RUNS]\n");
        return 2;
    }
    if (runs < 1)
        runs = 1;
    if (afd_workload_from_trace(argv[1], &topt, &w, &err) != AFD_OK) {
        fprintf(stderr, "bench_mc: %s: line %ld: %s\n", argv[1], err.line, err.text);
        return 1;
    }
    f1 = floor_ns(1, runs);
    f2 = floor_ns(2, runs);
    printf("floor: Philox uniforms, 1 thread: %.2f ns each (%.0f M/s); 2 threads: %.2f ns "
           "(%.0f M/s)\n",
           f1, 1e3 / f1, f2, 1e3 / f2);
    printf("trace: %s, %zu requests, theta %.1f nu %.1f\n", argv[1], w.n_kept, w.stats.theta,
           w.stats.nu);
    if (barrier_per_slot(&w, runs, f1, f2) != 0 || table1(runs) != 0)
        return 1;
    afd_workload_free(&w);
    return 0;
}
