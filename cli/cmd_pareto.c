/* cmd_pareto.c: afdkit pareto, goodput (or throughput) against cost over a
 * grid of devices, tensor-parallel sizes and serving architectures, and its
 * frontier (afd_pareto_front). */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "afd_serving.h"
#include "cli.h"
#include "serve_opts.h"

enum {
    OPT_DEVICES = 450, OPT_DEVLIST, OPT_MODEL, OPT_TPS, OPT_OBJECTIVE, OPT_ARCH, OPT_ALL,
    OPT_PRICE
};
enum { MAX_DEVICE_KINDS = 16 };

static const cli_option pa_options[] = {
    {"model", 'm', "NAME|FILE", "model preset or Hugging Face config.json (required)", OPT_MODEL},
    {"device", 'd', "LIST", "device presets or files, comma-separated (required)", OPT_DEVLIST},
    {"devices", 'N', "N", "at most N devices per configuration (required)", OPT_DEVICES},
    {"tp", 0, "LIST", "tensor-parallel sizes (default 1,2,4,8; memory permitting)", OPT_TPS},
    {"arch", 0, "LIST", "colloc, disagg or both (default colloc,disagg)", OPT_ARCH},
    {"objective", 0, "O", "goodput (default; needs the SLOs) or throughput", OPT_OBJECTIVE},
    {"all", 'a', NULL, "print the dominated configurations too (frontier 0)", OPT_ALL},
    {"price", 0, "LIST", "dollars per device-hour, one per --device (e.g. 2.99/h,3.5/h): "
     "instead of the device files' price_per_hour", OPT_PRICE},
    {"lengths", 0, "P,G",
     "fixed prompt and output tokens, or op1..op4 (8192,512 2048,64 1024,64 256,2048)",
     OPT_SV_LENGTHS},
    {"ttft-slo", 0, "T", "time-to-first-token SLO (P90), e.g. 1500ms", OPT_SV_TTFT},
    {"tpot-slo", 0, "T", "time-per-output-token SLO (P90), e.g. 70ms", OPT_SV_TPOT},
    {"prefill-bmax", 0, "B", "requests per prefill batch (default 4)", OPT_SV_PBMAX},
    {"decode-bmax", 0, "B",
     "sequences decoded together, memory permitting (default: what the KV memory and the "
     "TPOT SLO allow at each device and tp)",
     OPT_SV_DBMAX},
    {NULL, 0, NULL, NULL, 0},
};
static const cli_group pa_group = {"Options", pa_options};
static const cli_group *const pa_groups[] = {&pa_group, &cli_workload_group, &cli_output_group,
                                             NULL};

struct ctx {
    cli_serve_args a;
    int64_t devices;
    cli_list tps;
    const char *devlist, *model;
    int throughput, colloc, disagg, all;
    double price[MAX_DEVICE_KINDS];
    size_t nprice;
    afd_taichi_lengths len; /* the requests' mean lengths and their law */
    const afd_workload *wl; /* --trace or --geometric, NULL with --lengths */
};

static int own(void *vctx, const cli_option *opt, const char *arg)
{
    struct ctx *x = vctx;
    const char *cmd = x->a.cmd;
    if (opt == NULL)
        return cli_usage_error(cmd, "unexpected argument '%s'", arg);
    switch (opt->id) {
    case OPT_DEVICES: return cli_integer(cmd, opt->name, arg, 1, 1024, &x->devices);
    case OPT_DEVLIST: x->devlist = arg; return 0;
    case OPT_MODEL: x->model = arg; return 0;
    case OPT_ALL: x->all = 1; return 0;
    case OPT_PRICE: {
        char item[256];
        const char *s = arg;
        x->nprice = 0;
        for (;;) {
            size_t len = strcspn(s, ",");
            int rc;
            if (x->nprice == MAX_DEVICE_KINDS || len >= sizeof item)
                return cli_usage_error(cmd, "--price: at most %d prices, one per --device",
                                       MAX_DEVICE_KINDS);
            memcpy(item, s, len);
            item[len] = '\0';
            if ((rc = cli_price(cmd, opt->name, item, &x->price[x->nprice++])) != 0)
                return rc;
            if (s[len] == '\0')
                return 0;
            s += len + 1;
        }
    }
    case OPT_TPS:
        cli_list_free(&x->tps);
        return cli_list_parse(cmd, opt->name, arg, 1, 1, 1024, &x->tps);
    case OPT_OBJECTIVE: {
        static const char *const names[] = {"goodput", "throughput", NULL};
        return cli_choice(cmd, opt->name, "objective", arg, names, &x->throughput);
    }
    case OPT_ARCH:
        x->colloc = strstr(arg, "colloc") != NULL;
        x->disagg = strstr(arg, "disagg") != NULL;
        if (strcmp(arg, "colloc") != 0 && strcmp(arg, "disagg") != 0 &&
            strcmp(arg, "colloc,disagg") != 0 && strcmp(arg, "disagg,colloc") != 0)
            return cli_usage_error(cmd, "--arch must be colloc, disagg or colloc,disagg: '%s'",
                                   arg);
        return 0;
    }
    return cli_serve_option(&x->a, opt, arg);
}

