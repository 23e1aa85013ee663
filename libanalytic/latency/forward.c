/* forward.c: the kernel model (afd_device.h) against measured whole forward
 * passes, and its parameters fitted to them (see afd_profile.h). */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_multimin.h>

#include "afd_csv.h"
#include "afd_estimate.h"
#include "afd_parse.h"
#include "afd_profile.h"
#include "internal.h"

enum { F_MODEL, F_TP, F_PHASE, F_BATCH, F_TOKENS, F_MS, F_HEAD, F_N };

/* The model column: a preset name, else a config.json path (a relative one
 * taken from the CSV file's directory). */
static afd_status row_model(const char *csv, const char *name, afd_model *m, afd_error *err)
{
    char path[1024];
    const char *slash = strrchr(csv, '/');
    if (afd_model_load(name, m, err) == AFD_OK)
        return AFD_OK;
    if (name[0] == '/' || slash == NULL)
        return afd_model_load(name, m, err);
    snprintf(path, sizeof path, "%.*s/%s", (int)(slash - csv), csv, name);
    return afd_model_load(path, m, err);
}

afd_status afd_forward_read(const char *path, afd_forward *out, afd_error *err)
{
    static const char *const names[F_N] = {"model", "tp", "phase", "batch",
                                           "tokens", "ms", "lm_head_ms"};
    afd_csv *c;
    size_t ncol = F_N, cap = 0, j;
    afd_csv_field f[F_N];
    afd_status st;
    long line;

    afd_error_clear(err);
    out->n = 0;
    out->row = NULL;
    st = afd_csv_open(path, &c, err);
    if (st != AFD_OK)
        return st;
    /* lm_head_ms is optional: ms is then all */
    st = afd_priv_csv_select_names(c, names, F_N, F_HEAD, &ncol, err);
    if (st != AFD_OK)
        goto done;
    while ((st = afd_csv_next(c, f, &line, err)) == AFD_OK) {
        afd_forward_row r;
        double v[F_N] = {0};
        char shown[64], name[256];
        memset(&r, 0, sizeof r);
        r.line = line;
        for (j = F_TP; j < ncol; j++) {
            afd_status ps;
            int ok;
            if (j == F_PHASE)
                continue;
            afd_priv_show(f[j].p, f[j].n, shown, sizeof shown);
            ps = f[j].escaped ? AFD_EPARSE : afd_parse_double_n(f[j].p, f[j].n, &v[j]);
            if (ps != AFD_OK) {
                st = afd_csv_fail(c, err, ps == AFD_ERANGE ? AFD_ERANGE : AFD_EPARSE, line, 0,
                                  "column '%s' is not a number: '%s'", names[j], shown);
                goto done;
            }
            ok = j <= F_TOKENS ? v[j] >= 1 && v[j] <= 1e9 && v[j] == floor(v[j])
                 : j == F_MS   ? v[j] > 0 && isfinite(v[j])
                               : v[j] >= 0 && isfinite(v[j]);
            if (!ok) {
                st = afd_csv_fail(c, err, AFD_EINVAL, line, 0, "column '%s' must be %s: '%s'",
                                  names[j],
                                  j <= F_TOKENS ? "a positive integer"
                                  : j == F_MS   ? "a time > 0"
                                                : "a number >= 0",
                                  shown);
                goto done;
            }
        }
        afd_priv_show(f[F_PHASE].p, f[F_PHASE].n, shown, sizeof shown);
        if (f[F_PHASE].n == 7 && memcmp(f[F_PHASE].p, "prefill", 7) == 0)
            r.phase = AFD_PREFILL;
        else if (f[F_PHASE].n == 6 && memcmp(f[F_PHASE].p, "decode", 6) == 0)
            r.phase = AFD_DECODE;
        else {
            st = afd_csv_fail(c, err, AFD_EINVAL, line, 0,
                              "column 'phase' must be prefill or decode: '%s'", shown);
            goto done;
        }
        if (f[F_MODEL].n == 0 || f[F_MODEL].n >= sizeof name) {
            afd_priv_show(f[F_MODEL].p, f[F_MODEL].n, shown, sizeof shown);
            st = afd_csv_fail(c, err, AFD_EINVAL, line, 0,
                              "column 'model' is empty or too long: '%s'", shown);
            goto done;
        }
        memcpy(name, f[F_MODEL].p, f[F_MODEL].n);
        name[f[F_MODEL].n] = '\0';
        if ((st = row_model(path, name, &r.model, err)) != AFD_OK) {
            afd_error why = *err;
            st = afd_csv_fail(c, err, AFD_EINVAL, line, 0,
                              "model '%.60s' is neither a preset nor a readable config.json: %s",
                              name, why.text);
            goto done;
        }
        r.tp = v[F_TP];
        r.batch = v[F_BATCH];
        r.tokens = v[F_TOKENS];
        r.ms = v[F_MS] + v[F_HEAD];
        if (out->n == cap) {
            size_t ncap = cap ? 2 * cap : 32;
            afd_forward_row *nr = realloc(out->row, ncap * sizeof *nr);
            if (nr == NULL) {
                st = afd_priv_fail(err, AFD_ENOMEM, line, 0, "out of memory");
                goto done;
            }
            out->row = nr;
            cap = ncap;
        }
        out->row[out->n++] = r;
    }
    if (st == AFD_EOF)
        st = out->n > 0 ? AFD_OK
                        : afd_priv_fail(err, AFD_EEMPTY, 1, 0, "no data rows after the header");
done:
    afd_csv_close(c);
    if (st != AFD_OK)
        afd_forward_free(out);
    return st;
}

