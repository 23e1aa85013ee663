/* bulk.c: TTFT of greedy static prefill batches on c servers (see
 * afd_serving.h, "Prefill: greedy static batches").
 *
 * The servers take, whenever one is free, the first min(n, B) of the n
 * waiting requests and run them for S(k) = a + k s; the batch's first tokens
 * come out at its end (montecarlo/serve/prefill_batch.c).  Approximation:
 *
 * (1) The batch starts are those of one queue whose intervals T_k (from the
 *     start of a batch of k to the next start while requests wait) are drawn
 *     from a law that depends on the model (below).  Its queue length n at
 *     batch starts is a Markov chain (the embedded chain of the bulk-service
 *     queue M/G^[1,B]/1, Bailey, J. R. Stat. Soc. B 16 (1954) 80-87, with an
 *     interval that depends on the batch taken):
 *         k = min(n, B),  n' = n - k + A,  A ~ Poisson(lambda T_k),
 *     and n' = 0 becomes 1 (the queue idles until the next arrival, which
 *     starts a batch of one).  Exact for c = 1, where T_k = S(k).
 * (2) A request that arrives during an interval T_k started with n waiting
 *     (L = n - k left behind), at age u (the arrival sees the interval with
 *     probability proportional to its length, u uniform), has m = L +
 *     Poisson(lambda u) requests ahead: position pos = m + 1.  After j =
 *     ceil(pos / B) - 1 full batches (E T_B each) its batch starts at tau =
 *     T_k - u + j E T_B, and takes K = min(pos - j B + Poisson(lambda tau), B)
 *     requests (itself and those behind it that have arrived): TTFT = tau +
 *     S(K).
 * (3) An arrival that finds one of the c real servers idle starts at once in
 *     a batch of one, TTFT = S(1).  Its probability is taken as M/M/c's,
 *     1 - C(c, c rho), rho the queue's busy fraction (Erlang's C; exact for
 *     c = 1, where C(1, rho) = rho); the rest of the mass is that of (2),
 *     scaled to it.
 * Two laws of the intervals, the two ends of how the c servers' phases lie:
 * (V) the virtual server: one server of speed c, T_k = S(k) / c, the servers
 *     spaced evenly and the next start set by the batch just taken.  Right
 *     when every batch runs the same time (B = 1: within 1% of M/D/c at 90%
 *     load, the test's Markov chain).
 * (P) random phases: the next start is the first of the other c - 1 servers
 *     to free, each at a uniform phase of its batch, or the batch's own end:
 *     T_k = min(S(k), theta U), U the least of c - 1 uniforms on (0, 1), and
 *     theta set so that the mean interval is E S(K) / c (c servers busy start
 *     c batches per mean batch time), E S(K) over the chain's batches, a
 *     fixed point.  Its law is taken at NPHASE midpoint quantiles of U.
 * When the batches differ in length (B > 1, c > 1) the phases drift apart
 * and neither law holds: (V) is low when the fixed cost a is a sizeable part
 * of a prompt's time s (-15% on the mean, -26% on the P90 at a = s, c = 8;
 * -20% on the P90 at a = 0.3 s), (P) is low with compute-bound prompts at
 * c = 2 near saturation (-10% / -20% at a = 0.01 s), and each is high where
 * the other is low.  The TTFT reported (mean and quantile each) is
 *     (V) + w max(0, (P) - (V)),  w = min(1, 2 a / s),
 * the larger of the two where the fixed cost is half a prompt's or more,
 * (V) as a / s -> 0: an interpolation in the fixed cost's share, checked
 * against the simulator at a / s = 0.01, 0.1, 0.3 and 1 (docs/reproduction.md,
 * "Batched prefill": never more than 5% low there).
 * The chain is truncated where z0^-n < 1e-16 (its tail, see below; doubled
 * while the truncation holds mass under (P)); the age u is integrated by the
 * midpoint rule on UGRID points (UGRID / 4 in each of (P)'s NPHASE
 * intervals).
 *
 * Prompts of random length (afd_serving_prefill_greedy_law): a prompt's own
 * work s = pb P + pc P^2 has a law (mean E s, variance V), and a batch of k
 * runs S_k = a + s_1 + ... + s_k, the sum of k independent draws (the
 * simulator's a + pb sum P + pc sum P^2).  Then:
 * (4) the intervals of (1) are random: S_k / c under (V), min(S_k, theta U)
 *     under (P), S_k at NQS equal-mass atoms (NPHASE_S phases of U), and
 *     the arrivals over an interval are mixed Poisson over them.  For
 *     c = 1 the chain is then the embedded chain of M/G^[1,B]/1 with a
 *     service law per batch size, exact up to the atoms;
 * (5) in (2) the arrival sees an interval with probability proportional to
 *     its length (the atoms' weights times their length), and the j full
 *     batches ahead of it take their mean E T_B each (their spread is left
 *     out: it matters when j >= 1, near saturation);
 * (6) its own batch of K runs S_K (its own prompt and the K - 1 batched
 *     with it, independent of what came before), so the wait is kept as one
 *     law per batch size K (per group of sizes beyond WAIT_GROUPS) and the
 *     TTFT quantile is the root of sum_K E[F_{tau,K}(t - S_K)] = q, the
 *     convolution of pd.c's M/G/c.  S_K's law is the K-fold convolution of
 *     s's atoms, kept at SUM_ATOMS equal-mass atoms, exact for K <=
 *     SUM_EXACT; beyond, SUM_EXACT's deviation from its mean scaled by
 *     sqrt(K / SUM_EXACT) (the central limit's shape).
 * With fixed prompts (V = 0) it is the form above.  The probability of
 * finding a server idle is still M/M/c's at the chain's load.  Measured
 * against the simulator on the Azure conversation trace (prompts' squared
 * coefficient of variation 0.92): TTFT mean and P90 within 2% at one
 * instance, B = 4 (tests/serving/test_bulk.c; docs/agreement.md,
 * "strategies trace_goodput_disagg" for the goodput). */
