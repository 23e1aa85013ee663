/* fuzz_calibrate.c: libFuzzer target for the measurement files of afdkit
 * calibrate: points (x, t) for the three linear stages (afd_points_read)
 * and measured prefill and decode batches for the serving laws
 * (afd_law_points_read), with the fits that consume them (afd_fit_line,
 * afd_fit_law).  The input is written to a file and read as each.
 * Invariants: a refused file leaves a one-line message; accepted points are
 * finite, with increasing source lines; accepted batches satisfy what
 * afd_calibrate.h states (batch, prompt and sum_p >= 1, kv and context >= 0,
 * sum_p <= sum_p2 <= sum_p^2, t > 0, all finite); a fit refuses with a
 * one-line message or gives finite coefficients, standard errors and scales
 * >= 0, robust weights in [0, 1] and a relative error >= 0; a robust fit
 * that did not converge leaves NaN robust figures and weights. */
#include <config.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "afdkit.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int nonneg(double x)
{
    return x >= 0 && isfinite(x);
}

static void check_lines(const long *line, size_t n)
{
    size_t i;
    for (i = 0; line != NULL && i < n; i++)
        if (line[i] < 2 || (i > 0 && line[i] <= line[i - 1]))
            abort();
}

static void points(const char *path)
{
    afd_points p;
    afd_fit fit;
    afd_error err;
    double *w;
    size_t i;

    if (afd_points_read(path, "x", "t", &p, &err) != AFD_OK) {
        fuzz_check_error(&err);
        return;
    }
    if (p.n == 0)
        abort();
    for (i = 0; i < p.n; i++)
        if (!isfinite(p.x[i]) || !isfinite(p.t[i]))
            abort();
    check_lines(p.line, p.n);
    if ((w = malloc(p.n * sizeof *w)) == NULL)
        abort();
    if (afd_fit_line(p.x, p.t, p.n, &fit, w, &err) == AFD_OK) {
        if (fit.n != p.n || !isfinite(fit.alpha) || !isfinite(fit.beta) ||
            !nonneg(fit.alpha_se) || !nonneg(fit.beta_se) || !nonneg(fit.sigma) ||
            fit.outliers > p.n)
            abort();
        if (fit.robust_converged &&
            (!isfinite(fit.alpha_robust) || !isfinite(fit.beta_robust)))
            abort();
        if (!fit.robust_converged &&
            (!isnan(fit.alpha_robust) || !isnan(fit.beta_robust) || fit.outliers != 0))
            abort();
        for (i = 0; i < p.n; i++)
            if (fit.robust_converged ? !(w[i] >= 0 && w[i] <= 1) : !isnan(w[i]))
                abort();
    } else {
        fuzz_check_error(&err);
    }
    free(w);
    afd_points_free(&p);
}

static void law(const char *path, afd_law_kind kind)
{
    afd_law_points p;
    afd_law_fit fit;
    afd_error err;
    size_t i;

    if (afd_law_points_read(path, kind, "t", &p, &err) != AFD_OK) {
        fuzz_check_error(&err);
        return;
    }
    if (p.n == 0 || p.kind != kind)
        abort();
    for (i = 0; i < p.n; i++) {
        double x1 = p.x1[i], x2 = p.x2[i];
        if (!isfinite(x1) || !isfinite(x2) || !(p.t[i] > 0) || !isfinite(p.t[i]))
            abort();
        if (kind == AFD_LAW_PREFILL && !(x1 >= 1 && x1 <= x2 && x2 <= x1 * x1))
            abort();
        if (kind == AFD_LAW_DECODE && !(x1 >= 1 && x2 >= 0))
            abort();
    }
    check_lines(p.line, p.n);
    if (afd_fit_law(&p, &fit, &err) == AFD_OK) {
        for (i = 0; i < 3; i++)
            if (!isfinite(fit.coef[i]) || !nonneg(fit.se[i]))
                abort();
        if (fit.n != p.n || !nonneg(fit.sigma) || !nonneg(fit.max_rel_err) || fit.worst >= p.n)
            abort();
    } else {
        fuzz_check_error(&err);
    }
    afd_law_points_free(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_temp_file(data, size);
    points(path);
    law(path, AFD_LAW_PREFILL);
    law(path, AFD_LAW_DECODE);
    return 0;
}
