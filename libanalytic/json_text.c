/* json_text.c: JSON input text handed to jansson (internal.h). */
#include <config.h>

#include <string.h>

#include <jansson.h>

#include "internal.h"

size_t afd_priv_bom(const char *p, size_t n)
{
    return n >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
}

afd_status afd_priv_json_parse(const char *text, size_t len, struct json_t **out, afd_error *err)
{
    json_error_t je;
    const char *nul;
    size_t skip = afd_priv_bom(text, len);

    *out = NULL;
    text += skip;
    len -= skip;
    nul = memchr(text, '\0', len);
    if (nul != NULL) {
        /* jansson takes some documents with a NUL byte between tokens as
         * whole: refuse the byte itself, where it is. */
        long line = 1, column = 1;
        const char *p;
        for (p = text; p < nul; p++) {
            if (*p == '\n') {
                line++;
                column = 1;
            } else if (((unsigned char)*p & 0xC0) != 0x80) { /* characters, not bytes */
                column++;
            }
        }
        return afd_priv_fail(err, AFD_EPARSE, line, column, "NUL byte in the line");
    }
    *out = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    if (*out == NULL) {
        if (json_error_code(&je) == json_error_out_of_memory)
            return afd_priv_fail(err, AFD_ENOMEM, 0, 0, "out of memory");
        return afd_priv_fail(err, AFD_EPARSE, je.line > 0 ? je.line : 0,
                             je.column > 0 ? je.column : 0, "%s", je.text);
    }
    return AFD_OK;
}
