/* device.c: accelerator descriptions (key = value files and bundled presets). */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "afd_device.h"
#include "afd_parse.h"
#include "internal.h"
#include "presets.h"

#define MAX_FILE (64 * 1024)

enum {
    K_PEAK, K_HBM, K_HBM_GB, K_NET, K_MFU, K_MBU, K_COMM, K_MFU_P, K_MBU_P, K_COMM_P,
    K_MFU_D, K_MBU_D, K_COMM_D, K_DISP_N, K_DISP_A, K_DISP_M, K_COMM_LAT, K_MEM_UTIL,
    K_PRICE, K_POWER, K_KERNEL, K_RIDGE_P,
    /* the kernel model: K_FLOOR selects it, K_FLOOR..K_EW are its numbers */
    K_FLOOR, K_SM, K_GEMM_R, K_GEMM_B, K_GEMM_P, K_GEMM_TILE, K_GEMM_OCC, K_GEMM_OCC_EXP,
    K_ATTN_R, K_ATTN_TAIL, K_ATTN_CTA, K_ATTN_B, K_ATTN_CTA_B, K_ATTN_P, K_EW, K_ENGINE,
    /* all-reduce laws: latency and bandwidth for 2, 4, 8 devices */
    K_AR_US2, K_AR_GB2, K_AR_US4, K_AR_GB4, K_AR_US8, K_AR_GB8,
    /* eager launch: CPU dispatch per PyTorch op, extra GPU time per kernel */
    K_EAGER_OP, K_EAGER_GAP, N_KEYS
};

/* The plausible range of each key (afd_priv_kv_key: name, text, lo, hi,
 * lo_open, scaled, unit). */
static const afd_priv_kv_key keys[N_KEYS] = {
    {"peak_tflops", 0, 1, 20000, 0, 0, "TFLOP/s"},
    {"hbm_tbps", 0, 0.05, 50, 0, 0, "TB/s"},
    {"hbm_gb", 0, 1, 2000, 0, 0, "GB"},
    {"net_gbps", 0, 1, 10000, 0, 0, "GB/s"},
    {"mfu", 0, 0, 1, 1, 0, ""},
    {"mbu", 0, 0, 1, 1, 0, ""},
    {"comm_eff", 0, 0, 1, 1, 0, ""},
    {"mfu_prefill", 0, 0, 1, 1, 0, ""},
    {"mbu_prefill", 0, 0, 1, 1, 0, ""},
    {"comm_eff_prefill", 0, 0, 1, 1, 0, ""},
    {"mfu_decode", 0, 0, 1, 1, 0, ""},
    {"mbu_decode", 0, 0, 1, 1, 0, ""},
    {"comm_eff_decode", 0, 0, 1, 1, 0, ""},
    {"dispatch_rmsnorm_ms", 0, 0, 100, 0, 0, "ms"},
    {"dispatch_attention_ms", 0, 0, 100, 0, 0, "ms"},
    {"dispatch_mlp_ms", 0, 0, 100, 0, 0, "ms"},
    {"comm_latency_ms", 0, 0, 100, 0, 0, "ms"},
    {"mem_util", 0, 0, 1, 1, 0, ""},
    {"price_per_hour", 0, 0, 1000, 0, 0, "per hour"},
    {"power_w", 0, 1, 10000, 0, 0, "W"},
    {"kernel_us", 0, 0, 1000, 0, 0, "us"},
    {"roofline_p", 0, 1, 1000, 0, 0, ""},
    {"kernel_floor_us", 0, 0, 1000, 0, 0, "us"},
    {"sm_count", 0, 1, 10000, 0, 0, ""},
    {"gemm_tflops", 0, 1, 20000, 0, 0, "TFLOP/s"},
    {"gemm_tbps", 0, 0.05, 50, 0, 0, "TB/s"},
    {"gemm_p", 0, 1, 1000, 0, 0, ""},
    {"gemm_tile_n", 0, 1, 4096, 0, 0, ""},
    {"gemm_occ_ctas", 0, 1, 100000, 0, 0, ""},
    {"gemm_occ_exp", 0, 0, 10, 0, 0, ""},
    {"attn_prefill_tflops", 0, 1, 20000, 0, 0, "TFLOP/s"},
    {"attn_tail", 0, 0, 100, 0, 0, ""},
    {"attn_cta_us", 0, 0, 1000, 0, 0, "us"},
    {"attn_decode_tbps", 0, 0.05, 50, 0, 0, "TB/s"},
    {"attn_cta_gbps", 0, 0.1, 10000, 0, 0, "GB/s"},
    {"attn_decode_p", 0, 1, 1000, 0, 0, ""},
    {"elementwise_tbps", 0, 0.05, 50, 0, 0, "TB/s"},
    {"engine", 1, 0, 0, 0, 0, ""},
    {"allreduce_2_us", 0, 0, 10000, 0, 0, "us"},
    {"allreduce_2_gbps", 0, 0.1, 10000, 0, 0, "GB/s"},
    {"allreduce_4_us", 0, 0, 10000, 0, 0, "us"},
    {"allreduce_4_gbps", 0, 0.1, 10000, 0, 0, "GB/s"},
    {"allreduce_8_us", 0, 0, 10000, 0, 0, "us"},
    {"allreduce_8_gbps", 0, 0.1, 10000, 0, 0, "GB/s"},
    {"eager_op_us", 0, 0, 1000, 0, 0, "us"},
    {"eager_gap_us", 0, 0, 1000, 0, 0, "us"},
};

