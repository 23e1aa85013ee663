/* cmd_plan.c: afdkit plan, the best configuration of each serving
 * architecture for a model on at most N devices, a workload and two SLOs.
 * The closed forms of libanalytic/serving/ rank the configurations, the
 * simulator of montecarlo/serve/ measures the best few of each
 * architecture, and the table gives the simulator's numbers. */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "afd_cost.h"
#include "afd_mc.h"
#include "afd_serve.h"
#include "afd_serve_taichi.h"
#include "afd_serving.h"
#include "afd_taichi.h"
#include "cli.h"
#include "serve_opts.h"

enum { OPT_GPUS = OPT_SV_LAST, OPT_RATE, OPT_METHOD, OPT_EMIT, OPT_VERIFY, OPT_CHUNKS,
       OPT_TOL, OPT_THREADS };
enum { EMIT_NONE = 0, EMIT_AFDKIT, EMIT_VLLM, EMIT_SGLANG };
enum { ARCH_COLLOC = 0, ARCH_CHUNKED, ARCH_DISAGG, ARCH_TAICHI, N_ARCH };
static const char *const arch_names[N_ARCH] = {"colloc", "chunked", "disagg", "taichi"};
/* requests per prefill batch of colloc and disagg (afdkit serve's default) */
#define PLAN_PREFILL_BMAX 4u
/* the fraction of requests meeting both SLOs that defines the goodput */
#define PLAN_TARGET 0.9

static const cli_option plan_options[] = {
    {"gpus", 'N', "N", "devices to deploy on, at most (required)", OPT_GPUS},
    {"rate", 0, "RATE", "also simulate each row at this Poisson rate, e.g. 5/s: its P90s and "
                        "attainment", OPT_RATE},
    {"method", 0, "M", "sim (default: closed forms rank, the simulator measures) or closed",
     OPT_METHOD},
    {"verify", 0, "K", "configurations simulated per architecture, best closed-form first "
                       "(default 2)", OPT_VERIFY},
    {"chunks", 0, "LIST", "chunk sizes tried by chunked and taichi (default 512,1024,2048,4096)",
     OPT_CHUNKS},
    {"tolerance", 0, "X", "relative width of the goodput bracket (default 0.02)", OPT_TOL},
    {"emit", 0, "TOOL", "print the commands that launch each row instead of the table: "
                        "afdkit (afdkit serve), vllm or sglang", OPT_EMIT},
    {"threads", 0, "N", CLI_THREADS_HELP, OPT_THREADS},
    {NULL, 0, NULL, NULL, 0},
};
static const cli_group plan_group = {"Plan", plan_options};
static const cli_group *const plan_groups[] = {&plan_group, &cli_serve_model_group,
                                               &cli_serve_run_group, &cli_workload_group,
                                               &cli_output_group, NULL};

struct ctx {
    cli_serve_args a;
    int64_t gpus, verify;
    cli_list tps, chunks;
    const char *rate;
    int closed, emit;
    unsigned threads;
    double tol;
};

static int own(void *vctx, const cli_option *opt, const char *arg)
{
    struct ctx *x = vctx;
    const char *cmd = x->a.cmd;
    if (opt == NULL)
        return cli_usage_error(cmd, "unexpected argument '%s'", arg);
    switch (opt->id) {
    case OPT_GPUS: return cli_integer(cmd, opt->name, arg, 1, 1024, &x->gpus);
    case OPT_RATE: x->rate = arg; return 0;
    case OPT_VERIFY: return cli_integer(cmd, opt->name, arg, 1, 64, &x->verify);
    case OPT_THREADS: return cli_threads(cmd, opt->name, arg, &x->threads);
    case OPT_SV_TP:
        cli_list_free(&x->tps);
        return cli_list_parse(cmd, opt->name, arg, 1, 1, 1024, &x->tps);
    case OPT_CHUNKS:
        cli_list_free(&x->chunks);
        return cli_list_parse(cmd, opt->name, arg, 1, 2, 1 << 24, &x->chunks);
    case OPT_METHOD:
        if (strcmp(arg, "closed") == 0 || strcmp(arg, "sim") == 0) {
            x->closed = strcmp(arg, "closed") == 0;
            return 0;
        }
        return cli_usage_error(cmd, "--method: unknown method '%s' (closed, sim)", arg);
    case OPT_EMIT:
        if (strcmp(arg, "afdkit") == 0)
            x->emit = EMIT_AFDKIT;
        else if (strcmp(arg, "vllm") == 0)
            x->emit = EMIT_VLLM;
        else if (strcmp(arg, "sglang") == 0)
            x->emit = EMIT_SGLANG;
        else
            return cli_usage_error(cmd, "--emit: unknown tool '%s' (afdkit, vllm, sglang)", arg);
        return 0;
    case OPT_TOL:
        if (cli_real(cmd, opt->name, arg, &x->tol) != 0)
            return EXIT_USAGE;
        if (!(x->tol >= 1e-4 && x->tol < 0.5))
            return cli_usage_error(cmd, "--tolerance must be in [1e-4, 0.5): '%s'", arg);
        return 0;
    }
    if (opt->id == OPT_SV_LAMBDA)
        return cli_usage_error(cmd, "--lambda does not apply: plan searches the rate (--rate R "
                                    "simulates each row at R)");
    if (opt->id == OPT_SV_UNSTABLE)
        return cli_usage_error(cmd, "--allow-unstable does not apply to plan");
    return cli_serve_option(&x->a, opt, arg);
}

