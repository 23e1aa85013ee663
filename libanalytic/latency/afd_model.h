/* afd_model.h: a transformer's dimensions from its Hugging Face config.json.
 *
 * Three families are understood:
 *   - dense LLaMA-style decoders (LLaMA, Mistral, Qwen2, Qwen3, CodeLlama):
 *     hidden_size, intermediate_size, num_attention_heads, num_key_value_heads
 *     (grouped-query attention; absent means multi-head), num_hidden_layers,
 *     vocab_size, head_dim (absent: hidden_size / num_attention_heads),
 *     torch_dtype, tie_word_embeddings, attention_bias (model_type qwen2 and
 *     qwen2_moe have biases on Q, K, V; qwen3 and qwen3_moe a norm on each
 *     query and key head);
 *   - MoE decoders: the routed experts per layer as n_routed_experts
 *     (DeepSeek), num_local_experts (Mixtral) or num_experts (Qwen2-MoE,
 *     Qwen3-MoE), num_experts_per_tok, moe_intermediate_size (absent:
 *     intermediate_size, as in Mixtral), shared experts as n_shared_experts
 *     of the routed width or one of shared_expert_intermediate_size (Qwen2-MoE,
 *     with its sigmoid gate), and the layers that keep a dense MLP of
 *     intermediate_size: first_k_dense_replace and moe_layer_freq (DeepSeek),
 *     mlp_only_layers and decoder_sparse_step (Qwen).  A config giving
 *     num_experts_per_tok, moe_intermediate_size or
 *     shared_expert_intermediate_size without an expert count is refused,
 *     never read as dense;
 *   - multi-head latent attention (MLA, DeepSeek-V2/V3): kv_lora_rank,
 *     q_lora_rank (null: a full query projection), qk_rope_head_dim,
 *     qk_nope_head_dim, v_head_dim.
 *
 * Weights are stored at torch_dtype, or at one byte per parameter when the
 * config carries quantization_config.quant_method = "fp8" (DeepSeek-V3's
 * released checkpoint); any other quant_method (awq, gptq, ...) is refused,
 * as its 4-bit linears, per-group scales and unquantized embeddings are not
 * modelled.  The KV cache is kept at torch_dtype.
 *
 * Presets are the configs of public checkpoints, bundled verbatim (their
 * sources are listed by afd_model_preset_source and in data/models/SOURCES).
 */
#ifndef AFD_MODEL_H
#define AFD_MODEL_H

#include <stddef.h>

#include "afd_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct afd_model {
    char name[64];        /* preset name or the file's base name */
    double hidden;        /* h, hidden_size */
    double intermediate;  /* h_0, intermediate_size (dense MLP) */
    double heads;         /* h_q, num_attention_heads */
    double kv_heads;      /* h_kv, num_key_value_heads */
    double head_dim;      /* head_dim */
    double layers;        /* num_hidden_layers */
    double vocab;         /* vocab_size */
    double dtype_bytes;   /* bytes per activation / KV element (torch_dtype) */
    double weight_bytes_per_param; /* dtype_bytes, or 1 for fp8 checkpoints */
    int tied_embeddings;  /* tie_word_embeddings */
    int qkv_bias;         /* biases on the Q, K, V projections */
    /* MoE (0 when dense) */
    int moe;
    double n_routed_experts, experts_per_tok, moe_intermediate, n_shared_experts;
    /* first_k_dense_replace as the config gives it (DeepSeek: the first
     * layers keep a dense MLP; 0 when absent); dense_layers below counts
     * every dense layer */
    double first_k_dense;
    /* MLA (0 when absent) */
    int mla;
    double q_lora_rank, kv_lora_rank, qk_rope_head_dim, qk_nope_head_dim, v_head_dim;
    /* num_nextn_predict_layers: multi-token-prediction depth (0 when absent) */
    double mtp_layers;
    /* max_position_embeddings: the longest sequence the model was trained
     * for; sliding_window: the tokens each attends to (0 when absent, null,
     * or use_sliding_window is false).  Neither enters the estimator:
     * estimate warns past them (docs/cli.md). */
    double max_position, sliding_window;
    /* width of all shared experts together: n_shared_experts x
     * moe_intermediate_size (DeepSeek), or shared_expert_intermediate_size
     * (Qwen2-MoE, whose one shared expert has a sigmoid gate, hidden x 1:
     * shared_expert_gate); 0 without shared experts */
    double shared_intermediate;
    int shared_expert_gate;
    /* Qwen3: RMSNorm over each query and key head (2 head_dim weights) */
    int qk_norm;
    /* layers that keep a dense MLP of intermediate_size (0 when dense):
     * DeepSeek's first first_k_dense_replace and those off moe_layer_freq,
     * Qwen's mlp_only_layers and those off decoder_sparse_step; a count, as
     * nothing downstream depends on where they sit */
    double dense_layers;
} afd_model;

