/* cmd_serve.c: afdkit serve, one run of the request-level serving
 * simulator (montecarlo/serve/afd_serve.h). */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "afd_prefix.h"
#include "afd_serve.h"
#include "afd_serve_taichi.h"
#include "afd_serve_twotier.h"
#include "afd_twotier.h"
#include "afd_serving.h"
#include "cli.h"
#include "serve_opts.h"

enum {
    OPT_CLOSED = OPT_SV_LAST,
    OPT_TC_NP,
    OPT_TC_ND,
    OPT_TC_SP,
    OPT_TC_SD,
    OPT_TC_WATERMARK,
    OPT_TC_BACKFLOW,
    OPT_TC_KVCAP,
    OPT_TT_LP,
    OPT_TT_HP,
    OPT_TT_POLICY,
    OPT_TT_THRESHOLD,
    OPT_TT_DROP,
    OPT_TT_NO_TICKETS
};

static const cli_option closed_options[] = {
    {"closed", 0, NULL,
     "add the closed forms' ttft_mean_cf ttft_p90_cf tpot_mean_cf tpot_p90_cf and, last, "
     "their gaps to the run gap_ttft_mean gap_ttft_p90 gap_tpot_mean gap_tpot_p90 (closed / "
     "simulated - 1)",
     OPT_CLOSED},
    {NULL, 0, NULL, NULL, 0},
};
static const cli_group closed_group = {"Closed forms", closed_options};

static const cli_option taichi_options[] = {
    {"p-heavy", 0, "NP", "taichi: P-heavy instances (large chunk), >= 0 (default 1)", OPT_TC_NP},
    {"d-heavy", 0, "ND", "taichi: D-heavy instances (small chunk), >= 0 (default 1)", OPT_TC_ND},
    {"chunk-p", 0, "SP", "taichi: P-heavy chunk, > --decode-bmax (default 1024)", OPT_TC_SP},
    {"chunk-d", 0, "SD", "taichi: D-heavy chunk, 0 (decode only) or > --decode-bmax (default 256)",
     OPT_TC_SD},
    {"watermark", 0, "M",
     "taichi: KV memory fraction of a D-heavy instance above which its longest decodes flow "
     "to P-heavy instances (default 0.95)",
     OPT_TC_WATERMARK},
    {"backflow", 0, "A",
     "taichi: a decode on a P-heavy instance whose TPOT so far exceeds A x --tpot-slo flows "
     "back (default 0.96)",
     OPT_TC_BACKFLOW},
    {"kv-capacity", 0, "TOKENS",
     "taichi, twotier: KV-cache tokens per instance (default: from --model/--device, else "
     "unlimited: no watermark flows, no limit on an HP prefill batch)",
     OPT_TC_KVCAP},
    {NULL, 0, NULL, NULL, 0},
};
static const cli_group taichi_group = {"TaiChi hybrid (--arch taichi)", taichi_options};

static const cli_option twotier_options[] = {
    {"lp", 0, "N", "twotier: low-priority instances, >= 1 (default 1)", OPT_TT_LP},
    {"hp", 0, "M", "twotier: high-priority instances, >= 0 (default 1)", OPT_TT_HP},
    {"policy", 0, "P",
     "twotier: order of the LP queue: fcfs, sjf (shortest prompt), edf (earliest TTFT "
     "deadline) or slack (least slack) (default edf)",
     OPT_TT_POLICY},
    {"offload-threshold", 0, "X",
     "twotier: offload a waiting request to HP when its slack (deadline - now - predicted "
     "prefill) falls to X (required with --hp >= 1)",
     OPT_TT_THRESHOLD},
    {"drop", 0, NULL, "twotier: drop requests still waiting at their TTFT deadline",
     OPT_TT_DROP},
    {"no-tickets", 0, NULL, "twotier: idle HP instances take no arrivals directly",
     OPT_TT_NO_TICKETS},
    {NULL, 0, NULL, NULL, 0},
};
static const cli_group twotier_group = {"Two-tier LP/HP (--arch twotier)", twotier_options};

struct serve_ctx {
    cli_serve_args a;
    int closed;
    int64_t np, nd, sp, sd;
    double watermark, backflow, kv_capacity;
    int64_t lp, hp;
    afd_order order;
    const char *threshold;
    int drop, no_tickets;
};

static const cli_group *const serve_groups[] = {
    &cli_serve_arch_group, &taichi_group,        &twotier_group,   &cli_serve_model_group,
    &closed_group,         &cli_serve_run_group, &cli_serve_arrivals_group,
    &cli_workload_group,   &cli_hw_group,        &cli_output_group,
    NULL};

/* The architectures that read each architecture-specific option (the
 * policies in montecarlo/serve/ and their configuration); any other --arch
 * refuses it.  --decode-bmax and the options of every run apply to all. */
