/* cmd_pd.c: afdkit pd (prefill/decode pool sizing) and afdkit goodput
 * (BestServe Sections 2.3, 3.5; see libanalytic/serving/afd_pd.h). */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "afd_mc.h"
#include "afd_pd.h"
#include "afd_queue.h"
#include "afd_serving.h"
#include "cli.h"
#include "serve_opts.h"

enum {
    OPT_LAMBDA = OPT_COMMAND, OPT_PA, OPT_PB, OPT_PC, OPT_TTFT, OPT_PCT, OPT_STEP, OPT_TPOT,
    OPT_SLOTS, OPT_SLOTQ, OPT_KVB, OPT_KVBUDGET, OPT_PGPU, OPT_DGPU, OPT_MAXP, OPT_PREFILL,
    OPT_DECODE, OPT_TOTAL, OPT_MD, OPT_HWFILE, OPT_MODEL, OPT_DEVICE, OPT_TP
};

static const cli_option sizing_options[] = {
    {"prefill-a", 0, "A",
     "prefill time S = A + B P + C P^2: fixed part (default: --hw's prefill_a, else 0; 20ms: "
     "with a unit)", OPT_PA},
    {"prefill-b", 0, "B", "per prompt token (default: --hw's prefill_b, else 0; 100us: with a "
     "unit)", OPT_PB},
    {"prefill-c", 0, "C", "per squared prompt token (default: --hw's prefill_c, else 0)",
     OPT_PC},
    {"ttft-slo", 0, "T", "time-to-first-token SLO (required)", OPT_TTFT},
    {"percentile", 'p', "P", "SLO percentile of TTFT and, in goodput and capacity, of per-request "
     "TPOT (default 0.9)", OPT_PCT},
    {"decode-step", 0, "S", "decode step time: every request gets a token per step (required)",
     OPT_STEP},
    {"tpot-slo", 0, "T", "time-per-output-token SLO (required)", OPT_TPOT},
    {"slots-per-instance", 0, "N", "concurrent decode requests per decode instance",
     OPT_SLOTS},
    {"slot-quantile", 0, "Q", "quantile of the decode occupancy provisioned (default 0.99)",
     OPT_SLOTQ},
    {"kv-bytes-per-token", 0, "X", "KV-cache bytes per token (all layers)", OPT_KVB},
    {"kv-budget", 0, "BYTES", "KV-cache bytes per decode instance, held against the "
     "--slot-quantile of the KV cache in use", OPT_KVBUDGET},
    {"prefill-gpus", 0, "G", "GPUs per prefill instance (default: the tensor-parallel "
     "size, --tp or the --hw file's tp, else 1)", OPT_PGPU},
    {"decode-gpus", 0, "G", "GPUs per decode instance (default: the tensor-parallel "
     "size, --tp or the --hw file's tp, else 1)", OPT_DGPU},
    {"max-prefill", 0, "N", "largest prefill pool considered (default 1024)", OPT_MAXP},
    {"md", 0, NULL, "size by plain M/D/c (mean service) instead of the M/G/c correction",
     OPT_MD},
    {"hw", 0, "FILE", "latency file: prefill law, decode law beta + gamma b + alpha K, unit",
     OPT_HWFILE},
    {"model", 0, "M", "model whose weights and KV cache share decode memory; without --hw "
     "its laws come from the estimator (as estimate --out writes them)", OPT_MODEL},
    {"device", 0, "D", "device of an instance (with --model)", OPT_DEVICE},
    {"tp", 0, "T", "devices per instance (tensor parallel; default: the tp the --hw file's "
     "laws were computed at, else 1; another size than the file's is refused)", OPT_TP},
    {NULL, 0, NULL, NULL, 0},
};
static const cli_group sizing_group = {"Prefill and decode", sizing_options};

static const cli_option pd_options[] = {
    {"lambda", 'l', "L", "arrival rates (required): rates 5/s,10/s, trace (the trace's own "
     "rate), or a list 1,2,5:10 per second (refused against latencies in ms or us)",
     OPT_LAMBDA},
    {NULL, 0, NULL, NULL, 0},
};
static const cli_group pd_group = {"Options", pd_options};
static const cli_group *const pd_groups[] = {&pd_group, &sizing_group, &cli_workload_group,
                                             &cli_output_group, NULL};

static const cli_option goodput_options[] = {
    {"prefill", 0, "LIST", "prefill pool sizes", OPT_PREFILL},
    {"decode", 0, "LIST", "decode pool sizes (every pair with --prefill)", OPT_DECODE},
    {"total", 0, "LIST", "or: every split of N instances into prefill + decode", OPT_TOTAL},
    {"lambda", 'l', "L", "arrival rates to serve: rates 5/s,10/s, trace, or a list 1,2,5:10 "
     "per second (refused against latencies in ms or us); adds a block with the pool of "
     "fewest GPUs serving each",
     OPT_LAMBDA},
    {NULL, 0, NULL, NULL, 0},
};
static const cli_group goodput_group = {"Options", goodput_options};
static const cli_group *const goodput_groups[] = {&goodput_group, &sizing_group,
                                                  &cli_workload_group, &cli_output_group, NULL};

struct args {
    const char *cmd;
    double lambda, pa, pb, pc, ttft, pct, step, tpot, slots, slotq, kvb, kvbudget, pgpu, dgpu;
    int64_t maxp;
    int md;
    cli_list prefill, decode, total;
    /* durations as given (converted once the latency file's unit is known) */
    const char *ttft_s, *tpot_s, *step_s, *hw, *model, *device, *lambda_s;
    const char *pabc_s[3]; /* --prefill-a/-b/-c as given */
    double tp;
    int have_tp;                /* --tp given */
    afd_hw law_hw;              /* --hw FILE */
    afd_decode_slots law_slots; /* with --hw: slots from the decode law */
    afd_decode_law dlaw;        /* the decode step: the law's, or --decode-step */
    char unit[16];
    char uw[24]; /* the unit in messages: unit, or words for a file without one */
};

