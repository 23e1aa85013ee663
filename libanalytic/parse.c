/* parse.c: strict number parsing (see afd_parse.h). */
#include <config.h>

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "afd_parse.h"

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
        v = 0.0 * v; /* underflow: keep the sign, report zero */
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
