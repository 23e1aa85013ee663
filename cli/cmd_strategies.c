/* cmd_strategies.c: afdkit strategies, BestServe's optimizer (Section 3.5)
 * corrected: every collocated (xm) and disaggregated (ypzd) strategy on N
 * devices, its goodput from the closed forms and from the simulator. */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "afd_mc.h"
#include "afd_serve.h"
#include "afd_serving.h"
#include "cli.h"
#include "serve_opts.h"

enum { OPT_DEVICES = 400, OPT_TPS, OPT_METHOD, OPT_RELAX, OPT_TOL, OPT_THREADS, OPT_PRICE };
enum { METHOD_CLOSED = 1, METHOD_SIM = 2, METHOD_BOTH = 3 };

static const cli_option st_options[] = {
    {"devices", 'N', "N", "devices to share out (required)", OPT_DEVICES},
    {"tp", 0, "LIST", "tensor-parallel sizes tried (default 1,2,4,8; memory permitting)",
     OPT_TPS},
    {"method", 0, "M", "closed, sim or both (default both)", OPT_METHOD},
    {"slo-relax", 0, "R", "accept P90s up to R times the SLOs (BestServe: 1.1; default 1)",
     OPT_RELAX},
    {"tolerance", 0, "X", "relative width of the goodput bracket (default 0.01)", OPT_TOL},
    {"prefill-bmax", 0, "B", "requests per prefill batch (default 4)", OPT_SV_PBMAX},
    {"decode-bmax", 0, "B",
     "sequences decoded together, memory permitting (default: what the KV memory and the "
     "TPOT SLO allow at each tp)",
     OPT_SV_DBMAX},
    {"threads", 0, "N", CLI_THREADS_HELP, OPT_THREADS},
    {"price", 0, "P", "dollars per device-hour, e.g. 3.5/h, instead of the device file's",
     OPT_PRICE},
    {NULL, 0, NULL, NULL, 0},
};
static const cli_group st_group = {"Strategies", st_options};
static const cli_group *const st_groups[] = {&st_group,           &cli_serve_model_only_group,
                                             &cli_serve_run_group, &cli_workload_group,
                                             &cli_output_group,    &cli_shard_group,
                                             NULL};

struct ctx {
    cli_serve_args a;
    int64_t devices;
    cli_list tps;
    int method;
    unsigned threads;
    double relax, tol;
    double price; /* --price: per device-hour, 0 when not given */
    int have_price;
    const afd_workload *wl;    /* --trace or --geometric, NULL with --lengths */
    afd_taichi_lengths len;    /* what the closed forms read of the requests */
};

static int own(void *vctx, const cli_option *opt, const char *arg)
{
    struct ctx *x = vctx;
    const char *cmd = x->a.cmd;
    if (opt == NULL)
        return cli_usage_error(cmd, "unexpected argument '%s'", arg);
    switch (opt->id) {
    case OPT_DEVICES: return cli_integer(cmd, opt->name, arg, 1, 1024, &x->devices);
    case OPT_TPS:
        cli_list_free(&x->tps);
        return cli_list_parse(cmd, opt->name, arg, 1, 1, 1024, &x->tps);
    case OPT_METHOD: {
        static const char *const names[] = {"closed", "sim", "both", NULL};
        int k = 0, rc = cli_choice(cmd, opt->name, "method", arg, names, &k);
        x->method = METHOD_CLOSED + k; /* in the order of names */
        return rc;
    }
    case OPT_RELAX: return cli_real_min(cmd, opt->name, arg, 0, 1, &x->relax);
    case OPT_THREADS: return cli_threads(cmd, opt->name, arg, &x->threads);
    case OPT_PRICE: x->have_price = 1; return cli_price(cmd, opt->name, arg, &x->price);
    case OPT_TOL: return cli_real_in(cmd, opt->name, arg, 1e-6, 0, 0.5, 1, &x->tol);
    }
    if (opt->id == OPT_SV_LAMBDA || opt->id == OPT_SV_UNSTABLE)
        return cli_usage_error(cmd, "--%s does not apply: strategies searches the rate", opt->name);
    return cli_serve_option(&x->a, opt, arg);
}

