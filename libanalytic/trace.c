/* trace.c: request traces over the CSV reader (see afd_trace.h). */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "afd_csv.h"
#include "afd_parse.h"
#include "afd_trace.h"
#include "internal.h"

enum { PROMPT = 0, OUTPUT = 1 };

/* Column-name pairs recognised without --prompt-col/--output-col. */
static const char *const known_names[][2] = {
    {"ContextTokens", "GeneratedTokens"},       /* Azure LLM inference traces */
    {"num_prefill_tokens", "num_decode_tokens"},
    {"Request tokens", "Response tokens"},      /* BurstGPT */
    {"input_length", "output_length"},
    {"prompt_tokens", "output_tokens"},
};
#define N_KNOWN (sizeof known_names / sizeof known_names[0])

struct afd_trace {
    afd_csv *csv;
    size_t col[2];
    const char *name[2];
};

static afd_status select_column(afd_trace *t, int role, const char *given, afd_error *err)
{
    static const char *const role_name[2] = {"prompt-token", "output-token"};
    static const char *const role_opt[2] = {"--prompt-col", "--output-col"};
    char list[160];
    long c = -1;
    size_t k = 0;

    if (given != NULL) {
        c = afd_csv_find_column(t->csv, given);
        if (c == -1)
            return afd_priv_fail(err, AFD_EPARSE, 1, 0, "unknown column '%s' (header has %s)",
                                 given, afd_csv_header_list(t->csv, list, sizeof list));
    } else {
        for (k = 0; k < N_KNOWN && c == -1; k++)
            c = afd_csv_find_column(t->csv, known_names[k][role]);
        if (c == -1)
            return afd_priv_fail(err, AFD_EPARSE, 1, 0,
                                 "no %s column recognised (header has %s); name it with %s",
                                 role_name[role],
                                 afd_csv_header_list(t->csv, list, sizeof list),
                                 role_opt[role]);
    }
    if (c == -2)
        return afd_priv_fail(err, AFD_EPARSE, 1, 0,
                             "column '%s' appears more than once in the header",
                             given != NULL ? given : known_names[k - 1][role]);
    t->col[role] = (size_t)c;
    t->name[role] = afd_csv_column_name(t->csv, (size_t)c);
    return AFD_OK;
}

static afd_status setup(afd_trace *t, const afd_trace_options *opt, afd_trace **out,
                        afd_error *err)
{
    afd_status st;
    if ((st = select_column(t, PROMPT, opt ? opt->prompt_col : NULL, err)) != AFD_OK ||
        (st = select_column(t, OUTPUT, opt ? opt->output_col : NULL, err)) != AFD_OK)
        goto fail;
    if (t->col[PROMPT] == t->col[OUTPUT]) {
        st = afd_priv_fail(err, AFD_EPARSE, 1, 0,
                           "the prompt-token and output-token columns are both '%s'",
                           t->name[PROMPT]);
        goto fail;
    }
    if ((st = afd_csv_select(t->csv, 2, t->col)) != AFD_OK)
        goto fail;
    *out = t;
    return AFD_OK;
fail:
    afd_trace_close(t);
    return st;
}

/* The trace over a CSV reader just opened with status st. */
static afd_status wrap(afd_status st, afd_csv *csv, const afd_trace_options *opt,
                       afd_trace **out, afd_error *err)
{
    afd_trace *t;
    *out = NULL;
    if (st != AFD_OK)
        return st;
    t = calloc(1, sizeof *t);
    if (t == NULL) {
        afd_csv_close(csv);
        return afd_priv_fail(err, AFD_ENOMEM, 0, 0, "out of memory");
    }
    t->csv = csv;
    return setup(t, opt, out, err);
}

afd_status afd_trace_open(const char *path, const afd_trace_options *opt, afd_trace **out,
                          afd_error *err)
{
    afd_csv *csv = NULL;
    afd_status st = afd_csv_open(path, &csv, err);
    return wrap(st, csv, opt, out, err);
}

afd_status afd_trace_open_memory(const char *data, size_t len, const afd_trace_options *opt,
                                 afd_trace **out, afd_error *err)
{
    afd_csv *csv = NULL;
    afd_status st = afd_csv_open_memory(data, len, &csv, err);
    return wrap(st, csv, opt, out, err);
}

/* Convert one selected field; on error put the reader in the error state. */
static afd_status convert(afd_trace *t, int role, const afd_csv_field *f, long line,
                          uint64_t *out, afd_error *err)
{
    char v[200];
    afd_status st;
    size_t k = 0;
    long col = (long)t->col[role] + 1;

    st = f->escaped ? AFD_EPARSE : afd_parse_u64(f->p, f->n, out);
    if (st == AFD_OK)
        return AFD_OK;
    afd_priv_show(f->p, f->n, v, sizeof v);
    while (k < f->n && (f->p[k] == ' ' || f->p[k] == '\t'))
        k++;
    if (k == f->n)
        return afd_csv_fail(t->csv, err, AFD_EPARSE, line, col, "column '%s' is empty",
                            t->name[role]);
    if (st == AFD_ERANGE)
        return afd_csv_fail(t->csv, err, AFD_ERANGE, line, col,
                            "column '%s' is too large (>= 2^64): '%s'", t->name[role], v);
    if (f->p[k] == '-' && k + 1 < f->n && f->p[k + 1] >= '0' && f->p[k + 1] <= '9')
        return afd_csv_fail(t->csv, err, AFD_EPARSE, line, col, "column '%s' is negative: '%s'",
                            t->name[role], v);
    return afd_csv_fail(t->csv, err, AFD_EPARSE, line, col,
                        "column '%s' is not an integer: '%s'", t->name[role], v);
}

afd_status afd_trace_next(afd_trace *t, afd_trace_row *row, afd_error *err)
{
    afd_csv_field f[2];
    afd_status st;
    long line;

    row->prompt = row->output = 0;
    row->line = 0;
    st = afd_csv_next(t->csv, f, &line, err);
    if (st != AFD_OK)
        return st;
    if ((st = convert(t, PROMPT, &f[PROMPT], line, &row->prompt, err)) != AFD_OK ||
        (st = convert(t, OUTPUT, &f[OUTPUT], line, &row->output, err)) != AFD_OK)
        return st;
    row->line = line;
    return AFD_OK;
}

const char *afd_trace_prompt_name(const afd_trace *t)
{
    return t->name[PROMPT];
}

const char *afd_trace_output_name(const afd_trace *t)
{
    return t->name[OUTPUT];
}

uint64_t afd_trace_bytes(const afd_trace *t)
{
    return afd_csv_bytes(t->csv);
}

void afd_trace_close(afd_trace *t)
{
    if (t == NULL)
        return;
    afd_csv_close(t->csv);
    free(t);
}
