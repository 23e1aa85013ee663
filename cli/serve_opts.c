/* serve_opts.c: options of the serving simulator (see serve_opts.h). */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve_opts.h"

static const cli_option arch_options[] = {
    {"arch", 0, "A", "colloc, chunked, disagg, taichi or twotier (required)", OPT_SV_ARCH},
    {"instances", 'n', "N", "colloc, chunked: instances (default 1)", OPT_SV_INSTANCES},
    {"prefill", 0, "NP", "disagg: prefill instances (default 1)", OPT_SV_PREFILL},
    {"decode", 0, "ND", "disagg: decode instances (default 1)", OPT_SV_DECODE},
    {"prefill-bmax", 0, "B", "colloc, disagg: requests per prefill batch (default 4)",
     OPT_SV_PBMAX},
    {"decode-bmax", 0, "B", "sequences decoded together per instance (default 16)",
     OPT_SV_DBMAX},
    {"chunk", 0, "S", "chunked, twotier (LP): tokens per iteration, > --decode-bmax (default 512)",
     OPT_SV_CHUNK},
    {"pseudo-batch", 0, "TAU",
     "disagg: BestServe's per-request decode at pseudo batch max(floor((b+1)/TAU), 1)",
     OPT_SV_PSEUDO},
    {"kv-bytes-per-token", 0, "X", "disagg, taichi: KV-cache bytes per prompt token (default 0)",
     OPT_SV_KVB},
    {"net-gbps", 0, "G", "disagg, taichi: KV transfer bandwidth per instance, GB/s",
     OPT_SV_NET},
    {"kv-latency", 0, "T", "disagg, taichi: fixed time per KV transfer (default 0)",
     OPT_SV_KVLAT},
    {"router", 0, "R",
     "colloc, chunked, disagg (prefill pool): how arrivals reach the instances, each "
     "queueing its own: round-robin (default: the deployment most run, the vLLM production "
     "stack's and a Kubernetes service's default, Ray Serve RoundRobinRouter, Vidur), global "
     "(one shared queue, the ideal bound), random (gateway policy random), least-requests (fewest queued + running), "
     "least-tokens (fewest prompt tokens to prefill, Ray Serve KV-aware without a cache), "
     "power-of-two (gateway power_of_two, Ray Serve LLM's default), session (consistent "
     "hash of the prompt's first block: vLLM production stack SessionRouter, gateway "
     "consistent_hashing), cache-aware (gateway/vllm-router cache_aware: the longest cached "
     "prefix when it covers > 0.3 of the prompt, else the fewest requests; needs "
     "--prefix-cache)",
     OPT_SV_ROUTER},
    {"decode-router", 0, "R",
     "disagg (per-step decode): how prefilled requests reach the decode instances, chosen "
     "when the KV transfer starts: round-robin (default, as the prefill pool's), global "
     "(one shared queue, the bound), random, least-requests (fewest queued + running sequences), least-tokens (fewest "
     "KV tokens held or queued), power-of-two; as the SGLang gateway's PD mode "
     "(--decode-policy) routes the decode pool apart from the prefill pool",
     OPT_SV_DROUTER},
    {"prefix-cache", 0, "BLOCKS",
     "colloc, chunked, disagg (prefill pool): an LRU prefix cache of BLOCKS KV blocks per "
     "instance, keyed by the trace's hash_ids; a request prefills only the prompt past its "
     "cached leading blocks; kv: at each moment the blocks of the KV memory (--model/--device) "
     "that the instance's running requests leave free, as vLLM and SGLang keep it "
     "(default 0: none)",
     OPT_SV_PCACHE},
    {"block-size", 0, "TOKENS",
     "tokens per KV block of hash_ids (default 512, Mooncake's)", OPT_SV_BLOCK},
    {NULL, 0, NULL, NULL, 0},
};
const cli_group cli_serve_arch_group = {"Architecture", arch_options};

#define MODEL_OPTIONS                                                                          \
    {"model", 0, "M", "latency laws from the estimator: model preset or config.json",          \
     OPT_SV_MODEL},                                                                            \
    {"device", 0, "D", "device preset or file (with --model)", OPT_SV_DEVICE}
static const cli_option model_options[] = {
    MODEL_OPTIONS,
    {"tp", 0, "T", "tensor-parallel devices per instance (default 1; with --hw FILE the "
                   "file's tp, and no other)", OPT_SV_TP},
    {NULL, 0, NULL, NULL, 0},
};
const cli_group cli_serve_model_group = {"Model and device (instead of --hw)", model_options};
/* --model and --device alone, for the commands that search the tensor-parallel
 * size themselves and take no latency file (plan, strategies): their own
 * --tp LIST replaces the one above. */
