/* hw.c: latency coefficients: presets, key=value files, Appendix B. */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "afd_hw.h"
#include "afd_parse.h"
#include "internal.h"

#define MAX_FILE (64 * 1024)

static const struct {
    const char *name;
    afd_hw hw;
} presets[] = {
    /* Table 3: linear regression on Ascend 910C execution traces, DeepSeek-V3. */
    {"paper-910c",
     {.alpha_a = 0.00165,
      .beta_a = 50,
      .alpha_f = 0.083,
      .beta_f = 100,
      .alpha_c = 0.022,
      .beta_c = 20,
      .unit = "cycles"}},
};
#define N_PRESETS (sizeof presets / sizeof presets[0])

static const char *const keys[6] = {"alpha_a", "beta_a", "alpha_f", "beta_f", "alpha_c", "beta_c"};

/* Every numeric key of a latency file: the six AFD coefficients (required),
 * then the optional serving laws and the fits' errors (N_ERRORS ratios, not
 * times: no unit conversion). */
enum { N_REQUIRED = 6, N_NUMERIC = 14, N_ERRORS = 2 };
static const char *const num_keys[N_NUMERIC] = {
    "alpha_a",     "beta_a",       "alpha_f",      "beta_f",         "alpha_c",
    "beta_c",      "prefill_a",    "prefill_b",    "prefill_c",      "decode_beta",
    "decode_gamma", "decode_alpha", "fit_max_rel_err", "afd_fit_max_rel_err"};
static const char *const str_keys[3] = {"unit", "model", "device"};
/* a decode_batch_max without the law it is the range of (afd_hw_check, and
 * afd_hw_parse with the key's line) */
static const char dbmax_needs_law[] = "decode_batch_max is the range of the decode law: it "
                                      "needs decode_beta, decode_gamma and decode_alpha";
/* the integer keys after the numeric and string ones: the tensor-parallel
 * size the laws time, the largest batch of the decode law's fit, the
 * devices per instance the six coefficients time */
enum { K_TP = N_NUMERIC + 3, K_DBMAX, K_AFD_TP, N_KEYS };
/* the numeric key after which decode_batch_max is written */
enum { K_DECODE_ALPHA = 11 };

static const char *key_name(int k)
{
    return k < N_NUMERIC   ? num_keys[k]
           : k == K_TP     ? "tp"
           : k == K_DBMAX  ? "decode_batch_max"
           : k == K_AFD_TP ? "afd_tp"
                           : str_keys[k - N_NUMERIC];
}

static double *coef(afd_hw *hw, int k)
{
    double *const p[N_NUMERIC] = {&hw->alpha_a,      &hw->beta_a,       &hw->alpha_f,
                                  &hw->beta_f,       &hw->alpha_c,      &hw->beta_c,
                                  &hw->prefill_a,    &hw->prefill_b,    &hw->prefill_c,
                                  &hw->decode_beta,  &hw->decode_gamma, &hw->decode_alpha,
                                  &hw->fit_max_rel_err, &hw->afd_fit_max_rel_err};
    return p[k];
}

static char *str_field(afd_hw *hw, int k, size_t *cap)
{
    char *const p[3] = {hw->unit, hw->model, hw->device};
    const size_t c[3] = {sizeof hw->unit, sizeof hw->model, sizeof hw->device};
    *cap = c[k];
    return p[k];
}

static void set_nan(afd_hw *hw)
{
    int k;
    for (k = 0; k < N_NUMERIC; k++)
        *coef(hw, k) = NAN;
    hw->unit[0] = hw->model[0] = hw->device[0] = '\0';
    hw->tp = 0;
    hw->decode_batch_max = 0;
    hw->afd_tp = 0;
}

static void laws_nan(afd_hw *hw)
{
    int k;
    for (k = N_REQUIRED; k < N_NUMERIC; k++)
        *coef(hw, k) = NAN;
    hw->model[0] = hw->device[0] = '\0';
    hw->tp = 0;
    hw->decode_batch_max = 0;
}

void afd_hw_init(afd_hw *hw)
{
    set_nan(hw);
}

