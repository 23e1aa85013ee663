/* libanalytic/afd/: how many Attention workers one FFN worker needs.  The
 * cross-worker barrier (afd_barrier.h), the cycle times and the A/F
 * provisioning rules (afd_ratio.h), and their price, energy and Pareto
 * frontier (afd_cost.h, afd_pareto.h). */

/* afd_ratio.h: cycle times and the A/F provisioning rules
 * (afd-provisioning paper, Sections 3.1, 4.3, 4.4, Appendix A.4, A.5).
 *
 * An rA-1F bundle: r Attention workers of B slots each feed one FFN
 * instance.  With the stationary slot load Y (theta = E[Y], nu = sd(Y)):
 *
 *   mu_A    = alpha_a B theta + beta_a,   sigma_A = alpha_a sqrt(B) nu
 *   G(r)    = max(alpha_c rB + beta_c, alpha_f rB + beta_f)
 *   tau_mf  = max(mu_A, G)                                           eq. (8)
 *   tau_G   = G + sigma_A E[(M_r - z)+],  z = (G - mu_A)/sigma_A     eq. (9)
 *   Thr     = rB / ((r + 1) tau)  tokens per instance per time unit  eq. (1), (11)
 *
 * tau_G is the leading-order Gaussian approximation of E[max(alpha_a W +
 * beta_a, G)] with W the barrier load (Theorem 4.3); its error is
 * o(sqrt(B)) as B grows (Appendix A.4).  With nu = 0 the barrier vanishes
 * and tau_G = tau_mf exactly.  An xA-yF topology has r = x/y, the barrier
 * over its x workers and every FFN instance serving xB/y requests.
 */
#ifndef AFD_RATIO_H
#define AFD_RATIO_H

#include <stddef.h>

#include "afd_hw.h"
#include "afd_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct afd_system {
    afd_hw hw;
    unsigned B;   /* micro-batch per Attention worker, >= 1.  A micro-batch
                     size is `unsigned` across the API (afd_barrier_mc_params,
                     afd_pipeline_params); the closed forms that also make
                     sense for a real B (afd_barrier_overhead_clt, as a
                     continuous relaxation) take a double argument. */
    double theta; /* E[Y] >= 0 */
    double nu;    /* sd(Y) >= 0 */
} afd_system;

/* Validate the coefficients (afd_hw_check), B >= 1, theta >= 0, nu >= 0, all
 * finite; err->text says which. */
AFD_API afd_status afd_system_check(const afd_system *s, afd_error *err);

/* The term(s) of tau_mf that bind, as a bit set (ties within 1e-9 relative). */
enum { AFD_BIND_ATTENTION = 1, AFD_BIND_COMM = 2, AFD_BIND_FFN = 4 };
/* "attention", "communication", "ffn", or a '+'-joined tie such as "attention+ffn". */
AFD_API const char *afd_bind_name(unsigned bind);

typedef struct afd_cycle {
    double r;           /* x / y */
    double x;           /* Attention workers under one barrier */
    double mu_a;        /* mean Attention time */
    double sigma_a;     /* its standard deviation across steps */
    double t_comm;      /* alpha_c rB + beta_c */
    double t_ffn;       /* alpha_f rB + beta_f */
    double tau_mf;      /* eq. (8) */
    double thr_mf;      /* eq. (1) with tau_mf */
    double tau_g;       /* eq. (9) */
    double thr_g;       /* eq. (11) */
    double tau_g_err;   /* bound on the quadrature error in tau_g */
    double p_attention; /* P(M_x > z): probability that the Attention barrier binds */
    double barrier;     /* (nu/theta) kappa_x / sqrt(B): relative barrier overhead
                           on the Attention load (Theorem 4.3) */
    unsigned bind;      /* AFD_BIND_* of tau_mf */
    /* Idle fractions (Section 5.2's eta_A, eta_F) implied by a cycle time tau:
     * per cycle every Attention worker is busy mu_A on average and each FFN
     * instance t_ffn, so by renewal-reward the long-run idle fractions are
     *   eta_A = 1 - mu_A / tau,   eta_F = 1 - t_ffn / tau,
     * with tau = tau_mf (_mf) or tau_G (_g).  Exact given tau; they inherit
     * the error of the cycle-time model.  With tau_mf the binding stage never
     * idles (eta_A = 0 where Attention binds, eta_F = 0 where the FFN does);
     * with tau_G the barrier makes both positive. */
    double eta_a_mf, eta_f_mf, eta_a_g, eta_f_g;
} afd_cycle;