static const cli_option model_only_options[] = {MODEL_OPTIONS, {NULL, 0, NULL, NULL, 0}};
const cli_group cli_serve_model_only_group = {"Model and device", model_only_options};

static const cli_option run_options[] = {
    {"lambda", 'l', "RATE", "Poisson arrival rate, e.g. 3.5/s", OPT_SV_LAMBDA},
    {"lengths", 0, "P,G",
     "fixed prompt and output tokens, or op1..op4 (8192,512 2048,64 1024,64 256,2048)",
     OPT_SV_LENGTHS},
    {"requests", 0, "N", "requests measured (default 10000; exact percentiles up to 2^20, then within 2^-10)", OPT_SV_REQUESTS},
    {"warmup", 0, "N", "requests simulated first and discarded, at most 2^27 (default 1000)",
     OPT_SV_WARMUP},
    {"batches", 0, "K", "batches for the standard errors (default 32)", OPT_SV_BATCHES},
    {"seed", 0, "S", "random seed (default 1)", OPT_SV_SEED},
    {"ttft-slo", 0, "T", "time-to-first-token SLO, e.g. 1500ms", OPT_SV_TTFT},
    {"tpot-slo", 0, "T", "time-per-output-token SLO, e.g. 70ms", OPT_SV_TPOT},
    {"allow-unstable", 0, NULL, "print the finite run of an unstable system (with a warning)",
     OPT_SV_UNSTABLE},
    {NULL, 0, NULL, NULL, 0},
};
const cli_group cli_serve_run_group = {"Run", run_options};

static const cli_option arrival_options[] = {
    {"arrivals", 0, "KIND",
     "poisson (at --lambda, the default) or trace: replay --trace's own timestamps",
     OPT_SV_ARRIVALS},
    {"time-scale", 0, "X", "--arrivals trace: stretch the trace's times by X (2 halves the rate)",
     OPT_SV_TSCALE},
    {NULL, 0, NULL, NULL, 0},
};
const cli_group cli_serve_arrivals_group = {"Arrivals", arrival_options};

void cli_serve_init(cli_serve_args *a, const char *cmd)
{
    memset(a, 0, sizeof *a);
    a->cmd = cmd;
    a->instances = a->prefill = a->decode = 1;
    a->prefill_bmax = 4;
    a->decode_bmax = 16;
    a->chunk = 512;
    a->requests = 10000;
    a->warmup = 1000;
    a->batches = AFD_SERVE_BATCHES;
    a->seed = 1;
    a->net_gbps = NAN;
    a->tp = 1;
    a->time_scale = NAN;
    a->block_size = 512;
    /* the deployment most run: a router that deals arrivals in turn to
     * instances that queue their own (the vLLM production stack's default,
     * and a Kubernetes service's); global, one shared queue, is the bound */
    a->router = a->decode_router = AFD_SERVE_ROUTE_ROUND_ROBIN;
}

/* BestServe's operating points (Section 4.1). */
static const struct {
    const char *name;
    int64_t p, g;
} op_points[] = {{"op1", 8192, 512}, {"op2", 2048, 64}, {"op3", 1024, 64}, {"op4", 256, 2048}};

static int lengths(const char *cmd, const char *arg, int64_t *p, int64_t *g)
{
    cli_list l;
    int rc;
    size_t i;
    for (i = 0; i < sizeof op_points / sizeof op_points[0]; i++)
        if (strcmp(arg, op_points[i].name) == 0) {
            *p = op_points[i].p;
            *g = op_points[i].g;
            return 0;
        }
    rc = cli_list_parse(cmd, "lengths", arg, 1, 1, 1e9, &l);
    if (rc != 0)
        return rc;
    if (l.n != 2) {
        cli_list_free(&l);
        return cli_usage_error(cmd, "--lengths takes two numbers P,G (prompt and output "
                                    "tokens): '%s'",
                               arg);
    }
    *p = (int64_t)l.v[0];
    *g = (int64_t)l.v[1];
    cli_list_free(&l);
    return 0;
}

static const char *const router_names[] = {"global",         "random",       "round-robin",
                                           "least-requests", "least-tokens", "power-of-two",
                                           "session",        "cache-aware"};

const char *cli_serve_router_name(afd_serve_router r)
{
    return (unsigned)r < 8 ? router_names[r] : "?";
}

