/* bisect.c: goodput by bisection on a feasibility test (see afd_serving.h),
 * shared by the closed forms of afd_serving.h and afd_taichi.h and by the
 * simulator (montecarlo/serve/goodput.c). */
#include <config.h>

#include <math.h>

#include "afd_serving.h"

afd_status afd_goodput_bisect(afd_feasible_fn feasible, void *ctx, double lo, double hi,
                              double rel_tol, double *goodput)
{
    int f;
    *goodput = NAN;
    if (!(lo > 0 && lo < hi && isfinite(hi)) || !(rel_tol > 0 && rel_tol < 1))
        return AFD_EINVAL;
    f = feasible(lo, ctx);
    if (f < 0)
        return AFD_ENUMERIC;
    if (f == 0) {
        *goodput = 0;
        return AFD_OK;
    }
    while (hi - lo > rel_tol * hi) {
        double mid = 0.5 * (lo + hi);
        f = feasible(mid, ctx);
        if (f < 0)
            return AFD_ENUMERIC;
        if (f)
            lo = mid;
        else
            hi = mid;
    }
    *goodput = lo;
    return AFD_OK;
}
