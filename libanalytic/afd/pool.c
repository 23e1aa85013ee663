/* pool.c: the AFD decode pool sized for a TPOT SLO (see afd_pool.h). */
#include <config.h>

#include <math.h>
#include <string.h>

#include "afd_pool.h"
#include "afd_ratio.h"

static void pool_zero(afd_pool *o, double rate)
{
    memset(o, 0, sizeof *o);
    o->tau = o->tau_err = NAN;
    o->rate = rate;
}

static int bad_positive(double v)
{
    return !(v > 0) || !isfinite(v);
}

/* tau_G of x A, y F and B slots (eq. 9). */
static afd_status tau_at(const afd_pool_params *p, unsigned x, unsigned y, unsigned B, afd_cycle *c)
{
    afd_system s;
    s.hw = *p->hw;
    s.B = B;
    s.theta = p->theta;
    s.nu = p->nu;
    return afd_cycle_topology(&s, x, y, c);
}

afd_status afd_pool_eval(const afd_pool_params *p, unsigned x, unsigned y, afd_pool *out)
{
    afd_cycle c;
    afd_status st;
    double bmem;
    unsigned lo, hi, mid;
    pool_zero(out, NAN);
    if (p == NULL || p->hw == NULL || x < 1 || y < 1 || !(p->output > 1) || !isfinite(p->output) ||
        bad_positive(p->request_tokens) || bad_positive(p->kv_capacity) ||
        bad_positive(p->tpot_slo) || !(p->theta >= 0) || !isfinite(p->theta) || !(p->nu >= 0) ||
        !isfinite(p->nu))
        return AFD_EINVAL;
    /* memory: B request_tokens <= kv_capacity */
    bmem = floor(p->kv_capacity / p->request_tokens);
    if (p->bmax_limit > 0 && bmem > p->bmax_limit)
        bmem = p->bmax_limit;
    if (bmem > 1e9)
        bmem = 1e9;
    if (bmem < 1) {
        pool_zero(out, 0);
        return AFD_OK;
    }
    if ((st = tau_at(p, x, y, 1, &c)) != AFD_OK)
        return st;
    if (!(c.tau_g <= p->tpot_slo)) {
        pool_zero(out, 0);
        return AFD_OK;
    }
    /* the largest B in [1, bmem] with tau_G(B) <= tpot_slo */
    lo = 1;
    hi = (unsigned)bmem;
    if ((st = tau_at(p, x, y, hi, &c)) != AFD_OK)
        return st;
    if (c.tau_g <= p->tpot_slo) {
        lo = hi;
    } else {
        while (hi - lo > 1) { /* tau_G(lo) <= slo < tau_G(hi) */
            mid = lo + (hi - lo) / 2;
            if ((st = tau_at(p, x, y, mid, &c)) != AFD_OK)
                return st;
            if (c.tau_g <= p->tpot_slo)
                lo = mid;
            else
                hi = mid;
        }
    }
    if ((st = tau_at(p, x, y, lo, &c)) != AFD_OK)
        return st;
    out->x = x;
    out->y = y;
    out->B = lo;
    out->tau = c.tau_g;
    out->tau_err = c.tau_g_err;
    out->rate = (double)x * lo / ((p->output - 1) * c.tau_g);
    return AFD_OK;
}

afd_status afd_pool_best(const afd_pool_params *p, unsigned n, afd_pool *best)
{
    afd_pool o;
    afd_status st;
    unsigned m, x, y;
    if (p == NULL || best == NULL)
        return AFD_EINVAL;
    for (m = 0; m < n; m++)
        pool_zero(&best[m], 0);
    /* the best pool of exactly m instances, then the running maximum */
    for (m = 2; m <= n; m++)
        for (x = 1; x < m; x++) {
            y = m - x;
            if ((st = afd_pool_eval(p, x, y, &o)) != AFD_OK) {
                for (m = 0; m < n; m++)
                    pool_zero(&best[m], NAN);
                return st;
            }
            if (o.rate > best[m - 1].rate)
                best[m - 1] = o;
        }
    for (m = 2; m <= n; m++)
        if (!(best[m - 1].rate > best[m - 2].rate))
            best[m - 1] = best[m - 2];
    return AFD_OK;
}
