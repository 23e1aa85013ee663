/* engine.c: the request-level serving engine (see afd_serve.h). */
#include <config.h>

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "afd_philox.h"
#include "mc_internal.h"
#include "serve_internal.h"

/* ------------------------------------------------------------------ fifo */

int serve_fifo_push(serve_fifo *q, uint32_t r)
{
    if (q->n == q->cap) {
        size_t cap = q->cap ? 2 * q->cap : 64, k;
        uint32_t *v = malloc(cap * sizeof *v);
        if (v == NULL)
            return -1;
        for (k = 0; k < q->n; k++)
            v[k] = q->v[(q->head + k) % q->cap];
        free(q->v);
        q->v = v;
        q->head = 0;
        q->cap = cap;
    }
    q->v[(q->head + q->n) % q->cap] = r;
    q->n++;
    return 0;
}

void serve_fifo_free(serve_fifo *q)
{
    free(q->v);
    memset(q, 0, sizeof *q);
}

/* --------------------------------------------------------------- chunker */

int serve_chunker_init(serve_chunker *c, unsigned bmax)
{
    memset(c, 0, sizeof *c);
    c->done = malloc((bmax > 0 ? bmax : 1) * sizeof *c->done);
    return c->done == NULL ? -1 : 0;
}

void serve_chunker_free(serve_chunker *c)
{
    serve_fifo_free(&c->pre);
    free(c->done);
    c->done = NULL;
}

int serve_chunker_admit(serve_chunker *c, afd_serve_engine *e, uint32_t r)
{
    afd_serve_request *q = afd_serve_req(e, r);
    serve_prefix_start(c->pc, e, r);
    q->word = serve_prefill_from(q);
    if (serve_fifo_push(&c->pre, r) != 0)
        return -1;
    c->pending += q->prompt - q->word;
    c->held += q->prompt;
    return 0;
}

double serve_chunker_spend(serve_chunker *c, afd_serve_engine *e, unsigned budget, int *any)
{
    const afd_hw *hw = afd_serve_hw(e);
    unsigned npre = (unsigned)c->pre.n, k;
    double t = 0;
    for (k = 0; k < npre && budget > 0; k++) {
        uint32_t r = serve_fifo_peek(&c->pre);
        afd_serve_request *q = afd_serve_req(e, r);
        double p0 = (double)q->word, n = q->prompt - q->word;
        if (n > budget)
            n = budget;
        /* the chunk's share of the batch law b P + c P^2: tokens p0..p0+n */
        t += hw->prefill_b * n + hw->prefill_c * ((p0 + n) * (p0 + n) - p0 * p0);
        q->word += (uint64_t)n;
        budget -= (unsigned)n;
        c->pending -= (uint64_t)n;
        *any = 1;
        if (q->word == q->prompt) {
            serve_fifo_pop(&c->pre);
            c->held -= q->prompt;
            serve_prefix_done(c->pc, e, r);
            c->done[c->n_done++] = r;
        } else {
            break; /* budget spent on this one */
        }
    }
    return t;
}

/* --------------------------------------------------------------- decoder */

int serve_decoder_add(serve_decoder *d, const afd_serve_request *q, uint32_t r)
{
    /* G output tokens: the prefill gave the first, G - 1 steps give the rest. */
    if (afd_event_heap_push(&d->finish, (double)(d->steps + q->output - 1), r, 0) != AFD_OK)
        return -1;
    d->kv += (double)q->prompt + 1;
    d->running++;
    return 0;
}

void serve_decoder_step_done(serve_decoder *d, afd_serve_engine *e)
{
    d->steps++;
    d->kv += d->running; /* each sequence attends to one more token next step */
    while (d->finish.n > 0 && d->finish.e[0].time <= (double)d->steps) {
        afd_event ev;
        const afd_serve_request *q;
        afd_event_heap_pop(&d->finish, &ev);
        q = afd_serve_req(e, (uint32_t)ev.id);
        d->kv -= (double)q->prompt + q->output; /* P + 1 + (G - 1) steps */
        d->running--;
        afd_serve_finish(e, (uint32_t)ev.id);
    }
    if (d->running == 0)
        d->kv = 0; /* no drift from rounding */
}

void serve_decoder_free(serve_decoder *d)
{
    afd_event_heap_free(&d->finish);
}

/* ---------------------------------------------------------------- engine */

/* The measured metrics (TTFT, TPOT, end-to-end) and the percentiles
 * reported of each. */
enum { M_TTFT, M_TPOT, M_E2E, N_METRIC };
#define N_PCT 3
static const double pct[N_PCT] = {0.5, 0.9, 0.99};

/* One batch of the batch means, filled as its requests leave. */
typedef struct meas_batch {
    uint64_t left;                  /* measured requests yet to finish or drop */
    uint64_t good, dropped, marked; /* met both SLOs, dropped, nonzero class */
    uint64_t good_ttft, good_tpot;  /* met the TTFT SLO, the TPOT SLO */
    /* histogram runs: values, their sum, and the batch's percentiles once
     * its last request has left */
    uint64_t n[N_METRIC];
    double sum[N_METRIC];
    double q[N_METRIC][N_PCT];
    int slot; /* its histograms: SLOT_NONE before its first value, SLOT_LOST
               * when none was free then */
    double cached, prompt; /* with a prefix cache: prompt tokens found in it, and all */
} meas_batch;

