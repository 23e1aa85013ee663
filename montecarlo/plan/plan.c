/* plan.c: the search of afdkit plan (see afd_plan.h). */
#include <config.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "afd_cost.h"
#include "afd_pareto.h"
#include "afd_estimate.h"
#include "afd_plan.h"
#include "afd_pool.h"
#include "afd_serving.h"

static const char *const arch_names[AFD_PLAN_N_ARCH] = {"colloc", "chunked", "disagg", "taichi",
                                                        "afd"};

const char *afd_plan_arch_name(int arch)
{
    return arch >= 0 && arch < AFD_PLAN_N_ARCH ? arch_names[arch] : "?";
}

unsigned afd_plan_gpus(const afd_plan_row *r)
{
    unsigned n;
    if (r->ts == NULL)
        return 0;
    n = r->arch == AFD_PLAN_DISAGG || r->arch == AFD_PLAN_TAICHI ? r->prefill + r->decode
        : r->arch == AFD_PLAN_AFD                                ? r->prefill + r->decode + r->ffn
                                                                 : r->instances;
    return n * r->ts->tp;
}

/* The simulated routing of colloc, chunked and disagg's pools, given
 * explicitly rather than taken from the simulator's default. */
afd_serve_router afd_plan_serve_router(int arch)
{
    return arch == AFD_PLAN_DISAGG ? AFD_SERVE_ROUTE_LEAST_REQUESTS : AFD_SERVE_ROUTE_GLOBAL;
}

void afd_plan_serve_params(const afd_plan_params *pl, const afd_plan_row *r, afd_serve_params *p,
                           afd_serve_taichi_config *tc)
{
    const afd_plan_tp *ts = r->ts;
    *p = *pl->base;
    memset(&p->config, 0, sizeof p->config);
    p->hw = &ts->hw;
    p->config.decode_bmax = ts->bmax;
    p->config.prefill_bmax = AFD_PLAN_PREFILL_BMAX;
    p->config.kv_time_per_token = ts->kv_time_per_token;
    p->ttft_slo = pl->ttft;
    p->tpot_slo = pl->tpot;
    /* the routers, explicitly (taichi routes by its own algorithm) */
    p->config.router = afd_plan_serve_router(r->arch);
    p->config.decode_router = AFD_SERVE_ROUTE_GLOBAL;
    switch (r->arch) {
    case AFD_PLAN_COLLOC:
        p->policy = afd_serve_policy_find("colloc");
        p->config.instances = r->instances;
        break;
    case AFD_PLAN_CHUNKED:
        p->policy = afd_serve_policy_find("chunked");
        p->config.instances = r->instances;
        p->config.chunk = r->chunk;
        break;
    case AFD_PLAN_DISAGG:
        p->policy = afd_serve_policy_find("disagg");
        p->config.prefill = r->prefill;
        p->config.decode = r->decode;
        break;
    default:
        p->policy = afd_serve_policy_find("taichi");
        memset(tc, 0, sizeof *tc);
        tc->p_heavy = r->prefill;
        tc->d_heavy = r->decode;
        tc->chunk_p = r->chunk;
        tc->chunk_d = r->chunk_d;
        tc->watermark = 0.95; /* afdkit serve's defaults */
        tc->backflow = 0.96;
        tc->kv_capacity = ts->kv_capacity;
        tc->ttft_slo = pl->ttft;
        tc->tpot_slo = pl->tpot;
        p->config.extra = tc;
    }
}

const char *afd_plan_router_name(int arch)
{
    return arch == AFD_PLAN_DISAGG   ? "least-requests"
           : arch == AFD_PLAN_TAICHI ? "ttft-estimate"
                                     : "global";
}

/* What fails first above the goodput in a run there: unstable, or the SLO
 * whose P90 exceeds it by the larger factor. */
