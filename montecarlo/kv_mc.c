/* kv_mc.c: Monte Carlo of KV-cache retrieval through a memory hierarchy,
 * the check of afd_kv_retrieval_time (afd_mc.h). */
#include <config.h>

#include <math.h>

#include "afd_mc.h"
#include "afd_philox.h"
#include "mc_internal.h"

afd_status afd_mc_kv_retrieval(const afd_kv_tier *tiers, size_t n, double bytes, double recompute,
                               uint64_t trials, uint64_t seed, unsigned threads, double *mean,
                               double *se)
{
    double check, sum = 0, sum2 = 0;
    afd_status st;
    *mean = *se = NAN;
    st = afd_kv_retrieval_time(tiers, n, bytes, recompute, &check, NULL);
    if (st != AFD_OK || trials < 2 || n > 1000)
        return AFD_EINVAL;
    /* trial i reads uniforms (seed, 0, i n + k) for k = 0..n-1: tier k holds
     * the prefix when its uniform is below H_k.  Sums over 256 fixed blocks,
     * added in order, so the result is the same for any thread count. */
    {
        enum { NB = 256 };
        double bs[NB], bs2[NB];
        long long b;
        unsigned nt = afd_mc_threads(threads);
        (void)nt; /* unused without OpenMP */
        AFD_OMP("omp parallel for schedule(static) num_threads(nt)")
        for (b = 0; b < NB; b++) {
            uint64_t i, lo = trials * (uint64_t)b / NB, hi = trials * (uint64_t)(b + 1) / NB;
            double s1 = 0, s2 = 0;
            for (i = lo; i < hi; i++) {
                double t = recompute;
                size_t k;
                for (k = 0; k < n; k++)
                    if (afd_philox_u01(seed, 0, i * n + k) < tiers[k].hit) {
                        t = tiers[k].latency + bytes / tiers[k].bw;
                        break;
                    }
                s1 += t;
                s2 += t * t;
            }
            bs[b] = s1;
            bs2[b] = s2;
        }
        for (b = 0; b < NB; b++) {
            sum += bs[b];
            sum2 += bs2[b];
        }
    }
    *mean = sum / (double)trials;
    {
        double var = (sum2 - sum * *mean) / (double)(trials - 1);
        *se = sqrt((var > 0 ? var : 0) / (double)trials);
    }
    return AFD_OK;
}
