/* cmd_plan.c: afdkit plan, the best configuration of each serving
 * architecture for a model on at most N devices, a workload and two SLOs.
 * The search is montecarlo/plan/ (afd_plan.h): this file parses the
 * options, calls it, and prints the table or the launch commands. */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "afd_mc.h"
#include "afd_plan.h"
#include "cli.h"
#include "serve_opts.h"

enum { OPT_GPUS = OPT_SV_LAST, OPT_RATE, OPT_METHOD, OPT_EMIT, OPT_VERIFY, OPT_CHUNKS,
       OPT_TOL, OPT_THREADS, OPT_PLOT };
enum { EMIT_NONE = 0, EMIT_AFDKIT, EMIT_VLLM, EMIT_SGLANG };
typedef afd_plan_row row;

static const cli_option plan_options[] = {
    {"gpus", 'N', "N", "devices to deploy on, at most (required)", OPT_GPUS},
    {"tp", 0, "LIST", "tensor-parallel sizes tried (default 1,2,4,8; memory permitting)",
     OPT_SV_TP},
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
    {"plot", 0, "FILE", "also write a gnuplot script with each architecture's tokens/s per user "
                        "against tokens/s per GPU and its frontier (gnuplot FILE draws FILE.svg)",
     OPT_PLOT},
    {NULL, 0, NULL, NULL, 0},
};
static const cli_group plan_group = {"Plan", plan_options};
static const cli_group *const plan_groups[] = {&plan_group, &cli_serve_model_only_group,
                                               &cli_serve_run_group, &cli_workload_group,
                                               &cli_output_group, NULL};

