/* afd_parse.h: strict number parsing shared by the trace reader, the
 * hardware-file reader and the command line.
 *
 * Unlike atof/atoi these functions accept a value only if the whole string is
 * a number of the requested kind, report overflow instead of saturating, and
 * never accept NaN or infinity.  Leading and trailing ASCII blanks (space,
 * tab) are ignored; nothing else is.
 */
#ifndef AFD_PARSE_H
#define AFD_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include "afd_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Parse a non-negative decimal integer "[+]digits" from s[0..len).
 * Returns AFD_OK, AFD_EPARSE (empty, sign '-', stray characters) or
 * AFD_ERANGE (larger than UINT64_MAX).  *out is 0 on error. */
AFD_API afd_status afd_parse_u64(const char *s, size_t len, uint64_t *out);

/* Parse a finite decimal real number from the NUL-terminated string s
 * ("2.5", "-1e-3", ".5").  Hexadecimal floats, "nan" and "inf" are refused
 * (AFD_EPARSE); a magnitude that overflows a double is AFD_ERANGE; a value
 * that underflows to zero is accepted as 0.  *out is NaN on error. */
AFD_API afd_status afd_parse_double(const char *s, double *out);

/* As afd_parse_double, for s[0..len) (not NUL-terminated). */
AFD_API afd_status afd_parse_double_n(const char *s, size_t len, double *out);

/* Parse an integer from the NUL-terminated string s.  Plain decimal integers
 * ("-12", "+7") and exponent forms that denote an exact integer ("1e6",
 * "2.5e3") are accepted; "2.5" is AFD_EPARSE; a value outside
 * [-2^53, 2^53] when written with an exponent, or outside int64 otherwise,
 * is AFD_ERANGE.  *out is 0 on error. */
AFD_API afd_status afd_parse_i64(const char *s, int64_t *out);

/* The range check of a number argument, with the message every interface
 * gives for it (the command line after "--OPTION: ", Python after the
 * argument's name): AFD_OK when lo <= v <= hi; else AFD_EINVAL and
 * err->text "value V outside [LO, HI]" (each %.10g; NaN is outside). */
AFD_API afd_status afd_check_range(double v, double lo, double hi, afd_error *err);

/* ---- units of time
 * A latency model carries its unit: "s", "ms", "us" (or "ns"), or "cycles"
 * (the paper's Table 3; no conversion to seconds exists). */

/* Seconds per unit: 1, 1e-3, 1e-6, 1e-9.  AFD_EINVAL for "cycles", "" or
 * anything else (*sec NaN). */
AFD_API afd_status afd_unit_seconds(const char *unit, double *sec);

/* Parse a duration into the latency model's unit: "2s", "150ms", "800us",
 * "5ns" are converted (AFD_EINVAL when unit has no conversion: a model in
 * cycles or of unknown unit); a bare number "150" is taken in unit as it is.
 * AFD_EPARSE for a malformed value or an unknown suffix, AFD_ERANGE on
 * overflow.  *out is NaN on error. */
AFD_API afd_status afd_parse_time(const char *s, const char *unit, double *out);

/* Parse a rate into events per unit of time of the latency model: "5/s",
 * "300/min", "2/ms" are converted (AFD_EINVAL as above); a bare number is
 * taken per unit as it is.  Errors as afd_parse_time. */
AFD_API afd_status afd_parse_rate(const char *s, const char *unit, double *out);

#ifdef __cplusplus
}
#endif

#endif /* AFD_PARSE_H */