enum { SLOT_NONE = -1, SLOT_LOST = -2 };

struct afd_serve_engine {
    const afd_serve_params *p;
    const afd_hw *hw;
    double now;
    afd_status status;
    afd_event_heap heap;
    afd_priv_picker picker; /* the trace's entries by count (Poisson arrivals) */
    /* request slots */
    afd_serve_request *req;
    uint64_t *index; /* arrival number of the request in each slot */
    uint32_t *free_slots;
    size_t n_slots, n_free;
    uint64_t in_system;
    /* measurements */
    uint64_t first, m; /* measured: arrival numbers first .. first + m - 1 */
    unsigned k;        /* batches */
    double tslo, pslo; /* the SLOs (+inf: none) */
    meas_batch *batch;
    /* exact runs (m <= the exact limit): every value, per metric */
    double *val[N_METRIC];
    /* histogram runs: all values per metric, and the open batches' */
    afd_priv_qhist all[N_METRIC];
    afd_priv_qhist (*slot)[N_METRIC]; /* AFD_SERVE_OPEN_BATCHES sets */
    unsigned n_slot, *free_slot, n_free_slot;
    unsigned lost; /* batches without histograms */
    int prefix; /* a prefix cache: count the cached and the prompt tokens */
    /* the routed pools (SERVE_POOL_ARRIVAL, SERVE_POOL_DECODE): requests
     * routed to each instance, per batch (k x n_pool, allocated at the
     * pool's first routing), or NULL */
    uint64_t *routed[SERVE_POOLS];
    unsigned n_pool[SERVE_POOLS]; /* instances of each routed pool */
    double last_finish;
    double t0; /* arrival of the first measured request */
    afd_philox_cursor policy_rng;
    uint64_t events;
};

double afd_serve_now(const afd_serve_engine *e)
{
    return e->now;
}

afd_status afd_serve_at(afd_serve_engine *e, double t, unsigned kind, uint64_t id)
{
    afd_status st = afd_event_heap_push(&e->heap, t < e->now ? e->now : t, id, kind);
    if (st != AFD_OK && e->status == AFD_OK)
        e->status = st;
    return st;
}

afd_serve_request *afd_serve_req(afd_serve_engine *e, uint32_t r)
{
    return &e->req[r];
}

void afd_serve_first_token(afd_serve_engine *e, uint32_t r)
{
    e->req[r].first = e->now;
}

/* Batch b of m requests cut into k: [start(b), start(b + 1)), sizes
 * floor(m / k) or one more; start(b) = floor(b m / k). */
static size_t batch_start(uint64_t m, unsigned k, unsigned b)
{
    return (size_t)(m / k * b + m % k * b / k);
}

/* The batch of measured request j: the largest b with floor(b m / k) <= j,
 * i.e. b m < (j + 1) k. */
static unsigned batch_of(uint64_t m, unsigned k, uint64_t j)
{
    return (unsigned)(((j + 1) * k - 1) / m);
}

/* A set of histograms for a batch's values (histogram runs): a free one,
 * or a new one while fewer than AFD_SERVE_OPEN_BATCHES are in use. */
static int take_hist_slot(afd_serve_engine *e)
{
    unsigned i;
    if (e->n_free_slot > 0)
        return (int)e->free_slot[--e->n_free_slot];
    if (e->n_slot == AFD_SERVE_OPEN_BATCHES)
        return SLOT_LOST;
    for (i = 0; i < N_METRIC; i++)
        afd_priv_qhist_init(&e->slot[e->n_slot][i]);
    return (int)e->n_slot++;
}

/* The batch's last request has left: its percentiles, and its histograms
 * back to the free sets. */
static void close_batch(afd_serve_engine *e, meas_batch *bt)
{
    unsigned i, j;
    for (i = 0; i < N_METRIC; i++)
        for (j = 0; j < N_PCT; j++)
            bt->q[i][j] = bt->slot >= 0 && bt->n[i] > 0
                              ? afd_priv_qhist_quantile(&e->slot[bt->slot][i], pct[j])
                              : NAN;
    if (bt->slot >= 0) {
        for (i = 0; i < N_METRIC; i++)
            afd_priv_qhist_reset(&e->slot[bt->slot][i]);
        e->free_slot[e->n_free_slot++] = (unsigned)bt->slot;
    } else if (bt->slot == SLOT_LOST) {
        e->lost++;
    }
}

/* Measured request j (0-based) leaves with the values v (NaN: none), and
 * with a prefix cache its cached and prompt tokens. */
