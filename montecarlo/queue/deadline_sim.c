/* deadline_sim.c: event simulation of the c-server queue with a deadline on
 * the wait under FCFS, SJF, EDF and least-slack orderings; see afd_dlsim.h. */
#include <config.h>

#include <math.h>
#include <stddef.h>
#include <stdlib.h>

#include <gsl/gsl_statistics_double.h>
#include <string.h>

#include "afd_dlsim.h"
#include "afd_event.h"
#include "afd_mc.h"
#include "afd_philox.h"
#include "mc_internal.h"

#define DEFAULT_RUNS 16u

static const char *const order_names[] = {"fcfs", "sjf", "edf", "slack"};

const char *afd_order_name(afd_order order)
{
    return (unsigned)order < 4 ? order_names[order] : NULL;
}

afd_status afd_order_parse(const char *name, afd_order *order)
{
    unsigned i;
    for (i = 0; name != NULL && i < 4; i++)
        if (strcmp(name, order_names[i]) == 0) {
            if (order)
                *order = (afd_order)i;
            return AFD_OK;
        }
    return AFD_EINVAL;
}

/* A waiting request.  The waiting line is an event heap (afd_event.h)
 * keyed by the policy's order; equal keys leave in arrival order (the
 * heap's push order).  Its events carry the index of the request's slot in
 * a pool, reused once the request leaves the line. */
typedef struct req {
    double arrival;
    double service;
    unsigned char measured, is_long;
} req;

typedef struct waitline {
    afd_event_heap h;
    req *r;        /* the pool */
    size_t *spare; /* free slots of the pool */
    size_t nspare, used, cap;
} waitline;

static afd_status line_init(waitline *w, size_t cap)
{
    memset(w, 0, sizeof *w);
    w->r = malloc(cap * sizeof *w->r);
    w->spare = malloc(cap * sizeof *w->spare);
    w->cap = cap;
    if (afd_event_heap_init(&w->h, cap) != AFD_OK || w->r == NULL || w->spare == NULL)
        return AFD_ENOMEM;
    return AFD_OK;
}

static void line_free(waitline *w)
{
    afd_event_heap_free(&w->h);
    free(w->r);
    free(w->spare);
}

static afd_status line_push(waitline *w, double key, const req *e)
{
    size_t slot;
    if (w->nspare > 0) {
        slot = w->spare[--w->nspare];
    } else {
        if (w->used == w->cap) {
            req *nr = realloc(w->r, 2 * w->cap * sizeof *nr);
            size_t *ns;
            if (nr == NULL)
                return AFD_ENOMEM;
            w->r = nr;
            ns = realloc(w->spare, 2 * w->cap * sizeof *ns);
            if (ns == NULL)
                return AFD_ENOMEM;
            w->spare = ns;
            w->cap *= 2;
        }
        slot = w->used++;
    }
    w->r[slot] = *e;
    if (afd_event_heap_push(&w->h, key, slot, 0) != AFD_OK) {
        w->spare[w->nspare++] = slot;
        return AFD_ENOMEM;
    }
    return AFD_OK;
}

/* The request of event i of the heap. */
static const req *line_at(const waitline *w, size_t i)
{
    return &w->r[w->h.e[i].id];
}

static void line_release(waitline *w, uint64_t slot)
{
    w->spare[w->nspare++] = (size_t)slot;
}

/* Remove the first request of the line (not empty). */
static req line_pop(waitline *w)
{
    afd_event ev;
    (void)afd_event_heap_pop(&w->h, &ev);
    line_release(w, ev.id);
    return w->r[ev.id];
}

/* Min-heap of the servers' free times (afd_event.h): replace the root. */
static void free_replace(afd_event_heap *h, double v)
{
    (void)afd_event_heap_replace_top(h, v, h->e[0].id, 0);
}


/* Per-run values. */
enum { V_POFF, V_WAIT, V_WQ, V_TTFT, V_LPOFF, V_LWAIT, V_LWQ, V_LFRAC, NV };