static const char *sim_limit(const afd_serve_result *res, double ttft, double tpot)
{
    if (res->unstable)
        return "unstable";
    return res->ttft.p90 / ttft >= res->tpot.p90 / tpot ? "ttft" : "tpot";
}

/* The closed forms' parameters of r's configuration (rate 1: to be set). */
static void serving_params(const afd_plan_params *pl, const afd_plan_row *r, afd_serving_params *q)
{
    memset(q, 0, sizeof *q);
    q->hw = &r->ts->hw;
    q->prompt = pl->len->prompt_mean;
    q->output = pl->len->output_mean;
    q->instances = r->instances;
    q->prefill = r->prefill;
    q->decode = r->decode;
    q->prefill_bmax = AFD_PLAN_PREFILL_BMAX;
    q->decode_bmax = r->ts->bmax;
    q->kv_time = r->ts->kv_time_per_token * pl->len->prompt_mean;
    q->quantile = 0.9;
    q->lambda = 1;
}

/* TaiChi's closed-form parameters at one tp (configuration and rate to be set). */
static void taichi_params(const afd_plan_params *pl, const afd_plan_tp *ts, afd_taichi_params *t)
{
    memset(t, 0, sizeof *t);
    t->hw = &ts->hw;
    t->len = pl->len;
    t->decode_bmax = ts->bmax;
    t->kv_capacity = ts->kv_capacity;
    t->watermark = 0.95; /* afdkit serve's default */
    t->kv_time = ts->kv_time_per_token * pl->len->prompt_mean;
    t->ttft_slo = pl->ttft;
    t->tpot_slo = pl->tpot;
    t->lambda = 1;
}

/* An upper bound of the rate the row sustains, for the goodput bracket. */
static double row_capacity(const afd_plan_params *pl, const afd_plan_row *r)
{
    afd_serving_params q;
    afd_taichi_params t;
    if (r->arch == AFD_PLAN_COLLOC || r->arch == AFD_PLAN_DISAGG) {
        serving_params(pl, r, &q);
        return afd_serving_capacity(&q, r->arch == AFD_PLAN_COLLOC);
    }
    taichi_params(pl, r->ts, &t);
    /* chunked: TaiChi's aggregation, one kind of instance */
    t.config.p_heavy = r->arch == AFD_PLAN_CHUNKED ? r->instances : r->prefill;
    t.config.d_heavy = r->arch == AFD_PLAN_CHUNKED ? 0 : r->decode;
    t.config.chunk_p = r->chunk;
    t.config.chunk_d = r->arch == AFD_PLAN_CHUNKED ? r->chunk : r->chunk_d;
    return afd_taichi_capacity(&t);
}

/* The simulator's goodput of r (attainment >= AFD_PLAN_TARGET), its P90s there
 * and what fails just above; with a rate, its attainment at the rate. */
