/* test_workload.c: the workload abstraction, the generic CSV reader, the
 * status helpers and P(M_r > z), each against an independent computation. */
#include <config.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_sf_erf.h>

#include "test_util.h"

#include "afdkit.h"

/* The bundled traces, read with fscanf (not the library's reader), summed
 * over every decode step: theta = mean load over all steps, nu its sd. */
static void brute_force_file(const char *path, long double *theta, long double *nu,
                             unsigned long *n)
{
    FILE *f = fopen(path, "r");
    char line[256];
    long double s1 = 0, s2 = 0, steps = 0;
    assert_non_null(f);
    *n = 0;
    assert_non_null(fgets(line, sizeof line, f)); /* header */
    while (fgets(line, sizeof line, f) != NULL) {
        unsigned long p, d, a;
        char *c1 = strchr(line, ','), *c2 = c1 ? strchr(c1 + 1, ',') : NULL;
        assert_non_null(c2);
        p = strtoul(c1 + 1, NULL, 10);
        d = strtoul(c2 + 1, NULL, 10);
        if (d == 0)
            continue;
        for (a = 0; a < d; a++) {
            long double y = (long double)(p + a);
            s1 += y;
            s2 += y * y;
        }
        steps += d;
        (*n)++;
    }
    fclose(f);
    *theta = s1 / steps;
    *nu = sqrtl(s2 / steps - *theta * *theta);
}

static void azure_traces_step_by_step(void **state)
{
    static const char *const names[] = {"AzureLLMInferenceTrace_conv.csv",
                                        "AzureLLMInferenceTrace_code.csv"};
    const char *dir = getenv("NBDATA");
    size_t k;
    (void)state;
    if (dir == NULL)
        skip();
    for (k = 0; k < 2; k++) {
        char path[4096];
        afd_workload w;
        afd_error err;
        afd_workload_trace_options opt;
        long double theta, nu;
        unsigned long n;
        snprintf(path, sizeof path, "%s/%s", dir, names[k]);
        brute_force_file(path, &theta, &nu, &n);
        memset(&opt, 0, sizeof opt);
        opt.keep_rows = 1;
        assert_int_equal(afd_workload_from_trace(path, &opt, &w, &err), AFD_OK);
        assert_int_equal(w.kind, AFD_WORKLOAD_TRACE);
        assert_string_equal(afd_workload_kind_name(w.kind), "trace");
        assert_true(w.stats.n == n);
        assert_true(w.n_kept == n);
        assert_close(w.stats.theta, (double)theta, 1e-13, 0);
        assert_close(w.stats.nu, (double)nu, 1e-9, 0);
        assert_true(w.skipped == 0);
        afd_workload_free(&w);
        assert_null(w.prompt);
        assert_int_equal(w.n_kept, 0);
        assert_close(w.stats.theta, (double)theta, 1e-13, 0); /* stats survive free */
    }
}

static void workload_from_reader_options(void **state)
{
    static const char csv[] = "prompt_tokens,output_tokens\n10,2\n0,4\n5,1\n7,0\n";
    afd_workload_trace_options opt;
    afd_workload w;
    afd_trace *t;
    afd_error err;
    (void)state;
    memset(&opt, 0, sizeof opt);
    opt.decode_offset = 1; /* D = output - 1: rows (10,1), (0,3) kept */
    opt.keep_rows = 1;
    assert_int_equal(afd_trace_open_memory(csv, strlen(csv), NULL, &t, &err), AFD_OK);
    assert_int_equal(afd_workload_from_reader(t, &opt, &w, &err), AFD_OK);
    afd_trace_close(t);
    assert_true(w.rows == 4);
    assert_true(w.skipped == 2);
    assert_int_equal(w.first_skipped_line, 4);
    assert_true(w.max_d == 3);
    assert_int_equal(w.n_kept, 2);
    assert_true(w.prompt[1] == 0 && w.decode[1] == 3);
    /* the row keeps its empty prompt, which counts one token: loads 10 and
     * 1, 2, 3, so theta = 16/4 and E[Y^2] = (100 + 1 + 4 + 9)/4 (by hand) */
    assert_close(w.stats.theta, 4, 1e-15, 0);
    assert_close(w.stats.ey2, 114.0 / 4, 1e-15, 0);
    assert_close(w.stats.mean_p, 11.0 / 2, 1e-15, 0);
    afd_workload_free(&w);
    /* the row limit refuses more than max_rows kept rows */
    opt.max_rows = 1;
    assert_int_equal(afd_trace_open_memory(csv, strlen(csv), NULL, &t, &err), AFD_OK);
    assert_int_equal(afd_workload_from_reader(t, &opt, &w, &err), AFD_ELIMIT);
    afd_trace_close(t);
    assert_null(w.prompt);
    assert_int_equal(err.line, 3);
}

