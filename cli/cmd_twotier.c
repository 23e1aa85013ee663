/* cmd_twotier.c: afdkit twotier, TTFT capacity of one prefill pool against
 * LP/HP splits, and attainment against a scale on the SLO
 * (libanalytic/serving/afd_twotier.h). */
#include <config.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

enum {
    OPT_INSTANCES = OPT_COMMAND, OPT_SLO, OPT_THRESHOLD, OPT_TARGET, OPT_LAMBDA, OPT_SCALE
};

static const cli_option tt_options[] = {
    {"instances", 'N', "N", "instances to split between LP and HP (1..64, required)",
     OPT_INSTANCES},
    {"ttft-slo", 0, "T", "TTFT SLO: 1s, 800ms (required)", OPT_SLO},
    {"threshold", 0, "X", "offload threshold: LP offloads after waiting T - X (required)",
     OPT_THRESHOLD},
    {"target", 0, "P", "attainment that defines capacity (default 0.9)", OPT_TARGET},
    {"lambda", 'l', "L", "with --slo-scale: the arrival rate of the sweep", OPT_LAMBDA},
    {"slo-scale", 0, "LIST", "factors on T and X, e.g. 0.25,0.5,1,2 (prints the sweep)",
     OPT_SCALE},
    {NULL, 0, NULL, NULL, 0},
};
static const cli_group tt_group = {"Options", tt_options};
static const cli_group *const tt_groups[] = {&tt_group, &cli_service_group, &cli_output_group,
                                             NULL};

typedef struct args {
    const char *slo, *threshold, *lambda;
    cli_service_args svc;
    int64_t n;
    double target;
    cli_list scale;
} args;

static int own(void *ctx, const cli_option *opt, const char *arg)
{
    args *a = ctx;
    const char *cmd = "twotier";
    char ex[200];
    if (opt == NULL)
        return cli_usage_error(cmd, "unexpected argument '%s'", cli_excerpt(arg, ex, sizeof ex));
    if (CLI_IS_SERVICE_OPTION(opt->id))
        return cli_service_option(&a->svc, opt, arg);
    switch (opt->id) {
    case OPT_INSTANCES:
        return cli_integer(cmd, opt->name, arg, 1, 64, &a->n);
    case OPT_SLO:
        a->slo = arg;
        return 0;
    case OPT_THRESHOLD:
        a->threshold = arg;
        return 0;
    case OPT_LAMBDA:
        a->lambda = arg;
        return 0;
    case OPT_TARGET: {
        int rc = cli_real(cmd, opt->name, arg, &a->target);
        if (rc == 0 && !(a->target > 0 && a->target < 1))
            rc = cli_usage_error(cmd, "--target must be in (0, 1): '%s'",
                                 cli_excerpt(arg, ex, sizeof ex));
        return rc;
    }
    case OPT_SCALE:
        cli_list_free(&a->scale);
        return cli_list_parse(cmd, opt->name, arg, 0, 1e-6, 1e6, &a->scale);
    default:
        return cli_usage_error(cmd, "internal error: unhandled option --%s", opt->name);
    }
}

static int get_time(const char *cmd, const char *opt, const char *arg, const char *unit, double *v)
{
    char ex[200];
    int rc = cli_time(cmd, opt, arg, unit, v);
    if (rc == 0 && !(*v > 0 && isfinite(*v)))
        rc = cli_usage_error(cmd, "--%s must be > 0: '%s'", opt, cli_excerpt(arg, ex, sizeof ex));
    return rc;
}

