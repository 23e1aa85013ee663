/* bulk_internal.h: the greedy prefill batches of random prompt work
 * (afd_serving_prefill_greedy_law, bulk.c) in two steps, for the goodput
 * searches of serving.c, which evaluate one law at many rates: the law's
 * part (the atoms of a batch's work S_K at every size, which depend on the
 * law of s, a and B alone) made once, then the TTFT at each rate and server
 * count.  The results are afd_serving_prefill_greedy_law's.  Not
 * installed. */
#ifndef AFD_BULK_INTERNAL_H
#define AFD_BULK_INTERNAL_H

#include "afd_pd.h"
#include "afd_status.h"

typedef struct afd_priv_greedy afd_priv_greedy;

/* The law *s of a prompt's own work, the batch's fixed time a and the
 * batch cap B made ready (*out, freed by afd_priv_greedy_free).
 * AFD_EINVAL for a bad law (no atoms, too many, a bad scv) or, when it
 * varies, a < 0 or B < 1; AFD_ENOMEM. */
afd_status afd_priv_greedy_alloc(const afd_service_law *s, double a, unsigned bmax,
                                 afd_priv_greedy **out);

void afd_priv_greedy_free(afd_priv_greedy *g);

/* afd_serving_prefill_greedy_law(lambda, c, B, a, s, quantile, ...) for
 * the B, a and s of g; its errors. */
afd_status afd_priv_greedy_ttft(const afd_priv_greedy *g, double lambda, unsigned c,
                                double quantile, double *mean, double *quant, double *rho,
                                double *batch);

#endif /* AFD_BULK_INTERNAL_H */
