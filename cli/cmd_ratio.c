/* cmd_ratio.c: afdkit ratio, the recommended A/F ratio (Theorem 4.4, eq. 12). */
#include <config.h>

#include <math.h>
#include <stdlib.h>

#include "cli.h"

enum { OPT_B = OPT_COMMAND, OPT_R_MAX, OPT_R, OPT_MAX_INSTANCES, OPT_TOP };

static const cli_option ratio_options[] = {
    {"batch", 'B', "N", "micro-batch size per Attention worker (required)", OPT_B},
    {"r-max", 0, "N", "feasible set of the barrier-aware rule: 1..N (default 128)", OPT_R_MAX},
    {"r", 'r', "LIST", "explicit feasible set instead, e.g. 1:16,24,32", OPT_R},
    {"max-instances", 0, "N", "also search xA-yF topologies with x + y <= N (second block)",
     OPT_MAX_INSTANCES},
    {"top", 0, "K", "topologies to list (default 5)", OPT_TOP},
    {NULL, 0, NULL, NULL, 0},
};
static const cli_group ratio_group = {"Options", ratio_options};
static const cli_group *const ratio_groups[] = {&ratio_group, &cli_workload_group, &cli_hw_group,
                                                &cli_output_group, NULL};

struct args {
    double B;
    int64_t r_max, max_n, top;
    cli_list rs;
};

static int own(void *ctx, const cli_option *opt, const char *arg)
{
    struct args *a = ctx;
    if (opt == NULL)
        return cli_usage_error("ratio", "unexpected argument '%s'", arg);
    switch (opt->id) {
    case OPT_B: return cli_batch("ratio", arg, &a->B);
    case OPT_R_MAX: return cli_integer("ratio", opt->name, arg, 1, CLI_LIST_MAX, &a->r_max);
    case OPT_R:
        cli_list_free(&a->rs);
        return cli_list_parse("ratio", opt->name, arg, 1, 1, 1e9, &a->rs);
    case OPT_MAX_INSTANCES: return cli_integer("ratio", opt->name, arg, 2, 4096, &a->max_n);
    case OPT_TOP: return cli_integer("ratio", opt->name, arg, 1, 1000, &a->top);
    }
    return cli_usage_error("ratio", "internal error: unhandled option --%s", opt->name);
}

static void row(cli_table *t, const char *rule, double r, double thr, double tau, unsigned bind,
                double r_cont, double se)
{
    cli_table_str(t, rule);
    cli_table_real(t, r);
    cli_table_real(t, thr);
    cli_table_real(t, tau);
    cli_table_str(t, afd_bind_name(bind));
    cli_table_real(t, r_cont);
    cli_table_real(t, se);
    cli_table_real(t, r_cont - 1.96 * se);
    cli_table_real(t, r_cont + 1.96 * se);
    cli_table_end_row(t);
}

static int topologies(const char *cmd, const afd_system *s, const struct args *a, cli_table *t)
{
    afd_topology *best = calloc((size_t)a->top, sizeof *best);
    size_t n, k;
    afd_status st;
    if (best == NULL)
        return cli_runtime_error(cmd, "out of memory");
    st = afd_topology_search(s, (unsigned)a->max_n, best, (size_t)a->top, &n);
    if (st != AFD_OK) {
        free(best);
        return cli_runtime_error(cmd, "topology search: %s", afd_strerror(st));
    }
    cli_table_begin(t, "x", "y", "r", "thr", "tau", "bind", "thr_mf");
    for (k = 0; k < n; k++) {
        cli_table_uint(t, best[k].x);
        cli_table_uint(t, best[k].y);
        cli_table_real(t, best[k].cycle.r);
        cli_table_real(t, best[k].cycle.thr_g);
        cli_table_real(t, best[k].cycle.tau_g);
        cli_table_str(t, afd_bind_name(best[k].cycle.bind));
        cli_table_real(t, best[k].cycle.thr_mf);
        cli_table_end_row(t);
    }
    free(best);
    return 0;
}