enum { A_COLLOC = 1, A_CHUNKED = 2, A_DISAGG = 4, A_TAICHI = 8, A_TWOTIER = 16 };
static const struct {
    int id;
    unsigned archs;
} arch_only[] = {
    {OPT_SV_INSTANCES, A_COLLOC | A_CHUNKED},
    {OPT_SV_PREFILL, A_DISAGG},
    {OPT_SV_DECODE, A_DISAGG},
    {OPT_SV_PBMAX, A_COLLOC | A_DISAGG},
    {OPT_SV_CHUNK, A_CHUNKED | A_TWOTIER},
    {OPT_SV_PSEUDO, A_DISAGG},
    {OPT_SV_KVB, A_DISAGG | A_TAICHI},
    {OPT_SV_NET, A_DISAGG | A_TAICHI},
    {OPT_SV_KVLAT, A_DISAGG | A_TAICHI},
    {OPT_SV_ROUTER, A_COLLOC | A_CHUNKED | A_DISAGG},
    {OPT_SV_DROUTER, A_DISAGG},
    {OPT_SV_PCACHE, A_COLLOC | A_CHUNKED | A_DISAGG},
    {OPT_SV_BLOCK, A_COLLOC | A_CHUNKED | A_DISAGG},
    {OPT_TC_NP, A_TAICHI},
    {OPT_TC_ND, A_TAICHI},
    {OPT_TC_SP, A_TAICHI},
    {OPT_TC_SD, A_TAICHI},
    {OPT_TC_WATERMARK, A_TAICHI},
    {OPT_TC_BACKFLOW, A_TAICHI},
    {OPT_TC_KVCAP, A_TAICHI | A_TWOTIER},
    {OPT_TT_LP, A_TWOTIER},
    {OPT_TT_HP, A_TWOTIER},
    {OPT_TT_POLICY, A_TWOTIER},
    {OPT_TT_THRESHOLD, A_TWOTIER},
    {OPT_TT_DROP, A_TWOTIER},
    {OPT_TT_NO_TICKETS, A_TWOTIER},
};
static const char *const arch_names[] = {"colloc", "chunked", "disagg", "taichi", "twotier"};

static const char *option_name(int id)
{
    const cli_group *const *g;
    const cli_option *o;
    for (g = serve_groups; *g != NULL; g++)
        for (o = (*g)->options; o->name != NULL; o++)
            if (o->id == id)
                return o->name;
    return "?";
}

/* An option given that --arch does not read: a usage error naming both. */
static int check_arch_options(const char *cmd, const cli_serve_args *a)
{
    unsigned arch = 0, k;
    size_t i;
    for (k = 0; k < 5; k++)
        if (strcmp(a->arch, arch_names[k]) == 0)
            arch = 1u << k;
    for (i = 0; i < sizeof arch_only / sizeof arch_only[0]; i++) {
        char list[80] = "";
        if (!(a->given & CLI_SERVE_BIT(arch_only[i].id)) || (arch_only[i].archs & arch))
            continue;
        for (k = 0; k < 5; k++)
            if (arch_only[i].archs & (1u << k))
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s",
                         list[0] ? " or " : "", arch_names[k]);
        return cli_usage_error(cmd, "--%s is an option of --arch %s, not --arch %s",
                               option_name(arch_only[i].id), list, a->arch);
    }
    return 0;
}

static int own(void *ctx, const cli_option *opt, const char *arg)
{
    struct serve_ctx *x = ctx;
    if (opt == NULL)
        return cli_usage_error(x->a.cmd, "unexpected argument '%s'", arg);
    if (opt->id >= OPT_SV_ARCH && opt->id < OPT_SV_ARCH + 64)
        x->a.given |= CLI_SERVE_BIT(opt->id);
    switch (opt->id) {
    case OPT_CLOSED:
        x->closed = 1;
        return 0;
    case OPT_TC_NP:
        return cli_integer(x->a.cmd, opt->name, arg, 0, AFD_SERVE_MAX_INSTANCES, &x->np);
    case OPT_TC_ND:
        return cli_integer(x->a.cmd, opt->name, arg, 0, AFD_SERVE_MAX_INSTANCES, &x->nd);
    case OPT_TC_SP:
        return cli_integer(x->a.cmd, opt->name, arg, 2, 1 << 24, &x->sp);
    case OPT_TC_SD:
        return cli_integer(x->a.cmd, opt->name, arg, 0, 1 << 24, &x->sd);
    case OPT_TC_WATERMARK:
        return cli_real_min(x->a.cmd, opt->name, arg, 0, 1, &x->watermark);
    case OPT_TC_BACKFLOW:
        return cli_real_min(x->a.cmd, opt->name, arg, 0, 1, &x->backflow);
    case OPT_TC_KVCAP:
        return cli_real_min(x->a.cmd, opt->name, arg, 0, 1, &x->kv_capacity);
    case OPT_TT_LP:
        return cli_integer(x->a.cmd, opt->name, arg, 1, AFD_SERVE_MAX_INSTANCES, &x->lp);
    case OPT_TT_HP:
        return cli_integer(x->a.cmd, opt->name, arg, 0, AFD_SERVE_MAX_INSTANCES, &x->hp);
    case OPT_TT_POLICY:
        if (afd_order_parse(arg, &x->order) != AFD_OK)
            return cli_usage_error(x->a.cmd, "--policy: expected fcfs, sjf, edf or slack: '%.40s'",
                                   arg);
        return 0;
    case OPT_TT_THRESHOLD:
        x->threshold = arg;
        return 0;
    case OPT_TT_DROP:
        x->drop = 1;
        return 0;
    case OPT_TT_NO_TICKETS:
        x->no_tickets = 1;
        return 0;
    }
    return cli_serve_option(&x->a, opt, arg);
}

/* The moments of the requests' lengths the closed forms read
 * (afd_taichi_lengths_of: fixed lengths, a trace's rows or the geometric
 * model, an empty prompt counted as the one token the simulator prefills). */
static int closed_lengths(const char *cmd, const afd_serve_params *p, afd_taichi_lengths *len)
{
    afd_status st = afd_taichi_lengths_of(p->workload, (double)p->prompt, (double)p->output, len);
    if (st != AFD_OK)
        return cli_runtime_error(cmd, "closed form: the lengths: %s", afd_strerror(st));
    return 0;
}

/* Chunked: the moments of the requests' lengths; the rate of a replayed
 * trace. */
