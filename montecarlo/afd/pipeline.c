/* pipeline.c: the xA-yF decode pipeline, step by step (see afd_pipeline.h). */
#include <config.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "afd_event.h"
#include "afd_philox.h"
#include "afd_pipeline.h"
#include "afd_sampler.h"
#include "mc_internal.h"

#define MAX_B (1u << 20)
#define MAX_LEN ((double)(UINT64_C(1) << 40))

/* Finishing steps of one micro-batch: a calendar of WHEEL buckets indexed by
 * step (a finishing step less than WHEEL steps ahead goes straight into its
 * bucket, a later one into an overflow event heap and moves into its bucket
 * when it comes within range, those finishing at the same step in slot
 * order).  Buckets are FIFO lists, so requests finishing at the same step
 * are handled in insertion order.  O(1) per request except for the rare
 * lifetimes above WHEEL. */
#define WHEEL 4096u

struct calendar {
    int32_t head[WHEEL], tail[WHEEL];
    int32_t *next; /* per slot: the next slot in its bucket, -1 at the end */
    afd_event_heap overflow; /* time: the finishing step; id: the slot */
};

struct sim {
    const afd_pipeline_params *p;
    unsigned x, m, B;
    size_t per_mb; /* x * B */
    /* per slot, index k * per_mb + j * B + b */
    double *P, *D, *age0, *admit;
    unsigned char *partial; /* started before time 0: excluded from TPOT */
    uint64_t *T;            /* load of (k, j), index k * x + j */
    struct calendar *cal;   /* per micro-batch */
    afd_philox_cursor *cur; /* per (j, k), index j * m + k */
    afd_event *moving;      /* overflow entries moving into buckets */
    afd_geometric gp, gd;
    afd_priv_picker pick;   /* trace: requests drawn uniformly (new ones), or
                               weighted by D (stationary start, during setup) */
    double *afree, *busy_a, *dur;
    double *ret;            /* per micro-batch: return time of its last step */
    double *step_time;      /* return time of every step */
    size_t n_steps, cap_steps;
    double *tpot_v;         /* TPOT of every request counted in tpot */
    size_t n_tpot, cap_tpot;
};