static void measure(afd_serve_engine *e, uint64_t j, const double v[N_METRIC], int dropped,
                    int cls, uint32_t cached, uint32_t prompt)
{
    meas_batch *bt = &e->batch[batch_of(e->m, e->k, j)];
    unsigned i;
    if (e->prefix) {
        bt->cached += cached;
        bt->prompt += prompt;
    }
    bt->dropped += dropped != 0;
    bt->good += !dropped && !(v[M_TTFT] > e->tslo) && !(v[M_TPOT] > e->pslo);
    bt->good_ttft += !dropped && !(v[M_TTFT] > e->tslo);
    bt->good_tpot += !dropped && !(v[M_TPOT] > e->pslo);
    bt->marked += cls != 0;
    if (e->val[0] != NULL) { /* exact */
        for (i = 0; i < N_METRIC; i++)
            e->val[i][j] = v[i];
        bt->left--;
        return;
    }
    for (i = 0; i < N_METRIC; i++) {
        afd_status st;
        if (isnan(v[i]))
            continue;
        if (bt->slot == SLOT_NONE)
            bt->slot = take_hist_slot(e);
        /* a duration below 0 would be a defect of a policy: the run fails */
        if ((st = afd_priv_qhist_add(&e->all[i], v[i])) != AFD_OK ||
            (bt->slot >= 0 && (st = afd_priv_qhist_add(&e->slot[bt->slot][i], v[i])) != AFD_OK)) {
            afd_serve_fail(e, st == AFD_EINVAL ? AFD_ENUMERIC : st);
            continue;
        }
        bt->n[i]++;
        bt->sum[i] += v[i];
    }
    if (--bt->left == 0)
        close_batch(e, bt);
}

void afd_serve_finish(afd_serve_engine *e, uint32_t r)
{
    const afd_serve_request *q = &e->req[r];
    uint64_t n = e->index[r];
    if (n >= e->first && n - e->first < e->m) {
        double v[N_METRIC];
        v[M_TTFT] = q->first - q->arrival;
        v[M_TPOT] = q->output >= 2 ? (e->now - q->first) / (q->output - 1) : NAN;
        v[M_E2E] = e->now - q->arrival;
        measure(e, n - e->first, v, 0, q->cls, q->cached, q->prompt);
        if (e->now > e->last_finish)
            e->last_finish = e->now;
    }
    e->free_slots[e->n_free++] = r;
    e->in_system--;
}

void afd_serve_drop(afd_serve_engine *e, uint32_t r)
{
    const afd_serve_request *q = &e->req[r];
    uint64_t n = e->index[r];
    if (n >= e->first && n - e->first < e->m) {
        static const double none[N_METRIC] = {NAN, NAN, NAN};
        measure(e, n - e->first, none, 1, q->cls, q->cached, q->prompt);
    }
    e->free_slots[e->n_free++] = r;
    e->in_system--;
}

void afd_serve_fail(afd_serve_engine *e, afd_status st)
{
    if (e->status == AFD_OK)
        e->status = st;
}

double afd_serve_u01(afd_serve_engine *e)
{
    return afd_philox_next(&e->policy_rng);
}

const afd_serve_request *serve_route_req(const afd_serve_engine *e, uint32_t r)
{
    return &e->req[r];
}

void serve_routed(afd_serve_engine *e, uint32_t r, unsigned which, unsigned i, unsigned n)
{
    uint64_t j = e->index[r] - e->first;
    if (which >= SERVE_POOLS || e->index[r] < e->first || j >= e->m)
        return;
    if (e->routed[which] == NULL) {
        e->routed[which] = calloc((size_t)e->k * n, sizeof *e->routed[which]);
        if (e->routed[which] == NULL) {
            afd_serve_fail(e, AFD_ENOMEM);
            return;
        }
        e->n_pool[which] = n;
    }
    if (n == e->n_pool[which] && i < n)
        e->routed[which][(size_t)batch_of(e->m, e->k, j) * n + i]++;
}

/* The largest instance's share of the requests counts[0 .. n) over the
 * mean share. */
static double imbalance(unsigned n, const uint64_t *counts)
{
    uint64_t top = 0, all = 0;
    unsigned i;
    for (i = 0; i < n; i++) {
        all += counts[i];
        top = counts[i] > top ? counts[i] : top;
    }
    return all > 0 ? (double)top * n / (double)all : NAN;
}

/* Pool `which`'s imbalance over the whole run and its se from the spread of
 * the batches' (batch means, the statistic taken as smooth; the batches'
 * sizes differ by one at most, so unweighted: equal batches give an se of
 * exactly 0: the spread is taken about the first batch, so that equal
 * values leave no rounding).  bat: room for k values.  AFD_ENOMEM or
 * AFD_OK; NaN and NaN for a pool never routed. */
static afd_status pool_imbalance(const afd_serve_engine *e, unsigned which, double *bat,
                                 double *imb, double *se)
{
    const uint64_t *routed = e->routed[which];
    unsigned n = e->n_pool[which], k = e->k, b, i;
    double mb = 0, v = 0;
    uint64_t *counts;
    if (routed == NULL || n == 0)
        return AFD_OK;
    counts = calloc(n, sizeof *counts);
    if (counts == NULL)
        return AFD_ENOMEM;
    for (b = 0; b < k; b++) {
        bat[b] = imbalance(n, routed + (size_t)b * n);
        for (i = 0; i < n; i++)
            counts[i] += routed[(size_t)b * n + i];
    }
    for (b = k; b-- > 0;)
        mb += bat[b] -= bat[0];
    mb /= k;
    for (b = 0; b < k; b++)
        v += (bat[b] - mb) * (bat[b] - mb);
    *se = k > 1 ? sqrt(v / (k - 1) / k) : NAN;
    *imb = imbalance(n, counts);
    free(counts);
    return AFD_OK;
}

