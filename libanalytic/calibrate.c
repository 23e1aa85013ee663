/* calibrate.c: linear fits of measured latencies (see afd_calibrate.h). */
#include <config.h>

#include <float.h>
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
    char list[160], v[200];
    long k = afd_csv_find_column(c, name);
    afd_priv_show(name, strlen(name), v, sizeof v);
    if (k == -1)
        return afd_priv_fail(err, AFD_EPARSE, 1, 0, "unknown column '%s' (header has %s)", v,
                             afd_csv_header_list(c, list, sizeof list));
    if (k == -2)
        return afd_priv_fail(err, AFD_EPARSE, 1, 0,
                             "column '%s' appears more than once in the header", v);
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
                char shown[200], col[200];
                afd_priv_show(f[k].p, f[k].n, shown, sizeof shown);
                afd_priv_show(names[k], strlen(names[k]), col, sizeof col);
                st = afd_csv_fail(c, err, ps, line, 0,
                                  "column '%s' is %s: '%s'", col,
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

int afd_fit_clamp(double *v, double se, double round)
{
    if (*v < 0 && (-*v <= se || -*v <= round)) {
        *v = 0;
        return 1;
    }
    return 0;
}

static void fit_nan(afd_fit *f)
{
    f->n = 0;
    f->alpha_round = f->beta_round = NAN;
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
    double chisq, mean_t = 0, tss = 0, xmax = 0, tmax = 0, xlo, xhi;
    afd_status st = AFD_OK;
    size_t i;
    int rc, ex, et;

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

    /* Fit on x 2^-ex and t 2^-et, with the largest |x| and |t| in [0.5, 1):
     * powers of two scale exactly, so the fit is that of the data, but sums
     * of squares of values near DBL_MAX no longer overflow.  The results are
     * scaled back (alpha by 2^(et - ex), beta and the scales by 2^et). */
    xlo = xhi = x[0];
    for (i = 0; i < n; i++) {
        xmax = fmax(xmax, fabs(x[i]));
        tmax = fmax(tmax, fabs(t[i]));
        xlo = fmin(xlo, x[i]);
        xhi = fmax(xhi, x[i]);
    }
    frexp(xmax, &ex);
    frexp(tmax, &et);

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
        gsl_matrix_set(X, i, 1, ldexp(x[i], -ex));
        gsl_vector_set(y, i, ldexp(t[i], -et));
        mean_t += ldexp(t[i], -et) / (double)n;
    }
    for (i = 0; i < n; i++)
        tss += (ldexp(t[i], -et) - mean_t) * (ldexp(t[i], -et) - mean_t);

    /* OLS; GSL returns cov = s^2 (X^T X)^-1 with s^2 = chisq / (n - 2). */
    rc = gsl_multifit_linear(X, y, c, cov, &chisq, lw);
    if (rc != GSL_SUCCESS) {
        st = afd_priv_fail(err, AFD_ENUMERIC, 0, 0, "least squares failed: %s",
                           gsl_strerror(rc));
        goto done;
    }
    out->n = n;
    out->beta = ldexp(gsl_vector_get(c, 0), et);
    out->alpha = ldexp(gsl_vector_get(c, 1), et - ex);
    out->beta_se = ldexp(sqrt(gsl_matrix_get(cov, 0, 0)), et);
    out->alpha_se = ldexp(sqrt(gsl_matrix_get(cov, 1, 1)), et - ex);
    out->sigma = ldexp(sqrt(chisq / (double)(n - 2)), et);
    out->r2 = tss > 0 ? 1 - chisq / tss : 1;
    /* Rounding: the fitted line is known to about 64 eps of the largest
     * value it passes through, so beta to that and alpha to that over the
     * x range. */
    out->beta_round = 64 * DBL_EPSILON * tmax + 64 * DBL_EPSILON * fabs(out->alpha) * xmax;
    out->alpha_round = out->beta_round / (xhi / 2 - xlo / 2) / 2;

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
        out->beta_robust = ldexp(gsl_vector_get(c, 0), et);
        out->alpha_robust = ldexp(gsl_vector_get(c, 1), et - ex);
        out->beta_robust_se = ldexp(k * sqrt(gsl_matrix_get(cov, 0, 0)), et);
        out->alpha_robust_se = ldexp(k * sqrt(gsl_matrix_get(cov, 1, 1)), et - ex);
        out->sigma_robust = ldexp(rs.sigma_rob, et);
        for (i = 0; i < n; i++) {
            double w = gsl_vector_get(rs.weights, i);
            if (w < 0.5)
                out->outliers++;
            if (weights != NULL)
                weights[i] = w;
        }
    }
    /* Scaled back, a slope can still overflow (t near DBL_MAX over a tiny
     * x range); every figure must be a finite number. */
    if (!isfinite(out->alpha) || !isfinite(out->beta) || !isfinite(out->alpha_se) ||
        !isfinite(out->beta_se) || !isfinite(out->sigma) || !isfinite(out->r2) ||
        !isfinite(out->alpha_robust) || !isfinite(out->beta_robust))
        st = afd_priv_fail(err, AFD_ERANGE, 0, 0,
                           "the fitted line does not fit in double precision (slope %g, "
                           "intercept %g): rescale x or t",
                           out->alpha, out->beta);
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