static int own(void *ctx, const cli_option *opt, const char *arg)
{
    struct args *a = ctx;
    const char *cmd = a->cmd;
    if (opt == NULL)
        return cli_usage_error(cmd, "unexpected argument '%s'", arg);
    switch (opt->id) {
    case OPT_LAMBDA: a->lambda_s = arg; return 0;
    case OPT_PA: a->pabc_s[0] = arg; return 0;
    case OPT_PB: a->pabc_s[1] = arg; return 0;
    case OPT_PC: a->pabc_s[2] = arg; return 0;
    case OPT_TTFT: a->ttft_s = arg; return 0;
    case OPT_STEP: a->step_s = arg; return 0;
    case OPT_TPOT: a->tpot_s = arg; return 0;
    case OPT_HWFILE: a->hw = arg; return 0;
    case OPT_MODEL: a->model = arg; return 0;
    case OPT_DEVICE: a->device = arg; return 0;
    case OPT_TP: {
        int64_t v;
        int rc = cli_integer(cmd, opt->name, arg, 1, 1024, &v);
        a->tp = (double)v;
        a->have_tp = 1;
        return rc;
    }
    case OPT_SLOTS: return cli_real_min(cmd, opt->name, arg, 0, 1, &a->slots);
    case OPT_KVB: return cli_real_min(cmd, opt->name, arg, 0, 1, &a->kvb);
    case OPT_KVBUDGET: return cli_real_min(cmd, opt->name, arg, 0, 1, &a->kvbudget);
    case OPT_PGPU: return cli_real_min(cmd, opt->name, arg, 0, 1, &a->pgpu);
    case OPT_DGPU: return cli_real_min(cmd, opt->name, arg, 0, 1, &a->dgpu);
    case OPT_MAXP: return cli_integer(cmd, opt->name, arg, 1, 1000000, &a->maxp);
    case OPT_MD: a->md = 1; return 0;
    case OPT_PCT:
    case OPT_SLOTQ: {
        double *v = opt->id == OPT_PCT ? &a->pct : &a->slotq;
        if (cli_real(cmd, opt->name, arg, v) != 0)
            return EXIT_USAGE;
        if (!(*v > 0 && *v < 1))
            return cli_usage_error(cmd, "--%s must be in (0, 1): '%s'", opt->name, arg);
        return 0;
    }
    case OPT_PREFILL:
        cli_list_free(&a->prefill);
        return cli_list_parse(cmd, opt->name, arg, 1, 1, 1000000, &a->prefill);
    case OPT_DECODE:
        cli_list_free(&a->decode);
        return cli_list_parse(cmd, opt->name, arg, 1, 1, 1000000, &a->decode);
    case OPT_TOTAL:
        cli_list_free(&a->total);
        return cli_list_parse(cmd, opt->name, arg, 1, 2, 100000, &a->total);
    }
    return cli_usage_error(cmd, "internal error: unhandled option --%s", opt->name);
}

static void args_init(struct args *a, const char *cmd)
{
    memset(a, 0, sizeof *a);
    a->cmd = cmd;
    a->lambda = a->ttft = a->step = a->tpot = a->slots = a->kvb = a->kvbudget = NAN;
    a->pct = 0.9;
    a->slotq = 0.99;
    a->pgpu = a->dgpu = NAN; /* not given: --tp */
    a->maxp = 1024;
    a->tp = 1;
}

static void args_free(struct args *a)
{
    cli_list_free(&a->prefill);
    cli_list_free(&a->decode);
    cli_list_free(&a->total);
}

/* --hw FILE: read the latency file, convert the durations to its unit, take
 * the prefill law's coefficients but those --prefill-a/b/c give.  Without --hw the
 * durations are in seconds (bare numbers, or suffixes converted to seconds),
 * the one rule of cli_time. */
static int latency_law(const char *cmd, struct args *a)
{
    const char *unit = "s";
    const char *names[3] = {"ttft-slo", "tpot-slo", "decode-step"};
    const char *given[3] = {a->ttft_s, a->tpot_s, a->step_s};
    double *dst[3] = {&a->ttft, &a->tpot, &a->step};
    const char *pnames[3] = {"prefill-a", "prefill-b", "prefill-c"};
    double *pdst[3] = {&a->pa, &a->pb, &a->pc};
    int k, rc, fitted = 0;
    afd_hw_init(&a->law_hw);
    if (a->hw != NULL) {
        afd_error err;
        afd_status st = afd_hw_preset(a->hw, &a->law_hw);
        if (st != AFD_OK && (st = afd_hw_read(a->hw, &a->law_hw, &err)) != AFD_OK)
            return cli_file_error(cmd, a->hw, st, &err);
        unit = a->law_hw.unit;
        /* the laws time an instance of the file's tp devices: the size of
         * this command's instances, unless --tp says another (refused) */
        if ((rc = cli_hw_tp(cmd, a->hw, &a->law_hw, a->have_tp, &a->tp)) != 0)
            return rc;
    } else if (a->model != NULL && a->device != NULL) {
        /* --model M --device D [--tp T]: the laws estimate --out would write
         * for them, and the same model and device size the decode memory */
        double kv_ms, kv_cap;
        if ((rc = cli_serve_laws(cmd, a->model, a->device, a->tp, &a->law_hw, &kv_ms, &kv_cap)) !=
            0)
            return rc;
        a->hw = "the estimator's laws";
        fitted = 1;
        unit = a->law_hw.unit;
    }
    /* the prefill law's coefficients: times (per token, per squared token)
     * in the file's unit, or seconds without one; a unit converts */
    for (k = 0; k < 3; k++) {
        char ex[64];
        if (a->pabc_s[k] == NULL)
            continue;
        if ((rc = cli_time(cmd, pnames[k], a->pabc_s[k], unit, pdst[k])) != 0)
            return rc;
        if (!(*pdst[k] >= 0))
            return cli_usage_error(cmd, "--%s must be >= 0: '%s'", pnames[k],
                                   cli_excerpt(a->pabc_s[k], ex, sizeof ex));
    }
    if (a->hw != NULL) {
        /* each of --prefill-a/b/c overrides the one coefficient it names,
         * as --alpha-a ... --beta-c do the AFD coefficients */
        const double file[3] = {a->law_hw.prefill_a, a->law_hw.prefill_b, a->law_hw.prefill_c};
        for (k = 0; k < 3 && afd_hw_has_prefill(&a->law_hw); k++)
            if (a->pabc_s[k] == NULL)
                *pdst[k] = file[k];
    } else if (a->model != NULL || a->device != NULL)
        return cli_usage_error(cmd, "--model and --device go together");
    /* the laws' error against the estimator, unless --prefill-a/b/c replace them */
    if (a->hw != NULL && a->pabc_s[0] == NULL && a->pabc_s[1] == NULL && a->pabc_s[2] == NULL)
        cli_note_fit(cmd, fitted ? NULL : a->hw, &a->law_hw, CLI_LAWS_SERVING);
    if ((a->model != NULL || a->device != NULL) && a->hw != NULL &&
        !afd_hw_has_decode(&a->law_hw))
        return cli_usage_error(cmd, "--model and --device size decode memory with the decode "
                                    "law of --hw FILE: %s has none (decode_beta, decode_gamma, "
                                    "decode_alpha)",
                               a->hw);
    snprintf(a->unit, sizeof a->unit, "%s", unit);
    snprintf(a->uw, sizeof a->uw, "%s", unit[0] ? unit : "(file's unit)");
    for (k = 0; k < 3; k++) {
        char ex[64];
        if (given[k] == NULL)
            continue;
        if ((rc = cli_time(cmd, names[k], given[k], unit, dst[k])) != 0)
            return rc;
        if (!(*dst[k] > 0))
            return cli_usage_error(cmd, "--%s must be > 0: '%s'", names[k],
                                   cli_excerpt(given[k], ex, sizeof ex));
    }
    if (a->hw != NULL && afd_hw_has_decode(&a->law_hw) && a->step_s != NULL)
        return cli_usage_error(cmd, "--decode-step: the decode step comes from the decode law "
                                    "of --hw %s", a->hw);
    if (a->hw != NULL && afd_hw_has_decode(&a->law_hw) && isnan(a->step))
        a->step = a->law_hw.decode_beta; /* placeholder until the workload is read */
    /* an instance of tensor-parallel size T is T devices, prefill or decode */
    if (isnan(a->pgpu))
        a->pgpu = a->tp;
    if (isnan(a->dgpu))
        a->dgpu = a->tp;
    return 0;
}

