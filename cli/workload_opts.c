/* workload_opts.c: the workload option group shared by every command. */
#include <config.h>

#include <math.h>
#include <string.h>

#include "cli.h"

static const cli_option workload_options[] = {
    {"trace", 0, "FILE",
     "request trace: CSV or JSON Lines, plain, .gz or .zst; '-' reads standard input",
     OPT_TRACE},
    {"prompt-col", 0, "NAME", "prompt-token column of the trace (default: recognised)",
     OPT_PROMPT_COL},
    {"output-col", 0, "NAME", "output-token column of the trace (default: recognised)",
     OPT_OUTPUT_COL},
    {"time-col", 0, "NAME", "arrival-time column (default: recognised; 'none' ignores times)",
     OPT_TIME_COL},
    {"time-unit", 0, "U", "unit of numeric times: s, ms, us (default: the column's)",
     OPT_TIME_UNIT},
    {"where", 0, "COL=VALUE...", "keep only rows whose column has this value (repeatable)",
     OPT_WHERE},
    {"format", 0, "F", CLI_FORMAT_HELP, OPT_FORMAT},
    {"decode-offset", 0, "K", "decode lifetime D = output tokens - K (default 0)",
     OPT_DECODE_OFFSET},
    {"geometric", 0, NULL, "geometric model: P, D ~ Geometric on {1,2,...}, independent",
     OPT_GEOMETRIC},
    {"mu-p", 0, "MP", "mean prompt length of the geometric model (>= 1)", OPT_MU_P},
    {"mu-d", 0, "MD", "mean decode lifetime of the geometric model (>= 1)", OPT_MU_D},
    {"theta", 0, "X", "stationary slot load theta, given directly (>= 0)", OPT_THETA},
    {"nu", 0, "Y", "its standard deviation nu, given directly (>= 0)", OPT_NU},
    {NULL, 0, NULL, NULL, 0},
};

const cli_group cli_workload_group = {
    "Workload (one of --trace FILE, --geometric --mu-p MP --mu-d MD, --theta X --nu Y)",
    workload_options};

int cli_trace_format(const char *cmd, const char *arg, const char **format)
{
    char ex[200];
    if (strcmp(arg, "csv") != 0 && strcmp(arg, "jsonl") != 0)
        return cli_usage_error(cmd, "--format: unknown trace format '%s' (csv or jsonl)",
                               cli_excerpt(arg, ex, sizeof ex));
    *format = arg;
    return 0;
}

void cli_workload_init(cli_workload_args *a)
{
    memset(a, 0, sizeof *a);
    a->mu_p = a->mu_d = a->theta = a->nu = NAN;
}