#include <config.h>

#include <math.h>
#include <stdlib.h>

#include "afd_queue.h"
#include "afd_serving.h"
#include "bulk_internal.h"

#define UGRID 24       /* midpoints of the age within a batch */
#define MAX_QUEUE 8192 /* states of the embedded chain */
#define MAX_LOAD 0.98 /* of the capacity c B / S(B): beyond, AFD_EUNSTABLE */
#define TINY 1e-13
#define NPHASE 16 /* quantiles of the least uniform phase, (P) */
#define SUM_ATOMS 128 /* atoms of the law of a batch's work, (6) */
#define SUM_EXACT 32 /* batch sizes whose work is convolved exactly, (6) */
#define WAIT_GROUPS 32 /* wait laws kept, one per batch size up to it, (6) */
#define WAIT_BINS ((size_t)1 << 21) /* bins of all the wait laws together, (6) */
#define LAW_ATOMS (AFD_SERVICE_ATOMS > SUM_ATOMS ? AFD_SERVICE_ATOMS : SUM_ATOMS)
#define NQS 16 /* equal-mass atoms of a batch's time in the chain, (4) */
#define NPHASE_S 4 /* (P)'s phases with random batch times, (4) */

/* Random prompt work, (4)-(6): per group g of batch sizes, the atoms of
 * S_K at its representative size (t, w at g LAW_ATOMS, na[g] of them). */
typedef struct spread {
    double es, var;   /* E s, Var s */
    double *sk;       /* S_k at NQS equal-mass atoms, k = 1 .. B (row k - 1) */
    double skmax;     /* the largest of S_B's */
    unsigned ng;      /* groups of batch sizes */
    size_t na[WAIT_GROUPS];
    double t[WAIT_GROUPS * LAW_ATOMS], w[WAIT_GROUPS * LAW_ATOMS];
} spread;

/* The group of batch size k (1 .. B): one per size when B <= WAIT_GROUPS. */
static unsigned group_of(const spread *sp, size_t k, size_t bmax)
{
    return (unsigned)((k - 1) * sp->ng / bmax);
}

/* The TTFT law: a point mass at t0 = S(1) (the arrivals served alone at
 * once) and a sum of uniform laws, each on an age cell, binned on a grid of
 * width delta from t0: the mass of bin b is delta step_sum[b] + part[b]
 * (a difference array of densities, exact for any cell), and the mean is
 * kept exactly. */
typedef struct law {
    double t0, delta, point, tot, moment;
    double *step, *part;
    size_t nbins;
} law;

static void law_add(law *w, double t, double p, double h)
{
    double x0 = (t - h / 2 - w->t0) / w->delta, x1 = (t + h / 2 - w->t0) / w->delta, d;
    size_t b0, b1;
    w->tot += p;
    w->moment += p * t;
    if (x0 < 0)
        x0 = 0;
    if (x1 > (double)w->nbins - 1)
        x1 = (double)w->nbins - 1; /* not reached: nbins bounds every cell */
    b0 = (size_t)x0;
    b1 = (size_t)x1;
    if (!(x1 > x0)) {
        w->part[b0] += p;
        return;
    }
    d = p / (x1 - x0); /* per bin width */
    w->step[b0] += d;
    w->part[b0] -= d * (x0 - b0);
    w->step[b1] -= d;
    w->part[b1] += d * (x1 - b1);
}

/* The time below which a fraction q of the mass lies. */
static double law_quantile(const law *w, double q)
{
    double target = q * w->tot, cum = w->point, dens = 0;
    size_t b;
    if (cum >= target)
        return w->t0;
    for (b = 0; b < w->nbins; b++) {
        double m;
        dens += w->step[b];
        m = dens + w->part[b];
        if (m > 0 && cum + m >= target)
            return w->t0 + w->delta * (b + (target - cum) / m);
        cum += m;
    }
    return w->t0 + w->delta * w->nbins;
}

/* Poisson(mu) probabilities 0 .. *len - 1 into pmf (at most cap), up to
 * where the tail beyond is below TINY. */
static void poisson(double mu, double *pmf, size_t cap, size_t *len)
{
    size_t k = 0;
    double p = exp(-mu), cdf = 0;
    while (k < cap) {
        pmf[k] = p;
        cdf += p;
        k++;
        if (k > mu && 1 - cdf < TINY)
            break;
        p *= mu / k;
    }
    *len = k;
}

