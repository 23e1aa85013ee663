/* hw.c: latency coefficients: presets, key=value files, Appendix B. */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "afd_hw.h"
#include "afd_parse.h"
#include "internal.h"

#define MAX_FILE AFD_HW_TEXT_MAX

static const struct {
    const char *name;
    afd_hw hw;
} presets[] = {
    /* Table 3: linear regression on Ascend 910C execution traces, DeepSeek-V3. */
    {"paper-910c",
     {.alpha_a = 0.00165,
      .beta_a = 50,
      .alpha_f = 0.083,
      .beta_f = 100,
      .alpha_c = 0.022,
      .beta_c = 20,
      .unit = "cycles"}},
};
#define N_PRESETS (sizeof presets / sizeof presets[0])

/* Every numeric key of a latency file: the six AFD coefficients (required),
 * then the optional serving laws and the fits' errors (N_ERRORS ratios, not
 * times: no unit conversion); then the text keys: unit, model, device and
 * the integer keys, the tensor-parallel size the laws time, the largest
 * batch of the decode law's fit, the devices per instance the six
 * coefficients time. */
enum { N_REQUIRED = 6, N_NUMERIC = 14, N_ERRORS = 2 };
enum { K_UNIT = N_NUMERIC, K_TP = N_NUMERIC + 3, K_DBMAX, K_AFD_TP, K_DTABLE, K_PTABLE, N_KEYS };
/* the numeric key after which decode_batch_max is written */
enum { K_DECODE_ALPHA = 11 };

/* The keys of a latency file (afd_priv_kv_key: name, text, lo, hi, lo_open,
 * scaled, unit) with the plausible range of each number.
 *
 * Every time-valued coefficient is at most HOUR: it is the time of one
 * step (or of one step's part) for one unit of load: alpha_a per token of
 * an Attention worker's load, alpha_f and alpha_c per request of the
 * aggregated batch, beta_a, beta_f, beta_c, prefill_a and decode_beta a
 * step's fixed time, prefill_b per prompt token, prefill_c per squared
 * prompt token, decode_gamma per sequence, decode_alpha per KV token.  A
 * device needing an hour for one token, request or fixed step is no
 * device to size a deployment of (the slowest measured decode steps are
 * tenths of a second); above an hour only overflow and nonsense (1e100)
 * remain, which make the closed forms fail or print NaN.  The lower bound
 * 0 is the model's (a time is not negative; alpha_a and alpha_f > 0 are
 * afd_hw_check's).  The bounds are in seconds, converted to the file's
 * unit (unit_scale).  The fits' errors are ratios, not times: any finite
 * value >= 0 (a poor fit is stated, not refused). */
#define HOUR 3600.0
static const afd_priv_kv_key fields[N_KEYS] = {
    {"alpha_a", 0, 0, HOUR, 0, 1, ""},
    {"beta_a", 0, 0, HOUR, 0, 1, ""},
    {"alpha_f", 0, 0, HOUR, 0, 1, ""},
    {"beta_f", 0, 0, HOUR, 0, 1, ""},
    {"alpha_c", 0, 0, HOUR, 0, 1, ""},
    {"beta_c", 0, 0, HOUR, 0, 1, ""},
    {"prefill_a", 0, 0, HOUR, 0, 1, ""},
    {"prefill_b", 0, 0, HOUR, 0, 1, ""},
    {"prefill_c", 0, 0, HOUR, 0, 1, ""},
    {"decode_beta", 0, 0, HOUR, 0, 1, ""},
    {"decode_gamma", 0, 0, HOUR, 0, 1, ""},
    {"decode_alpha", 0, 0, HOUR, 0, 1, ""},
    {"fit_max_rel_err", 0, 0, INFINITY, 0, 0, ""},
    {"afd_fit_max_rel_err", 0, 0, INFINITY, 0, 0, ""},
    {"unit", 1, 0, 0, 0, 0, ""},
    {"model", 1, 0, 0, 0, 0, ""},
    {"device", 1, 0, 0, 0, 0, ""},
    {"tp", 1, 0, 0, 0, 0, ""},
    {"decode_batch_max", 1, 0, 0, 0, 0, ""},
    {"afd_tp", 1, 0, 0, 0, 0, ""},
    {"decode_table", 1, 0, 0, 0, 0, ""},
    {"prefill_table", 1, 0, 0, 0, 0, ""},
};