typedef struct point {
    char device[64], name[32];
    int colloc;
    unsigned tp, n; /* devices in use */
    unsigned bmax, fit; /* the decode batch cap, and the one memory and the SLO allow */
    double price, value;
    double value_fit; /* at fit when a given cap is below it (NaN otherwise) */
    int front;
} point;

static int by_cost(const void *pa, const void *pb)
{
    const point *a = pa, *b = pb;
    if (a->price != b->price)
        return a->price < b->price ? -1 : 1;
    if (a->value != b->value)
        return a->value > b->value ? -1 : 1;
    if (strcmp(a->device, b->device) != 0)
        return strcmp(a->device, b->device);
    if (a->tp != b->tp)
        return a->tp < b->tp ? -1 : 1;
    return strcmp(a->name, b->name);
}

/* The closed-form parameters of a strategy of a prefill (colloc: a
 * instances) and b decode instances. */
static void strategy(const struct ctx *x, const afd_hw *hw, int colloc, unsigned a, unsigned b,
                     unsigned bmax, double kv_time, afd_serving_params *q)
{
    memset(q, 0, sizeof *q);
    q->hw = hw;
    /* the closed forms read the mean request (afd_serving.h), the prefill
     * forms and the collocated TPOT the whole length law of a workload, as
     * in afdkit strategies */
    q->prompt = x->len.prompt_mean;
    q->output = x->len.output_mean;
    q->workload = x->wl;
    q->instances = colloc ? a : 0;
    q->prefill = colloc ? 0 : a;
    q->decode = colloc ? 0 : b;
    q->prefill_bmax = (unsigned)x->a.prefill_bmax;
    q->decode_bmax = bmax;
    q->kv_time = kv_time;
    q->quantile = 0.9;
    q->lambda = 1;
}

/* The closed-form goodputs of every size at one decode batch cap:
 * collocated, and each stage of the disaggregated system alone (one search
 * per prefill size and one for the decode stage, not one per split). */
typedef struct sizes {
    double *colloc_g, *prefill_g, decode_g; /* requests per ms */
} sizes;

static afd_status size_goodputs(const struct ctx *x, const afd_hw *hw, unsigned bmax,
                                double kv_time, double ttft, double tpot, unsigned per, sizes *z)
{
    afd_serving_params q;
    double *g1 = realloc(z->colloc_g, per * sizeof *z->colloc_g);
    double *g2;
    afd_status st = AFD_OK;
    if (g1 == NULL)
        return AFD_ENOMEM;
    z->colloc_g = g1;
    if ((g2 = realloc(z->prefill_g, per * sizeof *z->prefill_g)) == NULL)
        return AFD_ENOMEM;
    z->prefill_g = g2;
    z->decode_g = NAN;
    strategy(x, hw, 0, 1, 1, bmax, kv_time, &q);
    if (x->colloc)
        st = afd_serving_goodput_colloc_sizes(&q, ttft, tpot, 0.01, per, z->colloc_g);
    if (st == AFD_OK && x->disagg && per >= 2)
        st = afd_serving_goodput_stages(&q, ttft, tpot, 0.01, per - 1, z->prefill_g,
                                        &z->decode_g);
    return st;
}

/* The closed-form capacity of one strategy, or its goodput from those of
 * every size (size_goodputs), requests/s; NaN for no capacity. */