void afd_plan_simulate(const afd_plan_params *pl, afd_plan_row *r)
{
    afd_serve_params p;
    afd_serve_taichi_config tc;
    afd_serve_result res;
    double hi, lo;
    afd_plan_serve_params(pl, r, &p, &tc);
    /* the closed forms' bound of the stable rate, widened: the simulator's
     * lengths spread about the means the bound uses */
    hi = 1.5 * row_capacity(pl, r);
    lo = r->closed > 0 && r->closed < hi ? 0.5 * r->closed : 1e-3 * hi;
    r->st =
        afd_serve_goodput_attain(&p, AFD_PLAN_TARGET, lo, hi, pl->tol, &r->goodput, &r->goodput_se);
    if (r->st != AFD_OK || !(r->goodput > 0))
        return;
    /* The delta-method standard error needs an attainment that spreads at
     * the goodput and falls with the rate.  At a cliff it does not: every
     * batch of the run at the goodput meets the SLOs (standard error 0), or
     * the attainment does not fall between 0.9 and 1.1 times it (NaN).  The
     * goodput is then known to the bisection's resolution: its last bracket
     * [g, hi) has hi - g <= tol hi (afd_goodput_bisect), so hi - g < tol g /
     * (1 - tol). */
    if (!(r->goodput_se > 0 && isfinite(r->goodput_se))) {
        r->goodput_se = pl->tol * r->goodput / (1 - pl->tol);
        r->se_resolution = 1;
    }
    p.lambda = r->goodput;
    if ((r->st = afd_serve_run(&p, &res, NULL)) != AFD_OK)
        return;
    r->ttft_p90 = res.ttft.p90;
    r->tpot_p90 = res.tpot.p90;
    r->tpot_mean = res.tpot.mean;
    p.lambda = 1.1 * r->goodput;
    if ((r->st = afd_serve_run(&p, &res, NULL)) != AFD_OK)
        return;
    r->limit = sim_limit(&res, pl->ttft, pl->tpot);
    if (pl->rate > 0) {
        p.lambda = pl->rate;
        if ((r->st = afd_serve_run(&p, &res, NULL)) != AFD_OK)
            return;
        r->attain = res.attainment;
        r->attain_se = res.attainment_se;
        r->rate_ttft_p90 = res.ttft.p90;
        r->rate_tpot_p90 = res.tpot.p90;
    }
}

/* The closed forms' numbers for the table of --method closed: the goodput,
 * and for colloc and disagg the P90s and mean TPOT there and the limit. */
void afd_plan_closed_numbers(const afd_plan_params *pl, afd_plan_row *r)
{
    afd_serving_params q;
    afd_serving_result res;
    int limit = AFD_SERVING_LIMIT_NONE;
    double g;
    r->goodput = r->closed;
    if (r->arch == AFD_PLAN_AFD) {
        /* every token of a sequence takes one cycle of the pool */
        r->tpot_mean = r->tau;
        return;
    }
    if (r->arch != AFD_PLAN_COLLOC && r->arch != AFD_PLAN_DISAGG)
        return;
    serving_params(pl, r, &q);
    if (afd_serving_goodput(&q, r->arch == AFD_PLAN_COLLOC, pl->ttft, pl->tpot, 0.01, &g, &limit) ==
        AFD_OK)
        r->limit = afd_serving_limit_name(limit);
    q.lambda = r->closed;
    if (r->closed > 0 && (r->arch == AFD_PLAN_COLLOC ? afd_serving_colloc(&q, &res)
                                                     : afd_serving_disagg(&q, &res)) == AFD_OK) {
        r->ttft_p90 = res.ttft_q;
        r->tpot_p90 = res.tpot_q;
        r->tpot_mean = res.tpot_mean;
    }
}

void afd_plan_row_init(afd_plan_row *r, int arch, const afd_plan_tp *ts)
{
    memset(r, 0, sizeof *r);
    r->arch = arch;
    r->ts = ts;
    r->bmax = ts != NULL ? ts->bmax : 0;
    r->tau = NAN;
    r->closed = r->goodput = r->goodput_se = NAN;
    r->ttft_p90 = r->tpot_p90 = r->tpot_mean = NAN;
    r->attain = r->attain_se = r->rate_ttft_p90 = r->rate_tpot_p90 = NAN;
    r->limit = "nan";
}

/* A closed form's failure within its solver's documented limits (the M/D/c
 * size limit, a root finder that does not converge): the architecture has
 * no ranking at this tp, and its row says why.  Any other status is an
 * error of the plan. */
static int solver_limit(afd_status st)
{
    return st == AFD_ELIMIT || st == AFD_ENUMERIC;
}

static void closed_failed(afd_plan_row *r, afd_status st)
{
    r->closed = NAN;
    r->closed_st = st;
    r->limit = st == AFD_ELIMIT ? "size-limit" : "numeric";
}

/* afd: np prefill instances as disagg's (prefill goodput g[np - 1]) and the
 * best AFD decode pool of the n - np instances left (afd_pool_best). */
