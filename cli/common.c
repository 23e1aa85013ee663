/* common.c: the argument loop every command shares. */
#include <config.h>

#include "cli.h"

void cli_common_init(cli_common *c)
{
    cli_workload_init(&c->wl);
    cli_hw_init(&c->hw);
    cli_output_init(&c->out);
}

int cli_parse_args(const cli_command *self, int argc, char **argv, cli_common *common,
                   int (*own)(void *ctx, const cli_option *opt, const char *arg), void *ctx)
{
    const char *cmd = self->path;
    cli_parser p;
    const cli_option *opt;
    const char *arg;
    int rc;

    cli_parser_init(&p, self, argc, argv);
    while ((rc = cli_next(&p, &opt, &arg)) != CLI_DONE) {
        if (rc == CLI_HELP) {
            cli_print_help(self);
            return 0;
        }
        if (rc == CLI_ERROR)
            return EXIT_USAGE;
        if (rc == CLI_POSITIONAL)
            rc = own != NULL ? own(ctx, NULL, arg)
                             : cli_usage_error(cmd, "unexpected argument '%s'", arg);
        else if (opt->id >= OPT_COMMAND)
            rc = own(ctx, opt, arg);
        else if (opt->id >= OPT_HW)
            rc = cli_hw_option(cmd, &common->hw, opt, arg);
        else if (opt->id >= OPT_CSV)
            rc = cli_output_option(cmd, &common->out, opt, arg);
        else
            rc = cli_workload_option(cmd, &common->wl, opt, arg);
        if (rc != 0)
            return rc;
    }
    return CLI_CONTINUE;
}

int cli_system_load(const char *cmd, const cli_common *c, double B, afd_system *s,
                    afd_renewal_stats *stats)
{
    return cli_system_load_hw(cmd, c, NULL, B, s, stats);
}

int cli_system_load_hw(const char *cmd, const cli_common *c, const afd_hw *hw, double B,
                       afd_system *s, afd_renewal_stats *stats)
{
    afd_workload w;
    int rc = 0;
    if (hw != NULL)
        s->hw = *hw;
    if ((hw == NULL && (rc = cli_hw_load(cmd, &c->hw, &s->hw)) != 0) ||
        (rc = cli_workload_load(cmd, &c->wl, CLI_WL_ANY, 0, &c->out, &w)) != 0)
        return rc;
    cli_note_fit(cmd, hw == NULL ? c->hw.hw : NULL, &s->hw, CLI_LAWS_AFD);
    s->B = (unsigned)B;
    s->theta = w.stats.theta;
    s->nu = w.stats.nu;
    if (stats != NULL)
        *stats = w.stats;
    afd_workload_free(&w);
    return 0;
}