int afd_hw_has_prefill(const afd_hw *hw)
{
    return isfinite(hw->prefill_a) && isfinite(hw->prefill_b) && isfinite(hw->prefill_c);
}

int afd_hw_has_decode(const afd_hw *hw)
{
    return isfinite(hw->decode_beta) && isfinite(hw->decode_gamma) && isfinite(hw->decode_alpha);
}

afd_status afd_hw_preset(const char *name, afd_hw *out)
{
    size_t k;
    for (k = 0; k < N_PRESETS; k++)
        if (strcmp(presets[k].name, name) == 0) {
            *out = presets[k].hw;
            laws_nan(out);
            return AFD_OK;
        }
    set_nan(out);
    return AFD_EINVAL;
}

const char *afd_hw_preset_name(size_t i)
{
    return i < N_PRESETS ? presets[i].name : NULL;
}

afd_status afd_hw_check(const afd_hw *hw, afd_error *err)
{
    int k;
    afd_error_clear(err);
    for (k = 0; k < 6; k++) {
        double v = *coef((afd_hw *)hw, k);
        if (!isfinite(v))
            return afd_priv_fail(err, AFD_EINVAL, 0, 0, "%s is not finite", keys[k]);
        if (v < 0)
            return afd_priv_fail(err, AFD_EINVAL, 0, 0, "%s must be >= 0: %g", keys[k], v);
    }
    if (!(hw->alpha_a > 0))
        return afd_priv_fail(err, AFD_EINVAL, 0, 0,
                             "alpha_a must be > 0: Attention time must grow with the token load");
    if (!(hw->alpha_f > 0))
        return afd_priv_fail(err, AFD_EINVAL, 0, 0,
                             "alpha_f must be > 0: FFN time must grow with the batch");
    /* The serving laws: all three of a law or none; each finite and >= 0. */
    for (k = N_REQUIRED; k + 3 <= N_NUMERIC - N_ERRORS; k += 3) {
        int j, present = 0;
        for (j = k; j < k + 3; j++)
            present += !isnan(*coef((afd_hw *)hw, j));
        if (present != 0 && present != 3)
            return afd_priv_fail(err, AFD_EINVAL, 0, 0, "%s, %s and %s go together",
                                 num_keys[k], num_keys[k + 1], num_keys[k + 2]);
        for (j = k; present == 3 && j < k + 3; j++) {
            double v = *coef((afd_hw *)hw, j);
            if (!isfinite(v) || v < 0)
                return afd_priv_fail(err, AFD_EINVAL, 0, 0, "%s must be finite and >= 0: %g",
                                     num_keys[j], v);
        }
    }
    for (k = N_NUMERIC - N_ERRORS; k < N_NUMERIC; k++) {
        double v = *coef((afd_hw *)hw, k);
        if (!isnan(v) && !(v >= 0 && isfinite(v)))
            return afd_priv_fail(err, AFD_EINVAL, 0, 0, "%s must be finite and >= 0: %g",
                                 num_keys[k], v);
    }
    if (hw->tp > AFD_HW_TP_MAX)
        return afd_priv_fail(err, AFD_EINVAL, 0, 0,
                             "tp must be at most %d (a tensor-parallel size): %u",
                             AFD_HW_TP_MAX, hw->tp);
    if (hw->decode_batch_max > AFD_HW_BATCH_MAX)
        return afd_priv_fail(err, AFD_EINVAL, 0, 0,
                             "decode_batch_max must be at most %u (a batch): %u",
                             AFD_HW_BATCH_MAX, hw->decode_batch_max);
    if (hw->decode_batch_max > 0 && !afd_hw_has_decode(hw))
        return afd_priv_fail(err, AFD_EINVAL, 0, 0,
                             "%s", dbmax_needs_law);
    if (hw->afd_tp > AFD_HW_TP_MAX)
        return afd_priv_fail(err, AFD_EINVAL, 0, 0,
                             "afd_tp must be at most %d (devices per instance): %u",
                             AFD_HW_TP_MAX, hw->afd_tp);
    return AFD_OK;
}

