/* cmd_merge.c: afdkit merge, the table of a whole run from the tables of its
 * shards (--shard K/N). */
#include <config.h>

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"

enum { OPT_M_CSV = OPT_COMMAND, OPT_M_JSON, OPT_M_PROVENANCE };

static const cli_option merge_options[] = {
    {"csv", 0, NULL, "print the merged table as RFC 4180 CSV (parts in the default format)",
     OPT_M_CSV},
    {"json", 0, NULL, "print JSON Lines (parts in JSON Lines are merged as they are)", OPT_M_JSON},
    {"provenance", 0, NULL, "start with the merge's provenance and the parts' (seed, ...)",
     OPT_M_PROVENANCE},
    {NULL, 0, NULL, NULL, 0},
};
static const cli_group merge_group = {"Options", merge_options};
static const cli_group *const merge_groups[] = {&merge_group, NULL};

#define MAX_PARTS 100000
struct args {
    const char **files;
    size_t n_files;
    int csv, json, provenance;
};

static int own(void *ctx, const cli_option *opt, const char *arg)
{
    struct args *a = ctx;
    if (opt == NULL) {
        const char **grown;
        if (a->n_files >= MAX_PARTS)
            return cli_usage_error("merge", "more than %d files", MAX_PARTS);
        grown = realloc(a->files, (a->n_files + 1) * sizeof *grown);
        if (grown == NULL)
            return cli_runtime_error("merge", "out of memory");
        a->files = grown;
        a->files[a->n_files++] = arg;
        return 0;
    }
    if (opt->id == OPT_M_PROVENANCE)
        a->provenance = 1;
    else if ((opt->id == OPT_M_CSV ? a->json : a->csv) != 0)
        return cli_usage_error("merge", "--csv and --json exclude each other");
    else
        *(opt->id == OPT_M_CSV ? &a->csv : &a->json) = 1;
    return 0;
}

static int read_all(const char *cmd, const char *path, char **out)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL, *grown;
    const char *nul;
    size_t len = 0, cap = 0, got;
    if (f == NULL)
        return cli_input_error(cmd, "%s: cannot open: %s", path, strerror(errno));
    for (;;) {
        if (cap - len < 65536) {
            cap = cap ? 2 * cap : 1 << 20;
            if ((grown = realloc(buf, cap + 1)) == NULL) {
                free(buf);
                fclose(f);
                return cli_runtime_error(cmd, "%s: out of memory", path);
            }
            buf = grown;
        }
        got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0)
            break;
    }
    if (ferror(f)) {
        free(buf);
        fclose(f);
        return cli_runtime_error(cmd, "%s: cannot read: %s", path, strerror(errno));
    }
    fclose(f);
    if ((nul = memchr(buf, '\0', len)) != NULL) {
        size_t line = 1;
        const char *q;
        for (q = buf; q < nul; q++)
            line += *q == '\n';
        free(buf);
        return cli_input_error(cmd, "%s:%zu: NUL byte in the line", path, line);
    }
    buf[len] = '\0';
    *out = buf;
    return 0;
}

/* The keys of a JSON row, joined by tabs (to compare rows' columns). */
static char *json_keys(const json_t *obj)
{
    const char *key;
    json_t *v;
    size_t len = 0;
    char *s, *o;
    json_object_foreach((json_t *)obj, key, v) len += strlen(key) + 1;
    if ((s = malloc(len + 1)) == NULL)
        return NULL;
    o = s;
    json_object_foreach((json_t *)obj, key, v)
    {
        size_t n = strlen(key);
        if (o != s)
            *o++ = '\t';
        memcpy(o, key, n);
        o += n;
    }
    *o = '\0';
    return s;
}

/* ---- a table's cells as JSON values */

/* Significant digits of a number's text ("0.00455247" has 6), 0 if the text
 * is not a finite number. */
static int sig_digits(const char *s)
{
    char *end;
    int n = 0, lead = 1;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || !isfinite(v))
        return 0;
    for (; *s != '\0' && *s != 'e' && *s != 'E'; s++) {
        if (*s < '0' || *s > '9')
            continue;
        if (*s == '0' && lead)
            continue;
        lead = 0;
        n++;
    }
    return n > 0 ? n : 1;
}

