/* model.c: transformer dimensions from a Hugging Face config.json (jansson). */
#include <config.h>

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "afd_model.h"
#include "internal.h"
#include "presets.h"

#define MAX_FILE (1024 * 1024)

static void model_nan(afd_model *m)
{
    memset(m, 0, sizeof *m);
    m->hidden = m->intermediate = m->heads = m->kv_heads = m->head_dim = NAN;
    m->layers = m->vocab = m->dtype_bytes = m->weight_bytes_per_param = NAN;
}

/* A positive integer under key (absent: *out untouched, returns 0 with
 * *present = 0). */
static afd_status get_int(json_t *root, const char *key, int required, double *out,
                          afd_error *err)
{
    json_t *v = json_object_get(root, key);
    double x;
    if (!v || json_is_null(v)) {
        if (required)
            return afd_priv_fail(err, AFD_EPARSE, 0, 0, "missing key '%s'", key);
        return AFD_OK;
    }
    if (json_is_integer(v))
        x = (double)json_integer_value(v);
    else if (json_is_real(v))
        x = json_real_value(v);
    else
        return afd_priv_fail(err, AFD_EPARSE, 0, 0, "'%s' must be a number", key);
    if (!(x >= 0) || x != floor(x) || x > 1e9)
        return afd_priv_fail(err, AFD_EPARSE, 0, 0,
                             "'%s' must be a non-negative integer below 1e9: %g", key, x);
    *out = x;
    return AFD_OK;
}

static afd_status dtype_bytes(const char *s, double *out, afd_error *err)
{
    static const struct {
        const char *name;
        double bytes;
    } t[] = {{"bfloat16", 2}, {"float16", 2}, {"half", 2}, {"float32", 4},
             {"float", 4},    {"float8_e4m3fn", 1}, {"float8_e5m2", 1}};
    size_t i;
    for (i = 0; i < sizeof t / sizeof t[0]; i++)
        if (strcmp(s, t[i].name) == 0) {
            *out = t[i].bytes;
            return AFD_OK;
        }
    return afd_priv_fail(err, AFD_EPARSE, 0, 0,
                         "unknown torch_dtype '%.40s' (bfloat16, float16, float32, "
                         "float8_e4m3fn)", s);
}

static int has_key(json_t *root, const char *key)
{
    json_t *v = json_object_get(root, key);
    return v != NULL && !json_is_null(v);
}

/* The routed experts per MoE layer under whichever name the family uses:
 * n_routed_experts (DeepSeek), num_local_experts (Mixtral), num_experts
 * (Qwen2-MoE, Qwen3-MoE); 0 when none is given.  Two names that disagree
 * are an error. */
static afd_status expert_count(json_t *root, double *out, afd_error *err)
{
    static const char *const keys[3] = {"n_routed_experts", "num_local_experts", "num_experts"};
    const char *first = NULL;
    afd_status st;
    int k;
    *out = 0;
    for (k = 0; k < 3; k++) {
        double x = 0;
        if (!has_key(root, keys[k]))
            continue;
        if ((st = get_int(root, keys[k], 1, &x, err)) != AFD_OK)
            return st;
        if (first != NULL && x != *out)
            return afd_priv_fail(err, AFD_EPARSE, 0, 0, "'%s' (%g) and '%s' (%g) disagree", first,
                                 *out, keys[k], x);
        if (first == NULL) {
            first = keys[k];
            *out = x;
        }
    }
    return AFD_OK;
}

/* i in [lo, hi) with i = 0 (mod f) and i = -1 (mod s), 1 <= f, s <= 1e9:
 * none unless gcd(f, s) = 1; then by the Chinese remainder theorem the
 * i = r (mod f s), r = f t0 with t0 = -f^-1 (mod s). */
