/* hw_opts.c: the hardware option group: --hw NAME|FILE and overrides. */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const cli_option hw_options[] = {
    {"hw", 0, "NAME|FILE", "latency coefficients: a preset (paper-910c) or a key=value file",
     OPT_HW},
    {"alpha-a", 0, "X", "Attention time per token of load (overrides --hw; 2us: with a unit)",
     OPT_ALPHA_A},
    {"beta-a", 0, "X", "Attention fixed time", OPT_BETA_A},
    {"alpha-f", 0, "X", "FFN time per request of the aggregated batch", OPT_ALPHA_F},
    {"beta-f", 0, "X", "FFN fixed time", OPT_BETA_F},
    {"alpha-c", 0, "X", "communication round-trip time per request", OPT_ALPHA_C},
    {"beta-c", 0, "X", "communication fixed time", OPT_BETA_C},
    {NULL, 0, NULL, NULL, 0},
};

const cli_group cli_hw_group = {
    "Hardware (t = alpha x + beta, one time unit throughout; --hw, then overrides)",
    hw_options};


void cli_hw_init(cli_hw_args *a)
{
    memset(a, 0, sizeof *a);
}

int cli_hw_option(const char *cmd, cli_hw_args *a, const cli_option *opt, const char *arg)
{
    double v;
    int k;
    if (opt->id == OPT_HW) {
        if (arg[0] == '\0')
            return cli_usage_error(cmd, "--hw: empty name");
        a->hw = arg;
        return 0;
    }
    k = opt->id - OPT_ALPHA_A;
    if (k < 0 || k >= 6)
        return cli_usage_error(cmd, "internal error: unhandled option --%s", opt->name);
    a->have[k] = 1;
    a->arg[k] = arg;
    /* converted once the latency file's unit is known (cli_hw_load); its
     * form is checked here, as a duration in seconds */
    return cli_time(cmd, opt->name, arg, "s", &v);
}

int cli_hw_load(const char *cmd, const cli_hw_args *a, afd_hw *out)
{
    double *const coef[6] = {&out->alpha_a, &out->beta_a, &out->alpha_f,
                             &out->beta_f,  &out->alpha_c, &out->beta_c};
    afd_error err;
    afd_status st;
    int k, all = 1;

    afd_hw_init(out);
    for (k = 0; k < 6; k++)
        all &= a->have[k];
    if (a->hw != NULL) {
        if (afd_hw_preset(a->hw, out) != AFD_OK) {
            st = afd_hw_read(a->hw, out, &err);
            if (st != AFD_OK)
                return cli_spec_error(cmd, "hw", a->hw, st, &err, afd_hw_preset_name);
        }
    } else if (!all) {
        return cli_usage_error(cmd, "no hardware coefficients: give --hw NAME|FILE (e.g. "
                                    "--hw %s) or all six --alpha-a ... --beta-c",
                               afd_hw_preset_name(0));
    }
    /* overrides: bare numbers in the file's unit; with a unit, converted to
     * it (seconds without a file, and then the result is in seconds) */
    for (k = 0; k < 6; k++) {
        const char *unit = a->hw != NULL ? out->unit : "s";
        double bare;
        int rc;
        if (!a->have[k])
            continue;
        /* hw_options[1 + k] is the option of coef[k] */
        if ((rc = cli_time(cmd, hw_options[1 + k].name, a->arg[k], unit, coef[k])) != 0)
            return rc;
        if (a->hw == NULL && afd_parse_double(a->arg[k], &bare) != AFD_OK)
            snprintf(out->unit, sizeof out->unit, "s");
        /* a coefficient given by hand was not fitted to the estimator */
        out->afd_fit_max_rel_err = NAN;
    }
    st = afd_hw_check(out, &err);
    if (st != AFD_OK)
        return cli_usage_error(cmd, "%s", err.text);
    return 0;
}

/* Hold --tp to a count of devices a latency file states (n; 0: unknown, no
 * hold): a different --tp is a usage error saying what the count times
 * (why), and without --tp the file's count is the value. */
static int hold_tp(const char *cmd, const char *file, unsigned n, const char *why, int given,
                   double *tp)
{
    if (n == 0)
        return 0;
    if (given && *tp != n)
        return cli_usage_error(cmd, "--tp %g: %s %s; make a file at TP %g with afdkit estimate "
                                    "--tp %g --out, or drop --tp",
                               *tp, file, why, *tp, *tp);
    *tp = n;
    return 0;
}

