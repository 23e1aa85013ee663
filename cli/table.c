/* table.c: the table writer of the command-line contract.
 *
 * Default format: optional "## key=value" lines, one "# " header line per
 * block with tab-separated column names, tab-separated rows, two blank lines
 * between blocks.  --csv: RFC 4180 (CRLF records, header row, no '#' lines;
 * blocks are separated by one empty record).  Reals use %.{precision}g, non-finite values
 * print as "nan" (gnuplot treats nan as missing but plots -inf), and -0 as 0.
 *
 * --json: JSON Lines through jansson, one object per row keyed by the
 * block's column names in column order; reals are numbers with the same
 * significant digits as the table (non-finite: null), integers and counts
 * (cli_table_count) are integers; in a table of several blocks each object
 * starts with "block": its block's number from 1 (the rows are kept until
 * the table is finished, when the number of blocks is known); with
 * --provenance the first line is {"provenance": {key: value, ...}}.
 *
 * --shard K/N: the table of a shard carries "## shard=K/N" (and
 * "## order=COLUMN asc|desc" when the command sorts) before its header, or
 * "shard"/"order" in the provenance object, even without --provenance:
 * afdkit merge reads them to put the rows of the shards back in order.
 *
 * Units: a table whose numbers carry a unit (times, rates) states it in a
 * "## unit=U" line, always (not only with --provenance): the last line before
 * the first header, after any provenance and shard lines (cli_table_unit).
 * In JSON Lines, one object per row, it is "unit" in the provenance object
 * when there is one (--provenance, --shard).
 *
 * CSV has no '#' lines: stdout is the table alone.  The "## key=value" lines
 * the default table would print (the unit always, provenance with
 * --provenance) go to stderr instead, the same lines in the same order,
 * written before the table, so that nothing is dropped silently and a CSV
 * in ms does not pass for one in s.
 */
#include <config.h>

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"

struct cli_table {
    cli_output o;
    FILE *mem;
    char *buf;
    size_t len;
    int ncols;
    int col;    /* cells written in the current row */
    int blocks; /* blocks started */
    /* --json */
    char **names; /* the current block's column names (copies), ncols of them */
    json_t *row;  /* the row being filled */
    json_t *rows; /* [block, row] pairs of the finished rows */
    json_t *prov; /* provenance object, written first by finish */
    int oom;      /* a JSON value could not be allocated */
    /* --shard */
    char order[96]; /* "COLUMN asc|desc" from cli_table_shard_order, or "" */
    char *unit;     /* from cli_table_unit, or NULL */
    /* --csv: the "## key=value" lines, for stderr */
    FILE *meta;
    char *meta_buf;
    size_t meta_len;
};

static int cmdline_argc;
static char **cmdline_argv;

void cli_set_command_line(int argc, char **argv)
{
    cmdline_argc = argc;
    cmdline_argv = argv;
}

const char *cli_program_name(void)
{
    return cmdline_argc > 0 && cmdline_argv[0] != NULL ? cmdline_argv[0] : "afdkit";
}

/* ---- output options */


static const cli_option output_options[] = {
    {"csv", 0, NULL,
     "print RFC 4180 CSV instead of the tab-separated table ('## ' lines go to stderr)",
     OPT_CSV},
    {"precision", 0, "N", "significant digits for real numbers (1-17, default 10)",
     OPT_PRECISION},
    {"provenance", 0, NULL, "start the table with '## key=value' lines (version, command)",
     OPT_PROVENANCE},
    {"quiet", 'q', NULL, "no progress reports or notes on stderr (warnings and errors stay)",
     OPT_QUIET},
    {"json", 0, NULL, "print JSON Lines: one object per row, numbers as numbers, nan as null",
     OPT_JSON},
    {NULL, 0, NULL, NULL, 0},
};

const cli_group cli_output_group = {"Output", output_options};

static const cli_option shard_options[] = {
    {"shard", 0, "K/N", "evaluate list items K, K+N, K+2N, ... only ('afdkit merge' joins)",
     OPT_SHARD},
    {NULL, 0, NULL, NULL, 0},
};

const cli_group cli_shard_group = {"Sharding", shard_options};

void cli_output_init(cli_output *o)
{
    o->csv = 0;
    o->precision = 10;
    o->provenance = 0;
    o->quiet = 0;
    o->json = 0;
    o->shard_k = 0;
    o->shard_n = 0;
}

