/* fuzz_model.c: libFuzzer target for the model-description reader
 * (config.json, afd_model_parse) and the file path to it (afd_model_read).
 * Invariants: the file gives what the text gives (the same status, message
 * or fields); a refused text leaves a one-line message; an accepted one
 * satisfies the constraints afd_model.h states (the dimensions positive
 * integers, the heads a multiple of the KV heads, 1 <= experts per token <=
 * routed experts), and the counts built on it are finite and ordered
 * (active parameters <= all parameters, both > 0; KV bytes per token > 0);
 * the latency model's dimensions can be taken from it. */
#include <config.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "afdkit.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int positive_integer(double x)
{
    return x >= 1 && x <= 1e9 && x == floor(x);
}

/* Bitwise equality of two doubles (NaN equals NaN). */
static int same(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

static int same_model(const afd_model *a, const afd_model *b)
{
    return strcmp(a->name, b->name) == 0 && same(a->hidden, b->hidden) &&
           same(a->intermediate, b->intermediate) && same(a->heads, b->heads) &&
           same(a->kv_heads, b->kv_heads) && same(a->head_dim, b->head_dim) &&
           same(a->layers, b->layers) && same(a->vocab, b->vocab) &&
           same(a->dtype_bytes, b->dtype_bytes) &&
           same(a->weight_bytes_per_param, b->weight_bytes_per_param) &&
           a->tied_embeddings == b->tied_embeddings && a->qkv_bias == b->qkv_bias &&
           a->moe == b->moe && same(a->n_routed_experts, b->n_routed_experts) &&
           same(a->experts_per_tok, b->experts_per_tok) &&
           same(a->moe_intermediate, b->moe_intermediate) &&
           same(a->n_shared_experts, b->n_shared_experts) &&
           same(a->first_k_dense, b->first_k_dense) && a->mla == b->mla &&
           same(a->q_lora_rank, b->q_lora_rank) && same(a->kv_lora_rank, b->kv_lora_rank) &&
           same(a->qk_rope_head_dim, b->qk_rope_head_dim) &&
           same(a->qk_nope_head_dim, b->qk_nope_head_dim) &&
           same(a->v_head_dim, b->v_head_dim) && same(a->mtp_layers, b->mtp_layers) &&
           same(a->max_position, b->max_position) &&
           same(a->sliding_window, b->sliding_window) &&
           same(a->shared_intermediate, b->shared_intermediate) &&
           a->shared_expert_gate == b->shared_expert_gate && a->qk_norm == b->qk_norm &&
           same(a->dense_layers, b->dense_layers);
}

static void check_model(const afd_model *m)
{
    double all = afd_model_params(m), active = afd_model_active_params(m);
    double kv = afd_model_kv_bytes_per_token(m), wb = afd_model_weight_bytes(m);
    afd_model_dims dims;

        if (!positive_integer(m->hidden) || !positive_integer(m->heads) ||
        !positive_integer(m->kv_heads) || !positive_integer(m->layers) ||
        !positive_integer(m->vocab) || fmod(m->heads, m->kv_heads) != 0)
        abort();
    if (!m->moe && !positive_integer(m->intermediate))
        abort();
    if (m->moe && (!(m->experts_per_tok >= 1) || m->experts_per_tok > m->n_routed_experts ||
                   !positive_integer(m->moe_intermediate)))
        abort();
    if (!(m->dtype_bytes > 0) || !(m->weight_bytes_per_param > 0))
        abort();
    if (!(all > 0) || !isfinite(all) || !(active > 0) || active > all)
        abort();
    if (!(kv > 0) || !isfinite(kv) || !(wb > 0) || !isfinite(wb))
        abort();
    (void)afd_model_dims_from_model(m, &dims);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    afd_model m, f;
    afd_error err, ferr;
    afd_status st, fst;
    const char *path = fuzz_temp_file(data, size), *base = strrchr(path, '/') + 1;

    st = afd_model_parse((const char *)data, size, base, &m, &err);
    fst = afd_model_read(path, &f, &ferr);
    if (st != AFD_OK) {
        fuzz_check_error(&err);
        fuzz_same_error(st, &err, fst, &ferr);
        return 0;
    }
    if (fst != AFD_OK || !same_model(&m, &f))
        abort();
    check_model(&m);
    return 0;
}
