/* parse.c: strict option values and the list syntax "1,2,4:8,16:64:8". */
#include <config.h>

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "afd_mc.h"
#include "cli.h"

/* What is wrong with the number text s: for AFD_ERANGE, whether its
 * magnitude is too large for a double or nonzero and below the smallest
 * normal one (which would otherwise read as 0 or lose digits). */
static const char *status_word_of(afd_status st, const char *s)
{
    if (st != AFD_ERANGE)
        return "not a number";
    return fabs(strtod(s, NULL)) < 1 ? "out of range (nonzero, below 2.2e-308 in magnitude)"
                                     : "out of range (above 1.8e308 in magnitude)";
}

int cli_real(const char *cmd, const char *opt, const char *arg, double *out)
{
    char ex[200];
    afd_status st = afd_parse_double(arg, out);
    if (st != AFD_OK)
        return cli_usage_error(cmd, "--%s: %s: '%s'", opt, status_word_of(st, arg),
                               cli_excerpt(arg, ex, sizeof ex));
    return 0;
}

int cli_price(const char *cmd, const char *opt, const char *arg, double *out)
{
    char ex[200], num[64];
    const char *slash = strrchr(arg, '/');
    size_t len = slash != NULL ? (size_t)(slash - arg) : strlen(arg);
    afd_status st;
    *out = NAN;
    cli_excerpt(arg, ex, sizeof ex);
    if (slash == NULL)
        return cli_usage_error(cmd, "--%s: '%s' has no unit: write %s/h (dollars per device-hour)",
                               opt, ex, ex);
    if (strcmp(slash, "/h") != 0)
        return cli_usage_error(cmd, "--%s: '%s': a price is in dollars per device-hour, "
                                    "written X/h",
                               opt, ex);
    if (len == 0 || len >= sizeof num)
        return cli_usage_error(cmd, "--%s: not a number: '%s'", opt, ex);
    memcpy(num, arg, len);
    num[len] = '\0';
    st = afd_parse_double(num, out);
    if (st != AFD_OK || !(*out >= 0 && *out <= 1000)) {
        *out = NAN;
        return cli_usage_error(cmd, "--%s: '%s': %s", opt, ex,
                               st != AFD_OK ? status_word_of(st, num)
                                            : "a price per device-hour in [0, 1000] dollars");
    }
    return 0;
}

static int unit_error(const char *cmd, const char *opt, const char *arg, const char *unit,
                      afd_status st, const char *what)
{
    char ex[200];
    cli_excerpt(arg, ex, sizeof ex);
    if (st == AFD_EINVAL && unit[0] == '\0')
        return cli_usage_error(cmd,
                               "--%s: '%s' has a unit, but the latency file states none: give a "
                               "bare number in the file's unit, or add a line unit = s, ms or us "
                               "to it",
                               opt, ex);
    if (st == AFD_EINVAL)
        return cli_usage_error(cmd,
                               "--%s: '%s' has a unit, but the latency model is in %s, which "
                               "has no conversion to seconds: give a bare number in %s, or a "
                               "latency model in s, ms or us",
                               opt, ex, unit, unit);
    return cli_usage_error(cmd, "--%s: %s: '%s' (%s)", opt, status_word_of(st, arg), ex, what);
}

/* A bare number against a unit other than the second would be read in that
 * unit: "5" against a model in ms is 5 per millisecond, which nobody means by
 * accident. It is refused, naming both readings, so that a bare number is
 * never silently reinterpreted. In seconds, or against a file that states no
 * unit or one with no conversion to seconds (cycles), a bare number has one
 * reading and stays accepted, as 0 does in any unit. */
static int bare_error(const char *cmd, const char *opt, const char *arg, const char *unit,
                      int rate, int is_bare)
{
    char ex[200];
    double sec;
    if (!is_bare || afd_unit_seconds(unit, &sec) != AFD_OK || sec == 1)
        return 0;
    cli_excerpt(arg, ex, sizeof ex);
    if (rate)
        return cli_usage_error(cmd,
                               "--%s: '%s' has no unit and the latency model is in %s: write "
                               "%s/s or %s/%s",
                               opt, ex, unit, ex, ex, unit);
    return cli_usage_error(cmd,
                           "--%s: '%s' has no unit and the latency model is in %s: write %ss "
                           "or %s%s",
                           opt, ex, unit, ex, ex, unit);
}

int cli_bare_rate(const char *cmd, const char *opt, const char *arg, const char *unit)
{
    char ex[200], first[64];
    double sec;
    size_t len = strcspn(arg, ",:");
    if (arg[len] == '\0')
        return bare_error(cmd, opt, arg, unit, 1, 1);
    if (afd_unit_seconds(unit, &sec) != AFD_OK || sec == 1)
        return 0;
    /* a list: the readings of its first item, as rates with units take no ranges */
    if (len >= sizeof first)
        len = sizeof first - 1;
    memcpy(first, arg, len);
    first[len] = '\0';
    return cli_usage_error(cmd,
                           "--%s: '%s' has no unit and the latency model is in %s: give each "
                           "rate its unit, as %s/s or %s/%s",
                           opt, cli_excerpt(arg, ex, sizeof ex), unit, first, first, unit);
}