/* no_moments: a row of 2^64 - 1 tokens, beyond the exact accumulator of
 * theta and nu (AFD_ERANGE without the option), is read and its pair kept;
 * theta, nu and the tail index are NaN, the count is that of the rows used. */
static void workload_no_moments(void **state)
{
    static const char csv[] = "prompt_tokens,output_tokens\n18446744073709551615,"
                              "18446744073709551615\n7,3\n2,0\n";
    afd_workload_trace_options opt;
    afd_workload w;
    afd_trace *t;
    afd_error err;
    (void)state;
    memset(&opt, 0, sizeof opt);
    opt.keep_pairs = 1;
    assert_int_equal(afd_trace_open_memory(csv, strlen(csv), NULL, &t, &err), AFD_OK);
    assert_int_equal(afd_workload_from_reader(t, &opt, &w, &err), AFD_ERANGE);
    afd_trace_close(t);
    assert_int_equal(err.line, 2);
    opt.no_moments = 1;
    assert_int_equal(afd_trace_open_memory(csv, strlen(csv), NULL, &t, &err), AFD_OK);
    assert_int_equal(afd_workload_from_reader(t, &opt, &w, &err), AFD_OK);
    afd_trace_close(t);
    assert_true(w.rows == 3 && w.skipped == 1 && w.stats.n == 2);
    assert_true(w.max_d == UINT64_MAX);
    assert_true(isnan(w.stats.theta) && isnan(w.stats.nu) && isnan(w.stats.mean_d));
    assert_true(isnan(w.tail_alpha));
    assert_int_equal(w.n_pairs, 2);
    assert_true(w.pairs[0].prompt == 7 && w.pairs[0].decode == 3 && w.pairs[0].count == 1);
    assert_true(w.pairs[1].prompt == UINT64_MAX && w.pairs[1].decode == UINT64_MAX);
    afd_workload_free(&w);
}

/* keep_pairs: M = 300,000 distinct pairs (P, D) = (i mod 1000, 1 + i / 1000),
 * written three times over in a scrambled order (row r holds pair
 * (7 r) mod M: 7 is prime to M, so each round of M rows visits every pair
 * once), so every pair has count 3 and, sorted by P then D, pair j is
 * (j / 300, 1 + j mod 300).  More than the 2^18 pairs the counting table
 * holds before a merge, so the merges are exercised. */