/* Stationary law of the embedded chain (bulk.c, (1)) on states n = 1 ..
 * nmax (index n - 1; beyond nmax folded into nmax, 0 into 1) into pi, by
 * GTH on a band: row i holds P(i, j) for j - i in [-B, U], U = the longest
 * pmf.  0, or -1 when out of memory. */
static int gth_band(size_t bmax, const double *pmf, const size_t *lens, size_t cap,
                    size_t nmax, double *pi)
{
    size_t U = 0, W, i, j, k;
    double *band, sum;
    for (k = 0; k < bmax; k++)
        if (lens[k] > U)
            U = lens[k];
    W = bmax + U + 1;
    band = calloc(nmax * W, sizeof *band);
    if (band == NULL)
        return -1;
#define AT(r, col) band[(r) * W + ((col) + bmax - (r))]
    for (i = 0; i < nmax; i++) {
        size_t n = i + 1, kk = n < bmax ? n : bmax, left = n - kk;
        const double *pk = pmf + (kk - 1) * cap;
        for (j = 0; j < lens[kk - 1]; j++) {
            size_t n2 = left + j;
            if (n2 == 0)
                n2 = 1;
            if (n2 > nmax)
                n2 = nmax;
            AT(i, n2 - 1) += pk[j];
        }
    }
    /* reduce states nmax - 1 .. 1: s = sum of P(k, j < k); P(i, j) +=
     * P(i, k) P(k, j) / s for i, j < k */
    for (k = nmax - 1; k >= 1; k--) {
        size_t jlo = k > bmax ? k - bmax : 0, ilo = k > U ? k - U : 0;
        sum = 0;
        for (j = jlo; j < k; j++)
            sum += AT(k, j);
        if (!(sum > 0))
            sum = 1e-300; /* k unreachable downward: nothing flows through */
        for (i = ilo; i < k; i++) {
            double f = AT(i, k) / sum;
            if (f == 0)
                continue;
            for (j = jlo; j < k; j++)
                AT(i, j) += f * AT(k, j);
        }
        band[k * W + bmax] = sum; /* the diagonal is no longer needed: keep s */
    }
    pi[0] = 1;
    sum = 1;
    for (k = 1; k < nmax; k++) {
        double acc = 0;
        size_t ilo = k > U ? k - U : 0;
        for (i = ilo; i < k; i++)
            acc += pi[i] * AT(i, k);
        pi[k] = acc / band[k * W + bmax];
        sum += pi[k];
    }
    for (k = 0; k < nmax; k++)
        pi[k] /= sum;
#undef AT
    free(band);
    return 0;
}

/* The intervals' law (bulk.c, (V) and (P)): the interval after a batch of
 * k at quantile point q of nq. */
typedef struct intervals {
    double a, s, theta;
    unsigned c;
    int phases; /* 0: (V), 1: (P) */
    size_t nq;
    const double *sk; /* random batch times (4): S_k's NQS atoms, or NULL */
} intervals;

static double interval_at(const intervals *iv, size_t k, size_t q)
{
    double sk = iv->a + k * iv->s, t;
    size_t nph = iv->nq;
    if (iv->sk != NULL) { /* q = phase x NQS + atom */
        sk = iv->sk[(k - 1) * NQS + q % NQS];
        nph = iv->nq / NQS;
        q /= NQS;
    }
    if (!iv->phases)
        return sk / iv->c;
    /* the least of c - 1 uniforms: P(U > x) = (1 - x)^(c - 1) */
    t = iv->theta * (1 - pow(1 - (q + 0.5) / nph, 1.0 / (iv->c - 1)));
    return t < sk ? t : sk;
}

/* Mean interval over the batch sizes' law pk (k = 1 .. B at index k - 1). */
static double interval_mean(const intervals *iv, const double *pk, size_t bmax)
{
    double e = 0;
    size_t k, q;
    for (k = 0; k < bmax; k++)
        for (q = 0; q < iv->nq; q++)
            e += pk[k] * interval_at(iv, k + 1, q) / iv->nq;
    return e;
}

/* The arrivals over an interval after a batch of k, k = 1 .. B, into pmf
 * (row k - 1, cap wide; lengths into lens), scratch of cap. */
static void arrivals(const intervals *iv, double lambda, size_t bmax, size_t cap, double *pmf,
                     size_t *lens, double *scratch)
{
    size_t k, q, j, l;
    for (k = 0; k < bmax; k++) {
        double *row = pmf + k * cap;
        lens[k] = 0;
        for (j = 0; j < cap; j++)
            row[j] = 0;
        for (q = 0; q < iv->nq; q++) {
            poisson(lambda * interval_at(iv, k + 1, q), scratch, cap, &l);
            for (j = 0; j < l; j++)
                row[j] += scratch[j] / iv->nq;
            if (l > lens[k])
                lens[k] = l;
        }
    }
}

/* One law of the intervals: the TTFT mean and quantile, the busy fraction
 * and the mean batch (bulk.c, (1)-(3)). */
static afd_status spread_ttft(const spread *sp, law *wl, const double *kmass, double a,
                              double tmax, size_t bmax, double quantile, double *mean,
                              double *quant);

