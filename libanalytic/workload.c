/* workload.c: workloads from traces, the geometric model, or given statistics. */
#include <config.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "afd_tail.h"
#include "afd_workload.h"
#include "internal.h"

#define PROGRESS_EVERY (1u << 16)

static void init(afd_workload *w, afd_workload_kind kind)
{
    memset(w, 0, sizeof *w);
    w->kind = kind;
    w->mu_p = w->mu_d = NAN;
    w->tail_alpha = w->tail_alpha_se = NAN;
    afd_arrivals_none(&w->arrivals);
}

const char *afd_workload_kind_name(afd_workload_kind kind)
{
    switch (kind) {
    case AFD_WORKLOAD_TRACE: return "trace";
    case AFD_WORKLOAD_GEOMETRIC: return "geometric";
    case AFD_WORKLOAD_GIVEN: return "given";
    }
    return "unknown";
}

void afd_workload_free(afd_workload *w)
{
    if (w == NULL)
        return;
    free(w->prompt);
    free(w->decode);
    free(w->time);
    w->prompt = w->decode = NULL;
    w->time = NULL;
    w->n_kept = 0;
}

/* Append (p, d) to the kept rows, doubling the arrays as needed. */
static afd_status keep(afd_workload *w, size_t *cap, size_t max_rows, uint64_t p, uint64_t d,
                       int timed, double t)
{
    if (max_rows != 0 && w->n_kept >= max_rows)
        return AFD_ELIMIT;
    if (w->n_kept == *cap) {
        size_t ncap = *cap ? 2 * *cap : 4096;
        uint64_t *np, *nd;
        if (ncap > SIZE_MAX / sizeof(uint64_t))
            return AFD_ENOMEM;
        np = realloc(w->prompt, ncap * sizeof *np);
        if (np == NULL)
            return AFD_ENOMEM;
        w->prompt = np;
        nd = realloc(w->decode, ncap * sizeof *nd);
        if (nd == NULL)
            return AFD_ENOMEM;
        w->decode = nd;
        if (timed) {
            double *nt = realloc(w->time, ncap * sizeof *nt);
            if (nt == NULL)
                return AFD_ENOMEM;
            w->time = nt;
        }
        *cap = ncap;
    }
    w->prompt[w->n_kept] = p;
    w->decode[w->n_kept] = d;
    if (timed)
        w->time[w->n_kept] = t;
    w->n_kept++;
    return AFD_OK;
}