/* --router (keyed: session and cache-aware too) or --decode-router. */
static int parse_router(const char *cmd, const char *name, const char *arg, int keyed,
                        afd_serve_router *out)
{
    const char *const *names = router_names;
    size_t k, n = keyed ? 8 : 6;
    for (k = 0; k < n; k++)
        if (strcmp(arg, names[k]) == 0) {
            *out = (afd_serve_router)k;
            return 0;
        }
    if (!keyed && (strcmp(arg, names[6]) == 0 || strcmp(arg, names[7]) == 0))
        return cli_usage_error(cmd, "--%s %s: decode instances keep no prefix cache to route "
                                    "by (global, random, round-robin, least-requests, "
                                    "least-tokens, power-of-two)",
                               name, arg);
    return cli_usage_error(cmd, "--%s: unknown router '%s' (global, random, round-robin, "
                                "least-requests, least-tokens, power-of-two%s)",
                           name, arg, keyed ? ", session, cache-aware" : "");
}

int cli_serve_option(cli_serve_args *a, const cli_option *opt, const char *arg)
{
    const char *cmd = a->cmd;
    if (opt->id >= OPT_SV_ARCH && opt->id < OPT_SV_ARCH + 64)
        a->given |= CLI_SERVE_BIT(opt->id);
    switch (opt->id) {
    case OPT_SV_ARCH:
        if (afd_serve_policy_find(arg) == NULL)
            return cli_usage_error(cmd, "--arch: unknown architecture '%s' (colloc, chunked, "
                                        "disagg, taichi, twotier)",
                                   arg);
        a->arch = arg;
        return 0;
    case OPT_SV_INSTANCES:
        return cli_integer(cmd, opt->name, arg, 1, AFD_SERVE_MAX_INSTANCES, &a->instances);
    case OPT_SV_PREFILL:
        return cli_integer(cmd, opt->name, arg, 1, AFD_SERVE_MAX_INSTANCES, &a->prefill);
    case OPT_SV_DECODE:
        return cli_integer(cmd, opt->name, arg, 1, AFD_SERVE_MAX_INSTANCES, &a->decode);
    case OPT_SV_PBMAX: return cli_integer(cmd, opt->name, arg, 1, 65536, &a->prefill_bmax);
    case OPT_SV_DBMAX: return cli_integer(cmd, opt->name, arg, 1, 65536, &a->decode_bmax);
    case OPT_SV_CHUNK: return cli_integer(cmd, opt->name, arg, 2, 1 << 24, &a->chunk);
    case OPT_SV_PSEUDO: return cli_real_min(cmd, opt->name, arg, 0, 1, &a->pseudo_tau);
    case OPT_SV_KVB: return cli_real_min(cmd, opt->name, arg, 0, 0, &a->kv_bytes);
    case OPT_SV_NET: return cli_real_min(cmd, opt->name, arg, 0, 1, &a->net_gbps);
    case OPT_SV_KVLAT: a->kv_latency = arg; return 0;
    case OPT_SV_ROUTER: return parse_router(cmd, opt->name, arg, 1, &a->router);
    case OPT_SV_DROUTER: return parse_router(cmd, opt->name, arg, 0, &a->decode_router);
    case OPT_SV_PCACHE:
        a->prefix_kv = strcmp(arg, "kv") == 0;
        if (a->prefix_kv) {
            a->prefix_blocks = 0;
            return 0;
        }
        return cli_integer(cmd, opt->name, arg, 0, UINT32_MAX - 1, &a->prefix_blocks);
    case OPT_SV_BLOCK: return cli_integer(cmd, opt->name, arg, 1, 1 << 24, &a->block_size);
    case OPT_SV_LAMBDA: a->lambda = arg; return 0;
    case OPT_SV_TTFT: a->ttft_slo = arg; return 0;
    case OPT_SV_TPOT: a->tpot_slo = arg; return 0;
    case OPT_SV_LENGTHS: return lengths(cmd, arg, &a->prompt, &a->output);
    case OPT_SV_REQUESTS:
        a->have_requests = 1;
        return cli_integer(cmd, opt->name, arg, 2, (int64_t)AFD_SERVE_MAX_REQUESTS, &a->requests);
    case OPT_SV_WARMUP:
        a->have_warmup = 1;
        return cli_integer(cmd, opt->name, arg, 0, (int64_t)AFD_SERVE_MAX_WARMUP, &a->warmup);
    case OPT_SV_BATCHES: return cli_integer(cmd, opt->name, arg, 2, 100000, &a->batches);
    case OPT_SV_SEED: return cli_integer(cmd, opt->name, arg, 0, INT64_MAX, &a->seed);
    case OPT_SV_UNSTABLE: a->allow_unstable = 1; return 0;
    case OPT_SV_MODEL: a->model = arg; return 0;
    case OPT_SV_DEVICE: a->device = arg; return 0;
    case OPT_SV_TP: a->have_tp = 1; return cli_integer(cmd, opt->name, arg, 1, 1024, &a->tp);
    case OPT_SV_ARRIVALS:
        if (strcmp(arg, "poisson") != 0 && strcmp(arg, "trace") != 0)
            return cli_usage_error(cmd, "--arrivals: expected poisson or trace: '%.40s'", arg);
        a->replay = strcmp(arg, "trace") == 0;
        return 0;
    case OPT_SV_TSCALE: return cli_real_min(cmd, opt->name, arg, 0, 1, &a->time_scale);
    }
    return cli_usage_error(cmd, "internal error: unhandled option --%s", opt->name);
}

