/* cost_opts.c: --price-a/--price-f and --power-a/--power-f, shared by the
 * commands that rank A/F ratios by tokens per dollar and per joule. */
#include <config.h>

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "cli.h"

static const cli_option cost_options[] = {
    {"price-a", 0, "X", "price of one Attention device per hour (with --price-f: rule cost)",
     OPT_PRICE_A},
    {"price-f", 0, "X", "price of one FFN device per hour", OPT_PRICE_F},
    {"power-a", 0, "W", "power of one Attention device, watts (with --power-f: rule energy)",
     OPT_POWER_A},
    {"power-f", 0, "W", "power of one FFN device, watts", OPT_POWER_F},
    {"device-a", 0, "NAME|FILE",
     "Attention device: its price_per_hour and power_w (and its latency with --model)",
     OPT_DEVICE_A},
    {"device-f", 0, "NAME|FILE", "FFN device, likewise", OPT_DEVICE_F},
    {"model", 0, "NAME|FILE",
     "with --device-a/--device-f: the six coefficients from the estimator, not --hw",
     OPT_COST_MODEL},
    {"tp", 0, "T", "devices per Attention and per FFN instance (default: the afd_tp of --hw "
                   "FILE, else 1)", OPT_COST_TP},
    {NULL, 0, NULL, NULL, 0},
};
const cli_group cli_cost_group = {"Cost and energy", cost_options};

void cli_cost_init(cli_cost_args *a)
{
    a->price_a = a->price_f = a->power_a = a->power_f = NAN;
    a->have_price = a->have_power = 0;
    a->unit_seconds = NAN;
    a->device_a = a->device_f = a->model = NULL;
    a->tp = 1;
    a->have_tp = 0;
}

int cli_cost_option(const char *cmd, cli_cost_args *a, const cli_option *opt, const char *arg)
{
    double *dst;
    switch (opt->id) {
    case OPT_DEVICE_A: a->device_a = arg; return 0;
    case OPT_DEVICE_F: a->device_f = arg; return 0;
    case OPT_COST_MODEL: a->model = arg; return 0;
    case OPT_COST_TP: {
        int64_t v;
        int rc = cli_integer(cmd, opt->name, arg, 1, 1024, &v);
        a->tp = (double)v;
        a->have_tp = 1;
        return rc;
    }
    }
    dst = opt->id == OPT_PRICE_A   ? &a->price_a
                  : opt->id == OPT_PRICE_F ? &a->price_f
                  : opt->id == OPT_POWER_A ? &a->power_a
                                           : &a->power_f;
    int rc = cli_real_min(cmd, opt->name, arg, 0, 1, dst);
    if (rc == 0 && !isfinite(*dst))
        rc = cli_usage_error(cmd, "--%s must be finite", opt->name);
    return rc;
}

