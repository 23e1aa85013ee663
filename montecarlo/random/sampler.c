/* sampler.c: fixed-cost transforms of uniforms: the geometric law by
 * inversion and the stationary slot-load sampler of Lemma 4.1. */
#include <config.h>

#include <math.h>
#include <stdlib.h>

#include "afd_sampler.h"
#include "mc_internal.h"

#define EXACT_LIMIT 0x1p53 /* integers up to here are exact doubles */
/* A trace is sampled by value when its loads span at most this many values
 * (16 MiB of table) or when the value table is no larger than the row
 * table (span <= 2.5 rows); otherwise by row. */
#define BY_VALUE_LEN (1u << 20)

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

/* One alias column of the trace sampler by row, with the (P, D) of both
 * candidate rows, so that a draw touches one 40-byte record: pd = {P, D} of
 * the column's own row, then {P, D} of its alias. */
typedef struct slot_col {
    double prob;
    double pd[4];
} slot_col;

/* One alias column of the trace sampler by value: column j stands for the
 * load y_min + j; its alias column's load is y_min + j + to_alias. */
typedef struct value_col {
    double prob;
    double to_alias;
} value_col;

struct afd_slot_sampler {
    afd_geometric gp, gd; /* GEOMETRIC: P and D */
    size_t n;             /* TRACE: columns (rows, or loads y_min..) */
    slot_col *col;        /* TRACE by row */
    value_col *vcol;      /* TRACE by value */
    double y_min;         /* TRACE by value: load of column 0 */
};

/* Checks shared by both trace samplers: P + D and sum D exact doubles,
 * every kept request with D >= 1.  *y_lo, *y_hi: smallest P, largest P + D.
 * The requests are the workload's entries (afd_workload_request: an empty
 * prompt is one token, as theta counts it): rows, or
 * distinct (P, D) pairs standing for count rows each. */
static afd_status check_trace(const afd_workload *w, uint64_t *y_lo, uint64_t *y_hi)
{
    size_t j, n = afd_workload_entries(w);
    double sum_d = 0;
    *y_lo = UINT64_MAX;
    *y_hi = 0;
    if (n == 0)
        return AFD_EEMPTY;
    if (n >= UINT32_MAX)
        return AFD_ELIMIT;
    for (j = 0; j < n; j++) {
        afd_workload_pair e = afd_workload_request(w, j);
        if (e.decode < 1 || !((double)e.prompt + (double)e.decode < EXACT_LIMIT))
            return AFD_EINVAL;
        sum_d += (double)e.decode * (double)e.count;
        if (e.prompt < *y_lo)
            *y_lo = e.prompt;
        if (e.prompt + e.decode > *y_hi)
            *y_hi = e.prompt + e.decode;
    }
    return sum_d < EXACT_LIMIT ? AFD_OK : AFD_EINVAL;
}

/* By value: the law of Y itself.  Request i puts weight 1 on each of the
 * loads P_i, P_i + 1, .., P_i + D_i - 1 (one per age); the counts come
 * from a difference array in O(n + range) and are exact integers.  A
 * distinct pair held by count requests adds count where each of them adds
 * 1, so the table, and every draw, is the same whether the trace's requests
 * were kept as rows or as counted pairs. */
static afd_status alloc_by_value(const afd_workload *w, uint64_t y_lo, uint64_t y_hi,
                                 afd_slot_sampler *s)
{
    size_t len = (size_t)(y_hi - y_lo), j;
    double *weight = calloc(len + 1, sizeof *weight);
    afd_alias *a = NULL;
    afd_status st = AFD_ENOMEM;
    s->vcol = malloc(len * sizeof *s->vcol);
    if (weight != NULL && s->vcol != NULL) {
        for (j = 0; j < afd_workload_entries(w); j++) {
            afd_workload_pair e = afd_workload_request(w, j);
            weight[e.prompt - y_lo] += (double)e.count;
            weight[e.prompt + e.decode - y_lo] -= (double)e.count;
        }
        for (j = 1; j < len; j++) /* prefix sums: integers below 2^53, exact */
            weight[j] += weight[j - 1];
        st = afd_alias_alloc(weight, len, &a);
    }
    if (st == AFD_OK) {
        for (j = 0; j < len; j++) {
            s->vcol[j].prob = a->prob[j];
            s->vcol[j].to_alias = (double)a->alias[j] - (double)j;
        }
        s->n = len;
        s->y_min = (double)y_lo;
    }
    afd_alias_free(a);
    free(weight);
    return st;
}

/* By row: the rows weighted by D, each column holding both candidates.
 * With counted pairs, pair k is weighted by count_k D_k: a row drawn with
 * probability D_i / sum D holds pair k with probability
 * sum_{i holds k} D_i / sum D = count_k D_k / sum D, and the age, uniform on
 * 0..D-1, depends on the row only through its pair, so Y = P + age has the
 * same law either way (only the order of the columns differs). */