int cli_shard_parse(const char *cmd, const char *arg, unsigned *k, unsigned *n)
{
    const char *slash = strchr(arg, '/');
    char kbuf[32], ex[64];
    int64_t kv, nv;
    size_t len = slash != NULL ? (size_t)(slash - arg) : 0;
    if (slash == NULL || len == 0 || len >= sizeof kbuf)
        return cli_usage_error(cmd, "--shard takes K/N (1 <= K <= N), e.g. 2/4: '%s'",
                               cli_excerpt(arg, ex, sizeof ex));
    memcpy(kbuf, arg, len);
    kbuf[len] = '\0';
    if (cli_integer(cmd, "shard N", slash + 1, 1, CLI_SHARD_MAX, &nv) != 0 ||
        cli_integer(cmd, "shard K", kbuf, 1, nv, &kv) != 0)
        return EXIT_USAGE;
    *k = (unsigned)kv;
    *n = (unsigned)nv;
    return 0;
}

int cli_shard_take(const cli_output *o, size_t i)
{
    return o->shard_n == 0 || i % o->shard_n == o->shard_k - 1;
}

void cli_shard_list(const cli_output *o, cli_list *l)
{
    size_t i, m = 0;
    for (i = 0; i < l->n; i++)
        if (cli_shard_take(o, i))
            l->v[m++] = l->v[i];
    l->n = m;
}

#define SHARD_CSV_MSG                                                                      \
    "--shard writes a part for 'afdkit merge' in the default format or --json; drop --csv " \
    "('afdkit merge --csv' converts the merged table)"

int cli_output_option(const char *cmd, cli_output *o, const cli_option *opt, const char *arg)
{
    int64_t v;
    switch (opt->id) {
    case OPT_CSV:
        if (o->json)
            return cli_usage_error(cmd, "--csv and --json exclude each other");
        if (o->shard_n > 0)
            return cli_usage_error(cmd, SHARD_CSV_MSG);
        o->csv = 1;
        return 0;
    case OPT_JSON:
        if (o->csv)
            return cli_usage_error(cmd, "--csv and --json exclude each other");
        o->json = 1;
        return 0;
    case OPT_SHARD:
        if (o->csv)
            return cli_usage_error(cmd, SHARD_CSV_MSG);
        return cli_shard_parse(cmd, arg, &o->shard_k, &o->shard_n);
    case OPT_PROVENANCE: o->provenance = 1; return 0;
    case OPT_QUIET:
        o->quiet = 1;
        cli_notes_quiet(1);
        return 0;
    case OPT_PRECISION:
        if (cli_integer(cmd, opt->name, arg, 1, 17, &v) != 0)
            return EXIT_USAGE;
        o->precision = (int)v;
        return 0;
    }
    return cli_usage_error(cmd, "internal error: unhandled option --%s", opt->name);
}

/* ---- writer */

cli_table *cli_table_new(const cli_output *o)
{
    cli_table *t = calloc(1, sizeof *t);
    if (t == NULL)
        return NULL;
    t->o = *o;
    t->mem = open_memstream(&t->buf, &t->len);
    if (t->mem == NULL) {
        free(t);
        return NULL;
    }
    if (o->csv && (t->meta = open_memstream(&t->meta_buf, &t->meta_len)) == NULL) {
        fclose(t->mem);
        free(t->buf);
        free(t);
        return NULL;
    }
    return t;
}

void cli_format_real(char *buf, size_t cap, double v, int precision)
{
    if (!isfinite(v)) {
        snprintf(buf, cap, "nan");
        return;
    }
    if (v == 0)
        v = 0; /* no "-0" */
    snprintf(buf, cap, "%.*g", precision, v);
}

void cli_percentile_name(char *buf, size_t cap, const char *prefix, double p,
                         const char *suffix)
{
    char num[40], *dot;
    int prec = 15;
    /* 15 digits, or more when they would round a quantile below 1 up to
     * "100" (p = 0.9999999999999999 is wq_p99_99999999999999, not wq_p100) */
    do
        snprintf(num, sizeof num, "%.*g", prec, 100 * p);
    while (p < 1 && strtod(num, NULL) >= 100 && ++prec <= 17);
    while ((dot = strchr(num, '.')) != NULL)
        *dot = '_';
    snprintf(buf, cap, "%s_p%s%s", prefix, num, suffix);
}

