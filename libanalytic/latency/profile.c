/* profile.c: the estimator against measured kernel times, and the device
 * efficiencies fitted to them (see afd_profile.h). */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_multifit.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "afd_csv.h"
#include "afd_estimate.h"
#include "afd_parse.h"
#include "afd_profile.h"
#include "internal.h"

static const char *const module_names[AFD_PROFILE_NMOD] = {"qkv", "o_proj", "mlp"};

const char *afd_profile_module_name(afd_profile_module k)
{
    return (int)k >= 0 && k < AFD_PROFILE_NMOD ? module_names[k] : NULL;
}

/* ---- reading */

/* Read the named columns of a CSV into rows of ncol doubles; kind[j] says
 * what column j must be: 1 a positive integer, 2 a time > 0, 3 a value >= 0.
 * *vals gets n x ncol values, *lines the line of each row. */
static afd_status read_table(const char *path, size_t ncol, const char *const *names,
                             const int *kind, double **vals, long **lines, size_t *n,
                             afd_error *err)
{
    afd_csv *c;
    size_t cap = 0, j;
    afd_csv_field f[AFD_CSV_MAX_SELECT];
    afd_status st;
    long line;

    *vals = NULL;
    *lines = NULL;
    *n = 0;
    st = afd_csv_open(path, &c, err);
    if (st != AFD_OK)
        return st;
    st = afd_priv_csv_select_names(c, names, ncol, ncol, &j, err);
    if (st != AFD_OK)
        goto done;
    while ((st = afd_csv_next(c, f, &line, err)) == AFD_OK) {
        if (*n == cap) {
            size_t ncap = cap ? 2 * cap : 64;
            double *nv = realloc(*vals, ncap * ncol * sizeof *nv);
            long *nl;
            if (nv == NULL) {
                st = afd_priv_fail(err, AFD_ENOMEM, line, 0, "out of memory");
                goto done;
            }
            *vals = nv;
            nl = realloc(*lines, ncap * sizeof *nl);
            if (nl == NULL) {
                st = afd_priv_fail(err, AFD_ENOMEM, line, 0, "out of memory");
                goto done;
            }
            *lines = nl;
            cap = ncap;
        }
        for (j = 0; j < ncol; j++) {
            double v;
            char shown[64];
            afd_status ps = f[j].escaped ? AFD_EPARSE : afd_parse_double_n(f[j].p, f[j].n, &v);
            int ok;
            afd_priv_show(f[j].p, f[j].n, shown, sizeof shown);
            if (ps != AFD_OK) {
                st = afd_csv_fail(c, err, ps == AFD_ERANGE ? AFD_ERANGE : AFD_EPARSE, line, 0,
                                  "column '%s' is not a number: '%s'", names[j], shown);
                goto done;
            }
            ok = kind[j] == 1 ? (v >= 1 && v <= 1e9 && v == floor(v))
                 : kind[j] == 2 ? (v > 0 && isfinite(v))
                                : (v >= 0 && isfinite(v));
            if (!ok) {
                st = afd_csv_fail(c, err, AFD_EINVAL, line, 0, "column '%s' must be %s: '%s'",
                                  names[j],
                                  kind[j] == 1   ? "a positive integer"
                                  : kind[j] == 2 ? "a time > 0"
                                                 : "a number >= 0",
                                  shown);
                goto done;
            }
            (*vals)[*n * ncol + j] = v;
        }
        (*lines)[*n] = line;
        (*n)++;
    }
    if (st == AFD_EOF)
        st = *n > 0 ? AFD_OK : afd_priv_fail(err, AFD_EEMPTY, 1, 0, "no data rows after the header");
done:
    afd_csv_close(c);
    if (st != AFD_OK) {
        free(*vals);
        free(*lines);
        *vals = NULL;
        *lines = NULL;
        *n = 0;
    }
    return st;
}

enum { C_HEAD, C_KV, C_EMBD, C_EXP, C_TOK, C_TP, C_PRE, C_POST, C_UP, C_ACT, C_DOWN, C_N };

