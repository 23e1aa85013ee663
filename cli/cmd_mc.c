/* cmd_mc.c: afdkit mc, Monte Carlo cross-checks of the closed forms:
 * mc barrier (Theorem 4.3, Table 1), mc slot (Lemma 4.1), mc mdc (queues). */
#include <config.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "afd_mc.h"
#include "cli.h"

enum {
    OPT_B = OPT_COMMAND, OPT_R, OPT_TRIALS, OPT_SEED, OPT_PER_SLOT, OPT_STEPS, OPT_WARMUP,
    OPT_BATCHES, OPT_LAMBDA, OPT_SERVICE, OPT_C, OPT_CUSTOMERS, OPT_SERVICE_TRACE,
    OPT_SERVICE_A, OPT_SERVICE_B, OPT_SERVICE_C, OPT_PERCENTILE, OPT_THREADS, OPT_ARRIVALS
};

struct mc_args {
    double B;
    cli_list list;
    int64_t trials, seed, steps, warmup, batches, customers;
    unsigned threads; /* --threads, 0: the default */
    int per_slot;
    double lambda, service, sa, sb, sc, percentile;
    const char *service_trace;
    int have_warmup;
    int replay; /* --arrivals trace */
};

static void args_init(struct mc_args *a)
{
    memset(a, 0, sizeof *a);
    a->B = NAN;
    a->trials = 50000;
    a->seed = 1;
    a->batches = 32;
    a->lambda = a->service = NAN;
    a->sa = a->sb = a->sc = 0;
    a->percentile = 0.9;
}

/* Options shared by the three subcommands, parsed by one callback; each
 * subcommand lists only those it accepts, so the parser refuses the rest. */
struct own_ctx {
    const char *cmd;
    struct mc_args *a;
};

/* A time (rate != 0: a rate) with an optional unit, in seconds (per second)
 * as every command without a latency file takes them: 130ms, 5/s, 300/min,
 * or a bare number; then > lo (lo_open) or >= lo. */
static int seconds_min(const char *cmd, const char *opt, const char *arg, int rate, double lo,
                       int lo_open, double *out)
{
    char ex[200];
    int rc = rate ? cli_rate(cmd, opt, arg, "s", out) : cli_time(cmd, opt, arg, "s", out);
    if (rc != 0)
        return rc;
    if (!isfinite(*out) || (lo_open ? !(*out > lo) : !(*out >= lo)))
        return cli_usage_error(cmd, "--%s must be %s %g: '%s'", opt, lo_open ? ">" : ">=", lo,
                               cli_excerpt(arg, ex, sizeof ex));
    return 0;
}