/* A JSON string for s; bytes that are not valid UTF-8 become '?' (jansson
 * accepts only UTF-8). */
static json_t *json_text(const char *s)
{
    json_t *j = json_string(s);
    char *copy, *c;
    if (j != NULL || s == NULL)
        return j;
    copy = strdup(s);
    if (copy == NULL)
        return NULL;
    for (c = copy; *c != '\0'; c++)
        if ((unsigned char)*c >= 0x80)
            *c = '?';
    j = json_string(copy);
    free(copy);
    return j;
}

/* A provenance value: a number when the whole text is one, else a string. */
static json_t *json_meta_value(const char *text)
{
    char *end;
    long long i;
    double d;
    if (text[0] != '\0' && strchr(" \t\n", text[0]) == NULL) {
        errno = 0;
        i = strtoll(text, &end, 10);
        if (*end == '\0' && errno == 0)
            return json_integer(i);
        errno = 0;
        d = strtod(text, &end);
        if (*end == '\0' && errno == 0 && isfinite(d))
            return json_real(d);
    }
    return json_text(text);
}

/* Set key of the provenance object (created on first use). */
static void json_meta(cli_table *t, const char *key, const char *text)
{
    json_t *v;
    if (t->prov == NULL && (t->prov = json_object()) == NULL) {
        t->oom = 1;
        return;
    }
    v = json_meta_value(text);
    if (v == NULL || json_object_set_new(t->prov, key, v) != 0)
        t->oom = 1;
}

static void meta_text(cli_table *t, const char *key, const char *text)
{
    if (t->o.json)
        json_meta(t, key, text);
    else
        fprintf(t->o.csv ? t->meta : t->mem, "## %s=%s\n", key, text);
}

/* fmt and its arguments as a string the caller frees; NULL (and t->oom
 * set) when memory runs out. */
static char *vformat(cli_table *t, const char *fmt, va_list ap)
{
    char *text = NULL;
    size_t len;
    FILE *f = open_memstream(&text, &len);
    if (f == NULL) {
        t->oom = 1;
        return NULL;
    }
    vfprintf(f, fmt, ap);
    if (fclose(f) != 0 || text == NULL) {
        free(text);
        t->oom = 1;
        return NULL;
    }
    return text;
}

void cli_table_meta(cli_table *t, const char *key, const char *fmt, ...)
{
    va_list ap;
    char *text;
    if (!t->o.provenance)
        return;
    va_start(ap, fmt);
    text = vformat(t, fmt, ap);
    va_end(ap);
    if (text == NULL)
        return;
    meta_text(t, key, text);
    free(text);
}

/* The recorded command line, quoted for a POSIX shell where needed. */
static void write_command(FILE *f)
{
    int k;
    fprintf(f, "afdkit");
    for (k = 1; k < cmdline_argc; k++) {
        const char *a = cmdline_argv[k];
        int plain = strpbrk(a, " \t\n\"'\\$`") == NULL && a[0] != '\0';
        if (plain) {
            fprintf(f, " %s", a);
        } else {
            const char *c;
            fputs(" '", f);
            for (c = a; *c != '\0'; c++) {
                if (*c == '\'')
                    fputs("'\\''", f);
                else if (*c == '\n')
                    fputs("\\n", f);
                else
                    fputc(*c, f);
            }
            fputc('\'', f);
        }
    }
}

void cli_table_provenance(cli_table *t)
{
    char *cmdline = NULL;
    size_t len;
    FILE *f;
    if (!t->o.provenance)
        return;
    cli_table_meta(t, "version", "afdkit %s", PACKAGE_VERSION);
    f = open_memstream(&cmdline, &len);
    if (f == NULL) {
        t->oom = 1;
        return;
    }
    write_command(f);
    if (fclose(f) != 0 || cmdline == NULL) {
        free(cmdline);
        t->oom = 1;
        return;
    }
    meta_text(t, "command", cmdline);
    free(cmdline);
}

void cli_table_unit(cli_table *t, const char *fmt, ...)
{
    va_list ap;
    char *text;
    va_start(ap, fmt);
    text = vformat(t, fmt, ap);
    va_end(ap);
    if (text == NULL)
        return;
    if (t->o.json) {
        /* JSON Lines are one object per row: the unit joins the provenance
         * object only when one is printed anyway (--provenance, or the
         * shard of --shard, where merge compares the parts' units). */
        if (t->o.provenance || t->o.shard_n > 0)
            json_meta(t, "unit", text);
        free(text);
        return;
    }
    free(t->unit);
    t->unit = text;
}

