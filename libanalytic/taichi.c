/* taichi.c: the affine interference model of chunked prefill (see
 * afd_taichi.h for the derivation and its error). */
#include <config.h>

#include <math.h>

#include "afd_taichi.h"
#include "internal.h"

/* One equation for both chunked closed forms (internal.h). */
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

double afd_intensity_limit(double intercept, double slope, double tpot_slo)
{
    if (!isfinite(intercept) || !isfinite(slope) || !isfinite(tpot_slo) || !(slope > 0))
        return NAN;
    return intercept >= tpot_slo ? 0 : (tpot_slo - intercept) / slope;
}

afd_status afd_chunked_interference(const afd_chunked_params *p, afd_chunked_result *out)
{
    const afd_hw *hw;
    double P, G, t1, s, f, load, T, n, budget;
    out->tpot = out->intercept = out->slope = out->intensity = NAN;
    out->decode_batch = out->prefill_share = out->chunk_rate = NAN;
    if (p == NULL || (hw = p->hw) == NULL || !afd_hw_has_prefill(hw) || !afd_hw_has_decode(hw))
        return AFD_EINVAL;
    P = p->prompt;
    G = p->output;
    if (!(p->lambda > 0) || !isfinite(p->lambda) || !(P >= 1) || !isfinite(P) || !(G >= 2) ||
        !isfinite(G) || !(p->chunk > 1) || !isfinite(p->chunk))
        return AFD_EINVAL;
    /* the mean TPOT of afd_serving.h (C1) with fixed prompts (E[P^2] = P^2):
     * cp P = pb P + pc P^2, so lam cp P is the prefill share f, and t1 = cd */
    f = p->lambda * (hw->prefill_b * P + hw->prefill_c * P * P);
    out->prefill_share = f;
    if (afd_priv_chunked_tpot(hw, p->lambda, p->lambda, P, P * P, G, &t1, &s, &load, &T) != 0)
        return AFD_EUNSTABLE;
    out->slope = s;
    n = p->lambda * (G - 1) * T;
    budget = p->chunk - (1 + n);
    if (!(p->lambda * P * T <= budget)) {
        out->slope = NAN;
        return AFD_EUNSTABLE;
    }
    out->tpot = T;
    out->decode_batch = 1 + n;
    out->intercept = hw->decode_beta + t1 * (1 + n);
    out->intensity = p->lambda * P * T;
    out->chunk_rate = budget / (out->intercept + out->slope * budget);
    return AFD_OK;
}