/* 1 when the m characters at s are an integer in [1, max], in *x */
static int parse_count(const char *s, size_t m, double max, double *x)
{
    char num[128];
    if (m >= sizeof num)
        return 0;
    memcpy(num, s, m);
    num[m] = '\0';
    return afd_parse_double(num, x) == AFD_OK && *x >= 1 && *x <= max && *x == floor(*x);
}

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r';
}

afd_status afd_hw_parse(const char *text, size_t len, afd_hw *out, afd_error *err)
{
    int seen[N_KEYS] = {0};
    size_t pos = 0;
    long line = 0, dbmax_line = 0;
    afd_hw hw;
    afd_status st;
    int k;

    afd_error_clear(err);
    set_nan(out);
    set_nan(&hw);
    while (pos < len) {
        const char *s = text + pos, *nl = memchr(s, '\n', len - pos);
        size_t n = nl != NULL ? (size_t)(nl - s) : len - pos;
        size_t a = 0, b = n, eq, kb, ke;
        char v[200];
        pos += n + (nl != NULL);
        line++;
        while (a < b && is_space(s[a]))
            a++;
        while (b > a && is_space(s[b - 1]))
            b--;
        if (a == b || s[a] == '#')
            continue;
        if (memchr(s + a, '\0', b - a) != NULL)
            return afd_priv_fail(err, AFD_EPARSE, line, 0, "NUL byte in the line");
        for (eq = a; eq < b && s[eq] != '='; eq++)
            ;
        if (eq == b) {
            afd_priv_show(s + a, b - a, v, sizeof v);
            return afd_priv_fail(err, AFD_EPARSE, line, 0, "expected key = value: '%s'", v);
        }
        kb = a;
        ke = eq;
        while (ke > kb && is_space(s[ke - 1]))
            ke--;
        for (eq++; eq < b && is_space(s[eq]); eq++)
            ;
        for (k = 0; k < N_KEYS; k++) {
            const char *key = key_name(k);
            if (strlen(key) == ke - kb && memcmp(key, s + kb, ke - kb) == 0)
                break;
        }
        if (k == N_KEYS) {
            afd_priv_show(s + kb, ke - kb, v, sizeof v);
            return afd_priv_fail(err, AFD_EPARSE, line, 0,
                                 "unknown key '%s' (expected alpha_a, beta_a, alpha_f, beta_f, "
                                 "alpha_c, beta_c, prefill_a/b/c, decode_beta/gamma/alpha, "
                                 "decode_batch_max, fit_max_rel_err, afd_fit_max_rel_err, "
                                 "unit, model, device, tp or afd_tp)",
                                 v);
        }
        if (seen[k]++)
            return afd_priv_fail(err, AFD_EPARSE, line, 0, "key '%s' given twice",
                                 key_name(k));
        if (k == K_DBMAX) {
            /* the largest batch the decode law was fitted on: a count */
            double x;
            afd_priv_show(s + eq, b - eq, v, sizeof v);
            if (!parse_count(s + eq, b - eq, AFD_HW_BATCH_MAX, &x))
                return afd_priv_fail(err, AFD_EPARSE, line, 0,
                                     "decode_batch_max must be an integer in [1, %u] (the "
                                     "largest batch the decode law was fitted on): '%s'",
                                     AFD_HW_BATCH_MAX, v);
            hw.decode_batch_max = (unsigned)x;
            dbmax_line = line;
            continue;
        }
        if (k == K_TP || k == K_AFD_TP) {
            /* the tensor-parallel size the laws time, the devices per
             * instance the six coefficients time: counts of devices */
            double x;
            afd_priv_show(s + eq, b - eq, v, sizeof v);
            if (!parse_count(s + eq, b - eq, AFD_HW_TP_MAX, &x))
                return afd_priv_fail(err, AFD_EPARSE, line, 0,
                                     k == K_TP ? "tp must be an integer in [1, %d] (the "
                                                 "tensor-parallel size the laws time): '%s'"
                                               : "afd_tp must be an integer in [1, %d] (the "
                                                 "devices per instance the six AFD "
                                                 "coefficients time): '%s'",
                                     AFD_HW_TP_MAX, v);
            *(k == K_TP ? &hw.tp : &hw.afd_tp) = (unsigned)x;
            continue;
        }
        if (k >= N_NUMERIC) {
            size_t m = b - eq, cap;
            char *dst = str_field(&hw, k - N_NUMERIC, &cap);
            if (m >= cap) {
                afd_priv_show(s + eq, m, v, sizeof v);
                return afd_priv_fail(err, AFD_EPARSE, line, 0,
                                     "%s: longer than %zu characters: '%s'",
                                     str_keys[k - N_NUMERIC], cap - 1, v);
            }
            memcpy(dst, s + eq, m);
            dst[m] = '\0';
            /* the unit is no comment: a suffix (2s, 100ms) converts to it */
            if (k == N_NUMERIC && strcmp(dst, "cycles") != 0) {
                double sec;
                if (afd_unit_seconds(dst, &sec) != AFD_OK) {
                    afd_priv_show(s + eq, m, v, sizeof v);
                    return afd_priv_fail(err, AFD_EPARSE, line, 0,
                                         "unit must be s, ms, us, ns or cycles: '%s'", v);
                }
            }
            continue;
        }
        {
            char num[128];
            double x;
            size_t m = b - eq;
            afd_priv_show(s + eq, m, v, sizeof v);
            if (m >= sizeof num)
                return afd_priv_fail(err, AFD_EPARSE, line, 0, "%s: not a number: '%s'",
                                     num_keys[k], v);
            memcpy(num, s + eq, m);
            num[m] = '\0';
            st = afd_parse_double(num, &x);
            if (st != AFD_OK)
                return afd_priv_fail(err, st, line, 0, "%s: %s: '%s'", num_keys[k],
                                     st == AFD_ERANGE ? "out of range" : "not a number", v);
            *coef(&hw, k) = x;
        }
    }
    for (k = 0; k < N_REQUIRED; k++)
        if (!seen[k])
            return afd_priv_fail(err, AFD_EPARSE, 0, 0, "missing %s", keys[k]);
    /* the check below says the same without a line: here the key has one */
    if (hw.decode_batch_max > 0 && !afd_hw_has_decode(&hw))
        return afd_priv_fail(err, AFD_EINVAL, dbmax_line, 0,
                             "%s", dbmax_needs_law);
    st = afd_hw_check(&hw, err);
    if (st != AFD_OK)
        return st;
    *out = hw;
    return AFD_OK;
}

