/* perfmodel.c: FLOPs and memory traffic of a batch and the five-term
 * regression of Ascendra's Appendix A; see afd_perfmodel.h. */
#include <config.h>

#include <math.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_multifit.h>

#include "afd_perfmodel.h"
#include "internal.h"

static int bad(double x)
{
    return !(x >= 0) || !isfinite(x);
}

afd_status afd_perf_dims_from_model(const afd_model *model, double tp, double block,
                                    afd_perf_dims *out)
{
    if (out == NULL)
        return AFD_EINVAL;
    out->h = out->n = out->s = out->m = out->b = NAN;
    if (model == NULL || !(tp >= 1) || !isfinite(tp) || !(block > 0) || !isfinite(block) ||
        !(model->hidden > 0) || !(model->heads > 0) || !(model->head_dim > 0) ||
        !(model->intermediate > 0))
        return AFD_EINVAL;
    out->h = model->hidden / tp;
    out->n = model->heads / tp;
    out->s = model->head_dim;
    out->m = model->intermediate / tp;
    out->b = block;
    return AFD_OK;
}

afd_status afd_perf_count(const afd_perf_dims *d, const afd_perf_batch *batch, double *mem,
                          double *flops)
{
    double h, n, s, m, b, M, F;
    size_t i;
    if (mem)
        *mem = NAN;
    if (flops)
        *flops = NAN;
    if (d == NULL || batch == NULL || mem == NULL || flops == NULL)
        return AFD_EINVAL;
    h = d->h;
    n = d->n;
    s = d->s;
    m = d->m;
    b = d->b;
    if (!(h > 0) || !(n > 0) || !(s > 0) || !(m > 0) || !(b > 0) || !isfinite(h + n + s + m + b))
        return AFD_EINVAL;
    if (batch->n_prefill + batch->n_decode == 0 ||
        (batch->n_prefill > 0 && (batch->chunk == NULL || batch->done == NULL)) ||
        (batch->n_decode > 0 && batch->ctx == NULL))
        return AFD_EINVAL;
    /* weights of the four GEMMs (Tables 3-4): 3h^2 + h^2 + hm + hm reads */
    M = 4 * h * h + 2 * h * m;
    F = 0;
    for (i = 0; i < batch->n_prefill; i++) {
        double c = batch->chunk[i], l = batch->done[i];
        if (bad(c) || bad(l) || l < c)
            return AFD_EINVAL;
        M += 8 * c * h + 2 * c * m + n * (2 * l * s + 3 * c * s * l / b);
        F += 4 * c * h * h + 2 * c * h * m + 2 * n * s * l * c;
    }
    for (i = 0; i < batch->n_decode; i++) {
        double l = batch->ctx[i];
        if (bad(l))
            return AFD_EINVAL;
        M += 8 * h + 2 * m + n * (2 * l * s + 2 * s);
        F += 4 * h * h + 2 * h * m + 2 * n * l * s;
    }
    *mem = M;
    *flops = F;
    return AFD_OK;
}

static void fit_nan(afd_perf_fit_result *r)
{
    r->n = 0;
    r->c2 = r->a_m = r->a_f = r->c5 = NAN;
    r->c2_se = r->a_m_se = r->a_f_se = r->c5_se = NAN;
    r->max_rel_err = r->r2 = NAN;
}

afd_status afd_perf_fit(const double *t_m, const double *t_f, const double *t, size_t n,
                        afd_perf_fit_result *out, afd_error *err)
{
    gsl_matrix *X = NULL, *cov = NULL;
    gsl_vector *y = NULL, *c = NULL;
    gsl_multifit_linear_workspace *w = NULL;
    size_t i, mem_side = 0, comp_side = 0;
    double chisq, mean = 0, tss = 0, worst = 0;
    afd_status st = AFD_OK;

    afd_error_clear(err);
    if (out == NULL)
        return AFD_EINVAL;
    fit_nan(out);
    if (t_m == NULL || t_f == NULL || t == NULL || n < 5)
        return afd_priv_fail(err, AFD_EINVAL, 0, 0, "need at least 5 batches, got %zu", n);
    for (i = 0; i < n; i++) {
        if (bad(t_m[i]) || bad(t_f[i]) || bad(t[i]))
            return afd_priv_fail(err, AFD_EINVAL, (long)i + 1, 0,
                                 "batch %zu: t_m, t_f and t must be finite and >= 0", i + 1);
        mem_side += t_m[i] > t_f[i];
        comp_side += t_f[i] > t_m[i];
        mean += t[i] / (double)n;
    }
    if (mem_side < 2 || comp_side < 2)
        return afd_priv_fail(err, AFD_EINVAL, 0, 0,
                             "C2 is not identifiable: %zu memory-bound and %zu compute-bound "
                             "batches (need 2 of each: max(t_M, t_F) must differ from both)",
                             mem_side, comp_side);
    X = gsl_matrix_alloc(n, 4);
    y = gsl_vector_alloc(n);
    c = gsl_vector_alloc(4);
    cov = gsl_matrix_alloc(4, 4);
    w = gsl_multifit_linear_alloc(n, 4);
    if (!X || !y || !c || !cov || !w) {
        st = afd_priv_fail(err, AFD_ENOMEM, 0, 0, "out of memory");
        goto done;
    }
    for (i = 0; i < n; i++) {
        gsl_matrix_set(X, i, 0, fmax(t_m[i], t_f[i]));
        gsl_matrix_set(X, i, 1, t_m[i]);
        gsl_matrix_set(X, i, 2, t_f[i]);
        gsl_matrix_set(X, i, 3, 1);
        gsl_vector_set(y, i, t[i]);
        tss += (t[i] - mean) * (t[i] - mean);
    }
    if (gsl_multifit_linear(X, y, c, cov, &chisq, w) != GSL_SUCCESS) {
        st = afd_priv_fail(err, AFD_ENUMERIC, 0, 0, "least squares failed");
        goto done;
    }
    {
        out->n = n;
        out->c2 = gsl_vector_get(c, 0);
        out->a_m = gsl_vector_get(c, 1);
        out->a_f = gsl_vector_get(c, 2);
        out->c5 = gsl_vector_get(c, 3);
        /* gsl_multifit_linear's cov is (X^T X)^-1 sigma^2 with sigma^2 = chisq/(n-p) */
        out->c2_se = sqrt(gsl_matrix_get(cov, 0, 0));
        out->a_m_se = sqrt(gsl_matrix_get(cov, 1, 1));
        out->a_f_se = sqrt(gsl_matrix_get(cov, 2, 2));
        out->c5_se = sqrt(gsl_matrix_get(cov, 3, 3));
        out->r2 = tss > 0 ? 1 - chisq / tss : NAN;
        for (i = 0; i < n; i++) {
            double f = out->c2 * fmax(t_m[i], t_f[i]) + out->a_m * t_m[i] + out->a_f * t_f[i] +
                       out->c5;
            if (t[i] > 0 && fabs(f - t[i]) / t[i] > worst)
                worst = fabs(f - t[i]) / t[i];
        }
        out->max_rel_err = worst;
    }
done:
    gsl_matrix_free(X);
    gsl_vector_free(y);
    gsl_vector_free(c);
    gsl_matrix_free(cov);
    gsl_multifit_linear_free(w);
    if (st != AFD_OK)
        fit_nan(out);
    return st;
}
