/* goodput.c: goodput of a serving configuration by simulation (BestServe
 * Algorithms 8-9, corrected; see afd_serve.h). */
#include <config.h>

#include <math.h>

#include "afd_serve_taichi.h"
#include "afd_serving.h"
#include "serve_internal.h"

int afd_serve_attain_tie(const afd_serve_result *r, double z)
{
    return fabs(r->attain_ttft - r->attain_tpot) <= z * r->attain_diff_se;
}

int afd_serve_p90_tie(const afd_serve_result *r, double ttft_slo, double tpot_slo, double z)
{
    double x = r->ttft.p90 / ttft_slo, y = r->tpot.p90 / tpot_slo;
    double sx = r->ttft.p90_se / ttft_slo, sy = r->tpot.p90_se / tpot_slo;
    if (x > 1 && y > 1)
        return 1;
    return fabs(x - y) <= z * sqrt(sx * sx + sy * sy);
}

const char *afd_serve_limit_name(int limit)
{
    return limit == AFD_SERVE_LIMIT_UNSTABLE ? "capacity"
           : limit == AFD_SERVE_LIMIT_TIE    ? "ttft=tpot"
                                             : afd_serving_limit_name(limit);
}

afd_taichi_bind afd_serve_taichi_bind(double goodput, const afd_serve_result *at,
                                      int unstable_above)
{
    if (goodput > 0 && unstable_above)
        return AFD_TAICHI_BIND_CAPACITY;
    if (goodput > 0 && afd_serve_attain_tie(at, AFD_SERVE_TIE_Z))
        return AFD_TAICHI_BIND_TIE;
    return afd_taichi_bind_of(goodput, at->attain_ttft, at->attain_tpot);
}

struct sim_ctx {
    afd_serve_params p;
    double ttft_slo, tpot_slo;
    int limit;   /* why the last infeasible rate failed (AFD_SERVING_LIMIT_*) */
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
    /* the order of the closed forms' cf_feasible (serving.c): a stage that
     * cannot keep up, then TTFT, then TPOT; a rate that fails and cannot
     * tell the two apart is a tie */
    if (r.unstable)
        c->limit = AFD_SERVE_LIMIT_UNSTABLE;
    else if (r.ttft.p90 <= c->ttft_slo && !(r.tpot.p90 > c->tpot_slo))
        return 1;
    else if (afd_serve_p90_tie(&r, c->ttft_slo, c->tpot_slo, AFD_SERVE_TIE_Z))
        c->limit = AFD_SERVE_LIMIT_TIE;
    else if (!(r.ttft.p90 <= c->ttft_slo))
        c->limit = AFD_SERVING_LIMIT_TTFT;
    else
        c->limit = AFD_SERVING_LIMIT_TPOT;
    return 0;
}

afd_status afd_serve_goodput(const afd_serve_params *p, double ttft_slo, double tpot_slo,
                             double lo, double hi, double rel_tol, double *goodput)
{
    return afd_serve_goodput_limit(p, ttft_slo, tpot_slo, lo, hi, rel_tol, goodput, NULL);
}

afd_status afd_serve_goodput_limit(const afd_serve_params *p, double ttft_slo, double tpot_slo,
                                   double lo, double hi, double rel_tol, double *goodput,
                                   int *limit)
{
    struct sim_ctx c;
    afd_status st;
    *goodput = NAN;
    if (limit != NULL)
        *limit = AFD_SERVING_LIMIT_NONE;
    if (p == NULL || !(ttft_slo > 0) || !(tpot_slo > 0))
        return AFD_EINVAL;
    c.p = *p;
    c.p.times = NULL;
    c.p.stop_unstable = 1; /* an unstable rate fails whatever its statistics */
    c.p.progress = NULL;   /* one bisection is many runs: the caller reports them */
    c.ttft_slo = ttft_slo;
    c.tpot_slo = tpot_slo;
    c.failure = AFD_OK;
    c.limit = AFD_SERVING_LIMIT_NONE;
    st = afd_goodput_bisect(sim_feasible, &c, lo, hi, rel_tol, goodput);
    if (st == AFD_ENUMERIC)
        return c.failure;
    if (limit != NULL)
        *limit = c.limit;
    return st;
}

