/* csv.c: streaming RFC 4180 reader (see afd_csv.h).
 *
 * The reader keeps one buffer of AFD_CSV_MAX_RECORD plus one read chunk.
 * Each record is scanned in place; when a record runs past the end of the
 * buffered bytes, the unread tail is moved to the front and more is read, so
 * memory stays constant whatever the file size.  Only the selected columns
 * are located; the other fields are skipped byte by byte.
 */
#include <config.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "afd_csv.h"
#include "internal.h"

#define CHUNK (1u << 18)
#define BUF_CAP (AFD_CSV_MAX_RECORD + CHUNK)

struct record {
    size_t next;    /* offset just past the record and its terminator */
    long lines;     /* line terminators consumed (quoted ones included) */
    size_t nfields;
    int blank;      /* a single empty unquoted field: a blank line */
    afd_csv_field f[AFD_CSV_MAX_SELECT];
};

enum scan { SCAN_RECORD, SCAN_MORE, SCAN_END, SCAN_ERROR };

struct afd_csv {
    afd_priv_src *src; /* NULL when reading from memory */
    char *buf;         /* owned buffer (file mode) */
    const char *data;  /* buf, or the caller's memory */
    size_t pos, end;   /* unread bytes: data[pos..end) */
    int eof;           /* nothing beyond data[end] */
    uint64_t consumed; /* bytes before data[pos] */
    long line;         /* 1-based line of data[pos] */
    long header_line;  /* 1-based line of the header row */
    char **header;
    size_t ncols;
    int reading_header;
    size_t nsel;
    size_t sel[AFD_CSV_MAX_SELECT];
    /* slot[k] = index into the selection of column k, or -1; sized ncols */
    signed char *slot;
    afd_status sticky;
    afd_error sticky_err;
};

static int is_blank(char c)
{
    return c == ' ' || c == '\t';
}

const char *afd_priv_show(const char *s, size_t n, char *out, size_t cap)
{
    size_t o = 0;
    size_t i;
    for (i = 0; i < n && i < 40 && o + 8 < cap; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7f && c != '\\')
            out[o++] = (char)c;
        else
            o += (size_t)snprintf(out + o, cap - o, "\\x%02x", c);
    }
    if (i < n && o + 4 < cap) {
        memcpy(out + o, "...", 3);
        o += 3;
    }
    out[o] = '\0';
    return out;
}

static afd_status vfail(afd_csv *c, afd_error *err, afd_status st, long line, long column,
                        const char *fmt, va_list ap) AFD_PRINTF(6, 0);

static afd_status vfail(afd_csv *c, afd_error *err, afd_status st, long line, long column,
                        const char *fmt, va_list ap)
{
    afd_error e;
    e.line = line;
    e.column = column;
    vsnprintf(e.text, sizeof e.text, fmt, ap);
    if (c != NULL) {
        c->sticky = st;
        c->sticky_err = e;
    }
    if (err != NULL)
        *err = e;
    return st;
}

afd_status afd_csv_fail(afd_csv *c, afd_error *err, afd_status st, long line, long column,
                        const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    st = vfail(c, err, st, line, column, fmt, ap);
    va_end(ap);
    return st;
}

/* Read more bytes after moving the unread tail to the front of the buffer. */
static afd_status refill(afd_csv *c, afd_error *err)
{
    size_t rem = c->end - c->pos;
    if (c->src == NULL) {
        c->eof = 1;
        return AFD_OK;
    }
    if (rem >= AFD_CSV_MAX_RECORD)
        return afd_csv_fail(c, err, AFD_ELIMIT, c->line, 0,
                            "record longer than %u bytes (unbalanced quote?)",
                            (unsigned)AFD_CSV_MAX_RECORD);
    if (c->pos > 0) {
        memmove(c->buf, c->buf + c->pos, rem);
        c->consumed += c->pos;
        c->pos = 0;
        c->end = rem;
    }
    {
        size_t n;
        afd_error e;
        afd_status st = afd_priv_src_read(c->src, c->buf + c->end, BUF_CAP - c->end, &n, &e);
        if (st != AFD_OK)
            return afd_csv_fail(c, err, st, c->line, 0, "%s", e.text);
        if (n == 0)
            c->eof = 1;
        c->end += n;
        return AFD_OK;
    }
}

/* Store field f of the record: the whole header while reading it, the
 * selected columns afterwards. */