static afd_status best_afd(const afd_plan_params *pl, const afd_plan_tp *ts, unsigned n,
                           const double *g, afd_plan_row *r)
{
    afd_pool_params q = {.hw = &ts->hw,
                         .theta = pl->len->theta,
                         .nu = pl->len->nu,
                         .output = pl->len->output_mean,
                         .request_tokens = pl->len->prompt_mean + pl->len->output_mean,
                         .kv_capacity = ts->kv_capacity,
                         .tpot_slo = pl->tpot,
                         .bmax_limit = ts->hw.decode_batch_max};
    afd_pool *pool;
    if (pl->pool_bmax > 0 && (q.bmax_limit == 0 || pl->pool_bmax < q.bmax_limit))
        q.bmax_limit = pl->pool_bmax;
    afd_status st;
    unsigned np;
    if (n < 3)
        return AFD_OK;
    pool = calloc(n - 1, sizeof *pool);
    if (pool == NULL)
        return AFD_ENOMEM;
    if ((st = afd_pool_best(&q, n - 1, pool)) == AFD_OK)
        for (np = 1; np + 2 <= n; np++) {
            const afd_pool *d = &pool[n - np - 1];
            double v = g[np - 1] < d->rate ? g[np - 1] : d->rate;
            if (d->B > 0 && v > r->closed) {
                r->closed = v;
                r->prefill = np;
                r->decode = d->x;
                r->ffn = d->y;
                r->bmax = d->B;
                r->tau = d->tau;
                r->limit = g[np - 1] < d->rate ? "prefill" : "decode";
            }
        }
    free(pool);
    return st;
}

/* The best configuration of each architecture at one tp by the closed
 * forms: cand[arch] (closed 0 when none sustains a rate; NAN, with st and
 * limit saying why, when its closed forms fail within their solvers'
 * limits).  Other failures are returned. */
