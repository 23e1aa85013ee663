/* batch_stats.c: the order statistic and the batch-means standard error
 * shared by the simulators (mc_internal.h). */
#include <config.h>

#include <math.h>

#include <gsl/gsl_statistics_double.h>

#include "mc_internal.h"

double afd_priv_quantile(double *x, size_t n, double q)
{
    double r;
    size_t k;
    if (n == 0)
        return NAN;
    r = ceil(q * (double)n);
    k = r < 1 ? 0 : (size_t)r - 1;
    return gsl_stats_select(x, 1, n, k < n ? k : n - 1);
}

/* Batch means of unequal sizes: batch b holds n_b values (n_b = 0: none)
 * with mean x_b.  The overall mean is the ratio estimate sum n_b x_b / sum
 * n_b, and its variance estimate (Cochran, Sampling Techniques, 3rd ed.
 * 1977, Sec. 6.4, the ratio estimate's v(R) with f = 0; the delta method
 * on sum y_b / sum n_b, y_b = n_b x_b) is
 *     se^2 = sum_b (n_b / nbar)^2 (x_b - mean)^2 / (K (K - 1)),
 * nbar = sum n_b / K over the K batches with values.  With equal sizes
 * the weights are 1 and this is sd(x_b)^2 / K.  A batch percentile is
 * asymptotically the percentile plus the batch mean of its influence
 * function (Bahadur's representation), so the same formula gives its
 * standard error. */
void afd_priv_batch_mean_se(const double *x, const double *n_b, unsigned k, double *mean,
                            double *se)
{
    double m = 0, v = 0, tot = 0, nbar;
    unsigned b, n = 0;
#define W(b) (n_b != NULL ? n_b[b] : 1.0)
#define USED(b) (W(b) > 0 && !isnan(x[b]))
    for (b = 0; b < k; b++)
        if (USED(b)) {
            tot += W(b);
            n++;
        }
    if (n < 2) {
        for (b = 0; b < k; b++)
            if (USED(b))
                m = x[b];
        *mean = n == 1 ? m : NAN;
        *se = NAN;
        return;
    }
    nbar = tot / n;
    for (b = 0; b < k; b++)
        if (USED(b))
            m += W(b) / nbar * x[b];
    m /= n;
    for (b = 0; b < k; b++)
        if (USED(b)) {
            double d = W(b) / nbar * (x[b] - m);
            v += d * d;
        }
#undef USED
#undef W
    *mean = m;
    *se = sqrt(v / (n - 1) / n);
}
