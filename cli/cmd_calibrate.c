/* cmd_calibrate.c: afdkit calibrate, latency coefficients fitted to
 * measured latencies (Appendix B, Table 3 was obtained this way). */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

enum { OPT_ATT = OPT_COMMAND, OPT_FFN, OPT_COMM, OPT_XCOL, OPT_TCOL, OPT_ROBUST, OPT_OUT,
       OPT_RESID, OPT_UNIT, OPT_BATCHES };

static const cli_option cal_options[] = {
    {"attention", 0, "FILE", "Attention latencies: x = token load T, t = time", OPT_ATT},
    {"ffn", 0, "FILE", "FFN latencies: x = aggregated batch, t = time", OPT_FFN},
    {"comm", 0, "FILE", "round-trip communication: x = aggregated batch, t = time", OPT_COMM},
    {"x-col", 0, "NAME", "load column of the files (default x)", OPT_XCOL},
    {"t-col", 0, "NAME", "latency column of the files (default t)", OPT_TCOL},
    {"robust", 0, NULL, "write the robust (bisquare) fit to --out instead of least squares",
     OPT_ROBUST},
    {"out", 'o', "FILE", "write the coefficients as a key=value file for --hw", OPT_OUT},
    {"residuals", 0, "FILE", "write a table of points, fits, residuals and weights", OPT_RESID},
    {"unit", 0, "U", "time unit of the measurements, recorded in --out (e.g. us)", OPT_UNIT},
    {"batches", 0, "FILE", "or: batch times t against memory and compute times t_m, t_f "
                           "(the five-term regression of Ascendra's Appendix A)",
     OPT_BATCHES},
    {NULL, 0, NULL, NULL, 0},
};
static const cli_group cal_group = {"Options", cal_options};
static const cli_group *const cal_groups[] = {&cal_group, &cli_hw_group, &cli_output_group, NULL};

static const char *const stage_name[3] = {"attention", "ffn", "comm"};

struct args {
    const char *file[3];
    const char *batches;
    const char *x_col, *t_col, *out, *resid, *unit;
    int robust;
};

static int own(void *ctx, const cli_option *opt, const char *arg)
{
    struct args *a = ctx;
    if (opt == NULL)
        return cli_usage_error("calibrate", "unexpected argument '%s'", arg);
    switch (opt->id) {
    case OPT_ATT: a->file[0] = arg; return 0;
    case OPT_BATCHES: a->batches = arg; return 0;
    case OPT_FFN: a->file[1] = arg; return 0;
    case OPT_COMM: a->file[2] = arg; return 0;
    case OPT_XCOL: a->x_col = arg; return 0;
    case OPT_TCOL: a->t_col = arg; return 0;
    case OPT_ROBUST: a->robust = 1; return 0;
    case OPT_OUT: a->out = arg; return 0;
    case OPT_RESID: a->resid = arg; return 0;
    case OPT_UNIT: {
        /* The unit is written verbatim as 'unit = U' into --out: keep it one
         * short token so the file reads back as written. */
        size_t n = strlen(arg), j;
        int ok = n > 0 && n < sizeof((afd_hw *)0)->unit;
        for (j = 0; ok && j < n; j++)
            ok = (unsigned char)arg[j] > ' ' && arg[j] != 0x7f && arg[j] != '#' && arg[j] != '=';
        if (!ok)
            return cli_usage_error("calibrate",
                                   "--unit must be 1 to %zu characters without spaces, "
                                   "'#' or '=': '%s'",
                                   sizeof((afd_hw *)0)->unit - 1, arg);
        a->unit = arg;
        return 0;
    }
    }
    return cli_usage_error("calibrate", "internal error: unhandled option --%s", opt->name);
}

/* --batches: t = C1 (t_M + t_F) + C2 max(t_M, t_F) + C3 t_M + C4 t_F + C5 with
 * the identifiable combinations (afd_perfmodel.h). */
