/* chunked.c: the mean TPOT of chunked prefill, the one equation behind
 * afd_serving_chunked (afd_serving.h, C1) and afd_chunked_interference
 * (afd_taichi.h); the derivation is in internal.h. */
#include <config.h>

#include <math.h>

#include "afd_hw.h"
#include "internal.h"

double afd_priv_chunked_kv(double P, double G, double theta)
{
    /* E[G (G - 1)] = 2 E[G] (theta - P) (Lemma 4.1, eq. (4)), and a decode
     * at step j of its m = G - 1 holds P + j KV tokens (the simulator's:
     * P + 1 when it joins, one more a step), so the steps hold on average
     * P + E[sum_j j] / E[m] = P + E[G (G - 1)] / (2 (E[G] - 1)) */
    if (!(G > 1) || !(theta > 0))
        return P + G / 2;
    return P + G * (theta - P) / (G - 1);
}

int afd_priv_chunked_tpot(const afd_hw *hw, double lam_p, double lam_d, double P, double P2,
                          double G, double kv, double *cd, double *cp, double *load,
                          double *tpot)
{
    double m = G - 1;
    /* the request's own token at its own life's mean KV, the others' at the
     * stationary kv (internal.h) */
    double own = hw->decode_gamma + hw->decode_alpha * (P + G / 2);
    *cd = hw->decode_gamma + hw->decode_alpha * kv;
    *cp = hw->prefill_b + hw->prefill_c * P2 / P; /* one prompt token, mean share */
    *load = lam_d * m * *cd + lam_p * P * *cp;
    if (!(*load < 1)) {
        *tpot = NAN;
        return -1;
    }
    *tpot = m > 0 ? (hw->decode_beta + own) / (1 - *load) : 0;
    return 0;
}
