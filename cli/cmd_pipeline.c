/* cmd_pipeline.c: afdkit pipeline, a serving pipeline of stages as a tandem
 * network of queues (libanalytic/serving/afd_stages.h, montecarlo/queue/afd_stages_sim.h). */
#include <config.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "afd_mc.h"
#include "afd_stages_sim.h"
#include "cli.h"

enum {
    OPT_STAGES = OPT_COMMAND,
    OPT_LAMBDA,
    OPT_METHOD,
    OPT_PERCENTILE,
    OPT_CUSTOMERS,
    OPT_WARMUP,
    OPT_REPS,
    OPT_SEED,
    OPT_THREADS
};

static const cli_option pipeline_options[] = {
    {"stages", 0, "FILE", "the stage list, JSON (required)", OPT_STAGES},
    {"lambda", 0, "L", "arrival rate, Poisson: 5/s, 300/min, or per second (required; with "
     "--hw FILE in another unit than s, give the unit)", OPT_LAMBDA},
    {"method", 0, "M", "closed (decomposition, default) or sim (simulation)", OPT_METHOD},
    {"percentile", 0, "P", "quantile level of the wait and sojourn columns (default 0.9)",
     OPT_PERCENTILE},
    {"customers", 'n', "N", "sim: requests measured per replication (default 20000)",
     OPT_CUSTOMERS},
    {"warmup", 0, "N", "sim: requests simulated and discarded first (default customers/10)",
     OPT_WARMUP},
    {"reps", 0, "R", "sim: independent replications (default 20)", OPT_REPS},
    {"seed", 's', "S", "sim: seed of the Philox streams (default 1)", OPT_SEED},
    {"threads", 0, "N", CLI_THREADS_HELP, OPT_THREADS},
    {NULL, 0, NULL, NULL, 0},
};
static const cli_group pipeline_group = {"Options", pipeline_options};
static const cli_group *const pipeline_groups[] = {&pipeline_group, &cli_workload_group,
                                                   &cli_hw_group, &cli_output_group, NULL};

struct args {
    const char *stages;
    const char *lambda_arg;
    int sim;
    double percentile;
    int64_t customers, warmup, reps, seed;
    unsigned threads;
};

static int own(void *ctx, const cli_option *opt, const char *arg)
{
    struct args *a = ctx;
    const char *cmd = "pipeline";
    if (opt == NULL)
        return cli_usage_error(cmd, "unexpected argument '%s'", arg);
    switch (opt->id) {
    case OPT_STAGES:
        a->stages = arg;
        return 0;
    case OPT_LAMBDA:
        a->lambda_arg = arg;
        return 0;
    case OPT_METHOD:
        if (strcmp(arg, "closed") == 0 || strcmp(arg, "sim") == 0) {
            a->sim = arg[0] == 's';
            return 0;
        }
        return cli_usage_error(cmd, "--method must be closed or sim: '%s'", arg);
    case OPT_PERCENTILE: {
        int rc = cli_real(cmd, opt->name, arg, &a->percentile);
        if (rc == 0 && !(a->percentile > 0 && a->percentile < 1))
            rc = cli_usage_error(cmd, "--percentile must lie in (0, 1): '%s'", arg);
        return rc;
    }
    case OPT_CUSTOMERS:
        return cli_integer(cmd, opt->name, arg, 10, (int64_t)1 << 30, &a->customers);
    case OPT_WARMUP:
        return cli_integer(cmd, opt->name, arg, 0, (int64_t)1 << 30, &a->warmup);
    case OPT_REPS:
        return cli_integer(cmd, opt->name, arg, 2, 100000, &a->reps);
    case OPT_SEED:
        return cli_integer(cmd, opt->name, arg, 0, INT64_MAX, &a->seed);
    case OPT_THREADS:
        return cli_threads(cmd, opt->name, arg, &a->threads);
    }
    return cli_usage_error(cmd, "internal error: unhandled option --%s", opt->name);
}