/* Units of a latency file per second: exact powers of ten (1 / 1e-6 is not
 * 1e6).  cycles: a clock of 10 GHz, above any accelerator's (about 2 GHz),
 * so that an hour in cycles is never below a real device's hour; a file
 * without a unit is held to the same, the largest of these bounds. */
static const struct {
    const char *name, *shown;
    double per_second;
} units[] = {{"s", "s", 1},
             {"ms", "ms", 1e3},
             {"us", "us", 1e6},
             {"ns", "ns", 1e9},
             {"cycles", "cycles (an hour at 10 GHz)", 1e10},
             {"", "(an hour in cycles at 10 GHz: no unit given)", 1e10}};
#define N_UNITS (sizeof units / sizeof units[0])

/* the index in units of a latency file's unit; the last (no unit) when it
 * is none of them */
static size_t unit_index(const char *unit, size_t n)
{
    size_t i;
    for (i = 0; i + 1 < N_UNITS; i++)
        if (strlen(units[i].name) == n && memcmp(units[i].name, unit, n) == 0)
            return i;
    return N_UNITS - 1;
}

/* key k's value v against its plausible range in the unit (text[0..n)) */
static afd_status check_range(int k, double v, const char *unit, size_t n, long line,
                              afd_error *err)
{
    size_t u = unit_index(unit, n);
    return fields[k].scaled ? afd_priv_kv_range(&fields[k], v, units[u].per_second,
                                                units[u].shown, line, err)
                            : afd_priv_kv_range(&fields[k], v, 1, NULL, line, err);
}

/* a decode_batch_max without the law it is the range of (afd_hw_check, and
 * afd_hw_parse with the key's line) */
static const char dbmax_needs_law[] = "decode_batch_max is the range of the decode law: it "
                                      "needs decode_beta, decode_gamma and decode_alpha";

static const char *key_name(int k)
{
    return fields[k].name;
}

static double *coef(afd_hw *hw, int k)
{
    double *const p[N_NUMERIC] = {&hw->alpha_a,      &hw->beta_a,       &hw->alpha_f,
                                  &hw->beta_f,       &hw->alpha_c,      &hw->beta_c,
                                  &hw->prefill_a,    &hw->prefill_b,    &hw->prefill_c,
                                  &hw->decode_beta,  &hw->decode_gamma, &hw->decode_alpha,
                                  &hw->fit_max_rel_err, &hw->afd_fit_max_rel_err};
    return p[k];
}

static char *str_field(afd_hw *hw, int k, size_t *cap)
{
    char *const p[3] = {hw->unit, hw->model, hw->device};
    const size_t c[3] = {sizeof hw->unit, sizeof hw->model, sizeof hw->device};
    *cap = c[k];
    return p[k];
}

static void set_nan(afd_hw *hw)
{
    int k;
    for (k = 0; k < N_NUMERIC; k++)
        *coef(hw, k) = NAN;
    hw->unit[0] = hw->model[0] = hw->device[0] = '\0';
    hw->tp = 0;
    hw->decode_batch_max = 0;
    hw->afd_tp = 0;
    hw->decode_table.nb = hw->decode_table.ns = 0;
    hw->prefill_table.nb = hw->prefill_table.ns = 0;
}

static void laws_nan(afd_hw *hw)
{
    int k;
    for (k = N_REQUIRED; k < N_NUMERIC; k++)
        *coef(hw, k) = NAN;
    hw->model[0] = hw->device[0] = '\0';
    hw->tp = 0;
    hw->decode_batch_max = 0;
    hw->decode_table.nb = hw->decode_table.ns = 0;
    hw->prefill_table.nb = hw->prefill_table.ns = 0;
}

void afd_hw_init(afd_hw *hw)
{
    set_nan(hw);
}

int afd_hw_has_prefill(const afd_hw *hw)
{
    return isfinite(hw->prefill_a) && isfinite(hw->prefill_b) && isfinite(hw->prefill_c);
}

int afd_hw_has_decode(const afd_hw *hw)
{
    return isfinite(hw->decode_beta) && isfinite(hw->decode_gamma) && isfinite(hw->decode_alpha);
}

afd_status afd_hw_preset(const char *name, afd_hw *out)
{
    size_t k;
    for (k = 0; k < N_PRESETS; k++)
        if (strcmp(presets[k].name, name) == 0) {
            *out = presets[k].hw;
            laws_nan(out);
            return AFD_OK;
        }
    set_nan(out);
    return AFD_EINVAL;
}

const char *afd_hw_preset_name(size_t i)
{
    return i < N_PRESETS ? presets[i].name : NULL;
}