static void workload_keeps_pairs(void **state)
{
    enum { M = 300000, ROUNDS = 3 };
    size_t cap = (size_t)ROUNDS * M * 16 + 64, len, j;
    char *csv = malloc(cap);
    afd_workload_trace_options opt;
    afd_workload w;
    afd_trace *t;
    afd_error err;
    uint64_t r;
    int ok = 1;
    (void)state;
    assert_non_null(csv);
    len = (size_t)snprintf(csv, cap, "prompt_tokens,output_tokens\n");
    for (r = 0; r < (uint64_t)ROUNDS * M; r++) {
        uint64_t i = 7 * r % M;
        len += (size_t)snprintf(csv + len, cap - len, "%llu,%llu\n",
                                (unsigned long long)(i % 1000), (unsigned long long)(1 + i / 1000));
    }
    memset(&opt, 0, sizeof opt);
    opt.keep_pairs = 1;
    assert_int_equal(afd_trace_open_memory(csv, len, NULL, &t, &err), AFD_OK);
    assert_int_equal(afd_workload_from_reader(t, &opt, &w, &err), AFD_OK);
    afd_trace_close(t);
    assert_true(w.stats.n == (uint64_t)ROUNDS * M);
    assert_null(w.prompt);
    assert_int_equal(w.n_kept, 0);
    assert_int_equal(w.n_pairs, M);
    for (j = 0; j < M; j++)
        ok &= w.pairs[j].prompt == j / 300 && w.pairs[j].decode == 1 + j % 300 &&
              w.pairs[j].count == ROUNDS;
    assert_true(ok);
    assert_int_equal(afd_workload_entries(&w), M);
    assert_true(afd_workload_entry(&w, 301).prompt == 1 && afd_workload_entry(&w, 301).decode == 2);
    afd_workload_free(&w);
    assert_null(w.pairs);
    assert_int_equal(w.n_pairs, 0);
    /* the limit counts distinct pairs, not rows */
    opt.max_pairs = M;
    assert_int_equal(afd_trace_open_memory(csv, len, NULL, &t, &err), AFD_OK);
    assert_int_equal(afd_workload_from_reader(t, &opt, &w, &err), AFD_OK);
    afd_trace_close(t);
    afd_workload_free(&w);
    opt.max_pairs = M - 1;
    assert_int_equal(afd_trace_open_memory(csv, len, NULL, &t, &err), AFD_OK);
    assert_int_equal(afd_workload_from_reader(t, &opt, &w, &err), AFD_ELIMIT);
    afd_trace_close(t);
    assert_null(w.pairs);
    assert_non_null(strstr(err.text, "distinct (P, D) pairs"));
    free(csv);
}

/* Histograms (afd_hist.h) against counts by hand.  The trace: D = 1, 2, 2,
 * 2, 10, 1 (P = 0, 7, 7, 7, 100, 0), kept as rows and as distinct pairs
 * {(0, 1) x 2, (7, 2) x 3, (100, 10) x 1}: six requests, mean D 3, mean P 121/6. */
static void fill_hist_trace(afd_workload *rows, afd_workload *pairs)
{
    static uint64_t rp[] = {0, 7, 7, 7, 100, 0}, rd[] = {1, 2, 2, 2, 10, 1};
    static afd_workload_pair pp[] = {{0, 1, 2}, {7, 2, 3}, {100, 10, 1}};
    memset(rows, 0, sizeof *rows);
    rows->kind = AFD_WORKLOAD_TRACE;
    rows->prompt = rp;
    rows->decode = rd;
    rows->n_kept = 6;
    memset(pairs, 0, sizeof *pairs);
    pairs->kind = AFD_WORKLOAD_TRACE;
    pairs->pairs = pp;
    pairs->n_pairs = 3;
}