/* The largest number of significant digits among a TSV row's cells. */
static int row_digits(const char *row)
{
    char cell[128];
    int best = 0;
    while (*row != '\0') {
        size_t n = strcspn(row, "\t");
        if (n < sizeof cell) {
            int d;
            memcpy(cell, row, n);
            cell[n] = '\0';
            if ((d = sig_digits(cell)) > best)
                best = d;
        }
        row += n + (row[n] == '\t');
    }
    return best;
}

/* One cell: "nan" as null, integers as integers, other numbers as reals
 * (printed with enough digits to give the text's value back), the rest as
 * strings. */
static void json_cell_from_text(cli_table *t, const char *text)
{
    char *end;
    long long i;
    double v;
    if (strcmp(text, "nan") == 0) {
        cli_table_real(t, NAN);
        return;
    }
    errno = 0;
    i = strtoll(text, &end, 10);
    if (end != text && *end == '\0' && errno == 0) {
        cli_table_int(t, i);
        return;
    }
    v = strtod(text, &end);
    if (end != text && *end == '\0' && isfinite(v))
        cli_table_real(t, v);
    else
        cli_table_str(t, text);
}

/* ---- the order of a sorted table */

typedef struct sort_ctx {
    double *key; /* numeric keys (NaN: missing or not a number, sorted last) */
    int descending;
} sort_ctx;

static sort_ctx *g_sort; /* qsort has no context argument */

static int by_key(const void *pa, const void *pb)
{
    size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
    double x = g_sort->key[a], y = g_sort->key[b];
    int nx = isnan(x), ny = isnan(y);
    if (nx != ny)
        return nx - ny;
    if (!nx && x != y)
        return (x < y) == !g_sort->descending ? -1 : 1;
    return (a > b) - (a < b); /* ties keep list order: a stable sort */
}

/* The numeric value of column col of a TSV row (NaN if none). */
static double tsv_cell(const char *row, size_t col)
{
    const char *c = row, *tab;
    char buf[64], *end;
    size_t k, n;
    double v;
    for (k = 0; k < col && c != NULL; k++)
        c = (tab = strchr(c, '\t')) != NULL ? tab + 1 : NULL;
    if (c == NULL)
        return NAN;
    tab = strchr(c, '\t');
    n = tab != NULL ? (size_t)(tab - c) : strlen(c);
    if (n == 0 || n >= sizeof buf)
        return NAN;
    memcpy(buf, c, n);
    buf[n] = '\0';
    v = strtod(buf, &end);
    return *end == '\0' ? v : NAN;
}