double serve_route_u01(const afd_serve_engine *e, uint32_t r, unsigned k)
{
    return afd_philox_u01(e->p->seed, 3 + k / 2, 2 * e->index[r] + k % 2);
}

/* the latency file's tables where it has them, else its laws (afd_hw.h) */
double afd_serve_prefill_time(const afd_serve_engine *e, double sum_p, double sum_p2)
{
    return afd_hw_prefill_time(e->hw, sum_p, sum_p2);
}

double afd_serve_decode_step(const afd_serve_engine *e, double b, double k)
{
    return afd_hw_decode_step(e->hw, b, k);
}

const afd_hw *afd_serve_hw(const afd_serve_engine *e)
{
    return e->hw;
}

/* A free request slot, growing the table; UINT32_MAX when memory runs out. */
static uint32_t take_slot(afd_serve_engine *e)
{
    if (e->n_free == 0) {
        size_t cap = e->n_slots ? 2 * e->n_slots : 1024, k;
        afd_serve_request *req;
        uint64_t *index;
        uint32_t *fs;
        if (cap > UINT32_MAX)
            return UINT32_MAX;
        req = realloc(e->req, cap * sizeof *req);
        if (req != NULL)
            e->req = req;
        index = realloc(e->index, cap * sizeof *index);
        if (index != NULL)
            e->index = index;
        fs = realloc(e->free_slots, cap * sizeof *fs);
        if (fs != NULL)
            e->free_slots = fs;
        if (req == NULL || index == NULL || fs == NULL)
            return UINT32_MAX;
        for (k = cap; k > e->n_slots; k--)
            e->free_slots[e->n_free++] = (uint32_t)(k - 1);
        e->n_slots = cap;
    }
    return e->free_slots[--e->n_free];
}

/* Geometric on {1, 2, ...} with mean mu >= 1, by inversion of one uniform. */
static uint32_t geometric(double mu, double u)
{
    double k;
    if (mu <= 1)
        return 1;
    k = ceil(log(u) / log1p(-1 / mu));
    return k < 1 ? 1 : k > 4e9 ? 4000000000u : (uint32_t)k;
}

/* A trace's request n: row n in order (cycling) with replayed times, else an
 * entry drawn by count (pk: kept rows, or the distinct pairs, whose draw is
 * the row draw of the same trace sorted by (P, D); afd_priv_picker). */
static void lengths(const afd_serve_params *p, const afd_priv_picker *pk, uint64_t n,
                    afd_serve_request *q)
{
    const afd_workload *w = p->workload;
    q->blocks = NULL;
    q->n_blocks = 0;
    q->cached = 0;
    if (w == NULL) {
        q->prompt = p->prompt;
        q->output = p->output;
    } else if (w->kind == AFD_WORKLOAD_TRACE) {
        afd_workload_pair r;
        size_t j = p->times != NULL ? (size_t)(n % w->n_kept)
                                    : afd_priv_picker_draw(pk, afd_philox_u01(p->seed, 1, 2 * n));
        r = afd_workload_entry(w, j);
        q->prompt = (uint32_t)afd_workload_prompt_tokens(r); /* an empty prompt as 1 token */
        q->output = (uint32_t)r.decode;
        if (w->block_start != NULL && w->pairs == NULL) { /* entry j is row j */
            q->blocks = w->blocks + w->block_start[j];
            q->n_blocks = (uint32_t)(w->block_start[j + 1] - w->block_start[j]);
        }
    } else {
        q->prompt = geometric(w->mu_p, afd_philox_u01(p->seed, 1, 2 * n));
        q->output = geometric(w->mu_d, afd_philox_u01(p->seed, 1, 2 * n + 1));
    }
}

static void stat_nan(afd_serve_stat *s)
{
    s->mean = s->mean_se = s->p50 = s->p50_se = s->p90 = s->p90_se = s->p99 = s->p99_se = NAN;
}

static void set_nan(afd_serve_result *out)
{
    memset(out, 0, sizeof *out);
    stat_nan(&out->ttft);
    stat_nan(&out->tpot);
    stat_nan(&out->e2e);
    out->throughput = out->attainment = out->attainment_se = NAN;
    out->attain_ttft = out->attain_ttft_se = out->attain_tpot = out->attain_tpot_se = NAN;
    out->attain_diff_se = NAN;
    out->drop_frac = out->drop_frac_se = out->class_frac = out->class_frac_se = NAN;
    out->growth = out->end_time = NAN;
    out->prefix_hit = out->prefix_hit_se = NAN;
    out->imbalance = out->imbalance_se = NAN;
    out->decode_imbalance = out->decode_imbalance_se = NAN;
}

/* Statistics of the exact run's values x[0..m) (NaN entries skipped), batch
 * b = [batch_start(b), batch_start(b + 1)).  Reorders x. */