static double evaluate(const struct ctx *x, const afd_hw *hw, const point *p, unsigned a,
                       unsigned b, unsigned bmax, double kv_time, const sizes *z)
{
    afd_serving_params q;
    double g;
    strategy(x, hw, p->colloc, a, b, bmax, kv_time, &q);
    if (x->throughput)
        g = afd_serving_capacity(&q, p->colloc);
    else
        g = p->colloc ? z->colloc_g[a - 1]
                      : afd_serving_goodput_split(z->prefill_g, z->decode_g, a, b);
    return g * 1e3; /* the laws are in ms */
}

/* 1 when a and b are collocated instances of one device and tp: xm is one
 * instance repeated x times, and how many to buy is a question of the
 * goodput needed, not of ranking, so the warning compares different
 * instances (their goodput per dollar still differs a little with x: the
 * shared queue shortens the prefill runs as x grows). */
static int same_instance(const point *a, const point *b)
{
    return a->colloc && b->colloc && a->tp == b->tp && strcmp(a->device, b->device) == 0;
}

/* The closed forms alone rank the configurations: when the two with the
 * most goodput per dollar (not one collocated instance repeated) are within
 * the closed forms' stated error of each other, say that their order is not
 * known. */
static void warn_close_per_dollar(const char *cmd, const point *pts, size_t n)
{
    size_t k, a = n, b = n;
    for (k = 0; k < n; k++)
        if (pts[k].value > 0 &&
            (a == n || pts[k].value / pts[k].price > pts[a].value / pts[a].price))
            a = k;
    for (k = 0; a < n && k < n; k++)
        if (pts[k].value > 0 && k != a && !same_instance(&pts[k], &pts[a]) &&
            (b == n || pts[k].value / pts[k].price > pts[b].value / pts[b].price))
            b = k;
    if (b < n && afd_closed_too_close(pts[a].value / pts[a].price, pts[b].value / pts[b].price,
                                      AFD_SERVING_CLOSED_ERROR))
        cli_warn(cmd,
                 "the two configurations with the most goodput per dollar (%s %s tp %u, %s %s "
                 "tp %u) are within %g%% of each other, the closed forms' stated error "
                 "(docs/reproduction.md): strategies --method both checks the order",
                 pts[a].device, pts[a].name, pts[a].tp, pts[b].device, pts[b].name, pts[b].tp,
                 100 * AFD_SERVING_CLOSED_ERROR);
}

/* A given --decode-bmax that binds: the configuration whose value rises
 * most, relatively, at the cap the KV memory and the TPOT SLO allow (more
 * than twice the searches' tolerance of 0.01), named on stderr; nothing
 * when none rises. */
static void warn_binding_cap(const char *cmd, const struct ctx *x, const point *pts, size_t n)
{
    size_t k = n > 0 ? cli_cap_binds(&pts[0].value, &pts[0].value_fit, n, sizeof *pts, 0.02) : n;
    const point *w = k < n ? &pts[k] : NULL;
    if (w != NULL)
        cli_warn(cmd, "--decode-bmax %lld binds: %s %s tp %u carries %.4g requests/s at a cap "
                      "of %u and %.4g at %u, the cap the KV memory and the TPOT SLO allow there "
                      "(leave --decode-bmax out for it)",
                 (long long)x->a.decode_bmax, w->device, w->name, w->tp, w->value, w->bmax,
                 w->value_fit, w->fit);
}

