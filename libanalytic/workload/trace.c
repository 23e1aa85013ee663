/* trace.c: request traces in CSV or JSON Lines, plain or compressed (see
 * afd_trace.h).
 *
 * Both dialects are presented through one "header": the CSV header row, or
 * the keys of the first JSON object.  Columns are chosen by name on that
 * header; each data row then yields the selected values as text (CSV, JSON
 * strings) or JSON numbers, converted by the same rules.
 */
#include <config.h>

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "afd_csv.h"
#include "afd_parse.h"
#include "afd_trace.h"
#include "internal.h"

enum { PROMPT = 0, OUTPUT = 1, TIME = 2, HASH = 3, WHERE = 4, NROLES = WHERE + AFD_TRACE_MAX_WHERE };

/* The block-hash column recognised without one named (Mooncake's). */
#define KNOWN_HASH "hash_ids"

/* Column-name pairs recognised without --prompt-col/--output-col. */
static const char *const known_names[][2] = {
    {"ContextTokens", "GeneratedTokens"},       /* Azure LLM inference traces */
    {"num_prefill_tokens", "num_decode_tokens"}, /* Vidur, Sarathi */
    {"Request tokens", "Response tokens"},      /* BurstGPT */
    {"input_length", "output_length"},          /* Mooncake */
    {"prompt_tokens", "output_tokens"},
};
#define N_KNOWN (sizeof known_names / sizeof known_names[0])

/* Timestamp columns recognised without a time column named, with the unit
 * of their numeric values (date-time strings carry their own). */
static const struct {
    const char *name;
    double seconds;
} known_times[] = {
    {"TIMESTAMP", 1},    /* Azure 2023/2024: "2023-11-16 18:15:46.6805900" */
    {"timestamp", 1e-3}, /* Mooncake: milliseconds */
    {"Timestamp", 1},    /* BurstGPT: seconds */
    {"arrived_at", 1},   /* Vidur, Sarathi: seconds */
};
#define N_TIMES (sizeof known_times / sizeof known_times[0])

#define JSON_CHUNK (1u << 18)
#define JSON_BUF_CAP (AFD_TRACE_MAX_RECORD + JSON_CHUNK)

struct afd_trace {
    int json;
    /* CSV */
    afd_csv *csv;
    size_t ncsel;
    size_t csel[AFD_CSV_MAX_SELECT];
    /* JSON Lines */
    afd_priv_src *src;  /* NULL when reading from memory */
    char *buf;
    const char *data;
    size_t pos, end;
    int eof;
    uint64_t consumed;
    long line;          /* 1-based line of data[pos] */
    char **keys;        /* keys of the first object: the header */
    size_t nkeys;
    json_t *first;      /* the first object, returned by the first next() */
    long first_line;
    afd_status sticky;
    afd_error sticky_err;
    /* both */
    int have[NROLES];
    size_t col[NROLES];       /* header index of each role */
    size_t slot[NROLES];      /* CSV: index into the selection */
    const char *name[NROLES]; /* header names */
    char shown_name[NROLES][168]; /* the same for messages (afd_priv_show) */
    const char *where_value[AFD_TRACE_MAX_WHERE];
    size_t n_where;
    double time_seconds;      /* seconds per unit of numeric times */
    uint64_t filtered;
    uint64_t *hash;           /* the current row's block hashes */
    size_t n_hash, hash_cap;
};

/* ---------------------------------------------------------------- header */

static size_t ncols(const afd_trace *t)
{
    return t->json ? t->nkeys : afd_csv_columns(t->csv);
}

static const char *col_name(const afd_trace *t, size_t i)
{
    return t->json ? t->keys[i] : afd_csv_column_name(t->csv, i);
}

/* Index of the column called name: exact match first (exact_only: only
 * that), then ASCII case-insensitive.  -1 if absent, -2 if ambiguous. */
static long find_column(const afd_trace *t, const char *name, int exact_only)
{
    long hit = -1;
    size_t k;
    int pass;
    for (pass = 0; pass < (exact_only ? 1 : 2); pass++) {
        for (k = 0; k < ncols(t); k++) {
            const char *h = col_name(t, k);
            int eq = pass == 0 ? strcmp(h, name) == 0 : strcasecmp(h, name) == 0;
            if (!eq)
                continue;
            if (hit >= 0)
                return -2;
            hit = (long)k;
        }
        if (hit >= 0)
            return hit;
    }
    return -1;
}

/* The line of the header row or of the first JSON object, for the column
 * selection's messages (blank lines may come before it). */
static long header_line(const afd_trace *t)
{
    return t->json ? t->first_line : afd_priv_csv_header_line(t->csv);
}

