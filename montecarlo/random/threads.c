/* threads.c: the OpenMP team size of the Monte Carlo runs (afd_mc.h). */
#include <config.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "afd_mc.h"

unsigned afd_mc_threads(unsigned requested)
{
#ifdef _OPENMP
    unsigned n = requested;
    if (n == 0) {
        int m = omp_get_max_threads(); /* OMP_NUM_THREADS, or the processors */
        n = m > 0 ? (unsigned)m : 1;
    }
    return n < AFD_MC_MAX_THREADS ? n : AFD_MC_MAX_THREADS;
#else
    (void)requested;
    return 1;
#endif
}
