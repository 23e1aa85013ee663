/* cmd_regime.c: afdkit regime, TaiChi's SLO regime map: for every pair of
 * TTFT and TPOT SLOs, the best configuration of aggregation,
 * disaggregation and the hybrid and its goodput, from the closed forms of
 * afd_taichi.h or the serving simulator (--arch taichi). */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "afd_mc.h"
#include "afd_serve.h"
#include "afd_serve_taichi.h"
#include "afd_taichi.h"
#include "cli.h"
#include "serve_opts.h"

enum {
    OPT_RG_TTFT = 450, OPT_RG_TPOT, OPT_RG_CHUNKS, OPT_RG_METHOD, OPT_RG_TARGET, OPT_RG_TOL,
    OPT_RG_WATERMARK, OPT_RG_BACKFLOW, OPT_RG_KVCAP, OPT_RG_THREADS, OPT_RG_PRICE
};

static const cli_option rg_options[] = {
    {"instances", 'n', "N", "instances to configure (required)", OPT_SV_INSTANCES},
    {"ttft-slo", 0, "LIST", "TTFT SLOs with units, e.g. 0.5s,1s,2s (required)", OPT_RG_TTFT},
    {"tpot-slo", 0, "LIST", "TPOT SLOs with units, e.g. 50ms,100ms (required)", OPT_RG_TPOT},
    {"lambda", 'l', "RATE", "print SLO attainment at this rate instead of goodput, e.g. 5/s",
     OPT_SV_LAMBDA},
    {"method", 0, "M", "closed (default) or sim", OPT_RG_METHOD},
    {"chunks", 0, "LIST", "chunk sizes tried (default 256,512,1024,2048)", OPT_RG_CHUNKS},
    {"target", 0, "X", "attainment that defines goodput (default 0.9)", OPT_RG_TARGET},
    {"tolerance", 0, "X", "relative width of the goodput bracket (default 0.01; sim: 0.02)",
     OPT_RG_TOL},
    {"decode-bmax", 0, "B", "sequences per instance, memory permitting (default 128)",
     OPT_SV_DBMAX},
    {"kv-capacity", 0, "TOKENS", "KV-cache tokens per instance (default: from --model/--device, "
                                 "else unlimited)", OPT_RG_KVCAP},
    {"watermark", 0, "M", "KV fraction above which D-heavy decodes flow (default 0.95)",
     OPT_RG_WATERMARK},
    {"backflow", 0, "A", "sim: flow back above A x the TPOT SLO (default 0.96)", OPT_RG_BACKFLOW},
    {"kv-latency", 0, "T", "fixed time per KV transfer (default 0)", OPT_SV_KVLAT},
    {"lengths", 0, "P,G", "fixed prompt and output tokens (or --trace, --geometric)",
     OPT_SV_LENGTHS},
    {"requests", 0, "N", "sim: requests measured per run (default 20000)", OPT_SV_REQUESTS},
    {"warmup", 0, "N", "sim: requests simulated first and discarded (default 4000)",
     OPT_SV_WARMUP},
    {"batches", 0, "K", "sim: batches for the standard errors (default 10)", OPT_SV_BATCHES},
    {"seed", 0, "S", "sim: random seed (default 1)", OPT_SV_SEED},
    {"threads", 0, "N", CLI_THREADS_HELP, OPT_RG_THREADS},
    {"price", 0, "P", "dollars per device-hour, e.g. 3.5/h, instead of the device file's",
     OPT_RG_PRICE},
    {NULL, 0, NULL, NULL, 0},
};
static const cli_group rg_group = {"Regime", rg_options};
static const cli_group *const rg_groups[] = {&rg_group,           &cli_serve_model_group,
                                             &cli_workload_group, &cli_hw_group,
                                             &cli_output_group,   &cli_shard_group,
                                             NULL};

struct ctx {
    cli_serve_args a;
    const char *ttft_arg, *tpot_arg;
    cli_list chunks;
    int sim, have_instances;
    unsigned threads;
    double target, tol, watermark, backflow, kv_capacity;
    double price; /* --price: per device-hour */
    int have_price;
};