int cli_workload_option(const char *cmd, cli_workload_args *a, const cli_option *opt,
                        const char *arg)
{
    int64_t k;
    switch (opt->id) {
    case OPT_TRACE:
        if (arg[0] == '\0')
            return cli_usage_error(cmd, "--trace: empty file name");
        a->trace = arg;
        return 0;
    case OPT_PROMPT_COL: a->topt.columns.prompt_col = arg; return 0;
    case OPT_OUTPUT_COL: a->topt.columns.output_col = arg; return 0;
    case OPT_TIME_COL:
        a->topt.columns.time_col = strcmp(arg, "none") == 0 ? "" : arg;
        return 0;
    case OPT_TIME_UNIT: {
        double sec;
        char ex[200];
        if (afd_unit_seconds(arg, &sec) != AFD_OK)
            return cli_usage_error(cmd, "--time-unit: unknown unit '%s' (s, ms, us or ns)",
                                   cli_excerpt(arg, ex, sizeof ex));
        a->topt.columns.time_unit = arg;
        return 0;
    }
    case OPT_WHERE: {
        const char *eq = strchr(arg, '=');
        size_t n = a->topt.columns.n_where;
        char ex[200];
        if (eq == NULL || eq == arg)
            return cli_usage_error(cmd, "--where: expected COLUMN=VALUE: '%s'",
                                   cli_excerpt(arg, ex, sizeof ex));
        if (n == AFD_TRACE_MAX_WHERE)
            return cli_usage_error(cmd, "--where: at most %d filters", AFD_TRACE_MAX_WHERE);
        if ((size_t)(eq - arg) >= CLI_WHERE_NAME_MAX)
            return cli_usage_error(cmd, "--where: column name longer than %d bytes",
                                   CLI_WHERE_NAME_MAX - 1);
        memcpy(a->where_col[n], arg, (size_t)(eq - arg));
        a->where_col[n][eq - arg] = '\0';
        a->where[n].column = a->where_col[n];
        a->where[n].value = eq + 1;
        a->topt.columns.n_where = n + 1;
        return 0;
    }
    case OPT_FORMAT: return cli_trace_format(cmd, arg, &a->topt.columns.format);
    case OPT_DECODE_OFFSET:
        if (cli_integer(cmd, opt->name, arg, 0, INT64_MAX, &k) != 0)
            return EXIT_USAGE;
        a->topt.decode_offset = (uint64_t)k;
        a->decode_offset_set = 1;
        return 0;
    case OPT_GEOMETRIC: a->geometric = 1; return 0;
    case OPT_MU_P:
        a->have_mu_p = 1;
        return cli_real_min(cmd, opt->name, arg, 1, 0, &a->mu_p);
    case OPT_MU_D:
        a->have_mu_d = 1;
        return cli_real_min(cmd, opt->name, arg, 1, 0, &a->mu_d);
    case OPT_THETA:
        a->have_theta = 1;
        return cli_real_min(cmd, opt->name, arg, 0, 0, &a->theta);
    case OPT_NU:
        a->have_nu = 1;
        return cli_real_min(cmd, opt->name, arg, 0, 0, &a->nu);
    }
    return cli_usage_error(cmd, "internal error: unhandled option --%s", opt->name);
}

struct progress_ctx {
    cli_progress p;
};

static void on_progress(void *ctx, uint64_t rows, uint64_t bytes)
{
    struct progress_ctx *c = ctx;
    char unit[64];
    snprintf(unit, sizeof unit, "rows, %.0f MB", (double)bytes / 1e6);
    cli_progress_update(&c->p, (double)rows, 0, unit);
}

