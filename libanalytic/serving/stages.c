/* stages.c: a serving pipeline solved by decomposition (afd_stages.h). */
#include <config.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_statistics_double.h>

#include "afd_queue.h"
#include "afd_stages.h"
#include "internal.h"

enum { GRID = 4096 };

/* ---- service laws */

enum { LAW_POINT, LAW_GAMMA, LAW_EMP };

typedef struct law {
    int kind;
    double mean, scv;
    double shape, scale; /* gamma */
    double *v;           /* empirical: the distinct values, ascending */
    double *w;           /* each one's share of the requests */
    size_t n;            /* how many distinct values */
} law;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void law_gamma(law *s, double mean, double scv)
{
    s->mean = mean;
    s->scv = scv;
    if (scv <= 0) {
        s->kind = LAW_POINT;
        return;
    }
    s->kind = LAW_GAMMA;
    s->shape = 1 / scv;
    s->scale = mean * scv;
}

/* The law of one stage's whole service (repeat k) over the requests of a
 * class (cls = -1: all; 0 light; 1 heavy). */
static afd_status law_build(const afd_pipeline_problem *pb, const afd_stage *st, int cls, law *out,
                            size_t *count, afd_error *err)
{
    const afd_stage_requests *rq = &pb->requests;
    double k = st->repeat, mean, var;
    size_t i, n = 0;

    memset(out, 0, sizeof *out);
    *count = 0;
    if (st->kind == AFD_SERVICE_CONST && cls < 0) {
        out->kind = LAW_POINT;
        out->mean = k * st->time;
        return AFD_OK;
    }
    if (st->kind == AFD_SERVICE_EXP && cls < 0) { /* Erlang-k */
        law_gamma(out, k * st->time, 1 / k);
        return AFD_OK;
    }
    if (rq->n == 0 || rq->prompt == NULL || rq->decode == NULL)
        return afd_priv_fail(err, AFD_EINVAL, st->line, st->column,
                             "stage '%s' depends on the requests' tokens: give a trace", st->name);
    out->v = malloc(rq->n * sizeof *out->v);
    if (out->v == NULL)
        return AFD_ENOMEM;
    for (i = 0; i < rq->n; i++) {
        double P = (double)rq->prompt[i], D = (double)rq->decode[i], x;
        if (cls >= 0) {
            double tok = st->split_output ? D : P;
            if ((tok <= st->split) != (cls == 0))
                continue;
        }
        if (afd_stage_service(st, pb->hw, pb->hw_sec, P, D, &x) != AFD_OK) {
            free(out->v);
            out->v = NULL;
            return afd_priv_fail(err, AFD_EINVAL, st->line, st->column,
                                 "stage '%s': the latency model has no %s law", st->name,
                                 st->decode_phase ? "decode" : "prefill");
        }
        out->v[n++] = x;
    }
    *count = n;
    if (n == 0) {
        free(out->v);
        out->v = NULL;
        out->kind = LAW_POINT;
        out->mean = 0;
        return AFD_OK;
    }
    /* the empirical law's own moments (divisor n), in two passes: the one-pass
     * E[x^2] - E[x]^2 cancels when the spread is small beside the mean */
    mean = gsl_stats_mean(out->v, 1, n);
    var = gsl_stats_tss_m(out->v, 1, n, mean) / (double)n;
    if (st->kind == AFD_SERVICE_EXP) { /* a class of an exponential stage */
        free(out->v);
        out->v = NULL;
        law_gamma(out, k * st->time, 1 / k);
        return AFD_OK;
    }
    if (st->kind == AFD_SERVICE_CONST) {
        free(out->v);
        out->v = NULL;
        out->kind = LAW_POINT;
        out->mean = k * st->time;
        return AFD_OK;
    }
    if (st->repeat > 1) { /* k-fold sum: mean k m, SCV scv / k, gamma-shaped */
        free(out->v);
        out->v = NULL;
        law_gamma(out, k * mean, mean > 0 ? var / (mean * mean) / k : 0);
        return AFD_OK;
    }
    qsort(out->v, n, sizeof *out->v, cmp_double);
    /* equal values merged, each with its share: a trace has far fewer distinct
     * lengths than requests (Azure's conversation trace: 19,366 requests,
     * 2,339 prompt lengths, 623 output lengths), and every evaluation of the
     * sojourn CDF sums over them */
    out->w = malloc(n * sizeof *out->w);
    if (out->w == NULL) {
        free(out->v);
        out->v = NULL;
        return AFD_ENOMEM;
    }
    {
        size_t u = 0, j;
        for (i = 0; i < n; i = j) {
            for (j = i + 1; j < n && out->v[j] == out->v[i]; j++)
                ;
            out->v[u] = out->v[i];
            out->w[u++] = (double)(j - i) / (double)n;
        }
        out->n = u;
    }
    out->kind = LAW_EMP;
    out->mean = mean;
    out->scv = mean > 0 ? var / (mean * mean) : 0;
    return AFD_OK;
}