/* "FILE:LINE:COLUMN: text" (the JSON's position), exit code by status. */
static int stages_error(const char *cmd, const char *path, afd_status st, const afd_error *err)
{
    const char *text = err->text[0] != '\0' ? err->text : afd_strerror(st);
    if (err->line <= 0)
        return cli_file_error(cmd, path, st, err);
    if (cli_exit_code(st) == EXIT_RUNTIME)
        return cli_runtime_error(cmd, "%s:%ld:%ld: %s", path, err->line, err->column, text);
    return cli_input_error(cmd, "%s:%ld:%ld: %s", path, err->line, err->column, text);
}

static int run(const cli_command *self, int argc, char **argv)
{
    const char *cmd = self->path;
    struct args a = {NULL, NULL, 0, 0.9, 20000, -1, 20, 1, 0};
    cli_common c;
    afd_stages sg = {0, NULL};
    afd_workload w;
    afd_hw hw;
    afd_pipeline_problem pb;
    afd_error err;
    afd_status st;
    int rc, needs = 0, have_w = 0, have_latency = 0;
    size_t i;
    cli_table *t = NULL;
    char qw[48], qs[48], qwse[48], qsse[48];

    memset(&pb, 0, sizeof pb);
    cli_common_init(&c);
    rc = cli_parse_args(self, argc, argv, &c, own, &a);
    if (rc != CLI_CONTINUE)
        return rc;
    if (a.stages == NULL || a.lambda_arg == NULL)
        return cli_usage_error(cmd, a.stages == NULL ? "--stages FILE is required"
                                                     : "--lambda L is required");
    /* pipeline's times are seconds (## unit=s), a latency file's converted
     * to them.  pd, goodput and serve read a bare rate per the latency
     * file's unit: with a file in another unit a bare rate would mean one
     * thing here and another there, so it must say its unit. */
    if (c.hw.hw != NULL && strchr(a.lambda_arg, '/') == NULL) {
        afd_hw h;
        char ex[64];
        if ((rc = cli_hw_load(cmd, &c.hw, &h)) != 0)
            return rc;
        cli_excerpt(a.lambda_arg, ex, sizeof ex);
        if (h.unit[0] == '\0')
            return cli_usage_error(cmd, "--lambda %s: a bare rate is ambiguous with %s, which "
                                        "states no unit (pipeline's times are seconds): give "
                                        "its unit, e.g. %s/s",
                                   ex, c.hw.hw, ex);
        if (strcmp(h.unit, "s") != 0)
            return cli_usage_error(cmd, "--lambda %s: a bare rate is ambiguous with %s in %s "
                                        "(pd and serve read it per %s, pipeline's times are "
                                        "seconds): give its unit, e.g. %s/s",
                                   ex, c.hw.hw, h.unit, h.unit, ex);
    }
    if ((rc = cli_rate(cmd, "lambda", a.lambda_arg, "s", &pb.lambda)) != 0)
        return rc;
    if (!(pb.lambda > 0))
        return cli_usage_error(cmd, "--lambda must be > 0: '%s'", a.lambda_arg);
    st = afd_stages_read(a.stages, &sg, &err);
    if (st != AFD_OK)
        return stages_error(cmd, a.stages, st, &err);
    for (i = 0; i < sg.n; i++) {
        needs |= afd_stage_needs_tokens(&sg.stage[i]);
        have_latency |= sg.stage[i].kind == AFD_SERVICE_LATENCY;
    }
    pb.stages = &sg;
    pb.p = a.percentile;
    if (have_latency) {
        if (c.hw.hw == NULL) {
            rc = cli_usage_error(cmd, "a stage uses the latency model: give --hw FILE");
            goto out;
        }
        if ((rc = cli_hw_load(cmd, &c.hw, &hw)) != 0)
            goto out;
        if (afd_unit_seconds(hw.unit, &pb.hw_sec) != AFD_OK) {
            rc = cli_input_error(cmd, "%s: the latency model's unit '%s' is not a unit of time",
                                 c.hw.hw, hw.unit);
            goto out;
        }
        pb.hw = &hw;
    }
    /* Token-dependent stages replay the trace's requests; the geometric model
     * and theta/nu give no rows to replay, and nothing else reads them. */
    if (c.wl.geometric || c.wl.have_theta || c.wl.have_nu) {
        rc = cli_usage_error(cmd, "%s: the stages draw their requests' tokens from --trace FILE; "
                                  "the geometric model and --theta/--nu give no requests",
                             c.wl.geometric ? "--geometric" : "--theta/--nu");
        goto out;
    }
    if (c.wl.trace != NULL) {
        if ((rc = cli_workload_load(cmd, &c.wl, CLI_WL_NEEDS_LENGTHS | CLI_WL_NO_SE_WARNING, 1,
                                    &c.out, &w)) != 0)
            goto out;
        have_w = 1;
        pb.requests.prompt = w.prompt;
        pb.requests.decode = w.decode;
        pb.requests.n = w.n_kept;
    }
    if (needs && pb.requests.n == 0) {
        rc = cli_usage_error(cmd, "a stage depends on the requests' tokens (affine, latency or "
                                  "heavy-light): give --trace FILE");
        goto out;
    }

    cli_percentile_name(qw, sizeof qw, "wait", a.percentile, "");
    cli_percentile_name(qs, sizeof qs, "sojourn", a.percentile, "");
    cli_percentile_name(qwse, sizeof qwse, "wait", a.percentile, "_se");
    cli_percentile_name(qsse, sizeof qsse, "sojourn", a.percentile, "_se");
    t = cli_table_new(&c.out);
    if (t == NULL) {
        rc = cli_runtime_error(cmd, "out of memory");
        goto out;
    }
    cli_table_provenance(t);
    cli_table_unit(t, "s");
    cli_table_meta(t, "method", "%s", a.sim ? "sim" : "closed");
    if (!a.sim) {
        afd_stage_result *r = calloc(sg.n + 1, sizeof *r);
        if (r == NULL) {
            rc = cli_runtime_error(cmd, "out of memory");
            goto out;
        }
        st = afd_pipeline_solve(&pb, r, &err);
        if (st != AFD_OK) {
            free(r);
            if (err.line > 0)
                rc = stages_error(cmd, a.stages, st, &err);
            else if (cli_exit_code(st) == EXIT_RUNTIME)
                rc = cli_runtime_error(cmd, "%s", err.text[0] ? err.text : afd_strerror(st));
            else
                rc = cli_input_error(cmd, "%s", err.text[0] ? err.text : afd_strerror(st));
            goto out;
        }
        cli_table_begin(t, "stage", "rho", "wait_mean", qw, "sojourn_mean", qs, "service_mean",
                        "service_scv", "ca2", "cd2", "exact");
        for (i = 0; i <= sg.n; i++) {
            cli_table_str(t, i < sg.n ? sg.stage[i].name : "total");
            cli_table_real(t, r[i].rho);
            cli_table_real(t, r[i].wait_mean);
            cli_table_real(t, r[i].wait_p);
            cli_table_real(t, r[i].sojourn_mean);
            cli_table_real(t, r[i].sojourn_p);
            cli_table_real(t, r[i].service_mean);
            cli_table_real(t, r[i].service_scv);
            cli_table_real(t, r[i].ca2);
            cli_table_real(t, r[i].cd2);
            cli_table_int(t, r[i].exact);
            cli_table_end_row(t);
        }
        free(r);
    } else {
        afd_stages_sim_options o;
        afd_stages_sim_stat *s = calloc(sg.n + 1, sizeof *s);
        cli_progress pr;
        if (s == NULL) {
            rc = cli_runtime_error(cmd, "out of memory");
            goto out;
        }
        o.customers = (uint64_t)a.customers;
        o.warmup = a.warmup >= 0 ? (uint64_t)a.warmup : (uint64_t)a.customers / 10;
        o.reps = (unsigned)a.reps;
        o.seed = (uint64_t)a.seed;
        o.threads = a.threads;
        cli_progress_init(&pr, cmd, "simulating", c.out.quiet);
        st = afd_stages_simulate(&pb, &o, s, &err);
        cli_progress_end(&pr);
        if (st != AFD_OK) {
            free(s);
            rc = cli_exit_code(st) == EXIT_RUNTIME
                     ? cli_runtime_error(cmd, "%s", err.text[0] ? err.text : afd_strerror(st))
                     : cli_input_error(cmd, "%s", err.text[0] ? err.text : afd_strerror(st));
            goto out;
        }
        cli_table_meta(t, "seed", "%lld", (long long)a.seed);
        cli_table_meta(t, "customers", "%lld", (long long)a.customers);
        cli_table_meta(t, "reps", "%lld", (long long)a.reps);
        cli_table_begin(t, "stage", "rho", "wait_mean", qw, "sojourn_mean", qs, "rho_se",
                        "wait_mean_se", qwse, "sojourn_mean_se", qsse);
        for (i = 0; i <= sg.n; i++) {
            cli_table_str(t, i < sg.n ? sg.stage[i].name : "total");
            cli_table_real(t, s[i].rho);
            cli_table_real(t, s[i].wait_mean);
            cli_table_real(t, s[i].wait_p);
            cli_table_real(t, s[i].sojourn_mean);
            cli_table_real(t, s[i].sojourn_p);
            cli_table_real(t, s[i].rho_se);
            cli_table_real(t, s[i].wait_mean_se);
            cli_table_real(t, s[i].wait_p_se);
            cli_table_real(t, s[i].sojourn_mean_se);
            cli_table_real(t, s[i].sojourn_p_se);
            cli_table_end_row(t);
        }
        free(s);
    }
    rc = cli_table_finish(t, cmd);
    t = NULL;
out:
    if (t != NULL)
        cli_table_discard(t);
    if (have_w)
        afd_workload_free(&w);
    afd_stages_free(&sg);
    return rc;
}