afd_status afd_hw_read(const char *path, afd_hw *out, afd_error *err)
{
    char *buf;
    ssize_t n;
    size_t len = 0;
    int fd;
    afd_status st;
    struct stat sb;

    set_nan(out);
    afd_error_clear(err);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return afd_priv_fail(err, AFD_EIO, 0, 0, "cannot open: %s", strerror(errno));
    if (fstat(fd, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        close(fd);
        return afd_priv_fail(err, AFD_EIO, 0, 0, "cannot read: is a directory");
    }
    buf = malloc(MAX_FILE + 1);
    if (buf == NULL) {
        close(fd);
        return afd_priv_fail(err, AFD_ENOMEM, 0, 0, "out of memory");
    }
    while ((n = read(fd, buf + len, MAX_FILE + 1 - len)) != 0) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            st = afd_priv_fail(err, AFD_EIO, 0, 0, "read error: %s", strerror(errno));
            goto done;
        }
        len += (size_t)n;
        if (len > MAX_FILE) {
            st = afd_priv_fail(err, AFD_EPARSE, 0, 0, "larger than %d bytes: not a hw file",
                               MAX_FILE);
            goto done;
        }
    }
    st = afd_hw_parse(buf, len, out, err);
done:
    free(buf);
    close(fd);
    return st;
}