static int closed_chunked(const char *cmd, const cli_serve_setup *su, afd_serving_result *cf,
                          char *form, size_t len)
{
    const afd_serve_params *p = &su->params;
    afd_serving_chunked_params q;
    afd_taichi_lengths lens;
    afd_status st;
    int rc;
    if ((rc = closed_lengths(cmd, p, &lens)) != 0)
        return rc;
    memset(&q, 0, sizeof q);
    q.hw = p->hw;
    q.lambda = p->times != NULL ? su->replay_rate * su->unit_seconds : p->lambda;
    q.instances = p->config.instances;
    q.chunk = p->config.chunk;
    q.decode_bmax = p->config.decode_bmax;
    q.quantile = 0.9;
    q.prompt_mean = lens.prompt_mean;
    q.prompt_m2 = lens.prompt_m2;
    q.output_mean = lens.output_mean;
    q.theta = p->workload != NULL ? lens.theta : 0;
    if (q.instances > 1 && p->config.router != AFD_SERVE_ROUTE_GLOBAL)
        snprintf(form, len, "shared queue M/D/c, a lower bound: no routed form for chunked "
                            "(--router %s)",
                 cli_serve_router_name(p->config.router));
    else
        snprintf(form, len, "shared queue M/D/c");
    st = afd_serving_chunked(&q, cf);
    if (st == AFD_EUNSTABLE) {
        cli_warn(cmd, "closed form: unstable (%s cannot keep up)",
                 afd_serving_limit_name(cf->limit));
        return 0;
    }
    if (st != AFD_OK)
        return cli_runtime_error(cmd, "closed form: %s", afd_strerror(st));
    return 0;
}

/* The routed form (afd_queue.h) of a router; 0 when it has none. */
static int routed_form(afd_serve_router r, afd_routed_kind *k)
{
    switch (r) {
    case AFD_SERVE_ROUTE_GLOBAL:
        *k = AFD_ROUTED_GLOBAL;
        return 1;
    case AFD_SERVE_ROUTE_RANDOM:
        *k = AFD_ROUTED_RANDOM;
        return 1;
    case AFD_SERVE_ROUTE_ROUND_ROBIN:
        *k = AFD_ROUTED_ROUND_ROBIN;
        return 1;
    case AFD_SERVE_ROUTE_LEAST_REQUESTS:
        *k = AFD_ROUTED_LEAST;
        return 1;
    case AFD_SERVE_ROUTE_POWER_OF_TWO:
        *k = AFD_ROUTED_POWER_OF_TWO;
        return 1;
    default: /* least-tokens, session, cache-aware */
        return 0;
    }
}

/* The closed forms for the same system: fixed lengths, or geometric
 * prompts with one output token behind a router that has a routed form
 * (prefill batch 1, a law linear in the prompt).  form: which prefill
 * queue the TTFT takes (the provenance's closed_ttft). */
static int closed_forms(const char *cmd, const cli_serve_setup *su, afd_serving_result *cf,
                        char *form, size_t len)
{
    static const char *const names[] = {
        "random: M/G/1 per instance", "round-robin: E_n/G/1 per instance", "global: M/G/c",
        "least-requests: M/G/c plus the JSQ gap, 0-5% high (docs/routing.md)",
        "power-of-two: the supermarket mean field corrected for n, 1-9% high (docs/routing.md)"};
    const afd_serve_params *p = &su->params;
    afd_serving_params q;
    afd_status st;
    int disagg = strcmp(p->policy->name, "disagg") == 0, geometric;
    unsigned pool = disagg ? p->config.prefill : p->config.instances;
    afd_routed_kind kind = AFD_ROUTED_GLOBAL;
    int has_form = routed_form(p->config.router, &kind);
    if (strcmp(p->policy->name, "chunked") == 0)
        return closed_chunked(cmd, su, cf, form, len);
    if (!disagg && strcmp(p->policy->name, "colloc") != 0)
        return cli_usage_error(cmd, "--closed: no closed form for --arch %s (colloc, chunked, "
                                    "disagg)",
                               p->policy->name);
    geometric = p->workload != NULL && p->workload->kind == AFD_WORKLOAD_GEOMETRIC &&
                p->workload->mu_d == 1;
    if (p->workload != NULL &&
        !(geometric && pool > 1 && has_form && p->config.prefill_bmax == 1 &&
          p->hw->prefill_c == 0))
        return cli_usage_error(cmd, "--closed needs fixed lengths (--lengths P,G), or "
                                    "--geometric --mu-d 1 on a pool of several instances "
                                    "with --prefill-bmax 1, a prefill law with c = 0 and a "
                                    "router with a routed form");
    if (disagg && p->config.pseudo_tau > 0)
        return cli_usage_error(cmd, "--closed: the closed forms model the per-step decode, "
                                    "not --pseudo-batch");
    memset(&q, 0, sizeof q);
    q.hw = p->hw;
    q.lambda = p->lambda;
    q.prompt = p->prompt;
    q.output = p->output;
    q.instances = p->config.instances;
    q.prefill = p->config.prefill;
    q.decode = p->config.decode;
    q.prefill_bmax = p->config.prefill_bmax;
    q.decode_bmax = p->config.decode_bmax;
    q.kv_time = p->config.kv_time_fixed + p->config.kv_time_per_token * p->prompt;
    q.quantile = 0.9;
    if (pool == 1) {
        snprintf(form, len, "one instance: M/D/1");
    } else if (!has_form || q.prefill_bmax > 1) {
        snprintf(form, len, "shared queue %s, a lower bound: no routed form for %s",
                 q.prefill_bmax > 1 ? "greedy batches" : "M/D/c",
                 q.prefill_bmax > 1 ? "batched prefill (--prefill-bmax > 1)"
                 : p->config.router == AFD_SERVE_ROUTE_LEAST_TOKENS
                     ? "--router least-tokens"
                     : "a prefix-keyed router (session, cache-aware)");
        if (p->config.router == AFD_SERVE_ROUTE_GLOBAL)
            snprintf(form, len, "shared queue %s", q.prefill_bmax > 1 ? "greedy batches" : "M/D/c");
    } else {
        q.routed = 1;
        q.router = kind;
        if (geometric) {
            afd_taichi_lengths lens;
            int rc = closed_lengths(cmd, p, &lens);
            if (rc != 0)
                return rc;
            q.prompt = lens.prompt_mean;
            q.prompt_m2 = lens.prompt_m2;
            q.output = lens.output_mean;
        }
        snprintf(form, len, "%s", names[kind]);
    }
    st = disagg ? afd_serving_disagg(&q, cf) : afd_serving_colloc(&q, cf);
    if (st == AFD_EUNSTABLE) {
        cli_warn(cmd, "closed form: unstable (%s cannot keep up)",
                 afd_serving_limit_name(cf->limit));
        return 0;
    }
    if (st != AFD_OK)
        return cli_runtime_error(cmd, "closed form: %s", afd_strerror(st));
    return 0;
}