int cli_serve_laws(const char *cmd, const char *model, const char *device, double tp, afd_hw *hw,
                   double *kv_ms_per_token, double *kv_capacity)
{
    afd_model m;
    afd_device d;
    afd_error err;
    afd_status st;
    if ((st = afd_model_load(model, &m, &err)) != AFD_OK)
        return cli_file_error(cmd, model, st, &err);
    if ((st = afd_device_load(device, &d, &err)) != AFD_OK)
        return cli_file_error(cmd, device, st, &err);
    if ((st = afd_kv_capacity_tokens(&m, &d, tp, kv_capacity, &err)) != AFD_OK)
        return cli_usage_error(cmd, "%s on %g x %s: %s", m.name, tp, d.name, err.text);
    if ((st = afd_estimate_laws(&m, &d, tp, hw, &err)) != AFD_OK)
        return cli_usage_error(cmd, "%s on %g x %s: %s", m.name, tp, d.name, err.text);
    *kv_ms_per_token = afd_kv_bytes_per_token(&m, tp) / (tp * d.net_gbps * 1e9) * 1e3;
    return 0;
}

void cli_serve_setup_free(cli_serve_setup *su)
{
    if (su->have_wl)
        afd_workload_free(&su->wl);
    su->have_wl = 0;
    free(su->times);
    su->times = NULL;
}

/* --arrivals trace: row n of the trace arrives at (t_n - t_1) X, X the
 * --time-scale (1 by default) or the stretch that gives --lambda; every row
 * is simulated, the first --warmup (default 0) discarded. */
static int replay_times(const cli_serve_args *a, const char *file, cli_serve_setup *su)
{
    const char *cmd = a->cmd;
    afd_serve_params *p = &su->params;
    const afd_workload *w = &su->wl;
    double scale = isnan(a->time_scale) ? 1 : a->time_scale;
    uint64_t warmup = a->have_warmup ? (uint64_t)a->warmup : 0, requests;
    size_t n;
    if (w->time == NULL)
        return cli_input_error(cmd, "%s: --arrivals trace: the trace has no timestamp column "
                                    "(name one with --time-col)",
                               file);
    if (w->arrivals.unsorted_line != 0)
        return cli_input_error(cmd, "%s:%ld: --arrivals trace: the times must not go backwards",
                               file, w->arrivals.unsorted_line);
    if (!(w->arrivals.lambda > 0))
        return cli_input_error(cmd, "%s: --arrivals trace: the times span no interval", file);
    if (a->lambda != NULL) /* p->lambda is in the latency unit */
        scale = w->arrivals.lambda * su->unit_seconds / p->lambda;
    if ((uint64_t)w->n_kept <= warmup)
        return cli_input_error(cmd, "%s: --arrivals trace: %zu rows, none left after --warmup "
                                    "%llu",
                               file, w->n_kept, (unsigned long long)warmup);
    requests = a->have_requests ? (uint64_t)a->requests : (uint64_t)w->n_kept - warmup;
    if (warmup + requests > (uint64_t)w->n_kept)
        return cli_input_error(cmd, "%s: --arrivals trace: %zu rows, fewer than --warmup %llu + "
                                    "--requests %llu",
                               file, w->n_kept, (unsigned long long)warmup,
                               (unsigned long long)requests);
    if (requests < (uint64_t)a->batches)
        return cli_input_error(cmd, "%s: --arrivals trace: %llu rows after the warm-up, fewer "
                                    "than --batches (%lld)",
                               file, (unsigned long long)requests, (long long)a->batches);
    su->times = malloc(w->n_kept * sizeof *su->times);
    if (su->times == NULL)
        return cli_runtime_error(cmd, "out of memory");
    for (n = 0; n < w->n_kept; n++)
        su->times[n] = (w->time[n] - w->time[0]) * scale / su->unit_seconds;
    su->replay_rate = w->arrivals.lambda / scale;
    p->times = su->times;
    p->n_times = w->n_kept;
    p->lambda = NAN;
    p->warmup = warmup;
    p->requests = requests;
    return 0;
}

