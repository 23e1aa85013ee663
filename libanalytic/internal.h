/* internal.h: helpers shared by libanalytic's translation units.
 * Not installed; nothing here is exported from the shared library. */
#ifndef AFD_INTERNAL_H
#define AFD_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>

#include "afd_status.h"

#if defined(__GNUC__)
#define AFD_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define AFD_PRINTF(f, a)
#endif

/* Fill err (if not NULL) with line, column and a formatted message; returns st. */
afd_status afd_priv_fail(afd_error *err, afd_status st, long line, long column,
                         const char *fmt, ...) AFD_PRINTF(5, 6);

/* Copy s[0..n) into out for an error message: at most 40 bytes, control and
 * non-ASCII bytes escaped as \xNN, so that the message stays on one line. */
void afd_priv_show(const char *s, size_t n, char *out, size_t cap);

/* Integrate f over [a, b] (finite) to max(epsabs, epsrel*|I|) with GSL's
 * non-adaptive Gauss-Kronrod-Patterson rule (gsl_integration_qng), bisecting
 * recursively where it does not converge.  Allocation-free and thread-safe.
 * Returns AFD_OK or AFD_ENUMERIC; *result and *abserr are always set. */
afd_status afd_priv_integrate(double (*f)(double, void *), void *params, double a, double b,
                              double epsabs, double epsrel, double *result, double *abserr);

/* E[(M_r - z)+] as afd_max_normal_excess_e, reusing kappa_r when the caller
 * has it (kappa may be NULL). */
afd_status afd_priv_max_normal_excess(double r, double z, const afd_result *kappa,
                                      afd_result *result);

#endif /* AFD_INTERNAL_H */