static int own(void *vctx, const cli_option *opt, const char *arg)
{
    struct own_ctx *ctx = vctx;
    struct mc_args *a = ctx->a;
    const char *cmd = ctx->cmd;
    if (opt == NULL)
        return cli_usage_error(cmd, "unexpected argument '%s'", arg);
    switch (opt->id) {
    case OPT_B: return cli_batch(cmd, arg, &a->B);
    case OPT_R:
        cli_list_free(&a->list);
        return cli_list_parse(cmd, opt->name, arg, 1, 1, AFD_BARRIER_MC_MAX_R, &a->list);
    case OPT_C:
        cli_list_free(&a->list);
        return cli_list_parse(cmd, opt->name, arg, 1, 1, AFD_QUEUE_SIM_MAX_SERVERS, &a->list);
    case OPT_TRIALS: return cli_integer(cmd, opt->name, arg, 2, INT64_MAX, &a->trials);
    case OPT_SEED: return cli_integer(cmd, opt->name, arg, 0, INT64_MAX, &a->seed);
    case OPT_PER_SLOT: a->per_slot = 1; return 0;
    case OPT_THREADS:
        return cli_threads(cmd, opt->name, arg, &a->threads);
    case OPT_STEPS: return cli_integer(cmd, opt->name, arg, 2, (int64_t)1 << 46, &a->steps);
    case OPT_WARMUP:
        a->have_warmup = 1;
        return cli_integer(cmd, opt->name, arg, 0, (int64_t)1 << 46, &a->warmup);
    case OPT_BATCHES: return cli_integer(cmd, opt->name, arg, 2, 100000, &a->batches);
    case OPT_CUSTOMERS:
        return cli_integer(cmd, opt->name, arg, 2, (int64_t)AFD_QUEUE_SIM_MAX_CUSTOMERS, &a->customers);
    case OPT_LAMBDA: return seconds_min(cmd, opt->name, arg, 1, 0, 1, &a->lambda);
    case OPT_SERVICE: return seconds_min(cmd, opt->name, arg, 0, 0, 1, &a->service);
    case OPT_SERVICE_TRACE: a->service_trace = arg; return 0;
    case OPT_ARRIVALS:
        if (strcmp(arg, "trace") == 0 || strcmp(arg, "poisson") == 0) {
            a->replay = strcmp(arg, "trace") == 0;
            return 0;
        }
        return cli_usage_error(ctx->cmd, "--arrivals: expected poisson or trace: '%.40s'", arg);
    case OPT_SERVICE_A: return seconds_min(cmd, opt->name, arg, 0, 0, 0, &a->sa);
    case OPT_SERVICE_B: return seconds_min(cmd, opt->name, arg, 0, 0, 0, &a->sb);
    case OPT_SERVICE_C: return seconds_min(cmd, opt->name, arg, 0, 0, 0, &a->sc);
    case OPT_PERCENTILE:
        if (cli_real(cmd, opt->name, arg, &a->percentile) != 0)
            return EXIT_USAGE;
        if (!(a->percentile > 0 && a->percentile < 1))
            return cli_usage_error(cmd, "--percentile must be in (0, 1): '%s'", arg);
        return 0;
    }
    return cli_usage_error(cmd, "internal error: unhandled option --%s", opt->name);
}

static int parse(const cli_command *self, int argc, char **argv, cli_common *c,
                 struct mc_args *a)
{
    struct own_ctx ctx = {self->path, a};
    cli_common_init(c);
    args_init(a);
    return cli_parse_args(self, argc, argv, c, own, &ctx);
}

/* keep: CLI_KEEP_PAIRS for the samplers that draw requests at random,
 * CLI_KEEP_ROWS where the rows are replayed in order (mc mdc). */
static int load_workload(const char *cmd, cli_common *c, int keep, afd_workload *w)
{
    return cli_workload_load(cmd, &c->wl, CLI_WL_NEEDS_LENGTHS, keep, &c->out, w);
}

/* ------------------------------------------------------------- mc barrier */

static void barrier_progress(void *ctx, uint64_t done, uint64_t total)
{
    cli_progress_update(ctx, (double)done, (double)total, "trials");
}

/* mc mdc: customers over every value of c, each run of the same length */
struct mdc_progress {
    cli_progress *prog;
    size_t k, n; /* the value of c running, of n */
};

static void mdc_progress(void *ctx, uint64_t done, uint64_t total)
{
    const struct mdc_progress *m = ctx;
    cli_progress_update(m->prog, (double)m->k * (double)total + (double)done,
                        (double)m->n * (double)total, "customers");
}

static void slot_progress(void *ctx, uint64_t done, uint64_t total)
{
    cli_progress_update(ctx, (double)done, (double)total, "steps");
}

static const cli_option barrier_options[] = {
    {"batch", 'B', "N", "slots per Attention worker (required)", OPT_B},
    {"r", 'r', "LIST", "numbers of workers under the barrier (required)", OPT_R},
    {"trials", 'T', "N", "independent trials (default 50000)", OPT_TRIALS},
    {"seed", 's', "S", "seed of the Philox streams (default 1)", OPT_SEED},
    {"per-slot", 0, NULL, "draw every slot also for the geometric model (no O(1) shortcut)",
     OPT_PER_SLOT},
    {"threads", 0, "N", CLI_THREADS_HELP, OPT_THREADS},
    {NULL, 0, NULL, NULL, 0},
};
static const cli_group barrier_group = {"Options", barrier_options};
static const cli_group *const barrier_groups[] = {&barrier_group, &cli_workload_group,
                                                  &cli_output_group, &cli_shard_group, NULL};