static afd_status store(afd_csv *c, struct record *rec, const afd_csv_field *f, afd_error *err)
{
    if (c->reading_header) {
        char *name;
        size_t k, o = 0;
        if (c->ncols == AFD_CSV_MAX_COLUMNS)
            return afd_csv_fail(c, err, AFD_EPARSE, c->line, 0,
                                "header has more than %d columns", AFD_CSV_MAX_COLUMNS);
        name = malloc(f->n + 1);
        if (name == NULL)
            return afd_csv_fail(c, err, AFD_ENOMEM, c->line, 0, "out of memory");
        for (k = 0; k < f->n; k++) {
            name[o++] = f->p[k];
            if (f->escaped && f->p[k] == '"')
                k++;
        }
        while (o > 0 && is_blank(name[o - 1]))
            o--;
        name[o] = '\0';
        for (k = 0; is_blank(name[k]); k++)
            ;
        memmove(name, name + k, o - k + 1);
        c->header[c->ncols++] = name;
    } else if (rec->nfields < c->ncols && c->slot[rec->nfields] >= 0) {
        rec->f[c->slot[rec->nfields]] = *f;
    }
    return AFD_OK;
}

/* A NUL byte at data[i] of the record that starts at data[pos]: an error at
 * its line and column (columns in characters, as afd_priv_json_parse
 * counts them). */
static enum scan nul_byte(afd_csv *c, const struct record *rec, size_t i, afd_error *err)
{
    size_t start = i;
    long column = 1;
    while (start > c->pos && c->data[start - 1] != '\n' && c->data[start - 1] != '\r')
        start--;
    for (; start < i; start++)
        if (((unsigned char)c->data[start] & 0xC0) != 0x80)
            column++;
    afd_csv_fail(c, err, AFD_EPARSE, c->line + rec->lines, column, "NUL byte in the line");
    return SCAN_ERROR;
}

/* Scan one record starting at data[pos].  Nothing in c changes except the
 * header array (rolled back by the caller on SCAN_MORE). */
static enum scan scan_record(afd_csv *c, struct record *rec, afd_error *err)
{
    const char *d = c->data;
    size_t end = c->end;
    size_t i = c->pos;
    int eof = c->eof;
    size_t k;

    rec->lines = 0;
    rec->nfields = 0;
    rec->blank = 0;
    for (k = 0; k < c->nsel; k++)
        rec->f[k].p = NULL;
    if (i == end)
        return eof ? SCAN_END : SCAN_MORE;

    for (;;) {
        afd_csv_field f;
        f.escaped = 0;
        if (i < end && d[i] == '"') {
            size_t start = ++i;
            for (;;) {
                char ch;
                if (i == end) {
                    if (!eof)
                        return SCAN_MORE;
                    afd_csv_fail(c, err, AFD_EPARSE, c->line, 0, "unterminated quoted field");
                    return SCAN_ERROR;
                }
                ch = d[i];
                if (ch == '\0')
                    return nul_byte(c, rec, i, err);
                if (ch == '"') {
                    if (i + 1 == end && !eof)
                        return SCAN_MORE;
                    if (i + 1 < end && d[i + 1] == '"') {
                        f.escaped = 1;
                        i += 2;
                        continue;
                    }
                    break;
                }
                if (ch == '\n') {
                    rec->lines++;
                } else if (ch == '\r') {
                    if (i + 1 == end && !eof)
                        return SCAN_MORE;
                    if (i + 1 == end || d[i + 1] != '\n')
                        rec->lines++;
                }
                i++;
            }
            f.p = d + start;
            f.n = i - start;
            i++; /* closing quote */
            while (i < end && is_blank(d[i]))
                i++;
            if (i == end && !eof)
                return SCAN_MORE;
            if (i < end && d[i] != ',' && d[i] != '\n' && d[i] != '\r') {
                char v[200];
                afd_priv_show(d + i, end - i < 20 ? end - i : 20, v, sizeof v);
                afd_csv_fail(c, err, AFD_EPARSE, c->line, 0,
                             "unexpected text after a closing quote: '%s'", v);
                return SCAN_ERROR;
            }
        } else {
            size_t start = i;
            while (i < end && d[i] != ',' && d[i] != '\n' && d[i] != '\r' && d[i] != '\0')
                i++;
            if (i < end && d[i] == '\0')
                return nul_byte(c, rec, i, err);
            if (i == end && !eof)
                return SCAN_MORE;
            f.p = d + start;
            f.n = i - start;
            if (rec->nfields == 0 && (i == end || d[i] != ',')) {
                for (k = 0; k < f.n && is_blank(f.p[k]); k++)
                    ;
                rec->blank = k == f.n;
            }
        }
        if (store(c, rec, &f, err) != AFD_OK)
            return SCAN_ERROR;
        rec->nfields++;

        if (i < end && d[i] == ',') {
            i++;
            if (i == end && !eof)
                return SCAN_MORE;
            continue;
        }
        break;
    }

