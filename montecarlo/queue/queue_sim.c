/* queue_sim.c: FCFS multi-server queue with Poisson arrivals, by the
 * Kiefer-Wolfowitz workload recursion; see afd_mc.h. */
#include <config.h>

#include <math.h>
#include <stdlib.h>

#include "afd_event.h"
#include "afd_mc.h"
#include "afd_philox.h"
#include "mc_internal.h"

#define CHUNK        1024                /* customers per uniform buffer */
#define REBASE       (UINT64_C(1) << 16) /* customers between time rebases */
#define WARMUP_LIMIT (UINT64_C(1) << 50)

static void set_nan(afd_queue_sim_result *out)
{
    out->wait_mean = out->wait_mean_se = out->p_wait = out->p_wait_se = NAN;
    out->wait_q = out->wait_q_se = out->service_mean = out->rho = NAN;
    out->sojourn_mean = out->sojourn_mean_se = out->sojourn_q = out->sojourn_q_se = NAN;
    out->customers = 0;
}


/* The service law of p: E[S] (*es), and with a trace the service time of
 * every kept row (*svc, when svc is not NULL).  E[S] is the deterministic
 * time, or the mean of service_fn over the rows (each weight 1/n: a row is
 * drawn uniformly), summed in long double. */
static afd_status service_times(const afd_queue_sim_params *p, double **svc, double *es)
{
    size_t i, n;
    long double sum = 0;
    double *s;
    if (svc != NULL)
        *svc = NULL;
    if (p->trace == NULL) {
        if (!(p->service > 0) || !isfinite(p->service))
            return AFD_EINVAL;
        *es = p->service;
        return AFD_OK;
    }
    if (p->trace->kind != AFD_WORKLOAD_TRACE || p->service_fn == NULL)
        return AFD_EINVAL;
    if (p->trace->n_kept == 0 || p->trace->prompt == NULL)
        return AFD_EEMPTY;
    n = p->trace->n_kept;
    s = malloc(n * sizeof *s);
    if (s == NULL)
        return AFD_ENOMEM;
    for (i = 0; i < n; i++) {
        s[i] = p->service_fn(p->trace->prompt[i], p->service_ctx);
        if (!(s[i] >= 0) || !isfinite(s[i])) {
            free(s);
            return AFD_EINVAL;
        }
        sum += s[i];
    }
    *es = (double)(sum / n);
    if (svc != NULL)
        *svc = s;
    else
        free(s);
    return AFD_OK;
}

/* Validate p; fill the service time of every trace row (*svc) and E[S]. */
static afd_status prepare(const afd_queue_sim_params *p, double **svc, double *es)
{
    unsigned k = p->batches ? p->batches : AFD_QUEUE_SIM_BATCHES;
    double q = p->quantile == 0 ? 0.9 : p->quantile;
    *svc = NULL;
    if (p->replay) {
        size_t i;
        if (p->c < 1 || k < 2 || !(q > 0 && q < 1) || p->trace == NULL ||
            p->trace->time == NULL || !(p->time_scale > 0) || !isfinite(p->time_scale))
            return AFD_EINVAL;
        for (i = 1; i < p->trace->n_kept; i++)
            if (!(p->trace->time[i] >= p->trace->time[i - 1]))
                return AFD_EINVAL;
        if (p->trace->n_kept < 2 || p->trace->n_kept - 1 < p->warmup + k)
            return AFD_EEMPTY;
        if (p->c > AFD_QUEUE_SIM_MAX_SERVERS || p->trace->n_kept > AFD_QUEUE_SIM_MAX_CUSTOMERS)
            return AFD_ELIMIT;
    } else {
        if (p->c < 1 || !(p->lambda > 0) || !isfinite(p->lambda) || k < 2 ||
            p->customers < k || !(q > 0 && q < 1) || p->warmup > WARMUP_LIMIT)
            return AFD_EINVAL;
        if (p->c > AFD_QUEUE_SIM_MAX_SERVERS || p->customers > AFD_QUEUE_SIM_MAX_CUSTOMERS)
            return AFD_ELIMIT;
    }
    return service_times(p, svc, es);
}

double afd_quad_service_time(uint64_t prompt, void *ctx)
{
    const afd_quad_service *q = ctx;
    double P = (double)prompt;
    /* BestServe's prefill law for a batch of one prompt, a + b P + c P^2
     * (afd_hw.h; afd_prefill_times computes the same). */
    return q->a + q->b * P + q->c * P * P;
}

afd_status afd_queue_sim_service_mean(const afd_queue_sim_params *p, double *es)
{
    double *svc = NULL;
    afd_status st;
    if (es == NULL)
        return AFD_EINVAL;
    *es = NAN;
    if (p == NULL)
        return AFD_EINVAL;
    st = service_times(p, p->trace != NULL ? &svc : NULL, es);
    free(svc);
    return st;
}

