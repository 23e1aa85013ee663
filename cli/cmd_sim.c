/* cmd_sim.c: afdkit sim, the decode-pipeline simulator beside the formulas
 * (Section 5). */
#include <config.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "afd_mc.h"
#include "afd_pipeline.h"
#include "cli.h"

enum {
    OPT_B = OPT_COMMAND, OPT_R, OPT_REQUESTS, OPT_SEED, OPT_MB, OPT_START, OPT_FFN, OPT_WARMUP,
    OPT_BATCHES, OPT_NO_BARRIER, OPT_NO_COMM, OPT_GANTT, OPT_GANTT_STEPS, OPT_ASYNC, OPT_THREADS
};

static const cli_option sim_options[] = {
    {"batch", 'B', "N", "slots per micro-batch (required)", OPT_B},
    {"r", 'r', "LIST", "Attention instances per FFN instance (required, integers)", OPT_R},
    {"requests", 'n', "R", "completed requests per Attention instance (default 10000)",
     OPT_REQUESTS},
    {"seed", 's', "S", "seed of the Philox streams (default 1)", OPT_SEED},
    {"microbatches", 'm', "M", "micro-batches per Attention worker (default 2)", OPT_MB},
    {"start", 0, "MODE", "fresh (cold start) or stationary (default)", OPT_START},
    {"ffn-instances", 0, "Y", "FFN instances: simulate (rY)A-YF (default 1)", OPT_FFN},
    {"warmup", 0, "F", "fraction of time before the steady-state window (default 0.2)",
     OPT_WARMUP},
    {"batches", 0, "K", "batch means of the steady-state throughput (default 20)", OPT_BATCHES},
    {"no-barrier", 0, NULL, "ablation: every worker takes the mean Attention time",
     OPT_NO_BARRIER},
    {"no-comm", 0, NULL, "ablation: transfers take no time", OPT_NO_COMM},
    {"async-attention", 0, NULL, "workers start a micro-batch independently (no side lock)",
     OPT_ASYNC},
    {"gantt", 0, "FILE", "write stage start/end times of the first steps (one r only)",
     OPT_GANTT},
    {"gantt-steps", 0, "N", "steps written to --gantt (default 24)", OPT_GANTT_STEPS},
    {"threads", 0, "N", "configurations simulated at once (default OMP_NUM_THREADS or the "
                        "processors, at most 256)",
     OPT_THREADS},
    {NULL, 0, NULL, NULL, 0},
};
static const cli_group sim_group = {"Options", sim_options};
static const cli_group *const sim_groups[] = {&sim_group, &cli_workload_group, &cli_hw_group,
                                              &cli_output_group, &cli_shard_group, NULL};

struct args {
    double B, warmup;
    cli_list rs;
    int64_t requests, seed, mb, ffn, batches, gantt_steps;
    unsigned threads; /* --threads, 0: the default */
    int start, no_barrier, no_comm, async;
    const char *gantt;
};

static int own(void *ctx, const cli_option *opt, const char *arg)
{
    struct args *a = ctx;
    const char *cmd = "sim";
    if (opt == NULL)
        return cli_usage_error(cmd, "unexpected argument '%s'", arg);
    switch (opt->id) {
    case OPT_B: return cli_batch(cmd, arg, &a->B);
    case OPT_R:
        cli_list_free(&a->rs);
        return cli_list_parse(cmd, opt->name, arg, 1, 1, 65536, &a->rs);
    case OPT_REQUESTS: return cli_integer(cmd, opt->name, arg, 1, (int64_t)1 << 40, &a->requests);
    case OPT_SEED: return cli_integer(cmd, opt->name, arg, 0, INT64_MAX, &a->seed);
    case OPT_MB: return cli_integer(cmd, opt->name, arg, 1, 4096, &a->mb);
    case OPT_FFN: return cli_integer(cmd, opt->name, arg, 1, 65536, &a->ffn);
    case OPT_BATCHES: return cli_integer(cmd, opt->name, arg, 2, 10000, &a->batches);
    case OPT_GANTT_STEPS: return cli_integer(cmd, opt->name, arg, 1, 1000000, &a->gantt_steps);
    case OPT_THREADS:
        return cli_threads(cmd, opt->name, arg, &a->threads);
    case OPT_NO_BARRIER: a->no_barrier = 1; return 0;
    case OPT_NO_COMM: a->no_comm = 1; return 0;
    case OPT_ASYNC: a->async = 1; return 0;
    case OPT_GANTT: a->gantt = arg; return 0;
    case OPT_WARMUP:
        if (cli_real(cmd, opt->name, arg, &a->warmup) != 0)
            return EXIT_USAGE;
        if (!(a->warmup >= 0 && a->warmup < 1))
            return cli_usage_error(cmd, "--warmup must be in [0, 1): '%s'", arg);
        return 0;
    case OPT_START:
        if (strcmp(arg, "fresh") == 0)
            a->start = AFD_START_FRESH;
        else if (strcmp(arg, "stationary") == 0)
            a->start = AFD_START_STATIONARY;
        else
            return cli_usage_error(cmd, "--start must be fresh or stationary: '%s'", arg);
        return 0;
    }
    return cli_usage_error(cmd, "internal error: unhandled option --%s", opt->name);
}