static int own(void *vctx, const cli_option *opt, const char *arg)
{
    struct ctx *x = vctx;
    const char *cmd = x->a.cmd;
    if (opt == NULL)
        return cli_usage_error(cmd, "unexpected argument '%s'", arg);
    switch (opt->id) {
    case OPT_RG_TTFT: x->ttft_arg = arg; return 0;
    case OPT_RG_PRICE: x->have_price = 1; return cli_price(cmd, opt->name, arg, &x->price);
    case OPT_RG_TPOT: x->tpot_arg = arg; return 0;
    case OPT_RG_CHUNKS:
        cli_list_free(&x->chunks);
        return cli_list_parse(cmd, opt->name, arg, 1, 2, 1 << 24, &x->chunks);
    case OPT_RG_METHOD: {
        static const char *const names[] = {"closed", "sim", NULL};
        return cli_choice(cmd, opt->name, "method", arg, names, &x->sim);
    }
    case OPT_RG_TARGET: return cli_real_in(cmd, opt->name, arg, 0, 1, 1, 1, &x->target);
    case OPT_RG_TOL: return cli_real_in(cmd, opt->name, arg, 1e-6, 0, 0.5, 1, &x->tol);
    case OPT_RG_WATERMARK: return cli_real_in(cmd, opt->name, arg, 0, 1, 1, 0, &x->watermark);
    case OPT_RG_BACKFLOW: return cli_real_in(cmd, opt->name, arg, 0, 1, 1, 0, &x->backflow);
    case OPT_RG_KVCAP: return cli_real_min(cmd, opt->name, arg, 0, 1, &x->kv_capacity);
    case OPT_RG_THREADS: return cli_threads(cmd, opt->name, arg, &x->threads);
    case OPT_SV_INSTANCES: x->have_instances = 1; break;
    }
    return cli_serve_option(&x->a, opt, arg);
}

/* A list of times with units, in the latency unit: "0.5s,1s,2s". */
static int time_list(const char *cmd, const char *opt, const char *arg, const char *unit,
                     double **v, size_t *n)
{
    size_t cap = 1, k = 0;
    const char *p;
    char item[64];
    for (p = arg; *p; p++)
        cap += *p == ',';
    *v = calloc(cap, sizeof **v);
    if (*v == NULL)
        return cli_runtime_error(cmd, "out of memory");
    for (p = arg;;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        int rc;
        if (len == 0 || len >= sizeof item) {
            free(*v);
            *v = NULL;
            return cli_usage_error(cmd, "--%s: %s item in '%s'", opt,
                                   len == 0 ? "empty" : "too long an", arg);
        }
        memcpy(item, p, len);
        item[len] = 0;
        if ((rc = cli_time(cmd, opt, item, unit, &(*v)[k])) != 0) {
            free(*v);
            *v = NULL;
            return rc;
        }
        if (!((*v)[k] > 0)) {
            free(*v);
            *v = NULL;
            return cli_usage_error(cmd, "--%s: SLOs must be > 0: '%s'", opt, item);
        }
        k++;
        if (e == NULL)
            break;
        p = e + 1;
    }
    *n = k;
    return 0;
}

typedef struct point {
    double ttft, tpot;      /* SLOs, latency unit */
    afd_taichi_config cfg[3];
    double val[3], se[3];   /* goodput (per unit) or attainment; se: sim only */
    double closed[3];       /* with --method sim: the closed forms' val */
    afd_taichi_bind bind[3]; /* the limit binding at each mode's goodput */
    int best;               /* index of the winning mode, -1: none */
    afd_status st;
} point;

struct shared {
    const struct ctx *x;
    afd_taichi_params base;
    const unsigned *chunks;
    size_t n_chunks;
    unsigned instances;
    const afd_serve_params *serve;
    afd_serve_taichi_config tc;
    double lambda; /* > 0: attainment at this rate */
};

static int is_proper_hybrid(const afd_taichi_config *c, unsigned whole)
{
    return c->p_heavy > 0 && c->d_heavy > 0 && c->chunk_p != c->chunk_d &&
           !(c->chunk_d == 0 && c->chunk_p == whole);
}