static afd_status greedy(double lambda, unsigned c, unsigned bmax, double a, double s,
                         double quantile, int phases, const spread *sp, double *mean,
                         double *quant, double *rho, double *batch)
{
    law wl[WAIT_GROUPS];
    double *kmass = NULL, tmax = 0, vbmax;
    unsigned gr;
    size_t nmax, i, lu, lr, cap, *lens = NULL;
    double *pi = NULL, *pmf = NULL, *pu = NULL, *pr = NULL;
    double vb, vfull, busy, idle, pidle, wb, kmean, nb, C, xprev = 0, hprev = 0;
    afd_status st = AFD_ENOMEM;
    law at = {0, 0, 0, 0, 0, NULL, NULL, 0};
    /* (P)'s quantiles, and random batch times, spread the ages already */
    size_t ug = phases || sp != NULL ? UGRID / 4 : UGRID;
    intervals iv = {a, s, a + s, c, phases, phases ? NPHASE : 1, NULL};
    unsigned it;
    for (gr = 0; gr < WAIT_GROUPS; gr++)
        wl[gr].step = wl[gr].part = NULL;
    vb = (a + bmax * s) / c;
    vbmax = vb;
    if (sp != NULL) { /* (4) the batches' times at their atoms */
        iv.sk = sp->sk;
        iv.nq = (phases ? NPHASE_S : 1) * NQS;
        vbmax = sp->skmax / c;
    }
    /* the Poisson counts over one batch are below bmax on average: a pmf
     * of bmax + 40 sqrt terms holds all but TINY (the loop stops there);
     * under (P) an interval is at most S(B), c times as long */
    cap = (size_t)(2 * bmax + 60 + 40 * sqrt((double)bmax) +
                   lambda * vbmax * 2 * (phases ? c : 1));
    /* the tail of the queue at batch starts falls like z0^-n, z0 > 1 the
     * root of B ln z = lambda V(B) (z - 1) (the full-batch walk's; f(z) =
     * B ln z - lambda V(B) (z - 1) is concave, f(1) = 0 < f'(1)): the
     * chain's states reach where z0^-n < 1e-16, and the iteration starts
     * from that shape */
    {
        double lo = 1, hi = 2, z0, mu = lambda * vb;
        while (bmax * log(hi) - mu * (hi - 1) > 0)
            hi *= 2;
        for (it = 0; it < 200 && hi - lo > 1e-14 * hi; it++) {
            double mid = (lo + hi) / 2;
            if (bmax * log(mid) - mu * (mid - 1) > 0)
                lo = mid;
            else
                hi = mid;
        }
        z0 = (lo + hi) / 2;
        if (!(z0 > 1 + 1e-9) || 37 / log(z0) > MAX_QUEUE)
            return AFD_EUNSTABLE; /* too close to saturation to resolve */
        nmax = (size_t)(37 / log(z0)) + 2 * (size_t)bmax + 8;
    }
    pmf = malloc((size_t)bmax * cap * sizeof *pmf);
    lens = malloc((size_t)bmax * sizeof *lens);
    pu = malloc(cap * sizeof *pu);
    if (pmf == NULL || lens == NULL || pu == NULL)
        goto out;
    /* (1) the embedded chain, the queue length n >= 1 at batch starts,
     * stored at index n - 1, solved by GTH state reduction (Grassmann,
     * Taksar and Heyman, Oper. Res. 33 (1985) 1107-1116; no subtraction,
     * so stable) on its band: from n the chain moves to n - B .. n - B +
     * len - 1, and reducing the states from the top keeps the band.  Under
     * (P) theta is iterated to its fixed point (the mean interval E S(K) / c,
     * by bisection on theta, the mean rising with it, for the chain's law at
     * the previous theta), the truncation doubled while it holds mass. */
    for (it = 0;; it++) {
        double sbar, lo, hi, x = iv.theta, h;
        unsigned b;
        free(pi);
        pi = malloc(nmax * sizeof *pi);
        if (pi == NULL)
            goto out;
        arrivals(&iv, lambda, bmax, cap, pmf, lens, pu);
        if (gth_band(bmax, pmf, lens, cap, nmax, pi) != 0)
            goto out;
        if (!(pi[nmax - 1] < 1e-12)) {
            if ((!phases && sp == NULL) || 2 * nmax > MAX_QUEUE) {
                st = AFD_EUNSTABLE; /* the truncation holds mass: too close to resolve */
                goto out;
            }
            nmax *= 2;
            continue;
        }
        if (!phases)
            break;
        kmean = nb = 0;
        for (i = 0; i < bmax; i++)
            pu[i] = 0; /* the batch sizes' law */
        for (i = 0; i < nmax; i++) {
            size_t n = i + 1, k = n < bmax ? n : bmax;
            pu[k - 1] += pi[i];
            kmean += pi[i] * k;
            nb += pi[i];
        }
        for (i = 0; i < bmax; i++)
            pu[i] /= nb;
        sbar = a + s * kmean / nb;
        lo = sbar / c;
        hi = 4 * (a + bmax * s);
        for (b = 0; b < 100 && hi - lo > 1e-13 * hi; b++) {
            iv.theta = (lo + hi) / 2;
            if (interval_mean(&iv, pu, bmax) < sbar / c)
                lo = iv.theta;
            else
                hi = iv.theta;
        }
        iv.theta = (lo + hi) / 2;
        h = iv.theta - x; /* F(x) - x, F the map above */
        if (fabs(h) < 1e-10 * x)
            break;
        if (it > 200) {
            st = AFD_ENUMERIC; /* the fixed point does not settle */
            goto out;
        }
        /* near saturation F contracts slowly (by 0.9 a step): the secant
         * on F(x) - x, kept within a factor 2 of x and F(x) */
        if (xprev > 0 && h != hprev) {
            double xn = x - h * (x - xprev) / (h - hprev), lo2 = (x < iv.theta ? x : iv.theta) / 2,
                   hi2 = 2 * (x > iv.theta ? x : iv.theta);
            xprev = x;
            hprev = h;
            iv.theta = isfinite(xn) ? (xn < lo2 ? lo2 : xn > hi2 ? hi2 : xn) : iv.theta;
        } else {
            xprev = x;
            hprev = h;
        }
    }
    /* the counts of (2) reach beyond the queue lengths by the arrivals
     * over a batch or two */
    cap = nmax + 3 * (size_t)bmax + 100 + (size_t)(40 * sqrt((double)(nmax + bmax)));
    free(pu);
    pu = malloc(cap * sizeof *pu);
    pr = malloc(cap * sizeof *pr);
    if (pu == NULL || pr == NULL)
        goto out;
    /* time-stationary law: busy time per batch E T_k, idle time 1 / lambda
     * after a batch that leaves none and sees no arrival */
    busy = idle = kmean = nb = 0;
    for (i = 0; i < nmax; i++) {
        size_t n = i + 1, k = n < bmax ? n : bmax, q;
        for (q = 0; q < iv.nq; q++) {
            double v = interval_at(&iv, k, q);
            busy += pi[i] * v / iv.nq;
            if (n == k)
                idle += pi[i] * exp(-lambda * v) / lambda / iv.nq;
        }
        kmean += pi[i] * k;
        nb += pi[i];
    }
    *rho = busy / (busy + idle);
    *batch = kmean / nb;
    vfull = 0;
    for (i = 0; i < iv.nq; i++)
        vfull += interval_at(&iv, bmax, i) / iv.nq;
    /* (3) the probability of waiting, Erlang's C at the queue's load */
    C = afd_erlang_c(c * *rho, c);
    if (!(C >= 0 && C <= 1)) {
        st = AFD_ENUMERIC;
        goto out;
    }
    pidle = 1 - C;
    /* the grid: a quarter of the narrowest age cell (or 1/4000 of S(1)),
     * over every cell; the latest has tau <= vb (1 + (nmax + cap) / B)
     * (under (P), c times that) */
    at.t0 = a + s;
    at.delta = (a + s) / c / UGRID / 4;
    if (at.delta < (a + s) * 2.5e-4) /* enough for a quantile within 0.025% of S(1) */
        at.delta = (a + s) * 2.5e-4;
    tmax = vb * (phases ? c : 1) * (2 + (double)(nmax + cap) / bmax) + a + bmax * s +
           vbmax * (phases ? c : 1);
    if ((tmax - at.t0) / at.delta > 4e6)
        at.delta = (tmax - at.t0) / 4e6;
    at.nbins = (size_t)((tmax - at.t0) / at.delta) + 2;
    if (sp != NULL) {
        /* (6) the wait tau (< tmax) by batch size: one law per group of
         * sizes, of the same width as the TTFT's unless WAIT_BINS binds */
        law w0 = {0, at.delta, 0, 0, 0, NULL, NULL, 0};
        if (tmax / w0.delta * sp->ng > (double)WAIT_BINS)
            w0.delta = tmax * sp->ng / (double)WAIT_BINS;
        w0.nbins = (size_t)(tmax / w0.delta) + 2;
        kmass = calloc(bmax, sizeof *kmass);
        if (kmass == NULL)
            goto out;
        for (gr = 0; gr < sp->ng; gr++) {
            wl[gr] = w0;
            wl[gr].step = calloc(w0.nbins + 1, sizeof *wl[gr].step);
            wl[gr].part = calloc(w0.nbins, sizeof *wl[gr].part);
            if (wl[gr].step == NULL || wl[gr].part == NULL)
                goto out;
        }
        /* the arrivals that find a server idle: no wait, a batch of one */
        gr = group_of(sp, 1, bmax);
        wl[gr].point = wl[gr].tot = pidle;
        kmass[0] = pidle;
        at.nbins = 1; /* the TTFT law itself is not binned: spread_ttft */
    }
    at.step = calloc(at.nbins, sizeof *at.step);
    at.part = calloc(at.nbins, sizeof *at.part);
    if (at.step == NULL || at.part == NULL)
        goto out;
    at.point = pidle;
    at.tot = pidle;
    at.moment = pidle * at.t0;
    wb = C / busy;
    /* (2) arrivals during an interval: ahead, position, own batch */
    for (i = 0; i < nmax; i++) {
        size_t n = i + 1, k = n < bmax ? n : bmax, left = n - k, g, q;
        if (pi[i] < TINY)
            continue;
        for (q = 0; q < iv.nq; q++) {
            double v = interval_at(&iv, k, q);
            for (g = 0; g < ug; g++) {
                double u = (g + 0.5) / ug * v, r = v - u, w = pi[i] * v / ug * wb / iv.nq;
                size_t m0;
                poisson(lambda * u, pu, cap, &lu);
                for (m0 = 0; m0 < lu; m0++) {
                    size_t pos = left + m0 + 1, jb = (pos - 1) / bmax, pf = pos - jb * bmax, x;
                    double tau = r + jb * vfull, wm = w * pu[m0], rest = 1;
                    if (wm < TINY * 1e-3)
                        continue;
                    poisson(lambda * tau, pr, bmax - pf + 1, &lr);
                    for (x = 0; x < lr; x++) {
                        size_t kk = pf + x;
                        double pk = kk >= bmax ? wm * rest : wm * pr[x];
                        if (kk >= bmax) /* the rest of the tail: a full batch */
                            kk = bmax;
                        if (sp != NULL) {
                            law_add(&wl[group_of(sp, kk, bmax)], tau, pk, v / ug);
                            kmass[kk - 1] += pk;
                        } else {
                            law_add(&at, tau + a + kk * s, pk, v / ug);
                        }
                        if (kk == bmax)
                            break;
                        rest -= pr[x];
                    }
                }
            }
        }
    }
    if (sp != NULL) {
        /* (5) the scale of the wait, at the chain's mean batch */
        st = spread_ttft(sp, wl, kmass, a, tmax, bmax, quantile, mean, quant);
        goto out;
    }
    *mean = at.moment / at.tot;
    *quant = law_quantile(&at, quantile);
    st = AFD_OK;
out:
    for (gr = 0; gr < WAIT_GROUPS; gr++) {
        free(wl[gr].step);
        free(wl[gr].part);
    }
    free(kmass);
    free(pi);
    free(pmf);
    free(lens);
    free(pu);
    free(pr);
    free(at.step);
    free(at.part);
    return st;
}