static const char *const stage_name[] = {"attention", "a2f", "ffn", "f2a"};

static void gantt_row(void *ctx, uint64_t step, unsigned mb, int stage, int worker, double start,
                      double end)
{
    cli_table *t = ctx;
    cli_table_uint(t, step);
    cli_table_uint(t, mb);
    cli_table_str(t, stage_name[stage]);
    cli_table_int(t, worker);
    cli_table_real(t, start);
    cli_table_real(t, end);
    cli_table_end_row(t);
}

/* The simulation of r = rs.v[k] (no gantt callback). */
static void params_for(const struct args *a, const afd_workload *w, const afd_hw *hw, size_t k,
                       afd_pipeline_params *p)
{
    memset(p, 0, sizeof *p);
    p->workload = w;
    p->hw = *hw;
    p->x = (unsigned)(a->rs.v[k] * (double)a->ffn);
    p->y = (unsigned)a->ffn;
    p->B = (unsigned)a->B;
    p->microbatches = (unsigned)a->mb;
    p->requests = (uint64_t)a->requests;
    p->start = (afd_start)a->start;
    p->warmup = a->warmup;
    p->batches = (unsigned)a->batches;
    p->no_barrier = a->no_barrier;
    p->no_comm = a->no_comm;
    p->async_attention = a->async;
    p->seed = (uint64_t)a->seed;
    p->stream_base = afd_pipeline_stream_base(p->x, p->y);
}

