/* prefix.c: Che's approximation of an LRU prefix cache's hit fraction (see
 * afd_prefix.h). */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "afd_prefix.h"

/* sum_i (1 - exp(-q_i T)) over the referenced blocks, minus C. */
static double occupancy(const double *q, size_t n, double t, double cap)
{
    double s = 0;
    size_t i;
    for (i = 0; i < n; i++)
        s -= expm1(-q[i] * t);
    return s - cap;
}

afd_status afd_lru_che_hit(const afd_lru_che_params *p, double *hit, afd_error *err)
{
    double *c = NULL, *w = NULL, refs = 0, tokens = 0, t, lo, hi, num = 0;
    size_t i, j, n = 0;
    afd_status st = AFD_OK;
    *hit = NAN;
    afd_error_clear(err);
    if (p == NULL || p->blocks == NULL || p->block_start == NULL || p->prompt == NULL ||
        p->requests == 0 || p->block_size == 0 || p->capacity == 0) {
        snprintf(err->text, sizeof err->text, "no blocks, block size or capacity");
        return AFD_EINVAL;
    }
    c = calloc(p->ids ? p->ids : 1, sizeof *c);
    w = calloc(p->ids ? p->ids : 1, sizeof *w);
    if (c == NULL || w == NULL) {
        st = AFD_ENOMEM;
        goto done;
    }
    for (j = 0; j < p->requests; j++) {
        uint64_t k, lo_k = p->block_start[j], hi_k = p->block_start[j + 1];
        if (hi_k < lo_k) {
            snprintf(err->text, sizeof err->text, "block offsets decrease at request %zu", j + 1);
            st = AFD_EINVAL;
            goto done;
        }
        for (k = lo_k; k < hi_k; k++) {
            uint32_t id = p->blocks[k];
            double start = (double)(k - lo_k) * p->block_size,
                   tok = (double)p->prompt[j] - start;
            if (id >= p->ids) {
                snprintf(err->text, sizeof err->text, "block id %u beyond %zu", (unsigned)id,
                         p->ids);
                st = AFD_EINVAL;
                goto done;
            }
            tok = tok < 0 ? 0 : tok > p->block_size ? p->block_size : tok;
            c[id] += 1;
            w[id] += tok;
            refs += 1;
            tokens += tok;
        }
    }
    if (!(tokens > 0)) {
        snprintf(err->text, sizeof err->text, "no prompt token in a block");
        st = AFD_EEMPTY;
        goto done;
    }
    /* compact to the referenced blocks: q_i = c_i / R */
    for (i = 0; i < p->ids; i++)
        if (c[i] > 0) {
            w[n] = w[i];
            c[n] = c[i];
            n++;
        }
    if ((double)n <= (double)p->capacity) {
        t = INFINITY;
    } else {
        for (i = 0; i < n; i++)
            c[i] /= refs; /* now q_i */
        lo = 0;
        hi = (double)p->capacity;
        while (occupancy(c, n, hi, (double)p->capacity) < 0)
            hi *= 2;
        for (j = 0; j < 200 && hi - lo > 1e-12 * hi; j++) { /* bisection: f increases in T */
            double mid = 0.5 * (lo + hi);
            if (occupancy(c, n, mid, (double)p->capacity) < 0)
                lo = mid;
            else
                hi = mid;
        }
        t = 0.5 * (lo + hi);
        for (i = 0; i < n; i++)
            c[i] *= refs; /* back to c_i */
    }
    for (i = 0; i < n; i++) {
        double held = isinf(t) ? 1 : -expm1(-c[i] / refs * t);
        num += w[i] * (c[i] - 1) / c[i] * held;
    }
    *hit = num / tokens;
done:
    free(c);
    free(w);
    if (st == AFD_ENOMEM)
        snprintf(err->text, sizeof err->text, "out of memory");
    return st;
}
