/* calibrate.c: linear fits of measured latencies (see afd_calibrate.h). */
#include <config.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_multifit.h>

#include "afd_calibrate.h"
#include "afd_csv.h"
#include "afd_parse.h"
#include "internal.h"

void afd_points_free(afd_points *p)
{
    if (p == NULL)
        return;
    free(p->x);
    free(p->t);
    free(p->line);
    p->x = p->t = NULL;
    p->line = NULL;
    p->n = 0;
}

static afd_status find(afd_csv *c, const char *name, size_t *col, afd_error *err)
{
    char list[160];
    long k = afd_csv_find_column(c, name);
    if (k == -1)
        return afd_priv_fail(err, AFD_EPARSE, 1, 0, "unknown column '%s' (header has %s)", name,
                             afd_csv_header_list(c, list, sizeof list));
    if (k == -2)
        return afd_priv_fail(err, AFD_EPARSE, 1, 0,
                             "column '%s' appears more than once in the header", name);
    *col = (size_t)k;
    return AFD_OK;
}

static afd_status grow(afd_points *p, size_t *cap)
{
    size_t ncap = *cap ? 2 * *cap : 256;
    double *nx = realloc(p->x, ncap * sizeof *nx), *nt;
    long *nl;
    if (nx == NULL)
        return AFD_ENOMEM;
    p->x = nx;
    nt = realloc(p->t, ncap * sizeof *nt);
    if (nt == NULL)
        return AFD_ENOMEM;
    p->t = nt;
    nl = realloc(p->line, ncap * sizeof *nl);
    if (nl == NULL)
        return AFD_ENOMEM;
    p->line = nl;
    *cap = ncap;
    return AFD_OK;
}

afd_status afd_points_read(const char *path, const char *x_col, const char *t_col,
                           afd_points *out, afd_error *err)
{
    afd_csv *c;
    size_t cols[2], cap = 0;
    afd_csv_field f[2];
    afd_status st;
    long line;
    const char *names[2] = {x_col, t_col};

    memset(out, 0, sizeof *out);
    st = afd_csv_open(path, &c, err);
    if (st != AFD_OK)
        return st;
    if ((st = find(c, x_col, &cols[0], err)) != AFD_OK ||
        (st = find(c, t_col, &cols[1], err)) != AFD_OK)
        goto done;
    if (cols[0] == cols[1]) {
        st = afd_priv_fail(err, AFD_EPARSE, 1, 0, "x and t are the same column '%s'", x_col);
        goto done;
    }
    afd_csv_select(c, 2, cols);
    while ((st = afd_csv_next(c, f, &line, err)) == AFD_OK) {
        double v[2];
        int k;
        for (k = 0; k < 2; k++) {
            afd_status ps = f[k].escaped ? AFD_EPARSE : afd_parse_double_n(f[k].p, f[k].n, &v[k]);
            if (ps != AFD_OK) {
                char shown[200];
                afd_priv_show(f[k].p, f[k].n, shown, sizeof shown);
                st = afd_csv_fail(c, err, ps, line, 0,
                                  "column '%s' is %s: '%s'", names[k],
                                  ps == AFD_ERANGE ? "out of range" : "not a number", shown);
                goto done;
            }
        }
        if (out->n == cap && (st = grow(out, &cap)) != AFD_OK) {
            afd_priv_fail(err, st, line, 0, "out of memory");
            goto done;
        }
        out->x[out->n] = v[0];
        out->t[out->n] = v[1];
        out->line[out->n] = line;
        out->n++;
    }
    if (st == AFD_EOF)
        st = out->n > 0 ? AFD_OK : afd_priv_fail(err, AFD_EEMPTY, 1, 0,
                                                  "no data rows after the header");
done:
    afd_csv_close(c);
    if (st != AFD_OK)
        afd_points_free(out);
    return st;
}

static void fit_nan(afd_fit *f)
{
    f->n = 0;
    f->alpha = f->beta = f->alpha_se = f->beta_se = f->r2 = f->sigma = NAN;
    f->alpha_robust = f->beta_robust = f->alpha_robust_se = f->beta_robust_se = NAN;
    f->sigma_robust = NAN;
    f->outliers = 0;
}