static int run(const cli_command *self, int argc, char **argv)
{
    const char *cmd = self->path;
    struct ctx x;
    cli_common c;
    afd_model m;
    afd_error err;
    afd_status st;
    afd_hw hw;
    point *pts = NULL;
    size_t n = 0, cap = 0, k, nd = 0, i;
    char names[MAX_DEVICE_KINDS][256];
    double ttft = NAN, tpot = INFINITY, *cost = NULL, *val = NULL;
    sizes at = {NULL, NULL, NAN}, at_fit = {NULL, NULL, NAN};
    afd_workload wl;
    int *front = NULL, rc, have_wl = 0, slo_out = 0;
    cli_table *t;
    cli_progress prog;
    double done = 0;

    memset(&x, 0, sizeof x);
    memset(&prog, 0, sizeof prog);
    cli_serve_init(&x.a, cmd);
    x.colloc = x.disagg = 1;
    cli_common_init(&c);
    rc = cli_parse_args(self, argc, argv, &c, own, &x);
    if (rc != CLI_CONTINUE)
        goto out;
    if (x.tps.n == 0 && (rc = cli_list_parse(cmd, "tp", "1,2,4,8", 1, 1, 1024, &x.tps)) != 0)
        goto out;
    if (x.devices == 0 || x.model == NULL || x.devlist == NULL ||
        (!x.throughput && (x.a.ttft_slo == NULL || x.a.tpot_slo == NULL))) {
        rc = cli_usage_error(cmd, "--devices, --model and --device are required, with the "
                                  "requests (--lengths P,G, --trace FILE or --geometric --mu-p "
                                  "MP --mu-d MD), and --ttft-slo and --tpot-slo for --objective "
                                  "goodput");
        goto out;
    }
    if (!x.throughput &&
        ((rc = cli_time(cmd, "ttft-slo", x.a.ttft_slo, "ms", &ttft)) != 0 ||
         (rc = cli_time(cmd, "tpot-slo", x.a.tpot_slo, "ms", &tpot)) != 0))
        goto out;
    if (!x.throughput && !(ttft > 0 && tpot > 0)) {
        rc = cli_usage_error(cmd, "SLOs must be > 0");
        goto out;
    }
    if ((st = afd_model_load(x.model, &m, &err)) != AFD_OK) {
        rc = cli_file_error(cmd, x.model, st, &err);
        goto out;
    }
    if ((rc = cli_serve_requests(&x.a, &c, &wl, &have_wl, &x.len)) != 0)
        goto out;
    x.wl = have_wl ? &wl : NULL;
    cli_progress_init(&prog, cmd, "evaluated", c.out.quiet);
    /* the device list */
    {
        const char *s = x.devlist;
        while (*s != '\0') {
            size_t len = strcspn(s, ",");
            if (len == 0 || len >= sizeof names[0] || nd == MAX_DEVICE_KINDS) {
                rc = cli_usage_error(cmd, "--device: a list of at most %d names: '%s'",
                                     MAX_DEVICE_KINDS, x.devlist);
                goto out;
            }
            memcpy(names[nd], s, len);
            names[nd++][len] = '\0';
            s += len + (s[len] == ',');
        }
    }
    if (x.nprice > 0 && x.nprice != nd) {
        rc = cli_usage_error(cmd, "--price: %zu prices for %zu devices: give one per --device",
                             x.nprice, nd);
        goto out;
    }
    for (i = 0; i < nd; i++) {
        afd_device d;
        if ((st = afd_device_load(names[i], &d, &err)) != AFD_OK) {
            rc = cli_file_error(cmd, names[i], st, &err);
            goto out;
        }
        if (x.nprice > 0)
            d.price_per_hour = x.price[i];
        if (isnan(d.price_per_hour)) {
            cli_warn(cmd, "%s left out: its device file has no price_per_hour (give --price)", d.name);
            continue;
        }
        for (k = 0; k < x.tps.n; k++) {
            unsigned tp = (unsigned)x.tps.v[k], per = (unsigned)x.devices / tp, a, b;
            double tokens, kv_time;
            unsigned bmax, fit;
            int why;
            if (per == 0)
                continue;
            if (afd_kv_capacity_tokens(&m, &d, tp, &tokens, &err) != AFD_OK ||
                afd_estimate_laws(&m, &d, tp, &hw, &err) != AFD_OK) {
                cli_warn(cmd, "%s tp %u left out: %s", d.name, tp, err.text);
                continue;
            }
            cli_note_fit(cmd, NULL, &hw, CLI_LAWS_SERVING);
            /* the decode batch cap: the KV memory and the TPOT SLO, or the one given */
            cli_serve_decode_cap(&x.a, &hw, tokens, &x.len, tpot, &bmax, &fit, &why);
            if (bmax == 0) {
                slo_out |= why == AFD_DECODE_BMAX_TPOT;
                cli_warn(cmd, "%s tp %u left out: %s", d.name, tp,
                         why == AFD_DECODE_BMAX_TPOT
                             ? "one sequence's decode step alone exceeds the TPOT SLO"
                             : "the KV cache cannot hold one mean request");
                continue;
            }
            /* the KV cache of the mean prompt crosses tp links of net_gbps (ms) */
            kv_time = x.len.prompt_mean * afd_kv_bytes_per_token(&m, tp) /
                      (tp * d.net_gbps * 1e9) * 1e3;
            if (!x.throughput &&
                ((st = size_goodputs(&x, &hw, bmax, kv_time, ttft, tpot, per, &at)) != AFD_OK ||
                 (fit > bmax &&
                  (st = size_goodputs(&x, &hw, fit, kv_time, ttft, tpot, per, &at_fit)) !=
                      AFD_OK))) {
                rc = cli_runtime_error(cmd, "%s tp %u: %s", d.name, tp, afd_strerror(st));
                goto out;
            }
            for (a = 1; a <= per; a++)
                for (b = 0; a + b <= per; b++) {
                    point *p;
                    if ((b == 0 && !x.colloc) || (b > 0 && !x.disagg))
                        continue;
                    if (n == cap) {
                        point *np = realloc(pts, (cap = cap ? 2 * cap : 64) * sizeof *pts);
                        if (np == NULL) {
                            rc = cli_runtime_error(cmd, "out of memory");
                            goto out;
                        }
                        pts = np;
                    }
                    p = &pts[n];
                    memset(p, 0, sizeof *p);
                    snprintf(p->device, sizeof p->device, "%s", d.name);
                    p->colloc = b == 0;
                    if (b == 0)
                        snprintf(p->name, sizeof p->name, "%um", a);
                    else
                        snprintf(p->name, sizeof p->name, "%up%ud", a, b);
                    p->tp = tp;
                    p->n = tp * (a + b);
                    p->price = p->n * d.price_per_hour;
                    p->bmax = bmax;
                    p->fit = fit;
                    p->value = evaluate(&x, &hw, p, a, b, bmax, kv_time, &at);
                    p->value_fit = fit > bmax ? evaluate(&x, &hw, p, a, b, fit, kv_time, &at_fit)
                                              : NAN;
                    cli_progress_update(&prog, ++done, 0, "configurations");
                    if (isnan(p->value)) {
                        rc = cli_runtime_error(cmd, "%s %s tp %u: no capacity", p->device,
                                               p->name, p->tp);
                        goto out;
                    }
                    n++;
                }
        }
    }
    cli_progress_end(&prog);
    warn_binding_cap(cmd, &x, pts, n);
    if (n == 0 && slo_out) {
        /* a size left out for the TPOT SLO has goodput 0 */
        rc = cli_infeasible(cmd, "no configuration has a positive goodput: none meets the SLOs "
                                 "at any rate");
        goto out;
    }
    if (n == 0) {
        rc = cli_infeasible(cmd, "no configuration: no priced device holds %s at the sizes "
                                 "tried",
                            m.name);
        goto out;
    }
    cost = malloc(n * sizeof *cost);
    val = malloc(n * sizeof *val);
    front = malloc(n * sizeof *front);
    if (cost == NULL || val == NULL || front == NULL) {
        rc = cli_runtime_error(cmd, "out of memory");
        goto out;
    }
    for (k = 0; k < n; k++) {
        cost[k] = pts[k].price;
        val[k] = pts[k].value;
    }
    if (afd_pareto_front(cost, val, n, front) != AFD_OK) {
        rc = cli_runtime_error(cmd, "out of memory");
        goto out;
    }
    /* A configuration of value 0 serves nothing: never on the frontier, and
     * none with a positive value is no answer at all. */
    for (k = 0; k < n; k++)
        pts[k].front = front[k] && pts[k].value > 0;
    for (k = 0; k < n && !(pts[k].value > 0); k++)
        ;
    if (k == n) {
        rc = cli_infeasible(cmd, "no configuration has a positive %s: %s",
                            x.throughput ? "throughput" : "goodput",
                            x.throughput ? "no stage keeps up with any rate"
                                         : "none meets the SLOs at any rate");
        goto out;
    }
    if (!x.throughput)
        warn_close_per_dollar(cmd, pts, n);
    qsort(pts, n, sizeof *pts, by_cost);
    t = cli_table_new(&c.out);
    if (t == NULL) {
        rc = cli_runtime_error(cmd, "out of memory");
        goto out;
    }
    cli_table_provenance(t);
    /* three units in one table: each column's */
    if (x.throughput)
        cli_table_unit(t, "requests/s (throughput), dollars/h (price_per_hour), "
                          "requests/dollar (throughput_per_dollar)");
    else
        cli_table_unit(t, "requests/s (goodput), dollars/h (price_per_hour), "
                          "requests/dollar (goodput_per_dollar)");
    cli_table_meta(t, "model", "%s", m.name);
    if (!have_wl)
        cli_table_meta(t, "lengths", "%lld,%lld", (long long)x.a.prompt, (long long)x.a.output);
    else
        cli_table_meta(t, "mean_lengths", "%.6g,%.6g", x.len.prompt_mean, x.len.output_mean);
    if (!x.throughput)
        cli_table_meta(t, "slo", "P90 TTFT <= %g ms, P90 TPOT <= %g ms", ttft, tpot);
    {
        const char *v = x.throughput ? "throughput" : "goodput";
        const char *vd = x.throughput ? "throughput_per_dollar" : "goodput_per_dollar";
        cli_table_begin(t, "device", "tp", "strategy", "arch", "devices", "price_per_hour", v,
                        vd, "frontier", "decode_bmax");
    }
    for (k = 0; k < n; k++) {
        const point *p = &pts[k];
        if (!p->front && !x.all)
            continue;
        cli_table_str(t, p->device);
        cli_table_uint(t, p->tp);
        cli_table_str(t, p->name);
        cli_table_str(t, p->colloc ? "colloc" : "disagg");
        cli_table_uint(t, p->n);
        cli_table_real(t, p->price);
        cli_table_real(t, p->value);
        cli_table_real(t, afd_per_dollar(p->value, p->price));
        cli_table_int(t, p->front);
        cli_table_uint(t, p->bmax);
        cli_table_end_row(t);
    }
    rc = cli_table_finish(t, cmd);
out:
    cli_progress_end(&prog);
    if (have_wl)
        afd_workload_free(&wl);
    free(pts);
    free(at.colloc_g);
    free(at.prefill_g);
    free(at_fit.colloc_g);
    free(at_fit.prefill_g);
    free(cost);
    free(val);
    free(front);
    cli_list_free(&x.tps);
    return rc;
}