static const char *header_list(const afd_trace *t, char *out, size_t cap)
{
    size_t o = 0, k;
    if (!t->json)
        return afd_csv_header_list(t->csv, out, cap);
    out[0] = '\0';
    for (k = 0; k < t->nkeys && o + 1 < cap; k++) {
        char v[200];
        afd_priv_show(t->keys[k], strlen(t->keys[k]), v, sizeof v);
        o += (size_t)snprintf(out + o, cap - o, "%s'%s'", k ? ", " : "", v);
    }
    if (o >= cap && cap > 4)
        memcpy(out + cap - 4, "...", 4);
    return out;
}

/* A user's value in a message: its first 40 bytes, control bytes escaped. */
static const char *shown(const char *s, char *buf, size_t cap)
{
    afd_priv_show(s, strlen(s), buf, cap);
    return buf;
}

static afd_status take(afd_trace *t, int role, long c, const char *asked, afd_error *err)
{
    char v[200];
    if (c == -2)
        return afd_priv_fail(err, AFD_EPARSE, header_line(t), 0,
                             "column '%s' appears more than once in the %s",
                             shown(asked, v, sizeof v), t->json ? "first object" : "header");
    t->have[role] = 1;
    t->col[role] = (size_t)c;
    t->name[role] = col_name(t, (size_t)c);
    afd_priv_show(t->name[role], strlen(t->name[role]), t->shown_name[role],
                  sizeof t->shown_name[role]);
    return AFD_OK;
}

static afd_status select_column(afd_trace *t, int role, const char *given, afd_error *err)
{
    static const char *const role_name[2] = {"prompt-token", "output-token"};
    static const char *const role_opt[2] = {"--prompt-col", "--output-col"};
    char list[160], v[200];
    long c = -1;
    size_t k = 0;

    if (given != NULL) {
        c = find_column(t, given, 0);
        if (c == -1)
            return afd_priv_fail(err, AFD_EPARSE, header_line(t), 0, "unknown column '%s' (%s has %s)",
                                 shown(given, v, sizeof v),
                                 t->json ? "the first object" : "header",
                                 header_list(t, list, sizeof list));
        return take(t, role, c, given, err);
    }
    for (k = 0; k < N_KNOWN && c == -1; k++)
        c = find_column(t, known_names[k][role], 0);
    if (c == -1)
        return afd_priv_fail(err, AFD_EPARSE, header_line(t), 0,
                             "no %s column recognised (%s has %s); name it with %s",
                             role_name[role], t->json ? "the first object" : "header",
                             header_list(t, list, sizeof list), role_opt[role]);
    return take(t, role, c, known_names[k - 1][role], err);
}

static afd_status select_time(afd_trace *t, const afd_trace_options *opt, afd_error *err)
{
    char list[160], v[200];
    long c = -1;
    size_t k;
    int pass;

    t->time_seconds = 1;
    if (opt != NULL && opt->time_unit != NULL &&
        afd_unit_seconds(opt->time_unit, &t->time_seconds) != AFD_OK)
        return afd_priv_fail(err, AFD_EINVAL, 0, 0, "unknown time unit '%s' (s, ms, us or ns)",
                             shown(opt->time_unit, v, sizeof v));
    if (opt != NULL && opt->time_col != NULL && opt->time_col[0] == '\0')
        return AFD_OK; /* timestamps ignored */
    if (opt != NULL && opt->time_col != NULL) {
        c = find_column(t, opt->time_col, 0);
        if (c == -1)
            return afd_priv_fail(err, AFD_EPARSE, header_line(t), 0, "unknown time column '%s' (%s has %s)",
                                 shown(opt->time_col, v, sizeof v), t->json ? "the first object" : "header",
                                 header_list(t, list, sizeof list));
        return take(t, TIME, c, opt->time_col, err);
    }
    /* Exact names first over the whole list (TIMESTAMP, timestamp and
     * Timestamp differ only in case and mean different units). */
    for (pass = 0; pass < 2; pass++)
        for (k = 0; k < N_TIMES; k++) {
            c = find_column(t, known_times[k].name, pass == 0);
            if (c == -1)
                continue;
            if (opt == NULL || opt->time_unit == NULL)
                t->time_seconds = known_times[k].seconds;
            return take(t, TIME, c, known_times[k].name, err);
        }
    return AFD_OK; /* no timestamps: fine */
}