afd_status afd_fit_line(const double *x, const double *t, size_t n, afd_fit *out,
                        double *weights, afd_error *err)
{
    gsl_matrix *X = NULL, *cov = NULL;
    gsl_vector *y = NULL, *c = NULL;
    gsl_multifit_linear_workspace *lw = NULL;
    gsl_multifit_robust_workspace *rw = NULL;
    double chisq, mean_t = 0, tss = 0;
    afd_status st = AFD_OK;
    size_t i;
    int rc;

    fit_nan(out);
    afd_error_clear(err);
    if (n < 3)
        return afd_priv_fail(err, AFD_EINVAL, 0, 0,
                             "need at least 3 points to fit a line with errors, got %zu", n);
    for (i = 0; i < n; i++)
        if (!isfinite(x[i]) || !isfinite(t[i]))
            return afd_priv_fail(err, AFD_EINVAL, 0, 0, "point %zu is not finite", i + 1);
    for (i = 1; i < n && x[i] == x[0]; i++)
        ;
    if (i == n)
        return afd_priv_fail(err, AFD_EINVAL, 0, 0,
                             "all %zu points have x = %g: the slope is undefined", n, x[0]);

    X = gsl_matrix_alloc(n, 2);
    cov = gsl_matrix_alloc(2, 2);
    y = gsl_vector_alloc(n);
    c = gsl_vector_alloc(2);
    lw = gsl_multifit_linear_alloc(n, 2);
    rw = gsl_multifit_robust_alloc(gsl_multifit_robust_bisquare, n, 2);
    if (!X || !cov || !y || !c || !lw || !rw) {
        st = afd_priv_fail(err, AFD_ENOMEM, 0, 0, "out of memory");
        goto done;
    }
    for (i = 0; i < n; i++) {
        gsl_matrix_set(X, i, 0, 1.0);
        gsl_matrix_set(X, i, 1, x[i]);
        gsl_vector_set(y, i, t[i]);
        mean_t += t[i] / (double)n;
    }
    for (i = 0; i < n; i++)
        tss += (t[i] - mean_t) * (t[i] - mean_t);

    /* OLS; GSL returns cov = s^2 (X^T X)^-1 with s^2 = chisq / (n - 2). */
    rc = gsl_multifit_linear(X, y, c, cov, &chisq, lw);
    if (rc != GSL_SUCCESS) {
        st = afd_priv_fail(err, AFD_ENUMERIC, 0, 0, "least squares failed: %s",
                           gsl_strerror(rc));
        goto done;
    }
    out->n = n;
    out->beta = gsl_vector_get(c, 0);
    out->alpha = gsl_vector_get(c, 1);
    out->beta_se = sqrt(gsl_matrix_get(cov, 0, 0));
    out->alpha_se = sqrt(gsl_matrix_get(cov, 1, 1));
    out->sigma = sqrt(chisq / (double)(n - 2));
    out->r2 = tss > 0 ? 1 - chisq / tss : 1;

    /* Tukey bisquare M-estimate.  GSL_EMAXITER still leaves a usable fit;
     * anything else is reported. */
    rc = gsl_multifit_robust(X, y, c, cov, rw);
    if (rc != GSL_SUCCESS && rc != GSL_EMAXITER) {
        st = afd_priv_fail(err, AFD_ENUMERIC, 0, 0, "robust fit failed: %s", gsl_strerror(rc));
        goto done;
    }
    {
        /* GSL scales cov with a conservative sigma that mixes in the OLS
         * residual scale, which the outliers inflate (with 10% gross
         * outliers it is ~70 times the noise); rescale to the robust scale
         * sigma_rob so the errors describe the fit that is reported
         * (checked for calibration by repetition in test_calibrate). */
        gsl_multifit_robust_stats rs = gsl_multifit_robust_statistics(rw);
        double k = rs.sigma > 0 ? rs.sigma_rob / rs.sigma : 1;
        out->beta_robust = gsl_vector_get(c, 0);
        out->alpha_robust = gsl_vector_get(c, 1);
        out->beta_robust_se = k * sqrt(gsl_matrix_get(cov, 0, 0));
        out->alpha_robust_se = k * sqrt(gsl_matrix_get(cov, 1, 1));
        out->sigma_robust = rs.sigma_rob;
        for (i = 0; i < n; i++) {
            double w = gsl_vector_get(rs.weights, i);
            if (w < 0.5)
                out->outliers++;
            if (weights != NULL)
                weights[i] = w;
        }
    }
done:
    gsl_matrix_free(X);
    gsl_matrix_free(cov);
    gsl_vector_free(y);
    gsl_vector_free(c);
    if (lw)
        gsl_multifit_linear_free(lw);
    if (rw)
        gsl_multifit_robust_free(rw);
    if (st != AFD_OK)
        fit_nan(out);
    return st;
}