afd_status afd_queue_sim(const afd_queue_sim_params *p, afd_queue_sim_result *out)
{
    afd_event_heap heap; /* the servers' free times */
    double *svc, *wait = NULL, *soj = NULL, *u = NULL, *bm = NULL, *bp = NULL;
    double *bq = NULL, *bs = NULL, *bsq = NULL;
    double es, q, t = 0, nrows, lambda;
    uint64_t n, total, len, m, warmup;
    unsigned k, b;
    afd_status st;

    if (out == NULL)
        return AFD_EINVAL;
    set_nan(out);
    if (p == NULL)
        return AFD_EINVAL;
    st = prepare(p, &svc, &es);
    if (st != AFD_OK)
        return st;
    if (afd_event_heap_init(&heap, p->c) != AFD_OK) {
        free(svc);
        return AFD_ENOMEM;
    }
    k = p->batches ? p->batches : AFD_QUEUE_SIM_BATCHES;
    q = p->quantile == 0 ? 0.9 : p->quantile;
    warmup = p->warmup;
    lambda = p->lambda;
    if (p->replay) {
        const double *tm = p->trace->time;
        size_t nk = p->trace->n_kept;
        double span = (tm[nk - 1] - tm[0]) * p->time_scale;
        lambda = span > 0 ? (double)(nk - 1) / span : INFINITY;
        len = (nk - warmup) / k;
    } else {
        len = p->customers / k;
    }
    if (!(lambda * es / p->c < 1)) {
        free(svc);
        afd_event_heap_free(&heap);
        return AFD_EUNSTABLE;
    }
    m = (uint64_t)k * len;
    total = warmup + m;
    nrows = svc != NULL ? (double)p->trace->n_kept : 0;
    for (b = 0; b < p->c; b++) /* all servers free at time 0 (room reserved) */
        (void)afd_event_heap_push(&heap, 0, b, 0);
    wait = malloc(m * sizeof *wait);
    soj = malloc(m * sizeof *soj);
    u = malloc(2 * CHUNK * sizeof *u);
    bm = malloc(5 * k * sizeof *bm);
    if (wait == NULL || soj == NULL || u == NULL || bm == NULL) {
        st = AFD_ENOMEM;
        goto done;
    }
    bp = bm + k;
    bq = bp + k;
    bs = bq + k;
    bsq = bs + k;

    for (n = 0; n < total; n++) {
        size_t i = (size_t)(n % CHUNK);
        double s, w;
        if (p->replay) {
            /* customer n is row n, at its own time */
            t = (p->trace->time[n] - p->trace->time[0]) * p->time_scale;
            s = svc[n];
        } else {
            if (i == 0)
                afd_philox_fill_u01(p->seed, p->stream, 2 * n, 2 * CHUNK, u);
            t += -log(u[2 * i]) / p->lambda; /* arrival of customer n */
            if (svc != NULL) {
                size_t row = (size_t)(u[2 * i + 1] * nrows);
                s = svc[row < p->trace->n_kept ? row : p->trace->n_kept - 1];
            } else {
                s = p->service;
            }
        }
        w = heap.e[0].time > t ? heap.e[0].time - t : 0; /* the earliest free server */
        (void)afd_event_heap_replace_top(&heap, t + w + s, heap.e[0].id, 0);
        if (n >= warmup) {
            wait[n - warmup] = w;
            soj[n - warmup] = w + s;
        }
        if (!p->replay && (n + 1) % REBASE == 0) { /* keep times small: shift the origin to t */
            size_t j;
            for (j = 0; j < p->c; j++)
                heap.e[j].time = heap.e[j].time > t ? heap.e[j].time - t : 0;
            afd_event_heap_heapify(&heap);
            t = 0;
        }
        if (p->progress != NULL && ((n + 1) % REBASE == 0 || n + 1 == total))
            p->progress(p->progress_ctx, n + 1, total);
    }

    for (b = 0; b < k; b++) {
        double *x = wait + (size_t)b * len, *y = soj + (size_t)b * len, sum = 0, ssum = 0;
        uint64_t busy = 0, j;
        for (j = 0; j < len; j++) {
            sum += x[j];
            ssum += y[j];
            busy += x[j] > 0;
        }
        bm[b] = sum / (double)len;
        bp[b] = (double)busy / (double)len;
        bs[b] = ssum / (double)len;
        bq[b] = afd_priv_quantile(x, (size_t)len, q); /* reorders the batch only */
        bsq[b] = afd_priv_quantile(y, (size_t)len, q);
    }
    afd_priv_batch_mean_se(bm, NULL, k, &out->wait_mean, &out->wait_mean_se);
    afd_priv_batch_mean_se(bp, NULL, k, &out->p_wait, &out->p_wait_se);
    afd_priv_batch_mean_se(bq, NULL, k, &out->wait_q, &out->wait_q_se);
    afd_priv_batch_mean_se(bs, NULL, k, &out->sojourn_mean, &out->sojourn_mean_se);
    afd_priv_batch_mean_se(bsq, NULL, k, &out->sojourn_q, &out->sojourn_q_se);
    out->wait_q = afd_priv_quantile(wait, (size_t)m, q);
    out->sojourn_q = afd_priv_quantile(soj, (size_t)m, q);
    out->service_mean = es;
    out->rho = lambda * es / p->c;
    out->customers = m;
done:
    free(svc);
    afd_event_heap_free(&heap);
    free(wait);
    free(soj);
    free(u);
    free(bm);
    return st;
}

afd_status afd_queue_replay_pool(const afd_queue_sim_params *p, double slo, unsigned c_lo,
                                 unsigned c_max, unsigned *c, afd_queue_sim_result *res)
{
    afd_queue_sim_params q = *p;
    unsigned cc;
    *c = 0;
    if (!p->replay || !(slo > 0) || c_lo < 1)
        return AFD_EINVAL;
    for (cc = c_lo; cc <= c_max; cc++) {
        afd_status st;
        q.c = cc;
        st = afd_queue_sim(&q, res);
        if (st == AFD_EUNSTABLE)
            continue;
        if (st != AFD_OK)
            return st;
        if (res->sojourn_q <= slo) {
            *c = cc;
            return AFD_OK;
        }
    }
    return AFD_EEMPTY;
}
