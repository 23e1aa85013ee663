/* parse.c: strict number parsing (see afd_parse.h). */
#include <config.h>

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "afd_parse.h"
#include "internal.h"

static int is_blank(char c)
{
    return c == ' ' || c == '\t';
}

/* Trim ASCII blanks from both ends of s[0..*len); returns the new start. */
static const char *trim(const char *s, size_t *len)
{
    size_t n = *len;
    while (n > 0 && is_blank(*s)) {
        s++;
        n--;
    }
    while (n > 0 && is_blank(s[n - 1]))
        n--;
    *len = n;
    return s;
}

afd_status afd_parse_u64(const char *s, size_t len, uint64_t *out)
{
    uint64_t v = 0;
    size_t i = 0;

    *out = 0;
    s = trim(s, &len);
    if (len > 0 && s[0] == '+')
        i = 1;
    if (i == len)
        return AFD_EPARSE;
    for (; i < len; i++) {
        unsigned d = (unsigned char)s[i] - (unsigned)'0';
        if (d > 9)
            return AFD_EPARSE;
        if (v > (UINT64_MAX - d) / 10) {
            /* Keep scanning so that "99999999999999999999x" is a parse
             * error, not a range error. */
            for (i++; i < len; i++)
                if ((unsigned char)s[i] - (unsigned)'0' > 9)
                    return AFD_EPARSE;
            return AFD_ERANGE;
        }
        v = v * 10 + d;
    }
    *out = v;
    return AFD_OK;
}

/* Accept only the characters of a decimal floating-point literal, with at
 * least one digit in the mantissa; this rules out "nan", "inf", "0x1p3" and
 * the empty string before strtod sees them. */
static int looks_decimal(const char *s, size_t len)
{
    size_t i = 0;
    int digits = 0;

    if (i < len && (s[i] == '+' || s[i] == '-'))
        i++;
    while (i < len && s[i] >= '0' && s[i] <= '9') {
        i++;
        digits++;
    }
    if (i < len && s[i] == '.') {
        i++;
        while (i < len && s[i] >= '0' && s[i] <= '9') {
            i++;
            digits++;
        }
    }
    if (digits == 0)
        return 0;
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        int edigits = 0;
        i++;
        if (i < len && (s[i] == '+' || s[i] == '-'))
            i++;
        while (i < len && s[i] >= '0' && s[i] <= '9') {
            i++;
            edigits++;
        }
        if (edigits == 0)
            return 0;
    }
    return i == len;
}

/* strtod on the trimmed copy of s[0..len); the copy is bounded so that a
 * long string cannot make us allocate. */
static afd_status parse_decimal(const char *s, size_t len, double *out)
{
    char buf[128];
    const char *t = trim(s, &len);
    char *end;
    double v;

    *out = NAN;
    if (len == 0 || len >= sizeof buf || !looks_decimal(t, len))
        return AFD_EPARSE;
    memcpy(buf, t, len);
    buf[len] = '\0';
    errno = 0;
    v = strtod(buf, &end);
    if (end != buf + len)
        return AFD_EPARSE;
    if (errno == ERANGE && fabs(v) > 1.0)
        return AFD_ERANGE;
    if (!isfinite(v))
        return AFD_ERANGE;
    if (errno == ERANGE)
        return AFD_ERANGE; /* underflow: a nonzero value below DBL_MIN is not read as 0 */
    *out = v;
    return AFD_OK;
}

afd_status afd_parse_double(const char *s, double *out)
{
    return parse_decimal(s, strlen(s), out);
}

afd_status afd_parse_double_n(const char *s, size_t len, double *out)
{
    return parse_decimal(s, len, out);
}

