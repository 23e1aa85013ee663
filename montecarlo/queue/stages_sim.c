/* stages_sim.c: discrete-event simulation of a serving pipeline
 * (afd_stages_sim.h). */
#include <config.h>

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_statistics_double.h>

#include "afd_event.h"
#include "afd_mc.h"
#include "afd_philox.h"
#include "afd_stages_sim.h"
#include "mc_internal.h"

enum { NSTAT = 5 }; /* rho, wait mean, wait p, sojourn mean, sojourn p */

typedef struct ev {
    double t;
    uint64_t j;
} ev;

static int cmp_ev(const void *a, const void *b)
{
    const ev *x = a, *y = b;
    if (x->t != y->t)
        return (x->t > y->t) - (x->t < y->t);
    return (x->j > y->j) - (x->j < y->j);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* ---- one replication */

typedef struct rep_ctx {
    const afd_pipeline_problem *pb;
    const afd_stages_sim_options *o;
    const double *svc; /* deterministic service per (stage, row), or NULL */
    size_t nrows;
} rep_ctx;

static double quantile_sorted(const double *v, size_t n, double p)
{
    /* inf{x : F_n(x) >= p}: the ceil(n p)-th smallest */
    size_t k = (size_t)ceil(p * (double)n);
    return v[k > 0 ? k - 1 : 0];
}

#if defined(__GNUC__)
static afd_status fail_mc(afd_error *err, afd_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
#endif
static afd_status fail_mc(afd_error *err, afd_status st, const char *fmt, ...)
{
    va_list ap;
    if (err != NULL) {
        err->line = err->column = 0;
        va_start(ap, fmt);
        vsnprintf(err->text, sizeof err->text, fmt, ap);
        va_end(ap);
    }
    return st;
}

/* Mean and p-quantile of v[0..n) (sorts v). */
static void summarize(double *v, uint64_t n, double p, double *mean, double *q)
{
    double sum = 0;
    uint64_t k;
    for (k = 0; k < n; k++)
        sum += v[k];
    *mean = sum / (double)n;
    qsort(v, n, sizeof *v, cmp_double);
    *q = quantile_sorted(v, n, p);
}

/* stats[(stage) * NSTAT + k], stage n = end to end */
static afd_status run_rep(const rep_ctx *cx, unsigned rep, double *stats)
{
    const afd_stages *sg = cx->pb->stages;
    const afd_stages_sim_options *o = cx->o;
    size_t ns = sg->n, i;
    uint64_t N = o->customers + o->warmup, j, keep0 = o->warmup;
    uint64_t base = (uint64_t)rep * 1024;
    double *arr = malloc(N * sizeof *arr), *dep = malloc(N * sizeof *dep);
    double *wsum = calloc(N, sizeof *wsum), *t0 = malloc(N * sizeof *t0);
    double *wst = malloc(N * sizeof *wst);
    double *buf = malloc(o->customers * sizeof *buf);
    uint32_t *row = malloc(N * sizeof *row);
    ev *order = malloc(N * sizeof *order);
    double t = 0, span;
    afd_status st = AFD_OK;

    if (arr == NULL || dep == NULL || wsum == NULL || t0 == NULL || buf == NULL || row == NULL ||
        order == NULL || wst == NULL) {
        st = AFD_ENOMEM;
        goto out;
    }
    for (j = 0; j < N; j++) {
        t += -log(afd_philox_u01(o->seed, base, j)) / cx->pb->lambda;
        arr[j] = t0[j] = t;
        row[j] = cx->nrows > 0
                     ? (uint32_t)floor(afd_philox_u01(o->seed, base + 1, j) * (double)cx->nrows)
                     : 0;
        if (row[j] >= cx->nrows && cx->nrows > 0)
            row[j] = (uint32_t)(cx->nrows - 1);
        order[j].t = t;
        order[j].j = j;
    }
    span = arr[N - 1] - arr[keep0 > 0 ? keep0 - 1 : 0];

    for (i = 0; i < ns; i++) {
        const afd_stage *sgi = &sg->stage[i];
        int c = (int)sgi->servers, k;
        double busy = 0, *free_t = calloc((size_t)c, sizeof *free_t);
        /* FCFS pools: the servers' free times (afd_event.h; ties by push
         * order, which is server order) */
        afd_event_heap hp[2] = {{NULL, 0, 0, 0}, {NULL, 0, 0, 0}};
        double **q = NULL; /* jsq: per-server departure times */
        size_t *qh = NULL, *qn = NULL, *qcap = NULL;
        uint64_t idx;
        int npool = sgi->routing == AFD_ROUTE_HEAVY_LIGHT ? 2 : 1;

        if (free_t == NULL) {
            st = AFD_ENOMEM;
            goto out;
        }
        if (sgi->routing == AFD_ROUTE_FCFS || sgi->routing == AFD_ROUTE_LEAST_WORK ||
            sgi->routing == AFD_ROUTE_HEAVY_LIGHT) {
            for (k = 0; k < npool; k++) {
                int light = (int)sgi->light_servers;
                int lo = npool == 2 && k == 1 ? light : 0;
                int hi = npool == 2 && k == 0 ? light : c, s;
                if (afd_event_heap_init(&hp[k], (size_t)(hi - lo)) != AFD_OK)
                    st = AFD_ENOMEM;
                for (s = lo; s < hi && st == AFD_OK; s++) /* all free at 0, in server order */
                    st = afd_event_heap_push(&hp[k], 0, (uint64_t)s, 0);
            }
        } else if (sgi->routing == AFD_ROUTE_JSQ) {
            q = calloc((size_t)c, sizeof *q);
            qh = calloc((size_t)c, sizeof *qh);
            qn = calloc((size_t)c, sizeof *qn);
            qcap = calloc((size_t)c, sizeof *qcap);
            if (q == NULL || qh == NULL || qn == NULL || qcap == NULL)
                st = AFD_ENOMEM;
        }
        for (idx = 0; idx < N && st == AFD_OK; idx++) {
            uint64_t cj = order[idx].j;
            double a = arr[cj], s = 0, start;
            int r, srv;
            /* service: repeat draws on one server */
            for (r = 0; r < sgi->repeat; r++) {
                if (sgi->kind == AFD_SERVICE_EXP)
                    s += -sgi->time * log(afd_philox_u01(o->seed, base + 2 + i,
                                                         cj * (uint64_t)sgi->repeat + (uint64_t)r));
                else
                    s += cx->svc[i * cx->nrows + row[cj]];
            }
            switch (sgi->routing) {
            case AFD_ROUTE_RR:
                srv = (int)(idx % (uint64_t)c);
                start = a > free_t[srv] ? a : free_t[srv];
                free_t[srv] = start + s;
                break;
            case AFD_ROUTE_JSQ: {
                int best = 0;
                size_t bestn = 0;
                for (k = 0; k < c; k++) {
                    while (qh[k] < qn[k] && q[k][qh[k]] <= a)
                        qh[k]++;
                    if (k == 0 || qn[k] - qh[k] < bestn) {
                        bestn = qn[k] - qh[k];
                        best = k;
                    }
                }
                srv = best;
                start = a > free_t[srv] ? a : free_t[srv];
                free_t[srv] = start + s;
                if (qn[srv] == qcap[srv]) {
                    size_t cap = qcap[srv] ? 2 * qcap[srv] : 64;
                    double *nq = realloc(q[srv], cap * sizeof *nq);
                    if (nq == NULL) {
                        st = AFD_ENOMEM;
                        break;
                    }
                    q[srv] = nq;
                    qcap[srv] = cap;
                }
                q[srv][qn[srv]++] = start + s;
                break;
            }
            default: { /* earliest free server of the request's pool */
                afd_event_heap *h = &hp[0];
                if (npool == 2) {
                    const afd_stage_requests *rq = &cx->pb->requests;
                    double tok = sgi->split_output ? (double)rq->decode[row[cj]]
                                                   : (double)rq->prompt[row[cj]];
                    h = tok <= sgi->split ? &hp[0] : &hp[1];
                }
                start = a > h->e[0].time ? a : h->e[0].time;
                (void)afd_event_heap_replace_top(h, start + s, h->e[0].id, 0);
                break;
            }
            }
            dep[cj] = start + s;
            wst[cj] = start - a;
            wsum[cj] += start - a;
            if (cj >= keep0)
                busy += s;
            order[idx].t = start + s;
            (void)srv;
        }
        /* stage statistics over the kept customers */
        if (st == AFD_OK) {
            double *sr = stats + i * NSTAT;
            sr[0] = busy / ((double)c * span);
            for (j = keep0; j < N; j++)
                buf[j - keep0] = wst[j];
            summarize(buf, o->customers, cx->pb->p, &sr[1], &sr[2]);
            for (j = keep0; j < N; j++)
                buf[j - keep0] = dep[j] - arr[j];
            summarize(buf, o->customers, cx->pb->p, &sr[3], &sr[4]);
        }
        for (j = 0; j < N; j++)
            arr[j] = dep[j];
        qsort(order, N, sizeof *order, cmp_ev);
        free(free_t);
        for (k = 0; k < 2; k++)
            afd_event_heap_free(&hp[k]);
        if (q != NULL)
            for (k = 0; k < c; k++)
                free(q[k]);
        free(q);
        free(qh);
        free(qn);
        free(qcap);
        if (st != AFD_OK)
            goto out;
    }
    /* end to end */
    {
        double *sr = stats + ns * NSTAT;
        sr[0] = NAN;
        for (j = keep0; j < N; j++)
            buf[j - keep0] = wsum[j];
        summarize(buf, o->customers, cx->pb->p, &sr[1], &sr[2]);
        for (j = keep0; j < N; j++)
            buf[j - keep0] = arr[j] - t0[j]; /* arr holds the last departures */
        summarize(buf, o->customers, cx->pb->p, &sr[3], &sr[4]);
    }
out:
    free(wst);
    free(arr);
    free(dep);
    free(wsum);
    free(t0);
    free(buf);
    free(row);
    free(order);
    return st;
}

afd_status afd_stages_simulate(const afd_pipeline_problem *pb, const afd_stages_sim_options *o,
                               afd_stages_sim_stat *out, afd_error *err)
{
    const afd_stages *sg = pb->stages;
    rep_ctx cx;
    double *stats = NULL, *svc = NULL;
    size_t ns, i, r, k;
    int needs = 0, failed = 0;
    unsigned nt;
    afd_status st = AFD_OK;

    afd_error_clear(err);
    if (sg == NULL || sg->n == 0 || o == NULL)
        return AFD_EINVAL;
    ns = sg->n;
    for (i = 0; i <= ns; i++) {
        afd_stages_sim_stat *s = &out[i];
        s->rho = s->rho_se = s->wait_mean = s->wait_mean_se = s->wait_p = s->wait_p_se = NAN;
        s->sojourn_mean = s->sojourn_mean_se = s->sojourn_p = s->sojourn_p_se = NAN;
    }
    if (!(pb->lambda > 0) || !isfinite(pb->lambda) || !(pb->p > 0 && pb->p < 1) ||
        o->customers < 10 || o->reps < 2 || o->customers > ((uint64_t)1 << 32) ||
        o->warmup > ((uint64_t)1 << 32))
        return fail_mc(err, AFD_EINVAL,
                       "lambda > 0, 0 < p < 1, customers >= 10 and reps >= 2 required");
    for (i = 0; i < ns; i++)
        needs |= afd_stage_needs_tokens(&sg->stage[i]);
    cx.pb = pb;
    cx.o = o;
    cx.svc = NULL;
    cx.nrows = 0;
    if (needs) {
        const afd_stage_requests *rq = &pb->requests;
        if (rq->n == 0 || rq->prompt == NULL || rq->decode == NULL || rq->n >= ((size_t)1 << 32))
            return fail_mc(err, AFD_EINVAL,
                           "a stage depends on the requests' tokens: give a trace");
        cx.nrows = rq->n;
    }
    /* deterministic service of each (stage, row): one visit */
    {
        size_t rows = cx.nrows > 0 ? cx.nrows : 1;
        svc = malloc(ns * rows * sizeof *svc);
        if (svc == NULL)
            return AFD_ENOMEM;
        for (i = 0; i < ns; i++)
            for (r = 0; r < rows; r++) {
                double P = cx.nrows ? (double)pb->requests.prompt[r] : 0;
                double D = cx.nrows ? (double)pb->requests.decode[r] : 0;
                if (sg->stage[i].kind == AFD_SERVICE_EXP) {
                    svc[i * rows + r] = NAN;
                    continue;
                }
                if (afd_stage_service(&sg->stage[i], pb->hw, pb->hw_sec, P, D,
                                      &svc[i * rows + r]) != AFD_OK) {
                    free(svc);
                    return fail_mc(err, AFD_EINVAL, "stage '%s': the latency model has no %s law",
                                   sg->stage[i].name,
                                   sg->stage[i].decode_phase ? "decode" : "prefill");
                }
            }
        cx.nrows = rows == 1 && !needs ? 1 : cx.nrows;
    }
    cx.svc = svc;
    stats = malloc((size_t)o->reps * (ns + 1) * NSTAT * sizeof *stats);
    if (stats == NULL) {
        free(svc);
        return AFD_ENOMEM;
    }
    nt = afd_mc_threads(o->threads);
    (void)nt; /* unused without OpenMP */
    AFD_OMP("omp parallel for schedule(dynamic) reduction(|:failed) num_threads(nt)")
    for (long rr = 0; rr < (long)o->reps; rr++)
        if (run_rep(&cx, (unsigned)rr, stats + (size_t)rr * (ns + 1) * NSTAT) != AFD_OK)
            failed |= 1;
    if (failed) {
        st = AFD_ENOMEM;
        goto out;
    }
    for (i = 0; i <= ns; i++) {
        double mean[NSTAT] = {0}, se[NSTAT] = {0};
        /* replication r's value at stats[(r (ns + 1) + i) NSTAT + k]: two-pass
         * sample variance over the replications */
        for (k = 0; k < NSTAT; k++) {
            const double *x = stats + i * NSTAT + k;
            size_t stride = (ns + 1) * NSTAT;
            mean[k] = gsl_stats_mean(x, stride, o->reps);
            se[k] = sqrt(gsl_stats_variance_m(x, stride, o->reps, mean[k]) / o->reps);
        }
        out[i].rho = mean[0];
        out[i].rho_se = se[0];
        out[i].wait_mean = mean[1];
        out[i].wait_mean_se = se[1];
        out[i].wait_p = mean[2];
        out[i].wait_p_se = se[2];
        out[i].sojourn_mean = mean[3];
        out[i].sojourn_mean_se = se[3];
        out[i].sojourn_p = mean[4];
        out[i].sojourn_p_se = se[4];
    }
out:
    free(stats);
    free(svc);
    return st;
}
