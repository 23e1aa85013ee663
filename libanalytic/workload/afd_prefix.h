/* afd_prefix.h: the hit fraction of an LRU prefix cache from a trace's block
 * popularity, by Che's characteristic-time approximation.
 *
 * A trace kept with its prompt blocks (afd_workload.blocks: request j's
 * blocks are blocks[block_start[j] .. block_start[j + 1]), dense ids below
 * `ids`) references block i c_i times out of R = sum_i c_i references.
 * Under the independent reference model with probabilities q_i = c_i / R an
 * LRU cache of C blocks holds block i with probability 1 - exp(-q_i T),
 * where the characteristic time T (in references) solves
 *     sum_i (1 - exp(-q_i T)) = C                        (T = +inf if ids <= C)
 * (H. Che, Y. Tung, Z. Wang, "Hierarchical Web caching systems: modeling,
 * design and experimental results", IEEE JSAC 20(7), 2002, eq. (3)-(4);
 * Fricker, Robert and Roberts, ITC 2012, for its accuracy).  A finite trace
 * starts cold, so the first reference of each block misses: the hit
 * fraction of the prompt tokens is
 *     h = sum_i w_i (c_i - 1) / c_i (1 - exp(-q_i T)) / sum_i w_i,
 * w_i the prompt tokens of block i over its references (B each, the
 * prompt's last block min(B, P - k B) when P is not a multiple of B).  It
 * counts any cached block, where a prefix cache uses only a request's
 * leading run; docs/prefix-cache.md states its error against a replay.
 */
#ifndef AFD_PREFIX_H
#define AFD_PREFIX_H

#include <stddef.h>
#include <stdint.h>

#include "afd_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct afd_lru_che_params {
    const uint32_t *blocks;      /* the block ids of all requests, in order */
    const uint64_t *block_start; /* requests + 1 offsets into blocks */
    const uint64_t *prompt;      /* prompt tokens of each request */
    size_t requests;             /* >= 1 */
    size_t ids;                  /* every block id is below this */
    uint32_t block_size;         /* tokens per block B >= 1 */
    uint64_t capacity;           /* blocks the cache holds C >= 1 */
} afd_lru_che_params;

/* The approximate LRU hit fraction h above.  Errors: AFD_EINVAL (a missing
 * array, B or C of 0, an id >= ids, offsets that decrease), AFD_EEMPTY (no
 * prompt token), AFD_ENOMEM.  *hit is NaN on error. */
AFD_API afd_status afd_lru_che_hit(const afd_lru_che_params *p, double *hit, afd_error *err);

#ifdef __cplusplus
}
#endif

#endif /* AFD_PREFIX_H */
