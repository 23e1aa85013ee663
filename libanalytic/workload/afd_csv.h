/* afd_csv.h: streaming RFC 4180 CSV reader with a header row.
 *
 * The one CSV parser of afdkit: request traces (afd_trace.h) and latency
 * measurements (afd_calibrate.h) are thin layers over it.
 *
 * Dialect: fields may be quoted with '"' ("" is a literal quote, quoted
 * fields may span lines); records end with LF, CRLF or a lone CR; a UTF-8
 * byte-order mark at the start of the input and a missing final newline
 * are accepted (a second mark is text); blank (or blank-only) lines are
 * skipped; every data record must have as many fields as the header; a NUL
 * byte anywhere is an error at its line and column ("NUL byte in the
 * line").  Memory is bounded by AFD_CSV_MAX_RECORD plus the header,
 * whatever the file size.  Errors carry the 1-based line on which the
 * offending record starts.
 */
#ifndef AFD_CSV_H
#define AFD_CSV_H

#include <stddef.h>
#include <stdint.h>

#include "afd_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Longest record (in bytes, quoted newlines included) the reader accepts. */
#define AFD_CSV_MAX_RECORD (1u << 20)
/* Most columns a header may have, and most columns one can select. */
#define AFD_CSV_MAX_COLUMNS 4096
#define AFD_CSV_MAX_SELECT 16

typedef struct afd_csv afd_csv;

/* A selected field of the current record: bytes p[0..n), quotes removed.
 * escaped is set when the content holds "" escapes (not undone).  Valid until
 * the next call to afd_csv_next. */
typedef struct afd_csv_field {
    const char *p;
    size_t n;
    int escaped;
} afd_csv_field;

/* Open path and read its header.  Errors: AFD_EIO (cannot open or read),
 * AFD_EEMPTY (no header row), AFD_EPARSE (bad quoting), AFD_ENOMEM. */
AFD_API afd_status afd_csv_open(const char *path, afd_csv **out, afd_error *err);

/* As afd_csv_open, reading data[0..len), which must outlive the reader. */
AFD_API afd_status afd_csv_open_memory(const char *data, size_t len, afd_csv **out,
                                       afd_error *err);

/* Header: number of columns and their names (blanks trimmed, quotes undone). */
AFD_API size_t afd_csv_columns(const afd_csv *c);
AFD_API const char *afd_csv_column_name(const afd_csv *c, size_t i);

/* Index of the column called name: exact match first, then ASCII
 * case-insensitive.  -1 if absent, -2 if the name matches more than one. */
AFD_API long afd_csv_find_column(const afd_csv *c, const char *name);

/* Choose the columns afd_csv_next returns (at most AFD_CSV_MAX_SELECT). */
AFD_API afd_status afd_csv_select(afd_csv *c, size_t n, const size_t *cols);

/* Read the next data record into fields[0..n) of the selection, and its
 * starting line.  AFD_OK, AFD_EOF at the end, or an error (AFD_EPARSE: wrong
 * field count or bad quoting; AFD_ELIMIT: record longer than
 * AFD_CSV_MAX_RECORD; AFD_EIO).  After an error the reader keeps returning
 * it. */
AFD_API afd_status afd_csv_next(afd_csv *c, afd_csv_field *fields, long *line, afd_error *err);

/* Put the reader in the error state with this report (for layers that find
 * a bad value in a field); returns st. */
AFD_API afd_status afd_csv_fail(afd_csv *c, afd_error *err, afd_status st, long line,
                                long column, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 6, 7)))
#endif
    ;

/* Bytes consumed so far. */
AFD_API uint64_t afd_csv_bytes(const afd_csv *c);

/* "'a', 'b', 'c'": the header for messages, cut to fit cap bytes. */
AFD_API const char *afd_csv_header_list(const afd_csv *c, char *out, size_t cap);

/* Close; c may be NULL. */
AFD_API void afd_csv_close(afd_csv *c);

#ifdef __cplusplus
}
#endif

#endif /* AFD_CSV_H */