static int run_barrier(const cli_command *self, int argc, char **argv)
{
    const char *cmd = self->path;
    cli_common c;
    struct mc_args a;
    afd_workload w;
    afd_barrier_mc_params p = {0};
    cli_progress prog;
    afd_barrier_mc_result *res = NULL;
    unsigned *rs = NULL;
    cli_table *t;
    afd_status st;
    size_t k;
    int rc = parse(self, argc, argv, &c, &a);

    if (rc != CLI_CONTINUE)
        goto out_args;
    if (isnan(a.B) || a.list.n == 0) {
        rc = cli_usage_error(cmd, isnan(a.B) ? "-B N is required" : "--r LIST is required");
        goto out_args;
    }
    cli_shard_list(&c.out, &a.list);
    if ((rc = load_workload(cmd, &c, CLI_KEEP_PAIRS, &w)) != 0)
        goto out_args;
    rs = malloc((a.list.n + 1) * sizeof *rs); /* + 1: a shard may hold no r */
    res = malloc((a.list.n + 1) * sizeof *res);
    if (rs == NULL || res == NULL) {
        rc = cli_runtime_error(cmd, "out of memory");
        goto out;
    }
    for (k = 0; k < a.list.n; k++)
        rs[k] = (unsigned)a.list.v[k];
    p.workload = &w;
    p.B = (unsigned)a.B;
    p.r = rs;
    p.n_r = a.list.n;
    p.trials = (uint64_t)a.trials;
    p.seed = (uint64_t)a.seed;
    p.per_slot = a.per_slot;
    p.threads = a.threads;
    cli_progress_init(&prog, cmd, "trials", c.out.quiet);
    p.progress = barrier_progress;
    p.progress_ctx = &prog;
    st = a.list.n > 0 ? afd_barrier_mc(&p, res) : AFD_OK;
    cli_progress_end(&prog);
    if (st != AFD_OK) {
        rc = st == AFD_ELIMIT
                 ? cli_usage_error(cmd, "refused: the run exceeds the Monte Carlo size limits "
                                        "(trials x r x B slot draws at most 2^38, B for a "
                                        "trace or --per-slot and 1 for the geometric model, "
                                        "hours of work; trials at most 2^40); reduce --trials, "
                                        "--r or -B")
                 : cli_runtime_error(cmd, "%s", afd_strerror(st));
        goto out;
    }
    t = cli_table_new(&c.out);
    if (t == NULL) {
        rc = cli_runtime_error(cmd, "out of memory");
        goto out;
    }
    cli_table_provenance(t);
    cli_table_meta(t, "seed", "%lld", (long long)a.seed);
    cli_table_meta(t, "trials", "%lld", (long long)a.trials);
    cli_table_begin(t, "r", "overhead_mc", "overhead_se", "overhead_clt", "z", "mean_w",
                    "mean_w_se", "sd_w");
    for (k = 0; k < a.list.n; k++) {
        double clt = afd_barrier_overhead_clt(w.stats.theta, w.stats.nu, a.B, rs[k]);
        cli_table_uint(t, rs[k]);
        cli_table_real(t, res[k].overhead);
        cli_table_real(t, res[k].overhead_se);
        cli_table_real(t, clt);
        cli_table_real(t, res[k].overhead_se > 0 ? (res[k].overhead - clt) / res[k].overhead_se
                                                 : NAN);
        cli_table_real(t, res[k].mean_w);
        cli_table_real(t, res[k].mean_w_se);
        cli_table_real(t, res[k].sd_w);
        cli_table_end_row(t);
    }
    rc = cli_table_finish(t, cmd);
out:
    afd_workload_free(&w);
out_args:
    free(rs);
    free(res);
    cli_list_free(&a.list);
    return rc;
}

