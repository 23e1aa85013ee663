/* afd_arrivals.h: the arrival process of a trace, from its timestamps.
 *
 * One streaming pass, constant memory: the rate over the trace's span and
 * the index of dispersion of counts (IDC) in windows of 1, 10 and 60 s.
 *
 * Rate: with n arrivals at t_1 <= ... <= t_n, lambda = (n - 1) / (t_n - t_1)
 * (n - 1 gaps span the trace; for a Poisson process this is the maximum
 * likelihood estimate given the first arrival).
 *
 * IDC at window w: the span from t_1 is cut into consecutive windows of
 * width w; N_j counts the arrivals in window j, over the m = floor(span / w)
 * complete windows (the last, partial one is dropped).  IDC = s^2 / mean of
 * the N_j (s^2 with divisor m - 1).  For Poisson arrivals E[s^2] = mean, so
 * IDC is 1 up to sampling error: (m - 1) IDC is approximately chi-square
 * with m - 1 degrees of freedom (the index-of-dispersion test), so its
 * standard error is sqrt(2 / (m - 1)) (idc_se).  Bursty arrivals give IDC
 * well above 1, growing with w; regular (paced) arrivals below 1.  The first
 * window always holds t_1 itself, a bias of order 1/m.
 *
 * Timestamps must not go backwards for the IDC (the windows are counted in
 * one pass); the first line where they do is recorded and the IDC is NaN.
 * The rate and span use the smallest and largest time either way.
 */
#ifndef AFD_ARRIVALS_H
#define AFD_ARRIVALS_H

#include <stdint.h>

#include "afd_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Windows of the dispersion index, in seconds: 1, 10, 60. */
#define AFD_IDC_NWIN 3
AFD_API extern const double afd_idc_windows[AFD_IDC_NWIN];

typedef struct afd_arrival_stats {
    uint64_t n;            /* arrivals counted */
    double first, last;    /* smallest and largest time, seconds */
    double span;           /* last - first, seconds */
    double lambda;         /* (n - 1) / span, per second; NaN if n < 2 or span 0 */
    double idc[AFD_IDC_NWIN];     /* index of dispersion of counts; NaN if m < 2 */
    double idc_se[AFD_IDC_NWIN];  /* sqrt(2 / (m - 1)), its Poisson standard error */
    uint64_t windows[AFD_IDC_NWIN]; /* m, complete windows used */
    long unsorted_line;    /* first line whose time precedes the previous one (0: none) */
} afd_arrival_stats;

typedef struct afd_arrivals_acc afd_arrivals_acc;

AFD_API afd_arrivals_acc *afd_arrivals_acc_alloc(void);
AFD_API void afd_arrivals_acc_free(afd_arrivals_acc *acc);

/* Add one arrival at time t (seconds, finite) read on line (for the
 * out-of-order report).  AFD_EINVAL for a non-finite t. */
AFD_API afd_status afd_arrivals_add(afd_arrivals_acc *acc, double t, long line);

/* The statistics so far (every field NaN/0 when nothing was added). */
AFD_API void afd_arrivals_stats(const afd_arrivals_acc *acc, afd_arrival_stats *out);

/* An empty result: n = 0, every real NaN. */
AFD_API void afd_arrivals_none(afd_arrival_stats *out);

#ifdef __cplusplus
}
#endif

#endif /* AFD_ARRIVALS_H */
