/* taichi.c: the affine interference model of chunked prefill (see
 * afd_taichi.h for the derivation and its error). */
#include <config.h>

#include <math.h>

#include "afd_taichi.h"

double afd_intensity_limit(double intercept, double slope, double tpot_slo)
{
    if (!isfinite(intercept) || !isfinite(slope) || !isfinite(tpot_slo) || !(slope > 0))
        return NAN;
    return intercept >= tpot_slo ? 0 : (tpot_slo - intercept) / slope;
}

afd_status afd_chunked_interference(const afd_chunked_params *p, afd_chunked_result *out)
{
    const afd_hw *hw;
    double P, G, t1, f, den, T, n, budget;
    out->tpot = out->intercept = out->slope = out->intensity = NAN;
    out->decode_batch = out->prefill_share = out->chunk_rate = NAN;
    if (p == NULL || (hw = p->hw) == NULL || !afd_hw_has_prefill(hw) || !afd_hw_has_decode(hw))
        return AFD_EINVAL;
    P = p->prompt;
    G = p->output;
    if (!(p->lambda > 0) || !isfinite(p->lambda) || !(P >= 1) || !isfinite(P) || !(G >= 2) ||
        !isfinite(G) || !(p->chunk > 1) || !isfinite(p->chunk))
        return AFD_EINVAL;
    out->slope = hw->prefill_b + hw->prefill_c * P;
    f = p->lambda * (hw->prefill_b * P + hw->prefill_c * P * P);
    out->prefill_share = f;
    t1 = hw->decode_gamma + hw->decode_alpha * (P + G / 2);
    den = 1 - f - t1 * p->lambda * (G - 1);
    if (!(den > 0))
        return AFD_EUNSTABLE;
    T = (hw->decode_beta + t1) / den;
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
