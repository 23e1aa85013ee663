/* arrivals.c: arrival rate and dispersion of counts (see afd_arrivals.h). */
#include <config.h>

#include <math.h>
#include <stdlib.h>

#include "afd_arrivals.h"

const double afd_idc_windows[AFD_IDC_NWIN] = {1, 10, 60};

struct window {
    int64_t cur;     /* index of the window being counted */
    uint64_t count;  /* arrivals in it so far */
    uint64_t m;      /* complete windows closed */
    uint64_t sum;    /* sum of their counts (<= n) */
    double sumsq;    /* sum of squared counts (exact below 2^53) */
};

struct afd_arrivals_acc {
    uint64_t n;
    double first, last, min, max;
    long unsorted_line;
    struct window w[AFD_IDC_NWIN];
};

afd_arrivals_acc *afd_arrivals_acc_alloc(void)
{
    return calloc(1, sizeof(afd_arrivals_acc));
}

void afd_arrivals_acc_free(afd_arrivals_acc *acc)
{
    free(acc);
}

afd_status afd_arrivals_add(afd_arrivals_acc *acc, double t, long line)
{
    int k;
    if (!isfinite(t))
        return AFD_EINVAL;
    if (acc->n == 0) {
        acc->first = acc->last = acc->min = acc->max = t;
        for (k = 0; k < AFD_IDC_NWIN; k++)
            acc->w[k].count = 1;
        acc->n = 1;
        return AFD_OK;
    }
    acc->n++;
    if (t < acc->min)
        acc->min = t;
    if (t > acc->max)
        acc->max = t;
    if (t < acc->last && acc->unsorted_line == 0)
        acc->unsorted_line = line > 0 ? line : 1;
    acc->last = t;
    if (acc->unsorted_line != 0)
        return AFD_OK;
    for (k = 0; k < AFD_IDC_NWIN; k++) {
        struct window *w = &acc->w[k];
        int64_t j = (int64_t)floor((t - acc->first) / afd_idc_windows[k]);
        if (j > w->cur) {
            /* close the current window and the empty ones after it */
            w->sum += w->count;
            w->sumsq += (double)w->count * (double)w->count;
            w->m += (uint64_t)(j - w->cur);
            w->cur = j;
            w->count = 0;
        }
        w->count++;
    }
    return AFD_OK;
}

void afd_arrivals_none(afd_arrival_stats *out)
{
    int k;
    out->n = 0;
    out->first = out->last = out->span = out->lambda = NAN;
    for (k = 0; k < AFD_IDC_NWIN; k++) {
        out->idc[k] = out->idc_se[k] = NAN;
        out->windows[k] = 0;
    }
    out->unsorted_line = 0;
}

void afd_arrivals_stats(const afd_arrivals_acc *acc, afd_arrival_stats *out)
{
    int k;
    afd_arrivals_none(out);
    if (acc->n == 0)
        return;
    out->n = acc->n;
    out->first = acc->min;
    out->last = acc->max;
    out->span = acc->max - acc->min;
    out->unsorted_line = acc->unsorted_line;
    if (acc->n >= 2 && out->span > 0)
        out->lambda = (double)(acc->n - 1) / out->span;
    if (acc->unsorted_line != 0)
        return;
    for (k = 0; k < AFD_IDC_NWIN; k++) {
        const struct window *w = &acc->w[k];
        double m = (double)w->m, mean, var;
        /* The closed windows are 0 .. cur-1: exactly the complete ones,
         * since the window holding the last arrival is partial. */
        out->windows[k] = w->m;
        if (w->m < 2)
            continue;
        mean = (double)w->sum / m;
        var = (w->sumsq - m * mean * mean) / (m - 1);
        if (var < 0)
            var = 0;
        out->idc[k] = mean > 0 ? var / mean : NAN;
        out->idc_se[k] = sqrt(2 / (m - 1));
    }
}