static void hist_by_hand(void **state)
{
    afd_workload rows, pairs;
    afd_workload *ws[2];
    afd_hist_spec spec;
    afd_hist h;
    int k;
    (void)state;
    fill_hist_trace(&rows, &pairs);
    ws[0] = &rows;
    ws[1] = &pairs;
    for (k = 0; k < 2; k++) {
        /* D in bins of 3 from 1: [1,3] [4,6] [7,9] [10,10] (the last clamped at max) */
        memset(&spec, 0, sizeof spec);
        spec.width = 3;
        assert_int_equal(afd_hist_workload(ws[k], &spec, &h), AFD_OK);
        assert_int_equal(h.n, 4);
        assert_true(h.total == 6 && h.max == 10);
        assert_close(h.mean, 3, 1e-15, 0);
        assert_true(h.bin[0].lo == 1 && h.bin[0].hi == 3 && h.bin[0].count == 5);
        assert_true(h.bin[1].lo == 4 && h.bin[1].hi == 6 && h.bin[1].count == 0);
        assert_true(h.bin[2].lo == 7 && h.bin[2].hi == 9 && h.bin[2].count == 0);
        assert_true(h.bin[3].lo == 10 && h.bin[3].hi == 10 && h.bin[3].count == 1);
        afd_hist_free(&h);
        /* P in log bins, 3 per decade: {0}, then the edges ceil(10^(i/3)) =
           3, 5, 10, 22, 47, 100, 216: [1,2] [3,4] [5,9] [10,21] [22,46]
           [47,99] [100,100] */
        spec.prompt = 1;
        spec.width = 0;
        spec.per_decade = 3;
        assert_int_equal(afd_hist_workload(ws[k], &spec, &h), AFD_OK);
        assert_int_equal(h.n, 8);
        assert_close(h.mean, 121.0 / 6, 1e-15, 0);
        {
            static const uint64_t lo[] = {0, 1, 3, 5, 10, 22, 47, 100},
                                  hi[] = {0, 2, 4, 9, 21, 46, 99, 100},
                                  cnt[] = {2, 0, 0, 3, 0, 0, 0, 1};
            size_t i;
            for (i = 0; i < 8; i++)
                assert_true(h.bin[i].lo == lo[i] && h.bin[i].hi == hi[i] &&
                            h.bin[i].count == cnt[i]);
        }
        afd_hist_free(&h);
        assert_null(h.bin);
    }
    /* the bin limit: D up to 10 in bins of 1 is 10 bins */
    memset(&spec, 0, sizeof spec);
    spec.width = 1;
    spec.max_bins = 9;
    assert_int_equal(afd_hist_workload(&pairs, &spec, &h), AFD_ELIMIT);
    assert_int_equal(h.n, 10);
    assert_null(h.bin);
    spec.max_bins = 10;
    assert_int_equal(afd_hist_workload(&pairs, &spec, &h), AFD_OK);
    afd_hist_free(&h);
    /* errors */
    spec.width = 0;
    spec.per_decade = 0;
    assert_int_equal(afd_hist_workload(&pairs, &spec, &h), AFD_EINVAL);
    spec.per_decade = 1;
    pairs.n_pairs = 0;
    pairs.pairs = NULL;
    assert_int_equal(afd_hist_workload(&pairs, &spec, &h), AFD_EEMPTY);
    assert_int_equal(afd_workload_geometric(3, 4, &pairs), AFD_OK);
    assert_int_equal(afd_hist_workload(&pairs, &spec, &h), AFD_EINVAL);
}

/* The geometric law with mean 4 (p = 1/4): P(X = 1) = 1/4,
 * P(2 <= X <= 3) = (3/4)(1/4) + (9/16)(1/4) = 21/64, P(X >= 1) = 1. */
static void geometric_mass_by_hand(void **state)
{
    (void)state;
    assert_close(afd_geometric_mass(4, 1, 1), 0.25, 1e-15, 0);
    assert_close(afd_geometric_mass(4, 0, 1), 0.25, 1e-15, 0); /* 0 counts as 1 */
    assert_close(afd_geometric_mass(4, 2, 3), 21.0 / 64, 1e-15, 0);
    assert_close(afd_geometric_mass(4, 1, UINT64_MAX), 1, 1e-15, 0);
    assert_true(afd_geometric_mass(4, 3, 2) == 0);
    assert_true(afd_geometric_mass(1, 1, 1) == 1 && afd_geometric_mass(1, 2, 5) == 0);
    assert_true(isnan(afd_geometric_mass(0.5, 1, 1)));
    assert_true(isnan(afd_geometric_mass(NAN, 1, 1)));
}

static void workload_errors(void **state)
{
    afd_workload w;
    afd_error err;
    char path[] = "/tmp/afdkit-test-wl-XXXXXX";
    int fd = mkstemp(path);
    (void)state;
    assert_true(write(fd, "ContextTokens,GeneratedTokens\n", 30) == 30);
    close(fd);
    assert_int_equal(afd_workload_from_trace(path, NULL, &w, &err), AFD_EEMPTY);
    assert_string_equal(err.text, "no data rows after the header");
    assert_int_equal(err.line, 1);
    unlink(path);
    assert_int_equal(afd_workload_from_trace(path, NULL, &w, &err), AFD_EIO);
    assert_int_equal(afd_workload_geometric(100, 500, &w), AFD_OK);
    assert_string_equal(afd_workload_kind_name(w.kind), "geometric");
    assert_close(w.mu_d, 500, 0, 0);
    assert_true(isnan(w.tail_alpha));
    assert_int_equal(afd_workload_given(1, 2, &w), AFD_OK);
    assert_string_equal(afd_workload_kind_name(w.kind), "given");
    assert_int_equal(afd_workload_given(-1, 2, &w), AFD_EINVAL);
    assert_string_equal(afd_workload_kind_name((afd_workload_kind)99), "unknown");
    afd_workload_free(NULL);
}