/* The plainest configuration of mode k (0: aggregation with the largest
 * chunk, 1: disaggregation, half the instances P-heavy; all zero for N = 1). */
static afd_taichi_config plainest(const struct shared *sh, int k, unsigned whole)
{
    afd_taichi_config c;
    unsigned N = sh->instances;
    memset(&c, 0, sizeof c);
    if (k == 0) {
        c.p_heavy = N;
        c.chunk_p = c.chunk_d = sh->chunks[sh->n_chunks - 1];
    } else if (N >= 2) {
        c.p_heavy = N / 2;
        c.d_heavy = N - N / 2;
        c.chunk_p = whole;
        c.chunk_d = 0;
    }
    return c;
}

/* Simulate cfg: its goodput (lambda = 0) or its attainment at lambda. */
static afd_status sim_config(const struct shared *sh, const point *pt, afd_taichi_config cfg,
                             double closed, double *val, double *se, afd_taichi_bind *bind)
{
    afd_serve_params p = *sh->serve;
    afd_serve_taichi_config tc = sh->tc;
    afd_taichi_params q = sh->base;
    afd_serve_result r;
    double cap, lo;
    int unstable = 0;
    afd_status st;
    *bind = AFD_TAICHI_BIND_NONE;
    tc.p_heavy = cfg.p_heavy;
    tc.d_heavy = cfg.d_heavy;
    tc.chunk_p = cfg.chunk_p;
    tc.chunk_d = cfg.chunk_d;
    tc.ttft_slo = pt->ttft;
    tc.tpot_slo = pt->tpot;
    tc.counts = NULL;
    p.config.extra = &tc;
    p.ttft_slo = pt->ttft;
    p.tpot_slo = pt->tpot;
    if (sh->lambda > 0) {
        p.lambda = sh->lambda;
        st = afd_serve_run(&p, &r, NULL);
        *val = st == AFD_OK ? r.attainment : NAN;
        *se = st == AFD_OK ? r.attainment_se : NAN;
        return st;
    }
    q.config = cfg;
    q.ttft_slo = pt->ttft;
    q.tpot_slo = pt->tpot;
    cap = afd_taichi_capacity(&q);
    lo = closed > 0 ? 0.5 * closed : 1e-3 * cap;
    if (!(lo < cap))
        lo = 0.5 * cap;
    st = afd_serve_goodput_attain_at(&p, sh->x->target, lo, cap, sh->x->tol, val, se, &r,
                                     &unstable);
    if (st == AFD_OK)
        *bind = afd_serve_taichi_bind(*val, &r, unstable);
    return st;
}