/* NULL when table t is empty or well formed (each axis of 1 to
 * AFD_HW_TABLE_MAX points, finite, >= 1 and strictly increasing; each time
 * finite and > 0: the grid spans the batches and the contexts the KV
 * cache holds, and its corners, a batch of the longest contexts, hold
 * more and may take longer than the hour a coefficient is held to), else
 * what is wrong */
static const char *table_check(const afd_hw_table *t)
{
    unsigned i;
    if (t->nb == 0 && t->ns == 0)
        return NULL;
    if (t->nb < 1 || t->ns < 1 || t->nb > AFD_HW_TABLE_MAX || t->ns > AFD_HW_TABLE_MAX ||
        t->nb * t->ns > AFD_HW_TABLE_POINTS)
        return "each axis needs 1 to 96 points, 4096 in all";
    for (i = 0; i < t->nb; i++)
        if (!(isfinite(t->b[i]) && t->b[i] >= 1 && (i == 0 || t->b[i] > t->b[i - 1])))
            return "the batches must be finite, >= 1 and increasing";
    for (i = 0; i < t->ns; i++)
        if (!(isfinite(t->s[i]) && t->s[i] >= 1 && (i == 0 || t->s[i] > t->s[i - 1])))
            return "the contexts must be finite, >= 1 and increasing";
    for (i = 0; i < t->nb * t->ns; i++)
        if (!(isfinite(t->t[i]) && t->t[i] > 0))
            return "the times must be finite and > 0";
    return NULL;
}

afd_status afd_hw_check(const afd_hw *hw, afd_error *err)
{
    int k;
    afd_error_clear(err);
    for (k = 0; k < 6; k++) {
        double v = *coef((afd_hw *)hw, k);
        if (!isfinite(v))
            return afd_priv_fail(err, AFD_EINVAL, 0, 0, "%s is not finite", key_name(k));
        if (v < 0)
            return afd_priv_fail(err, AFD_EINVAL, 0, 0, "%s must be >= 0: %g", key_name(k), v);
    }
    if (!(hw->alpha_a > 0))
        return afd_priv_fail(err, AFD_EINVAL, 0, 0,
                             "alpha_a must be > 0: Attention time must grow with the token load");
    if (!(hw->alpha_f > 0))
        return afd_priv_fail(err, AFD_EINVAL, 0, 0,
                             "alpha_f must be > 0: FFN time must grow with the batch");
    /* The serving laws: all three of a law or none; each finite and >= 0. */
    for (k = N_REQUIRED; k + 3 <= N_NUMERIC - N_ERRORS; k += 3) {
        int j, present = 0;
        for (j = k; j < k + 3; j++)
            present += !isnan(*coef((afd_hw *)hw, j));
        if (present != 0 && present != 3)
            return afd_priv_fail(err, AFD_EINVAL, 0, 0, "%s, %s and %s go together",
                                 key_name(k), key_name(k + 1), key_name(k + 2));
        for (j = k; present == 3 && j < k + 3; j++) {
            double v = *coef((afd_hw *)hw, j);
            if (!isfinite(v) || v < 0)
                return afd_priv_fail(err, AFD_EINVAL, 0, 0, "%s must be finite and >= 0: %g",
                                     key_name(j), v);
        }
    }
    for (k = N_NUMERIC - N_ERRORS; k < N_NUMERIC; k++) {
        double v = *coef((afd_hw *)hw, k);
        if (!isnan(v) && !(v >= 0 && isfinite(v)))
            return afd_priv_fail(err, AFD_EINVAL, 0, 0, "%s must be finite and >= 0: %g",
                                 key_name(k), v);
    }
    if (hw->tp > AFD_HW_TP_MAX)
        return afd_priv_fail(err, AFD_EINVAL, 0, 0,
                             "tp must be at most %d (a tensor-parallel size): %u",
                             AFD_HW_TP_MAX, hw->tp);
    if (hw->decode_batch_max > AFD_HW_BATCH_MAX)
        return afd_priv_fail(err, AFD_EINVAL, 0, 0,
                             "decode_batch_max must be at most %u (a batch): %u",
                             AFD_HW_BATCH_MAX, hw->decode_batch_max);
    if (hw->decode_batch_max > 0 && !afd_hw_has_decode(hw))
        return afd_priv_fail(err, AFD_EINVAL, 0, 0,
                             "%s", dbmax_needs_law);
    if (hw->afd_tp > AFD_HW_TP_MAX)
        return afd_priv_fail(err, AFD_EINVAL, 0, 0,
                             "afd_tp must be at most %d (devices per instance): %u",
                             AFD_HW_TP_MAX, hw->afd_tp);
    for (k = 0; k < 2; k++) {
        const afd_hw_table *t = k == 0 ? &hw->decode_table : &hw->prefill_table;
        const char *why = table_check(t);
        if (why != NULL)
            return afd_priv_fail(err, AFD_EINVAL, 0, 0, "%s: %s", key_name(K_DTABLE + k), why);
    }
    /* the plausible ranges, as a latency file's numbers are held to them */
    for (k = 0; k < N_NUMERIC; k++) {
        double v = *coef((afd_hw *)hw, k);
        afd_status st;
        if ((k < N_REQUIRED || !isnan(v)) &&
            (st = check_range(k, v, hw->unit, strlen(hw->unit), 0, err)) != AFD_OK)
            return st;
    }
    return AFD_OK;
}

