/* hw_test_util.h: latency coefficients for the serving tests, by hand. */
#ifndef AFD_HW_TEST_UTIL_H
#define AFD_HW_TEST_UTIL_H

#include <string.h>

#include "afd_hw.h"

/* The prefill law pa + pb P + pc P^2 and the decode step beta + gamma b +
 * alpha k in the given unit; the six AFD coefficients are not used (alpha_a
 * = alpha_f = 1, the rest 0). */
static inline afd_hw test_laws(const char *unit, double pa, double pb, double pc, double beta,
                               double gamma, double alpha)
{
    afd_hw hw;
    afd_hw_init(&hw);
    hw.alpha_a = hw.alpha_f = 1;
    hw.beta_a = hw.beta_f = hw.alpha_c = hw.beta_c = 0;
    strcpy(hw.unit, unit);
    hw.prefill_a = pa;
    hw.prefill_b = pb;
    hw.prefill_c = pc;
    hw.decode_beta = beta;
    hw.decode_gamma = gamma;
    hw.decode_alpha = alpha;
    return hw;
}

#endif /* AFD_HW_TEST_UTIL_H */