static int run(const cli_command *self, int argc, char **argv)
{
    const char *cmd = self->path;
    struct args a;
    cli_common c;
    cli_part *parts = NULL, **by_k = NULL;
    size_t *order_idx = NULL;
    double *keys = NULL;
    const char **names = NULL;
    char *keys0 = NULL, *header_copy = NULL;
    cli_table *t = NULL;
    size_t f, total = 0, i, ncols = 0;
    unsigned n = 0;
    int rc;

    memset(&a, 0, sizeof a);
    cli_common_init(&c);
    rc = cli_parse_args(self, argc, argv, &c, own, &a);
    if (rc != CLI_CONTINUE)
        goto out;
    if (a.n_files == 0) {
        rc = cli_usage_error(cmd, "give the tables of the parts: afdkit merge FILE...");
        goto out;
    }
    parts = calloc(a.n_files, sizeof *parts);
    if (parts == NULL) {
        rc = cli_runtime_error(cmd, "out of memory");
        goto out;
    }

    /* Read and check each part. */
    for (f = 0; f < a.n_files; f++) {
        cli_part *p = &parts[f];
        p->path = a.files[f];
        if ((rc = read_all(cmd, p->path, &p->text)) != 0)
            goto out;
        if ((rc = cli_part_parse(p)) != 0) {
            if (rc == 1)
                cli_runtime_error(cmd, "%s", p->msg);
            else
                cli_input_error(cmd, "%s", p->msg);
            goto out;
        }
        if (p->n == 0) {
            rc = cli_input_error(cmd,
                                 "%s: not the table of a shard (no '## shard=K/N' line; "
                                 "JSON: no \"shard\" in the provenance): run the command "
                                 "with --shard K/N",
                                 p->path);
            goto out;
        }
        if (f == 0) {
            n = p->n;
            continue;
        }
        if (p->json != parts[0].json) {
            rc = cli_input_error(cmd, "%s: JSON Lines and a table mixed (%s is %s)", p->path,
                                 parts[0].path, parts[0].json ? "JSON Lines" : "a table");
            goto out;
        }
        if (p->n != n) {
            rc = cli_input_error(cmd, "%s:%zu: shard %u/%u, but %s is one of %u parts", p->path,
                                 p->shard_line, p->k, p->n, parts[0].path, n);
            goto out;
        }
        if (!p->json && strcmp(p->header, parts[0].header) != 0) {
            rc = cli_input_error(cmd,
                                 "%s:%zu: columns differ from those of %s: parts of "
                                 "different commands?",
                                 p->path, p->header_line, parts[0].path);
            goto out;
        }
        if ((p->order == NULL) != (parts[0].order == NULL) ||
            (p->order != NULL && strcmp(p->order, parts[0].order) != 0)) {
            rc = cli_input_error(cmd, "%s: sorted by '%s', %s by '%s'", p->path,
                                 p->order ? p->order : "nothing", parts[0].path,
                                 parts[0].order ? parts[0].order : "nothing");
            goto out;
        }
        /* The unit: every part's numbers in the same one. */
        if ((p->unit == NULL) != (parts[0].unit == NULL) ||
            (p->unit != NULL && strcmp(p->unit, parts[0].unit) != 0)) {
            rc = cli_input_error(cmd, "%s:%zu: unit=%s, but %s has unit=%s: parts of different "
                                      "runs",
                                 p->path, p->unit != NULL ? p->unit_line : p->json ? 1 : p->header_line,
                                 p->unit != NULL ? p->unit : "(none)", parts[0].path,
                                 parts[0].unit != NULL ? parts[0].unit : "(none)");
            goto out;
        }
        /* Provenance (with --provenance on the parts): all but the command
         * line must agree, or the parts come from different runs. */
        for (i = 0; i < p->n_meta; i++) {
            size_t j;
            if (strcmp(p->meta[i].key, "command") == 0)
                continue;
            for (j = 0; j < parts[0].n_meta; j++)
                if (strcmp(parts[0].meta[j].key, p->meta[i].key) == 0)
                    break;
            if (j < parts[0].n_meta && strcmp(parts[0].meta[j].value, p->meta[i].value) != 0) {
                rc = cli_input_error(cmd,
                                     "%s:%zu: %s=%s, but %s has %s=%s: parts of different "
                                     "runs",
                                     p->path, p->meta[i].line, p->meta[i].key, p->meta[i].value,
                                     parts[0].path, parts[0].meta[j].key, parts[0].meta[j].value);
                goto out;
            }
        }
    }
    if (a.csv && parts[0].json) {
        rc = cli_usage_error(cmd, "--csv converts tables; these parts are JSON Lines");
        goto out;
    }
    if (a.json && !parts[0].json) {
        /* Reals with as many digits as the most precise cell: each comes
         * back with its own value. */
        c.out.precision = 1;
        for (f = 0; f < a.n_files; f++)
            for (i = 0; i < parts[f].n_rows; i++) {
                int d = row_digits(parts[f].rows[i]);
                if (d > c.out.precision)
                    c.out.precision = d > 17 ? 17 : d;
            }
    }

    /* Every part once. */
    by_k = calloc(n, sizeof *by_k);
    if (by_k == NULL) {
        rc = cli_runtime_error(cmd, "out of memory");
        goto out;
    }
    for (f = 0; f < a.n_files; f++) {
        cli_part *p = &parts[f];
        if (by_k[p->k - 1] != NULL) {
            rc = cli_input_error(cmd, "%s: part %u/%u given twice (also %s)", p->path, p->k, n,
                                 by_k[p->k - 1]->path);
            goto out;
        }
        by_k[p->k - 1] = p;
        total += p->n_rows;
    }
    for (i = 0; i < n; i++)
        if (by_k[i] == NULL) {
            rc = cli_input_error(cmd, "part %zu/%u is missing (%zu of %u parts given)", i + 1, n,
                                 a.n_files, n);
            goto out;
        }
    /* Item i went to part i mod N: part K holds total/N rows, one more when
     * K <= total mod N. */
    for (i = 0; i < n; i++) {
        size_t want = total / n + (i < total % n);
        if (by_k[i]->n_rows != want) {
            rc = cli_input_error(cmd,
                                 "%s: part %zu/%u has %zu rows, expected %zu of %zu in "
                                 "all: parts of different runs, or a part cut short?",
                                 by_k[i]->path, i + 1, n, by_k[i]->n_rows, want, total);
            goto out;
        }
    }

    /* JSON rows: every object has the same keys in the same order. */
    if (parts[0].json)
        for (i = 0; i < total; i++) {
            cli_part *p = by_k[i % n];
            size_t r = i / n;
            char *keys_i = json_keys(p->objs[r]);
            if (keys_i == NULL) {
                rc = cli_runtime_error(cmd, "out of memory");
                goto out;
            }
            if (keys0 == NULL) {
                keys0 = keys_i;
                continue;
            }
            if (strcmp(keys0, keys_i) != 0) {
                free(keys_i);
                rc = cli_input_error(cmd,
                                     "%s:%zu: the keys differ from the first row's: parts "
                                     "of different commands?",
                                     p->path, p->row_line[r]);
                goto out;
            }
            free(keys_i);
        }

    /* The rows in list order, then sorted as the command sorts them. */
    order_idx = malloc((total + 1) * sizeof *order_idx);
    if (order_idx == NULL) {
        rc = cli_runtime_error(cmd, "out of memory");
        goto out;
    }
    for (i = 0; i < total; i++)
        order_idx[i] = i;
    if (parts[0].order != NULL && total > 1) {
        char col[96], dir[8];
        size_t ci = 0;
        sort_ctx sc;
        int found = 0;
        if (sscanf(parts[0].order, "%95s %7s", col, dir) != 2 ||
            (strcmp(dir, "asc") != 0 && strcmp(dir, "desc") != 0)) {
            rc = cli_input_error(cmd, "%s: order is not 'COLUMN asc|desc': '%s'", parts[0].path,
                                 parts[0].order);
            goto out;
        }
        if (!parts[0].json) {
            const char *h = parts[0].header;
            size_t len = strlen(col);
            for (ci = 0; h != NULL; ci++) {
                if (strncmp(h, col, len) == 0 && (h[len] == '\t' || h[len] == '\0')) {
                    found = 1;
                    break;
                }
                h = strchr(h, '\t');
                h = h != NULL ? h + 1 : NULL;
            }
        } else {
            found = json_object_get(by_k[0]->objs[0], col) != NULL;
        }
        if (!found) {
            rc = cli_input_error(cmd, "%s: sorted by '%s', which is not a column", parts[0].path,
                                 col);
            goto out;
        }
        keys = malloc(total * sizeof *keys);
        if (keys == NULL) {
            rc = cli_runtime_error(cmd, "out of memory");
            goto out;
        }
        for (i = 0; i < total; i++) {
            cli_part *p = by_k[i % n];
            if (p->json) {
                json_t *v = json_object_get(p->objs[i / n], col);
                keys[i] = json_is_number(v) ? json_number_value(v) : NAN;
            } else {
                keys[i] = tsv_cell(p->rows[i / n], ci);
            }
        }
        sc.key = keys;
        sc.descending = strcmp(dir, "desc") == 0;
        g_sort = &sc;
        qsort(order_idx, total, sizeof *order_idx, by_key);
        g_sort = NULL;
    }

    /* Write. */
    c.out.csv = a.csv;
    c.out.json = parts[0].json || a.json;
    c.out.provenance = a.provenance;
    t = cli_table_new(&c.out);
    if (t == NULL) {
        rc = cli_runtime_error(cmd, "out of memory");
        goto out;
    }
    cli_table_provenance(t);
    for (i = 0; i < parts[0].n_meta; i++)
        if (strcmp(parts[0].meta[i].key, "command") != 0 &&
            strcmp(parts[0].meta[i].key, "version") != 0)
            cli_table_meta(t, parts[0].meta[i].key, "%s", parts[0].meta[i].value);
    if (parts[0].unit != NULL)
        cli_table_unit(t, "%s", parts[0].unit);
    if (!parts[0].json) {
        char *h;
        header_copy = strdup(parts[0].header);
        names = calloc(strlen(parts[0].header) + 1, sizeof *names);
        if (header_copy == NULL || names == NULL) {
            rc = cli_runtime_error(cmd, "out of memory");
            goto out;
        }
        for (h = strtok(header_copy, "\t"); h != NULL; h = strtok(NULL, "\t"))
            names[ncols++] = h;
        cli_table_begin_array(t, ncols, names);
    }
    for (i = 0; i < total; i++) {
        size_t j = order_idx[i];
        char *row = by_k[j % n]->rows[j / n];
        if (parts[0].json) {
            cli_table_raw_line(t, row);
        } else {
            char *cell = row, *tab;
            for (;;) {
                tab = strchr(cell, '\t');
                if (tab != NULL)
                    *tab = '\0';
                if (a.json)
                    json_cell_from_text(t, cell);
                else
                    cli_table_str(t, cell);
                if (tab == NULL)
                    break;
                cell = tab + 1;
            }
            cli_table_end_row(t);
        }
    }
    rc = cli_table_finish(t, cmd);
    t = NULL;
out:
    cli_table_discard(t);
    if (parts != NULL)
        for (f = 0; f < a.n_files; f++)
            cli_part_free(&parts[f]);
    free(parts);
    free(by_k);
    free(order_idx);
    free(keys);
    free(keys0);
    free(names);
    free(header_copy);
    free(a.files);
    return rc;
}