/* (6) The TTFT of random prompt work from the wait laws wl[g] (tau of
 * (2), with the point mass of the idle arrivals), the mass of each batch
 * size (kmass): mean E tau + E S_K, quantile the root of
 * sum_g sum_j w_gj M_g(t - t_gj) = q tot, M_g the cumulative mass of
 * wl[g] (linear within a bin), (t_gj, w_gj) the atoms of S_K. */
static afd_status spread_ttft(const spread *sp, law *wl, const double *kmass, double a,
                              double tmax, size_t bmax, double quantile, double *mean,
                              double *quant)
{
    double tot = 0, moment = 0, lo = 0, hi, smax = 0;
    unsigned g;
    size_t b, k;
    int it;
    for (g = 0; g < sp->ng; g++) {
        /* step[b] becomes the mass below bin b's start (step has nbins + 1) */
        double dens = 0, cum = 0;
        for (b = 0; b < wl[g].nbins; b++) {
            double m;
            dens += wl[g].step[b];
            m = dens + wl[g].part[b];
            wl[g].step[b] = cum;
            cum += m > 0 ? m : 0;
        }
        wl[g].step[wl[g].nbins] = cum;
        tot += wl[g].tot;
        moment += wl[g].moment;
        for (k = 0; k < sp->na[g]; k++)
            if (sp->t[g * LAW_ATOMS + k] > smax)
                smax = sp->t[g * LAW_ATOMS + k];
    }
    if (!(tot > 0))
        return AFD_ENUMERIC;
    /* the mean: E S_K = a + K E s over the sizes' masses */
    for (k = 0; k < bmax; k++)
        moment += kmass[k] * (a + (double)(k + 1) * sp->es);
    *mean = moment / tot;
    hi = tmax + smax;
    for (it = 0; it < 200 && hi - lo > 1e-10 * hi; it++) {
        double t = (lo + hi) / 2, F = 0;
        for (g = 0; g < sp->ng; g++) {
            const law *L = &wl[g];
            const double *at = sp->t + g * LAW_ATOMS, *aw = sp->w + g * LAW_ATOMS;
            size_t j;
            for (j = 0; j < sp->na[g]; j++) {
                double x = t - at[j], M;
                if (x < 0)
                    continue;
                x /= L->delta;
                if (x >= (double)L->nbins) {
                    M = L->step[L->nbins];
                } else {
                    size_t bb = (size_t)x;
                    M = L->step[bb] + (x - (double)bb) * (L->step[bb + 1] - L->step[bb]);
                }
                F += aw[j] * (M + L->point);
            }
        }
        if (F < quantile * tot)
            lo = t;
        else
            hi = t;
    }
    *quant = (lo + hi) / 2;
    return AFD_OK;
}

