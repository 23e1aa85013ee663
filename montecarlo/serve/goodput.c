/* goodput.c: goodput of a serving configuration by simulation (BestServe
 * Algorithms 8-9, corrected; see afd_serve.h). */
#include <config.h>

#include <math.h>

#include "afd_serving.h"
#include "serve_internal.h"

struct sim_ctx {
    afd_serve_params p;
    double ttft_slo, tpot_slo;
    afd_status failure;
};

static int sim_feasible(double lambda, void *ctx)
{
    struct sim_ctx *c = ctx;
    afd_serve_result r;
    afd_status st;
    c->p.lambda = lambda;
    st = afd_serve_run(&c->p, &r, NULL);
    if (st != AFD_OK) {
        c->failure = st;
        return -1;
    }
    return !r.unstable && r.ttft.p90 <= c->ttft_slo && !(r.tpot.p90 > c->tpot_slo);
}

afd_status afd_serve_goodput(const afd_serve_params *p, double ttft_slo, double tpot_slo,
                             double lo, double hi, double rel_tol, double *goodput)
{
    struct sim_ctx c;
    afd_status st;
    *goodput = NAN;
    if (p == NULL || !(ttft_slo > 0) || !(tpot_slo > 0))
        return AFD_EINVAL;
    c.p = *p;
    c.p.times = NULL;
    c.ttft_slo = ttft_slo;
    c.tpot_slo = tpot_slo;
    c.failure = AFD_OK;
    st = afd_goodput_bisect(sim_feasible, &c, lo, hi, rel_tol, goodput);
    return st == AFD_ENUMERIC ? c.failure : st;
}