const cli_command cli_cmd_merge = {
    .name = "merge",
    .path = "merge",
    .summary = "join the tables of a run split by --shard K/N into the whole table",
    .usage = "merge [--csv|--json] [--provenance] FILE...",
    .description =
        "Reads the tables that the N parts of a run printed (each made with --shard K/N,\n"
        "in the default format or all with --json; the files in any order) and prints\n"
        "the table of the whole run: byte for byte what the command prints without\n"
        "--shard.  Item i of the list (0-based) is in part (i mod N) + 1, so the rows\n"
        "are put back in turn; a table the command sorts is sorted again by the same\n"
        "column (the '## order=' line of the parts).\n"
        "\n"
        "Refused, with the file and line: a file that is not a part (no '## shard=K/N'\n"
        "line), a part missing or given twice, parts with different N, columns, row\n"
        "counts, units ('## unit=') or provenance (seed, trials, ...: parts of\n"
        "different runs).  The merged table states the parts' unit.\n"
        "\n"
        "Parts in JSON Lines give JSON Lines.  Parts in the default format give that\n"
        "format, or CSV with --csv, or JSON Lines with --json (cells that are numbers\n"
        "become numbers, with the digits of the most precise cell; nan becomes null).\n"
        "--provenance starts the table with the merge's command line and the parts'\n"
        "provenance (without their command lines).\n"
        "\n"
        "Example, four parts on one host with GNU parallel:\n"
        "  parallel afdkit sweep --geometric --mu-p 100 --mu-d 500 --hw paper-910c \\\n"
        "    -B 256 --r 1:64 --shard {}/4 '>' part{}.tsv ::: 1 2 3 4\n"
        "  afdkit merge part*.tsv > sweep.tsv",
    .groups = merge_groups,
    .run = run,
};