static int prepare(const cli_serve_args *a, const cli_common *c, int need_lambda,
                   cli_serve_setup *su)
{
    const char *cmd = a->cmd;
    afd_serve_params *p = &su->params;
    afd_serve_config *cf = &p->config;
    double kvlat = 0;
    int rc;
    /* the prompts' blocks are read for a prefix cache and the routers keyed by them */
    int cache = a->prefix_blocks > 0 || a->prefix_kv;
    int blocks = cache || a->router == AFD_SERVE_ROUTE_SESSION ||
                 a->router == AFD_SERVE_ROUTE_CACHE_AWARE;

    memset(su, 0, sizeof *su);
    su->kv_capacity = NAN;
    if (a->arch == NULL)
        return cli_usage_error(cmd, "--arch colloc|chunked|disagg is required");
    if (need_lambda && a->lambda == NULL && !a->replay)
        return cli_usage_error(cmd, "--lambda RATE is required (e.g. --lambda 3.5/s)");
    if (!isnan(a->time_scale) && !a->replay)
        return cli_usage_error(cmd, "--time-scale needs --arrivals trace");
    if (a->replay && a->lambda != NULL && !isnan(a->time_scale))
        return cli_usage_error(cmd, "--arrivals trace takes --lambda (the rate to stretch the "
                                    "trace to) or --time-scale, not both");
    if (a->output > 0 &&
        (c->wl.trace != NULL || c->wl.geometric || c->wl.have_theta || c->wl.have_nu))
        return cli_usage_error(cmd, "--lengths P,G and %s are two workloads: give one",
                               c->wl.trace != NULL ? "--trace FILE"
                               : c->wl.geometric   ? "--geometric"
                                                   : "--theta/--nu");
    if (a->replay && (a->output > 0 || c->wl.trace == NULL))
        return cli_usage_error(cmd, "--arrivals trace replays the rows of --trace FILE (times "
                                    "and lengths): give --trace, not --lengths");
    if ((a->model == NULL) != (a->device == NULL))
        return cli_usage_error(cmd, "--model and --device go together");
    if (blocks && c->wl.trace == NULL)
        return cli_usage_error(cmd, "%s needs a trace with block hashes: give --trace FILE",
                               cache ? "--prefix-cache" : "--router session and "
                                                                         "cache-aware");
    if (a->router == AFD_SERVE_ROUTE_CACHE_AWARE && !cache)
        return cli_usage_error(cmd, "--router cache-aware reads the instances' prefix caches: "
                                    "give --prefix-cache BLOCKS or kv");
    if (a->prefix_kv && a->model == NULL)
        return cli_usage_error(cmd, "--prefix-cache kv holds the cache in the KV memory of "
                                    "--model M --device D: give them, or --prefix-cache BLOCKS");
    if (a->model != NULL && c->hw.hw != NULL)
        return cli_usage_error(cmd, "give either --hw FILE or --model M --device D, not both");
    if (a->model == NULL && c->hw.hw == NULL)
        return cli_usage_error(cmd, "no latency laws: give --model M --device D [--tp T] or "
                                    "--hw FILE (a latency file with prefill_a ... decode_alpha "
                                    "and a unit)");
    if (a->model != NULL) {
        double kv_ms;
        if ((rc = cli_serve_laws(cmd, a->model, a->device, (double)a->tp, &su->hw, &kv_ms,
                                 &su->kv_capacity)) != 0)
            return rc;
        su->kv_ms_per_token = kv_ms;
    } else {
        /* the file's laws time an instance of its tp devices: --tp may
         * not say another */
        double tp = (double)a->tp;
        if ((rc = cli_hw_load(cmd, &c->hw, &su->hw)) != 0 ||
            (rc = cli_hw_tp(cmd, c->hw.hw, &su->hw, a->have_tp, &tp)) != 0)
            return rc;
    }
    /* the simulator steps through the tables where hw has them, exact at
     * their points; the laws are used where it has none, and by closed forms */
    if (a->laws || !afd_hw_has_decode_table(&su->hw) || !afd_hw_has_prefill_table(&su->hw))
        cli_note_fit(cmd, a->model != NULL ? NULL : c->hw.hw, &su->hw, CLI_LAWS_SERVING);
    if (!afd_hw_has_prefill(&su->hw) || !afd_hw_has_decode(&su->hw))
        return cli_usage_error(cmd, "%s: the latency file has no %s law (prefill_a prefill_b "
                                    "prefill_c, decode_beta decode_gamma decode_alpha)",
                               c->hw.hw, afd_hw_has_prefill(&su->hw) ? "decode" : "prefill");
    if (afd_unit_seconds(su->hw.unit, &su->unit_seconds) != AFD_OK)
        return cli_usage_error(cmd, "%s: unit '%s' has no conversion to seconds; serve reports "
                                    "milliseconds and needs unit = s, ms or us",
                               c->hw.hw, su->hw.unit[0] ? su->hw.unit : "(none)");
    p->hw = &su->hw;
    p->policy = afd_serve_policy_find(a->arch);
    p->lambda = NAN;
    if (a->lambda != NULL && (rc = cli_rate(cmd, "lambda", a->lambda, su->hw.unit, &p->lambda)) != 0)
        return rc;
    if (a->lambda != NULL && !(p->lambda > 0))
        return cli_usage_error(cmd, "--lambda must be > 0: '%s'", a->lambda);
    p->ttft_slo = p->tpot_slo = INFINITY;
    if (a->ttft_slo != NULL &&
        (rc = cli_time(cmd, "ttft-slo", a->ttft_slo, su->hw.unit, &p->ttft_slo)) != 0)
        return rc;
    if (a->tpot_slo != NULL &&
        (rc = cli_time(cmd, "tpot-slo", a->tpot_slo, su->hw.unit, &p->tpot_slo)) != 0)
        return rc;
    if (!(p->ttft_slo > 0) || !(p->tpot_slo > 0))
        return cli_usage_error(cmd, "SLOs must be > 0");
    if (a->kv_latency != NULL &&
        (rc = cli_time(cmd, "kv-latency", a->kv_latency, su->hw.unit, &kvlat)) != 0)
        return rc;
    if (!(kvlat >= 0))
        return cli_usage_error(cmd, "--kv-latency must be >= 0");
    if ((a->given & CLI_SERVE_BIT(OPT_SV_DROUTER)) &&
        a->decode_router != AFD_SERVE_ROUTE_GLOBAL && a->pseudo_tau > 0)
        return cli_usage_error(cmd, "--decode-router needs the per-step decode: --pseudo-batch "
                                    "places each request on the decode instance with the most "
                                    "free boxes");
    if (a->kv_bytes > 0 && isnan(a->net_gbps))
        return cli_usage_error(cmd, "--kv-bytes-per-token needs --net-gbps");
    cf->instances = (unsigned)a->instances;
    cf->prefill = (unsigned)a->prefill;
    cf->decode = (unsigned)a->decode;
    cf->prefill_bmax = (unsigned)a->prefill_bmax;
    cf->router = a->router;
    cf->decode_router = a->decode_router;
    /* the default router stands aside where it has no choice to make: a pool
     * of one instance (its one queue is the shared one), the pseudo-batch
     * decode (which places each request itself); taichi and twotier route
     * by their own rules */
    if (a->arch == NULL || strcmp(a->arch, "taichi") == 0 || strcmp(a->arch, "twotier") == 0)
        cf->router = cf->decode_router = AFD_SERVE_ROUTE_GLOBAL;
    else if (!(a->given & CLI_SERVE_BIT(OPT_SV_ROUTER)) &&
             (strcmp(a->arch, "disagg") == 0 ? a->prefill : a->instances) == 1)
        cf->router = AFD_SERVE_ROUTE_GLOBAL;
    if (!(a->given & CLI_SERVE_BIT(OPT_SV_DROUTER)) && (a->decode == 1 || a->pseudo_tau > 0))
        cf->decode_router = AFD_SERVE_ROUTE_GLOBAL;
    cf->prefix_blocks = (uint32_t)a->prefix_blocks;
    cf->prefix_kv_tokens = a->prefix_kv ? su->kv_capacity : 0;
    cf->block_size = (uint32_t)a->block_size;
    cf->decode_bmax = (unsigned)a->decode_bmax;
    /* a batch past the law's fitted range times steps the fit never saw */
    if (su->hw.decode_batch_max > 0 && cf->decode_bmax > su->hw.decode_batch_max)
        cli_warn(cmd, "%s: --decode-bmax %u exceeds the batches 1 to %u the decode law was "
                      "fitted on (decode_batch_max): the steps of larger batches are "
                      "extrapolated",
                 a->model != NULL ? "the estimator's laws" : c->hw.hw, cf->decode_bmax,
                 su->hw.decode_batch_max);
    cf->chunk = (unsigned)a->chunk;
    cf->pseudo_tau = a->pseudo_tau;
    cf->kv_time_fixed = kvlat;
    cf->kv_time_per_token =
        a->kv_bytes > 0 ? a->kv_bytes / (a->net_gbps * 1e9) / su->unit_seconds
        : a->model != NULL ? su->kv_ms_per_token * 1e-3 / su->unit_seconds
                           : 0;
    p->requests = (uint64_t)a->requests;
    p->warmup = (uint64_t)a->warmup;
    p->batches = (unsigned)a->batches;
    p->seed = (uint64_t)a->seed;
    if (a->output > 0) {
        p->prompt = (uint32_t)a->prompt;
        p->output = (uint32_t)a->output;
    } else {
        if (c->wl.trace == NULL && !c->wl.geometric)
            return cli_usage_error(cmd, "no request lengths: give --lengths P,G, --trace FILE "
                                        "or --geometric --mu-p MP --mu-d MD");
        if ((rc = cli_workload_load(cmd, &c->wl, CLI_WL_NEEDS_LENGTHS,
                                     /* Poisson arrivals draw requests by count, unless
                                        their blocks matter */
                                     blocks       ? CLI_KEEP_BLOCKS
                                     : a->replay ? CLI_KEEP_ROWS
                                                 : CLI_KEEP_PAIRS,
                                     &c->out, &su->wl)) != 0)
            return rc;
        su->have_wl = 1;
        p->workload = &su->wl;
        if (blocks && su->wl.block_start == NULL)
            return cli_input_error(cmd, "%s: %s needs the prompts' block hashes, and the trace "
                                        "has no hash_ids column",
                                   c->wl.trace, cache ? "--prefix-cache"
                                                                      : "--router");
        if (blocks && !a->replay)
            cli_warn(cmd, "%s: Poisson arrivals draw the trace's %zu rows at random, so a "
                          "row's blocks recur every %zu requests or so, reuse the trace never "
                          "had; --arrivals trace replays its own",
                     c->wl.trace, su->wl.n_kept, su->wl.n_kept);
    }
    if (a->replay && (rc = replay_times(a, c->wl.trace, su)) != 0)
        return rc;
    if ((uint64_t)a->batches > p->requests)
        return cli_usage_error(cmd, "--requests (%lld) must be at least --batches (%lld)",
                               (long long)a->requests, (long long)a->batches);
    return 0;
}

