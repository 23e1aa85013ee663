/* fuzz_util.h: what the libFuzzer targets share: the one-line check of an
 * error message, a temporary file for the readers that take a path, and
 * the comparison of two readers' errors; GSL's error handler off. */
#ifndef AFD_FUZZ_UTIL_H
#define AFD_FUZZ_UTIL_H

#include <stddef.h>

#include "afdkit.h"

/* libFuzzer's initialisation hook, shared by every target: turns GSL's
 * aborting error handler off. */
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* Abort unless text is one line (no '\n' or '\r'). */
void fuzz_one_line(const char *text);

/* Abort when an error message is not one line. */
void fuzz_check_error(const afd_error *err);

/* Write data[0..size) to this process's temporary file (created on the
 * first call, removed at exit) and return its path.  Aborts when the file
 * cannot be written: the target would test nothing. */
const char *fuzz_temp_file(const void *data, size_t size);

/* Abort unless two readers failed alike: the same status, line, column
 * and text. */
void fuzz_same_error(afd_status sa, const afd_error *a, afd_status sb, const afd_error *b);

#endif /* AFD_FUZZ_UTIL_H */
