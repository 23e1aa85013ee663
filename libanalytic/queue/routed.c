/* routed.c: the mean wait of a pool of n identical FIFO servers fed by one
 * Poisson stream of rate lambda, as a router at arrival splits it (service
 * time S with E[S] = es, E[S^2] = es2, cs2 = es2 / es^2 - 1):
 *   random        each server an M/G/1 fed at lambda / n (a thinned Poisson
 *                 stream is Poisson): Pollaczek-Khinchine,
 *                 Wq = (lambda / n) es2 / (2 (1 - rho)), rho = lambda es / n;
 *                 exact (Kleinrock, Queueing Systems I, Sec. 5.6).
 *   round-robin   every n-th arrival: Erlang-n interarrivals, E_n/G/1.  For
 *                 exponential service (cs2 = 1) E_n/M/1 exactly:
 *                 Wq = sigma / (mu (1 - sigma)), sigma in (0, 1) the root of
 *                 sigma = A*(mu (1 - sigma)), A*(s) = (lambda / (lambda + s))^n
 *                 (Kleinrock, Sec. 6.4, the G/M/1 queue).  Otherwise that
 *                 wait scaled by (ca2 + cs2) / (ca2 + 1), ca2 = 1 / n, as
 *                 Lee and Longton scale M/M/c below: the factor of Kingman's
 *                 heavy-traffic GI/G/1 wait (J. F. C. Kingman, Proc. Camb.
 *                 Phil. Soc. 57 (1961) 902-904), so exact for n = 1
 *                 (Pollaczek-Khinchine), for cs2 = 1 and as rho -> 1, and
 *                 continuous in cs2 (a service within a token of exponential,
 *                 the engine's geometric prompts, gets E_n/M/1 within that
 *                 token); an approximation otherwise.
 *   global        one queue, M/G/c by Lee and Longton's scaling of M/M/c,
 *                 Wq = (1 + cs2) / 2 Wq(M/M/c) (A. M. Lee, P. A. Longton,
 *                 Oper. Res. Q. 10 (1959) 56-59): exact for cs2 = 1.
 *   least         join the shortest queue.  An arrival waits when every
 *                 server is busy, as in the shared queue, so its chance of
 *                 waiting is taken as Erlang's C(n, rho); once it waits it
 *                 is held to one server, which the shared queue's waiter is
 *                 not.  Wq = (1 + cs2) / 2 (Wq(M/M/n) + K (1 - 1/n) C(n, rho)
 *                 es), K = 0.6: the shared queue's M/G/c (Lee and Longton, a
 *                 lower bound that JSQ approaches) plus a gap proportional
 *                 to the chance of waiting, exact for n = 1.  K is fitted
 *                 to the simulator (montecarlo/serve, --router
 *                 least-requests), where the gap over C(n, rho) es is nearly
 *                 flat in rho: 0.25-0.28, 0.35-0.42, 0.37-0.47 at n = 2, 4, 8
 *                 for exponential service, 0.07-0.08, 0.14-0.15, 0.20 for
 *                 deterministic service; K (1 - 1/n) (1 + cs2) / 2 covers
 *                 each.  The mean sojourn on n = 2, 4, 8 and rho = 0.5, 0.7,
 *                 0.8, 0.9 (docs/routing.md's table): +0.2% to +4.4% of the
 *                 simulation with exponential service (-2.6% and -0.6% at
 *                 rho = 0.9, n = 2 and 4, within 2 of their standard
 *                 errors), +0.1% to +2.4% with deterministic service: high,
 *                 the side that over-provisions.
 *   power-of-two  two distinct servers drawn, the shorter joined.  For
 *                 n <= 2 it is join-the-shortest-queue (both servers are
 *                 drawn), for larger n it tends to the supermarket model's
 *                 mean field (N. D. Vvedenskaya, R. L. Dobrushin, F. I.
 *                 Karpelevich, Probl. Inf. Transm. 32 (1996) 15-27; M.
 *                 Mitzenmacher, IEEE TPDS 12 (2001) 1094-1104, Thm. 3.6): as
 *                 n -> infinity the fraction of servers holding at least i
 *                 requests is rho^(2^i - 1), so Wmf = es sum_{i>=2}
 *                 rho^(2^i - 2) for exponential service, scaled by
 *                 (1 + cs2) / 2 otherwise; alone it is 14-16% low at n = 4,
 *                 rho = 0.8 and 30% low at rho = 0.9.  Its gap to the
 *                 finite pool falls about as 1 / n (measured: the gap at
 *                 n = 4 is 0.37-0.41 of that at n = 2, at n = 8 0.44-0.46 of
 *                 that at n = 4), so Wq = Wmf + (2 / n) (Wq_least(2, rho) -
 *                 Wmf), Wq_least(2, rho) the form above on two servers at
 *                 the same load: exact in both limits (up to least's own
 *                 error at n = 2) and high between them: the mean sojourn on
 *                 n = 4, 8 and rho = 0.5-0.9 is +1.1% to +5.7% off with
 *                 exponential service, +0.7% to +8.6% with deterministic
 *                 service, the most at rho = 0.9; at n = 2 as least.
 * The chance of waiting (afd_routed_wait's pwait): random rho (M/G/1,
 * exact), round-robin sigma (E_n/M/1, exact for cs2 = 1), global and least
 * C(n, rho) (exact for M/M/c), power-of-two rho^2 (the mean field: both
 * drawn servers busy) moved toward C(2, rho) = 2 rho^2 / (1 + rho) by the
 * same 2 / n.  afd_routed_quantile takes the wait as that atom at 0 and an
 * exponential of mean wq / pwait beyond it, the form of the G/M/1 and
 * M/M/c waits (exact there: Kleinrock, Sec. 6.4 and 3.5), an approximation
 * for the others; the TTFT P90 on the grid above: see docs/routing.md.
 */