const cli_command cli_cmd_pipeline = {
    .name = "pipeline",
    .path = "pipeline",
    .summary = "a serving pipeline of stages as a network of queues: waits and sojourns",
    .usage = "pipeline --stages FILE --lambda L [--trace FILE] [--hw FILE] [--method closed|sim]",
    .description =
        "Prints one row per stage and a last row 'total' (end to end): stage rho\n"
        "wait_mean wait_p90 sojourn_mean sojourn_p90, times in seconds.  rho is the\n"
        "utilisation lambda E[S] / c (total: the largest), wait the time in queue,\n"
        "sojourn the wait plus the stage's own service.\n"
        "\n"
        "The stage list (JSON):\n"
        "  {\"stages\": [{\"name\": \"rag\", \"servers\": 2, \"service\": {\"const\": 0.4}},\n"
        "              {\"name\": \"prefill\", \"servers\": 4,\n"
        "               \"service\": {\"affine\": {\"a\": \"20ms\", \"b\": 1e-4}}}, ...]}\n"
        "service is one of const (seconds), exp (mean seconds), affine ({\"a\", \"b\",\n"
        "\"tokens\": \"prompt\"|\"output\"}: a + b x) or latency (\"prefill\"|\"decode\": a phase\n"
        "of the --hw latency model, one request alone); times are numbers of seconds or\n"
        "strings with a unit.  routing is fcfs (default), least-work, rr, jsq or\n"
        "{\"heavy-light\": {\"split\": N, \"light\": K}} (requests of at most N tokens to K\n"
        "servers); repeat k serves a request k times in a row (a reasoning loop).\n"
        "Token-dependent stages draw the requests of --trace (the only workload: the\n"
        "geometric model and --theta/--nu give no requests to draw, and are refused).\n"
        "\n"
        "--method closed (default): each stage a GI/G/c queue fed with the squared\n"
        "coefficient of variation of the stage before (Whitt's QNA), exact M/D/c and\n"
        "M/M/c where the arrivals are Poisson; a stage whose longest service fits in\n"
        "the spacing of its arrivals (c servers, arrivals c apart at least S_max apart,\n"
        "behind constant-service stages) never waits, exactly; the total's quantiles\n"
        "convolve the random stages as if independent and add the constant ones.\n"
        "Extra columns: service_mean service_scv ca2 cd2\n"
        "(the SCVs passed along) and exact (1: an exact stage).  --method sim: the\n"
        "discrete-event simulation, R independent replications, with _se columns\n"
        "(standard errors across replications).  docs/pipeline.md compares the two.",
    .groups = pipeline_groups,
    .run = run,
};