/* With a decode law: slots per instance = the largest batch meeting the TPOT
 * SLO and, with --model/--device, the KV memory left after the weights, at
 * the slot quantile; the step follows the law at the batch the load brings
 * (afd_decode_pool_law), not the step of a full instance. */
static int decode_law(const char *cmd, struct args *a, const afd_workload *w)
{
    double cap = INFINITY;
    afd_status st;
    if ((a->model != NULL) != (a->device != NULL))
        return cli_usage_error(cmd, "--model and --device go together");
    /* the model's KV bytes per token size both the slots and kv_gb: another
     * figure beside it would size them differently in one table */
    if (a->model != NULL && !isnan(a->kvb))
        return cli_usage_error(cmd, "--kv-bytes-per-token: --model gives the KV bytes per token "
                                    "(afdkit model); give one or the other");
    if (a->model != NULL) {
        afd_model m;
        afd_device d;
        afd_error err;
        if ((st = afd_model_load(a->model, &m, &err)) != AFD_OK)
            return cli_file_error(cmd, a->model, st, &err);
        if ((st = afd_device_load(a->device, &d, &err)) != AFD_OK)
            return cli_file_error(cmd, a->device, st, &err);
        /* the file's latencies and this memory should describe one system */
        if ((a->law_hw.model[0] && !cli_same_model(a->law_hw.model, a->model, m.name)) ||
            (a->law_hw.device[0] && !cli_same_device(a->law_hw.device, a->device, d.name)))
            cli_warn(cmd, "%s holds the latencies of %s on %s, but --model %s --device %s size "
                          "the memory: two different systems",
                     a->hw, a->law_hw.model[0] ? a->law_hw.model : "an unnamed model",
                     a->law_hw.device[0] ? a->law_hw.device : "an unnamed device", m.name,
                     d.name);
        if ((st = afd_kv_capacity_tokens(&m, &d, a->tp, &cap, &err)) != AFD_OK)
            return cli_usage_error(cmd, "%s", err.text);
        if (isnan(a->kvb))
            a->kvb = afd_kv_bytes_per_token(&m, a->tp);
    }
    st = afd_decode_slots_from_law(&a->law_hw, w->stats.theta, w->stats.nu, a->slotq, a->tpot,
                                   cap, &a->law_slots);
    if (st != AFD_OK)
        return cli_usage_error(cmd, "cannot size decode slots from the decode law of %s", a->hw);
    if (a->law_slots.slots < 1)
        return cli_infeasible(cmd, "%s: no decode batch meets the TPOT SLO %g %s: one sequence "
                                    "already takes %g %s%s",
                               a->hw, a->tpot, a->uw, a->law_slots.step, a->uw,
                               a->law_slots.binding == 2 ? " or overflows the KV cache" : "");
    if (isnan(a->slots))
        a->slots = a->law_slots.slots;
    else if (a->slots > a->law_slots.slots)
        cli_warn(cmd, "--slots-per-instance %g exceeds the %g slots the decode law allows",
                 a->slots, a->law_slots.slots);
    /* a batch past the law's fitted range times steps the fit never saw */
    if (a->law_hw.decode_batch_max > 0 && a->slots > a->law_hw.decode_batch_max)
        cli_warn(cmd, "%s: %g decode slots per instance exceed the batches 1 to %u its decode "
                      "law was fitted on (decode_batch_max): the steps of larger batches are "
                      "extrapolated",
                 a->hw, a->slots, a->law_hw.decode_batch_max);
    /* fewer slots than the law allows only cap the batch: the step is the
     * law's at the batch the load brings, as with the law's own slots */
    a->dlaw.beta = a->step = a->law_hw.decode_beta;
    a->dlaw.gamma = a->law_hw.decode_gamma;
    a->dlaw.alpha = a->law_hw.decode_alpha;
    return 0;
}