/* (V), and toward (P) by w = min(1, 2 a / s) (bulk.c). */
static afd_status both_laws(double lambda, unsigned c, unsigned bmax, double a, double s,
                            double quantile, const spread *sp, double *mean, double *quant,
                            double *rho, double *batch)
{
    double m2, q2, r2, b2, w = 2 * a / s; /* the weight of (P), bulk.c */
    afd_status st;
    *mean = *quant = *rho = *batch = NAN;
    if (w > 1)
        w = 1;
    if (!(lambda * (a + bmax * s) / c < MAX_LOAD * bmax))
        return AFD_EUNSTABLE; /* saturated, or too close to resolve */
    st = greedy(lambda, c, bmax, a, s, quantile, 0, sp, mean, quant, rho, batch);
    if (st == AFD_OK && c > 1 && bmax > 1 && w > 0) {
        /* the batches differ in length: toward the larger of (V) and (P) */
        st = greedy(lambda, c, bmax, a, s, quantile, 1, sp, &m2, &q2, &r2, &b2);
        if (st == AFD_OK) {
            if (m2 > *mean)
                *mean += w * (m2 - *mean);
            if (q2 > *quant)
                *quant += w * (q2 - *quant);
        }
    }
    if (st != AFD_OK)
        *mean = *quant = *rho = *batch = NAN;
    return st;
}