afd_status afd_plan_closed_best(const afd_plan_params *pl, const afd_plan_tp *ts, unsigned n,
                                const unsigned *chunks, size_t n_chunks,
                                afd_plan_row cand[AFD_PLAN_N_ARCH])
{
    afd_serving_params q;
    afd_taichi_params t;
    afd_taichi_config best[3];
    double *g = NULL, gd, val[3];
    afd_status st;
    unsigned i, np, nd;
    int a;
    for (a = 0; a < AFD_PLAN_N_ARCH; a++) {
        afd_plan_row_init(&cand[a], a, ts);
        cand[a].closed = 0;
    }
    serving_params(pl, &cand[AFD_PLAN_COLLOC], &q); /* the instance counts are searched */
    g = calloc(n, sizeof *g);
    if (g == NULL)
        return AFD_ENOMEM;
    /* colloc: 1 .. n instances; the most goodput, the fewest devices on a tie */
    st = afd_serving_goodput_colloc_sizes(&q, pl->ttft, pl->tpot, 0.01, n, g);
    if (solver_limit(st))
        closed_failed(&cand[AFD_PLAN_COLLOC], st);
    else if (st != AFD_OK)
        goto out;
    for (i = 0; st == AFD_OK && i < n; i++)
        if (g[i] > cand[AFD_PLAN_COLLOC].closed) {
            cand[AFD_PLAN_COLLOC].closed = g[i];
            cand[AFD_PLAN_COLLOC].instances = i + 1;
        }
    /* disagg: every split of at most n instances; afd: its prefill pool */
    if (n >= 2) {
        st = afd_serving_goodput_stages(&q, pl->ttft, pl->tpot, 0.01, n - 1, g, &gd);
        if (solver_limit(st)) {
            closed_failed(&cand[AFD_PLAN_DISAGG], st);
            if (pl->moe)
                closed_failed(&cand[AFD_PLAN_AFD], st);
        } else if (st != AFD_OK) {
            goto out;
        }
        for (np = 1; st == AFD_OK && np < n; np++)
            for (nd = 1; np + nd <= n; nd++) {
                double v = afd_serving_goodput_split(g, gd, np, nd);
                if (v > cand[AFD_PLAN_DISAGG].closed ||
                    (v == cand[AFD_PLAN_DISAGG].closed && v > 0 &&
                     np + nd < cand[AFD_PLAN_DISAGG].prefill + cand[AFD_PLAN_DISAGG].decode)) {
                    cand[AFD_PLAN_DISAGG].closed = v;
                    cand[AFD_PLAN_DISAGG].prefill = np;
                    cand[AFD_PLAN_DISAGG].decode = nd;
                }
            }
        if (st == AFD_OK && pl->moe) {
            st = best_afd(pl, ts, n, g, &cand[AFD_PLAN_AFD]);
            if (solver_limit(st))
                closed_failed(&cand[AFD_PLAN_AFD], st);
            else if (st != AFD_OK)
                goto out;
        }
    }
    /* chunked (TaiChi's aggregation) and TaiChi's hybrid on n instances */
    st = AFD_OK;
    if (n_chunks > 0) {
        taichi_params(pl, ts, &t);
        st = afd_taichi_best(&t, n, chunks, n_chunks, AFD_PLAN_TARGET, 0.01, best, val);
        if (solver_limit(st)) {
            closed_failed(&cand[AFD_PLAN_CHUNKED], st);
            closed_failed(&cand[AFD_PLAN_TAICHI], st);
            st = AFD_OK;
            goto out;
        }
        if (st != AFD_OK)
            goto out;
        if (val[AFD_TAICHI_AGG] > 0) {
            cand[AFD_PLAN_CHUNKED].closed = val[AFD_TAICHI_AGG];
            cand[AFD_PLAN_CHUNKED].instances = best[AFD_TAICHI_AGG].p_heavy;
            cand[AFD_PLAN_CHUNKED].chunk = best[AFD_TAICHI_AGG].chunk_p;
        }
        if (val[AFD_TAICHI_HYBRID] > 0) {
            afd_plan_row *r = &cand[AFD_PLAN_TAICHI];
            r->closed = val[AFD_TAICHI_HYBRID];
            r->prefill = best[AFD_TAICHI_HYBRID].p_heavy;
            r->decode = best[AFD_TAICHI_HYBRID].d_heavy;
            r->chunk = best[AFD_TAICHI_HYBRID].chunk_p;
            r->chunk_d = best[AFD_TAICHI_HYBRID].chunk_d;
        }
    }
out:
    free(g);
    return st;
}

int afd_plan_by_goodput(const void *pa, const void *pb)
{
    const afd_plan_row *a = pa, *b = pb;
    double ga = a->goodput > 0 ? a->goodput : 0, gb = b->goodput > 0 ? b->goodput : 0;
    if (ga != gb)
        return ga > gb ? -1 : 1;
    if (afd_plan_gpus(a) != afd_plan_gpus(b))
        return afd_plan_gpus(a) < afd_plan_gpus(b) ? -1 : 1;
    return (a->arch > b->arch) - (a->arch < b->arch);
}

int afd_plan_by_closed(const void *pa, const void *pb)
{
    const afd_plan_row *a = pa, *b = pb;
    /* a failed closed form (NAN) last */
    double ca = isnan(a->closed) ? -1 : a->closed, cb = isnan(b->closed) ? -1 : b->closed;
    if (ca != cb)
        return ca > cb ? -1 : 1;
    return (afd_plan_gpus(a) > afd_plan_gpus(b)) - (afd_plan_gpus(a) < afd_plan_gpus(b));
}