const cli_command cli_cmd_mc_barrier = {
    .name = "barrier",
    .path = "mc barrier",
    .summary = "barrier overhead E[W]/(B theta) - 1 by Monte Carlo, beside the CLT",
    .usage = "mc barrier WORKLOAD -B N --r LIST [--trials T] [--seed S]",
    .description =
        "Prints one row per r: r overhead_mc overhead_se overhead_clt z mean_w mean_w_se sd_w.\n"
        "\n"
        "W = max over r Attention workers of the sum of B stationary slot loads\n"
        "(Section 4.2); overhead_mc estimates E[W]/(B theta) - 1 over T trials with its\n"
        "standard error, overhead_clt is Theorem 4.3's (nu/theta) kappa_r / sqrt(B), and\n"
        "z = (overhead_mc - overhead_clt) / overhead_se.  The CLT is a large-B limit: a\n"
        "skewed slot load makes it a little low (at Table 1's setting by 0.02-0.37\n"
        "percentage points for r = 2..32, 0.5-3% of the overhead), so the simulation\n"
        "sits above it and z is positive, growing with r and with the trials (+1 to +30\n"
        "at 50,000 trials).\n"
        "Slot loads are length-biased draws (a request picked with probability\n"
        "proportional to D, a uniform age; from a trace, one uniform per slot through\n"
        "an alias table of that law); the geometric model draws each worker's\n"
        "sum in O(1) as B + NegBin(B, 1/MP) + NegBin(B, 1/MD).  Trial t reads Philox\n"
        "stream t: the output is identical for any number of threads, and all r share\n"
        "the same trials.  Needs --trace or --geometric.\n"
        "\n"
        "Memory: the trace is read once and only its distinct (P, D) pairs are kept,\n"
        "with their counts: 24 bytes per distinct pair (at most 2^25) plus a fixed\n"
        "12 MiB, however many rows the trace has.  A request drawn from the pairs has\n"
        "the law of a row drawn from the trace.",
    .groups = barrier_groups,
    .run = run_barrier,
};

/* --------------------------------------------------------------- mc slot */

static const cli_option slot_options[] = {
    {"steps", 'n', "N", "decode steps averaged (default 10^7)", OPT_STEPS},
    {"warmup", 0, "N", "steps simulated and discarded first (default steps/10)", OPT_WARMUP},
    {"batches", 0, "K", "batches for the batch-means standard errors (default 32)",
     OPT_BATCHES},
    {"seed", 's', "S", "seed of the Philox stream (default 1)", OPT_SEED},
    {NULL, 0, NULL, NULL, 0},
};
static const cli_group slot_group = {"Options", slot_options};
static const cli_group *const slot_groups[] = {&slot_group, &cli_workload_group,
                                               &cli_output_group, NULL};

static void slot_row(cli_table *t, const char *q, double mc, double se, double exact)
{
    cli_table_str(t, q);
    cli_table_real(t, mc);
    cli_table_real(t, se);
    cli_table_real(t, exact);
    cli_table_real(t, se > 0 ? (mc - exact) / se : NAN);
    cli_table_end_row(t);
}