const cli_command cli_cmd_pareto = {
    .name = "pareto",
    .path = "pareto",
    .summary = "goodput or throughput against cost over devices, tp sizes and architectures",
    .usage = "pareto --model M --device LIST --devices N (--lengths P,G | --trace FILE)\n"
             "       --ttft-slo T --tpot-slo T\n"
             "       [--tp LIST] [--arch colloc,disagg] [--objective goodput|throughput] [--all]",
    .description =
        "Every configuration of at most N devices: each device of --device (a preset or\n"
        "file with price_per_hour; one without is left out with a warning), each\n"
        "tensor-parallel size of --tp whose weights and one request fit, every\n"
        "collocated strategy xm and disaggregated ypzd as in afdkit strategies.  Its\n"
        "value is the closed-form goodput (the largest Poisson rate whose P90 TTFT and\n"
        "TPOT meet the SLOs, requests/s) or, with --objective throughput, the capacity\n"
        "(the largest rate every stage keeps up with); its cost is devices x\n"
        "price_per_hour.  Prints the frontier, the configurations that no other is both\n"
        "no dearer and no worse than (and strictly better in one), cheapest first:\n"
        "  device tp strategy arch devices price_per_hour goodput goodput_per_dollar\n"
        "  frontier decode_bmax\n"
        "(throughput and throughput_per_dollar with --objective throughput); --all adds\n"
        "the dominated configurations with frontier 0.  Rows with equal price are sorted\n"
        "by value, best first.  A configuration of value 0 serves nothing and is never\n"
        "on the frontier; when none has a positive value, the answer is infeasible\n"
        "(exit 1, no table).  The goodputs are searched once per size (a split's is the\n"
        "smaller of its prefill and decode stages'), not once per configuration.\n"
        "The requests: --lengths P,G, a trace (--trace) or the geometric model, whose\n"
        "length law the closed forms read as afdkit strategies does (the prefill TTFT\n"
        "and the collocated TPOT; the decode step its means).  decode_bmax, the decode\n"
        "batch cap, is by default the largest the KV memory holds (whole mean\n"
        "requests) whose decode step meets the TPOT SLO (afd_decode_bmax, as plan; a\n"
        "size where one sequence's step exceeds it is left out); --decode-bmax B fixes\n"
        "it, memory permitting, with a warning when a configuration's value is higher\n"
        "at the default cap.  The closed forms alone rank: a warning names the two\n"
        "configurations with the most goodput per dollar when they are within 15% of\n"
        "each other, the closed forms' stated error (strategies --method both checks).",
    .groups = pa_groups,
    .run = run,
};
