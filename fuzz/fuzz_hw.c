/* fuzz_hw.c: libFuzzer target for the key=value hardware-file reader.
 * Invariants: an accepted file passes afd_hw_check, holds exactly the
 * numbers its text spells (each numeric value equals strtod of its value
 * text, read here independently of the parser, and strtod consumes all of
 * it), has no NUL byte in a line that is not blank or a comment, and
 * survives a format/parse round trip bit for bit; a refused one leaves NaN
 * and a one-line message. */
#include <config.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "afdkit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r';
}

/* The field of hw that a numeric key sets, NULL for other keys. */
static const double *field(const afd_hw *hw, const char *key, size_t n)
{
    static const char *const names[] = {
        "alpha_a",      "beta_a",       "alpha_f",         "beta_f",    "alpha_c",
        "beta_c",       "prefill_a",    "prefill_b",       "prefill_c", "decode_beta",
        "decode_gamma", "decode_alpha", "fit_max_rel_err", "afd_fit_max_rel_err",
    };
    const double *const fields[] = {
        &hw->alpha_a,         &hw->beta_a,      &hw->alpha_f,      &hw->beta_f,
        &hw->alpha_c,         &hw->beta_c,      &hw->prefill_a,    &hw->prefill_b,
        &hw->prefill_c,       &hw->decode_beta, &hw->decode_gamma, &hw->decode_alpha,
        &hw->fit_max_rel_err, &hw->afd_fit_max_rel_err,
    };
    size_t k;
    for (k = 0; k < sizeof names / sizeof names[0]; k++)
        if (strlen(names[k]) == n && memcmp(names[k], key, n) == 0)
            return fields[k];
    return NULL;
}

/* Check every "key = value" line of an accepted text against hw. */
static void check_values(const char *text, size_t len, const afd_hw *hw)
{
    size_t pos = 0;
    while (pos < len) {
        const char *s = text + pos, *nl = memchr(s, '\n', len - pos);
        size_t n = nl != NULL ? (size_t)(nl - s) : len - pos, a = 0, b = n, eq, ke, vb;
        const double *f;
        char num[256], *end;
        double x;
        pos += n + (nl != NULL);
        while (a < b && blank(s[a]))
            a++;
        while (b > a && blank(s[b - 1]))
            b--;
        if (a == b || s[a] == '#')
            continue;
        if (memchr(s + a, '\0', b - a) != NULL)
            abort(); /* a NUL in a line must be refused */
        eq = a;
        while (eq < b && s[eq] != '=')
            eq++;
        if (eq == b)
            abort(); /* accepted a line without '=' */
        for (ke = eq; ke > a && blank(s[ke - 1]); ke--)
            ;
        for (vb = eq + 1; vb < b && blank(s[vb]); vb++)
            ;
        f = field(hw, s + a, ke - a);
        if ((ke - a == 2 && memcmp(s + a, "tp", 2) == 0) ||
            (ke - a == 6 && memcmp(s + a, "afd_tp", 6) == 0)) {
            /* the tensor-parallel size, the devices per instance of the six
             * coefficients: the integer the text spells */
            if (b - vb == 0 || b - vb >= sizeof num)
                abort();
            memcpy(num, s + vb, b - vb);
            num[b - vb] = '\0';
            x = strtod(num, &end);
            if (*end != '\0' || !(x >= 1 && x <= AFD_HW_TP_MAX) ||
                x != (double)(ke - a == 2 ? hw->tp : hw->afd_tp))
                abort();
            continue;
        }
        if (ke - a == 16 && memcmp(s + a, "decode_batch_max", 16) == 0) {
            /* the decode law's largest batch: the integer the text spells */
            if (b - vb == 0 || b - vb >= sizeof num)
                abort();
            memcpy(num, s + vb, b - vb);
            num[b - vb] = '\0';
            x = strtod(num, &end);
            if (*end != '\0' || !(x >= 1 && x <= AFD_HW_BATCH_MAX) ||
                x != (double)hw->decode_batch_max || !afd_hw_has_decode(hw))
                abort();
            continue;
        }
        if (f == NULL)
            continue; /* unit, model, device */
        if (b - vb == 0 || b - vb >= sizeof num)
            abort();
        memcpy(num, s + vb, b - vb);
        num[b - vb] = '\0';
        x = strtod(num, &end);
        if (*end != '\0' || memcmp(&x, f, sizeof x) != 0)
            abort(); /* the parsed value is not the number the text spells */
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static afd_hw hw, back;
    static char buf[AFD_HW_TEXT_MAX];
    afd_error err;
    unsigned i;

    if (afd_hw_parse((const char *)data, size, &hw, &err) != AFD_OK) {
        if (!isnan(hw.alpha_a) || strchr(err.text, '\n') != NULL)
            abort();
        return 0;
    }
    check_values((const char *)data, size, &hw);
    if (afd_hw_check(&hw, NULL) != AFD_OK)
        abort();
    if (afd_hw_format(&hw, NULL, buf, sizeof buf) != AFD_OK)
        abort();
    if (afd_hw_parse(buf, strlen(buf), &back, &err) != AFD_OK)
        abort();
    if (memcmp(&hw.alpha_a, &back.alpha_a, 6 * sizeof(double)) != 0)
        abort();
    if (hw.tp != back.tp || hw.tp > AFD_HW_TP_MAX)
        abort();
    if (hw.decode_batch_max != back.decode_batch_max || hw.decode_batch_max > AFD_HW_BATCH_MAX)
        abort();
    if (hw.afd_tp != back.afd_tp || hw.afd_tp > AFD_HW_TP_MAX)
        abort();
    /* the tables read back bit for bit */
    if (hw.decode_table.nb != back.decode_table.nb || hw.decode_table.ns != back.decode_table.ns ||
        hw.prefill_table.nb != back.prefill_table.nb || hw.prefill_table.ns != back.prefill_table.ns)
        abort();
    for (i = 0; i < hw.decode_table.nb * hw.decode_table.ns; i++)
        if (memcmp(&hw.decode_table.t[i], &back.decode_table.t[i], sizeof(double)) != 0)
            abort();
    for (i = 0; i < hw.prefill_table.nb * hw.prefill_table.ns; i++)
        if (memcmp(&hw.prefill_table.t[i], &back.prefill_table.t[i], sizeof(double)) != 0)
            abort();
    return 0;
}