static int run_batches(const char *cmd, const struct args *a, const cli_common *c)
{
    afd_points pm, pf;
    afd_perf_fit_result r;
    afd_error err;
    afd_status st;
    cli_table *t;
    size_t i;
    int rc = 0;

    memset(&pm, 0, sizeof pm);
    memset(&pf, 0, sizeof pf);
    st = afd_points_read(a->batches, "t_m", "t", &pm, &err);
    if (st == AFD_OK)
        st = afd_points_read(a->batches, "t_f", "t", &pf, &err);
    if (st != AFD_OK) {
        rc = cli_file_error(cmd, a->batches, st, &err);
        goto out;
    }
    for (i = 0; i < pm.n; i++)
        if (!(pm.x[i] >= 0) || !(pf.x[i] >= 0) || !(pm.t[i] >= 0)) {
            rc = cli_input_error(cmd, "%s:%ld: t_m, t_f and t must be >= 0", a->batches,
                                 pm.line[i]);
            goto out;
        }
    st = afd_perf_fit(pm.x, pf.x, pm.t, pm.n, &r, &err);
    if (st != AFD_OK) {
        rc = st == AFD_EINVAL ? cli_input_error(cmd, "%s: %s", a->batches, err.text)
                              : cli_runtime_error(cmd, "%s: %s", a->batches, err.text);
        goto out;
    }
    t = cli_table_new(&c->out);
    if (t == NULL) {
        rc = cli_runtime_error(cmd, "out of memory");
        goto out;
    }
    cli_table_provenance(t);
    cli_table_meta(t, "model", "%s",
                   "t = C2 max(t_m, t_f) + a_m t_m + a_f t_f + C5, a_m = C1 + C3, a_f = C1 + C4 "
                   "(C1, C3, C4 are not separately identifiable)");
    cli_table_begin(t, "n", "c2", "c2_se", "a_m", "a_m_se", "a_f", "a_f_se", "c5", "c5_se", "r2",
                    "max_rel_err");
    cli_table_uint(t, r.n);
    cli_table_real(t, r.c2);
    cli_table_real(t, r.c2_se);
    cli_table_real(t, r.a_m);
    cli_table_real(t, r.a_m_se);
    cli_table_real(t, r.a_f);
    cli_table_real(t, r.a_f_se);
    cli_table_real(t, r.c5);
    cli_table_real(t, r.c5_se);
    cli_table_real(t, r.r2);
    cli_table_real(t, r.max_rel_err);
    cli_table_end_row(t);
    rc = cli_table_finish(t, cmd);
out:
    afd_points_free(&pm);
    afd_points_free(&pf);
    return rc;
}