/* ---- one FCFS pool of c servers */

typedef struct pool {
    double frac; /* fraction of the stage's requests */
    double lambda, ca2;
    int c;
    law s;
    int exact_mdc; /* wait law: exact M/D/c */
    afd_mdc *q;
    double pw, rate, wq; /* otherwise P(W > 0), conditional rate, mean */
    double rho, cd2;
    int exact;
    int nowait; /* its arrivals are spaced so that no request ever waits */
} pool;

static double wait_cdf(const pool *p, double t)
{
    if (t < 0)
        return 0;
    if (p->lambda <= 0 || p->s.mean <= 0)
        return 1;
    if (p->exact_mdc)
        return afd_mdc_wait_cdf(p->q, t);
    return 1 - p->pw * exp(-p->rate * t);
}

struct conv_arg {
    const pool *p;
    double t;
};

static double conv_integrand(double s, void *arg)
{
    const struct conv_arg *a = arg;
    return gsl_ran_gamma_pdf(s, a->p->s.shape, a->p->s.scale) * wait_cdf(a->p, a->t - s);
}

/* P(W + S <= t) = E_S[P(W <= t - S)] */
static double sojourn_cdf(const pool *p, double t)
{
    size_t i;
    double sum = 0;
    if (t < 0)
        return 0;
    switch (p->s.kind) {
    case LAW_POINT:
        return wait_cdf(p, t - p->s.mean);
    case LAW_EMP:
        for (i = 0; i < p->s.n && p->s.v[i] <= t; i++)
            sum += p->s.w[i] * wait_cdf(p, t - p->s.v[i]);
        return sum;
    default: {
        struct conv_arg a = {p, t};
        double v, e;
        if (afd_priv_integrate(conv_integrand, &a, 0, t, 1e-13, 1e-10, &v, &e) != AFD_OK)
            return NAN;
        return v > 1 ? 1 : v;
    }
    }
}

static afd_status pool_solve(pool *p, const char *name, afd_error *err)
{
    double m = p->s.mean, cs2 = p->s.scv, a, c = p->c;
    int poisson = fabs(p->ca2 - 1) < 1e-12;
    afd_status st;

    p->q = NULL;
    p->exact_mdc = 0;
    p->pw = p->rate = p->wq = 0;
    p->rho = 0;
    p->cd2 = p->ca2;
    p->exact = poisson;
    if (p->lambda <= 0 || m <= 0) /* no traffic, or no work: no wait */
        return AFD_OK;
    a = p->lambda * m;
    p->rho = a / c;
    if (p->nowait) { /* the spacing rule (afd_stages.h): W = 0 for every request */
        p->exact = p->s.kind == LAW_POINT;
        if (p->s.kind != LAW_POINT)
            p->cd2 = 1 + (1 - p->rho * p->rho) * (p->ca2 - 1) +
                     p->rho * p->rho * (cs2 - 1) / sqrt(c); /* QNA eq. (39) */
        p->rate = 1;
        return AFD_OK;
    }
    if (!(p->rho < 1))
        return afd_priv_fail(err, AFD_EUNSTABLE, 0, 0,
                             "stage '%s' is unstable: rho = lambda E[S] / c = %.6g >= 1", name,
                             p->rho);
    p->cd2 = 1 + (1 - p->rho * p->rho) * (p->ca2 - 1) +
             p->rho * p->rho * (cs2 - 1) / sqrt(c); /* QNA eq. (39) */
    if (p->s.kind == LAW_POINT || cs2 != 1 || !poisson) {
        if ((st = afd_mdc_alloc(p->lambda, m, p->c, &p->q)) != AFD_OK)
            return afd_priv_fail(err, st, 0, 0, "stage '%s': M/D/%d at rho = %.6g: %s", name, p->c,
                                 p->rho, afd_strerror(st));
    }
    if (p->s.kind == LAW_POINT && poisson) { /* exact M/D/c */
        p->exact_mdc = 1;
        p->wq = afd_mdc_wq(p->q);
        return AFD_OK;
    }
    {
        double pw_m = afd_erlang_c(a, p->c), wq_m = pw_m * m / (c - a); /* M/M/c */
        double wq, pw;
        if (p->s.kind == LAW_GAMMA && cs2 == 1 && poisson) { /* exact M/M/c */
            p->pw = pw_m;
            p->wq = wq_m;
            p->rate = c / m - p->lambda;
            return AFD_OK;
        }
        p->exact = 0;
        /* Cosmetatos' interpolation, then Whitt's GI/G/m scaling */
        wq = (1 - cs2) * afd_mdc_wq(p->q) + cs2 * wq_m;
        pw = (1 - cs2) * afd_mdc_p_wait(p->q) + cs2 * pw_m;
        pw = pw < 1 ? pw : 1;
        wq *= (p->ca2 + cs2) / (1 + cs2);
        if (!(wq > 0) || !(pw > 0)) {
            p->pw = 0;
            p->wq = 0;
            p->rate = 1;
        } else {
            p->pw = pw;
            p->wq = wq;
            p->rate = pw / wq;
        }
    }
    return AFD_OK;
}