static void csv_generic(void **state)
{
    static const char data[] = "\"Name, full\",x,X,t\r\n\"a\"\"b\",1.5,2,3\r\n";
    afd_csv *c;
    afd_csv_field f[2];
    afd_error err;
    char list[64];
    size_t cols[2] = {3, 0};
    long line;
    (void)state;
    assert_int_equal(afd_csv_open_memory(data, strlen(data), &c, &err), AFD_OK);
    assert_int_equal(afd_csv_columns(c), 4);
    assert_string_equal(afd_csv_column_name(c, 0), "Name, full");
    assert_null(afd_csv_column_name(c, 4));
    assert_int_equal(afd_csv_find_column(c, "t"), 3);
    assert_int_equal(afd_csv_find_column(c, "x"), 1); /* exact match wins */
    assert_int_equal(afd_csv_find_column(c, "T"), 3); /* then case-insensitive */
    assert_int_equal(afd_csv_find_column(c, "nope"), -1);
    assert_string_equal(afd_csv_header_list(c, list, sizeof list),
                        "'Name, full', 'x', 'X', 't'");
    assert_int_equal(afd_csv_select(c, 2, cols), AFD_OK);
    assert_int_equal(afd_csv_next(c, f, &line, &err), AFD_OK);
    assert_int_equal(line, 2);
    assert_true(f[0].n == 1 && f[0].p[0] == '3');
    assert_true(f[1].escaped && f[1].n == 4); /* a""b, escapes not undone */
    assert_int_equal(afd_csv_next(c, f, &line, &err), AFD_EOF);
    assert_true(afd_csv_bytes(c) == strlen(data));
    /* a layer above reports a bad value: the reader stays failed */
    assert_int_equal(afd_csv_fail(c, &err, AFD_EPARSE, 2, 4, "bad %s", "value"), AFD_EPARSE);
    assert_string_equal(err.text, "bad value");
    assert_int_equal(afd_csv_next(c, f, &line, &err), AFD_EPARSE);
    afd_csv_close(c);
    /* ambiguous names and bad selections */
    assert_int_equal(afd_csv_open_memory("a,A\n1,2\n", 8, &c, &err), AFD_OK);
    assert_int_equal(afd_csv_find_column(c, "a"), 0);
    assert_int_equal(afd_csv_find_column(c, "b"), -1);
    cols[0] = cols[1] = 1;
    assert_int_equal(afd_csv_select(c, 2, cols), AFD_EINVAL); /* a column twice */
    cols[0] = 5;
    assert_int_equal(afd_csv_select(c, 1, cols), AFD_EINVAL); /* no such column */
    afd_csv_close(c);
    assert_int_equal(afd_csv_open_memory("A,a\n", 4, &c, &err), AFD_OK);
    assert_int_equal(afd_csv_find_column(c, "x"), -1);
    assert_int_equal(afd_csv_find_column(c, "A"), 0);
    afd_csv_close(c);
    assert_int_equal(afd_csv_open_memory("Aa,aA\n", 6, &c, &err), AFD_OK);
    assert_int_equal(afd_csv_find_column(c, "AA"), -2);
    afd_csv_close(c);
    afd_csv_close(NULL);
}

/* P(M_r > z) = 1 - Phi(z)^r: against a direct evaluation in long double and
 * the exact r = 1 and r = 2 forms. */
static void max_normal_sf(void **state)
{
    static const double zs[] = {-3, -0.5, 0, 1.3, 2.385, 6};
    size_t k;
    (void)state;
    for (k = 0; k < sizeof zs / sizeof zs[0]; k++) {
        /* references without cancellation: 1 - (1-Q)^2 = 2Q - Q^2; for r = 24
         * the binomial series where Q is small, 1 - Phi^24 directly where not */
        long double q = (long double)gsl_sf_erf_Q(zs[k]), ref24;
        if (q < 1e-3)
            ref24 = 24 * q - 276 * q * q + 2024 * q * q * q - 10626 * q * q * q * q;
        else
            ref24 = 1 - powl(1 - q, 24);
        assert_close(afd_max_normal_sf(1, zs[k]), (double)q, 1e-14, 1e-300);
        assert_close(afd_max_normal_sf(2, zs[k]), (double)(2 * q - q * q), 1e-13, 1e-300);
        assert_close(afd_max_normal_sf(24, zs[k]), (double)ref24, 1e-12, 1e-300);
    }
    /* deep in the right tail it keeps relative accuracy: r Q(z) */
    assert_close(afd_max_normal_sf(10, 9), 10 * gsl_sf_erf_Q(9), 1e-12, 0);
    assert_close(afd_max_normal_sf(3, INFINITY), 0, 0, 0);
    assert_close(afd_max_normal_sf(3, -INFINITY), 1, 0, 0);
    assert_true(isnan(afd_max_normal_sf(0.5, 1)));
    assert_true(isnan(afd_max_normal_sf(2, NAN)));
}

