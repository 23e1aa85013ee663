/* fuzz_util.c: helpers of the libFuzzer targets (fuzz_util.h). */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gsl/gsl_errno.h>

#include "fuzz_util.h"

/* libFuzzer calls this once before the first input.  GSL's default error
 * handler aborts; the library checks every status instead, as the command
 * line tool's main does. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    gsl_set_error_handler_off();
    return 0;
}

void fuzz_one_line(const char *text)
{
    if (strchr(text, '\n') != NULL || strchr(text, '\r') != NULL)
        abort();
}

void fuzz_check_error(const afd_error *err)
{
    fuzz_one_line(err->text);
}

static char temp_path[4096];

static void remove_temp(void)
{
    if (temp_path[0] != '\0')
        unlink(temp_path);
}

const char *fuzz_temp_file(const void *data, size_t size)
{
    FILE *f;
    if (temp_path[0] == '\0') {
        const char *dir = getenv("TMPDIR");
        int fd;
        snprintf(temp_path, sizeof temp_path, "%s/afdkit-fuzz.XXXXXX",
                 dir != NULL && dir[0] != '\0' ? dir : "/tmp");
        if ((fd = mkstemp(temp_path)) < 0)
            abort();
        close(fd);
        atexit(remove_temp);
    }
    f = fopen(temp_path, "wb");
    if (f == NULL || fwrite(data, 1, size, f) != size || fclose(f) != 0)
        abort();
    return temp_path;
}

void fuzz_same_error(afd_status sa, const afd_error *a, afd_status sb, const afd_error *b)
{
    if (sa != sb || a->line != b->line || a->column != b->column || strcmp(a->text, b->text) != 0)
        abort();
}
