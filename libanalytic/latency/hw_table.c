/* hw_table.c: step times tabulated over (batch, context) and their
 * interpolation (afd_hw.h). */
#include <config.h>

#include <math.h>

#include "afd_hw.h"

/* the cell of a strictly increasing axis x[0..n) holding v: i with
 * x[i] <= v <= x[i + 1], the first or last cell outside the axis (n >= 2) */
static unsigned cell(const double *x, unsigned n, double v)
{
    unsigned lo = 0, hi = n - 1;
    while (hi - lo > 1) {
        unsigned mid = lo + (hi - lo) / 2;
        if (x[mid] <= v)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* the weight of x[i + 1] in log space: 0 at x[i], 1 at x[i + 1]; an axis
 * of one point has weight 0 */
static double weight(const double *x, unsigned n, unsigned i, double v)
{
    if (n < 2)
        return 0;
    return log(v / x[i]) / log(x[i + 1] / x[i]);
}

double afd_hw_table_eval(const afd_hw_table *t, double b, double s)
{
    unsigned i, j, i1, j1;
    double u, w, l00, l01, l10, l11;
    if (t->nb == 0 || t->ns == 0 || !(b >= 1) || !(s >= 1) || !isfinite(b) || !isfinite(s))
        return NAN;
    i = t->nb < 2 ? 0 : cell(t->b, t->nb, b);
    j = t->ns < 2 ? 0 : cell(t->s, t->ns, s);
    i1 = t->nb < 2 ? i : i + 1;
    j1 = t->ns < 2 ? j : j + 1;
    u = weight(t->b, t->nb, i, b);
    w = weight(t->s, t->ns, j, s);
    /* at a grid point the weights are 0 or 1 exactly, and the value is the
     * table's own: return it without a round trip through log and exp */
    if ((u == 0 || u == 1) && (w == 0 || w == 1))
        return t->t[(u == 0 ? i : i1) * t->ns + (w == 0 ? j : j1)];
    l00 = log(t->t[i * t->ns + j]);
    l01 = log(t->t[i * t->ns + j1]);
    l10 = log(t->t[i1 * t->ns + j]);
    l11 = log(t->t[i1 * t->ns + j1]);
    return exp((1 - u) * ((1 - w) * l00 + w * l01) + u * ((1 - w) * l10 + w * l11));
}

int afd_hw_has_decode_table(const afd_hw *hw)
{
    return hw->decode_table.nb > 0 && hw->decode_table.ns > 0;
}

int afd_hw_has_prefill_table(const afd_hw *hw)
{
    return hw->prefill_table.nb > 0 && hw->prefill_table.ns > 0;
}

double afd_hw_decode_step(const afd_hw *hw, double b, double K)
{
    if (afd_hw_has_decode_table(hw) && b >= 1)
        return afd_hw_table_eval(&hw->decode_table, b, K / b >= 1 ? K / b : 1);
    return hw->decode_beta + hw->decode_gamma * b + hw->decode_alpha * K;
}

double afd_hw_prefill_time(const afd_hw *hw, double sum_p, double sum_p2)
{
    if (afd_hw_has_prefill_table(hw) && sum_p >= 1 && sum_p2 > 0) {
        /* the equal prompts with the same sum P and sum P^2 (afd_hw_table) */
        double b = sum_p * sum_p / sum_p2;
        return afd_hw_table_eval(&hw->prefill_table, b >= 1 ? b : 1, sum_p);
    }
    return hw->prefill_a + hw->prefill_b * sum_p + hw->prefill_c * sum_p2;
}