afd_status afd_hw_format(const afd_hw *hw, const char *comment, char *buf, size_t cap)
{
    size_t o = 0;
    int k, n;
    if (comment != NULL) {
        n = snprintf(buf, cap, "# %s\n", comment);
        if (n < 0 || (size_t)n >= cap)
            return AFD_ERANGE;
        o = (size_t)n;
    }
    if (hw->unit[0] != '\0') {
        n = snprintf(buf + o, cap - o, "unit = %s\n", hw->unit);
        if (n < 0 || (size_t)n >= cap - o)
            return AFD_ERANGE;
        o += (size_t)n;
    }
    for (k = 1; k < 3; k++) {
        size_t c;
        const char *v = str_field((afd_hw *)hw, k, &c);
        if (v[0] == '\0')
            continue;
        n = snprintf(buf + o, cap - o, "%s = %s\n", str_keys[k], v);
        if (n < 0 || (size_t)n >= cap - o)
            return AFD_ERANGE;
        o += (size_t)n;
    }
    if (hw->tp > 0) {
        n = snprintf(buf + o, cap - o, "tp = %u\n", hw->tp);
        if (n < 0 || (size_t)n >= cap - o)
            return AFD_ERANGE;
        o += (size_t)n;
    }
    if (hw->afd_tp > 0) {
        n = snprintf(buf + o, cap - o, "afd_tp = %u\n", hw->afd_tp);
        if (n < 0 || (size_t)n >= cap - o)
            return AFD_ERANGE;
        o += (size_t)n;
    }
    for (k = 0; k < N_NUMERIC; k++) {
        double v = *coef((afd_hw *)hw, k);
        if (k >= N_REQUIRED && isnan(v))
            continue;
        n = snprintf(buf + o, cap - o, "%s = %.17g\n", num_keys[k], v);
        if (n < 0 || (size_t)n >= cap - o)
            return AFD_ERANGE;
        o += (size_t)n;
        if (k == K_DECODE_ALPHA && hw->decode_batch_max > 0) {
            n = snprintf(buf + o, cap - o, "decode_batch_max = %u\n", hw->decode_batch_max);
            if (n < 0 || (size_t)n >= cap - o)
                return AFD_ERANGE;
            o += (size_t)n;
        }
    }
    return AFD_OK;
}

/* ---- Appendix B */

afd_status afd_model_preset(const char *name, afd_model_dims *out)
{
    if (strcmp(name, "deepseek-v3") == 0) {
        /* Appendix B.1, one layer */
        out->hidden = 7168;
        out->kv_dim = 512 + 64;
        out->kv_bytes = 2;
        out->d_expert = 2048;
        out->n_experts = 256;
        out->top_k = 8;
        out->mtp_depth = 1;
        out->attn_layers = 1;
        out->ffn_layers = 1;
        return AFD_OK;
    }
    memset(out, 0, sizeof *out);
    return AFD_EINVAL;
}

static int positive(double x)
{
    return x > 0 && isfinite(x);
}

afd_status afd_model_dims_from_model(const afd_model *m, afd_model_dims *out)
{
    memset(out, 0, sizeof *out);
    out->hidden = m->hidden;
    /* KV elements per token and layer (afd_model_kv_bytes_per_token / layers) */
    out->kv_dim = m->mla ? m->kv_lora_rank + m->qk_rope_head_dim : 2 * m->kv_heads * m->head_dim;
    out->kv_bytes = m->dtype_bytes;
    if (m->moe) {
        out->d_expert = m->moe_intermediate;
        out->n_experts = m->n_routed_experts;
        out->top_k = m->experts_per_tok;
        out->ffn_layers = m->layers - m->dense_layers;
    } else {
        out->d_expert = m->intermediate;
        out->n_experts = 1;
        out->top_k = 1;
        out->ffn_layers = m->layers;
    }
    out->mtp_depth = m->mtp_layers > 0 ? m->mtp_layers : 0;
    out->attn_layers = m->layers;
    if (!positive(out->hidden) || !positive(out->kv_dim) || !positive(out->kv_bytes) ||
        !positive(out->d_expert) || !positive(out->n_experts) || !positive(out->top_k) ||
        !positive(out->attn_layers) || !positive(out->ffn_layers))
        return AFD_EINVAL;
    return AFD_OK;
}

static const struct {
    const char *name, *unit;
    double lo, hi, si; /* range in Table 2's unit; SI per unit */
    int lo_open;
} specs[AFD_HW_N_SPECS] = {
    {"hbm_tbps", "TB/s", 0.05, 50, 1e12, 0},     {"mem_eff", "", 0, 1, 1, 1},
    {"peak_tflops", "TFLOP/s", 1, 20000, 1e12, 0}, {"compute_eff", "", 0, 1, 1, 1},
    {"net_gbps", "GB/s", 0.1, 10000, 1e9, 0},    {"experts_per_card", "", 1, 1024, 1, 0},
};