afd_status afd_plan_tp_laws(const afd_model *m, const afd_device *d, unsigned tp, afd_plan_tp *out,
                            afd_error *err)
{
    afd_status st;
    memset(out, 0, sizeof *out);
    out->tp = tp;
    if ((st = afd_kv_capacity_tokens(m, d, tp, &out->kv_capacity, err)) != AFD_OK ||
        (st = afd_estimate_laws(m, d, tp, &out->hw, err)) != AFD_OK)
        return st;
    /* the KV transfer of a prompt token crosses tp links of net_gbps */
    out->kv_time_per_token = afd_kv_bytes_per_token(m, tp) / (tp * d->net_gbps * 1e9) * 1e3;
    return AFD_OK;
}

afd_status afd_plan_tp_bmax(afd_plan_tp *ts, const afd_taichi_lengths *len, double tpot_slo,
                            int *why)
{
    afd_decode_bmax_params q = {.hw = &ts->hw,
                                .kv_capacity = ts->kv_capacity,
                                .request_tokens = len->prompt_mean + len->output_mean,
                                .kv_mean = len->theta,
                                .tpot_slo = tpot_slo,
                                .limit = ts->hw.decode_batch_max};
    return afd_decode_bmax(&q, &ts->bmax, why);
}

void afd_plan_measure(const afd_plan_params *pl, afd_plan_row *r, int simulate)
{
    if (r->arch == AFD_PLAN_AFD || !simulate)
        afd_plan_closed_numbers(pl, r); /* no serve architecture simulates the afd pool */
    else if (r->closed > 0)
        afd_plan_simulate(pl, r);
    else
        r->goodput = r->closed; /* 0, or NAN: the closed forms failed */
}

void afd_plan_select(const afd_plan_row *cand, size_t n_tp, int n_arch, size_t verify,
                     afd_plan_row *sel, size_t *n_sel)
{
    size_t i, k;
    int a;
    *n_sel = 0;
    for (a = 0; a < n_arch; a++) {
        /* the sizes of one architecture, best closed goodput first: an
         * insertion sort into the tail of sel */
        afd_plan_row *tmp = sel + *n_sel;
        for (i = 0; i < n_tp; i++) {
            afd_plan_row r = cand[i * AFD_PLAN_N_ARCH + (size_t)a];
            for (k = i; k > 0 && afd_plan_by_closed(&r, &tmp[k - 1]) < 0; k--)
                tmp[k] = tmp[k - 1];
            tmp[k] = r;
        }
        for (i = 0; i < n_tp && i < verify; i++)
            if (!(tmp[i].closed > 0) && i > 0)
                break;
        *n_sel += i;
    }
}

void afd_plan_best_rows(const afd_plan_row *rows, size_t n, int n_arch, afd_plan_row *best)
{
    size_t k;
    int a;
    for (a = 0; a < n_arch; a++)
        afd_plan_row_init(&best[a], a, NULL);
    for (k = 0; k < n; k++) {
        afd_plan_row *b;
        if (rows[k].arch < 0 || rows[k].arch >= n_arch)
            continue;
        b = &best[rows[k].arch];
        if (b->ts == NULL || afd_plan_by_goodput(&rows[k], b) < 0)
            *b = rows[k];
    }
    qsort(best, (size_t)n_arch, sizeof *best, afd_plan_by_goodput);
}

void afd_plan_row_rates(const afd_plan_row *r, const afd_taichi_lengths *len, double unit_seconds,
                        double price_per_hour, double *tokens_per_gpu, double *tokens_per_user,
                        double *usd_per_mtok)
{
    unsigned gpus = afd_plan_gpus(r);
    /* generated tokens per second: the goodput times the mean output */
    double tok = r->goodput / unit_seconds * len->output_mean;
    *tokens_per_gpu = gpus > 0 ? tok / gpus : NAN;
    *tokens_per_user = 1 / (r->tpot_mean * unit_seconds);
    /* dollars per million tokens: a million over the tokens per dollar */
    *usd_per_mtok = 1e6 / afd_per_dollar(tok, gpus * price_per_hour);
}