static int run(const cli_command *self, int argc, char **argv)
{
    const char *cmd = self->path, *unit = "s";
    cli_common c;
    args a;
    afd_hw hw;
    afd_workload w;
    afd_svc_law *law = NULL;
    double T, X, lambda = NAN, value;
    int rc;
    cli_table *t = NULL;
    afd_status st;
    size_t k;

    memset(&a, 0, sizeof a);
    memset(&w, 0, sizeof w);
    a.target = 0.9;
    cli_common_init(&c);
    rc = cli_parse_args(self, argc, argv, &c, own, &a);
    if (rc != CLI_CONTINUE)
        goto out0;
    if (a.n == 0 || a.slo == NULL || a.threshold == NULL) {
        rc = cli_usage_error(cmd, "%s is required",
                             a.n == 0 ? "--instances N" : a.slo == NULL ? "--ttft-slo T"
                                                                        : "--threshold X");
        goto out0;
    }
    if ((a.scale.n > 0) != (a.lambda != NULL)) {
        rc = cli_usage_error(cmd, "--slo-scale and --lambda go together");
        goto out0;
    }
    if ((rc = cli_service_setup(cmd, &a.svc, &c, &hw, &unit)) != 0)
        goto out0;
    if ((rc = get_time(cmd, "ttft-slo", a.slo, unit, &T)) != 0 ||
        (rc = get_time(cmd, "threshold", a.threshold, unit, &X)) != 0)
        goto out0;
    if (X > T) {
        rc = cli_usage_error(cmd, "--threshold must not exceed --ttft-slo");
        goto out0;
    }
    if (a.lambda != NULL) {
        if ((rc = cli_rate(cmd, "lambda", a.lambda, unit, &lambda)) != 0)
            goto out0;
        if (!(lambda > 0)) {
            rc = cli_usage_error(cmd, "--lambda must be > 0: '%s'", a.lambda);
            goto out0;
        }
    }
    if ((rc = cli_service_law(cmd, &a.svc, &c, &hw, unit, &w, &value, &law)) != 0)
        goto out;

    t = cli_table_new(&c.out);
    if (t == NULL) {
        rc = cli_runtime_error(cmd, "out of memory");
        goto out;
    }
    cli_table_provenance(t);
    if (unit[0] != '\0')
        cli_table_unit(t, "%s", unit);
    cli_table_meta(t, "target", "%g", a.target);
    cli_table_begin(t, "lp", "hp", "capacity", "p_offload", "rho_hp");
    for (k = 0; k < (size_t)a.n; k++) {
        afd_twotier m = {law, (int)(a.n - (int64_t)k), (int)k, T, X};
        afd_twotier_result r;
        double cap;
        st = afd_twotier_capacity(&m, a.target, &cap);
        if (st == AFD_OK && cap > 0)
            st = afd_twotier_attainment(&m, cap, &r);
        else
            r.p_off = r.rho_hp = NAN;
        if (st != AFD_OK) {
            rc = cli_runtime_error(cmd, "lp = %d, hp = %d: %s", m.lp, m.hp, afd_strerror(st));
            goto out;
        }
        cli_table_int(t, m.lp);
        cli_table_int(t, m.hp);
        cli_table_real(t, cap);
        cli_table_real(t, r.p_off);
        cli_table_real(t, r.rho_hp);
        cli_table_end_row(t);
    }
    if (a.scale.n > 0) {
        size_t i;
        cli_table_begin(t, "scale", "lp", "hp", "attainment", "p_offload");
        for (i = 0; i < a.scale.n; i++)
            for (k = 0; k < (size_t)a.n; k++) {
                afd_twotier m = {law, (int)(a.n - (int64_t)k), (int)k, T * a.scale.v[i],
                                 X * a.scale.v[i]};
                afd_twotier_result r;
                st = afd_twotier_attainment(&m, lambda, &r);
                if (st != AFD_OK) {
                    rc = cli_runtime_error(cmd, "%s", afd_strerror(st));
                    goto out;
                }
                cli_table_real(t, a.scale.v[i]);
                cli_table_int(t, m.lp);
                cli_table_int(t, m.hp);
                cli_table_real(t, r.attainment);
                cli_table_real(t, r.p_off);
                cli_table_end_row(t);
            }
    }
    rc = cli_table_finish(t, cmd);
    t = NULL;
out:
    if (t != NULL)
        cli_table_discard(t);
    afd_svc_law_free(law);
    afd_workload_free(&w);
out0:
    cli_list_free(&a.scale);
    return rc;
}

const cli_command cli_cmd_twotier = {
    .name = "twotier",
    .path = "twotier",
    .summary = "TTFT capacity of one prefill pool against LP/HP splits (closed forms)",
    .usage = "twotier --instances N --ttft-slo T --threshold X (--service S | --service-exp M | "
             "--trace FILE --hw FILE) [--target P] [--lambda L --slo-scale LIST]",
    .description =
        "Prints one row per split of N instances into lp + hp (hp = 0 is one FCFS pool):\n"
        "  lp hp capacity p_offload rho_hp\n"
        "capacity is the largest arrival rate whose TTFT attainment is at least --target\n"
        "(default 0.9); p_offload and rho_hp (the HP utilization) are at that rate.  With\n"
        "--lambda L --slo-scale LIST a second block: scale lp hp attainment p_offload, the\n"
        "attainment at rate L with T and X both multiplied by the scale.\n"
        "\n"
        "A prefill-only model (no decode interference, no TBT): the pool is M/G/c FCFS;\n"
        "an LP pool offloads a request after it has waited T - X (M/G/c+D), and the HP\n"
        "pool serves the offloaded stream FCFS with X left\n"
        "(libanalytic/serving/afd_twotier.h).  M/G/c waits are M/M/c waits stretched\n"
        "by (1 + cs^2)/2, exact for exponential service; docs/queues.md gives the\n"
        "errors of that approximation.  The offloads come in runs while the LP pool is\n"
        "congested: the HP pool is GI/G/c fed by that renewal stream.\n"
        "Times take units (2s, 150ms), rates too (5/s, 300/min); bare numbers are in the\n"
        "unit of --hw, or seconds without it; a suffix against --hw in cycles or without\n"
        "a unit is refused.",
    .groups = tt_groups,
    .run = run,
};
