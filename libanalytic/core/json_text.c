/* json_text.c: JSON input text handed to jansson, and jansson's messages
 * told in afdkit's words (internal.h). */
#include <config.h>

#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "internal.h"

size_t afd_priv_bom(const char *p, size_t n)
{
    return n >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
}

/* jansson's message heads (its load.c) and what they say here.  keep: the
 * text after the head (a byte value, a character code) follows, escaped. */
static const struct {
    const char *jansson, *ours;
    int keep;
} heads[] = {
    {"\\u0000 is not allowed without JSON_ALLOW_NUL", "\\u0000 (a NUL character) in a string", 0},
    {"NUL byte in object key not supported", "\\u0000 (a NUL character) in a key", 0},
    {"unable to decode byte", "not UTF-8: byte", 1},
    {"premature end of input", "unexpected end of the input", 0},
    {"unexpected newline", "a line break inside a string", 0},
    {"control character", "a control character inside a string:", 1},
    {"invalid escape", "an invalid escape in a string", 0},
    {"invalid Unicode escape", "an invalid \\u escape", 0},
    {"invalid Unicode", "an invalid \\u character code", 0},
    {"too big negative integer", "an integer below -2^63", 0},
    {"too big integer", "an integer above 2^63 - 1", 0},
    {"real number overflow", "a number too large for a double", 0},
    {"maximum parsing depth reached", "nested deeper than 2048 levels", 0},
    {"string or '}' expected", "expected a quoted key or '}'", 0},
    {"duplicate object key", "a key appears twice in one object", 0},
    {"':' expected", "expected ':' after a key", 0},
    {"'}' expected", "expected ',' or '}'", 0},
    {"']' expected", "expected ',' or ']'", 0},
    {"'[' or '{' expected", "expected a JSON object '{' or array '['", 0},
    {"end of file expected", "text after the end of the JSON value", 0},
    {"invalid token", "not a JSON value", 0},
    {"unexpected token", "unexpected token", 0},
};

/* jansson's "HEAD near 'TOKEN'" or "HEAD near end of file" as one line of
 * text: HEAD translated, the input's bytes (TOKEN) shown escaped. */
static void tell(const char *jtext, char *out, size_t cap)
{
    static const char near_tok[] = " near '", near_end[] = " near end of file";
    const char *near = strstr(jtext, near_tok);
    const char *end = near != NULL ? near : jtext + strlen(jtext);
    char shown[200];
    size_t k, o;

    if (near == NULL && (near = strstr(jtext, near_end)) != NULL)
        end = near;
    for (k = 0; k < sizeof heads / sizeof heads[0]; k++) {
        size_t n = strlen(heads[k].jansson);
        if ((size_t)(end - jtext) >= n && memcmp(jtext, heads[k].jansson, n) == 0)
            break;
    }
    if (k < sizeof heads / sizeof heads[0]) {
        const char *rest = jtext + strlen(heads[k].jansson);
        o = (size_t)snprintf(out, cap, "%s", heads[k].ours);
        if (heads[k].keep && rest < end) {
            afd_priv_show(rest, (size_t)(end - rest), shown, sizeof shown);
            o += (size_t)snprintf(out + (o < cap ? o : cap), o < cap ? cap - o : 0, "%s", shown);
        }
    } else { /* a message this table does not know: its bytes escaped */
        afd_priv_show(jtext, (size_t)(end - jtext), shown, sizeof shown);
        o = (size_t)snprintf(out, cap, "%s", shown);
    }
    if (o >= cap || near == NULL)
        return;
    if (strncmp(near, near_end, sizeof near_end - 1) == 0) {
        snprintf(out + o, cap - o, " at the end of the input");
    } else {
        const char *tok = near + sizeof near_tok - 1;
        size_t n = strlen(tok);
        if (n > 0 && tok[n - 1] == '\'')
            n--;
        afd_priv_show(tok, n, shown, sizeof shown);
        snprintf(out + o, cap - o, " near '%s'", shown);
    }
}

afd_status afd_priv_json_parse(const char *text, size_t len, struct json_t **out, afd_error *err)
{
    size_t skip = afd_priv_bom(text, len);
    return afd_priv_json_parse_text(text + skip, len - skip, out, err);
}

afd_status afd_priv_json_parse_text(const char *text, size_t len, struct json_t **out,
                                    afd_error *err)
{
    json_error_t je;
    const char *nul;

    *out = NULL;
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
        char msg[sizeof err->text];
        if (json_error_code(&je) == json_error_out_of_memory)
            return afd_priv_fail(err, AFD_ENOMEM, 0, 0, "out of memory");
        tell(je.text, msg, sizeof msg);
        return afd_priv_fail(err, AFD_EPARSE, je.line > 0 ? je.line : 0,
                             je.column > 0 ? je.column : 0, "%s", msg);
    }
    return AFD_OK;
}