static int run(const cli_command *self, int argc, char **argv)
{
    const char *cmd = self->path;
    struct args a;
    cli_common c;
    afd_workload w;
    afd_pipeline_result *res = NULL;
    afd_status *sts = NULL;
    cli_table *t = NULL, *gt = NULL;
    afd_hw hw;
    cli_progress prog;
    size_t k, n, done;
    unsigned nt;
    int rc, q;

    memset(&a, 0, sizeof a);
    memset(&w, 0, sizeof w);
    a.B = NAN;
    a.requests = 10000;
    a.seed = 1;
    a.mb = 2;
    a.ffn = 1;
    a.batches = 20;
    a.warmup = 0.2;
    a.gantt_steps = 24;
    a.start = AFD_START_STATIONARY;
    cli_common_init(&c);
    rc = cli_parse_args(self, argc, argv, &c, own, &a);
    if (rc != CLI_CONTINUE)
        goto out;
    if (isnan(a.B) || a.rs.n == 0) {
        rc = cli_usage_error(cmd, isnan(a.B) ? "-B N is required" : "--r LIST is required");
        goto out;
    }
    if (a.gantt != NULL && a.rs.n != 1) {
        rc = cli_usage_error(cmd, "--gantt draws one configuration: give a single --r");
        goto out;
    }
    cli_shard_list(&c.out, &a.rs);
    n = a.rs.n;
    if ((rc = cli_hw_load(cmd, &c.hw, &hw)) != 0)
        goto out;
    cli_note_fit(cmd, c.hw.hw, &hw, CLI_LAWS_AFD);
    if ((rc = cli_workload_load(cmd, &c.wl, CLI_WL_NEEDS_LENGTHS, CLI_KEEP_PAIRS, &c.out, &w)) != 0)
        goto out;
    /* refuse every configuration the simulator would refuse before running any */
    for (k = 0; k < n; k++) {
        afd_pipeline_params p;
        afd_status st;
        params_for(&a, &w, &hw, k, &p);
        st = afd_pipeline_check(&p);
        if (st == AFD_ELIMIT) {
            rc = cli_usage_error(cmd, "refused: r = %.15g needs %.3g slots (x m B), more than "
                                      "2^26",
                                 a.rs.v[k], a.rs.v[k] * (double)a.ffn * (double)a.mb * a.B);
            goto out;
        }
        if (st != AFD_OK) {
            rc = cli_usage_error(cmd, "r = %.15g: parameters outside the simulator's range (%s)",
                                 a.rs.v[k], afd_strerror(st));
            goto out;
        }
    }

    res = calloc(n + 1, sizeof *res); /* + 1: a shard may hold no r */
    sts = calloc(n + 1, sizeof *sts);
    t = cli_table_new(&c.out);
    if (a.gantt != NULL)
        gt = cli_table_new(&c.out);
    if (res == NULL || sts == NULL || t == NULL || (a.gantt != NULL && gt == NULL)) {
        rc = cli_runtime_error(cmd, "out of memory");
        goto out;
    }
    if (gt != NULL && hw.unit[0] != '\0')
        cli_table_unit(gt, "%s", hw.unit);
    if (gt != NULL)
        cli_table_begin(gt, "step", "microbatch", "stage", "worker", "start", "end");

    /* Configurations are independent: run them in parallel.  Each reads
     * streams derived from its own (x, y), so its result depends neither on
     * the thread count nor on the other values of --r. */
    cli_progress_init(&prog, cmd, "simulating", c.out.quiet);
    done = 0;
    nt = afd_mc_threads(a.threads);
    (void)nt; /* unused without OpenMP */
    CLI_OMP("omp parallel for schedule(dynamic, 1) num_threads(nt) if (gt == NULL)")
    for (k = 0; k < n; k++) {
        afd_pipeline_params p;
        params_for(&a, &w, &hw, k, &p);
        p.gantt = gt != NULL ? gantt_row : NULL;
        p.gantt_ctx = gt;
        p.gantt_steps = (uint64_t)a.gantt_steps;
        sts[k] = afd_pipeline_run(&p, &res[k]);
        CLI_OMP("omp critical(sim_progress)")
        cli_progress_update(&prog, (double)++done, (double)n, "ratios");
    }
    cli_progress_end(&prog);
    for (k = 0; k < n; k++)
        if (sts[k] != AFD_OK) {
            rc = cli_runtime_error(cmd, "r = %.15g: %s", a.rs.v[k], afd_strerror(sts[k]));
            goto out;
        }

    cli_table_provenance(t);
    cli_table_meta(t, "seed", "%lld", (long long)a.seed);
    cli_table_meta(t, "start", "%s", a.start == AFD_START_FRESH ? "fresh" : "stationary");
    cli_table_meta(t, "microbatches", "%lld", (long long)a.mb);
    if (hw.unit[0] != '\0')
        cli_table_unit(t, "%s", hw.unit);
    cli_table_begin(t, "r", "thr_sim", "tpot", "eta_a", "eta_f", "thr_g", "thr_steady",
                    "thr_steady_se", "thr_mf", "tau", "barrier", "x", "y", "completed", "steps",
                    "tpot_p50", "tpot_p50_se", "tpot_p90", "tpot_p90_se", "tpot_p99",
                    "tpot_p99_se");
    for (k = 0; k < n; k++) {
        afd_system s;
        afd_cycle cy;
        unsigned x = (unsigned)(a.rs.v[k] * (double)a.ffn);
        s.hw = hw;
        s.B = (unsigned)a.B;
        s.theta = w.stats.theta;
        s.nu = w.stats.nu;
        if (afd_cycle_topology(&s, x, (unsigned)a.ffn, &cy) != AFD_OK) {
            rc = cli_runtime_error(cmd, "r = %.15g: the closed form failed", a.rs.v[k]);
            goto out;
        }
        cli_table_real(t, a.rs.v[k]);
        cli_table_real(t, res[k].thr_sim);
        cli_table_real(t, res[k].tpot);
        cli_table_real(t, res[k].eta_a);
        cli_table_real(t, res[k].eta_f);
        cli_table_real(t, cy.thr_g);
        cli_table_real(t, res[k].thr_steady);
        cli_table_real(t, res[k].thr_steady_se);
        cli_table_real(t, cy.thr_mf);
        cli_table_real(t, res[k].tau);
        cli_table_real(t, res[k].barrier);
        cli_table_uint(t, x);
        cli_table_uint(t, (unsigned)a.ffn);
        cli_table_uint(t, res[k].completed);
        cli_table_uint(t, res[k].steps);
        for (q = 0; q < AFD_PIPELINE_TPOT_NQ; q++) {
            cli_table_real(t, res[k].tpot_q[q]);
            cli_table_real(t, res[k].tpot_q_se[q]);
        }
        cli_table_end_row(t);
    }
    if (gt != NULL) {
        rc = cli_table_finish_file(gt, cmd, a.gantt);
        gt = NULL;
        if (rc != 0)
            goto out;
    }
    rc = cli_table_finish(t, cmd);
    t = NULL;
out:
    cli_table_discard(t);
    cli_table_discard(gt);
    free(res);
    free(sts);
    afd_workload_free(&w);
    cli_list_free(&a.rs);
    return rc;
}

