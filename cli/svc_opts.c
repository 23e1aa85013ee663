/* svc_opts.c: the prefill service law of the queues with deadlines
 * (afdkit offload, afdkit twotier): exactly one of --service S,
 * --service-exp MEAN, or --trace FILE with --hw FILE (each prompt's prefill
 * time by the file's prefill law, libanalytic/queue/afd_deadline.h). */
#include <config.h>

#include <math.h>
#include <string.h>

#include "cli.h"

static const cli_option service_options[] = {
    {"service", 0, "S", "deterministic prefill (service) time", OPT_SVC_CONST},
    {"service-exp", 0, "MEAN", "exponential prefill (service) time with this mean",
     OPT_SVC_EXP},
    {"trace", 0, "FILE", "request trace: the prefill time of each row's prompt (with --hw)",
     OPT_TRACE},
    {"prompt-col", 0, "NAME", "prompt-token column of the trace (default: recognised)",
     OPT_PROMPT_COL},
    {"output-col", 0, "NAME", "output-token column of the trace (default: recognised)",
     OPT_OUTPUT_COL},
    {"format", 0, "F", CLI_FORMAT_HELP, OPT_FORMAT},
    {"hw", 0, "FILE", "latency file with the prefill law prefill_a + prefill_b P + prefill_c "
                      "P^2; its unit is the unit of every time",
     OPT_HW},
    {NULL, 0, NULL, NULL, 0},
};
const cli_group cli_service_group = {"Service law (exactly one)", service_options};

int cli_service_option(cli_service_args *a, const cli_option *opt, const char *arg)
{
    if (opt->id == OPT_SVC_CONST)
        a->service = arg;
    else
        a->service_exp = arg;
    return 0;
}

int cli_service_setup(const char *cmd, const cli_service_args *a, const cli_common *c,
                      afd_hw *hw, const char **unit)
{
    int rc, laws = (a->service != NULL) + (a->service_exp != NULL) + (c->wl.trace != NULL);
    *unit = "s";
    if (laws != 1)
        return cli_usage_error(cmd, "give exactly one service law: --service S, "
                                    "--service-exp MEAN, or --trace FILE with --hw FILE");
    if (c->wl.trace != NULL && c->hw.hw == NULL)
        return cli_usage_error(cmd, "--trace needs --hw FILE with the prefill law "
                                    "(prefill_a prefill_b prefill_c)");
    if (c->hw.hw == NULL)
        return 0;
    if (c->wl.trace == NULL)
        return cli_usage_error(cmd, "--hw gives the prefill law of a --trace; with --service "
                                    "or --service-exp it has no use");
    if ((rc = cli_hw_load(cmd, &c->hw, hw)) != 0)
        return rc;
    if (!afd_hw_has_prefill(hw))
        return cli_input_error(cmd, "%s: no prefill law (prefill_a prefill_b prefill_c)",
                               c->hw.hw);
    cli_note_fit(cmd, c->hw.hw, hw, CLI_LAWS_SERVING);
    *unit = hw->unit; /* "" when the file states none: suffixes are refused */
    return 0;
}

int cli_service_law(const char *cmd, const cli_service_args *a, const cli_common *c,
                    const afd_hw *hw, const char *unit, afd_workload *w, double *value,
                    afd_svc_law **law)
{
    afd_status st;
    int rc;
    *law = NULL;
    *value = NAN;
    if (a->service != NULL || a->service_exp != NULL) {
        const char *opt = a->service != NULL ? "service" : "service-exp";
        const char *arg = a->service != NULL ? a->service : a->service_exp;
        char ex[200];
        if ((rc = cli_time(cmd, opt, arg, unit, value)) != 0)
            return rc;
        if (!(*value > 0 && isfinite(*value)))
            return cli_usage_error(cmd, "--%s must be > 0: '%s'", opt,
                                   cli_excerpt(arg, ex, sizeof ex));
        st = a->service != NULL ? afd_svc_law_deterministic(*value, law)
                                : afd_svc_law_exponential(*value, law);
    } else {
        if ((rc = cli_workload_load(cmd, &c->wl, CLI_WL_NEEDS_LENGTHS | CLI_WL_NO_SE_WARNING, 1,
                                    &c->out, w)) != 0)
            return rc;
        st = afd_svc_law_prefill(hw, w->prompt, w->n_kept, law);
        if (st == AFD_EINVAL)
            return cli_input_error(cmd, "%s: the prefill law gives a zero or non-finite service "
                                        "time on %s",
                                   c->hw.hw, c->wl.trace);
    }
    if (st != AFD_OK)
        return cli_runtime_error(cmd, "service law: %s", afd_strerror(st));
    return 0;
}