afd_status afd_profile_read(const char *path, afd_profile *out, afd_error *err)
{
    static const char *const names[C_N] = {
        "n_head", "n_kv_head", "n_embd", "n_expanded_embd", "num_tokens",
        "num_tensor_parallel_workers", "time_stats.attn_pre_proj.median",
        "time_stats.attn_post_proj.median", "time_stats.mlp_up_proj.median",
        "time_stats.mlp_act.median", "time_stats.mlp_down_proj.median"};
    static const int kind[C_N] = {1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2};
    double *v;
    long *lines;
    size_t n, i;
    afd_status st;

    afd_error_clear(err);
    memset(out, 0, sizeof *out);
    st = read_table(path, C_N, names, kind, &v, &lines, &n, err);
    if (st != AFD_OK)
        return st;
    out->row = calloc(n, sizeof *out->row);
    if (out->row == NULL) {
        free(v);
        free(lines);
        return afd_priv_fail(err, AFD_ENOMEM, 0, 0, "out of memory");
    }
    for (i = 0; i < n; i++) {
        const double *r = v + i * C_N;
        afd_profile_row *o = &out->row[i];
        o->line = lines[i];
        o->heads = r[C_HEAD];
        o->kv_heads = r[C_KV];
        o->hidden = r[C_EMBD];
        o->intermediate = r[C_EXP];
        o->tokens = r[C_TOK];
        o->tp = r[C_TP];
        o->ms[AFD_PROFILE_QKV] = r[C_PRE];
        o->ms[AFD_PROFILE_OPROJ] = r[C_POST];
        o->ms[AFD_PROFILE_MLP] = r[C_UP] + r[C_ACT] + r[C_DOWN];
    }
    out->n = n;
    free(v);
    free(lines);
    return AFD_OK;
}

void afd_profile_free(afd_profile *p)
{
    if (p == NULL)
        return;
    free(p->row);
    p->row = NULL;
    p->n = 0;
}

afd_status afd_allreduce_read(const char *path, afd_allreduce_profile *out, afd_error *err)
{
    static const char *const names[3] = {"num_workers", "size",
                                         "time_stats.all_reduce.median"};
    static const int kind[3] = {1, 1, 2};
    double *v;
    long *lines;
    size_t n, i;
    afd_status st;

    afd_error_clear(err);
    memset(out, 0, sizeof *out);
    st = read_table(path, 3, names, kind, &v, &lines, &n, err);
    if (st != AFD_OK)
        return st;
    out->row = calloc(n, sizeof *out->row);
    if (out->row == NULL) {
        free(v);
        free(lines);
        return afd_priv_fail(err, AFD_ENOMEM, 0, 0, "out of memory");
    }
    for (i = 0; i < n; i++) {
        out->row[i].line = lines[i];
        out->row[i].workers = v[3 * i];
        out->row[i].bytes = v[3 * i + 1];
        out->row[i].ms = v[3 * i + 2];
    }
    out->n = n;
    free(v);
    free(lines);
    return AFD_OK;
}

void afd_allreduce_free(afd_allreduce_profile *p)
{
    if (p == NULL)
        return;
    free(p->row);
    p->row = NULL;
    p->n = 0;
}

/* ---- the estimator's modules */

afd_status afd_profile_row_matches(const afd_profile_row *r, const afd_model *m, afd_error *err)
{
    static const char *const what[4] = {"n_embd (hidden_size)", "n_head (num_attention_heads)",
                                        "n_kv_head (num_key_value_heads)",
                                        "n_expanded_embd (intermediate_size)"};
    double got[4] = {r->hidden, r->heads, r->kv_heads, r->intermediate};
    double want[4] = {m->hidden, m->heads, m->kv_heads, m->intermediate};
    int i;
    afd_error_clear(err);
    if (m->moe || m->mla)
        return afd_priv_fail(err, AFD_EINVAL, r->line, 0,
                             "model %s is not a dense LLaMA-family model", m->name);
    for (i = 0; i < 4; i++)
        if (got[i] != want[i])
            return afd_priv_fail(err, AFD_EINVAL, r->line, 0,
                                 "%s is %g but model %s has %g: measured on another model", what[i],
                                 got[i], m->name, want[i]);
    return AFD_OK;
}

static int in_module(const afd_estimate_op *o, afd_profile_module k)
{
    /* the roofline's operators, then the kernel model's kernels */
    static const char *const qkv[] = {"q_proj", "k_proj", "v_proj", "qkv", NULL};
    static const char *const oproj[] = {"o_proj", NULL};
    static const char *const mlp[] = {"gate_proj", "silu", "up_proj", "mul", "down_proj",
                                      "gate_up", "silu_and_mul", "down", NULL};
    const char *const *names = k == AFD_PROFILE_QKV ? qkv : k == AFD_PROFILE_OPROJ ? oproj : mlp;
    const char *module = k == AFD_PROFILE_MLP ? "mlp" : "attention";
    size_t i;
    if (strcmp(o->module, module) != 0)
        return 0;
    for (i = 0; names[i]; i++)
        if (strcmp(o->name, names[i]) == 0)
            return 1;
    return 0;
}