static int run_slot(const cli_command *self, int argc, char **argv)
{
    const char *cmd = self->path;
    cli_common c;
    struct mc_args a;
    afd_workload w;
    afd_slot_mc_params p = {0};
    afd_slot_mc_result res;
    cli_progress prog;
    cli_table *t;
    afd_status st;
    int rc = parse(self, argc, argv, &c, &a);

    if (rc != CLI_CONTINUE)
        return rc;
    if (a.steps == 0)
        a.steps = 10000000;
    if (a.steps < a.batches)
        return cli_usage_error(cmd, "--steps must be at least --batches (%lld)",
                               (long long)a.batches);
    if ((rc = load_workload(cmd, &c, CLI_KEEP_PAIRS, &w)) != 0)
        return rc;
    p.workload = &w;
    p.steps = (uint64_t)a.steps;
    p.warmup = a.have_warmup ? (uint64_t)a.warmup : (uint64_t)a.steps / 10;
    p.batches = (unsigned)a.batches;
    p.seed = (uint64_t)a.seed;
    p.stream = 0;
    cli_progress_init(&prog, cmd, "steps", c.out.quiet);
    p.progress = slot_progress;
    p.progress_ctx = &prog;
    st = afd_slot_mc(&p, &res);
    cli_progress_end(&prog);
    if (st != AFD_OK) {
        afd_workload_free(&w);
        return st == AFD_EINVAL ? cli_usage_error(cmd, "parameters outside the simulator's range "
                                                       "(lengths or steps too large)")
                                : cli_runtime_error(cmd, "%s", afd_strerror(st));
    }
    if (res.batch_lifetimes < 100)
        cli_warn(cmd, "batches span only %.3g length-biased lifetimes (aim for >= 100): the "
                      "standard errors may be low; raise --steps or lower --batches",
                 res.batch_lifetimes);
    t = cli_table_new(&c.out);
    if (t == NULL) {
        afd_workload_free(&w);
        return cli_runtime_error(cmd, "out of memory");
    }
    cli_table_provenance(t);
    cli_table_meta(t, "seed", "%lld", (long long)a.seed);
    cli_table_meta(t, "steps", "%llu", (unsigned long long)res.steps);
    cli_table_meta(t, "requests", "%llu", (unsigned long long)res.requests);
    cli_table_begin(t, "quantity", "mc", "se", "exact", "z");
    slot_row(t, "theta", res.mean, res.mean_se, w.stats.theta);
    slot_row(t, "ey2", res.mean_sq, res.mean_sq_se, w.stats.ey2);
    afd_workload_free(&w);
    return cli_table_finish(t, cmd);
}

const cli_command cli_cmd_mc_slot = {
    .name = "slot",
    .path = "mc slot",
    .summary = "one decode slot as a renewal process: time averages against Lemma 4.1",
    .usage = "mc slot WORKLOAD [--steps N] [--warmup N] [--batches K] [--seed S]",
    .description =
        "Prints two rows, theta and ey2: quantity mc se exact z.\n"
        "\n"
        "Runs one slot under continuous batching: requests drawn without length bias\n"
        "(uniform trace rows, or the geometric model) occupy the slot for D steps at\n"
        "load P + age and are replaced at once.  The time averages of the load and its\n"
        "square converge to theta and E[Y^2] of Lemma 4.1 (exact: the closed form, or\n"
        "the trace estimator of eq. 15-16 for that trace); the length bias emerges from\n"
        "the renewal process.  Standard errors by batch means over K batches;\n"
        "z = (mc - exact)/se.  Needs --trace or --geometric.\n"
        "\n"
        "Memory: the trace is read once and only its distinct (P, D) pairs are kept,\n"
        "with their counts: 24 bytes per distinct pair (at most 2^25) plus a fixed\n"
        "12 MiB, however many rows the trace has.",
    .groups = slot_groups,
    .run = run_slot,
};

/* ---------------------------------------------------------------- mc mdc */