static void pool_free(pool *p)
{
    afd_mdc_free(p->q);
    p->q = NULL;
    free(p->s.v);
    free(p->s.w);
    p->s.v = NULL;
    p->s.w = NULL;
}

/* ---- a stage: one pool, c round-robin servers (one pool at lambda / c),
 * or two heavy-light pools */

typedef struct stage_model {
    pool pool[2];
    int npools;
} stage_model;

static double stage_wait_cdf(const stage_model *m, double t)
{
    double v = 0;
    int k;
    for (k = 0; k < m->npools; k++)
        v += m->pool[k].frac * wait_cdf(&m->pool[k], t);
    return v;
}

static double stage_sojourn_cdf(const stage_model *m, double t)
{
    double v = 0;
    int k;
    for (k = 0; k < m->npools; k++)
        v += m->pool[k].frac * sojourn_cdf(&m->pool[k], t);
    return v;
}

struct q_arg {
    const stage_model *m;
    int sojourn;
    double p;
};

static double q_fn(double t, void *arg)
{
    const struct q_arg *a = arg;
    return (a->sojourn ? stage_sojourn_cdf(a->m, t) : stage_wait_cdf(a->m, t)) - a->p;
}

/* inf{t : F(t) >= p} by bracketing and Brent. */
static afd_status stage_quantile(const stage_model *m, int sojourn, double p, double scale,
                                 double *out)
{
    struct q_arg a = {m, sojourn, p};
    double lo = 0, hi = scale > 0 ? scale : 1;
    int it;
    *out = NAN;
    if (q_fn(0, &a) >= 0) {
        *out = 0;
        return AFD_OK;
    }
    for (it = 0; it < 200 && !(q_fn(hi, &a) >= 0); it++) {
        lo = hi;
        hi *= 2;
    }
    if (it == 200)
        return AFD_ENUMERIC;
    /* a jump across p (a point-mass service) is its own answer */
    for (it = 0; it < 200 && hi - lo > 1e-13 * hi; it++) {
        double mid = 0.5 * (lo + hi);
        if (q_fn(mid, &a) >= 0)
            hi = mid;
        else
            lo = mid;
    }
    *out = hi;
    return AFD_OK;
}