static void summarize(double *x, uint64_t m, unsigned k, double *scratch, afd_serve_stat *s,
                      uint64_t *count)
{
    double *bm = scratch, *bq = scratch + k, *cnt = scratch + 2 * (size_t)k, *val[N_PCT],
           *se[N_PCT];
    size_t j, n_all, at;
    unsigned b, qi;
    double sum;
    val[0] = &s->p50, val[1] = &s->p90, val[2] = &s->p99;
    se[0] = &s->p50_se, se[1] = &s->p90_se, se[2] = &s->p99_se;
    /* compact each batch's finite values to the front of x, in batch order
     * (a batch's values never move up past its start), keep the counts */
    n_all = 0;
    for (b = 0; b < k; b++) {
        size_t lo = batch_start(m, k, b), hi = batch_start(m, k, b + 1), c = 0;
        sum = 0;
        for (j = lo; j < hi; j++)
            if (!isnan(x[j])) {
                sum += x[j];
                x[n_all + c++] = x[j];
            }
        cnt[b] = (double)c;
        bm[b] = c ? sum / (double)c : NAN;
        n_all += c;
    }
    *count = n_all;
    afd_priv_batch_mean_se(bm, cnt, k, &s->mean, &s->mean_se);
    for (qi = 0; qi < N_PCT; qi++) {
        for (b = 0, at = 0; b < k; at += (size_t)cnt[b], b++)
            bq[b] = afd_priv_quantile(x + at, (size_t)cnt[b], pct[qi]);
        afd_priv_batch_mean_se(bq, cnt, k, val[qi], se[qi]);
    }
    if (n_all == 0) {
        stat_nan(s);
        return;
    }
    /* the overall mean and quantiles from all values */
    for (j = 0, sum = 0; j < n_all; j++)
        sum += x[j];
    s->mean = sum / (double)n_all;
    for (qi = 0; qi < N_PCT; qi++)
        *val[qi] = afd_priv_quantile(x, n_all, pct[qi]);
}

/* The same from the histogram run's batches and histogram h of metric i. */
static void summarize_hist(const meas_batch *batch, unsigned k, unsigned i,
                           const afd_priv_qhist *h, double *scratch, afd_serve_stat *s,
                           uint64_t *count)
{
    double *bm = scratch, *bq = scratch + k, *cnt = scratch + 2 * (size_t)k, *val[N_PCT],
           *se[N_PCT], sum = 0;
    uint64_t n_all = 0;
    unsigned b, qi;
    val[0] = &s->p50, val[1] = &s->p90, val[2] = &s->p99;
    se[0] = &s->p50_se, se[1] = &s->p90_se, se[2] = &s->p99_se;
    for (b = 0; b < k; b++) {
        cnt[b] = (double)batch[b].n[i];
        bm[b] = batch[b].n[i] ? batch[b].sum[i] / cnt[b] : NAN;
        sum += batch[b].sum[i];
        n_all += batch[b].n[i];
    }
    *count = n_all;
    afd_priv_batch_mean_se(bm, cnt, k, &s->mean, &s->mean_se);
    for (qi = 0; qi < N_PCT; qi++) {
        for (b = 0; b < k; b++)
            bq[b] = batch[b].q[i][qi];
        afd_priv_batch_mean_se(bq, cnt, k, val[qi], se[qi]);
    }
    if (n_all == 0) {
        stat_nan(s);
        return;
    }
    s->mean = sum / (double)n_all;
    for (qi = 0; qi < N_PCT; qi++)
        *val[qi] = afd_priv_qhist_quantile(h, pct[qi]);
}

/* The count at byte offset field of each batch's meas_batch, as a fraction
 * of the measured requests: *frac over the whole run, *se by batch means
 * (bat: room for k values, len: the batches' sizes); returns the count. */
static uint64_t batch_fraction(const meas_batch *batch, unsigned k, size_t field,
                               const double *len, double *bat, uint64_t m, double *frac,
                               double *se)
{
    uint64_t all = 0;
    unsigned b;
    for (b = 0; b < k; b++) {
        uint64_t c;
        memcpy(&c, (const char *)&batch[b] + field, sizeof c);
        bat[b] = (double)c / len[b];
        all += c;
    }
    afd_priv_batch_mean_se(bat, len, k, frac, se);
    *frac = (double)all / (double)m;
    return all;
}

/* cfg asks for prefix caches (a number of blocks, or the KV memory). */
static int has_pcache(const afd_serve_config *cfg)
{
    return cfg->prefix_blocks > 0 || cfg->prefix_kv_tokens > 0;
}