static int time_or_rate(const char *cmd, const char *opt, const char *arg, const char *unit,
                        int rate, int bare_in_unit, double *out)
{
    afd_status st;
    double x;
    int rc = bare_in_unit ? 0
                          : bare_error(cmd, opt, arg, unit, rate,
                                       afd_parse_double(arg, &x) == AFD_OK && x != 0);
    if (rc != 0)
        return rc;
    st = rate ? afd_parse_rate(arg, unit, out) : afd_parse_time(arg, unit, out);
    return st == AFD_OK ? 0
                        : unit_error(cmd, opt, arg, unit, st,
                                     rate ? "a rate: 5/s, 300/min, or a bare number"
                                          : "a duration: 2s, 150ms, 800us, or a bare number");
}

int cli_time(const char *cmd, const char *opt, const char *arg, const char *unit, double *out)
{
    return time_or_rate(cmd, opt, arg, unit, 0, 0, out);
}

int cli_rate(const char *cmd, const char *opt, const char *arg, const char *unit, double *out)
{
    return time_or_rate(cmd, opt, arg, unit, 1, 0, out);
}

int cli_time_in(const char *cmd, const char *opt, const char *arg, const char *unit, double *out)
{
    return time_or_rate(cmd, opt, arg, unit, 0, 1, out);
}

int cli_real_min(const char *cmd, const char *opt, const char *arg, double lo, int lo_open,
                 double *out)
{
    char ex[200];
    int rc = cli_real(cmd, opt, arg, out);
    if (rc != 0)
        return rc;
    if (lo_open ? !(*out > lo) : !(*out >= lo))
        return cli_usage_error(cmd, "--%s must be %s %g: '%s'", opt, lo_open ? ">" : ">=", lo,
                               cli_excerpt(arg, ex, sizeof ex));
    return 0;
}

int cli_real_in(const char *cmd, const char *opt, const char *arg, double lo, int lo_open,
                double hi, int hi_open, double *out)
{
    char ex[200];
    int rc = cli_real(cmd, opt, arg, out);
    if (rc != 0)
        return rc;
    if ((lo_open ? !(*out > lo) : !(*out >= lo)) || (hi_open ? !(*out < hi) : !(*out <= hi)))
        return cli_usage_error(cmd, "--%s must be in %c%g, %g%c: '%s'", opt, lo_open ? '(' : '[',
                               lo, hi, hi_open ? ')' : ']', cli_excerpt(arg, ex, sizeof ex));
    return 0;
}

int cli_choice(const char *cmd, const char *opt, const char *what, const char *arg,
               const char *const *names, int *index)
{
    char ex[200], list[256];
    size_t o = 0;
    int k;
    for (k = 0; names[k] != NULL; k++)
        if (strcmp(arg, names[k]) == 0) {
            *index = k;
            return 0;
        }
    list[0] = '\0';
    for (k = 0; names[k] != NULL && o + 1 < sizeof list; k++)
        o += (size_t)snprintf(list + o, sizeof list - o, "%s%s", k ? ", " : "", names[k]);
    return cli_usage_error(cmd, "--%s: unknown %s '%s' (%s)", opt, what,
                           cli_excerpt(arg, ex, sizeof ex), list);
}

int cli_integer(const char *cmd, const char *opt, const char *arg, int64_t lo, int64_t hi,
                int64_t *out)
{
    char ex[200];
    afd_status st = afd_parse_i64(arg, out);
    if (st == AFD_EPARSE)
        return cli_usage_error(cmd, "--%s: not an integer: '%s'", opt,
                               cli_excerpt(arg, ex, sizeof ex));
    if (st != AFD_OK || *out < lo || *out > hi)
        return cli_usage_error(cmd, "--%s must be an integer in [%lld, %lld]: '%s'", opt,
                               (long long)lo, (long long)hi, cli_excerpt(arg, ex, sizeof ex));
    return 0;
}

int cli_threads(const char *cmd, const char *opt, const char *arg, unsigned *out)
{
    int64_t v;
    int rc = cli_integer(cmd, opt, arg, 1, AFD_MC_MAX_THREADS, &v);
    if (rc == 0)
        *out = (unsigned)v;
    return rc;
}

/* ---- lists */

static int set_msg(char *msg, size_t cap, const char *fmt, ...) CLI_PRINTF(3, 4);

static int set_msg(char *msg, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, cap, fmt, ap);
    va_end(ap);
    return EXIT_USAGE;
}

