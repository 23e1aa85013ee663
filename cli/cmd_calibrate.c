/* cmd_calibrate.c: afdkit calibrate, latency coefficients fitted to
 * measured latencies (Appendix B, Table 3 was obtained this way). */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

enum { OPT_ATT = OPT_COMMAND, OPT_FFN, OPT_COMM, OPT_XCOL, OPT_TCOL, OPT_ROBUST, OPT_OUT,
       OPT_RESID, OPT_UNIT, OPT_BATCHES, OPT_PROFILE, OPT_ALLREDUCE, OPT_MODEL, OPT_DEVICE,
       OPT_TP, OPT_SUMMARY, OPT_NO_FIT, OPT_ALSO_FIT, OPT_PREFILL, OPT_DECODE, OPT_FORWARD };

static const cli_option cal_options[] = {
    {"attention", 0, "FILE", "Attention latencies: x = token load T, t = time", OPT_ATT},
    {"ffn", 0, "FILE", "FFN latencies: x = aggregated batch, t = time", OPT_FFN},
    {"comm", 0, "FILE", "round-trip communication: x = aggregated batch, t = time", OPT_COMM},
    {"prefill", 0, "FILE", "prefill batch times: sum_p, sum_p2 (or batch, prompt) and t, "
                           "fitted to a + b sum_p + c sum_p2",
     OPT_PREFILL},
    {"decode", 0, "FILE", "decode step times: batch, kv (or batch, context) and t, fitted to "
                          "beta + gamma batch + alpha kv",
     OPT_DECODE},
    {"x-col", 0, "NAME", "load column of the files (default x)", OPT_XCOL},
    {"t-col", 0, "NAME", "latency column of the files (default t)", OPT_TCOL},
    {"robust", 0, NULL, "write the robust (bisquare) fit to --out instead of least squares",
     OPT_ROBUST},
    {"out", 'o', "FILE", "write the coefficients as a key=value file for --hw", OPT_OUT},
    {"residuals", 0, "FILE", "write a table of points, fits, residuals and weights", OPT_RESID},
    {"unit", 0, "U", "time unit of the measurements, recorded in --out: s, ms, us, ns or cycles",
     OPT_UNIT},
    {"batches", 0, "FILE", "or: batch times t against memory and compute times t_m, t_f "
                           "(the five-term regression of Ascendra's Appendix A)",
     OPT_BATCHES},
    {"profile", 0, "FILE", "or: measured kernel times (Vidur's profiler CSV) to fit the "
                           "device's mfu and mbu to",
     OPT_PROFILE},
    {"forward", 0, "FILE", "or: measured whole forward passes (columns model, tp, phase, batch, "
                           "tokens, ms, lm_head_ms) to fit the --device's kernel model",
     OPT_FORWARD},
    {"allreduce", 0, "FILE", "with --profile: measured all-reduce times (Vidur's CSV) to fit "
                             "comm_eff and comm_latency_ms to",
     OPT_ALLREDUCE},
    {"model", 'm', "NAME|FILE", "with --profile, --prefill or --decode: the model measured "
                                "(preset or config.json)",
     OPT_MODEL},
    {"device", 'd', "NAME|FILE", "with --profile, --prefill or --decode: the device measured "
                                 "(preset or file)",
     OPT_DEVICE},
    {"tp", 't', "T", "with --profile: only the measurements at tensor-parallel size T; "
                     "otherwise the size of the instance measured, written to --out as tp "
                     "(laws measured) and afd_tp (stages measured)",
     OPT_TP},
    {"summary", 0, NULL, "with --profile: median and worst error per module and regime",
     OPT_SUMMARY},
    {"no-fit", 0, NULL, "with --profile: compare with the device's efficiencies as they are",
     OPT_NO_FIT},
    {"also-fit", 0, "TERMS", "with --profile: fit kernel_us and/or roofline_p too "
                             "(comma-separated)",
     OPT_ALSO_FIT},
    {NULL, 0, NULL, NULL, 0},
};
static const cli_group cal_group = {"Options", cal_options};
static const cli_group *const cal_groups[] = {&cal_group, &cli_hw_group, &cli_output_group, NULL};

static const char *const stage_name[3] = {"attention", "ffn", "comm"};

