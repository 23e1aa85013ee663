/* cmd_offload.c: afdkit offload, the prefill queue with a deadline on the
 * wait: how many requests are offloaded (libanalytic/queue/afd_deadline.h,
 * montecarlo/queue/afd_dlsim.h). */
#include <config.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "afd_dlsim.h"
#include "afd_mc.h"
#include "cli.h"

enum {
    OPT_LAMBDA = OPT_COMMAND, OPT_C, OPT_DEADLINE, OPT_METHOD,
    OPT_POLICY, OPT_SLO, OPT_PERCENTILE, OPT_CUSTOMERS, OPT_WARMUP, OPT_REPS, OPT_SEED, OPT_THREADS
};

enum { M_DEFAULT = 0, M_CLOSED, M_NUMERIC, M_SIM };

static const cli_option offload_options[] = {
    {"lambda", 'l', "L", "arrival rate (Poisson): 5/s, 300/min, or per time unit (required)",
     OPT_LAMBDA},
    {"c", 'c', "C", "servers (prefill instances), integer >= 1 (default 1)", OPT_C},
    {"deadline", 'd', "D", "longest wait before a request is offloaded: 2s, 150ms (required)",
     OPT_DEADLINE},
    {"method", 'm', "M", "closed | numeric | sim (default: closed for --service-exp, else "
                         "numeric)",
     OPT_METHOD},
    {"policy", 0, "P", "fcfs | sjf | edf | slack (sjf and slack need --method sim)", OPT_POLICY},
    {"slo", 0, "T", "TTFT SLO behind edf and slack priorities (default: the deadline)", OPT_SLO},
    {"percentile", 'p', "P", "order of the wait quantile column (default 0.9)", OPT_PERCENTILE},
    {"customers", 'n', "N", "sim: customers measured per run (default 200000)", OPT_CUSTOMERS},
    {"warmup", 0, "N", "sim: customers discarded first in each run (default customers/10)",
     OPT_WARMUP},
    {"replications", 'R', "R", "sim: independent runs behind the standard errors (default 16)",
     OPT_REPS},
    {"seed", 's', "S", "sim: seed of the Philox streams (default 1)", OPT_SEED},
    {"threads", 0, "N", CLI_THREADS_HELP, OPT_THREADS},
    {NULL, 0, NULL, NULL, 0},
};
static const cli_group offload_group = {"Options", offload_options};
static const cli_group *const offload_groups[] = {&offload_group, &cli_service_group,
                                                  &cli_output_group, NULL};

typedef struct args {
    const char *lambda, *deadline, *slo;
    cli_service_args svc;
    int64_t c, customers, warmup, reps, seed;
    int have_warmup, method;
    unsigned threads;
    afd_order policy;
    double pct;
} args;

static int own(void *ctx, const cli_option *opt, const char *arg)
{
    args *a = ctx;
    const char *cmd = "offload";
    char ex[200];
    if (opt == NULL)
        return cli_usage_error(cmd, "unexpected argument '%s'", cli_excerpt(arg, ex, sizeof ex));
    if (CLI_IS_SERVICE_OPTION(opt->id))
        return cli_service_option(&a->svc, opt, arg);
    switch (opt->id) {
    case OPT_LAMBDA:
        a->lambda = arg;
        return 0;
    case OPT_DEADLINE:
        a->deadline = arg;
        return 0;
    case OPT_SLO:
        a->slo = arg;
        return 0;
    case OPT_C:
        return cli_integer(cmd, opt->name, arg, 1, AFD_DLSIM_MAX_SERVERS, &a->c);
    case OPT_CUSTOMERS:
        return cli_integer(cmd, opt->name, arg, 1, (int64_t)AFD_DLSIM_MAX_CUSTOMERS,
                           &a->customers);
    case OPT_WARMUP:
        a->have_warmup = 1;
        return cli_integer(cmd, opt->name, arg, 0, (int64_t)AFD_DLSIM_MAX_CUSTOMERS, &a->warmup);
    case OPT_REPS:
        return cli_integer(cmd, opt->name, arg, 2, 100000, &a->reps);
    case OPT_SEED:
        return cli_integer(cmd, opt->name, arg, 0, INT64_MAX, &a->seed);
    case OPT_THREADS:
        return cli_threads(cmd, opt->name, arg, &a->threads);
    case OPT_PERCENTILE: {
        int rc = cli_real(cmd, opt->name, arg, &a->pct);
        if (rc == 0 && !(a->pct > 0 && a->pct < 1))
            rc = cli_usage_error(cmd, "--percentile must be in (0, 1): '%s'",
                                 cli_excerpt(arg, ex, sizeof ex));
        return rc;
    }
    case OPT_METHOD:
        if (strcmp(arg, "closed") == 0)
            a->method = M_CLOSED;
        else if (strcmp(arg, "numeric") == 0)
            a->method = M_NUMERIC;
        else if (strcmp(arg, "sim") == 0)
            a->method = M_SIM;
        else
            return cli_usage_error(cmd, "--method: unknown method '%s' (closed, numeric, sim)",
                                   cli_excerpt(arg, ex, sizeof ex));
        return 0;
    case OPT_POLICY:
        if (afd_order_parse(arg, &a->policy) != AFD_OK)
            return cli_usage_error(cmd, "--policy: unknown policy '%s' (fcfs, sjf, edf, slack)",
                                   cli_excerpt(arg, ex, sizeof ex));
        return 0;
    default:
        return cli_usage_error(cmd, "internal error: unhandled option --%s", opt->name);
    }
}

