/* trace.c: streaming RFC 4180 reader for request traces (see afd_trace.h).
 *
 * The reader keeps one buffer of AFD_TRACE_MAX_RECORD plus one read chunk.
 * Each record is scanned in place; when a record runs past the end of the
 * buffered bytes, the unread tail is moved to the front and more is read, so
 * memory stays constant whatever the file size.  Only the two selected
 * columns are converted; the other fields are skipped byte by byte.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "afd_parse.h"
#include "afd_trace.h"
#include "internal.h"

#define CHUNK (1u << 18)
#define BUF_CAP (AFD_TRACE_MAX_RECORD + CHUNK)
#define MAX_COLUMNS 4096

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

struct field {
    const char *p; /* content, quotes removed (escapes not undone) */
    size_t n;
    int escaped;   /* content holds "" escapes */
};

struct record {
    size_t next;   /* offset just past the record and its terminator */
    long lines;    /* line terminators consumed (quoted ones included) */
    size_t nfields;
    int blank;     /* a single empty unquoted field: a blank line */
    struct field f[2];
};

enum scan { SCAN_RECORD, SCAN_MORE, SCAN_END, SCAN_ERROR };

struct afd_trace {
    int fd;           /* -1 when reading from memory */
    char *buf;        /* owned buffer (file mode) */
    const char *data; /* buf, or the caller's memory */
    size_t pos, end;  /* unread bytes: data[pos..end) */
    int eof;          /* nothing beyond data[end] */
    uint64_t consumed;/* bytes before data[pos] */
    long line;        /* 1-based line of data[pos] */
    size_t ncols;
    size_t col[2];    /* field index of the prompt and output columns */
    char *name[2];
    afd_status sticky;
    afd_error sticky_err;
    /* header mode only */
    char **header;
    size_t nheader;
};

static int is_blank(char c)
{
    return c == ' ' || c == '\t';
}

/* Copy s[0..n) into out for an error message: at most 40 bytes, control and
 * non-ASCII bytes escaped, so that the message stays on one line. */
static void show(const char *s, size_t n, char *out, size_t cap)
{
    size_t o = 0;
    size_t i;
    for (i = 0; i < n && i < 40 && o + 8 < cap; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7f && c != '\\') {
            out[o++] = (char)c;
        } else {
            o += (size_t)snprintf(out + o, cap - o, "\\x%02x", c);
        }
    }
    if (i < n && o + 4 < cap) {
        memcpy(out + o, "...", 3);
        o += 3;
    }
    out[o] = '\0';
}

static afd_status fail(afd_trace *t, afd_error *err, afd_status st, long line, long column,
                       const char *fmt, ...) AFD_PRINTF(6, 7);

static afd_status fail(afd_trace *t, afd_error *err, afd_status st, long line, long column,
                       const char *fmt, ...)
{
    afd_error e;
    va_list ap;
    e.line = line;
    e.column = column;
    va_start(ap, fmt);
    vsnprintf(e.text, sizeof e.text, fmt, ap);
    va_end(ap);
    if (t != NULL) {
        t->sticky = st;
        t->sticky_err = e;
    }
    if (err != NULL)
        *err = e;
    return st;
}

/* Read more bytes after moving the unread tail to the front of the buffer. */
static afd_status refill(afd_trace *t, afd_error *err)
{
    size_t rem = t->end - t->pos;
    if (t->fd < 0) {
        t->eof = 1;
        return AFD_OK;
    }
    if (rem >= AFD_TRACE_MAX_RECORD)
        return fail(t, err, AFD_ENOMEM, t->line, 0,
                    "record longer than %u bytes (unbalanced quote?)",
                    (unsigned)AFD_TRACE_MAX_RECORD);
    if (t->pos > 0) {
        memmove(t->buf, t->buf + t->pos, rem);
        t->consumed += t->pos;
        t->pos = 0;
        t->end = rem;
    }
    for (;;) {
        ssize_t n = read(t->fd, t->buf + t->end, BUF_CAP - t->end);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return fail(t, err, AFD_EIO, t->line, 0, "read error: %s", strerror(errno));
        if (n == 0)
            t->eof = 1;
        t->end += (size_t)n;
        return AFD_OK;
    }
}

/* Scan one record starting at data[pos].  In header mode (hdr != 0) every
 * field is copied into t->header; otherwise only the selected columns are
 * located.  Nothing in t changes except the header array. */
static enum scan scan_record(afd_trace *t, int hdr, struct record *rec, afd_error *err)
{
    const char *d = t->data;
    size_t end = t->end;
    size_t i = t->pos;
    int eof = t->eof;