static afd_status alloc_by_row(const afd_workload *w, afd_slot_sampler *s)
{
    size_t n = afd_workload_entries(w), j;
    double *weight;
    afd_alias *a = NULL;
    afd_status st = AFD_ENOMEM;
    if (n > SIZE_MAX / sizeof(slot_col))
        return AFD_ENOMEM;
    weight = malloc(n * sizeof *weight);
    s->col = malloc(n * sizeof *s->col);
    if (weight != NULL && s->col != NULL) {
        for (j = 0; j < n; j++) {
            afd_workload_pair e = afd_workload_entry(w, j);
            weight[j] = (double)e.decode * (double)e.count; /* exact: sum < 2^53 */
        }
        st = afd_alias_alloc(weight, n, &a);
    }
    if (st == AFD_OK) {
        for (j = 0; j < n; j++) {
            slot_col *c = &s->col[j];
            afd_workload_pair e = afd_workload_request(w, j),
                              f = afd_workload_request(w, a->alias[j]);
            c->prob = a->prob[j];
            c->pd[0] = (double)e.prompt;
            c->pd[1] = (double)e.decode;
            c->pd[2] = (double)f.prompt;
            c->pd[3] = (double)f.decode;
        }
        s->n = n;
    }
    afd_alias_free(a);
    free(weight);
    return st;
}

afd_status afd_priv_picker_init(afd_priv_picker *pk, const afd_workload *w, int weight_by_decode)
{
    size_t j;
    uint64_t sum = 0;
    pk->w = w;
    pk->cum = NULL;
    pk->total = NAN;
    pk->n = afd_workload_entries(w);
    if (pk->n == 0)
        return AFD_EEMPTY;
    if (w->pairs == NULL && !weight_by_decode) {
        pk->total = (double)pk->n;
        return AFD_OK;
    }
    if (pk->n > SIZE_MAX / sizeof *pk->cum || (pk->cum = malloc(pk->n * sizeof *pk->cum)) == NULL)
        return AFD_ENOMEM;
    for (j = 0; j < pk->n; j++) {
        afd_workload_pair e = afd_workload_entry(w, j);
        uint64_t wt = e.count;
        if (weight_by_decode) {
            if (e.decode != 0 && e.count > ((uint64_t)1 << 53) / e.decode)
                wt = (uint64_t)1 << 53;
            else
                wt *= e.decode;
        }
        if (wt >= ((uint64_t)1 << 53) - sum) {
            afd_priv_picker_free(pk);
            return AFD_EINVAL;
        }
        sum += wt;
        pk->cum[j] = sum;
    }
    if (sum == 0) {
        afd_priv_picker_free(pk);
        return AFD_EEMPTY;
    }
    pk->total = (double)sum;
    return AFD_OK;
}

void afd_priv_picker_free(afd_priv_picker *pk)
{
    free(pk->cum);
    pk->cum = NULL;
}