static int positive_time(const char *cmd, const char *opt, const char *arg, const char *unit,
                         int allow_zero, double *v)
{
    char ex[200];
    int rc = cli_time(cmd, opt, arg, unit, v);
    if (rc != 0)
        return rc;
    if (allow_zero ? !(*v >= 0) : !(*v > 0))
        return cli_usage_error(cmd, "--%s must be %s 0: '%s'", opt, allow_zero ? ">=" : ">",
                               cli_excerpt(arg, ex, sizeof ex));
    return 0;
}

static void cell(cli_table *t, double v, double se, int with_se)
{
    cli_table_real(t, v);
    if (with_se)
        cli_table_real(t, se);
}

static void run_progress(void *ctx, uint64_t done, uint64_t total)
{
    cli_progress_update(ctx, (double)done, (double)total, "runs");
}

static int run(const cli_command *self, int argc, char **argv)
{
    const char *cmd = self->path, *unit = "s";
    cli_common c;
    args a;
    afd_hw hw;
    afd_workload w;
    afd_svc_law *law = NULL;
    double lambda, d, value, svc = NAN, mean = NAN, slo = 0, *samples = NULL, *keys = NULL;
    uint64_t rows = 0;
    int rc;
    char qname[64], qse[64];
    cli_table *t = NULL;
    afd_status st;

    memset(&a, 0, sizeof a);
    memset(&w, 0, sizeof w);
    a.c = 1;
    a.customers = 200000;
    a.reps = 16;
    a.seed = 1;
    a.pct = 0.9;
    cli_common_init(&c);
    rc = cli_parse_args(self, argc, argv, &c, own, &a);
    if (rc != CLI_CONTINUE)
        return rc;

    if (a.lambda == NULL || a.deadline == NULL)
        return cli_usage_error(cmd, "%s is required",
                               a.lambda == NULL ? "--lambda L" : "--deadline D");
    if ((rc = cli_service_setup(cmd, &a.svc, &c, &hw, &unit)) != 0)
        return rc;
    if ((rc = cli_rate(cmd, "lambda", a.lambda, unit, &lambda)) != 0)
        return rc;
    if (!(lambda > 0))
        return cli_usage_error(cmd, "--lambda must be > 0: '%s'", a.lambda);
    if ((rc = positive_time(cmd, "deadline", a.deadline, unit, 1, &d)) != 0)
        return rc;
    if (!isfinite(d))
        return cli_usage_error(cmd, "--deadline must be finite: '%s'", a.deadline);
    if (a.slo != NULL && (rc = positive_time(cmd, "slo", a.slo, unit, 0, &slo)) != 0)
        return rc;
    if (a.method == M_DEFAULT)
        a.method = a.svc.service_exp != NULL ? M_CLOSED : M_NUMERIC;
    if (a.method != M_SIM && (a.policy == AFD_ORDER_SJF || a.policy == AFD_ORDER_SLACK))
        return cli_usage_error(cmd, "--policy %s has no closed form with deadlines: use "
                                    "--method sim",
                               afd_order_name(a.policy));
    if (a.method == M_CLOSED && a.svc.service_exp == NULL)
        return cli_usage_error(cmd, "--method closed needs exponential service "
                                    "(--service-exp MEAN): M/G/c+D has no closed form; use "
                                    "--method numeric or sim");

    if ((rc = cli_service_law(cmd, &a.svc, &c, &hw, unit, &w, &value, &law)) != 0)
        goto out;
    if (a.svc.service != NULL)
        svc = value;
    else if (a.svc.service_exp != NULL)
        mean = value;
    else {
        /* The simulator replays each row's own prefill time and key. */
        size_t k;
        rows = w.n_kept;
        samples = malloc(rows * sizeof *samples);
        keys = malloc(rows * sizeof *keys);
        if (samples == NULL || keys == NULL) {
            rc = cli_runtime_error(cmd, "out of memory");
            goto out;
        }
        for (k = 0; k < rows; k++)
            keys[k] = (double)w.prompt[k];
        if (afd_prefill_times(&hw, w.prompt, rows, samples) != AFD_OK) {
            rc = cli_runtime_error(cmd, "internal error: no prefill law");
            goto out;
        }
    }

    t = cli_table_new(&c.out);
    if (t == NULL) {
        rc = cli_runtime_error(cmd, "out of memory");
        goto out;
    }
    cli_table_provenance(t);
    if (unit[0] != '\0')
        cli_table_unit(t, "%s", unit);
    cli_table_meta(t, "method", "%s",
                   a.method == M_CLOSED ? "closed" : a.method == M_NUMERIC ? "numeric" : "sim");
    cli_table_meta(t, "rho", "%.10g", lambda * afd_svc_law_mean(law) / (double)a.c);
    cli_percentile_name(qname, sizeof qname, "wait", a.pct, "");
    cli_percentile_name(qse, sizeof qse, "wait", a.pct, "_se");

    if (a.method == M_SIM) {
        cli_progress prog;
        afd_dlsim_params p;
        afd_dlsim_result r;
        memset(&p, 0, sizeof p);
        p.c = (unsigned)a.c;
        p.lambda = lambda;
        p.deadline = d;
        p.service = a.svc.service != NULL ? svc : 0;
        p.exp_mean = a.svc.service_exp != NULL ? mean : 0;
        p.samples = samples;
        p.keys = keys;
        p.rows = rows;
        p.order = a.policy;
        p.slo = slo;
        p.long_threshold = INFINITY;
        p.customers = (uint64_t)a.customers;
        p.warmup = a.have_warmup ? (uint64_t)a.warmup : (uint64_t)a.customers / 10;
        p.replications = (unsigned)a.reps;
        p.quantile = a.pct;
        p.seed = (uint64_t)a.seed;
        p.threads = a.threads;
        cli_progress_init(&prog, cmd, "runs", c.out.quiet);
        cli_progress_update(&prog, 0, (double)p.replications, "runs");
        p.progress = run_progress;
        p.progress_ctx = &prog;
        st = afd_dlsim(&p, &r);
        cli_progress_end(&prog);
        if (st != AFD_OK) {
            rc = cli_runtime_error(cmd, "simulation: %s", afd_strerror(st));
            goto out;
        }
        cli_table_meta(t, "policy", "%s", afd_order_name(a.policy));
        cli_table_meta(t, "seed", "%lld", (long long)a.seed);
        cli_table_meta(t, "customers", "%llu", (unsigned long long)r.customers);
        cli_table_begin(t, "p_offload", "p_offload_se", "wait_mean", "wait_mean_se", qname, qse,
                        "served_rate", "served_rate_se", "offload_rate", "offload_rate_se");
        cell(t, r.p_off, r.p_off_se, 1);
        cell(t, r.wait_mean, r.wait_mean_se, 1);
        cell(t, r.wait_q, r.wait_q_se, 1);
        cell(t, r.served_rate, r.served_rate_se, 1);
        cell(t, r.offload_rate, r.offload_rate_se, 1);
    } else {
        afd_deadline_result r;
        const char *how;
        if (a.method == M_CLOSED) {
            st = afd_mmc_deadline(lambda, mean, (int)a.c, d, a.pct, &r);
            how = a.c == 1 ? "M/M/1+D (Barrer 1957)" : "M/M/c+D (Barrer 1957)";
        } else if (a.c == 1) {
            st = afd_mg1_deadline(lambda, law, d, a.pct, 0, &r);
            how = "M/G/1+D, Volterra equation of the virtual wait";
        } else {
            st = afd_mgc_deadline(lambda, law, (int)a.c, d, a.pct, &r);
            how = "M/G/c+D approximation: M/M/c+D with time stretched by (1 + cs^2)/2 "
                  "(error against the simulator: docs/queues.md)";
        }
        if (st == AFD_ENUMERIC) {
            rc = cli_runtime_error(cmd, "the numerical solution does not reach 1e-6 (deadline "
                                        "%g is %.3g arrivals long); use --method sim",
                                   d, lambda * d);
            goto out;
        }
        if (st != AFD_OK) {
            rc = cli_runtime_error(cmd, "%s", afd_strerror(st));
            goto out;
        }
        cli_table_meta(t, "model", "%s", how);
        cli_table_meta(t, "p_offload_err", "%.3g", r.p_off_err);
        cli_table_meta(t, "wait_mean_err", "%.3g", r.wait_mean_err);
        cli_table_meta(t, "wait_q_err", "%.3g", r.wait_q_err);
        if (afd_svc_law_bin_var(law) > 0)
            cli_table_meta(t, "service_binned", "%d atoms (second moment lower by %.3g)",
                           (int)afd_svc_law_atoms(law), afd_svc_law_bin_var(law));
        cli_table_begin(t, "p_offload", "wait_mean", qname, "served_rate", "offload_rate");
        cell(t, r.p_off, 0, 0);
        cell(t, r.wait_mean, 0, 0);
        cell(t, r.wait_q, 0, 0);
        cell(t, r.served_rate, 0, 0);
        cell(t, r.offload_rate, 0, 0);
    }
    cli_table_end_row(t);
    rc = cli_table_finish(t, cmd);
    t = NULL;
out:
    if (t != NULL)
        cli_table_discard(t);
    afd_svc_law_free(law);
    free(samples);
    free(keys);
    afd_workload_free(&w);
    return rc;
}