void afd_forward_free(afd_forward *f)
{
    free(f->row);
    f->row = NULL;
    f->n = 0;
}

afd_status afd_forward_estimate(const afd_device *d, const afd_forward_row *r, double *ms,
                                afd_error *err)
{
    afd_estimate e;
    afd_estimate_options o = {.tp = r->tp, .phase = r->phase, .batch = r->batch,
                              .seq = r->tokens, .no_dispatch = 1};
    afd_status st = afd_estimate_forward(&r->model, d, &o, &e, err);
    *ms = st == AFD_OK ? e.forward_compute_s * 1e3 : NAN;
    return st;
}

/* ---- the fit */

enum { P_FLOOR, P_EW, P_COMPUTE, P_MEMORY, P_N };

typedef struct fwd_fit {
    const afd_forward *f;
    afd_device d0; /* the starting point */
    int failed;
    afd_error err;
} fwd_fit;

/* d0 with the four parameters at exp(x): the floor and the elementwise
 * bandwidth themselves, the compute rates (GEMM, prefill attention) and the
 * memory rates (GEMM weight stream, decode attention's KV stream and its
 * per-CTA stream) each scaled by one factor. */
static afd_device fit_device(const fwd_fit *ff, const double *x)
{
    afd_device d = ff->d0;
    double sc = exp(x[P_COMPUTE]), sm = exp(x[P_MEMORY]);
    d.kernel_floor_us = exp(x[P_FLOOR]);
    d.elementwise_tbps = exp(x[P_EW]);
    d.gemm_tflops *= sc;
    d.attn_prefill_tflops *= sc;
    d.gemm_tbps *= sm;
    d.attn_decode_tbps *= sm;
    d.attn_cta_gbps *= sm;
    return d;
}

/* Huber loss (delta 0.1) of the log errors: quadratic near 0, linear for
 * the outliers a glitched measurement makes. */
static double huber(double r)
{
    double a = fabs(r), dl = 0.1;
    return a <= dl ? r * r : dl * (2 * a - dl);
}

static double fit_loss(const gsl_vector *v, void *params)
{
    fwd_fit *ff = params;
    double x[P_N], sum = 0;
    afd_device d;
    size_t i;
    for (i = 0; i < P_N; i++)
        x[i] = gsl_vector_get(v, i);
    d = fit_device(ff, x);
    for (i = 0; i < ff->f->n; i++) {
        double ms;
        if (afd_forward_estimate(&d, &ff->f->row[i], &ms, &ff->err) != AFD_OK || !(ms > 0)) {
            ff->failed = 1;
            return GSL_POSINF;
        }
        sum += huber(log(ms / ff->f->row[i].ms));
    }
    return sum;
}

/* The kernel model a device without one starts from: h100-sxm's fitted
 * values (docs/estimator.md), the rates scaled by the device's peak and
 * bandwidth against the H100's 989.4 TFLOP/s and 3.35 TB/s. */
