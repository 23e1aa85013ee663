/* cmd_estimate.c: afdkit estimate (BestServe's estimator, Section 3.3) and
 * afdkit model (what follows from a model description alone). */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

enum {
    OPT_MODEL = OPT_COMMAND, OPT_DEVICE, OPT_TP, OPT_PHASE, OPT_B, OPT_S, OPT_PER_OP,
    OPT_PAPER, OPT_NO_DISPATCH, OPT_OUT, OPT_EAGER
};

static const cli_option est_options[] = {
    {"model", 'm', "NAME|FILE", "model preset or Hugging Face config.json (required)", OPT_MODEL},
    {"device", 'd', "NAME|FILE", "device preset or key = value file (required)", OPT_DEVICE},
    {"tp", 't', "T", "tensor-parallel size (default 1)", OPT_TP},
    {"phase", 0, "P", "prefill or decode (default prefill)", OPT_PHASE},
    {"batch", 'b', "B", "sequences in the batch (default 1)", OPT_B},
    {"seq", 's', "S", "prompt length (prefill) or context length with the new token (decode); "
                      "default 2048", OPT_S},
    {"per-op", 0, NULL, "print the operators: W, Q, intensity, bound, time", OPT_PER_OP},
    {"paper-forms", 0, NULL, "use BestServe's Appendix B tables exactly as printed", OPT_PAPER},
    {"no-dispatch", 0, NULL, "ignore the device's dispatch times", OPT_NO_DISPATCH},
    {"eager", 0, NULL, "launched op by op, not as a CUDA graph: CPU dispatch per kernel "
                       "(the device's eager_op_us, eager_gap_us) and the dispatch-bound share",
     OPT_EAGER},
    {"out", 'o', "FILE", "write the latency file (serving laws, AFD coefficients) for --hw",
     OPT_OUT},
    {NULL, 0, NULL, NULL, 0},
};
static const cli_group est_group = {"Options", est_options};
static const cli_group *const est_groups[] = {&est_group, &cli_output_group, NULL};

static const cli_option model_options[] = {
    {"model", 'm', "NAME|FILE", "model preset or Hugging Face config.json (required)", OPT_MODEL},
    {NULL, 0, NULL, NULL, 0},
};
static const cli_group model_group = {"Options", model_options};
static const cli_group *const model_groups[] = {&model_group, &cli_output_group, NULL};

struct args {
    const char *model, *device, *out;
    double tp, b, s;
    int phase, per_op, paper, no_dispatch, have_s, eager;
    const char *cmd;
};

static int own(void *ctx, const cli_option *opt, const char *arg)
{
    struct args *a = ctx;
    int64_t v;
    int rc;
    if (opt == NULL)
        return cli_usage_error(a->cmd, "unexpected argument '%s'", arg);
    switch (opt->id) {
    case OPT_MODEL: a->model = arg; return 0;
    case OPT_DEVICE: a->device = arg; return 0;
    case OPT_OUT: a->out = arg; return 0;
    case OPT_PER_OP: a->per_op = 1; return 0;
    case OPT_PAPER: a->paper = 1; return 0;
    case OPT_NO_DISPATCH: a->no_dispatch = 1; return 0;
    case OPT_EAGER: a->eager = 1; return 0;
    case OPT_PHASE:
        if (strcmp(arg, "prefill") == 0)
            a->phase = AFD_PREFILL;
        else if (strcmp(arg, "decode") == 0)
            a->phase = AFD_DECODE;
        else {
            char buf[64];
            return cli_usage_error(a->cmd, "--phase must be prefill or decode: '%s'",
                                   cli_excerpt(arg, buf, sizeof buf));
        }
        return 0;
    case OPT_TP:
        rc = cli_integer(a->cmd, opt->name, arg, 1, 1024, &v);
        a->tp = (double)v;
        return rc;
    case OPT_B:
        rc = cli_integer(a->cmd, opt->name, arg, 1, 1000000000, &v);
        a->b = (double)v;
        return rc;
    case OPT_S:
        rc = cli_integer(a->cmd, opt->name, arg, 1, 100000000, &v);
        a->s = (double)v;
        a->have_s = 1;
        return rc;
    }
    return cli_usage_error(a->cmd, "internal error: unhandled option --%s", opt->name);
}

/* Load the model (preset or file); prints the error. */
int cli_load_model(const char *cmd, const char *spec, afd_model *m)
{
    afd_error err;
    afd_status st = afd_model_load(spec, m, &err);
    return st == AFD_OK ? 0 : cli_spec_error(cmd, "model", spec, st, &err, afd_model_preset_name);
}

