/* sampler.c: fixed-cost transforms of uniforms: the geometric law by
 * inversion and the stationary slot-load sampler of Lemma 4.1. */
#include <config.h>

#include <math.h>
#include <stdlib.h>

#include "afd_sampler.h"
#include "mc_internal.h"

#define EXACT_LIMIT 0x1p53 /* integers up to here are exact doubles */
#define MEAN_LIMIT  0x1p40 /* largest geometric mean accepted */

afd_status afd_geometric_init(double p, afd_geometric *g)
{
    if (!(p >= AFD_GEOMETRIC_MIN_P && p <= 1)) {
        g->p = g->inv_log1m_p = NAN;
        return AFD_EINVAL;
    }
    g->p = p;
    g->inv_log1m_p = p == 1 ? 0.0 : 1.0 / log1p(-p);
    return AFD_OK;
}

void afd_geometric_fill(const afd_geometric *g, size_t n, const double *u, double *out)
{
    size_t i;
    for (i = 0; i < n; i++)
        out[i] = afd_geometric_draw(g, u[i]);
}

/* One alias column of the trace sampler with the (P, D) of both candidate
 * rows, so that a draw touches one 40-byte record: pd = {P, D} of the
 * column's own row, then {P, D} of its alias. */
typedef struct slot_col {
    double prob;
    double pd[4];
} slot_col;

struct afd_slot_sampler {
    afd_workload_kind kind;
    afd_geometric gp, gd; /* GEOMETRIC: P and D */
    size_t n;             /* TRACE: rows */
    slot_col *col;
};

static afd_status alloc_trace(const afd_workload *w, afd_slot_sampler *s)
{
    size_t n = w->n_kept, j;
    double *weight, *prob, sum_d = 0;
    uint32_t *alias, *work;
    if (n == 0 || w->prompt == NULL || w->decode == NULL)
        return AFD_EEMPTY;
    if (n >= UINT32_MAX || n > SIZE_MAX / sizeof(slot_col))
        return AFD_ENOMEM;
    for (j = 0; j < n; j++) {
        double p = (double)w->prompt[j], d = (double)w->decode[j];
        if (w->decode[j] < 1 || !(p + d < EXACT_LIMIT))
            return AFD_EINVAL;
        sum_d += d;
    }
    if (!(sum_d < EXACT_LIMIT))
        return AFD_EINVAL;
    weight = malloc(n * sizeof *weight);
    prob = malloc(n * sizeof *prob);
    alias = malloc(n * sizeof *alias);
    work = malloc(2 * n * sizeof *work);
    s->col = malloc(n * sizeof *s->col);
    if (weight == NULL || prob == NULL || alias == NULL || work == NULL || s->col == NULL) {
        free(weight);
        free(prob);
        free(alias);
        free(work);
        free(s->col);
        s->col = NULL;
        return AFD_ENOMEM;
    }
    for (j = 0; j < n; j++)
        weight[j] = (double)w->decode[j];
    afd_priv_alias_build(weight, n, prob, alias, work);
    for (j = 0; j < n; j++) {
        slot_col *c = &s->col[j];
        c->prob = prob[j];
        c->pd[0] = (double)w->prompt[j];
        c->pd[1] = (double)w->decode[j];
        c->pd[2] = (double)w->prompt[alias[j]];
        c->pd[3] = (double)w->decode[alias[j]];
    }
    s->n = n;
    free(weight);
    free(prob);
    free(alias);
    free(work);
    return AFD_OK;
}

