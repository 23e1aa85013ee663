/* slot_mc.c: one decode slot under continuous batching, simulated as a
 * renewal process (Section 3.2, Lemma 4.1); see afd_mc.h. */
#include <config.h>

#include <math.h>
#include <stdlib.h>

#include "afd_mc.h"
#include "afd_philox.h"
#include "afd_sampler.h"
#include "mc_internal.h"

typedef unsigned __int128 u128;

#define LOAD_LIMIT     (UINT64_C(1) << 40) /* P + D below this */
#define STEP_LIMIT     (UINT64_C(1) << 46) /* warm-up + steps: sums of Y^2 < 2^126 */

static void set_nan(afd_slot_mc_result *out)
{
    out->mean = out->mean_se = out->mean_sq = out->mean_sq_se = NAN;
    out->batch_lifetimes = out->batch_lag1 = NAN;
    out->requests = out->steps = 0;
}

/* sum_{m=0}^{x-1} m^2 = (x-1) x (2x-1) / 6 */
static u128 sum_sq_below(uint64_t x)
{
    u128 v = x;
    return x == 0 ? 0 : (v - 1) * v * (2 * v - 1) / 6;
}

typedef struct sampler {
    const afd_workload *w;
    afd_geometric gp, gd;
    afd_priv_picker pick; /* trace: uniform request (row or counted pair) */
} sampler;

/* A request without length bias: a uniform row, or P and D drawn directly. */
static void draw_request(const sampler *s, afd_philox_cursor *c, uint64_t *p, uint64_t *d)
{
    if (s->w->kind == AFD_WORKLOAD_TRACE) {
        afd_workload_pair e =
            afd_workload_request(s->w, afd_priv_picker_draw(&s->pick, afd_philox_next(c)));
        *p = e.prompt;
        *d = e.decode;
    } else {
        double u0 = afd_philox_next(c), u1 = afd_philox_next(c);
        *p = (uint64_t)afd_geometric_draw(&s->gp, u0);
        *d = (uint64_t)afd_geometric_draw(&s->gd, u1);
    }
}

static afd_status check(const afd_slot_mc_params *p, sampler *s, double *lifetime)
{
    const afd_workload *w = p->workload;
    unsigned k = p->batches ? p->batches : AFD_SLOT_MC_BATCHES;
    if (w == NULL || k < 2 || p->steps < k || p->warmup > STEP_LIMIT ||
        p->steps > STEP_LIMIT - p->warmup)
        return AFD_EINVAL;
    s->w = w;
    s->pick.cum = NULL;
    if (w->kind == AFD_WORKLOAD_TRACE) {
        long double sd = 0, sd2 = 0;
        size_t i;
        if (afd_workload_entries(w) == 0)
            return AFD_EEMPTY;
        for (i = 0; i < afd_workload_entries(w); i++) {
            afd_workload_pair e = afd_workload_request(w, i);
            if (e.decode < 1 || e.prompt >= LOAD_LIMIT || e.decode >= LOAD_LIMIT - e.prompt)
                return AFD_EINVAL;
            sd += (long double)e.count * e.decode;
            sd2 += (long double)e.count * e.decode * e.decode;
        }
        *lifetime = (double)(sd2 / sd); /* E[D^2] / E[D] */
        return afd_priv_picker_init(&s->pick, w, 0);
    }
    if (w->kind != AFD_WORKLOAD_GEOMETRIC || !(w->mu_p >= 1 && w->mu_p <= AFD_GEOMETRIC_MAX_MEAN) ||
        !(w->mu_d >= 1 && w->mu_d <= AFD_GEOMETRIC_MAX_MEAN))
        return AFD_EINVAL;
    if (afd_geometric_init(1 / w->mu_p, &s->gp) != AFD_OK ||
        afd_geometric_init(1 / w->mu_d, &s->gd) != AFD_OK)
        return AFD_EINVAL;
    *lifetime = 2 * w->mu_d - 1; /* E[D^2]/E[D] = (2 - p)/p for the geometric law */
    return AFD_OK;
}

/* Sample mean and standard error of x[0..k-1]; lag-1 autocorrelation. */
static void batch_stats(const double *x, unsigned k, double *mean, double *se, double *lag1)
{
    double m = 0, v = 0, c = 0;
    unsigned b;
    for (b = 0; b < k; b++)
        m += x[b];
    m /= k;
    for (b = 0; b < k; b++) {
        v += (x[b] - m) * (x[b] - m);
        if (b + 1 < k)
            c += (x[b] - m) * (x[b + 1] - m);
    }
    *mean = m;
    *se = sqrt(v / (k - 1) / k);
    if (lag1 != NULL)
        *lag1 = v > 0 ? c / v : 0;
}

afd_status afd_slot_mc(const afd_slot_mc_params *p, afd_slot_mc_result *out)
{
    sampler smp;
    afd_philox_cursor cur;
    double lifetime, *m1, *m2;
    unsigned k, b = 0;
    uint64_t len, end, time = 0, requests = 0;
    u128 s1 = 0, s2 = 0;
    afd_status st;

    if (out == NULL)
        return AFD_EINVAL;
    set_nan(out);
    if (p == NULL)
        return AFD_EINVAL;
    st = check(p, &smp, &lifetime);
    if (st != AFD_OK)
        return st;
    k = p->batches ? p->batches : AFD_SLOT_MC_BATCHES;
    len = p->steps / k;
    end = p->warmup + (uint64_t)k * len;
    m1 = malloc(k * sizeof *m1);
    m2 = malloc(k * sizeof *m2);
    if (m1 == NULL || m2 == NULL) {
        free(m1);
        free(m2);
        afd_priv_picker_free(&smp.pick);
        return AFD_ENOMEM;
    }
    afd_philox_cursor_init(&cur, p->seed, p->stream, 0);
    while (time < end) {
        uint64_t pr, d, pos, stop;
        draw_request(&smp, &cur, &pr, &d);
        requests++;
        /* the request holds the slot for steps time .. time+d-1 */
        pos = time < p->warmup ? p->warmup : time;
        stop = time + d < end ? time + d : end;
        while (pos < stop) {
            uint64_t bend = p->warmup + (uint64_t)(b + 1) * len;
            uint64_t seg = stop < bend ? stop : bend;
            uint64_t a0 = pos - time, a1 = seg - time, n = a1 - a0;
            /* sum of P + a and of (P + a)^2 over ages a0 .. a1-1 */
            s1 += (u128)n * pr + (u128)(a0 + a1 - 1) * n / 2;
            s2 += sum_sq_below(pr + a1) - sum_sq_below(pr + a0);
            pos = seg;
            if (pos == bend) {
                m1[b] = (double)((long double)s1 / len);
                m2[b] = (double)((long double)s2 / len);
                s1 = s2 = 0;
                b++;
            }
        }
        time += d;
        if (p->progress != NULL && (requests & 0xffff) == 0)
            p->progress(p->progress_ctx, time < end ? time : end, end);
    }
    if (p->progress != NULL)
        p->progress(p->progress_ctx, end, end);
    batch_stats(m1, k, &out->mean, &out->mean_se, &out->batch_lag1);
    batch_stats(m2, k, &out->mean_sq, &out->mean_sq_se, NULL);
    out->requests = requests;
    out->steps = (uint64_t)k * len;
    out->batch_lifetimes = (double)len / lifetime;
    free(m1);
    free(m2);
    afd_priv_picker_free(&smp.pick);
    return AFD_OK;
}