/* The block-hash column: named, recognised as KNOWN_HASH, or ignored (""). */
static afd_status select_hash(afd_trace *t, const afd_trace_options *opt, afd_error *err)
{
    char list[160], v[200];
    const char *given = opt != NULL ? opt->hash_col : NULL;
    long c;
    if (given != NULL && given[0] == '\0')
        return AFD_OK;
    c = find_column(t, given != NULL ? given : KNOWN_HASH, 0);
    if (c == -1 && given != NULL)
        return afd_priv_fail(err, AFD_EPARSE, 1, 0, "unknown hash column '%s' (%s has %s)",
                             shown(given, v, sizeof v), t->json ? "the first object" : "header",
                             header_list(t, list, sizeof list));
    if (c == -1)
        return AFD_OK; /* no block hashes: fine */
    return take(t, HASH, c, given != NULL ? given : KNOWN_HASH, err);
}

static afd_status setup(afd_trace *t, const afd_trace_options *opt, afd_error *err)
{
    afd_status st;
    size_t k, j;
    int r;

    if ((st = select_column(t, PROMPT, opt ? opt->prompt_col : NULL, err)) != AFD_OK ||
        (st = select_column(t, OUTPUT, opt ? opt->output_col : NULL, err)) != AFD_OK ||
        (st = select_time(t, opt, err)) != AFD_OK ||
        (st = select_hash(t, opt, err)) != AFD_OK)
        return st;
    if (t->col[PROMPT] == t->col[OUTPUT])
        return afd_priv_fail(err, AFD_EPARSE, header_line(t), 0,
                             "the prompt-token and output-token columns are both '%s'",
                             t->shown_name[PROMPT]);
    if (opt != NULL && opt->n_where > AFD_TRACE_MAX_WHERE)
        return afd_priv_fail(err, AFD_EINVAL, 0, 0, "more than %d row filters",
                             AFD_TRACE_MAX_WHERE);
    for (k = 0; opt != NULL && k < opt->n_where; k++) {
        const afd_trace_filter *f = &opt->where[k];
        char list[160], v[200];
        long c = find_column(t, f->column, 0);
        if (c == -1)
            return afd_priv_fail(err, AFD_EPARSE, header_line(t), 0, "unknown filter column '%s' (%s has %s)",
                                 shown(f->column, v, sizeof v), t->json ? "the first object" : "header",
                                 header_list(t, list, sizeof list));
        if ((st = take(t, WHERE + (int)k, c, f->column, err)) != AFD_OK)
            return st;
        t->where_value[k] = f->value;
    }
    t->n_where = opt != NULL ? opt->n_where : 0;
    if (t->json)
        return AFD_OK;
    /* CSV: select each distinct column once. */
    for (r = 0; r < NROLES; r++) {
        if (!t->have[r])
            continue;
        for (j = 0; j < t->ncsel && t->csel[j] != t->col[r]; j++)
            ;
        if (j == t->ncsel)
            t->csel[t->ncsel++] = t->col[r];
        t->slot[r] = j;
    }
    return afd_csv_select(t->csv, t->ncsel, t->csel);
}

/* ---------------------------------------------------------- JSON Lines */

static afd_status jfail(afd_trace *t, afd_error *err, afd_status st, long line, long column,
                        const char *fmt, ...) AFD_PRINTF(6, 7);

static afd_status jfail(afd_trace *t, afd_error *err, afd_status st, long line, long column,
                        const char *fmt, ...)
{
    afd_error e;
    va_list ap;
    e.line = line;
    e.column = column;
    va_start(ap, fmt);
    vsnprintf(e.text, sizeof e.text, fmt, ap);
    va_end(ap);
    t->sticky = st;
    t->sticky_err = e;
    if (err != NULL)
        *err = e;
    return st;
}

static afd_status json_refill(afd_trace *t, afd_error *err)
{
    size_t rem = t->end - t->pos, n;
    afd_error e;
    afd_status st;
    if (t->src == NULL) {
        t->eof = 1;
        return AFD_OK;
    }
    if (rem >= AFD_TRACE_MAX_RECORD)
        return jfail(t, err, AFD_ELIMIT, t->line, 0, "line longer than %u bytes",
                     (unsigned)AFD_TRACE_MAX_RECORD);
    if (t->pos > 0) {
        memmove(t->buf, t->buf + t->pos, rem);
        t->consumed += t->pos;
        t->pos = 0;
        t->end = rem;
    }
    st = afd_priv_src_read(t->src, t->buf + t->end, JSON_BUF_CAP - t->end, &n, &e);
    if (st != AFD_OK)
        return jfail(t, err, st, t->line, 0, "%s", e.text);
    if (n == 0)
        t->eof = 1;
    t->end += n;
    return AFD_OK;
}

