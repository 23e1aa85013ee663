/* cost_opts.c: --price-a/--price-f and --power-a/--power-f, shared by the
 * commands that rank A/F ratios by tokens per dollar and per joule. */
#include <config.h>

#include <math.h>
#include <string.h>

#include "cli.h"

static const cli_option cost_options[] = {
    {"price-a", 0, "X", "price of one Attention device per hour (with --price-f: rule cost)",
     OPT_PRICE_A},
    {"price-f", 0, "X", "price of one FFN device per hour", OPT_PRICE_F},
    {"power-a", 0, "W", "power of one Attention device, watts (with --power-f: rule energy)",
     OPT_POWER_A},
    {"power-f", 0, "W", "power of one FFN device, watts", OPT_POWER_F},
    {NULL, 0, NULL, NULL, 0},
};
const cli_group cli_cost_group = {"Cost and energy", cost_options};

void cli_cost_init(cli_cost_args *a)
{
    a->price_a = a->price_f = a->power_a = a->power_f = NAN;
    a->unit_seconds = NAN;
}

int cli_cost_option(const char *cmd, cli_cost_args *a, const cli_option *opt, const char *arg)
{
    double *dst = opt->id == OPT_PRICE_A   ? &a->price_a
                  : opt->id == OPT_PRICE_F ? &a->price_f
                  : opt->id == OPT_POWER_A ? &a->power_a
                                           : &a->power_f;
    int rc = cli_real_min(cmd, opt->name, arg, 0, 1, dst);
    if (rc == 0 && !isfinite(*dst))
        rc = cli_usage_error(cmd, "--%s must be finite", opt->name);
    return rc;
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