    rec->lines = 0;
    rec->nfields = 0;
    rec->blank = 0;
    rec->f[0].p = rec->f[1].p = NULL;
    if (i == end)
        return eof ? SCAN_END : SCAN_MORE;

    for (;;) {
        struct field f;
        f.escaped = 0;
        if (i < end && d[i] == '"') {
            size_t start = ++i;
            for (;;) {
                char c;
                if (i == end) {
                    if (!eof)
                        return SCAN_MORE;
                    fail(t, err, AFD_EPARSE, t->line, (long)rec->nfields + 1,
                         "unterminated quoted field");
                    return SCAN_ERROR;
                }
                c = d[i];
                if (c == '"') {
                    if (i + 1 == end && !eof)
                        return SCAN_MORE;
                    if (i + 1 < end && d[i + 1] == '"') {
                        f.escaped = 1;
                        i += 2;
                        continue;
                    }
                    break;
                }
                if (c == '\n') {
                    rec->lines++;
                } else if (c == '\r') {
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
                show(d + i, end - i < 20 ? end - i : 20, v, sizeof v);
                fail(t, err, AFD_EPARSE, t->line, (long)rec->nfields + 1,
                     "unexpected text after a closing quote: '%s'", v);
                return SCAN_ERROR;
            }
        } else {
            size_t start = i;
            while (i < end && d[i] != ',' && d[i] != '\n' && d[i] != '\r')
                i++;
            if (i == end && !eof)
                return SCAN_MORE;
            f.p = d + start;
            f.n = i - start;
            if (rec->nfields == 0 && (i == end || d[i] != ',')) {
                size_t k = 0;
                while (k < f.n && is_blank(f.p[k]))
                    k++;
                rec->blank = k == f.n;
            }
        }

        if (hdr) {
            char *name;
            size_t k, o = 0;
            if (t->nheader == MAX_COLUMNS) {
                fail(t, err, AFD_EPARSE, t->line, 0, "header has more than %d columns",
                     MAX_COLUMNS);
                return SCAN_ERROR;
            }
            name = malloc(f.n + 1);
            if (name == NULL) {
                fail(t, err, AFD_ENOMEM, t->line, 0, "out of memory reading the header");
                return SCAN_ERROR;
            }
            for (k = 0; k < f.n; k++) {
                name[o++] = f.p[k];
                if (f.escaped && f.p[k] == '"')
                    k++;
            }
            while (o > 0 && is_blank(name[o - 1]))
                o--;
            name[o] = '\0';
            k = 0;
            while (is_blank(name[k]))
                k++;
            memmove(name, name + k, o - k + 1);
            t->header[t->nheader++] = name;
        } else {
            if (rec->nfields == t->col[PROMPT])
                rec->f[PROMPT] = f;
            if (rec->nfields == t->col[OUTPUT])
                rec->f[OUTPUT] = f;
        }
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

/* Advance past a scanned record. */
static void consume(afd_trace *t, const struct record *rec)
{
    t->pos = rec->next;
    t->line += rec->lines;
}

/* Scan the next non-blank record, reading more input as needed. */
static enum scan next_record(afd_trace *t, int hdr, struct record *rec, long *line,
                             afd_error *err)
{
    for (;;) {
        size_t nheader = t->nheader;
        enum scan s = scan_record(t, hdr, rec, err);
        if (s == SCAN_MORE || s == SCAN_ERROR) {
            /* A header record is rescanned from its start: drop the names
             * it has pushed so far. */
            while (t->nheader > nheader)
                free(t->header[--t->nheader]);
        }
        if (s == SCAN_MORE) {
            if (refill(t, err) != AFD_OK)
                return SCAN_ERROR;
            continue;
        }
        if (s == SCAN_RECORD && rec->next - t->pos > AFD_TRACE_MAX_RECORD) {
            fail(t, err, AFD_ENOMEM, t->line, 0, "record longer than %u bytes (unbalanced quote?)",
                 (unsigned)AFD_TRACE_MAX_RECORD);
            return SCAN_ERROR;
        }
        if (s == SCAN_RECORD && rec->blank && rec->nfields == 1) {
            if (hdr)
                free(t->header[--t->nheader]);
            consume(t, rec);
            continue;
        }
        *line = t->line;
        return s;
    }
}

static const char *header_list(const afd_trace *t, char *out, size_t cap)
{
    size_t o = 0;
    size_t k;
    out[0] = '\0';
    for (k = 0; k < t->nheader && o + 1 < cap; k++) {
        char v[200];
        show(t->header[k], strlen(t->header[k]), v, sizeof v);
        o += (size_t)snprintf(out + o, cap - o, "%s'%s'", k ? ", " : "", v);
    }
    if (o >= cap && cap > 4)
        memcpy(out + cap - 4, "...", 4);
    return out;
}

/* Index of the header column called name: exact match first, then ASCII
 * case-insensitive.  Returns -1 if absent, -2 if ambiguous. */
static long find_column(const afd_trace *t, const char *name)
{
    long hit = -1;
    size_t k;
    int pass;
    for (pass = 0; pass < 2; pass++) {
        for (k = 0; k < t->nheader; k++) {
            int eq = pass == 0 ? strcmp(t->header[k], name) == 0
                               : strcasecmp(t->header[k], name) == 0;
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

static afd_status select_column(afd_trace *t, int role, const char *given, afd_error *err)
{
    static const char *const role_name[2] = {"prompt-token", "output-token"};
    static const char *const role_opt[2] = {"--prompt-col", "--output-col"};
    char list[160];
    long c = -1;
    size_t k;

    if (given != NULL) {
        c = find_column(t, given);
        if (c == -1)
            return fail(t, err, AFD_EPARSE, 1, 0, "unknown column '%s' (header has %s)", given,
                        header_list(t, list, sizeof list));
    } else {
        for (k = 0; k < N_KNOWN && c == -1; k++)
            c = find_column(t, known_names[k][role]);
        if (c == -1)
            return fail(t, err, AFD_EPARSE, 1, 0,
                        "no %s column recognised (header has %s); name it with %s",
                        role_name[role], header_list(t, list, sizeof list), role_opt[role]);
    }
    if (c == -2)
        return fail(t, err, AFD_EPARSE, 1, 0, "column '%s' appears more than once in the header",
                    given != NULL ? given : known_names[k - 1][role]);
    t->col[role] = (size_t)c;
    t->name[role] = t->header[c];
    return AFD_OK;
}

static afd_status read_header(afd_trace *t, const afd_trace_options *opt, afd_error *err)
{
    struct record rec;
    long line;
    enum scan s;
    afd_status st;
    size_t k;

    /* UTF-8 byte-order mark. */
    while (t->end - t->pos < 3 && !t->eof)
        if ((st = refill(t, err)) != AFD_OK)
            return st;
    if (t->end - t->pos >= 3 && memcmp(t->data + t->pos, "\xEF\xBB\xBF", 3) == 0)
        t->pos += 3;

    t->header = calloc(MAX_COLUMNS, sizeof *t->header);
    if (t->header == NULL)
        return fail(t, err, AFD_ENOMEM, 0, 0, "out of memory");
    s = next_record(t, 1, &rec, &line, err);
    if (s == SCAN_ERROR)
        return t->sticky;
    if (s == SCAN_END)
        return fail(t, err, AFD_EEMPTY, 1, 0, "empty file: expected a header row");
    consume(t, &rec);
    t->ncols = t->nheader;

    if ((st = select_column(t, PROMPT, opt ? opt->prompt_col : NULL, err)) != AFD_OK)
        return st;
    if ((st = select_column(t, OUTPUT, opt ? opt->output_col : NULL, err)) != AFD_OK)
        return st;
    if (t->col[PROMPT] == t->col[OUTPUT])
        return fail(t, err, AFD_EPARSE, 1, 0,
                    "the prompt-token and output-token columns are both '%s'", t->name[PROMPT]);

    /* Keep the two selected names, drop the rest of the header. */
    for (k = 0; k < t->nheader; k++)
        if (k != t->col[PROMPT] && k != t->col[OUTPUT])
            free(t->header[k]);
    free(t->header);
    t->header = NULL;
    t->nheader = 0;
    return AFD_OK;
}

static afd_status finish_open(afd_trace *t, const afd_trace_options *opt, afd_trace **out,
                              afd_error *err)
{
    afd_status st = read_header(t, opt, err);
    if (st != AFD_OK) {
        afd_trace_close(t);
        return st;
    }
    t->sticky = AFD_OK;
    *out = t;
    return AFD_OK;
}

static afd_trace *new_reader(void)
{
    afd_trace *t = calloc(1, sizeof *t);
    if (t != NULL) {
        t->fd = -1;
        t->line = 1;
        t->sticky = AFD_OK;
    }
    return t;
}

afd_status afd_trace_open(const char *path, const afd_trace_options *opt, afd_trace **out,
                          afd_error *err)
{
    afd_trace *t;
    struct stat sb;

    *out = NULL;
    afd_error_clear(err);
    t = new_reader();
    if (t == NULL)
        return fail(NULL, err, AFD_ENOMEM, 0, 0, "out of memory");
    t->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (t->fd < 0) {
        int e = errno;
        free(t);
        return fail(NULL, err, AFD_EIO, 0, 0, "cannot open: %s", strerror(e));
    }
    if (fstat(t->fd, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        afd_trace_close(t);
        return fail(NULL, err, AFD_EIO, 0, 0, "cannot read: is a directory");
    }
#ifdef POSIX_FADV_SEQUENTIAL
    (void)posix_fadvise(t->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
    t->buf = malloc(BUF_CAP);
    if (t->buf == NULL) {
        afd_trace_close(t);
        return fail(NULL, err, AFD_ENOMEM, 0, 0, "out of memory");
    }
    t->data = t->buf;
    return finish_open(t, opt, out, err);
}

afd_status afd_trace_open_memory(const char *data, size_t len, const afd_trace_options *opt,
                                 afd_trace **out, afd_error *err)
{
    afd_trace *t;

    *out = NULL;
    afd_error_clear(err);
    t = new_reader();
    if (t == NULL)
        return fail(NULL, err, AFD_ENOMEM, 0, 0, "out of memory");
    t->data = data;
    t->end = len;
    t->eof = 1;
    return finish_open(t, opt, out, err);
}

/* Convert one selected field; on error fill err and return its status. */
static afd_status convert(afd_trace *t, int role, const struct field *f, long line,
                          uint64_t *out, afd_error *err)
{
    char v[200];
    afd_status st;
    size_t k = 0;

    if (f->escaped)
        st = AFD_EPARSE;
    else
        st = afd_parse_u64(f->p, f->n, out);
    if (st == AFD_OK)
        return AFD_OK;
    show(f->p, f->n, v, sizeof v);
    while (k < f->n && is_blank(f->p[k]))
        k++;
    if (k == f->n)
        return fail(t, err, AFD_EPARSE, line, (long)t->col[role] + 1, "column '%s' is empty",
                    t->name[role]);
    if (st == AFD_ERANGE)
        return fail(t, err, AFD_ERANGE, line, (long)t->col[role] + 1,
                    "column '%s' is too large (>= 2^64): '%s'", t->name[role], v);
    if (f->p[k] == '-' && k + 1 < f->n && f->p[k + 1] >= '0' && f->p[k + 1] <= '9')
        return fail(t, err, AFD_EPARSE, line, (long)t->col[role] + 1,
                    "column '%s' is negative: '%s'", t->name[role], v);
    return fail(t, err, AFD_EPARSE, line, (long)t->col[role] + 1,
                "column '%s' is not an integer: '%s'", t->name[role], v);
}

afd_status afd_trace_next(afd_trace *t, afd_trace_row *row, afd_error *err)
{
    struct record rec;
    long line;
    enum scan s;
    afd_status st;

    row->prompt = row->output = 0;
    row->line = 0;
    if (t->sticky != AFD_OK) {
        if (err != NULL)
            *err = t->sticky_err;
        return t->sticky;
    }
    s = next_record(t, 0, &rec, &line, err);
    if (s == SCAN_END)
        return AFD_EOF;
    if (s == SCAN_ERROR)
        return t->sticky;
    if (rec.nfields != t->ncols)
        return fail(t, err, AFD_EPARSE, line, 0, "row has %zu field%s, header has %zu",
                    rec.nfields, rec.nfields == 1 ? "" : "s", t->ncols);
    if ((st = convert(t, PROMPT, &rec.f[PROMPT], line, &row->prompt, err)) != AFD_OK)
        return st;
    if ((st = convert(t, OUTPUT, &rec.f[OUTPUT], line, &row->output, err)) != AFD_OK)
        return st;
    row->line = line;
    consume(t, &rec);
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
    return t->consumed + t->pos;
}

void afd_trace_close(afd_trace *t)
{
    size_t k;
    if (t == NULL)
        return;
    if (t->fd >= 0)
        close(t->fd);
    if (t->header != NULL) {
        for (k = 0; k < t->nheader; k++)
            free(t->header[k]);
        free(t->header);
    } else {
        free(t->name[PROMPT]);
        free(t->name[OUTPUT]);
    }
    free(t->buf);
    free(t);
}