/* The laws of an instance of tp devices and what they allow. */
typedef struct tpset {
    unsigned tp, bmax;
    afd_hw hw;
    double kv_capacity;      /* tokens per instance */
    double kv_time_per_token; /* KV transfer per prompt token, latency unit */
} tpset;

typedef struct row {
    int arch;
    const tpset *ts;
    unsigned instances, prefill, decode, chunk, chunk_d;
    double closed;              /* closed-form goodput, per latency unit */
    double goodput, goodput_se; /* the table's (simulated unless --method closed) */
    double ttft_p90, tpot_p90, tpot_mean;
    double attain, attain_se;   /* at --rate */
    double rate_ttft_p90, rate_tpot_p90;
    const char *limit;
    afd_status st;
} row;

static unsigned row_gpus(const row *r)
{
    unsigned n;
    if (r->ts == NULL)
        return 0;
    n = r->arch == ARCH_DISAGG ? r->prefill + r->decode
                 : r->arch == ARCH_TAICHI ? r->prefill + r->decode
                                          : r->instances;
    return n * r->ts->tp;
}

struct plan {
    const struct ctx *x;
    const afd_serve_params *base; /* workload, requests, seed */
    const afd_taichi_lengths *len;
    double ttft, tpot, rate;      /* latency unit */
};