static int run(const cli_command *self, int argc, char **argv)
{
    const char *cmd = self->path;
    struct args a;
    cli_common c;
    afd_points pts[3];
    afd_fit fit[3] = {{0}};
    double *weights[3] = {NULL, NULL, NULL};
    afd_hw hw;
    cli_table *t = NULL, *rt = NULL;
    int rc = 0, k, nstage = 0;
    size_t i;

    afd_hw_init(&hw);
    memset(&a, 0, sizeof a);
    memset(pts, 0, sizeof pts);
    a.x_col = "x";
    a.t_col = "t";
    cli_common_init(&c);
    rc = cli_parse_args(self, argc, argv, &c, own, &a);
    if (rc != CLI_CONTINUE)
        return rc;
    rc = 0;
    for (k = 0; k < 3; k++)
        nstage += a.file[k] != NULL;
    if (a.batches != NULL) {
        if (nstage > 0 || a.out != NULL || a.resid != NULL)
            return cli_usage_error(cmd, "--batches fits the batch regression alone: no "
                                        "--attention, --ffn, --comm, --out or --residuals");
        return run_batches(cmd, &a, &c);
    }
    if (nstage == 0)
        return cli_usage_error(cmd, "give at least one of --attention, --ffn, --comm");
    if (a.out != NULL && nstage < 3 && c.hw.hw == NULL)
        return cli_usage_error(cmd, "--out needs all three stages, or --hw BASE for the "
                                    "stages not measured");
    if (c.hw.hw != NULL && (rc = cli_hw_load(cmd, &c.hw, &hw)) != 0)
        return rc;

    for (k = 0; k < 3; k++) {
        afd_error err;
        afd_status st;
        if (a.file[k] == NULL)
            continue;
        st = afd_points_read(a.file[k], a.x_col, a.t_col, &pts[k], &err);
        if (st != AFD_OK) {
            rc = cli_file_error(cmd, a.file[k], st, &err);
            goto out;
        }
        weights[k] = malloc(pts[k].n * sizeof *weights[k]);
        if (weights[k] == NULL) {
            rc = cli_runtime_error(cmd, "out of memory");
            goto out;
        }
        st = afd_fit_line(pts[k].x, pts[k].t, pts[k].n, &fit[k], weights[k], &err);
        if (st != AFD_OK) {
            rc = cli_file_error(cmd, a.file[k], st, &err);
            goto out;
        }
        if (fit[k].outliers > 0)
            cli_warn(cmd, "%s: %zu of %zu points down-weighted as outliers by the robust fit%s",
                     a.file[k], fit[k].outliers, fit[k].n,
                     a.robust ? "" : "; consider --robust");
    }

    t = cli_table_new(&c.out);
    rt = a.resid != NULL ? cli_table_new(&c.out) : NULL;
    if (t == NULL || (a.resid != NULL && rt == NULL)) {
        rc = cli_runtime_error(cmd, "out of memory");
        goto out;
    }
    cli_table_provenance(t);
    cli_table_begin(t, "stage", "n", "alpha", "alpha_se", "beta", "beta_se", "r2", "sigma",
                    "alpha_robust", "beta_robust", "outliers");
    if (rt != NULL)
        cli_table_begin(rt, "stage", "x", "t", "fit", "residual", "fit_robust", "weight");
    for (k = 0; k < 3; k++) {
        double *alpha_out[3] = {&hw.alpha_a, &hw.alpha_f, &hw.alpha_c};
        double *beta_out[3] = {&hw.beta_a, &hw.beta_f, &hw.beta_c};
        if (a.file[k] == NULL)
            continue;
        cli_table_str(t, stage_name[k]);
        cli_table_uint(t, fit[k].n);
        cli_table_real(t, fit[k].alpha);
        cli_table_real(t, fit[k].alpha_se);
        cli_table_real(t, fit[k].beta);
        cli_table_real(t, fit[k].beta_se);
        cli_table_real(t, fit[k].r2);
        cli_table_real(t, fit[k].sigma);
        cli_table_real(t, fit[k].alpha_robust);
        cli_table_real(t, fit[k].beta_robust);
        cli_table_uint(t, fit[k].outliers);
        cli_table_end_row(t);
        *alpha_out[k] = a.robust ? fit[k].alpha_robust : fit[k].alpha;
        *beta_out[k] = a.robust ? fit[k].beta_robust : fit[k].beta;
        /* A latency file needs beta >= 0 (and alpha_c >= 0): a fit that is
         * negative only within its error or rounding is written as 0. */
        if (a.out != NULL &&
            afd_fit_clamp(beta_out[k], a.robust ? fit[k].beta_robust_se : fit[k].beta_se,
                          fit[k].beta_round))
            cli_warn(cmd, "%s: intercept %g is 0 within its standard error or rounding: "
                          "written as 0",
                     a.file[k], a.robust ? fit[k].beta_robust : fit[k].beta);
        if (a.out != NULL && k == 2 &&
            afd_fit_clamp(alpha_out[k], a.robust ? fit[k].alpha_robust_se : fit[k].alpha_se,
                          fit[k].alpha_round))
            cli_warn(cmd, "%s: slope %g is 0 within its standard error or rounding: "
                          "written as 0",
                     a.file[k], a.robust ? fit[k].alpha_robust : fit[k].alpha);
        for (i = 0; rt != NULL && i < pts[k].n; i++) {
            double f = fit[k].alpha * pts[k].x[i] + fit[k].beta;
            cli_table_str(rt, stage_name[k]);
            cli_table_real(rt, pts[k].x[i]);
            cli_table_real(rt, pts[k].t[i]);
            cli_table_real(rt, f);
            cli_table_real(rt, pts[k].t[i] - f);
            cli_table_real(rt, fit[k].alpha_robust * pts[k].x[i] + fit[k].beta_robust);
            cli_table_real(rt, weights[k][i]);
            cli_table_end_row(rt);
        }
    }

    if (a.out != NULL) {
        afd_error err;
        char text[1024];
        if (afd_hw_check(&hw, &err) != AFD_OK) {
            rc = cli_input_error(cmd, "fitted coefficients are not usable: %s", err.text);
            goto out;
        }
        if (a.unit != NULL)
            snprintf(hw.unit, sizeof hw.unit, "%s", a.unit);
        if (afd_hw_format(&hw,
                          a.robust ? "afdkit calibrate: robust (bisquare) fits"
                                   : "afdkit calibrate: least-squares fits",
                          text, sizeof text) != AFD_OK) {
            rc = cli_runtime_error(cmd, "internal error: hw file text too long");
            goto out;
        }
        if ((rc = cli_write_file(cmd, a.out, text, strlen(text))) != 0)
            goto out;
    }
    if (rt != NULL) {
        rc = cli_table_finish_file(rt, cmd, a.resid);
        rt = NULL;
        if (rc != 0)
            goto out;
    }
    rc = cli_table_finish(t, cmd);
    t = NULL;
out:
    cli_table_discard(t);
    cli_table_discard(rt);
    for (k = 0; k < 3; k++) {
        afd_points_free(&pts[k]);
        free(weights[k]);
    }
    return rc;
}