int cli_serve_prepare(const cli_serve_args *a, const cli_common *c, int need_lambda,
                      cli_serve_setup *su)
{
    int rc = prepare(a, c, need_lambda, su);
    if (rc != 0)
        cli_serve_setup_free(su); /* what was loaded before the error */
    return rc;
}

void cli_serve_warn_kv(const char *cmd, const char *what, double cap, const cli_serve_setup *su,
                       cli_kv_reader who, double watermark, int uniform)
{
    const afd_serve_params *p = &su->params;
    const afd_workload *w = p->workload;
    double prompt, output;
    char req[200], tail[400];
    if (!(cap < INFINITY))
        return;
    if (w != NULL && w->kind == AFD_WORKLOAD_GEOMETRIC) {
        prompt = w->mu_p;
        output = w->mu_d;
        snprintf(req, sizeof req, "the mean request (%.6g tokens = --mu-p %.6g + --mu-d %.6g)",
                 prompt + output, prompt, output);
    } else {
        if (w == NULL) {
            prompt = p->prompt;
            output = p->output;
        } else {
            /* the largest P + D, an empty prompt as 1 token as the simulator takes it */
            size_t j, n = afd_workload_entries(w);
            prompt = output = 0;
            for (j = 0; j < n; j++) {
                afd_workload_pair e = afd_workload_entry(w, j);
                double pj = (double)afd_workload_prompt_tokens(e);
                if (pj + (double)e.decode > prompt + output) {
                    prompt = pj;
                    output = (double)e.decode;
                }
            }
        }
        snprintf(req, sizeof req, "%s (%.15g tokens = prompt %.15g + output %.15g)",
                 w == NULL ? "one --lengths request" : "the largest request of the trace",
                 prompt + output, prompt, output);
    }
    if (prompt + output <= cap)
        return;
    switch (who) {
    case CLI_KV_TAICHI:
        /* policy_taichi.c reads kv_capacity only for the mark watermark x
         * kv_capacity, and only where instances differ */
        if (uniform)
            snprintf(tail, sizeof tail, "taichi reads it only for its flow mark, and with "
                                        "uniform instances nothing flows: it has no effect");
        else
            snprintf(tail, sizeof tail,
                     "taichi reads it only for its flow mark (--watermark %.6g x %.6g = %.6g "
                     "tokens): a D-heavy instance holding more, as such a request does, sends "
                     "its running decodes to P-heavy instances at every iteration",
                     watermark, cap, watermark * cap);
        break;
    case CLI_KV_TWOTIER:
        /* policy_twotier.c admits a prompt within kv_capacity, or onto an
         * instance holding nothing */
        snprintf(tail, sizeof tail,
                 "twotier only bounds its HP prefill batches by it: a prompt that does not "
                 "fit is prefilled alone on an HP instance holding nothing (or by its "
                 "ticket), and an instance above the capacity takes no other prefill");
        break;
    default:
        snprintf(tail, sizeof tail, "the model reads only the mean request (decode batch "
                                    "limit and flow mark), so larger ones are not singled out");
        break;
    }
    cli_warn(cmd, "%s is below %s; %s", what, req, tail);
}