/* Shared checks and loading; returns 0 or an exit code. */
static int prepare(const char *cmd, struct args *a, cli_common *c, afd_workload *w,
                   afd_service_law *law)
{
    afd_prefill_model m;
    afd_status st;
    int rc;
    if ((rc = latency_law(cmd, a)) != 0)
        return rc;
    m.a = a->pa;
    m.b = a->pb;
    m.c2 = a->pc;
    /* a latency file without laws (hw --out without a device, calibrate
     * --out without --prefill/--decode: only the six AFD coefficients)
     * leaves the decode step or the prefill time unset */
    if (a->hw != NULL && isnan(a->step) && !isnan(a->ttft) && !isnan(a->tpot))
        return cli_usage_error(cmd, "--decode-step is required: %s has no decode law "
                                    "(decode_beta, decode_gamma, decode_alpha); give "
                                    "--decode-step, or write the file with afdkit estimate --out "
                                    "(or hw --out --device D, calibrate --decode FILE --out)",
                               a->hw);
    if (isnan(a->ttft) || isnan(a->step) || isnan(a->tpot))
        return cli_usage_error(cmd, "--ttft-slo, --decode-step and --tpot-slo are required");
    if (a->hw != NULL && !(a->pa > 0 || a->pb > 0 || a->pc > 0))
        return cli_usage_error(cmd, "the prefill time is zero: %s has no prefill law (prefill_a, "
                                    "prefill_b, prefill_c); give --prefill-a, --prefill-b or "
                                    "--prefill-c, or write the file with afdkit estimate --out "
                                    "(or hw --out --device D, calibrate --prefill FILE --out)",
                               a->hw);
    if (!(a->pa > 0 || a->pb > 0 || a->pc > 0))
        return cli_usage_error(cmd, "the prefill time is zero: give --prefill-a, --prefill-b or "
                                    "--prefill-c");
    if (a->model != NULL && !isnan(a->kvbudget))
        return cli_usage_error(cmd, "--kv-budget: --model and --device give the KV memory of a "
                                    "decode instance; give one or the other");
    if (isnan(a->kvb) != isnan(a->kvbudget) && !isnan(a->kvbudget))
        return cli_usage_error(cmd, "--kv-budget needs --kv-bytes-per-token");
    if ((rc = cli_workload_load(cmd, &c->wl, CLI_WL_NEEDS_LENGTHS, 1, &c->out, w)) != 0)
        return rc;
    /* a budget below one sequence's mean KV (theta tokens, Lemma 4.1) would
     * size a pool of millions of instances that each hold no sequence */
    if (!isnan(a->kvbudget) && a->kvbudget < a->kvb * w->stats.theta)
        return cli_usage_error(cmd, "--kv-budget %g bytes holds %.4g KV tokens at %g bytes per "
                                    "token, less than the theta = %.4g tokens a sequence holds on "
                                    "average: no instance could hold one",
                               a->kvbudget, a->kvbudget / a->kvb, a->kvb, w->stats.theta);
    st = afd_service_law_from_workload(w, &m, law);
    if (st != AFD_OK)
        return cli_usage_error(cmd, "cannot form the prefill-time law: %s", afd_strerror(st));
    a->dlaw.beta = a->step; /* a constant step, unless the law follows */
    a->dlaw.gamma = a->dlaw.alpha = 0;
    if (a->hw != NULL && afd_hw_has_decode(&a->law_hw) && (rc = decode_law(cmd, a, w)) != 0)
        return rc;
    return 0;
}

/* ------------------------------------------------------------------- pd */

/* One arrival rate's sizing (block 1 of pd). */
/* The pools of goodput: the prefill law, the SLOs and the decode sizing of
 * the options; the instances are set per pool. */
static void goodput_pool(const struct args *a, const afd_workload *w, const afd_service_law *law,
                         afd_pd_pool *pool)
{
    memset(pool, 0, sizeof *pool);
    pool->prefill = law;
    pool->workload = w;
    pool->percentile = a->pct;
    pool->ttft_slo = a->ttft;
    pool->mg = !a->md;
    pool->decode_step = a->dlaw.beta;
    pool->decode_gamma = a->dlaw.gamma;
    pool->decode_alpha = a->dlaw.alpha;
    pool->tpot_slo = a->tpot;
    pool->tpot_percentile = a->pct;
    pool->slots_per_instance = a->slots;
    pool->slot_quantile = a->slotq;
    pool->kv_budget_tokens = isnan(a->kvbudget) ? 0 : a->kvbudget / a->kvb;
}

struct pd_row {
    afd_ttft mg, md;
    afd_decode_need need;
    afd_decode_pool pool;
    double gpus;
    double capacity; /* the goodput of the sized pools (afd_pd_goodput) */
};

static int size_one(const char *cmd, const struct args *a, const afd_workload *w,
                    const afd_service_law *law, double lambda, int many, struct pd_row *r)
{
    afd_decode_instance inst;
    char at[64] = "";
    if (many)
        snprintf(at, sizeof at, "lambda %g/%s: ", lambda, a->uw);
    afd_status st = afd_prefill_pool(lambda, law, a->pct, a->ttft, !a->md, (int)a->maxp, &r->mg);
    if (st == AFD_OK)
        st = afd_prefill_pool(lambda, law, a->pct, a->ttft, 0, (int)a->maxp, &r->md);
    if (st == AFD_EEMPTY)
        return cli_infeasible(cmd,
                              "%sno prefill pool of at most %lld instances meets a P%g "
                              "TTFT of %g %s (E[S] = %.4g %s, largest S = %.4g %s); relax "
                              "--ttft-slo or raise --max-prefill",
                              at, (long long)a->maxp, 100 * a->pct, a->ttft, a->uw, law->mean,
                              a->uw, law->max, a->uw);
    if (st != AFD_OK)
        return cli_runtime_error(cmd, "%sprefill sizing: %s", at, afd_strerror(st));
    inst.slots = a->slots;
    inst.kv_bytes_per_token = a->kvb;
    inst.kv_budget = a->kvbudget;
    st = afd_decode_pool_law(lambda, w, &a->dlaw, a->slotq, &inst, &r->need, &r->pool);
    if (st != AFD_OK)
        return cli_runtime_error(cmd, "%sdecode sizing: %s", at, afd_strerror(st));
    r->gpus = r->mg.c * a->pgpu + r->pool.instances * a->dgpu;
    return 0;
}

/* 1 when the trace's timestamps can be replayed (kept, sorted, spanning time). */
static int can_replay(const afd_workload *w)
{
    return w->kind == AFD_WORKLOAD_TRACE && w->time != NULL && w->arrivals.unsorted_line == 0 &&
           w->arrivals.lambda > 0 && w->n_kept >= AFD_QUEUE_SIM_BATCHES;
}

