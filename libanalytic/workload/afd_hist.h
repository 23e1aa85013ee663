/* afd_hist.h: histograms of the prompt or decode lengths of a trace, and the
 * geometric law of the same mean they are compared with (Appendix A.8,
 * Figure 5; the model of Corollary 4.5).
 *
 * A histogram is a count per bin, filled from the workload's kept requests
 * (rows, or distinct (P, D) pairs with their counts: afd_workload_entry),
 * so its memory is that of its bins whatever the size of the trace.
 */
#ifndef AFD_HIST_H
#define AFD_HIST_H

#include <stddef.h>
#include <stdint.h>

#include "afd_status.h"
#include "afd_workload.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One bin: the integers lo..hi and the requests whose length falls in it. */
typedef struct afd_hist_bin {
    uint64_t lo, hi;
    uint64_t count;
} afd_hist_bin;

typedef struct afd_hist {
    afd_hist_bin *bin; /* sorted, contiguous, covering min_support..max */
    size_t n;          /* bins */
    uint64_t total;    /* requests counted (the sum of the counts) */
    uint64_t max;      /* largest length */
    double mean;       /* mean length */
} afd_hist;

typedef struct afd_hist_spec {
    int prompt;       /* 0: D (support 1, 2, ...); 1: P (support 0, 1, ...) */
    uint64_t width;   /* bins of width consecutive integers from the support's
                         least value; 0: log bins */
    int per_decade;   /* log bins: bin i holds the integers in
                         [ceil(10^(i/K)), ceil(10^((i+1)/K))), K = per_decade
                         (1..1000), ranges holding no integer dropped, the last
                         ending at max; P = 0 has a bin {0} of its own */
    size_t max_bins;  /* refuse more bins of width W than this (0: no limit) */
} afd_hist_spec;

/* Count the lengths of the kept requests of a TRACE workload into bins.
 * Errors: AFD_EINVAL (no trace, bad spec), AFD_EEMPTY (no kept request),
 * AFD_ELIMIT (more than max_bins bins of width W: out->n holds how many,
 * out->max the largest length, and out->bin is NULL), AFD_ENOMEM.  On
 * success release with afd_hist_free. */
AFD_API afd_status afd_hist_workload(const afd_workload *w, const afd_hist_spec *spec,
                                     afd_hist *out);
AFD_API void afd_hist_free(afd_hist *h);

/* P(lo <= X <= hi) for X ~ Geometric on {1, 2, ...} with mean m >= 1:
 * P(X >= k) = (1-p)^(k-1) with p = 1/m, so the mass is
 * (1-p)^(lo-1) (1 - (1-p)^(hi-lo+1)) (lo = 0 counts as 1; hi < lo gives 0).
 * NaN unless m >= 1. */
AFD_API double afd_geometric_mass(double m, uint64_t lo, uint64_t hi);

#ifdef __cplusplus
}
#endif

#endif /* AFD_HIST_H */