typedef struct strategy {
    char name[32];
    int colloc;
    unsigned tp, instances, prefill, decode, decode_bmax;
    unsigned decode_bmax_fit; /* the cap the KV memory and the TPOT SLO allow */
    const afd_hw *hw;
    double kv_time_per_token; /* KV transfer per prompt token, ms */
    double goodput, goodput_sim; /* requests per ms */
    double goodput_cap; /* closed-form, at decode_bmax (NaN unless computed) */
    double goodput_fit; /* closed-form, at decode_bmax_fit when a given cap is below it */
    int limit, limit_sim;
    afd_status st, st_sim;
    size_t item;  /* position in the enumeration (the list --shard splits) */
    double key;   /* the ranking column as printed (NaN: ranked last) */
} strategy;

static void eval(strategy *s, const struct ctx *x, double ttft, double tpot)
{
    afd_serving_params q;
    double cap, lo, hi;
    memset(&q, 0, sizeof q);
    q.hw = s->hw;
    /* the closed forms read the mean request (afd_serving.h), the prefill
     * forms and the collocated TPOT the whole length law of a workload */
    q.prompt = x->len.prompt_mean;
    q.output = x->len.output_mean;
    q.workload = x->wl;
    q.instances = s->instances;
    q.prefill = s->prefill;
    q.decode = s->decode;
    q.prefill_bmax = (unsigned)x->a.prefill_bmax;
    q.decode_bmax = s->decode_bmax;
    q.kv_time = s->kv_time_per_token * q.prompt;
    q.quantile = 0.9;
    q.lambda = 1;
    s->goodput = s->goodput_sim = s->goodput_fit = NAN;
    s->st = s->st_sim = AFD_OK;
    s->limit = s->limit_sim = AFD_SERVING_LIMIT_NONE;
    cap = afd_serving_capacity(&q, s->colloc);
    if (x->method & METHOD_CLOSED)
        s->st = afd_serving_goodput(&q, s->colloc, ttft, tpot, x->tol, &s->goodput, &s->limit);
    s->goodput_cap = s->goodput;
    if (s->st == AFD_OK && s->decode_bmax_fit > s->decode_bmax) {
        /* does the given cap bind?  the closed-form goodput at the cap that
         * would not, against the one at the given cap */
        afd_serving_params qf = q;
        int limit;
        qf.decode_bmax = s->decode_bmax_fit;
        if (afd_serving_goodput(&qf, s->colloc, ttft, tpot, x->tol, &s->goodput_fit, &limit) !=
            AFD_OK)
            s->goodput_fit = NAN;
        if (!(x->method & METHOD_CLOSED) &&
            afd_serving_goodput(&q, s->colloc, ttft, tpot, x->tol, &s->goodput_cap, &limit) !=
                AFD_OK)
            s->goodput_cap = NAN;
    }
    if (x->method & METHOD_SIM) {
        afd_serve_params p;
        memset(&p, 0, sizeof p);
        p.policy = afd_serve_policy_find(s->colloc ? "colloc" : "disagg");
        p.hw = s->hw;
        p.config.instances = s->instances;
        p.config.prefill = s->prefill;
        p.config.decode = s->decode;
        p.config.prefill_bmax = (unsigned)x->a.prefill_bmax;
        p.config.decode_bmax = s->decode_bmax;
        p.config.kv_time_per_token = s->kv_time_per_token;
        p.workload = x->wl; /* the simulator draws the trace's own requests */
        p.prompt = (uint32_t)x->a.prompt;
        p.output = (uint32_t)x->a.output;
        p.requests = (uint64_t)x->a.requests;
        p.warmup = (uint64_t)x->a.warmup;
        p.batches = (unsigned)x->a.batches;
        p.seed = (uint64_t)x->a.seed;
        p.ttft_slo = p.tpot_slo = INFINITY;
        /* bracket: from well below the closed-form goodput up to the capacity,
         * widened while the simulator still meets both SLOs there */
        hi = cap;
        lo = s->goodput > 0 ? 0.25 * s->goodput : 1e-3 * cap;
        s->st_sim = afd_serve_goodput_widen(&p, ttft, tpot, lo, hi, AFD_SERVE_GOODPUT_WIDEN * cap,
                                            x->tol > 0.02 ? x->tol : 0.02, &s->goodput_sim,
                                            &s->limit_sim);
    }
}