afd_status afd_profile_estimate(const afd_model *m, const afd_device *d, double tp,
                                double tokens, afd_profile_module k, double *ms,
                                int *memory_bound, afd_error *err)
{
    afd_estimate e;
    afd_estimate_options o = {.tp = tp, .phase = AFD_PREFILL, .batch = 1, .seq = tokens,
                              .no_dispatch = 1};
    afd_status st;
    size_t i;
    int ncomp = 0, nmem = 0;

    *ms = NAN;
    if (memory_bound)
        *memory_bound = 0;
    if ((int)k < 0 || k >= AFD_PROFILE_NMOD)
        return afd_priv_fail(err, AFD_EINVAL, 0, 0, "unknown module %d", (int)k);
    if (m->moe || m->mla)
        return afd_priv_fail(err, AFD_EINVAL, 0, 0,
                             "model %s is not a dense LLaMA-family model", m->name);
    st = afd_estimate_forward(m, d, &o, &e, err);
    if (st != AFD_OK)
        return st;
    *ms = 0;
    for (i = 0; i < e.n_ops; i++)
        if (in_module(&e.ops[i], k)) {
            *ms += e.ops[i].time_s * 1e3;
            if (e.ops[i].compute_bound)
                ncomp++;
            else
                nmem++;
        }
    if (memory_bound)
        *memory_bound = ncomp == 0 ? 1 : nmem == 0 ? -1 : 0;
    return AFD_OK;
}

/* ---- fitting mfu and mbu (and kernel_us, roofline_p) */

typedef struct fit_data {
    const afd_model *m;
    afd_device d;
    const afd_profile *p;
    const size_t *rows; /* indices of the fitted rows */
    size_t nrows;
    int terms;          /* AFD_PROFILE_FIT_* */
    int failed;
    afd_error err;
} fit_data;

static void set_eff(afd_device *d, double mfu, double mbu)
{
    d->mfu[0] = d->mfu[1] = mfu;
    d->mbu[0] = d->mbu[1] = mbu;
}

/* The parameters: x0 = ln mfu, x1 = ln mbu, then (when fitted) kernel_us
 * itself and ln(roofline_p - 1), so that the efficiencies stay positive and
 * p above 1. */
static void set_params(fit_data *fd, const gsl_vector *x)
{
    size_t j = 2;
    set_eff(&fd->d, exp(gsl_vector_get(x, 0)), exp(gsl_vector_get(x, 1)));
    if (fd->terms & AFD_PROFILE_FIT_KERNEL)
        fd->d.kernel_us = gsl_vector_get(x, j++);
    if (fd->terms & AFD_PROFILE_FIT_ROOFLINE_P)
        fd->d.roofline_p = 1 + exp(gsl_vector_get(x, j));
}

/* r_{3i+k} = ln(t_est / t_meas) at the parameters x. */
static int residuals(const gsl_vector *x, void *params, gsl_vector *f)
{
    fit_data *fd = params;
    size_t i;
    int k;
    set_params(fd, x);
    for (i = 0; i < fd->nrows; i++) {
        const afd_profile_row *r = &fd->p->row[fd->rows[i]];
        for (k = 0; k < AFD_PROFILE_NMOD; k++) {
            double t;
            if (afd_profile_estimate(fd->m, &fd->d, r->tp, r->tokens, (afd_profile_module)k, &t,
                                     NULL, &fd->err) != AFD_OK) {
                fd->failed = 1;
                return GSL_EDOM;
            }
            if (!(t > 0)) /* a negative kernel_us on the way */
                return GSL_EDOM;
            gsl_vector_set(f, 3 * i + (size_t)k, log(t / r->ms[k]));
        }
    }
    return GSL_SUCCESS;
}