#include <config.h>

#include <math.h>

#include "afd_queue.h"

/* K of the least form (routed.c's head comment). */
#define LEAST_GAP 0.6

/* M/G/1's mean wait by Pollaczek-Khinchine at per-server rate l. */
static double pk_wq(double l, double es2, double rho)
{
    return l * es2 / (2 * (1 - rho));
}

/* join the shortest queue on n servers at total rate lambda: the wait
 * before the (1 + cs2) / 2 scaling, and Erlang's C. */
static void least(double lambda, double es, unsigned n, double *wq_exp, double *c)
{
    *c = afd_erlang_c(lambda * es, n);
    *wq_exp = afd_mmc_wq(lambda, es, n) + LEAST_GAP * (1 - 1.0 / n) * *c * es;
}

afd_status afd_routed_wait(afd_routed_kind how, double lambda, double es, double es2, unsigned n,
                           afd_routed_result *out)
{
    double rho, cs2, l = lambda / n, sum, term, wq, c2;
    int k;
    out->wq = out->pwait = NAN;
    if (!(lambda > 0) || !(es > 0) || !(es2 >= es * es) || n < 1 || !isfinite(es2) ||
        !isfinite(lambda))
        return AFD_EINVAL;
    rho = l * es;
    if (!(rho < 1))
        return AFD_EUNSTABLE;
    cs2 = es2 / (es * es) - 1;
    switch (how) {
    case AFD_ROUTED_RANDOM:
        out->wq = pk_wq(l, es2, rho);
        out->pwait = rho;
        return AFD_OK;
    case AFD_ROUTED_ROUND_ROBIN:
        if (n == 1) {
            out->wq = pk_wq(l, es2, rho);
            out->pwait = rho;
        } else {
            double mu = 1 / es, sigma = rho, ca2 = 1.0 / n;
            for (k = 0; k < 10000; k++) { /* a contraction on (0, 1) for rho < 1 */
                double next = pow(lambda / (lambda + mu * (1 - sigma)), n);
                if (fabs(next - sigma) < 1e-15)
                    break;
                sigma = next;
            }
            out->wq = (ca2 + cs2) / (ca2 + 1) * sigma / (mu * (1 - sigma));
            out->pwait = sigma;
        }
        return AFD_OK;
    case AFD_ROUTED_GLOBAL:
        out->wq = (1 + cs2) / 2 * afd_mmc_wq(lambda, es, n);
        out->pwait = afd_erlang_c(lambda * es, n);
        break;
    case AFD_ROUTED_LEAST:
        least(lambda, es, n, &wq, &out->pwait);
        out->wq = (1 + cs2) / 2 * wq;
        break;
    case AFD_ROUTED_POWER_OF_TWO:
        least((n < 2 ? n : 2) * rho / es, es, n < 2 ? n : 2, &wq, &c2);
        if (n <= 2) {
            out->wq = (1 + cs2) / 2 * wq;
            out->pwait = c2;
            break;
        }
        sum = 0;
        for (k = 2; k < 64; k++) {
            term = pow(rho, ldexp(1, k) - 2);
            sum += term;
            if (term < 1e-17 * sum)
                break;
        }
        sum *= es;
        out->wq = (1 + cs2) / 2 * (sum + 2.0 / n * (wq - sum));
        out->pwait = rho * rho + 2.0 / n * (c2 - rho * rho);
        break;
    default:
        return AFD_EINVAL;
    }
    if (isnan(out->wq) || isnan(out->pwait)) {
        out->wq = out->pwait = NAN;
        return AFD_EUNSTABLE;
    }
    return AFD_OK;
}