/* Two tiers: afd_twotier_serve (FCFS on both tiers, no tickets, no drops,
 * TTFT attainment only) for fixed lengths or a trace's prompts and mean
 * output; the replayed rate under --arrivals trace. */
static int closed_twotier(const char *cmd, const cli_serve_setup *su,
                          const afd_serve_twotier_config *tc, afd_twotier_result *cf)
{
    const afd_serve_params *p = &su->params;
    afd_twotier_serve_params q;
    afd_taichi_lengths lens;
    afd_status st;
    double one, *v = NULL;
    size_t i;
    int rc;
    if (p->workload != NULL && p->workload->kind != AFD_WORKLOAD_TRACE)
        return cli_usage_error(cmd, "--closed with --arch twotier needs fixed lengths or a "
                                    "trace");
    if (!isfinite(tc->ttft_slo))
        return cli_usage_error(cmd, "--closed with --arch twotier needs --ttft-slo");
    memset(&q, 0, sizeof q);
    q.hw = p->hw;
    q.lambda = p->times != NULL ? su->replay_rate * su->unit_seconds : p->lambda;
    q.lp = tc->lp;
    q.hp = tc->hp;
    q.chunk = p->config.chunk;
    q.decode_bmax = p->config.decode_bmax;
    q.ttft_slo = tc->ttft_slo;
    q.threshold = tc->threshold;
    if ((rc = closed_lengths(cmd, p, &lens)) != 0)
        return rc;
    q.output_mean = lens.output_mean;
    if (p->workload == NULL) {
        one = p->prompt;
        q.prompts = &one;
        q.n = 1;
    } else {
        /* the closed form weighs each prompt 1/n: one per request (a pair's
         * prompt count times) */
        size_t j, m = afd_workload_entries(p->workload);
        q.n = 0;
        for (j = 0; j < m; j++)
            q.n += (size_t)afd_workload_entry(p->workload, j).count;
        v = malloc(q.n * sizeof *v);
        if (v == NULL)
            return cli_runtime_error(cmd, "out of memory");
        for (j = 0, i = 0; j < m; j++) {
            afd_workload_pair e = afd_workload_entry(p->workload, j);
            uint64_t c;
            for (c = 0; c < e.count; c++, i++)
                v[i] = (double)afd_workload_prompt_tokens(e);
        }
        q.prompts = v;
    }
    st = afd_twotier_serve(&q, cf);
    free(v);
    if (st == AFD_EUNSTABLE) {
        cli_warn(cmd, "closed form: unstable (the LP instances cannot keep up with their "
                      "decodes)");
        return 0;
    }
    if (st != AFD_OK)
        return cli_runtime_error(cmd, "closed form: %s", afd_strerror(st));
    return 0;
}

static void serve_progress(void *ctx, uint64_t done, uint64_t total)
{
    cli_progress_update(ctx, (double)done, (double)total, "requests arrived");
}

static void stat_cols(cli_table *t, const afd_serve_stat *s, double ms, int se)
{
    if (se) {
        cli_table_real(t, s->mean_se * ms);
        cli_table_real(t, s->p50_se * ms);
        cli_table_real(t, s->p90_se * ms);
        cli_table_real(t, s->p99_se * ms);
    } else {
        cli_table_real(t, s->mean * ms);
        cli_table_real(t, s->p50 * ms);
        cli_table_real(t, s->p90 * ms);
        cli_table_real(t, s->p99 * ms);
    }
}