afd_status afd_profile_fit(const afd_model *m, const afd_device *d, const afd_profile *p,
                           double tp, double *mfu, double *mbu, double *rms, afd_error *err)
{
    afd_device out;
    afd_status st = afd_profile_fit_terms(m, d, p, tp, 0, &out, rms, err);
    *mfu = st == AFD_OK ? out.mfu[0] : NAN;
    *mbu = st == AFD_OK ? out.mbu[0] : NAN;
    return st;
}

afd_status afd_profile_fit_terms(const afd_model *m, const afd_device *d, const afd_profile *p,
                                 double tp, int terms, afd_device *out, double *rms,
                                 afd_error *err)
{
    fit_data fd;
    size_t *rows = NULL, i, nres, npar;
    gsl_multifit_nlinear_workspace *w = NULL;
    gsl_multifit_nlinear_fdf fdf;
    gsl_multifit_nlinear_parameters fp = gsl_multifit_nlinear_default_parameters();
    gsl_vector *x0 = NULL;
    afd_status st = AFD_OK;
    int info, rc, ncomp = 0, nmem = 0, k;
    double chisq;

    afd_error_clear(err);
    *out = *d;
    set_eff(out, NAN, NAN);
    if (rms)
        *rms = NAN;
    if (!(tp >= 0) || tp != floor(tp))
        return afd_priv_fail(err, AFD_EINVAL, 0, 0, "tensor-parallel size must be an integer >= 0: %g", tp);
    if (terms & ~(AFD_PROFILE_FIT_KERNEL | AFD_PROFILE_FIT_ROOFLINE_P))
        return afd_priv_fail(err, AFD_EINVAL, 0, 0, "unknown terms to fit: %d", terms);
    npar = 2 + ((terms & AFD_PROFILE_FIT_KERNEL) != 0) + ((terms & AFD_PROFILE_FIT_ROOFLINE_P) != 0);
    rows = malloc((p->n ? p->n : 1) * sizeof *rows);
    if (rows == NULL)
        return afd_priv_fail(err, AFD_ENOMEM, 0, 0, "out of memory");
    fd.nrows = 0;
    for (i = 0; i < p->n; i++) {
        if ((st = afd_profile_row_matches(&p->row[i], m, err)) != AFD_OK)
            goto done;
        if (tp == 0 || p->row[i].tp == tp)
            rows[fd.nrows++] = i;
    }
    if (fd.nrows == 0) {
        st = afd_priv_fail(err, AFD_EINVAL, 0, 0, "no measurements at tensor-parallel size %g", tp);
        goto done;
    }
    fd.m = m;
    fd.d = *d;
    fd.d.kernel_model = 0; /* the roofline's efficiencies: the kernel model has none */
    fd.p = p;
    fd.rows = rows;
    fd.terms = terms;
    fd.failed = 0;
    afd_error_clear(&fd.err);
    nres = 3 * fd.nrows;
    if (nres <= npar) {
        st = afd_priv_fail(err, AFD_EINVAL, 0, 0,
                           "%zu measurements cannot determine %zu parameters", nres, npar);
        goto done;
    }

    fdf.f = residuals;
    fdf.df = NULL; /* forward differences: the roofline's max has kinks */
    fdf.fvv = NULL;
    fdf.n = nres;
    fdf.p = npar;
    fdf.params = &fd;
    fp.trs = gsl_multifit_nlinear_trs_lm;
    w = gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &fp, nres, npar);
    x0 = gsl_vector_alloc(npar);
    if (w == NULL || x0 == NULL) {
        st = afd_priv_fail(err, AFD_ENOMEM, 0, 0, "out of memory");
        goto done;
    }
    /* start: efficiencies 0.5, 1 us per kernel, p = 4 */
    gsl_vector_set(x0, 0, log(0.5));
    gsl_vector_set(x0, 1, log(0.5));
    i = 2;
    if (terms & AFD_PROFILE_FIT_KERNEL)
        gsl_vector_set(x0, i++, 1);
    if (terms & AFD_PROFILE_FIT_ROOFLINE_P)
        gsl_vector_set(x0, i, log(3.0));
    rc = gsl_multifit_nlinear_init(x0, &fdf, w);
    if (rc == GSL_SUCCESS)
        rc = gsl_multifit_nlinear_driver(500, 1e-12, 1e-12, 1e-12, NULL, NULL, &info, w);
    if (fd.failed) {
        st = fd.err.text[0] ? afd_priv_fail(err, AFD_EINVAL, 0, 0, "%s", fd.err.text) : AFD_EINVAL;
        goto done;
    }
    if (rc != GSL_SUCCESS) {
        st = afd_priv_fail(err, AFD_ENUMERIC, 0, 0, "nonlinear least squares failed: %s",
                           gsl_strerror(rc));
        goto done;
    }
    {
        double e_c, e_m;
        /* Both bounds must be reached by some operator at the fit, else the
         * efficiency of the other bound is not determined by the data. */
        set_params(&fd, w->x);
        e_c = fd.d.mfu[0];
        e_m = fd.d.mbu[0];
        for (i = 0; i < fd.nrows; i++)
            for (k = 0; k < AFD_PROFILE_NMOD; k++) {
                double t;
                int mb;
                const afd_profile_row *r = &p->row[rows[i]];
                if ((st = afd_profile_estimate(m, &fd.d, r->tp, r->tokens, (afd_profile_module)k,
                                               &t, &mb, err)) != AFD_OK)
                    goto done;
                ncomp += mb <= 0;
                nmem += mb >= 0;
            }
        if (ncomp == 0 || nmem == 0) {
            st = afd_priv_fail(err, AFD_EINVAL, 0, 0,
                               "every measured module is %s-bound: the %s cannot be fitted "
                               "(give token counts from 1 to 512 or more)",
                               ncomp == 0 ? "memory" : "compute", ncomp == 0 ? "mfu" : "mbu");
            goto done;
        }
        if (e_c > 1 || e_m > 1) {
            st = afd_priv_fail(err, AFD_EINVAL, 0, 0,
                               "fitted %s = %.3g exceeds 1: the kernels ran faster than the "
                               "device's %s %g allows", e_c > 1 ? "mfu" : "mbu",
                               e_c > 1 ? e_c : e_m, e_c > 1 ? "peak_tflops" : "hbm_tbps",
                               e_c > 1 ? d->peak_tflops : d->hbm_tbps);
            goto done;
        }
        if (!(fd.d.kernel_us >= 0)) {
            st = afd_priv_fail(err, AFD_EINVAL, 0, 0,
                               "fitted kernel_us = %.3g is negative: the kernels ran faster "
                               "than the roofline allows at small sizes", fd.d.kernel_us);
            goto done;
        }
        if ((terms & AFD_PROFILE_FIT_ROOFLINE_P) && !(fd.d.roofline_p <= 1000)) {
            st = afd_priv_fail(err, AFD_EINVAL, 0, 0,
                               "fitted roofline_p = %.3g is above 1000: the measurements "
                               "follow the max of the two bounds (leave roofline_p out)",
                               fd.d.roofline_p);
            goto done;
        }
        gsl_blas_ddot(w->f, w->f, &chisq);
        *out = fd.d;
        if (rms)
            *rms = sqrt(chisq / (double)nres);
    }