void cli_table_shard_order(cli_table *t, const char *column, int descending)
{
    snprintf(t->order, sizeof t->order, "%s %s", column, descending ? "desc" : "asc");
}

static void free_names(cli_table *t)
{
    int k;
    if (t->names == NULL)
        return;
    for (k = 0; k < t->ncols; k++)
        free(t->names[k]);
    free(t->names);
    t->names = NULL;
}

void cli_table_begin_array(cli_table *t, size_t n, const char *const *names)
{
    size_t k;
    if (t->blocks == 0 && t->o.shard_n > 0 && !t->o.csv) {
        char shard[64];
        snprintf(shard, sizeof shard, "%u/%u", t->o.shard_k, t->o.shard_n);
        meta_text(t, "shard", shard);
        if (t->order[0] != '\0')
            meta_text(t, "order", t->order);
    }
    if (t->blocks == 0 && t->unit != NULL)
        meta_text(t, "unit", t->unit);
    free_names(t);
    t->col = 0;
    t->ncols = 0;
    if (t->o.json) {
        /* Keep copies of the names: callers may pass buffers that do not
         * outlive the call. */
        t->blocks++;
        if (n > 0 && (t->names = calloc(n, sizeof *t->names)) == NULL) {
            t->oom = 1;
            return;
        }
        for (k = 0; k < n; k++) {
            if ((t->names[k] = strdup(names[k])) == NULL) {
                t->oom = 1;
                return;
            }
            t->ncols++;
        }
        return;
    }
    if (t->blocks > 0)
        fputs(t->o.csv ? "\r\n" : "\n\n", t->mem);
    t->blocks++;
    if (!t->o.csv)
        fputs("# ", t->mem);
    for (k = 0; k < n; k++) {
        if (k > 0)
            fputc(t->o.csv ? ',' : '\t', t->mem);
        fputs(names[k], t->mem);
    }
    t->ncols = (int)n;
    fputs(t->o.csv ? "\r\n" : "\n", t->mem);
}

void cli_table_begin_cols(cli_table *t, const char *first, ...)
{
    enum { MAX_COLS = 256 };
    const char *names[MAX_COLS];
    const char *name;
    size_t n = 0;
    va_list ap;
    va_start(ap, first);
    for (name = first; name != NULL && n < MAX_COLS; name = va_arg(ap, const char *))
        names[n++] = name;
    va_end(ap);
    cli_table_begin_array(t, n, names);
}

/* JSON: add the next cell of the row (takes the reference to v). */
static void json_cell(cli_table *t, json_t *v)
{
    char key[32];
    const char *name;
    if (v == NULL) {
        t->oom = 1;
        return;
    }
    if (t->row == NULL && (t->row = json_object()) == NULL) {
        json_decref(v);
        t->oom = 1;
        return;
    }
    if (t->col < t->ncols && t->names != NULL) {
        name = t->names[t->col];
    } else { /* more cells than columns: a caller's mistake, kept visible */
        snprintf(key, sizeof key, "_%d", t->col + 1);
        name = key;
    }
    t->col++;
    if (json_object_set_new(t->row, name, v) != 0)
        t->oom = 1;
}

static void sep(cli_table *t)
{
    if (t->col > 0)
        fputc(t->o.csv ? ',' : '\t', t->mem);
    t->col++;
}

void cli_table_int(cli_table *t, long long v)
{
    if (t->o.json) {
        json_cell(t, json_integer(v));
        return;
    }
    sep(t);
    fprintf(t->mem, "%lld", v);
}

void cli_table_uint(cli_table *t, unsigned long long v)
{
    if (t->o.json) {
        json_cell(t, v <= (unsigned long long)INT64_MAX ? json_integer((json_int_t)v)
                                                         : json_real((double)v));
        return;
    }
    sep(t);
    fprintf(t->mem, "%llu", v);
}

void cli_table_count(cli_table *t, double v)
{
    if (t->o.json && isfinite(v) && v == floor(v) && fabs(v) <= 9007199254740992.0) {
        json_cell(t, json_integer((json_int_t)v));
        return;
    }
    cli_table_real(t, v);
}

