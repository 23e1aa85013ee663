/* pareto.c: the non-dominated points of (cost, value) pairs (afd_pareto.h). */
#include <config.h>

#include <math.h>
#include <stdlib.h>

#include "afd_pareto.h"

typedef struct point {
    double c, v;
    size_t i;
} point;

/* cost ascending, then value descending */
static int by_cost(const void *pa, const void *pb)
{
    const point *a = pa, *b = pb;
    if (a->c != b->c)
        return a->c < b->c ? -1 : 1;
    if (a->v != b->v)
        return a->v > b->v ? -1 : 1;
    return a->i < b->i ? -1 : a->i > b->i;
}

afd_status afd_pareto_front(const double *cost, const double *value, size_t n, int *front)
{
    point *p;
    size_t i, m = 0, g;
    double best_cheaper = -INFINITY; /* the best value of strictly cheaper points */
    if (n == 0)
        return AFD_OK;
    if (cost == NULL || value == NULL || front == NULL)
        return AFD_EINVAL;
    p = malloc(n * sizeof *p);
    if (p == NULL)
        return AFD_ENOMEM;
    for (i = 0; i < n; i++) {
        front[i] = 0;
        if (!isnan(cost[i]) && !isnan(value[i])) {
            p[m].c = cost[i];
            p[m].v = value[i];
            p[m].i = i;
            m++;
        }
    }
    qsort(p, m, sizeof *p, by_cost);
    for (g = 0; g < m;) {
        /* the group of equal cost p[g..e); its best value is p[g].v */
        size_t e = g, k;
        while (e < m && p[e].c == p[g].c)
            e++;
        for (k = g; k < e; k++)
            /* not dominated by a cheaper point (value must exceed theirs),
             * nor by one of the same cost with a larger value */
            front[p[k].i] = p[k].v > best_cheaper && p[k].v == p[g].v;
        if (p[g].v > best_cheaper)
            best_cheaper = p[g].v;
        g = e;
    }
    free(p);
    return AFD_OK;
}