int cli_cost_devices(const char *cmd, cli_cost_args *a, const cli_hw_args *hwa, afd_hw *hw,
                     int *have_hw)
{
    afd_device da, df;
    int rc, k;
    *have_hw = 0;
    if (a->device_a == NULL && a->device_f == NULL) {
        if (a->model != NULL)
            return cli_usage_error(cmd, "--model needs --device-a and --device-f");
        if (a->tp != 1)
            return cli_usage_error(cmd, "--tp needs --device-a and --device-f");
        return 0;
    }
    if (a->device_a == NULL || a->device_f == NULL)
        return cli_usage_error(cmd, "--device-a and --device-f go together (%s is missing)",
                               a->device_a == NULL ? "--device-a" : "--device-f");
    if ((rc = cli_load_device_as(cmd, "device-a", a->device_a, &da)) != 0 ||
        (rc = cli_load_device_as(cmd, "device-f", a->device_f, &df)) != 0)
        return rc;
    /* the six coefficients of a latency file time instances of its afd_tp
     * devices (not its tp, the size of its serving laws): price that many
     * (a file that cannot be read is reported when loaded) */
    if (a->model == NULL && hwa->hw != NULL) {
        afd_hw f;
        afd_error err;
        if (afd_hw_preset(hwa->hw, &f) != AFD_OK && afd_hw_read(hwa->hw, &f, &err) == AFD_OK &&
            (rc = cli_hw_afd_tp(cmd, hwa->hw, &f, a->have_tp, &a->tp)) != 0)
            return rc;
    }
    /* per instance of tp devices; an explicit --price-x/--power-x wins */
    if (isnan(a->price_a))
        a->price_a = a->tp * da.price_per_hour;
    if (isnan(a->price_f))
        a->price_f = a->tp * df.price_per_hour;
    if (isnan(a->power_a))
        a->power_a = a->tp * da.power_w;
    if (isnan(a->power_f))
        a->power_f = a->tp * df.power_w;
    if (isnan(a->price_a) != isnan(a->price_f))
        return cli_usage_error(cmd, "%s has no price_per_hour: give %s",
                               isnan(a->price_a) ? da.name : df.name,
                               isnan(a->price_a) ? "--price-a" : "--price-f");
    if (isnan(a->power_a) != isnan(a->power_f))
        return cli_usage_error(cmd, "%s has no power_w: give %s",
                               isnan(a->power_a) ? da.name : df.name,
                               isnan(a->power_a) ? "--power-a" : "--power-f");
    if (a->model == NULL)
        return 0;
    if (hwa->hw != NULL)
        return cli_usage_error(cmd, "--model and --hw exclude each other (--model fits the "
                                    "coefficients for --device-a and --device-f)");
    for (k = 0; k < 6; k++)
        if (hwa->have[k])
            return cli_usage_error(cmd, "--model and the coefficient options exclude each "
                                        "other");
    {
        afd_model m;
        afd_error err;
        afd_status st = afd_model_load(a->model, &m, &err);
        if (st != AFD_OK) {
            if (st == AFD_EIO && strchr(a->model, '/') == NULL && strchr(a->model, '.') == NULL)
                return cli_usage_error(cmd, "--model: no preset or file '%s' (afdkit model "
                                            "--help lists the presets)",
                                       a->model);
            return cli_file_error(cmd, a->model, st, &err);
        }
        st = afd_estimate_laws_afd(&m, &da, &df, a->tp, hw, &err);
        if (st != AFD_OK)
            return st == AFD_EINVAL ? cli_usage_error(cmd, "%s", err.text)
                                    : cli_runtime_error(cmd, "%s", err.text);
    }
    *have_hw = 1;
    return 0;
}

int cli_cost_finish(const char *cmd, cli_cost_args *a, const afd_hw *hw)
{
    const char *unit = strcmp(hw->unit, "cycles") == 0 ? "cycle" : "time unit";
    if (isnan(a->price_a) != isnan(a->price_f))
        return cli_usage_error(cmd, "--price-a and --price-f go together (%s is missing)",
                               isnan(a->price_a) ? "--price-a" : "--price-f");
    if (isnan(a->power_a) != isnan(a->power_f))
        return cli_usage_error(cmd, "--power-a and --power-f go together (%s is missing)",
                               isnan(a->power_a) ? "--power-a" : "--power-f");
    a->have_price = !isnan(a->price_a);
    a->have_power = !isnan(a->power_a);
    a->unit_seconds = NAN;
    if ((a->have_price || a->have_power) &&
        afd_unit_seconds(hw->unit, &a->unit_seconds) != AFD_OK) {
        cli_warn(cmd,
                 "the latency model's unit '%s' is not a unit of time: thr_per_dollar is "
                 "tokens per %s per (price per hour) and thr_per_joule tokens per %s per "
                 "watt; the ratios they pick are unaffected",
                 hw->unit[0] != '\0' ? hw->unit : "?", unit, unit);
        a->unit_seconds = NAN;
    }
    return 0;
}

static double per_cost(const cli_cost_args *a, double r, double B, double tau, double ca, double cf,
                       int per_hour)
{
    if (isnan(a->unit_seconds)) /* no conversion: tokens per unit per cost */
        return afd_bundle_per_cost(r, B, tau, 1, ca, cf, 0);
    return afd_bundle_per_cost(r, B, tau, a->unit_seconds, ca, cf, per_hour);
}

double cli_cost_per_dollar(const cli_cost_args *a, double r, double B, double tau)
{
    return a->have_price ? per_cost(a, r, B, tau, a->price_a, a->price_f, 1) : NAN;
}

double cli_cost_per_joule(const cli_cost_args *a, double r, double B, double tau)
{
    return a->have_power ? per_cost(a, r, B, tau, a->power_a, a->power_f, 0) : NAN;
}
