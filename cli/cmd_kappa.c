/* cmd_kappa.c: afdkit kappa, the expected maximum of r standard normals (eq. 5). */
#include <config.h>

#include <math.h>

#include "cli.h"

enum { OPT_R = OPT_COMMAND };

static const cli_option kappa_options[] = {
    {"r", 'r', "LIST", "values of r, e.g. 1,2,4:8,16:64:8 (integers >= 1)", OPT_R},
    {NULL, 0, NULL, NULL, 0},
};
static const cli_group kappa_group = {"Options", kappa_options};
static const cli_group *const kappa_groups[] = {&kappa_group, &cli_output_group, NULL};

static int own(void *ctx, const cli_option *opt, const char *arg)
{
    cli_list *rs = ctx;
    if (opt == NULL)
        return cli_usage_error("kappa", "unexpected argument '%s'", arg);
    cli_list_free(rs);
    return cli_list_parse("kappa", opt->name, arg, 1, 1, AFD_KAPPA_R_MAX, rs);
}

static int run(const cli_command *self, int argc, char **argv)
{
    const char *cmd = self->path;
    cli_common c;
    cli_list rs = {0, NULL};
    cli_table *t;
    cli_progress prog;
    size_t k;
    int rc;

    cli_common_init(&c);
    rc = cli_parse_args(self, argc, argv, &c, own, &rs);
    if (rc != CLI_CONTINUE) {
        cli_list_free(&rs);
        return rc;
    }
    if (rs.n == 0)
        return cli_usage_error(cmd, "--r LIST is required");

    t = cli_table_new(&c.out);
    if (t == NULL) {
        cli_list_free(&rs);
        return cli_runtime_error(cmd, "out of memory");
    }
    cli_progress_init(&prog, cmd, "computing", c.out.quiet);
    cli_table_provenance(t);
    cli_table_begin(t, "r", "kappa", "abserr");
    for (k = 0; k < rs.n; k++) {
        afd_result res;
        afd_status st = afd_kappa_e(rs.v[k], &res);
        if (st != AFD_OK) {
            cli_progress_end(&prog);
            cli_table_discard(t);
            rc = cli_runtime_error(cmd, "kappa_%.0f: %s", rs.v[k], afd_strerror(st));
            cli_list_free(&rs);
            return rc;
        }
        cli_table_int(t, (long long)rs.v[k]);
        cli_table_real(t, res.val);
        cli_table_real(t, res.err);
        cli_table_end_row(t);
        cli_progress_update(&prog, (double)k + 1, (double)rs.n, "values");
    }
    cli_progress_end(&prog);
    cli_list_free(&rs);
    return cli_table_finish(t, cmd);
}

const cli_command cli_cmd_kappa = {
    .name = "kappa",
    .path = "kappa",
    .summary = "expected maximum of r iid standard normals, kappa_r (eq. 5)",
    .usage = "kappa --r LIST [--csv] [--precision N]",
    .description =
        "Prints one row per r: r kappa abserr.\n"
        "\n"
        "kappa_r = E[max of r iid N(0,1)] sets the barrier overhead of r synchronized\n"
        "Attention workers: E[W] = B theta + sqrt(B) nu kappa_r (Theorem 4.3).\n"
        "Computed by quadrature of int_0^inf (1 - Phi^r) - Phi(-z)^r dz to a relative\n"
        "accuracy better than 1e-12; abserr is the error bound of the quadrature.\n"
        "kappa_1 = 0, kappa_2 = 1/sqrt(pi), and kappa_r ~ sqrt(2 log r) for large r.",
    .groups = kappa_groups,
    .run = run,
};
