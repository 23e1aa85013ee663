/* afd_priority.h: the M/G/1 wait under first come first served and under
 * shortest job first (non-preemptive priority by service time), for the
 * ordering of prefills by prompt length.
 *
 * Model: Poisson arrivals at rate lambda, one server, service law S
 * (afd_deadline.h), rho = lambda E[S] < 1, no deadline.  W0 = lambda E[S^2]/2
 * is the mean residual work found in service by an arrival.
 *
 * FCFS (Pollaczek-Khinchine): W = W0 / (1 - rho).
 *
 * EDF with one TTFT SLO for every request: the deadline a_i + SLO is an
 * increasing function of the arrival time a_i, so earliest-deadline-first
 * takes requests in arrival order and is FCFS, request by request; every
 * formula for FCFS holds for it (afd_dlsim checks the identity run by run).
 *
 * SJF, non-preemptive, ties first come first served: Phipps (Oper. Res. 4
 * (1956) 76-85), the continuum limit of Cobham's priority formula (Cobham,
 * Oper. Res. 2 (1954) 70-76):
 *     W(x) = W0 / ((1 - rho(x-)) (1 - rho(x))),  rho(x) = lambda E[S; S <= x],
 * rho(x-) = lambda E[S; S < x] (for an atomic law the atom at x is a class
 * of its own; for a continuous law the two coincide).  The shortest requests
 * wait about W0, the longest W0 / (1 - rho)^2: SJF lowers the mean and raises
 * the wait of the longest prompts above FCFS by the factor 1/(1 - rho(x-)).
 * Conservation (Kleinrock 1965): E_S[rho'(S) W(S)] = rho W_FCFS, i.e.
 * sum_j lambda t_j w_j W(t_j) = rho W0 / (1 - rho) for any non-preemptive
 * order that ignores nothing but service times (tests check it).
 *
 * Statuses: AFD_EINVAL (bad arguments), AFD_EUNSTABLE (rho >= 1),
 * AFD_ENUMERIC (the quadrature of an exponential law's mean fails).
 */
#ifndef AFD_PRIORITY_H
#define AFD_PRIORITY_H

#include "afd_deadline.h"
#include "afd_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Mean FCFS wait W0 / (1 - rho). */
AFD_API afd_status afd_fcfs_wait_mean(double lambda, const afd_svc_law *law, afd_result *out);

/* SJF wait of a request of service time x >= 0 (Phipps). */
AFD_API afd_status afd_sjf_wait(double lambda, const afd_svc_law *law, double x,
                                afd_result *out);

/* Mean SJF wait E_S[W(S)]: a sum over the atoms, or for the exponential law
 * a quadrature to 1e-12 relative (GSL QNG with bisection). */
AFD_API afd_status afd_sjf_wait_mean(double lambda, const afd_svc_law *law, afd_result *out);

/* Mean SJF wait of the requests with S >= x (the long prompts), and their
 * share P(S >= x) in *share (may be NULL).  Atomic laws only (AFD_EINVAL
 * for the exponential); AFD_EINVAL when no atom reaches x. */
AFD_API afd_status afd_sjf_wait_mean_above(double lambda, const afd_svc_law *law, double x,
                                           afd_result *out, double *share);

#ifdef __cplusplus
}
#endif

#endif /* AFD_PRIORITY_H */
