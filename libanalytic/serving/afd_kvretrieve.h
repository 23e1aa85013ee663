/* afd_kvretrieve.h: expected time to fetch a prefix's KV cache from a memory
 * hierarchy, and the prompt length above which fetching beats recomputing
 * (the MIST paper, Section IV-A3 and Section V-B).
 *
 * Tiers n = 1..N (HBM, DRAM, SSD, remote, ...) are tried in order; tier n
 * holds the prefix with probability H_n given that the tiers before it did
 * not, and serves S bytes in T_n + S / BW_n.  When every tier misses the
 * prefix is recomputed in R.  The MIST recursion
 *     f_n = H_n (T_n + S / BW_n) + (1 - H_n) f_{n+1},   f_{N+1} = R,
 * unrolls to the closed form used here:
 *     f_1 = sum_n w_n (T_n + S / BW_n) + M R,
 *     w_n = H_n prod_{m<n} (1 - H_m)   (the probability that tier n serves),
 *     M   = prod_n (1 - H_n)            (the probability of recomputing).
 * (The paper's recursion charges nothing for looking up a tier that misses;
 * so does this.)
 *
 * Break-even.  With S = k L bytes for a prefix of L tokens and the prefill
 * law R(L) = a + b L + c L^2, fetching through the hierarchy beats always
 * recomputing iff f_1(L) < R(L), i.e.
 *     (1 - M) c L^2 + ((1 - M) b - k G) L + ((1 - M) a - A) > 0,
 *     A = sum_n w_n T_n,   G = sum_n w_n / BW_n,
 * so L* is the largest root of that quadratic (c > 0), or for a linear law
 * (c = 0) L* = (A - (1 - M) a) / ((1 - M) b - k G) when (1 - M) b > k G; if
 * (1 - M) b <= k G and c = 0, recomputing is never slower (L* = inf).  A
 * hit at one tier n alone breaks even at the largest root of
 *     c L^2 + (b - k / BW_n) L + (a - T_n) = 0.
 * L* = 0 when fetching wins for every length.
 */
#ifndef AFD_KVRETRIEVE_H
#define AFD_KVRETRIEVE_H

#include <stddef.h>

#include "afd_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct afd_kv_tier {
    char name[24];
    double hit;     /* H_n in [0, 1] */
    double latency; /* T_n, seconds, >= 0 */
    double bw;      /* BW_n, bytes per second, > 0 */
} afd_kv_tier;

typedef struct afd_kv_law {
    double a, b, c; /* recompute time a + b L + c L^2, seconds, >= 0 */
} afd_kv_law;

/* f_1 for S bytes and recompute time R; *p_recompute (may be NULL) gets M.
 * AFD_EINVAL for no tiers, a hit rate outside [0, 1], a negative latency, a
 * bandwidth <= 0, S < 0 or R < 0 (or any of them not finite). */
AFD_API afd_status afd_kv_retrieval_time(const afd_kv_tier *tiers, size_t n, double bytes,
                                         double recompute, double *expected, double *p_recompute);

/* The break-even prefix length L* of the hierarchy (above) for k bytes per
 * token and the law; INFINITY when recomputing never loses.  tier < n
 * gives the break-even of a hit at that tier alone; tier = n the
 * hierarchy's.  AFD_EINVAL as above or for k <= 0. */
AFD_API afd_status afd_kv_break_even(const afd_kv_tier *tiers, size_t n, size_t tier,
                                     double bytes_per_token, const afd_kv_law *law, double *tokens);

#ifdef __cplusplus
}
#endif

#endif /* AFD_KVRETRIEVE_H */
