/* bench_trace.c: throughput of the trace reader alone and of the full theta
 * pass (reader + exact accumulator), in MB/s of CSV, best of several runs.
 * Usage: bench_trace FILE [RUNS] */
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

int main(int argc, char **argv)
{
    int runs = argc > 2 ? atoi(argv[2]) : 3, k;
    double best_read = 1e300, best_theta = 1e300;
    uint64_t bytes = 0, rows = 0;
    afd_error err;

    gsl_set_error_handler_off();
    if (argc < 2) {
        fprintf(stderr, "usage: bench_trace FILE [RUNS]\n");
        return 2;
    }
    for (k = 0; k < runs; k++) {
        afd_trace *t;
        afd_trace_row row;
        afd_workload w;
        uint64_t sum = 0;
        afd_status st;
        double t0 = now();
        if (afd_trace_open(argv[1], NULL, &t, &err) != AFD_OK) {
            fprintf(stderr, "bench_trace: %s: %s\n", argv[1], err.text);
            return 1;
        }
        rows = 0;
        while ((st = afd_trace_next(t, &row, &err)) == AFD_OK) {
            sum += row.prompt + row.output;
            rows++;
        }
        bytes = afd_trace_bytes(t);
        afd_trace_close(t);
        if (st != AFD_EOF || sum == 0) {
            fprintf(stderr, "bench_trace: line %ld: %s\n", err.line, err.text);
            return 1;
        }
        if (now() - t0 < best_read)
            best_read = now() - t0;

        t0 = now();
        if (afd_workload_from_trace(argv[1], NULL, &w, &err) != AFD_OK) {
            fprintf(stderr, "bench_trace: line %ld: %s\n", err.line, err.text);
            return 1;
        }
        if (now() - t0 < best_theta)
            best_theta = now() - t0;
    }
    printf("trace reader:  %llu rows, %.1f MB in %.3f s: %.0f MB/s, %.1f M rows/s\n",
           (unsigned long long)rows, (double)bytes / 1e6, best_read,
           (double)bytes / 1e6 / best_read, (double)rows / 1e6 / best_read);
    printf("theta pass:    %.3f s: %.0f MB/s (reader + exact accumulator + standard errors)\n",
           best_theta, (double)bytes / 1e6 / best_theta);
    return 0;
}
