/* calibrate.c: linear fits of measured latencies (see afd_calibrate.h). */
#include <config.h>

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
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
    /* A value within its rounding bound of 0 is 0 whichever its sign: the
     * sign of a rounding error depends on the CPU's GSL/BLAS kernels. */
    if (*v == 0) {
        *v = 0; /* -0 too */
        return 0;
    }
    if (fabs(*v) <= round || (*v < 0 && -*v <= se)) {
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
    f->robust_converged = 0;
    f->robust_iter = 0;
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

    /* Tukey bisquare M-estimate.  GSL_EMAXITER: the iteration did not
     * converge and its last iterate is no estimate: the robust figures stay
     * NaN (afd_calibrate.h); anything else is reported. */
    rc = gsl_multifit_robust(X, y, c, cov, rw);
    if (rc != GSL_SUCCESS && rc != GSL_EMAXITER) {
        st = afd_priv_fail(err, AFD_ENUMERIC, 0, 0, "robust fit failed: %s", gsl_strerror(rc));
        goto done;
    }
    /* GSL's numit counts one past its limit when the limit stops it. */
    out->robust_iter = rc == GSL_EMAXITER ? rw->maxiter : gsl_multifit_robust_statistics(rw).numit;
    if (rc == GSL_EMAXITER) {
        for (i = 0; weights != NULL && i < n; i++)
            weights[i] = NAN;
    } else {
        out->robust_converged = 1;
    }
    if (out->robust_converged) {
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
        (out->robust_converged && (!isfinite(out->alpha_robust) || !isfinite(out->beta_robust))))
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

/* ---- serving laws from measured batches */

void afd_law_points_free(afd_law_points *p)
{
    if (p == NULL)
        return;
    free(p->x1);
    free(p->x2);
    free(p->t);
    free(p->line);
    p->x1 = p->x2 = p->t = NULL;
    p->line = NULL;
    p->n = 0;
}

static afd_status law_grow(afd_law_points *p, size_t *cap)
{
    size_t ncap = *cap ? 2 * *cap : 64;
    double **arr[3] = {&p->x1, &p->x2, &p->t};
    long *nl;
    int k;
    for (k = 0; k < 3; k++) {
        double *v = realloc(*arr[k], ncap * sizeof *v);
        if (v == NULL)
            return AFD_ENOMEM;
        *arr[k] = v;
    }
    nl = realloc(p->line, ncap * sizeof *nl);
    if (nl == NULL)
        return AFD_ENOMEM;
    p->line = nl;
    *cap = ncap;
    return AFD_OK;
}

/* 1 when the header has column name (exactly once; a repeated one is an
 * error), 0 when it has none. */
static afd_status has_column(afd_csv *c, const char *name, int *has, afd_error *err)
{
    long k = afd_csv_find_column(c, name);
    *has = k >= 0;
    if (k == -2)
        return afd_priv_fail(err, AFD_EPARSE, 1, 0,
                             "column '%s' appears more than once in the header", name);
    return AFD_OK;
}

afd_status afd_law_points_read(const char *path, afd_law_kind kind, const char *t_col,
                               afd_law_points *out, afd_error *err)
{
    /* the two forms of each law: [kind][form] = {column 1, column 2} */
    static const char *const forms[2][2][2] = {
        {{"sum_p", "sum_p2"}, {"batch", "prompt"}},
        {{"batch", "kv"}, {"batch", "context"}},
    };
    afd_csv *c;
    size_t cols[3], cap = 0;
    afd_csv_field f[3];
    afd_status st;
    long line;
    int form = -1, k, has[2][2];
    const char *names[3];
    char list[160];

    memset(out, 0, sizeof *out);
    afd_error_clear(err);
    if (kind != AFD_LAW_PREFILL && kind != AFD_LAW_DECODE)
        return afd_priv_fail(err, AFD_EINVAL, 0, 0, "unknown law kind");
    st = afd_csv_open(path, &c, err);
    if (st != AFD_OK)
        return st;
    for (k = 0; k < 2; k++) {
        if ((st = has_column(c, forms[kind][k][0], &has[k][0], err)) != AFD_OK ||
            (st = has_column(c, forms[kind][k][1], &has[k][1], err)) != AFD_OK)
            goto done;
    }
    /* the decode forms share 'batch': they differ by kv or context */
    for (k = 0; k < 2; k++)
        if (has[k][0] && has[k][1]) {
            if (form >= 0) {
                st = afd_priv_fail(err, AFD_EPARSE, 1, 0,
                                   "both %s, %s and %s, %s columns: give one form",
                                   forms[kind][0][0], forms[kind][0][1], forms[kind][1][0],
                                   forms[kind][1][1]);
                goto done;
            }
            form = k;
        }
    if (form < 0) {
        st = afd_priv_fail(err, AFD_EPARSE, 1, 0,
                           "a %s file needs columns %s and %s, or %s and %s (header has %s)",
                           kind == AFD_LAW_PREFILL ? "prefill" : "decode", forms[kind][0][0],
                           forms[kind][0][1], forms[kind][1][0], forms[kind][1][1],
                           afd_csv_header_list(c, list, sizeof list));
        goto done;
    }
    names[0] = forms[kind][form][0];
    names[1] = forms[kind][form][1];
    names[2] = t_col;
    if ((st = find(c, names[0], &cols[0], err)) != AFD_OK ||
        (st = find(c, names[1], &cols[1], err)) != AFD_OK ||
        (st = find(c, t_col, &cols[2], err)) != AFD_OK)
        goto done;
    if (cols[2] == cols[0] || cols[2] == cols[1]) {
        st = afd_priv_fail(err, AFD_EPARSE, 1, 0, "the time column '%s' is also %s", t_col,
                           cols[2] == cols[0] ? names[0] : names[1]);
        goto done;
    }
    if (kind == AFD_LAW_PREFILL && form == 1) {
        snprintf(out->x1_name, sizeof out->x1_name, "batch x prompt");
        snprintf(out->x2_name, sizeof out->x2_name, "batch x prompt^2");
    } else if (kind == AFD_LAW_DECODE && form == 1) {
        snprintf(out->x1_name, sizeof out->x1_name, "batch");
        snprintf(out->x2_name, sizeof out->x2_name, "batch x context");
    } else {
        snprintf(out->x1_name, sizeof out->x1_name, "%s", names[0]);
        snprintf(out->x2_name, sizeof out->x2_name, "%s", names[1]);
    }
    out->kind = kind;
    afd_csv_select(c, 3, cols);
    while ((st = afd_csv_next(c, f, &line, err)) == AFD_OK) {
        double v[3], x1, x2;
        const char *bad = NULL;
        int j = 0;
        for (k = 0; k < 3; k++) {
            afd_status ps = f[k].escaped ? AFD_EPARSE : afd_parse_double_n(f[k].p, f[k].n, &v[k]);
            if (ps == AFD_OK && !isfinite(v[k]))
                ps = AFD_EPARSE;
            if (ps != AFD_OK) {
                char shown[200], col[200];
                afd_priv_show(f[k].p, f[k].n, shown, sizeof shown);
                afd_priv_show(names[k], strlen(names[k]), col, sizeof col);
                st = afd_csv_fail(c, err, ps, line, 0, "column '%s' is %s: '%s'", col,
                                  ps == AFD_ERANGE ? "out of range" : "not a finite number",
                                  shown);
                goto done;
            }
        }
        /* the domain of each column */
        if (!(v[2] > 0))
            bad = "must be > 0", j = 2;
        else if (kind == AFD_LAW_DECODE && !(v[0] >= 1))
            bad = "must be >= 1", j = 0;
        else if (kind == AFD_LAW_DECODE && !(v[1] >= 0))
            bad = "must be >= 0", j = 1;
        else if (kind == AFD_LAW_PREFILL && !(v[0] >= 1))
            bad = "must be >= 1", j = 0;
        else if (kind == AFD_LAW_PREFILL && form == 1 && !(v[1] >= 1))
            bad = "must be >= 1", j = 1;
        if (bad != NULL) {
            char shown[200];
            afd_priv_show(f[j].p, f[j].n, shown, sizeof shown);
            st = afd_csv_fail(c, err, AFD_EPARSE, line, 0, "%s %s: '%s'", names[j], bad, shown);
            goto done;
        }
        if (kind == AFD_LAW_PREFILL && form == 0 && !(v[1] >= v[0] && v[1] <= v[0] * v[0])) {
            char s1[200], s2[200];
            afd_priv_show(f[0].p, f[0].n, s1, sizeof s1);
            afd_priv_show(f[1].p, f[1].n, s2, sizeof s2);
            st = afd_csv_fail(c, err, AFD_EPARSE, line, 0,
                              "sum_p2 = %s is not between sum_p = %s and sum_p^2: not the sums "
                              "of one batch's prompt lengths (each >= 1) and of their squares",
                              s2, s1);
            goto done;
        }
        if (kind == AFD_LAW_PREFILL && form == 1) {
            x1 = v[0] * v[1];
            x2 = v[0] * v[1] * v[1];
        } else if (kind == AFD_LAW_DECODE && form == 1) {
            x1 = v[0];
            x2 = v[0] * v[1];
        } else {
            x1 = v[0];
            x2 = v[1];
        }
        if (!isfinite(x2)) {
            st = afd_csv_fail(c, err, AFD_ERANGE, line, 0, "%s is out of range", out->x2_name);
            goto done;
        }
        if (out->n == cap && (st = law_grow(out, &cap)) != AFD_OK) {
            afd_priv_fail(err, st, line, 0, "out of memory");
            goto done;
        }
        out->x1[out->n] = x1;
        out->x2[out->n] = x2;
        out->t[out->n] = v[2];
        out->line[out->n] = line;
        out->n++;
    }
    if (st == AFD_EOF)
        st = out->n > 0 ? AFD_OK
                        : afd_priv_fail(err, AFD_EEMPTY, 1, 0, "no data rows after the header");
done:
    afd_csv_close(c);
    if (st != AFD_OK)
        afd_law_points_free(out);
    return st;
}

double afd_law_max_rel_err(const afd_law_points *p, const double coef[3], size_t *worst)
{
    double m = NAN;
    size_t i;
    if (worst != NULL)
        *worst = 0;
    for (i = 0; i < p->n; i++) {
        double f = coef[0] + coef[1] * p->x1[i] + coef[2] * p->x2[i];
        double r = fabs(f - p->t[i]) / p->t[i];
        if (!(r <= m)) {
            m = r;
            if (worst != NULL)
                *worst = i;
        }
    }
    return m;
}

static void law_fit_nan(afd_law_fit *f)
{
    int k;
    f->n = 0;
    for (k = 0; k < 3; k++)
        f->coef[k] = f->se[k] = NAN;
    f->r2 = f->sigma = f->max_rel_err = NAN;
    f->worst = 0;
}

/* "lines 2-9" (or "rows 1-8" without line numbers) for a message. */
static void line_span(const afd_law_points *p, char *buf, size_t cap)
{
    if (p->line != NULL)
        snprintf(buf, cap, "lines %ld-%ld", p->line[0], p->line[p->n - 1]);
    else
        snprintf(buf, cap, "rows 1-%zu", p->n);
}

afd_status afd_fit_law(const afd_law_points *p, afd_law_fit *out, afd_error *err)
{
    gsl_matrix *X = NULL, *A = NULL, *V = NULL, *cov = NULL;
    gsl_vector *y = NULL, *c = NULL, *S = NULL, *work = NULL;
    gsl_multifit_linear_workspace *lw = NULL;
    const double *x[2];
    double chisq, mean_t = 0, tss = 0, norm[3] = {0, 0, 0};
    afd_status st = AFD_OK;
    size_t i;
    int k, rc;
    char span[64];
    static const char *const keys[2][3] = {{"prefill_a", "prefill_b", "prefill_c"},
                                           {"decode_beta", "decode_gamma", "decode_alpha"}};
    const char *const *key;

    law_fit_nan(out);
    afd_error_clear(err);
    if (p == NULL || p->n < 4)
        return afd_priv_fail(err, AFD_EINVAL, 0, 0,
                             "need at least 4 batches to fit 3 coefficients with standard "
                             "errors, got %zu",
                             p == NULL ? (size_t)0 : p->n);
    key = keys[p->kind == AFD_LAW_DECODE];
    x[0] = p->x1;
    x[1] = p->x2;
    line_span(p, span, sizeof span);
    for (i = 0; i < p->n; i++)
        if (!isfinite(p->x1[i]) || !isfinite(p->x2[i]) || !(p->t[i] > 0) || !isfinite(p->t[i]))
            return afd_priv_fail(err, AFD_EINVAL, p->line ? p->line[i] : 0, 0,
                                 "point %zu is not finite or its time is not > 0", i + 1);
    /* a regressor the same on every row is confounded with the intercept */
    for (k = 0; k < 2; k++) {
        for (i = 1; i < p->n && x[k][i] == x[k][0]; i++)
            ;
        if (i == p->n)
            return afd_priv_fail(err, AFD_EINVAL, 0, 0,
                                 "every row (%s) has %s = %g: %s cannot be told from %s; "
                                 "measure at two values or more",
                                 span, k == 0 ? p->x1_name : p->x2_name, x[k][0], key[k + 1],
                                 key[0]);
    }

    X = gsl_matrix_alloc(p->n, 3);
    A = gsl_matrix_alloc(p->n, 3);
    V = gsl_matrix_alloc(3, 3);
    cov = gsl_matrix_alloc(3, 3);
    y = gsl_vector_alloc(p->n);
    c = gsl_vector_alloc(3);
    S = gsl_vector_alloc(3);
    work = gsl_vector_alloc(3);
    lw = gsl_multifit_linear_alloc(p->n, 3);
    if (!X || !A || !V || !cov || !y || !c || !S || !work || !lw) {
        st = afd_priv_fail(err, AFD_ENOMEM, 0, 0, "out of memory");
        goto done;
    }
    for (i = 0; i < p->n; i++) {
        gsl_matrix_set(X, i, 0, 1.0);
        gsl_matrix_set(X, i, 1, p->x1[i]);
        gsl_matrix_set(X, i, 2, p->x2[i]);
        gsl_vector_set(y, i, p->t[i]);
        mean_t += p->t[i] / (double)p->n;
        norm[0] += 1;
        norm[1] += p->x1[i] * p->x1[i];
        norm[2] += p->x2[i] * p->x2[i];
    }
    for (i = 0; i < p->n; i++)
        tss += (p->t[i] - mean_t) * (p->t[i] - mean_t);
    /* Rank: the singular values of the design with unit-length columns
     * (scaling a column does not change whether the columns are dependent,
     * and makes the test independent of the units of x1 and x2). */
    for (i = 0; i < p->n; i++)
        for (k = 0; k < 3; k++)
            gsl_matrix_set(A, i, (size_t)k, gsl_matrix_get(X, i, (size_t)k) / sqrt(norm[k]));
    rc = gsl_linalg_SV_decomp(A, V, S, work);
    if (rc != GSL_SUCCESS) {
        st = afd_priv_fail(err, AFD_ENUMERIC, 0, 0, "singular value decomposition failed: %s",
                           gsl_strerror(rc));
        goto done;
    }
    if (!(gsl_vector_get(S, 2) > 1e-9 * gsl_vector_get(S, 0))) {
        st = afd_priv_fail(err, AFD_EINVAL, 0, 0,
                           "%s is a linear function of %s on every row (%s): %s and %s "
                           "cannot be told apart; vary one at a fixed value of the other",
                           p->x2_name, p->x1_name, span, key[1], key[2]);
        goto done;
    }
    /* OLS; GSL returns cov = s^2 (X^T X)^-1 with s^2 = chisq / (n - 3). */
    rc = gsl_multifit_linear(X, y, c, cov, &chisq, lw);
    if (rc != GSL_SUCCESS) {
        st = afd_priv_fail(err, AFD_ENUMERIC, 0, 0, "least squares failed: %s", gsl_strerror(rc));
        goto done;
    }
    out->n = p->n;
    for (k = 0; k < 3; k++) {
        out->coef[k] = gsl_vector_get(c, (size_t)k);
        out->se[k] = sqrt(gsl_matrix_get(cov, (size_t)k, (size_t)k));
    }
    out->sigma = sqrt(chisq / (double)(p->n - 3));
    out->r2 = tss > 0 ? 1 - chisq / tss : 1;
    out->max_rel_err = afd_law_max_rel_err(p, out->coef, &out->worst);
    for (k = 0; k < 3; k++)
        if (!isfinite(out->coef[k]) || !isfinite(out->se[k]))
            st = afd_priv_fail(err, AFD_ERANGE, 0, 0,
                               "the fitted law does not fit in double precision");
done:
    gsl_matrix_free(X);
    gsl_matrix_free(A);
    gsl_matrix_free(V);
    gsl_matrix_free(cov);
    gsl_vector_free(y);
    gsl_vector_free(c);
    gsl_vector_free(S);
    gsl_vector_free(work);
    if (lw)
        gsl_multifit_linear_free(lw);
    if (st != AFD_OK)
        law_fit_nan(out);
    return st;
}