afd_status afd_serving_prefill_greedy(double lambda, unsigned c, unsigned bmax, double a,
                                      double s, double quantile, double *mean, double *quant,
                                      double *rho, double *batch)
{
    *mean = *quant = *rho = *batch = NAN;
    if (!(lambda > 0) || c < 1 || bmax < 1 || !(a >= 0) || !(s > 0) || !(a + s > 0) ||
        !(quantile > 0 && quantile < 1))
        return AFD_EINVAL;
    return both_laws(lambda, c, bmax, a, s, quantile, NULL, mean, quant, rho, batch);
}

struct atom {
    double t, w;
};

static int by_time(const void *x, const void *y)
{
    double u = ((const struct atom *)x)->t, v = ((const struct atom *)y)->t;
    return (u > v) - (u < v);
}

/* (time, weight) points, sorted here, into na atoms of equal mass, the
 * mass of a point split between the bins it straddles, each atom at its
 * bin's mean (the law's mean kept): na atoms into t, w (*nout = na). */
static void equal_mass(struct atom *pt, size_t n, size_t na, double *t, double *w, size_t *nout)
{
    double tot = 0, per, bw = 0, bs = 0;
    size_t i, b = 0;
    qsort(pt, n, sizeof *pt, by_time);
    for (i = 0; i < n; i++)
        tot += pt[i].w;
    per = tot / (double)na;
    for (i = 0; i < n && b < na; i++) {
        double left = pt[i].w;
        while (left > 0 && b < na) {
            double take = per - bw < left ? per - bw : left;
            if (b == na - 1)
                take = left; /* the last bin takes what rounding leaves */
            bw += take;
            bs += take * pt[i].t;
            left -= take;
            if (b < na - 1 && bw >= per * (1 - 1e-12)) {
                t[b] = bs / bw;
                w[b] = 1.0 / (double)na;
                b++;
                bw = bs = 0;
            }
        }
    }
    if (b < na) { /* the last bin */
        t[b] = bw > 0 ? bs / bw : pt[n - 1].t;
        w[b] = 1.0 / (double)na;
        b++;
    }
    for (; b < na; b++) { /* not reached: every bin holds mass */
        t[b] = pt[n - 1].t;
        w[b] = 0;
    }
    *nout = na;
}

/* (6) the atoms of S_K = a + s_1 + ... + s_K at each group's size, from
 * s's atoms: K-fold convolution kept at SUM_ATOMS, exact up to SUM_EXACT. */