/* Parse a table's value "nb ns b_1 .. b_nb s_1 .. s_ns t_11 .. t_nb,ns"
 * (the m characters at s) into *t; NULL, or what is wrong. */
static const char *table_parse(const char *s, size_t m, afd_hw_table *t)
{
    size_t pos = 0, want = 2, got = 0;
    while (pos < m) {
        char num[64];
        size_t a;
        double x;
        while (pos < m && (s[pos] == ' ' || s[pos] == '\t'))
            pos++;
        if (pos == m)
            break;
        for (a = pos; pos < m && s[pos] != ' ' && s[pos] != '\t'; pos++)
            ;
        if (pos - a >= sizeof num)
            return "a number too long";
        memcpy(num, s + a, pos - a);
        num[pos - a] = '\0';
        if (afd_parse_double(num, &x) != AFD_OK)
            return "not a number";
        if (got >= want)
            return "more numbers than nb ns b.. s.. t.. (nb ns of them)";
        if (got < 2) {
            if (!(x >= 1 && x <= AFD_HW_TABLE_MAX && x == floor(x)))
                return "nb and ns must be integers in [1, 96]";
            *(got == 0 ? &t->nb : &t->ns) = (unsigned)x;
            if (got == 1 && (size_t)t->nb * t->ns > AFD_HW_TABLE_POINTS)
                return "nb ns must be at most 4096";
            if (got == 1)
                want = 2 + (size_t)t->nb + t->ns + (size_t)t->nb * t->ns;
        } else if (got < 2 + (size_t)t->nb) {
            t->b[got - 2] = x;
        } else if (got < 2 + (size_t)t->nb + t->ns) {
            t->s[got - 2 - t->nb] = x;
        } else {
            t->t[got - 2 - t->nb - t->ns] = x;
        }
        got++;
    }
    if (got < want)
        return "fewer numbers than nb ns b.. s.. t.. (nb ns of them)";
    return NULL;
}

/* 1 when the m characters at s are an integer in [1, max], in *x */
static int parse_count(const char *s, size_t m, double max, double *x)
{
    char num[128];
    if (m >= sizeof num)
        return 0;
    memcpy(num, s, m);
    num[m] = '\0';
    return afd_parse_double(num, x) == AFD_OK && *x >= 1 && *x <= max && *x == floor(*x);
}