/* Rows are ranked by goodput_per_device (goodput_sim_per_device with
 * --method sim) as printed, so that afdkit merge, which sorts the rows of
 * sharded parts by that printed column, rebuilds the same table: best
 * first, nan last, ties in enumeration order. */
static int by_goodput(const void *pa, const void *pb)
{
    const strategy *a = pa, *b = pb;
    int na = isnan(a->key), nb = isnan(b->key);
    if (na != nb)
        return na - nb;
    if (!na && a->key != b->key)
        return a->key > b->key ? -1 : 1;
    return (a->item > b->item) - (a->item < b->item);
}

/* A given --decode-bmax that binds: the strategy whose closed-form goodput
 * rises most, relatively, at the cap the KV memory and the TPOT SLO allow
 * (more than twice the bisection's tolerance, so that no rounding of the
 * search reads as a rise), named on stderr; nothing when none rises. */
static void warn_binding_cap(const char *cmd, const struct ctx *x, const strategy *s, size_t n)
{
    size_t k = n > 0 ? cli_cap_binds(&s[0].goodput_cap, &s[0].goodput_fit, n, sizeof *s,
                                     2 * x->tol)
                     : n;
    const strategy *w = k < n ? &s[k] : NULL;
    if (w != NULL)
        cli_warn(cmd, "--decode-bmax %lld binds: %s tp %u carries %.4g requests/s at a cap of "
                      "%u and %.4g at %u, the cap the KV memory and the TPOT SLO allow at tp %u "
                      "(the closed forms; leave --decode-bmax out for it)",
                 (long long)x->a.decode_bmax, w->name, w->tp, w->goodput_cap * 1e3,
                 w->decode_bmax, w->goodput_fit * 1e3, w->decode_bmax_fit, w->tp);
}