/* The next non-blank line as an object; *obj NULL at the end. */
static afd_status json_line(afd_trace *t, json_t **obj, long *line, afd_error *err)
{
    *obj = NULL;
    for (;;) {
        const char *p = t->data + t->pos;
        const char *nl = memchr(p, '\n', t->end - t->pos);
        size_t n, k, next;
        afd_error je;
        afd_status st;

        if (nl == NULL && !t->eof) {
            if ((st = json_refill(t, err)) != AFD_OK)
                return st;
            continue;
        }
        n = nl != NULL ? (size_t)(nl - p) : t->end - t->pos;
        next = t->pos + n + (nl != NULL);
        if (n > AFD_TRACE_MAX_RECORD)
            return jfail(t, err, AFD_ELIMIT, t->line, 0, "line longer than %u bytes",
                         (unsigned)AFD_TRACE_MAX_RECORD);
        if (n == 0 && nl == NULL)
            return AFD_OK; /* end of input */
        for (k = 0; k < n && (p[k] == ' ' || p[k] == '\t' || p[k] == '\r'); k++)
            ;
        if (k == n) {
            t->pos = next;
            t->line++;
            continue;
        }
        *line = t->line;
        if ((st = afd_priv_json_parse_text(p, n, obj, &je)) != AFD_OK)
            return jfail(t, err, st, t->line, je.column > 0 ? je.column : 1,
                         st == AFD_EPARSE ? "malformed JSON: %s" : "%s", je.text);
        if (!json_is_object(*obj)) {
            json_decref(*obj);
            *obj = NULL;
            return jfail(t, err, AFD_EPARSE, t->line, (long)k + 1,
                         "expected a JSON object on each line");
        }
        t->pos = next;
        t->line++;
        return AFD_OK;
    }
}

static afd_status json_setup(afd_trace *t, afd_error *err)
{
    const char *key;
    json_t *v;
    afd_status st;

    /* a byte-order mark: skipped at the open, by afd_priv_src_peek or
     * afd_trace_open_memory */
    st = json_line(t, &t->first, &t->first_line, err);
    if (st != AFD_OK)
        return st;
    if (t->first == NULL)
        return afd_priv_fail(err, AFD_EEMPTY, 1, 0, "empty file: expected a JSON object");
    t->keys = calloc(json_object_size(t->first) + 1, sizeof *t->keys);
    if (t->keys == NULL)
        return afd_priv_fail(err, AFD_ENOMEM, 0, 0, "out of memory");
    json_object_foreach(t->first, key, v) {
        (void)v;
        t->keys[t->nkeys] = strdup(key);
        if (t->keys[t->nkeys] == NULL)
            return afd_priv_fail(err, AFD_ENOMEM, 0, 0, "out of memory");
        t->nkeys++;
    }
    return AFD_OK;
}

/* ---------------------------------------------------------------- open */

static size_t skip_blanks(const char *p, size_t n, size_t k)
{
    while (k < n && (p[k] == ' ' || p[k] == '\t' || p[k] == '\r' || p[k] == '\n'))
        k++;
    return k;
}

/* JSON Lines or CSV: opt's format, else told from the first non-blank byte
 * of p[0..n), the input after its byte-order mark (a second mark is text,
 * so CSV): '{' followed, after blanks, by '"'
 * or '}' (or nothing more) starts a JSON object; anything else, such as
 * the CSV header "{a},b", is CSV. */
static afd_status tell_format(const char *p, size_t n, const afd_trace_options *opt, int *json,
                              afd_error *err)
{
    size_t k;
    if (opt != NULL && opt->format != NULL) {
        char v[200];
        if (strcmp(opt->format, "csv") == 0 || strcmp(opt->format, "jsonl") == 0) {
            *json = opt->format[0] == 'j';
            return AFD_OK;
        }
        return afd_priv_fail(err, AFD_EINVAL, 0, 0, "unknown trace format '%s' (csv or jsonl)",
                             shown(opt->format, v, sizeof v));
    }
    k = skip_blanks(p, n, 0);
    if (k == n || p[k] != '{') {
        *json = 0;
        return AFD_OK;
    }
    k = skip_blanks(p, n, k + 1);
    *json = k == n || p[k] == '"' || p[k] == '}';
    return AFD_OK;
}

static afd_status finish(afd_trace *t, const afd_trace_options *opt, afd_trace **out,
                         afd_error *err)
{
    afd_status st = t->json ? json_setup(t, err) : AFD_OK;
    if (st == AFD_OK)
        st = setup(t, opt, err);
    if (st != AFD_OK) {
        afd_trace_close(t);
        return st;
    }
    t->sticky = AFD_OK;
    *out = t;
    return AFD_OK;
}