    /* Record terminator: LF, CRLF or a lone CR; none at the end of input. */
    if (i < end) {
        if (d[i] == '\r') {
            if (i + 1 == end && !eof)
                return SCAN_MORE;
            i++;
            if (i < end && d[i] == '\n')
                i++;
        } else {
            i++;
        }
        rec->lines++;
    }
    rec->next = i;
    return SCAN_RECORD;
}

static void consume(afd_csv *c, const struct record *rec)
{
    c->pos = rec->next;
    c->line += rec->lines;
}

/* Scan the next non-blank record, reading more input as needed. */
static enum scan next_record(afd_csv *c, struct record *rec, long *line, afd_error *err)
{
    for (;;) {
        size_t ncols = c->ncols;
        enum scan s = scan_record(c, rec, err);
        if (c->reading_header && (s == SCAN_MORE || s == SCAN_ERROR)) {
            /* A header record is rescanned from its start: drop the names
             * it has pushed so far. */
            while (c->ncols > ncols)
                free(c->header[--c->ncols]);
        }
        if (s == SCAN_MORE) {
            if (refill(c, err) != AFD_OK)
                return SCAN_ERROR;
            continue;
        }
        if (s == SCAN_RECORD && rec->next - c->pos > AFD_CSV_MAX_RECORD) {
            afd_csv_fail(c, err, AFD_ELIMIT, c->line, 0,
                         "record longer than %u bytes (unbalanced quote?)",
                         (unsigned)AFD_CSV_MAX_RECORD);
            return SCAN_ERROR;
        }
        if (s == SCAN_RECORD && rec->blank && rec->nfields == 1) {
            if (c->reading_header)
                free(c->header[--c->ncols]);
            consume(c, rec);
            continue;
        }
        *line = c->line;
        return s;
    }
}

static afd_status read_header(afd_csv *c, afd_error *err)
{
    struct record rec;
    long line;
    enum scan s;
    afd_status st;

    /* UTF-8 byte-order mark, at the start of the input only: a reader
     * opened on a source that afd_priv_src_peek has read ahead starts after
     * the mark and the blank lines it dropped (consumed > 0), and a mark
     * there is text. */
    while (c->end - c->pos < 3 && !c->eof)
        if ((st = refill(c, err)) != AFD_OK)
            return st;
    if (c->consumed == 0)
        c->pos += afd_priv_bom(c->data + c->pos, c->end - c->pos);

    c->header = calloc(AFD_CSV_MAX_COLUMNS, sizeof *c->header);
    if (c->header == NULL)
        return afd_csv_fail(c, err, AFD_ENOMEM, 0, 0, "out of memory");
    c->reading_header = 1;
    s = next_record(c, &rec, &line, err);
    c->reading_header = 0;
    if (s == SCAN_ERROR)
        return c->sticky;
    if (s == SCAN_END)
        return afd_csv_fail(c, err, AFD_EEMPTY, 1, 0, "empty file: expected a header row");
    c->header_line = line;
    consume(c, &rec);
    c->slot = malloc(c->ncols);
    if (c->slot == NULL)
        return afd_csv_fail(c, err, AFD_ENOMEM, 0, 0, "out of memory");
    memset(c->slot, -1, c->ncols);
    return AFD_OK;
}

static afd_csv *new_reader(void)
{
    afd_csv *c = calloc(1, sizeof *c);
    if (c != NULL)
        c->line = 1;
    return c;
}

static afd_status finish_open(afd_csv *c, afd_csv **out, afd_error *err)
{
    afd_status st = read_header(c, err);
    if (st != AFD_OK) {
        afd_csv_close(c);
        return st;
    }
    c->sticky = AFD_OK;
    *out = c;
    return AFD_OK;
}

afd_status afd_priv_csv_open_src(afd_priv_src *src, long lines, uint64_t bytes, afd_csv **out,
                                 afd_error *err)
{
    afd_csv *c;

    *out = NULL;
    afd_error_clear(err);
    c = new_reader();
    if (c == NULL) {
        afd_priv_src_close(src);
        return afd_csv_fail(NULL, err, AFD_ENOMEM, 0, 0, "out of memory");
    }
    c->src = src;
    c->line += lines;
    c->consumed = bytes;
    c->buf = malloc(BUF_CAP);
    if (c->buf == NULL) {
        afd_csv_close(c);
        return afd_csv_fail(NULL, err, AFD_ENOMEM, 0, 0, "out of memory");
    }
    c->data = c->buf;
    return finish_open(c, out, err);
}

afd_status afd_csv_open(const char *path, afd_csv **out, afd_error *err)
{
    afd_priv_src *src;
    afd_status st;

    *out = NULL;
    afd_error_clear(err);
    if ((st = afd_priv_src_open(path, &src, err)) != AFD_OK)
        return st;
    return afd_priv_csv_open_src(src, 0, 0, out, err);
}

