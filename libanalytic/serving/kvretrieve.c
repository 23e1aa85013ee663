/* kvretrieve.c: KV-cache retrieval from a memory hierarchy and its
 * break-even length (see afd_kvretrieve.h). */
#include <config.h>

#include <math.h>

#include "afd_kvretrieve.h"

static int tiers_ok(const afd_kv_tier *t, size_t n)
{
    size_t k;
    if (t == NULL || n == 0)
        return 0;
    for (k = 0; k < n; k++)
        if (!(t[k].hit >= 0 && t[k].hit <= 1) || !(t[k].latency >= 0) || !isfinite(t[k].latency) ||
            !(t[k].bw > 0) || !isfinite(t[k].bw))
            return 0;
    return 1;
}

/* A = sum w_n T_n, G = sum w_n / BW_n, M = prod (1 - H_n) */
static void moments(const afd_kv_tier *t, size_t n, double *A, double *G, double *M)
{
    double reach = 1;
    size_t k;
    *A = *G = 0;
    for (k = 0; k < n; k++) {
        double w = reach * t[k].hit;
        *A += w * t[k].latency;
        *G += w / t[k].bw;
        reach *= 1 - t[k].hit;
    }
    *M = reach;
}

afd_status afd_kv_retrieval_time(const afd_kv_tier *tiers, size_t n, double bytes, double recompute,
                                 double *expected, double *p_recompute)
{
    double A, G, M;
    *expected = NAN;
    if (p_recompute != NULL)
        *p_recompute = NAN;
    if (!tiers_ok(tiers, n) || !(bytes >= 0) || !isfinite(bytes) || !(recompute >= 0) ||
        !isfinite(recompute))
        return AFD_EINVAL;
    moments(tiers, n, &A, &G, &M);
    *expected = A + bytes * G + M * recompute;
    if (p_recompute != NULL)
        *p_recompute = M;
    return AFD_OK;
}

/* Largest root of q2 L^2 + q1 L + q0 = 0 above which the left side stays
 * positive; 0 if it is positive for every L >= 0; INFINITY if it never
 * becomes positive for large L. */
static double last_crossing(double q2, double q1, double q0)
{
    if (q2 > 0) {
        double disc = q1 * q1 - 4 * q2 * q0, r, den;
        if (disc < 0)
            return 0;
        /* the larger root, in the form without cancellation */
        if (q1 >= 0) {
            den = q1 + sqrt(disc);
            r = den > 0 ? -2 * q0 / den : 0;
        } else {
            r = (-q1 + sqrt(disc)) / (2 * q2);
        }
        return r > 0 ? r : 0;
    }
    if (q1 > 0)
        return q0 >= 0 ? 0 : -q0 / q1;
    if (q1 == 0 && q0 > 0)
        return 0;
    return INFINITY;
}

afd_status afd_kv_break_even(const afd_kv_tier *tiers, size_t n, size_t tier,
                             double bytes_per_token, const afd_kv_law *law, double *tokens)
{
    double k = bytes_per_token;
    *tokens = NAN;
    if (!tiers_ok(tiers, n) || tier > n || !(k > 0) || !isfinite(k) || law == NULL ||
        !(law->a >= 0) || !(law->b >= 0) || !(law->c >= 0) || !isfinite(law->a + law->b + law->c))
        return AFD_EINVAL;
    if (tier < n) {
        const afd_kv_tier *t = &tiers[tier];
        *tokens = last_crossing(law->c, law->b - k / t->bw, law->a - t->latency);
    } else {
        double A, G, M;
        moments(tiers, n, &A, &G, &M);
        *tokens = last_crossing((1 - M) * law->c, (1 - M) * law->b - k * G, (1 - M) * law->a - A);
    }
    return AFD_OK;
}