afd_status afd_trace_open(const char *path, const afd_trace_options *opt, afd_trace **out,
                          afd_error *err)
{
    afd_priv_src *src;
    afd_trace *t;
    afd_status st;
    const char *head;
    size_t nhead;
    long lines;
    uint64_t bytes;
    int json;

    *out = NULL;
    afd_error_clear(err);
    if ((st = afd_priv_src_open(path, &src, err)) != AFD_OK)
        return st;
    if ((st = afd_priv_src_peek(src, 4096, &head, &nhead, &lines, &bytes, err)) != AFD_OK ||
        (st = tell_format(head, nhead, opt, &json, err)) != AFD_OK) {
        afd_priv_src_close(src);
        return st;
    }
    t = calloc(1, sizeof *t);
    if (t == NULL) {
        afd_priv_src_close(src);
        return afd_priv_fail(err, AFD_ENOMEM, 0, 0, "out of memory");
    }
    t->json = json;
    if (t->json) {
        t->src = src;
        t->line = 1 + lines;
        t->consumed = bytes;
        t->buf = malloc(JSON_BUF_CAP);
        if (t->buf == NULL) {
            afd_trace_close(t);
            return afd_priv_fail(err, AFD_ENOMEM, 0, 0, "out of memory");
        }
        t->data = t->buf;
    } else if ((st = afd_priv_csv_open_src(src, lines, bytes, &t->csv, err)) != AFD_OK) {
        free(t);
        return st;
    }
    return finish(t, opt, out, err);
}

afd_status afd_trace_open_memory(const char *data, size_t len, const afd_trace_options *opt,
                                 afd_trace **out, afd_error *err)
{
    afd_trace *t;
    afd_status st;
    size_t bom = afd_priv_bom(data, len); /* as afd_priv_src_peek does */
    int json;

    *out = NULL;
    afd_error_clear(err);
    if ((st = tell_format(data + bom, len - bom, opt, &json, err)) != AFD_OK)
        return st;
    t = calloc(1, sizeof *t);
    if (t == NULL)
        return afd_priv_fail(err, AFD_ENOMEM, 0, 0, "out of memory");
    t->json = json;
    if (t->json) {
        t->data = data;
        t->pos = bom;
        t->end = len;
        t->eof = 1;
        t->line = 1;
    } else if ((st = afd_csv_open_memory(data, len, &t->csv, err)) != AFD_OK) {
        free(t);
        return st;
    }
    return finish(t, opt, out, err);
}

/* ---------------------------------------------------------- conversion */

/* A selected value: text (CSV fields, JSON strings) or a JSON value. */
struct value {
    const char *p;
    size_t n;
    int escaped;  /* CSV "" escapes not undone */
    json_t *j;    /* JSON non-string value, or NULL */
    int missing;  /* JSON: key absent from this object */
};

static afd_status fail(afd_trace *t, afd_error *err, afd_status st, long line,
                       const char *fmt, ...) AFD_PRINTF(5, 6);

static afd_status fail(afd_trace *t, afd_error *err, afd_status st, long line,
                       const char *fmt, ...)
{
    char text[240];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    if (t->json)
        return jfail(t, err, st, line, 0, "%s", text);
    return afd_csv_fail(t->csv, err, st, line, 0, "%s", text);
}

/* A non-negative integer, or a real with no fractional part ("100.0", as
 * pandas writes integer columns that once held a missing value). */
static afd_status text_u64(const char *p, size_t n, uint64_t *out)
{
    double d;
    afd_status st = afd_parse_u64(p, n, out);
    if (st != AFD_EPARSE)
        return st;
    if (afd_parse_double_n(p, n, &d) != AFD_OK || d != floor(d) || d < 0)
        return AFD_EPARSE;
    if (d >= 18446744073709551616.0)
        return AFD_ERANGE;
    *out = (uint64_t)d;
    return AFD_OK;
}

