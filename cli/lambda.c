/* lambda.c: arrival rates on the command line: a list, a rate with its unit,
 * or the trace's own rate measured from its timestamps. */
#include <config.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int cli_lambda_is_trace(const char *arg)
{
    return arg != NULL && strcmp(arg, "trace") == 0;
}

int cli_lambda_list(const char *cmd, const char *opt, const char *arg, const char *unit,
                    int bare_in_unit, const afd_workload *w, const char *trace, cli_list *out)
{
    char ex[200];
    out->n = 0;
    out->v = NULL;
    if (cli_lambda_is_trace(arg)) {
        double sec;
        if (w == NULL || trace == NULL || w->kind != AFD_WORKLOAD_TRACE)
            return cli_usage_error(cmd, "--%s trace needs --trace FILE", opt);
        if (!(w->arrivals.lambda > 0))
            return cli_input_error(cmd, "%s: --%s trace: the trace has %s", trace, opt,
                                   w->arrivals.n == 0 ? "no timestamp column (name one with "
                                                        "--time-col)"
                                                      : "no span of arrival times");
        if (afd_unit_seconds(unit, &sec) != AFD_OK)
            return cli_usage_error(cmd, "--%s trace: the time unit '%s' has no conversion from "
                                        "seconds",
                                   opt, unit[0] != '\0' ? unit : "(none stated)");
        out->v = malloc(sizeof *out->v);
        if (out->v == NULL)
            return cli_runtime_error(cmd, "out of memory");
        out->v[0] = w->arrivals.lambda * sec;
        out->n = 1;
        return 0;
    }
    if (strchr(arg, '/') == NULL) {
        size_t k;
        int rc = bare_in_unit ? 0 : cli_bare_rate(cmd, opt, arg, unit);
        if (rc != 0)
            return rc;
        rc = cli_list_parse(cmd, opt, arg, 0, -1e300, 1e300, out);
        if (rc != 0)
            return rc;
        for (k = 0; k < out->n; k++)
            if (!(out->v[k] > 0)) {
                cli_list_free(out);
                return cli_usage_error(cmd, "--%s must be > 0: '%s'", opt,
                                       cli_excerpt(arg, ex, sizeof ex));
            }
        return 0;
    }
    /* rates with units, "5/s,300/min": no ranges */
    {
        size_t n = 1, k = 0;
        const char *s = arg;
        for (; *s != '\0'; s++)
            n += *s == ',';
        out->v = malloc(n * sizeof *out->v);
        if (out->v == NULL)
            return cli_runtime_error(cmd, "out of memory");
        s = arg;
        while (k < n) {
            const char *e = strchr(s, ',');
            size_t len = e != NULL ? (size_t)(e - s) : strlen(s);
            char item[128];
            if (len >= sizeof item) {
                cli_list_free(out);
                return cli_usage_error(cmd, "--%s: item too long: '%s'", opt,
                                       cli_excerpt(s, ex, sizeof ex));
            }
            memcpy(item, s, len);
            item[len] = '\0';
            if (cli_rate(cmd, opt, item, unit, &out->v[k]) != 0) {
                cli_list_free(out);
                return EXIT_USAGE;
            }
            if (!(out->v[k] > 0)) {
                cli_list_free(out);
                return cli_usage_error(cmd, "--%s must be > 0: '%s'", opt, item);
            }
            k++;
            s += len + 1;
        }
        out->n = n;
        return 0;
    }
}

void cli_dispersion_warning(const char *cmd, const char *trace, const afd_workload *w,
                            const char *instead)
{
    double worst = 0, se = 0;
    int k, at = -1;
    if (w == NULL || w->kind != AFD_WORKLOAD_TRACE)
        return;
    for (k = 0; k < AFD_IDC_NWIN; k++)
        if (!isnan(w->arrivals.idc[k]) &&
            (at < 0 || fabs(w->arrivals.idc[k] - 1) / w->arrivals.idc_se[k] > worst)) {
            worst = fabs(w->arrivals.idc[k] - 1) / w->arrivals.idc_se[k];
            se = w->arrivals.idc_se[k];
            at = k;
        }
    /* more than 5 standard errors from the Poisson value at some window */
    if (at < 0 || worst <= 5)
        return;
    cli_warn(cmd,
             "%s: arrivals are not Poisson: index of dispersion %.3g in %g s windows "
             "(Poisson: 1 +- %.2g); the Poisson queue formulas are %s; %s",
             trace, w->arrivals.idc[at], afd_idc_windows[at], se,
             w->arrivals.idc[at] > 1 ? "optimistic" : "pessimistic", instead);
}