static afd_status spread_init(const afd_service_law *s, double a, size_t bmax, spread *sp)
{
    double cur_t[SUM_ATOMS], cur_w[SUM_ATOMS], ex_t[SUM_ATOMS], ex_w[SUM_ATOMS];
    size_t cur_n = 0, ex_n = 0, i, j, k, kmax = 1;
    unsigned rep[WAIT_GROUPS], g;
    struct atom *pt = malloc(SUM_ATOMS * AFD_SERVICE_ATOMS * sizeof *pt);
    if (pt == NULL)
        return AFD_ENOMEM;
    sp->es = s->mean;
    sp->var = s->scv * s->mean * s->mean;
    sp->ng = bmax < WAIT_GROUPS ? (unsigned)bmax : WAIT_GROUPS;
    /* each group's size: the middle of the sizes it holds */
    for (g = 0; g < sp->ng; g++) {
        size_t lo = 0, hi = 0;
        for (k = 1; k <= bmax; k++)
            if (group_of(sp, k, bmax) == g) {
                if (lo == 0)
                    lo = k;
                hi = k;
            }
        rep[g] = (unsigned)((lo + hi) / 2);
        if (rep[g] > kmax)
            kmax = rep[g];
    }
    for (k = 1; k <= kmax && k <= SUM_EXACT; k++) {
        if (k == 1) {
            cur_n = s->n; /* not compressed: the own prompt's tail */
        } else {
            size_t n = 0;
            for (i = 0; i < cur_n; i++)
                for (j = 0; j < s->n; j++) {
                    pt[n].t = cur_t[i] + s->t[j];
                    pt[n++].w = cur_w[i] * s->w[j];
                }
            equal_mass(pt, n, SUM_ATOMS, cur_t, cur_w, &cur_n);
        }
        for (g = 0; g < sp->ng; g++)
            if (rep[g] == k) {
                sp->na[g] = cur_n;
                for (i = 0; i < cur_n; i++) {
                    sp->t[g * LAW_ATOMS + i] = a + (k == 1 ? s->t[i] : cur_t[i]);
                    sp->w[g * LAW_ATOMS + i] = k == 1 ? s->w[i] : cur_w[i];
                }
            }
        if (k == 1) { /* the first convolution starts from s's atoms compressed */
            for (i = 0; i < s->n; i++) {
                pt[i].t = s->t[i];
                pt[i].w = s->w[i];
            }
            equal_mass(pt, s->n, SUM_ATOMS, cur_t, cur_w, &cur_n);
        }
        if (k == SUM_EXACT) {
            ex_n = cur_n;
            for (i = 0; i < cur_n; i++) {
                ex_t[i] = cur_t[i];
                ex_w[i] = cur_w[i];
            }
        }
    }
    /* beyond SUM_EXACT: its deviation from the mean scaled by sqrt(K / SUM_EXACT) */
    for (g = 0; g < sp->ng; g++)
        if (rep[g] > SUM_EXACT) {
            double r = sqrt((double)rep[g] / SUM_EXACT);
            sp->na[g] = ex_n;
            for (i = 0; i < ex_n; i++) {
                sp->t[g * LAW_ATOMS + i] =
                    a + rep[g] * s->mean + r * (ex_t[i] - SUM_EXACT * s->mean);
                sp->w[g * LAW_ATOMS + i] = ex_w[i];
            }
        }
    /* (4) every size's batch time at NQS equal-mass atoms for the chain:
     * its group's law, moved by the sizes between them at E s each */
    sp->sk = malloc(bmax * NQS * sizeof *sp->sk);
    if (sp->sk == NULL) {
        free(pt);
        return AFD_ENOMEM;
    }
    sp->skmax = 0;
    for (k = 1; k <= bmax; k++) {
        size_t n = 0;
        double wt[NQS];
        g = group_of(sp, k, bmax);
        for (i = 0; i < sp->na[g]; i++) {
            pt[i].t = sp->t[g * LAW_ATOMS + i] + ((double)k - rep[g]) * s->mean;
            pt[i].w = sp->w[g * LAW_ATOMS + i];
        }
        equal_mass(pt, sp->na[g], NQS, sp->sk + (k - 1) * NQS, wt, &n);
        if (k == bmax)
            for (i = 0; i < NQS; i++)
                if (sp->sk[(k - 1) * NQS + i] > sp->skmax)
                    sp->skmax = sp->sk[(k - 1) * NQS + i];
    }
    free(pt);
    return AFD_OK;
}

/* The part of afd_serving_prefill_greedy_law that depends on the law, a
 * and B alone (bulk_internal.h): S_K's atoms, made once for a search over
 * lambda and c. */
struct afd_priv_greedy {
    unsigned bmax;
    double a, mean;
    int fixed; /* one atom or scv 0: afd_serving_prefill_greedy at the mean */
    spread sp;
};

afd_status afd_priv_greedy_alloc(const afd_service_law *s, double a, unsigned bmax,
                                 afd_priv_greedy **out)
{
    afd_priv_greedy *g;
    afd_status st = AFD_OK;
    *out = NULL;
    if (s == NULL || s->n < 1 || s->n > AFD_SERVICE_ATOMS || !(s->scv >= 0) ||
        !isfinite(s->scv))
        return AFD_EINVAL;
    g = malloc(sizeof *g);
    if (g == NULL)
        return AFD_ENOMEM;
    g->bmax = bmax;
    g->a = a;
    g->mean = s->mean;
    g->fixed = s->scv == 0 || s->n == 1;
    g->sp.sk = NULL;
    if (!g->fixed) {
        if (bmax < 1 || !(a >= 0) || !(s->mean > 0))
            st = AFD_EINVAL;
        else
            st = spread_init(s, a, bmax, &g->sp);
    }
    if (st != AFD_OK) {
        afd_priv_greedy_free(g);
        return st;
    }
    *out = g;
    return AFD_OK;
}

void afd_priv_greedy_free(afd_priv_greedy *g)
{
    if (g == NULL)
        return;
    free(g->sp.sk);
    free(g);
}

afd_status afd_priv_greedy_ttft(const afd_priv_greedy *g, double lambda, unsigned c,
                                double quantile, double *mean, double *quant, double *rho,
                                double *batch)
{
    *mean = *quant = *rho = *batch = NAN;
    if (g->fixed)
        return afd_serving_prefill_greedy(lambda, c, g->bmax, g->a, g->mean, quantile, mean,
                                          quant, rho, batch);
    if (!(lambda > 0) || c < 1 || !(quantile > 0 && quantile < 1))
        return AFD_EINVAL;
    return both_laws(lambda, c, g->bmax, g->a, g->mean, quantile, &g->sp, mean, quant, rho,
                     batch);
}

afd_status afd_serving_prefill_greedy_law(double lambda, unsigned c, unsigned bmax, double a,
                                          const afd_service_law *s, double quantile,
                                          double *mean, double *quant, double *rho,
                                          double *batch)
{
    afd_priv_greedy *g;
    afd_status st;
    *mean = *quant = *rho = *batch = NAN;
    if ((st = afd_priv_greedy_alloc(s, a, bmax, &g)) != AFD_OK)
        return st;
    st = afd_priv_greedy_ttft(g, lambda, c, quantile, mean, quant, rho, batch);
    afd_priv_greedy_free(g);
    return st;
}