static const cli_option mdc_options[] = {
    {"lambda", 'l', "L", "Poisson arrival rate, e.g. 5/s (required; with --arrivals trace: rescale)",
     OPT_LAMBDA},
    {"arrivals", 0, "KIND", "poisson (default), or trace: replay --service-trace's timestamps",
     OPT_ARRIVALS},
    {"service", 0, "D", "deterministic service time, e.g. 130ms (or --service-trace)", OPT_SERVICE},
    {"c", 'c', "LIST", "numbers of servers (required)", OPT_C},
    {"customers", 'n', "N", "customers measured (default 10^6)", OPT_CUSTOMERS},
    {"warmup", 0, "N", "customers simulated and discarded first (default customers/10)",
     OPT_WARMUP},
    {"batches", 0, "K", "batches for the batch-means standard errors (default 32)",
     OPT_BATCHES},
    {"percentile", 'p', "P", "order of the wait quantile (default 0.9)", OPT_PERCENTILE},
    {"seed", 's', "S", "seed of the Philox stream (default 1)", OPT_SEED},
    {"service-trace", 0, "FILE", "service time a + b P + c P^2 of uniformly drawn trace rows",
     OPT_SERVICE_TRACE},
    {"service-a", 0, "A", "with --service-trace: fixed part a (default 0)", OPT_SERVICE_A},
    {"service-b", 0, "B", "with --service-trace: per prompt token b (default 0; 100us)",
     OPT_SERVICE_B},
    {"service-c", 0, "C", "with --service-trace: per squared prompt token c (default 0)",
     OPT_SERVICE_C},
    {NULL, 0, NULL, NULL, 0},
};
static const cli_group mdc_group = {"Options", mdc_options};
static const cli_option mdc_trace_options[] = {
    {"prompt-col", 0, "NAME", "prompt-token column of --service-trace", OPT_PROMPT_COL},
    {"output-col", 0, "NAME", "output-token column of --service-trace", OPT_OUTPUT_COL},
    {"time-col", 0, "NAME", "arrival-time column of --service-trace (default: recognised)",
     OPT_TIME_COL},
    {"time-unit", 0, "U", "unit of numeric times: s, ms, us (default: the column's)",
     OPT_TIME_UNIT},
    {"where", 0, "COL=VALUE", "keep only rows whose column has this value (repeatable)",
     OPT_WHERE},
    {"format", 0, "F", "format of --service-trace: csv or jsonl (default: told from the first "
                       "non-blank byte)",
     OPT_FORMAT},
    {NULL, 0, NULL, NULL, 0},
};
static const cli_group mdc_trace_group = {"Service trace columns", mdc_trace_options};
static const cli_group *const mdc_groups[] = {&mdc_group, &mdc_trace_group, &cli_output_group,
                                              &cli_shard_group, NULL};