static int run_pd(const cli_command *self, int argc, char **argv)
{
    const char *cmd = self->path;
    struct args a;
    cli_common c;
    afd_workload w;
    afd_service_law law;
    afd_status st;
    cli_table *t = NULL;
    cli_list lambdas = {0, NULL};
    struct pd_row *rows = NULL;
    char ttft_col[48], ttft_md_col[48], wq_col[48], slots_col[48], kvq_col[48], tpotq_col[48];
    size_t li;
    int rc, many;
    cli_progress prog;
    afd_pd_pool gpool;

    args_init(&a, cmd);
    memset(&w, 0, sizeof w);
    cli_common_init(&c);
    rc = cli_parse_args(self, argc, argv, &c, own, &a);
    if (rc != CLI_CONTINUE)
        goto out;
    if (a.lambda_s == NULL) {
        rc = cli_usage_error(cmd, "--lambda L is required");
        goto out;
    }
    if ((rc = prepare(cmd, &a, &c, &w, &law)) != 0)
        goto out;
    /* the rates in the unit of the times: the latency file's, or seconds */
    rc = cli_lambda_list(cmd, "lambda", a.lambda_s, a.unit, 0, &w, c.wl.trace,
                         &lambdas);
    if (rc != 0)
        goto out;
    many = lambdas.n > 1 || cli_lambda_is_trace(a.lambda_s);
    cli_dispersion_warning(cmd, c.wl.trace, &w,
                           "see the replay of the trace's own arrivals");

    if (a.step > a.tpot) {
        rc = cli_infeasible(cmd,
                            "the decode step %g %s exceeds the TPOT SLO %g %s: no decode pool "
                            "meets it",
                            a.step, a.uw, a.tpot, a.uw);
        goto out;
    }
    rows = calloc(lambdas.n, sizeof *rows);
    if (rows == NULL) {
        rc = cli_runtime_error(cmd, "out of memory");
        goto out;
    }
    cli_progress_init(&prog, cmd, "rates sized", c.out.quiet);
    cli_progress_update(&prog, 0, (double)lambdas.n, "rates");
    for (li = 0; li < lambdas.n; li++) {
        if ((rc = size_one(cmd, &a, &w, &law, lambdas.v[li], many, &rows[li])) != 0) {
            cli_progress_end(&prog);
            goto out;
        }
        cli_progress_update(&prog, (double)(li + 1), (double)lambdas.n, "rates");
    }
    cli_progress_end(&prog);
    /* capacity: the largest rate the sized pools sustain, the goodput of
     * (prefill, decode_instances) as the goodput command finds it */
    goodput_pool(&a, &w, &law, &gpool);
    for (li = 0; li < lambdas.n; li++) {
        int lim;
        rows[li].capacity = NAN; /* no decode pool sized (no --slots-per-instance) */
        if (!isfinite(rows[li].pool.instances))
            continue;
        gpool.prefill_instances = (unsigned)(a.md ? rows[li].md.c : rows[li].mg.c);
        gpool.decode_instances = (unsigned)rows[li].pool.instances;
        if ((st = afd_pd_goodput(&gpool, &rows[li].capacity, &lim)) != AFD_OK) {
            rc = cli_runtime_error(cmd, "capacity of %u + %u instances: %s",
                                   gpool.prefill_instances, gpool.decode_instances,
                                   afd_strerror(st));
            goto out;
        }
    }

    t = cli_table_new(&c.out);
    if (t == NULL) {
        rc = cli_runtime_error(cmd, "out of memory");
        goto out;
    }
    cli_percentile_name(ttft_col, sizeof ttft_col, "ttft", a.pct, "");
    cli_percentile_name(ttft_md_col, sizeof ttft_md_col, "ttft", a.pct, "_md");
    cli_percentile_name(wq_col, sizeof wq_col, "wq", a.pct, "_md");
    cli_percentile_name(slots_col, sizeof slots_col, "decode_slots", a.slotq, "");
    cli_percentile_name(kvq_col, sizeof kvq_col, "kv_gb", a.slotq, "");
    cli_percentile_name(tpotq_col, sizeof tpotq_col, "tpot", a.slotq, "");
    cli_table_provenance(t);
    if (a.unit[0]) /* the file's unit, or seconds without one */
        cli_table_unit(t, "%s", a.unit);
    if (a.hw != NULL && afd_hw_has_decode(&a.law_hw))
        cli_table_meta(t, "decode_law", "slots=%g step=%.10g kv_tokens_q=%.10g binding=%s",
                       a.law_slots.slots, a.law_slots.step, a.law_slots.kv_tokens,
                       a.law_slots.binding == 1 ? "tpot" : a.law_slots.binding == 2 ? "kv" : "none");
    cli_table_begin(t, "lambda", "prefill", "prefill_md", ttft_col, ttft_md_col, "service_mean",
                    "service_scv", "decode_slots", slots_col, "kv_gb", kvq_col,
                    "decode_instances", "tpot", "gpus", "goodput_per_gpu", tpotq_col, "capacity",
                    "capacity_per_gpu");
    for (li = 0; li < lambdas.n; li++) {
        const struct pd_row *r = &rows[li];
        cli_table_real(t, lambdas.v[li]);
        cli_table_int(t, r->mg.c);
        cli_table_int(t, r->md.c);
        cli_table_real(t, a.md ? r->mg.ttft_md : r->mg.ttft_mg);
        cli_table_real(t, r->md.ttft_md);
        cli_table_real(t, law.mean);
        cli_table_real(t, law.scv);
        cli_table_real(t, r->need.slots_mean);
        cli_table_count(t, r->need.slots_q);
        cli_table_real(t, r->pool.kv_bytes / 1e9);
        cli_table_real(t, r->pool.kv_bytes_q / 1e9);
        cli_table_count(t, r->pool.instances);
        cli_table_real(t, r->need.step);
        cli_table_count(t, r->gpus);
        cli_table_real(t, lambdas.v[li] / r->gpus);
        cli_table_real(t, r->need.step_q);
        cli_table_real(t, r->capacity);
        cli_table_real(t, r->capacity / r->gpus);
        cli_table_end_row(t);
    }

    /* the prefill curve around each answer */
    if (many)
        cli_table_begin(t, "c", "rho", wq_col, ttft_md_col, ttft_col, "lambda");
    else
        cli_table_begin(t, "c", "rho", wq_col, ttft_md_col, ttft_col);
    for (li = 0; li < lambdas.n; li++) {
        double lambda = lambdas.v[li];
        int cc, c_hi = (rows[li].mg.c > rows[li].md.c ? rows[li].mg.c : rows[li].md.c) + 2;
        for (cc = (int)floor(lambda * law.mean) + 1; cc <= c_hi; cc++) {
            afd_ttft q;
            st = afd_ttft_quantile(lambda, &law, cc, a.pct, &q);
            if (st == AFD_ELIMIT && q.rho < 1) {
                /* the size limit of the exact chain, as afd_prefill_pool skips */
                cli_warn(cmd,
                         "c = %d: rho = %.15g is too close to 1 for the exact M/D/c solution; "
                         "this pool is taken as missing the SLO",
                         cc, q.rho);
                st = AFD_OK;
            }
            if (st != AFD_OK) {
                rc = cli_runtime_error(cmd, "c = %d: %s", cc, afd_strerror(st));
                goto out;
            }
            cli_table_int(t, cc);
            cli_table_real(t, q.rho);
            cli_table_real(t, q.wq_md);
            cli_table_real(t, q.ttft_md);
            cli_table_real(t, q.ttft_mg);
            if (many)
                cli_table_real(t, lambda);
            cli_table_end_row(t);
        }
    }

    /* the prefill pool again with the trace's own arrivals replayed */
    if (can_replay(&w)) {
        afd_quad_service qs = {a.pa, a.pb, a.pc};
        char rcol[48], rse[48];
        cli_percentile_name(rcol, sizeof rcol, "ttft", a.pct, "_replay");
        cli_percentile_name(rse, sizeof rse, "ttft", a.pct, "_replay_se");
        cli_table_begin(t, "lambda", "prefill_replay", rcol, rse, "rho", "prefill");
        cli_progress_init(&prog, cmd, "rates replayed", c.out.quiet);
        for (li = 0; li < lambdas.n; li++) {
            cli_progress_update(&prog, (double)li, (double)lambdas.n, "rates");
            afd_queue_sim_params p;
            afd_queue_sim_result res;
            unsigned creplay = 0;
            memset(&p, 0, sizeof p);
            p.trace = &w;
            p.service_fn = afd_quad_service_time;
            p.service_ctx = &qs;
            p.quantile = a.pct;
            p.replay = 1;
            /* seconds (rate w.arrivals.lambda per second) to the unit of the
             * times at the rate lambda per unit: t -> t lambda_trace / lambda */
            p.time_scale = w.arrivals.lambda / lambdas.v[li];
            st = afd_queue_replay_pool(&p, a.ttft, 1, (unsigned)a.maxp, &creplay, &res);
            if (st != AFD_OK && st != AFD_EEMPTY) {
                cli_progress_end(&prog);
                rc = cli_runtime_error(cmd, "lambda %g/%s: replaying the trace: %s",
                                       lambdas.v[li], a.uw, afd_strerror(st));
                goto out;
            }
            if (st == AFD_EEMPTY)
                cli_warn(cmd, "lambda %g/%s: with the trace's own arrivals no prefill pool of at "
                              "most %lld instances meets the TTFT SLO",
                         lambdas.v[li], a.uw, (long long)a.maxp);
            cli_table_real(t, lambdas.v[li]);
            cli_table_count(t, st == AFD_OK ? (double)creplay : NAN);
            cli_table_real(t, st == AFD_OK ? res.sojourn_q : NAN);
            cli_table_real(t, st == AFD_OK ? res.sojourn_q_se : NAN);
            cli_table_real(t, st == AFD_OK ? res.rho : NAN);
            cli_table_int(t, rows[li].mg.c);
            cli_table_end_row(t);
        }
        cli_progress_end(&prog);
    }
    rc = cli_table_finish(t, cmd);
    t = NULL;
out:
    cli_table_discard(t);
    free(rows);
    cli_list_free(&lambdas);
    afd_workload_free(&w);
    args_free(&a);
    return rc;
}