int cli_serve_requests(const cli_serve_args *a, const cli_common *c, afd_workload *w,
                       int *have_wl, afd_taichi_lengths *len)
{
    const char *cmd = a->cmd;
    int rc;
    *have_wl = 0;
    if (a->output > 0) {
        if (c->wl.trace != NULL || c->wl.geometric || c->wl.have_theta || c->wl.have_nu)
            return cli_usage_error(cmd, "--lengths P,G and %s are two workloads: give one",
                                   c->wl.trace != NULL ? "--trace FILE"
                                   : c->wl.geometric   ? "--geometric"
                                                       : "--theta/--nu");
        if (afd_taichi_lengths_of(NULL, (double)a->prompt, (double)a->output, len) != AFD_OK)
            return cli_usage_error(cmd, "--lengths: no usable lengths");
        return 0;
    }
    if ((rc = cli_workload_load(cmd, &c->wl, CLI_WL_NEEDS_LENGTHS, CLI_KEEP_PAIRS, &c->out, w)) !=
        0)
        return rc;
    *have_wl = 1;
    if (afd_taichi_lengths_of(w, 0, 0, len) != AFD_OK || !(len->prompt_mean >= 1) ||
        !(len->output_mean >= 1)) {
        afd_workload_free(w);
        *have_wl = 0;
        return cli_usage_error(cmd, "the workload gives no usable lengths (E[P] >= 1, E[G] >= 1)");
    }
    return 0;
}

