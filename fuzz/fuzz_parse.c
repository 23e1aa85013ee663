/* fuzz_parse.c: libFuzzer target for the strict number parsers and the list
 * syntax.  Invariants: results are finite, errors leave NaN/zero outputs,
 * and every value of a parsed list lies within its bounds. */
#include <config.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "afdkit.h"
#include "cli.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    uint64_t u;
    int64_t i;
    double d;
    cli_list l;
    char msg[256];
    size_t k;
    int integers;

    if (s == NULL)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';

    if (afd_parse_u64(s, size, &u) != AFD_OK && u != 0)
        abort();
    if (afd_parse_double(s, &d) == AFD_OK ? !isfinite(d) : !isnan(d))
        abort();
    if (afd_parse_double_n(s, size, &d) == AFD_OK ? !isfinite(d) : !isnan(d))
        abort();
    if (afd_parse_i64(s, &i) != AFD_OK && i != 0)
        abort();
    for (integers = 0; integers < 2; integers++) {
        if (cli_list_parse_quiet(s, integers, -1e6, 1e6, &l, msg, sizeof msg) == 0) {
            for (k = 0; k < l.n; k++)
                if (!(l.v[k] >= -1e6 && l.v[k] <= 1e6) || (integers && l.v[k] != floor(l.v[k])))
                    abort();
            cli_list_free(&l);
        } else if (l.v != NULL || l.n != 0 || msg[0] == '\0' || strchr(msg, '\n') != NULL) {
            abort();
        }
    }
    free(s);
    return 0;
}