const cli_command cli_cmd_pd = {
    .name = "pd",
    .path = "pd",
    .summary = "prefill and decode pool sizes for an arrival rate under TTFT/TPOT SLOs",
    .usage = "pd --lambda L|LIST|trace WORKLOAD (--prefill-a A|--prefill-b B|--prefill-c C|"
             "--hw FILE) --ttft-slo T (--decode-step S|--hw FILE) --tpot-slo T [OPTIONS]",
    .description =
        "Prints two blocks.  First one row:\n"
        "  lambda prefill prefill_md ttft_p90 ttft_p90_md service_mean service_scv\n"
        "  decode_slots decode_slots_p99 kv_gb kv_gb_p99 decode_instances tpot gpus\n"
        "  goodput_per_gpu tpot_p99 capacity capacity_per_gpu\n"
        "then the prefill curve: c rho wq_p90_md ttft_p90_md ttft_p90.\n"
        "--lambda takes a list (1,2,5:10: one row per rate, and the curve of each with a\n"
        "last column lambda), rates with units (5/s) or trace, the rate of the trace's\n"
        "timestamps (without --hw the times are then in seconds).  When the trace has\n"
        "timestamps a third block sizes the prefill pool with the trace's own arrivals\n"
        "replayed (as afdkit mc mdc --arrivals trace, stretched to each rate):\n"
        "  lambda prefill_replay ttft_p90_replay ttft_p90_replay_se rho prefill\n"
        "(prefill: the Poisson answer beside it), and a warning says when the trace's\n"
        "dispersion indices put Poisson arrivals more than 5 standard errors away.\n"
        "\n"
        "Prefill: requests arrive at rate L (Poisson) and take S = A + B P + C P^2 on one of\n"
        "c prefill instances, first come first served.  prefill is the smallest c whose\n"
        "P90 TTFT (wait + own prefill) meets the SLO, with the exact M/D/c wait law scaled\n"
        "by 1 + cs^2 for the spread of prompt lengths (M/G/c; exact in the mean for c = 1)\n"
        "and convolved with the request's own S; prefill_md is the plain M/D/c answer with\n"
        "the mean service time (wait + E[S]), as BestServe models it.\n"
        "Decode: a request holds a slot for D steps of S_d (= TPOT); the slots in use are\n"
        "exactly Poisson with mean decode_slots = L E[D] S_d (M/G/infinity), provisioned at\n"
        "--slot-quantile; they hold L theta KV tokens on average (Lemma 4.1; kv_gb with\n"
        "--kv-bytes-per-token), and memory is sized at the same quantile: kv_gb_p99 is the\n"
        "quantile of the compound Poisson KV load (the count exact, the sum of its slots'\n"
        "loads of mean theta and sd nu normal).  decode_instances needs\n"
        "--slots-per-instance (and --kv-budget to count memory, against kv_gb_p99);\n"
        "goodput_per_gpu = L / gpus is the offered rate per GPU, not what the pools can\n"
        "carry: capacity is the largest rate the sized pools (prefill, decode_instances)\n"
        "sustain, the goodput of that pool (afdkit goodput), and capacity_per_gpu =\n"
        "capacity / gpus; rates per unit of the times, as lambda.\n"
        "With the decode law of --hw the step of a batch of b is beta + (gamma + alpha\n"
        "theta) b: N decode instances sharing L each hold n = (L/N) E[D] beta / (1 -\n"
        "(L/N) E[D] (gamma + alpha theta)) on average (Little's law), decode_slots = N n,\n"
        "tpot the mean step at n and tpot_p99 the step at decode_slots_p99 / N;\n"
        "decode_instances is the smallest N whose occupancy and KV quantiles fit.\n"
        "Units: without --hw bare numbers are seconds (rates per second) and suffixes\n"
        "(500ms, 2s, 300/min) convert to seconds; with --hw FILE they are in the file's\n"
        "unit, and a suffix against a file in cycles or without a unit is refused.\n"
        "Check a sizing by simulation: afdkit mc mdc --lambda L --service-trace FILE\n"
        "--service-a A --service-b B --c C reports ttft_p90_mc.\n"
        "No feasible sizing (a decode step above the TPOT SLO, a TTFT SLO that no pool of\n"
        "at most --max-prefill instances meets) prints no table and exits 1 with the\n"
        "reason.  A pool loaded so close to 1 that the exact M/D/c solution exceeds its\n"
        "size limit is taken as missing the SLO (a warning names it; its curve row is nan).",
    .groups = pd_groups,
    .run = run_pd,
};

