/* tail.c: streaming Hill estimator (see afd_tail.h).  An event heap
 * (afd_event.h) keyed by value keeps the kmax + 1 largest observations in
 * O(log k) per value. */
#include <config.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "afd_event.h"
#include "afd_tail.h"

struct afd_hill {
    size_t cap;
    afd_event_heap heap; /* the kept values as times: e[0] is the smallest */
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
    if (afd_event_heap_init(&h->heap, h->cap) != AFD_OK) {
        free(h);
        return NULL;
    }
    return h;
}

void afd_hill_free(afd_hill *h)
{
    if (h == NULL)
        return;
    afd_event_heap_free(&h->heap);
    free(h);
}

void afd_hill_add(afd_hill *h, double x)
{
    if (!(x > 0) || !isfinite(x))
        return;
    /* The heap has room for cap values (allocated up front), so neither
     * call below can fail. */
    if (h->heap.n < h->cap)
        (void)afd_event_heap_push(&h->heap, x, 0, 0);
    else if (x > h->heap.e[0].time)
        (void)afd_event_heap_replace_top(&h->heap, x, 0, 0);
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
    const afd_event *x = a, *y = b;
    return afd_event_before(x, y) ? -1 : afd_event_before(y, x);
}

afd_status afd_hill_estimate(afd_hill *h, size_t k, double *alpha, double *se)
{
    const afd_event *v = h->heap.e;
    size_t i, n = h->heap.n;
    double s = 0, threshold;

    *alpha = *se = NAN;
    if (k < 1 || k + 1 > n)
        return AFD_EINVAL;
    /* An array sorted by (time, seq) is a valid heap: sort in place, no
     * allocation. */
    qsort(h->heap.e, n, sizeof *h->heap.e, ascending);
    threshold = v[n - 1 - k].time;
    for (i = 0; i < k; i++)
        s += log(v[n - 1 - i].time / threshold);
    if (s == 0) {
        *alpha = INFINITY;
        return AFD_OK;
    }
    *alpha = (double)k / s;
    *se = *alpha / sqrt((double)k);
    return AFD_OK;
}