static void serve_params(const struct plan *pl, const row *r, afd_serve_params *p,
                         afd_serve_taichi_config *tc)
{
    const tpset *ts = r->ts;
    *p = *pl->base;
    memset(&p->config, 0, sizeof p->config);
    p->hw = &ts->hw;
    p->config.decode_bmax = ts->bmax;
    p->config.prefill_bmax = PLAN_PREFILL_BMAX;
    p->config.kv_time_per_token = ts->kv_time_per_token;
    p->ttft_slo = pl->ttft;
    p->tpot_slo = pl->tpot;
    switch (r->arch) {
    case ARCH_COLLOC:
        p->policy = afd_serve_policy_find("colloc");
        p->config.instances = r->instances;
        break;
    case ARCH_CHUNKED:
        p->policy = afd_serve_policy_find("chunked");
        p->config.instances = r->instances;
        p->config.chunk = r->chunk;
        break;
    case ARCH_DISAGG:
        p->policy = afd_serve_policy_find("disagg");
        p->config.prefill = r->prefill;
        p->config.decode = r->decode;
        p->config.router = AFD_SERVE_ROUTE_LEAST_REQUESTS;
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

static const char *router_name(int arch)
{
    return arch == ARCH_DISAGG ? "least-requests" : arch == ARCH_TAICHI ? "ttft-estimate"
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
static void serving_params(const struct plan *pl, const row *r, afd_serving_params *q)
{
    memset(q, 0, sizeof *q);
    q->hw = &r->ts->hw;
    q->prompt = pl->len->prompt_mean;
    q->output = pl->len->output_mean;
    q->instances = r->instances;
    q->prefill = r->prefill;
    q->decode = r->decode;
    q->prefill_bmax = PLAN_PREFILL_BMAX;
    q->decode_bmax = r->ts->bmax;
    q->kv_time = r->ts->kv_time_per_token * pl->len->prompt_mean;
    q->quantile = 0.9;
    q->lambda = 1;
}

/* TaiChi's closed-form parameters at one tp (configuration and rate to be set). */
static void taichi_params(const struct plan *pl, const tpset *ts, afd_taichi_params *t)
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
static double row_capacity(const struct plan *pl, const row *r)
{
    afd_serving_params q;
    afd_taichi_params t;
    if (r->arch == ARCH_COLLOC || r->arch == ARCH_DISAGG) {
        serving_params(pl, r, &q);
        return afd_serving_capacity(&q, r->arch == ARCH_COLLOC);
    }
    taichi_params(pl, r->ts, &t);
    /* chunked: TaiChi's aggregation, one kind of instance */
    t.config.p_heavy = r->arch == ARCH_CHUNKED ? r->instances : r->prefill;
    t.config.d_heavy = r->arch == ARCH_CHUNKED ? 0 : r->decode;
    t.config.chunk_p = r->chunk;
    t.config.chunk_d = r->arch == ARCH_CHUNKED ? r->chunk : r->chunk_d;
    return afd_taichi_capacity(&t);
}

/* The simulator's goodput of r (attainment >= PLAN_TARGET), its P90s there
 * and what fails just above; with a rate, its attainment at the rate. */
static void simulate(const struct plan *pl, row *r)
{
    afd_serve_params p;
    afd_serve_taichi_config tc;
    afd_serve_result res;
    double hi, lo;
    serve_params(pl, r, &p, &tc);
    /* the closed forms' bound of the stable rate, widened: the simulator's
     * lengths spread about the means the bound uses */
    hi = 1.5 * row_capacity(pl, r);
    lo = r->closed > 0 && r->closed < hi ? 0.5 * r->closed : 1e-3 * hi;
    r->st = afd_serve_goodput_attain(&p, PLAN_TARGET, lo, hi, pl->x->tol, &r->goodput,
                                     &r->goodput_se);
    if (r->st != AFD_OK || !(r->goodput > 0))
        return;
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
static void closed_numbers(const struct plan *pl, row *r)
{
    afd_serving_params q;
    afd_serving_result res;
    int limit = AFD_SERVING_LIMIT_NONE;
    double g;
    r->goodput = r->closed;
    if (r->arch != ARCH_COLLOC && r->arch != ARCH_DISAGG)
        return;
    serving_params(pl, r, &q);
    if (afd_serving_goodput(&q, r->arch == ARCH_COLLOC, pl->ttft, pl->tpot, 0.01, &g, &limit) ==
        AFD_OK)
        r->limit = afd_serving_limit_name(limit);
    q.lambda = r->closed;
    if (r->closed > 0 && (r->arch == ARCH_COLLOC ? afd_serving_colloc(&q, &res)
                                                  : afd_serving_disagg(&q, &res)) == AFD_OK) {
        r->ttft_p90 = res.ttft_q;
        r->tpot_p90 = res.tpot_q;
        r->tpot_mean = res.tpot_mean;
    }
}

static void row_init(row *r, int arch, const tpset *ts)
{
    memset(r, 0, sizeof *r);
    r->arch = arch;
    r->ts = ts;
    r->closed = r->goodput = r->goodput_se = NAN;
    r->ttft_p90 = r->tpot_p90 = r->tpot_mean = NAN;
    r->attain = r->attain_se = r->rate_ttft_p90 = r->rate_tpot_p90 = NAN;
    r->limit = "nan";
}

/* The best configuration of each architecture at one tp by the closed
 * forms: cand[arch] (closed 0 when none sustains a rate).  *taichi_st gets
 * the status of TaiChi's search when it fails within its solver's limits
 * (chunked and taichi then have no configuration at this tp), else AFD_OK. */
static afd_status closed_best(const struct plan *pl, const tpset *ts, unsigned n,
                              const unsigned *chunks, size_t n_chunks, row cand[N_ARCH],
                              afd_status *taichi_st)
{
    afd_serving_params q;
    afd_taichi_params t;
    afd_taichi_config best[3];
    double *g = NULL, gd, val[3];
    afd_status st;
    unsigned i, np, nd;
    int a;
    *taichi_st = AFD_OK;
    for (a = 0; a < N_ARCH; a++) {
        row_init(&cand[a], a, ts);
        cand[a].closed = 0;
    }
    serving_params(pl, &cand[ARCH_COLLOC], &q); /* the instance counts are searched */
    g = calloc(n, sizeof *g);
    if (g == NULL)
        return AFD_ENOMEM;
    /* colloc: 1 .. n instances; the most goodput, the fewest devices on a tie */
    if ((st = afd_serving_goodput_colloc_sizes(&q, pl->ttft, pl->tpot, 0.01, n, g)) != AFD_OK)
        goto out;
    for (i = 0; i < n; i++)
        if (g[i] > cand[ARCH_COLLOC].closed) {
            cand[ARCH_COLLOC].closed = g[i];
            cand[ARCH_COLLOC].instances = i + 1;
        }
    /* disagg: every split of at most n instances */
    if (n >= 2) {
        if ((st = afd_serving_goodput_stages(&q, pl->ttft, pl->tpot, 0.01, n - 1, g, &gd)) !=
            AFD_OK)
            goto out;
        for (np = 1; np < n; np++)
            for (nd = 1; np + nd <= n; nd++) {
                double v = afd_serving_goodput_split(g, gd, np, nd);
                if (v > cand[ARCH_DISAGG].closed ||
                    (v == cand[ARCH_DISAGG].closed && v > 0 &&
                     np + nd < cand[ARCH_DISAGG].prefill + cand[ARCH_DISAGG].decode)) {
                    cand[ARCH_DISAGG].closed = v;
                    cand[ARCH_DISAGG].prefill = np;
                    cand[ARCH_DISAGG].decode = nd;
                }
            }
    }
    /* chunked (TaiChi's aggregation) and TaiChi's hybrid on n instances */
    if (n_chunks > 0) {
        taichi_params(pl, ts, &t);
        st = afd_taichi_best(&t, n, chunks, n_chunks, PLAN_TARGET, 0.01, best, val);
        if (st == AFD_ELIMIT || st == AFD_ENUMERIC) {
            /* the M/D/c solver's limits: no ranking of chunked and taichi here */
            *taichi_st = st;
            st = AFD_OK;
            goto out;
        }
        if (st != AFD_OK)
            goto out;
        if (val[AFD_TAICHI_AGG] > 0) {
            cand[ARCH_CHUNKED].closed = val[AFD_TAICHI_AGG];
            cand[ARCH_CHUNKED].instances = best[AFD_TAICHI_AGG].p_heavy;
            cand[ARCH_CHUNKED].chunk = best[AFD_TAICHI_AGG].chunk_p;
        }
        if (val[AFD_TAICHI_HYBRID] > 0) {
            row *r = &cand[ARCH_TAICHI];
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

/* ---- --emit */

/* An argument as the shell reads it: quoted when it holds anything but
 * [A-Za-z0-9_./:,=+@%-]. */
static void put_arg(const char *s)
{
    const char *c;
    int plain = *s != '\0';
    for (c = s; *c && plain; c++)
        plain = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:,=+@%-",
                       *c) != NULL;
    if (plain) {
        printf(" %s", s);
        return;
    }
    putchar(' ');
    putchar('\'');
    for (c = s; *c; c++)
        if (*c == '\'')
            fputs("'\\''", stdout);
        else
            putchar(*c);
    putchar('\'');
}

/* The workload options of the command line, as given (--lengths, and those
 * of the workload group), so that the emitted run reads the same requests. */
static void put_workload(int argc, char **argv)
{
    int i;
    for (i = 1; i < argc; i++) {
        const cli_option *o;
        const char *s = argv[i], *eq;
        size_t len;
        int found = 0;
        if (strncmp(s, "--", 2) != 0)
            continue;
        eq = strchr(s, '=');
        len = eq != NULL ? (size_t)(eq - s - 2) : strlen(s + 2);
        if (len == 7 && strncmp(s + 2, "lengths", 7) == 0)
            found = 1;
        for (o = cli_workload_group.options; !found && o->name != NULL; o++)
            found = strlen(o->name) == len && strncmp(s + 2, o->name, len) == 0 &&
                    (o->arg != NULL || eq == NULL);
        if (!found)
            continue;
        put_arg(s);
        if (eq == NULL && !(len == 9 && strncmp(s + 2, "geometric", 9) == 0) && i + 1 < argc)
            put_arg(argv[++i]);
    }
}

static void emit_afdkit(const struct ctx *x, const row *r, int argc, char **argv)
{
    printf("afdkit serve --arch %s", arch_names[r->arch]);
    put_arg("--model");
    put_arg(x->a.model);
    put_arg("--device");
    put_arg(x->a.device);
    printf(" --tp %u", r->ts->tp);
    switch (r->arch) {
    case ARCH_COLLOC:
        printf(" --instances %u --prefill-bmax %u", r->instances, PLAN_PREFILL_BMAX);
        break;
    case ARCH_CHUNKED: printf(" --instances %u --chunk %u", r->instances, r->chunk); break;
    case ARCH_DISAGG:
        printf(" --prefill %u --decode %u --prefill-bmax %u --router %s", r->prefill, r->decode,
               PLAN_PREFILL_BMAX, router_name(r->arch));
        break;
    default:
        printf(" --p-heavy %u --d-heavy %u --chunk-p %u --chunk-d %u", r->prefill, r->decode,
               r->chunk, r->chunk_d);
    }
    printf(" --decode-bmax %u", r->ts->bmax);
    put_workload(argc, argv);
    put_arg("--ttft-slo");
    put_arg(x->a.ttft_slo);
    put_arg("--tpot-slo");
    put_arg(x->a.tpot_slo);
    printf(" --requests %lld --warmup %lld --batches %lld --seed %lld\n",
           (long long)x->a.requests, (long long)x->a.warmup, (long long)x->a.batches,
           (long long)x->a.seed);
}

/* One server per instance.  vLLM (docs.vllm.ai, engine arguments):
 * --tensor-parallel-size, --max-num-seqs, --max-num-batched-tokens,
 * --enable-chunked-prefill, --kv-transfer-config with the NixlConnector
 * for a disaggregated prefill or decode instance.  SGLang
 * (docs.sglang.ai, server arguments): --tp, --max-running-requests,
 * --chunked-prefill-size, --disaggregation-mode prefill|decode. */
static void emit_server(const struct ctx *x, int tool, const row *r, const char *role,
                        const char *label, unsigned count, unsigned chunk)
{
    unsigned i;
    for (i = 0; i < count; i++) {
        if (tool == EMIT_VLLM) {
            printf("vllm serve");
            put_arg(x->a.model);
            printf(" --tensor-parallel-size %u --max-num-seqs %u", r->ts->tp, r->ts->bmax);
            if (chunk > 0)
                printf(" --enable-chunked-prefill --max-num-batched-tokens %u", chunk);
            /* the NixlConnector guide starts prefill and decode
                 * instances alike, kv_role kv_both, behind a proxy */
            if (role != NULL)
                printf(" --kv-transfer-config "
                       "'{\"kv_connector\":\"NixlConnector\",\"kv_role\":\"kv_both\"}'");
        } else {
            printf("python -m sglang.launch_server --model-path");
            put_arg(x->a.model);
            printf(" --tp %u --max-running-requests %u", r->ts->tp, r->ts->bmax);
            if (chunk > 0)
                printf(" --chunked-prefill-size %u", chunk);
            if (role != NULL)
                printf(" --disaggregation-mode %s", role);
        }
        printf("  # %s instance %u of %u\n", label, i + 1, count);
    }
}

static void emit_row(const struct ctx *x, const row *r, double per_s, int argc, char **argv)
{
    printf("# %s on %u device%s: %.4g requests/s at 90%% attainment\n", arch_names[r->arch],
           row_gpus(r), row_gpus(r) == 1 ? "" : "s", r->goodput * per_s);
    if (!(r->goodput > 0)) {
        printf("# no configuration meets the SLOs\n");
        return;
    }
    if (x->emit == EMIT_AFDKIT) {
        emit_afdkit(x, r, argc, argv);
        return;
    }
    switch (r->arch) {
    case ARCH_COLLOC: emit_server(x, x->emit, r, NULL, "serving", r->instances, 0); break;
    case ARCH_CHUNKED:
        emit_server(x, x->emit, r, NULL, "serving", r->instances, r->chunk);
        break;
    case ARCH_DISAGG:
        emit_server(x, x->emit, r, "prefill", "prefill", r->prefill, 0);
        emit_server(x, x->emit, r, "decode", "decode", r->decode, 0);
        break;
    default:
        printf("# %s has no TaiChi hybrid scheduler: launch the P-heavy and D-heavy "
               "instances as chunked servers\n",
               x->emit == EMIT_VLLM ? "vLLM" : "SGLang");
        emit_server(x, x->emit, r, NULL, "P-heavy", r->prefill, r->chunk);
        emit_server(x, x->emit, r, NULL, "D-heavy", r->decode, r->chunk_d);
    }
}

/* ---- ranking */

static int by_goodput(const void *pa, const void *pb)
{
    const row *a = pa, *b = pb;
    double ga = a->goodput > 0 ? a->goodput : 0, gb = b->goodput > 0 ? b->goodput : 0;
    if (ga != gb)
        return ga > gb ? -1 : 1;
    if (row_gpus(a) != row_gpus(b))
        return row_gpus(a) < row_gpus(b) ? -1 : 1;
    return (a->arch > b->arch) - (a->arch < b->arch);
}

static int by_closed(const void *pa, const void *pb)
{
    const row *a = pa, *b = pb;
    if (a->closed != b->closed)
        return a->closed > b->closed ? -1 : 1;
    return (row_gpus(a) > row_gpus(b)) - (row_gpus(a) < row_gpus(b));
}

static void print_table(const struct ctx *x, cli_common *c, const afd_model *m,
                        const afd_device *d, const struct plan *pl, const row *rows, int n,
                        double per_s, int *rc)
{
    cli_table *t = cli_table_new(&c->out);
    int k;
    if (t == NULL) {
        *rc = cli_runtime_error(x->a.cmd, "out of memory");
        return;
    }
    cli_table_provenance(t);
    cli_table_unit(t, "requests/s (goodput, goodput_se), tokens/s (tokens_per_s_per_gpu, "
                      "tokens_per_s_per_user), ms (ttft_p90, tpot_p90%s), dollars per million "
                      "generated tokens (usd_per_mtok)",
                   pl->rate > 0 ? ", rate_ttft_p90, rate_tpot_p90" : "");
    cli_table_meta(t, "model", "%s", m->name);
    cli_table_meta(t, "device", "%s", d->name);
    cli_table_meta(t, "gpus", "%lld", (long long)x->gpus);
    cli_table_meta(t, "method", "%s", x->closed ? "closed" : "sim");
    cli_table_meta(t, "mean_lengths", "%.6g,%.6g", pl->len->prompt_mean,
                   pl->len->output_mean);
    cli_table_meta(t, "slos", "ttft %s, tpot %s, attainment %g", x->a.ttft_slo, x->a.tpot_slo,
                   PLAN_TARGET);
    cli_table_meta(t, "price_per_hour", "%.10g per device", d->price_per_hour);
    if (pl->rate > 0)
        cli_table_meta(t, "rate", "%s", x->rate);
    if (pl->rate > 0)
        cli_table_begin(t, "arch", "tp", "instances", "prefill", "decode", "gpus", "chunk",
                        "decode_bmax", "router", "goodput", "goodput_se",
                        "tokens_per_s_per_gpu", "tokens_per_s_per_user", "ttft_p90",
                        "tpot_p90", "limit", "usd_per_mtok", "attainment", "attainment_se",
                        "rate_ttft_p90", "rate_tpot_p90");
    else
        cli_table_begin(t, "arch", "tp", "instances", "prefill", "decode", "gpus", "chunk",
                        "decode_bmax", "router", "goodput", "goodput_se",
                        "tokens_per_s_per_gpu", "tokens_per_s_per_user", "ttft_p90",
                        "tpot_p90", "limit", "usd_per_mtok");
    for (k = 0; k < n; k++) {
        const row *r = &rows[k];
        unsigned gpus = r->ts != NULL ? row_gpus(r) : 0;
        double good = r->goodput * per_s;
        /* generated tokens per second: the goodput times the mean output */
        double tok = good * pl->len->output_mean;
        cli_table_str(t, arch_names[r->arch]);
        cli_table_uint(t, r->ts != NULL ? r->ts->tp : 0);
        cli_table_uint(t, r->arch == ARCH_COLLOC || r->arch == ARCH_CHUNKED
                              ? r->instances
                              : r->prefill + r->decode);
        cli_table_uint(t, r->arch == ARCH_COLLOC || r->arch == ARCH_CHUNKED ? r->instances
                                                                              : r->prefill);
        cli_table_uint(t, r->arch == ARCH_COLLOC || r->arch == ARCH_CHUNKED ? r->instances
                                                                              : r->decode);
        cli_table_uint(t, gpus);
        cli_table_uint(t, r->chunk);
        cli_table_uint(t, r->ts != NULL ? r->ts->bmax : 0);
        cli_table_str(t, router_name(r->arch));
        cli_table_real(t, good);
        cli_table_real(t, r->goodput_se * per_s);
        cli_table_real(t, gpus > 0 ? tok / gpus : NAN);
        cli_table_real(t, 1 / (r->tpot_mean / per_s));
        cli_table_real(t, r->ttft_p90);
        cli_table_real(t, r->tpot_p90);
        cli_table_str(t, r->limit);
        /* dollars per million tokens: a million over the tokens per dollar */
        cli_table_real(t, 1e6 / afd_per_dollar(tok, gpus * d->price_per_hour));
        if (pl->rate > 0) {
            cli_table_real(t, r->attain);
            cli_table_real(t, r->attain_se);
            cli_table_real(t, r->rate_ttft_p90);
            cli_table_real(t, r->rate_tpot_p90);
        }
        cli_table_end_row(t);
    }
    *rc = cli_table_finish(t, x->a.cmd);
}

static int run(const cli_command *self, int argc, char **argv)
{
    const char *cmd = self->path;
    struct ctx x;
    cli_common c;
    cli_serve_setup su;
    afd_model m;
    afd_device d;
    afd_error err;
    afd_status st, tst;
    afd_taichi_lengths len;
    struct plan pl;
    tpset *ts = NULL;
    row *cand = NULL, best[N_ARCH];
    unsigned *chunks = NULL;
    size_t n_ts = 0, n_cand = 0, n_chunks = 0, i, k;
    double per_s;
    cli_progress prog;
    int rc = 0, a, have_su = 0;
    long done = 0;
    unsigned nt;

    memset(&x, 0, sizeof x);
    cli_serve_init(&x.a, cmd);
    x.verify = 2;
    x.tol = 0.02;
    cli_common_init(&c);
    rc = cli_parse_args(self, argc, argv, &c, own, &x);
    if (rc != CLI_CONTINUE)
        goto done;
    rc = 0;
#define FAIL(expr)                                                                             \
    do {                                                                                       \
        rc = (expr);                                                                           \
        goto done;                                                                             \
    } while (0)
    if (x.gpus == 0 || x.a.model == NULL || x.a.device == NULL || x.a.ttft_slo == NULL ||
        x.a.tpot_slo == NULL)
        FAIL(cli_usage_error(cmd, "--gpus, --model, --device, --ttft-slo and --tpot-slo are "
                                  "required, with a workload (--trace FILE, --lengths P,G or "
                                  "--geometric --mu-p MP --mu-d MD)"));
    if (x.tps.n == 0 && (rc = cli_list_parse(cmd, "tp", "1,2,4,8", 1, 1, 1024, &x.tps)) != 0)
        goto done;
    if (x.chunks.n == 0 &&
        (rc = cli_list_parse(cmd, "chunks", "512,1024,2048,4096", 1, 2, 1 << 24, &x.chunks)) !=
            0)
        goto done;
    if ((st = afd_model_load(x.a.model, &m, &err)) != AFD_OK)
        FAIL(cli_file_error(cmd, x.a.model, st, &err));
    if ((st = afd_device_load(x.a.device, &d, &err)) != AFD_OK)
        FAIL(cli_file_error(cmd, x.a.device, st, &err));
    /* the laws of every tp that fits within the devices */
    ts = calloc(x.tps.n, sizeof *ts);
    chunks = calloc(x.chunks.n, sizeof *chunks);
    if (ts == NULL || chunks == NULL)
        FAIL(cli_runtime_error(cmd, "out of memory"));
    for (i = 0; i < x.tps.n; i++) {
        tpset *z = &ts[n_ts];
        z->tp = (unsigned)x.tps.v[i];
        if (z->tp > (unsigned)x.gpus)
            continue;
        if (afd_kv_capacity_tokens(&m, &d, z->tp, &z->kv_capacity, &err) != AFD_OK ||
            afd_estimate_laws(&m, &d, z->tp, &z->hw, &err) != AFD_OK) {
            cli_warn(cmd, "tp %u left out: %s", z->tp, err.text);
            continue;
        }
        cli_note_fit(cmd, NULL, &z->hw, CLI_LAWS_SERVING);
        /* the KV transfer of a prompt token crosses tp links of net_gbps */
        z->kv_time_per_token = afd_kv_bytes_per_token(&m, z->tp) / (z->tp * d.net_gbps * 1e9) * 1e3;
        n_ts++;
    }
    if (n_ts == 0)
        FAIL(cli_runtime_error(cmd, "%s does not fit on %lld x %s at any tensor-parallel size "
                                    "tried",
                               m.name, (long long)x.gpus, d.name));
    /* the workload and the SLOs, in the unit of the laws (ms), through serve's setup */
    x.a.arch = "colloc";
    x.a.tp = ts[n_ts - 1].tp;
    if ((rc = cli_serve_prepare(&x.a, &c, 0, &su)) != 0)
        goto done;
    have_su = 1;
    per_s = 1 / su.unit_seconds;
    memset(&pl, 0, sizeof pl);
    pl.x = &x;
    pl.base = &su.params;
    pl.len = &len;
    pl.ttft = su.params.ttft_slo;
    pl.tpot = su.params.tpot_slo;
    if (!isfinite(pl.ttft) || !isfinite(pl.tpot))
        FAIL(cli_usage_error(cmd, "--ttft-slo and --tpot-slo are required"));
    if (x.rate != NULL) {
        if ((rc = cli_rate(cmd, "rate", x.rate, su.hw.unit, &pl.rate)) != 0)
            goto done;
        if (!(pl.rate > 0))
            FAIL(cli_usage_error(cmd, "--rate must be > 0: '%s'", x.rate));
    }
    if (afd_taichi_lengths_of(su.have_wl ? &su.wl : NULL, (double)x.a.prompt,
                              (double)x.a.output, &len) != AFD_OK)
        FAIL(cli_usage_error(cmd, "the workload gives no usable lengths (E[P] >= 1)"));
    /* the decode batch cap of each tp: KV memory and the TPOT SLO */
    for (i = k = 0; i < n_ts; i++) {
        afd_decode_bmax_params q = {.hw = &ts[i].hw,
                                    .kv_capacity = ts[i].kv_capacity,
                                    .request_tokens = len.prompt_mean + len.output_mean,
                                    .kv_mean = len.theta,
                                    .tpot_slo = pl.tpot,
                                    .limit = ts[i].hw.decode_batch_max};
        int why;
        if (afd_decode_bmax(&q, &ts[i].bmax, &why) != AFD_OK || ts[i].bmax == 0) {
            cli_warn(cmd, "tp %u left out: %s", ts[i].tp,
                     why == AFD_DECODE_BMAX_MEMORY
                         ? "its KV cache holds less than one mean request"
                         : "one sequence's decode step alone exceeds the TPOT SLO");
            continue;
        }
        ts[k++] = ts[i];
    }
    n_ts = k;
    if (n_ts == 0)
        FAIL(cli_infeasible(cmd, "no tensor-parallel size holds a decode batch within the KV "
                                 "memory and the TPOT SLO"));
    /* closed forms: the best configuration of each architecture at each tp */
    cand = calloc(n_ts * N_ARCH, sizeof *cand);
    if (cand == NULL)
        FAIL(cli_runtime_error(cmd, "out of memory"));
    cli_progress_init(&prog, cmd, "closed forms", c.out.quiet);
    for (i = 0; i < n_ts; i++) {
        for (k = n_chunks = 0; k < x.chunks.n; k++)
            if (x.chunks.v[k] > ts[i].bmax)
                chunks[n_chunks++] = (unsigned)x.chunks.v[k];
        st = closed_best(&pl, &ts[i], (unsigned)x.gpus / ts[i].tp, chunks, n_chunks,
                         &cand[i * N_ARCH], &tst);
        if (st != AFD_OK)
            FAIL(cli_runtime_error(cmd, "tp %u: %s", ts[i].tp, afd_strerror(st)));
        if (tst != AFD_OK)
            cli_warn(cmd, "tp %u: chunked and taichi left out: their closed forms failed (%s)",
                     ts[i].tp, afd_strerror(tst));
        cli_progress_update(&prog, (double)(i + 1), (double)n_ts, "tp sizes");
    }
    cli_progress_end(&prog);
    /* per architecture: its --verify best tp sizes, best first, to the front */
    {
        row *sel = calloc(n_ts * N_ARCH, sizeof *sel);
        if (sel == NULL)
            FAIL(cli_runtime_error(cmd, "out of memory"));
        for (a = 0; a < N_ARCH; a++) {
            row *tmp = calloc(n_ts, sizeof *tmp);
            if (tmp == NULL) {
                free(sel);
                FAIL(cli_runtime_error(cmd, "out of memory"));
            }
            for (i = 0; i < n_ts; i++)
                tmp[i] = cand[i * N_ARCH + (size_t)a];
            qsort(tmp, n_ts, sizeof *tmp, by_closed);
            for (i = 0; i < n_ts && i < (size_t)x.verify; i++)
                if (tmp[i].closed > 0 || i == 0)
                    sel[n_cand++] = tmp[i];
            free(tmp);
        }
        free(cand);
        cand = sel;
    }
    /* the simulator measures them */
    if (!x.closed) {
        cli_progress_init(&prog, cmd, "simulated", c.out.quiet);
        nt = afd_mc_threads(x.threads);
        (void)nt; /* unused without OpenMP */
        CLI_OMP("omp parallel for schedule(dynamic, 1) num_threads(nt)")
        for (k = 0; k < n_cand; k++) {
            if (cand[k].closed > 0)
                simulate(&pl, &cand[k]);
            else
                cand[k].goodput = 0;
            CLI_OMP("omp critical")
            {
                done++;
                cli_progress_update(&prog, (double)done, (double)n_cand, "configurations");
            }
        }
        cli_progress_end(&prog);
        for (k = 0; k < n_cand; k++)
            if (cand[k].st != AFD_OK)
                FAIL(cli_runtime_error(cmd, "%s tp %u: %s", arch_names[cand[k].arch],
                                       cand[k].ts->tp, afd_strerror(cand[k].st)));
    } else {
        for (k = 0; k < n_cand; k++)
            closed_numbers(&pl, &cand[k]);
    }
    /* one row per architecture: its best measured configuration */
    for (a = 0; a < N_ARCH; a++)
        row_init(&best[a], a, NULL);
    for (k = 0; k < n_cand; k++) {
        row *b = &best[cand[k].arch];
        if (b->ts == NULL || by_goodput(&cand[k], b) < 0)
            *b = cand[k];
    }
    qsort(best, N_ARCH, sizeof *best, by_goodput);
    if (x.emit != EMIT_NONE) {
        for (a = 0; a < N_ARCH; a++)
            if (best[a].ts != NULL)
                emit_row(&x, &best[a], per_s, argc, argv);
        rc = fflush(stdout) == 0 ? 0 : cli_runtime_error(cmd, "write error");
    } else {
        print_table(&x, &c, &m, &d, &pl, best, N_ARCH, per_s, &rc);
    }
#undef FAIL
done:
    if (have_su)
        cli_serve_setup_free(&su);
    free(ts);
    free(cand);
    free(chunks);
    cli_list_free(&x.tps);
    cli_list_free(&x.chunks);
    return rc;
}

const cli_command cli_cmd_plan = {
    .name = "plan",
    .path = "plan",
    .summary = "the best configuration of each serving architecture on at most N devices",
    .usage = "plan --model M --device D --gpus N (--trace FILE | --lengths P,G | --geometric "
             "--mu-p MP --mu-d MD) --ttft-slo T --tpot-slo T [--rate R] [--method sim|closed] "
             "[--emit afdkit|vllm|sglang]",
    .description =
        "For each architecture afdkit simulates (colloc, chunked, disagg, taichi), the\n"
        "configuration on at most --gpus devices with the largest goodput: the largest\n"
        "Poisson rate at which 90% of the requests meet both SLOs.  Per tensor-parallel\n"
        "size (--tp LIST, default 1,2,4,8; a size whose weights do not fit is left out\n"
        "with a warning) the decode batch cap is the largest batch whose requests' KV\n"
        "caches fit in the memory the weights leave and whose decode step meets the TPOT\n"
        "SLO (afd_decode_bmax), at most the batches the decode law was fitted on.  The\n"
        "closed forms rank the configurations: colloc over 1..N/tp instances, disagg over\n"
        "every prefill/decode split (P90 TTFT and TPOT within the SLOs), chunked and\n"
        "taichi by TaiChi's attainment model over --chunks on N/tp instances.  The\n"
        "simulator (afdkit serve, --requests after --warmup, one seed at every rate)\n"
        "then measures the --verify best tp sizes of each architecture; the table gives\n"
        "its numbers.  One row per architecture, best first (goodput, then fewer devices):\n"
        "  arch tp instances prefill decode gpus chunk decode_bmax router goodput\n"
        "  goodput_se tokens_per_s_per_gpu tokens_per_s_per_user ttft_p90 tpot_p90 limit\n"
        "  usd_per_mtok\n"
        "\n"
        "  goodput        requests/s, by bisection on the simulator's attainment (afdkit\n"
        "                 serve's attainment >= 0.9), to --tolerance\n"
        "  goodput_se     its delta-method standard error\n"
        "  tokens_per_s_per_gpu   goodput x mean output tokens / gpus\n"
        "  tokens_per_s_per_user  1 / mean TPOT at the goodput\n"
        "  ttft_p90, tpot_p90     at the goodput, ms\n"
        "  limit          what fails at 1.1 x the goodput: ttft or tpot (the P90 further\n"
        "                 above its SLO) or unstable; with --method closed, colloc's and\n"
        "                 disagg's closed-form limit (ttft, tpot, prefill, decode)\n"
        "  usd_per_mtok   dollars per million generated tokens, gpus x price_per_hour /\n"
        "                 (3600 x tokens/s) x 1e6; nan without a price\n"
        "  router         the simulated routing: global (one queue per pool), least-requests\n"
        "                 (disagg's prefill pool), ttft-estimate (TaiChi's Algorithm 2)\n"
        "For taichi, prefill and decode are the P-heavy and D-heavy instances and chunk\n"
        "the P-heavy chunk.  --rate R adds attainment, attainment_se, rate_ttft_p90 and\n"
        "rate_tpot_p90 of each row simulated at R (nan with --method closed).\n"
        "--method closed prints the closed forms'\n"
        "goodput instead (goodput_se nan; P90s for colloc and disagg only).\n"
        "--emit afdkit prints, per row, the afdkit serve command that simulates it\n"
        "(append --lambda R/s to run it at R); --emit vllm or sglang, one server command\n"
        "per instance (docs/plan.md).  Progress on stderr (-q silences).  When no\n"
        "architecture sustains a rate the rows say goodput 0.",
    .groups = plan_groups,
    .run = run,
};