int cli_load_device_as(const char *cmd, const char *opt, const char *spec, afd_device *d)
{
    afd_error err;
    afd_status st = afd_device_load(spec, d, &err);
    return st == AFD_OK ? 0 : cli_spec_error(cmd, opt, spec, st, &err, afd_device_preset_name);
}

int cli_load_device(const char *cmd, const char *spec, afd_device *d)
{
    return cli_load_device_as(cmd, "device", spec, d);
}

static void model_meta(cli_table *t, const afd_model *m)
{
    cli_table_meta(t, "model", "%s hidden=%g intermediate=%g heads=%g kv_heads=%g head_dim=%g "
                               "layers=%g vocab=%g dtype_bytes=%g",
                   m->name, m->hidden, m->intermediate, m->heads, m->kv_heads, m->head_dim,
                   m->layers, m->vocab, m->dtype_bytes);
    if (m->moe)
        cli_table_meta(t, "moe",
                       "experts=%g top_k=%g moe_intermediate=%g shared=%g "
                       "first_k_dense=%g shared_intermediate=%g dense_layers=%g",
                       m->n_routed_experts, m->experts_per_tok, m->moe_intermediate,
                       m->n_shared_experts, m->first_k_dense, m->shared_intermediate,
                       m->dense_layers);
    if (m->mla)
        cli_table_meta(t, "mla", "q_lora_rank=%g kv_lora_rank=%g qk_rope=%g qk_nope=%g v_head=%g",
                       m->q_lora_rank, m->kv_lora_rank, m->qk_rope_head_dim,
                       m->qk_nope_head_dim, m->v_head_dim);
}

/* Warn about every law whose fit is off by more than AFD_ESTIMATE_FIT_WARN
 * somewhere on its grid, naming the law, the error and where. */