done:
    gsl_vector_free(x0);
    if (w)
        gsl_multifit_nlinear_free(w);
    free(rows);
    return st;
}

/* ---- fitting comm_eff and comm_latency_ms */

afd_status afd_profile_fit_allreduce(const afd_device *d, const afd_allreduce_profile *p,
                                     double tp, double *comm_eff, double *latency_ms,
                                     afd_error *err)
{
    afd_device unit = *d;
    gsl_matrix *X = NULL, *cov = NULL;
    gsl_vector *y = NULL, *wt = NULL, *c = NULL;
    gsl_multifit_linear_workspace *ws = NULL;
    afd_status st = AFD_OK;
    size_t i, n = 0, j;
    double chisq, xlo = INFINITY, xhi = -INFINITY, slope, icpt;
    int pass;

    afd_error_clear(err);
    *comm_eff = *latency_ms = NAN;
    if (!(tp >= 0) || tp != floor(tp) || tp == 1)
        return afd_priv_fail(err, AFD_EINVAL, 0, 0,
                             "tensor-parallel size must be 0 (all) or an integer >= 2: %g", tp);
    /* x = the estimator's all-reduce time at comm_eff 1 and no latency: the
     * ring over the link, which comm_eff and comm_latency_ms parametrise,
     * even where the device carries measured all-reduce laws (they would
     * replace the ring) */
    unit.comm_eff[0] = unit.comm_eff[1] = 1;
    unit.comm_latency_ms = 0;
    for (j = 0; j < 3; j++)
        unit.allreduce_us[j] = unit.allreduce_gbps[j] = NAN;
    for (i = 0; i < p->n; i++)
        if (p->row[i].workers >= 2 && (tp == 0 || p->row[i].workers == tp)) {
            double x = afd_estimate_allreduce_ms(&unit, AFD_PREFILL, p->row[i].workers,
                                                 p->row[i].bytes);
            n++;
            xlo = fmin(xlo, x);
            xhi = fmax(xhi, x);
        }
    if (n < 2 || !(xhi > xlo))
        return afd_priv_fail(err, AFD_EINVAL, 0, 0,
                             "need all-reduce times of at least two message sizes%s%.15g workers",
                             tp == 0 ? " among >= 2" : " among ", tp == 0 ? 2 : tp);
    X = gsl_matrix_alloc(n, 2);
    cov = gsl_matrix_alloc(2, 2);
    y = gsl_vector_alloc(n);
    wt = gsl_vector_alloc(n);
    c = gsl_vector_alloc(2);
    ws = gsl_multifit_linear_alloc(n, 2);
    if (!X || !cov || !y || !wt || !c || !ws) {
        st = afd_priv_fail(err, AFD_ENOMEM, 0, 0, "out of memory");
        goto done;
    }
    for (i = 0, j = 0; i < p->n; i++)
        if (p->row[i].workers >= 2 && (tp == 0 || p->row[i].workers == tp)) {
            double t = p->row[i].ms;
            gsl_matrix_set(X, j, 0, 1);
            gsl_matrix_set(X, j, 1,
                           afd_estimate_allreduce_ms(&unit, AFD_PREFILL, p->row[i].workers,
                                                     p->row[i].bytes));
            gsl_vector_set(y, j, t);
            gsl_vector_set(wt, j, 1 / (t * t));
            j++;
        }
    /* Pass 0 fits intercept and slope; pass 1 (negative intercept) the
     * slope alone, through the origin. */
    for (pass = 0; pass < 2; pass++) {
        int rc;
        if (pass == 0)
            rc = gsl_multifit_wlinear(X, wt, y, c, cov, &chisq, ws);
        else {
            gsl_matrix_view x1 = gsl_matrix_submatrix(X, 0, 1, n, 1);
            gsl_vector_view c1 = gsl_vector_subvector(c, 1, 1);
            gsl_matrix_view cov1 = gsl_matrix_submatrix(cov, 0, 0, 1, 1);
            gsl_multifit_linear_workspace *w1 = gsl_multifit_linear_alloc(n, 1);
            if (w1 == NULL) {
                st = afd_priv_fail(err, AFD_ENOMEM, 0, 0, "out of memory");
                goto done;
            }
            rc = gsl_multifit_wlinear(&x1.matrix, wt, y, &c1.vector, &cov1.matrix, &chisq, w1);
            gsl_multifit_linear_free(w1);
            gsl_vector_set(c, 0, 0);
        }
        if (rc != GSL_SUCCESS) {
            st = afd_priv_fail(err, AFD_ENUMERIC, 0, 0, "least squares failed: %s",
                               gsl_strerror(rc));
            goto done;
        }
        if (gsl_vector_get(c, 0) >= 0)
            break;
    }
    icpt = gsl_vector_get(c, 0);
    slope = gsl_vector_get(c, 1);
    if (!(slope >= 1)) {
        st = afd_priv_fail(err, AFD_EINVAL, 0, 0,
                           "fitted comm_eff = %.3g is outside (0, 1]: the all-reduce ran "
                           "faster than net_gbps %g allows, or its time does not grow with size",
                           1 / slope, d->net_gbps);
        goto done;
    }
    *comm_eff = 1 / slope;
    *latency_ms = icpt;
done:
    gsl_multifit_linear_free(ws);
    gsl_vector_free(c);
    gsl_vector_free(wt);
    gsl_vector_free(y);
    gsl_matrix_free(cov);
    gsl_matrix_free(X);
    return st;
}

void afd_profile_error_stats(const double *rel_err, size_t n, double *median_abs, double *max_abs)
{
    double *a;
    size_t i;
    *median_abs = *max_abs = NAN;
    if (n == 0 || (a = malloc(n * sizeof *a)) == NULL)
        return;
    for (i = 0; i < n; i++)
        a[i] = fabs(rel_err[i]);
    gsl_sort(a, 1, n);
    *median_abs = gsl_stats_median_from_sorted_data(a, 1, n);
    *max_abs = a[n - 1];
    free(a);
}