static afd_status to_u64(afd_trace *t, int role, const struct value *v, long line, uint64_t *out,
                         afd_error *err)
{
    const char *name = t->shown_name[role];
    char shown[200];
    afd_status st;
    size_t k = 0;

    *out = 0;
    if (v->missing)
        return fail(t, err, AFD_EPARSE, line, "key '%s' is missing", name);
    if (v->j != NULL) {
        if (json_is_integer(v->j)) {
            json_int_t x = json_integer_value(v->j);
            if (x < 0)
                return fail(t, err, AFD_EPARSE, line, "column '%s' is negative: '%lld'", name,
                            (long long)x);
            *out = (uint64_t)x;
            return AFD_OK;
        }
        if (json_is_real(v->j)) {
            double d = json_real_value(v->j);
            if (d == floor(d) && d >= 0 && d < 18446744073709551616.0) {
                *out = (uint64_t)d;
                return AFD_OK;
            }
            if (d < 0)
                return fail(t, err, AFD_EPARSE, line, "column '%s' is negative: '%.17g'", name,
                            d);
            if (d == floor(d))
                return fail(t, err, AFD_ERANGE, line, "column '%s' is too large (>= 2^64): "
                                                     "'%.17g'", name, d);
            return fail(t, err, AFD_EPARSE, line, "column '%s' is not an integer: '%.17g'", name,
                        d);
        }
        return fail(t, err, AFD_EPARSE, line, "column '%s' is not a number (JSON %s)", name,
                    json_is_null(v->j)     ? "null"
                    : json_is_boolean(v->j) ? "boolean"
                    : json_is_array(v->j)   ? "array"
                                            : "object");
    }
    st = v->escaped ? AFD_EPARSE : text_u64(v->p, v->n, out);
    if (st == AFD_OK)
        return AFD_OK;
    afd_priv_show(v->p, v->n, shown, sizeof shown);
    while (k < v->n && (v->p[k] == ' ' || v->p[k] == '\t'))
        k++;
    if (k == v->n)
        return fail(t, err, AFD_EPARSE, line, "column '%s' is empty", name);
    if (st == AFD_ERANGE)
        return fail(t, err, AFD_ERANGE, line, "column '%s' is too large (>= 2^64): '%s'", name,
                    shown);
    if (v->p[k] == '-' && k + 1 < v->n && v->p[k + 1] >= '0' && v->p[k + 1] <= '9')
        return fail(t, err, AFD_EPARSE, line, "column '%s' is negative: '%s'", name, shown);
    return fail(t, err, AFD_EPARSE, line, "column '%s' is not an integer: '%s'", name, shown);
}

static afd_status hash_push(afd_trace *t, uint64_t id)
{
    uint64_t *v = afd_priv_grow(t->hash, &t->hash_cap, t->n_hash + 1, sizeof *v, 256);
    if (v == NULL)
        return AFD_ENOMEM;
    t->hash = v;
    t->hash[t->n_hash++] = id;
    return AFD_OK;
}

static int list_sep(char c)
{
    return c == ' ' || c == '\t' || c == ',' || c == ';';
}

/* The block hashes of a row into t->hash: a JSON array of non-negative
 * integers, or text (a CSV field, a JSON string) holding such integers
 * separated by blanks, commas or semicolons, optionally within one pair of
 * brackets ("[1, 2, 3]", "1 2 3"); empty: no blocks. */
static afd_status to_hashes(afd_trace *t, const struct value *v, long line, afd_error *err)
{
    const char *name = t->shown_name[HASH];
    char shown[200];
    size_t k = 0, n;
    const char *p;
    t->n_hash = 0;
    if (v->missing)
        return fail(t, err, AFD_EPARSE, line, "key '%s' is missing", name);
    if (v->j != NULL) {
        size_t i;
        json_t *x;
        if (!json_is_array(v->j))
            return fail(t, err, AFD_EPARSE, line, "column '%s' is not a list of block hashes",
                        name);
        json_array_foreach(v->j, i, x) {
            if (!json_is_integer(x) || json_integer_value(x) < 0)
                return fail(t, err, AFD_EPARSE, line,
                            "column '%s': entry %zu is not a non-negative integer", name, i + 1);
            if (hash_push(t, (uint64_t)json_integer_value(x)) != AFD_OK)
                return fail(t, err, AFD_ENOMEM, line, "out of memory");
        }
        return AFD_OK;
    }
    p = v->p;
    n = v->n;
    while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t'))
        n--;
    while (k < n && (p[k] == ' ' || p[k] == '\t'))
        k++;
    if (k < n && p[k] == '[') {
        if (p[n - 1] != ']')
            goto bad;
        k++;
        n--;
    }
    while (k < n) {
        size_t j;
        uint64_t id;
        while (k < n && list_sep(p[k]))
            k++;
        for (j = k; j < n && !list_sep(p[j]); j++)
            ;
        if (j == k)
            break;
        if (v->escaped || afd_parse_u64(p + k, j - k, &id) != AFD_OK)
            goto bad;
        if (hash_push(t, id) != AFD_OK)
            return fail(t, err, AFD_ENOMEM, line, "out of memory");
        k = j;
    }
    return AFD_OK;
bad:
    afd_priv_show(v->p, v->n, shown, sizeof shown);
    return fail(t, err, AFD_EPARSE, line,
                "column '%s' is not a list of non-negative integers: '%s'", name, shown);
}

/* Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar
 * (H. Hinnant's days_from_civil). */
