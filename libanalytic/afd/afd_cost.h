/* afd_cost.h: price and energy of a deployment, and rates per dollar and per
 * joule, for every command that ranks configurations by cost.
 *
 * A deployment is a list of device kinds, each with a count, a rental price
 * per device-hour and a power draw in watts.  Devices are paid and powered
 * for as long as they are provisioned, busy or idle: cost and energy per unit
 * of time are the sums over the kinds of count x price and count x power.
 * (Idle power below the rated draw is not modelled; power_w is the draw to
 * budget for, so per-joule figures are lower bounds on efficiency.)
 *
 *   per dollar:  rate [1/s] x 3600 [s/h] / price [$/h]       (tokens per dollar)
 *   per joule:   rate [1/s] / power [W = J/s]                (tokens per joule)
 *
 * The A/F-ratio rules that maximise these are in afd_ratio.h
 * (afd_ratio_cost_mf, afd_ratio_cost_g).
 */
#ifndef AFD_COST_H
#define AFD_COST_H

#include <stddef.h>

#include "afd_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct afd_fleet_item {
    double count;          /* devices of this kind, >= 0 */
    double price_per_hour; /* per device, >= 0 (NAN: unknown) */
    double power_w;        /* per device, >= 0 (NAN: unknown) */
} afd_fleet_item;

/* Price per hour and power of a deployment: sum count_i price_i and
 * sum count_i power_i.  A kind with count 0 contributes nothing even when its
 * price is unknown; an unknown (NAN) price or power of a kind in use makes
 * that total NAN.  AFD_EINVAL for a negative or infinite count, price or
 * power; outputs (either may be NULL) are NAN then. */
AFD_API afd_status afd_fleet_cost(const afd_fleet_item *items, size_t n, double *price_per_hour,
                                  double *power_w);

/* Events (tokens, requests) per dollar: 3600 rate_per_s / price_per_hour.
 * NAN unless rate_per_s >= 0 and price_per_hour > 0, both finite. */
AFD_API double afd_per_dollar(double rate_per_s, double price_per_hour);

/* Events per joule: rate_per_s / power_w.  NAN unless rate_per_s >= 0 and
 * power_w > 0, both finite. */
AFD_API double afd_per_joule(double rate_per_s, double power_w);

/* Tokens per dollar (per joule) of an rA-1F bundle: rB / tau tokens per time
 * unit of unit_seconds seconds from r Attention devices at cost_a and one
 * FFN device at cost_f (prices per hour, or watts):
 *     per dollar:  3600 rB / (tau unit_seconds (r cost_a + cost_f)),
 *     per joule:   rB / (tau unit_seconds (r cost_a + cost_f)).
 * per_hour = 1 for prices, 0 for powers.  unit_seconds = 1 keeps the
 * latency model's own unit (e.g. cycles: tokens per cycle per $/h).  NAN for
 * arguments outside their domain. */
AFD_API double afd_bundle_per_cost(double r, double B, double tau, double unit_seconds,
                                   double cost_a, double cost_f, int per_hour);

#ifdef __cplusplus
}
#endif

#endif /* AFD_COST_H */