afd_status afd_parse_i64(const char *s, int64_t *out)
{
    size_t len = strlen(s);
    const char *t = trim(s, &len);
    size_t i = 0;
    int neg = 0;
    uint64_t mag;
    afd_status st;
    double v;

    *out = 0;
    if (len > 0 && (t[0] == '+' || t[0] == '-')) {
        neg = t[0] == '-';
        i = 1;
    }
    /* Plain integer: exact over the whole int64 range. */
    st = afd_parse_u64(t + i, len - i, &mag);
    if (i < len && t[i] != '+' && st != AFD_EPARSE) {
        if (st == AFD_ERANGE || mag > (uint64_t)INT64_MAX + (uint64_t)neg)
            return AFD_ERANGE;
        *out = neg ? (int64_t)(0 - mag) : (int64_t)mag;
        return AFD_OK;
    }
    /* Exponent form: must denote an exact integer within 2^53. */
    st = parse_decimal(s, strlen(s), &v);
    if (st != AFD_OK)
        return st;
    if (fabs(v) > 9007199254740992.0)
        return AFD_ERANGE;
    if (v != floor(v))
        return AFD_EPARSE;
    *out = (int64_t)v;
    return AFD_OK;
}

/* ---- units of time */

static const struct {
    const char *name;
    double seconds;
} time_units[] = {{"s", 1}, {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9}, {"min", 60}};

static int unit_index(const char *u, size_t len)
{
    size_t k;
    for (k = 0; k < sizeof time_units / sizeof time_units[0]; k++)
        if (strlen(time_units[k].name) == len && memcmp(time_units[k].name, u, len) == 0)
            return (int)k;
    return -1;
}

afd_status afd_unit_seconds(const char *unit, double *sec)
{
    int k = unit != NULL ? unit_index(unit, strlen(unit)) : -1;
    /* "min" is a rate denominator, not a latency model's unit. */
    if (k < 0 || strcmp(unit, "min") == 0) {
        *sec = NAN;
        return AFD_EINVAL;
    }
    *sec = time_units[k].seconds;
    return AFD_OK;
}

/* Split s into a number and a trailing alphabetic suffix (after an optional
 * '/' for rates).  The number is parsed strictly; returns the suffix's unit
 * index, -1 without a suffix, -2 for an unknown suffix. */
static afd_status split_unit(const char *s, int rate, double *x, int *k)
{
    size_t len = strlen(s), n;
    const char *t = trim(s, &len);
    *k = -1;
    n = len;
    while (n > 0 && ((t[n - 1] >= 'a' && t[n - 1] <= 'z') || (t[n - 1] >= 'A' && t[n - 1] <= 'Z')))
        n--;
    if (n < len) {
        if (rate) {
            if (n == 0 || t[n - 1] != '/')
                return AFD_EPARSE;
            *k = unit_index(t + n, len - n);
            n--;
        } else {
            *k = unit_index(t + n, len - n);
            if (*k >= 0 && strcmp(time_units[*k].name, "min") == 0)
                *k = -2;
        }
        if (*k < 0)
            return AFD_EPARSE;
    }
    return parse_decimal(t, n, x);
}

afd_status afd_parse_time(const char *s, const char *unit, double *out)
{
    double x, to;
    int k;
    afd_status st = split_unit(s, 0, &x, &k);
    *out = NAN;
    if (st != AFD_OK)
        return st;
    if (k < 0) {
        *out = x;
        return AFD_OK;
    }
    if (afd_unit_seconds(unit, &to) != AFD_OK)
        return AFD_EINVAL;
    x *= time_units[k].seconds / to;
    if (!isfinite(x))
        return AFD_ERANGE;
    *out = x;
    return AFD_OK;
}

afd_status afd_parse_rate(const char *s, const char *unit, double *out)
{
    double x, to;
    int k;
    afd_status st = split_unit(s, 1, &x, &k);
    *out = NAN;
    if (st != AFD_OK)
        return st;
    if (k < 0) {
        *out = x;
        return AFD_OK;
    }
    if (afd_unit_seconds(unit, &to) != AFD_OK)
        return AFD_EINVAL;
    /* x events per time_units[k] = x * to / seconds(k) events per unit */
    x *= to / time_units[k].seconds;
    if (!isfinite(x))
        return AFD_ERANGE;
    *out = x;
    return AFD_OK;
}

afd_status afd_check_range(double v, double lo, double hi, afd_error *err)
{
    afd_error_clear(err);
    if (v >= lo && v <= hi)
        return AFD_OK;
    return afd_priv_fail(err, AFD_EINVAL, 0, 0, "value %.10g outside [%.10g, %.10g]", v, lo, hi);
}