void cli_table_real(cli_table *t, double v)
{
    char buf[64];
    if (t->o.json) {
        json_cell(t, isfinite(v) ? json_real(v == 0 ? 0 : v) : json_null());
        return;
    }
    sep(t);
    cli_format_real(buf, sizeof buf, v, t->o.precision);
    fputs(buf, t->mem);
}

void cli_table_str(cli_table *t, const char *s)
{
    if (t->o.json) {
        json_cell(t, json_text(s));
        return;
    }
    sep(t);
    if (t->o.csv && strpbrk(s, ",\"\r\n") != NULL) {
        fputc('"', t->mem);
        for (; *s != '\0'; s++) {
            if (*s == '"')
                fputc('"', t->mem);
            fputc(*s, t->mem);
        }
        fputc('"', t->mem);
        return;
    }
    for (; *s != '\0'; s++)
        fputc(*s == '\t' || *s == '\n' || *s == '\r' ? ' ' : *s, t->mem);
}

/* One JSON Lines record: compact, keys in column order, reals with the
 * table's significant digits. */
static void json_line(cli_table *t, FILE *f, const json_t *v)
{
    size_t flags = JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(t->o.precision);
    if (json_dumpf(v, f, flags) != 0)
        t->oom = 1;
    fputc('\n', f);
}

void cli_table_end_row(cli_table *t)
{
    t->col = 0;
    if (t->o.json) {
        json_t *row = t->row != NULL ? t->row : json_object();
        t->row = NULL;
        if (row == NULL || (t->rows == NULL && (t->rows = json_array()) == NULL) ||
            json_array_append_new(t->rows, json_pack("[io]", t->blocks, row)) != 0)
            t->oom = 1;
        return;
    }
    fputs(t->o.csv ? "\r\n" : "\n", t->mem);
}

void cli_table_raw_line(cli_table *t, const char *line)
{
    fputs(line, t->mem);
    fputc('\n', t->mem);
}

static void release(cli_table *t)
{
    if (t->meta != NULL)
        fclose(t->meta);
    free(t->meta_buf);
    free(t->buf);
    free_names(t);
    json_decref(t->row);
    json_decref(t->rows);
    json_decref(t->prov);
    free(t->unit);
    free(t);
}

void cli_table_discard(cli_table *t)
{
    if (t == NULL)
        return;
    fclose(t->mem);
    release(t);
}

/* JSON: write the kept rows, each led by "block" when there are several. */
static void json_rows(cli_table *t)
{
    size_t i;
    json_t *pair;
    json_array_foreach(t->rows, i, pair)
    {
        json_t *row = json_array_get(pair, 1);
        if (t->blocks > 1) {
            json_t *lead = json_pack("{sO}", "block", json_array_get(pair, 0));
            if (lead == NULL || json_object_update(lead, row) != 0) {
                json_decref(lead);
                t->oom = 1;
                return;
            }
            json_line(t, t->mem, lead);
            json_decref(lead);
        } else {
            json_line(t, t->mem, row);
        }
    }
}

/* Close the memory stream and put the JSON provenance object in front:
 * *out and *len then hold the whole output.  0, or -1 when out of memory. */
static int assemble(cli_table *t, char **out, size_t *len)
{
    char *head = NULL, *all;
    size_t hlen = 0;
    FILE *f;
    json_t *wrap;
    int bad = 0;
    if (t->rows != NULL)
        json_rows(t);
    if (t->meta != NULL) {
        bad = fclose(t->meta) != 0 || t->meta_buf == NULL;
        t->meta = NULL;
    }
    if (fclose(t->mem) != 0 || t->buf == NULL || t->oom || bad)
        return -1;
    *out = t->buf;
    *len = t->len;
    if (t->prov == NULL)
        return 0;
    if ((f = open_memstream(&head, &hlen)) == NULL)
        return -1;
    wrap = json_pack("{sO}", "provenance", t->prov);
    if (wrap == NULL) {
        fclose(f);
        free(head);
        return -1;
    }
    json_line(t, f, wrap);
    json_decref(wrap);
    if (fclose(f) != 0 || head == NULL || t->oom || (all = malloc(hlen + t->len + 1)) == NULL) {
        free(head);
        return -1;
    }
    memcpy(all, head, hlen);
    memcpy(all + hlen, t->buf, t->len);
    all[hlen + t->len] = '\0';
    free(head);
    free(t->buf);
    t->buf = all;
    *out = all;
    *len = hlen + t->len;
    return 0;
}

