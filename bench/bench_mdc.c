/* bench_mdc.c: time of one exact M/D/c evaluation as afdkit mdc does it:
 * solve the embedded chain (afd_mdc_alloc), then the mean wait, P(W > 0)
 * and the P90 of the wait, then free.  Reports the best and the median of
 * RUNS repetitions.  D = 1, lambda = rho c.
 * Usage: bench_mdc [RUNS [C [RHO]]]   (default 200 64 0.95) */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <gsl/gsl_errno.h>

#include "afdkit.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 200, c = argc > 2 ? atoi(argv[2]) : 64, k;
    double rho = argc > 3 ? atof(argv[3]) : 0.95;
    double *times, wq = 0, pw = 0, p90 = 0;
    size_t n = 0;

    gsl_set_error_handler_off();
    if (runs < 1 || c < 1 || !(rho > 0 && rho < 1)) {
        fprintf(stderr, "usage: bench_mdc [RUNS [C [RHO]]]\n");
        return 2;
    }
    times = malloc((size_t)runs * sizeof *times);
    if (times == NULL)
        return 1;
    for (k = 0; k < runs; k++) {
        afd_mdc *q;
        afd_result r1, r2, r3;
        afd_status st;
        double t0 = now();
        st = afd_mdc_alloc(rho * c, 1, c, &q);
        if (st == AFD_OK)
            st = afd_mdc_wq_e(q, &r1);
        if (st == AFD_OK)
            st = afd_mdc_p_wait_e(q, &r2);
        if (st == AFD_OK)
            st = afd_mdc_wait_quantile_e(q, 0.9, &r3);
        if (st != AFD_OK) {
            fprintf(stderr, "bench_mdc: %s\n", afd_strerror(st));
            afd_mdc_free(q);
            free(times);
            return 1;
        }
        n = afd_mdc_size(q);
        afd_mdc_free(q);
        times[k] = now() - t0;
        wq = r1.val;
        pw = r2.val;
        p90 = r3.val;
    }
    qsort(times, (size_t)runs, sizeof *times, cmp);
    printf("M/D/c exact, c = %d, rho = %g, D = 1: Wq = %.10g, P(W>0) = %.10g, P90 = %.10g "
           "(chain truncated at N = %zu)\n",
           c, rho, wq, pw, p90, n);
    printf("alloc + Wq + P(W>0) + P90 + free: best %.3f ms, median %.3f ms over %d runs\n",
           1e3 * times[0], 1e3 * times[runs / 2], runs);
    free(times);
    return 0;
}