const cli_command cli_cmd_calibrate = {
    .name = "calibrate",
    .path = "calibrate",
    .summary = "fit latency coefficients t = alpha x + beta to measured latencies",
    .usage = "calibrate [--attention F] [--ffn F] [--comm F] [--hw BASE] [--out FILE] | "
             "calibrate --batches FILE",
    .description =
        "Prints one row per measured stage:\n"
        "  stage n alpha alpha_se beta beta_se r2 sigma alpha_robust beta_robust outliers\n"
        "\n"
        "Each file is a CSV with a load column (x: the token load T for Attention, the\n"
        "aggregated batch for FFN and communication) and a latency column (t).  The\n"
        "least-squares fit (GSL on OpenBLAS) gives alpha, beta, their standard errors,\n"
        "R^2 and the residual sd sigma; the robust fit (Tukey bisquare M-estimator)\n"
        "down-weights outliers such as a preempted kernel; 'outliers' counts points\n"
        "with a final weight below 0.5.  --out writes the coefficients (least squares,\n"
        "or --robust) as a key=value file for --hw; stages not measured come from\n"
        "--hw BASE.  --residuals writes a table for plotting:\n"
        "  stage x t fit residual fit_robust weight\n"
        "\n"
        "--batches FILE instead fits Ascendra's batch-time regression (Appendix A,\n"
        "eq. 4-5) t = C1 (t_m + t_f) + C2 max(t_m, t_f) + C3 t_m + C4 t_f + C5 to a CSV\n"
        "with columns t_m (memory time), t_f (compute time) and t (measured), and prints\n"
        "one row: n c2 c2_se a_m a_m_se a_f a_f_se c5 c5_se r2 max_rel_err.  The first\n"
        "feature is the sum of the third and fourth, so only a_m = C1 + C3, a_f = C1 + C4,\n"
        "C2 and C5 are identifiable; C2 also needs batches on both sides of t_m = t_f.",
    .groups = cal_groups,
    .run = run,
};