const cli_command cli_cmd_sim = {
    .name = "sim",
    .path = "sim",
    .summary = "simulate the rA-1F decode pipeline beside the closed forms (Section 5)",
    .usage = "sim WORKLOAD HARDWARE -B N --r LIST [--requests R] [--microbatches M] "
             "[--start fresh|stationary] [--seed S]",
    .description =
        "Prints one row per r: r thr_sim tpot eta_a eta_f thr_g thr_steady thr_steady_se\n"
        "thr_mf tau barrier x y completed steps tpot_p50 tpot_p50_se tpot_p90\n"
        "tpot_p90_se tpot_p99 tpot_p99_se.\n"
        "\n"
        "r Attention workers (x = r Y with --ffn-instances Y) hold M micro-batches of B\n"
        "slots; a step of a micro-batch runs Attention on every worker (alpha_a T + beta_a,\n"
        "all starting together, waiting for the slowest), the A->F transfer (half of\n"
        "alpha_c rB + beta_c), the\n"
        "FFN (alpha_f rB + beta_f) and the F->A transfer; the two sides work on one\n"
        "micro-batch at a time, so micro-batches overlap.  Finished requests are\n"
        "replaced at once (continuous batching).  The run stops after R completed\n"
        "requests per Attention instance.\n"
        "\n"
        "thr_sim: tokens of the first 80% of completed requests over the time they took,\n"
        "per instance (Section 5.2); tpot: mean decode time per output token; eta_a,\n"
        "eta_f: idle fractions of the Attention workers and of the FFN; thr_g, thr_mf: the\n"
        "closed forms (eq. 11, 1) at the same x, y; thr_steady +- thr_steady_se: the\n"
        "throughput after the warm-up fraction, by batch means over time; tau: mean time\n"
        "per micro-batch step; barrier: mean relative excess of the slowest worker's\n"
        "Attention time over the workers' mean; tpot_pP +- tpot_pP_se: percentiles of the\n"
        "per-request TPOT (completion - admission) / D over the requests of tpot, with\n"
        "batch-means standard errors (--batches groups in completion order).\n"
        "\n"
        "--start stationary (default) starts every slot in the stationary state (a\n"
        "length-biased request at a uniform age); --start fresh starts all requests at\n"
        "time 0, as a cold start, whose transient lasts hundreds of steps.  With two\n"
        "micro-batches communication is hidden only while (A + F + C)/2 <= max(A, F): near\n"
        "the balance point it is not, and --microbatches 3 hides it.  --no-barrier and\n"
        "--no-comm remove the barrier or the transfers, to measure what each costs;\n"
        "--async-attention lets each worker start a micro-batch as soon as it is free,\n"
        "so a worker slow on one micro-batch catches up on the next.\n"
        "Results are identical for any number of threads.\n"
        "\n"
        "Memory: the trace is read once and only its distinct (P, D) pairs are kept,\n"
        "with their counts: 24 bytes per distinct pair (at most 2^25) plus a fixed\n"
        "12 MiB, however many rows the trace has; the simulator adds 8 bytes per pair\n"
        "for its table of cumulative counts.  A request drawn from the pairs has the\n"
        "law of a row drawn from the trace.",
    .groups = sim_groups,
    .run = run,
};