int cli_table_finish(cli_table *t, const char *cmd)
{
    int rc = 0;
    char *out;
    size_t len;
    if (assemble(t, &out, &len) != 0) {
        release(t);
        return cli_runtime_error(cmd, "out of memory formatting the table");
    }
    /* --csv: the "## key=value" lines on stderr, before the table */
    if (t->meta_len > 0) {
        fwrite(t->meta_buf, 1, t->meta_len, stderr);
        fflush(stderr);
    }
    errno = 0;
    if (fwrite(out, 1, len, stdout) != len || fflush(stdout) != 0 || ferror(stdout))
        rc = cli_runtime_error(cmd, "cannot write the table to stdout: %s",
                               errno ? strerror(errno) : "write error");
    release(t);
    return rc;
}

/* Write data to path atomically: into a temporary file PATH.XXXXXX in the
 * same directory, flushed and closed, then renamed over path; on any failure
 * the temporary file is removed, so a full disk leaves neither a truncated
 * file nor a stray temporary behind.  The file written has the mode (and,
 * where permitted, the group and owner) of the file it replaces, or, new,
 * 0666 less the umask, as fopen would give it.  A path that exists and is
 * not a regular file (a device such as /dev/stdout, a pipe, a symbolic link)
 * is written in place: renaming over it would replace the node rather than
 * write to it. */
int cli_write_file(const char *cmd, const char *path, const char *data, size_t len)
{
    struct stat st;
    char *tmp;
    size_t n = strlen(path);
    mode_t mode;
    int fd, err = 0, exists = lstat(path, &st) == 0;
    FILE *f;
    if (exists && !S_ISREG(st.st_mode)) {
        f = fopen(path, "w");
        if (f == NULL || fwrite(data, 1, len, f) != len || fflush(f) != 0)
            err = errno ? errno : EIO;
        if (f != NULL && fclose(f) != 0 && err == 0)
            err = errno ? errno : EIO;
        return err == 0 ? 0 : cli_runtime_error(cmd, "%s: cannot write: %s", path, strerror(err));
    }
    if ((tmp = malloc(n + 8)) == NULL)
        return cli_runtime_error(cmd, "%s: cannot write: out of memory", path);
    memcpy(tmp, path, n);
    memcpy(tmp + n, ".XXXXXX", 8);
    if ((fd = mkstemp(tmp)) < 0) {
        err = errno;
        free(tmp);
        return cli_runtime_error(cmd, "%s: cannot write: %s", path, strerror(err));
    }
    /* mkstemp creates the file 0600: give it the replaced file's mode, or
     * fopen's.  Owner and group first, since a chown may clear mode bits;
     * only root may give a file away, and a user may give it only a group
     * they are in: where the group cannot be kept, its bits are not given
     * to another group. */
    if (exists) {
        struct stat now;
        mode = st.st_mode & 07777;
        if (fchown(fd, st.st_uid, st.st_gid) != 0 && fchown(fd, (uid_t)-1, st.st_gid) != 0 &&
            (fstat(fd, &now) != 0 || now.st_gid != st.st_gid))
            mode &= ~(mode_t)070;
    } else {
        mode = umask(0);
        umask(mode);
        mode = 0666 & ~mode;
    }
    errno = 0;
    if (fchmod(fd, mode) != 0 || (f = fdopen(fd, "w")) == NULL) {
        err = errno ? errno : EIO;
        close(fd);
    } else {
        if (fwrite(data, 1, len, f) != len || fflush(f) != 0 || fsync(fileno(f)) != 0)
            err = errno ? errno : EIO;
        if (fclose(f) != 0 && err == 0)
            err = errno ? errno : EIO;
    }
    if (err == 0 && rename(tmp, path) != 0)
        err = errno ? errno : EIO;
    if (err != 0)
        (void)unlink(tmp);
    free(tmp);
    return err == 0 ? 0 : cli_runtime_error(cmd, "%s: cannot write: %s", path, strerror(err));
}

int cli_table_finish_file(cli_table *t, const char *cmd, const char *path)
{
    int rc;
    char *out;
    size_t len;
    if (assemble(t, &out, &len) != 0) {
        release(t);
        return cli_runtime_error(cmd, "out of memory formatting a table");
    }
    rc = cli_write_file(cmd, path, out, len);
    release(t);
    return rc;
}