int afd_hw_spec_range(afd_hw_spec k, double *lo, double *hi, int *lo_open, const char **name,
                      const char **unit)
{
    if ((int)k < 0 || k >= AFD_HW_N_SPECS)
        return -1;
    *lo = specs[k].lo;
    *hi = specs[k].hi;
    *lo_open = specs[k].lo_open;
    *name = specs[k].name;
    *unit = specs[k].unit;
    return 0;
}

afd_status afd_hw_specs_from_device(const afd_device *d, double v[AFD_HW_N_SPECS])
{
    const double dev[AFD_HW_N_SPECS] = {
        [AFD_HW_HBM_TBPS] = d != NULL ? d->hbm_tbps : NAN,
        [AFD_HW_MEM_EFF] = d != NULL ? d->mbu[AFD_DECODE] : NAN,
        [AFD_HW_PEAK_TFLOPS] = d != NULL ? d->peak_tflops : NAN,
        [AFD_HW_COMPUTE_EFF] = d != NULL ? d->mfu[AFD_DECODE] : NAN,
        [AFD_HW_NET_GBPS] = d != NULL ? d->net_gbps * d->comm_eff[AFD_DECODE] : NAN,
        [AFD_HW_EXPERTS_PER_CARD] = NAN,
    };
    int k;
    if (d == NULL || v == NULL)
        return AFD_EINVAL;
    for (k = 0; k < AFD_HW_N_SPECS; k++)
        if (isnan(v[k]))
            v[k] = dev[k];
    return AFD_OK;
}

afd_status afd_hw_specs_from_table2(const double v[AFD_HW_N_SPECS], double beta_a, double beta_f,
                                    double beta_c, afd_hw_specs *out, afd_error *err)
{
    double si[AFD_HW_N_SPECS];
    const double betas[3] = {beta_a, beta_f, beta_c};
    int k;
    afd_error_clear(err);
    memset(out, 0, sizeof *out);
    for (k = 0; k < AFD_HW_N_SPECS; k++) {
        double x = v[k];
        if (!(specs[k].lo_open ? x > specs[k].lo : x >= specs[k].lo) || !(x <= specs[k].hi))
            return afd_priv_fail(err, AFD_EINVAL, 0, 0, "%s %g%s%s outside %s%g, %g]%s%s", specs[k].name,
                                 x, specs[k].unit[0] ? " " : "", specs[k].unit,
                                 specs[k].lo_open ? "(" : "[", specs[k].lo, specs[k].hi,
                                 specs[k].unit[0] ? " " : "", specs[k].unit);
        si[k] = x * specs[k].si;
    }
    for (k = 0; k < 3; k++)
        if (!(betas[k] >= 0) || !isfinite(betas[k]))
            return afd_priv_fail(err, AFD_EINVAL, 0, 0, "beta_%c must be finite and >= 0: %g",
                                 "afc"[k], betas[k]);
    out->hbm_bw = si[AFD_HW_HBM_TBPS];
    out->mem_eff = si[AFD_HW_MEM_EFF];
    out->peak_flops = si[AFD_HW_PEAK_TFLOPS];
    out->compute_eff = si[AFD_HW_COMPUTE_EFF];
    out->net_bw = si[AFD_HW_NET_GBPS];
    out->experts_per_card = si[AFD_HW_EXPERTS_PER_CARD];
    out->beta_a = beta_a;
    out->beta_f = beta_f;
    out->beta_c = beta_c;
    return AFD_OK;
}

