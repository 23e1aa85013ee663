/* chunked.c: the mean TPOT of chunked prefill, the one equation behind
 * afd_serving_chunked (afd_serving.h, C1) and afd_chunked_interference
 * (afd_taichi.h); the derivation is in internal.h. */
#include <config.h>

#include <math.h>

#include "afd_hw.h"
#include "internal.h"

int afd_priv_chunked_tpot(const afd_hw *hw, double lam_p, double lam_d, double P, double P2,
                          double G, double *cd, double *cp, double *load, double *tpot)
{
    double m = G - 1;
    *cd = hw->decode_gamma + hw->decode_alpha * (P + G / 2); /* one decode token, mean KV */
    *cp = hw->prefill_b + hw->prefill_c * P2 / P;            /* one prompt token, mean share */
    *load = lam_d * m * *cd + lam_p * P * *cp;
    if (!(*load < 1)) {
        *tpot = NAN;
        return -1;
    }
    *tpot = m > 0 ? (hw->decode_beta + *cd) / (1 - *load) : 0;
    return 0;
}