afd_status afd_hw_parse(const char *text, size_t len, afd_hw *out, afd_error *err)
{
    afd_priv_kv_val kv[N_KEYS];
    int order[N_KEYS], n, i, k;
    long dbmax_line = 0;
    afd_hw hw;
    afd_status st;

    set_nan(out);
    set_nan(&hw);
    st = afd_priv_kv_parse(text, len, fields, N_KEYS,
                           "alpha_a, beta_a, alpha_f, beta_f, alpha_c, beta_c, prefill_a/b/c, "
                           "decode_beta/gamma/alpha, decode_batch_max, fit_max_rel_err, "
                           "afd_fit_max_rel_err, unit, model, device, tp, afd_tp, "
                           "decode/prefill_table",
                           kv, err);
    if (st != AFD_OK)
        return st;
    /* the values in the order of their lines, so that the first wrong line
     * is the one named */
    n = afd_priv_kv_order(kv, N_KEYS, order);
    for (i = 0; i < n; i++) {
        const char *s = kv[order[i]].s;
        size_t m = kv[order[i]].n;
        long line = kv[order[i]].line;
        char v[64];
        k = order[i];
        afd_priv_show(s, m, v, sizeof v);
        if (k == K_DTABLE || k == K_PTABLE) {
            afd_hw_table *t = k == K_DTABLE ? &hw.decode_table : &hw.prefill_table;
            const char *why = table_parse(s, m, t);
            if (why == NULL)
                why = table_check(t);
            if (why != NULL) {
                t->nb = t->ns = 0;
                return afd_priv_fail(err, AFD_EPARSE, line, 0, "%s: %s: '%s'", key_name(k), why,
                                     v);
            }
        } else if (k == K_DBMAX) {
            /* the largest batch the decode law was fitted on: a count */
            double x;
            if (!parse_count(s, m, AFD_HW_BATCH_MAX, &x))
                return afd_priv_fail(err, AFD_EPARSE, line, 0,
                                     "decode_batch_max must be an integer in [1, %u] (the "
                                     "largest batch the decode law was fitted on): '%s'",
                                     AFD_HW_BATCH_MAX, v);
            hw.decode_batch_max = (unsigned)x;
            dbmax_line = line;
        } else if (k == K_TP || k == K_AFD_TP) {
            /* the tensor-parallel size the laws time, the devices per
             * instance the six coefficients time: counts of devices */
            double x;
            if (!parse_count(s, m, AFD_HW_TP_MAX, &x))
                return afd_priv_fail(err, AFD_EPARSE, line, 0,
                                     k == K_TP ? "tp must be an integer in [1, %d] (the "
                                                 "tensor-parallel size the laws time): '%s'"
                                               : "afd_tp must be an integer in [1, %d] (the "
                                                 "devices per instance the six AFD "
                                                 "coefficients time): '%s'",
                                     AFD_HW_TP_MAX, v);
            *(k == K_TP ? &hw.tp : &hw.afd_tp) = (unsigned)x;
        } else if (k >= N_NUMERIC) {
            size_t cap;
            char *dst = str_field(&hw, k - N_NUMERIC, &cap);
            if (m >= cap)
                return afd_priv_fail(err, AFD_EPARSE, line, 0,
                                     "%s: longer than %zu characters: '%s'", key_name(k),
                                     cap - 1, v);
            memcpy(dst, s, m);
            dst[m] = '\0';
            /* the unit is no comment: a suffix (2s, 100ms) converts to it */
            if (k == K_UNIT && strcmp(dst, "cycles") != 0) {
                double sec;
                if (afd_unit_seconds(dst, &sec) != AFD_OK)
                    return afd_priv_fail(err, AFD_EPARSE, line, 0,
                                         "unit must be s, ms, us, ns or cycles: '%s'", v);
            }
        } else {
            st = check_range(k, kv[k].v, kv[K_UNIT].s, kv[K_UNIT].n, line, err);
            if (st != AFD_OK)
                return st;
            *coef(&hw, k) = kv[k].v;
        }
    }
    for (k = 0; k < N_REQUIRED; k++)
        if (kv[k].line == 0)
            return afd_priv_fail(err, AFD_EPARSE, 0, 0, "missing %s", key_name(k));
    /* the check below says the same without a line: here the key has one */
    if (hw.decode_batch_max > 0 && !afd_hw_has_decode(&hw))
        return afd_priv_fail(err, AFD_EINVAL, dbmax_line, 0,
                             "%s", dbmax_needs_law);
    st = afd_hw_check(&hw, err);
    if (st != AFD_OK)
        return st;
    *out = hw;
    return AFD_OK;
}

afd_status afd_hw_read(const char *path, afd_hw *out, afd_error *err)
{
    char *buf;
    size_t len;
    afd_status st;

    set_nan(out);
    st = afd_priv_read_file(path, MAX_FILE, &buf, &len, err);
    if (st != AFD_OK)
        return st;
    st = afd_hw_parse(buf, len, out, err);
    free(buf);
    return st;
}

