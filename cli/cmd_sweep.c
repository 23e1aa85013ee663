/* cmd_sweep.c: afdkit sweep, cycle times and throughput against r. */
#include <config.h>

#include <math.h>

#include "cli.h"

enum { OPT_B = OPT_COMMAND, OPT_R };

static const cli_option sweep_options[] = {
    {"batch", 'B', "N", "micro-batch size per Attention worker (required)", OPT_B},
    {"r", 'r', "LIST", "ratios to evaluate, e.g. 1:64 or 0.5:16:0.5 (required)", OPT_R},
    {NULL, 0, NULL, NULL, 0},
};
static const cli_group sweep_group = {"Options", sweep_options};
static const cli_group *const sweep_groups[] = {&sweep_group,      &cli_workload_group,
                                                &cli_hw_group,     &cli_cost_group,
                                                &cli_output_group, &cli_shard_group,
                                                NULL};

struct args {
    double B;
    cli_list rs;
    cli_cost_args cost;
};

static int own(void *ctx, const cli_option *opt, const char *arg)
{
    struct args *a = ctx;
    if (opt == NULL)
        return cli_usage_error("sweep", "unexpected argument '%s'", arg);
    if (CLI_IS_COST_OPTION(opt->id))
        return cli_cost_option("sweep", &a->cost, opt, arg);
    if (opt->id == OPT_B)
        return cli_batch("sweep", arg, &a->B);
    cli_list_free(&a->rs);
    return cli_list_parse("sweep", opt->name, arg, 0, 1e-9, 1e9, &a->rs);
}

static int run(const cli_command *self, int argc, char **argv)
{
    const char *cmd = self->path;
    struct args a = {NAN, {0, NULL}, {NAN, NAN, NAN, NAN, 0, 0, NAN, NULL, NULL, NULL, 1, 0}};
    cli_common c;
    afd_system s;
    afd_hw est_hw;
    int have_hw = 0;
    cli_table *t;
    size_t k;
    int rc;

    cli_common_init(&c);
    cli_cost_init(&a.cost);
    rc = cli_parse_args(self, argc, argv, &c, own, &a);
    if (rc != CLI_CONTINUE)
        goto out;
    if (isnan(a.B) || a.rs.n == 0) {
        rc = cli_usage_error(cmd, isnan(a.B) ? "-B N is required" : "--r LIST is required");
        goto out;
    }
    if ((rc = cli_cost_devices(cmd, &a.cost, &c.hw, &est_hw, &have_hw)) != 0 ||
        (rc = cli_system_load_hw(cmd, &c, have_hw ? &est_hw : NULL, a.B, &s, NULL)) != 0 ||
        (rc = cli_cost_finish(cmd, &a.cost, &s.hw)) != 0)
        goto out;
    cli_shard_list(&c.out, &a.rs);

    t = cli_table_new(&c.out);
    if (t == NULL) {
        rc = cli_runtime_error(cmd, "out of memory");
        goto out;
    }
    cli_table_provenance(t);
    if (s.hw.unit[0] != '\0')
        cli_table_unit(t, "%s", s.hw.unit);
    {
        const char *extra[5] = {NULL, NULL, NULL, NULL, NULL};
        size_t n = 0;
        if (a.cost.have_price) {
            extra[n++] = "thr_per_dollar";
            extra[n++] = "thr_per_dollar_mf";
        }
        if (a.cost.have_power) {
            extra[n++] = "thr_per_joule";
            extra[n++] = "thr_per_joule_mf";
        }
        cli_table_begin(t, "r", "tau_mf", "thr_mf", "tau_g", "thr_g", "bind", "p_attention",
                        "barrier", "eta_a_mf", "eta_f_mf", "eta_a_g", "eta_f_g", extra[0],
                        extra[1], extra[2], extra[3]);
    }
    for (k = 0; k < a.rs.n; k++) {
        afd_cycle cy;
        afd_status st = afd_cycle_eval(&s, a.rs.v[k], &cy);
        if (st != AFD_OK) {
            cli_table_discard(t);
            rc = cli_runtime_error(cmd, "r = %g: %s", a.rs.v[k], afd_strerror(st));
            goto out;
        }
        cli_table_real(t, cy.r);
        cli_table_real(t, cy.tau_mf);
        cli_table_real(t, cy.thr_mf);
        cli_table_real(t, cy.tau_g);
        cli_table_real(t, cy.thr_g);
        cli_table_str(t, afd_bind_name(cy.bind));
        cli_table_real(t, cy.p_attention);
        cli_table_real(t, cy.barrier);
        cli_table_real(t, cy.eta_a_mf);
        cli_table_real(t, cy.eta_f_mf);
        cli_table_real(t, cy.eta_a_g);
        cli_table_real(t, cy.eta_f_g);
        if (a.cost.have_price) {
            cli_table_real(t, cli_cost_per_dollar(&a.cost, cy.r, s.B, cy.tau_g));
            cli_table_real(t, cli_cost_per_dollar(&a.cost, cy.r, s.B, cy.tau_mf));
        }
        if (a.cost.have_power) {
            cli_table_real(t, cli_cost_per_joule(&a.cost, cy.r, s.B, cy.tau_g));
            cli_table_real(t, cli_cost_per_joule(&a.cost, cy.r, s.B, cy.tau_mf));
        }
        cli_table_end_row(t);
    }
    rc = cli_table_finish(t, cmd);
out:
    cli_list_free(&a.rs);
    return rc;
}