typedef struct run_ctx {
    const afd_dlsim_params *p;
    double es, slo, q;
} run_ctx;

/* Draw the service of customer n from uniform u; *key its SJF key. */
static double draw(const afd_dlsim_params *p, double u, double *key)
{
    double s;
    if (p->samples != NULL) {
        uint64_t row = (uint64_t)(u * (double)p->rows);
        if (row >= p->rows)
            row = p->rows - 1;
        s = p->samples[row];
        *key = p->keys != NULL ? p->keys[row] : s;
        return s;
    }
    s = p->exp_mean > 0 ? -log(u) * p->exp_mean : p->service;
    *key = s;
    return s;
}

static double order_key(const afd_dlsim_params *p, double slo, double a, double s, double skey)
{
    switch (p->order) {
    case AFD_ORDER_SJF:
        return skey;
    case AFD_ORDER_EDF:
        return a + slo;
    case AFD_ORDER_SLACK:
        return a + slo - s;
    case AFD_ORDER_FCFS:
    default:
        return a;
    }
}

typedef struct acc {
    uint64_t n, off, nlong, offlong;
    double *wait, *lwait, *ttft_sum;
    size_t nw, nlw;
    double wsum, lwsum, tsum;
} acc;

static void record_start(acc *ac, const req *e, double start)
{
    double w = start - e->arrival;
    if (!e->measured)
        return;
    ac->wait[ac->nw++] = w;
    ac->wsum += w;
    ac->tsum += w + e->service;
    if (e->is_long) {
        ac->lwait[ac->nlw++] = w;
        ac->lwsum += w;
    }
}

static void record_off(acc *ac, const req *e)
{
    if (!e->measured)
        return;
    ac->off++;
    if (e->is_long)
        ac->offlong++;
}

