/* tail.c: streaming Hill estimator (see afd_tail.h).  A binary min-heap
 * keeps the kmax + 1 largest observations in O(log k) per value. */
#include <config.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "afd_tail.h"

struct afd_hill {
    size_t cap, n;
    double *heap; /* min-heap: heap[0] is the smallest kept value */
};

afd_hill *afd_hill_alloc(size_t kmax)
{
    afd_hill *h;
    if (kmax < 1 || kmax > ((size_t)1 << 24))
        return NULL;
    h = calloc(1, sizeof *h);
    if (h == NULL)
        return NULL;
    h->cap = kmax + 1;
    h->heap = malloc(h->cap * sizeof *h->heap);
    if (h->heap == NULL) {
        free(h);
        return NULL;
    }
    return h;
}

void afd_hill_free(afd_hill *h)
{
    if (h == NULL)
        return;
    free(h->heap);
    free(h);
}

static void sift_down(double *a, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        double t;
        if (l < n && a[l] < a[m])
            m = l;
        if (l + 1 < n && a[l + 1] < a[m])
            m = l + 1;
        if (m == i)
            return;
        t = a[i];
        a[i] = a[m];
        a[m] = t;
        i = m;
    }
}

void afd_hill_add(afd_hill *h, double x)
{
    if (!(x > 0) || !isfinite(x))
        return;
    if (h->n < h->cap) {
        size_t i = h->n++;
        h->heap[i] = x;
        while (i > 0 && h->heap[(i - 1) / 2] > h->heap[i]) {
            double t = h->heap[i];
            h->heap[i] = h->heap[(i - 1) / 2];
            h->heap[(i - 1) / 2] = t;
            i = (i - 1) / 2;
        }
    } else if (x > h->heap[0]) {
        h->heap[0] = x;
        sift_down(h->heap, h->n, 0);
    }
}

size_t afd_hill_default_k(uint64_t n, size_t kmax)
{
    size_t k = (size_t)floor(sqrt((double)n));
    if (k < 10)
        k = 10;
    if (k > kmax)
        k = kmax;
    if (n >= 1 && k > n - 1)
        k = (size_t)(n - 1);
    return k;
}

static int ascending(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

afd_status afd_hill_estimate(afd_hill *h, size_t k, double *alpha, double *se)
{
    double s = 0, threshold;
    size_t i;

    *alpha = *se = NAN;
    if (k < 1 || k + 1 > h->n)
        return AFD_EINVAL;
    /* An ascending array is a valid min-heap: sort in place, no allocation. */
    qsort(h->heap, h->n, sizeof *h->heap, ascending);
    threshold = h->heap[h->n - 1 - k];
    for (i = 0; i < k; i++)
        s += log(h->heap[h->n - 1 - i] / threshold);
    if (s == 0) {
        *alpha = INFINITY;
        return AFD_OK;
    }
    *alpha = (double)k / s;
    *se = *alpha / sqrt((double)k);
    return AFD_OK;
}