static void eval_point(const struct shared *sh, point *pt)
{
    afd_taichi_params q = sh->base;
    unsigned whole = (unsigned)ceil(q.len->prompt_max), N = sh->instances;
    int k;
    q.ttft_slo = pt->ttft;
    q.tpot_slo = pt->tpot;
    pt->se[0] = pt->se[1] = pt->se[2] = NAN;
    if (whole <= q.decode_bmax)
        whole = q.decode_bmax + 1;
    pt->st = sh->lambda > 0 ? afd_taichi_best_at(&q, N, sh->chunks, sh->n_chunks, sh->lambda,
                                                 pt->cfg, pt->val)
                            : afd_taichi_best(&q, N, sh->chunks, sh->n_chunks, sh->x->target,
                                              sh->x->sim && sh->x->tol > 0.01 ? 0.01 : sh->x->tol,
                                              pt->cfg, pt->val);
    if (pt->st != AFD_OK)
        return;
    pt->bind[0] = pt->bind[1] = pt->bind[2] = AFD_TAICHI_BIND_NONE;
    if (sh->lambda == 0 && !sh->x->sim) /* the closed forms' limit at each goodput */
        for (k = 0; k < 3; k++) {
            afd_taichi_params b = q;
            b.config = pt->cfg[k];
            if (b.config.p_heavy == 0) /* no rate: the plainest of the mode */
                b.config = plainest(sh, k == 1 ? 1 : 0, whole);
            if (b.config.p_heavy == 0)
                continue;
            if ((pt->st = afd_taichi_binding(&b, pt->val[k], sh->x->target, sh->x->tol,
                                             &pt->bind[k])) != AFD_OK)
                return;
        }
    if (sh->x->sim) {
        double closed[3], v[3], s[3];
        afd_taichi_bind b[3];
        afd_taichi_config cfg[3];
        for (k = 0; k < 3; k++) {
            closed[k] = pt->closed[k] = pt->val[k];
            cfg[k] = pt->cfg[k];
        }
        /* a mode the closed forms find no rate for: its plainest configuration */
        for (k = 0; k < 2; k++)
            if (cfg[k].p_heavy == 0)
                cfg[k] = plainest(sh, k, whole);
        for (k = 0; k < 2; k++) {
            v[k] = s[k] = NAN;
            b[k] = AFD_TAICHI_BIND_NONE;
            if (cfg[k].p_heavy > 0 &&
                (pt->st = sim_config(sh, pt, cfg[k], closed[k], &v[k], &s[k], &b[k])) != AFD_OK)
                return;
        }
        /* the hybrid contains both: its own configuration when it differs */
        k = v[1] > v[0] ? 1 : 0;
        v[2] = v[k];
        s[2] = s[k];
        b[2] = b[k];
        cfg[2] = pt->cfg[2].p_heavy > 0 ? pt->cfg[2] : cfg[k];
        if (is_proper_hybrid(&pt->cfg[2], whole)) {
            double hv, hs;
            afd_taichi_bind hb;
            if ((pt->st = sim_config(sh, pt, pt->cfg[2], closed[2], &hv, &hs, &hb)) != AFD_OK)
                return;
            if (hv > v[2]) {
                v[2] = hv;
                s[2] = hs;
                b[2] = hb;
            } else {
                cfg[2] = cfg[k];
            }
        }
        for (k = 0; k < 3; k++) {
            pt->val[k] = v[k];
            pt->se[k] = s[k];
            pt->cfg[k] = cfg[k];
            pt->bind[k] = b[k];
        }
    }
    /* the winner: a proper hybrid only when it beats both */
    if (!(pt->val[0] > 0) && !(pt->val[1] > 0) && !(pt->val[2] > 0))
        pt->best = -1;
    else if (is_proper_hybrid(&pt->cfg[2], whole) && pt->val[2] > pt->val[0] &&
             !(pt->val[2] <= pt->val[1]))
        pt->best = 2;
    else
        pt->best = pt->val[1] > pt->val[0] ? 1 : 0;
}

static void config_str(char *buf, size_t cap, int mode, const afd_taichi_config *c)
{
    if (c->p_heavy == 0 && c->d_heavy == 0)
        snprintf(buf, cap, "none");
    else if (mode == 0)
        snprintf(buf, cap, "%u", c->chunk_p);
    else if (mode == 1)
        snprintf(buf, cap, "%u:%u", c->p_heavy, c->d_heavy);
    else
        snprintf(buf, cap, "%u:%u,%u,%u", c->p_heavy, c->d_heavy, c->chunk_p, c->chunk_d);
}