static int run(const cli_command *self, int argc, char **argv)
{
    const char *cmd = self->path;
    struct ctx x;
    cli_common c;
    afd_model m;
    afd_device d;
    afd_error err;
    afd_status st;
    afd_workload wl;
    afd_hw *hws = NULL;
    strategy *s = NULL;
    size_t n = 0, cap_n, i, k;
    double ttft, tpot, ms_per_s = 1e3, per_s;
    cli_table *t;
    cli_progress prog;
    int rc, have_wl = 0, slo_out = 0;
    unsigned nt;
    long done = 0;

    memset(&x, 0, sizeof x);
    cli_serve_init(&x.a, cmd);
    /* serve's --requests 10000 after --warmup 1000: with 3000 after 300 the
     * search ends ~5% above the rate the simulator sustains near capacity */
    x.a.batches = 10;
    x.method = METHOD_BOTH;
    x.relax = 1;
    x.tol = 0.01;
    cli_common_init(&c);
    rc = cli_parse_args(self, argc, argv, &c, own, &x);
    if (rc != CLI_CONTINUE)
        goto out;
    rc = 0;
#define FAIL(expr)                                                                             \
    do {                                                                                       \
        rc = (expr);                                                                           \
        goto out;                                                                              \
    } while (0)
    if (x.tps.n == 0 && (rc = cli_list_parse(cmd, "tp", "1,2,4,8", 1, 1, 1024, &x.tps)) != 0)
        goto out;
    if (x.devices == 0 || x.a.model == NULL || x.a.device == NULL || x.a.ttft_slo == NULL ||
        x.a.tpot_slo == NULL)
        FAIL(cli_usage_error(cmd, "--devices, --model, --device, --ttft-slo and --tpot-slo are "
                                  "required, with the requests (--lengths P,G, --trace FILE or "
                                  "--geometric --mu-p MP --mu-d MD)"));
    if ((rc = cli_time(cmd, "ttft-slo", x.a.ttft_slo, "ms", &ttft)) != 0 ||
        (rc = cli_time(cmd, "tpot-slo", x.a.tpot_slo, "ms", &tpot)) != 0)
        goto out;
    if (!(ttft > 0 && tpot > 0))
        FAIL(cli_usage_error(cmd, "SLOs must be > 0"));
    ttft *= x.relax;
    tpot *= x.relax;
    if ((st = afd_model_load(x.a.model, &m, &err)) != AFD_OK ||
        (st = afd_device_load(x.a.device, &d, &err)) != AFD_OK)
        FAIL(cli_file_error(cmd, st == AFD_OK ? x.a.device : x.a.model, st, &err));
    if ((rc = cli_serve_requests(&x.a, &c, &wl, &have_wl, &x.len)) != 0)
        goto out;
    x.wl = have_wl ? &wl : NULL;
    if (x.have_price)
        d.price_per_hour = x.price;
    hws = calloc(x.tps.n, sizeof *hws);
    cap_n = 0;
    for (i = 0; i < x.tps.n; i++) {
        unsigned tp = (unsigned)x.tps.v[i];
        cap_n += (size_t)x.devices / tp * ((size_t)x.devices / tp + 1);
    }
    s = calloc(cap_n + 1, sizeof *s);
    if (hws == NULL || s == NULL)
        FAIL(cli_runtime_error(cmd, "out of memory"));
    /* enumerate: per tensor-parallel size that fits, every xm and ypzd */
    for (i = 0; i < x.tps.n; i++) {
        unsigned tp = (unsigned)x.tps.v[i], per = (unsigned)x.devices / tp, a, b, bmax, fit;
        double tokens, kvt;
        int why;
        if (per == 0)
            continue;
        if (afd_kv_capacity_tokens(&m, &d, tp, &tokens, &err) != AFD_OK) {
            cli_warn(cmd, "tp %u left out: %s", tp, err.text);
            continue;
        }
        if ((st = afd_estimate_laws(&m, &d, tp, &hws[i], &err)) != AFD_OK) {
            cli_warn(cmd, "tp %u left out: %s", tp, err.text);
            continue;
        }
        cli_note_fit(cmd, NULL, &hws[i], CLI_LAWS_SERVING);
        /* the decode batch cap: the KV memory and the TPOT SLO, or the one given */
        cli_serve_decode_cap(&x.a, &hws[i], tokens, &x.len, tpot, &bmax, &fit, &why);
        if (bmax == 0) {
            slo_out |= why == AFD_DECODE_BMAX_TPOT;
            if (why == AFD_DECODE_BMAX_TPOT)
                cli_warn(cmd, "tp %u left out: one sequence's decode step alone exceeds the "
                              "TPOT SLO",
                         tp);
            else
                cli_warn(cmd, "tp %u left out: the KV cache holds %.15g tokens, less than one "
                              "mean request's %.15g",
                         tp, tokens, x.len.prompt_mean + x.len.output_mean);
            continue;
        }
        /* the KV cache of a prompt token crosses tp links of net_gbps (ms) */
        kvt = afd_kv_bytes_per_token(&m, tp) / (tp * d.net_gbps * 1e9) * 1e3;
        for (a = 1; a <= per; a++) {
            strategy *z = &s[n++];
            snprintf(z->name, sizeof z->name, "%um", a);
            z->colloc = 1;
            z->tp = tp;
            z->instances = a;
            z->hw = &hws[i];
            z->decode_bmax = bmax;
            z->decode_bmax_fit = fit;
        }
        for (a = 1; a < per; a++)
            for (b = 1; a + b <= per; b++) {
                strategy *z = &s[n++];
                snprintf(z->name, sizeof z->name, "%up%ud", a, b);
                z->tp = tp;
                z->prefill = a;
                z->decode = b;
                z->hw = &hws[i];
                z->decode_bmax = bmax;
                z->decode_bmax_fit = fit;
                z->kv_time_per_token = kvt;
            }
    }
    /* a size left out for the TPOT SLO has goodput 0 */
    if (n == 0 && slo_out)
        FAIL(cli_infeasible(cmd, "no strategy has a positive goodput: none meets the TTFT "
                                 "SLO %g ms and the TPOT SLO %g ms at any rate",
                            ttft, tpot));
    if (n == 0)
        FAIL(cli_runtime_error(cmd, "no feasible strategy: %s does not fit on %lld x %s at "
                                    "any tensor-parallel size tried",
                               m.name, (long long)x.devices, d.name));
    /* --shard K/N: keep this part's strategies, in enumeration order */
    for (k = 0; k < n; k++)
        s[k].item = k;
    for (k = i = 0; k < n; k++)
        if (cli_shard_take(&c.out, k))
            s[i++] = s[k];
    n = i;
    cli_progress_init(&prog, cmd, "evaluated", c.out.quiet);
    nt = afd_mc_threads(x.threads);
    (void)nt; /* unused without OpenMP */
    CLI_OMP("omp parallel for schedule(dynamic, 1) num_threads(nt)")
    for (k = 0; k < n; k++) {
        eval(&s[k], &x, ttft, tpot);
        CLI_OMP("omp critical")
        {
            done++;
            cli_progress_update(&prog, (double)done, (double)n, "strategies");
        }
    }
    cli_progress_end(&prog);
    for (k = 0; k < n; k++)
        if (s[k].st != AFD_OK || s[k].st_sim != AFD_OK)
            FAIL(cli_runtime_error(cmd, "%s tp %u: %s", s[k].name, s[k].tp,
                                   afd_strerror(s[k].st != AFD_OK ? s[k].st : s[k].st_sim)));
    warn_binding_cap(cmd, &x, s, n);
    /* No strategy with a positive goodput is no answer (a part of a sharded
     * run is judged by merge with the others). */
    for (k = 0; k < n && !(s[k].goodput > 0) && !(s[k].goodput_sim > 0); k++)
        ;
    if (k == n && c.out.shard_n == 0)
        FAIL(cli_infeasible(cmd, "no strategy has a positive goodput: none meets the TTFT "
                                 "SLO %g ms and the TPOT SLO %g ms at any rate",
                            ttft, tpot));
    per_s = ms_per_s; /* goodputs are per ms: per second is 1000 times that */
    for (k = 0; k < n; k++) {
        strategy *z = &s[k];
        double dev = (double)(z->colloc ? z->instances : z->prefill + z->decode) * z->tp;
        char buf[64];
        cli_format_real(buf, sizeof buf,
                        (x.method & METHOD_SIM ? z->goodput_sim : z->goodput) * per_s / dev,
                        c.out.precision);
        z->key = strtod(buf, NULL);
    }
    /* A part of a sharded run keeps enumeration order: merge ranks the rows. */
    if (c.out.shard_n == 0)
        qsort(s, n, sizeof *s, by_goodput);
    /* a ranking by the closed forms alone cannot order what lies within
     * their stated error */
    if (x.method == METHOD_CLOSED && c.out.shard_n == 0 && n >= 2 &&
        afd_closed_too_close(s[0].key, s[1].key, AFD_SERVING_CLOSED_ERROR))
        cli_warn(cmd,
                 "the top two strategies (%s tp %u, %s tp %u) are within %g%% of each other, "
                 "the closed forms' stated error (docs/reproduction.md): --method both checks "
                 "the order",
                 s[0].name, s[0].tp, s[1].name, s[1].tp, 100 * AFD_SERVING_CLOSED_ERROR);
    t = cli_table_new(&c.out);
    if (t == NULL)
        FAIL(cli_runtime_error(cmd, "out of memory"));
    cli_table_provenance(t);
    cli_table_shard_order(t, x.method & METHOD_SIM ? "goodput_sim_per_device"
                                                    : "goodput_per_device", 1);
    /* rates, rates per device and requests per dollar: each column's unit */
    cli_table_unit(t, "requests/s (goodput, goodput_sim), requests/s per device "
                      "(goodput_per_device, goodput_sim_per_device), requests/dollar "
                      "(goodput_per_dollar, goodput_sim_per_dollar)");
    cli_table_meta(t, "model", "%s", m.name);
    cli_table_meta(t, "device", "%s", d.name);
    if (x.wl == NULL)
        cli_table_meta(t, "lengths", "%lld,%lld", (long long)x.a.prompt, (long long)x.a.output);
    else
        cli_table_meta(t, "mean_lengths", "%.6g,%.6g", x.len.prompt_mean, x.len.output_mean);
    cli_table_meta(t, "price_per_hour", "%.10g per device", d.price_per_hour);
    cli_table_begin(t, "strategy", "arch", "tp", "instances", "prefill", "decode", "goodput",
                    "goodput_per_device", "goodput_sim", "goodput_sim_per_device", "limit",
                    "goodput_per_dollar", "goodput_sim_per_dollar", "gap", "decode_bmax",
                    "limit_sim");
    for (k = 0; k < n; k++) {
        const strategy *z = &s[k];
        unsigned inst = z->colloc ? z->instances : z->prefill + z->decode;
        double dev = (double)inst * z->tp;
        cli_table_str(t, z->name);
        cli_table_str(t, z->colloc ? "colloc" : "disagg");
        cli_table_uint(t, z->tp);
        cli_table_uint(t, inst);
        cli_table_uint(t, z->colloc ? z->instances : z->prefill);
        cli_table_uint(t, z->colloc ? z->instances : z->decode);
        cli_table_real(t, z->goodput * per_s);
        cli_table_real(t, z->goodput * per_s / dev);
        cli_table_real(t, z->goodput_sim * per_s);
        cli_table_real(t, z->goodput_sim * per_s / dev);
        cli_table_str(t, x.method & METHOD_CLOSED ? afd_serving_limit_name(z->limit) : "nan");
        /* requests per dollar: every device of the strategy paid while provisioned */
        cli_table_real(t, afd_per_dollar(z->goodput * per_s, dev * d.price_per_hour));
        cli_table_real(t, afd_per_dollar(z->goodput_sim * per_s, dev * d.price_per_hour));
        cli_table_real(t, afd_closed_gap(z->goodput, z->goodput_sim));
        cli_table_uint(t, z->decode_bmax);
        cli_table_str(t, x.method & METHOD_SIM ? afd_serve_limit_name(z->limit_sim) : "nan");
        cli_table_end_row(t);
    }
    rc = cli_table_finish(t, cmd);
out:
    if (have_wl)
        afd_workload_free(&wl);
    free(hws);
    free(s);
    cli_list_free(&x.tps);
    return rc;
#undef FAIL
}