static afd_status seed(const afd_device *d, afd_device *out, afd_error *err)
{
    afd_device h;
    afd_status st;
    double c, m;
    *out = *d;
    if (d->kernel_model)
        return AFD_OK;
    if ((st = afd_device_preset_load("h100-sxm", &h, err)) != AFD_OK)
        return st;
    c = d->peak_tflops / h.peak_tflops;
    m = d->hbm_tbps / h.hbm_tbps;
    out->kernel_model = 1;
    out->engine = h.engine;
    out->sm_count = h.sm_count;
    out->kernel_floor_us = h.kernel_floor_us;
    out->gemm_tflops = h.gemm_tflops * c;
    out->gemm_tbps = h.gemm_tbps * m;
    out->gemm_p = h.gemm_p;
    out->gemm_tile_n = h.gemm_tile_n;
    out->gemm_occ_ctas = h.gemm_occ_ctas;
    out->gemm_occ_exp = h.gemm_occ_exp;
    out->attn_prefill_tflops = h.attn_prefill_tflops * c;
    out->attn_tail = h.attn_tail;
    out->attn_cta_us = h.attn_cta_us;
    out->attn_decode_tbps = h.attn_decode_tbps * m;
    out->attn_cta_gbps = h.attn_cta_gbps * m;
    out->attn_decode_p = h.attn_decode_p;
    out->elementwise_tbps = h.elementwise_tbps * m;
    return AFD_OK;
}

afd_status afd_forward_fit(const afd_device *d, const afd_forward *f, afd_device *out,
                           double *loss, afd_error *err)
{
    const gsl_multimin_fminimizer_type *T = gsl_multimin_fminimizer_nmsimplex2;
    gsl_multimin_fminimizer *s = NULL;
    gsl_multimin_function fn;
    gsl_vector *x = NULL, *step = NULL;
    fwd_fit ff;
    afd_status st;
    double best[P_N];
    int restart, iter, i;

    afd_error_clear(err);
    *out = *d;
    if (loss)
        *loss = NAN;
    if (f->n < P_N + 1)
        return afd_priv_fail(err, AFD_EINVAL, 0, 0,
                             "%zu forward passes cannot determine the %d parameters fitted",
                             f->n, P_N);
    if ((st = seed(d, &ff.d0, err)) != AFD_OK)
        return st;
    ff.f = f;
    ff.failed = 0;
    afd_error_clear(&ff.err);
    best[P_FLOOR] = log(ff.d0.kernel_floor_us > 0 ? ff.d0.kernel_floor_us : 1);
    best[P_EW] = log(ff.d0.elementwise_tbps);
    best[P_COMPUTE] = best[P_MEMORY] = 0;
    fn.n = P_N;
    fn.f = fit_loss;
    fn.params = &ff;
    x = gsl_vector_alloc(P_N);
    step = gsl_vector_alloc(P_N);
    s = gsl_multimin_fminimizer_alloc(T, P_N);
    if (x == NULL || step == NULL || s == NULL) {
        st = afd_priv_fail(err, AFD_ENOMEM, 0, 0, "out of memory");
        goto done;
    }
    /* Nelder-Mead on the log-parameters, restarted twice from its best point
     * (a simplex can collapse early) */
    for (restart = 0; restart < 3; restart++) {
        for (i = 0; i < P_N; i++) {
            gsl_vector_set(x, (size_t)i, best[i]);
            gsl_vector_set(step, (size_t)i, 0.1);
        }
        if (gsl_multimin_fminimizer_set(s, &fn, x, step) != GSL_SUCCESS || ff.failed)
            break;
        for (iter = 0; iter < 2000; iter++) {
            if (gsl_multimin_fminimizer_iterate(s) != GSL_SUCCESS)
                break;
            if (gsl_multimin_test_size(gsl_multimin_fminimizer_size(s), 1e-7) == GSL_SUCCESS)
                break;
        }
        for (i = 0; i < P_N; i++)
            best[i] = gsl_vector_get(s->x, (size_t)i);
    }
    if (ff.failed) {
        st = afd_priv_fail(err, AFD_EINVAL, 0, 0, "%s", ff.err.text);
        goto done;
    }
    *out = fit_device(&ff, best);
    if (loss)
        *loss = s->fval;
    st = afd_device_check(out, err);
    if (st != AFD_OK) {
        afd_error why = *err;
        st = afd_priv_fail(err, AFD_ENUMERIC, 0, 0,
                           "the fitted kernel model is implausible (%s): the measurements do "
                           "not determine it",
                           why.text);
        *out = *d;
    }
done:
    gsl_multimin_fminimizer_free(s);
    gsl_vector_free(x);
    gsl_vector_free(step);
    return st;
}