static int run(const cli_command *self, int argc, char **argv)
{
    const char *cmd = self->path;
    struct ctx x;
    cli_common c;
    cli_serve_setup su;
    struct shared sh;
    afd_taichi_lengths len;
    double *ttft = NULL, *tpot = NULL, ms, per_s, fleet_price;
    size_t nt = 0, np = 0, n, i, k, kept;
    unsigned *chunks = NULL;
    size_t n_chunks = 0;
    point *pts = NULL;
    cli_table *t;
    cli_progress prog;
    afd_status st;
    unsigned nthreads;
    long done = 0;
    int rc;
    static const char *const mode_col[2][3] = {
        {"goodput_agg", "goodput_disagg", "goodput_hybrid"},
        {"attain_agg", "attain_disagg", "attain_hybrid"}};
    static const char *const se_col[2][3] = {
        {"goodput_agg_se", "goodput_disagg_se", "goodput_hybrid_se"},
        {"attain_agg_se", "attain_disagg_se", "attain_hybrid_se"}};

    memset(&x, 0, sizeof x);
    cli_serve_init(&x.a, cmd);
    x.a.requests = 20000; /* 2000 after 200 left the decode slots unfilled: up to 15% high */
    x.a.warmup = 4000;
    x.a.batches = 10;
    x.a.decode_bmax = 128;
    x.target = 0.9;
    x.tol = NAN;
    x.watermark = 0.95;
    x.backflow = 0.96;
    x.kv_capacity = NAN;
    cli_common_init(&c);
    rc = cli_parse_args(self, argc, argv, &c, own, &x);
    if (rc != CLI_CONTINUE) {
        cli_list_free(&x.chunks);
        return rc;
    }
    if (isnan(x.tol))
        x.tol = x.sim ? 0.02 : 0.01;
    if (!x.have_instances || x.ttft_arg == NULL || x.tpot_arg == NULL) {
        cli_list_free(&x.chunks);
        return cli_usage_error(cmd, "--instances, --ttft-slo and --tpot-slo are required");
    }
    if (x.chunks.n == 0 &&
        (rc = cli_list_parse(cmd, "chunks", "256,512,1024,2048", 1, 2, 1 << 24, &x.chunks)) != 0)
        return rc;
    x.a.arch = "taichi";
    x.a.laws = 1; /* the closed forms of afd_taichi.h evaluate the laws */
    if ((rc = cli_serve_prepare(&x.a, &c, 0, &su)) != 0) {
        cli_list_free(&x.chunks);
        return rc;
    }
#define FAIL(expr)                                                                             \
    do {                                                                                       \
        rc = (expr);                                                                           \
        goto out;                                                                              \
    } while (0)
    if ((rc = time_list(cmd, "ttft-slo", x.ttft_arg, su.hw.unit, &ttft, &nt)) != 0 ||
        (rc = time_list(cmd, "tpot-slo", x.tpot_arg, su.hw.unit, &tpot, &np)) != 0)
        goto out;
    st = afd_taichi_lengths_of(su.have_wl ? &su.wl : NULL, (double)x.a.prompt,
                               (double)x.a.output, &len);
    if (st != AFD_OK)
        FAIL(cli_usage_error(cmd, "the workload gives no usable lengths (E[P] >= 1, theta > 0)"));
    memset(&sh, 0, sizeof sh);
    sh.x = &x;
    sh.instances = (unsigned)x.a.instances;
    sh.base.hw = &su.hw;
    sh.base.len = &len;
    sh.base.kv_capacity = !isnan(x.kv_capacity)    ? x.kv_capacity
                          : !isnan(su.kv_capacity) ? su.kv_capacity
                                                   : INFINITY;
    sh.base.decode_bmax = (unsigned)x.a.decode_bmax;
    if (isfinite(sh.base.kv_capacity)) {
        /* the decode batch limit, as far as the KV cache holds it */
        double b = floor(sh.base.kv_capacity / (len.prompt_mean + len.output_mean));
        if (b < 1)
            FAIL(cli_usage_error(cmd,
                                 "the KV cache holds %.15g tokens, less than one mean request's "
                                 "%.15g",
                                 nearbyint(sh.base.kv_capacity),
                                 nearbyint(len.prompt_mean + len.output_mean)));
        if (b < sh.base.decode_bmax)
            sh.base.decode_bmax = (unsigned)b;
    }
    {
        /* the mean request fits (above); a larger one is only worth a word */
        char what[160];
        if (!isnan(x.kv_capacity))
            snprintf(what, sizeof what, "--kv-capacity %.15g", x.kv_capacity);
        else
            snprintf(what, sizeof what, "--model %s --device %s --tp %lld", x.a.model,
                     x.a.device, (long long)x.a.tp);
        cli_serve_warn_kv(cmd, what, sh.base.kv_capacity, &su, CLI_KV_REGIME, x.watermark, 0);
    }
    sh.base.watermark = x.watermark;
    sh.base.kv_time = su.params.config.kv_time_fixed +
                      su.params.config.kv_time_per_token * len.prompt_mean;
    chunks = calloc(x.chunks.n, sizeof *chunks);
    if (chunks == NULL)
        FAIL(cli_runtime_error(cmd, "out of memory"));
    for (i = 0; i < x.chunks.n; i++)
        if (x.chunks.v[i] > sh.base.decode_bmax)
            chunks[n_chunks++] = (unsigned)x.chunks.v[i];
    if (n_chunks == 0)
        FAIL(cli_usage_error(cmd, "--chunks: no chunk above the decode batch limit %u",
                             sh.base.decode_bmax));
    sh.chunks = chunks;
    sh.n_chunks = n_chunks;
    sh.lambda = x.a.lambda != NULL ? su.params.lambda : 0;
    su.params.config.decode_bmax = sh.base.decode_bmax;
    sh.tc.watermark = x.watermark;
    sh.tc.backflow = x.backflow;
    sh.tc.kv_capacity = sh.base.kv_capacity;
    sh.serve = &su.params;

    n = nt * np;
    pts = calloc(n, sizeof *pts);
    if (pts == NULL)
        FAIL(cli_runtime_error(cmd, "out of memory"));
    for (i = kept = 0; i < nt; i++)
        for (k = 0; k < np; k++)
            if (cli_shard_take(&c.out, i * np + k)) {
                pts[kept].ttft = ttft[i];
                pts[kept].tpot = tpot[k];
                kept++;
            }
    cli_progress_init(&prog, cmd, "SLO pairs", c.out.quiet);
    nthreads = afd_mc_threads(x.threads);
    (void)nthreads; /* unused without OpenMP */
    CLI_OMP("omp parallel for schedule(dynamic, 1) num_threads(nthreads)")
    for (i = 0; i < kept; i++) {
        eval_point(&sh, &pts[i]);
        CLI_OMP("omp critical")
        {
            done++;
            cli_progress_update(&prog, (double)done, (double)kept, "SLO pairs");
        }
    }
    cli_progress_end(&prog);
    for (i = 0; i < kept; i++)
        if (pts[i].st != AFD_OK)
            FAIL(cli_runtime_error(cmd, "TTFT SLO %g, TPOT SLO %g (%s): %s", pts[i].ttft,
                                   pts[i].tpot, su.hw.unit, afd_strerror(pts[i].st)));
    /* a TTFT SLO that the prompts' own prefill misses too often: say why */
    if (sh.lambda == 0)
        for (i = 0; i < nt; i++) {
            afd_taichi_params q = sh.base;
            double miss;
            q.ttft_slo = ttft[i];
            miss = afd_taichi_zero_load_miss(&q);
            if (miss > 1 - x.target)
                cli_warn(cmd,
                         "TTFT SLO %g %s: a fraction %.3g of the requests miss it with their own "
                         "prefill alone, above 1 - --target %g: goodput 0 in every mode",
                         ttft[i], su.hw.unit, miss, x.target);
        }
    /* Some cells of none is a map; every cell none is no answer (a part of a
     * sharded run is judged by merge with the others). */
    for (i = 0; i < kept && pts[i].best < 0; i++)
        ;
    if (kept > 0 && i == kept && c.out.shard_n == 0)
        FAIL(cli_infeasible(cmd, "no mode %s at any SLO pair of the map",
                            sh.lambda > 0 ? "attains any request within the SLOs"
                                          : "has a positive goodput"));
    ms = su.unit_seconds * 1e3;
    per_s = 1 / su.unit_seconds;
    t = cli_table_new(&c.out);
    if (t == NULL)
        FAIL(cli_runtime_error(cmd, "out of memory"));
    cli_table_provenance(t);
    cli_table_unit(t, "ms (SLOs), %s", sh.lambda > 0 ? "fraction (attainment)"
                                                             : "requests/s (goodput), "
                                                               "requests/dollar "
                                                               "(goodput_per_dollar)");
    cli_table_meta(t, "method", "%s", x.sim ? "sim" : "closed");
    cli_table_meta(t, "instances", "%u", sh.instances);
    cli_table_meta(t, "decode_bmax", "%u", sh.base.decode_bmax);
    cli_table_meta(t, "kv_capacity", "%.10g", sh.base.kv_capacity);
    cli_table_meta(t, "lengths", "E[P]=%.6g E[P^2]=%.6g E[G]=%.6g theta=%.6g nu=%.6g",
                   len.prompt_mean, len.prompt_m2, len.output_mean, len.theta, len.nu);
    if (sh.lambda > 0)
        cli_table_meta(t, "lambda", "%.10g/s", sh.lambda * per_s);
    /* The fleet's price: every mode runs on the same N instances of tp
     * devices, so goodput per dollar ranks the modes as goodput does; the
     * column prices the winner (nan without a device price). */
    fleet_price = NAN;
    if ((x.a.device != NULL || x.have_price) && sh.lambda <= 0) {
        afd_device dev;
        afd_error err;
        if (x.have_price)
            dev.price_per_hour = x.price;
        if ((x.have_price || afd_device_load(x.a.device, &dev, &err) == AFD_OK) &&
            dev.price_per_hour > 0) {
            fleet_price = (double)sh.instances * (double)x.a.tp * dev.price_per_hour;
            cli_table_meta(t, "price_per_hour", "%.10g per device, %.10g for the fleet",
                           dev.price_per_hour, fleet_price);
        }
    }
    {
        int a = sh.lambda > 0;
        size_t ncols = x.sim ? 12 : 9;
        const char *cols[20] = {"ttft_slo",     "tpot_slo", mode_col[a][0], mode_col[a][1],
                                mode_col[a][2], "best",     "agg_config",   "disagg_config",
                                "hybrid_config", se_col[a][0], se_col[a][1], se_col[a][2]};
        if (!a)
            cols[ncols++] = "goodput_per_dollar";
        if (x.sim) {
            cols[ncols++] = "gap_agg";
            cols[ncols++] = "gap_disagg";
            cols[ncols++] = "gap_hybrid";
        }
        if (!a) {
            cols[ncols++] = "limit_agg";
            cols[ncols++] = "limit_disagg";
            cols[ncols++] = "limit_hybrid";
        }
        cli_table_begin_array(t, ncols, cols);
    }
    for (i = 0; i < kept; i++) {
        const point *pt = &pts[i];
        char buf[64];
        double scale = sh.lambda > 0 ? 1 : per_s;
        cli_table_real(t, pt->ttft * ms);
        cli_table_real(t, pt->tpot * ms);
        for (k = 0; k < 3; k++)
            cli_table_real(t, pt->val[k] * scale);
        cli_table_str(t, pt->best < 0 ? "none" : afd_taichi_mode_name((afd_taichi_mode)pt->best));
        for (k = 0; k < 3; k++) {
            config_str(buf, sizeof buf, (int)k, &pt->cfg[k]);
            cli_table_str(t, buf);
        }
        if (x.sim)
            for (k = 0; k < 3; k++)
                cli_table_real(t, pt->se[k] * scale);
        if (sh.lambda <= 0)
            cli_table_real(t, pt->best < 0 ? NAN
                                           : afd_per_dollar(pt->val[pt->best] * scale,
                                                            fleet_price));
        if (x.sim) /* the closed form's error on each mode */
            for (k = 0; k < 3; k++)
                cli_table_real(t, afd_closed_gap(pt->closed[k], pt->val[k]));
        if (sh.lambda <= 0)
            for (k = 0; k < 3; k++)
                cli_table_str(t, afd_taichi_bind_name(pt->bind[k]));
        cli_table_end_row(t);
    }
    rc = cli_table_finish(t, cmd);
out:
    free(ttft);
    free(tpot);
    free(chunks);
    free(pts);
    cli_list_free(&x.chunks);
    cli_serve_setup_free(&su);
    return rc;
#undef FAIL
}

