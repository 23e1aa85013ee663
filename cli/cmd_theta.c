/* cmd_theta.c: afdkit theta, the renewal-reward statistics of Lemma 4.1. */
#include <config.h>

#include "cli.h"

static const cli_group *const theta_groups[] = {&cli_workload_group, &cli_output_group, NULL};

static int run(const cli_command *self, int argc, char **argv)
{
    const char *cmd = self->path;
    cli_workload_args wa;
    cli_output out;
    afd_workload w;
    cli_parser p;
    const cli_option *opt;
    const char *arg;
    cli_table *t;
    int rc;

    cli_workload_init(&wa);
    cli_output_init(&out);
    cli_parser_init(&p, self, argc, argv);
    while ((rc = cli_next(&p, &opt, &arg)) != CLI_DONE) {
        if (rc == CLI_HELP) {
            cli_print_help(self);
            return 0;
        }
        if (rc == CLI_ERROR)
            return EXIT_USAGE;
        if (rc == CLI_POSITIONAL)
            return cli_usage_error(cmd, "unexpected argument '%s'", arg);
        rc = opt->id < OPT_CSV ? cli_workload_option(cmd, &wa, opt, arg)
                               : cli_output_option(cmd, &out, opt, arg);
        if (rc != 0)
            return rc;
    }

    rc = cli_workload_load(cmd, &wa, CLI_WL_ANY, 0, &out, &w);
    if (rc != 0)
        return rc;

    t = cli_table_new(&out);
    if (t == NULL)
        return cli_runtime_error(cmd, "out of memory");
    cli_table_provenance(t);
    cli_table_meta(t, "workload", "%s", afd_workload_kind_name(w.kind));
    cli_table_begin(t, "n", "theta", "nu", "theta_se", "nu_se", "mean_p", "mean_d", NULL);
    cli_table_uint(t, w.stats.n);
    cli_table_real(t, w.stats.theta);
    cli_table_real(t, w.stats.nu);
    cli_table_real(t, w.stats.theta_se);
    cli_table_real(t, w.stats.nu_se);
    cli_table_real(t, w.stats.mean_p);
    cli_table_real(t, w.stats.mean_d);
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
        "Prints one row: n theta nu theta_se nu_se mean_p mean_d.\n"
        "\n"
        "theta = E[Y] and nu = sd(Y) describe Y, the KV-cache token load of one decode\n"
        "slot observed at a random decode step under continuous batching (Lemma 4.1):\n"
        "  theta = E[D P + D(D-1)/2] / E[D],  E[Y^2] = E[D P^2 + P D(D-1) + D(D-1)(2D-1)/6] / E[D].\n"
        "Long requests are seen more often, so theta exceeds the naive mean_p + mean_d/2\n"
        "whenever decode lengths vary.\n"
        "\n"
        "From a trace, theta and nu are the ratio estimators of eq. (15)-(16), computed\n"
        "from exact integer sums, with delta-method standard errors theta_se and nu_se;\n"
        "n counts the requests used (rows with D <= 0 are skipped with a warning).\n"
        "For the geometric model, theta = MP + MD - 1 and nu^2 = MP(MP-1) + MD(MD-1)\n"
        "(Corollary 4.5); n and the standard errors are 0.  --theta/--nu pass through.",
    .groups = theta_groups,
    .run = run,
};