struct ctx {
    cli_serve_args a;
    int64_t gpus, verify;
    cli_list tps, chunks;
    const char *rate, *plot;
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
    case OPT_PLOT: x->plot = arg; return 0;
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
    printf("afdkit serve --arch %s", afd_plan_arch_name(r->arch));
    put_arg("--model");
    put_arg(x->a.model);
    put_arg("--device");
    put_arg(x->a.device);
    printf(" --tp %u", r->ts->tp);
    switch (r->arch) {
    case AFD_PLAN_COLLOC:
        printf(" --instances %u --prefill-bmax %u --router %s", r->instances, AFD_PLAN_PREFILL_BMAX,
               afd_plan_router_name(r->arch));
        break;
    case AFD_PLAN_CHUNKED:
        printf(" --instances %u --chunk %u --router %s", r->instances, r->chunk,
               afd_plan_router_name(r->arch));
        break;
    case AFD_PLAN_DISAGG:
        printf(" --prefill %u --decode %u --prefill-bmax %u --router %s --decode-router global",
               r->prefill, r->decode, AFD_PLAN_PREFILL_BMAX, afd_plan_router_name(r->arch));
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
    printf("# %s on %u device%s: %.4g requests/s %s\n", afd_plan_arch_name(r->arch), afd_plan_gpus(r),
           afd_plan_gpus(r) == 1 ? "" : "s", r->goodput * per_s,
           r->arch == AFD_PLAN_AFD ? "by the closed forms" : "at 90% attainment");
    if (!(r->goodput > 0)) {
        printf("# no configuration meets the SLOs\n");
        return;
    }
    if (r->arch == AFD_PLAN_AFD) {
        /* neither afdkit serve nor the servers' documented arguments run an
         * Attention-FFN disaggregated decode pool: the row is described */
        printf("# afd: %u prefill instance%s of tp %u (as disagg's), then %uA-%uF: %u Attention "
               "instances of %u slots each feeding %u FFN instance%s, tp %u each, cycle "
               "%.4g ms; no launch command (afdkit serve has no afd architecture)\n",
               r->prefill, r->prefill == 1 ? "" : "s", r->ts->tp, r->decode, r->ffn, r->decode,
               r->bmax, r->ffn, r->ffn == 1 ? "" : "s", r->ts->tp, r->tau);
        return;
    }
    if (x->emit == EMIT_AFDKIT) {
        emit_afdkit(x, r, argc, argv);
        return;
    }
    switch (r->arch) {
    case AFD_PLAN_COLLOC: emit_server(x, x->emit, r, NULL, "serving", r->instances, 0); break;
    case AFD_PLAN_CHUNKED:
        emit_server(x, x->emit, r, NULL, "serving", r->instances, r->chunk);
        break;
    case AFD_PLAN_DISAGG:
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

/* ---- --plot */

/* The points of one architecture, its frontier (fr) or all, as a gnuplot
 * data block $NAME_front or $NAME_all: per_gpu per_user tp decode_bmax
 * frontier, by tokens per GPU ascending (a line through the frontier). */
static void plot_block(FILE *f, const afd_plan_point *pts, size_t n, int arch, int fr)
{
    size_t i, k, *idx, m = 0;
    fprintf(f, "$%s_%s << EOD\n# per_gpu\tper_user\ttp\tdecode_bmax\tfrontier\n",
            afd_plan_arch_name(arch), fr ? "front" : "all");
    idx = malloc((n ? n : 1) * sizeof *idx);
    for (i = 0; idx != NULL && i < n; i++)
        if (pts[i].arch == arch && (!fr || pts[i].frontier)) {
            for (k = m; k > 0 && pts[idx[k - 1]].per_gpu > pts[i].per_gpu; k--)
                idx[k] = idx[k - 1];
            idx[k] = i;
            m++;
        }
    for (k = 0; k < m; k++) {
        const afd_plan_point *p = &pts[idx[k]];
        fprintf(f, "%.10g\t%.10g\t%u\t%u\t%d\n", p->per_gpu, p->per_user, p->tp, p->bmax,
                p->frontier);
    }
    fputs("EOD\n", f);
    free(idx);
}

static int write_plot(const struct ctx *x, const afd_model *m, const afd_device *d,
                      const afd_plan_point *pts, size_t n, int n_arch)
{
    const char *cmd = x->a.cmd;
    FILE *f = fopen(x->plot, "w");
    int a, first = 1;
    if (f == NULL)
        return cli_runtime_error(cmd, "--plot: cannot write '%s'", x->plot);
    fprintf(f,
            "# afdkit plan --plot: tokens/s per user against tokens/s per GPU, every\n"
            "# configuration found at each decode cap and the frontier of each\n"
            "# architecture.  gnuplot '%s' draws '%s.svg' (gnuplot -e \"out='F'\" '%s':\n"
            "# into F).\n"
            "# model=%s device=%s gpus=%lld ttft_slo=%s tpot_slo=%s method=%s\n",
            x->plot, x->plot, x->plot, m->name, d->name, (long long)x->gpus, x->a.ttft_slo,
            x->a.tpot_slo, x->closed ? "closed" : "sim");
    fprintf(f, "if (!exists('out')) out = '%s.svg'\n", x->plot);
    fputs("set terminal svg size 800,560 dynamic font 'Helvetica,12'\nset output out\n", f);
    fprintf(f, "set title '%s on at most %lld x %s, TTFT %s, TPOT %s' noenhanced\n", m->name,
            (long long)x->gpus, d->name, x->a.ttft_slo, x->a.tpot_slo);
    fputs("set xlabel 'tokens/s per GPU'\nset ylabel 'tokens/s per user'\n"
          "set key outside right top noenhanced\nset grid\nset datafile separator '\\t'\n",
          f);
    for (a = 0; a < n_arch; a++) {
        plot_block(f, pts, n, a, 1);
        plot_block(f, pts, n, a, 0);
    }
    /* explicit titles: autotitle columnhead would eat a data row */
    fputs("plot", f);
    for (a = 0; a < n_arch; a++) {
        const char *nm = afd_plan_arch_name(a);
        size_t i, seen = 0;
        for (i = 0; i < n; i++)
            seen += pts[i].arch == a;
        if (seen == 0) /* none: gnuplot would warn of an empty block */
            continue;
        fprintf(f,
                "%s $%s_front using 1:2 with linespoints linecolor %d pointtype 7 title '%s', "
                "$%s_all using 1:2 with points linecolor %d pointtype 6 notitle",
                first ? "" : ", \\\n    ", nm, a + 1, nm, nm, a + 1);
        first = 0;
    }
    fputs(first ? " NaN notitle\n" : "\n", f); /* no point at all: an empty frame */
    if (fclose(f) != 0)
        return cli_runtime_error(cmd, "--plot: write error on '%s'", x->plot);
    return 0;
}

static void print_table(const struct ctx *x, cli_common *c, const afd_model *m,
                        const afd_device *d, const afd_plan_params *pl, const row *rows, int n,
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
                   AFD_PLAN_TARGET);
    cli_table_meta(t, "price_per_hour", "%.10g per device", d->price_per_hour);
    if (pl->rate > 0)
        cli_table_meta(t, "rate", "%s", x->rate);
    for (k = 0; k < n; k++)
        if (rows[k].arch == AFD_PLAN_AFD && rows[k].ts != NULL && rows[k].bmax > 0)
            cli_table_meta(t, "afd_pool", "%uA-%uF, %u slots per Attention instance, cycle "
                           "tau_G %.10g ms (closed forms, not simulated)",
                           rows[k].decode, rows[k].ffn, rows[k].bmax, rows[k].tau);
    if (pl->rate > 0)
        cli_table_begin(t, "arch", "tp", "instances", "prefill", "decode", "gpus", "chunk",
                        "decode_bmax", "router", "goodput", "goodput_se",
                        "tokens_per_s_per_gpu", "tokens_per_s_per_user", "ttft_p90",
                        "tpot_p90", "limit", "usd_per_mtok", "attainment", "attainment_se",
                        "rate_ttft_p90", "rate_tpot_p90", "gap");
    else
        cli_table_begin(t, "arch", "tp", "instances", "prefill", "decode", "gpus", "chunk",
                        "decode_bmax", "router", "goodput", "goodput_se",
                        "tokens_per_s_per_gpu", "tokens_per_s_per_user", "ttft_p90",
                        "tpot_p90", "limit", "usd_per_mtok", "gap");
    for (k = 0; k < n; k++)
        if (rows[k].se_resolution)
            cli_note(x->a.cmd, "%s: goodput_se is the bisection's resolution, --tolerance x "
                               "goodput / (1 - --tolerance): the attainment does not spread "
                               "at the goodput (a cliff), so it has no standard error",
                     afd_plan_arch_name(rows[k].arch));
    for (k = 0; k < n; k++) {
        const row *r = &rows[k];
        unsigned gpus = afd_plan_gpus(r);
        double per_gpu, per_user, usd;
        afd_plan_row_rates(r, pl->len, 1 / per_s, d->price_per_hour, &per_gpu, &per_user, &usd);
        cli_table_str(t, afd_plan_arch_name(r->arch));
        cli_table_uint(t, r->ts != NULL ? r->ts->tp : 0);
        cli_table_uint(t, r->arch == AFD_PLAN_COLLOC || r->arch == AFD_PLAN_CHUNKED
                              ? r->instances
                              : r->prefill + r->decode + r->ffn);
        cli_table_uint(t, r->arch == AFD_PLAN_COLLOC || r->arch == AFD_PLAN_CHUNKED ? r->instances
                                                                              : r->prefill);
        /* afd: the decode pool, Attention and FFN instances */
        cli_table_uint(t, r->arch == AFD_PLAN_COLLOC || r->arch == AFD_PLAN_CHUNKED ? r->instances
                                                                              : r->decode + r->ffn);
        cli_table_uint(t, gpus);
        cli_table_uint(t, r->chunk);
        cli_table_uint(t, r->bmax);
        cli_table_str(t, afd_plan_router_name(r->arch));
        cli_table_real(t, r->goodput * per_s);
        cli_table_real(t, r->goodput_se * per_s);
        cli_table_real(t, per_gpu);
        cli_table_real(t, per_user);
        cli_table_real(t, r->ttft_p90);
        cli_table_real(t, r->tpot_p90);
        cli_table_str(t, r->limit);
        cli_table_real(t, usd);
        if (pl->rate > 0) {
            cli_table_real(t, r->attain);
            cli_table_real(t, r->attain_se);
            cli_table_real(t, r->rate_ttft_p90);
            cli_table_real(t, r->rate_tpot_p90);
        }
        /* the closed forms' error on the row, where the simulator measured it
         * (the afd row is the closed forms' alone) */
        cli_table_real(t, x->closed || r->arch == AFD_PLAN_AFD
                              ? NAN
                              : afd_closed_gap(r->closed, r->goodput));
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
    afd_status st;
    afd_taichi_lengths len;
    afd_plan_params pl;
    afd_plan_tp *ts = NULL;
    row *cand = NULL, best[AFD_PLAN_N_ARCH];
    unsigned *chunks = NULL;
    size_t n_ts = 0, n_cand = 0, n_chunks = 0, i, k;
    double per_s;
    cli_progress prog;
    int rc = 0, a, have_su = 0, n_arch;
    long done = 0;
    unsigned nt;
    void (*tp_said)(const char *, const char *, ...) CLI_PRINTF(2, 3);

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
    /* a size of the default list that cannot serve is the search pruned as
     * designed (a note, which -q silences); one the user named, a warning */
    tp_said = x.tps.n > 0 ? cli_warn : cli_note;
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
        afd_plan_tp *z = &ts[n_ts];
        z->tp = (unsigned)x.tps.v[i];
        if (z->tp > (unsigned)x.gpus)
            continue;
        if (afd_plan_tp_laws(&m, &d, (unsigned)x.tps.v[i], z, &err) != AFD_OK) {
            tp_said(cmd, "tp %u left out: %s", z->tp, err.text);
            continue;
        }
        cli_note_fit(cmd, NULL, &z->hw, CLI_LAWS_SERVING);
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
    pl.tol = x.tol;
    pl.base = &su.params;
    pl.len = &len;
    pl.ttft = su.params.ttft_slo;
    pl.tpot = su.params.tpot_slo;
    pl.moe = m.moe;
    n_arch = pl.moe ? AFD_PLAN_N_ARCH : AFD_PLAN_AFD; /* the afd row for MoE models only */
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
        int why;
        if (afd_plan_tp_bmax(&ts[i], &len, pl.tpot, &why) != AFD_OK || ts[i].bmax == 0) {
            tp_said(cmd, "tp %u left out: %s", ts[i].tp,
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
    cand = calloc(n_ts * AFD_PLAN_N_ARCH, sizeof *cand);
    if (cand == NULL)
        FAIL(cli_runtime_error(cmd, "out of memory"));
    cli_progress_init(&prog, cmd, "closed forms", c.out.quiet);
    for (i = 0; i < n_ts; i++) {
        for (k = n_chunks = 0; k < x.chunks.n; k++)
            if (x.chunks.v[k] > ts[i].bmax)
                chunks[n_chunks++] = (unsigned)x.chunks.v[k];
        st = afd_plan_closed_best(&pl, &ts[i], (unsigned)x.gpus / ts[i].tp, chunks, n_chunks,
                         &cand[i * AFD_PLAN_N_ARCH]);
        if (st != AFD_OK)
            FAIL(cli_runtime_error(cmd, "tp %u: %s", ts[i].tp, afd_strerror(st)));
        for (a = 0; a < n_arch; a++)
            if (isnan(cand[i * AFD_PLAN_N_ARCH + (size_t)a].closed))
                cli_warn(cmd, "tp %u: %s left out: its closed forms failed (%s)", ts[i].tp,
                         afd_plan_arch_name(a), afd_strerror(cand[i * AFD_PLAN_N_ARCH + (size_t)a].closed_st));
        cli_progress_update(&prog, (double)(i + 1), (double)n_ts, "tp sizes");
    }
    cli_progress_end(&prog);
    /* per architecture: its --verify best tp sizes, best first */
    {
        row *sel = calloc(n_ts * AFD_PLAN_N_ARCH, sizeof *sel);
        if (sel == NULL)
            FAIL(cli_runtime_error(cmd, "out of memory"));
        afd_plan_select(cand, n_ts, n_arch, (size_t)x.verify, sel, &n_cand);
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
            afd_plan_measure(&pl, &cand[k], 1);
            CLI_OMP("omp critical")
            {
                done++;
                cli_progress_update(&prog, (double)done, (double)n_cand, "configurations");
            }
        }
        cli_progress_end(&prog);
        for (k = 0; k < n_cand; k++)
            if (cand[k].st != AFD_OK)
                FAIL(cli_runtime_error(cmd, "%s tp %u: %s", afd_plan_arch_name(cand[k].arch),
                                       cand[k].ts->tp, afd_strerror(cand[k].st)));
    } else {
        for (k = 0; k < n_cand; k++)
            afd_plan_measure(&pl, &cand[k], 0);
    }
    /* one row per architecture: its best measured configuration */
    afd_plan_best_rows(cand, n_cand, n_arch, best);
    /* a ranking by the closed forms alone cannot order what lies within
     * their stated error */
    if (x.closed && n_arch >= 2 && best[0].ts != NULL && best[1].ts != NULL &&
        afd_closed_too_close(best[0].goodput, best[1].goodput, AFD_SERVING_CLOSED_ERROR))
        cli_warn(cmd,
                 "the top two rows (%s tp %u, %s tp %u) are within %g%% of each other, the "
                 "closed forms' stated error (docs/reproduction.md): --method sim checks the "
                 "order",
                 afd_plan_arch_name(best[0].arch), best[0].ts->tp,
                 afd_plan_arch_name(best[1].arch), best[1].ts->tp,
                 100 * AFD_SERVING_CLOSED_ERROR);
    if (x.plot != NULL) {
        afd_plan_point *pts = NULL;
        size_t n_pts = 0;
        for (k = 0; k < x.chunks.n; k++)
            chunks[k] = (unsigned)x.chunks.v[k];
        cli_progress_init(&prog, cmd, "frontier", c.out.quiet);
        cli_progress_update(&prog, 0, 1, "decode caps");
        st = afd_plan_frontier(&pl, ts, n_ts, (unsigned)x.gpus, chunks, x.chunks.n, n_arch,
                               !x.closed, 1 / per_s, &pts, &n_pts);
        cli_progress_end(&prog);
        if (st != AFD_OK)
            FAIL(cli_runtime_error(cmd, "--plot: %s", afd_strerror(st)));
        rc = write_plot(&x, &m, &d, pts, n_pts, n_arch);
        free(pts);
        if (rc != 0)
            goto done;
    }
    if (x.emit != EMIT_NONE) {
        for (a = 0; a < n_arch; a++)
            if (best[a].ts != NULL)
                emit_row(&x, &best[a], per_s, argc, argv);
        rc = fflush(stdout) == 0 ? 0 : cli_runtime_error(cmd, "write error");
    } else {
        print_table(&x, &c, &m, &d, &pl, best, n_arch, per_s, &rc);
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
             "[--emit afdkit|vllm|sglang] [--plot FILE]",
    .description =
        "For each architecture afdkit simulates (colloc, chunked, disagg, taichi; afd for\n"
        "MoE models), the configuration on at most --gpus devices with the largest\n"
        "goodput: the largest\n"
        "Poisson rate at which 90% of the requests meet both SLOs.  Per tensor-parallel\n"
        "size (--tp LIST, default 1,2,4,8; a size whose weights do not fit is left out,\n"
        "with a note from the default list, which -q silences, and a warning from --tp)\n"
        "the decode batch cap is the largest batch whose requests' KV\n"
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
        "  usd_per_mtok gap\n"
        "\n"
        "  goodput        requests/s, by bisection on the simulator's attainment (afdkit\n"
        "                 serve's attainment >= 0.9), to --tolerance\n"
        "  goodput_se     its delta-method standard error; where that is 0 or undefined\n"
        "                 (the attainment does not spread at the goodput: a cliff), the\n"
        "                 bisection's resolution, --tolerance x goodput / (1 - --tolerance),\n"
        "                 said in a note; nan for a goodput of 0\n"
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
        "  gap            closed-form goodput / simulated goodput - 1 (nan with --method\n"
        "                 closed and for afd)\n"
        "For taichi, prefill and decode are the P-heavy and D-heavy instances and chunk\n"
        "the P-heavy chunk.  afd (models with experts): prefill instances as disagg's and\n"
        "an xA-yF decode pool (decode = x + y, decode_bmax = slots B per Attention\n"
        "instance; x, y, B and the cycle tau_G in --provenance's afd_pool line), by the\n"
        "closed forms only: the pool's saturated rate x B / ((E[G] - 1) tau_G), an upper\n"
        "bound of its goodput; goodput_se and the P90s nan (docs/plan.md).  A closed\n"
        "form past its solver's limits leaves its architecture at that tp out with a\n"
        "warning; a row with none says size-limit or numeric in limit.\n"
        "--rate R adds attainment, attainment_se, rate_ttft_p90 and\n"
        "rate_tpot_p90 of each row simulated at R (nan with --method closed).\n"
        "--method closed prints the closed forms'\n"
        "goodput instead (goodput_se nan; P90s for colloc and disagg only), and warns\n"
        "when its top two rows are within the closed forms' stated error (15%).\n"
        "--emit afdkit prints, per row, the afdkit serve command that simulates it\n"
        "(append --lambda R/s to run it at R); --emit vllm or sglang, one server command\n"
        "per instance (docs/plan.md).  --plot FILE also writes a gnuplot script: tokens/s\n"
        "per user against tokens/s per GPU of the best configuration of each\n"
        "architecture at every tp and decode cap bmax, bmax/2, ..., 1, and each\n"
        "architecture's frontier (gnuplot FILE draws FILE.svg).\n"
        "Progress on stderr (-q silences).  When no\n"
        "architecture sustains a rate the rows say goodput 0.",
    .groups = plan_groups,
    .run = run,
};
