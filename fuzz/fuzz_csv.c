/* fuzz_csv.c: libFuzzer target for the CSV and trace readers.
 * The input is read as a trace with recognised columns, as a trace with
 * named columns, and as a generic CSV selecting every column it can; the
 * renewal accumulator consumes the rows so that its overflow checks run on
 * hostile values.  Invariants checked: a reader never returns a row after
 * an error, line numbers never decrease, and every error message is one
 * line. */
#include <config.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "afdkit.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void as_trace(const uint8_t *data, size_t size, const afd_trace_options *opt)
{
    afd_trace *t;
    afd_trace_row row;
    afd_error err;
    afd_status st;
    afd_renewal_acc *acc = afd_renewal_acc_alloc();
    afd_renewal_stats stats;
    long last = 0;

    if (afd_trace_open_memory((const char *)data, size, opt, &t, &err) != AFD_OK) {
        fuzz_check_error(&err);
        afd_renewal_acc_free(acc);
        return;
    }
    while ((st = afd_trace_next(t, &row, &err)) == AFD_OK) {
        if (row.line < last)
            abort();
        last = row.line;
        if (row.output > 0)
            (void)afd_renewal_acc_add(acc, row.prompt, row.output);
    }
    if (st != AFD_EOF) {
        fuzz_check_error(&err);
        if (afd_trace_next(t, &row, &err) == AFD_OK) /* errors are sticky */
            abort();
    }
    if (afd_renewal_acc_stats(acc, &stats) == AFD_OK && !(stats.nu >= 0))
        abort();
    afd_trace_close(t);
    afd_renewal_acc_free(acc);
}

static void as_csv(const uint8_t *data, size_t size)
{
    afd_csv *c;
    afd_csv_field f[AFD_CSV_MAX_SELECT];
    size_t cols[AFD_CSV_MAX_SELECT], n, k;
    afd_error err;
    long line;

    if (afd_csv_open_memory((const char *)data, size, &c, &err) != AFD_OK) {
        fuzz_check_error(&err);
        return;
    }
    n = afd_csv_columns(c) < AFD_CSV_MAX_SELECT ? afd_csv_columns(c) : AFD_CSV_MAX_SELECT;
    for (k = 0; k < n; k++)
        cols[k] = afd_csv_columns(c) - 1 - k;
    if (afd_csv_select(c, n, cols) != AFD_OK)
        abort();
    while (afd_csv_next(c, f, &line, &err) == AFD_OK)
        for (k = 0; k < n; k++) {
            double v;
            if (f[k].p == NULL && f[k].n != 0)
                abort();
            (void)afd_parse_double_n(f[k].p, f[k].n, &v);
        }
    afd_csv_close(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    afd_trace_options named = {.prompt_col = "a", .output_col = "b"};
    as_trace(data, size, NULL);
    as_trace(data, size, &named);
    as_csv(data, size);
    return 0;
}