static long long days_from_civil(long long y, unsigned m, unsigned d)
{
    long long era, yoe, doy, doe;
    y -= m <= 2;
    era = (y >= 0 ? y : y - 399) / 400;
    yoe = y - era * 400;
    doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static int digits(const char *p, size_t n, size_t at, size_t count, unsigned *out)
{
    size_t k;
    *out = 0;
    if (at + count > n)
        return 0;
    for (k = 0; k < count; k++) {
        unsigned d = (unsigned char)p[at + k] - (unsigned)'0';
        if (d > 9)
            return 0;
        *out = *out * 10 + d;
    }
    return 1;
}

/* "YYYY-MM-DD[ T]HH:MM[:SS[.frac]][Z|+HH:MM|-HH:MM]" to seconds since
 * 1970-01-01 UTC (no offset: UTC).  Returns 0 if s is not of this form. */
int afd_priv_parse_datetime(const char *p, size_t n, double *out)
{
    unsigned y, mo, d, h, mi, s = 0, oh, om;
    size_t i;
    double frac = 0, scale = 0.1, off = 0;
    static const unsigned mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};

    while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t'))
        n--;
    while (n > 0 && (*p == ' ' || *p == '\t'))
        p++, n--;
    if (!digits(p, n, 0, 4, &y) || n < 16 || p[4] != '-' || !digits(p, n, 5, 2, &mo) ||
        p[7] != '-' || !digits(p, n, 8, 2, &d) || (p[10] != ' ' && p[10] != 'T') ||
        !digits(p, n, 11, 2, &h) || p[13] != ':' || !digits(p, n, 14, 2, &mi))
        return 0;
    i = 16;
    if (i < n && p[i] == ':') {
        if (!digits(p, n, i + 1, 2, &s))
            return 0;
        i += 3;
        if (i < n && p[i] == '.') {
            size_t k = ++i;
            for (; i < n && p[i] >= '0' && p[i] <= '9'; i++, scale /= 10)
                frac += (p[i] - '0') * scale;
            if (i == k)
                return 0;
        }
    }
    if (i < n && p[i] == 'Z') {
        i++;
    } else if (i < n && (p[i] == '+' || p[i] == '-')) {
        if (!digits(p, n, i + 1, 2, &oh) || i + 3 >= n || p[i + 3] != ':' ||
            !digits(p, n, i + 4, 2, &om) || oh > 23 || om > 59)
            return 0;
        off = (p[i] == '+' ? 1 : -1) * (3600.0 * oh + 60.0 * om);
        i += 6;
    }
    if (i != n || mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] || h > 23 || mi > 59 ||
        s > 60)
        return 0;
    *out = (double)days_from_civil(y, mo, d) * 86400.0 + 3600.0 * h + 60.0 * mi + s + frac - off;
    return 1;
}

static afd_status to_time(afd_trace *t, const struct value *v, long line, double *out,
                          afd_error *err)
{
    const char *name = t->shown_name[TIME];
    char shown[200];
    double x;

    *out = NAN;
    if (v->missing)
        return fail(t, err, AFD_EPARSE, line, "key '%s' is missing", name);
    if (v->j != NULL) {
        if (!json_is_number(v->j))
            return fail(t, err, AFD_EPARSE, line, "time column '%s' is not a number", name);
        *out = json_number_value(v->j) * t->time_seconds;
        return AFD_OK;
    }
    if (!v->escaped && afd_priv_parse_datetime(v->p, v->n, out))
        return AFD_OK;
    if (!v->escaped && afd_parse_double_n(v->p, v->n, &x) == AFD_OK) {
        *out = x * t->time_seconds;
        return AFD_OK;
    }
    afd_priv_show(v->p, v->n, shown, sizeof shown);
    return fail(t, err, AFD_EPARSE, line,
                "time column '%s' is neither a number nor a date-time "
                "(YYYY-MM-DD HH:MM:SS.fff): '%s'",
                name, shown);
}

/* Blank-trimmed text equal to want; CSV "" escapes count as one quote. */
static int text_equal(const char *p, size_t n, int escaped, const char *want)
{
    size_t k, w = 0;
    while (n > 0 && (*p == ' ' || *p == '\t'))
        p++, n--;
    while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t'))
        n--;
    for (k = 0; k < n; k++, w++) {
        if (want[w] != p[k])
            return 0;
        if (escaped && p[k] == '"')
            k++;
    }
    return want[w] == '\0';
}

static int matches(const struct value *v, const char *want)
{
    double x;
    if (v->missing)
        return 0;
    if (v->j == NULL)
        return text_equal(v->p, v->n, v->escaped, want);
    if (json_is_number(v->j))
        return afd_parse_double(want, &x) == AFD_OK && x == json_number_value(v->j);
    if (json_is_true(v->j))
        return strcmp(want, "true") == 0;
    if (json_is_false(v->j))
        return strcmp(want, "false") == 0;
    if (json_is_null(v->j))
        return strcmp(want, "null") == 0 || want[0] == '\0';
    return 0;
}