static afd_status check(const afd_serve_params *p, afd_error *err)
{
    const afd_workload *w = p->workload;
    unsigned k = p->batches ? p->batches : AFD_SERVE_BATCHES;
#define BAD(...)                                                     \
    do {                                                             \
        snprintf(err->text, sizeof err->text, __VA_ARGS__);          \
        return AFD_EINVAL;                                           \
    } while (0)
    if (p->policy == NULL)
        BAD("no policy");
    if (p->hw == NULL || !afd_hw_has_prefill(p->hw) || !afd_hw_has_decode(p->hw))
        BAD("the latency model needs the prefill and decode laws (prefill_a, prefill_b, "
            "prefill_c, decode_beta, decode_gamma, decode_alpha)");
    if (!(p->hw->prefill_a >= 0 && p->hw->prefill_b >= 0 && p->hw->prefill_c >= 0 &&
          p->hw->decode_beta >= 0 && p->hw->decode_gamma >= 0 && p->hw->decode_alpha >= 0))
        BAD("negative latency law coefficient");
    if (!(p->hw->decode_beta + p->hw->decode_gamma + p->hw->decode_alpha > 0))
        BAD("the decode step takes no time");
    if (k < 2)
        BAD("batches must be >= 2");
    if (p->requests < k || p->requests > AFD_SERVE_MAX_REQUESTS)
        BAD("requests must be in [%u, %llu]", k, (unsigned long long)AFD_SERVE_MAX_REQUESTS);
    if (p->warmup > AFD_SERVE_MAX_WARMUP)
        BAD("warm-up must be in [0, %llu]", (unsigned long long)AFD_SERVE_MAX_WARMUP);
    if (p->times != NULL) {
        size_t i;
        if (p->n_times < p->warmup + p->requests)
            BAD("%zu arrival times for %llu requests", p->n_times,
                (unsigned long long)(p->warmup + p->requests));
        for (i = 0; i < p->n_times; i++)
            if (!isfinite(p->times[i]) || (i > 0 && p->times[i] < p->times[i - 1]))
                BAD("arrival time %zu is not finite or decreases", i + 1);
    } else if (!(p->lambda > 0 && isfinite(p->lambda))) {
        BAD("the arrival rate must be finite and > 0");
    }
    if (w == NULL) {
        if (p->prompt < 1 || p->output < 1)
            BAD("prompt and output tokens must be >= 1");
    } else if (w->kind == AFD_WORKLOAD_TRACE) {
        size_t i;
        if (p->times != NULL ? w->n_kept == 0 || w->prompt == NULL || w->decode == NULL
                             : afd_workload_entries(w) == 0)
            return AFD_EEMPTY;
        for (i = 0; i < afd_workload_entries(w); i++) {
            afd_workload_pair r = afd_workload_entry(w, i);
            if (r.prompt > 1000000000u || r.decode > 1000000000u || r.decode < 1)
                BAD("trace %s %zu: lengths beyond 10^9 tokens or no output",
                    w->pairs != NULL ? "pair" : "request", i + 1);
        }
    } else if (w->kind == AFD_WORKLOAD_GEOMETRIC) {
        if (!(w->mu_p >= 1 && w->mu_d >= 1 && w->mu_p < 1e9 && w->mu_d < 1e9))
            BAD("geometric means must be in [1, 1e9)");
    } else {
        BAD("the workload must give request lengths (a trace or the geometric model)");
    }
    if (!(p->config.prefix_kv_tokens >= 0 && isfinite(p->config.prefix_kv_tokens)))
        BAD("the prefix cache's KV tokens must be finite and >= 0");
    if (has_pcache(&p->config) || p->config.router == AFD_SERVE_ROUTE_SESSION ||
        p->config.router == AFD_SERVE_ROUTE_CACHE_AWARE) {
        const char *what = has_pcache(&p->config) ? "a prefix cache" : "this router";
        if (w == NULL || w->kind != AFD_WORKLOAD_TRACE || w->block_start == NULL ||
            w->pairs != NULL)
            BAD("%s needs a trace kept with its block hashes", what);
        if (w->block_start[w->n_kept] > UINT32_MAX)
            BAD("%s: more than 2^32 - 1 blocks in the trace", what);
    }
    if (has_pcache(&p->config) && p->config.block_size < 1)
        BAD("the block size must be >= 1 token");
    if (p->config.router == AFD_SERVE_ROUTE_CACHE_AWARE && !has_pcache(&p->config))
        BAD("the cache-aware router needs a prefix cache");
#undef BAD
    return AFD_OK;
}

/* Instability: the backlog (requests in the system at an arrival) rises
 * across both thirds of the run by more than 1% of the arrivals and 50. */
static void trend(const uint64_t bk[3], uint64_t total, afd_serve_result *out)
{
    double third = (double)(total / 3), d1 = (double)bk[1] - (double)bk[0],
           d2 = (double)bk[2] - (double)bk[1];
    out->growth = (d1 + d2) / (2 * third);
    if (d1 > 0.01 * third && d2 > 0.01 * third && d1 > 50 && d2 > 50)
        out->unstable = 1;
}

afd_status afd_serve_run(const afd_serve_params *p, afd_serve_result *out, afd_error *err)
{
    return afd_priv_serve_run(p, AFD_SERVE_EXACT_REQUESTS, out, err);
}

