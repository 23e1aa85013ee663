/* qhist.c: the log-bucketed quantile histogram (mc_internal.h). */
#include <config.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mc_internal.h"

#define SHIFT   (52 - AFD_QHIST_BITS)      /* bits of the mantissa below the bucket */
#define OCTAVE  (UINT32_C(1) << AFD_QHIST_BITS)
#define KEY_INF (UINT32_C(2047) << AFD_QHIST_BITS) /* +inf's key: past every finite value */

/* The bucket of x > 0: the exponent and the top AFD_QHIST_BITS mantissa
 * bits of its IEEE-754 binary64 encoding, increasing with x. */
static uint32_t key_of(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return (uint32_t)(u >> SHIFT);
}

/* The lower edge of bucket key (the upper edge of key - 1). */
static double edge(uint32_t key)
{
    uint64_t u = (uint64_t)key << SHIFT;
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
}

void afd_priv_qhist_init(afd_priv_qhist *h)
{
    memset(h, 0, sizeof *h);
    h->min = INFINITY;
    h->max = -INFINITY;
}

void afd_priv_qhist_free(afd_priv_qhist *h)
{
    free(h->count);
    afd_priv_qhist_init(h);
}

void afd_priv_qhist_reset(afd_priv_qhist *h)
{
    if (h->len > 0)
        memset(h->count, 0, h->len * sizeof *h->count);
    h->n = h->zeros = h->infs = 0;
    h->min = INFINITY;
    h->max = -INFINITY;
}

/* Hold the buckets of key's octave, and one octave more in the direction
 * of growth (so that a drift costs one reallocation per two octaves). */
static afd_status cover(afd_priv_qhist *h, uint32_t key)
{
    uint32_t oct = key & ~(OCTAVE - 1), lo, hi, off;
    uint32_t *c;
    if (h->len == 0) {
        lo = oct;
        hi = oct + OCTAVE;
    } else {
        lo = h->lo;
        hi = h->lo + h->len;
        if (key < lo)
            lo = oct >= OCTAVE ? oct - OCTAVE : 0;
        else
            hi = oct + 2 * OCTAVE < KEY_INF ? oct + 2 * OCTAVE : KEY_INF;
    }
    c = realloc(h->count, (size_t)(hi - lo) * sizeof *c);
    if (c == NULL)
        return AFD_ENOMEM;
    off = h->len > 0 ? h->lo - lo : 0;
    if (off > 0)
        memmove(c + off, c, h->len * sizeof *c);
    memset(c, 0, off * sizeof *c);
    memset(c + off + h->len, 0, (size_t)(hi - lo - off - h->len) * sizeof *c);
    h->count = c;
    h->lo = lo;
    h->len = hi - lo;
    return AFD_OK;
}

afd_status afd_priv_qhist_add(afd_priv_qhist *h, double x)
{
    uint32_t key;
    afd_status st;
    if (!(x >= 0))
        return AFD_EINVAL;
    if (h->n == UINT32_MAX)
        return AFD_ELIMIT;
    if (x == 0) {
        h->zeros++;
    } else if (x == INFINITY) {
        h->infs++;
    } else {
        key = key_of(x);
        if ((key < h->lo || key - h->lo >= h->len) && (st = cover(h, key)) != AFD_OK)
            return st;
        h->count[key - h->lo]++;
        if (x < h->min)
            h->min = x;
        if (x > h->max)
            h->max = x;
    }
    h->n++;
    return AFD_OK;
}

double afd_priv_qhist_quantile(const afd_priv_qhist *h, double q)
{
    uint64_t k, cum = 0;
    double r;
    uint32_t i;
    if (h->n == 0 || !(q >= 0 && q <= 1))
        return NAN;
    r = ceil(q * (double)h->n);
    k = r < 1 ? 1 : r > (double)h->n ? h->n : (uint64_t)r;
    if (k <= h->zeros)
        return 0;
    k -= h->zeros;
    if (k > h->n - h->zeros - h->infs)
        return INFINITY;
    for (i = 0; i < h->len; i++) {
        uint64_t c = h->count[i];
        if (k <= cum + c) {
            /* the (k - cum)-th of the bucket's c values, spread evenly
             * over [a, b]: the bucket [lo, hi) narrowed to the smallest
             * and largest value held when it holds them (its first or
             * last value then), one value alone in the middle */
            double lo = edge(h->lo + i), hi = edge(h->lo + i + 1);
            double a = h->min >= lo ? h->min : lo, b = h->max < hi ? h->max : hi;
            if (c == 1)
                return h->min >= lo ? h->min : h->max < hi ? h->max : lo + (hi - lo) / 2;
            return a + (b - a) * ((double)(k - cum - 1) / (double)(c - 1));
        }
        cum += c;
    }
    return h->max; /* not reached: the counts sum to the finite positive values */
}

size_t afd_priv_qhist_bytes(const afd_priv_qhist *h)
{
    return h->len * sizeof *h->count;
}