static const char *const engine_names[] = {"torch", "vllm"};

/* The kernel model's numbers in key order (K_FLOOR..K_EW). */
static double *kernel_field(afd_device *d, int k)
{
    double *f[K_EW - K_FLOOR + 1] = {
        &d->kernel_floor_us,     &d->sm_count,      &d->gemm_tflops,  &d->gemm_tbps,
        &d->gemm_p,              &d->gemm_tile_n,   &d->gemm_occ_ctas, &d->gemm_occ_exp,
        &d->attn_prefill_tflops, &d->attn_tail,     &d->attn_cta_us,  &d->attn_decode_tbps,
        &d->attn_cta_gbps,       &d->attn_decode_p, &d->elementwise_tbps};
    return f[k - K_FLOOR];
}

static double kernel_value(const afd_device *d, int k)
{
    afd_device c = *d;
    return *kernel_field(&c, k);
}

static void device_nan(afd_device *d)
{
    int i;
    memset(d, 0, sizeof *d);
    d->peak_tflops = d->hbm_tbps = d->hbm_gb = d->net_gbps = NAN;
    for (i = 0; i < 2; i++)
        d->mfu[i] = d->mbu[i] = d->comm_eff[i] = NAN;
    for (i = 0; i < 3; i++)
        d->dispatch_ms[i] = NAN;
    d->comm_latency_ms = d->mem_util = d->price_per_hour = d->power_w = NAN;
    d->kernel_us = d->roofline_p = NAN;
    for (i = K_FLOOR; i <= K_EW; i++)
        *kernel_field(d, i) = NAN;
    for (i = 0; i < 3; i++)
        d->allreduce_us[i] = d->allreduce_gbps[i] = NAN;
    d->eager_op_us = d->eager_gap_us = NAN;
}

static afd_status check_one(int k, double v, afd_error *err)
{
    return afd_priv_kv_range(&keys[k], v, 1, NULL, 0, err);
}

afd_status afd_device_check(const afd_device *d, afd_error *err)
{
    const double req[4] = {d->peak_tflops, d->hbm_tbps, d->hbm_gb, d->net_gbps};
    afd_status st;
    int i;
    afd_error_clear(err);
    for (i = 0; i < 4; i++)
        if ((st = check_one(K_PEAK + i, req[i], err)) != AFD_OK)
            return st;
    for (i = 0; i < 2; i++) {
        if ((st = check_one(i ? K_MFU_D : K_MFU_P, d->mfu[i], err)) != AFD_OK ||
            (st = check_one(i ? K_MBU_D : K_MBU_P, d->mbu[i], err)) != AFD_OK ||
            (st = check_one(i ? K_COMM_D : K_COMM_P, d->comm_eff[i], err)) != AFD_OK)
            return st;
    }
    for (i = 0; i < 3; i++)
        if ((st = check_one(K_DISP_N + i, d->dispatch_ms[i], err)) != AFD_OK)
            return st;
    if ((st = check_one(K_COMM_LAT, d->comm_latency_ms, err)) != AFD_OK ||
        (st = check_one(K_MEM_UTIL, d->mem_util, err)) != AFD_OK)
        return st;
    if (!isnan(d->price_per_hour) && (st = check_one(K_PRICE, d->price_per_hour, err)) != AFD_OK)
        return st;
    if (!isnan(d->power_w) && (st = check_one(K_POWER, d->power_w, err)) != AFD_OK)
        return st;
    if ((st = check_one(K_KERNEL, d->kernel_us, err)) != AFD_OK)
        return st;
    /* INFINITY: the roofline's max (no roofline_p key) */
    if (!(isinf(d->roofline_p) && d->roofline_p > 0) &&
        (st = check_one(K_RIDGE_P, d->roofline_p, err)) != AFD_OK)
        return st;
    if (d->kernel_model) {
        for (i = K_FLOOR; i <= K_EW; i++)
            if ((st = check_one(i, kernel_value(d, i), err)) != AFD_OK)
                return st;
        if (d->engine != AFD_ENGINE_TORCH && d->engine != AFD_ENGINE_VLLM)
            return afd_priv_fail(err, AFD_EINVAL, 0, 0, "engine %d is neither torch nor vllm",
                                 (int)d->engine);
    }
    for (i = 0; i < 3; i++) {
        if (isnan(d->allreduce_us[i]) && isnan(d->allreduce_gbps[i]))
            continue;
        if ((st = check_one(K_AR_US2 + 2 * i, d->allreduce_us[i], err)) != AFD_OK ||
            (st = check_one(K_AR_GB2 + 2 * i, d->allreduce_gbps[i], err)) != AFD_OK)
            return st;
    }
    if (!(isnan(d->eager_op_us) && isnan(d->eager_gap_us)) &&
        ((st = check_one(K_EAGER_OP, d->eager_op_us, err)) != AFD_OK ||
         (st = check_one(K_EAGER_GAP, d->eager_gap_us, err)) != AFD_OK))
        return st;
    return AFD_OK;
}