static double count_congruent(int64_t lo, int64_t hi, int64_t f, int64_t s)
{
    int64_t a = f % s, b = s, x0 = 1, x1 = 0, q, tmp, t0, r, p = f * s;
    while (b != 0) { /* extended Euclid: x0 a_initial = gcd (mod s) */
        q = a / b;
        tmp = a - q * b, a = b, b = tmp;
        tmp = x0 - q * x1, x0 = x1, x1 = tmp;
    }
    if (s > 1 && a != 1)
        return 0;
    t0 = s > 1 ? ((-x0) % s + s) % s : 0;
    r = f * t0;
#define BELOW(x) ((x) <= r ? 0 : ((x)-1 - r) / p + 1)
    return (double)(BELOW(hi) - BELOW(lo));
#undef BELOW
}

static int cmp_int64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Layers with a dense MLP instead of experts, counted into
 * m->dense_layers (only the count enters the parameters and the
 * estimators).  Layer i (from 0) is MoE when
 *   i >= first_k_dense_replace and i % moe_layer_freq == 0   (DeepSeek-V2/V3,
 *     modeling_deepseek.py), and
 *   i is not in mlp_only_layers and (i + 1) % decoder_sparse_step == 0
 *     (Qwen2-MoE, Qwen3-MoE, modeling_qwen2_moe.py);
 * absent keys are 0, 1, [] and 1. */
static afd_status dense_layer_count(json_t *root, afd_model *m, afd_error *err)
{
    double freq = 1, step = 1, n_moe;
    json_t *only = json_object_get(root, "mlp_only_layers");
    int64_t k, *idx = NULL;
    afd_status st;
    size_t j, n = 0;
    if ((st = get_int(root, "moe_layer_freq", 0, &freq, err)) != AFD_OK ||
        (st = get_int(root, "decoder_sparse_step", 0, &step, err)) != AFD_OK)
        return st;
    if (freq < 1 || step < 1)
        return afd_priv_fail(err, AFD_EPARSE, 0, 0, "'%s' must be >= 1",
                             freq < 1 ? "moe_layer_freq" : "decoder_sparse_step");
    if (m->first_k_dense > m->layers)
        return afd_priv_fail(err, AFD_EPARSE, 0, 0,
                             "first_k_dense_replace (%g) exceeds num_hidden_layers (%g)",
                             m->first_k_dense, m->layers);
    k = (int64_t)m->first_k_dense;
    n_moe = count_congruent(k, (int64_t)m->layers, (int64_t)freq, (int64_t)step);
    if (only != NULL && !json_is_null(only)) {
        if (!json_is_array(only))
            return afd_priv_fail(err, AFD_EPARSE, 0, 0,
                                 "'mlp_only_layers' must be a list of layer indices");
        n = json_array_size(only);
        idx = n > 0 ? malloc(n * sizeof *idx) : NULL;
        if (n > 0 && idx == NULL)
            return afd_priv_fail(err, AFD_ENOMEM, 0, 0, "out of memory");
        for (j = 0; j < n; j++) {
            json_t *e = json_array_get(only, j);
            double x = json_is_integer(e) ? (double)json_integer_value(e) : -1;
            if (!(x >= 0 && x < m->layers)) {
                free(idx);
                return afd_priv_fail(err, AFD_EPARSE, 0, 0,
                                     "mlp_only_layers[%zu] must be a layer index below "
                                     "num_hidden_layers (%g)",
                                     j, m->layers);
            }
            idx[j] = (int64_t)x;
        }
        /* each listed layer that would be MoE, once */
        if (n > 0)
            qsort(idx, n, sizeof *idx, cmp_int64);
        for (j = 0; j < n; j++)
            if ((j == 0 || idx[j] != idx[j - 1]) && idx[j] >= k && idx[j] % (int64_t)freq == 0 &&
                (idx[j] + 1) % (int64_t)step == 0)
                n_moe--;
        free(idx);
    }
    m->dense_layers = m->layers - n_moe;
    return AFD_OK;
}

