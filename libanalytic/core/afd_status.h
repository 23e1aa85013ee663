/* libanalytic/core/: what every area leans on.  How an error is reported
 * (afd_status.h), how a number or a list is read strictly (afd_parse.h),
 * the event heap of the simulators and the streaming estimators
 * (afd_event.h), and the helpers shared inside the library (internal.h,
 * not installed: error reports, quadrature, minimisation and root finding,
 * the Poisson law; their sources are in the areas that use them most). */

/* afd_status.h: status codes and error reports shared by every afdkit module.
 *
 * Library functions never print, exit or abort.  They return an afd_status and,
 * where a caller-supplied afd_error is given, fill it with the 1-based line and
 * column of the offending input and a one-line message (no newline, no file
 * name: the caller knows which file it opened).  Numerical outputs are NaN on
 * error.
 */
#ifndef AFD_STATUS_H
#define AFD_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) && !defined(AFD_STATIC)
#define AFD_API __attribute__((visibility("default")))
#else
#define AFD_API
#endif

typedef enum afd_status {
    AFD_OK = 0,
    AFD_EOF,        /* end of input (not an error for iterators) */
    AFD_EINVAL,     /* argument outside its domain (B < 1, alpha < 0, NaN, ...) */
    AFD_EPARSE,     /* malformed input: bad number, bad CSV, unknown column */
    AFD_ERANGE,     /* value or sum too large to represent exactly */
    AFD_EEMPTY,     /* input has no usable data (empty file, no rows left) */
    AFD_EIO,        /* the operating system refused a read or write */
    AFD_ENOMEM,     /* an allocation failed */
    AFD_ENUMERIC,   /* a numerical method did not reach its tolerance */
    AFD_EUNSTABLE,  /* an unstable system was asked to be evaluated (rho >= 1) */
    AFD_EINFINITE,  /* the quantity is infinite (e.g. an infinite variance) */
    AFD_ELIMIT      /* a documented size limit was exceeded (not an allocation failure) */
} afd_status;

/* Caller-owned error report.  line and column are 1-based; 0 means "not
 * applicable".  text is a single line without a trailing newline. */
typedef struct afd_error {
    long line;
    long column;
    char text[240];
} afd_error;

/* A value with an absolute error estimate, as GSL's gsl_sf_result. */
typedef struct afd_result {
    double val;
    double err;
} afd_result;

/* Short description of a status code ("malformed input", ...).  Never NULL. */
AFD_API const char *afd_strerror(afd_status status);

/* Reset an error report to "no error".  err may be NULL. */
AFD_API void afd_error_clear(afd_error *err);

#ifdef __cplusplus
}
#endif

#endif /* AFD_STATUS_H */