void cli_serve_decode_cap(const cli_serve_args *a, const afd_hw *hw, double kv_capacity,
                          const afd_taichi_lengths *len, double tpot, unsigned *bmax,
                          unsigned *fit, int *why)
{
    afd_decode_bmax_params q = {.hw = hw,
                                .kv_capacity = kv_capacity,
                                .request_tokens = len->prompt_mean + len->output_mean,
                                .kv_mean = len->theta,
                                .tpot_slo = tpot,
                                .limit = hw->decode_batch_max};
    *why = 0;
    if (afd_decode_bmax(&q, fit, why) != AFD_OK)
        *fit = 0;
    if (!(a->given & CLI_SERVE_BIT(OPT_SV_DBMAX))) {
        *bmax = *fit;
        return;
    }
    /* a cap given: the memory still holds its sequences' whole requests */
    q.tpot_slo = INFINITY;
    q.limit = (unsigned)a->decode_bmax;
    if (afd_decode_bmax(&q, bmax, NULL) != AFD_OK)
        *bmax = 0;
    if (*bmax == 0)
        *why = AFD_DECODE_BMAX_MEMORY;
}

size_t cli_cap_binds(const double *at, const double *fit, size_t n, size_t stride,
                     double min_rise)
{
    size_t k, w = n;
    double best = min_rise;
    for (k = 0; k < n; k++) {
        double a = *(const double *)(const void *)((const char *)at + k * stride);
        double f = *(const double *)(const void *)((const char *)fit + k * stride);
        double rise;
        if (!(f > 0) || !(a >= 0))
            continue;
        rise = a > 0 ? f / a - 1 : INFINITY;
        if (rise > best) {
            best = rise;
            w = k;
        }
    }
    return w;
}
