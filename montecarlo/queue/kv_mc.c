/* kv_mc.c: Monte Carlo of KV-cache retrieval through a memory hierarchy,
 * the check of afd_kv_retrieval_time (afd_mc.h). */
#include <config.h>

#include <math.h>
#include <stdlib.h>

#include "afd_mc.h"
#include "afd_philox.h"
#include "mc_internal.h"

afd_status afd_mc_kv_retrieval(const afd_kv_tier *tiers, size_t n, double bytes, double recompute,
                               uint64_t trials, uint64_t seed, unsigned threads, double *mean,
                               double *se)
{
    enum { NB = 256 };
    double check, m = 0, ss = 0, *t;
    uint64_t *count;
    afd_status st;
    size_t k;
    long long b;
    unsigned nt;
    *mean = *se = NAN;
    st = afd_kv_retrieval_time(tiers, n, bytes, recompute, &check, NULL);
    if (st != AFD_OK || trials < 2 || n > 1000)
        return AFD_EINVAL;
    /* A trial takes one of n + 1 times: t[k] when tier k serves it, t[n]
     * when it is recomputed.  Trial i reads uniforms (seed, 0, i n + k) for
     * k = 0..n-1: tier k holds the prefix when its uniform is below H_k.
     * The trials are counted by outcome over 256 fixed blocks; the counts
     * are integers, so their sums, and the result, are the same for any
     * thread count. */
    t = malloc((n + 1) * sizeof *t);
    count = calloc((size_t)NB * (n + 1), sizeof *count);
    if (t == NULL || count == NULL) {
        free(t);
        free(count);
        return AFD_ENOMEM;
    }
    for (k = 0; k < n; k++)
        t[k] = tiers[k].latency + bytes / tiers[k].bw;
    t[n] = recompute;
    nt = afd_mc_threads(threads);
    (void)nt; /* unused without OpenMP */
    AFD_OMP("omp parallel for schedule(static) num_threads(nt)")
    for (b = 0; b < NB; b++) {
        uint64_t i, lo = trials * (uint64_t)b / NB, hi = trials * (uint64_t)(b + 1) / NB;
        uint64_t *c = count + (size_t)b * (n + 1);
        for (i = lo; i < hi; i++) {
            size_t j;
            for (j = 0; j < n; j++)
                if (afd_philox_u01(seed, 0, i * n + j) < tiers[j].hit)
                    break;
            c[j]++; /* j = n: recomputed */
        }
    }
    for (b = 1; b < NB; b++)
        for (k = 0; k <= n; k++)
            count[k] += count[(size_t)b * (n + 1) + k];
    /* the sample mean and variance of the trials, in two passes over the
     * outcomes: sum c_k t_k / T, then sum c_k (t_k - mean)^2 / (T - 1) */
    for (k = 0; k <= n; k++)
        m += (double)count[k] * t[k];
    m /= (double)trials;
    for (k = 0; k <= n; k++)
        ss += (double)count[k] * (t[k] - m) * (t[k] - m);
    *mean = m;
    *se = sqrt(ss / (double)(trials - 1) / (double)trials);
    free(t);
    free(count);
    return AFD_OK;
}