/* Cycle times of an rA-1F bundle for real r > 0.  The barrier runs over
 * max(r, 1) workers (Phi(m)^r is a CDF for real r; the paper uses integers).
 * AFD_EINVAL for a bad system or r <= 0; AFD_ENUMERIC if the quadrature
 * fails. */
AFD_API afd_status afd_cycle_eval(const afd_system *s, double r, afd_cycle *out);

/* Cycle times of an xA-yF topology (x, y >= 1). */
AFD_API afd_status afd_cycle_topology(const afd_system *s, unsigned x, unsigned y,
                                      afd_cycle *out);

/* ---- Theorem 4.4: the mean-field rule */

typedef struct afd_mf_result {
    double r;             /* the best candidate */
    double thr;           /* Thr_mf at r */
    double tau;           /* tau_mf at r */
    int which;            /* index of the winning candidate in eq. (10), 0..3 */
    double candidate[4];  /* eq. (10) in order; NaN where not positive and finite:
                             0: min((mu_A - beta_c)/(alpha_c B), (mu_A - beta_f)/(alpha_f B))
                             1: sqrt(beta_c/(alpha_c B))
                             2: sqrt(beta_f/(alpha_f B))
                             3: (beta_c - beta_f)/(B (alpha_f - alpha_c)) */
    double thr_candidate[4];
} afd_mf_result;

/* Evaluate every candidate of eq. (10) that is positive and finite and keep
 * the one with the largest Thr_mf (Appendix A.5 shows the optimum is one of
 * them).  AFD_EINVAL for a bad system; AFD_EEMPTY if no candidate is positive
 * and finite (throughput then grows as r -> 0, e.g. all costs zero). */
AFD_API afd_status afd_ratio_mf(const afd_system *s, afd_mf_result *out, afd_error *err);

/* ---- eq. (12): the barrier-aware rule */

/* The r of the feasible set rs[0..n) with the largest Thr_G (ties: the
 * smaller r).  AFD_EEMPTY if n == 0. */
AFD_API afd_status afd_ratio_g(const afd_system *s, const double *rs, size_t n, afd_cycle *best);

/* The real r in [lo, hi] maximising Thr_G, assumed unimodal there:
 * golden-section search, then bisection on the sign of the derivative;
 * located to about 1e-9 relative (the noise of the quadrature in Thr_G). */
AFD_API afd_status afd_ratio_g_continuous(const afd_system *s, double lo, double hi,
                                          double *r_star);

/* Delta-method standard error of an optimal ratio from the standard errors
 * of theta and nu and their covariance:
 *   Var r* = (dr/dtheta)^2 Var theta + (dr/dnu)^2 Var nu + 2 dr/dtheta dr/dnu Cov,
 * with the derivatives by central differences.  rule 'm': the mean-field r*
 * (depends on theta only; lo and hi are ignored); rule 'g': the continuous
 * maximiser of Thr_G in [max(lo, r_g - 1), min(hi, r_g + 1)], lo and hi the
 * bounds of the feasible set (returned in *r_cont).  A NaN theta_se, nu_se
 * or cov is unknown (one request gives no spread): *r_cont is computed,
 * *se is NaN and the status AFD_OK; a negative or infinite one is
 * AFD_EINVAL. */
AFD_API afd_status afd_ratio_se(const afd_system *s, char rule, double r_g, double lo, double hi,
                                double theta_se, double nu_se, double cov, double *r_cont,
                                double *se);

