/* cost.c: price and energy of a deployment (see afd_cost.h). */
#include <config.h>

#include <math.h>

#include "afd_cost.h"

static int nonneg(double v)
{
    return isnan(v) || (v >= 0 && isfinite(v));
}

afd_status afd_fleet_cost(const afd_fleet_item *items, size_t n, double *price_per_hour,
                          double *power_w)
{
    double price = 0, power = 0;
    size_t k;
    if (price_per_hour != NULL)
        *price_per_hour = NAN;
    if (power_w != NULL)
        *power_w = NAN;
    if (items == NULL && n > 0)
        return AFD_EINVAL;
    for (k = 0; k < n; k++) {
        const afd_fleet_item *it = &items[k];
        if (!(it->count >= 0) || !isfinite(it->count) || !nonneg(it->price_per_hour) ||
            !nonneg(it->power_w))
            return AFD_EINVAL;
        if (it->count == 0)
            continue;
        price += it->count * it->price_per_hour; /* NAN propagates: unknown */
        power += it->count * it->power_w;
    }
    if (price_per_hour != NULL)
        *price_per_hour = price;
    if (power_w != NULL)
        *power_w = power;
    return AFD_OK;
}

double afd_per_dollar(double rate_per_s, double price_per_hour)
{
    if (!(rate_per_s >= 0) || !isfinite(rate_per_s) || !(price_per_hour > 0) ||
        !isfinite(price_per_hour))
        return NAN;
    return 3600 * rate_per_s / price_per_hour;
}

double afd_per_joule(double rate_per_s, double power_w)
{
    if (!(rate_per_s >= 0) || !isfinite(rate_per_s) || !(power_w > 0) || !isfinite(power_w))
        return NAN;
    return rate_per_s / power_w;
}

double afd_bundle_per_cost(double r, double B, double tau, double unit_seconds, double cost_a,
                           double cost_f, int per_hour)
{
    double rate, cost;
    if (!(r > 0) || !(B > 0) || !(tau > 0) || !(unit_seconds > 0) || !(cost_a >= 0) ||
        !(cost_f >= 0) || !isfinite(r * B * tau * unit_seconds * cost_a * cost_f))
        return NAN;
    rate = r * B / (tau * unit_seconds); /* tokens per second (or per unit) */
    cost = r * cost_a + cost_f;
    return per_hour ? afd_per_dollar(rate, cost) : afd_per_joule(rate, cost);
}