const cli_command cli_cmd_strategies = {
    .name = "strategies",
    .path = "strategies",
    .summary = "rank collocated and disaggregated serving strategies by goodput per device",
    .usage = "strategies --devices N --model M --device D (--lengths P,G | --trace FILE) "
             "--ttft-slo T --tpot-slo T [--tp LIST] [--method closed|sim|both]",
    .description =
        "BestServe's optimizer (Section 3.5), corrected.  For N devices, every collocated\n"
        "strategy xm (x instances) and disaggregated ypzd (y prefill, z decode instances),\n"
        "each instance of tp devices (--tp; a size whose weights do not fit, whose KV\n"
        "cache cannot hold one mean request, or where one sequence's decode step exceeds\n"
        "the TPOT SLO, is left out with a warning).  Latency laws from the estimator for\n"
        "the model and device at each tp.  The requests: --lengths P,G, a trace (--trace)\n"
        "or the geometric model; the closed forms read the whole length law in the\n"
        "prefill TTFT and the collocated TPOT (its prefill stalls and its P90 over the\n"
        "outputs) and the mean lengths in the decode step, the simulator draws the\n"
        "trace's rows.  Prints one row per strategy, best first:\n"
        "  strategy arch tp instances prefill decode goodput goodput_per_device\n"
        "  goodput_sim goodput_sim_per_device limit goodput_per_dollar\n"
        "  goodput_sim_per_dollar gap decode_bmax limit_sim\n"
        "\n"
        "  goodput       the largest Poisson rate (requests/s) at which the P90 TTFT and\n"
        "                the P90 TPOT meet the SLOs (times --slo-relax), by bisection\n"
        "                (Algorithm 8, its loop test the right way round) on the closed\n"
        "                forms (libanalytic/serving/afd_serving.h)\n"
        "  goodput_sim   the same on the simulator (afdkit serve; --requests, default 10000,\n"
        "                after --warmup 1000; the same seed at every rate), each pool\n"
        "                one queue that all its instances serve (afdkit serve --router\n"
        "                global, the bound the closed forms assume; serve's default,\n"
        "                round-robin, queues per instance)\n"
        "  *_per_device  divided by tp x instances\n"
        "  limit         what fails just above the closed-form goodput: ttft, tpot (an\n"
        "                SLO), prefill or decode (a stage cannot keep up)\n"
        "  *_per_dollar  requests per dollar, 3600 goodput / (tp x instances x the\n"
        "                device's price_per_hour); nan when the device file has no price\n"
        "  gap           goodput / goodput_sim - 1, the closed form's error on this row\n"
        "                (nan unless --method both and goodput_sim > 0)\n"
        "  decode_bmax   the decode batch cap: by default the largest the KV memory holds\n"
        "                (whole mean requests) whose decode step meets the TPOT SLO\n"
        "                (afd_decode_bmax, as plan); --decode-bmax B fixes it, memory\n"
        "                permitting, with a warning when a strategy's closed-form goodput\n"
        "                is higher at the default cap\n"
        "  limit_sim     what fails just above the simulated goodput: ttft, tpot (the P90\n"
        "                misses its SLO), ttft=tpot (a tie: both P90s miss, or their\n"
        "                ratios to their SLOs are within 2 standard errors, so the run\n"
        "                cannot tell which binds), capacity (the run is\n"
        "                unstable), none (every rate tried meets both, up to 64 x the\n"
        "                closed-form capacity: the search starts at that capacity and\n"
        "                doubles while the simulator meets both); nan without --method\n"
        "                sim or both\n"
        "With --method closed, a warning when the top two rows are within 15% of each\n"
        "other (the closed forms' measured error, docs/reproduction.md).\n"
        "Rows are sorted by goodput_per_device (goodput_sim_per_device whenever the\n"
        "simulator runs: --method sim or both),\n"
        "as printed, best first, nan last, ties in the order strategies are enumerated\n"
        "(per tp: 1m, 2m, ..., then 1p1d, 1p2d, ..., 2p1d, ...).  --shard K/N evaluates\n"
        "every N-th strategy of that enumeration and prints them in that order; afdkit\n"
        "merge ranks the parts' rows into the table of the whole run.\n"
        "For colloc, prefill and decode both give the number of instances.  When no\n"
        "strategy has a positive goodput, the answer is infeasible (exit 1, no table).",
    .groups = st_groups,
    .run = run,
};
