/* alias.c: Walker's alias method, Vose's linear-time construction. */
#include <config.h>

#include <math.h>
#include <stdlib.h>

#include "afd_sampler.h"
#include "mc_internal.h"

afd_status afd_priv_check_weights(const double *w, size_t n, double *sum)
{
    double s = 0;
    size_t i;
    *sum = 0;
    if (n == 0)
        return AFD_EEMPTY;
    for (i = 0; i < n; i++) {
        if (!(w[i] >= 0) || !isfinite(w[i]))
            return AFD_EINVAL;
        s += w[i];
    }
    if (!isfinite(s))
        return AFD_EINVAL;
    *sum = s;
    return s > 0 ? AFD_OK : AFD_EEMPTY;
}

/* Vose (1991): scale the weights to mean 1; pair each column below 1
 * ("small") with one above ("large"), which donates the missing mass and
 * goes back to the small or large list.  Columns left over when one list
 * runs dry are 1 up to rounding and keep probability 1. */
void afd_priv_alias_build(const double *w, size_t n, double *prob, uint32_t *alias, uint32_t *work)
{
    uint32_t *small = work, *large = work + n;
    size_t ns = 0, nl = 0, j;
    long double total = 0;
    double scale;
    for (j = 0; j < n; j++)
        total += w[j];
    scale = (double)((long double)n / total);
    for (j = 0; j < n; j++) {
        prob[j] = w[j] * scale; /* scaled weight, mean 1 */
        alias[j] = (uint32_t)j;
        if (prob[j] < 1)
            small[ns++] = (uint32_t)j;
        else
            large[nl++] = (uint32_t)j;
    }
    while (ns > 0 && nl > 0) {
        uint32_t s = small[--ns], l = large[nl - 1];
        alias[s] = l; /* prob[s] stays: keep s with that probability */
        prob[l] = (prob[l] + prob[s]) - 1;
        if (prob[l] < 1) {
            nl--;
            small[ns++] = l;
        }
    }
    while (nl > 0)
        prob[large[--nl]] = 1;
    while (ns > 0)
        prob[small[--ns]] = 1;
}

afd_status afd_alias_alloc(const double *w, size_t n, afd_alias **out)
{
    afd_alias *a;
    uint32_t *work;
    double sum;
    afd_status st;
    *out = NULL;
    if (w == NULL)
        return AFD_EINVAL;
    st = afd_priv_check_weights(w, n, &sum);
    if (st != AFD_OK)
        return st;
    if (n >= UINT32_MAX || n > SIZE_MAX / (2 * sizeof(double)))
        return AFD_ELIMIT;
    a = malloc(sizeof *a);
    work = malloc(2 * n * sizeof *work);
    if (a != NULL) {
        a->n = n;
        a->prob = malloc(n * sizeof *a->prob);
        a->alias = malloc(n * sizeof *a->alias);
    }
    if (a == NULL || work == NULL || a->prob == NULL || a->alias == NULL) {
        free(work);
        afd_alias_free(a);
        return AFD_ENOMEM;
    }
    afd_priv_alias_build(w, n, a->prob, a->alias, work);
    free(work);
    *out = a;
    return AFD_OK;
}

void afd_alias_free(afd_alias *a)
{
    if (a == NULL)
        return;
    free(a->prob);
    free(a->alias);
    free(a);
}

size_t afd_alias_size(const afd_alias *a)
{
    return a->n;
}

size_t afd_alias_draw(const afd_alias *a, double u)
{
    double x = u * (double)a->n;
    size_t j = (size_t)x;
    if (j >= a->n) /* u n can round up to n */
        j = a->n - 1;
    return x - (double)j < a->prob[j] ? j : a->alias[j];
}

size_t afd_alias_draw2(const afd_alias *a, double u1, double u2)
{
    size_t j = (size_t)(u1 * (double)a->n);
    if (j >= a->n)
        j = a->n - 1;
    return u2 < a->prob[j] ? j : a->alias[j];
}

void afd_alias_fill(const afd_alias *a, size_t n, const double *u, size_t *out)
{
    size_t i;
    for (i = 0; i < n; i++)
        out[i] = afd_alias_draw(a, u[i]);
}