static void status_helpers(void **state)
{
    afd_error err;
    int s;
    (void)state;
    for (s = AFD_OK; s <= AFD_ELIMIT; s++)
        assert_true(strlen(afd_strerror((afd_status)s)) > 0);
    assert_string_equal(afd_strerror(AFD_EPARSE), "malformed input");
    assert_string_equal(afd_strerror(AFD_ENOMEM), "out of memory");
    assert_string_equal(afd_strerror(AFD_ELIMIT), "size limit exceeded");
    assert_string_equal(afd_strerror((afd_status)999), "unknown status");
    err.line = 3;
    strcpy(err.text, "x");
    afd_error_clear(&err);
    assert_int_equal(err.line, 0);
    assert_string_equal(err.text, "");
    afd_error_clear(NULL);
    assert_string_equal(afd_version(), PACKAGE_VERSION);
}

/* The dispersion accumulator against counts done by hand: arrivals at 0,
 * 0.5, 1.2, 3.9, 4.0, 4.1 and 5.5 s give 1 s windows [0,1) .. [4,5) holding
 * 2, 1, 0, 1, 2 (window 5 holds the last arrival and is partial): mean 6/5,
 * variance (0.64 + 0.04 + 1.44 + 0.04 + 0.64) / 4 = 0.7, IDC = 7/12. */
static void arrivals_by_hand(void **state)
{
    static const double t[] = {0, 0.5, 1.2, 3.9, 4.0, 4.1, 5.5};
    afd_arrivals_acc *acc = afd_arrivals_acc_alloc();
    afd_arrival_stats st;
    size_t k;
    (void)state;
    assert_non_null(acc);
    for (k = 0; k < 7; k++)
        assert_int_equal(afd_arrivals_add(acc, t[k], (long)k + 2), AFD_OK);
    assert_int_equal(afd_arrivals_add(acc, NAN, 9), AFD_EINVAL);
    afd_arrivals_stats(acc, &st);
    assert_int_equal(st.n, 7);
    assert_close(st.span, 5.5, 0, 0);
    assert_close(st.lambda, 6 / 5.5, 1e-15, 0);
    assert_int_equal(st.windows[0], 5);
    assert_close(st.idc[0], 7.0 / 12.0, 1e-15, 0);
    assert_close(st.idc_se[0], sqrt(0.5), 1e-15, 0);
    assert_true(isnan(st.idc[1])); /* no complete 10 s window */
    /* a time going backwards: dispersion refused, rate kept */
    assert_int_equal(afd_arrivals_add(acc, 5.0, 42), AFD_OK);
    afd_arrivals_stats(acc, &st);
    assert_int_equal(st.unsorted_line, 42);
    assert_true(isnan(st.idc[0]));
    assert_close(st.lambda, 7 / 5.5, 1e-15, 0);
    afd_arrivals_acc_free(acc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(azure_traces_step_by_step),
        cmocka_unit_test(arrivals_by_hand),
        cmocka_unit_test(workload_from_reader_options),
        cmocka_unit_test(workload_no_moments),
        cmocka_unit_test(workload_keeps_pairs),
        cmocka_unit_test(workload_errors),
        cmocka_unit_test(hist_by_hand),
        cmocka_unit_test(geometric_mass_by_hand),
        cmocka_unit_test(csv_generic),
        cmocka_unit_test(max_normal_sf),
        cmocka_unit_test(status_helpers),
    };
    gsl_set_error_handler_off();
    RUN_TESTS(tests);
}
