/* cmd_serve.c: afdkit serve, one run of the request-level serving
 * simulator (montecarlo/serve/afd_serve.h). */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "afd_serve.h"
#include "cli.h"
#include "serve_opts.h"

static const cli_group *const serve_groups[] = {
    &cli_serve_arch_group, &cli_serve_run_group, &cli_workload_group, &cli_hw_group,
    &cli_output_group, NULL};

static int own(void *ctx, const cli_option *opt, const char *arg)
{
    cli_serve_args *a = ctx;
    if (opt == NULL)
        return cli_usage_error(a->cmd, "unexpected argument '%s'", arg);
    return cli_serve_option(a, opt, arg);
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
    cli_serve_args a;
    cli_serve_setup su;
    afd_serve_result r;
    afd_error err;
    afd_status st;
    cli_table *t;
    cli_progress prog;
    double ms;
    int rc;

    cli_common_init(&c);
    cli_serve_init(&a, cmd);
    rc = cli_parse_args(self, argc, argv, &c, own, &a);
    if (rc != CLI_CONTINUE) {
        return rc;
    }
    rc = cli_serve_prepare(&a, &c, 1, &su);
    if (rc != 0) {
        return rc;
    }
    ms = su.unit_seconds * 1e3;
    cli_progress_init(&prog, cmd, "simulating", c.out.quiet);
    st = afd_serve_run(&su.params, &r, &err);
    cli_progress_end(&prog);
    if (st != AFD_OK) {
        rc = st == AFD_EINVAL ? cli_usage_error(cmd, "%s", err.text)
                              : cli_runtime_error(cmd, "%s", err.text);
        cli_serve_setup_free(&su);
        return rc;
    }
    if (r.unstable && !a.allow_unstable) {
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
        cli_warn(cmd, "unstable: the percentiles grow with --requests (%.3g%% of the arrivals "
                      "pile up)",
                 100 * r.growth);

    t = cli_table_new(&c.out);
    if (t == NULL) {
        cli_serve_setup_free(&su);
        return cli_runtime_error(cmd, "out of memory");
    }
    cli_table_provenance(t);
    cli_table_meta(t, "unit", "ms");
    cli_table_meta(t, "arch", "%s", su.params.policy->name);
    cli_table_meta(t, "events", "%llu", (unsigned long long)r.events);
    cli_table_meta(t, "stable", "%s", r.unstable ? "no" : "yes");
    cli_table_begin(t, "ttft_mean", "ttft_p50", "ttft_p90", "ttft_p99", "tpot_mean", "tpot_p50",
                    "tpot_p90", "tpot_p99", "e2e_p90", "throughput", "attainment", "completed",
                    "ttft_mean_se", "ttft_p50_se", "ttft_p90_se", "ttft_p99_se", "tpot_mean_se",
                    "tpot_p50_se", "tpot_p90_se", "tpot_p99_se", "e2e_p90_se", "attainment_se");
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
    cli_table_end_row(t);
    cli_serve_setup_free(&su);
    return cli_table_finish(t, cmd);
}

const cli_command cli_cmd_serve = {
    .name = "serve",
    .path = "serve",
    .summary = "simulate LLM serving request by request: TTFT, TPOT, goodput (colloc, chunked, "
               "disagg)",
    .usage = "serve --arch colloc|chunked|disagg --hw FILE --lambda RATE --lengths P,G [...]",
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
        "Architectures (--arch):\n"
        "  colloc   --instances N: each instance prefills and decodes; a waiting prefill\n"
        "           batch always goes first and the two never share an iteration (vLLM;\n"
        "           BestServe Algorithms 4-7)\n"
        "  chunked  --instances N --chunk S: every iteration carries the running decodes'\n"
        "           tokens plus prompt chunks up to S tokens (Sarathi-Serve)\n"
        "  disagg   --prefill NP --decode ND: static prefill batches, KV transfer, then\n"
        "           continuous decode batching (BestServe Algorithms 2-3; --pseudo-batch TAU\n"
        "           for BestServe's per-request decode heuristic)\n"
        "\n"
        "The latency file needs the serving laws (prefill_a ... decode_alpha) and a unit\n"
        "other than cycles.  An unstable configuration (latency growing over the run) exits\n"
        "with status 1 unless --allow-unstable.",
    .groups = serve_groups,
    .run = run,
};