/* ----------------------------------------------------------------- next */

static afd_status next_values(afd_trace *t, struct value *val, long *line, json_t **hold,
                              afd_error *err)
{
    int r;
    memset(val, 0, NROLES * sizeof *val);
    *hold = NULL;
    if (!t->json) {
        afd_csv_field f[AFD_CSV_MAX_SELECT];
        afd_status st = afd_csv_next(t->csv, f, line, err);
        if (st != AFD_OK)
            return st;
        for (r = 0; r < NROLES; r++)
            if (t->have[r]) {
                val[r].p = f[t->slot[r]].p;
                val[r].n = f[t->slot[r]].n;
                val[r].escaped = f[t->slot[r]].escaped;
            }
        return AFD_OK;
    }
    if (t->sticky != AFD_OK) {
        if (err != NULL)
            *err = t->sticky_err;
        return t->sticky;
    }
    if (t->first != NULL) {
        *hold = t->first;
        *line = t->first_line;
        t->first = NULL;
    } else {
        afd_status st = json_line(t, hold, line, err);
        if (st != AFD_OK)
            return st;
        if (*hold == NULL)
            return AFD_EOF;
    }
    for (r = 0; r < NROLES; r++) {
        json_t *j;
        if (!t->have[r])
            continue;
        j = json_object_get(*hold, t->name[r]);
        if (j == NULL)
            val[r].missing = 1;
        else if (json_is_string(j)) {
            val[r].p = json_string_value(j);
            val[r].n = json_string_length(j);
        } else
            val[r].j = j;
    }
    return AFD_OK;
}

afd_status afd_trace_next(afd_trace *t, afd_trace_row *row, afd_error *err)
{
    struct value val[NROLES];
    json_t *hold;
    afd_status st;
    long line;
    size_t k;

    for (;;) {
        row->prompt = row->output = 0;
        row->line = 0;
        row->time = NAN;
        row->hash_ids = NULL;
        row->n_hash = 0;
        st = next_values(t, val, &line, &hold, err);
        if (st != AFD_OK)
            return st;
        for (k = 0; k < t->n_where && matches(&val[WHERE + k], t->where_value[k]); k++)
            ;
        if (k < t->n_where) {
            t->filtered++;
            json_decref(hold);
            continue;
        }
        if ((st = to_u64(t, PROMPT, &val[PROMPT], line, &row->prompt, err)) == AFD_OK &&
            (st = to_u64(t, OUTPUT, &val[OUTPUT], line, &row->output, err)) == AFD_OK &&
            t->have[TIME])
            st = to_time(t, &val[TIME], line, &row->time, err);
        if (st == AFD_OK && t->have[HASH] && (st = to_hashes(t, &val[HASH], line, err)) == AFD_OK) {
            row->hash_ids = t->hash;
            row->n_hash = t->n_hash;
        }
        json_decref(hold);
        if (st != AFD_OK) {
            row->prompt = row->output = 0;
            row->time = NAN;
            return st;
        }
        row->line = line;
        return AFD_OK;
    }
}

const char *afd_trace_prompt_name(const afd_trace *t)
{
    return t->name[PROMPT];
}

const char *afd_trace_output_name(const afd_trace *t)
{
    return t->name[OUTPUT];
}

const char *afd_trace_hash_name(const afd_trace *t)
{
    return t->have[HASH] ? t->name[HASH] : NULL;
}

const char *afd_trace_time_name(const afd_trace *t)
{
    return t->have[TIME] ? t->name[TIME] : NULL;
}

double afd_trace_time_seconds(const afd_trace *t)
{
    return t->have[TIME] ? t->time_seconds : NAN;
}

uint64_t afd_trace_filtered(const afd_trace *t)
{
    return t->filtered;
}

const char *afd_trace_format(const afd_trace *t)
{
    return t->json ? "jsonl" : "csv";
}

uint64_t afd_trace_bytes(const afd_trace *t)
{
    return t->json ? t->consumed + t->pos : afd_csv_bytes(t->csv);
}

void afd_trace_close(afd_trace *t)
{
    size_t k;
    if (t == NULL)
        return;
    afd_csv_close(t->csv);
    afd_priv_src_close(t->src);
    json_decref(t->first);
    for (k = 0; k < t->nkeys; k++)
        free(t->keys[k]);
    free(t->keys);
    free(t->buf);
    free(t->hash);
    free(t);
}