static afd_status stage_build(const afd_pipeline_problem *pb, const afd_stage *st, double ca2,
                              double spacing, stage_model *m, afd_error *err)
{
    double lambda = pb->lambda;
    afd_status s;
    int k;

    memset(m, 0, sizeof *m);
    if (st->routing == AFD_ROUTE_HEAVY_LIGHT) {
        size_t count[2];
        double frac;
        for (k = 0; k < 2; k++)
            if ((s = law_build(pb, st, k, &m->pool[k].s, &count[k], err)) != AFD_OK) {
                free(m->pool[0].s.v);
                free(m->pool[0].s.w);
                return s;
            }
        m->npools = 2;
        frac = (double)count[0] / (double)(count[0] + count[1]);
        m->pool[0].frac = frac;
        m->pool[1].frac = 1 - frac;
        m->pool[0].c = st->light_servers;
        m->pool[1].c = st->servers - st->light_servers;
        for (k = 0; k < 2; k++) {
            m->pool[k].lambda = lambda * m->pool[k].frac;
            m->pool[k].ca2 = m->pool[k].frac * ca2 + 1 - m->pool[k].frac; /* QNA splitting */
        }
    } else {
        size_t count;
        if ((s = law_build(pb, st, -1, &m->pool[0].s, &count, err)) != AFD_OK)
            return s;
        m->npools = 1;
        m->pool[0].frac = 1;
        if (st->routing == AFD_ROUTE_RR) {
            m->pool[0].c = 1;
            m->pool[0].lambda = lambda / st->servers;
            m->pool[0].ca2 = ca2 / st->servers;
        } else { /* fcfs, least-work (the same waits), jsq (solved as fcfs) */
            m->pool[0].c = st->servers;
            m->pool[0].lambda = lambda;
            m->pool[0].ca2 = ca2;
        }
        {
            const law *l = &m->pool[0].s;
            double smax = l->kind == LAW_POINT ? l->mean : l->kind == LAW_EMP ? l->v[l->n - 1] : INFINITY;
            m->pool[0].nowait = spacing > 0 && smax <= spacing * (1 + 1e-12);
        }
    }
    for (k = 0; k < m->npools; k++)
        if ((s = pool_solve(&m->pool[k], st->name, err)) != AFD_OK) {
            if (err != NULL) {
                char text[sizeof err->text];
                memcpy(text, err->text, sizeof text);
                if (m->npools == 2)
                    afd_priv_fail(err, s, st->line, st->column, "%s (the %s pool)", text,
                                  k == 0 ? "light" : "heavy");
                else
                    afd_priv_fail(err, s, st->line, st->column, "%s", text);
            }
            return s;
        }
    return AFD_OK;
}

static void stage_free(stage_model *m)
{
    int k;
    for (k = 0; k < 2; k++)
        pool_free(&m->pool[k]);
}

/* ---- the spacing of the arrivals (afd_stages.h, "Spacing"): G(k), a lower
 * bound on the time between any arrival and the k-th after it, is the largest
 * floor(k / c) S over the constant stages (c servers, service S, FCFS order)
 * since the last stage that may reorder or merge the stream; 0 for Poisson. */

typedef struct spacing_term {
    int c;
    double s;
} spacing_term;

static double spacing(const spacing_term *sp, size_t nsp, int k)
{
    double g = 0;
    size_t j;
    for (j = 0; j < nsp; j++) {
        double v = (double)(k / sp[j].c) * sp[j].s;
        g = v > g ? v : g;
    }
    return g;
}

/* a stage whose every request waits 0 and is served for the same time */
static int is_constant(const stage_model *m)
{
    return m->npools == 1 && m->pool[0].nowait && m->pool[0].s.kind == LAW_POINT;
}

/* The spacing of a stage's departures: constant service in FCFS order adds
 * floor(k / c) S (a request starts no sooner than S after the c-th before
 * it); a constant delay on every request keeps the spacing; anything else
 * (random services, per-server queues that may overtake, a split) forgets
 * it. */
static size_t spacing_next(const afd_stage *st, const stage_model *m, spacing_term *sp, size_t nsp)
{
    if (m->npools == 1 && m->pool[0].s.kind == LAW_POINT &&
        (st->routing == AFD_ROUTE_FCFS || st->routing == AFD_ROUTE_LEAST_WORK)) {
        sp[nsp].c = st->servers;
        sp[nsp].s = m->pool[0].s.mean;
        return nsp + 1;
    }
    return is_constant(m) ? nsp : 0;
}

/* ---- the end-to-end row: convolution on a grid */

/* pmf of a CDF on cells (kh, (k+1)h], cell 0 holding the atom at 0. */
static void grid_pmf(const stage_model *m, int sojourn, double h, double *pmf)
{
    double prev = 0;
    int k;
    for (k = 0; k < GRID; k++) {
        double f = sojourn ? stage_sojourn_cdf(m, (k + 1) * h) : stage_wait_cdf(m, (k + 1) * h);
        pmf[k] = f - prev > 0 ? f - prev : 0;
        prev = f > prev ? f : prev;
    }
}