static int run_mdc(const cli_command *self, int argc, char **argv)
{
    const char *cmd = self->path;
    cli_common c;
    struct mc_args a;
    afd_workload w;
    afd_quad_service q;
    afd_queue_sim_params law;
    afd_status st;
    cli_progress prog;
    double es = 0;
    cli_table *t = NULL;
    size_t k;
    int rc = parse(self, argc, argv, &c, &a), have_trace = 0;

    memset(&w, 0, sizeof w);
    if (rc != CLI_CONTINUE)
        goto out;
    if ((isnan(a.lambda) && !a.replay) || a.list.n == 0) {
        rc = cli_usage_error(cmd, a.list.n > 0 ? "--lambda L is required"
                                               : "--c LIST is required");
        goto out;
    }
    if (a.replay && a.service_trace == NULL) {
        rc = cli_usage_error(cmd, "--arrivals trace needs --service-trace FILE");
        goto out;
    }
    if ((a.service_trace != NULL) == !isnan(a.service)) {
        rc = cli_usage_error(cmd, "give exactly one of --service D and --service-trace FILE");
        goto out;
    }
    if (a.customers == 0)
        a.customers = 1000000;
    if (a.customers < a.batches) {
        rc = cli_usage_error(cmd, "--customers must be at least --batches (%lld)",
                             (long long)a.batches);
        goto out;
    }
    q.a = a.sa;
    q.b = a.sb;
    q.c = a.sc;
    if (a.service_trace != NULL) {
        c.wl.trace = a.service_trace;
        if ((rc = load_workload(cmd, &c, CLI_KEEP_ROWS, &w)) != 0)
            goto out;
        have_trace = 1;
        memset(&law, 0, sizeof law);
        law.trace = &w;
        law.service_fn = afd_quad_service_time;
        law.service_ctx = &q;
        st = afd_queue_sim_service_mean(&law, &es);
        if (st == AFD_ENOMEM) {
            rc = cli_runtime_error(cmd, "out of memory");
            goto out;
        }
        if (st == AFD_EINVAL) {
            rc = cli_input_error(cmd, "%s: the service time a + b P + c P^2 overflows on this "
                                      "trace (--service-a/-b/-c)",
                                 a.service_trace);
            goto out;
        }
        if (st != AFD_OK || !(es > 0)) {
            rc = cli_usage_error(cmd, "the service time a + b P + c P^2 is zero on this trace; "
                                      "give --service-a/--service-b/--service-c");
            goto out;
        }
    } else {
        es = a.service;
    }
    if (a.replay) {
        if (w.time == NULL) {
            rc = cli_input_error(cmd, "%s: --arrivals trace: the trace has no timestamp column "
                                      "(name one with --time-col)",
                                 a.service_trace);
            goto out;
        }
        if (w.arrivals.unsorted_line != 0 || !(w.arrivals.lambda > 0)) {
            rc = cli_input_error(cmd, "%s: --arrivals trace: %s", a.service_trace,
                                 w.arrivals.unsorted_line != 0
                                     ? "the times must not go backwards"
                                     : "the times span no interval");
            goto out;
        }
        if (isnan(a.lambda))
            a.lambda = w.arrivals.lambda; /* service times in seconds */
        if (!a.have_warmup)
            a.warmup = 0;
        a.customers = (int64_t)w.n_kept - a.warmup;
        if (a.customers < a.batches) {
            rc = cli_input_error(cmd, "%s: --arrivals trace: %lld rows after the warm-up, "
                                      "fewer than --batches (%lld)",
                                 a.service_trace, (long long)a.customers, (long long)a.batches);
            goto out;
        }
        cli_dispersion_warning(cmd, a.service_trace, &w,
                               "this run replays the trace's own arrivals, not Poisson ones");
    }
    for (k = 0; k < a.list.n; k++)
        if (a.lambda * es >= a.list.v[k]) {
            rc = cli_unstable_queue(cmd, "lambda*E[S]", a.list.v[k], a.lambda * es);
            goto out;
        }
    cli_shard_list(&c.out, &a.list);

    t = cli_table_new(&c.out);
    if (t == NULL) {
        rc = cli_runtime_error(cmd, "out of memory");
        goto out;
    }
    cli_table_provenance(t);
    cli_table_meta(t, "seed", "%lld", (long long)a.seed);
    cli_table_meta(t, "customers", "%lld", (long long)a.customers);
    cli_table_unit(t, "s"); /* bare numbers are seconds, suffixes convert to them */
    {
        char qname[64], qse[64], tname[64], tse[64];
        cli_percentile_name(qname, sizeof qname, "wq", a.percentile, "_mc");
        cli_percentile_name(qse, sizeof qse, "wq", a.percentile, "_se");
        cli_percentile_name(tname, sizeof tname, "ttft", a.percentile, "_mc");
        cli_percentile_name(tse, sizeof tse, "ttft", a.percentile, "_se");
        cli_table_begin(t, "c", "wq_mc", "wq_se", "p_wait_mc", "p_wait_se", qname, qse, "rho",
                        "service_mean", "ttft_mean_mc", "ttft_mean_se", tname, tse);
    }
    cli_progress_init(&prog, cmd, "simulating", c.out.quiet);
    for (k = 0; k < a.list.n; k++) {
        afd_queue_sim_params p = {0};
        afd_queue_sim_result res;
        struct mdc_progress mp;
        memset(&p, 0, sizeof p);
        p.c = (unsigned)a.list.v[k];
        p.lambda = a.lambda;
        p.service = have_trace ? 0 : a.service;
        p.trace = have_trace ? &w : NULL;
        p.service_fn = have_trace ? afd_quad_service_time : NULL;
        p.service_ctx = &q;
        p.customers = (uint64_t)a.customers;
        p.warmup = a.have_warmup ? (uint64_t)a.warmup : (uint64_t)a.customers / 10;
        p.batches = (unsigned)a.batches;
        p.quantile = a.percentile;
        p.seed = (uint64_t)a.seed;
        p.stream = 0;
        if (a.replay) {
            p.replay = 1;
            p.warmup = (uint64_t)a.warmup;
            /* times in seconds, stretched so that the rate is lambda */
            p.time_scale = w.arrivals.lambda / a.lambda;
        }
        mp.prog = &prog;
        mp.k = k;
        mp.n = a.list.n;
        p.progress = mdc_progress;
        p.progress_ctx = &mp;
        st = afd_queue_sim(&p, &res);
        if (st != AFD_OK) {
            cli_progress_end(&prog);
            rc = cli_runtime_error(cmd, "c = %u: %s", p.c, afd_strerror(st));
            goto out;
        }
        cli_table_uint(t, p.c);
        cli_table_real(t, res.wait_mean);
        cli_table_real(t, res.wait_mean_se);
        cli_table_real(t, res.p_wait);
        cli_table_real(t, res.p_wait_se);
        cli_table_real(t, res.wait_q);
        cli_table_real(t, res.wait_q_se);
        cli_table_real(t, res.rho);
        cli_table_real(t, res.service_mean);
        cli_table_real(t, res.sojourn_mean);
        cli_table_real(t, res.sojourn_mean_se);
        cli_table_real(t, res.sojourn_q);
        cli_table_real(t, res.sojourn_q_se);
        cli_table_end_row(t);
    }
    cli_progress_end(&prog);
    rc = cli_table_finish(t, cmd);
    t = NULL;
out:
    cli_table_discard(t);
    afd_workload_free(&w);
    cli_list_free(&a.list);
    return rc;
}