struct args {
    const char *file[3];
    const char *law[2]; /* --prefill, --decode */
    const char *batches;
    const char *profile, *allreduce, *model, *device, *forward;
    double tp;
    int summary, no_fit, terms;
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
    case OPT_PROFILE: a->profile = arg; return 0;
    case OPT_FORWARD: a->forward = arg; return 0;
    case OPT_ALLREDUCE: a->allreduce = arg; return 0;
    case OPT_MODEL: a->model = arg; return 0;
    case OPT_DEVICE: a->device = arg; return 0;
    case OPT_SUMMARY: a->summary = 1; return 0;
    case OPT_NO_FIT: a->no_fit = 1; return 0;
    case OPT_ALSO_FIT: {
        const char *s = arg;
        a->terms = 0;
        while (1) {
            size_t n = strcspn(s, ",");
            if (n == 9 && strncmp(s, "kernel_us", n) == 0)
                a->terms |= AFD_PROFILE_FIT_KERNEL;
            else if (n == 10 && strncmp(s, "roofline_p", n) == 0)
                a->terms |= AFD_PROFILE_FIT_ROOFLINE_P;
            else
                return cli_usage_error("calibrate",
                                       "--also-fit takes kernel_us and/or roofline_p, "
                                       "comma-separated: '%s'", arg);
            if (s[n] == '\0')
                return 0;
            s += n + 1;
        }
    }
    case OPT_TP: {
        int64_t v;
        int rc = cli_integer("calibrate", opt->name, arg, 1, 1024, &v);
        a->tp = (double)v;
        return rc;
    }
    case OPT_PREFILL: a->law[0] = arg; return 0;
    case OPT_DECODE: a->law[1] = arg; return 0;
    case OPT_FFN: a->file[1] = arg; return 0;
    case OPT_COMM: a->file[2] = arg; return 0;
    case OPT_XCOL: a->x_col = arg; return 0;
    case OPT_TCOL: a->t_col = arg; return 0;
    case OPT_ROBUST: a->robust = 1; return 0;
    case OPT_OUT: a->out = arg; return 0;
    case OPT_RESID: a->resid = arg; return 0;
    case OPT_UNIT: {
        /* The unit is written as 'unit = U' into --out, and a latency file
         * states one a time suffix converts to, or cycles (afd_hw_parse) */
        double sec;
        char ex[64];
        if (strcmp(arg, "cycles") != 0 && afd_unit_seconds(arg, &sec) != AFD_OK)
            return cli_usage_error("calibrate",
                                   "--unit must be s, ms, us, ns or cycles (a latency file "
                                   "states one of these): '%s'",
                                   cli_excerpt(arg, ex, sizeof ex));
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

/* Fitted values are kept to three significant digits: what is printed is
 * what --out writes and what the estimate rows use. */
static double sig3(double v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%.3g", v);
    return strtod(buf, NULL);
}

enum { G_LARGE, G_WEIGHT, G_RIDGE, G_N };
static const char *const group_name[G_N] = {"large", "weight_read", "ridge"};

/* Write device d to path as a device file with note as its comment. */
static int write_device(const char *cmd, const char *path, const afd_device *d, const char *note)
{
    char text[4096];
    if (afd_device_format(d, note, text, sizeof text) != AFD_OK)
        return cli_runtime_error(cmd, "internal error: device file text too long");
    return cli_write_file(cmd, path, text, strlen(text));
}

/* --profile: fit mfu and mbu (and with --allreduce comm_eff and
 * comm_latency_ms) and print the estimator against each measurement. */
static int run_profile(const char *cmd, const struct args *a, const cli_common *c)
{
    afd_model m;
    afd_device d;
    afd_profile p;
    afd_allreduce_profile ar;
    afd_device cmp;
    afd_error err;
    afd_status st;
    cli_table *t = NULL;
    double rms = NAN, *errs = NULL, tps[64];
    size_t i, n_err = 0, cap, ntp;
    int rc, k, g, ti;
    char note[512];

    memset(&p, 0, sizeof p);
    memset(&ar, 0, sizeof ar);
    if (a->model == NULL || a->device == NULL)
        return cli_usage_error(cmd, "--profile needs --model and --device");
    if ((rc = cli_load_model(cmd, a->model, &m)) != 0 ||
        (rc = cli_load_device(cmd, a->device, &d)) != 0)
        return rc;
    if (a->allreduce != NULL && a->tp == 1)
        return cli_usage_error(cmd, "--allreduce with --tp 1: one device has no all-reduce");
    st = afd_profile_read(a->profile, &p, &err);
    if (st != AFD_OK)
        return cli_file_error(cmd, a->profile, st, &err);
    if (a->allreduce != NULL && (st = afd_allreduce_read(a->allreduce, &ar, &err)) != AFD_OK) {
        rc = cli_file_error(cmd, a->allreduce, st, &err);
        goto out;
    }
    for (i = 0; i < p.n; i++)
        if ((st = afd_profile_row_matches(&p.row[i], &m, &err)) != AFD_OK) {
            rc = cli_input_error(cmd, "%s:%ld: %s", a->profile, err.line, err.text);
            goto out;
        }
    if (!a->no_fit) {
        afd_device fit;
        st = afd_profile_fit_terms(&m, &d, &p, a->tp, a->terms, &fit, &rms, &err);
        if (st != AFD_OK) {
            rc = st == AFD_EINVAL ? cli_input_error(cmd, "%s: %s", a->profile, err.text)
                                  : cli_runtime_error(cmd, "%s: %s", a->profile, err.text);
            goto out;
        }
        d.mfu[0] = d.mfu[1] = sig3(fit.mfu[0]);
        d.mbu[0] = d.mbu[1] = sig3(fit.mbu[0]);
        if (a->terms & AFD_PROFILE_FIT_KERNEL)
            d.kernel_us = sig3(fit.kernel_us);
        if (a->terms & AFD_PROFILE_FIT_ROOFLINE_P)
            d.roofline_p = sig3(fit.roofline_p);
        if (a->allreduce != NULL) {
            double eff, lat;
            st = afd_profile_fit_allreduce(&d, &ar, a->tp, &eff, &lat, &err);
            if (st != AFD_OK) {
                rc = st == AFD_EINVAL ? cli_input_error(cmd, "%s: %s", a->allreduce, err.text)
                                      : cli_runtime_error(cmd, "%s: %s", a->allreduce, err.text);
                goto out;
            }
            d.comm_eff[0] = d.comm_eff[1] = sig3(eff);
            d.comm_latency_ms = sig3(lat);
        }
    }
    /* --profile calibrates the roofline's efficiencies (mfu, mbu, kernel_us,
     * roofline_p): the rows compare that path, also on a device with a
     * kernel model (which --forward fits) */
    cmp = d;
    cmp.kernel_model = 0;
    cap = 3 * p.n + ar.n + 1;
    errs = malloc(cap * sizeof *errs);
    t = cli_table_new(&c->out);
    if (errs == NULL || t == NULL) {
        rc = cli_runtime_error(cmd, "out of memory");
        goto out;
    }
    cli_table_provenance(t);
    if (!a->summary) /* the summary's errors are relative */
        cli_table_unit(t, "ms");
    cli_table_meta(t, "model", "%s", m.name);
    cli_table_meta(t, "device", "%s", d.name);
    cli_table_meta(t, "mfu", "%.3g%s", d.mfu[0], a->no_fit ? " (device)" : " (fitted)");
    cli_table_meta(t, "mbu", "%.3g%s", d.mbu[0], a->no_fit ? " (device)" : " (fitted)");
    if (d.kernel_us != 0 || (a->terms & AFD_PROFILE_FIT_KERNEL))
        cli_table_meta(t, "kernel_us", "%.3g%s", d.kernel_us,
                       (a->terms & AFD_PROFILE_FIT_KERNEL) && !a->no_fit ? " (fitted)"
                                                                         : " (device)");
    if (isfinite(d.roofline_p))
        cli_table_meta(t, "roofline_p", "%.3g%s", d.roofline_p,
                       (a->terms & AFD_PROFILE_FIT_ROOFLINE_P) && !a->no_fit ? " (fitted)"
                                                                             : " (device)");
    if (a->allreduce != NULL) {
        cli_table_meta(t, "comm_eff", "%.3g%s", d.comm_eff[0],
                       a->no_fit ? " (device)" : " (fitted)");
        cli_table_meta(t, "comm_latency_ms", "%.3g%s", d.comm_latency_ms,
                       a->no_fit ? " (device)" : " (fitted)");
    }
    if (!a->no_fit)
        cli_table_meta(t, "rms_log_err", "%.3g", rms);
    /* the tensor-parallel sizes measured, for the summary's rows */
    ntp = 0;
    for (i = 0; i < p.n + ar.n; i++) {
        double v = i < p.n ? p.row[i].tp : ar.row[i - p.n].workers;
        size_t j;
        if ((a->tp != 0 && v != a->tp) || (i >= p.n && v < 2))
            continue;
        for (j = 0; j < ntp && tps[j] != v; j++)
            ;
        if (j == ntp && ntp < sizeof tps / sizeof tps[0]) {
            while (j > 0 && tps[j - 1] > v) {
                tps[j] = tps[j - 1];
                j--;
            }
            tps[j] = v;
            ntp++;
        }
    }
    if (a->summary)
        cli_table_begin(t, "module", "tp", "regime", "n", "median_abs_err", "worst_abs_err");
    else
        cli_table_begin(t, "module", "tp", "tokens", "measured_ms", "estimate_ms", "rel_err",
                        "bound");
    /* k = AFD_PROFILE_NMOD: the all-reduce; ti = -1: every TP size */
    for (k = 0; k <= AFD_PROFILE_NMOD; k++)
        for (ti = a->summary ? -1 : (int)ntp - 1; ti < (int)ntp; ti++)
            for (g = 0; g < (k == AFD_PROFILE_NMOD ? 1 : G_N); g++) {
                size_t nrow = k == AFD_PROFILE_NMOD ? ar.n : p.n;
                n_err = 0;
                if (!a->summary && (ti != (int)ntp - 1 || g > 0))
                    continue;
                for (i = 0; i < nrow; i++) {
                    double est, meas, tp, tokens;
                    int mb = 0, grp = 0;
                    if (k == AFD_PROFILE_NMOD) {
                        const afd_allreduce_row *r = &ar.row[i];
                        tp = r->workers;
                        if (tp < 2)
                            continue;
                        tokens = r->bytes / (m.hidden * m.dtype_bytes);
                        meas = r->ms;
                        est = afd_estimate_allreduce_ms(&d, AFD_PREFILL, tp, r->bytes);
                    } else {
                        const afd_profile_row *r = &p.row[i];
                        tp = r->tp;
                        tokens = r->tokens;
                        meas = r->ms[k];
                        if (a->tp != 0 && tp != a->tp)
                            continue;
                        st = afd_profile_estimate(&m, &cmp, tp, tokens, (afd_profile_module)k, &est,
                                                  &mb, &err);
                        if (st != AFD_OK) {
                            rc = cli_input_error(cmd, "%s:%ld: %s", a->profile, r->line,
                                                 err.text);
                            goto out;
                        }
                        grp = tokens >= 512 ? G_LARGE : mb == 1 ? G_WEIGHT : G_RIDGE;
                    }
                    if ((a->tp != 0 && tp != a->tp) ||
                        (a->summary && (grp != g || (ti >= 0 && tp != tps[ti]))))
                        continue;
                    errs[n_err++] = est / meas - 1;
                    if (!a->summary) {
                        cli_table_str(t, k == AFD_PROFILE_NMOD
                                             ? "allreduce"
                                             : afd_profile_module_name((afd_profile_module)k));
                        cli_table_real(t, tp);
                        cli_table_real(t, tokens);
                        cli_table_real(t, meas);
                        cli_table_real(t, est);
                        cli_table_real(t, est / meas - 1);
                        cli_table_str(t, k == AFD_PROFILE_NMOD ? "network"
                                         : mb == 1             ? "memory"
                                         : mb == -1            ? "compute"
                                                               : "mixed");
                        cli_table_end_row(t);
                    }
                }
                if (a->summary && n_err > 0) {
                    double med, worst;
                    char tpbuf[32];
                    afd_profile_error_stats(errs, n_err, &med, &worst);
                    cli_table_str(t, k == AFD_PROFILE_NMOD
                                         ? "allreduce"
                                         : afd_profile_module_name((afd_profile_module)k));
                    if (ti < 0)
                        snprintf(tpbuf, sizeof tpbuf, "all");
                    else
                        snprintf(tpbuf, sizeof tpbuf, "%g", tps[ti]);
                    cli_table_str(t, tpbuf);
                    cli_table_str(t, k == AFD_PROFILE_NMOD ? "all" : group_name[g]);
                    cli_table_uint(t, n_err);
                    cli_table_real(t, med);
                    cli_table_real(t, worst);
                    cli_table_end_row(t);
                }
            }
    if (a->out != NULL) {
        char tpopt[32] = "";
        if (a->tp > 0)
            snprintf(tpopt, sizeof tpopt, " --tp %g", a->tp);
        snprintf(note, sizeof note,
                 "%s with efficiencies fitted by afdkit calibrate --profile %s%s%s --model %s "
                 "--device %s%s%s%s (rms log error %.3g)",
                 d.name, a->profile, a->allreduce ? " --allreduce " : "",
                 a->allreduce ? a->allreduce : "", m.name, d.name, tpopt,
                 a->terms ? " --also-fit " : "",
                 a->terms == 3 ? "kernel_us,roofline_p"
                 : a->terms == 1 ? "kernel_us"
                 : a->terms == 2 ? "roofline_p" : "", rms);
        if ((rc = write_device(cmd, a->out, &d, note)) != 0)
            goto out;
    }
    rc = cli_table_finish(t, cmd);
    t = NULL;
out:
    cli_table_discard(t);
    free(errs);
    afd_profile_free(&p);
    afd_allreduce_free(&ar);
    return rc;
}

/* --forward: fit the device's kernel model to measured forward passes and
 * print the error per pass (--no-fit: the device as it is). */
static int run_forward(const char *cmd, const struct args *a, const cli_common *c)
{
    afd_forward f;
    afd_device d, fitted;
    afd_error err;
    afd_status st;
    cli_table *t = NULL;
    double loss = NAN, *errs = NULL;
    size_t i, n[2] = {0, 0};
    int rc, ph;
    char note[512];

    if ((rc = cli_load_device(cmd, a->device, &d)) != 0)
        return rc;
    st = afd_forward_read(a->forward, &f, &err);
    if (st != AFD_OK)
        return cli_file_error(cmd, a->forward, st, &err);
    fitted = d;
    if (!a->no_fit) {
        st = afd_forward_fit(&d, &f, &fitted, &loss, &err);
        if (st != AFD_OK) {
            rc = st == AFD_EINVAL ? cli_input_error(cmd, "%s: %s", a->forward, err.text)
                                  : cli_runtime_error(cmd, "%s: %s", a->forward, err.text);
            goto out;
        }
    } else if (!d.kernel_model) {
        rc = cli_usage_error(cmd, "--no-fit: device %s has no kernel model (kernel_floor_us) "
                                  "to compare", d.name);
        goto out;
    }
    errs = malloc((f.n ? f.n : 1) * 2 * sizeof *errs);
    t = cli_table_new(&c->out);
    if (errs == NULL || t == NULL) {
        rc = cli_runtime_error(cmd, "out of memory");
        goto out;
    }
    cli_table_provenance(t);
    cli_table_unit(t, "ms");
    cli_table_meta(t, "device", "%s", d.name);
    cli_table_meta(t, "kernel_floor_us", "%.4g%s", fitted.kernel_floor_us,
                   a->no_fit ? " (device)" : " (fitted)");
    cli_table_meta(t, "elementwise_tbps", "%.4g%s", fitted.elementwise_tbps,
                   a->no_fit ? " (device)" : " (fitted)");
    cli_table_meta(t, "gemm_tflops", "%.4g%s", fitted.gemm_tflops,
                   a->no_fit ? " (device)" : " (fitted)");
    cli_table_meta(t, "gemm_tbps", "%.4g%s", fitted.gemm_tbps,
                   a->no_fit ? " (device)" : " (fitted)");
    if (!a->no_fit)
        cli_table_meta(t, "loss", "%.3g", loss);
    cli_table_begin(t, "model", "tp", "phase", "batch", "tokens", "measured_ms", "estimate_ms",
                    "rel_err");
    for (i = 0; i < f.n; i++) {
        const afd_forward_row *r = &f.row[i];
        double ms;
        st = afd_forward_estimate(&fitted, r, &ms, &err);
        if (st != AFD_OK) {
            rc = cli_input_error(cmd, "%s:%ld: %s", a->forward, r->line, err.text);
            goto out;
        }
        ph = r->phase == AFD_DECODE;
        errs[ph * f.n + n[ph]++] = ms / r->ms - 1;
        cli_table_str(t, r->model.name);
        cli_table_real(t, r->tp);
        cli_table_str(t, ph ? "decode" : "prefill");
        cli_table_real(t, r->batch);
        cli_table_real(t, r->tokens);
        cli_table_real(t, r->ms);
        cli_table_real(t, ms);
        cli_table_real(t, ms / r->ms - 1);
        cli_table_end_row(t);
    }
    for (ph = 0; ph < 2; ph++)
        if (n[ph] > 0) {
            double med, worst;
            afd_profile_error_stats(errs + ph * f.n, n[ph], &med, &worst);
            cli_table_meta(t, ph ? "decode" : "prefill", "median_abs_err=%.3g worst_abs_err=%.3g",
                           med, worst);
        }
    if (a->out != NULL) {
        snprintf(note, sizeof note,
                 "%s with its kernel model fitted by afdkit calibrate --forward %s --device %s "
                 "(loss %.3g)",
                 d.name, a->forward, d.name, loss);
        if ((rc = write_device(cmd, a->out, &fitted, note)) != 0)
            goto out;
    }
    rc = cli_table_finish(t, cmd);
    t = NULL;
out:
    cli_table_discard(t);
    free(errs);
    afd_forward_free(&f);
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
    afd_law_points lp[2];
    afd_law_fit lf[2];
    afd_model lmodel;
    afd_device ldev;
    afd_hw hw;
    cli_table *t = NULL, *rt = NULL;
    int rc = 0, k, nstage = 0, nlaw;
    size_t i;
    static const char *const law_keys[2][3] = {{"prefill_a", "prefill_b", "prefill_c"},
                                               {"decode_beta", "decode_gamma", "decode_alpha"}};

    afd_hw_init(&hw);
    memset(&a, 0, sizeof a);
    memset(pts, 0, sizeof pts);
    memset(lp, 0, sizeof lp);
    a.x_col = "x";
    a.t_col = "t";
    cli_common_init(&c);
    rc = cli_parse_args(self, argc, argv, &c, own, &a);
    if (rc != CLI_CONTINUE)
        return rc;
    rc = 0;
    for (k = 0; k < 3; k++)
        nstage += a.file[k] != NULL;
    nlaw = (a.law[0] != NULL) + (a.law[1] != NULL);
    if (a.forward != NULL) {
        if (a.profile != NULL || nstage > 0 || nlaw > 0 || a.batches != NULL ||
            a.resid != NULL || a.robust || a.unit != NULL || c.hw.hw != NULL ||
            a.allreduce != NULL || a.model != NULL || a.summary || a.terms != 0 || a.tp != 0)
            return cli_usage_error(cmd, "--forward fits a device's kernel model alone (each "
                                        "row names its model): only --device, --no-fit and "
                                        "--out");
        if (a.device == NULL)
            return cli_usage_error(cmd, "--forward needs --device");
        if (a.no_fit && a.out != NULL)
            return cli_usage_error(cmd, "--no-fit has nothing to write to --out");
        return run_forward(cmd, &a, &c);
    }
    if (a.profile != NULL) {
        if (nstage > 0 || nlaw > 0 || a.batches != NULL || a.resid != NULL || a.robust || a.unit != NULL ||
            c.hw.hw != NULL)
            return cli_usage_error(cmd, "--profile fits a device's efficiencies alone: no "
                                        "--attention, --ffn, --comm, --prefill, --decode, "
                                        "--batches, --residuals, --robust, --unit or --hw");
        if (a.no_fit && a.out != NULL)
            return cli_usage_error(cmd, "--no-fit has nothing to write to --out");
        if (a.no_fit && a.terms != 0)
            return cli_usage_error(cmd, "--no-fit and --also-fit exclude each other");
        return run_profile(cmd, &a, &c);
    }
    if (a.allreduce != NULL || ((a.model != NULL || a.device != NULL) && nlaw == 0) ||
        a.summary || a.no_fit || a.terms != 0)
        return cli_usage_error(cmd, "--allreduce, --model, --device, --summary, --no-fit and "
                                    "--also-fit go with --profile (--model and --device also "
                                    "with --prefill or --decode)");
    if (a.tp != 0 && (a.batches != NULL || (nstage == 0 && nlaw == 0)))
        return cli_usage_error(cmd, "--tp goes with --profile, or with --attention, --ffn, "
                                    "--comm, --prefill or --decode (the size of the instance "
                                    "measured)");
    if (a.batches != NULL) {
        if (nstage > 0 || nlaw > 0 || a.out != NULL || a.resid != NULL)
            return cli_usage_error(cmd, "--batches fits the batch regression alone: no "
                                        "--attention, --ffn, --comm, --prefill, --decode, --out "
                                        "or --residuals");
        return run_batches(cmd, &a, &c);
    }
    if (nstage == 0 && nlaw == 0)
        return cli_usage_error(cmd, "give at least one of --attention, --ffn, --comm, --prefill, "
                                    "--decode");
    if (nstage == 0 && (a.robust || a.resid != NULL || strcmp(a.x_col, "x") != 0))
        return cli_usage_error(cmd, "--robust, --residuals and --x-col go with the stage fits "
                                    "(--attention, --ffn, --comm); --prefill and --decode are "
                                    "least squares");
    if (a.model != NULL && (rc = cli_load_model(cmd, a.model, &lmodel)) != 0)
        return rc;
    if (a.device != NULL && (rc = cli_load_device(cmd, a.device, &ldev)) != 0)
        return rc;
    if (a.out != NULL && nstage < 3 && c.hw.hw == NULL)
        return cli_usage_error(cmd, "--out needs all three stages, or --hw BASE for the "
                                    "stages not measured");
    if (c.hw.hw != NULL && (rc = cli_hw_load(cmd, &c.hw, &hw)) != 0)
        return rc;
    /* --tp is the size of the instance measured.  The laws measured complete
     * the base's laws, which time instances of its tp devices, and the
     * stages measured its six coefficients, which time instances of its
     * afd_tp: each mix must hold one size, and the file states the size
     * given for what was measured.  Without --tp the measurements are taken
     * at the base's sizes. */
    if (a.tp != 0) {
        double size = a.tp;
        int laws_kept = (a.law[0] == NULL && afd_hw_has_prefill(&hw)) ||
                        (a.law[1] == NULL && afd_hw_has_decode(&hw));
        if (nlaw > 0 && laws_kept && (rc = cli_hw_tp(cmd, c.hw.hw, &hw, 1, &size)) != 0)
            return rc;
        if (nstage > 0 && nstage < 3 && c.hw.hw != NULL &&
            (rc = cli_hw_afd_tp(cmd, c.hw.hw, &hw, 1, &size)) != 0)
            return rc;
        if (nlaw > 0)
            hw.tp = (unsigned)a.tp;
        if (nstage > 0)
            hw.afd_tp = (unsigned)a.tp;
    }
    /* One latency file has one unit: measurements in --unit U cannot be
     * completed by stages from a base in another unit (e.g. cycles). */
    if (a.unit != NULL && c.hw.hw != NULL && hw.unit[0] != '\0' && strcmp(hw.unit, a.unit) != 0)
        return cli_usage_error(cmd, "--unit %s: the stages not measured come from --hw %s, whose "
                                    "coefficients are in %s; a latency file has one unit, so "
                                    "measure in %s or give a base in %s",
                               a.unit, c.hw.hw, hw.unit, hw.unit, a.unit);

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
        if (!fit[k].robust_converged && a.robust) {
            afd_error_clear(&err);
            snprintf(err.text, sizeof err.text,
                     "the robust fit did not converge in %zu iterations: no robust fit to "
                     "write (drop --robust)",
                     fit[k].robust_iter);
            rc = cli_file_error(cmd, a.file[k], AFD_EINVAL, &err);
            goto out;
        }
        if (!fit[k].robust_converged)
            cli_warn(cmd, "%s: the robust fit did not converge in %zu iterations: "
                          "alpha_robust and beta_robust are nan",
                     a.file[k], fit[k].robust_iter);
        if (fit[k].outliers > 0)
            cli_warn(cmd, "%s: %zu of %zu points down-weighted as outliers by the robust fit%s",
                     a.file[k], fit[k].outliers, fit[k].n,
                     a.robust ? "" : "; consider --robust");
    }

    for (k = 0; k < 2; k++) {
        afd_error err;
        afd_status st;
        if (a.law[k] == NULL)
            continue;
        st = afd_law_points_read(a.law[k], k == 0 ? AFD_LAW_PREFILL : AFD_LAW_DECODE, a.t_col,
                                 &lp[k], &err);
        if (st == AFD_OK)
            st = afd_fit_law(&lp[k], &lf[k], &err);
        if (st != AFD_OK) {
            rc = cli_file_error(cmd, a.law[k], st, &err);
            goto out;
        }
    }

    t = cli_table_new(&c.out);
    rt = a.resid != NULL ? cli_table_new(&c.out) : NULL;
    if (t == NULL || (a.resid != NULL && rt == NULL)) {
        rc = cli_runtime_error(cmd, "out of memory");
        goto out;
    }
    cli_table_provenance(t);
    /* The measurements' unit (--unit), else that of the base (--hw), which
     * the measured stages are then taken to share; none known: no line. */
    if (a.unit != NULL || hw.unit[0] != '\0') {
        cli_table_unit(t, "%s", a.unit != NULL ? a.unit : hw.unit);
        if (rt != NULL)
            cli_table_unit(rt, "%s", a.unit != NULL ? a.unit : hw.unit);
    }
    if (a.model != NULL)
        cli_table_meta(t, "model", "%s", lmodel.name);
    if (a.device != NULL)
        cli_table_meta(t, "device", "%s", ldev.name);
    if (nstage > 0)
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
        /* A latency file needs beta >= 0 (and alpha_c >= 0): a fit within
         * rounding of 0 (either sign) or negative only within its error is
         * written as 0. */
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

    /* the laws: one row per coefficient, in the order of the file's keys */
    if (nlaw > 0)
        cli_table_begin(t, "coefficient", "n", "value", "se", "r2", "sigma", "max_rel_err");
    for (k = 0; k < 2; k++) {
        double *law_out[2][3] = {{&hw.prefill_a, &hw.prefill_b, &hw.prefill_c},
                                 {&hw.decode_beta, &hw.decode_gamma, &hw.decode_alpha}};
        int j;
        if (a.law[k] == NULL)
            continue;
        /* the law is measured now: a table of the estimator's times kept
         * from --hw BASE would be used in its place (afd_hw_decode_step) */
        if (k == 0)
            hw.prefill_table.nb = hw.prefill_table.ns = 0;
        else
            hw.decode_table.nb = hw.decode_table.ns = 0;
        for (j = 0; j < 3; j++) {
            cli_table_str(t, law_keys[k][j]);
            cli_table_uint(t, lf[k].n);
            cli_table_real(t, lf[k].coef[j]);
            cli_table_real(t, lf[k].se[j]);
            cli_table_real(t, lf[k].r2);
            cli_table_real(t, lf[k].sigma);
            cli_table_real(t, lf[k].max_rel_err);
            cli_table_end_row(t);
            *law_out[k][j] = lf[k].coef[j];
            /* a latency file needs every law coefficient >= 0: one below 0 by
             * no more than its standard error is written as 0, one further
             * below is refused */
            if (a.out != NULL && afd_fit_clamp(law_out[k][j], lf[k].se[j], 0))
                cli_warn(cmd, "%s: %s = %g is 0 within its standard error %g: written as 0",
                         a.law[k], law_keys[k][j], lf[k].coef[j], lf[k].se[j]);
            if (a.out != NULL && *law_out[k][j] < 0 && rc == 0)
                rc = cli_input_error(cmd, "%s: %s = %g is below 0 by more than its standard "
                                          "error %g: a latency file needs laws >= 0",
                                     a.law[k], law_keys[k][j], lf[k].coef[j], lf[k].se[j]);
        }
    }
    if (rc != 0)
        goto out;
    if (nlaw > 0) {
        /* the largest relative error of the laws written: those fitted here
         * (with any coefficient written as 0), and a law kept from --hw BASE */
        double e = 0;
        int kept_unknown = 0;
        for (k = 0; k < 2; k++) {
            const double coef_out[2][3] = {{hw.prefill_a, hw.prefill_b, hw.prefill_c},
                                           {hw.decode_beta, hw.decode_gamma, hw.decode_alpha}};
            int has = k == 0 ? afd_hw_has_prefill(&hw) : afd_hw_has_decode(&hw);
            if (a.law[k] != NULL)
                e = fmax(e, afd_law_max_rel_err(&lp[k], coef_out[k], NULL));
            else if (has && isnan(hw.fit_max_rel_err))
                kept_unknown = 1;
            else if (has)
                e = fmax(e, hw.fit_max_rel_err);
        }
        hw.fit_max_rel_err = kept_unknown ? NAN : e;
    }
    if (a.law[1] != NULL) {
        /* the decode law fitted here holds for the measured batches: record
         * the largest (a base's range belongs to the base's law) */
        double bmax = 0;
        size_t j;
        for (j = 0; j < lp[1].n; j++)
            bmax = fmax(bmax, floor(lp[1].x1[j]));
        hw.decode_batch_max = bmax >= 1 && bmax <= AFD_HW_BATCH_MAX ? (unsigned)bmax : 0;
    }
    if (a.model != NULL)
        snprintf(hw.model, sizeof hw.model, "%s", lmodel.name);
    if (a.device != NULL)
        snprintf(hw.device, sizeof hw.device, "%s", ldev.name);

    if (a.out != NULL) {
        afd_error err;
        char *text, comment[1024];
        if (afd_hw_check(&hw, &err) != AFD_OK) {
            rc = cli_input_error(cmd, "fitted coefficients are not usable: %s", err.text);
            goto out;
        }
        if (a.unit != NULL)
            snprintf(hw.unit, sizeof hw.unit, "%s", a.unit);
        snprintf(comment, sizeof comment, "afdkit calibrate: %s%s%s%s%s%s%s",
                 nstage == 0 ? "" : a.robust ? "robust (bisquare) fits" : "least-squares fits",
                 nstage > 0 && nlaw > 0 ? "; " : "",
                 nlaw > 0 ? "laws fitted by least squares to " : "",
                 a.law[0] != NULL ? a.law[0] : "", nlaw == 2 ? " and " : "",
                 a.law[1] != NULL ? a.law[1] : "", nstage < 3 ? " (the rest from --hw)" : "");
        text = malloc(AFD_HW_TEXT_MAX);
        if (text == NULL) {
            rc = cli_runtime_error(cmd, "out of memory");
            goto out;
        }
        if (afd_hw_format(&hw, comment, text, AFD_HW_TEXT_MAX) != AFD_OK) {
            free(text);
            rc = cli_runtime_error(cmd, "internal error: hw file text too long");
            goto out;
        }
        rc = cli_write_file(cmd, a.out, text, strlen(text));
        free(text);
        if (rc != 0)
            goto out;
        /* pd, goodput and serve convert SLOs given with a unit (2s, 50ms)
         * to the file's: laws without one can only take bare numbers */
        if (nlaw > 0 && hw.unit[0] == '\0')
            cli_warn(cmd, "%s states no unit: give --unit (s, ms or us) so that times with a "
                          "unit (2s, 50ms) can be set against its laws",
                     a.out);
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
    afd_law_points_free(&lp[0]);
    afd_law_points_free(&lp[1]);
    return rc;
}

const cli_command cli_cmd_calibrate = {
    .name = "calibrate",
    .path = "calibrate",
    .summary = "fit latency coefficients t = alpha x + beta to measured latencies",
    .usage = "calibrate [--attention F] [--ffn F] [--comm F] [--prefill F] [--decode F] "
             "[--model M] [--device D] [--hw BASE] [--out FILE] | "
             "calibrate --batches FILE | "
             "calibrate --profile FILE [--allreduce FILE] --model M --device D [--tp T] "
             "[--summary] [--no-fit] [--also-fit TERMS] [--out FILE] | "
             "calibrate --forward FILE --device D [--no-fit] [--out FILE]",
    .description =
        "Prints one row per measured stage:\n"
        "  stage n alpha alpha_se beta beta_se r2 sigma alpha_robust beta_robust outliers\n"
        "\n"
        "Each file is a CSV with a load column (x: the token load T for Attention, the\n"
        "aggregated batch for FFN and communication) and a latency column (t).  The\n"
        "least-squares fit (GSL on OpenBLAS) gives alpha, beta, their standard errors,\n"
        "R^2 and the residual sd sigma; the robust fit (Tukey bisquare M-estimator)\n"
        "down-weights outliers such as a preempted kernel; 'outliers' counts points\n"
        "with a final weight below 0.5.  A robust fit that does not converge within\n"
        "GSL's 100 iterations is reported as nan, with a warning, and --robust refuses\n"
        "it.  --out writes the coefficients (least squares,\n"
        "or --robust) as a key=value file for --hw; stages not measured come from\n"
        "--hw BASE.  --residuals writes a table for plotting:\n"
        "  stage x t fit residual fit_robust weight\n"
        "\n"
        "--prefill FILE and --decode FILE fit the serving laws of the latency file\n"
        "(what pd, goodput and serve read) to measured batch times, by least squares\n"
        "(GSL's gsl_multifit_linear):\n"
        "  prefill batch:  t = prefill_a + prefill_b sum_p + prefill_c sum_p2\n"
        "  decode step:    t = decode_beta + decode_gamma batch + decode_alpha kv\n"
        "A prefill file has columns sum_p and sum_p2 (the sum of the batch's prompt\n"
        "lengths and of their squares) or batch and prompt (batch prompts of prompt\n"
        "tokens each); a decode file has batch and kv (KV tokens the batch holds in\n"
        "all) or batch and context (tokens per sequence, kv = batch x context); the\n"
        "time is column t (--t-col).  After the stage rows (if any) a second block has\n"
        "one row per coefficient:\n"
        "  coefficient n value se r2 sigma max_rel_err\n"
        "(se its standard error, max_rel_err the largest |fit - t| / t over the\n"
        "file's batches).  --out writes the laws with fit_max_rel_err, the largest\n"
        "relative error of the laws written (with a law kept from --hw BASE, its\n"
        "error too); a coefficient below 0 by no more than its standard error is\n"
        "written as 0 (a warning says so), one further below is refused.  A law needs\n"
        "4 batches or more, two values of each column, and the two not proportional\n"
        "(one context for every batch size cannot tell gamma from alpha).  --model\n"
        "and --device name what was measured (recorded as the file's model and\n"
        "device; else the base's), --tp T the tensor-parallel size of the instance\n"
        "measured: recorded as tp with --prefill or --decode (else the base's, and\n"
        "a base whose laws kept are of another tp is refused), as afd_tp with\n"
        "--attention, --ffn or --comm (else the base's, and a base whose\n"
        "coefficients kept are of another afd_tp is refused).\n"
        "\n"
        "--batches FILE instead fits Ascendra's batch-time regression (Appendix A,\n"
        "eq. 4-5) t = C1 (t_m + t_f) + C2 max(t_m, t_f) + C3 t_m + C4 t_f + C5 to a CSV\n"
        "with columns t_m (memory time), t_f (compute time) and t (measured), and prints\n"
        "one row: n c2 c2_se a_m a_m_se a_f a_f_se c5 c5_se r2 max_rel_err.  The first\n"
        "feature is the sum of the third and fourth, so only a_m = C1 + C3, a_f = C1 + C4,\n"
        "C2 and C5 are identifiable; C2 also needs batches on both sides of t_m = t_f.\n"
        "\n"
        "--profile FILE fits the device's mfu and mbu (one constant each) to kernel\n"
        "times measured by Vidur's profiler (data/profiling/ has a subset): the fused\n"
        "QKV projection, the output projection and the MLP (up + act + down) of one\n"
        "layer of the model at each measured TP size and token count, against the\n"
        "estimator's operators (GSL nonlinear least squares of the log ratios).\n"
        "--allreduce FILE also fits comm_eff and comm_latency_ms to all-reduce times.\n"
        "Prints one row per measurement (times in ms, rel_err = estimate/measured - 1,\n"
        "bound: memory, compute, mixed or network):\n"
        "  module tp tokens measured_ms estimate_ms rel_err bound\n"
        "or with --summary one row per module, TP size (all, then each) and regime\n"
        "(large: >= 512 tokens; weight_read: every operator memory-bound; ridge: the\n"
        "rest):\n"
        "  module tp regime n median_abs_err worst_abs_err\n"
        "--no-fit compares with the device's own efficiencies; --out writes the device\n"
        "file with the fitted values (three significant digits).  --also-fit\n"
        "kernel_us,roofline_p fits the fixed time per GEMM kernel and the exponent of\n"
        "the smooth roofline t = (t_c^p + t_m^p)^(1/p) with mfu and mbu (either or\n"
        "both); terms not fitted keep the device's values.",
    .groups = cal_groups,
    .run = run,
};
