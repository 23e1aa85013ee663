/* fuzz_merge.c: libFuzzer target for the reader of afdkit merge's parts
 * (cli_part_parse: afdkit's tab-separated tables with their "## key=value"
 * provenance and "# " header, or JSON Lines with a provenance object).
 * Invariants: a refused part has a one-line message starting with its path;
 * an accepted one has, for a table, its header; a shard K/N with 1 <= K <=
 * N <= CLI_SHARD_MAX or none (N = 0); rows that are single lines of the
 * input in increasing line order, each a parsed JSON object for JSON Lines;
 * and at most CLI_PART_MAX_META provenance entries. */
#include <config.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cli_part p;
    size_t i;
    int rc;

    /* cmd_merge.c refuses a file with a NUL byte before it parses */
    if (memchr(data, '\0', size) != NULL)
        return 0;
    memset(&p, 0, sizeof p);
    p.path = "part.tsv";
    if ((p.text = malloc(size + 1)) == NULL)
        return 0;
    memcpy(p.text, data, size);
    p.text[size] = '\0';
    rc = cli_part_parse(&p);
    if (rc != 0) {
        if ((rc != 1 && rc != 2) || strncmp(p.msg, "part.tsv", 8) != 0)
            abort();
        fuzz_one_line(p.msg);
    } else {
        if (!p.json && p.header == NULL)
            abort();
        if (p.n > CLI_SHARD_MAX || (p.n > 0 && (p.k < 1 || p.k > p.n)) || (p.n == 0 && p.k != 0))
            abort();
        if (p.n_meta > CLI_PART_MAX_META)
            abort();
        for (i = 0; i < p.n_rows; i++) {
            if (strchr(p.rows[i], '\n') != NULL || p.rows[i] < p.text ||
                p.rows[i] >= p.text + size + 1)
                abort();
            if (i > 0 && p.row_line[i] <= p.row_line[i - 1])
                abort();
            if (p.json && !json_is_object(p.objs[i]))
                abort();
        }
    }
    cli_part_free(&p);
    return 0;
}