static int run(const cli_command *self, int argc, char **argv)
{
    const char *cmd = self->path;
    cli_common c;
    struct serve_ctx x;
    cli_serve_args *a = &x.a;
    cli_serve_setup su;
    afd_serve_taichi_config tc;
    afd_serve_taichi_counts cnt;
    afd_serve_twotier_config ttc;
    afd_serve_twotier_counts ttn;
    afd_twotier_result ttcf;
    int is_taichi, is_twotier, routed, d_routed, pcache;
    afd_serving_result cf;
    char form[200] = "";
    afd_serve_result r;
    afd_error err;
    afd_status st;
    cli_table *t;
    cli_progress prog;
    double ms, hit_che;
    int rc;

    cli_common_init(&c);
    memset(&x, 0, sizeof x);
    cli_serve_init(a, cmd);
    x.np = x.nd = 1;
    x.sp = 1024;
    x.sd = 256;
    x.watermark = 0.95;
    x.backflow = 0.96;
    x.kv_capacity = NAN;
    x.lp = x.hp = 1;
    x.order = AFD_ORDER_EDF;
    rc = cli_parse_args(self, argc, argv, &c, own, &x);
    if (rc != CLI_CONTINUE)
        return rc;
    if (a->arch != NULL && (rc = check_arch_options(cmd, a)) != 0)
        return rc;
    rc = cli_serve_prepare(a, &c, 1, &su);
    if (rc != 0)
        return rc;
    is_taichi = strcmp(su.params.policy->name, "taichi") == 0;
    is_twotier = strcmp(su.params.policy->name, "twotier") == 0;
    routed = su.params.config.router != AFD_SERVE_ROUTE_GLOBAL;
    pcache = su.params.config.prefix_blocks > 0 || su.params.config.prefix_kv_tokens > 0;
    d_routed = strcmp(su.params.policy->name, "disagg") == 0 &&
               su.params.config.decode_router != AFD_SERVE_ROUTE_GLOBAL;
    memset(&cnt, 0, sizeof cnt);
    memset(&ttn, 0, sizeof ttn);
    if (is_taichi || is_twotier) {
        char what[160];
        double cap = !isnan(x.kv_capacity) ? x.kv_capacity : su.kv_capacity;
        if (!isnan(x.kv_capacity))
            snprintf(what, sizeof what, "--kv-capacity %.15g", x.kv_capacity);
        else
            snprintf(what, sizeof what, "--model %s --device %s --tp %lld", a->model, a->device,
                     (long long)a->tp);
        if (!isnan(cap))
            cli_serve_warn_kv(cmd, what, cap, &su, is_taichi ? CLI_KV_TAICHI : CLI_KV_TWOTIER,
                              x.watermark, x.np == 0 || x.nd == 0 || x.sp == x.sd);
    }
    if (is_twotier) {
        memset(&ttc, 0, sizeof ttc);
        ttc.lp = (unsigned)x.lp;
        ttc.hp = (unsigned)x.hp;
        ttc.order = x.order;
        ttc.ttft_slo = su.params.ttft_slo;
        ttc.drop = x.drop;
        ttc.tickets = !x.no_tickets;
        ttc.kv_capacity = !isnan(x.kv_capacity)    ? x.kv_capacity
                          : !isnan(su.kv_capacity) ? su.kv_capacity
                                                   : INFINITY;
        ttc.counts = &ttn;
        if (x.threshold != NULL &&
            (rc = cli_time(cmd, "offload-threshold", x.threshold, su.hw.unit, &ttc.threshold)) !=
                0) {
            cli_serve_setup_free(&su);
            return rc;
        }
        rc = 0;
        if (!isfinite(ttc.ttft_slo) && (ttc.hp > 0 || ttc.drop))
            rc = cli_usage_error(cmd, "--arch twotier needs --ttft-slo T (the deadline of "
                                      "offloading and dropping)");
        else if (ttc.hp > 0 && x.threshold == NULL)
            rc = cli_usage_error(cmd, "--arch twotier with --hp >= 1 needs "
                                      "--offload-threshold X");
        else if (x.threshold != NULL && !(ttc.threshold >= 0 && isfinite(ttc.threshold)))
            rc = cli_usage_error(cmd, "--offload-threshold must be finite and >= 0: '%s'",
                                 x.threshold);
        if (rc != 0) {
            cli_serve_setup_free(&su);
            return rc;
        }
        su.params.config.extra = &ttc;
    }
    if (is_taichi) {
        memset(&tc, 0, sizeof tc);
        tc.p_heavy = (unsigned)x.np;
        tc.d_heavy = (unsigned)x.nd;
        tc.chunk_p = (unsigned)x.sp;
        tc.chunk_d = (unsigned)x.sd;
        tc.watermark = x.watermark;
        tc.backflow = x.backflow;
        tc.kv_capacity = !isnan(x.kv_capacity)    ? x.kv_capacity
                         : !isnan(su.kv_capacity) ? su.kv_capacity
                                                  : INFINITY;
        tc.ttft_slo = su.params.ttft_slo;
        tc.tpot_slo = su.params.tpot_slo;
        tc.counts = &cnt;
        su.params.config.extra = &tc;
    }
    cf.ttft_mean = cf.ttft_q = cf.tpot_mean = cf.tpot_q = NAN;
    ttcf.attainment = ttcf.p_off = ttcf.rho_hp = NAN;
    rc = 0;
    if (x.closed && is_twotier)
        rc = closed_twotier(cmd, &su, &ttc, &ttcf);
    else if (x.closed)
        rc = closed_forms(cmd, &su, &cf, form, sizeof form);
    if (rc != 0) {
        cli_serve_setup_free(&su);
        return rc;
    }
    hit_che = NAN;
    /* Che's approximation for a fixed capacity (not the KV memory's, which varies) */
    if (su.params.config.prefix_blocks > 0) {
        afd_lru_che_params lp = {.blocks = su.wl.blocks,
                                 .block_start = su.wl.block_start,
                                 .prompt = su.wl.prompt,
                                 .requests = su.wl.n_kept,
                                 .ids = su.wl.n_block_ids,
                                 .block_size = su.params.config.block_size,
                                 .capacity = su.params.config.prefix_blocks};
        if (afd_lru_che_hit(&lp, &hit_che, &err) != AFD_OK)
            cli_warn(cmd, "no characteristic-time hit fraction: %s", err.text);
    }
    ms = su.unit_seconds * 1e3;
    /* an unstable run that is not printed ends at its last arrival */
    su.params.stop_unstable = !a->allow_unstable;
    cli_progress_init(&prog, cmd, "simulating", c.out.quiet);
    su.params.progress = serve_progress;
    su.params.progress_ctx = &prog;
    st = afd_serve_run(&su.params, &r, &err);
    cli_progress_end(&prog);
    if (st != AFD_OK) {
        rc = st == AFD_EINVAL ? cli_usage_error(cmd, "%s", err.text)
                              : cli_runtime_error(cmd, "%s", err.text);
        cli_serve_setup_free(&su);
        return rc;
    }
    if (r.unstable && !a->allow_unstable) {
        rc = cli_runtime_error(cmd,
                               "unstable: requests arrive faster than %s serves them "
                               "(%.3g%% of the arrivals pile up: %llu requests in the system at "
                               "the last arrival); lower --lambda, add instances, or pass "
                               "--allow-unstable to see the finite run",
                               su.params.policy->name, 100 * r.growth,
                               (unsigned long long)r.backlog);
        cli_serve_setup_free(&su);
        return rc;
    }
    if (r.unstable)
        cli_warn(cmd,
                 "unstable: the percentiles grow with --requests (%.3g%% of the arrivals "
                 "pile up)",
                 100 * r.growth);
    if (r.pct_batches_lost > 0)
        cli_warn(cmd,
                 "the percentiles' standard errors come from %u of the %u batches: %u "
                 "started while %u others held histograms (lower --batches)",
                 su.params.batches - r.pct_batches_lost, su.params.batches, r.pct_batches_lost,
                 AFD_SERVE_OPEN_BATCHES);

    t = cli_table_new(&c.out);
    if (t == NULL) {
        cli_serve_setup_free(&su);
        return cli_runtime_error(cmd, "out of memory");
    }
    cli_table_provenance(t);
    /* times in ms (ms above), throughput per second */
    cli_table_unit(t, "ms; throughput in requests/s");
    cli_table_meta(t, "arch", "%s", su.params.policy->name);
    cli_table_meta(t, "events", "%llu", (unsigned long long)r.events);
    cli_table_meta(t, "stable", "%s", r.unstable ? "no" : "yes");
    if (su.params.times != NULL)
        cli_table_meta(t, "arrivals", "trace at %.6g/s", su.replay_rate);
    if (x.closed && !is_twotier)
        cli_table_meta(t, "closed_ttft", "%s", form);
    {
        static const char *const base[] = {
            "ttft_mean",   "ttft_p50",     "ttft_p90",     "ttft_p99",    "tpot_mean",
            "tpot_p50",    "tpot_p90",     "tpot_p99",     "e2e_p90",     "throughput",
            "attainment",  "completed",    "ttft_mean_se", "ttft_p50_se", "ttft_p90_se",
            "ttft_p99_se", "tpot_mean_se", "tpot_p50_se",  "tpot_p90_se", "tpot_p99_se",
            "e2e_p90_se",  "attainment_se"};
        static const char *const cfc[] = {"ttft_mean_cf", "ttft_p90_cf", "tpot_mean_cf",
                                          "tpot_p90_cf"};
        static const char *const tcc[] = {"prefill_p", "prefill_d", "infeasible",
                                          "handovers", "flows",     "backflows"};
        static const char *const ttn_names[] = {"offloads",  "drops",        "tickets",
                                                "p_offload", "p_offload_se", "p_drop",
                                                "p_drop_se"};
        static const char *const ttcf_names[] = {"p_offload_cf", "attainment_cf", "rho_hp_cf"};
        static const char *const gaps[] = {"gap_ttft_mean", "gap_ttft_p90", "gap_tpot_mean",
                                           "gap_tpot_p90"};
        static const char *const hit_names[] = {"prefix_hit", "prefix_hit_se", "prefix_hit_che"};
        static const char *const imb_names[] = {"imbalance", "imbalance_se"};
        static const char *const dimb_names[] = {"decode_imbalance", "decode_imbalance_se"};
        const char *names[sizeof base / sizeof base[0] + 4 + 6 + 7 + 3 + 4 + 3 + 2 + 2];
        size_t n = 0, k;
        for (k = 0; k < sizeof base / sizeof base[0]; k++)
            names[n++] = base[k];
        for (k = 0; x.closed && !is_twotier && k < 4; k++)
            names[n++] = cfc[k];
        for (k = 0; is_twotier && k < 7; k++)
            names[n++] = ttn_names[k];
        for (k = 0; x.closed && is_twotier && k < 3; k++)
            names[n++] = ttcf_names[k];
        for (k = 0; is_taichi && k < 6; k++)
            names[n++] = tcc[k];
        for (k = 0; x.closed && !is_twotier && k < 4; k++)
            names[n++] = gaps[k];
        for (k = 0; pcache && k < 3; k++)
            names[n++] = hit_names[k];
        for (k = 0; routed && k < 2; k++)
            names[n++] = imb_names[k];
        for (k = 0; d_routed && k < 2; k++)
            names[n++] = dimb_names[k];
        cli_table_begin_array(t, n, names);
    }
    stat_cols(t, &r.ttft, ms, 0);
    stat_cols(t, &r.tpot, ms, 0);
    cli_table_real(t, r.e2e.p90 * ms);
    cli_table_real(t, r.throughput / su.unit_seconds);
    cli_table_real(t, r.attainment);
    cli_table_uint(t, r.completed);
    stat_cols(t, &r.ttft, ms, 1);
    stat_cols(t, &r.tpot, ms, 1);
    cli_table_real(t, r.e2e.p90_se * ms);
    cli_table_real(t, r.attainment_se);
    if (is_twotier) {
        cli_table_uint(t, ttn.offloads);
        cli_table_uint(t, ttn.drops);
        cli_table_uint(t, ttn.tickets);
        cli_table_real(t, r.class_frac);
        cli_table_real(t, r.class_frac_se);
        cli_table_real(t, r.drop_frac);
        cli_table_real(t, r.drop_frac_se);
        if (x.closed) {
            cli_table_real(t, ttcf.p_off);
            cli_table_real(t, ttcf.attainment);
            cli_table_real(t, ttcf.rho_hp);
        }
    } else if (x.closed) {
        cli_table_real(t, cf.ttft_mean * ms);
        cli_table_real(t, cf.ttft_q * ms);
        cli_table_real(t, cf.tpot_mean * ms);
        cli_table_real(t, cf.tpot_q * ms);
    }
    if (is_taichi) {
        cli_table_uint(t, cnt.prefill_p);
        cli_table_uint(t, cnt.prefill_d);
        cli_table_uint(t, cnt.infeasible);
        cli_table_uint(t, cnt.handovers);
        cli_table_uint(t, cnt.flows);
        cli_table_uint(t, cnt.backflows);
    }
    if (x.closed && !is_twotier) { /* the closed forms' error against the run */
        cli_table_real(t, afd_closed_gap(cf.ttft_mean, r.ttft.mean));
        cli_table_real(t, afd_closed_gap(cf.ttft_q, r.ttft.p90));
        cli_table_real(t, afd_closed_gap(cf.tpot_mean, r.tpot.mean));
        cli_table_real(t, afd_closed_gap(cf.tpot_q, r.tpot.p90));
    }
    if (pcache) {
        cli_table_real(t, r.prefix_hit);
        cli_table_real(t, r.prefix_hit_se);
        cli_table_real(t, hit_che);
    }
    if (routed) {
        cli_table_real(t, r.imbalance);
        cli_table_real(t, r.imbalance_se);
    }
    if (d_routed) {
        cli_table_real(t, r.decode_imbalance);
        cli_table_real(t, r.decode_imbalance_se);
    }
    cli_table_end_row(t);
    cli_serve_setup_free(&su);
    return cli_table_finish(t, cmd);
}