const cli_command cli_cmd_regime = {
    .name = "regime",
    .path = "regime",
    .summary = "SLO regime map: aggregation, disaggregation or the TaiChi hybrid",
    .usage = "regime --instances N (--model M --device D | --hw FILE) (--trace FILE | "
             "--geometric ... | --lengths P,G) --ttft-slo LIST --tpot-slo LIST "
             "[--method closed|sim] [--lambda RATE]",
    .description =
        "For each pair of a TTFT SLO and a TPOT SLO (every --ttft-slo with every\n"
        "--tpot-slo, TTFT outer), the best configuration of each mode on N instances\n"
        "and its goodput, the largest Poisson rate at which at least --target (0.9) of\n"
        "the requests meet both SLOs (TaiChi's definition), by bisection:\n"
        "  agg      every instance chunked with chunk S (S from --chunks)\n"
        "  disagg   NP prefill-only instances taking whole prompts, ND decode-only\n"
        "  hybrid   NP P-heavy instances of chunk SP beside ND D-heavy instances of\n"
        "           chunk SD (0: decode only), decodes moving to the D-heavy ones and\n"
        "           flowing back above the KV watermark; its space holds both other\n"
        "           modes, so its goodput is at least theirs\n"
        "Columns: ttft_slo tpot_slo (ms) goodput_agg goodput_disagg goodput_hybrid\n"
        "(requests/s) best agg_config disagg_config hybrid_config; --method sim adds\n"
        "goodput_agg_se goodput_disagg_se goodput_hybrid_se; then goodput_per_dollar;\n"
        "--method sim ends with gap_agg gap_disagg gap_hybrid, each mode's closed-form\n"
        "value over the simulated one, less 1 (the closed forms' error).  The row ends\n"
        "with limit_agg limit_disagg limit_hybrid (not with --lambda): the limit that\n"
        "binds at the mode's goodput, closed or simulated as --method says: ttft or\n"
        "tpot (the SLO attained the less there), ttft=tpot (--method sim: a tie, the\n"
        "two attainments within 2 standard errors of their difference, batch means),\n"
        "capacity (the rate just above is unstable), zero-load (goodput 0: the\n"
        "prompts' own prefill misses the TTFT SLO too often at any rate).\n"
        "  best           the winning mode: hybrid only when a configuration that is\n"
        "                 neither of the others beats both; none when no mode sustains\n"
        "                 any rate (a map with every cell none is infeasible: exit 1);\n"
        "                 a warning names each TTFT SLO that more than 1 - --target of\n"
        "                 the requests miss with their own prefill alone (the whole\n"
        "                 prompt-length law): goodput 0 in every mode\n"
        "  goodput_per_dollar  requests per dollar of the winner, 3600 goodput / (N x tp x\n"
        "                 the device's price_per_hour): the same N instances in every mode,\n"
        "                 so it ranks them as goodput does; nan without a price (--hw, or\n"
        "                 a device file without price_per_hour); not with --lambda\n"
        "  agg_config     the chunk S\n"
        "  disagg_config  NP:ND\n"
        "  hybrid_config  NP:ND,SP,SD (SP the longest prompt and SD = 0 is\n"
        "                 disaggregation, NP = N aggregation)\n"
        "--method closed (default): the closed forms of libanalytic/serving/afd_taichi.h\n"
        "(docs/taichi.md).  --method sim: each mode's closed-form configuration on\n"
        "the simulator (afdkit serve --arch taichi, --requests after --warmup, the\n"
        "same seed at every rate), its goodput by bisection on the simulated\n"
        "attainment and the standard error by the delta method (the attainment's\n"
        "standard error over its slope); the hybrid's row is the best of its own\n"
        "configuration and the other two.  With --lambda RATE the columns\n"
        "goodput_* become attain_* (and attain_*_se): the SLO attainment at that rate\n"
        "of each mode's configuration with the largest attainment there (TaiChi's\n"
        "Table 2).  The decode batch limit is cut to what the KV cache holds\n"
        "(capacity / (E[P] + E[G])).  --shard K/N evaluates every N-th SLO pair.",
    .groups = rg_groups,
    .run = run,
};
