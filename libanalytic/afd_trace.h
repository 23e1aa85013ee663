/* afd_trace.h: streaming reader for request-trace CSV files.
 *
 * The CSV dialect is that of afd_csv.h (RFC 4180 with a header row, CRLF,
 * LF or CR record ends, a byte-order mark, no final newline, blank lines
 * skipped, every record as wide as the header).
 *
 * The prompt-token and output-token columns are found by name: given
 * explicitly, or recognised among the pairs
 *   ContextTokens/GeneratedTokens, num_prefill_tokens/num_decode_tokens,
 *   Request tokens/Response tokens, input_length/output_length,
 *   prompt_tokens/output_tokens
 * (exact match first, then ASCII case-insensitive; surrounding blanks are
 * ignored).  Values must be non-negative decimal integers below 2^64.
 *
 * The reader streams: memory use is bounded by AFD_TRACE_MAX_RECORD and the
 * header, whatever the file size.  Errors carry the 1-based line on which the
 * offending record starts and the 1-based field number.
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

typedef struct afd_trace_options {
    const char *prompt_col; /* header name of the prompt-token column, or NULL */
    const char *output_col; /* header name of the output-token column, or NULL */
} afd_trace_options;

typedef struct afd_trace_row {
    uint64_t prompt; /* prompt (context) tokens P */
    uint64_t output; /* output (generated) tokens, as written in the file */
    long line;       /* 1-based line on which the record starts */
} afd_trace_row;

/* Open path and read its header.  opt may be NULL (recognise both columns).
 * Errors: AFD_EIO (cannot open/read; text holds strerror), AFD_EEMPTY (no
 * header row), AFD_EPARSE (unknown or ambiguous column, bad quoting). */
AFD_API afd_status afd_trace_open(const char *path, const afd_trace_options *opt,
                                  afd_trace **out, afd_error *err);

/* As afd_trace_open, reading from data[0..len) (not copied: it must outlive
 * the reader).  Used for tests and fuzzing. */
AFD_API afd_status afd_trace_open_memory(const char *data, size_t len,
                                         const afd_trace_options *opt, afd_trace **out,
                                         afd_error *err);

/* Read the next data record.  Returns AFD_OK, AFD_EOF at the end, or an
 * error (AFD_EPARSE: wrong field count, non-integer, negative, unterminated
 * quote; AFD_ERANGE: value >= 2^64; AFD_ELIMIT: record longer than
 * AFD_TRACE_MAX_RECORD; AFD_EIO).  After an error the reader stays in the
 * error state and keeps returning it. */
AFD_API afd_status afd_trace_next(afd_trace *t, afd_trace_row *row, afd_error *err);

/* Header names of the selected columns, as written in the file. */
AFD_API const char *afd_trace_prompt_name(const afd_trace *t);
AFD_API const char *afd_trace_output_name(const afd_trace *t);

/* Bytes consumed so far (for progress reports and throughput). */
AFD_API uint64_t afd_trace_bytes(const afd_trace *t);

/* Close the reader; t may be NULL. */
AFD_API void afd_trace_close(afd_trace *t);

#ifdef __cplusplus
}
#endif

#endif /* AFD_TRACE_H */