/* One number of a list item. */
static int list_number(const char *s, size_t len, int integers, double *out, char *msg,
                       size_t cap)
{
    char buf[64], ex[200];
    afd_status st;
    if (len == 0)
        return set_msg(msg, cap, "empty value");
    if (len >= sizeof buf)
        return set_msg(msg, cap, "value too long: '%s'", cli_excerpt_n(s, len, ex, sizeof ex));
    memcpy(buf, s, len);
    buf[len] = '\0';
    if (integers) {
        int64_t v;
        st = afd_parse_i64(buf, &v);
        *out = (double)v;
        if (st == AFD_EPARSE)
            return set_msg(msg, cap, "not an integer: '%s'", cli_excerpt(buf, ex, sizeof ex));
        /* Integer lists stay within 2^53 so that doubles hold them exactly. */
        if (st != AFD_OK || v > (1LL << 53) || v < -(1LL << 53))
            return set_msg(msg, cap, "out of range: '%s'", cli_excerpt(buf, ex, sizeof ex));
    } else {
        st = afd_parse_double(buf, out);
        if (st != AFD_OK)
            return set_msg(msg, cap, "%s: '%s'", status_word_of(st, buf),
                           cli_excerpt(buf, ex, sizeof ex));
    }
    return 0;
}

static int push(cli_list *l, size_t *cap, double v)
{
    if (l->n == *cap) {
        size_t ncap = *cap ? 2 * *cap : 16;
        double *nv = realloc(l->v, ncap * sizeof *nv);
        if (nv == NULL)
            return -1;
        l->v = nv;
        *cap = ncap;
    }
    l->v[l->n++] = v;
    return 0;
}

int cli_list_parse_quiet(const char *arg, int integers, double lo, double hi, cli_list *out,
                         char *msg, size_t cap)
{
    const char *s = arg;
    size_t vcap = 0;
    char ex[200];
    afd_error range;

    out->n = 0;
    out->v = NULL;
    msg[0] = '\0';
    if (*s == '\0') {
        set_msg(msg, cap, "empty list");
        goto fail;
    }
    for (;;) {
        const char *end = strchr(s, ',');
        size_t len = end != NULL ? (size_t)(end - s) : strlen(s);
        const char *c1 = memchr(s, ':', len);
        double a, b, step = 1;

        if (len == 0) {
            set_msg(msg, cap, "empty item in list '%s'", cli_excerpt(arg, ex, sizeof ex));
            goto fail;
        }
        if (c1 == NULL) {
            if (list_number(s, len, integers, &a, msg, cap))
                goto fail;
            b = a;
        } else {
            const char *rest = c1 + 1;
            size_t rlen = len - (size_t)(rest - s);
            const char *c2 = memchr(rest, ':', rlen);
            double count;
            if (list_number(s, (size_t)(c1 - s), integers, &a, msg, cap))
                goto fail;
            if (c2 == NULL) {
                if (list_number(rest, rlen, integers, &b, msg, cap))
                    goto fail;
            } else {
                if (list_number(rest, (size_t)(c2 - rest), integers, &b, msg, cap) ||
                    list_number(c2 + 1, rlen - (size_t)(c2 + 1 - rest), integers, &step, msg, cap))
                    goto fail;
                if (!(step > 0)) {
                    set_msg(msg, cap, "step must be > 0 in '%s'",
                            cli_excerpt_n(s, len, ex, sizeof ex));
                    goto fail;
                }
            }
            if (a > b) {
                set_msg(msg, cap, "range '%s' is reversed: its start exceeds its end",
                        cli_excerpt_n(s, len, ex, sizeof ex));
                goto fail;
            }
            count = floor((b - a) / step * (1 + 4e-16) + 1e-9) + 1;
            if (count > CLI_LIST_MAX - (double)out->n) {
                set_msg(msg, cap, "range '%s' has more than %d values",
                        cli_excerpt_n(s, len, ex, sizeof ex), CLI_LIST_MAX);
                goto fail;
            }
        }
        /* Emit a, a+step, ..., each computed from a (no accumulated error). */
        {
            double k, count = c1 == NULL ? 1 : floor((b - a) / step * (1 + 4e-16) + 1e-9) + 1;
            for (k = 0; k < count; k++) {
                double v = a + k * step;
                if (!integers && v > b)
                    v = b; /* the last step lands on b up to rounding */
                if (afd_check_range(v, lo, hi, &range) != AFD_OK) {
                    set_msg(msg, cap, "%s", range.text);
                    goto fail;
                }
                if (push(out, &vcap, v) != 0) {
                    set_msg(msg, cap, "out of memory");
                    goto fail;
                }
            }
        }
        if (end == NULL)
            break;
        s = end + 1;
        if (*s == '\0') {
            set_msg(msg, cap, "empty item in list '%s'", cli_excerpt(arg, ex, sizeof ex));
            goto fail;
        }
    }
    return 0;
fail:
    cli_list_free(out);
    return EXIT_USAGE;
}

int cli_list_parse(const char *cmd, const char *opt, const char *arg, int integers, double lo,
                   double hi, cli_list *out)
{
    char msg[256];
    if (cli_list_parse_quiet(arg, integers, lo, hi, out, msg, sizeof msg) != 0)
        return cli_usage_error(cmd, "--%s: %s", opt, msg);
    return 0;
}

void cli_list_free(cli_list *l)
{
    free(l->v);
    l->v = NULL;
    l->n = 0;
}