afd_status afd_model_parse(const char *text, size_t len, const char *name, afd_model *out,
                           afd_error *err)
{
    json_error_t je;
    json_t *root, *v;
    afd_model m;
    afd_status st = AFD_OK;
    double x = NAN;

    afd_error_clear(err);
    model_nan(out);
    model_nan(&m);
    root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    if (!root)
        return afd_priv_fail(err, AFD_EPARSE, je.line > 0 ? je.line : 0,
                             je.column > 0 ? je.column : 0, "%s", je.text);
    if (!json_is_object(root)) {
        json_decref(root);
        return afd_priv_fail(err, AFD_EPARSE, 1, 1, "a config.json is a JSON object");
    }
    /* Multimodal configs keep the language model under text_config. */
    v = json_object_get(root, "text_config");
    if (json_is_object(v) && !json_object_get(root, "hidden_size")) {
        json_incref(v);
        json_decref(root);
        root = v;
    }
    snprintf(m.name, sizeof m.name, "%s", name ? name : "");
#define GET(key, req, field)                                                                  \
    do {                                                                                      \
        if (st == AFD_OK)                                                                     \
            st = get_int(root, key, req, &m.field, err);                                      \
    } while (0)
    m.n_routed_experts = m.experts_per_tok = m.moe_intermediate = m.n_shared_experts = 0;
    m.first_k_dense = m.dense_layers = 0;
    m.mtp_layers = 0;
    m.q_lora_rank = m.kv_lora_rank = m.qk_rope_head_dim = m.qk_nope_head_dim = m.v_head_dim = 0;
    GET("hidden_size", 1, hidden);
    GET("num_attention_heads", 1, heads);
    GET("num_hidden_layers", 1, layers);
    GET("vocab_size", 1, vocab);
    if (st == AFD_OK)
        st = expert_count(root, &m.n_routed_experts, err);
    GET("num_experts_per_tok", 0, experts_per_tok);
    GET("moe_intermediate_size", 0, moe_intermediate);
    GET("n_shared_experts", 0, n_shared_experts);
    GET("first_k_dense_replace", 0, first_k_dense);
    GET("num_nextn_predict_layers", 0, mtp_layers);
    GET("kv_lora_rank", 0, kv_lora_rank);
    GET("q_lora_rank", 0, q_lora_rank);
    GET("qk_rope_head_dim", 0, qk_rope_head_dim);
    GET("qk_nope_head_dim", 0, qk_nope_head_dim);
    GET("v_head_dim", 0, v_head_dim);
    m.max_position = m.sliding_window = 0;
    GET("max_position_embeddings", 0, max_position);
    if (!json_is_false(json_object_get(root, "use_sliding_window")))
        GET("sliding_window", 0, sliding_window);
    if (st != AFD_OK)
        goto done;
    if (m.n_routed_experts == 0 &&
        (m.experts_per_tok > 0 || has_key(root, "moe_intermediate_size") ||
         has_key(root, "shared_expert_intermediate_size"))) {
        /* read as dense, a MoE model would lose all but its active experts */
        st = afd_priv_fail(err, AFD_EPARSE, 0, 0,
                           "'%s' given but no expert count (n_routed_experts, "
                           "num_local_experts or num_experts)",
                           m.experts_per_tok > 0 ? "num_experts_per_tok"
                           : has_key(root, "moe_intermediate_size")
                               ? "moe_intermediate_size"
                               : "shared_expert_intermediate_size");
        goto done;
    }
    m.moe = m.n_routed_experts > 0;
    m.mla = m.kv_lora_rank > 0;
    m.shared_intermediate = 0;
    m.shared_expert_gate = 0;
    if (m.moe) {
        st = dense_layer_count(root, &m, err);
        if (st != AFD_OK)
            goto done;
    }
    if (m.moe && m.moe_intermediate == 0 && !json_object_get(root, "moe_intermediate_size"))
        st = get_int(root, "intermediate_size", 1, &m.moe_intermediate, err);
    if (st == AFD_OK && m.moe) {
        /* Qwen2-MoE: one shared expert of its own width, gated by a
         * sigmoid of a hidden x 1 projection; DeepSeek: n_shared_experts of
         * the routed experts' width */
        st = get_int(root, "shared_expert_intermediate_size", 0, &m.shared_intermediate, err);
        if (st == AFD_OK && m.shared_intermediate > 0) {
            if (m.n_shared_experts > 0) {
                st = afd_priv_fail(err, AFD_EPARSE, 0, 0,
                                   "both n_shared_experts and shared_expert_intermediate_size "
                                   "are given");
                goto done;
            }
            m.n_shared_experts = 1;
            m.shared_expert_gate = 1;
        } else
            m.shared_intermediate = m.n_shared_experts * m.moe_intermediate;
    }
    if (st == AFD_OK)
        st = get_int(root, "intermediate_size", !m.moe || m.dense_layers > 0, &m.intermediate,
                     err);
    if (st != AFD_OK)
        goto done;
    if (isnan(m.intermediate))
        m.intermediate = 0;
    m.kv_heads = m.heads;
    GET("num_key_value_heads", 0, kv_heads);
    m.head_dim = m.heads > 0 ? m.hidden / m.heads : NAN;
    if (st == AFD_OK && json_object_get(root, "head_dim") &&
        !json_is_null(json_object_get(root, "head_dim")))
        st = get_int(root, "head_dim", 1, &m.head_dim, err);
    if (st != AFD_OK)
        goto done;
    if (m.hidden < 1 || m.heads < 1 || m.layers < 1 || m.vocab < 1 || m.kv_heads < 1) {
        st = afd_priv_fail(err, AFD_EPARSE, 0, 0,
                           "hidden_size, num_attention_heads, num_key_value_heads, "
                           "num_hidden_layers and vocab_size must be >= 1");
        goto done;
    }
    if (!m.moe && m.intermediate < 1) {
        st = afd_priv_fail(err, AFD_EPARSE, 0, 0, "intermediate_size must be >= 1");
        goto done;
    }
    if (fmod(m.heads, m.kv_heads) != 0) {
        st = afd_priv_fail(err, AFD_EPARSE, 0, 0,
                           "num_attention_heads (%g) must be a multiple of "
                           "num_key_value_heads (%g)", m.heads, m.kv_heads);
        goto done;
    }
    if (!m.mla && m.head_dim != floor(m.head_dim)) {
        st = afd_priv_fail(err, AFD_EPARSE, 0, 0,
                           "hidden_size / num_attention_heads is not an integer; give head_dim");
        goto done;
    }
    if (!m.mla && !(m.head_dim >= 1)) {
        st = afd_priv_fail(err, AFD_EPARSE, 0, 0, "head_dim must be >= 1: %g", m.head_dim);
        goto done;
    }
    if (m.moe) {
        if (m.experts_per_tok < 1 || m.experts_per_tok > m.n_routed_experts ||
            m.moe_intermediate < 1) {
            st = afd_priv_fail(err, AFD_EPARSE, 0, 0,
                               "a MoE model needs 1 <= num_experts_per_tok <= n_routed_experts "
                               "and moe_intermediate_size >= 1");
            goto done;
        }
    }
    if (m.mla) {
        if (m.qk_rope_head_dim < 1 || m.qk_nope_head_dim < 1 || m.v_head_dim < 1) {
            st = afd_priv_fail(err, AFD_EPARSE, 0, 0,
                               "an MLA model (kv_lora_rank) needs qk_rope_head_dim, "
                               "qk_nope_head_dim and v_head_dim >= 1");
            goto done;
        }
        m.head_dim = m.qk_nope_head_dim + m.qk_rope_head_dim;
    }
    m.dtype_bytes = 2;
    v = json_object_get(root, "torch_dtype");
    if (!v)
        v = json_object_get(root, "dtype");
    if (v && !json_is_null(v)) {
        if (!json_is_string(v)) {
            st = afd_priv_fail(err, AFD_EPARSE, 0, 0, "'torch_dtype' must be a string");
            goto done;
        }
        st = dtype_bytes(json_string_value(v), &x, err);
        if (st != AFD_OK)
            goto done;
        m.dtype_bytes = x;
    }
    /* Layouts the parameter count and the estimator do not follow: Jamba's
     * interleaved Mamba and attention layers (attn_layer_period,
     * expert_layer_period, layers_block_type) and Llama 4's MoE on every
     * k-th layer (interleave_moe_layer_step) would be counted as a plain
     * transformer with experts on every layer: refuse them. */
    {
        static const char *const layouts[] = {"attn_layer_period", "expert_layer_period",
                                              "layers_block_type", "interleave_moe_layer_step"};
        size_t i;
        for (i = 0; i < sizeof layouts / sizeof layouts[0]; i++)
            if (json_object_get(root, layouts[i]) != NULL) {
                st = afd_priv_fail(err, AFD_EPARSE, 0, 0,
                                   "'%s': a layer layout afdkit does not model (interleaved "
                                   "attention, Mamba or MoE layers)",
                                   layouts[i]);
                goto done;
            }
    }
    m.weight_bytes_per_param = m.dtype_bytes;
    v = json_object_get(root, "quantization_config");
    if (v && !json_is_null(v)) {
        /* Only FP8 is priced (one byte per parameter, as DeepSeek-V3 ships);
         * AWQ, GPTQ and the like keep embeddings, output head and norms at
         * torch_dtype and store per-group scales beside 4-bit linears,
         * which weight_bytes_per_param cannot express: refuse rather than
         * price them at torch_dtype. */
        json_t *q = json_is_object(v) ? json_object_get(v, "quant_method") : NULL;
        if (!json_is_string(q)) {
            st = afd_priv_fail(err, AFD_EPARSE, 0, 0,
                               "quantization_config.quant_method must be a string "
                               "(only fp8 is supported)");
            goto done;
        }
        if (strcmp(json_string_value(q), "fp8") != 0) {
            st = afd_priv_fail(err, AFD_EPARSE, 0, 0,
                               "quantization_config.quant_method '%.40s' is not supported "
                               "(only fp8; give the unquantized checkpoint's config.json)",
                               json_string_value(q));
            goto done;
        }
        m.weight_bytes_per_param = 1;
    }
    /* flags: true, false or absent (null); anything else is a typo that
     * would silently count the weights (or read the sliding window)
     * otherwise */
    {
        static const char *const flags[3] = {"tie_word_embeddings", "attention_bias",
                                             "use_sliding_window"};
        int k;
        for (k = 0; k < 3; k++) {
            v = json_object_get(root, flags[k]);
            if (v && !json_is_boolean(v) && !json_is_null(v)) {
                st = afd_priv_fail(err, AFD_EPARSE, 0, 0, "'%s' must be true or false",
                                   flags[k]);
                goto done;
            }
        }
    }
    m.tied_embeddings = json_is_true(json_object_get(root, "tie_word_embeddings"));
    m.qkv_bias = json_is_true(json_object_get(root, "attention_bias"));
    m.qk_norm = 0;
    v = json_object_get(root, "model_type");
    if (json_is_string(v)) {
        const char *mt = json_string_value(v);
        /* Qwen2 and Qwen2-MoE have Q, K, V biases without a config key */
        if (strcmp(mt, "qwen2") == 0 || strcmp(mt, "qwen2_moe") == 0)
            m.qkv_bias = 1;
        /* Qwen3 and Qwen3-MoE normalise each query and key head (q_norm,
         * k_norm: head_dim weights each) */
        if (strcmp(mt, "qwen3") == 0 || strcmp(mt, "qwen3_moe") == 0)
            m.qk_norm = 1;
    }
done:
    json_decref(root);
    if (st == AFD_OK)
        *out = m;
    return st;
#undef GET
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

afd_status afd_model_read(const char *path, afd_model *out, afd_error *err)
{
    char *buf;
    size_t n;
    afd_status st;
    model_nan(out);
    afd_error_clear(err);
    st = afd_priv_read_file(path, MAX_FILE, &buf, &n, err);
    if (st != AFD_OK)
        return st;
    st = afd_model_parse(buf, n, base_name(path), out, err);
    free(buf);
    return st;
}

afd_status afd_model_preset_load(const char *name, afd_model *out, afd_error *err)
{
    size_t i;
    for (i = 0; afd_priv_model_presets[i].name; i++)
        if (strcmp(afd_priv_model_presets[i].name, name) == 0)
            return afd_model_parse(afd_priv_model_presets[i].text,
                                   strlen(afd_priv_model_presets[i].text), name, out, err);
    model_nan(out);
    return afd_priv_fail(err, AFD_EINVAL, 0, 0, "unknown model preset '%.40s'", name);
}

afd_status afd_model_load(const char *name_or_path, afd_model *out, afd_error *err)
{
    size_t i;
    for (i = 0; afd_priv_model_presets[i].name; i++)
        if (strcmp(afd_priv_model_presets[i].name, name_or_path) == 0)
            return afd_model_preset_load(name_or_path, out, err);
    return afd_model_read(name_or_path, out, err);
}

static size_t n_model_presets(void)
{
    size_t i = 0;
    while (afd_priv_model_presets[i].name)
        i++;
    return i;
}

const char *afd_model_preset_name(size_t i)
{
    return i < n_model_presets() ? afd_priv_model_presets[i].name : NULL;
}

const char *afd_model_preset_json(size_t i)
{
    return i < n_model_presets() ? afd_priv_model_presets[i].text : NULL;
}

const char *afd_model_preset_source(size_t i)
{
    return i < n_model_presets() ? afd_priv_model_presets[i].source : NULL;
}

/* Parameters of one attention block's projections and norms. */
static double attn_params(const afd_model *m)
{
    double h = m->hidden, hq = m->heads;
    if (m->mla) {
        double dn = m->qk_nope_head_dim, dr = m->qk_rope_head_dim, dv = m->v_head_dim;
        double rq = m->q_lora_rank, rkv = m->kv_lora_rank;
        double q = rq > 0 ? h * rq + rq + rq * hq * (dn + dr) : h * hq * (dn + dr);
        return q + h * (rkv + dr) + rkv + rkv * hq * (dn + dv) + hq * dv * h;
    } else {
        double q = hq * m->head_dim, kv = m->kv_heads * m->head_dim;
        return h * (q + 2 * kv) + q * h + (m->qkv_bias ? q + 2 * kv : 0) +
               (m->qk_norm ? 2 * m->head_dim : 0);
    }
}

/* routed: number of routed experts counted per MoE layer. */
static double count_params(const afd_model *m, double routed)
{
    double h = m->hidden;
    double dense_mlp = 3 * h * m->intermediate;
    double n_moe = m->moe ? m->layers - m->dense_layers : 0;
    double n_dense = m->layers - n_moe;
    double moe_mlp = m->moe
                         ? 3 * h * m->moe_intermediate * routed + 3 * h * m->shared_intermediate +
                               h * m->n_routed_experts + (m->shared_expert_gate ? h : 0)
                         : 0;
    double per_layer_common = attn_params(m) + 2 * h;
    double embed = m->vocab * h * (m->tied_embeddings ? 1 : 2);
    return m->layers * per_layer_common + n_dense * dense_mlp + n_moe * moe_mlp + embed + h;
}

double afd_model_params(const afd_model *m)
{
    return count_params(m, m->n_routed_experts);
}

double afd_model_active_params(const afd_model *m)
{
    return count_params(m, m->experts_per_tok);
}

double afd_model_weight_bytes(const afd_model *m)
{
    return afd_model_params(m) * m->weight_bytes_per_param;
}

double afd_model_kv_bytes_per_token(const afd_model *m)
{
    if (m->mla)
        return m->layers * (m->kv_lora_rank + m->qk_rope_head_dim) * m->dtype_bytes;
    return 2 * m->layers * m->kv_heads * m->head_dim * m->dtype_bytes;
}