const cli_command cli_cmd_serve = {
    .name = "serve",
    .path = "serve",
    .summary = "simulate LLM serving request by request: TTFT, TPOT, goodput (colloc, chunked, "
               "disagg, taichi, twotier)",
    .usage = "serve --arch colloc|chunked|disagg|taichi|twotier --hw FILE --lambda RATE --lengths P,G [...]",
    .description =
        "Simulates serving request by request: arrivals (Poisson at --lambda), instances\n"
        "running iterations whose times come from the latency file's serving laws\n"
        "(prefill batch a + b sum P + c sum P^2; decode step beta + gamma b + alpha K for b\n"
        "sequences holding K KV tokens), and prints one row:\n"
        "  ttft_mean ttft_p50 ttft_p90 ttft_p99 tpot_mean tpot_p50 tpot_p90 tpot_p99 e2e_p90\n"
        "  throughput attainment completed, then the standard error of each statistic\n"
        "  (ttft_mean_se ... e2e_p90_se attainment_se).\n"
        "\n"
        "  ttft_*       time to first token (arrival to the end of its prefill), ms\n"
        "  tpot_*       time per output token of a request: (last token - first token) /\n"
        "               (G - 1), ms; requests with G = 1 have none\n"
        "  e2e_p90      90th percentile of arrival to last token, ms\n"
        "  throughput   measured requests completed per second\n"
        "  attainment   fraction of measured requests meeting both --ttft-slo and\n"
        "               --tpot-slo (1 when none is given)\n"
        "  completed    requests measured (after --warmup)\n"
        "  *_se         batch-means standard errors over --batches consecutive batches\n"
        "\n"
        "Percentiles are exact (every value kept, 24 bytes a request) up to --requests\n"
        "2^20 = 1048576.  Longer runs count the times in log-bucketed histograms (1024\n"
        "buckets per octave) and report each percentile within a relative error of\n"
        "2^-10 = 0.098% of the exact one (the ceil(q n)-th smallest value), in memory\n"
        "that grows with the octaves the times span, not with their number: 4 KiB per\n"
        "octave per metric for the run and for each batch whose requests are still\n"
        "leaving (10^8 requests of a 1p1d run take under 200 MB).  At most 256 batches\n"
        "hold histograms at once; a batch that starts while 256 are open is left out\n"
        "of the percentiles' standard errors (larger then, from fewer batches), with a\n"
        "warning; means, attainment and the percentiles themselves keep every request.\n"
        "\n"
        "Architectures (--arch):\n"
        "  colloc   --instances N: each instance prefills and decodes; a waiting prefill\n"
        "           batch always goes first and the two never share an iteration (vLLM;\n"
        "           BestServe Algorithms 4-7)\n"
        "  chunked  --instances N --chunk S: every iteration carries the running decodes'\n"
        "           tokens plus prompt chunks up to S tokens (Sarathi-Serve)\n"
        "  disagg   --prefill NP --decode ND: static prefill batches, KV transfer, then\n"
        "           continuous decode batching (BestServe Algorithms 2-3; --pseudo-batch TAU\n"
        "           for BestServe's per-request decode heuristic)\n"
        "  taichi   --p-heavy NP --d-heavy ND --chunk-p SP --chunk-d SD: chunked instances\n"
        "           of two kinds (TaiChi); each prompt goes to the instance with the fewest\n"
        "           queued prompt tokens among those that can meet --ttft-slo; decodes move\n"
        "           to D-heavy instances, the longest flow to P-heavy ones above\n"
        "           --watermark of --kv-capacity and back near --backflow x --tpot-slo.\n"
        "           Adds the columns prefill_p prefill_d (prefills routed to each kind),\n"
        "           infeasible (arrivals no instance could serve in time), handovers,\n"
        "           flows, backflows (decodes moved).  SD = SP: aggregation (chunked);\n"
        "           SD = 0 with SP at least the longest prompt: disaggregation\n"
        "  twotier  --lp N --hp M --policy fcfs|sjf|edf|slack --offload-threshold X\n"
        "           [--drop] [--no-tickets] (Ascendra): LP instances run chunked iterations\n"
        "           (--chunk), taking waiting prompts in the --policy order; a waiting\n"
        "           request whose slack (TTFT deadline - now - its prefill law time) falls\n"
        "           to X moves to the HP instances, which prefill first (all waiting\n"
        "           prompts in one batch, within --kv-capacity) and decode what they\n"
        "           prefilled; an HP instance with no prefill pending takes the next\n"
        "           arrival (a ticket).  --drop: requests still waiting at their deadline\n"
        "           leave and miss the SLO.  Adds offloads drops tickets (counts over the\n"
        "           whole run) and p_offload p_offload_se p_drop p_drop_se (fractions of\n"
        "           the measured requests); --closed adds p_offload_cf attainment_cf\n"
        "           rho_hp_cf (queues with deadlines, the LP prefill slowed by its\n"
        "           decodes as in chunked's closed form; no tickets, no drops)\n"
        "\n"
        "An option of the group of one architecture (--prefill, --chunk, --kv-latency,\n"
        "...) given with an --arch that does not read it is a usage error; so is\n"
        "--lengths with a workload option.  A --kv-capacity (or the capacity from\n"
        "--model/--device) below the largest request (prompt + output tokens; the mean\n"
        "for --geometric) is simulated after a warning: taichi reads it only for the\n"
        "flow mark --watermark x capacity; twotier prefills a prompt that does not fit\n"
        "alone on an HP instance holding nothing.\n"
        "\n"
        "Arrivals are Poisson at --lambda, each request's lengths drawn from --trace's\n"
        "distinct (P, G) pairs by their counts (the law of a random row; 32 bytes per\n"
        "distinct pair held, whatever the number of rows), or with --arrivals trace the\n"
        "rows of --trace (every row held)\n"
        "in order at their own timestamps (row n at (t_n - t_1) X: X = --time-scale, 1 by\n"
        "default, or the stretch that makes the rate --lambda), every row simulated once,\n"
        "the first --warmup (default 0 here) discarded.\n"
        "\n"
        "Prefix cache (colloc, chunked, disagg): --prefix-cache BLOCKS gives every\n"
        "instance that prefills an LRU cache of BLOCKS KV blocks of --block-size tokens\n"
        "(512, Mooncake's), keyed by the trace's hash_ids (JSON list, or a CSV column of\n"
        "integers separated by blanks, commas or semicolons).  A request's cached prefix\n"
        "is the longest run of its leading blocks the instance holds when its prefill\n"
        "starts, at most its prompt; it prefills the rest (at least its last token), and\n"
        "its blocks enter the cache when its prefill ends.  Adds prefix_hit (cached over\n"
        "all prompt tokens), prefix_hit_se and prefix_hit_che (Che's approximation from\n"
        "the trace's block popularity, for one cache seeing every request).\n"
        "--prefix-cache kv (with --model/--device) holds each cache in the instance's KV\n"
        "memory: at each moment at most the blocks its running requests leave free, the\n"
        "least recently used evicted when they need room (prefix_hit_che nan).  With\n"
        "Poisson arrivals the rows are held with their blocks (4 bytes a block).\n"
        "\n"
        "Routers (colloc, chunked, disagg's prefill pool): the default is round-robin,\n"
        "each instance queueing its own, as the deployment most run (the vLLM production\n"
        "stack's and a Kubernetes service's default); a pool of one instance has none.\n"
        "Any router but global adds imbalance (the largest instance's share of the\n"
        "measured requests over the mean share: 1 is even) and imbalance_se, of the pool\n"
        "requests reach at arrival (disagg: the prefill pool); a disagg decode router but\n"
        "global adds decode_imbalance and decode_imbalance_se, the same of the decode\n"
        "pool.  --router global, one queue that every instance serves, is the ideal\n"
        "bound (M/G/c); a deployment behind another router passes its policy:\n"
        "cache-aware for the SGLang gateway, power-of-two for Ray Serve LLM\n"
        "(docs/routing.md).  disagg's decode pool\n"
        "has its own --decode-router (default round-robin; none with --pseudo-batch, which\n"
        "places each request itself), chosen when a request's KV transfer starts.\n"
        "--closed takes the prefill pool's TTFT (--prefill-bmax 1) from the routed form of\n"
        "the router: random M/G/1 per instance, round-robin E_n/G/1, global M/G/c,\n"
        "least-requests and power-of-two approximations (docs/routing.md); batched\n"
        "prefill, chunked, least-tokens, session and cache-aware have none and keep the\n"
        "shared queue's, a lower bound.  --provenance names it: ## closed_ttft=FORM.\n"
        "\n"
        "The latency file needs the serving laws (prefill_a ... decode_alpha) and a unit\n"
        "other than cycles.  An unstable configuration (latency growing over the run) exits\n"
        "with status 1 unless --allow-unstable.",
    .groups = serve_groups,
    .run = run,
};