const cli_command cli_cmd_mc_mdc = {
    .name = "mdc",
    .path = "mc mdc",
    .summary = "FCFS M/D/c (or M/G/c from a trace) queue by simulation",
    .usage = "mc mdc --lambda L (--service D | --service-trace FILE ...) --c LIST [--customers N]",
    .description =
        "Prints one row per c: c wq_mc wq_se p_wait_mc p_wait_se wq_p90_mc wq_p90_se rho\n"
        "service_mean ttft_mean_mc ttft_mean_se ttft_p90_mc ttft_p90_se (the quantile\n"
        "columns are named after --percentile).\n"
        "\n"
        "Poisson arrivals at rate L, c servers, first come first served, by the\n"
        "Kiefer-Wolfowitz workload recursion; the first customers/10 are discarded.\n"
        "wq is the mean wait in queue, p_wait = P(wait > 0), wq_p90 the 90th percentile\n"
        "of the wait; ttft is the time in system, wait plus the customer's own service\n"
        "(the time to first token when the queue is the prefill pool); standard errors\n"
        "by batch means (the percentiles' by sectioning).\n"
        "Service is deterministic (--service D), or a + b P + c P^2 for the prompt length\n"
        "P of a uniformly drawn row of --service-trace (the prefill queue of a trace).\n"
        "--arrivals trace replays the trace instead: row n arrives at its own timestamp\n"
        "(seconds; stretched to rate L when --lambda is given) with its own service time,\n"
        "every row measured (no warm-up unless --warmup); there is no randomness, and the\n"
        "batch-means standard errors treat consecutive stretches of the trace as\n"
        "independent.  A warning says when the trace's dispersion indices are far from\n"
        "Poisson.\n"
        "rho = L E[S] / c >= 1 is an error (exit 1) naming the smallest stable c.\n"
        "Units: bare numbers are seconds (rates per second), as the table's '## unit=s'\n"
        "says; a suffix (130ms, 800us, 2s; 5/s, 300/min) converts to seconds, as afdkit\n"
        "pd does without --hw.\n"
        "\n"
        "Memory: --service-trace keeps every row (16 bytes, 24 with a time column; at\n"
        "most 2^26 rows), since --arrivals trace replays the rows in their order.",
    .groups = mdc_groups,
    .run = run_mdc,
};

/* ------------------------------------------------------------------- mc */

static const cli_command *const mc_subcommands[] = {&cli_cmd_mc_barrier, &cli_cmd_mc_slot,
                                                    &cli_cmd_mc_mdc, NULL};

const cli_command cli_cmd_mc = {
    .name = "mc",
    .path = "mc",
    .summary = "Monte Carlo cross-checks: barrier, slot, mdc",
    .usage = "mc SUBCOMMAND [OPTIONS]",
    .description = "Monte Carlo experiments that check the closed forms.  Every estimate comes\n"
                   "with its standard error; results are identical for any number of threads.",
    .groups = NULL,
    .run = NULL,
    .subcommands = mc_subcommands,
};