static void convolve(double *acc, const double *b, double *tmp)
{
    int k, j;
    for (k = 0; k < GRID; k++) {
        double v = 0;
        for (j = 0; j <= k; j++)
            v += acc[j] * b[k - j];
        tmp[k] = v;
    }
    memcpy(acc, tmp, GRID * sizeof *acc);
}

/* The p-quantile of a sum of `terms` cell indices, each cell's value taken
 * at its midpoint. */
static double grid_quantile(const double *pmf, double h, int terms, double p)
{
    double cum = 0;
    int k;
    for (k = 0; k < GRID; k++) {
        cum += pmf[k];
        if (cum >= p)
            return (k + 0.5 * terms) * h;
    }
    return NAN;
}

static void result_nan(afd_stage_result *r)
{
    r->rho = r->wait_mean = r->wait_p = r->sojourn_mean = r->sojourn_p = NAN;
    r->service_mean = r->service_scv = r->ca2 = r->cd2 = NAN;
    r->exact = 0;
}

afd_status afd_pipeline_solve(const afd_pipeline_problem *pb, afd_stage_result *out, afd_error *err)
{
    const afd_stages *sg = pb->stages;
    stage_model *m;
    double ca2 = 1, hi_sum = 0, h, shift = 0;
    spacing_term *sp = NULL;
    size_t nsp = 0, nvar = 0, last_var = 0;
    double *acc_w = NULL, *acc_s = NULL, *tmp = NULL, *pmf = NULL;
    afd_status st = AFD_OK;
    size_t i, n;
    int k;

    afd_error_clear(err);
    if (sg == NULL || sg->n == 0)
        return AFD_EINVAL;
    n = sg->n;
    for (i = 0; i <= n; i++)
        result_nan(&out[i]);
    if (!(pb->lambda > 0) || !isfinite(pb->lambda) || !(pb->p > 0 && pb->p < 1))
        return afd_priv_fail(err, AFD_EINVAL, 0, 0, "lambda must be > 0 and p in (0, 1)");
    m = calloc(n, sizeof *m);
    sp = malloc(n * sizeof *sp);
    if (m == NULL || sp == NULL) {
        free(m);
        free(sp);
        return AFD_ENOMEM;
    }

    for (i = 0; i < n; i++) {
        afd_stage_result *r = &out[i];
        double smean = 0, var = 0, cd2 = 0, scale;
        if ((st = stage_build(pb, &sg->stage[i], ca2, spacing(sp, nsp, sg->stage[i].servers), &m[i],
                              err)) != AFD_OK) {
            n = i + 1; /* free what was built */
            goto done;
        }
        r->ca2 = ca2;
        r->exact = 1;
        r->wait_mean = 0;
        for (k = 0; k < m[i].npools; k++) {
            const pool *p = &m[i].pool[k];
            double ms = p->s.mean;
            smean += p->frac * ms;
            r->wait_mean += p->frac * p->wq;
            cd2 += p->frac * p->cd2;
            r->exact &= p->exact && sg->stage[i].routing != AFD_ROUTE_JSQ &&
                        sg->stage[i].routing != AFD_ROUTE_RR;
        }
        /* the mixture's variance by total variance, in a second pass about
         * its mean: sum frac (m^2 scv + (m - mean)^2); E[S^2]/mean^2 - 1
         * would cancel when the scv is small */
        for (k = 0; k < m[i].npools; k++) {
            const pool *p = &m[i].pool[k];
            double ms = p->s.mean, d = ms - smean;
            var += p->frac * (ms * ms * p->s.scv + d * d);
        }
        r->service_mean = smean;
        r->service_scv = smean > 0 ? var / (smean * smean) : 0;
        r->rho = pb->lambda * smean / sg->stage[i].servers;
        r->sojourn_mean = r->wait_mean + smean;
        if (is_constant(&m[i])) { /* departures: the arrivals shifted by S */
            cd2 = ca2;
            r->exact = 1;
        }
        r->cd2 = cd2;
        scale = r->sojourn_mean > 0 ? r->sojourn_mean : 1;
        if (m[i].npools == 1 && m[i].pool[0].exact_mdc) { /* exact quantiles */
            const pool *p = &m[i].pool[0];
            r->wait_p = afd_mdc_wait_quantile(p->q, pb->p);
            r->sojourn_p = r->wait_p + p->s.mean;
            if (isnan(r->wait_p)) {
                st = AFD_ENUMERIC;
                goto fail_num;
            }
        } else if ((st = stage_quantile(&m[i], 0, pb->p, scale, &r->wait_p)) != AFD_OK ||
                   (st = stage_quantile(&m[i], 1, pb->p, scale, &r->sojourn_p)) != AFD_OK) {
            goto fail_num;
        }
        if (is_constant(&m[i])) {
            shift += smean;
        } else {
            double q_hi;
            if ((st = stage_quantile(&m[i], 1, 1 - 1e-7, scale, &q_hi)) != AFD_OK)
                goto fail_num;
            hi_sum += q_hi;
            nvar++;
            last_var = i;
        }
        nsp = spacing_next(&sg->stage[i], &m[i], sp, nsp);
        ca2 = cd2;
    }

    /* the end-to-end row */
    {
        afd_stage_result *t = &out[n];
        t->rho = t->wait_mean = t->sojourn_mean = t->service_mean = 0;
        for (i = 0; i < n; i++) {
            t->rho = out[i].rho > t->rho ? out[i].rho : t->rho;
            t->wait_mean += out[i].wait_mean;
            t->sojourn_mean += out[i].sojourn_mean;
            t->service_mean += out[i].service_mean;
        }
        t->ca2 = 1;
        t->cd2 = ca2;
        t->service_scv = NAN;
        if (n == 1)
            t->service_scv = out[0].service_scv;
        t->exact = 1;
        for (i = 0; i < n; i++)
            t->exact &= out[i].exact;
        if (nvar == 0) { /* every stage a constant delay */
            t->wait_p = 0;
            t->sojourn_p = shift;
        } else if (nvar == 1) { /* one random stage, the others constant delays */
            t->wait_p = out[last_var].wait_p;
            t->sojourn_p = out[last_var].sojourn_p + shift;
        } else {
            t->exact = 0;
            acc_w = calloc(GRID, sizeof *acc_w);
            acc_s = calloc(GRID, sizeof *acc_s);
            tmp = calloc(GRID, sizeof *tmp);
            pmf = calloc(GRID, sizeof *pmf);
            if (acc_w == NULL || acc_s == NULL || tmp == NULL || pmf == NULL) {
                st = AFD_ENOMEM;
                goto done;
            }
            size_t j = 0;
            h = 1.02 * hi_sum / GRID;
            for (i = 0; i < n; i++) {
                if (is_constant(&m[i]))
                    continue;
                grid_pmf(&m[i], 0, h, pmf);
                if (j == 0)
                    memcpy(acc_w, pmf, GRID * sizeof *pmf);
                else
                    convolve(acc_w, pmf, tmp);
                grid_pmf(&m[i], 1, h, pmf);
                if (j == 0)
                    memcpy(acc_s, pmf, GRID * sizeof *pmf);
                else
                    convolve(acc_s, pmf, tmp);
                j++;
            }
            t->exact = 0;
            t->wait_p = grid_quantile(acc_w, h, (int)nvar, pb->p);
            t->sojourn_p = grid_quantile(acc_s, h, (int)nvar, pb->p) + shift;
            /* a total wait of exactly 0 at the quantile is 0, not a midpoint */
            {
                double at0 = 1;
                for (i = 0; i < n; i++)
                    at0 *= stage_wait_cdf(&m[i], 0);
                if (at0 >= pb->p)
                    t->wait_p = 0;
            }
        }
    }
    goto done;

fail_num:
    afd_priv_fail(err, st, sg->stage[i].line, sg->stage[i].column,
                  "stage '%s': a quantile did not converge", sg->stage[i].name);
    n = i + 1;
done:
    for (i = 0; i < n; i++)
        stage_free(&m[i]);
    free(m);
    free(sp);
    free(acc_w);
    free(acc_s);
    free(tmp);
    free(pmf);
    if (st != AFD_OK)
        for (i = 0; i <= sg->n; i++)
            result_nan(&out[i]);
    return st;
}
