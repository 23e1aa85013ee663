/* hist.c: length histograms of a trace and the geometric law they are
 * compared with (see afd_hist.h). */
#include <config.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "afd_hist.h"

/* The integer ceil(10^(i/k)), exact at whole powers of ten. */
static double log_edge(int i, int k)
{
    double x = pow(10, (double)i / k);
    double nx = nearbyint(x);
    if (fabs(x - nx) <= 1e-9 * x)
        x = nx;
    return ceil(x);
}

/* Log-spaced bins covering 1..max (with a bin {0} first when with_zero). */
static afd_status log_bins(uint64_t max, int with_zero, int k, afd_hist *h)
{
    size_t cap = 64, n = 0;
    afd_hist_bin *b = malloc(cap * sizeof *b);
    double lo = 1;
    int i;
    if (b == NULL)
        return AFD_ENOMEM;
    if (with_zero)
        b[n++] = (afd_hist_bin){0, 0, 0};
    for (i = 1; lo <= (double)max && lo < 0x1p64; i++) {
        double hi = log_edge(i, k);
        if (hi <= lo)
            continue;
        if (n == cap) {
            afd_hist_bin *nb = realloc(b, 2 * cap * sizeof *b);
            if (nb == NULL) {
                free(b);
                return AFD_ENOMEM;
            }
            b = nb;
            cap *= 2;
        }
        /* the last bin ends at max (hi - 1 may not fit in 64 bits) */
        b[n].lo = (uint64_t)lo;
        b[n].hi = hi - 1 >= (double)max ? max : (uint64_t)(hi - 1);
        b[n].count = 0;
        n++;
        lo = hi;
    }
    h->bin = b;
    h->n = n;
    return AFD_OK;
}

/* Index of the bin holding v (bins sorted, contiguous, covering v). */
static size_t find_bin(const afd_hist_bin *b, size_t n, uint64_t v)
{
    size_t lo = 0, hi = n;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (b[mid].lo <= v)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

void afd_hist_free(afd_hist *h)
{
    if (h == NULL)
        return;
    free(h->bin);
    h->bin = NULL;
    h->n = 0;
}

afd_status afd_hist_workload(const afd_workload *w, const afd_hist_spec *spec, afd_hist *out)
{
    unsigned __int128 sum = 0;
    uint64_t min_support;
    size_t j, ne;
    afd_status st;

    memset(out, 0, sizeof *out);
    out->mean = NAN;
    if (w == NULL || spec == NULL || w->kind != AFD_WORKLOAD_TRACE ||
        (spec->width == 0 && (spec->per_decade < 1 || spec->per_decade > 1000)))
        return AFD_EINVAL;
    ne = afd_workload_entries(w);
    for (j = 0; j < ne; j++) {
        afd_workload_pair e = afd_workload_entry(w, j);
        uint64_t v = spec->prompt ? e.prompt : e.decode;
        sum += (unsigned __int128)v * e.count;
        out->total += e.count;
        if (v > out->max)
            out->max = v;
    }
    if (out->total == 0)
        return AFD_EEMPTY;
    out->mean = (double)sum / (double)out->total;
    min_support = spec->prompt ? 0 : 1;
    if (spec->width > 0) {
        uint64_t n64 = (out->max - min_support) / spec->width + 1;
        if (spec->max_bins != 0 && n64 > spec->max_bins) {
            out->n = n64 > SIZE_MAX ? SIZE_MAX : (size_t)n64;
            return AFD_ELIMIT;
        }
        if (n64 > SIZE_MAX / sizeof *out->bin)
            return AFD_ENOMEM;
        out->bin = malloc((size_t)n64 * sizeof *out->bin);
        if (out->bin == NULL)
            return AFD_ENOMEM;
        out->n = (size_t)n64;
        for (j = 0; j < out->n; j++) {
            afd_hist_bin *b = &out->bin[j];
            b->lo = min_support + (uint64_t)j * spec->width;
            /* the last bin may end beyond 2^64 - 1: clamp it */
            b->hi = out->max - b->lo < spec->width - 1 ? out->max : b->lo + (spec->width - 1);
            b->count = 0;
        }
    } else if ((st = log_bins(out->max, spec->prompt, spec->per_decade, out)) != AFD_OK) {
        return st;
    }
    for (j = 0; j < ne; j++) {
        afd_workload_pair e = afd_workload_entry(w, j);
        uint64_t v = spec->prompt ? e.prompt : e.decode;
        size_t k = spec->width > 0 ? (size_t)((v - min_support) / spec->width)
                                   : find_bin(out->bin, out->n, v);
        out->bin[k].count += e.count;
    }
    return AFD_OK;
}

double afd_geometric_mass(double m, uint64_t lo, uint64_t hi)
{
    double q;
    if (!(m >= 1))
        return NAN;
    if (lo == 0)
        lo = 1;
    if (hi < lo)
        return 0;
    if (m == 1)
        return lo == 1 ? 1 : 0;
    q = log1p(-1 / m);
    return exp((double)(lo - 1) * q) * -expm1((double)(hi - lo + 1) * q);
}