static int run(const cli_command *self, int argc, char **argv)
{
    const char *cmd = self->path;
    struct args a = {NAN, 128, 0, 5, {0, NULL}};
    cli_common c;
    afd_system s;
    afd_renewal_stats ws;
    afd_mf_result mf;
    afd_cycle g;
    afd_error err;
    afd_status st;
    double *feasible = NULL, mf_cont, mf_se, g_cont, g_se, lo, hi;
    size_t nf, k;
    cli_table *t;
    int rc;

    cli_common_init(&c);
    rc = cli_parse_args(self, argc, argv, &c, own, &a);
    if (rc != CLI_CONTINUE)
        goto out;
    if (isnan(a.B)) {
        rc = cli_usage_error(cmd, "-B N is required");
        goto out;
    }
    if ((rc = cli_system_load(cmd, &c, a.B, &s, &ws)) != 0)
        goto out;

    st = afd_ratio_mf(&s, &mf, &err);
    if (st != AFD_OK) {
        rc = cli_input_error(cmd, "%s", err.text[0] != '\0' ? err.text : afd_strerror(st));
        goto out;
    }
    if (a.rs.n > 0) {
        feasible = a.rs.v;
        nf = a.rs.n;
    } else {
        feasible = malloc((size_t)a.r_max * sizeof *feasible);
        if (feasible == NULL) {
            rc = cli_runtime_error(cmd, "out of memory");
            goto out;
        }
        for (k = 0; k < (size_t)a.r_max; k++)
            feasible[k] = (double)(k + 1);
        nf = (size_t)a.r_max;
    }
    for (k = 0, lo = hi = feasible[0]; k < nf; k++) {
        lo = feasible[k] < lo ? feasible[k] : lo;
        hi = feasible[k] > hi ? feasible[k] : hi;
    }
    st = afd_ratio_g(&s, feasible, nf, &g);
    if (st == AFD_OK)
        st = afd_ratio_se(&s, 'm', 0, lo, hi, ws.theta_se, ws.nu_se, ws.cov_theta_nu, &mf_cont,
                          &mf_se);
    if (st == AFD_OK)
        st = afd_ratio_se(&s, 'g', g.r, lo, hi, ws.theta_se, ws.nu_se, ws.cov_theta_nu, &g_cont,
                          &g_se);
    if (st != AFD_OK) {
        rc = cli_runtime_error(cmd, "barrier-aware rule: %s", afd_strerror(st));
        goto out;
    }

    if (mf.r < 1)
        cli_warn(cmd, "r*_mf = %.4g < 1: the FFN binds even with one Attention instance per "
                      "FFN; see xA-yF topologies with --max-instances",
                 mf.r);
    if (g.r == hi && nf > 1)
        cli_warn(cmd, "the barrier-aware optimum r = %.0f is the largest feasible value; "
                      "raise --r-max",
                 g.r);

    t = cli_table_new(&c.out);
    if (t == NULL) {
        rc = cli_runtime_error(cmd, "out of memory");
        goto out;
    }
    cli_table_provenance(t);
    cli_table_begin(t, "rule", "r", "thr", "tau", "bind", "r_cont", "r_se", "r_lo", "r_hi");
    {
        afd_cycle at_mf;
        afd_cycle_eval(&s, mf.r, &at_mf);
        row(t, "mf", mf.r, mf.thr, mf.tau, at_mf.bind, mf_cont, mf_se);
    }
    row(t, "g", g.r, g.thr_g, g.tau_g, g.bind, g_cont, g_se);
    if (a.max_n > 0 && (rc = topologies(cmd, &s, &a, t)) != 0) {
        cli_table_discard(t);
        goto out;
    }
    rc = cli_table_finish(t, cmd);
out:
    if (feasible != a.rs.v)
        free(feasible);
    cli_list_free(&a.rs);
    return rc;
}

const cli_command cli_cmd_ratio = {
    .name = "ratio",
    .path = "ratio",
    .summary = "recommended Attention/FFN ratio: mean-field and barrier-aware rules",
    .usage = "ratio WORKLOAD HARDWARE -B N [--r-max N | --r LIST] [--max-instances N]",
    .description =
        "Prints one row per rule: rule r thr tau bind r_cont r_se r_lo r_hi.\n"
        "\n"
        "rule mf: the mean-field optimum of Theorem 4.4, a real r: the best candidate of\n"
        "  eq. (10) under tau_mf = max(mu_A, alpha_c rB + beta_c, alpha_f rB + beta_f).\n"
        "rule g:  the barrier-aware optimum of eq. (12), the integer r of the feasible set\n"
        "  maximising Thr_G = rB / ((r+1) tau_G), where tau_G (eq. 9) adds the expected\n"
        "  excess of the slowest of r Attention workers (Gaussian order statistics).\n"
        "thr is the throughput per instance (tokens per time unit of the coefficients),\n"
        "tau the cycle time, bind the stage(s) that set tau_mf at r (attention,\n"
        "communication, ffn; '+' joins ties, as at a balanced optimum).\n"
        "r_cont is the continuous optimum (for g: the real r maximising Thr_G), r_se its\n"
        "delta-method standard error from the trace estimator's theta_se, nu_se and\n"
        "their covariance, and [r_lo, r_hi] = r_cont -+ 1.96 r_se a 95% interval: if it\n"
        "is wide, the trace is too short to pin the ratio down.  Closed-form workloads\n"
        "have r_se = 0.\n"
        "\n"
        "With --max-instances N a second block lists the best xA-yF topologies with\n"
        "x + y <= N (r = x/y need not be an integer: 7A-2F is r = 3.5), the barrier\n"
        "across the x Attention workers: x y r thr tau bind thr_mf.",
    .groups = ratio_groups,
    .run = run,
};