const cli_command cli_cmd_sweep = {
    .name = "sweep",
    .path = "sweep",
    .summary = "cycle times and throughput per instance against r",
    .usage = "sweep WORKLOAD HARDWARE -B N --r LIST [--price-a X --price-f Y]\n"
             "       [--power-a W --power-f W] [--device-a D --device-f D [--tp T] [--model M]]",
    .description =
        "Prints one row per r: r tau_mf thr_mf tau_g thr_g bind p_attention barrier\n"
        "eta_a_mf eta_f_mf eta_a_g eta_f_g.\n"
        "\n"
        "tau_mf (eq. 8) and tau_g (eq. 9) are the mean-field and Gaussian barrier-aware\n"
        "expected cycle times of an rA-1F bundle; thr_mf and thr_g the throughput per\n"
        "instance rB / ((r+1) tau) (eq. 1, 11), in tokens per time unit of the\n"
        "coefficients.  bind names the largest term of tau_mf; p_attention is the\n"
        "probability that the slowest Attention worker, not communication or FFN, sets\n"
        "the cycle; barrier = (nu/theta) kappa_r / sqrt(B) is the relative overhead of\n"
        "the barrier on the Attention load (Theorem 4.3).  r may be real; the barrier\n"
        "then uses Phi(m)^r, and max(r, 1) workers below 1.  eta_a and eta_f are the\n"
        "idle fractions of an Attention worker and of the FFN that a cycle time implies,\n"
        "1 - mu_A / tau and 1 - t_FFN / tau, for tau_mf and tau_g: the theory beside\n"
        "sim's measured eta_a and eta_f.\n"
        "\n"
        "With --price-a and --price-f: thr_per_dollar and thr_per_dollar_mf, the tokens\n"
        "per dollar of the bundle, 3600 rB / (tau (r price_a + price_f)) with tau in\n"
        "seconds (tau_G and tau_mf; prices per device-hour).  With --power-a and\n"
        "--power-f: thr_per_joule and thr_per_joule_mf, rB / (tau (r power_a + power_f)).\n"
        "--device-a D --device-f D take prices and powers from the device files (times\n"
        "--tp, by default the --hw file's afd_tp, else 1); with --model M the\n"
        "coefficients come from the estimator for the pair.",
    .groups = sweep_groups,
    .run = run,
};