static int by_arch_tp_cap(const void *pa, const void *pb)
{
    const afd_plan_point *a = pa, *b = pb;
    if (a->arch != b->arch)
        return a->arch < b->arch ? -1 : 1;
    if (a->tp != b->tp)
        return a->tp < b->tp ? -1 : 1;
    return (a->bmax < b->bmax) - (a->bmax > b->bmax);
}

afd_status afd_plan_frontier(const afd_plan_params *pl, const afd_plan_tp *ts, size_t n_tp,
                             unsigned gpus, const unsigned *chunks, size_t n_chunks, int n_arch,
                             int simulate, double unit_seconds, afd_plan_point **points,
                             size_t *n_points)
{
    afd_plan_point *pts = NULL;
    afd_plan_row cand[AFD_PLAN_N_ARCH];
    afd_plan_params q = *pl;
    unsigned *ch = NULL;
    double *cost = NULL, *val = NULL;
    int *front = NULL;
    size_t n = 0, cap = 0, i, k, m;
    afd_status st = AFD_OK;
    int a;
    *points = NULL;
    *n_points = 0;
    if (n_chunks > 0 && (ch = malloc(n_chunks * sizeof *ch)) == NULL)
        return AFD_ENOMEM;
    for (i = 0; i < n_tp; i++) {
        afd_plan_tp t = ts[i];
        unsigned b;
        for (b = ts[i].bmax; b >= 1; b /= 2) {
            size_t nc = 0;
            t.bmax = b;
            q.pool_bmax = b == ts[i].bmax ? 0 : b; /* afd: first as in the plan */
            for (k = 0; k < n_chunks; k++)
                if (chunks[k] > b)
                    ch[nc++] = chunks[k];
            if ((st = afd_plan_closed_best(&q, &t, gpus / t.tp, ch, nc, cand)) != AFD_OK)
                goto out;
            for (a = 0; a < n_arch; a++) {
                afd_plan_row *r = &cand[a];
                double g, u, d;
                if (!(r->closed > 0))
                    continue;
                afd_plan_measure(&q, r, simulate);
                if (r->st != AFD_OK) {
                    st = r->st;
                    goto out;
                }
                afd_plan_row_rates(r, pl->len, unit_seconds, NAN, &g, &u, &d);
                if (!(g > 0) || !(u > 0) || !isfinite(u))
                    continue;
                if (n == cap) {
                    afd_plan_point *np;
                    cap = cap ? 2 * cap : 64;
                    if ((np = realloc(pts, cap * sizeof *np)) == NULL) {
                        st = AFD_ENOMEM;
                        goto out;
                    }
                    pts = np;
                }
                pts[n].arch = a;
                pts[n].tp = t.tp;
                pts[n].bmax = a == AFD_PLAN_AFD ? r->bmax : b;
                pts[n].per_gpu = g;
                pts[n].per_user = u;
                pts[n].frontier = 0;
                n++;
            }
            if (b == 1)
                break;
        }
    }
    qsort(pts, n, sizeof *pts, by_arch_tp_cap);
    /* each architecture's frontier: more of both is better, so the cost
     * afd_pareto_front minimises is minus the tokens per device */
    cost = malloc((n ? n : 1) * sizeof *cost);
    val = malloc((n ? n : 1) * sizeof *val);
    front = malloc((n ? n : 1) * sizeof *front);
    if (cost == NULL || val == NULL || front == NULL) {
        st = AFD_ENOMEM;
        goto out;
    }
    for (i = 0; i < n; i = m) {
        for (m = i; m < n && pts[m].arch == pts[i].arch; m++) {
            cost[m - i] = -pts[m].per_gpu;
            val[m - i] = pts[m].per_user;
        }
        if ((st = afd_pareto_front(cost, val, m - i, front)) != AFD_OK)
            goto out;
        for (k = i; k < m; k++)
            pts[k].frontier = front[k - i];
    }
    *points = pts;
    *n_points = n;
    pts = NULL;
out:
    free(pts);
    free(ch);
    free(cost);
    free(val);
    free(front);
    return st;
}
