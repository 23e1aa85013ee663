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
 *   power-of-two  the supermarket model's mean field (N. D. Vvedenskaya,
 *                 R. L. Dobrushin, F. I. Karpelevich, Probl. Inf. Transm. 32
 *                 (1996) 15-27; M. Mitzenmacher, IEEE TPDS 12 (2001)
 *                 1094-1104, Thm. 3.6): as n -> infinity the fraction of
 *                 servers holding at least i requests is rho^(2^i - 1), so
 *                 the mean sojourn is es sum_{i>=1} rho^(2^i - 2) and
 *                 Wq = es sum_{i>=2} rho^(2^i - 2), for exponential service;
 *                 scaled by (1 + cs2) / 2 otherwise.  Exact only in the limit
 *                 n -> infinity; at n = 4, rho = 0.8 with exponential
 *                 service its sojourn is 14-16% below the simulation's
 *                 (tests/serve/test_serve.c).
 *   least         join the shortest queue: the shared queue's M/G/c, which
 *                 it approaches (it never idles a server while another
 *                 queues two or more; its gap is the waits a shared queue
 *                 would have started elsewhere): a lower bound; at n = 4,
 *                 rho = 0.8 with exponential service its sojourn is 8-10%
 *                 below the simulation's (tests/serve/test_serve.c).
 */
#include <config.h>

#include <math.h>

#include "afd_queue.h"

afd_status afd_routed_wq(afd_routed_kind how, double lambda, double es, double es2, unsigned n,
                         double *wq)
{
    double rho, cs2, l = lambda / n, sum, term;
    int k;
    *wq = NAN;
    if (!(lambda > 0) || !(es > 0) || !(es2 >= es * es) || n < 1 || !isfinite(es2) ||
        !isfinite(lambda))
        return AFD_EINVAL;
    rho = l * es;
    if (!(rho < 1))
        return AFD_EUNSTABLE;
    cs2 = es2 / (es * es) - 1;
    switch (how) {
    case AFD_ROUTED_RANDOM:
        *wq = l * es2 / (2 * (1 - rho));
        return AFD_OK;
    case AFD_ROUTED_ROUND_ROBIN:
        if (n == 1) {
            *wq = l * es2 / (2 * (1 - rho));
        } else {
            double mu = 1 / es, sigma = rho, ca2 = 1.0 / n;
            for (k = 0; k < 10000; k++) { /* a contraction on (0, 1) for rho < 1 */
                double next = pow(lambda / (lambda + mu * (1 - sigma)), n);
                if (fabs(next - sigma) < 1e-15)
                    break;
                sigma = next;
            }
            *wq = (ca2 + cs2) / (ca2 + 1) * sigma / (mu * (1 - sigma));
        }
        return AFD_OK;
    case AFD_ROUTED_GLOBAL:
    case AFD_ROUTED_LEAST:
        *wq = (1 + cs2) / 2 * afd_mmc_wq(lambda, es, n);
        return isnan(*wq) ? AFD_EUNSTABLE : AFD_OK;
    case AFD_ROUTED_POWER_OF_TWO:
        if (n == 1) {
            *wq = l * es2 / (2 * (1 - rho));
            return AFD_OK;
        }
        sum = 0;
        for (k = 2; k < 64; k++) {
            term = pow(rho, ldexp(1, k) - 2);
            sum += term;
            if (term < 1e-17 * sum)
                break;
        }
        *wq = (1 + cs2) / 2 * es * sum;
        return AFD_OK;
    }
    return AFD_EINVAL;
}
