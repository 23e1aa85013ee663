/* bench_estimate.c: time of one afd_estimate_forward call (the estimator
 * behind afdkit estimate), on h100-sxm's kernel model and on a100-80g's
 * roofline, for a decode step and a prefill of Llama-3.1-70B at TP 4.
 * Reports the best and the median of RUNS repetitions.
 * Usage: bench_estimate [RUNS]   (default 2000) */
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
    static const char *const devices[2] = {"h100-sxm", "a100-80g"};
    int runs = argc > 1 ? atoi(argv[1]) : 2000, k, i, ph;
    double *times;
    afd_model m;
    afd_error err;

    gsl_set_error_handler_off();
    if (runs < 1) {
        fprintf(stderr, "usage: bench_estimate [RUNS]\n");
        return 2;
    }
    if (afd_model_load("llama-3.1-70b", &m, &err) != AFD_OK) {
        fprintf(stderr, "bench_estimate: %s\n", err.text);
        return 1;
    }
    times = malloc((size_t)runs * sizeof *times);
    if (times == NULL)
        return 1;
    for (i = 0; i < 2; i++)
        for (ph = 0; ph < 2; ph++) {
            afd_device d;
            afd_estimate est;
            afd_estimate_options o = {.tp = 4, .phase = ph ? AFD_DECODE : AFD_PREFILL,
                                      .batch = ph ? 64 : 1, .seq = 2048};
            if (afd_device_load(devices[i], &d, &err) != AFD_OK) {
                fprintf(stderr, "bench_estimate: %s\n", err.text);
                free(times);
                return 1;
            }
            for (k = 0; k < runs; k++) {
                double t0 = now();
                if (afd_estimate_forward(&m, &d, &o, &est, &err) != AFD_OK) {
                    fprintf(stderr, "bench_estimate: %s\n", err.text);
                    free(times);
                    return 1;
                }
                times[k] = now() - t0;
            }
            qsort(times, (size_t)runs, sizeof *times, cmp);
            printf("estimate llama-3.1-70b TP 4 %s b %g s %g on %s (%s): %.4f ms; one call: best "
                   "%.2f us, median %.2f us over %d runs\n",
                   ph ? "decode" : "prefill", o.batch, o.seq, devices[i],
                   d.kernel_model ? "kernel model" : "roofline", 1e3 * est.forward_s,
                   1e6 * times[0], 1e6 * times[runs / 2], runs);
        }
    free(times);
    return 0;
}