size_t afd_priv_picker_draw(const afd_priv_picker *pk, double u)
{
    double x = u * pk->total;
    size_t lo = 0, hi;
    uint64_t k;
    if (pk->cum == NULL) {
        size_t i = (size_t)x;
        return i < pk->n ? i : pk->n - 1; /* u n can round up to n */
    }
    k = (uint64_t)x;
    if ((double)k >= pk->total)
        k = (uint64_t)pk->total - 1;
    /* the first j with cum[j] > k */
    hi = pk->n - 1;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (pk->cum[mid] > k)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

afd_status afd_slot_sampler_alloc(const afd_workload *w, afd_slot_sampler **out)
{
    return afd_priv_slot_sampler_alloc(w, 1, out);
}

afd_status afd_priv_slot_sampler_alloc(const afd_workload *w, int by_value, afd_slot_sampler **out)
{
    afd_slot_sampler *s;
    afd_status st = AFD_OK;
    uint64_t y_lo, y_hi;
    *out = NULL;
    if (w == NULL)
        return AFD_EINVAL;
    if (w->kind != AFD_WORKLOAD_TRACE && w->kind != AFD_WORKLOAD_GEOMETRIC)
        return AFD_EINVAL;
    s = calloc(1, sizeof *s);
    if (s == NULL)
        return AFD_ENOMEM;
    if (w->kind == AFD_WORKLOAD_GEOMETRIC) {
        if (!(w->mu_p >= 1 && w->mu_p <= AFD_GEOMETRIC_MAX_MEAN && w->mu_d >= 1 &&
              w->mu_d <= AFD_GEOMETRIC_MAX_MEAN))
            st = AFD_EINVAL;
        else if (afd_geometric_init(1 / w->mu_p, &s->gp) != AFD_OK ||
                 afd_geometric_init(1 / w->mu_d, &s->gd) != AFD_OK)
            st = AFD_EINVAL;
    } else {
        st = check_trace(w, &y_lo, &y_hi);
        if (st == AFD_OK && by_value && y_hi - y_lo < UINT32_MAX &&
            (y_hi - y_lo <= BY_VALUE_LEN ||
             2 * (y_hi - y_lo) <= 5 * (uint64_t)afd_workload_entries(w)))
            st = alloc_by_value(w, y_lo, y_hi, s);
        else if (st == AFD_OK)
            st = alloc_by_row(w, s);
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
    free(s->vcol);
    free(s);
}

unsigned afd_slot_sampler_uniforms(const afd_slot_sampler *s)
{
    return s->vcol != NULL ? 1 : 2;
}

/* Trace by value: one uniform picks the alias column (x = u n, column
 * floor(x)) and its fractional part is the coin, as in afd_alias_draw.
 * Branch-free on the coin (it is unpredictable) and without floor(), which
 * is a library call on baseline x86-64: the products are >= 0, so
 * truncation to int64_t is the floor. */
static inline double draw_value(const afd_slot_sampler *s, double u)
{
    double x = u * (double)s->n;
    int64_t j = (int64_t)x;
    const value_col *c;
    if (j >= (int64_t)s->n) /* u n can round up to n */
        j = (int64_t)s->n - 1;
    c = &s->vcol[j];
    return (s->y_min + (double)j) + (double)(x - (double)j >= c->prob) * c->to_alias;
}

/* Trace by row: length-biased row by the alias column, then a uniform age. */
static inline double draw_row(const afd_slot_sampler *s, double u0, double u1)
{
    double x = u0 * (double)s->n, age;
    int64_t j = (int64_t)x;
    const slot_col *c;
    const double *pd;
    if (j >= (int64_t)s->n)
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
    if (s->vcol != NULL)
        return draw_value(s, u[0]);
    return s->col != NULL ? draw_row(s, u[0], u[1]) : draw_geometric(s, u[0], u[1]);
}

void afd_slot_sampler_fill(const afd_slot_sampler *s, size_t n, const double *u, double *y)
{
    size_t i;
    if (s->vcol != NULL)
        for (i = 0; i < n; i++)
            y[i] = draw_value(s, u[i]);
    else if (s->col != NULL)
        for (i = 0; i < n; i++)
            y[i] = draw_row(s, u[2 * i], u[2 * i + 1]);
    else
        for (i = 0; i < n; i++)
            y[i] = draw_geometric(s, u[2 * i], u[2 * i + 1]);
}

/* Sums with two accumulators (the loads are integers and the sums stay
 * below 2^53, so they are exact in any order); kept in separate functions so
 * that the accumulators stay in registers.  The table lookups of a trace
 * are prefetched PREFETCH slots ahead: the uniforms are known in advance,
 * and a table larger than L2 otherwise costs a cache miss per slot. */
#define PREFETCH 16
#if defined(__GNUC__)
#define PREFETCH_AT(p) __builtin_prefetch(p)
#else
#define PREFETCH_AT(p) ((void)0)
#endif

static inline int64_t column(const afd_slot_sampler *s, double u)
{
    int64_t j = (int64_t)(u * (double)s->n); /* signed: one instruction */
    return j < (int64_t)s->n ? j : (int64_t)s->n - 1;
}

static double sum_value(const afd_slot_sampler *s, size_t n, const double *u)
{
    double a = 0, b = 0;
    size_t i;
    for (i = 0; i < n && i < PREFETCH; i++)
        PREFETCH_AT(&s->vcol[column(s, u[i])]);
    for (i = 0; i + 1 < n; i += 2) {
        if (i + PREFETCH + 1 < n) {
            PREFETCH_AT(&s->vcol[column(s, u[i + PREFETCH])]);
            PREFETCH_AT(&s->vcol[column(s, u[i + PREFETCH + 1])]);
        }
        a += draw_value(s, u[i]);
        b += draw_value(s, u[i + 1]);
    }
    if (i < n)
        a += draw_value(s, u[i]);
    return a + b;
}

static double sum_row(const afd_slot_sampler *s, size_t n, const double *u)
{
    double a = 0, b = 0;
    size_t i;
    for (i = 0; i < n && i < PREFETCH; i++)
        PREFETCH_AT(&s->col[column(s, u[2 * i])]);
    for (i = 0; i + 1 < n; i += 2) {
        if (i + PREFETCH + 1 < n) {
            PREFETCH_AT(&s->col[column(s, u[2 * (i + PREFETCH)])]);
            PREFETCH_AT(&s->col[column(s, u[2 * (i + PREFETCH + 1)])]);
        }
        a += draw_row(s, u[2 * i], u[2 * i + 1]);
        b += draw_row(s, u[2 * i + 2], u[2 * i + 3]);
    }
    if (i < n)
        a += draw_row(s, u[2 * i], u[2 * i + 1]);
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
    if (s->vcol != NULL)
        return sum_value(s, n, u);
    return s->col != NULL ? sum_row(s, n, u) : sum_geometric(s, n, u);
}
