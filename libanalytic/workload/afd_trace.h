/* afd_trace.h: streaming reader for request traces.
 *
 * Formats, recognised by content (never by file name):
 * - CSV, the dialect of afd_csv.h (RFC 4180 with a header row, CRLF, LF or
 *   CR record ends, a byte-order mark, no final newline, blank lines
 *   skipped, every record as wide as the header);
 * - JSON Lines: one JSON object per line, blank lines skipped; the keys of
 *   the first object play the part of the header.  Told from the first
 *   non-blank byte of the input wherever it is (after a byte-order mark and
 *   any number of blank lines): '{' followed, after blanks, by '"' or '}'
 *   (a CSV header such as "{a},b" stays CSV); or named by opt->format.  Parsed with jansson; a malformed line is an
 *   error carrying its line and the character column jansson reports.
 * Either may be compressed with gzip or Zstandard (recognised by their magic
 * bytes) and is then decompressed while it streams.  The path "-" reads
 * standard input.
 *
 * The prompt-token and output-token columns are found by name: given
 * explicitly, or recognised among the pairs
 *   ContextTokens/GeneratedTokens, num_prefill_tokens/num_decode_tokens,
 *   Request tokens/Response tokens, input_length/output_length,
 *   prompt_tokens/output_tokens
 * (exact match first, then ASCII case-insensitive; surrounding blanks are
 * ignored).  Values must be non-negative integers below 2^64; a real with no
 * fractional part ("100.0", "1e3") counts as the integer it equals.  In JSON,
 * numbers may also be given as strings; integers must fit in 63 bits.
 *
 * An optional timestamp column gives each row its arrival time in seconds:
 * given explicitly (time_col, time_unit), or recognised by exact name first
 * among TIMESTAMP (Azure; seconds), timestamp (Mooncake; milliseconds),
 * Timestamp (BurstGPT; seconds), arrived_at (Vidur; seconds), then
 * case-insensitively in that order.  Values are numbers in the column's unit
 * or date-time strings "YYYY-MM-DD HH:MM:SS.fffffff" (a 'T' separator and a
 * "Z" or "+HH:MM" offset are accepted; no offset means UTC).
 *
 * An optional block-hash column gives each row the hashes of its prompt's
 * KV blocks (the first covering tokens 1..B, the next B+1..2B, ...): named
 * (hash_col), or recognised by the name hash_ids (Mooncake).  In JSON it is
 * an array of non-negative integers; in CSV (or a JSON string) the integers
 * separated by blanks, commas or semicolons, optionally in brackets:
 * "[0, 1, 2]" or "0 1 2" (empty: no blocks).
 *
 * Row filters (where) keep only rows whose column equals a value: text
 * compared after trimming blanks (CSV, JSON strings), numbers compared as
 * numbers, JSON true/false/null as those words.  Filtered rows are counted
 * (afd_trace_filtered) and never converted, so their values may be anything.
 *
 * The reader streams: memory use is bounded by AFD_TRACE_MAX_RECORD and the
 * header, whatever the file size.  Errors carry the 1-based line on which the
 * offending record starts, and for malformed JSON the 1-based column
 * (err->column; 0 otherwise).
 */
#ifndef AFD_TRACE_H
#define AFD_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "afd_csv.h"
#include "afd_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Longest record (in bytes, quoted newlines included) the reader accepts. */
#define AFD_TRACE_MAX_RECORD AFD_CSV_MAX_RECORD

typedef struct afd_trace afd_trace;

/* Most row filters one reader applies. */
#define AFD_TRACE_MAX_WHERE 4

typedef struct afd_trace_filter {
    const char *column; /* header name */
    const char *value;  /* the value rows must have to be kept */
} afd_trace_filter;

typedef struct afd_trace_options {
    const char *prompt_col; /* header name of the prompt-token column, or NULL */
    const char *output_col; /* header name of the output-token column, or NULL */
    const char *time_col;   /* header name of the timestamp column, NULL to
                               recognise one, "" to ignore timestamps */
    const char *time_unit;  /* "s", "ms", "us", "ns" for numeric times, or NULL
                               (the recognised column's unit; seconds) */
    const afd_trace_filter *where; /* row filters (all must match), or NULL */
    size_t n_where;                /* at most AFD_TRACE_MAX_WHERE */
    const char *format;            /* "csv" or "jsonl", or NULL: told from the content */
    const char *hash_col;          /* header name of the block-hash column, NULL to
                                      recognise hash_ids, "" to ignore block hashes */
} afd_trace_options;

typedef struct afd_trace_row {
    uint64_t prompt; /* prompt (context) tokens P */
    uint64_t output; /* output (generated) tokens, as written in the file */
    long line;       /* 1-based line on which the record starts */
    double time;     /* arrival time in seconds; NaN without a time column */
    const uint64_t *hash_ids; /* the prompt's block hashes (valid until the next
                                 call), NULL without a hash column */
    size_t n_hash;            /* how many */
} afd_trace_row;

/* Open path ("-": standard input) and read its header.  opt may be NULL
 * (recognise the columns, no filters).  Errors: AFD_EIO (cannot open/read;
 * text holds strerror), AFD_EEMPTY (no header row), AFD_EPARSE (unknown or
 * ambiguous column, bad quoting, malformed JSON, corrupt compressed data),
 * AFD_EINVAL (unknown time unit or format, too many filters). */
AFD_API afd_status afd_trace_open(const char *path, const afd_trace_options *opt,
                                  afd_trace **out, afd_error *err);

/* As afd_trace_open, reading from data[0..len) (not copied: it must outlive
 * the reader).  Used for tests and fuzzing. */
AFD_API afd_status afd_trace_open_memory(const char *data, size_t len,
                                         const afd_trace_options *opt, afd_trace **out,
                                         afd_error *err);

/* Read the next data record that passes the filters.  Returns AFD_OK,
 * AFD_EOF at the end, or an error (AFD_EPARSE: wrong field count,
 * non-integer, negative, unterminated quote, malformed JSON, a key missing
 * from an object, a bad time; AFD_ERANGE: value >= 2^64; AFD_ELIMIT: record
 * longer than AFD_TRACE_MAX_RECORD; AFD_EIO).  After an error the reader stays in the
 * error state and keeps returning it. */
AFD_API afd_status afd_trace_next(afd_trace *t, afd_trace_row *row, afd_error *err);

/* Header names of the selected columns, as written in the file. */
AFD_API const char *afd_trace_prompt_name(const afd_trace *t);
AFD_API const char *afd_trace_output_name(const afd_trace *t);

/* Header name of the block-hash column, or NULL when there is none. */
AFD_API const char *afd_trace_hash_name(const afd_trace *t);

/* Header name of the timestamp column, or NULL when there is none. */
AFD_API const char *afd_trace_time_name(const afd_trace *t);
/* Seconds per unit of its numeric values (NaN when there is none). */
AFD_API double afd_trace_time_seconds(const afd_trace *t);

/* Rows dropped by the filters so far. */
AFD_API uint64_t afd_trace_filtered(const afd_trace *t);

/* "csv" or "jsonl". */
AFD_API const char *afd_trace_format(const afd_trace *t);

/* Bytes consumed so far, after decompression (for progress reports). */
AFD_API uint64_t afd_trace_bytes(const afd_trace *t);

/* Close the reader; t may be NULL. */
AFD_API void afd_trace_close(afd_trace *t);

#ifdef __cplusplus
}
#endif

#endif /* AFD_TRACE_H */