static int run_estimate(const cli_command *self, int argc, char **argv)
{
    const char *cmd = self->path;
    struct args a;
    cli_common c;
    afd_model m;
    afd_device d;
    afd_estimate est;
    afd_error err;
    afd_status st;
    cli_table *t;
    int rc, i;

    memset(&a, 0, sizeof a);
    a.cmd = cmd;
    a.tp = 1;
    a.b = 1;
    a.s = 2048;
    a.phase = AFD_PREFILL;
    cli_common_init(&c);
    rc = cli_parse_args(self, argc, argv, &c, own, &a);
    if (rc != CLI_CONTINUE)
        return rc;
    if (a.model == NULL || a.device == NULL)
        return cli_usage_error(cmd, "--model and --device are required");
    if ((rc = cli_load_model(cmd, a.model, &m)) != 0 || (rc = cli_load_device(cmd, a.device, &d)) != 0)
        return rc;
    {
        afd_estimate_options o = {.tp = a.tp, .phase = (afd_phase)a.phase, .batch = a.b,
                                  .seq = a.s, .paper_forms = a.paper,
                                  .no_dispatch = a.no_dispatch, .eager = a.eager};
        st = afd_estimate_forward(&m, &d, &o, &est, &err);
        if (st != AFD_OK)
            return cli_usage_error(cmd, "%s", err.text);
    }
    if (m.max_position > 0 && a.s > m.max_position)
        cli_warn(cmd, "-s %g exceeds the %g positions the model was trained for "
                      "(max_position_embeddings)",
                 a.s, m.max_position);
    if (m.sliding_window > 0 && a.s > m.sliding_window)
        cli_warn(cmd, "the model attends over a window of %g tokens (sliding_window), which the "
                      "estimator ignores: attention and the KV cache span all %g tokens",
                 m.sliding_window, a.s);
    {
        /* The time assumes the weights and the batch's KV cache fit. */
        double cap;
        if (afd_kv_capacity_tokens(&m, &d, a.tp, &cap, &err) != AFD_OK)
            cli_warn(cmd, "%s: the time assumes memory the devices do not have", err.text);
        else if (a.b * a.s > cap)
            cli_warn(cmd, "the KV cache of %g x %g = %g tokens exceeds the %g tokens left after "
                          "the weights (%g bytes per token over %g devices): the time assumes "
                          "memory the devices do not have",
                     a.b, a.s, a.b * a.s, cap, afd_kv_bytes_per_token(&m, a.tp), a.tp);
    }
    if (a.out != NULL) {
        static afd_hw hw;
        char *text, comment[1024];
        if (a.paper)
            return cli_usage_error(cmd, "--out fits afdkit's forms; drop --paper-forms");
        afd_estimate_fit fit;
        st = afd_estimate_laws_fit(&m, &d, a.tp, &hw, &fit, &err);
        if (st != AFD_OK)
            return st == AFD_EINVAL ? cli_usage_error(cmd, "%s", err.text)
                                    : cli_runtime_error(cmd, "%s", err.text);
        cli_warn_fit(cmd, &fit, AFD_FIT_N);
        snprintf(comment, sizeof comment,
                 "afdkit estimate: %s on %s, TP %g; laws fitted to BestServe's estimator "
                 "(largest relative error %.3g; AFD coefficients %.3g); "
                 "decode_table and prefill_table: the estimator at batches 1 to %g and "
                 "contexts 1 to %g tokens, interpolated as power laws between the points "
                 "(largest relative error at the cells' centres: decode %.3g, prefill %.3g); "
                 "simulators use them, closed forms the laws",
                 m.name, d.name, a.tp, hw.fit_max_rel_err, hw.afd_fit_max_rel_err,
                 hw.decode_table.b[hw.decode_table.nb - 1], hw.decode_table.s[hw.decode_table.ns - 1],
                 fit.table_cell_err[0], fit.table_cell_err[1]);
        text = malloc(AFD_HW_TEXT_MAX);
        if (text == NULL)
            return cli_runtime_error(cmd, "out of memory");
        if (afd_hw_format(&hw, comment, text, AFD_HW_TEXT_MAX) != AFD_OK) {
            free(text);
            return cli_runtime_error(cmd, "internal error: latency file text too long");
        }
        rc = cli_write_file(cmd, a.out, text, strlen(text));
        free(text);
        if (rc != 0)
            return rc;
    }
    t = cli_table_new(&c.out);
    if (t == NULL)
        return cli_runtime_error(cmd, "out of memory");
    cli_table_provenance(t);
    if (a.eager) /* the share of the pass the device waits for the CPU's dispatch */
        cli_table_unit(t, "ms; dispatch_bound=%.3g (the share of the eager pass in which the "
                          "device waits for the CPU's dispatch)",
                       est.dispatch_bound);
    else
        cli_table_unit(t, "ms");
    model_meta(t, &m);
    cli_table_meta(t, "device", "%s peak_tflops=%g hbm_tbps=%.10g net_gbps=%g mfu=%g mbu=%g "
                                "comm_eff=%g",
                   d.name, d.peak_tflops, d.hbm_tbps, d.net_gbps, d.mfu[a.phase], d.mbu[a.phase],
                   d.comm_eff[a.phase]);
    cli_table_meta(t, "forms", "%s", a.paper ? "paper" : "afdkit");
    if (a.per_op) {
        double ridge = d.mfu[a.phase] * d.peak_tflops / (d.mbu[a.phase] * d.hbm_tbps);
        size_t k;
        cli_table_meta(t, "critical_intensity", "%.6g FLOP/byte", ridge);
        cli_table_begin(t, "module", "op", "work_flop", "traffic_bytes", "intensity", "bound",
                        "time_ms");
        for (k = 0; k < est.n_ops; k++) {
            const afd_estimate_op *o = &est.ops[k];
            cli_table_str(t, o->module);
            cli_table_str(t, o->name);
            cli_table_real(t, o->work);
            cli_table_real(t, o->traffic);
            cli_table_real(t, o->traffic > 0 ? o->work / o->traffic : NAN);
            cli_table_str(t, o->compute_bound ? "compute" : "memory");
            cli_table_real(t, o->time_s * 1e3);
            cli_table_end_row(t);
        }
        return cli_table_finish(t, cmd);
    }
    cli_table_begin(t, "module", "dispatch_ms", "compute_ms", "comm_ms", "time_ms");
    for (i = 0; i < 4; i++) {
        cli_table_str(t, est.module[i].name);
        cli_table_real(t, est.module[i].dispatch_s * 1e3);
        cli_table_real(t, est.module[i].compute_s * 1e3);
        cli_table_real(t, est.module[i].comm_s * 1e3);
        cli_table_real(t, est.module[i].end_s * 1e3);
        cli_table_end_row(t);
    }
    cli_table_str(t, "forward");
    cli_table_real(t, est.forward_dispatch_s * 1e3);
    cli_table_real(t, est.forward_compute_s * 1e3);
    cli_table_real(t, est.forward_comm_s * 1e3);
    cli_table_real(t, est.forward_s * 1e3);
    cli_table_end_row(t);
    return cli_table_finish(t, cmd);
}