const cli_command cli_cmd_offload = {
    .name = "offload",
    .path = "offload",
    .summary = "prefill queue with a deadline: offload probability and the wait of those served",
    .usage = "offload --lambda L --deadline D [--c C] (--service S | --service-exp MEAN | "
             "--trace FILE --hw FILE) [--method closed|numeric|sim] [--policy P]",
    .description =
        "Prints one row: p_offload wait_mean wait_p90 served_rate offload_rate\n"
        "(--method sim adds NAME_se after each).\n"
        "\n"
        "Requests arrive as a Poisson process at rate L and wait for one of C servers\n"
        "(prefill instances); a request whose wait would exceed the deadline D leaves\n"
        "before its prefill: it is offloaded to another pool (or dropped).  This is an LP\n"
        "instance that offloads at slack = TTFT SLO - D.  The queue is stable at any load.\n"
        "\n"
        "  p_offload     fraction of requests offloaded, P(V > D), V the virtual wait\n"
        "  wait_mean     mean wait in queue of the requests served\n"
        "  wait_p90      its 90th percentile (--percentile P names it wait_pP)\n"
        "  served_rate   L (1 - p_offload), requests per time unit that stay\n"
        "  offload_rate  L p_offload, the rate the other pool receives\n"
        "\n"
        "Methods:\n"
        "  closed   exponential service: M/M/c+D in closed form (Barrer 1957);\n"
        "           C = 1: p = (1 - rho) rho E / (1 - rho^2 E), E = e^{-(1 - rho) D / MEAN}\n"
        "  numeric  C = 1: the Volterra equation of the density of the virtual wait,\n"
        "           solved by product integration on grids of N and 2N intervals until\n"
        "           they agree to 1e-9 (with --provenance the difference is printed\n"
        "           as ## p_offload_err, wait_mean_err, wait_q_err);\n"
        "           C > 1: M/M/c+D with time stretched by k = (1 + cs^2)/2 (deadline\n"
        "           D/k, waits times k), an approximation whose error against the\n"
        "           simulator is tabulated in docs/queues.md\n"
        "  sim      Monte Carlo: R independent runs (Philox streams), standard errors\n"
        "           from their spread, the same for any thread count\n"
        "Policies (sim): fcfs; sjf (shortest prompt first, non-preemptive); edf (earliest\n"
        "arrival + SLO, which with one SLO is fcfs exactly); slack (least slack\n"
        "arrival + SLO - now - service first).  A request leaves once it has waited D.\n"
        "\n"
        "Times take units (2s, 150ms); rates too (5/s, 300/min).  Bare numbers are in\n"
        "the unit of --hw, or seconds without it; a suffix against --hw in cycles or\n"
        "without a unit is refused.  --trace takes each request's service as the\n"
        "prefill law of --hw applied to its prompt; more than 1024 distinct values are\n"
        "merged into 1024 equal-probability bins for the numerical method (## service_binned).",
    .groups = offload_groups,
    .run = run,
};