/* One run; v[NV] gets its values.  Returns AFD_OK or AFD_ENOMEM. */
static afd_status run(const run_ctx *cx, uint64_t r, double *v)
{
    const afd_dlsim_params *p = cx->p;
    uint64_t total = p->warmup + p->customers, n_arr = 0, unresolved = 0;
    size_t last_compact = 1024;
    double ta, a_last = 0, d = p->deadline;
    afd_event_heap freeh; /* the servers' free times */
    waitline wl;
    acc ac;
    afd_philox_cursor cur;
    afd_status st = AFD_OK;
    unsigned k;

    memset(&ac, 0, sizeof ac);
    ac.wait = malloc(p->customers * sizeof *ac.wait);
    ac.lwait = malloc(p->customers * sizeof *ac.lwait);
    st = afd_event_heap_init(&freeh, p->c);
    for (k = 0; k < p->c && st == AFD_OK; k++)
        st = afd_event_heap_push(&freeh, 0, k, 0); /* every server free at 0 */
    if (line_init(&wl, 1024) != AFD_OK || st != AFD_OK || ac.wait == NULL || ac.lwait == NULL) {
        st = AFD_ENOMEM;
        goto done;
    }
    afd_philox_cursor_init(&cur, p->seed, p->stream + r, 0);
    ta = -log(afd_philox_next(&cur)) / p->lambda;

    for (;;) {
        double tf = freeh.e[0].time;
        size_t qn = wl.h.n;
        int server_next = qn > 0 && tf <= ta;
        if (n_arr >= total) {
            double te = server_next ? tf : ta;
            if (unresolved == 0)
                break;
            if (isfinite(d) && te > a_last + d) {
                /* every measured request still waiting has passed its deadline */
                size_t i;
                for (i = 0; i < qn; i++)
                    record_off(&ac, line_at(&wl, i));
                break;
            }
        }
        if (server_next) {
            while (wl.h.n > 0) {
                req e = line_pop(&wl);
                if (e.measured)
                    unresolved--;
                if (e.arrival + d < tf) {
                    record_off(&ac, &e);
                    continue;
                }
                record_start(&ac, &e, tf);
                free_replace(&freeh, tf + e.service);
                break;
            }
        } else {
            req e;
            double u = afd_philox_next(&cur), skey, key;
            e.arrival = ta;
            e.service = draw(p, u, &skey);
            key = order_key(p, cx->slo, ta, e.service, skey);
            e.measured = n_arr >= p->warmup && n_arr < total;
            e.is_long = e.service >= p->long_threshold;
            if (e.measured) {
                ac.n++;
                ac.nlong += e.is_long;
                a_last = ta;
            }
            if (qn == 0 && tf <= ta) {
                record_start(&ac, &e, ta);
                free_replace(&freeh, ta + e.service);
            } else {
                if (line_push(&wl, key, &e) != AFD_OK) {
                    st = AFD_ENOMEM;
                    goto done;
                }
                if (e.measured)
                    unresolved++;
            }
            n_arr++;
            ta += -log(afd_philox_next(&cur)) / p->lambda;
            /* Under a priority order expired requests can sink deep in the
             * heap: drop them whenever the heap has doubled. */
            if (isfinite(d) && p->order != AFD_ORDER_FCFS && p->order != AFD_ORDER_EDF &&
                wl.h.n >= 2 * last_compact) {
                size_t i, kept = 0;
                double now = e.arrival;
                for (i = 0; i < wl.h.n; i++) {
                    const req *w = line_at(&wl, i);
                    if (w->arrival + d < now) {
                        if (w->measured)
                            unresolved--;
                        record_off(&ac, w);
                        line_release(&wl, wl.h.e[i].id);
                    } else {
                        wl.h.e[kept++] = wl.h.e[i];
                    }
                }
                wl.h.n = kept;
                afd_event_heap_heapify(&wl.h);
                last_compact = kept > 1024 ? kept : 1024;
            }
        }
    }

    v[V_POFF] = (double)ac.off / (double)ac.n;
    v[V_WAIT] = ac.nw ? ac.wsum / (double)ac.nw : NAN;
    v[V_TTFT] = ac.nw ? ac.tsum / (double)ac.nw : NAN;
    v[V_WQ] = afd_priv_quantile(ac.wait, ac.nw, cx->q);
    v[V_LFRAC] = (double)ac.nlong / (double)ac.n;
    v[V_LPOFF] = ac.nlong ? (double)ac.offlong / (double)ac.nlong : NAN;
    v[V_LWAIT] = ac.nlw ? ac.lwsum / (double)ac.nlw : NAN;
    v[V_LWQ] = afd_priv_quantile(ac.lwait, ac.nlw, cx->q);
done:
    afd_event_heap_free(&freeh);
    line_free(&wl);
    free(ac.wait);
    free(ac.lwait);
    return st;
}

/* The mean of k per-run values (every stride-th) and its standard error,
 * the two-pass sample variance over k. */
static void mean_se(const double *v, unsigned k, unsigned stride, double *m, double *se)
{
    *m = gsl_stats_mean(v, stride, k);
    *se = sqrt(gsl_stats_variance_m(v, stride, k, *m) / k);
}