afd_status afd_workload_from_reader(afd_trace *reader, const afd_workload_trace_options *opt,
                                    afd_workload *out, afd_error *err)
{
    static const afd_workload_trace_options defaults;
    afd_renewal_acc *acc;
    afd_hill *hill;
    afd_arrivals_acc *arr = NULL;
    afd_trace_row row;
    int timed;
    afd_status st;
    size_t cap = 0;
    long last_line = 1;

    if (opt == NULL)
        opt = &defaults;
    init(out, AFD_WORKLOAD_TRACE);
    afd_error_clear(err);
    acc = afd_renewal_acc_alloc();
    hill = afd_hill_alloc(AFD_HILL_KMAX);
    timed = afd_trace_time_name(reader) != NULL;
    if (timed)
        arr = afd_arrivals_acc_alloc();
    if (acc == NULL || hill == NULL || (timed && arr == NULL)) {
        afd_renewal_acc_free(acc);
        afd_hill_free(hill);
        afd_arrivals_acc_free(arr);
        return afd_priv_fail(err, AFD_ENOMEM, 0, 0, "out of memory");
    }

    while ((st = afd_trace_next(reader, &row, err)) == AFD_OK) {
        uint64_t d;
        out->rows++;
        last_line = row.line;
        if (opt->progress != NULL && out->rows % PROGRESS_EVERY == 0)
            opt->progress(opt->progress_ctx, out->rows, afd_trace_bytes(reader));
        if (row.output <= opt->decode_offset) {
            if (out->skipped++ == 0)
                out->first_skipped_line = row.line;
            continue;
        }
        d = row.output - opt->decode_offset;
        st = afd_renewal_acc_add(acc, row.prompt, d);
        if (st == AFD_ERANGE) {
            afd_priv_fail(err, st, row.line, 0,
                          "values too large for the exact accumulator: %s=%llu, D=%llu",
                          afd_trace_prompt_name(reader), (unsigned long long)row.prompt,
                          (unsigned long long)d);
            break;
        }
        if (d > out->max_d)
            out->max_d = d;
        afd_hill_add(hill, (double)d);
        if (timed && afd_arrivals_add(arr, row.time, row.line) != AFD_OK) {
            st = afd_priv_fail(err, AFD_EPARSE, row.line, 0, "time '%s' is not finite",
                               afd_trace_time_name(reader));
            break;
        }
        if (opt->keep_rows &&
            (st = keep(out, &cap, opt->max_rows, row.prompt, d, timed, row.time)) != AFD_OK) {
            afd_priv_fail(err, st, row.line, 0,
                          opt->max_rows && out->n_kept >= opt->max_rows
                              ? "trace has more than %zu usable rows, the limit for keeping "
                                "them in memory"
                              : "out of memory keeping %zu rows",
                          opt->max_rows && out->n_kept >= opt->max_rows ? opt->max_rows
                                                                         : out->n_kept);
            break;
        }
    }
    out->filtered = afd_trace_filtered(reader);
    if (st == AFD_EOF) {
        st = AFD_OK;
        if (timed)
            afd_arrivals_stats(arr, &out->arrivals);
        if (out->rows == 0 && out->filtered > 0)
            st = afd_priv_fail(err, AFD_EEMPTY, 0, 0, "no row matches the filters (%llu rows "
                                                      "read)",
                               (unsigned long long)out->filtered);
        else if (out->rows == 0)
            st = afd_priv_fail(err, AFD_EEMPTY, last_line, 0, "no data rows after the header");
        else if (afd_renewal_acc_count(acc) == 0)
            st = afd_priv_fail(err, AFD_EEMPTY, 0, 0,
                               "no usable rows: all %llu data rows have D = %s - %llu <= 0 "
                               "(first on line %ld)",
                               (unsigned long long)out->rows, afd_trace_output_name(reader),
                               (unsigned long long)opt->decode_offset, out->first_skipped_line);
        else
            st = afd_renewal_acc_stats(acc, &out->stats);
        if (st == AFD_OK && out->stats.n >= 11) {
            out->tail_k = afd_hill_default_k(out->stats.n, AFD_HILL_KMAX);
            afd_hill_estimate(hill, out->tail_k, &out->tail_alpha, &out->tail_alpha_se);
        }
    }
    afd_renewal_acc_free(acc);
    afd_hill_free(hill);
    afd_arrivals_acc_free(arr);
    if (st != AFD_OK)
        afd_workload_free(out);
    return st;
}

afd_status afd_workload_from_trace(const char *path, const afd_workload_trace_options *opt,
                                   afd_workload *out, afd_error *err)
{
    afd_trace *reader;
    afd_status st;

    init(out, AFD_WORKLOAD_TRACE);
    st = afd_trace_open(path, opt ? &opt->columns : NULL, &reader, err);
    if (st != AFD_OK)
        return st;
    st = afd_workload_from_reader(reader, opt, out, err);
    afd_trace_close(reader);
    return st;
}

afd_status afd_workload_geometric(double mu_p, double mu_d, afd_workload *out)
{
    init(out, AFD_WORKLOAD_GEOMETRIC);
    out->mu_p = mu_p;
    out->mu_d = mu_d;
    return afd_renewal_geometric(mu_p, mu_d, &out->stats);
}

afd_status afd_workload_given(double theta, double nu, afd_workload *out)
{
    init(out, AFD_WORKLOAD_GIVEN);
    return afd_renewal_given(theta, nu, &out->stats);
}