/* -------------------------------------------------------------- goodput */

static int run_goodput(const cli_command *self, int argc, char **argv)
{
    const char *cmd = self->path;
    struct args a;
    cli_common c;
    afd_workload w;
    afd_service_law law;
    afd_pd_pool pool;
    cli_table *t = NULL;
    size_t i, j, npairs = 0;
    double *pp = NULL, *dd = NULL, *gp = NULL, *tot = NULL;
    cli_list lambdas = {0, NULL};
    int *lim = NULL, rc;
    cli_progress prog;

    args_init(&a, cmd);
    memset(&w, 0, sizeof w);
    cli_common_init(&c);
    rc = cli_parse_args(self, argc, argv, &c, own, &a);
    if (rc != CLI_CONTINUE)
        goto out;
    if ((a.total.n > 0) == (a.prefill.n > 0 || a.decode.n > 0) ||
        (a.total.n == 0 && (a.prefill.n == 0 || a.decode.n == 0))) {
        rc = cli_usage_error(cmd, "give --prefill LIST and --decode LIST, or --total LIST");
        goto out;
    }
    if (isnan(a.slots) && a.hw == NULL && a.model == NULL) {
        rc = cli_usage_error(cmd, "--slots-per-instance N is required");
        goto out;
    }
    if ((rc = prepare(cmd, &a, &c, &w, &law)) != 0)
        goto out;
    /* the rates in the unit of the times: the latency file's, or seconds */
    if (a.lambda_s != NULL &&
        (rc = cli_lambda_list(cmd, "lambda", a.lambda_s, a.unit, 0, &w,
                              c.wl.trace, &lambdas)) != 0)
        goto out;
    if (isnan(a.slots)) {
        rc = cli_usage_error(cmd, "--slots-per-instance N is required: %s has no decode law",
                             a.hw);
        goto out;
    }
    if (a.step > a.tpot) {
        rc = cli_infeasible(cmd,
                            "the decode step %g %s exceeds the TPOT SLO %g %s: no pool has a "
                            "positive goodput",
                            a.step, a.uw, a.tpot, a.uw);
        goto out;
    }

    /* the (prefill, decode) pairs */
    for (i = 0; i < a.total.n; i++)
        npairs += (size_t)a.total.v[i] - 1;
    if (a.total.n == 0)
        npairs = a.prefill.n * a.decode.n;
    if (npairs > 100000) {
        rc = cli_usage_error(cmd, "refused: %zu pools to evaluate (at most 100000)", npairs);
        goto out;
    }
    pp = malloc(npairs * sizeof *pp);
    dd = malloc(npairs * sizeof *dd);
    gp = malloc(npairs * sizeof *gp);
    tot = malloc(npairs * sizeof *tot);
    lim = malloc(npairs * sizeof *lim);
    if (!pp || !dd || !gp || !tot || !lim) {
        rc = cli_runtime_error(cmd, "out of memory");
        goto out;
    }
    npairs = 0;
    if (a.total.n > 0) {
        for (i = 0; i < a.total.n; i++)
            for (j = 1; j < (size_t)a.total.v[i]; j++) {
                pp[npairs] = (double)j;
                dd[npairs] = a.total.v[i] - (double)j;
                tot[npairs++] = a.total.v[i];
            }
    } else {
        for (i = 0; i < a.prefill.n; i++)
            for (j = 0; j < a.decode.n; j++) {
                pp[npairs] = a.prefill.v[i];
                dd[npairs] = a.decode.v[j];
                tot[npairs++] = a.prefill.v[i] + a.decode.v[j];
            }
    }

    goodput_pool(&a, &w, &law, &pool);
    cli_progress_init(&prog, cmd, "splits", c.out.quiet);
    cli_progress_update(&prog, 0, (double)npairs, "splits");
    for (i = 0; i < npairs; i++) {
        afd_status st;
        pool.prefill_instances = (unsigned)pp[i];
        pool.decode_instances = (unsigned)dd[i];
        st = afd_pd_goodput(&pool, &gp[i], &lim[i]);
        if (st != AFD_OK) {
            cli_progress_end(&prog);
            rc = cli_runtime_error(cmd, "prefill %g, decode %g: %s", pp[i], dd[i],
                                   afd_strerror(st));
            goto out;
        }
        cli_progress_update(&prog, (double)(i + 1), (double)npairs, "splits");
    }
    cli_progress_end(&prog);

    for (i = 0; i < npairs && !(gp[i] > 0); i++)
        ;
    if (i == npairs) {
        /* at a rate near 0 the TTFT is the prefill time alone, whatever the pool */
        rc = cli_infeasible(cmd,
                            "no pool has a positive goodput: the %s limit binds at "
                            "every arrival rate",
                            afd_limit_name(lim[0]));
        goto out;
    }

    t = cli_table_new(&c.out);
    if (t == NULL) {
        rc = cli_runtime_error(cmd, "out of memory");
        goto out;
    }
    cli_table_provenance(t);
    if (a.unit[0]) /* the file's unit, or seconds without one */
        cli_table_unit(t, "%s", a.unit);
    cli_table_begin(t, "prefill", "decode", "goodput", "goodput_per_gpu", "limit");
    for (i = 0; i < npairs; i++) {
        cli_table_count(t, pp[i]);
        cli_table_count(t, dd[i]);
        cli_table_real(t, gp[i]);
        cli_table_real(t, gp[i] / (pp[i] * a.pgpu + dd[i] * a.dgpu));
        cli_table_str(t, afd_limit_name(lim[i]));
        cli_table_end_row(t);
    }
    if (a.total.n > 0) {
        /* the best split of each total */
        cli_table_begin(t, "total", "prefill", "decode", "goodput", "goodput_per_gpu");
        for (i = 0; i < npairs;) {
            size_t best = i, next = npairs;
            for (j = i; j < npairs && tot[j] == tot[i]; j++)
                if (gp[j] > gp[best])
                    best = j;
            for (j = i; j < npairs && tot[j] == tot[i]; j++)
                if (j != best && (next == npairs || gp[j] > gp[next]))
                    next = j;
            /* the closed forms alone choose the split */
            if (next < npairs && afd_closed_too_close(gp[best], gp[next], AFD_PD_GOODPUT_ERROR))
                cli_warn(cmd,
                         "total %g: the best two splits (%gp%gd, %gp%gd) are within %g%% of "
                         "each other, the closed forms' error against the simulator "
                         "(docs/agreement.md): their order is not known",
                         tot[i], pp[best], dd[best], pp[next], dd[next],
                         100 * AFD_PD_GOODPUT_ERROR);
            cli_table_count(t, tot[i]);
            cli_table_count(t, pp[best]);
            cli_table_count(t, dd[best]);
            cli_table_real(t, gp[best]);
            cli_table_real(t, gp[best] / (pp[best] * a.pgpu + dd[best] * a.dgpu));
            cli_table_end_row(t);
            i = j;
        }
    }
    if (lambdas.n > 0) {
        /* per rate, the pool of fewest GPUs whose goodput reaches it (ties:
         * the larger goodput); a selection among the rows above */
        cli_table_begin(t, "lambda", "prefill", "decode", "gpus", "goodput", "headroom");
        for (j = 0; j < lambdas.n; j++) {
            double lam = lambdas.v[j], g_best = NAN, gpus = NAN, most = 0;
            size_t best = npairs;
            for (i = 0; i < npairs; i++) {
                double gi = pp[i] * a.pgpu + dd[i] * a.dgpu;
                if (gp[i] > most)
                    most = gp[i];
                if (!(gp[i] >= lam))
                    continue;
                if (best == npairs || gi < gpus || (gi == gpus && gp[i] > g_best)) {
                    best = i;
                    gpus = gi;
                    g_best = gp[i];
                }
            }
            if (best == npairs)
                cli_warn(cmd, "lambda %g/%s: no pool evaluated serves it (the largest goodput is "
                              "%g/%s)",
                         lam, a.uw, most, a.uw);
            cli_table_real(t, lam);
            cli_table_count(t, best < npairs ? pp[best] : NAN);
            cli_table_count(t, best < npairs ? dd[best] : NAN);
            cli_table_count(t, gpus);
            cli_table_real(t, g_best);
            cli_table_real(t, g_best / lam);
            cli_table_end_row(t);
        }
    }
    rc = cli_table_finish(t, cmd);
    t = NULL;
out:
    cli_table_discard(t);
    cli_list_free(&lambdas);
    free(pp);
    free(dd);
    free(gp);
    free(tot);
    free(lim);
    afd_workload_free(&w);
    args_free(&a);
    return rc;
}