afd_status afd_routed_wq(afd_routed_kind how, double lambda, double es, double es2, unsigned n,
                         double *wq)
{
    afd_routed_result r;
    afd_status st = afd_routed_wait(how, lambda, es, es2, n, &r);
    *wq = r.wq;
    return st;
}

/* P(W + X > u): W an atom 1 - p at 0 and exponential of rate th beyond,
 * X exponential of rate mu (mu infinite: X = 0).  The convolution of two
 * exponentials, e^{-th u} + th e^{-th u} (1 - e^{-(mu - th) u}) / (mu - th),
 * written with expm1 so that mu near th loses nothing. */
static double tail(double p, double th, double mu, double u)
{
    double d, conv;
    if (isinf(mu))
        return p * exp(-th * u);
    d = mu - th;
    conv = exp(-th * u) * (1 + th * (d == 0 ? u : -expm1(-d * u) / d));
    return (1 - p) * exp(-mu * u) + p * conv;
}

afd_status afd_routed_quantile(double wq, double pwait, double shift, double xmean, double q,
                               double *t)
{
    double th, mu, lo = 0, hi;
    int k;
    *t = NAN;
    if (!(wq >= 0) || !(pwait >= 0 && pwait <= 1) || !(shift >= 0) || !(xmean >= 0) ||
        !(q > 0 && q < 1) || !isfinite(wq) || !isfinite(shift) || !isfinite(xmean) ||
        (wq > 0) != (pwait > 0))
        return AFD_EINVAL;
    if (wq == 0 || pwait == 0) { /* no wait: X's quantile */
        *t = shift - xmean * log1p(-q);
        return AFD_OK;
    }
    th = pwait / wq;
    if (xmean == 0) { /* W alone: inside the atom, or its exponential's */
        *t = shift + (pwait <= 1 - q ? 0 : log(pwait / (1 - q)) / th);
        return AFD_OK;
    }
    mu = 1 / xmean;
    /* the tail is decreasing from 1 at u = 0; each of its terms is at most
     * e^{-min(th, mu) u} (1 + max(th, mu) u), so hi below covers q */
    hi = (wq / pwait + xmean);
    for (k = 0; k < 200 && tail(pwait, th, mu, hi) > 1 - q; k++)
        hi *= 2;
    for (k = 0; k < 200 && hi - lo > 1e-13 * hi; k++) {
        double mid = (lo + hi) / 2;
        if (tail(pwait, th, mu, mid) > 1 - q)
            lo = mid;
        else
            hi = mid;
    }
    *t = shift + (lo + hi) / 2;
    return AFD_OK;
}