afd_status afd_hw_derive(const afd_model_dims *m, const afd_hw_specs *s, afd_hw *out)
{
    double route;
    set_nan(out);
    if (!positive(m->hidden) || !positive(m->kv_dim) || !positive(m->kv_bytes) ||
        !positive(m->d_expert) || !positive(m->n_experts) || !positive(m->top_k) ||
        !(m->mtp_depth >= 0) || !isfinite(m->mtp_depth) || !positive(m->attn_layers) ||
        !positive(m->ffn_layers) || !positive(s->hbm_bw) ||
        !positive(s->mem_eff) || s->mem_eff > 1 || !positive(s->peak_flops) ||
        !positive(s->compute_eff) || s->compute_eff > 1 || !positive(s->net_bw) ||
        !positive(s->experts_per_card) || s->experts_per_card > m->n_experts ||
        !(s->beta_a >= 0) || !(s->beta_f >= 0) ||
        !(s->beta_c >= 0) || !isfinite(s->beta_a) || !isfinite(s->beta_f) ||
        !isfinite(s->beta_c))
        return AFD_EINVAL;
    /* eq. (24): B_e = B_F k (1 + MTP) / N_e */
    route = m->top_k * (1 + m->mtp_depth) / m->n_experts;
    laws_nan(out);
    /* eq. (17)-(19), once per attention layer */
    out->alpha_a = m->attn_layers * (m->kv_dim * m->kv_bytes / (s->hbm_bw * s->mem_eff));
    /* eq. (20)-(26): SwiGLU, 3 matrices, 2 operations per multiply-add; once
     * per FFN-side layer */
    out->alpha_f = m->ffn_layers * (s->experts_per_card * 6 * m->hidden * m->d_expert /
                                    (s->peak_flops * s->compute_eff) * route);
    /* eq. (27)-(31): input 1 byte (INT8) + output 2 bytes (BF16) per element,
     * once per FFN-side layer */
    out->alpha_c = m->ffn_layers * (s->experts_per_card * 3 * m->hidden / s->net_bw * route);
    out->beta_a = s->beta_a;
    out->beta_f = s->beta_f;
    out->beta_c = s->beta_c;
    /* one card per instance when one card holds every expert (afd_hw.h) */
    out->afd_tp = s->experts_per_card == m->n_experts ? 1 : 0;
    snprintf(out->unit, sizeof out->unit, "%s", "s");
    return AFD_OK;
}

afd_status afd_hw_seconds_to_unit(afd_hw *hw, const char *unit)
{
    /* exact powers of ten, not 1 / afd_unit_seconds (1 / 1e-6 is not 1e6) */
    static const struct {
        const char *name;
        double per_second;
    } units[] = {{"s", 1}, {"ms", 1e3}, {"us", 1e6}, {"ns", 1e9}};
    size_t i;
    int k;
    if (strcmp(hw->unit, "s") != 0)
        return AFD_EINVAL;
    for (i = 0; i < sizeof units / sizeof units[0]; i++)
        if (strcmp(units[i].name, unit) == 0)
            break;
    if (i == sizeof units / sizeof units[0])
        return AFD_EINVAL;
    /* every time-valued coefficient: all but the fits' errors */
    for (k = 0; k < N_NUMERIC - N_ERRORS; k++)
        *coef(hw, k) *= units[i].per_second;
    snprintf(hw->unit, sizeof hw->unit, "%s", units[i].name);
    return AFD_OK;
}

afd_status afd_hw_copy_laws(afd_hw *dst, const afd_hw *src)
{
    static const char *const units[] = {"s", "ms", "us", "ns"};
    int from = -1, to = -1, i, k;
    double f = 1;
    for (i = 0; i < 4; i++) {
        if (strcmp(src->unit, units[i]) == 0)
            from = i;
        if (strcmp(dst->unit, units[i]) == 0)
            to = i;
    }
    if (strcmp(src->unit, dst->unit) != 0 && (from < 0 || to < 0))
        return AFD_EINVAL;
    /* 10^(3 |to - from|), exact in double */
    for (i = 0; from >= 0 && i < 3 * abs(to - from); i++)
        f *= 10;
    for (k = N_REQUIRED; k < N_NUMERIC - N_ERRORS; k++) {
        double v = *coef((afd_hw *)src, k);
        *coef(dst, k) = to >= from ? v * f : v / f;
    }
    dst->fit_max_rel_err = src->fit_max_rel_err;
    dst->tp = src->tp;
    dst->decode_batch_max = src->decode_batch_max;
    return AFD_OK;
}
