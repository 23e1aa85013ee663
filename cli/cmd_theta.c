/* cmd_theta.c: afdkit theta, the renewal-reward statistics of Lemma 4.1. */
#include <config.h>

#include <math.h>

#include "cli.h"

static const cli_group *const theta_groups[] = {&cli_workload_group, &cli_output_group, NULL};

/* Appendix A.7: a tail index alpha <= 3 means nu^2 = inf without the cap,
 * alpha <= 2 also theta = inf. */
static void warn_heavy_tail(const char *cmd, const cli_workload_args *wa, const afd_workload *w)
{
    if (!(w->tail_alpha <= 3))
        return;
    cli_warn(cmd,
             "%s: decode lengths look heavy-tailed: Hill tail index %.2f +- %.2f over the top "
             "%zu of %llu; without the length cap (max D = %llu) %s would be infinite "
             "(Appendix A.7)",
             wa->trace, w->tail_alpha, w->tail_alpha_se, w->tail_k,
             (unsigned long long)w->stats.n, (unsigned long long)w->max_d,
             w->tail_alpha <= 2 ? "theta and nu" : "nu");
}

static int run(const cli_command *self, int argc, char **argv)
{
    const char *cmd = self->path;
    cli_common c;
    afd_workload w;
    cli_table *t;
    int rc;

    cli_common_init(&c);
    rc = cli_parse_args(self, argc, argv, &c, NULL, NULL);
    if (rc != CLI_CONTINUE)
        return rc;
    rc = cli_workload_load(cmd, &c.wl, CLI_WL_ANY, 0, &c.out, &w);
    if (rc != 0)
        return rc;
    if (w.kind == AFD_WORKLOAD_TRACE)
        warn_heavy_tail(cmd, &c.wl, &w);

    t = cli_table_new(&c.out);
    if (t == NULL)
        return cli_runtime_error(cmd, "out of memory");
    cli_table_provenance(t);
    cli_table_meta(t, "workload", "%s", afd_workload_kind_name(w.kind));
    /* lambda per second, span_s in seconds: stated when the trace has
     * arrival times (without them those columns are nan) */
    if (isfinite(w.arrivals.lambda) || isfinite(w.arrivals.span))
        cli_table_unit(t, "s");
    cli_table_begin(t, "n", "theta", "nu", "theta_se", "nu_se", "mean_p", "mean_d", "tail_alpha",
                    "tail_alpha_se", "tail_k", "lambda", "span_s", "idc_1s", "idc_10s", "idc_60s");
    cli_table_uint(t, w.stats.n);
    cli_table_real(t, w.stats.theta);
    cli_table_real(t, w.stats.nu);
    cli_table_real(t, w.stats.theta_se);
    cli_table_real(t, w.stats.nu_se);
    cli_table_real(t, w.stats.mean_p);
    cli_table_real(t, w.stats.mean_d);
    cli_table_real(t, w.tail_alpha);
    cli_table_real(t, w.tail_alpha_se);
    cli_table_uint(t, w.tail_k);
    cli_table_real(t, w.arrivals.lambda);
    cli_table_real(t, w.arrivals.span);
    cli_table_real(t, w.arrivals.idc[0]);
    cli_table_real(t, w.arrivals.idc[1]);
    cli_table_real(t, w.arrivals.idc[2]);
    cli_table_end_row(t);
    afd_workload_free(&w);
    return cli_table_finish(t, cmd);
}

const cli_command cli_cmd_theta = {
    .name = "theta",
    .path = "theta",
    .summary = "stationary slot load theta and its spread nu (Lemma 4.1)",
    .usage = "theta WORKLOAD [--csv] [--precision N]",
    .description =
        "Prints one row: n theta nu theta_se nu_se mean_p mean_d tail_alpha tail_alpha_se tail_k\n"
        "lambda span_s idc_1s idc_10s idc_60s.\n"
        "\n"
        "theta = E[Y] and nu = sd(Y) describe Y, the KV-cache token load of one decode\n"
        "slot observed at a random decode step under continuous batching (Lemma 4.1):\n"
        "  theta = E[D P + D(D-1)/2] / E[D],  E[Y^2] = E[D P^2 + P D(D-1) + D(D-1)(2D-1)/6] / E[D].\n"
        "Long requests are seen more often, so theta differs from the naive\n"
        "mean_p + mean_d/2 whenever decode lengths vary or correlate with prompts.\n"
        "An empty prompt (P = 0) counts as one token, in theta, nu and mean_p as in\n"
        "the serving simulator and closed forms: its request still prefills one token.\n"
        "\n"
        "From a trace, theta and nu are the ratio estimators of eq. (15)-(16), computed\n"
        "from exact integer sums, with delta-method standard errors theta_se and nu_se;\n"
        "n counts the requests used (rows with D <= 0 are skipped with a warning).\n"
        "For heavy-tailed decode lengths the nu standard error needs long traces: it is\n"
        "optimistic below about 10^4 requests.\n"
        "tail_alpha is the Hill estimate of the tail index of D over the top tail_k\n"
        "lifetimes (Appendix A.7; nan when the top values are tied, e.g. at a length\n"
        "cap); a warning says when it suggests nu (alpha <= 3) or theta (alpha <= 2)\n"
        "would be infinite without the cap.\n"
        "For the geometric model, theta = MP + MD - 1 and nu^2 = MP(MP-1) + MD(MD-1)\n"
        "(Corollary 4.5); n and the standard errors are 0.  --theta/--nu pass through.\n"
        "\n"
        "Arrivals, from the trace's timestamp column (TIMESTAMP, timestamp (ms),\n"
        "Timestamp, arrived_at, or --time-col/--time-unit; nan without one):\n"
        "lambda = (n - 1) / span_s requests per second over the span of the requests\n"
        "used; idc_1s idc_10s idc_60s are the indices of dispersion of counts,\n"
        "variance / mean of the arrivals in consecutive 1, 10 and 60 s windows (1 for\n"
        "Poisson arrivals, within sqrt(2 / (windows - 1)); bursty traces are far above).",
    .groups = theta_groups,
    .run = run,
};
