/* afd_pareto.h: the cost/benefit frontier of a set of configurations.
 *
 * Point i (cost c_i, value v_i) is dominated when some point j is no dearer
 * and no worse, and strictly better in one of the two:
 *     c_j <= c_i,  v_j >= v_i,  (c_j < c_i or v_j > v_i).
 * The frontier is the set of points that no point dominates (equal points
 * are all kept).  afd_pareto_front finds it in O(n log n): sorted by cost,
 * then value descending, a point is on the frontier iff its value exceeds
 * every value of the strictly cheaper points and equals the best of its own
 * cost.
 */
#ifndef AFD_PARETO_H
#define AFD_PARETO_H

#include <stddef.h>

#include "afd_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* front[i] = 1 if point i is on the frontier (cost minimised, value
 * maximised), else 0.  A point with a NAN cost or value is never on the
 * frontier and dominates nothing.  AFD_EINVAL for NULL arrays with n > 0,
 * AFD_ENOMEM if the work array cannot be allocated. */
AFD_API afd_status afd_pareto_front(const double *cost, const double *value, size_t n,
                                    int *front);

#ifdef __cplusplus
}
#endif

#endif /* AFD_PARETO_H */