afd_status afd_dlsim(const afd_dlsim_params *p, afd_dlsim_result *out)
{
    run_ctx cx;
    unsigned k, laws, nt;
    double *vals;
    int failed = 0;
    uint64_t runs_done = 0;
    long long i;
    size_t j;

    if (out == NULL)
        return AFD_EINVAL;
    {
        double *f = (double *)out;
        for (j = 0; j < offsetof(afd_dlsim_result, customers) / sizeof(double); j++)
            f[j] = NAN;
        out->customers = 0;
    }
    if (p == NULL)
        return AFD_EINVAL;
    k = p->replications ? p->replications : DEFAULT_RUNS;
    cx.p = p;
    cx.q = p->quantile == 0 ? 0.9 : p->quantile;
    cx.slo = p->slo > 0 ? p->slo : p->deadline;
    laws = (p->service != 0) + (p->exp_mean != 0) + (p->samples != NULL);
    if (laws != 1 || p->c < 1 || !(p->lambda > 0) || !isfinite(p->lambda) ||
        !(p->deadline >= 0) || k < 2 || p->customers < 1 || !(cx.q > 0 && cx.q < 1) ||
        (unsigned)p->order > AFD_ORDER_SLACK || !(p->slo >= 0) || isnan(p->long_threshold))
        return AFD_EINVAL;
    if (p->c > AFD_DLSIM_MAX_SERVERS || p->customers > AFD_DLSIM_MAX_CUSTOMERS ||
        p->warmup > AFD_DLSIM_MAX_CUSTOMERS)
        return AFD_ENOMEM;
    if (p->samples != NULL) {
        long double s = 0;
        uint64_t r;
        if (p->rows == 0)
            return AFD_EINVAL;
        for (r = 0; r < p->rows; r++) {
            if (!(p->samples[r] >= 0) || !isfinite(p->samples[r]) ||
                (p->keys != NULL && !isfinite(p->keys[r])))
                return AFD_EINVAL;
            s += p->samples[r];
        }
        cx.es = (double)(s / (long double)p->rows);
        if (!(cx.es > 0))
            return AFD_EINVAL;
    } else if (p->exp_mean != 0) {
        if (!(p->exp_mean > 0) || !isfinite(p->exp_mean))
            return AFD_EINVAL;
        cx.es = p->exp_mean;
    } else {
        if (!(p->service > 0) || !isfinite(p->service))
            return AFD_EINVAL;
        cx.es = p->service;
    }
    if (!isfinite(cx.slo) && (p->order == AFD_ORDER_EDF || p->order == AFD_ORDER_SLACK) &&
        !(p->slo > 0))
        cx.slo = 0; /* no deadline: EDF orders by arrival, SLACK by a - S */
    if (isinf(p->deadline) && !(p->lambda * cx.es / p->c < 1))
        return AFD_EUNSTABLE;

    vals = malloc((size_t)k * NV * sizeof *vals);
    if (vals == NULL)
        return AFD_ENOMEM;
    nt = afd_mc_threads(p->threads);
    (void)nt; /* unused without OpenMP */
    AFD_OMP("omp parallel for schedule(dynamic, 1) num_threads(nt)")
    for (i = 0; i < (long long)k; i++) {
        int bad;
        AFD_OMP("omp atomic read")
        bad = failed;
        if (!bad && run(&cx, (uint64_t)i, vals + (size_t)i * NV) != AFD_OK) {
            AFD_OMP("omp atomic write")
            failed = 1;
        }
        if (p->progress != NULL) {
            AFD_OMP("omp critical(afd_dlsim_progress)")
            p->progress(p->progress_ctx, ++runs_done, (uint64_t)k);
        }
    }
    if (failed) {
        free(vals);
        return AFD_ENOMEM;
    }
    mean_se(vals + V_POFF, k, NV, &out->p_off, &out->p_off_se);
    mean_se(vals + V_WAIT, k, NV, &out->wait_mean, &out->wait_mean_se);
    mean_se(vals + V_WQ, k, NV, &out->wait_q, &out->wait_q_se);
    mean_se(vals + V_TTFT, k, NV, &out->ttft_mean, &out->ttft_mean_se);
    mean_se(vals + V_LPOFF, k, NV, &out->long_p_off, &out->long_p_off_se);
    mean_se(vals + V_LWAIT, k, NV, &out->long_wait_mean, &out->long_wait_mean_se);
    mean_se(vals + V_LWQ, k, NV, &out->long_wait_q, &out->long_wait_q_se);
    {
        double se;
        mean_se(vals + V_LFRAC, k, NV, &out->long_fraction, &se);
    }
    out->served_rate = p->lambda * (1 - out->p_off);
    out->served_rate_se = p->lambda * out->p_off_se;
    out->offload_rate = p->lambda * out->p_off;
    out->offload_rate_se = p->lambda * out->p_off_se;
    out->service_mean = cx.es;
    out->rho = p->lambda * cx.es / p->c;
    out->customers = (uint64_t)k * p->customers;
    free(vals);
    return AFD_OK;
}