static int run_model(const cli_command *self, int argc, char **argv)
{
    const char *cmd = self->path;
    struct args a;
    cli_common c;
    afd_model m;
    cli_table *t;
    int rc;

    memset(&a, 0, sizeof a);
    a.cmd = cmd;
    cli_common_init(&c);
    rc = cli_parse_args(self, argc, argv, &c, own, &a);
    if (rc != CLI_CONTINUE)
        return rc;
    if (a.model == NULL)
        return cli_usage_error(cmd, "--model is required");
    if ((rc = cli_load_model(cmd, a.model, &m)) != 0)
        return rc;
    t = cli_table_new(&c.out);
    if (t == NULL)
        return cli_runtime_error(cmd, "out of memory");
    cli_table_provenance(t);
    model_meta(t, &m);
    cli_table_begin(t, "params", "active_params", "weight_bytes", "kv_bytes_per_token",
                    "layers");
    cli_table_real(t, afd_model_params(&m));
    cli_table_real(t, afd_model_active_params(&m));
    cli_table_real(t, afd_model_weight_bytes(&m));
    cli_table_real(t, afd_model_kv_bytes_per_token(&m));
    cli_table_real(t, m.layers);
    cli_table_end_row(t);
    return cli_table_finish(t, cmd);
}

const cli_command cli_cmd_estimate = {
    .name = "estimate",
    .path = "estimate",
    .summary = "time of one forward pass from the model and the device (BestServe's estimator)",
    .usage = "estimate --model M --device D [--tp T] [--phase prefill|decode] [-b B] [-s S] "
             "[--per-op] [--out FILE]",
    .description =
        "Prints one row per module of one transformer block, in order (rmsnorm, attention,\n"
        "rmsnorm, mlp, or moe for expert layers), then 'forward' for one forward pass of the\n"
        "whole model: module dispatch_ms compute_ms comm_ms time_ms, in milliseconds.\n"
        "\n"
        "Each operator takes the adapted roofline max(W/(e_c S_c), Q/(e_m S_m)) (BestServe\n"
        "eq. 3, 5) of its work W and traffic Q (Appendix A-B); compute_ms sums a module's\n"
        "operators, comm_ms is the all-reduce after attention and MLP under tensor\n"
        "parallelism (eq. 8), and time_ms follows Algorithm 1: the CPU's dispatch of a\n"
        "module overlaps the device's work on the previous ones, so a module ends at\n"
        "max(dispatch so far, previous end) + compute + comm.  The forward row sums\n"
        "dispatch, compute (all layers and the output head) and comm over the layers; its\n"
        "time_ms is the whole pass.  --per-op prints the operators of the block instead.\n"
        "--paper-forms uses the paper's tables as printed (dense models; no output head).\n"
        "\n"
        "On a device with a kernel model (kernel_floor_us in its file; the h100-sxm\n"
        "preset, fitted to forward passes measured on one H100 SXM) a dense model's block\n"
        "is the kernels the engine launches instead, each a fixed time in a CUDA graph\n"
        "plus its roofline (engine torch: unfused, 23 kernels per decode layer; vllm:\n"
        "fused, 10), and --per-op prints one row per kernel (docs/estimator.md).\n"
        "\n"
        "--out FILE writes a latency file for --hw: the prefill law a + b sum P + c sum P^2\n"
        "and the decode law beta + gamma b + alpha K fitted to this estimator over a grid\n"
        "(their largest relative error as fit_max_rel_err), the six AFD coefficients (the\n"
        "FFN's fitted over aggregated batches 1 to 8192, the Attention's over the decode\n"
        "grid; the larger error as afd_fit_max_rel_err), in ms.  A law off the estimator by\n"
        "more than 15% somewhere on its grid is named on stderr.",
    .groups = est_groups,
    .run = run_estimate,
};

const cli_command cli_cmd_model = {
    .name = "model",
    .path = "model",
    .summary = "parameters, weight bytes and KV bytes per token of a model description",
    .usage = "model --model NAME|FILE",
    .description =
        "Prints one row: params active_params weight_bytes kv_bytes_per_token layers.\n"
        "params counts embeddings, every layer and the output head (unless tied);\n"
        "active_params counts only the routed experts a token uses; weight_bytes is\n"
        "params at the config's dtype (one byte for FP8 checkpoints; other\n"
        "quantization_config methods, such as awq and gptq, are refused); kv_bytes_per_token\n"
        "is 2 layers h_kv head_dim dtype under grouped-query attention and layers\n"
        "(kv_lora_rank + qk_rope_head_dim) dtype under multi-head latent attention.\n"
        "Presets: codellama-34b, deepseek-v3, llama-3.1-70b, llama-3.1-8b, mistral-7b,\n"
        "qwen2.5-14b, qwen2.5-32b (data/models/SOURCES says where each comes from).",
    .groups = model_groups,
    .run = run_model,
};