/* ---- cost and energy as objectives
 *
 * An rA-1F bundle whose Attention devices cost c_A and whose FFN device
 * costs c_F = w c_A per hour (or draw P_A and P_F = w P_A watts) produces
 * rB / tau tokens per time unit for r c_A + c_F per hour, so its tokens per
 * dollar (per joule) are
 *     rB / (tau (r c_A + c_F)) = V_w(r) / c_A,   V_w(r) = rB / ((r + w) tau).
 * The optimum depends on prices only through w; w = 1 (equal prices) gives
 * V_1 = Thr, eq. (1): the rules below then pick exactly the ratio of the
 * throughput-per-instance rules above.
 *
 * Mean field (tau = tau_mf, eq. 8).  tau_mf is mu_A below the balance point
 * r_0 (candidate 0 of eq. 10) and a line alpha rB + beta above it.
 *   Below r_0:  V_w = rB / ((r + w) mu_A) increases in r for every w > 0,
 *               so the optimum is never below the balance point.
 *   On a line:  d/dr log V_w = 1/r - 1/(r + w) - alpha B / (alpha rB + beta)
 *               = (w beta - alpha B r^2) / (r (r + w)(alpha rB + beta)),
 *               so V_w rises up to r_w = sqrt(w beta / (alpha B)) and falls
 *               after it.
 * Hence the optimum is one of eq. (10)'s candidates with the square roots
 * scaled by sqrt(w): r_0, sqrt(w beta_c / (alpha_c B)),
 * sqrt(w beta_f / (alpha_f B)), and the kink of the communication and FFN
 * lines.  With the line l that binds just above r_0 (the FFN when
 * communication is hidden), V_w falls right after r_0 iff
 * r_0 >= sqrt(w beta_l / (alpha_l B)), i.e. iff
 *     w <= w_max = r_0^2 alpha_l B / beta_l;
 * a steeper line that takes over later has a smaller stationary point
 * (larger alpha, smaller beta) and cannot make V_w rise again.  So the
 * optimum stays at the balance point for every 0 < w <= w_max and moves to
 * sqrt(w beta_l / (alpha_l B)) > r_0 above it.  For the paper's Table 3 with
 * B = 256 and theta = 599, r_0 = 9.555 and w_max = 19.4: the FFN device must
 * cost 19 times an Attention device before the balance point stops being
 * the cheapest ratio.
 *
 * Barrier aware (tau = tau_G, eq. 9).  log V_w(r) = log(rB / tau_G(r)) -
 * log(r + w), and for r' > r the difference log V_w(r') - log V_w(r) gains
 * log((r + w)/(r' + w)), which increases with w: V_w has increasing
 * differences in (r, w), so by Topkis' theorem the smallest maximiser over
 * any feasible set never decreases as w grows (the FFN getting dearer never
 * lowers the optimal ratio; cheaper FFN devices never raise it). */

/* The mean-field optimum of V_w (the candidates above).  out->candidate[]
 * holds the weighted candidates, out->thr and out->thr_candidate[] the
 * objective V_w (Thr_mf when w = 1), out->tau tau_mf at r.  afd_ratio_mf is
 * this with w = 1.  AFD_EINVAL for a bad system or w not in (0, inf);
 * AFD_EEMPTY as afd_ratio_mf. */
AFD_API afd_status afd_ratio_cost_mf(const afd_system *s, double w, afd_mf_result *out,
                                     afd_error *err);

/* w_max above: the largest FFN-to-Attention price ratio for which the
 * mean-field optimum of V_w is the balance point r_0 (+inf when the binding
 * line has beta = 0).  AFD_EEMPTY when there is no balance point at r > 0. */
AFD_API afd_status afd_cost_balance_limit(const afd_system *s, double *w_max, afd_error *err);

/* The r of rs[0..n) maximising V_w with tau_G (ties: the smaller r);
 * *value (may be NULL) gets V_w there.  afd_ratio_g is this with w = 1. */
AFD_API afd_status afd_ratio_cost_g(const afd_system *s, double w, const double *rs, size_t n,
                                    afd_cycle *best, double *value);

/* The real r in [lo, hi] maximising V_w with tau_G, as
 * afd_ratio_g_continuous (which is this with w = 1). */
AFD_API afd_status afd_ratio_cost_g_continuous(const afd_system *s, double w, double lo,
                                               double hi, double *r_star);

/* afd_ratio_se for the weighted rules (afd_ratio_se is this with w = 1). */
AFD_API afd_status afd_ratio_cost_se(const afd_system *s, double w, char rule, double r_g,
                                     double lo, double hi, double theta_se, double nu_se,
                                     double cov, double *r_cont, double *se);

/* ---- xA-yF topologies */

typedef struct afd_topology {
    unsigned x, y;
    afd_cycle cycle;
} afd_topology;

/* The k topologies with the largest Thr_G among x, y >= 1, x + y <= max_n.
 * Only reduced pairs (gcd(x, y) = 1) are evaluated: x and y with a common
 * factor have the same r and G but a barrier over more workers, so their
 * reduced form is at least as good.  best[0..*found) is sorted by
 * decreasing Thr_G (ties: fewer instances first). */
AFD_API afd_status afd_topology_search(const afd_system *s, unsigned max_n, afd_topology *best,
                                       size_t k, size_t *found);

/* The 95% normal interval [x - z se, x + z se] of an estimate x with
 * standard error se (the r_lo, r_hi of afdkit ratio), with z = AFD_Z95 =
 * 1.96: the 0.975 quantile of the standard normal, 1.959964, rounded to
 * three digits as is conventional (the interval then covers 95.0004%
 * instead of 95%).  NaN in, NaN out. */
#define AFD_Z95 1.96
AFD_API void afd_interval95(double x, double se, double *lo, double *hi);

#ifdef __cplusplus
}
#endif

#endif /* AFD_RATIO_H */