int cli_hw_tp(const char *cmd, const char *file, const afd_hw *hw, int given, double *tp)
{
    char why[96];
    snprintf(why, sizeof why, "was computed at tp = %u (its laws time a TP-%u instance)",
             hw->tp, hw->tp);
    return hold_tp(cmd, file, hw->tp, why, given, tp);
}

int cli_hw_afd_tp(const char *cmd, const char *file, const afd_hw *hw, int given, double *tp)
{
    char why[112];
    /* a file that knows its laws' size but not its six coefficients' (a
     * MoE hw file whose FFN instance spans several cards) prices --tp */
    if (hw->afd_tp == 0 && hw->tp > 1 && !given)
        cli_warn(cmd, "%s: tp = %u but no afd_tp: the devices per instance its six AFD "
                      "coefficients time are unknown; priced at 1 device each (give --tp)",
                 file, hw->tp);
    snprintf(why, sizeof why,
             "has afd_tp = %u (its six AFD coefficients time instances of %u device%s)",
             hw->afd_tp, hw->afd_tp, hw->afd_tp == 1 ? "" : "s");
    return hold_tp(cmd, file, hw->afd_tp, why, given, tp);
}

int cli_batch(const char *cmd, const char *arg, double *B)
{
    int64_t v;
    afd_status st = afd_parse_i64(arg, &v);
    if (st != AFD_OK || v < 1 || v > ((int64_t)1 << 31))
        return cli_usage_error(cmd, "-B must be an integer in [1, 2147483648]: '%.40s'", arg);
    *B = (double)v;
    return 0;
}

/* A warning per law of fit off the estimator by more than
 * AFD_ESTIMATE_FIT_WARN, the first nlaws of AFD_FIT_PREFILL, AFD_FIT_DECODE,
 * AFD_FIT_ATTENTION, AFD_FIT_FFN (estimate --out, hw --out). */
void cli_warn_fit(const char *cmd, const afd_estimate_fit *fit, int nlaws)
{
    static const char *const what[AFD_FIT_N] = {
        "the prefill law a + b sum P + c sum P^2", "the decode law beta + gamma b + alpha K",
        "the Attention law alpha_a K + beta_a", "the FFN law alpha_f n + beta_f"};
    int k;
    for (k = 0; k < nlaws && k < AFD_FIT_N; k++) {
        const afd_estimate_fit_law *l = &fit->law[k];
        if (!(l->max_rel_err > AFD_ESTIMATE_FIT_WARN))
            continue;
        if (k == AFD_FIT_FFN)
            cli_warn(cmd, "%s is off the estimator by %.15g%% at aggregated batch %g (fitted "
                          "over %g to %g sequences; warned above %g%%)",
                     what[k], nearbyint(100 * l->max_rel_err), l->at_batch, l->lo_batch, l->hi_batch,
                     100 * AFD_ESTIMATE_FIT_WARN);
        else
            cli_warn(cmd, "%s is off the estimator by %.15g%% at batch %g, %s %g (fitted over "
                          "batches %g to %g; warned above %g%%)",
                     what[k], nearbyint(100 * l->max_rel_err), l->at_batch,
                     k == AFD_FIT_PREFILL ? "prompt" : "context", l->at_seq, l->lo_batch,
                     l->hi_batch, 100 * AFD_ESTIMATE_FIT_WARN);
    }
}

void cli_note_fit(const char *cmd, const char *source, const afd_hw *hw, unsigned which)
{
    char src[256];
    /* a file's laws may come from estimate --out or from calibrate, fitted
     * to measured times: its error is against the times it was fitted to */
    const char *to = source != NULL ? "the times they were fitted to" : "the estimator";
    if (source != NULL)
        snprintf(src, sizeof src, "%s", source);
    else
        snprintf(src, sizeof src, "the estimator's laws for %s on %u x %s", hw->model, hw->tp,
                 hw->device);
    if ((which & CLI_LAWS_SERVING) && afd_hw_has_prefill(hw) && afd_hw_has_decode(hw) &&
        isfinite(hw->fit_max_rel_err))
        cli_note(cmd, "%s: the prefill law a + b sum P + c sum P^2 and the decode law beta + "
                      "gamma b + alpha K are off %s by at most %.3g%% over the grid they were "
                      "fitted on (fit_max_rel_err)",
                 src, to, 100 * hw->fit_max_rel_err);
    if ((which & CLI_LAWS_AFD) && isfinite(hw->afd_fit_max_rel_err))
        cli_note(cmd, "%s: the AFD laws alpha_a K + beta_a and alpha_f n + beta_f are off %s by "
                      "at most %.3g%% over the grid they were fitted on (afd_fit_max_rel_err)",
                 src, to, 100 * hw->afd_fit_max_rel_err);
}
