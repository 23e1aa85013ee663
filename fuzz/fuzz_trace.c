/* fuzz_trace.c: differential libFuzzer target for the trace readers.  The
 * input is read four ways: from memory (afd_trace_open_memory), from a file
 * (afd_trace_open), and from the file compressed with gzip (zlib) and with
 * Zstandard (libzstd), which the file reader recognises by their magic
 * bytes and decompresses while it streams.  Each is read with the columns
 * recognised, with named columns, and with named columns, a time column and
 * a row filter.  Invariant: all four give the same header names, format,
 * rows (tokens, line, time, bit for bit), filtered count and final status
 * with the same message, line and column; messages are one line.  An input
 * that itself starts with gzip's or Zstandard's magic bytes is compressed
 * data to the file reader, so its plain file is not compared. */
#include <config.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>
#include <zstd.h>

#include "afdkit.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* What one reader gave. */
typedef struct outcome {
    afd_status open, last; /* status of the open and of the last read */
    afd_error open_err, last_err;
    const char *format;
    char prompt[128], output[128], time[128];
    uint64_t filtered;
    afd_trace_row *rows;
    size_t n, cap;
} outcome;

static void copy_name(char *dst, size_t cap, const char *name)
{
    snprintf(dst, cap, "%s", name != NULL ? name : "(none)");
}

/* Read a whole trace from memory (path NULL) or from path. */
static void read_trace(const uint8_t *data, size_t size, const char *path,
                       const afd_trace_options *opt, outcome *o)
{
    afd_trace *t;
    afd_trace_row row;

    memset(o, 0, sizeof *o);
    o->open = path == NULL ? afd_trace_open_memory((const char *)data, size, opt, &t, &o->open_err)
                           : afd_trace_open(path, opt, &t, &o->open_err);
    if (o->open != AFD_OK) {
        fuzz_check_error(&o->open_err);
        return;
    }
    o->format = afd_trace_format(t);
    copy_name(o->prompt, sizeof o->prompt, afd_trace_prompt_name(t));
    copy_name(o->output, sizeof o->output, afd_trace_output_name(t));
    copy_name(o->time, sizeof o->time, afd_trace_time_name(t));
    while ((o->last = afd_trace_next(t, &row, &o->last_err)) == AFD_OK) {
        if (o->n == o->cap) {
            afd_trace_row *grown;
            o->cap = o->cap ? 2 * o->cap : 64;
            if ((grown = realloc(o->rows, o->cap * sizeof *grown)) == NULL)
                abort();
            o->rows = grown;
        }
        o->rows[o->n++] = row;
    }
    if (o->last != AFD_EOF) {
        fuzz_check_error(&o->last_err);
        if (afd_trace_next(t, &row, &o->last_err) == AFD_OK) /* errors are sticky */
            abort();
    }
    o->filtered = afd_trace_filtered(t);
    afd_trace_close(t);
}

static void same_outcome(const outcome *a, const outcome *b)
{
    size_t k;
    fuzz_same_error(a->open, &a->open_err, b->open, &b->open_err);
    if (a->open != AFD_OK)
        return;
    if (strcmp(a->format, b->format) != 0 || strcmp(a->prompt, b->prompt) != 0 ||
        strcmp(a->output, b->output) != 0 || strcmp(a->time, b->time) != 0 ||
        a->filtered != b->filtered || a->n != b->n)
        abort();
    for (k = 0; k < a->n; k++)
        if (a->rows[k].prompt != b->rows[k].prompt || a->rows[k].output != b->rows[k].output ||
            a->rows[k].line != b->rows[k].line ||
            memcmp(&a->rows[k].time, &b->rows[k].time, sizeof a->rows[k].time) != 0)
            abort();
    if (a->last != AFD_EOF || b->last != AFD_EOF)
        fuzz_same_error(a->last, &a->last_err, b->last, &b->last_err);
}

/* data compressed as one gzip member; *n its length. */
static unsigned char *gzip(const uint8_t *data, size_t size, size_t *n)
{
    z_stream z;
    unsigned char *out;
    uLong cap;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        abort();
    cap = deflateBound(&z, (uLong)size) + 32;
    if ((out = malloc(cap)) == NULL)
        abort();
    z.next_in = (Bytef *)(uintptr_t)data;
    z.avail_in = (uInt)size;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    if (deflate(&z, Z_FINISH) != Z_STREAM_END)
        abort();
    *n = z.total_out;
    deflateEnd(&z);
    return out;
}

static unsigned char *zstd(const uint8_t *data, size_t size, size_t *n)
{
    size_t cap = ZSTD_compressBound(size);
    unsigned char *out = malloc(cap);
    if (out == NULL)
        abort();
    *n = ZSTD_compress(out, cap, data, size, 1);
    if (ZSTD_isError(*n))
        abort();
    return out;
}

static void free_outcome(outcome *o)
{
    free(o->rows);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const afd_trace_filter where[1] = {{"c", "x"}};
    const afd_trace_options named = {.prompt_col = "a", .output_col = "b"};
    const afd_trace_options timed = {.prompt_col = "a", .output_col = "b", .time_col = "t",
                                     .time_unit = "ms", .where = where, .n_where = 1};
    const afd_trace_options *opts[3] = {NULL, &named, &timed};
    int magic = (size >= 2 && data[0] == 0x1f && data[1] == 0x8b) ||
                (size >= 4 && data[0] == 0x28 && data[1] == 0xb5 && data[2] == 0x2f &&
                 data[3] == 0xfd);
    unsigned char *gz, *zs;
    size_t ngz, nzs, k;

    gz = gzip(data, size, &ngz);
    zs = zstd(data, size, &nzs);
    for (k = 0; k < 3; k++) {
        outcome mem, other;
        read_trace(data, size, NULL, opts[k], &mem);
        if (!magic) {
            read_trace(NULL, 0, fuzz_temp_file(data, size), opts[k], &other);
            same_outcome(&mem, &other);
            free_outcome(&other);
        }
        read_trace(NULL, 0, fuzz_temp_file(gz, ngz), opts[k], &other);
        same_outcome(&mem, &other);
        free_outcome(&other);
        read_trace(NULL, 0, fuzz_temp_file(zs, nzs), opts[k], &other);
        same_outcome(&mem, &other);
        free_outcome(&other);
        free_outcome(&mem);
    }
    free(gz);
    free(zs);
    return 0;
}