afd_status afd_hw_format(const afd_hw *hw, const char *comment, char *buf, size_t cap)
{
    size_t o = 0;
    int k, n;
    if (comment != NULL) {
        n = snprintf(buf, cap, "# %s\n", comment);
        if (n < 0 || (size_t)n >= cap)
            return AFD_ERANGE;
        o = (size_t)n;
    }
    if (hw->unit[0] != '\0') {
        n = snprintf(buf + o, cap - o, "unit = %s\n", hw->unit);
        if (n < 0 || (size_t)n >= cap - o)
            return AFD_ERANGE;
        o += (size_t)n;
    }
    for (k = 1; k < 3; k++) {
        size_t c;
        const char *v = str_field((afd_hw *)hw, k, &c);
        if (v[0] == '\0')
            continue;
        n = snprintf(buf + o, cap - o, "%s = %s\n", key_name(K_UNIT + k), v);
        if (n < 0 || (size_t)n >= cap - o)
            return AFD_ERANGE;
        o += (size_t)n;
    }
    if (hw->tp > 0) {
        n = snprintf(buf + o, cap - o, "tp = %u\n", hw->tp);
        if (n < 0 || (size_t)n >= cap - o)
            return AFD_ERANGE;
        o += (size_t)n;
    }
    if (hw->afd_tp > 0) {
        n = snprintf(buf + o, cap - o, "afd_tp = %u\n", hw->afd_tp);
        if (n < 0 || (size_t)n >= cap - o)
            return AFD_ERANGE;
        o += (size_t)n;
    }
    for (k = 0; k < N_NUMERIC; k++) {
        double v = *coef((afd_hw *)hw, k);
        if (k >= N_REQUIRED && isnan(v))
            continue;
        n = snprintf(buf + o, cap - o, "%s = %.17g\n", key_name(k), v);
        if (n < 0 || (size_t)n >= cap - o)
            return AFD_ERANGE;
        o += (size_t)n;
        if (k == K_DECODE_ALPHA && hw->decode_batch_max > 0) {
            n = snprintf(buf + o, cap - o, "decode_batch_max = %u\n", hw->decode_batch_max);
            if (n < 0 || (size_t)n >= cap - o)
                return AFD_ERANGE;
            o += (size_t)n;
        }
    }
    for (k = 0; k < 2; k++) {
        const afd_hw_table *t = k == 0 ? &hw->decode_table : &hw->prefill_table;
        unsigned i;
        if (t->nb == 0 || t->ns == 0)
            continue;
        n = snprintf(buf + o, cap - o, "%s = %u %u", key_name(K_DTABLE + k), t->nb, t->ns);
        if (n < 0 || (size_t)n >= cap - o)
            return AFD_ERANGE;
        o += (size_t)n;
        for (i = 0; i < t->nb + t->ns + t->nb * t->ns; i++) {
            double v = i < t->nb ? t->b[i] : i < t->nb + t->ns ? t->s[i - t->nb]
                                                                : t->t[i - t->nb - t->ns];
            n = snprintf(buf + o, cap - o, " %.17g", v);
            if (n < 0 || (size_t)n >= cap - o)
                return AFD_ERANGE;
            o += (size_t)n;
        }
        if (o + 2 > cap)
            return AFD_ERANGE;
        buf[o++] = '\n';
        buf[o] = '\0';
    }
    return AFD_OK;
}

/* ---- Appendix B */

afd_status afd_model_preset(const char *name, afd_model_dims *out)
{
    if (strcmp(name, "deepseek-v3") == 0) {
        /* Appendix B.1, one layer */
        out->hidden = 7168;
        out->kv_dim = 512 + 64;
        out->kv_bytes = 2;
        out->d_expert = 2048;
        out->n_experts = 256;
        out->top_k = 8;
        out->mtp_depth = 1;
        out->attn_layers = 1;
        out->ffn_layers = 1;
        return AFD_OK;
    }
    memset(out, 0, sizeof *out);
    return AFD_EINVAL;
}

static int positive(double x)
{
    return x > 0 && isfinite(x);
}

afd_status afd_model_dims_from_model(const afd_model *m, afd_model_dims *out)
{
    memset(out, 0, sizeof *out);
    out->hidden = m->hidden;
    /* KV elements per token and layer (afd_model_kv_bytes_per_token / layers) */
    out->kv_dim = m->mla ? m->kv_lora_rank + m->qk_rope_head_dim : 2 * m->kv_heads * m->head_dim;
    out->kv_bytes = m->dtype_bytes;
    if (m->moe) {
        out->d_expert = m->moe_intermediate;
        out->n_experts = m->n_routed_experts;
        out->top_k = m->experts_per_tok;
        out->ffn_layers = m->layers - m->dense_layers;
    } else {
        out->d_expert = m->intermediate;
        out->n_experts = 1;
        out->top_k = 1;
        out->ffn_layers = m->layers;
    }
    out->mtp_depth = m->mtp_layers > 0 ? m->mtp_layers : 0;
    out->attn_layers = m->layers;
    if (!positive(out->hidden) || !positive(out->kv_dim) || !positive(out->kv_bytes) ||
        !positive(out->d_expert) || !positive(out->n_experts) || !positive(out->top_k) ||
        !positive(out->attn_layers) || !positive(out->ffn_layers))
        return AFD_EINVAL;
    return AFD_OK;
}