afd_status afd_slot_sampler_alloc(const afd_workload *w, afd_slot_sampler **out)
{
    afd_slot_sampler *s;
    afd_status st = AFD_OK;
    *out = NULL;
    if (w == NULL)
        return AFD_EINVAL;
    if (w->kind != AFD_WORKLOAD_TRACE && w->kind != AFD_WORKLOAD_GEOMETRIC)
        return AFD_EINVAL;
    s = calloc(1, sizeof *s);
    if (s == NULL)
        return AFD_ENOMEM;
    s->kind = w->kind;
    if (w->kind == AFD_WORKLOAD_GEOMETRIC) {
        if (!(w->mu_p >= 1 && w->mu_p <= MEAN_LIMIT && w->mu_d >= 1 && w->mu_d <= MEAN_LIMIT))
            st = AFD_EINVAL;
        else if (afd_geometric_init(1 / w->mu_p, &s->gp) != AFD_OK ||
                 afd_geometric_init(1 / w->mu_d, &s->gd) != AFD_OK)
            st = AFD_EINVAL;
    } else {
        st = alloc_trace(w, s);
    }
    if (st != AFD_OK) {
        afd_slot_sampler_free(s);
        return st;
    }
    *out = s;
    return AFD_OK;
}

void afd_slot_sampler_free(afd_slot_sampler *s)
{
    if (s == NULL)
        return;
    free(s->col);
    free(s);
}

/* Trace: length-biased row by the alias column, then a uniform age.
 * Branch-free on the coin (it is unpredictable) and without floor(), which
 * is a library call on baseline x86-64: the products are >= 0, so
 * truncation to int64_t is the floor. */
static inline double draw_trace(const afd_slot_sampler *s, double u0, double u1)
{
    double x = u0 * (double)s->n, age;
    int64_t j = (int64_t)x;
    const slot_col *c;
    const double *pd;
    if (j >= (int64_t)s->n) /* u0 n can round up to n */
        j = (int64_t)s->n - 1;
    c = &s->col[j];
    pd = c->pd + 2 * (x - (double)j >= c->prob); /* own row, or its alias */
    age = (double)(int64_t)(u1 * pd[1]);
    return pd[0] + (age < pd[1] ? age : pd[1] - 1); /* u1 D can round up to D */
}

/* Geometric: P on {1,..} and the stationary age on {0,..}, independent. */
static inline double draw_geometric(const afd_slot_sampler *s, double u0, double u1)
{
    return afd_geometric_draw(&s->gp, u0) + (afd_geometric_draw(&s->gd, u1) - 1.0);
}

double afd_slot_sampler_draw(const afd_slot_sampler *s, const double *u)
{
    return s->kind == AFD_WORKLOAD_TRACE ? draw_trace(s, u[0], u[1])
                                         : draw_geometric(s, u[0], u[1]);
}

void afd_slot_sampler_fill(const afd_slot_sampler *s, size_t n, const double *u, double *y)
{
    size_t i;
    if (s->kind == AFD_WORKLOAD_TRACE)
        for (i = 0; i < n; i++)
            y[i] = draw_trace(s, u[2 * i], u[2 * i + 1]);
    else
        for (i = 0; i < n; i++)
            y[i] = draw_geometric(s, u[2 * i], u[2 * i + 1]);
}

/* Sums with two accumulators (the loads are integers and the sums stay
 * below 2^53, so they are exact in any order); kept in separate functions so
 * that the accumulators stay in registers. */
static double sum_trace(const afd_slot_sampler *s, size_t n, const double *u)
{
    double a = 0, b = 0;
    size_t i;
    for (i = 0; i + 1 < n; i += 2) {
        a += draw_trace(s, u[2 * i], u[2 * i + 1]);
        b += draw_trace(s, u[2 * i + 2], u[2 * i + 3]);
    }
    if (i < n)
        a += draw_trace(s, u[2 * i], u[2 * i + 1]);
    return a + b;
}

static double sum_geometric(const afd_slot_sampler *s, size_t n, const double *u)
{
    double a = 0;
    size_t i;
    for (i = 0; i < n; i++)
        a += draw_geometric(s, u[2 * i], u[2 * i + 1]);
    return a;
}

double afd_slot_sampler_sum(const afd_slot_sampler *s, size_t n, const double *u)
{
    return s->kind == AFD_WORKLOAD_TRACE ? sum_trace(s, n, u) : sum_geometric(s, n, u);
}