/* Finishing step, then slot. */
static int by_step_slot(const void *a, const void *b)
{
    const afd_event *x = a, *y = b;
    if (x->time != y->time)
        return x->time < y->time ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

static void bucket_append(struct calendar *c, uint64_t n_end, uint32_t slot)
{
    unsigned b = (unsigned)(n_end & (WHEEL - 1));
    c->next[slot] = -1;
    if (c->head[b] < 0)
        c->head[b] = (int32_t)slot;
    else
        c->next[c->tail[b]] = (int32_t)slot;
    c->tail[b] = (int32_t)slot;
}

/* Schedule slot to finish at step n_end >= n, the current step being n.
 * AFD_ENOMEM if the overflow heap cannot grow. */
static afd_status schedule(struct calendar *c, uint64_t n, uint64_t n_end, uint32_t slot)
{
    if (n_end - n >= WHEEL)
        return afd_event_heap_push(&c->overflow, (double)n_end, slot, 0);
    bucket_append(c, n_end, slot);
    return AFD_OK;
}

/* Move overflow entries that come within WHEEL steps of step n into their
 * buckets, by finishing step and then slot.  moving has room for every slot. */
static void migrate(struct calendar *c, uint64_t n, afd_event *moving)
{
    size_t i, k = 0;
    while (c->overflow.n > 0 && (uint64_t)c->overflow.e[0].time - n < WHEEL)
        (void)afd_event_heap_pop(&c->overflow, &moving[k++]);
    if (k > 1)
        qsort(moving, k, sizeof *moving, by_step_slot);
    for (i = 0; i < k; i++)
        bucket_append(c, (uint64_t)moving[i].time, (uint32_t)moving[i].id);
}

/* A new request, drawn without length bias (the arrival law). */
static void draw_new(struct sim *s, afd_philox_cursor *c, double *P, double *D)
{
    const afd_workload *w = s->p->workload;
    if (w->kind == AFD_WORKLOAD_GEOMETRIC) {
        *P = afd_geometric_draw(&s->gp, afd_philox_next(c));
        *D = afd_geometric_draw(&s->gd, afd_philox_next(c));
    } else {
        afd_workload_pair e =
            afd_workload_request(w, afd_priv_picker_draw(&s->pick, afd_philox_next(c)));
        *P = (double)e.prompt;
        *D = (double)e.decode;
    }
}

/* A request in the stationary state: length-biased lifetime, uniform age.
 * Geometric model: by memorylessness the age is Geometric{0,1,..}(1/mu_d)
 * and the remaining life Geometric{1,2,..}(1/mu_d), independent (the
 * length-biased lifetime is their sum); P keeps its law. */
static void draw_stationary(struct sim *s, afd_philox_cursor *c, double *P, double *D,
                            double *age)
{
    const afd_workload *w = s->p->workload;
    if (w->kind == AFD_WORKLOAD_GEOMETRIC) {
        *P = afd_geometric_draw(&s->gp, afd_philox_next(c));
        *age = afd_geometric_draw(&s->gd, afd_philox_next(c)) - 1;
        *D = *age + afd_geometric_draw(&s->gd, afd_philox_next(c));
    } else {
        /* u2 is not used (it was the alias coin): three uniforms per draw */
        double u1 = afd_philox_next(c), u2 = afd_philox_next(c);
        afd_workload_pair e = afd_workload_request(w, afd_priv_picker_draw(&s->pick, u1));
        (void)u2;
        *P = (double)e.prompt;
        *D = (double)e.decode;
        *age = floor(afd_philox_next(c) * *D);
        if (*age > *D - 1)
            *age = *D - 1;
    }
}

const double afd_pipeline_tpot_levels[AFD_PIPELINE_TPOT_NQ] = {0.5, 0.9, 0.99};

/* The TPOT quantiles of v[0..n) (completion order) and their batch-means
 * standard errors (the sample variance of the batch quantiles by GSL's
 * two-pass gsl_stats_variance); v is sorted in place, one batch at a time,
 * then whole.  e holds AFD_PIPELINE_TPOT_NQ * batches doubles. */
static void tpot_quantiles(double *v, size_t n, unsigned batches, double *e,
                           afd_pipeline_result *out)
{
    size_t per = n / batches, b;
    int q;
    if (per < 2)
        return;
    for (b = 0; b < batches; b++) {
        /* the last batch takes the remainder */
        double *x = v + b * per;
        size_t len = b + 1 == batches ? n - b * per : per;
        gsl_sort(x, 1, len);
        for (q = 0; q < AFD_PIPELINE_TPOT_NQ; q++)
            e[(size_t)q * batches + b] =
                gsl_stats_quantile_from_sorted_data(x, 1, len, afd_pipeline_tpot_levels[q]);
    }
    gsl_sort(v, 1, n);
    for (q = 0; q < AFD_PIPELINE_TPOT_NQ; q++) {
        double var = gsl_stats_variance(e + (size_t)q * batches, 1, batches);
        out->tpot_q[q] = gsl_stats_quantile_from_sorted_data(v, 1, n, afd_pipeline_tpot_levels[q]);
        out->tpot_q_se[q] = sqrt(var / batches);
    }
}

static void result_nan(afd_pipeline_result *r)
{
    int q;
    for (q = 0; q < AFD_PIPELINE_TPOT_NQ; q++)
        r->tpot_q[q] = r->tpot_q_se[q] = NAN;
    r->thr_sim = r->tpot = r->eta_a = r->eta_f = NAN;
    r->thr_steady = r->thr_steady_se = r->tau = r->barrier = r->t_end = NAN;
    r->completed = r->steps = 0;
}

static void sim_free(struct sim *s)
{
    unsigned k;
    free(s->P);
    free(s->D);
    free(s->age0);
    free(s->admit);
    free(s->partial);
    free(s->T);
    if (s->cal != NULL)
        for (k = 0; k < s->m; k++) {
            free(s->cal[k].next);
            afd_event_heap_free(&s->cal[k].overflow);
        }
    free(s->cal);
    free(s->cur);
    free(s->moving);
    afd_priv_picker_free(&s->pick);
    free(s->afree);
    free(s->busy_a);
    free(s->dur);
    free(s->ret);
    free(s->step_time);
    free(s->tpot_v);
}

afd_status afd_pipeline_check(const afd_pipeline_params *p)
{
    const afd_workload *w = p->workload;
    size_t i;
    if ((double)p->x * p->microbatches * p->B > (double)AFD_PIPELINE_MAX_SLOTS)
        return AFD_ELIMIT;
    if (w == NULL || p->x < 1 || p->y < 1 || p->B < 1 || p->B > MAX_B || p->microbatches < 1 ||
        p->requests < 1 || !(p->warmup >= 0 && p->warmup < 1) || p->batches < 2 ||
        afd_hw_check(&p->hw, NULL) != AFD_OK)
        return AFD_EINVAL;
    if (w->kind == AFD_WORKLOAD_GEOMETRIC)
        return w->mu_p >= 1 && w->mu_p <= AFD_GEOMETRIC_MAX_MEAN && w->mu_d >= 1 &&
                       w->mu_d <= AFD_GEOMETRIC_MAX_MEAN
                   ? AFD_OK
                   : AFD_EINVAL;
    if (w->kind != AFD_WORKLOAD_TRACE)
        return AFD_EINVAL;
    if (afd_workload_entries(w) == 0)
        return AFD_EEMPTY;
    for (i = 0; i < afd_workload_entries(w); i++) {
        afd_workload_pair e = afd_workload_request(w, i);
        if (e.decode < 1 || (double)e.prompt + (double)e.decode >= MAX_LEN)
            return AFD_EINVAL;
    }
    return AFD_OK;
}

uint64_t afd_pipeline_stream_base(unsigned x, unsigned y)
{
    return ((uint64_t)x << 44) ^ ((uint64_t)y << 24);
}

uint64_t afd_pipeline_stream(const afd_pipeline_params *p, unsigned worker, unsigned microbatch)
{
    return p->stream_base + (uint64_t)worker * p->microbatches + microbatch;
}

static afd_status setup(struct sim *s, const afd_pipeline_params *p)
{
    const afd_workload *w = p->workload;
    size_t nslots, k, j;
    memset(s, 0, sizeof *s);
    s->p = p;
    s->x = p->x;
    s->m = p->microbatches;
    s->B = p->B;
    s->per_mb = (size_t)p->x * p->B;
    nslots = s->per_mb * s->m;
    s->P = malloc(nslots * sizeof *s->P);
    s->D = malloc(nslots * sizeof *s->D);
    s->age0 = malloc(nslots * sizeof *s->age0);
    s->admit = malloc(nslots * sizeof *s->admit);
    s->partial = malloc(nslots);
    s->T = calloc((size_t)s->x * s->m, sizeof *s->T);
    s->cal = calloc(s->m, sizeof *s->cal);
    s->cur = malloc((size_t)s->x * s->m * sizeof *s->cur);
    s->moving = malloc(s->per_mb * sizeof *s->moving);
    s->afree = calloc(s->x, sizeof *s->afree);
    s->busy_a = calloc(s->x, sizeof *s->busy_a);
    s->dur = malloc(s->x * sizeof *s->dur);
    s->ret = calloc(s->m, sizeof *s->ret);
    if (!s->P || !s->D || !s->age0 || !s->admit || !s->partial || !s->T || !s->cal || !s->cur ||
        !s->moving || !s->afree || !s->busy_a || !s->dur || !s->ret)
        return AFD_ENOMEM;
    for (k = 0; k < s->m; k++) {
        struct calendar *c = &s->cal[k];
        memset(c->head, -1, sizeof c->head);
        c->next = malloc(s->per_mb * sizeof *c->next);
        if (c->next == NULL || afd_event_heap_init(&c->overflow, 0) != AFD_OK)
            return AFD_ENOMEM;
    }
    for (j = 0; j < s->x; j++)
        for (k = 0; k < s->m; k++)
            afd_philox_cursor_init(&s->cur[j * s->m + k], p->seed,
                                   afd_pipeline_stream(p, (unsigned)j, (unsigned)k), 0);
    if (w->kind == AFD_WORKLOAD_GEOMETRIC) {
        if (afd_geometric_init(1 / w->mu_p, &s->gp) != AFD_OK ||
            afd_geometric_init(1 / w->mu_d, &s->gd) != AFD_OK)
            return AFD_EINVAL;
    } else {
        /* length-biased for the stationary start; replaced by the uniform
           picker once the initial slots are drawn, so that only one of the
           two tables is held at a time */
        afd_status st = afd_priv_picker_init(&s->pick, w, p->start == AFD_START_STATIONARY);
        if (st != AFD_OK)
            return st;
    }
    /* initial slots */
    for (k = 0; k < s->m; k++)
        for (j = 0; j < s->x; j++) {
            afd_philox_cursor *c = &s->cur[j * s->m + k];
            unsigned b;
            for (b = 0; b < s->B; b++) {
                size_t g = k * s->per_mb + j * s->B + b;
                double P, D, age = 0;
                if (p->start == AFD_START_STATIONARY)
                    draw_stationary(s, c, &P, &D, &age);
                else
                    draw_new(s, c, &P, &D);
                s->P[g] = P;
                s->D[g] = D;
                s->age0[g] = age;
                s->admit[g] = 0;
                s->partial[g] = p->start == AFD_START_STATIONARY;
                s->T[k * s->x + j] += (uint64_t)(P + age);
                /* finishes after its step D - age - 1 */
                if (schedule(&s->cal[k], 0, (uint64_t)(D - age - 1), (uint32_t)(j * s->B + b)) !=
                    AFD_OK)
                    return AFD_ENOMEM;
            }
        }
    if (w->kind == AFD_WORKLOAD_TRACE && p->start == AFD_START_STATIONARY) {
        afd_priv_picker_free(&s->pick);
        return afd_priv_picker_init(&s->pick, w, 0);
    }
    return AFD_OK;
}

static afd_status record_step(struct sim *s, double t)
{
    if (s->n_steps == s->cap_steps) {
        size_t ncap = s->cap_steps ? 2 * s->cap_steps : 4096;
        double *nt = realloc(s->step_time, ncap * sizeof *nt);
        if (nt == NULL)
            return AFD_ENOMEM;
        s->step_time = nt;
        s->cap_steps = ncap;
    }
    s->step_time[s->n_steps++] = t;
    return AFD_OK;
}

static afd_status record_tpot(struct sim *s, double v)
{
    if (s->n_tpot == s->cap_tpot) {
        size_t ncap = s->cap_tpot ? 2 * s->cap_tpot : 4096;
        double *nv = realloc(s->tpot_v, ncap * sizeof *nv);
        if (nv == NULL)
            return AFD_ENOMEM;
        s->tpot_v = nv;
        s->cap_tpot = ncap;
    }
    s->tpot_v[s->n_tpot++] = v;
    return AFD_OK;
}

afd_status afd_pipeline_run(const afd_pipeline_params *p, afd_pipeline_result *out)
{
    struct sim s;
    const afd_hw *h = &p->hw;
    double r, rb, t_af, t_fa, t_f, ffree = 0, busy_f = 0, now = 0, t80 = NAN, tokens80 = 0;
    double a_side = 0;
    double tpot_sum = 0, barrier_sum = 0, *bstat = NULL;
    uint64_t total, c80, done = 0, tpot_n = 0, step;
    afd_status st;
    unsigned j;

    result_nan(out);
    if ((st = afd_pipeline_check(p)) != AFD_OK)
        return st;
    if ((st = setup(&s, p)) != AFD_OK) {
        sim_free(&s);
        return st;
    }
    r = (double)p->x / p->y;
    rb = r * p->B;
    t_af = t_fa = p->no_comm ? 0 : 0.5 * (h->alpha_c * rb + h->beta_c);
    t_f = h->alpha_f * rb + h->beta_f;
    total = (uint64_t)p->x * p->requests;
    c80 = (uint64_t)ceil(0.8 * (double)total);

    for (step = 0; done < total; step++) {
        unsigned k = (unsigned)(step % s.m);
        uint64_t n = step / s.m;
        double prev = step >= s.m ? s.ret[k] : 0, a_done = 0, sum = 0, mx = 0, f_start;
        struct calendar *cal = &s.cal[k];
        int32_t slot;

        /* 1. Attention on every worker; the barrier waits for the slowest */
        for (j = 0; j < s.x; j++) {
            s.dur[j] = h->alpha_a * (double)s.T[k * s.x + j] + h->beta_a;
            sum += s.dur[j];
            mx = s.dur[j] > mx ? s.dur[j] : mx;
        }
        if (sum > 0)
            barrier_sum += (mx - sum / s.x) / (sum / s.x);
        if (p->async_attention) {
            /* each worker starts as soon as it and the micro-batch are free */
            for (j = 0; j < s.x; j++) {
                double d = p->no_barrier ? sum / s.x : s.dur[j];
                double start = prev > s.afree[j] ? prev : s.afree[j];
                s.afree[j] = start + d;
                s.busy_a[j] += d;
                a_done = s.afree[j] > a_done ? s.afree[j] : a_done;
                if (p->gantt != NULL && step < p->gantt_steps)
                    p->gantt(p->gantt_ctx, step, k, AFD_STAGE_ATTENTION, (int)j, start,
                             start + d);
            }
        } else {
            /* the Attention side serves one micro-batch at a time: all
             * workers start together and the side is free again when the
             * slowest is done */
            double start = prev > a_side ? prev : a_side;
            for (j = 0; j < s.x; j++) {
                double d = p->no_barrier ? sum / s.x : s.dur[j];
                s.busy_a[j] += d;
                if (p->gantt != NULL && step < p->gantt_steps)
                    p->gantt(p->gantt_ctx, step, k, AFD_STAGE_ATTENTION, (int)j, start,
                             start + d);
            }
            a_done = start + (p->no_barrier ? sum / s.x : mx);
            a_side = a_done;
        }
        /* 2-4. A->F, FFN (first come first served), F->A */
        f_start = a_done + t_af > ffree ? a_done + t_af : ffree;
        ffree = f_start + t_f;
        busy_f += t_f;
        now = ffree + t_fa;
        s.ret[k] = now;
        if (p->gantt != NULL && step < p->gantt_steps) {
            p->gantt(p->gantt_ctx, step, k, AFD_STAGE_A2F, -1, a_done, a_done + t_af);
            p->gantt(p->gantt_ctx, step, k, AFD_STAGE_FFN, -1, f_start, ffree);
            p->gantt(p->gantt_ctx, step, k, AFD_STAGE_F2A, -1, ffree, now);
        }
        if ((st = record_step(&s, now)) != AFD_OK)
            goto fail;

        /* every slot aged by one; finished requests leave, new ones enter */
        for (j = 0; j < s.x; j++)
            s.T[k * s.x + j] += s.B;
        migrate(cal, n, s.moving);
        slot = cal->head[n & (WHEEL - 1)];
        cal->head[n & (WHEEL - 1)] = -1;
        while (slot >= 0) {
            int32_t following = cal->next[slot];
            size_t g = k * s.per_mb + (size_t)slot;
            unsigned jj = (unsigned)slot / s.B;
            afd_philox_cursor *c = &s.cur[jj * s.m + k];
            double P, D;
            done++;
            /* Section 5.2 sums the output tokens D_i of the completed
             * requests.  After a stationary start the tokens the first
             * requests generated before time 0 balance, in expectation, the
             * tokens of the requests still in flight at T_80%. */
            if (done <= c80)
                tokens80 += s.D[g];
            if (done == c80)
                t80 = now;
            if (!s.partial[g]) {
                double v = (now - s.admit[g]) / s.D[g];
                tpot_sum += v;
                tpot_n++;
                if ((st = record_tpot(&s, v)) != AFD_OK)
                    goto fail;
            }
            s.T[k * s.x + jj] -= (uint64_t)(s.P[g] + s.D[g]);
            draw_new(&s, c, &P, &D);
            s.P[g] = P;
            s.D[g] = D;
            s.age0[g] = 0;
            s.partial[g] = 0;
            s.admit[g] = now;
            s.T[k * s.x + jj] += (uint64_t)P;
            if ((st = schedule(cal, n, n + (uint64_t)D, (uint32_t)slot)) != AFD_OK)
                goto fail;
            if (done == total)
                break;
            slot = following;
        }
    }

    out->completed = done;
    out->steps = step;
    out->t_end = now;
    out->thr_sim = tokens80 / t80 / (p->x + p->y);
    out->tpot = tpot_n > 0 ? tpot_sum / (double)tpot_n : NAN;
    /* per-batch values: the TPOT quantiles, then the steady throughput */
    bstat = malloc((size_t)p->batches * AFD_PIPELINE_TPOT_NQ * sizeof *bstat);
    if (bstat == NULL) {
        st = AFD_ENOMEM;
        goto fail;
    }
    tpot_quantiles(s.tpot_v, s.n_tpot, p->batches, bstat, out);
    {
        double idle = 0;
        for (j = 0; j < s.x; j++)
            idle += 1 - s.busy_a[j] / now;
        out->eta_a = idle / s.x;
    }
    out->eta_f = 1 - busy_f / now;
    out->barrier = barrier_sum / (double)step;
    /* steady state: steps returning after the warm-up, in equal-time batches */
    {
        double t0 = p->warmup * now, width = (now - t0) / p->batches;
        double scale = (double)p->x * p->B / (p->x + p->y);
        size_t i = 0, in_window = 0, first;
        unsigned b;
        while (i < s.n_steps && s.step_time[i] <= t0)
            i++;
        first = i;
        for (b = 0; b < p->batches; b++) {
            double hi = t0 + width * (b + 1), thr;
            size_t cnt = 0;
            while (i < s.n_steps && (s.step_time[i] <= hi || b + 1 == p->batches)) {
                cnt++;
                i++;
            }
            in_window += cnt;
            thr = (double)cnt * scale / width;
            bstat[b] = thr;
        }
        out->thr_steady = gsl_stats_mean(bstat, 1, p->batches);
        out->thr_steady_se = gsl_stats_sd_m(bstat, 1, p->batches, out->thr_steady) /
                             sqrt((double)p->batches);
        out->tau = in_window > 1 ? (s.step_time[s.n_steps - 1] - s.step_time[first]) /
                                       (double)(in_window - 1)
                                 : NAN;
    }
    free(bstat);
    sim_free(&s);
    return AFD_OK;
fail:
    free(bstat);
    sim_free(&s);
    result_nan(out);
    return st;
}