afd_status afd_csv_open_memory(const char *data, size_t len, afd_csv **out, afd_error *err)
{
    afd_csv *c;

    *out = NULL;
    afd_error_clear(err);
    c = new_reader();
    if (c == NULL)
        return afd_csv_fail(NULL, err, AFD_ENOMEM, 0, 0, "out of memory");
    c->data = data;
    c->end = len;
    c->eof = 1;
    return finish_open(c, out, err);
}

size_t afd_csv_columns(const afd_csv *c)
{
    return c->ncols;
}

const char *afd_csv_column_name(const afd_csv *c, size_t i)
{
    return i < c->ncols ? c->header[i] : NULL;
}

long afd_csv_find_column(const afd_csv *c, const char *name)
{
    long hit = -1;
    size_t k;
    int pass;
    for (pass = 0; pass < 2; pass++) {
        for (k = 0; k < c->ncols; k++) {
            int eq = pass == 0 ? strcmp(c->header[k], name) == 0
                               : strcasecmp(c->header[k], name) == 0;
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

afd_status afd_csv_select(afd_csv *c, size_t n, const size_t *cols)
{
    size_t k;
    if (n > AFD_CSV_MAX_SELECT)
        return AFD_EINVAL;
    for (k = 0; k < n; k++)
        if (cols[k] >= c->ncols)
            return AFD_EINVAL;
    memset(c->slot, -1, c->ncols);
    for (k = 0; k < n; k++) {
        if (c->slot[cols[k]] >= 0)
            return AFD_EINVAL; /* the same column twice */
        c->sel[k] = cols[k];
        c->slot[cols[k]] = (signed char)k;
    }
    c->nsel = n;
    return AFD_OK;
}

afd_status afd_csv_next(afd_csv *c, afd_csv_field *fields, long *line, afd_error *err)
{
    struct record rec;
    enum scan s;
    size_t k;

    *line = 0;
    if (c->sticky != AFD_OK) {
        if (err != NULL)
            *err = c->sticky_err;
        return c->sticky;
    }
    s = next_record(c, &rec, line, err);
    if (s == SCAN_END)
        return AFD_EOF;
    if (s == SCAN_ERROR)
        return c->sticky;
    if (rec.nfields != c->ncols)
        return afd_csv_fail(c, err, AFD_EPARSE, *line, 0, "row has %zu field%s, header has %zu",
                            rec.nfields, rec.nfields == 1 ? "" : "s", c->ncols);
    for (k = 0; k < c->nsel; k++)
        fields[k] = rec.f[k];
    consume(c, &rec);
    return AFD_OK;
}

uint64_t afd_csv_bytes(const afd_csv *c)
{
    return c->consumed + c->pos;
}

const char *afd_csv_header_list(const afd_csv *c, char *out, size_t cap)
{
    size_t o = 0;
    size_t k;
    out[0] = '\0';
    for (k = 0; k < c->ncols && o + 1 < cap; k++) {
        char v[200];
        afd_priv_show(c->header[k], strlen(c->header[k]), v, sizeof v);
        o += (size_t)snprintf(out + o, cap - o, "%s'%s'", k ? ", " : "", v);
    }
    if (o >= cap && cap > 4)
        memcpy(out + cap - 4, "...", 4);
    return out;
}

void afd_csv_close(afd_csv *c)
{
    size_t k;
    if (c == NULL)
        return;
    afd_priv_src_close(c->src);
    if (c->header != NULL) {
        for (k = 0; k < c->ncols; k++)
            free(c->header[k]);
        free(c->header);
    }
    free(c->slot);
    free(c->buf);
    free(c);
}

afd_status afd_priv_csv_select_names(afd_csv *c, const char *const *names, size_t n,
                                     size_t nreq, size_t *nsel, afd_error *err)
{
    size_t cols[AFD_CSV_MAX_SELECT], j;
    *nsel = 0;
    if (n > AFD_CSV_MAX_SELECT)
        return afd_priv_fail(err, AFD_EINVAL, 0, 0, "more than %d columns asked for",
                             AFD_CSV_MAX_SELECT);
    for (j = 0; j < n; j++) {
        char list[160];
        long k = afd_csv_find_column(c, names[j]);
        if (k == -1 && j >= nreq) /* an optional column ends the selection */
            break;
        if (k < 0)
            return afd_priv_fail(err, AFD_EPARSE, c->header_line, 0, "%s column '%s' (header has %s)",
                                 k == -1 ? "no" : "more than one", names[j],
                                 afd_csv_header_list(c, list, sizeof list));
        cols[j] = (size_t)k;
    }
    *nsel = j;
    return afd_csv_select(c, j, cols);
}

long afd_priv_csv_header_line(const struct afd_csv *c)
{
    return c->header_line;
}
