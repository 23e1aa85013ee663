/* barrier_mc.c: Monte Carlo estimate of the barrier load W_{B,r} of
 * Theorem 4.3 (Section 4.2, Appendix A.3, Table 1); see afd_mc.h. */
#include <config.h>

#include <math.h>
#include <stdlib.h>

#include "afd_mc.h"
#include "afd_philox.h"
#include "afd_sampler.h"
#include "mc_internal.h"

#define BLOCK    256    /* trials per block of the deterministic reduction */
#define CHUNK    512    /* slot loads per uniform buffer (per-slot path) */
#define EXACT    0x1p53 /* integer sums below this are exact doubles */
#define GEO_MEAN 0x1p46 /* largest B (mu_p + mu_d) of the geometric paths */

static void set_nan(const afd_barrier_mc_params *p, afd_barrier_mc_result *out)
{
    size_t k;
    if (p == NULL || out == NULL || p->r == NULL)
        return;
    for (k = 0; k < p->n_r; k++) {
        out[k].r = p->r[k];
        out[k].mean_w = out[k].mean_w_se = out[k].sd_w = NAN;
        out[k].overhead = out[k].overhead_se = NAN;
    }
}

/* a * b <= limit without overflow */
static int product_within(uint64_t a, uint64_t b, uint64_t limit)
{
    return a == 0 || b <= limit / a;
}

/* Validate p; *rmax is the largest r. */
static afd_status check(const afd_barrier_mc_params *p, unsigned *rmax)
{
    const afd_workload *w;
    size_t k;
    double mean_load;
    *rmax = 0;
    if (p == NULL || p->workload == NULL || p->r == NULL || p->n_r == 0 || p->B < 1 ||
        p->trials < 2)
        return AFD_EINVAL;
    for (k = 0; k < p->n_r; k++) {
        if (p->r[k] < 1)
            return AFD_EINVAL;
        if (p->r[k] > AFD_BARRIER_MC_MAX_R)
            return AFD_ELIMIT;
        if (p->r[k] > *rmax)
            *rmax = p->r[k];
    }
    if (p->n_r > AFD_BARRIER_MC_MAX_R || p->trials > AFD_BARRIER_MC_MAX_TRIALS)
        return AFD_ELIMIT;
    w = p->workload;
    if (w->kind == AFD_WORKLOAD_GEOMETRIC) {
        if (!(w->mu_p >= 1 && w->mu_d >= 1 && w->mu_p <= AFD_GEOMETRIC_MAX_MEAN &&
              w->mu_d <= AFD_GEOMETRIC_MAX_MEAN))
            return AFD_EINVAL;
        mean_load = w->mu_p + w->mu_d;
        if (!((double)p->B * mean_load <= GEO_MEAN))
            return AFD_ELIMIT;
    } else if (w->kind == AFD_WORKLOAD_TRACE) {
        double max_load = 0;
        if (afd_workload_entries(w) == 0)
            return AFD_EEMPTY;
        for (k = 0; k < afd_workload_entries(w); k++) {
            afd_workload_pair e = afd_workload_request(w, k);
            double y = (double)e.prompt + (double)e.decode;
            if (y > max_load)
                max_load = y;
        }
        if (!((double)p->B * max_load < EXACT))
            return AFD_ELIMIT;
    } else {
        return AFD_EINVAL;
    }
    if (!(w->stats.theta > 0) || !isfinite(w->stats.theta))
        return AFD_EINVAL;
    if (!product_within(p->trials, *rmax, AFD_BARRIER_MC_MAX_WORK))
        return AFD_ELIMIT;
    if ((p->per_slot || w->kind == AFD_WORKLOAD_TRACE) &&
        !product_within(p->trials * *rmax, p->B, AFD_BARRIER_MC_MAX_WORK))
        return AFD_ELIMIT;
    return AFD_OK;
}

typedef struct job {
    const afd_barrier_mc_params *p;
    const afd_slot_sampler *sampler; /* per-slot path, or NULL */
    unsigned k;                      /* its uniforms per slot */
    unsigned rmax;
    double btheta;
} job;

/* Loads T[0..rmax-1] of the workers of trial t. */
static void trial_loads(const job *jb, uint64_t t, double *buf, double *load)
{
    const afd_barrier_mc_params *p = jb->p;
    unsigned j;
    if (jb->sampler == NULL) {
        afd_philox_cursor cur;
        afd_philox_cursor_init(&cur, p->seed, t, 0);
        for (j = 0; j < jb->rmax; j++)
            load[j] =
                afd_slot_sum_geometric(&cur, p->workload->mu_p, p->workload->mu_d, p->B);
        return;
    }
    for (j = 0; j < jb->rmax; j++) {
        uint64_t first = jb->k * p->B * j, left = p->B;
        double sum = 0;
        while (left > 0) {
            size_t n = left < CHUNK ? (size_t)left : CHUNK;
            afd_philox_fill_u01(p->seed, t, first, jb->k * n, buf);
            sum += afd_slot_sampler_sum(jb->sampler, n, buf);
            first += jb->k * n;
            left -= n;
        }
        load[j] = sum;
    }
}

