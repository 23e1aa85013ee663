/* table.c: the table writer of the command-line contract.
 *
 * Default format: optional "## key=value" lines, one "# " header line per
 * block with tab-separated column names, tab-separated rows, two blank lines
 * between blocks.  --csv: RFC 4180 (CRLF records, header row, no '#' lines;
 * blocks are separated by one empty record).  Reals use %.{precision}g, non-finite values
 * print as "nan" (gnuplot treats nan as missing but plots -inf), and -0 as 0.
 */
#include <config.h>

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

struct cli_table {
    cli_output o;
    FILE *mem;
    char *buf;
    size_t len;
    int ncols;
    int col;    /* cells written in the current row */
    int blocks; /* blocks started */
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
    {"csv", 0, NULL, "print RFC 4180 CSV instead of the tab-separated table", OPT_CSV},
    {"precision", 0, "N", "significant digits for real numbers (1-17, default 10)",
     OPT_PRECISION},
    {"provenance", 0, NULL, "start the table with '## key=value' lines (version, command)",
     OPT_PROVENANCE},
    {"quiet", 'q', NULL, "no progress reports on stderr", OPT_QUIET},
    {NULL, 0, NULL, NULL, 0},
};

const cli_group cli_output_group = {"Output", output_options};

void cli_output_init(cli_output *o)
{
    o->csv = 0;
    o->precision = 10;
    o->provenance = 0;
    o->quiet = 0;
}

int cli_output_option(const char *cmd, cli_output *o, const cli_option *opt, const char *arg)
{
    int64_t v;
    switch (opt->id) {
    case OPT_CSV: o->csv = 1; return 0;
    case OPT_PROVENANCE: o->provenance = 1; return 0;
    case OPT_QUIET: o->quiet = 1; return 0;
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
    char num[32], *dot;
    snprintf(num, sizeof num, "%.15g", 100 * p);
    while ((dot = strchr(num, '.')) != NULL)
        *dot = '_';
    snprintf(buf, cap, "%s_p%s%s", prefix, num, suffix);
}

void cli_table_meta(cli_table *t, const char *key, const char *fmt, ...)
{
    va_list ap;
    if (!t->o.provenance || t->o.csv)
        return;
    fprintf(t->mem, "## %s=", key);
    va_start(ap, fmt);
    vfprintf(t->mem, fmt, ap);
    va_end(ap);
    fputc('\n', t->mem);
}

void cli_table_provenance(cli_table *t)
{
    int k;
    if (!t->o.provenance || t->o.csv)
        return;
    cli_table_meta(t, "version", "afdkit %s", PACKAGE_VERSION);
    fprintf(t->mem, "## command=afdkit");
    for (k = 1; k < cmdline_argc; k++) {
        const char *a = cmdline_argv[k];
        int plain = strpbrk(a, " \t\n\"'\\$`") == NULL && a[0] != '\0';
        if (plain) {
            fprintf(t->mem, " %s", a);
        } else {
            const char *c;
            fputs(" '", t->mem);
            for (c = a; *c != '\0'; c++) {
                if (*c == '\'')
                    fputs("'\\''", t->mem);
                else if (*c == '\n')
                    fputs("\\n", t->mem);
                else
                    fputc(*c, t->mem);
            }
            fputc('\'', t->mem);
        }
    }
    fputc('\n', t->mem);
}

void cli_table_begin_cols(cli_table *t, const char *first, ...)
{
    va_list ap;
    const char *name;
    if (t->blocks > 0)
        fputs(t->o.csv ? "\r\n" : "\n\n", t->mem);
    t->blocks++;
    t->ncols = 0;
    t->col = 0;
    if (!t->o.csv)
        fputs("# ", t->mem);
    va_start(ap, first);
    for (name = first; name != NULL; name = va_arg(ap, const char *)) {
        if (t->ncols > 0)
            fputc(t->o.csv ? ',' : '\t', t->mem);
        fputs(name, t->mem);
        t->ncols++;
    }
    va_end(ap);
    fputs(t->o.csv ? "\r\n" : "\n", t->mem);
}

static void sep(cli_table *t)
{
    if (t->col > 0)
        fputc(t->o.csv ? ',' : '\t', t->mem);
    t->col++;
}

void cli_table_int(cli_table *t, long long v)
{
    sep(t);
    fprintf(t->mem, "%lld", v);
}

void cli_table_uint(cli_table *t, unsigned long long v)
{
    sep(t);
    fprintf(t->mem, "%llu", v);
}

void cli_table_real(cli_table *t, double v)
{
    char buf[64];
    sep(t);
    cli_format_real(buf, sizeof buf, v, t->o.precision);
    fputs(buf, t->mem);
}

void cli_table_str(cli_table *t, const char *s)
{
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

void cli_table_end_row(cli_table *t)
{
    fputs(t->o.csv ? "\r\n" : "\n", t->mem);
    t->col = 0;
}

void cli_table_discard(cli_table *t)
{
    if (t == NULL)
        return;
    fclose(t->mem);
    free(t->buf);
    free(t);
}

int cli_table_finish(cli_table *t, const char *cmd)
{
    int rc = 0;
    if (fclose(t->mem) != 0 || t->buf == NULL) {
        free(t->buf);
        free(t);
        return cli_runtime_error(cmd, "out of memory formatting the table");
    }
    errno = 0;
    if (fwrite(t->buf, 1, t->len, stdout) != t->len || fflush(stdout) != 0 || ferror(stdout))
        rc = cli_runtime_error(cmd, "cannot write the table to stdout: %s",
                               errno ? strerror(errno) : "write error");
    free(t->buf);
    free(t);
    return rc;
}

int cli_write_file(const char *cmd, const char *path, const char *data, size_t len)
{
    FILE *f = fopen(path, "w");
    int rc = 0;
    if (f == NULL || fwrite(data, 1, len, f) != len || fflush(f) != 0)
        rc = cli_runtime_error(cmd, "%s: cannot write: %s", path, strerror(errno));
    if (f != NULL && fclose(f) != 0 && rc == 0)
        rc = cli_runtime_error(cmd, "%s: cannot write: %s", path, strerror(errno));
    return rc;
}

int cli_table_finish_file(cli_table *t, const char *cmd, const char *path)
{
    int rc;
    if (fclose(t->mem) != 0 || t->buf == NULL) {
        free(t->buf);
        free(t);
        return cli_runtime_error(cmd, "out of memory formatting a table");
    }
    rc = cli_write_file(cmd, path, t->buf, t->len);
    free(t->buf);
    free(t);
    return rc;
}