/* Parse a config.json text (len bytes) with jansson.  Required keys:
 * hidden_size, num_attention_heads, num_hidden_layers, vocab_size, and
 * intermediate_size unless every layer is MoE; each a positive integer.
 * Errors name the key (and the line and column of a JSON syntax error);
 * head_dim must divide nothing in particular but heads must be a multiple of
 * kv_heads.  name may be NULL. */
AFD_API afd_status afd_model_parse(const char *text, size_t len, const char *name,
                                   afd_model *out, afd_error *err);
/* Read a config.json file (at most 1 MiB); name = the path's base name. */
AFD_API afd_status afd_model_read(const char *path, afd_model *out, afd_error *err);
/* A bundled preset by name ("llama-3.1-70b"); AFD_EINVAL if unknown. */
AFD_API afd_status afd_model_preset_load(const char *name, afd_model *out, afd_error *err);
/* A preset name if one matches, else a config.json path. */
AFD_API afd_status afd_model_load(const char *name_or_path, afd_model *out, afd_error *err);
/* Name, config.json text and source (URL and revision) of the i-th preset;
 * NULL past the last. */
AFD_API const char *afd_model_preset_name(size_t i);
AFD_API const char *afd_model_preset_json(size_t i);
AFD_API const char *afd_model_preset_source(size_t i);

/* Parameters of the decoder (embeddings, every layer, final norm, and the
 * output head unless tied; DeepSeek-V3's multi-token-prediction module is
 * not counted, as inference without speculative decoding does not load it):
 *   dense layer: h (q + 2 kv) + q h + 3 h h_0 + 2 h  (+ q + 2 kv biases)
 *   with q = h_q d, kv = h_kv d;
 *   MLA: h r_q + r_q + r_q h_q (d_nope + d_rope) + h (r_kv + d_rope) + r_kv
 *        + r_kv h_q (d_nope + d_v) + h_q d_v h   (r_q = 0: h h_q (d_nope + d_rope));
 *   MoE layer: 3 h d_e N_routed + 3 h d_s + h N_routed (router)
 *              (+ h for Qwen2-MoE's shared-expert gate),
 *   with d_s = shared_intermediate; Qwen3 adds 2 d per layer (q_norm, k_norm). */
AFD_API double afd_model_params(const afd_model *m);
/* Parameters read per token by a forward pass: the above with only the
 * experts_per_tok routed experts of each MoE layer. */
AFD_API double afd_model_active_params(const afd_model *m);
/* afd_model_params x weight_bytes_per_param. */
AFD_API double afd_model_weight_bytes(const afd_model *m);
/* KV-cache bytes per token of context, whole model:
 *   GQA: 2 layers h_kv d dtype_bytes;  MLA: layers (r_kv + d_rope) dtype_bytes. */
AFD_API double afd_model_kv_bytes_per_token(const afd_model *m);

#ifdef __cplusplus
}
#endif

#endif /* AFD_MODEL_H */