static const struct {
    const char *name, *unit;
    double lo, hi, si; /* range in Table 2's unit; SI per unit */
    int lo_open;
} specs[AFD_HW_N_SPECS] = {
    {"hbm_tbps", "TB/s", 0.05, 50, 1e12, 0},     {"mem_eff", "", 0, 1, 1, 1},
    {"peak_tflops", "TFLOP/s", 1, 20000, 1e12, 0}, {"compute_eff", "", 0, 1, 1, 1},
    {"net_gbps", "GB/s", 0.1, 10000, 1e9, 0},    {"experts_per_card", "", 1, 1024, 1, 0},
};

int afd_hw_spec_range(afd_hw_spec k, double *lo, double *hi, int *lo_open, const char **name,
                      const char **unit)
{
    if ((int)k < 0 || k >= AFD_HW_N_SPECS)
        return -1;
    *lo = specs[k].lo;
    *hi = specs[k].hi;
    *lo_open = specs[k].lo_open;
    *name = specs[k].name;
    *unit = specs[k].unit;
    return 0;
}

afd_status afd_hw_specs_from_device(const afd_device *d, double v[AFD_HW_N_SPECS])
{
    const double dev[AFD_HW_N_SPECS] = {
        [AFD_HW_HBM_TBPS] = d != NULL ? d->hbm_tbps : NAN,
        [AFD_HW_MEM_EFF] = d != NULL ? d->mbu[AFD_DECODE] : NAN,
        [AFD_HW_PEAK_TFLOPS] = d != NULL ? d->peak_tflops : NAN,
        [AFD_HW_COMPUTE_EFF] = d != NULL ? d->mfu[AFD_DECODE] : NAN,
        [AFD_HW_NET_GBPS] = d != NULL ? d->net_gbps * d->comm_eff[AFD_DECODE] : NAN,
        [AFD_HW_EXPERTS_PER_CARD] = NAN,
    };
    int k;
    if (d == NULL || v == NULL)
        return AFD_EINVAL;
    for (k = 0; k < AFD_HW_N_SPECS; k++)
        if (isnan(v[k]))
            v[k] = dev[k];
    return AFD_OK;
}

afd_status afd_hw_specs_from_table2(const double v[AFD_HW_N_SPECS], double beta_a, double beta_f,
                                    double beta_c, afd_hw_specs *out, afd_error *err)
{
    double si[AFD_HW_N_SPECS];
    const double betas[3] = {beta_a, beta_f, beta_c};
    int k;
    afd_error_clear(err);
    memset(out, 0, sizeof *out);
    for (k = 0; k < AFD_HW_N_SPECS; k++) {
        double x = v[k];
        if (!(specs[k].lo_open ? x > specs[k].lo : x >= specs[k].lo) || !(x <= specs[k].hi))
            return afd_priv_fail(err, AFD_EINVAL, 0, 0, "%s %g%s%s outside %s%g, %g]%s%s", specs[k].name,
                                 x, specs[k].unit[0] ? " " : "", specs[k].unit,
                                 specs[k].lo_open ? "(" : "[", specs[k].lo, specs[k].hi,
                                 specs[k].unit[0] ? " " : "", specs[k].unit);
        si[k] = x * specs[k].si;
    }
    for (k = 0; k < 3; k++)
        if (!(betas[k] >= 0) || !isfinite(betas[k]))
            return afd_priv_fail(err, AFD_EINVAL, 0, 0, "beta_%c must be finite and >= 0: %g",
                                 "afc"[k], betas[k]);
    out->hbm_bw = si[AFD_HW_HBM_TBPS];
    out->mem_eff = si[AFD_HW_MEM_EFF];
    out->peak_flops = si[AFD_HW_PEAK_TFLOPS];
    out->compute_eff = si[AFD_HW_COMPUTE_EFF];
    out->net_bw = si[AFD_HW_NET_GBPS];
    out->experts_per_card = si[AFD_HW_EXPERTS_PER_CARD];
    out->beta_a = beta_a;
    out->beta_f = beta_f;
    out->beta_c = beta_c;
    return AFD_OK;
}

