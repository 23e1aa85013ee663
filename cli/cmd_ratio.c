/* cmd_ratio.c: afdkit ratio, the recommended A/F ratio (Theorem 4.4, eq. 12). */
#include <config.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

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
static const cli_group *const ratio_groups[] = {&ratio_group,    &cli_workload_group,
                                                &cli_hw_group,   &cli_cost_group,
                                                &cli_output_group, NULL};

struct args {
    double B;
    int64_t r_max, max_n, top;
    cli_list rs;
    cli_cost_args cost;
};

static int own(void *ctx, const cli_option *opt, const char *arg)
{
    struct args *a = ctx;
    if (opt == NULL)
        return cli_usage_error("ratio", "unexpected argument '%s'", arg);
    if (CLI_IS_COST_OPTION(opt->id))
        return cli_cost_option("ratio", &a->cost, opt, arg);
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

static void row(cli_table *t, const cli_cost_args *cost, double B, const char *rule, double r,
                double thr, double tau, unsigned bind, double r_cont, double se)
{
    double lo, hi;
    afd_interval95(r_cont, se, &lo, &hi);
    cli_table_str(t, rule);
    cli_table_real(t, r);
    cli_table_real(t, thr);
    cli_table_real(t, tau);
    cli_table_str(t, afd_bind_name(bind));
    cli_table_real(t, r_cont);
    cli_table_real(t, se);
    cli_table_real(t, lo);
    cli_table_real(t, hi);
    if (cost->have_price)
        cli_table_real(t, cli_cost_per_dollar(cost, r, B, tau));
    if (cost->have_power)
        cli_table_real(t, cli_cost_per_joule(cost, r, B, tau));
    cli_table_end_row(t);
}

/* The barrier-aware integer ratio maximising tokens per unit of cost when
 * the FFN device costs w times an Attention device (afd_ratio.h), with its
 * continuous optimum and standard error. */
static int cost_row(const char *cmd, cli_table *t, const afd_system *s, const cli_cost_args *cost,
                    const char *rule, double w, const double *feasible, size_t nf, double lo,
                    double hi, const afd_renewal_stats *ws)
{
    afd_cycle best;
    double r_cont, se;
    afd_status st = afd_ratio_cost_g(s, w, feasible, nf, &best, NULL);
    if (st == AFD_OK)
        st = afd_ratio_cost_se(s, w, 'g', best.r, lo, hi, ws->theta_se, ws->nu_se,
                               ws->cov_theta_nu, &r_cont, &se);
    if (st != AFD_OK)
        return cli_runtime_error(cmd, "rule %s: %s", rule, afd_strerror(st));
    if (best.r == hi && nf > 1)
        cli_warn(cmd, "the %s optimum r = %.0f is the largest feasible value; raise --r-max",
                 rule, best.r);
    row(t, cost, s->B, rule, best.r, best.thr_g, best.tau_g, best.bind, r_cont, se);
    return 0;
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
    struct args a = {NAN, 128, 0, 5, {0, NULL}, {NAN, NAN, NAN, NAN, 0, 0, NAN, NULL, NULL, NULL, 1, 0}};
    cli_common c;
    afd_system s;
    afd_hw est_hw;
    int have_hw = 0;
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
    cli_cost_init(&a.cost);
    rc = cli_parse_args(self, argc, argv, &c, own, &a);
    if (rc != CLI_CONTINUE)
        goto out;
    if (isnan(a.B)) {
        rc = cli_usage_error(cmd, "-B N is required");
        goto out;
    }
    if ((rc = cli_cost_devices(cmd, &a.cost, &c.hw, &est_hw, &have_hw)) != 0 ||
        (rc = cli_system_load_hw(cmd, &c, have_hw ? &est_hw : NULL, a.B, &s, &ws)) != 0 ||
        (rc = cli_cost_finish(cmd, &a.cost, &s.hw)) != 0)
        goto out;

    st = afd_ratio_mf(&s, &mf, &err);
    if (st != AFD_OK) {
        /* a numerical failure exits as it does in the other commands */
        const char *why = err.text[0] != '\0' ? err.text : afd_strerror(st);
        rc = cli_exit_code(st) == EXIT_RUNTIME ? cli_runtime_error(cmd, "%s", why)
                                               : cli_input_error(cmd, "%s", why);
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
    if (s.hw.unit[0] != '\0')
        cli_table_unit(t, "%s", s.hw.unit);
    {
        static const char *const cols[] = {"rule", "r",      "thr",  "tau",
                                           "bind", "r_cont", "r_se", "r_lo",
                                           "r_hi", NULL,     NULL,   NULL};
        const char *names[12];
        size_t n = 9;
        memcpy(names, cols, sizeof names);
        if (a.cost.have_price)
            names[n++] = "thr_per_dollar";
        if (a.cost.have_power)
            names[n++] = "thr_per_joule";
        cli_table_begin(t, names[0], names[1], names[2], names[3], names[4], names[5], names[6],
                        names[7], names[8], names[9], names[10]);
    }
    {
        afd_cycle at_mf;
        afd_cycle_eval(&s, mf.r, &at_mf);
        row(t, &a.cost, s.B, "mf", mf.r, mf.thr, mf.tau, at_mf.bind, mf_cont, mf_se);
    }
    row(t, &a.cost, s.B, "g", g.r, g.thr_g, g.tau_g, g.bind, g_cont, g_se);
    if ((a.cost.have_price &&
         (rc = cost_row(cmd, t, &s, &a.cost, "cost", a.cost.price_f / a.cost.price_a, feasible,
                        nf, lo, hi, &ws)) != 0) ||
        (a.cost.have_power &&
         (rc = cost_row(cmd, t, &s, &a.cost, "energy", a.cost.power_f / a.cost.power_a,
                        feasible, nf, lo, hi, &ws)) != 0)) {
        cli_table_discard(t);
        goto out;
    }
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
    .usage = "ratio WORKLOAD HARDWARE -B N [--r-max N | --r LIST] [--max-instances N]\n"
             "       [--price-a X --price-f Y] [--power-a W --power-f W]\n"
             "       [--device-a D --device-f D [--tp T] [--model M]]",
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
        "rule cost (with --price-a and --price-f): the integer r of the feasible set\n"
        "  maximising tokens per dollar of the bundle, rB / (tau_G (r price_a + price_f)),\n"
        "  which depends on the prices only through w = price_f / price_a; equal prices\n"
        "  give the ratio of rule g.  Under the mean field the optimum stays at the\n"
        "  balance point for w up to r_0^2 alpha_f B / beta_f and never falls below it.\n"
        "rule energy (with --power-a and --power-f): the same with watts, tokens per\n"
        "  joule.  Every row then gains thr_per_dollar (tokens per dollar; prices per\n"
        "  hour) and thr_per_joule columns at its r and tau.  Devices are paid and\n"
        "  powered while provisioned, busy or idle.  A latency model in cycles gives\n"
        "  tokens per cycle per unit of cost instead (with a warning).\n"
        "--device-a D --device-f D take the prices and powers from the device files\n"
        "  (price_per_hour, power_w, times --tp devices per instance, by default the\n"
        "  --hw file's afd_tp, else 1; explicit options win);\n"
        "  with --model M the six coefficients come from the estimator for that pair,\n"
        "  Attention on D_a and FFN on D_f (heterogeneous AFD), instead of --hw.\n"
        "\n"
        "With --max-instances N a second block lists the best xA-yF topologies with\n"
        "x + y <= N (r = x/y need not be an integer: 7A-2F is r = 3.5), the barrier\n"
        "across the x Attention workers: x y r thr tau bind thr_mf.",
    .groups = ratio_groups,
    .run = run,
};