afd_status afd_serve_goodput_widen(const afd_serve_params *p, double ttft_slo, double tpot_slo,
                                   double lo, double hi, double hi_max, double rel_tol,
                                   double *goodput, int *limit)
{
    afd_status st;
    int lim = AFD_SERVING_LIMIT_NONE;
    *goodput = NAN;
    if (limit != NULL)
        *limit = AFD_SERVING_LIMIT_NONE;
    if (!(hi_max >= hi) || !isfinite(hi_max))
        return AFD_EINVAL;
    for (;;) {
        st = afd_serve_goodput_limit(p, ttft_slo, tpot_slo, lo, hi, rel_tol, goodput, &lim);
        if (st != AFD_OK || lim != AFD_SERVING_LIMIT_NONE || !(hi < hi_max))
            break;
        /* every rate tried met both SLOs: go on from the last one, which did,
         * over a bracket twice as high (the runs share their seed, so lo
         * meets them again) */
        lo = *goodput;
        hi = 2 * hi < hi_max ? 2 * hi : hi_max;
    }
    if (limit != NULL)
        *limit = lim;
    return st;
}

struct attain_ctx {
    afd_serve_params p;
    double target;
    afd_status failure;
    double fail_lambda; /* the smallest rate found infeasible, */
    int fail_unstable;  /* and whether it was by instability */
};

static int attain_feasible(double lambda, void *ctx)
{
    struct attain_ctx *c = ctx;
    afd_serve_result r;
    afd_status st;
    c->p.lambda = lambda;
    st = afd_serve_run(&c->p, &r, NULL);
    if (st != AFD_OK) {
        c->failure = st;
        return -1;
    }
    if (!(!r.unstable && r.attainment >= c->target)) {
        if (!(lambda >= c->fail_lambda)) {
            c->fail_lambda = lambda;
            c->fail_unstable = r.unstable != 0;
        }
        return 0;
    }
    return 1;
}

afd_status afd_serve_goodput_attain(const afd_serve_params *p, double target, double lo,
                                    double hi, double rel_tol, double *goodput,
                                    double *goodput_se)
{
    return afd_serve_goodput_attain_at(p, target, lo, hi, rel_tol, goodput, goodput_se, NULL,
                                       NULL);
}

afd_status afd_serve_goodput_attain_at(const afd_serve_params *p, double target, double lo,
                                       double hi, double rel_tol, double *goodput,
                                       double *goodput_se, afd_serve_result *at,
                                       int *unstable_above)
{
    struct attain_ctx c;
    afd_serve_result r0, r1, r2;
    afd_status st;
    double g, slope;
    *goodput = NAN;
    if (goodput_se != NULL)
        *goodput_se = NAN;
    if (at != NULL)
        at->attainment = at->attain_ttft = at->attain_tpot = NAN;
    if (p == NULL || !(target > 0 && target < 1))
        return AFD_EINVAL;
    c.p = *p;
    c.p.times = NULL;
    c.p.stop_unstable = 1; /* an unstable rate fails whatever its attainment */
    c.p.progress = NULL;
    c.target = target;
    c.failure = AFD_OK;
    c.fail_lambda = INFINITY;
    c.fail_unstable = 0;
    st = afd_goodput_bisect(attain_feasible, &c, lo, hi, rel_tol, goodput);
    c.p.stop_unstable = p->stop_unstable; /* the slope needs the attainments */
    if (st != AFD_OK)
        return st == AFD_ENUMERIC ? c.failure : st;
    if (unstable_above != NULL)
        *unstable_above = c.fail_unstable;
    g = *goodput;
    if (at != NULL) { /* the run at the goodput, or at lo when it is 0 */
        c.p.lambda = g > 0 ? g : lo;
        if ((st = afd_serve_run(&c.p, at, NULL)) != AFD_OK)
            return st;
    }
    if (goodput_se == NULL || !(g > 0))
        return AFD_OK;
    /* the root's standard error: se(A(g)) / |dA/dlambda| */
    c.p.lambda = g;
    if (at != NULL)
        r0 = *at;
    else if ((st = afd_serve_run(&c.p, &r0, NULL)) != AFD_OK)
        return st;
    c.p.lambda = 0.9 * g;
    if ((st = afd_serve_run(&c.p, &r1, NULL)) != AFD_OK)
        return st;
    c.p.lambda = 1.1 * g;
    if ((st = afd_serve_run(&c.p, &r2, NULL)) != AFD_OK)
        return st;
    slope = (r1.attainment - r2.attainment) / (0.2 * g);
    if (slope > 0)
        *goodput_se = r0.attainment_se / slope;
    return AFD_OK;
}