const cli_command cli_cmd_goodput = {
    .name = "goodput",
    .path = "goodput",
    .summary = "largest arrival rate meeting both SLOs, per prefill:decode split",
    .usage =
        "goodput WORKLOAD (--prefill LIST --decode LIST | --total LIST) --slots-per-instance N "
        "[--lambda L|LIST|trace] ...",
    .description =
        "Prints one row per pool: prefill decode goodput goodput_per_gpu limit; with\n"
        "--total a second block gives the best split of each total:\n"
        "total prefill decode goodput goodput_per_gpu (a warning names a total whose\n"
        "best two splits are within 5%, the closed forms' error against the\n"
        "simulator, of each other).\n"
        "\n"
        "goodput is the largest arrival rate whose P90 TTFT meets the SLO on the prefill\n"
        "pool, whose P90 of per-request TPOT meets the TPOT SLO on the decode pool (both\n"
        "at --percentile), and whose decode occupancy and KV cache (both at\n"
        "--slot-quantile, as afdkit pd sizes them) fit the decode pool, found by\n"
        "bisection on the closed forms of afdkit pd (BestServe Algorithm 8 with its loop\n"
        "test the right way round; no relaxation factor: the closed forms have no\n"
        "sampling noise).  A request's TPOT is the mean of its own decode steps, each\n"
        "growing with the batch it runs in, plus its wait to join a batch (see\n"
        "docs/queues.md, The P90 of TPOT).  limit names the constraint that binds: ttft,\n"
        "tpot, decode-slots, kv-cache, or saturation (the prefill load is too close to 1\n"
        "for the exact M/D/c solution, so goodput is a lower bound).  With the decode law\n"
        "of --hw the decode demand at each rate is afdkit pd's: the step, and so the\n"
        "occupancy, grows with the rate (Little's law for each of the decode\n"
        "instances).  When no pool has a positive goodput (a decode\n"
        "step above the TPOT SLO, a TTFT SLO below the prefill time) the command prints\n"
        "no table and exits 1 with the reason.\n"
        "\n"
        "--lambda L (a list 1,2,5:10 per time unit of the latencies, rates with units 5/s,\n"
        "or trace: the rate of the trace's timestamps) adds a last block, one row per\n"
        "rate: lambda prefill decode gpus goodput headroom, the pool of fewest GPUs\n"
        "among those evaluated whose goodput reaches the rate (ties: the larger\n"
        "goodput), headroom = goodput / lambda; nan with a warning when no pool does.\n"
        "Units: without --hw bare numbers are seconds (rates per second) and suffixes\n"
        "(500ms, 2s, 300/min) convert to seconds; with --hw FILE they are in the file's\n"
        "unit, and a suffix against a file in cycles or without a unit is refused.",
    .groups = goodput_groups,
    .run = run_goodput,
};