afd_status afd_hw_derive(const afd_model_dims *m, const afd_hw_specs *s, afd_hw *out)
{
    double route;
    set_nan(out);
    if (!positive(m->hidden) || !positive(m->kv_dim) || !positive(m->kv_bytes) ||
        !positive(m->d_expert) || !positive(m->n_experts) || !positive(m->top_k) ||
        !(m->mtp_depth >= 0) || !isfinite(m->mtp_depth) || !positive(m->attn_layers) ||
        !positive(m->ffn_layers) || !positive(s->hbm_bw) ||
        !positive(s->mem_eff) || s->mem_eff > 1 || !positive(s->peak_flops) ||
        !positive(s->compute_eff) || s->compute_eff > 1 || !positive(s->net_bw) ||
        !positive(s->experts_per_card) || s->experts_per_card > m->n_experts ||
        !(s->beta_a >= 0) || !(s->beta_f >= 0) ||
        !(s->beta_c >= 0) || !isfinite(s->beta_a) || !isfinite(s->beta_f) ||
        !isfinite(s->beta_c))
        return AFD_EINVAL;
    /* eq. (24): B_e = B_F k (1 + MTP) / N_e */
    route = m->top_k * (1 + m->mtp_depth) / m->n_experts;
    laws_nan(out);
    /* eq. (17)-(19), once per attention layer */
    out->alpha_a = m->attn_layers * (m->kv_dim * m->kv_bytes / (s->hbm_bw * s->mem_eff));
    /* eq. (20)-(26): SwiGLU, 3 matrices, 2 operations per multiply-add; once
     * per FFN-side layer */
    out->alpha_f = m->ffn_layers * (s->experts_per_card * 6 * m->hidden * m->d_expert /
                                    (s->peak_flops * s->compute_eff) * route);
    /* eq. (27)-(31): input 1 byte (INT8) + output 2 bytes (BF16) per element,
     * once per FFN-side layer */
    out->alpha_c = m->ffn_layers * (s->experts_per_card * 3 * m->hidden / s->net_bw * route);
    out->beta_a = s->beta_a;
    out->beta_f = s->beta_f;
    out->beta_c = s->beta_c;
    /* one card per instance when one card holds every expert (afd_hw.h) */
    out->afd_tp = s->experts_per_card == m->n_experts ? 1 : 0;
    snprintf(out->unit, sizeof out->unit, "%s", "s");
    return AFD_OK;
}

/* dst = src with every time multiplied (mul = 1) or divided by f */
static void table_scale(afd_hw_table *dst, const afd_hw_table *src, double f, int mul)
{
    unsigned i;
    if (dst != src)
        *dst = *src;
    for (i = 0; i < dst->nb * dst->ns; i++)
        dst->t[i] = mul ? dst->t[i] * f : dst->t[i] / f;
}

afd_status afd_hw_seconds_to_unit(afd_hw *hw, const char *unit)
{
    size_t i;
    int k;
    if (strcmp(hw->unit, "s") != 0)
        return AFD_EINVAL;
    /* the units a suffix converts to: all but cycles and none */
    i = unit_index(unit, strlen(unit));
    if (i + 2 >= N_UNITS)
        return AFD_EINVAL;
    /* every time-valued coefficient: all but the fits' errors */
    for (k = 0; k < N_NUMERIC - N_ERRORS; k++)
        *coef(hw, k) *= units[i].per_second;
    table_scale(&hw->decode_table, &hw->decode_table, units[i].per_second, 1);
    table_scale(&hw->prefill_table, &hw->prefill_table, units[i].per_second, 1);
    snprintf(hw->unit, sizeof hw->unit, "%s", units[i].name);
    return AFD_OK;
}

afd_status afd_hw_copy_laws(afd_hw *dst, const afd_hw *src)
{
    int from = -1, to = -1, i, k;
    double f = 1;
    /* s, ms, us, ns: units[0..4) */
    for (i = 0; i < 4; i++) {
        if (strcmp(src->unit, units[i].name) == 0)
            from = i;
        if (strcmp(dst->unit, units[i].name) == 0)
            to = i;
    }
    if (strcmp(src->unit, dst->unit) != 0 && (from < 0 || to < 0))
        return AFD_EINVAL;
    /* 10^(3 |to - from|), exact in double */
    for (i = 0; from >= 0 && i < 3 * abs(to - from); i++)
        f *= 10;
    for (k = N_REQUIRED; k < N_NUMERIC - N_ERRORS; k++) {
        double v = *coef((afd_hw *)src, k);
        *coef(dst, k) = to >= from ? v * f : v / f;
    }
    table_scale(&dst->decode_table, &src->decode_table, f, to >= from);
    table_scale(&dst->prefill_table, &src->prefill_table, f, to >= from);
    dst->fit_max_rel_err = src->fit_max_rel_err;
    dst->tp = src->tp;
    dst->decode_batch_max = src->decode_batch_max;
    return AFD_OK;
}