afd_status afd_priv_serve_run(const afd_serve_params *p, uint64_t exact_max,
                              afd_serve_result *out, afd_error *err)
{
    afd_serve_engine e;
    afd_error err_local;
    afd_status st;
    void *state = NULL;
    unsigned k, i, b;
    uint64_t total, n = 0;
    uint64_t bk[3] = {0, 0, 0};
    double next_arrival, *scratch = NULL;
    int have_state = 0, stopped = 0;

    if (err == NULL)
        err = &err_local;
    afd_error_clear(err);
    set_nan(out);
    if (p == NULL)
        return AFD_EINVAL;
    st = check(p, err);
    if (st != AFD_OK)
        return st;
    k = p->batches ? p->batches : AFD_SERVE_BATCHES;
    memset(&e, 0, sizeof e);
    e.p = p;
    e.hw = p->hw;
    e.first = p->warmup;
    e.m = p->requests; /* every one, in k batches of floor(m / k) or one more */
    e.k = k;
    e.tslo = p->ttft_slo > 0 ? p->ttft_slo : INFINITY;
    e.pslo = p->tpot_slo > 0 ? p->tpot_slo : INFINITY;
    total = p->warmup + p->requests;
    for (i = 0; i < N_METRIC; i++)
        afd_priv_qhist_init(&e.all[i]);
    e.batch = malloc(k * sizeof *e.batch);
    scratch = malloc(3 * (size_t)k * sizeof *scratch);
    e.prefix = has_pcache(&p->config);
    if (e.batch == NULL || scratch == NULL) {
        st = AFD_ENOMEM;
        goto done;
    }
    for (b = 0; b < k; b++) {
        memset(&e.batch[b], 0, sizeof e.batch[b]);
        e.batch[b].left = batch_start(e.m, k, b + 1) - batch_start(e.m, k, b);
        e.batch[b].slot = SLOT_NONE;
    }
    if (e.m <= exact_max) { /* every value kept: exact percentiles */
        for (i = 0; i < N_METRIC; i++)
            if ((e.val[i] = malloc((size_t)e.m * sizeof *e.val[i])) == NULL) {
                st = AFD_ENOMEM;
                goto done;
            }
    } else { /* histograms: the whole run's, and those of the open batches */
        e.slot = malloc(AFD_SERVE_OPEN_BATCHES * sizeof *e.slot);
        e.free_slot = malloc(AFD_SERVE_OPEN_BATCHES * sizeof *e.free_slot);
        if (e.slot == NULL || e.free_slot == NULL) {
            st = AFD_ENOMEM;
            goto done;
        }
    }
    if (p->workload != NULL && p->workload->kind == AFD_WORKLOAD_TRACE && p->times == NULL &&
        (st = afd_priv_picker_init(&e.picker, p->workload, 0)) != AFD_OK)
        goto done;
    afd_philox_cursor_init(&e.policy_rng, p->seed, 2, 0);
    st = p->policy->init(&e, &p->config, &state, err);
    if (st != AFD_OK)
        goto done;
    have_state = 1;

    next_arrival = p->times ? p->times[0] : -log(afd_philox_u01(p->seed, 0, 0)) / p->lambda;
    while (e.status == AFD_OK) {
        if (n < total && (e.heap.n == 0 || next_arrival <= e.heap.e[0].time)) {
            uint32_t r = take_slot(&e);
            afd_serve_request *q;
            if (r == UINT32_MAX) {
                e.status = AFD_ENOMEM;
                break;
            }
            e.now = next_arrival;
            q = &e.req[r];
            q->arrival = e.now;
            q->first = NAN;
            q->deadline = INFINITY;
            q->cls = 0;
            q->word = 0;
            lengths(p, &e.picker, n, q);
            e.index[r] = n;
            if (n == p->warmup)
                e.t0 = e.now;
            e.in_system++;
            n++;
            if (p->progress != NULL && (n % AFD_SERVE_PROGRESS_EVERY == 0 || n == total))
                p->progress(p->progress_ctx, n, total);
            if (n == total / 3)
                bk[0] = e.in_system;
            else if (n == 2 * (total / 3))
                bk[1] = e.in_system;
            if (n == total) {
                bk[2] = out->backlog = e.in_system;
                if (p->stop_unstable) {
                    trend(bk, total, out);
                    if (out->unstable) {
                        e.events++;
                        stopped = 1;
                        break;
                    }
                }
            } else {
                next_arrival = p->times ? p->times[n]
                                        : next_arrival -
                                              log(afd_philox_u01(p->seed, 0, n)) / p->lambda;
            }
            e.events++;
            p->policy->arrive(state, &e, r);
        } else if (e.heap.n > 0) {
            afd_event ev;
            afd_event_heap_pop(&e.heap, &ev);
            e.now = ev.time;
            e.events++;
            p->policy->event(state, &e, ev.kind, ev.id);
        } else {
            break;
        }
    }
    st = e.status;
    if (st != AFD_OK)
        goto done;
    if (stopped) { /* unstable, reported without the statistics */
        out->events = e.events;
        out->end_time = e.now;
        goto done;
    }
    if (e.in_system != 0) { /* a policy that left requests behind is a defect */
        snprintf(err->text, sizeof err->text, "%s: %llu requests never finished",
                 p->policy->name, (unsigned long long)e.in_system);
        st = AFD_ENUMERIC;
        goto done;
    }

    {
        double *bat = scratch, *len = scratch + 2 * (size_t)k;
        uint64_t cnt;
        for (b = 0; b < k; b++)
            len[b] = (double)(batch_start(e.m, k, b + 1) - batch_start(e.m, k, b));
        /* attainment (a dropped request misses its SLO), of each SLO alone,
         * then the fractions dropped and of a nonzero class */
        batch_fraction(e.batch, k, offsetof(meas_batch, good), len, bat, e.m, &out->attainment,
                       &out->attainment_se);
        batch_fraction(e.batch, k, offsetof(meas_batch, good_ttft), len, bat, e.m,
                       &out->attain_ttft, &out->attain_ttft_se);
        batch_fraction(e.batch, k, offsetof(meas_batch, good_tpot), len, bat, e.m,
                       &out->attain_tpot, &out->attain_tpot_se);
        { /* the difference of the two, batch by batch */
            double diff;
            for (b = 0; b < k; b++)
                bat[b] = ((double)e.batch[b].good_ttft - (double)e.batch[b].good_tpot) / len[b];
            afd_priv_batch_mean_se(bat, len, k, &diff, &out->attain_diff_se);
        }
        out->dropped = batch_fraction(e.batch, k, offsetof(meas_batch, dropped), len, bat, e.m,
                                      &out->drop_frac, &out->drop_frac_se);
        batch_fraction(e.batch, k, offsetof(meas_batch, marked), len, bat, e.m,
                       &out->class_frac, &out->class_frac_se);
        if (e.prefix) { /* cached over prompt tokens: a ratio of batch sums */
            double *tok = scratch + k, all_c = 0, all_p = 0;
            for (b = 0; b < k; b++) {
                double c = e.batch[b].cached, pt = e.batch[b].prompt;
                bat[b] = pt > 0 ? c / pt : NAN;
                tok[b] = pt;
                all_c += c;
                all_p += pt;
            }
            afd_priv_batch_mean_se(bat, tok, k, &out->prefix_hit, &out->prefix_hit_se);
            out->prefix_hit = all_c / all_p;
        }
        if ((st = pool_imbalance(&e, SERVE_POOL_ARRIVAL, bat, &out->imbalance,
                                 &out->imbalance_se)) != AFD_OK ||
            (st = pool_imbalance(&e, SERVE_POOL_DECODE, bat, &out->decode_imbalance,
                                 &out->decode_imbalance_se)) != AFD_OK)
            goto done;
        out->completed = e.m;
        if (e.val[0] != NULL) {
            summarize(e.val[M_TTFT], e.m, k, scratch, &out->ttft, &cnt);
            summarize(e.val[M_TPOT], e.m, k, scratch, &out->tpot, &out->tpot_count);
            summarize(e.val[M_E2E], e.m, k, scratch, &out->e2e, &cnt);
        } else {
            summarize_hist(e.batch, k, M_TTFT, &e.all[M_TTFT], scratch, &out->ttft, &cnt);
            summarize_hist(e.batch, k, M_TPOT, &e.all[M_TPOT], scratch, &out->tpot,
                           &out->tpot_count);
            summarize_hist(e.batch, k, M_E2E, &e.all[M_E2E], scratch, &out->e2e, &cnt);
            out->pct_batches_lost = e.lost;
        }
        trend(bk, total, out);
    }
    out->events = e.events;
    out->end_time = e.now;
    /* throughput: measured completions (dropped requests excluded) over the
     * span from the first measured arrival to the last measured completion */
    out->throughput = (double)(e.m - out->dropped) / (e.last_finish - e.t0);
done:
    if (have_state)
        p->policy->fini(state);
    afd_event_heap_free(&e.heap);
    afd_priv_picker_free(&e.picker);
    free(e.req);
    free(e.index);
    free(e.free_slots);
    for (i = 0; i < N_METRIC; i++) {
        free(e.val[i]);
        afd_priv_qhist_free(&e.all[i]);
    }
    for (b = 0; b < e.n_slot; b++)
        for (i = 0; i < N_METRIC; i++)
            afd_priv_qhist_free(&e.slot[b][i]);
    free(e.slot);
    free(e.free_slot);
    free(e.batch);
    for (i = 0; i < SERVE_POOLS; i++)
        free(e.routed[i]);
    free(scratch);
    if (st != AFD_OK) {
        set_nan(out);
        if (err->text[0] == '\0')
            snprintf(err->text, sizeof err->text, "%s", afd_strerror(st));
    }
    return st;
}

/* ------------------------------------------------------------- policies */

static const afd_serve_policy *const builtin[] = {
    &afd_priv_serve_colloc,
    &afd_priv_serve_chunked,
    &afd_priv_serve_disagg,
    &afd_priv_serve_taichi,
    &afd_priv_serve_twotier,
};

const afd_serve_policy *afd_serve_policy_at(size_t i)
{
    return i < sizeof builtin / sizeof builtin[0] ? builtin[i] : NULL;
}

const afd_serve_policy *afd_serve_policy_find(const char *name)
{
    size_t i;
    for (i = 0; name != NULL && i < sizeof builtin / sizeof builtin[0]; i++)
        if (strcmp(builtin[i]->name, name) == 0)
            return builtin[i];
    return NULL;
}