/* Sums of x = W - B theta and x^2 over the trials of block b, for each r. */
static void run_block(const job *jb, uint64_t b, double *buf, double *load, double *part)
{
    const afd_barrier_mc_params *p = jb->p;
    uint64_t t, end = (b + 1) * BLOCK < p->trials ? (b + 1) * BLOCK : p->trials;
    size_t k;
    unsigned j;
    for (k = 0; k < 2 * p->n_r; k++)
        part[k] = 0;
    for (t = b * BLOCK; t < end; t++) {
        trial_loads(jb, t, buf, load);
        for (j = 1; j < jb->rmax; j++) /* prefix maxima: load[j] = W for r = j+1 */
            if (load[j - 1] > load[j])
                load[j] = load[j - 1];
        for (k = 0; k < p->n_r; k++) {
            double x = load[p->r[k] - 1] - jb->btheta;
            part[2 * k] += x;
            part[2 * k + 1] += x * x;
        }
    }
}

afd_status afd_barrier_mc(const afd_barrier_mc_params *p, afd_barrier_mc_result *out)
{
    afd_slot_sampler *sampler = NULL;
    double *total = NULL, *part = NULL;
    uint64_t nblocks, round_blocks;
    afd_status st;
    job jb;
    int failed = 0;
    unsigned nt;
    size_t k;

    set_nan(p, out);
    if (out == NULL)
        return AFD_EINVAL;
    st = check(p, &jb.rmax);
    if (st != AFD_OK)
        return st;
    jb.p = p;
    jb.btheta = (double)p->B * p->workload->stats.theta;
    jb.sampler = NULL;
    jb.k = 0;
    if (p->per_slot || p->workload->kind == AFD_WORKLOAD_TRACE) {
        st = afd_priv_slot_sampler_alloc(p->workload, !p->by_row, &sampler);
        if (st != AFD_OK)
            return st;
        jb.sampler = sampler;
        jb.k = afd_slot_sampler_uniforms(sampler);
    }
    nblocks = (p->trials + BLOCK - 1) / BLOCK;
    /* Blocks are run in rounds so that the partial sums stay small
     * (at most 2^21 doubles); rounds change nothing in the result. */
    round_blocks = (UINT64_C(1) << 20) / p->n_r;
    if (round_blocks > 1024)
        round_blocks = 1024;
    if (round_blocks < 1)
        round_blocks = 1;
    total = calloc(2 * p->n_r, sizeof *total);
    part = malloc(round_blocks * 2 * p->n_r * sizeof *part);
    if (total == NULL || part == NULL) {
        free(total);
        free(part);
        afd_slot_sampler_free(sampler);
        return AFD_ENOMEM;
    }

    nt = afd_mc_threads(p->threads);
    (void)nt; /* unused without OpenMP */
    AFD_OMP("omp parallel num_threads(nt)")
    {
        double *buf = malloc(2 * CHUNK * sizeof *buf);
        double *load = malloc(jb.rmax * sizeof *load);
        uint64_t rs, nb, size = round_blocks < 16 ? round_blocks : 16;
        if (buf == NULL || load == NULL) {
            AFD_OMP("omp atomic write")
            failed = 1;
        }
        /* The first rounds are short (16 blocks, doubling up to round_blocks)
         * so that progress is reported early; every thread sees the same
         * rounds, and rounds change nothing in the result. */
        for (rs = 0; rs < nblocks; rs += nb, size = 2 * size < round_blocks ? 2 * size
                                                                        : round_blocks) {
            long long i;
            int bad;
            nb = nblocks - rs < size ? nblocks - rs : size;
            AFD_OMP("omp atomic read")
            bad = failed;
            AFD_OMP("omp for schedule(dynamic, 1)")
            for (i = 0; i < (long long)nb; i++)
                if (!bad && buf != NULL && load != NULL)
                    run_block(&jb, rs + (uint64_t)i, buf, load, part + (size_t)i * 2 * p->n_r);
            AFD_OMP("omp single")
            {
                uint64_t b;
                size_t q;
                for (b = 0; b < nb; b++) /* in block order: thread-count invariant */
                    for (q = 0; q < 2 * p->n_r; q++)
                        total[q] += part[b * 2 * p->n_r + q];
                if (p->progress != NULL) {
                    uint64_t done = (rs + nb) * BLOCK;
                    p->progress(p->progress_ctx, done < p->trials ? done : p->trials,
                                p->trials);
                }
            }
        }
        free(buf);
        free(load);
    }

    if (failed) {
        st = AFD_ENOMEM;
    } else {
        double n = (double)p->trials;
        for (k = 0; k < p->n_r; k++) {
            double m = total[2 * k] / n;
            double var = (total[2 * k + 1] - n * m * m) / (n - 1);
            double sd = sqrt(var > 0 ? var : 0);
            out[k].mean_w = jb.btheta + m;
            out[k].sd_w = sd;
            out[k].mean_w_se = sd / sqrt(n);
            out[k].overhead = m / jb.btheta;
            out[k].overhead_se = out[k].mean_w_se / jb.btheta;
        }
    }
    free(total);
    free(part);
    afd_slot_sampler_free(sampler);
    return st;
}