int cli_workload_load(const char *cmd, const cli_workload_args *a, int need, int keep_rows,
                      const cli_output *out, afd_workload *w)
{
    int kinds = (a->trace != NULL) + (a->geometric != 0) + (a->have_theta || a->have_nu);
    afd_status st;

    memset(w, 0, sizeof *w);
    if (!a->geometric && (a->have_mu_p || a->have_mu_d))
        return cli_usage_error(cmd, "--mu-p and --mu-d need --geometric");
    if (kinds == 0)
        return cli_usage_error(cmd, "no workload: give --trace FILE, --geometric --mu-p MP "
                                    "--mu-d MD, or --theta X --nu Y");
    if (kinds > 1)
        return cli_usage_error(cmd, "give only one workload: --trace, --geometric or "
                                    "--theta/--nu");
    if (a->trace == NULL &&
        (a->topt.columns.prompt_col || a->topt.columns.output_col || a->decode_offset_set ||
         a->topt.columns.time_col || a->topt.columns.time_unit || a->topt.columns.n_where))
        return cli_usage_error(cmd, "--prompt-col, --output-col, --time-col, --time-unit, "
                                    "--where and --decode-offset apply only to --trace");
    if (a->trace == NULL && a->topt.columns.format)
        return cli_usage_error(cmd, "--format applies only to --trace");

    if (a->geometric) {
        if (!a->have_mu_p || !a->have_mu_d)
            return cli_usage_error(cmd, "--geometric needs both --mu-p and --mu-d");
        st = afd_workload_geometric(a->mu_p, a->mu_d, w);
        if (st == AFD_ERANGE)
            return cli_usage_error(cmd, "--%s %g: the moments of the geometric model overflow "
                                        "a double (means up to about 5e153 are supported)",
                                   a->mu_p >= a->mu_d ? "mu-p" : "mu-d",
                                   a->mu_p >= a->mu_d ? a->mu_p : a->mu_d);
        if (st != AFD_OK)
            return cli_usage_error(cmd, "--geometric: %s", afd_strerror(st));
        return 0;
    }
    if (a->have_theta || a->have_nu) {
        if (need & CLI_WL_NEEDS_LENGTHS)
            return cli_usage_error(cmd, "--theta/--nu do not define request lengths; this "
                                        "command needs --trace or --geometric");
        if (!a->have_theta || !a->have_nu)
            return cli_usage_error(cmd, "--theta and --nu go together");
        st = afd_workload_given(a->theta, a->nu, w);
        if (st == AFD_ERANGE)
            return cli_usage_error(cmd, "--%s %g: theta^2 + nu^2 overflows a double",
                                   a->theta >= a->nu ? "theta" : "nu",
                                   a->theta >= a->nu ? a->theta : a->nu);
        if (st != AFD_OK)
            return cli_usage_error(cmd, "--theta/--nu: %s", afd_strerror(st));
        return 0;
    }

    {
        afd_workload_trace_options topt = a->topt;
        struct progress_ctx pc;
        afd_error err;
        cli_progress_init(&pc.p, cmd, "reading trace", out != NULL && out->quiet);
        topt.keep_rows = keep_rows == CLI_KEEP_ROWS || keep_rows == CLI_KEEP_BLOCKS;
        topt.keep_blocks = keep_rows == CLI_KEEP_BLOCKS;
        topt.keep_pairs = keep_rows == CLI_KEEP_PAIRS;
        topt.no_moments = (need & CLI_WL_NO_MOMENTS) != 0;
        topt.columns.where = a->where;
        if (topt.keep_rows && topt.max_rows == 0)
            topt.max_rows = CLI_MAX_KEPT_ROWS;
        if (topt.keep_pairs && topt.max_pairs == 0)
            topt.max_pairs = CLI_MAX_KEPT_PAIRS;
        topt.progress = on_progress;
        topt.progress_ctx = &pc;
        st = afd_workload_from_trace(a->trace, &topt, w, &err);
        cli_progress_end(&pc.p);
        if (st != AFD_OK)
            return cli_file_error(cmd, a->trace, st, &err);
        if (w->filtered > 0 || w->skipped > 0) {
            char where[200] = "";
            size_t k, o = 0;
            unsigned long long total = (unsigned long long)(w->rows + w->filtered);
            for (k = 0; k < a->topt.columns.n_where && o + 1 < sizeof where; k++)
                o += (size_t)snprintf(where + o, sizeof where - o, "%s%s=%s", k ? " " : "",
                                      a->where[k].column, a->where[k].value);
            if (w->filtered == 0)
                cli_warn(cmd, "%s: skipped %llu of %llu rows with D = output - %llu <= 0 (first "
                              "on line %ld)",
                         a->trace, (unsigned long long)w->skipped, total,
                         (unsigned long long)a->topt.decode_offset, w->first_skipped_line);
            else if (w->skipped == 0)
                cli_warn(cmd, "%s: skipped %llu of %llu rows not matching --where %s", a->trace,
                         (unsigned long long)w->filtered, total, where);
            else
                cli_warn(cmd, "%s: skipped %llu of %llu rows: %llu not matching --where %s, %llu "
                              "with D = output - %llu <= 0 (first on line %ld)",
                         a->trace, (unsigned long long)(w->filtered + w->skipped), total,
                         (unsigned long long)w->filtered, where, (unsigned long long)w->skipped,
                         (unsigned long long)a->topt.decode_offset, w->first_skipped_line);
        }
        if (w->arrivals.unsorted_line != 0)
            cli_warn(cmd, "%s:%ld: arrival times go backwards; the dispersion indices need "
                          "a trace sorted by time (they are nan)",
                     a->trace, w->arrivals.unsorted_line);
        if (w->stats.n < 2 && !(need & CLI_WL_NO_SE_WARNING))
            cli_warn(cmd, "%s: only %llu usable request; standard errors need at least 2",
                     a->trace, (unsigned long long)w->stats.n);
    }
    return 0;
}