afd_status afd_device_parse(const char *text, size_t len, const char *name, afd_device *out,
                            afd_error *err)
{
    afd_priv_kv_val kv[N_KEYS];
    double v[N_KEYS];
    afd_device d;
    afd_status st;
    int k, ph;

    device_nan(out);
    st = afd_priv_kv_parse(text, len, keys, N_KEYS,
                           "peak_tflops, hbm_tbps, hbm_gb, net_gbps, mfu, mbu, "
                           "comm_eff[_prefill|_decode], dispatch_{rmsnorm,attention,mlp}_ms, "
                           "comm_latency_ms, mem_util, price_per_hour, power_w, kernel_us, "
                           "roofline_p, or the kernel model's kernel_floor_us, sm_count, "
                           "gemm_*, attn_*, elementwise_tbps, engine, allreduce_{2,4,8}_{us,gbps}, "
                           "eager_op_us, eager_gap_us",
                           kv, err);
    if (st != AFD_OK)
        return st;
    for (k = 0; k < N_KEYS; k++)
        v[k] = kv[k].v;
    device_nan(&d);
    snprintf(d.name, sizeof d.name, "%s", name ? name : "");
    for (k = K_PEAK; k <= K_NET; k++)
        if (isnan(v[k]))
            return afd_priv_fail(err, AFD_EPARSE, 0, 0, "missing key '%s'", keys[k].name);
    d.peak_tflops = v[K_PEAK];
    d.hbm_tbps = v[K_HBM];
    d.hbm_gb = v[K_HBM_GB];
    d.net_gbps = v[K_NET];
    for (ph = 0; ph < 2; ph++) {
        const int shared[3] = {K_MFU, K_MBU, K_COMM};
        const int own[2][3] = {{K_MFU_P, K_MBU_P, K_COMM_P}, {K_MFU_D, K_MBU_D, K_COMM_D}};
        double *dst[3] = {&d.mfu[ph], &d.mbu[ph], &d.comm_eff[ph]};
        for (k = 0; k < 3; k++) {
            double x = !isnan(v[own[ph][k]]) ? v[own[ph][k]] : v[shared[k]];
            if (isnan(x))
                return afd_priv_fail(err, AFD_EPARSE, 0, 0, "missing key '%s' (or '%s')",
                                     keys[shared[k]].name, keys[own[ph][k]].name);
            *dst[k] = x;
        }
    }
    for (k = 0; k < 3; k++)
        d.dispatch_ms[k] = isnan(v[K_DISP_N + k]) ? 0 : v[K_DISP_N + k];
    d.comm_latency_ms = isnan(v[K_COMM_LAT]) ? 0 : v[K_COMM_LAT];
    d.mem_util = isnan(v[K_MEM_UTIL]) ? 0.9 : v[K_MEM_UTIL];
    d.price_per_hour = v[K_PRICE];
    d.power_w = v[K_POWER];
    d.kernel_us = isnan(v[K_KERNEL]) ? 0 : v[K_KERNEL];
    d.roofline_p = isnan(v[K_RIDGE_P]) ? INFINITY : v[K_RIDGE_P];
    d.kernel_model = kv[K_FLOOR].line > 0;
    for (k = K_FLOOR + 1; k <= K_ENGINE; k++) {
        if (kv[k].line == 0)
            continue;
        if (!d.kernel_model)
            return afd_priv_fail(err, AFD_EPARSE, kv[k].line, 0,
                                 "'%s' belongs to the kernel model, which needs 'kernel_floor_us'",
                                 keys[k].name);
    }
    if (d.kernel_model) {
        for (k = K_FLOOR; k <= K_EW; k++) {
            double x = v[k];
            if (k == K_GEMM_TILE && isnan(x))
                x = 64; /* the 64-wide tile cuBLAS uses for skinny GEMMs (gemm.csv) */
            if (isnan(x))
                return afd_priv_fail(err, AFD_EPARSE, 0, 0,
                                     "missing key '%s' (kernel_floor_us selects the kernel model)",
                                     keys[k].name);
            *kernel_field(&d, k) = x;
        }
        d.engine = AFD_ENGINE_TORCH;
        if (kv[K_ENGINE].line > 0) {
            size_t e;
            for (e = 0; e < 2; e++)
                if (strlen(engine_names[e]) == kv[K_ENGINE].n &&
                    strncmp(kv[K_ENGINE].s, engine_names[e], kv[K_ENGINE].n) == 0)
                    break;
            if (e == 2)
                return afd_priv_fail(err, AFD_EPARSE, kv[K_ENGINE].line, 0,
                                     "engine = %.*s: expected torch or vllm",
                                     (int)(kv[K_ENGINE].n > 40 ? 40 : kv[K_ENGINE].n),
                                     kv[K_ENGINE].s);
            d.engine = (afd_engine)e;
        }
    }
    for (k = 0; k < 3; k++) {
        int us = K_AR_US2 + 2 * k, gb = us + 1;
        if ((kv[us].line > 0) != (kv[gb].line > 0))
            return afd_priv_fail(err, AFD_EPARSE, kv[us].line ? kv[us].line : kv[gb].line, 0,
                                 "'%s' needs '%s'", keys[kv[us].line ? us : gb].name,
                                 keys[kv[us].line ? gb : us].name);
        d.allreduce_us[k] = v[us];
        d.allreduce_gbps[k] = v[gb];
    }
    if ((kv[K_EAGER_OP].line > 0) != (kv[K_EAGER_GAP].line > 0))
        return afd_priv_fail(err, AFD_EPARSE,
                             kv[K_EAGER_OP].line ? kv[K_EAGER_OP].line : kv[K_EAGER_GAP].line, 0,
                             "'%s' needs '%s'", keys[kv[K_EAGER_OP].line ? K_EAGER_OP : K_EAGER_GAP].name,
                             keys[kv[K_EAGER_OP].line ? K_EAGER_GAP : K_EAGER_OP].name);
    d.eager_op_us = v[K_EAGER_OP];
    d.eager_gap_us = v[K_EAGER_GAP];
    st = afd_device_check(&d, err);
    if (st == AFD_OK)
        *out = d;
    return st;
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

afd_status afd_device_read(const char *path, afd_device *out, afd_error *err)
{
    char *buf;
    size_t n;
    afd_status st;
    device_nan(out);
    afd_error_clear(err);
    st = afd_priv_read_file(path, MAX_FILE, &buf, &n, err);
    if (st != AFD_OK)
        return st;
    st = afd_device_parse(buf, n, base_name(path), out, err);
    free(buf);
    return st;
}

static size_t n_presets(void)
{
    size_t i = 0;
    while (afd_priv_device_presets[i].name)
        i++;
    return i;
}

afd_status afd_device_preset_load(const char *name, afd_device *out, afd_error *err)
{
    size_t i;
    for (i = 0; i < n_presets(); i++)
        if (strcmp(afd_priv_device_presets[i].name, name) == 0)
            return afd_device_parse(afd_priv_device_presets[i].text,
                                    strlen(afd_priv_device_presets[i].text), name, out, err);
    device_nan(out);
    return afd_priv_fail(err, AFD_EINVAL, 0, 0, "unknown device preset '%.40s'", name);
}

afd_status afd_device_load(const char *name_or_path, afd_device *out, afd_error *err)
{
    size_t i;
    for (i = 0; i < n_presets(); i++)
        if (strcmp(afd_priv_device_presets[i].name, name_or_path) == 0)
            return afd_device_preset_load(name_or_path, out, err);
    return afd_device_read(name_or_path, out, err);
}

const char *afd_device_preset_name(size_t i)
{
    return i < n_presets() ? afd_priv_device_presets[i].name : NULL;
}

const char *afd_device_preset_text(size_t i)
{
    return i < n_presets() ? afd_priv_device_presets[i].text : NULL;
}

/* v in the fewest significant digits (15 to 17) that strtod reads back to
 * v exactly: "0.713" stays as written, 1/3 needs all 17. */
static const char *exact(double v, char *s, size_t cap)
{
    int digits;
    for (digits = 15; digits < 17; digits++) {
        snprintf(s, cap, "%.*g", digits, v);
        if (strtod(s, NULL) == v)
            return s;
    }
    snprintf(s, cap, "%.17g", v);
    return s;
}

afd_status afd_device_format(const afd_device *d, const char *comment, char *buf, size_t cap)
{
    size_t len = 0;
    int k, bad = 0;
    const double *eff[3] = {d->mfu, d->mbu, d->comm_eff};
    const int shared[3] = {K_MFU, K_MBU, K_COMM};
    const int own[2][3] = {{K_MFU_P, K_MBU_P, K_COMM_P}, {K_MFU_D, K_MBU_D, K_COMM_D}};
    char num[32], num2[32];
#define NUM(v) exact((v), num, sizeof num)
#define PUT(...)                                                                   \
    do {                                                                           \
        int w_ = snprintf(buf + len, len < cap ? cap - len : 0, __VA_ARGS__);      \
        if (w_ < 0)                                                                \
            bad = 1;                                                               \
        else                                                                       \
            len += (size_t)w_;                                                     \
    } while (0)
    if (cap > 0)
        buf[0] = '\0';
    if (comment != NULL) {
        const char *s = comment;
        while (*s) {
            const char *nl = strchr(s, '\n');
            size_t n = nl ? (size_t)(nl - s) : strlen(s);
            PUT("# %.*s\n", (int)n, s);
            s += n + (nl != NULL);
        }
    }
    PUT("%s = %s\n", keys[K_PEAK].name, NUM(d->peak_tflops));
    PUT("%s = %s\n", keys[K_HBM].name, NUM(d->hbm_tbps));
    PUT("%s = %s\n", keys[K_HBM_GB].name, NUM(d->hbm_gb));
    PUT("%s = %s\n", keys[K_NET].name, NUM(d->net_gbps));
    for (k = 0; k < 3; k++) {
        if (eff[k][0] == eff[k][1])
            PUT("%s = %s\n", keys[shared[k]].name, NUM(eff[k][0]));
        else
            PUT("%s = %s\n%s = %s\n", keys[own[0][k]].name, NUM(eff[k][0]),
                keys[own[1][k]].name, exact(eff[k][1], num2, sizeof num2));
    }
    for (k = 0; k < 3; k++)
        PUT("%s = %s\n", keys[K_DISP_N + k].name, NUM(d->dispatch_ms[k]));
    PUT("%s = %s\n", keys[K_COMM_LAT].name, NUM(d->comm_latency_ms));
    PUT("%s = %s\n", keys[K_MEM_UTIL].name, NUM(d->mem_util));
    if (!isnan(d->price_per_hour))
        PUT("%s = %s\n", keys[K_PRICE].name, NUM(d->price_per_hour));
    if (!isnan(d->power_w))
        PUT("%s = %s\n", keys[K_POWER].name, NUM(d->power_w));
    if (d->kernel_us != 0)
        PUT("%s = %s\n", keys[K_KERNEL].name, NUM(d->kernel_us));
    if (isfinite(d->roofline_p))
        PUT("%s = %s\n", keys[K_RIDGE_P].name, NUM(d->roofline_p));
    if (d->kernel_model) {
        for (k = K_FLOOR; k <= K_EW; k++)
            PUT("%s = %s\n", keys[k].name, NUM(kernel_value(d, k)));
        PUT("%s = %s\n", keys[K_ENGINE].name, engine_names[d->engine == AFD_ENGINE_VLLM]);
    }
    for (k = 0; k < 3; k++)
        if (!isnan(d->allreduce_us[k]))
            PUT("%s = %s\n%s = %s\n", keys[K_AR_US2 + 2 * k].name, NUM(d->allreduce_us[k]),
                keys[K_AR_GB2 + 2 * k].name,
                exact(d->allreduce_gbps[k], num2, sizeof num2));
    if (!isnan(d->eager_op_us))
        PUT("%s = %s\n%s = %s\n", keys[K_EAGER_OP].name, NUM(d->eager_op_us),
            keys[K_EAGER_GAP].name, exact(d->eager_gap_us, num2, sizeof num2));
#undef PUT
#undef NUM
    if (bad || len >= cap) {
        if (cap > 0)
            buf[0] = '\0';
        return AFD_ELIMIT;
    }
    return AFD_OK;
}
